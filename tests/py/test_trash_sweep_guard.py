"""Data-loss class: a trash that a sweep lists (adversary round 4).

A trash is checked where it is opened: never inside (or holding) a table's location or data
folders. But a table can come to it later (a writer sets write.data.path onto it), the same folder
can be reached at two paths (a bind mount), and a table's metadata/ may be one the trash's user
cannot list. In each case another table's routine sweep deleted the trashed files, which keep
their old modification times. Rules: the sweep itself refuses a listing that holds a trash (told
by its layout, `<trash>/<table-uuid>/journal/*.jsonl`), or lies inside one, unless the trash is
carved out with --exclude-location; the open-time check compares folders by identity (device
and inode), and a metadata/ it cannot list is "cannot tell" (refused), never "no table".

A journal append cut short (a full disk) is cut back off and its journal takes no more lines,
so the next batch's record never runs on from a torn line; and `trash expire` lets an absent
file's records go only when the journals holding them are a day old by the store's clock, not
only by the record's (its writer's clock may run behind).

Each test asserts the exit code and exactly which files exist after."""
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pytest

from plan_helpers import CLI, SCHEMA, Lake, age, files_under


def sweep(lake, *extra, table="ns.t"):
    return lake.icm("--json", "remove-orphan-files", table, "--settle", "0s", *extra)


def uuid_of(lake, table="ns.t"):
    return str(lake.cat.load_table(table).metadata.table_uuid)


def a_trashed_orphan(lake, trash):
    """ns.t's orphan swept into `trash`: the trashed file."""
    o = lake.orphan("old.parquet", 17)
    r = sweep(lake, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    moved = trash / uuid_of(lake) / "files" / "data" / "old.parquet"
    assert not os.path.exists(o) and moved.exists()
    return moved


def test_data_loss_sweep_of_a_folder_a_trash_lies_in(tmp_path):
    """Finding 3: ns.t's orphan is trashed into shared/trash (outside every table then); later
    a writer points ns.b's write.data.path at shared. ns.b's data-path sweep listed the trash
    and deleted the trashed file. It refuses now, by listing, by file list and by shard; with the
    trash carved out (--exclude-location) it sweeps ns.b's own orphan and keeps the trash."""
    lake = Lake(tmp_path)
    shared = tmp_path / "shared"
    trash = shared / "trash"
    trash.mkdir(parents=True)
    b = lake.cat.create_table("ns.b", schema=SCHEMA)
    b.append(pa.table({"id": [7]}, schema=SCHEMA))
    moved = a_trashed_orphan(lake, trash)
    with b.transaction() as tx:
        tx.set_properties({"write.data.path": f"file://{shared}"})
    b_orphan = shared / "b-orphan.parquet"
    b_orphan.write_bytes(b"b" * 9)
    age(files_under(shared))
    listing = tmp_path / "list.txt"
    # a file list (a snapshot) that names the trashed file but not the journal
    listing.write_text("".join(f"{p}\t{os.path.getsize(p)}\t{int(os.stat(p).st_mtime * 1000)}\n"
                               for p in files_under(shared) if "/journal/" not in p))
    before = files_under(tmp_path)
    r = sweep(lake, "--location", str(shared), table="ns.b")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "holds an icemaint trash" in r.stderr and str(trash) in r.stderr
    r = sweep(lake, "--location", str(shared), "--file-list", str(listing), table="ns.b")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "holds an icemaint trash" in r.stderr
    for i in (0, 1, 2):
        r = sweep(lake, "--location", str(shared), "--shard", f"{i}/3", table="ns.b")
        assert r.returncode == 5, (i, r.stdout, r.stderr)
        assert "holds an icemaint trash" in r.stderr
    assert files_under(tmp_path) == before
    # a listing inside the trash (a data path moved into it) refuses too
    r = sweep(lake, "--location", str(trash / uuid_of(lake) / "files"), table="ns.b")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "holds an icemaint trash" in r.stderr
    assert files_under(tmp_path) == before
    r = sweep(lake, "--location", str(shared), "--exclude-location", str(trash), table="ns.b")
    assert r.returncode == 0, r.stderr
    assert files_under(tmp_path) == [p for p in before if p != str(b_orphan)]
    assert moved.exists()


def test_data_loss_trash_reached_through_a_bind_mount_into_another_tables_data_path(tmp_path):
    """Finding 1: the lake mounted at a second path (a bind mount); a trash spelled through the
    mount inside ns.b's write.data.path was accepted (neither its spelling nor its real path
    names that folder), and ns.b's sweep then deleted the trashed file. The open refuses now:
    the trash's folders are compared with each table root by device and inode. The mount lives
    in a private mount namespace of the test's own (unshare)."""
    real = tmp_path / "r"
    mnt = tmp_path / "m"
    mnt.mkdir()
    real.mkdir()
    lake = Lake(real)
    data_b = real / "dataB"
    data_b.mkdir()
    b = lake.cat.create_table("ns.b", schema=SCHEMA,
                              properties={"write.data.path": f"file://{data_b}"})
    b.append(pa.table({"id": [7]}, schema=SCHEMA))
    (data_b / "trash").mkdir()
    o = lake.orphan("old.parquet", 17)
    before = files_under(real)
    script = (f"mount --bind {real} {mnt} && "
              f"exec {CLI} --config {lake.cfg} --catalog reg --json remove-orphan-files ns.t "
              f"--settle 0s --trash {mnt}/dataB/trash")
    r = subprocess.run(["unshare", "--map-root-user", "--mount", "sh", "-c", script],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "ns.b" in r.stderr and "lie one inside the other" in r.stderr
    assert files_under(real) == before and os.path.exists(o)


def run_as_nobody_if_root(cmd):
    """Run `cmd` as `nobody` when the test runs as root (whom no mode bit stops), else as is."""
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def test_data_loss_trash_under_a_metadata_folder_the_user_cannot_list(tmp_path):
    """Finding 2: another team's table (its own catalog) whose metadata/ the trash's user may
    pass through but not list, and whose data folder is a shared drop zone. The walk up for a
    table took the permission error for "no table there" and accepted a trash in that data
    folder, which the owner's sweep then emptied. It is "cannot tell" now: refused (exit 5)."""
    base = tempfile.mkdtemp(prefix="icm-perm-", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        ours = os.path.join(base, "a")
        os.mkdir(ours)
        lake = Lake(Path(ours))
        theirs = os.path.join(base, "b")
        os.makedirs(os.path.join(theirs, "metadata"))
        with open(os.path.join(theirs, "metadata", "00000-x.metadata.json"), "w") as f:
            f.write("{}")
        drop = os.path.join(theirs, "data", "trash")
        os.makedirs(drop)
        for dirpath, dirnames, filenames in os.walk(ours):
            for n in dirnames + filenames:
                os.chmod(os.path.join(dirpath, n), 0o777)
        os.chmod(ours, 0o777)
        os.chmod(os.path.join(theirs, "data"), 0o1777)
        os.chmod(drop, 0o1777)
        os.chmod(os.path.join(theirs, "metadata"), 0o111)  # pass through, not list
        o = lake.orphan("old.parquet", 17)
        os.chmod(o, 0o666)
        before = files_under(base)
        r = run_as_nobody_if_root([CLI, "--config", str(lake.cfg), "--catalog", "reg", "--json",
                                   "remove-orphan-files", "ns.t", "--settle", "0s",
                                   "--trash", drop])
        assert r.returncode == 5, (r.stdout, r.stderr)
        assert "cannot tell" in r.stderr and "cannot be listed" in r.stderr
        os.chmod(os.path.join(theirs, "metadata"), 0o755)
        assert files_under(base) == before and os.path.exists(o)
    finally:
        if os.path.isdir(os.path.join(base, "b", "metadata")):
            os.chmod(os.path.join(base, "b", "metadata"), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def limit_file_size(limit_bytes):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return pre


def test_data_loss_journal_append_cut_short_fuses_two_records(tmp_path):
    """Finding 4: an append to the run's journal cut short (a full disk; here the file size
    limit, which makes write(2) write part of a line and then fail) left half a line, and the
    next batch's records were appended right after it: one line fused two records, so restore
    and expire failed for the whole trash and a moved file lost its record. Now the half line
    is cut back off and that journal takes no more lines. After the sweep every trashed file has
    its record, every file not moved is still in the table, and all of them restore."""
    lake = Lake(tmp_path)
    trash = tmp_path / "trash"
    trash.mkdir()
    names = [f"orphan-{i:04d}.parquet" for i in range(3000)]
    for n in names:
        (lake.dir / "data" / n).write_bytes(b"x")
    age([lake.dir / "data" / n for n in names])
    before = lake.files()
    # one batch's records fit, the next append crosses the limit part way through a line
    r = subprocess.run([CLI, "--config", str(lake.cfg), "--catalog", "reg", "--json",
                        "remove-orphan-files", "ns.t", "--settle", "0s", "--trash", str(trash)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       preexec_fn=limit_file_size(400_000))
    assert r.returncode == 1, (r.stdout[-2000:], r.stderr[-2000:])
    jdir = trash / uuid_of(lake) / "journal"
    journals = sorted(os.listdir(jdir))
    records = []
    for j in journals:
        text = (jdir / j).read_text()
        assert text.endswith("\n"), j
        records += [json.loads(line) for line in text.splitlines()]
    files = trash / uuid_of(lake) / "files"
    trashed = sorted(os.path.basename(p) for p in files_under(files))
    assert 0 < len(trashed) < len(names)
    recorded = {os.path.basename(rec["trash"]) for rec in records}
    assert set(trashed) <= recorded, "a trashed file without its record"
    left = sorted(os.path.basename(p) for p in lake.files() if "orphan-" in p)
    assert sorted(left + trashed) == names
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["restored"] == len(trashed)
    assert lake.files() == before


def test_data_loss_expire_trusts_a_writers_clock_that_runs_behind(tmp_path):
    """A sweep whose clock ran two days behind stamped its records two days old the moment it
    wrote them, so the one-day rule (an absent file's records stay while files may still be
    on their way) let `trash expire --older-than 0s` drop the journal of files still moving. The
    journal's own modification time (the store's clock) must be a day old too."""
    lake = Lake(tmp_path)
    trash = tmp_path / "trash"
    trash.mkdir()
    uuid = uuid_of(lake)
    o = lake.orphan("moving.parquet", 4)
    dest = trash / uuid / "files" / "data" / "moving.parquet"
    skewed = int(time.time() * 1000) - 2 * 86400 * 1000
    rec = {"version": 1, "table_uuid": uuid, "table_location": str(lake.dir), "original": o,
           "trash": str(dest), "size_bytes": 4, "mtime_ms": int(os.stat(o).st_mtime * 1000),
           "trashed_at_ms": skewed}
    jdir = trash / uuid / "journal"
    jdir.mkdir(parents=True)
    (jdir / "batch.jsonl").write_text(json.dumps(rec) + "\n")
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["journals_removed"] == 0
    assert (jdir / "batch.jsonl").exists()
    dest.parent.mkdir(parents=True)
    os.rename(o, dest)  # the move lands
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["restored"] == 1
    assert os.path.exists(o) and not dest.exists()


def test_data_loss_expire_window_shortened_by_a_writers_clock_that_runs_behind(tmp_path):
    """The undo window of `trash expire --older-than` was judged by the record's trashed_at_ms
    alone, its writer's clock: a sweep running three days behind made a file trashed a moment
    ago look three days old, and `--older-than 1d` deleted it for good. The journal holding its
    record was written a moment ago by the store's clock, so the file stays until that is a day
    old too; then it goes."""
    lake = Lake(tmp_path)
    trash = tmp_path / "trash"
    uuid = uuid_of(lake)
    o = lake.orphan("fresh.parquet", 6)
    mtime_ms = int(os.stat(o).st_mtime * 1000)
    dest = trash / uuid / "files" / "data" / "fresh.parquet"
    dest.parent.mkdir(parents=True)
    os.rename(o, dest)  # trashed just now, by a host whose clock runs 3 days behind
    rec = {"version": 1, "table_uuid": uuid, "table_location": str(lake.dir), "original": o,
           "trash": str(dest), "size_bytes": 6, "mtime_ms": mtime_ms,
           "trashed_at_ms": int(time.time() * 1000) - 3 * 86400 * 1000}
    journal = trash / uuid / "journal" / "batch.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps(rec) + "\n")
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1d")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"].get("expired", 0) == 0
    assert dest.exists() and journal.exists()
    # the journal's own time, two days back: now the trashing is a day old by both clocks
    two_days_ago = time.time() - 2 * 86400
    os.utime(journal, (two_days_ago, two_days_ago))
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1d")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["expired"] == 1
    assert not dest.exists() and not journal.exists()

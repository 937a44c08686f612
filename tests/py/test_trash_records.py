"""`trash restore` picks, for each trash name, the newest record of the --table (a trashing,
not a restore event) that describes the file at that name: its size, and on local disk its
modification time (adversary round 3, findings 4 and 5). A record that does not describe the
file there (a stale record of a move that failed and went to `.trash-2`, a restore event
stamped by a clock ahead) must neither hide the file nor move another file. Journal lines are
written by hand, as test_trash_safety.py forges them, so each case is deterministic. Each test
asserts the exit code and exactly which files exist where afterwards."""
import json
import os
import time

from plan_helpers import Lake, files_under


def sweep(lake):
    return lake.icm("--json", "remove-orphan-files", "ns.t", "--settle", "0s", "--trash",
                    str(lake.trash))


def make_lake(tmp_path):
    lake = Lake(tmp_path)
    lake.trash = tmp_path / "trash"
    lake.trash.mkdir()
    return lake


def uuid_of(lake):
    return str(lake.cat.load_table("ns.t").metadata.table_uuid)


def trash_files(lake):
    return sorted(p for p in files_under(lake.trash) if "/files/" in p)


def journal_dir(lake):
    return lake.trash / uuid_of(lake) / "journal"


def journal_lines(lake):
    out = []
    for n in sorted(os.listdir(journal_dir(lake))):
        with open(journal_dir(lake) / n) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def restore(lake, table, *extra):
    r = lake.icm("--json", "trash", "restore", str(lake.trash), "--table", str(table), *extra)
    doc = json.loads(r.stdout) if r.stdout.strip() else {}
    r.errors = {f["trash"]: f.get("error") for f in doc.get("files", [])}
    return r, {f["trash"]: f["outcome"] for f in doc.get("files", [])}


def trashed_orphan(lake, name, size):
    """An orphan of `size` bytes swept into the trash: (its original, its trash name)."""
    o = lake.orphan(name, size)
    r = sweep(lake)
    assert r.returncode == 0, r.stderr
    n = str(lake.trash / uuid_of(lake) / "files" / "data" / name)
    assert not os.path.exists(o) and os.path.getsize(n) == size
    return o, n


def collided(tmp_path):
    """T's orphan trashed at N; table U (a copy keeping T's table-uuid, location tmp/u) swept
    at the same time: its move to N failed (EEXIST) and went to N.trash-2, and both its
    records are in the journal, the stale one for N being N's newest record.
    Returns (lake, T's original, N, U's location, U's original, N.trash-2)."""
    lake = make_lake(tmp_path)
    o, n = trashed_orphan(lake, "o.parquet", 3)
    (t_rec,) = journal_lines(lake)
    u_dir = tmp_path / "u"
    (u_dir / "data").mkdir(parents=True)
    u_o = str(u_dir / "data" / "o.parquet")
    second = n + ".trash-2"
    with open(second, "wb") as f:
        f.write(b"uuuuu")
    u_base = {"version": 1, "table_uuid": uuid_of(lake), "table_location": str(u_dir),
              "original": u_o, "size_bytes": 5,
              "mtime_ms": int(os.stat(second).st_mtime_ns // 1_000_000),
              "trashed_at_ms": t_rec["trashed_at_ms"] + 1000}
    (journal_dir(lake) / "9-u-0.jsonl").write_text(
        json.dumps(dict(u_base, trash=n)) + "\n" + json.dumps(dict(u_base, trash=second)) + "\n")
    return lake, o, n, u_dir, u_o, second


def test_data_loss_restore_skips_file_behind_a_failed_moves_record(tmp_path):
    """Finding 5: table U (a copy keeping T's table-uuid) was swept into the same trash at the
    same time as T; both picked the name N, T's move took it, U's failed (EEXIST) and went to
    N.trash-2, but U's record for N stayed and is N's newest record. `restore --table T`
    must still restore T's file at N; `restore --table U` restores U's file from N.trash-2
    and refuses N (T's file is not the one U's record describes), moving nothing into U."""
    lake, o, n, u_dir, u_o, second = collided(tmp_path)

    r, outcomes = restore(lake, lake.dir)
    assert r.returncode == 0, r.stderr
    assert outcomes == {n: "restored"}  # U's names are not reported for T
    with open(o, "rb") as f:
        assert f.read() == b"xxx"
    assert trash_files(lake) == [second] and not os.path.exists(u_o)

    r, outcomes = restore(lake, u_dir)
    assert r.returncode == 0, r.stderr
    assert outcomes == {n: "absent", second: "restored"}
    with open(u_o, "rb") as f:
        assert f.read() == b"uuuuu"
    assert trash_files(lake) == []
    with open(o, "rb") as f:
        assert f.read() == b"xxx"


def test_data_loss_restore_refuses_another_tables_file_at_its_stale_name(tmp_path):
    """Finding 5, the other table: `restore --table U` while T's file is still at N. U's
    stale record for N does not describe it (size): N is REFUSED, named, and stays; U's own
    file comes back from N.trash-2."""
    lake, o, n, u_dir, u_o, second = collided(tmp_path)

    r, outcomes = restore(lake, u_dir, "--dry-run")
    assert r.returncode == 5, r.stderr
    assert outcomes == {n: "refused", second: "would"}
    assert trash_files(lake) == sorted([n, second]) and not os.path.exists(u_o)

    r, outcomes = restore(lake, u_dir)
    assert r.returncode == 5, r.stderr
    assert outcomes == {n: "refused", second: "restored"}
    assert n in r.errors[n] and "not the one any record of this table describes" in r.errors[n]
    with open(u_o, "rb") as f:
        assert f.read() == b"uuuuu"
    assert trash_files(lake) == [n] and not os.path.exists(o)
    with open(n, "rb") as f:
        assert f.read() == b"xxx"


def test_data_loss_restore_skips_file_retrashed_after_a_newer_restore_record(tmp_path):
    """Finding 4: trashed, restored by a host whose clock is an hour ahead (its restore record
    is stamped in the future), trashed again. The file at the name is the re-trashing's: the
    restore record does not hide it, restore moves it back."""
    lake = make_lake(tmp_path)
    o, n = trashed_orphan(lake, "o.parquet", 3)
    r, outcomes = restore(lake, lake.dir)
    assert r.returncode == 0 and outcomes == {n: "restored"}, r.stderr
    # the restore record, as a clock an hour ahead wrote it
    (restore_journal,) = [p for p in os.listdir(journal_dir(lake))
                          if any('"restored"' in line
                                 for line in open(journal_dir(lake) / p))]
    (rec,) = [json.loads(line) for line in open(journal_dir(lake) / restore_journal)]
    assert rec["event"] == "restored"
    rec["restored_at_ms"] = int(time.time() * 1000) + 3600 * 1000
    (journal_dir(lake) / restore_journal).write_text(json.dumps(rec) + "\n")
    # the restored orphan is swept again, to the same name (a new record, the real time)
    r = sweep(lake)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(o) and trash_files(lake) == [n]

    r, outcomes = restore(lake, lake.dir, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert outcomes == {n: "would"}
    assert trash_files(lake) == [n] and not os.path.exists(o)

    r, outcomes = restore(lake, lake.dir)
    assert r.returncode == 0, r.stderr
    assert outcomes == {n: "restored"}
    assert trash_files(lake) == [] and os.path.getsize(o) == 3
    # once restored, the name is absent again (the future restore record no longer matters)
    r, outcomes = restore(lake, lake.dir)
    assert r.returncode == 0, r.stderr
    assert outcomes == {n: "absent"}
    assert trash_files(lake) == [] and os.path.getsize(o) == 3


def test_data_loss_restore_moves_a_file_its_record_does_not_describe(tmp_path):
    """The file at a trash name has another size than every record of the table for that
    name (another file put there): restore refuses it, names the trash file, moves nothing."""
    lake = make_lake(tmp_path)
    o, n = trashed_orphan(lake, "o.parquet", 3)
    os.unlink(n)
    with open(n, "wb") as f:
        f.write(b"another file")
    r, outcomes = restore(lake, lake.dir)
    assert r.returncode == 5, r.stderr
    assert outcomes == {n: "refused"}
    assert n in r.errors[n] and "not the one any record of this table describes" in r.errors[n]
    r = lake.icm("trash", "restore", str(lake.trash), "--table", str(lake.dir))
    assert r.returncode == 5, r.stderr
    assert n in r.stderr and "not the one any record of this table describes" in r.stderr
    assert not os.path.exists(o)
    assert trash_files(lake) == [n]
    with open(n, "rb") as f:
        assert f.read() == b"another file"

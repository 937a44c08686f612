"""--trash URI (issue #21, guard rails): remove-orphan-files, expire-snapshots and apply move
files into TRASH/<table-uuid>/files/<path below the table location> instead of deleting them,
with a journal (TRASH/<uuid>/journal/*.jsonl) recording each file; `icemaint trash restore`
puts them back (never over an existing file) and `icemaint trash expire --older-than` deletes
what was trashed long enough ago. Each test asserts the exit code and exactly which files exist
where afterwards."""
import json
import os
import time

import pytest

from plan_helpers import Lake, age, files_under, local


def sweep(lake, *extra):
    return lake.icm("--json", "remove-orphan-files", "ns.t", "--settle", "0s", *extra)


def uuid_of(lake):
    return str(lake.cat.load_table("ns.t").metadata.table_uuid)


def trashed(trash, lake, path):
    """Where `path` (under the table location) lands in the trash."""
    rel = os.path.relpath(path, str(lake.dir))
    return os.path.join(str(trash), uuid_of(lake), "files", rel)


def journal(trash):
    recs = []
    for p in sorted(files_under(trash)):
        if "/journal/" in p and p.endswith(".jsonl"):
            with open(p) as f:
                recs += [json.loads(line) for line in f if line.strip()]
    return recs


def trash_files(trash):
    return sorted(p for p in files_under(trash) if "/files/" in p)


def make_trash(tmp_path):
    t = tmp_path / "trash"
    t.mkdir()
    return t


def test_sweep_moves_exactly_the_orphans_and_restore_puts_them_back(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10 + i) for i in range(3)]
    before = lake.files()
    r = sweep(lake, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"] == 3
    assert lake.files() == sorted(f for f in before if f not in orphans)
    assert trash_files(trash) == sorted(trashed(trash, lake, o) for o in orphans)
    for i, o in enumerate(orphans):
        with open(trashed(trash, lake, o), "rb") as f:
            assert f.read() == b"x" * (10 + i)
    recs = journal(trash)
    assert sorted(local(r["original"]) for r in recs) == sorted(orphans)
    for rec in recs:
        assert rec["table_uuid"] == uuid_of(lake)
        assert rec["trash"] == trashed(trash, lake, local(rec["original"]))
        assert rec["size_bytes"] == 10 + orphans.index(local(rec["original"]))
        assert rec["mtime_ms"] > 0 and abs(rec["trashed_at_ms"] - time.time() * 1000) < 600e3
    # the table still reads
    assert sum(lake.rows().values()) > 0
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert lake.files() == sorted(f for f in before if f not in orphans)
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["counts"]["restored"] == 3
    assert lake.files() == before
    assert trash_files(trash) == []
    for i, o in enumerate(orphans):
        with open(o, "rb") as f:
            assert f.read() == b"x" * (10 + i)


def test_dry_run_moves_nothing(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(2)]
    before = lake.files()
    r = sweep(lake, "--trash", str(trash), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["orphans"]) == 2
    assert lake.files() == before and all(os.path.exists(o) for o in orphans)
    assert files_under(trash) == []


@pytest.mark.parametrize("where", ["inside", "is_location", "missing"])
def test_bad_trash_refused_before_any_change(tmp_path, where):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(2)]
    if where == "inside":
        trash = lake.dir / "trash"
        trash.mkdir()
    elif where == "is_location":
        trash = lake.dir
    else:
        trash = tmp_path / "no-such-trash"
    before = lake.files()
    for dry in ([], ["--dry-run"]):
        r = sweep(lake, "--trash", str(trash), *dry)
        assert r.returncode == 5, r.stderr
        assert "trash" in r.stderr
        assert lake.files() == before and all(os.path.exists(o) for o in orphans)
    metadata_before = lake.cat.load_table("ns.t").metadata_location
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--trash", str(trash))
    assert r.returncode == 5, r.stderr
    assert lake.cat.load_table("ns.t").metadata_location == metadata_before  # no commit
    assert lake.files() == before
    assert not os.path.exists(tmp_path / "no-such-trash")


def test_trash_through_a_link_into_the_location_is_refused(tmp_path):
    lake = Lake(tmp_path)
    orphan = lake.orphan("o.parquet", 10)
    (lake.dir / "data" / "hidden").mkdir()
    link = tmp_path / "trash-link"
    os.symlink(lake.dir / "data" / "hidden", link)
    before = lake.files()
    r = sweep(lake, "--trash", str(link))
    assert r.returncode == 5, r.stderr
    assert lake.files() == before and os.path.exists(orphan)


def test_expiry_moves_the_expired_files(tmp_path):
    lake = Lake(tmp_path, appends=1)
    t = lake.cat.load_table("ns.t")
    t.overwrite(t.scan().to_arrow())
    trash = make_trash(tmp_path)
    plan = json.loads(lake.icm("--json", "expire-snapshots", "ns.t", "--older-than", "0s",
                               "--retain-last", "1", "--dry-run", "--trash", str(trash)).stdout)
    files = [local(f["path"]) for k in ("deleted_files", "deleted_manifests",
                                        "deleted_manifest_lists", "deleted_statistics_files")
             for f in plan.get(k, [])]
    assert len(files) >= 2
    assert files_under(trash) == []  # the dry run wrote nothing
    before = lake.files()
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    assert not any(os.path.exists(p) for p in files)
    assert trash_files(trash) == sorted(trashed(trash, lake, p) for p in files)
    after = set(lake.files())
    assert set(before) - set(files) <= after  # every other file stays
    assert all("/metadata/" in p for p in after - set(before))  # only the commit's metadata
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 1
    assert sorted(local(r["original"]) for r in journal(trash)) == sorted(files)


def test_apply_moves_the_plan(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(3)]
    plan = lake.plan()
    before = lake.files()
    r = lake.apply(plan, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    assert lake.files() == sorted(f for f in before if f not in orphans)
    assert trash_files(trash) == sorted(trashed(trash, lake, o) for o in orphans)


def test_guard_rails_hold_for_moves(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(3)]
    r = sweep(lake, "--trash", str(trash), "--max-delete", "2")
    assert r.returncode == 5, r.stderr
    assert all(os.path.exists(o) for o in orphans) and files_under(trash) == []


def test_trashed_twice_keeps_both_and_restore_refuses_to_overwrite(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    o = lake.orphan("same.parquet", 5)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    lake.orphan("same.parquet", 7)  # the same name orphaned again
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    first = trashed(trash, lake, o)
    second = first + ".trash-2"
    assert trash_files(trash) == sorted([first, second])
    assert os.path.getsize(first) == 5 and os.path.getsize(second) == 7
    # a new file at the original location: restore refuses it and keeps both trashed copies
    with open(o, "wb") as f:
        f.write(b"new")
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 5, r.stderr
    assert o in r.stderr
    with open(o, "rb") as f:
        assert f.read() == b"new"
    assert trash_files(trash) == sorted([first, second])
    # without it: the newest copy comes back, the older one is refused and stays
    os.unlink(o)
    r = lake.icm("trash", "restore", str(trash), "--table", "file://" + str(lake.dir))
    assert r.returncode == 5, r.stderr
    assert os.path.getsize(o) == 7
    assert trash_files(trash) == [first]


def test_restore_filters_by_path_and_table(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    a = lake.orphan("a.parquet", 1)
    b = lake.orphan("b.parquet", 2)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    # a filter that matches no record says so and fails (adversary F3): nothing moves
    r = lake.icm("trash", "restore", str(trash), "--table", str(tmp_path / "other"))
    assert r.returncode == 1, r.stderr
    assert "no trashed file" in r.stderr
    assert not os.path.exists(a) and not os.path.exists(b)
    for bad in (["--table", "ns.t"], ["--table", uuid_of(lake)]):  # not a location
        r = lake.icm("trash", "restore", str(trash), *bad)
        assert r.returncode == 2, r.stderr
        assert "--table takes the table's location" in r.stderr and "not a catalog name" \
            in r.stderr
    r = lake.icm("trash", "restore", str(trash))
    assert r.returncode == 2 and "--table LOCATION is required" in r.stderr
    assert not os.path.exists(a) and not os.path.exists(b)
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--path", a)
    assert r.returncode == 0, r.stderr
    assert os.path.exists(a) and not os.path.exists(b)
    assert trash_files(trash) == [trashed(trash, lake, b)]
    # a relative --path is below the --table location
    rel = os.path.relpath(b, lake.dir)
    assert not rel.startswith("/") and not os.path.exists(b)
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--path", rel)
    assert r.returncode == 0, r.stderr
    assert os.path.exists(a) and os.path.exists(b)
    assert trash_files(trash) == []


def test_trash_expire_keeps_the_newer(tmp_path):
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    old = lake.orphan("old.parquet", 1)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    time.sleep(2.2)
    new = lake.orphan("new.parquet", 2)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    assert trash_files(trash) == sorted([trashed(trash, lake, old), trashed(trash, lake, new)])
    journals = sorted(p for p in files_under(trash) if "/journal/" in p)
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "2s", "--dry-run")
    assert r.returncode == 0, r.stderr
    # the dry run reports what the run does, the journal it would remove included
    doc = json.loads(r.stdout)
    assert doc["counts"]["would"] == 1 and doc["journals_removed"] == 1, doc
    assert len(trash_files(trash)) == 2
    assert sorted(p for p in files_under(trash) if "/journal/" in p) == journals
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "2s")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["counts"]["expired"] == 1 and doc["journals_removed"] == 1
    assert trash_files(trash) == [trashed(trash, lake, new)]
    assert [local(r["original"]) for r in journal(trash)] == [new]
    r = lake.icm("trash", "expire", str(trash))
    assert r.returncode == 2  # --older-than is required
    assert trash_files(trash) == [trashed(trash, lake, new)]


def test_forged_journal_records_are_not_acted_on(tmp_path):
    """A journal is plain text: a line naming a file outside the trash (or an original outside
    its table) must make neither expire delete it nor restore move it."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    o = lake.orphan("o.parquet", 3)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    uuid = uuid_of(lake)
    jdir = trash / uuid / "journal"
    forged = {"version": 1, "table_uuid": uuid, "table_location": str(lake.dir),
              "original": str(lake.dir / "data" / "x.parquet"), "trash": str(victim),
              "size_bytes": 8, "mtime_ms": 1, "trashed_at_ms": 1}
    planted = trash / uuid / "files" / "data" / "z.parquet"
    planted.write_bytes(b"z")
    outside = dict(forged, trash=str(planted), original=str(tmp_path / "elsewhere.parquet"),
                   trashed_at_ms=int(time.time() * 1000))
    (jdir / "0-forged.jsonl").write_text(json.dumps(forged) + "\n" + json.dumps(outside) + "\n")
    age([jdir / "0-forged.jsonl"])  # its records' time, by the store's clock too
    r = lake.icm("trash", "expire", str(trash), "--older-than", "1d")
    assert r.returncode == 1, r.stderr
    assert "outside this trash" in r.stderr
    assert victim.read_bytes() == b"precious"
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 1, r.stderr
    assert "not below its table location" in r.stderr
    assert not (tmp_path / "elsewhere.parquet").exists() and planted.read_bytes() == b"z"
    assert victim.read_bytes() == b"precious"
    # the genuine record still restores its file
    assert os.path.exists(o)


def test_data_loss_respelled_trash_expire_keeps_a_fresh_file(tmp_path):
    """Data loss class: expire groups a trashed file's records by its identity, not by the
    spelling of --trash. Run 1 trashes o via /x/trash; o is restored; run 2 trashes it again via
    file:///x/trash to the same freed name. Run 1's old record must not expire run 2's file."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    o = lake.orphan("o.parquet", 10)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert os.path.exists(o)
    os.utime(o, (time.time() - 864000,) * 2)
    time.sleep(2.2)
    assert sweep(lake, "--trash", "file://" + str(trash)).returncode == 0
    assert trash_files(trash) == [trashed(trash, lake, o)]
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "2s")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["expired"] == 0
    assert trash_files(trash) == [trashed(trash, lake, o)]


def test_data_loss_forged_alias_record_does_not_expire_a_fresh_file(tmp_path):
    """Data loss class: a record naming the same trashed file through `//` with an old time is
    one location with the genuine (fresh) record: the newest protects the file."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    o = lake.orphan("o.parquet", 10)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    uuid = uuid_of(lake)
    tfile = trashed(trash, lake, o)
    alias = os.path.join(str(trash), uuid, "files", "data") + "//o.parquet"
    forged = {"version": 1, "table_uuid": uuid, "table_location": str(lake.dir),
              "original": o, "trash": alias, "size_bytes": 10, "mtime_ms": 1,
              "trashed_at_ms": 1}
    (trash / uuid / "journal" / "0000000000001-forged-0.jsonl").write_text(
        json.dumps(forged) + "\n")
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "7d")
    assert r.returncode == 0, r.stderr
    assert trash_files(trash) == [tfile]


def test_confinement_forged_record_does_not_restore_outside_the_table(tmp_path):
    """Confinement class (adversary F2): a journal line whose table_location and original
    both name another place (a folder outside every table, or another table) is not
    restored there: restore only puts files back below the --table location it is given."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    o = lake.orphan("o.parquet", 3)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    uuid = uuid_of(lake)
    planted = trash / uuid / "files" / "data" / "z.parquet"
    planted.write_bytes(b"z")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    forged = {"version": 1, "table_uuid": uuid, "table_location": str(elsewhere),
              "original": str(elsewhere / "planted.bin"), "trash": str(planted),
              "size_bytes": 1, "mtime_ms": 1, "trashed_at_ms": int(time.time() * 1000)}
    (trash / uuid / "journal" / "9-forged.jsonl").write_text(json.dumps(forged) + "\n")
    # without a location named by the caller nothing is restored (the line's is forgeable)
    r = lake.icm("trash", "restore", str(trash))
    assert r.returncode == 2, r.stderr
    assert not (elsewhere / "planted.bin").exists() and planted.read_bytes() == b"z"
    assert not os.path.exists(o)
    # the forged record's own location is not the table's: not selected, nothing moves there
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert os.path.exists(o)
    assert not (elsewhere / "planted.bin").exists() and planted.read_bytes() == b"z"
    # a line claiming the table's location with an original outside it is refused
    forged2 = dict(forged, table_location=str(lake.dir), original=str(elsewhere / "p2.bin"))
    (trash / uuid / "journal" / "9-forged.jsonl").write_text(json.dumps(forged2) + "\n")
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 1, r.stderr
    assert not (elsewhere / "p2.bin").exists() and planted.read_bytes() == b"z"


def folders_below(root):
    """Every folder below `root`, relative to it."""
    out = []
    for dirpath, dirnames, _ in os.walk(root):
        out += [os.path.relpath(os.path.join(dirpath, d), root) for d in dirnames]
    return sorted(out)


def test_restore_and_expire_remove_the_folders_they_empty(tmp_path):
    """A file leaving the trash (restored or expired) takes the folders below
    TRASH/<uuid>/files/ that held only it; files/ itself, the journal and every folder still
    holding a file stay. The table's own folders are never touched."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    for sub in ("p=1/deep", "p=2"):
        (lake.dir / "data" / sub).mkdir(parents=True)
    a = lake.orphan("p=1/deep/a.parquet", 1)
    b = lake.orphan("p=1/b.parquet", 2)
    c = lake.orphan("p=2/c.parquet", 3)
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    files = trash / uuid_of(lake) / "files"
    assert folders_below(files) == ["data", "data/p=1", "data/p=1/deep", "data/p=2"]

    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--path", "data/p=2")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(c)
    assert folders_below(files) == ["data", "data/p=1", "data/p=1/deep"]

    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--path",
                 "data/p=1/deep", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert folders_below(files) == ["data", "data/p=1", "data/p=1/deep"]  # dry run: as it was

    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir), "--path",
                 "data/p=1/deep")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(a)
    assert folders_below(files) == ["data", "data/p=1"]  # p=1 still holds b

    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["expired"] == 1
    assert not os.path.exists(b)
    assert os.path.isdir(files) and folders_below(files) == []
    assert os.path.isdir(lake.dir / "data" / "p=1") and os.path.isdir(lake.dir / "data" / "p=2")
    assert sorted(os.path.relpath(p, lake.dir) for p in (a, c) if os.path.exists(p)) == \
        ["data/p=1/deep/a.parquet", "data/p=2/c.parquet"]


def test_restore_records_go_in_batches_of_a_thousand(tmp_path):
    """A restore writes its "restored" records up to 1,000 to a journal file (one file per
    restored file made a big restore as many journals for every expire to read): 1,001
    restored files, two new journal files holding 1,000 and 1 records, each naming its file's
    original, trash name and the time of its move."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i:04d}.parquet", 1) for i in range(1001)]
    assert sweep(lake, "--trash", str(trash)).returncode == 0
    jdir = trash / uuid_of(lake) / "journal"
    before = set(os.listdir(jdir))
    started = time.time() * 1000
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["restored"] == 1001
    assert all(os.path.exists(o) for o in orphans) and trash_files(trash) == []
    new = sorted(set(os.listdir(jdir)) - before)
    sizes = []
    restored = []
    for name in new:
        with open(jdir / name) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        assert all(rec["event"] == "restored" for rec in recs)
        sizes.append(len(recs))
        restored += recs
    assert sorted(sizes) == [1, 1000]
    assert sorted(local(rec["original"]) for rec in restored) == sorted(orphans)
    for rec in restored:
        assert rec["trash"] == trashed(trash, lake, local(rec["original"]))
        assert started <= rec["restored_at_ms"] <= time.time() * 1000
    # expire afterwards: every name's newest event is its restore, nothing to delete
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert all(os.path.exists(o) for o in orphans)


def test_text_report_says_moved_to_the_trash(tmp_path):
    """The text report of a --trash run says the orphans were moved there (rows "trashed"), a
    dry run that they would be; neither says "deleted"."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10 + i) for i in range(2)]
    r = lake.icm("remove-orphan-files", "ns.t", "--trash", str(trash), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "dry run: would move 2 orphan files (21 bytes) older than" in r.stdout
    assert f" to the trash {trash}\n" in r.stdout and "deleted" not in r.stdout
    r = lake.icm("remove-orphan-files", "ns.t", "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    assert "moved 2 orphan files (21 bytes) older than" in r.stdout, r.stdout
    assert f" to the trash {trash}\n" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.endswith(".parquet")]
    assert len(rows) == 2 and all(" trashed " in row for row in rows), r.stdout
    assert "deleted" not in r.stdout
    assert trash_files(trash) == sorted(trashed(trash, lake, o) for o in orphans)

"""The trash must not lose data (adversary findings of session 16): a symbolic link inside the
trash or the table location must not let `trash expire` delete, or `trash restore` move, a file
outside them; a trash inside any table's location is refused (that table's sweep would delete
the trashed files); `trash expire` deletes a file only while the newest journal event of its
name is an old trash record and the file there is still the one recorded; a journal a run still
writes is not removed. Each test asserts the exit code and exactly which files exist after."""
import json
import os
import time

import pyarrow as pa

from plan_helpers import SCHEMA, Lake, age, files_under, local


def sweep(lake, *extra, table="ns.t"):
    return lake.icm("--json", "remove-orphan-files", table, "--settle", "0s", *extra)


def uuid_of(lake):
    return str(lake.cat.load_table("ns.t").metadata.table_uuid)


def live_data(lake):
    t = lake.cat.load_table("ns.t")
    return sorted(local(f.file.file_path) for f in t.scan().plan_files())


def make_trash(tmp_path):
    t = tmp_path / "trash"
    t.mkdir()
    return t


def write_journal(trash, uuid, recs, name, written_long_ago=False):
    """A journal of `recs`; `written_long_ago`: its modification time (the store's clock, which
    expire's window also asks) ten days back, as its records' times are."""
    jdir = trash / uuid / "journal"
    jdir.mkdir(parents=True, exist_ok=True)
    (jdir / name).write_text("".join(json.dumps(r) + "\n" for r in recs))
    if written_long_ago:
        age([jdir / name])


def record(lake, uuid, original, trash_path, at_ms, size=1, mtime=1):
    return {"version": 1, "table_uuid": uuid, "table_location": str(lake.dir),
            "original": str(original), "trash": str(trash_path), "size_bytes": size,
            "mtime_ms": mtime, "trashed_at_ms": at_ms}


def trashed_one(lake, trash):
    """A table with one orphan trashed by a sweep: (uuid, files/ folder, the trashed file)."""
    o = lake.orphan("o.parquet", 3)
    r = sweep(lake, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    uuid = uuid_of(lake)
    files = trash / uuid / "files"
    assert not os.path.exists(o) and (files / "data" / "o.parquet").exists()
    return uuid, files, str(files / "data" / "o.parquet")


def trashed_long_ago(tmp_path):
    """trashed_one, its record's trashed_at_ms set to long ago: (lake, trash, journal folder,
    the journal's name, the trashed file)."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid, _, o_trashed = trashed_one(lake, trash)
    jdir = trash / uuid / "journal"
    (first,) = os.listdir(jdir)
    rec = json.loads((jdir / first).read_text())
    rec["trashed_at_ms"] = 1
    (jdir / first).write_text(json.dumps(rec) + "\n")
    age([jdir / first])  # by the store's clock too
    return lake, trash, jdir, first, o_trashed


def test_data_loss_expire_through_link_in_trash(tmp_path):
    """F1: a folder of the trash that is a link into the table's data folder, and a record
    naming a live data file through it: expire refuses that record and deletes nothing."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid, files, _ = trashed_one(lake, trash)
    victim = live_data(lake)[0]
    os.symlink(os.path.dirname(victim), files / "lnk")
    write_journal(trash, uuid, [record(lake, uuid, victim, files / "lnk" / os.path.basename(victim),
                                       1, size=os.path.getsize(victim))], "1-forged-0.jsonl",
                  written_long_ago=True)
    table_before, trash_before = lake.files(), files_under(trash)
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1d")
    assert r.returncode == 1, r.stderr
    assert "symbolic link" in r.stdout and "lnk" in r.stdout
    assert os.path.exists(victim)
    assert lake.files() == table_before and files_under(trash) == trash_before
    # the trash itself being a link below its uuid folder is refused the same way
    os.rename(files, trash / uuid / "files.real")
    os.symlink(os.path.dirname(victim), files)
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1d")
    assert r.returncode == 1, r.stderr
    assert lake.files() == table_before


def test_data_loss_restore_through_link_in_trash(tmp_path):
    """F2: a record whose trash file is a live data file reached through a link in the trash:
    restore refuses it and moves nothing; a trash file that is itself a link is refused too."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid, files, o_trashed = trashed_one(lake, trash)
    victim = live_data(lake)[0]
    os.symlink(os.path.dirname(victim), files / "lnk")
    os.symlink(victim, files / "data" / "leaf.parquet")
    now = 4102444800000  # newer than the sweep's record: restored first
    write_journal(trash, uuid, [
        record(lake, uuid, lake.dir / "data" / "moved-away.parquet",
               files / "lnk" / os.path.basename(victim), now),
        record(lake, uuid, lake.dir / "data" / "moved-too.parquet",
               files / "data" / "leaf.parquet", now)], "9-forged-0.jsonl")
    table_before = lake.files()
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 1, r.stderr
    outcomes = {f["trash"]: f["outcome"] for f in json.loads(r.stdout)["files"]}
    assert outcomes == {str(files / "lnk" / os.path.basename(victim)): "failed",
                        str(files / "data" / "leaf.parquet"): "failed",
                        o_trashed: "restored"}
    assert os.path.exists(victim) and os.path.islink(files / "data" / "leaf.parquet")
    assert lake.files() == sorted(table_before + [str(lake.dir / "data" / "o.parquet")])
    assert lake.rows() and sum(lake.rows().values()) > 0


def test_data_loss_restore_through_link_in_table(tmp_path):
    """F3: a link inside the table location pointing outside it: restore does not write
    through it (the file stays in the trash, nothing appears outside)."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid, files, o_trashed = trashed_one(lake, trash)
    planted = files / "data" / "z.parquet"
    planted.write_bytes(b"z")
    out = tmp_path / "outside"
    out.mkdir()
    os.symlink(out, lake.dir / "data" / "lnk")
    write_journal(trash, uuid, [record(lake, uuid, lake.dir / "data" / "lnk" / "p.bin", planted,
                                       4102444800000)], "9-forged-0.jsonl")
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 1, r.stderr
    assert "symbolic link" in r.stdout
    assert os.listdir(out) == []
    assert planted.read_bytes() == b"z"
    assert os.path.exists(lake.dir / "data" / "o.parquet") and not os.path.exists(o_trashed)


def test_data_loss_trash_inside_another_tables_location(tmp_path):
    """F4: a trash inside another table's location (or holding it) is refused before anything
    moves: that table's sweep would delete the trashed files at once."""
    lake = Lake(tmp_path)
    b = lake.cat.create_table("ns.b", schema=SCHEMA)
    b.append(pa.table({"id": [7]}, schema=SCHEMA))
    bdir = lake.wh / "ns" / "b"
    inside_b = bdir / "trash"
    inside_b.mkdir()
    # a table of the catalog whose location is elsewhere: a trash holding it
    other = tmp_path / "other"
    c = lake.cat.create_table("ns.c", schema=SCHEMA, location=f"file://{other}/c")
    c.append(pa.table({"id": [8]}, schema=SCHEMA))
    # an Iceberg table no catalog names: told by its metadata/*.metadata.json
    loose = tmp_path / "loose"
    (loose / "metadata").mkdir(parents=True)
    (loose / "metadata" / "00000-x.metadata.json").write_text("{}")
    (loose / "data" / "trash").mkdir(parents=True)
    o = lake.orphan("o.parquet", 5)
    before = lake.files()
    for t, why in ((inside_b, "lies inside the Iceberg table location"),
                   (other, "ns.c"),
                   (loose / "data" / "trash", "lies inside the Iceberg table location")):
        r = sweep(lake, "--trash", str(t))
        assert r.returncode == 5, (t, r.stderr)
        assert why in r.stderr, r.stderr
        r = lake.icm("--json", "expire-snapshots", "ns.t", "--trash", str(t))
        assert r.returncode == 5, (t, r.stderr)
    assert lake.files() == before and os.path.exists(o)
    assert files_under(inside_b) == [] and files_under(loose / "data" / "trash") == []


def test_data_loss_expire_after_restore_and_retrash(tmp_path):
    """F5: trashed, restored, trashed again at the same name by a run whose journal expire
    has not read (moved aside here): the old record must not delete the new file, as the
    restore recorded that the name was emptied after it."""
    lake, trash, jdir, first, o_trashed = trashed_long_ago(tmp_path)
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    restores = [n for n in os.listdir(jdir) if n != first]
    assert len(restores) == 1
    (restored,) = [json.loads(line) for line in open(jdir / restores[0])]
    assert restored["event"] == "restored" and restored["trash"] == o_trashed
    o = str(lake.dir / "data" / "o.parquet")
    assert os.path.exists(o) and not os.path.exists(o_trashed)
    # trashed again (same size and all); its journal not yet seen by expire
    age([o])
    r = sweep(lake, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    aside = tmp_path / "aside"
    aside.mkdir()
    for n in os.listdir(jdir):
        if n not in (first, restores[0]):
            os.rename(jdir / n, aside / n)
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1h")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(o_trashed) and not os.path.exists(o)
    assert sorted(os.listdir(jdir)) == sorted([first, restores[0]])


def test_data_loss_expire_deletes_another_file_at_a_trash_name(tmp_path):
    """An old record whose name now holds another file (not the size, or on local disk the
    modification time, it recorded): expire keeps that file and says so (exit 5)."""
    lake, trash, jdir, first, o_trashed = trashed_long_ago(tmp_path)
    with open(o_trashed, "wb") as f:
        f.write(b"another file")
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1h")
    assert r.returncode == 5, r.stderr
    assert "another file, kept" in r.stdout
    assert open(o_trashed, "rb").read() == b"another file"
    assert os.listdir(jdir) == [first]
    # same size, another modification time: kept too
    with open(o_trashed, "wb") as f:
        f.write(b"x" * 3)
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1h")
    assert r.returncode == 5, r.stderr
    assert os.path.exists(o_trashed) and os.listdir(jdir) == [first]


def test_data_loss_expire_removes_a_journal_still_written(tmp_path):
    """A journal whose records are all old and their files gone, but which was written within
    the window (a running sweep appends to it): expire keeps it."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid = uuid_of(lake)
    files = trash / uuid / "files"
    write_journal(trash, uuid, [record(lake, uuid, lake.dir / "data" / "gone.parquet",
                                       files / "data" / "gone.parquet", 1)], "1-run-0.jsonl")
    j = trash / uuid / "journal" / "1-run-0.jsonl"
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1h")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["journals_removed"] == 0 and j.exists()
    age([j])
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "1h")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["journals_removed"] == 1 and not j.exists()


def test_data_loss_trash_inside_the_tables_own_write_paths(tmp_path):
    """Adversary round 3, F1: a trash inside the swept table's own write.data.path or
    write.metadata.path (folders outside its location) was accepted; a sweep of that folder
    (`--location`, as the README says) then deleted every trashed file. Refused now, by name
    and through a link, for the sweep and expiry alike (dry runs too); nothing moves."""
    lake = Lake(tmp_path)
    dpath, mpath = tmp_path / "dataD", tmp_path / "metaM"
    for name, prop, path in (("d", "write.data.path", dpath), ("m", "write.metadata.path", mpath)):
        t = lake.cat.create_table(f"ns.{name}", schema=SCHEMA,
                                  properties={prop: f"file://{path}"})
        t.append(pa.table({"id": [1]}, schema=SCHEMA))
        (path / "trash").mkdir()
        o = lake.wh / "ns" / name / "data" / "o.parquet"
        o.parent.mkdir(parents=True, exist_ok=True)
        o.write_bytes(b"orphan")
        age([o])
    assert any(f.endswith(".metadata.json") for f in os.listdir(mpath)), "the premise"
    os.symlink(dpath, tmp_path / "to-data")
    before = files_under(tmp_path)
    for table, trash, root in (("ns.d", dpath / "trash", "write.data.path"),
                               ("ns.m", mpath / "trash", "write.metadata.path"),
                               ("ns.d", tmp_path / "to-data" / "trash", "write.data.path")):
        for dry in ([], ["--dry-run"]):
            r = sweep(lake, "--trash", str(trash), *dry, table=table)
            assert r.returncode == 5, (trash, r.stdout, r.stderr)
            assert f"the table's {root}" in r.stderr, r.stderr
            r = lake.icm("--json", "expire-snapshots", table, "--older-than", "0s",
                         "--trash", str(trash), *dry)
            assert r.returncode == 5, (trash, r.stderr)
            assert f"the table's {root}" in r.stderr, r.stderr
    assert files_under(tmp_path) == before


def test_data_loss_trash_reached_through_a_link_into_another_table(tmp_path):
    """Adversary round 3, F2: a trash spelled through a link into another catalog table's data
    folder, or inside a folder whose metadata/ holds `*.metadata.json.gz` (a table no catalog
    here names), was accepted: that table's sweep deleted the trashed files. Refused now (the
    walk up for a table's metadata/ follows the trash's real path too; catalog tables' folders
    are compared by real path)."""
    lake = Lake(tmp_path)
    # ns.b keeps its metadata elsewhere: only the catalog tells its location
    b = lake.cat.create_table("ns.b", schema=SCHEMA, properties={
        "write.metadata.path": f"file://{tmp_path}/metaB"})
    b.append(pa.table({"id": [7]}, schema=SCHEMA))
    bdata = lake.wh / "ns" / "b" / "data"
    assert not (lake.wh / "ns" / "b" / "metadata").exists(), "the premise"
    (bdata / "trash").mkdir()
    os.symlink(bdata, tmp_path / "link")
    # ns.c keeps it in its location: the walk up the real path finds it
    c = lake.cat.create_table("ns.c", schema=SCHEMA)
    c.append(pa.table({"id": [8]}, schema=SCHEMA))
    (lake.wh / "ns" / "c" / "data" / "trash").mkdir()
    os.symlink(lake.wh / "ns" / "c" / "data", tmp_path / "linkc")
    # a loose table with gzip metadata, reached through a link as well as by name
    loose = tmp_path / "loose"
    (loose / "metadata").mkdir(parents=True)
    (loose / "metadata" / "v1.metadata.json.gz").write_bytes(b"\x1f\x8b")
    (loose / "data" / "trash").mkdir(parents=True)
    os.symlink(loose / "data", tmp_path / "link2")
    o = lake.orphan("o.parquet", 5)
    before = files_under(tmp_path)
    for trash, why in ((tmp_path / "link" / "trash", "ns.b"),
                       (tmp_path / "linkc" / "trash", "inside the Iceberg table location"),
                       (loose / "data" / "trash", "v1.metadata.json.gz"),
                       (tmp_path / "link2" / "trash", "v1.metadata.json.gz")):
        for dry in ([], ["--dry-run"]):
            r = sweep(lake, "--trash", str(trash), *dry)
            assert r.returncode == 5, (trash, r.stdout, r.stderr)
            assert why in r.stderr, r.stderr
    assert files_under(tmp_path) == before and os.path.exists(o)


def test_a_torn_journal_line_leaves_the_trash_usable(tmp_path):
    """Adversary round 3, F6: a journal whose last line a crash cut short (no newline, no
    closing brace) made restore and expire fail for every table of the trash. That record's
    file never moved (records are written first): the line is skipped, the rest restores."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid, files, o_trashed = trashed_one(lake, trash)
    jdir = trash / uuid / "journal"
    (journal,) = os.listdir(jdir)
    with open(jdir / journal, "a") as f:
        f.write('{"version":1,"table_uuid":"' + uuid + '","table_location":"')
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["restored"] == 1
    assert os.path.exists(lake.dir / "data" / "o.parquet") and not os.path.exists(o_trashed)


def test_data_loss_expire_drops_the_records_of_files_still_moving(tmp_path):
    """Adversary round 3, F3: a sweep writes a batch's records, then moves the batch; an expire
    in between (its window 0 s) found the files absent, took them as gone and removed the
    journal, so the files that landed next had no record (neither restorable nor expirable).
    An absent file counts as gone only once its record is a day old: the journal stays, and
    the file that lands is restored from it."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid = uuid_of(lake)
    o = lake.orphan("moving.parquet", 4)
    dest = trash / uuid / "files" / "data" / "moving.parquet"
    now = int(time.time() * 1000)
    write_journal(trash, uuid, [record(lake, uuid, o, dest, now - 60_000, size=4,
                                       mtime=int(os.stat(o).st_mtime * 1000))], "batch.jsonl")
    jpath = trash / uuid / "journal" / "batch.jsonl"
    age([jpath])
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["journals_removed"] == 0
    assert jpath.exists()
    # the move lands
    dest.parent.mkdir(parents=True)
    os.rename(o, dest)
    r = lake.icm("--json", "trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["restored"] == 1
    assert os.path.exists(o) and not dest.exists()


def test_data_loss_expire_drops_a_retrashed_files_record_behind_a_newer_restore(tmp_path):
    """Adversary round 3, F4 (expire's side): a name trashed, restored, and trashed again by a
    run whose record is older than the restore's by its clock (another host's, or a batch
    stamped at its start). Its newest record is the restore, yet the file is there: expire took
    the name as gone and removed every journal, leaving the file with no record. Kept now."""
    lake = Lake(tmp_path)
    trash = make_trash(tmp_path)
    uuid = uuid_of(lake)
    o = lake.dir / "data" / "again.parquet"
    dest = trash / uuid / "files" / "data" / "again.parquet"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"again")
    mtime = int(os.stat(dest).st_mtime * 1000)
    now = int(time.time() * 1000)
    first = record(lake, uuid, o, dest, now - 10_000, size=5, mtime=mtime)
    restored = dict(first, event="restored", restored_at_ms=now - 1_000)
    retrashed = record(lake, uuid, o, dest, now - 2_000, size=5, mtime=mtime)
    write_journal(trash, uuid, [first], "a.jsonl")
    write_journal(trash, uuid, [restored], "b.jsonl")
    write_journal(trash, uuid, [retrashed], "c.jsonl")
    jdir = trash / uuid / "journal"
    age([jdir / n for n in os.listdir(jdir)])
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert dest.exists()
    assert sorted(os.listdir(jdir)) == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_data_loss_expire_removes_a_journal_a_run_still_holds(tmp_path):
    """Adversary round 3, F3's residual: expire could unlink a local journal between its age
    re-check and the unlink while a sweep appended the next batch's records to it, and that
    batch moved with no record. A run holds a shared flock(2) on its journal while it may
    append; expire removes no journal it cannot lock exclusively."""
    import fcntl
    lake, trash, jdir, first, o_trashed = trashed_long_ago(tmp_path)
    with open(jdir / first) as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # as a running sweep holds it
        r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["counts"]["expired"] == 1 and doc["journals_removed"] == 0
        assert not os.path.exists(o_trashed) and (jdir / first).exists()
    # its file now absent, the record goes once its journal is a day old by the store's clock
    age([jdir / first])
    r = lake.icm("--json", "trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["journals_removed"] == 1
    assert not (jdir / first).exists()

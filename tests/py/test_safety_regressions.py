"""Regressions for data-loss bugs found by adversarial testing, on real PyIceberg tables.

Each test builds a small table with PyIceberg (SQLite catalog), does what the attack did through
the icemaint CLI (env ICM_CLI), and then asserts exactly which files exist and that PyIceberg
still reads every snapshot of the table:

  * a live data file referenced through a dot segment (`t/./data/f`) must not be deleted by
    expire-snapshots or remove-orphan-files (both once compared unresolved spellings);
  * a manifest of an expired snapshot that names the current manifest list, or the table's
    metadata file, as a data file must not get those deleted by expire-snapshots;
  * an option value that is itself an option (`--plan-out --dry-run`) is a usage error, not a
    real run with a file called "--dry-run".
"""
import glob
import json
import os
import shutil
import subprocess
import time

import pytest

pa = pytest.importorskip("pyarrow")
fastavro = pytest.importorskip("fastavro")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import sql_table_of_three_appends  # noqa: E402

CLI = os.environ.get("ICM_CLI")
TEN_DAYS_S = 10 * 86400


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    return sql_table_of_three_appends(tmp_path, "reg")


def icm(tbl, *args, check=True):
    p = subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "reg", *args],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        raise AssertionError(f"icemaint {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


def age_all(path):
    old = time.time() - TEN_DAYS_S
    for f in glob.glob(str(path / "**" / "*"), recursive=True):
        os.utime(f, (old, old))


def read_every_snapshot(tbl):
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in t.metadata.snapshots}


def test_dot_segment_reference_survives_expiry(table):
    data = table["dir"] / "data"
    real = data / "real.parquet"
    shutil.copy(sorted(data.glob("*.parquet"))[0], real)
    icm(table, "add-files", "ns.t", str(real))
    icm(table, "delete-files", "ns.t", str(real))
    # the same physical file again, spelled through "./"
    icm(table, "add-files", "ns.t", str(table["dir"] / "." / "data" / "real.parquet"))
    before = read_every_snapshot(table)
    icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert real.exists()
    after = read_every_snapshot(table)
    assert set(after) <= set(before) and after == {k: before[k] for k in after}


def test_dot_segment_reference_survives_orphan_sweep(table):
    data = table["dir"] / "data"
    src = sorted(data.glob("*.parquet"))[0]
    r1, r3 = data / "r1.parquet", data / "r3.parquet"
    shutil.copy(src, r1)
    shutil.copy(src, r3)
    icm(table, "add-files", "ns.t", f"{table['dir']}/./data/r1.parquet",
        f"{table['dir']}/metadata/../data/r3.parquet")
    stray = data / "stray.parquet"
    stray.write_bytes(b"not referenced")
    age_all(table["dir"])
    before = read_every_snapshot(table)
    icm(table, "remove-orphan-files", "ns.t")
    assert r1.exists() and r3.exists()
    assert not stray.exists()
    assert read_every_snapshot(table) == before


@pytest.mark.parametrize("victim", ["current_manifest_list", "metadata_file"])
def test_expired_manifest_naming_live_files_as_data(table, victim):
    t = table["cat"].load_table("ns.t")
    md_file = t.metadata_location.replace("file://", "")
    first = t.metadata.snapshots[0]
    current = t.current_snapshot()
    target = {"current_manifest_list": current.manifest_list,
              "metadata_file": "file://" + md_file}[victim]
    # Rewrite the first snapshot's manifest so its data file entry names `target`.
    ml = first.manifest_list.replace("file://", "")
    with open(ml, "rb") as f:
        r = fastavro.reader(f)
        ml_schema, ml_recs = r.writer_schema, list(r)
    man = ml_recs[0]["manifest_path"].replace("file://", "")
    with open(man, "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
    recs[0]["data_file"]["file_path"] = target
    with open(man, "wb") as f:
        fastavro.writer(f, schema, recs, metadata=meta)
    ml_recs[0]["manifest_length"] = os.path.getsize(man)
    with open(ml, "wb") as f:
        fastavro.writer(f, ml_schema, ml_recs)

    plan = json.loads(icm(table, "--json", "expire-snapshots", "ns.t", "--older-than",
                          "2099-01-01", "--dry-run").stdout)
    planned = {f["path"] for k in ("deleted_files", "deleted_manifests",
                                   "deleted_statistics_files") for f in plan[k]}
    assert target not in planned
    icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert os.path.exists(target.replace("file://", ""))
    # (the tampered entry itself makes the table unreadable as data, so check the structure)
    t = table["cat"].load_table("ns.t")
    assert os.path.exists(t.current_snapshot().manifest_list.replace("file://", ""))


def test_option_value_that_is_an_option_is_refused(table):
    stray = table["dir"] / "data" / "o.parquet"
    stray.write_bytes(b"x")
    age_all(table["dir"])
    p = icm(table, "remove-orphan-files", "ns.t", "--plan-out", "--dry-run", check=False)
    assert p.returncode == 2, p.stderr
    assert stray.exists()
    n = len(table["cat"].load_table("ns.t").metadata.snapshots)
    p = icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--plan-out",
            "--dry-run", check=False)
    assert p.returncode == 2, p.stderr
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == n


def test_add_files_records_an_absolute_path(table, tmp_path):
    data = table["dir"] / "data"
    shutil.copy(sorted(data.glob("*.parquet"))[0], data / "rel.parquet")
    p = subprocess.run([CLI, "--config", table["cfg"], "--catalog", "reg", "add-files", "ns.t",
                        "data/rel.parquet"], cwd=table["dir"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    t = table["cat"].load_table("ns.t")
    paths = {task.file.file_path for task in t.scan().plan_files()}
    assert str(data / "rel.parquet") in {x.replace("file://", "") for x in paths}
    assert all(x.startswith("/") or x.startswith("file:") for x in paths)
    assert read_every_snapshot(table)


def test_path_map_onto_a_sibling_table_is_refused(table):
    cat, schema = table["cat"], table["schema"]
    t2 = cat.create_table("ns.t_2", schema=schema)
    t2.append(pa.table({"id": [1, 2], "s": ["a", "b"]}, schema=schema))
    sibling = table["wh"] / "ns" / "t_2" / "data"
    before = sorted(p.name for p in sibling.iterdir())
    age_all(table["wh"] / "ns")
    mapping = f"file://{table['dir']}/data=file://{sibling}"
    p = icm(table, "--path-map", mapping, "remove-orphan-files", "ns.t", check=False)
    assert p.returncode == 5, p.stdout + p.stderr
    # The map sends the listing onto ns.t_2's data folder: the catalog guard, which compares
    # other tables' places by where they really are, refuses before the listing (it used to be
    # the presence check's "snapshots reference" refusal after it).
    assert "catalog table ns.t_2" in p.stderr, p.stderr
    assert sorted(p.name for p in sibling.iterdir()) == before
    assert cat.load_table("ns.t_2").scan().to_arrow().num_rows == 2


def test_location_through_a_symlink_out_of_the_table_is_refused(table, tmp_path):
    """--location names a folder inside the table that is a link to a folder outside it: the
    sweep once listed and deleted the outside files. Refused (exit 5); nothing deleted."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = [outside / "a.parquet", outside / "sub" / "b.parquet"]
    for v in victims:
        v.parent.mkdir(exist_ok=True)
        v.write_bytes(b"keep me")
    link = table["dir"] / "data" / "link-dir"
    os.symlink(outside, link)
    age_all(table["dir"])
    old = time.time() - TEN_DAYS_S
    for v in victims:
        os.utime(v, (old, old))
    for loc in (str(link), f"file://{link}", str(link / "sub")):
        p = icm(table, "remove-orphan-files", "ns.t", "--location", loc, check=False)
        assert p.returncode == 5, p.stderr
        assert "symbolic link" in p.stderr and str(outside) in p.stderr
        assert all(v.exists() for v in victims)
    read_every_snapshot(table)


def test_location_through_a_symlink_onto_the_tables_own_folder_is_refused(table):
    """--location names a link inside the table that leads to another of the table's folders
    (`t/lnk -> t/data`, at any depth): the listing named every live data file `t/lnk/...`, a
    name the metadata never uses, and the sweep deleted them all. Refused (exit 5); the real
    folder itself is still swept."""
    data = table["dir"] / "data"
    live = sorted(p.name for p in data.iterdir())
    os.symlink(data, table["dir"] / "lnk")
    (table["dir"] / "sub").mkdir()
    os.symlink(data, table["dir"] / "sub" / "deep")
    age_all(table["dir"])
    before = read_every_snapshot(table)
    for loc in (table["dir"] / "lnk", f"file://{table['dir']}/sub/deep", f"{table['dir']}/sub/deep/"):
        p = icm(table, "remove-orphan-files", "ns.t", "--location", str(loc), check=False)
        assert p.returncode == 5, p.stdout + p.stderr
        assert "symbolic link" in p.stderr and str(data) in p.stderr
        assert sorted(p.name for p in data.iterdir()) == live
    p = icm(table, "--json", "remove-orphan-files", "ns.t", "--location", str(data))
    assert json.loads(p.stdout)["orphans"] == []
    assert sorted(p.name for p in data.iterdir()) == live
    assert read_every_snapshot(table) == before


def test_table_behind_a_symlink_is_swept_through_its_location(table, tmp_path):
    """The table folder reached through a link (its warehouse path is a link) is still the
    table: --location below it is fine, and an old stray in it is deleted."""
    real = tmp_path / "real-ns"
    shutil.move(str(table["dir"].parent), real)
    os.symlink(real, table["dir"].parent)  # wh/ns -> real-ns
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"x")
    age_all(table["dir"])
    p = icm(table, "remove-orphan-files", "ns.t", "--location", str(table["dir"] / "data"))
    assert not stray.exists() and not (real / "t" / "data" / "stray.parquet").exists()
    read_every_snapshot(table)


def test_file_added_under_its_real_path_in_a_linked_warehouse_survives(tmp_path):
    """The warehouse everybody uses is a link (wh -> real-wh) and a file was added under its
    real path: the listing shows it under the table's name, which the metadata does not use.
    The sweep once deleted it as an orphan; it must keep it (and PyIceberg read the table)."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    (tmp_path / "real-wh").mkdir()
    wh = tmp_path / "wh"
    os.symlink(tmp_path / "real-wh", wh)
    cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("ns.t", schema=schema)
    for i in range(2):
        t.append(pa.table({"id": [i], "s": ["a"]}, schema=schema))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    tbl = {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t", "schema": schema}
    src = sorted((tbl["dir"] / "data").glob("*.parquet"))[0]
    real_new = tmp_path / "real-wh" / "ns" / "t" / "data" / "added-by-realpath.parquet"
    shutil.copy(src, real_new)
    icm(tbl, "add-files", "ns.t", str(real_new))
    stray = tbl["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"not referenced")
    age_all(tmp_path / "real-wh")
    before = read_every_snapshot(tbl)
    icm(tbl, "remove-orphan-files", "ns.t")
    assert real_new.exists()
    assert not stray.exists()
    assert read_every_snapshot(tbl) == before


def _age_metadata(tbl, hours):
    """Move every time in the current metadata file back by `hours` (as if the last commit were
    that long ago); the catalog keeps pointing at the same file."""
    md_path = oracle_local(tbl["cat"].load_table("ns.t").metadata_location)
    doc = json.load(open(md_path))
    shift = hours * 3600 * 1000
    doc["last-updated-ms"] -= shift
    for s in doc.get("snapshots", []):
        s["timestamp-ms"] -= shift
    for key in ("snapshot-log", "metadata-log"):
        for e in doc.get(key, []):
            e["timestamp-ms"] -= shift
    json.dump(doc, open(md_path, "w"))


def oracle_local(location):
    return location[len("file://"):] if location.startswith("file://") else location


def test_commits_on_a_table_last_updated_hours_ago(table):
    """add-files, rollback and delete-files once failed on any table whose last commit was over
    a minute old: the new snapshot-log entry ran ahead of last-updated-ms."""
    _age_metadata(table, 3)
    data = table["dir"] / "data"
    added = data / "added.parquet"
    shutil.copy(sorted(data.glob("*.parquet"))[0], added)
    first = table["cat"].load_table("ns.t").metadata.snapshots[0].snapshot_id
    icm(table, "add-files", "ns.t", str(added))
    t = table["cat"].load_table("ns.t")
    assert t.metadata.last_updated_ms >= t.metadata.snapshot_log[-1].timestamp_ms
    assert t.scan().to_arrow().num_rows == 20  # 15 rows + the added copy of 5
    icm(table, "delete-files", "ns.t", str(added))
    assert table["cat"].load_table("ns.t").scan().to_arrow().num_rows == 15
    icm(table, "rollback", "ns.t", str(first))
    t = table["cat"].load_table("ns.t")
    assert t.metadata.current_snapshot_id == first
    assert t.scan().to_arrow().num_rows == 5
    read_every_snapshot(table)


@pytest.mark.parametrize("command", ["expire-snapshots", "remove-orphan-files"])
def test_plan_out_never_costs_a_file(table, tmp_path, command):
    """--plan-out once truncated its file before anything ran and deleted it when the run
    failed, even with --dry-run: pointed at the table's current metadata file it destroyed the
    table. Now a path inside the table is refused (exit 5) with the table untouched, a failed or
    refused run leaves an existing file as it was, and a good run replaces it whole."""
    md_path = oracle_local(table["cat"].load_table("ns.t").metadata_location)
    md_before = open(md_path, "rb").read()
    data_file = sorted((table["dir"] / "data").glob("*.parquet"))[0]
    data_before = data_file.read_bytes()
    age_all(table["dir"])
    before = read_every_snapshot(table)
    extra = ["--older-than", "1d"] if command == "remove-orphan-files" else []
    for victim in (md_path, str(data_file)):  # existing files of the table
        p = icm(table, command, "ns.t", "--dry-run", "--plan-out", victim, *extra, check=False)
        assert p.returncode == 5, p.stderr
    new_inside = table["dir"] / "metadata" / "plan.json"  # a new name inside the table
    p = icm(table, command, "ns.t", "--dry-run", "--plan-out", str(new_inside), *extra,
            check=False)
    assert p.returncode == 5 and "--plan-out is inside the table" in p.stderr, p.stderr
    assert not new_inside.exists()
    assert not [x for x in new_inside.parent.iterdir() if x.name.startswith(".plan.json")]
    assert open(md_path, "rb").read() == md_before
    assert data_file.read_bytes() == data_before
    assert read_every_snapshot(table) == before

    # an existing file that is not an earlier plan is never replaced (notes, the catalog
    # database, a data file added from elsewhere): refused before anything runs
    precious = tmp_path / "notes.txt"
    precious.write_text("important notes")
    cat_db = table["wh"] / "cat.db"
    db_before = cat_db.read_bytes()
    for victim in (precious, cat_db):
        p = icm(table, command, "ns.t", "--dry-run", "--plan-out", str(victim), *extra,
                check=False)
        assert p.returncode == 5 and "not an earlier plan" in p.stderr, p.stderr
    assert precious.read_text() == "important notes" and cat_db.read_bytes() == db_before
    # a new file is written whole, with a new file's usual mode
    plan = tmp_path / "plan.json"
    icm(table, command, "ns.t", "--dry-run", "--plan-out", str(plan), *extra)
    first = plan.read_text()
    assert json.loads(first)["dry_run"] is True
    mask = os.umask(0)
    os.umask(mask)
    assert plan.stat().st_mode & 0o777 == 0o666 & ~mask
    # a failed run (no such table) and a refused one (cutoff under 24 h) leave it as it was
    p = icm(table, command, "ns.nope", "--dry-run", "--plan-out", str(plan), check=False)
    assert p.returncode == 1 and plan.read_text() == first
    if command == "remove-orphan-files":
        p = icm(table, command, "ns.t", "--dry-run", "--older-than", "1h", "--plan-out",
                str(plan), check=False)
        assert p.returncode == 5 and plan.read_text() == first
    # a good run replaces the earlier plan; no temporary file is left beside it
    icm(table, command, "ns.t", "--dry-run", "--plan-out", str(plan), *extra)
    assert json.loads(plan.read_text())["dry_run"] is True
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith(".plan.json")] == []


def test_data_file_named_like_a_checksum_survives_its_namesakes_delete(table):
    """A live data file named `.old.parquet.crc` (add-files takes any name) beside an orphan
    `old.parquet`: deleting the orphan once took the live file along as Hadoop's checksum side
    file, and the table could no longer be read. Only a real checksum file ("crc\\0") goes."""
    data = table["dir"] / "data"
    live = data / ".old.parquet.crc"
    shutil.copy(sorted(data.glob("*.parquet"))[0], live)
    icm(table, "add-files", "ns.t", str(live))
    orphan = data / "old.parquet"
    orphan.write_bytes(b"stray")
    real_crc_orphan = data / "gone.parquet"
    real_crc_orphan.write_bytes(b"stray")
    (data / ".gone.parquet.crc").write_bytes(b"crc\0\0\0\2\0")
    age_all(table["dir"])
    before = read_every_snapshot(table)
    icm(table, "remove-orphan-files", "ns.t")
    assert not orphan.exists() and not real_crc_orphan.exists()
    assert not (data / ".gone.parquet.crc").exists()
    assert live.exists()
    assert read_every_snapshot(table) == before


@pytest.mark.parametrize("command", ["expire-snapshots", "remove-orphan-files"])
def test_plan_out_naming_a_folder_stops_before_the_run(table, tmp_path, command):
    """--plan-out naming a folder failed only at the final rename, after a real run had deleted
    its files, leaving no plan of what went. It stops first now (exit 1), deleting nothing."""
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"stray")
    age_all(table["dir"])
    folder = tmp_path / "plans"
    folder.mkdir()
    snapshots = len(table["cat"].load_table("ns.t").metadata.snapshots)
    extra = ["--older-than", "2099-01-01"] if command == "expire-snapshots" else []
    p = icm(table, command, "ns.t", "--plan-out", str(folder), *extra, check=False)
    assert p.returncode == 1 and "is a directory" in p.stderr, p.stderr
    assert stray.exists() and folder.is_dir() and list(folder.iterdir()) == []
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == snapshots
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith(".plans")] == []


def test_write_data_path_linked_into_the_table_folder_keeps_its_files(tmp_path):
    """write.data.path is a link into the table's own folder (`/d -> <table>/realdata`): the
    sweep of the table location listed the live data files as `<table>/realdata/...`, a name
    the metadata (`/d/...`) never uses, and deleted them all. They are kept (through an alias,
    one realpath per reference in such a root); a real stray beside them still goes."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    realdata = wh / "ns" / "t" / "realdata"
    realdata.mkdir(parents=True)
    link = tmp_path / "d"
    os.symlink(realdata, link)
    cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("ns.t", schema=schema, location=f"file://{wh}/ns/t",
                         properties={"write.data.path": f"file://{link}"})
    for i in range(2):
        t.append(pa.table({"id": [i], "s": ["a"]}, schema=schema))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    tbl = {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t", "schema": schema}
    live = sorted(p.name for p in realdata.iterdir())
    assert len(live) == 2
    stray = realdata / "stray.parquet"
    stray.write_bytes(b"not referenced")
    age_all(tbl["dir"])
    before = read_every_snapshot(tbl)
    for loc in (None, str(realdata), str(link)):
        stray.write_bytes(b"not referenced")
        age_all(tbl["dir"])
        icm(tbl, "remove-orphan-files", "ns.t", *(["--location", loc] if loc else []))
        assert sorted(p.name for p in realdata.iterdir()) == live, loc
    assert read_every_snapshot(tbl) == before


def test_plan_out_in_the_table_a_path_map_points_away_from_is_refused(table, tmp_path):
    """With --path-map sending the table's location to a copy, --plan-out was checked against
    the copy only: pointed at a data file of the table as its metadata names it (the original),
    it replaced that file with the JSON report. Both the copy and the original are refused."""
    copy = tmp_path / "copy"
    shutil.copytree(table["dir"], copy)
    data_file = sorted((table["dir"] / "data").glob("*.parquet"))[0]
    data_before = data_file.read_bytes()
    mapping = f"file://{table['dir']}=file://{copy}"
    for victim in (data_file, copy / "data" / data_file.name):
        p = icm(table, "--path-map", mapping, "remove-orphan-files", "ns.t", "--dry-run",
                "--plan-out", str(victim), check=False)
        assert p.returncode == 5, p.stdout + p.stderr  # an existing file that is no plan
        new_name = victim.parent / "plan.json"
        p = icm(table, "--path-map", mapping, "remove-orphan-files", "ns.t", "--dry-run",
                "--plan-out", str(new_name), check=False)
        assert p.returncode == 5, p.stdout + p.stderr
        assert "--plan-out is inside the table" in p.stderr
        assert not new_name.exists()
    assert data_file.read_bytes() == data_before
    assert (copy / "data" / data_file.name).read_bytes() == data_before
    elsewhere = tmp_path / "plan.json"
    icm(table, "--path-map", mapping, "remove-orphan-files", "ns.t", "--dry-run", "--plan-out",
        str(elsewhere))
    assert json.loads(elsewhere.read_text())["location"] == f"file://{table['dir']}"

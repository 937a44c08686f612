"""Data-loss class "nested tables": expiry keeps the files of a table nested in this table's
folder that no catalog lists.

A filesystem-layout (Hadoop) table B lives in a folder inside catalog table A's location. A
adds one of B's live data files (add-files), then deletes it (delete-files): expiring A's old
snapshots planned B's live file and deleted it (exit 0). The sweep refuses such a folder
(another table's metadata under its listing); expiry now keeps, with a warning, every planned
file in a folder strictly below A's roots whose `metadata/` folder holds `version-hint.text` or
`*.metadata.json` files that are not A's. The control: the same folder without a `metadata/`
folder is no table, and the file A no longer references is deleted as before.

Tables are written by PyIceberg; every file is aged 10 days first. After each command the tests
assert exactly which files exist and that PyIceberg still reads B from its metadata file.
"""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
from pyiceberg.table import StaticTable  # noqa: E402

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, referenced, icm  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])



def setup(tmp_path):
    """Catalog table ns.a, and a Hadoop-layout table B at <a>/sub (v1/v2.metadata.json and
    version-hint.text, written through a throw-away catalog that is then removed). A adds B's
    data file, then deletes it. Returns (cfg, catalog, a's folder, B's folder, B's file)."""
    wh, db = tmp_path / "wh", tmp_path / "cat.db"
    wh.mkdir()
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  default:\n    type: sql\n    uri: sqlite:///{db}\n"
                   f"    warehouse: file://{wh}\n")
    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    d.create_namespace("ns")
    a = d.create_table("ns.a", schema=SCHEMA)
    a.append(pa.table({"id": [1, 2]}, schema=SCHEMA))
    adir = Path(local(d.load_table("ns.a").location()))
    sub = adir / "sub"

    tmp_db = tmp_path / "tmpcat.db"
    tmp_cat = pyiceberg_sql.SqlCatalog("tmp", uri=f"sqlite:///{tmp_db}",
                                       warehouse=f"file://{tmp_path}/tmpwh")
    tmp_cat.create_namespace("ns")
    b = tmp_cat.create_table("ns.b", schema=SCHEMA, location=f"file://{sub}")
    b.append(pa.table({"id": [500, 600]}, schema=SCHEMA))
    tmp_db.unlink()
    # Hadoop layout: vN.metadata.json and version-hint.text naming the current version.
    names = sorted(p.name for p in (sub / "metadata").glob("*.metadata.json"))
    for n, name in enumerate(names, start=1):
        (sub / "metadata" / name).rename(sub / "metadata" / f"v{n}.metadata.json")
    (sub / "metadata" / "version-hint.text").write_text(str(len(names)))
    b_meta = sub / "metadata" / f"v{len(names)}.metadata.json"
    b_file = [f for f in files_under(sub / "data") if f.endswith(".parquet")]
    assert len(b_file) == 1
    b_file = b_file[0]

    for args in (("add-files", "ns.a", b_file), ("delete-files", "ns.a", b_file)):
        p = icm(tmp_path, cfg, *args)
        assert p.returncode == 0, p.stderr
    age_all(tmp_path)
    time.sleep(1.1)
    return cfg, d, adir, sub, b_meta, b_file


def read_b(b_meta):
    t = StaticTable.from_metadata(f"file://{b_meta}")
    return sorted(t.scan().to_arrow().column("id").to_pylist())


def expire(tmp_path, cfg, *extra):
    return icm(tmp_path, cfg, "expire-snapshots", "ns.a", "--retain-last", "1",
               "--older-than", "1s", *extra)


def test_expiry_keeps_the_live_file_of_a_hadoop_table_nested_in_its_folder(tmp_path):
    cfg, d, adir, sub, b_meta, b_file = setup(tmp_path)
    assert read_b(b_meta) == [500, 600]
    b_files = files_under(sub)
    a_before = files_under(adir) - b_files
    assert len(d.load_table("ns.a").metadata.snapshots) == 3

    # The dry run reports the same hold, and deletes nothing.
    p = expire(tmp_path, cfg, "--dry-run")
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and b_file in p.stderr and str(sub) in p.stderr, p.stderr
    assert files_under(adir) == a_before | b_files

    p = expire(tmp_path, cfg)
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and b_file in p.stderr and "another table" in p.stderr, p.stderr
    a_after = d.load_table("ns.a")
    assert len(a_after.metadata.snapshots) == 1
    # B is untouched, file for file, and still reads; A lost only what its expired
    # snapshots alone reached (B's file is not A's any more, yet it stays).
    assert files_under(sub) == b_files
    assert read_b(b_meta) == [500, 600]
    metadata_files = {f for f in a_before if f.endswith(".metadata.json")}
    assert files_under(adir) - b_files == referenced(a_after) | metadata_files
    assert a_before - files_under(adir)  # what only the expired snapshots reached is gone
    assert a_after.scan().to_arrow().num_rows == 2


def test_control_without_a_nested_table_the_file_is_deleted(tmp_path):
    cfg, d, adir, sub, b_meta, b_file = setup(tmp_path)
    shutil.rmtree(sub / "metadata")  # <a>/sub is now a plain folder: no table lives there
    a_before = files_under(adir)

    p = expire(tmp_path, cfg)
    assert p.returncode == 0, p.stderr
    assert "another table" not in p.stderr, p.stderr
    a_after = d.load_table("ns.a")
    assert len(a_after.metadata.snapshots) == 1
    assert not os.path.exists(b_file)
    metadata_files = {f for f in a_before if f.endswith(".metadata.json")}
    assert files_under(adir) == referenced(a_after) | metadata_files
    assert a_after.scan().to_arrow().num_rows == 2


def test_expiry_keeps_the_live_file_of_a_hadoop_table_at_its_write_data_path(tmp_path):
    """B lies exactly at A's write.data.path (a root of A, not below
    one). The folders looked at run up to the root and include it: B's live file is kept with
    the warning, B stays whole and reads, and A's own expired files still go."""
    wh, db = tmp_path / "wh", tmp_path / "cat.db"
    wh.mkdir()
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  default:\n    type: sql\n    uri: sqlite:///{db}\n"
                   f"    warehouse: file://{wh}\n")
    bdir = tmp_path / "shared" / "b"
    tmp_db = tmp_path / "tmpcat.db"
    tmp_cat = pyiceberg_sql.SqlCatalog("tmp", uri=f"sqlite:///{tmp_db}",
                                       warehouse=f"file://{tmp_path}/tmpwh")
    tmp_cat.create_namespace("ns")
    b = tmp_cat.create_table("ns.b", schema=SCHEMA, location=f"file://{bdir}")
    b.append(pa.table({"id": [500, 600]}, schema=SCHEMA))
    tmp_db.unlink()
    names = sorted(p.name for p in (bdir / "metadata").glob("*.metadata.json"))
    for n, name in enumerate(names, start=1):
        (bdir / "metadata" / name).rename(bdir / "metadata" / f"v{n}.metadata.json")
    (bdir / "metadata" / "version-hint.text").write_text(str(len(names)))
    b_meta = bdir / "metadata" / f"v{len(names)}.metadata.json"
    b_files = files_under(bdir)
    b_file = [f for f in b_files if f.endswith(".parquet")]
    assert len(b_file) == 1
    b_file = b_file[0]

    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    d.create_namespace("ns")
    a = d.create_table("ns.a", schema=SCHEMA,
                       properties={"write.data.path": f"file://{bdir}"})
    a.append(pa.table({"id": [1, 2]}, schema=SCHEMA))
    for args in (("add-files", "ns.a", b_file), ("delete-files", "ns.a", b_file)):
        p = icm(tmp_path, cfg, *args)
        assert p.returncode == 0, p.stderr
    age_all(tmp_path)
    time.sleep(1.1)
    a_before = d.load_table("ns.a")
    a_files_before = files_under(Path(local(a_before.location()))) | (files_under(bdir) - b_files)

    p = expire(tmp_path, cfg)
    assert p.returncode == 0, p.stderr
    assert "warning" in p.stderr and b_file in p.stderr and "another table" in p.stderr, p.stderr
    assert b_files <= files_under(bdir)
    assert read_b(b_meta) == [500, 600]
    a_after = d.load_table("ns.a")
    assert len(a_after.metadata.snapshots) == 1
    a_files_after = files_under(Path(local(a_after.location()))) | (files_under(bdir) - b_files)
    metadata_files = {f for f in a_files_before if f.endswith(".metadata.json")}
    assert a_files_after == referenced(a_after) | metadata_files | \
        {f for f in a_files_after if f.endswith(".metadata.json")}
    assert a_files_before - a_files_after  # what only A's expired snapshots reached is gone

"""`gc.enabled` is read as Java reads it, by the sweep and expiry alike
(docs/semantics.md#sweep-refusals).

Java's PropertyUtil.propertyAsBoolean is Boolean.parseBoolean: only a case-insensitive "true"
enables GC, and any other value ("no", "0", "off", " false") disables it. The sweep used to
read only "false" as disabled (and deleted with `gc.enabled=no`), while expiry refused other
spellings as invalid. Now both refuse (exit 5) every value but "true", naming it; after each
command the test asserts exactly which files exist and that PyIceberg reads every snapshot.
"""
import glob
import os
import subprocess
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64())])


def files_under(root):
    out = set()
    for dirpath, _dirs, names in os.walk(root):
        out.update(str(Path(dirpath) / n) for n in names)
    return out


def age_all(root):
    old = time.time() - 10 * 86400
    for f in glob.glob(str(root / "**" / "*"), recursive=True):
        os.utime(f, (old, old))


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db",
                                   warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    for i in range(3):
        t.append(pa.table({"id": [i]}, schema=SCHEMA))
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{tmp_path}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"cat": cat, "cfg": cfg, "dir": wh / "ns" / "t", "root": tmp_path}


def icm(tbl, *args):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    return subprocess.run([CLI, "--config", str(tbl["cfg"]), "--catalog", "c", *args],
                          cwd=tbl["root"], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def set_gc(tbl, value):
    t = tbl["cat"].load_table("ns.t")
    with t.transaction() as tx:
        tx.set_properties({"gc.enabled": value})


def rows_per_snapshot(tbl):
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in t.metadata.snapshots}


@pytest.mark.parametrize("value", ["no", "0", "off", " false", "false ", "FALSE", "yes"])
def test_any_gc_enabled_value_but_true_refuses_sweep_and_expiry(table, value):
    set_gc(table, value)
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    before_rows = rows_per_snapshot(table)
    for args in (("remove-orphan-files", "ns.t"),
                 ("remove-orphan-files", "ns.t", "--dry-run"),
                 ("expire-snapshots", "ns.t", "--older-than", "2099-01-01"),
                 ("expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--dry-run")):
        p = icm(table, *args)
        assert p.returncode == 5, (args, p.returncode, p.stderr)
        assert "GC is disabled" in p.stderr and f"gc.enabled='{value}'" in p.stderr, p.stderr
        assert files_under(table["dir"]) == before_files
    assert rows_per_snapshot(table) == before_rows


def test_true_in_any_case_enables_gc(table):
    set_gc(table, "True")
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    p = icm(table, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert files_under(table["dir"]) == before_files - {str(stray)}
    assert rows_per_snapshot(table)

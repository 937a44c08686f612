"""Java (Iceberg 1.x, the interop harness's judge) reads tables written by icemaint transactions.

PyIceberg creates the table; icemaint adds two pyarrow-written Parquet files, deletes one,
PyIceberg appends, icemaint adds another file. The Java judge (tests/interop/java Fingerprint)
then reads every snapshot, and its row count per snapshot must equal PyIceberg's. Needs java and
the judge's classpath (scripts/setup-java.sh); skipped without them unless CI is set.
A format-v3 table (row lineage: first-row-id, next-row-id, manifest first_row_id) gets the same
treatment without PyIceberg writes (PyIceberg 0.12 cannot write v3 metadata).
"""
import json
import subprocess
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

from txn_helpers import need_cli, write_parquet  # noqa: E402

INTEROP = Path(__file__).resolve().parents[1] / "interop"
sys.path.insert(0, str(INTEROP))


def java_or_skip():
    if shutil.which(os.environ.get("ICM_JAVA", "java")) is None:
        if os.environ.get("CI"):
            pytest.fail("java not found")
        pytest.skip("java not found")
    import javajudge
    try:
        javajudge.classpath()
    except Exception as e:  # Maven offline, setup script missing, ...
        if os.environ.get("CI"):
            raise
        pytest.skip(f"Java judge not available: {e}")
    return javajudge


def test_java_reads_every_snapshot(tmp_path):
    cli = need_cli()
    judge = java_or_skip()
    from warehouse import Warehouse
    wh = Warehouse(tmp_path / "warehouse")
    cat = wh.catalog()
    cat.create_namespace("ns")
    cat.create_table("ns.t", Schema(NestedField(1, "id", LongType(), required=False),
                                    NestedField(2, "data", StringType(), required=False)))
    files = tmp_path / "incoming"
    files.mkdir()

    def icemaint(*args):
        res = subprocess.run([cli, *wh.icemaint_args(), *args], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr

    f1 = write_parquet(files / "a.parquet", [1, 2, 3])
    f2 = write_parquet(files / "b.parquet", [4, 5])
    icemaint("add-files", "ns.t", f1, f2)
    icemaint("delete-files", "ns.t", f1)
    cat.load_table("ns.t").append(
        pa.table({"id": pa.array([6], pa.int64()), "data": pa.array(["r6"])}))
    icemaint("add-files", "ns.t", write_parquet(files / "c.parquet", [7, 8]))

    t = cat.load_table("ns.t")
    want = {s.snapshot_id: len(t.scan(snapshot_id=s.snapshot_id).to_arrow())
            for s in t.metadata.snapshots}
    assert sorted(want.values()) == [2, 3, 5, 5]
    lines = judge.run("Fingerprint", [*wh.java_args(), "ns.t"])
    assert len(lines) == 1 and "error" not in lines[0], lines
    got = {s["snapshot_id"]: s["rows"] for s in lines[0]["snapshots"]}
    assert got == want
    assert lines[0]["current_snapshot_id"] == t.current_snapshot().snapshot_id


def test_java_reads_v3_row_lineage(tmp_path):
    cli = need_cli()
    judge = java_or_skip()
    from warehouse import Warehouse
    wh = Warehouse(tmp_path / "warehouse")
    cat = wh.catalog()
    cat.create_namespace("ns")
    t2 = cat.create_table("ns.src", Schema(NestedField(1, "id", LongType(), required=False),
                                           NestedField(2, "data", StringType(), required=False)))
    # The same empty table as format v3: a copy of its metadata, registered as ns.t3.
    src = t2.metadata_location[len("file://"):]
    doc = json.loads(Path(src).read_text())
    doc["format-version"] = 3
    doc["next-row-id"] = 0
    v3 = Path(src).with_name("00000-v3.metadata.json")
    v3.write_text(json.dumps(doc))

    def icemaint(*args):
        res = subprocess.run([cli, *wh.icemaint_args(), *args], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr

    # (the v3 copy shares ns.src's location: registering it needs --force, issue #16)
    icemaint("register-table", "ns.t3", str(v3), "--force")
    files = tmp_path / "incoming"
    files.mkdir()
    f1 = write_parquet(files / "a.parquet", [1, 2, 3])
    icemaint("add-files", "ns.t3", f1, write_parquet(files / "b.parquet", [4, 5]))
    icemaint("delete-files", "ns.t3", f1)
    icemaint("add-files", "ns.t3", write_parquet(files / "c.parquet", [7, 8]))
    lines = judge.run("Fingerprint", [*wh.java_args(), "ns.t3"])
    assert len(lines) == 1 and "error" not in lines[0], lines
    assert lines[0]["format_version"] == 3
    assert [s["rows"] for s in lines[0]["snapshots"]] == [5, 2, 4]
    # Row lineage as the spec assigns it: 5 rows from 0; the delete rewrote b's manifest (its 2
    # existing rows get a new range from 5); c's 2 rows follow from 7.
    res = subprocess.run([cli, *wh.icemaint_args(), "--json", "snapshots", "ns.t3"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    snaps = json.loads(res.stdout)["snapshots"]
    assert [(s["first_row_id"], s["added_rows"]) for s in snaps] == [(0, 5), (5, 2), (7, 2)]

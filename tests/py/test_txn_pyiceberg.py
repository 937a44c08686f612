"""Tables changed by icemaint's transactions read correctly in PyIceberg.

PyIceberg creates a table in a SQLite SqlCatalog; pyarrow writes Parquet files (without
Iceberg field ids, as another engine would); `icemaint add-files` registers them; PyIceberg
reads every row back, sees the snapshot summary Java/PyIceberg would write, and appends on top.
Then `delete-files`, `create-branch`/`create-tag`, `set-properties` and `rollback` are checked
through PyIceberg's view of the metadata.
"""
import pytest

pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

from txn_helpers import Db, local, need_cli, referenced_files, write_parquet  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "data", StringType(), required=False))


@pytest.fixture
def db(tmp_path):
    need_cli()
    d = Db(tmp_path)
    cat = d.catalog()
    cat.create_namespace("ns")
    cat.create_table("ns.t", SCHEMA)
    d.files = tmp_path / "incoming"
    d.files.mkdir()
    return d


def ids_of(table):
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_add_files_then_pyiceberg_reads_and_appends(db):
    f1 = write_parquet(db.files / "a.parquet", [1, 2, 3])
    f2 = write_parquet(db.files / "b.parquet", [4, 5])
    res = db.cli("--json", "add-files", "ns.t", f1, f2)
    assert '"attempts": 1' in res.stdout or '"attempts":1' in res.stdout

    t = db.catalog().load_table("ns.t")
    assert ids_of(t) == [1, 2, 3, 4, 5]
    snap = t.current_snapshot()
    s = snap.summary
    assert s.operation.value == "append"
    assert s["added-data-files"] == "2"
    assert s["added-records"] == "5"
    assert s["total-records"] == "5"
    assert s["total-data-files"] == "2"
    assert s["total-delete-files"] == "0"
    import os
    assert s["added-files-size"] == str(os.path.getsize(f1) + os.path.getsize(f2))
    assert snap.sequence_number == 1
    assert t.metadata.properties["schema.name-mapping.default"]
    # PyIceberg sees the files with the footer's record counts.
    files = {local(r["file_path"]): r["record_count"] for r in t.inspect.files().to_pylist()}
    assert files == {f1: 3, f2: 2}

    # PyIceberg appends on top of icemaint's snapshot; both sets of rows are read.
    t.append(pa.table({"id": pa.array([6], pa.int64()), "data": pa.array(["r6"])}))
    t = db.catalog().load_table("ns.t")
    assert ids_of(t) == [1, 2, 3, 4, 5, 6]
    assert t.current_snapshot().summary["total-records"] == "6"
    assert t.current_snapshot().parent_snapshot_id == snap.snapshot_id

    # icemaint appends again on top of PyIceberg's snapshot.
    f3 = write_parquet(db.files / "c.parquet", [7])
    db.cli("add-files", "ns.t", f3)
    t = db.catalog().load_table("ns.t")
    assert ids_of(t) == [1, 2, 3, 4, 5, 6, 7]
    assert t.current_snapshot().summary["total-records"] == "7"
    assert t.current_snapshot().sequence_number == 3
    for path in referenced_files(t):
        assert os.path.exists(local(path)), path


def test_add_files_refuses_duplicates_and_non_parquet(db):
    f1 = write_parquet(db.files / "a.parquet", [1])
    db.cli("add-files", "ns.t", f1)
    res = db.cli("add-files", "ns.t", f1, check=False)
    assert res.returncode == 1
    assert "already a live file" in res.stderr
    junk = db.files / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    res = db.cli("add-files", "ns.t", str(junk), check=False)
    assert res.returncode == 1
    assert "not a readable Parquet file" in res.stderr and str(junk) in res.stderr
    t = db.catalog().load_table("ns.t")
    assert len(t.metadata.snapshots) == 1
    assert ids_of(t) == [1]


def test_delete_files_refs_properties_rollback(db):
    f1 = write_parquet(db.files / "a.parquet", [1, 2])
    f2 = write_parquet(db.files / "b.parquet", [3])
    db.cli("add-files", "ns.t", f1, f2)
    first = db.catalog().load_table("ns.t").current_snapshot().snapshot_id
    db.cli("delete-files", "ns.t", f1)
    t = db.catalog().load_table("ns.t")
    assert ids_of(t) == [3]
    s = t.current_snapshot().summary
    assert s.operation.value == "delete"
    assert s["deleted-data-files"] == "1"
    assert s["deleted-records"] == "2"
    assert s["total-records"] == "1"
    assert s["total-data-files"] == "1"
    second = t.current_snapshot().snapshot_id

    db.cli("create-tag", "ns.t", "before-delete", "--snapshot-id", str(first),
           "--max-ref-age", "7d")
    db.cli("create-branch", "ns.t", "audit", "--max-snapshot-age", "2d",
           "--min-snapshots-to-keep", "3", "--max-ref-age", "30d")
    db.cli("set-properties", "ns.t", "owner=maint", "comment=a=b")
    t = db.catalog().load_table("ns.t")
    tag = t.metadata.refs["before-delete"]
    assert tag.snapshot_id == first and tag.snapshot_ref_type.value == "tag"
    assert tag.max_ref_age_ms == 7 * 86400000
    br = t.metadata.refs["audit"]
    assert br.snapshot_id == second and br.snapshot_ref_type.value == "branch"
    assert br.max_snapshot_age_ms == 2 * 86400000 and br.min_snapshots_to_keep == 3
    assert br.max_ref_age_ms == 30 * 86400000
    assert t.metadata.properties["owner"] == "maint"
    assert t.metadata.properties["comment"] == "a=b"
    # PyIceberg reads the tag's snapshot: the deleted file's rows are there.
    assert sorted(t.scan(snapshot_id=first).to_arrow().column("id").to_pylist()) == [1, 2, 3]

    res = db.cli("create-tag", "ns.t", "before-delete", check=False)
    assert res.returncode == 1 and "already exists" in res.stderr
    res = db.cli("remove-ref", "ns.t", "main", check=False)
    assert res.returncode == 1 and "main" in res.stderr

    db.cli("rollback", "ns.t", str(first))
    t = db.catalog().load_table("ns.t")
    assert t.current_snapshot().snapshot_id == first
    assert ids_of(t) == [1, 2, 3]
    assert t.metadata.snapshot_log[-1].snapshot_id == first
    res = db.cli("rollback", "ns.t", str(second), check=False)  # not an ancestor any more
    assert res.returncode == 1 and "not an ancestor" in res.stderr

    db.cli("remove-ref", "ns.t", "audit")
    db.cli("set-properties", "ns.t", "--unset", "owner")
    t = db.catalog().load_table("ns.t")
    assert "audit" not in t.metadata.refs
    assert "owner" not in t.metadata.properties
    # PyIceberg can still write after all of this.
    t.append(pa.table({"id": pa.array([9], pa.int64()), "data": pa.array(["r9"])}))
    assert ids_of(db.catalog().load_table("ns.t")) == [1, 2, 3, 9]

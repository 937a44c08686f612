"""check and the transaction commands on S3 tables (SQL catalog, warehouse on S3).

 - add-files registers Parquet objects put on S3 by another writer; PyIceberg and DuckDB read
   them; exactly the new metadata file, manifest list and manifest appear, the caller's objects
   stay;
 - a refused add-files (not Parquet) commits nothing and leaves exactly the keys it found
   (files the command wrote are deleted, the caller's never);
 - delete-files, set-properties and rollback commit on S3 and PyIceberg sees them;
 - check exits 0 on the healthy table and 6 once a live data object is gone (and names it).
"""
import io
import json

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)


def parquet_bytes(ids):
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(h._rows(ids), buf)
    return buf.getvalue()


def empty_table(wh):
    cat = wh.catalog()
    cat.create_namespace_if_not_exists("ns")
    cat.create_table("ns.t", h._schema())
    return cat.load_table("ns.t")


def ids_of(wh):
    return sorted(wh.catalog().load_table("ns.t").scan().to_arrow()["id"].to_pylist())


def test_transactions_on_s3(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = empty_table(wh)
    root = e.key_of(t.location(), moto.bucket)
    incoming = [f"{s3_prefix}incoming/a b.parquet", f"{s3_prefix}incoming/c+d.parquet"]
    e.put(moto, incoming[0], parquet_bytes([1, 2, 3]))
    e.put(moto, incoming[1], parquet_bytes([4, 5]))
    uris = [f"s3://{moto.bucket}/{k}" for k in incoming]
    before = e.keys(moto, s3_prefix)

    doc = json.loads(e.cat_cli(wh, "--json", "add-files", "ns.t", *uris, cwd=tmp_path).stdout)
    t = wh.catalog().load_table("ns.t")
    snap = t.current_snapshot()
    written = {t.metadata_location, snap.manifest_list} | \
        {m.manifest_path for m in snap.manifests(t.io)}
    assert e.keys(moto, s3_prefix) == before | {e.key_of(p, moto.bucket) for p in written}
    assert ids_of(wh) == [1, 2, 3, 4, 5]
    assert {f.data_file.file_path for m in snap.manifests(t.io)
            for f in m.fetch_manifest_entry(t.io)} == set(uris)
    assert doc is not None

    # refused: nothing committed, exactly the keys that were there
    e.put(moto, f"{s3_prefix}incoming/junk.parquet", b"not parquet at all")
    before = e.keys(moto, s3_prefix)
    res = e.cat_cli(wh, "add-files", "ns.t", f"s3://{moto.bucket}/{s3_prefix}incoming/junk.parquet",
                    cwd=tmp_path, check=False)
    assert res.returncode == 1 and "junk.parquet" in res.stderr
    assert e.keys(moto, s3_prefix) == before
    assert wh.catalog().load_table("ns.t").current_snapshot().snapshot_id == snap.snapshot_id

    first = snap.snapshot_id
    e.cat_cli(wh, "delete-files", "ns.t", uris[0], cwd=tmp_path)
    assert ids_of(wh) == [4, 5]
    e.cat_cli(wh, "set-properties", "ns.t", "owner=maint", cwd=tmp_path)
    e.cat_cli(wh, "rollback", "ns.t", str(first), cwd=tmp_path)
    t = wh.catalog().load_table("ns.t")
    assert t.metadata.properties["owner"] == "maint"
    assert t.current_snapshot().snapshot_id == first
    assert ids_of(wh) == [1, 2, 3, 4, 5]
    judged = h.judge_all(wh, "ns.t")
    assert judged["pyiceberg"] == judged["duckdb"]
    assert set(incoming) <= e.keys(moto, s3_prefix), "the caller's files are never deleted"
    assert all(k.startswith(root) or k.startswith(f"{s3_prefix}incoming/")
               for k in e.keys(moto, s3_prefix))


def test_check_on_s3(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    h.write_history(wh)
    res = e.cat_cli(wh, "check", "ns.t", "--all", cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    t = wh.catalog().load_table("ns.t")
    snap = t.current_snapshot()
    victim = next(f.data_file.file_path for m in snap.manifests(t.io)
                  for f in m.fetch_manifest_entry(t.io, discard_deleted=True))
    h.client(moto, attempts=4).delete_object(Bucket=moto.bucket,
                                             Key=e.key_of(victim, moto.bucket))
    res = e.cat_cli(wh, "check", "ns.t", cwd=tmp_path, check=False)
    assert res.returncode == 6, res.stderr
    assert e.key_of(victim, moto.bucket) in res.stdout + res.stderr

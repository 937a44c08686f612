"""remove-orphan-files on S3: exact keys in, exact keys out.

Tables are written by PyIceberg through a SQL catalog with an S3 warehouse; orphans are put
next to them with boto3. Each test asserts the exact key set of every bucket involved
afterwards:
 - the whole location: old orphans go, young ones (after the cutoff) stay, live files stay;
 - keys are exact: a live `data/x y.parquet` survives while the orphan `data/x+y.parquet` goes;
   `%2F`, `//`, non-ASCII keys are deleted as those keys; a key with a `.` or `..` segment
   (`data/a/../b.parquet`) is never a candidate (hidden, as in Java; never normalised into the
   live `data/b.parquet`, which survives);
 - a sibling table s3://b/.../t2 (same prefix up to a segment boundary) is untouched;
 - --location sweeps only below it;
 - a table at a bucket root (s3://bucket and s3://bucket/) never lists or deletes outside its
   bucket.
"""
import io
import json
import time

import s3_e2e as s3


def parquet_bytes(ids):
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(s3.rows(ids), buf)
    return buf.getvalue()


def add_live(srv, bucket, table, key, ids):
    """Put a Parquet file at `key` and register it in the table (PyIceberg add_files)."""
    s3.put(srv, bucket, key, parquet_bytes(ids))
    table.add_files([f"s3://{bucket}/{key}"])


def cutoff_between(before, after):
    """Run `before`, wait, take the cutoff, wait, run `after`: S3 mtimes have 1 s resolution."""
    before()
    time.sleep(1.5)
    cutoff = int(time.time() * 1000)
    time.sleep(1.5)
    after()
    return cutoff


def sweep(cat, *args):
    return json.loads(cat.cli("--json", "remove-orphan-files", *args, "--force",
                              "--settle", "0s").stdout)


def deleted_keys(doc, bucket):
    return {s3.key_of(o["path"], bucket) for o in doc["orphans"] if o.get("state") == "deleted"}


def test_sweep_exact_keys_sibling_and_cutoff(tmp_path):
    srv = s3.server()
    bucket = s3.new_bucket(srv)
    cat = s3.Catalog(srv, bucket, tmp_path)
    t = s3.make_table(cat, n_appends=2, overwrite_at=())
    t2 = s3.make_table(cat, ident="ns.t2", n_appends=1, overwrite_at=())
    root = s3.key_of(t.location(), bucket)
    assert s3.key_of(t2.location(), bucket) == root + "2", "t2 must share t's prefix"
    add_live(srv, bucket, t, f"{root}/data/x y.parquet", [7])
    t = cat.catalog().load_table("ns.t")
    add_live(srv, bucket, t, f"{root}/data/b.parquet", [8])
    t = cat.catalog().load_table("ns.t")
    old = [f"{root}/data/x+y.parquet", f"{root}/data/x%2Fy.parquet",
           f"{root}/data//double.parquet", f"{root}/data/\u00fc-\u00f1-\u6f22.parquet",
           f"{root}/data/orphan old.parquet", f"{root}/metadata/stray.avro",
           f"{root}/stray-at-root.txt"]
    dotted = [f"{root}/data/a/../b.parquet", f"{root}/data/./c.parquet"]
    sibling = [f"{root}2/data/orphan.parquet"]
    young = [f"{root}/data/young.parquet"]

    def put_all(ks):
        for k in ks:
            s3.put(srv, bucket, k, b"orphan")
    cutoff = cutoff_between(lambda: put_all(old + dotted + sibling), lambda: put_all(young))
    before = s3.keys(srv, bucket)
    live = {s3.key_of(p, bucket) for p in s3.reachable(t)}
    assert f"{root}/data/x y.parquet" in live and f"{root}/data/b.parquet" in live

    dry = sweep(cat, "ns.t", "--older-than", str(cutoff), "--dry-run")
    assert {s3.key_of(o["path"], bucket) for o in dry["orphans"]} == set(old)
    assert s3.keys(srv, bucket) == before

    doc = sweep(cat, "ns.t", "--older-than", str(cutoff))
    assert deleted_keys(doc, bucket) == set(old)
    assert s3.keys(srv, bucket) == before - set(old)
    after = cat.catalog().load_table("ns.t")
    assert sorted(sum(s3.read_every_snapshot(after).values(), [])) != []
    assert s3.read_every_snapshot(after)[after.metadata.current_snapshot_id] == [0, 1, 7, 8]


def test_sweep_location_only_below_it(tmp_path):
    srv = s3.server()
    bucket = s3.new_bucket(srv)
    cat = s3.Catalog(srv, bucket, tmp_path)
    t = s3.make_table(cat, n_appends=1, overwrite_at=())
    root = s3.key_of(t.location(), bucket)
    in_data = [f"{root}/data/o1.parquet", f"{root}/data/p=1/o2.parquet"]
    elsewhere = [f"{root}/metadata/o3.avro", f"{root}/data2/o4.parquet"]
    cutoff = cutoff_between(lambda: [s3.put(srv, bucket, k) for k in in_data + elsewhere],
                            lambda: None)
    before = s3.keys(srv, bucket)
    doc = sweep(cat, "ns.t", "--older-than", str(cutoff), "--location",
                f"s3://{bucket}/{root}/data")
    assert deleted_keys(doc, bucket) == set(in_data)
    assert s3.keys(srv, bucket) == before - set(in_data)


def test_sweep_bucket_root_table(tmp_path):
    srv = s3.server()
    bucket = s3.new_bucket(srv)
    other = s3.new_bucket(srv)          # never listed, never touched
    cat = s3.Catalog(srv, other, tmp_path)
    for form in (f"s3://{bucket}", f"s3://{bucket}/"):
        ident = "ns.root" if form.endswith(bucket) else "ns.root2"
        b = bucket if ident == "ns.root" else s3.new_bucket(srv)
        t = s3.make_table(cat, ident=ident, n_appends=2, overwrite_at=(1,),
                          location=f"s3://{b}")
        orphans = ["orphan.parquet", "data/o.parquet", "x/y/z.avro"]
        outside = ["orphan.parquet", "data/o.parquet"]
        cutoff = cutoff_between(
            lambda: ([s3.put(srv, b, k) for k in orphans],
                     [s3.put(srv, other, k) for k in outside]), lambda: None)
        before, before_other = s3.keys(srv, b), s3.keys(srv, other)
        args = ("--location", form) if form.endswith("/") else ()
        doc = sweep(cat, ident, "--older-than", str(cutoff), *args)
        assert deleted_keys(doc, b) == set(orphans)
        assert s3.keys(srv, b) == before - set(orphans)
        assert s3.keys(srv, other) == before_other
        live = {s3.key_of(p, b) for p in s3.reachable(cat.catalog().load_table(ident))}
        assert live <= s3.keys(srv, b)

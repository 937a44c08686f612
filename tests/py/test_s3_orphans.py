"""remove-orphan-files on S3: exact keys in, exact keys out.

Tables are written by PyIceberg through a SQL catalog with an S3 warehouse (s3_helpers); orphans
are put next to them with boto3. Each test asserts the exact key set of every place involved:
 - the whole location: old orphans go, young ones (after the cutoff) stay, live files stay;
 - keys are exact: a live `data/x y.parquet` survives while the orphan `data/x+y.parquet` goes;
   `%2F`, `//` and non-ASCII keys are deleted as those keys; a key with a `.` or `..` segment
   (`data/a/../b.parquet`) is never a candidate (a hidden name, as in Java, and never normalised
   into the live `data/b.parquet`, which survives);
 - a sibling table `.../t2` (t's location plus "2": a segment boundary matters) is untouched;
 - --location sweeps only below it;
 - tables at a bucket root (s3://bucket, and --location s3://bucket/) never list or delete
   outside their bucket.
"""
import io
import json
import os
import time

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import fault_proxy, moto, s3_prefix  # noqa: F401 (fixtures)


def parquet_bytes(ids):
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(h._rows(ids), buf)
    return buf.getvalue()


def new_table(wh, ident, appends=2, location=None):
    cat = wh.catalog()
    cat.create_namespace_if_not_exists(ident.rsplit(".", 1)[0])
    t = cat.create_table(ident, h._schema(), location=location) if location else \
        cat.create_table(ident, h._schema())
    for i in range(appends):
        t.append(h._rows([i]))
    return cat.load_table(ident)


def add_live(wh, server, ident, key, ids):
    """A Parquet file at `key`, registered in the table by PyIceberg's add_files."""
    e.put(server, key, parquet_bytes(ids))
    wh.catalog().load_table(ident).add_files([f"s3://{server.bucket}/{key}"])


def cutoff_between(before, after):
    """Run `before`, wait, take the cutoff, wait, run `after` (S3 mtimes have 1 s resolution)."""
    before()
    time.sleep(1.5)
    cutoff = int(time.time() * 1000)
    time.sleep(1.5)
    after()
    return cutoff


def sweep(wh, tmp_path, *args):
    res = e.cat_cli(wh, "--json", "remove-orphan-files", *args, "--force", "--settle", "0s",
                    cwd=tmp_path)
    return json.loads(res.stdout)


def orphan_keys(doc, bucket, state=None):
    return {e.key_of(o["path"], bucket) for o in doc["orphans"]
            if state is None or o.get("state") == state}


def test_sweep_exact_keys_sibling_and_cutoff(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t")
    t2 = new_table(wh, "ns.t2", appends=1)
    root = e.key_of(t.location(), moto.bucket)
    assert e.key_of(t2.location(), moto.bucket) == root + "2", "t2 must extend t's prefix"
    add_live(wh, moto, "ns.t", f"{root}/data/x y.parquet", [7])
    add_live(wh, moto, "ns.t", f"{root}/data/b.parquet", [8])
    old = [f"{root}/data/x+y.parquet", f"{root}/data/x%2Fy.parquet",
           f"{root}/data//double.parquet", f"{root}/data/\u00fc-\u00f1-\u6f22.parquet",
           f"{root}/data/orphan old.parquet", f"{root}/metadata/stray.avro",
           f"{root}/stray-at-root.txt"]
    dotted = [f"{root}/data/a/../b.parquet", f"{root}/data/./c.parquet"]
    sibling = [f"{root}2/data/orphan.parquet"]
    young = [f"{root}/data/young.parquet"]
    cutoff = cutoff_between(lambda: [e.put(moto, k) for k in old + dotted + sibling],
                            lambda: [e.put(moto, k) for k in young])
    before = e.keys(moto, s3_prefix)
    t = wh.catalog().load_table("ns.t")
    live = {e.key_of(p, moto.bucket) for p in e.reachable(t)}
    assert {f"{root}/data/x y.parquet", f"{root}/data/b.parquet"} <= live

    dry = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--dry-run")
    assert orphan_keys(dry, moto.bucket) == set(old)
    assert e.keys(moto, s3_prefix) == before

    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff))
    assert orphan_keys(doc, moto.bucket) == set(old)
    assert orphan_keys(doc, moto.bucket, "deleted") == set(old)
    assert e.keys(moto, s3_prefix) == before - set(old)
    rows = h.judge_pyiceberg(wh, "ns.t")
    current = wh.catalog().load_table("ns.t").metadata.current_snapshot_id
    assert rows[current] == [0, 1, 7, 8]
    # DuckDB and Java Iceberg (S3FileIO) read every retained snapshot as PyIceberg does
    judged = h.fingerprints(wh, "ns.t")
    assert judged["duckdb"] == judged["pyiceberg"]
    assert judged["java"] == judged["pyiceberg"]


def test_sweep_location_only_below_it(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=1)
    root = e.key_of(t.location(), moto.bucket)
    in_data = [f"{root}/data/o1.parquet", f"{root}/data/p=1/o2.parquet"]
    elsewhere = [f"{root}/metadata/o3.avro", f"{root}/data2/o4.parquet"]
    cutoff = cutoff_between(lambda: [e.put(moto, k) for k in in_data + elsewhere],
                            lambda: None)
    before = e.keys(moto, s3_prefix)
    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--location",
                f"s3://{moto.bucket}/{root}/data")
    assert orphan_keys(doc, moto.bucket, "deleted") == set(in_data)
    assert e.keys(moto, s3_prefix) == before - set(in_data)


@pytest.mark.parametrize("form", ["s3://{b}", "s3://{b}/"])
def test_sweep_bucket_root_table(tmp_path, moto, s3_prefix, form):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    b = e.new_bucket(moto)
    try:
        loc = form.format(b=b)
        new_table(wh, "ns.root", appends=2, location=loc)
        orphans = ["orphan.parquet", "data/o.parquet", "x/y/z.avro"]
        outside = [f"{s3_prefix}orphan.parquet", f"{s3_prefix}data/o.parquet"]
        cutoff = cutoff_between(
            lambda: ([e.put(moto, k, bucket=b) for k in orphans],
                     [e.put(moto, k) for k in outside]), lambda: None)
        before, before_other = e.keys(moto, bucket=b), e.keys(moto, s3_prefix)
        args = ("--location", loc) if loc.endswith("/") else ()
        doc = sweep(wh, tmp_path, "ns.root", "--older-than", str(cutoff), *args)
        assert orphan_keys(doc, b, "deleted") == set(orphans)
        assert e.keys(moto, bucket=b) == before - set(orphans)
        assert e.keys(moto, s3_prefix) == before_other
        live = {e.key_of(p, b) for p in e.reachable(wh.catalog().load_table("ns.root"))}
        assert live and live <= e.keys(moto, bucket=b)
    finally:
        e.remove_bucket(moto, b)


def test_lease_refused_where_create_new_is_ignored(tmp_path, moto, s3_prefix,  # noqa: F811
                                                   fault_proxy):  # noqa: F811
    """The table lease lets one run of two win only through create-new. On a store that
    ignores If-None-Match (played by the proxy answering the probe's second PUT with 200
    itself) a deleting sweep is refused before anything is deleted (exit 5, naming the cause
    and --no-lock), leaving no lease and no probe; with --no-lock it runs."""
    endpoint, ctl = fault_proxy
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix, endpoint=endpoint)
    t = new_table(wh, "ns.t", appends=1)
    root = e.key_of(t.location(), moto.bucket)
    orphan = f"{root}/data/orphan.parquet"
    cutoff = cutoff_between(lambda: e.put(moto, orphan), lambda: None)
    before = e.keys(moto, s3_prefix)
    ctl.set_rules([{"action": "error", "status": 200, "code": "OK", "method": "PUT",
                    "path": "create-new-probe", "after": 1, "times": 1}])
    res = e.cat_cli(wh, "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
                    "--settle", "0s", cwd=tmp_path, check=False)
    ctl.set_rules([])
    assert res.returncode == 5, res.stderr
    assert "ignores create-new" in res.stderr and "--no-lock" in res.stderr, res.stderr
    assert e.keys(moto, s3_prefix) == before

    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--no-lock")
    assert orphan_keys(doc, moto.bucket, "deleted") == {orphan}
    assert e.keys(moto, s3_prefix) == before - {orphan}


def test_delete_resent_without_its_check_never_removes_a_new_object(  # noqa: F811
        tmp_path, moto, s3_prefix, fault_proxy):  # noqa: F811
    """Data-loss class "delete resent without its check": the sweep
    re-stats an orphan right before its DeleteObjects; when the store answers SlowDown, the
    delete is retried only after the batch's reload and that re-stat ran again, never resent by
    the storage layer after a wait. A writer who puts a new object at the orphan's name during
    the wait keeps it (the re-stat sees it changed); an orphan nobody touches is deleted by
    the retry."""
    import threading
    endpoint, ctl = fault_proxy
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix, endpoint=endpoint)
    t = new_table(wh, "ns.t", appends=1)
    root = e.key_of(t.location(), moto.bucket)
    rewritten = f"{root}/data/part-00000.parquet"
    untouched = f"{root}/data/part-00001.parquet"
    cutoff = cutoff_between(lambda: [e.put(moto, k, b"old orphan") for k in
                                     (rewritten, untouched)], lambda: None)
    before = e.keys(moto, s3_prefix)
    ctl.clear()
    ctl.set_rules([{"action": "slowdown", "method": "^POST$", "query": "delete", "times": 2}])
    written = threading.Event()

    def writer():
        c = h.client(moto, attempts=4)  # straight to the store
        for _ in range(1500):
            if any(r.get("method") == "POST" and "delete" in r.get("target", "")
                   for r in ctl.log()):
                c.put_object(Bucket=moto.bucket, Key=rewritten, Body=b"NEW data")
                written.set()
                return
            time.sleep(0.02)

    th = threading.Thread(target=writer)
    th.start()
    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff))
    th.join()
    ctl.set_rules([])
    assert written.is_set(), "the writer never saw the DeleteObjects request"
    assert orphan_keys(doc, moto.bucket, "deleted") == {untouched}
    assert e.keys(moto, s3_prefix) == before - {untouched}
    body = h.client(moto).get_object(Bucket=moto.bucket, Key=rewritten)["Body"].read()
    assert body == b"NEW data"


def test_lease_probe_without_an_answer_proves_nothing(tmp_path, moto, s3_prefix,  # noqa: F811
                                                       fault_proxy):  # noqa: F811
    """The probe's second create must be refused by the store itself (412). When every attempt
    of it fails (503, never forwarded) the object read back afterwards says nothing about
    If-None-Match (a store ignoring it passed this way before): the deleting
    run stops before deleting anything (exit 1, naming the probe), and leaves no probe."""
    endpoint, ctl = fault_proxy
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix, endpoint=endpoint)
    t = new_table(wh, "ns.t", appends=1)
    root = e.key_of(t.location(), moto.bucket)
    orphan = f"{root}/data/orphan.parquet"
    cutoff = cutoff_between(lambda: e.put(moto, orphan), lambda: None)
    before = e.keys(moto, s3_prefix)
    ctl.set_rules([{"action": "error", "status": 503, "code": "SlowDown", "method": "PUT",
                    "path": "create-new-probe", "after": 1}])
    res = e.cat_cli(wh, "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
                    "--settle", "0s", cwd=tmp_path, check=False)
    ctl.set_rules([])
    assert res.returncode == 1, res.stderr
    assert "no proof either way" in res.stderr, res.stderr
    assert e.keys(moto, s3_prefix) == before


def test_catalog_database_unreadable_is_never_swept(tmp_path, moto, s3_prefix,  # noqa: F811
                                                    fault_proxy, monkeypatch):  # noqa: F811
    """Data-loss class "catalog files": a SQLite database in the
    table's data folder refuses the sweep; when its first bytes cannot be read (every GET of it
    answers 500 while HEAD and DeleteObjects work) the sweep must still not delete it: it
    refuses (exit 5) naming the file, and nothing is deleted."""
    import sqlite3
    endpoint, ctl = fault_proxy
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix, endpoint=endpoint)
    t = new_table(wh, "ns.t", appends=1)
    db = tmp_path / "x.db"
    con = sqlite3.connect(db)
    con.execute("create table iceberg_tables(a)")
    con.commit()
    con.close()
    key = e.key_of(t.location(), moto.bucket) + "/data/catalog-backup.db"
    orphan = e.key_of(t.location(), moto.bucket) + "/data/orphan.parquet"
    cutoff = cutoff_between(lambda: [e.put(moto, key, db.read_bytes()), e.put(moto, orphan)],
                            lambda: None)
    before = e.keys(moto, s3_prefix)
    ctl.set_rules([{"action": "internal_error", "method": "^GET$",
                    "path": "catalog-backup\\.db"}])
    res = e.cat_cli(wh, "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
                    "--settle", "0s", cwd=tmp_path, check=False)
    ctl.set_rules([])
    assert res.returncode == 5, res.stderr
    assert "catalog-backup.db" in res.stderr and "could not be read" in res.stderr, res.stderr
    assert e.keys(moto, s3_prefix) == before


def test_metadata_rewritten_in_place_keeps_what_it_names(tmp_path, moto, s3_prefix,  # noqa: F811
                                                         fault_proxy):  # noqa: F811
    """Data-loss class "metadata rewritten in place" for the sweep: a
    filesystem-layout table whose old snapshots were expired without cleanup leaves their
    files as orphans; while the sweep deletes (its first DeleteObjects held 4 s), the version
    file the pointer names is rewritten in place with the older document that still names
    them. The re-check before each later batch sees the document changed, so no manifest or
    manifest list that document names is deleted after it landed."""
    endpoint, ctl = fault_proxy
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    table, _, _, cutoff, _ = e.history(wh)
    root = e.hadoop_layout(moto, table)
    c = h.client(moto, attempts=4)
    v1 = c.get_object(Bucket=moto.bucket, Key=f"{root}/metadata/v1.metadata.json")["Body"].read()
    need = {e.key_of(p, moto.bucket) for p in e.reachable(table)}
    env = {**os.environ, **e.aws_env(moto, endpoint=endpoint)}
    done = e.icm("expire-snapshots", table.location(), "--older-than", str(cutoff),
                 "--retain-last", "1", "--cleanup", "none", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    time.sleep(1.5)
    now = int(time.time() * 1000)
    p = e.start_until_first_delete_batch(
        ctl, ["--json", "remove-orphan-files", table.location(), "--older-than", str(now),
              "--force", "--settle", "0s", "--no-lock"], env=env, cwd=tmp_path)
    c.put_object(Bucket=moto.bucket, Key=f"{root}/metadata/v2.metadata.json", Body=v1)
    ctl.release()
    out, err = p.communicate(timeout=180)
    ctl.set_rules([])
    lost = sorted(k for k in need - e.keys(moto, s3_prefix) if "/metadata/" in k)
    assert not lost, (lost, err[-500:])

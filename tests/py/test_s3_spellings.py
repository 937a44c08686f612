"""One S3 object, three spellings: `s3://b/k`, `s3a://b/k` and `s3n://b/k` (issue #18).

Hadoop's S3A/S3N connectors and Java's S3FileIO address the same bucket and key under each
scheme (Java's DeleteOrphanFiles maps s3a and s3n to s3 by default), and tables mix them: a
writer configured with `s3a://` adds files to a table whose location is `s3://`. Whichever
spelling a retained snapshot uses, the object is live: the sweep lists it under the table
location's spelling and must keep it, and expiry must keep it whatever spelling the expired
snapshot named it by. An expired file spelled `s3a://` under an `s3://` table is inside the
table and is deleted (it used to be reported as outside the table and left behind: a leak).

Every test asserts the exit code and exactly which keys exist afterwards (moto: keys are exact).
"""
import io
import json
import sqlite3
import time

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)


def parquet_bytes(ids):
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(h._rows(ids), buf)
    return buf.getvalue()


def spelled(location, scheme):
    """`location` (any S3 spelling) spelled with `scheme`."""
    return scheme + "://" + location.split("://", 1)[1]


def table_with_data_spelling(wh, data_scheme, ident="ns.t", appends=2):
    """A PyIceberg table at the warehouse's s3:// location whose data files are written (and
    named in its manifests) as `data_scheme://...`: write.data.path spelled that way."""
    cat = wh.catalog()
    cat.create_namespace_if_not_exists(ident.rsplit(".", 1)[0])
    t = cat.create_table(ident, h._schema())
    with t.transaction() as tx:
        tx.set_properties({"write.data.path": spelled(t.location(), data_scheme) + "/data"})
    t = cat.load_table(ident)
    for i in range(appends):
        t.append(h._rows([i * 10, i * 10 + 1]))
    return cat.load_table(ident)


def names_of(table):
    """Every data file name the table's snapshots reference, as spelled."""
    return {p for p in e.reachable(table) if p.endswith(".parquet")}


def wait_cutoff():
    """A cutoff after everything written so far (S3 mtimes have 1 s resolution)."""
    time.sleep(1.5)
    cutoff = int(time.time() * 1000)
    time.sleep(1.5)
    return cutoff


def sweep(wh, tmp_path, *args):
    return e.cat_cli(wh, "--json", "remove-orphan-files", "ns.t", *args, "--force",
                     "--settle", "0s", cwd=tmp_path, check=False)


@pytest.mark.parametrize("data_scheme", ["s3a", "s3n"])
@pytest.mark.parametrize("maps", [
    [],                                        # the default map alone
    ["--equal-schemes", "gs=gcs"],             # a map that does not name the S3 schemes
    ["--equal-schemes", "s3a,s3n=s3a"],        # a map that tries to pull s3a apart from s3
    ["--equal-schemes", "s3=s3x"],             # one that renames s3 only
])
def test_scheme_spelling_s3a_live_file_is_kept(tmp_path, moto, s3_prefix, data_scheme,  # noqa: F811
                                               maps):
    """Retained snapshots name their data files `s3a://b/t/data/...` (or s3n); the sweep lists
    them as `s3://b/t/data/...`. Every one is kept, under every --equal-schemes map and even
    with --prefix-mismatch delete (a listed file referenced only under another spelling of the
    same store is the same object, never a mismatch); the orphan beside them goes."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = table_with_data_spelling(wh, data_scheme)
    live = names_of(t)
    assert live and all(p.startswith(data_scheme + "://") for p in live), live
    root = e.key_of(t.location(), moto.bucket)
    orphan = f"{root}/data/orphan.parquet"
    e.put(moto, orphan)
    cutoff = wait_cutoff()
    before = e.keys(moto, s3_prefix)
    live_keys = {e.key_of(p, moto.bucket) for p in e.reachable(t)}
    assert live_keys <= before

    for mismatch in ("error", "delete"):
        dry = sweep(wh, tmp_path, "--older-than", str(cutoff), "--dry-run",
                    "--prefix-mismatch", mismatch, *maps)
        assert dry.returncode == 0, dry.stderr
        planned = {e.key_of(o["path"], moto.bucket) for o in json.loads(dry.stdout)["orphans"]}
        assert planned == {orphan}
    res = sweep(wh, tmp_path, "--older-than", str(cutoff), "--prefix-mismatch", "delete", *maps)
    assert res.returncode == 0, res.stderr
    assert e.keys(moto, s3_prefix) == before - {orphan}
    assert h.judge_pyiceberg(wh, "ns.t")[t.metadata.current_snapshot_id] == [0, 1, 10, 11]


def test_scheme_spelling_s3a_table_keeps_s3_files(tmp_path, moto, s3_prefix):  # noqa: F811
    """The other direction: the table's location is `s3a://` (the sweep lists under it) and its
    files are named `s3://`. All are kept; the orphan goes."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    wh.warehouse = spelled(wh.warehouse, "s3a")
    t = table_with_data_spelling(wh, "s3")
    assert t.location().startswith("s3a://")
    assert all(p.startswith("s3://") for p in names_of(t))
    root = e.key_of(t.location(), moto.bucket)
    orphan = f"{root}/data/orphan.parquet"
    e.put(moto, orphan)
    cutoff = wait_cutoff()
    before = e.keys(moto, s3_prefix)
    res = sweep(wh, tmp_path, "--older-than", str(cutoff))
    assert res.returncode == 0, res.stderr
    assert {e.key_of(o["path"], moto.bucket) for o in json.loads(res.stdout)["orphans"]} == \
        {orphan}
    assert e.keys(moto, s3_prefix) == before - {orphan}


def history_with_data_spelling(wh, data_scheme):
    """Appends, then an overwrite that replaces every file (a delete and an append snapshot):
    the appends' files are reachable only from them. Returns (table, cutoff between the appends
    and the overwrite, the overwrite's snapshot ids)."""
    t = table_with_data_spelling(wh, data_scheme)
    cutoff = wait_cutoff()
    t.overwrite(h._rows([100, 101]))
    t = wh.catalog().load_table("ns.t")
    retained = {s.snapshot_id for s in t.metadata.snapshots if s.timestamp_ms >= cutoff}
    assert len(retained) == 2 and t.metadata.current_snapshot_id in retained
    return t, cutoff, retained


@pytest.mark.parametrize("data_scheme", ["s3a", "s3n"])
def test_scheme_spelling_expired_s3a_file_is_deleted(tmp_path, moto, s3_prefix, data_scheme):  # noqa: F811
    """An `s3://` table whose expired snapshots name their files `s3a://` (s3n): those files are
    inside the table (one object, another spelling) and expiry deletes them through the S3
    FileIO; the retained snapshot's files stay."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t, cutoff, retained = history_with_data_spelling(wh, data_scheme)
    expected = e.reachable(t) - e.reachable(t, retained)
    assert any(p.startswith(data_scheme + "://") and p.endswith(".parquet") for p in expected)
    before = e.keys(moto, s3_prefix)
    res = e.cat_cli(wh, "--json", "expire-snapshots", "ns.t", "--older-than", str(cutoff),
                    "--retain-last", "1", cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    done = json.loads(res.stdout)
    assert e.planned_paths(done) == expected
    assert not done.get("outside_files") and "outside" not in res.stderr, res.stderr
    new_md = e.key_of(done["metadata_location"], moto.bucket)
    assert e.keys(moto, s3_prefix) == \
        (before - {e.key_of(p, moto.bucket) for p in expected}) | {new_md}
    rows = h.judge_pyiceberg(wh, "ns.t")
    assert set(rows) == retained and rows[t.metadata.current_snapshot_id] == [100, 101]


def test_scheme_spelling_retained_s3a_name_keeps_expired_s3_name(tmp_path, moto, s3_prefix):  # noqa: F811
    """One object, two names: an expired snapshot named it `s3://b/t/data/x.parquet`, the
    retained one names it `s3a://b/t/data/x.parquet` (add_files of the same object). Expiry
    must keep it (and every retained file); the sweep afterwards keeps it too."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    cat = wh.catalog()
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", h._schema())
    root = e.key_of(t.location(), moto.bucket)
    key = f"{root}/data/x.parquet"
    e.put(moto, key, parquet_bytes([1, 2]))
    t.add_files([f"s3://{moto.bucket}/{key}"])
    t = cat.load_table("ns.t")
    t.delete("id >= 0")  # the s3:// name falls out of the table
    t = cat.load_table("ns.t")
    assert t.scan().to_arrow().num_rows == 0
    cutoff = wait_cutoff()
    t.add_files([f"s3a://{moto.bucket}/{key}"])
    t = cat.load_table("ns.t")
    current = t.metadata.current_snapshot_id
    assert f"s3a://{moto.bucket}/{key}" in e.reachable(t, {current})
    before = e.keys(moto, s3_prefix)

    res = e.cat_cli(wh, "--json", "expire-snapshots", "ns.t", "--older-than", str(cutoff),
                    "--retain-last", "1", cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    done = json.loads(res.stdout)
    planned = {e.key_of(p, moto.bucket) for p in e.planned_paths(done)}
    assert key not in planned
    after = e.keys(moto, s3_prefix)
    assert key in after
    assert {e.key_of(p, moto.bucket) for p in e.reachable(t, {current})} <= after
    assert h.judge_pyiceberg(wh, "ns.t")[current] == [1, 2]

    res = e.cat_cli(wh, "--json", "remove-orphan-files", "ns.t", "--older-than",
                    str(int(time.time() * 1000) + 1), "--force", "--settle", "0s",
                    cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    assert key in e.keys(moto, s3_prefix)


def point_catalog_at(wh, ident, metadata_location):
    """Make the SQL catalog's pointer for `ident` read `metadata_location` (as a writer that
    spells the store differently would have recorded it)."""
    ns, name = ident.rsplit(".", 1)
    with sqlite3.connect(wh.sqlite_path) as db:
        n = db.execute("UPDATE iceberg_tables SET metadata_location = ? WHERE "
                       "table_namespace = ? AND table_name = ?",
                       (metadata_location, ns, name)).rowcount
    assert n == 1


@pytest.mark.parametrize("pointer_scheme", ["s3a", "s3n"])
def test_scheme_spelling_pointer_spelled_otherwise(tmp_path, moto, s3_prefix, pointer_scheme):  # noqa: F811
    """The catalog points at `s3a://b/t/metadata/...` while the table's location is `s3://b/t`:
    the metadata file is the table's own (not a copy's), so expiry and the sweep run, delete
    exactly the expired files and the orphan, and keep everything retained."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t, cutoff, retained = history_with_data_spelling(wh, "s3")
    point_catalog_at(wh, "ns.t", spelled(t.metadata_location, pointer_scheme))
    expected = e.reachable(t) - e.reachable(t, retained)
    before = e.keys(moto, s3_prefix)
    res = e.cat_cli(wh, "--json", "expire-snapshots", "ns.t", "--older-than", str(cutoff),
                    "--retain-last", "1", cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    done = json.loads(res.stdout)
    assert e.planned_paths(done) == expected
    new_md = e.key_of(done["metadata_location"], moto.bucket)
    after = before - {e.key_of(p, moto.bucket) for p in expected} | {new_md}
    assert e.keys(moto, s3_prefix) == after

    root = e.key_of(t.location(), moto.bucket)
    orphan = f"{root}/data/orphan.parquet"
    e.put(moto, orphan)
    cutoff = wait_cutoff()
    res = sweep(wh, tmp_path, "--older-than", str(cutoff))
    assert res.returncode == 0, res.stderr
    # the sweep keeps the metadata files the log names (either spelling), removes the orphan
    gone = {e.key_of(o["path"], moto.bucket) for o in json.loads(res.stdout)["orphans"]}
    assert gone == {orphan}
    assert e.keys(moto, s3_prefix) == after
    rows = h.judge_pyiceberg(wh, "ns.t")
    assert set(rows) == retained and rows[t.metadata.current_snapshot_id] == [100, 101]

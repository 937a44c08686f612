"""Regression tests, one per data-loss class (adversary round 20): the other tables of a REST
catalog, as the orphan sweep's guard and expiry's hold see them (src/catalog/catalog_tables.c).

Two tables whose names joined with '.' are the same text were one table to the walk, and a
table the catalog lists but would not load for icemaint was a table without files; either way
the other table's live files, written below this table's location (write.data.path), were
deleted. The rules:

  test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself
      -> 5, nothing deleted: table `b.t` of namespace N is not N.b.t (namespace N.b, table t)
  test_other_table_that_cannot_be_loaded_refuses_the_sweep      (403, and a 404 while the
      catalog still lists it) -> 5, one line naming the table and the error, nothing deleted
  test_other_table_that_cannot_be_loaded_holds_expiry_files     -> 0, every file expiry
      planned is held (a warning naming the table), the other table's live file among them
  test_other_table_dropped_between_listing_and_loading_is_passed_over -> 0: a 404 that a
      fresh listing confirms is proof the table is gone; only the orphan is deleted

Tables are written by PyIceberg through the Apache Iceberg REST fixture (local files), each at
a location below the test's own folder; icemaint goes through the fault proxy, which answers
the other table's LoadTable as a catalog with per-table access control would. Every test
asserts the exit code and exactly which files exist afterwards, and that PyIceberg still scans
the other table.
"""
import json
import os
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")
pa = pytest.importorskip("pyarrow")

import rest_helpers as r  # noqa: E402
from rest_helpers import rest_local  # noqa: E402,F401 (fixture)
from safety_helpers import age_all, files_under, local  # noqa: E402

RC_REFUSED_BY_SAFETY_CHECK = 5
SCHEMA = pa.schema([("id", pa.int64())])


@pytest.fixture
def wh(rest_local, tmp_path):  # noqa: F811 (fixture)
    """A fresh namespace in the local REST fixture; every table and namespace below it is
    dropped afterwards (a table left behind with its files gone would be a table icemaint
    cannot load in every later test)."""
    w = r.RestWarehouse(rest_local, tmp_path)
    w.catalog().create_namespace(w.namespace)
    (tmp_path / "w").mkdir()
    yield w
    drop_below(w.catalog(), (w.namespace,))


def drop_below(cat, ns):
    for child in cat.list_namespaces(ns):
        drop_below(cat, child)
    for ident in cat.list_tables(ns):
        cat.drop_table(ident)
    cat.drop_namespace(ns)


def create(wh, ident, where, rows, **properties):
    """A table at W/`where` (W = the test's warehouse folder) with one append of `rows`."""
    w = wh.tmp / "w"
    props = {k: f"file://{w}/{v}" for k, v in properties.items()}
    t = wh.catalog().create_table(ident, schema=SCHEMA, location=f"file://{w}/{where}",
                                  properties=props)
    t.append(pa.table({"id": rows}, schema=SCHEMA))
    return wh.catalog().load_table(ident)


def scan(wh, ident):
    return sorted(wh.catalog().load_table(ident).scan().to_arrow().column("id").to_pylist())


def x_and_y(wh):
    """N.x at W/x; N.y at W/y writing its data into W/x/sub/data. Returns y's data file."""
    create(wh, (wh.namespace, "x"), "x", [1])
    y = create(wh, (wh.namespace, "y"), "y", [2], **{"write.data.path": "x/sub/data"})
    (y_file,) = [local(t.file.file_path) for t in y.scan().plan_files()]
    assert y_file.startswith(str(wh.tmp / "w" / "x" / "sub" / "data"))
    return y_file


def refuse_loading_y(wh, proxy, status):
    proxy.set_rules([{"kind": "LoadTable", "action": "iceberg_error", "status": status,
                      "path": f"/namespaces/{wh.namespace}/tables/y$"}])


def load_faults(proxy):
    return [e for e in proxy.log() if e["fault"] and e["kind"] == "LoadTable"]


# ---- H1: a table whose name has a dot --------------------------------------------------------

def test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself(wh):
    """N.b.t (namespace [N, b], table t) at W/x; table `b.t` of namespace [N] at W/y writes
    its data into W/x/sub/data. The sweep of N.b.t took `b.t` for the table itself (levels
    [N] + name "b.t" read as "N.b.t") and deleted its live data file; it refuses (exit 5,
    naming that table as N.`b.t` and its write.data.path), nothing is deleted, `b.t` still
    scans."""
    ns = wh.namespace
    wh.catalog().create_namespace((ns, "b"))
    create(wh, (ns, "b", "t"), "x", [1])
    create(wh, (ns, "b.t"), "y", [2], **{"write.data.path": "x/sub/data"})
    assert (ns, "b.t") in wh.catalog().list_tables((ns,))
    age_all(wh.tmp / "w")
    before = files_under(wh.tmp / "w")
    for args in (("--dry-run",), ()):
        p = wh.cli("remove-orphan-files", f"{ns}.b.t", *args)
        assert p.returncode == RC_REFUSED_BY_SAFETY_CHECK, p.stdout + p.stderr
        assert f"catalog table {ns}.`b.t` " in p.stderr and "write.data.path" in p.stderr and \
            f"file://{wh.tmp}/w/x/sub/data" in p.stderr, p.stderr
        assert files_under(wh.tmp / "w") == before
    assert scan(wh, (ns, "b.t")) == [2]


# ---- H4: a listed table that cannot be loaded -------------------------------------------------

@pytest.mark.parametrize("status", [403, 404])
def test_other_table_that_cannot_be_loaded_refuses_the_sweep(wh, status):
    """N.y's data lies in W/x/sub/data, below N.x's location; the catalog lists N.y but answers
    its LoadTable `status` (403: a principal that may list a table but not load it; 404: the
    same, hidden, while the catalog still lists it). The sweep of N.x took N.y for a table
    without files and deleted its live data file; it refuses (exit 5, one line naming N.y and
    the HTTP status), nothing is deleted, N.y still scans."""
    proxy = r.proxy_of(wh.server)
    y_file = x_and_y(wh)
    age_all(wh.tmp / "w")
    before = files_under(wh.tmp / "w")
    assert y_file in before
    refuse_loading_y(wh, proxy, status)
    try:
        for args in (("--dry-run",), ()):
            p = wh.cli("remove-orphan-files", wh.ident("x"), *args, via_proxy=True)
            assert p.returncode == RC_REFUSED_BY_SAFETY_CHECK, p.stdout + p.stderr
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1, p.stderr
            assert f"catalog table {wh.ident('y')} " in lines[0] and f"HTTP {status}" in lines[0] \
                and "refusing to sweep" in lines[0] \
                and "sweep with credentials that may load every table" in lines[0], lines[0]
            assert files_under(wh.tmp / "w") == before
        assert load_faults(proxy), "the premise: N.y's LoadTable was refused"
    finally:
        proxy.clear()
    assert scan(wh, (wh.namespace, "y")) == [2]


def test_other_table_that_cannot_be_loaded_holds_expiry_files(wh):
    """N.x added N.y's live data file (below N.x's location, N.y's write.data.path), then
    overwrote it away; N.y's LoadTable is answered 403. Expiring N.x deleted that file (N.y
    was a table without files); every file the expiry planned is held now (where N.y's files
    lie cannot be told): exit 0, the commit lands, nothing is deleted, N.y still scans."""
    proxy = r.proxy_of(wh.server)
    y_file = x_and_y(wh)
    x = wh.catalog().load_table(wh.ident("x"))
    x.add_files([f"file://{y_file}"])
    wh.catalog().load_table(wh.ident("x")).overwrite(pa.table({"id": [5]}, schema=SCHEMA))
    time.sleep(0.05)
    cutoff = str(int(time.time() * 1000))
    time.sleep(0.05)
    before = files_under(wh.tmp / "w")
    refuse_loading_y(wh, proxy, 403)
    try:
        p = wh.cli("--json", "expire-snapshots", wh.ident("x"), "--older-than", cutoff,
                   "--retain-last", "1", via_proxy=True)
        assert load_faults(proxy), "the premise: N.y's LoadTable was refused"
    finally:
        proxy.clear()
    assert p.returncode == 0, p.stdout + p.stderr
    result = json.loads(p.stdout)
    assert len(wh.catalog().load_table(wh.ident("x")).metadata.snapshots) == 1
    after = files_under(wh.tmp / "w")
    added = after - before
    assert before <= after, sorted(before - after)
    x_metadata = str(wh.tmp / "w" / "x" / "metadata") + "/"
    assert added and all(f.startswith(x_metadata) and
                         (f.endswith(".metadata.json") or f.endswith(".metadata.json.crc"))
                         for f in added), sorted(added)
    held = [pr for pr in result["problems"] if pr["kind"] == "other_table"]
    assert any(local(pr["path"]) == y_file for pr in held), held
    assert held and all(wh.ident("y") in pr["message"] and "HTTP 403" in pr["message"]
                        for pr in held), held
    assert scan(wh, (wh.namespace, "y")) == [2]


def test_other_table_dropped_between_listing_and_loading_is_passed_over(wh):
    """N.y (at W/y, its files outside N.x) is answered 404 on LoadTable, and the listing of
    N asked again no longer names it: proof that it was dropped after the first listing, not
    hidden. The sweep of N.x goes on (exit 0) and deletes exactly the orphan planted in it."""
    proxy = r.proxy_of(wh.server)
    create(wh, (wh.namespace, "x"), "x", [1])
    create(wh, (wh.namespace, "y"), "y", [2])
    orphan = wh.tmp / "w" / "x" / "data" / "orphan.parquet"
    orphan.write_bytes(b"orphan")
    age_all(wh.tmp / "w")
    before = files_under(wh.tmp / "w")
    without_y = json.dumps({"identifiers": [{"namespace": [wh.namespace], "name": "x"}]})
    proxy.set_rules([
        {"kind": "LoadTable", "action": "iceberg_error", "status": 404,
         "path": f"/namespaces/{wh.namespace}/tables/y$"},
        {"kind": "ListTables", "action": "iceberg_error", "status": 200, "body": without_y,
         "path": f"/namespaces/{wh.namespace}/tables$", "after": 1, "times": 1}])
    try:
        p = wh.cli("remove-orphan-files", wh.ident("x"), via_proxy=True)
        faults = [e["kind"] for e in proxy.log() if e["fault"]]
    finally:
        proxy.clear()
    assert p.returncode == 0, p.stdout + p.stderr
    assert "LoadTable" in faults and "ListTables" in faults, faults
    assert files_under(wh.tmp / "w") == before - {str(orphan)}
    assert scan(wh, (wh.namespace, "y")) == [2]

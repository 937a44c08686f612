"""`icemaint maintain NS` through a real REST catalog (the Apache Iceberg fixture;
tests/py/rest_helpers.py), on local files and on S3 with vended credentials only.

A fresh namespace holds a table, a table in a nested namespace (listed through the REST
namespace API with the parent's levels joined by %1F) and a table with gc.enabled=false. The
test asserts the exit code, each table's JSON line and exactly which files exist below each
table afterwards, computed from PyIceberg's view of the tables before the run.
"""
import json
import os
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")
pa = pytest.importorskip("pyarrow")

import rest_helpers as r  # noqa: E402
from rest_helpers import rest_wh  # noqa: E402,F401 (fixture)
from safety_helpers import TEN_DAYS_S  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64())])

# table (relative to the test's namespace) -> (properties, how many oldest snapshots expire)
TABLES = {
    "a": ({"history.expire.max-snapshot-age-ms": "1"}, 2),
    "sub.c": ({"history.expire.max-snapshot-age-ms": "1",
               "history.expire.min-snapshots-to-keep": "2"}, 1),
    "d": ({"history.expire.max-snapshot-age-ms": "1", "gc.enabled": "false"}, 0),
}


def crc_of(rel):
    head, _, name = rel.rpartition("/")
    return f"{head}/.{name}.crc" if head else f".{name}.crc"


@pytest.fixture
def nested_wh(rest_wh):
    """rest_wh with a nested namespace `sub`, whose table and the namespace itself are removed
    afterwards (rest_wh's cleanup knows only its own level)."""
    cat = rest_wh.catalog()
    cat.create_namespace((rest_wh.namespace, "sub"))
    yield rest_wh
    try:
        for ident in cat.list_tables((rest_wh.namespace, "sub")):
            location = cat.load_table(ident).metadata.location
            cat.drop_table(ident)
            r.remove_below(rest_wh, location)
        cat.drop_namespace((rest_wh.namespace, "sub"))
    except Exception:  # noqa: BLE001 - cleanup must not mask the test's own verdict
        pass


def test_maintain_namespace_through_rest(nested_wh):
    wh = nested_wh
    cat = wh.catalog()
    before = {}
    for name, (props, n) in TABLES.items():
        t = cat.create_table(wh.ident(name), schema=SCHEMA)
        for i in range(3):
            t.append(pa.table({"id": [i]}, schema=SCHEMA))
        with t.transaction() as tx:
            tx.set_properties(props)
        t = wh.table(name)
        snaps = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
        stray = None
        if wh.server.s3 is None:  # an old stray file (S3 cannot backdate one)
            stray = r.local_path(t.metadata.location.rstrip("/") + "/data/stray-old.parquet")
            with open(stray, "wb") as f:
                f.write(b"x" * 100)
            os.utime(stray, (time.time() - TEN_DAYS_S,) * 2)
        before[name] = {"md": t.metadata_location, "snaps": snaps, "files": wh.files(name),
                        "n": n}
    time.sleep(0.01)

    p = wh.cli("maintain", wh.namespace, "--parallel", "2", "--settle", "0s")
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    lines = {x["table"]: x for x in out[:-1]}
    summary = out[-1]["summary"]
    assert sorted(lines) == sorted(wh.ident(name) for name in TABLES)
    assert summary["ok"] == 2 and summary["skipped"] == 1 and summary["exit_code"] == 0

    for name, b in before.items():
        line = lines[wh.ident(name)]
        t = wh.table(name)
        assert line["metadata_location_before"] == b["md"]
        assert line["namespace"] == wh.ident(name).rsplit(".", 1)[0]
        after = wh.files(name)
        if name == "d":
            assert line["outcome"] == "skipped" and "gc.enabled='false'" in line["reason"]
            assert after == b["files"] and t.metadata_location == b["md"]
            continue
        n = b["n"]
        assert line["outcome"] == "ok", (line, p.stderr)
        assert line["expire"]["expired"] == [s.snapshot_id for s in b["snaps"][:n]]
        assert sorted(s.snapshot_id for s in t.metadata.snapshots) == \
            sorted(s.snapshot_id for s in b["snaps"][n:])
        assert line["metadata_location_after"] == t.metadata_location != b["md"]
        gone = set()
        for s in b["snaps"][:n]:
            rel = r.relative(wh, name, s.manifest_list)
            gone |= {rel} | ({crc_of(rel)} & b["files"])
        if wh.server.s3 is None:
            gone.add("data/stray-old.parquet")
            assert line["sweep"]["total"] == 1 and line["sweep"]["total_bytes"] == 100
        else:
            assert line["sweep"]["total"] == 0
        assert b["files"] - after == gone, name
        assert after - b["files"] == r.version_files(wh, name), name
        assert t.scan().to_arrow().num_rows == 3


@pytest.fixture
def local_wh(tmp_path):
    """A RestWarehouse on the local-files fixture, its fault proxy's rules cleared around it."""
    wh = r.RestWarehouse(r.need_rest("local"), tmp_path)
    ctl = r.proxy_of(wh.server)
    ctl.clear()
    wh.catalog().create_namespace(wh.namespace)
    yield wh, ctl
    ctl.clear()
    wh.cleanup()


def test_commit_outcomes_of_several_tables_give_the_worst_exit_code(local_wh):
    """Through the fault proxy: table `unknown`'s expiry commit gets a 500 (outcome unknown:
    exit 4), table `conflict`'s a 409 every time (exit 3), table `fine` none. Each failed table
    keeps every file and its metadata, its sweep does not run; `fine` is maintained; the run
    exits 4, the most urgent."""
    wh, ctl = local_wh
    cat = wh.catalog()
    before = {}
    for name in ("conflict", "fine", "unknown"):
        t = cat.create_table(wh.ident(name), schema=SCHEMA)
        for i in range(3):
            t.append(pa.table({"id": [i]}, schema=SCHEMA))
        with t.transaction() as tx:
            tx.set_properties({"history.expire.max-snapshot-age-ms": "1"})
        t = wh.table(name)
        before[name] = {"md": t.metadata_location, "files": wh.files(name),
                        "snaps": sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)}
    time.sleep(0.01)
    ctl.set_rules([
        {"kind": "CommitTable", "path": "/tables/unknown$", "action": "iceberg_error",
         "status": 500},
        {"kind": "CommitTable", "path": "/tables/conflict$", "action": "iceberg_error",
         "status": 409},
    ])
    p = wh.cli("maintain", wh.namespace, "--parallel", "3", "--settle", "0s", via_proxy=True)
    assert p.returncode == 4, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    lines = {x["table"]: x for x in out[:-1]}
    assert out[-1]["summary"]["exit_code"] == 4 and out[-1]["summary"]["failed"] == 2
    for name, code, err in (("unknown", 4, "ICM_ECOMMIT_UNKNOWN"),
                            ("conflict", 3, "ICM_ECOMMIT_FAILED")):
        line, b = lines[wh.ident(name)], before[name]
        assert line["outcome"] == "failed" and line["exit_code"] == code, line
        assert line["error"]["step"] == "expire-snapshots" and line["error"]["code"] == err
        assert line["sweep"] is None
        assert line["metadata_location_after"] == b["md"] == wh.table(name).metadata_location
        assert wh.files(name) == b["files"]
    line, b = lines[wh.ident("fine")], before["fine"]
    assert line["outcome"] == "ok"
    assert line["expire"]["expired"] == [s.snapshot_id for s in b["snaps"][:2]]
    gone = {r.relative(wh, "fine", s.manifest_list) for s in b["snaps"][:2]}
    after = wh.files("fine")
    assert b["files"] - after == gone
    assert after - b["files"] == r.version_files(wh, "fine")

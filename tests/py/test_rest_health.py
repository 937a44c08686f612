"""`icemaint health` through a real REST catalog (the Apache Iceberg fixture;
tests/py/rest_helpers.py), on local files and on S3 with vended credentials only: the figures
against PyIceberg's view of the table and the planted orphan, and expiry's
`icemaint.last-expire-ms` committed through the REST commit endpoint in the expiry's one commit.
"""
import json
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
from rest_helpers import rest_wh  # noqa: E402,F401 (fixture)


def live_bytes(table, snapshots):
    files = {}
    for s in snapshots:
        for mf in s.manifests(table.io):
            for e in mf.fetch_manifest_entry(table.io, discard_deleted=True):
                files[e.data_file.file_path] = (e.data_file.content, e.data_file.file_size_in_bytes)
    data = [v[1] for v in files.values() if int(v[0]) == 0]
    dels = [v[1] for v in files.values() if int(v[0]) != 0]
    return len(data), sum(data), len(dels), sum(dels)


def test_health_and_expiry_record_through_rest(rest_wh):
    wh = rest_wh
    r.write_history_with_refs(wh)
    r.put_file(wh, "t", "data/orphan-health.parquet", b"z" * 321)
    t = wh.table()
    p = wh.cli("--json", "health", wh.ident(), "--max-snapshots", "100")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["metadata_location"] == t.metadata_location
    assert doc["snapshots"]["count"] == len(t.metadata.snapshots)
    got = doc["referenced"]["all_snapshots"]
    assert (got["data_files"], got["data_bytes"], got["delete_files"], got["delete_bytes"]) == \
        live_bytes(t, t.metadata.snapshots)
    got = doc["referenced"]["current"]
    assert (got["data_files"], got["data_bytes"], got["delete_files"], got["delete_bytes"]) == \
        live_bytes(t, [t.current_snapshot()])
    assert doc["unreferenced"]["error"] is None
    assert (doc["unreferenced"]["files"], doc["unreferenced"]["bytes"]) == (1, 321)
    assert doc["unreferenced"]["listed_files"] == len(wh.files())
    assert doc["expiry"]["last_expire_ms"] is None

    before = len(t.metadata.metadata_log)
    t0 = int(time.time() * 1000)
    p = wh.cli("--json", "expire-snapshots", wh.ident(), "--older-than", str(t0),
               "--retain-last", "1")
    t1 = int(time.time() * 1000)
    assert p.returncode == 0, p.stderr
    t = wh.table()
    stamp = int(t.properties["icemaint.last-expire-ms"])
    assert t0 <= stamp <= t1
    # one commit: the metadata-log grew by one, and that version holds both changes
    assert len(t.metadata.metadata_log) == before + 1
    assert t.metadata.snapshots and len(t.metadata.snapshots) < doc["snapshots"]["count"]

    # what is left is what retention keeps: nothing to expire, so expiry is not overdue
    p = wh.cli("--json", "health", wh.ident(), "--now", str(stamp + 60000),
               "--max-expiry-age", "30s")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["expiry"]["last_expire_ms"] == stamp
    assert doc["expiry"]["last_expire_age_ms"] == 60000
    assert doc["breaches"] == []

"""Maintenance through a real REST catalog (the Apache Iceberg fixture; tests/py/rest_helpers.py):
expiry, the orphan sweep and `check`, on local files and on S3 with vended credentials only.

The CLI is configured by PyIceberg's variables alone (`type: rest`, the uri; on S3 the endpoint
and region but no keys). Each test asserts the exit code and exactly which files exist below the
table afterwards, computed independently of icemaint (PyIceberg's view of what each snapshot
needs); then PyIceberg, DuckDB and Java read every retained snapshot.
"""
import json
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
import s3_e2e  # noqa: E402
import s3_helpers as h  # noqa: E402
from rest_helpers import rest_wh  # noqa: E402,F401 (fixture)


def expire(wh, *args, via_proxy=False):
    return wh.cli("--json", "expire-snapshots", wh.ident(), *args, via_proxy=via_proxy)


def test_expire_dry_run_then_real_run(rest_wh):
    wh = rest_wh
    expected = r.write_history_with_refs(wh)
    before = wh.files()
    t = wh.table()
    all_ids = r.snapshot_ids(wh)
    keep = r.retained_by_refs(t)
    assert len(all_ids) == 7 and len(keep) == 3
    gone = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=keep)
    assert gone, "the expired snapshots must own files of their own"
    cutoff = str(int(time.time() * 1000))
    metadata_before = t.metadata_location

    dry = expire(wh, "--older-than", cutoff, "--retain-last", "1", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    assert {r.relative(wh, "t", p) for p in s3_e2e.planned_paths(doc)} == gone
    assert wh.files() == before, "a dry run deletes (and writes) nothing"
    assert wh.table().metadata_location == metadata_before, "a dry run commits nothing"

    real = expire(wh, "--older-than", cutoff, "--retain-last", "1")
    assert real.returncode == 0, real.stderr
    assert r.snapshot_ids(wh) == keep
    assert set(wh.table().metadata.refs) == {"main", "v1", "audit"}
    after = wh.files()
    assert before - after == gone, "exactly the expired snapshots' own files are deleted"
    assert after - before == r.version_files(wh), "the only new files: the committed version"
    r.assert_judges_read(wh, "t", expected)


def test_expire_honours_branch_and_tag_retention(rest_wh):
    wh = rest_wh
    expected = r.write_history_with_refs(wh)
    t = wh.table()
    snaps = sorted(t.metadata.snapshots, key=lambda s: s.sequence_number)
    main_head = t.metadata.current_snapshot_id
    audit = t.metadata.refs["audit"].snapshot_id
    # A branch that keeps 2 snapshots (its head and its parent, the second snapshot), and a tag
    # whose max-ref-age has passed (the ref goes, and its snapshot with it).
    with t.manage_snapshots() as ms:
        ms.remove_branch("audit")
    t = wh.table()
    with t.manage_snapshots() as ms:
        ms.create_branch(audit, "audit", min_snapshots_to_keep=2)
        ms.create_tag(snaps[2].snapshot_id, "old", max_ref_age_ms=1)
    time.sleep(0.05)
    before = wh.files()
    keep = {main_head, audit, snaps[1].snapshot_id, snaps[0].snapshot_id}  # snaps[0]: tag v1
    gone = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=keep)
    cutoff = str(int(time.time() * 1000))

    res = expire(wh, "--older-than", cutoff, "--retain-last", "1")
    assert res.returncode == 0, res.stderr
    assert r.snapshot_ids(wh) == keep
    refs = wh.table().metadata.refs
    assert set(refs) == {"main", "v1", "audit"}, "the aged tag is removed, the others stay"
    assert refs["audit"].snapshot_id == audit and refs["main"].snapshot_id == main_head
    after = wh.files()
    assert before - after == gone
    assert after - before == r.version_files(wh)
    r.assert_judges_read(wh, "t", expected)


def test_orphan_sweep_deletes_exactly_the_old_orphans(rest_wh):
    wh = rest_wh
    expected = r.write_history_with_refs(wh)
    old = {"data/orphan-old.parquet", "metadata/stray.avro", "stray-at-root.txt",
           "data/x y+z.parquet"}
    young = {"data/orphan-young.parquet"}
    for rel in old:
        r.put_file(wh, "t", rel)
    time.sleep(1.5)  # S3 modification times have a one-second resolution
    cutoff = str(int(time.time() * 1000))
    time.sleep(1.5)
    for rel in young:
        r.put_file(wh, "t", rel)
    before = wh.files()
    assert r.needed_files(wh) <= before

    def sweep(*args):
        res = wh.cli("--json", "remove-orphan-files", wh.ident(), "--older-than", cutoff,
                     "--force", "--settle", "0s", *args)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    dry = sweep("--dry-run")
    assert {r.relative(wh, "t", o["path"]) for o in dry["orphans"]} == old
    assert wh.files() == before

    doc = sweep()
    assert {r.relative(wh, "t", o["path"]) for o in doc["orphans"]
            if o["state"] == "deleted"} == old
    assert wh.files() == before - old
    r.assert_judges_read(wh, "t", expected)


def test_check_finds_nothing_then_names_the_missing_file(rest_wh):
    wh = rest_wh
    r.write_history_with_refs(wh)
    res = wh.cli("--json", "check", wh.ident(), "--all")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["ok"] is True and doc["problem_count"] == 0
    assert len(doc["snapshots"]) == 7

    # The tagged first snapshot's data file (the delete rewrote it since, so the current
    # snapshot does not need it): every snapshot that needs it reports it, no other.
    t = wh.table()
    first = t.metadata.refs["v1"].snapshot_id
    victim = sorted(p for p in r.needed_files(wh, snapshot_ids={first}) if p.endswith(".parquet"))
    assert len(victim) == 1
    victim = victim[0]
    needing = {sid for sid in r.snapshot_ids(wh)
               if victim in r.needed_files(wh, snapshot_ids={sid})}
    assert first in needing and t.metadata.current_snapshot_id not in needing
    r.remove_file(wh, "t", victim)
    before = wh.files()

    res = wh.cli("--json", "check", wh.ident(), "--all")
    assert res.returncode == 6, res.stderr
    doc = json.loads(res.stdout)
    problems = sorted((s["snapshot_id"], r.relative(wh, "t", p["path"]), p["problem"])
                      for s in doc["snapshots"] for p in s["problems"])
    assert problems == sorted((sid, victim, "missing") for sid in needing)
    assert wh.files() == before, "check changes nothing"


def test_orphan_sweep_beside_other_catalog_tables(rest_wh):
    """The sweep looks at the catalog's other tables (one could live inside this one's location);
    each is a REST table read with its own vended credentials (on S3, the only ones icemaint
    has)."""
    wh = rest_wh
    expected = r.write_history_with_refs(wh)
    other = r.RestWarehouse(wh.server, wh.tmp)
    other.catalog().create_namespace(other.namespace)
    try:
        table = other.catalog().create_table(other.ident(), h._schema())
        table.append(h._rows([1]))
        r.put_file(wh, "t", "data/orphan-old.parquet")
        time.sleep(1.5)
        cutoff = str(int(time.time() * 1000))
        before, other_before = wh.files(), other.files()
        res = wh.cli("--json", "remove-orphan-files", wh.ident(), "--older-than", cutoff,
                     "--force", "--settle", "0s")
        assert res.returncode == 0, res.stderr
        assert wh.files() == before - {"data/orphan-old.parquet"}
        assert other.files() == other_before
        r.assert_judges_read(wh, "t", expected)
    finally:
        other.cleanup()

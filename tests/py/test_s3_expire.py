"""expire-snapshots on S3 tables written by PyIceberg (pyarrow and fsspec FileIO).

The table lives in a SQL catalog whose warehouse is on S3. Three runs must agree with what
PyIceberg says independently (the files of the expired snapshots that no retained snapshot
needs): a dry run from the bare metadata location with only the AWS environment, a dry run
through the catalog with only the catalog's s3.* properties, and the real run through the
catalog. Afterwards exactly the expected keys remain (plus the one new metadata file), and
PyIceberg reads every retained snapshot with the rows it had before.
"""
import pytest

import s3_e2e as s3


def planned_paths(doc):
    out = set()
    for field in ("deleted_files", "deleted_manifests", "deleted_statistics_files"):
        for item in doc.get(field, []):
            out.add(item["path"] if isinstance(item, dict) else item)
    return out


@pytest.mark.parametrize("io_impl", ["pyarrow", "fsspec"])
def test_expire_exact_objects(tmp_path, io_impl):
    srv = s3.server()
    bucket = s3.new_bucket(srv)
    cat = s3.Catalog(srv, bucket, tmp_path, io_impl)
    before = s3.make_table(cat, n_appends=5, overwrite_at=(2, 4))
    snaps = sorted(before.metadata.snapshots, key=lambda s: s.timestamp_ms)
    cutoff = snaps[3].timestamp_ms          # snapshots 0, 1, 2 are older
    expired = {s.snapshot_id for s in snaps if s.timestamp_ms < cutoff}
    retained = {s.snapshot_id for s in snaps} - expired
    assert len(expired) == 3 and before.metadata.current_snapshot_id in retained
    rows_before = s3.read_every_snapshot(before)
    expected = s3.reachable(before) - s3.reachable(before, retained)
    assert expected, "the history must leave files to delete"
    keys_before = s3.keys(srv, bucket)
    args = ("--older-than", str(cutoff), "--retain-last", "1")

    # a dry run from the metadata location, with the AWS environment alone
    md_loc = before.metadata_location
    dry_md = s3.icm_json(srv, "expire-snapshots", md_loc, *args, "--dry-run",
                         cwd=str(tmp_path))
    assert sorted(dry_md["expired"]) == sorted(expired)
    assert planned_paths(dry_md) == expected
    # a dry run through the catalog, with the catalog's s3.* properties alone
    dry = cat.cli("--json", "expire-snapshots", "ns.t", *args, "--dry-run")
    import json
    dry = json.loads(dry.stdout)
    assert planned_paths(dry) == expected
    assert s3.keys(srv, bucket) == keys_before, "a dry run deleted or wrote something"

    done = json.loads(cat.cli("--json", "expire-snapshots", "ns.t", *args).stdout)
    assert planned_paths(done) == expected
    assert sorted(done["expired"]) == sorted(expired)
    new_md = s3.key_of(done["metadata_location"], bucket)
    want = (keys_before - {s3.key_of(p, bucket) for p in expected}) | {new_md}
    assert s3.keys(srv, bucket) == want

    after = cat.catalog().load_table("ns.t")
    assert {s.snapshot_id for s in after.metadata.snapshots} == retained
    assert s3.read_every_snapshot(after) == {i: rows_before[i] for i in retained}


def test_expire_from_table_location_reads_current_metadata(tmp_path):
    """A dry run named by the s3:// table location (no .json) finds the current metadata
    (highest version) through the FileIO and plans as from the catalog."""
    srv = s3.server()
    bucket = s3.new_bucket(srv)
    cat = s3.Catalog(srv, bucket, tmp_path)
    t = s3.make_table(cat, n_appends=3, overwrite_at=(1,))
    snaps = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
    cutoff = snaps[-1].timestamp_ms
    retained = {snaps[-1].snapshot_id}
    expected = s3.reachable(t) - s3.reachable(t, retained)
    keys_before = s3.keys(srv, bucket)
    doc = s3.icm_json(srv, "expire-snapshots", t.location(), "--older-than", str(cutoff),
                      "--dry-run", cwd=str(tmp_path))
    assert planned_paths(doc) == expected
    assert s3.keys(srv, bucket) == keys_before

"""expire-snapshots on S3 tables written by PyIceberg (pyarrow and fsspec FileIO).

The table lives in a SQL catalog whose warehouse is on S3 (s3_helpers.S3Warehouse). Three runs
must agree with what PyIceberg says independently (the files the expired snapshots need that no
retained snapshot needs): a dry run from the bare metadata location with only the AWS
environment, a dry run through the catalog with only the catalog's s3.* properties
(PYICEBERG_CATALOG__* variables), and the real run through the catalog. Afterwards exactly the
expected keys remain (plus the one new metadata file), and the judges read every retained
snapshot with the rows it had before.
"""
import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)


def history(wh, n_keep=2):
    """(table, expired ids, retained ids, cutoff ms): the oldest snapshots go, n_keep stay."""
    expected_rows = h.write_history(wh)
    table = wh.catalog().load_table("ns.t")
    snaps = sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)
    cutoff = snaps[-n_keep].timestamp_ms
    expired = {s.snapshot_id for s in snaps if s.timestamp_ms < cutoff}
    retained = {s.snapshot_id for s in snaps} - expired
    assert expired and table.metadata.current_snapshot_id in retained
    return table, expired, retained, cutoff, expected_rows


@pytest.mark.parametrize("io", ["pyarrow", "fsspec"])
def test_expire_exact_objects(tmp_path, moto, s3_prefix, io):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix, io=io)
    table, expired, retained, cutoff, rows = history(wh)
    expected = e.reachable(table) - e.reachable(table, retained)
    assert expected, "the history must leave files to delete"
    before = e.keys(moto, s3_prefix)
    args = ("--older-than", str(cutoff), "--retain-last", "1")

    dry_md = e.icm_json("expire-snapshots", table.metadata_location, *args, "--dry-run",
                        env=e.aws_env(moto), cwd=tmp_path)
    assert sorted(dry_md["expired"]) == sorted(expired)
    assert e.planned_paths(dry_md) == expected
    import json
    dry = json.loads(e.cat_cli(wh, "--json", "expire-snapshots", "ns.t", *args, "--dry-run",
                               cwd=tmp_path).stdout)
    assert e.planned_paths(dry) == expected
    assert e.keys(moto, s3_prefix) == before, "a dry run deleted or wrote something"

    done = json.loads(e.cat_cli(wh, "--json", "expire-snapshots", "ns.t", *args,
                                cwd=tmp_path).stdout)
    assert sorted(done["expired"]) == sorted(expired)
    assert e.planned_paths(done) == expected
    new_md = e.key_of(done["metadata_location"], moto.bucket)
    assert e.keys(moto, s3_prefix) == \
        (before - {e.key_of(p, moto.bucket) for p in expected}) | {new_md}
    after = wh.catalog().load_table("ns.t")
    assert {s.snapshot_id for s in after.metadata.snapshots} == retained
    want = {i: rows[i] for i in retained}
    judged = h.judge_all(wh, "ns.t")
    assert judged == {"pyiceberg": want, "duckdb": want}


def test_expire_from_table_location(tmp_path, moto, s3_prefix):  # noqa: F811
    """A dry run named by the s3:// table location (no .json) finds the current metadata
    through the FileIO and plans what PyIceberg expects."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    table, expired, retained, cutoff, _ = history(wh)
    expected = e.reachable(table) - e.reachable(table, retained)
    before = e.keys(moto, s3_prefix)
    doc = e.icm_json("expire-snapshots", table.location(), "--older-than", str(cutoff),
                     "--dry-run", env=e.aws_env(moto), cwd=tmp_path)
    assert e.planned_paths(doc) == expected
    assert e.keys(moto, s3_prefix) == before


def test_wrong_secret_is_an_auth_error_and_deletes_nothing(tmp_path, s3_prefix):  # noqa: F811
    """Against the signature-verifying server a wrong secret is refused (exit 1, the error
    names the location and the 403) and nothing changes."""
    srv = h.need_server("verifying")
    wh = h.S3Warehouse(tmp_path, srv, s3_prefix)
    table, _, _, cutoff, _ = history(wh)
    before = e.keys(srv, s3_prefix)
    bad = e.aws_env(srv, secret=srv.secret_key[::-1] + "x")
    for args in (("expire-snapshots", table.metadata_location, "--older-than", str(cutoff),
                  "--dry-run"),
                 ("remove-orphan-files", "ns.t", "--older-than", "0", "--force",
                  "--settle", "0s")):
        env = dict(bad)
        if args[1] == "ns.t":
            env.update({k: v for k, v in e.catalog_env(wh).items()
                        if "SECRET" not in k})
            env[f"PYICEBERG_CATALOG__{wh.name.upper()}__S3__SECRET_ACCESS_KEY"] = \
                bad["AWS_SECRET_ACCESS_KEY"]
        res = e.icm(*args, env=env, cwd=tmp_path)
        assert res.returncode == 1, res.stderr
        assert "403" in res.stderr or "SignatureDoesNotMatch" in res.stderr, res.stderr
    assert e.keys(srv, s3_prefix) == before


def test_expire_dry_run_from_aws_profile_alone(tmp_path, moto, s3_prefix):  # noqa: F811
    """No catalog and no AWS_* key variables: AWS_PROFILE names a profile of the shared files
    (credentials, region and endpoint_url), as the SDKs read it."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    table, expired, retained, cutoff, _ = history(wh)
    expected = e.reachable(table) - e.reachable(table, retained)
    creds = tmp_path / "credentials"
    creds.write_text(f"[maint]\naws_access_key_id = {moto.access_key}\n"
                     f"aws_secret_access_key = {moto.secret_key}\n")
    config = tmp_path / "config"
    config.write_text(f"[profile maint]\nregion = {moto.region}\n"
                      f"endpoint_url = {moto.endpoint}\n")
    env = {"AWS_PROFILE": "maint", "AWS_SHARED_CREDENTIALS_FILE": str(creds),
           "AWS_CONFIG_FILE": str(config)}
    before = e.keys(moto, s3_prefix)
    doc = e.icm_json("expire-snapshots", table.metadata_location, "--older-than", str(cutoff),
                     "--dry-run", env=env, cwd=tmp_path)
    assert sorted(doc["expired"]) == sorted(expired)
    assert e.planned_paths(doc) == expected
    assert e.keys(moto, s3_prefix) == before

"""Helpers of the end-to-end S3 tests (test_s3_*.py) on top of s3_helpers.py (servers, fixtures,
PyIceberg warehouses on S3, judges): running the icemaint CLI against S3 with exactly the
configuration a test means to give it, exact key sets, and the files PyIceberg says each snapshot
needs (the expected outcome, computed independently of icemaint).
"""
import json
import os
import subprocess
import time
import uuid

import pytest

import s3_helpers as h

CLI = os.environ.get("ICM_CLI") or (
    os.path.join(os.environ["ICM_BUILD_DIR"], "icemaint") if os.environ.get("ICM_BUILD_DIR") else None)


def need_cli():
    if not CLI or not os.path.exists(CLI):
        h.missing(f"icemaint CLI not found (ICM_CLI={CLI})")
    return CLI


def aws_env(server, endpoint=None, secret=None):
    """The AWS environment alone (what the SDKs read; no catalog)."""
    return {"AWS_ACCESS_KEY_ID": server.access_key,
            "AWS_SECRET_ACCESS_KEY": secret if secret is not None else server.secret_key,
            "AWS_REGION": server.region,
            "AWS_ENDPOINT_URL_S3": endpoint or server.endpoint}


def catalog_env(wh):
    """The warehouse's catalog by PyIceberg's variables alone: uri, warehouse, default catalog
    and the s3.* properties; no AWS_* variable, so the properties are what must reach S3."""
    env = {k: v for k, v in wh.env().items() if not k.startswith("AWS_")}
    up = wh.name.upper()
    env.update({f"PYICEBERG_CATALOG__{up}__URI": wh.uri,
                f"PYICEBERG_CATALOG__{up}__WAREHOUSE": wh.warehouse,
                "PYICEBERG_DEFAULT_CATALOG": wh.name})
    return env


def icm(*args, env, cwd):
    """Run the CLI with `env` as the only AWS/PyIceberg configuration: inherited AWS_* and
    PYICEBERG_* variables are dropped, and HOME, PYICEBERG_HOME and the AWS files point at
    nothing (`cwd`, /dev/null), so no other configuration is found."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYICEBERG_"))}
    full.update({"HOME": str(cwd), "PYICEBERG_HOME": str(cwd), "AWS_CONFIG_FILE": "/dev/null",
                 "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true"})
    full.update(env)
    return subprocess.run([need_cli(), *args], capture_output=True, text=True, env=full,
                          cwd=str(cwd), timeout=900)


def ok(res, what=""):
    assert res.returncode == 0, f"icemaint {what} -> {res.returncode}: {res.stderr}"
    return res


def icm_json(*args, env, cwd):
    res = ok(icm("--json", *args, env=env, cwd=cwd), " ".join(args))
    return json.loads(res.stdout)


def cat_cli(wh, *args, cwd, check=True):
    """The CLI on the warehouse's catalog, configured by PyIceberg's variables only."""
    res = icm(*args, env=catalog_env(wh), cwd=cwd)
    if check:
        ok(res, " ".join(args))
    return res


def keys(server, prefix="", bucket=None):
    """Every key below `prefix` (of `bucket`, default the server's), exactly, as a set."""
    if bucket is None:
        return set(h.list_keys(server, prefix))
    c = h.client(server, attempts=4)
    out = set()
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out.update(o["Key"] for o in page.get("Contents", []))
    return out


def key_of(location, bucket):
    """The key of an s3:// (s3a, s3n) location in `bucket`."""
    for scheme in ("s3://", "s3a://", "s3n://"):
        if location.startswith(scheme):
            b, _, key = location[len(scheme):].partition("/")
            assert b == bucket, f"{location} is not in bucket {bucket}"
            return key
    raise AssertionError(f"not an S3 location: {location}")


def new_bucket(server):
    """A fresh bucket (for tables at a bucket root); remove_bucket() empties and drops it."""
    name = "icm-" + uuid.uuid4().hex[:16]
    h.client(server, attempts=4).create_bucket(Bucket=name)
    return name


def remove_bucket(server, bucket):
    c = h.client(server, attempts=4)
    for k in keys(server, bucket=bucket):
        c.delete_object(Bucket=bucket, Key=k)
    c.delete_bucket(Bucket=bucket)


def put(server, key, body=b"orphan", bucket=None):
    h.client(server, attempts=4).put_object(Bucket=bucket or server.bucket, Key=key, Body=body)


def snapshot_files(table, snapshot):
    """The files one snapshot needs: its manifest list, its manifests, and the data and delete
    files its manifests hold as live (ADDED/EXISTING) entries."""
    io = table.io
    out = {snapshot.manifest_list}
    for mf in snapshot.manifests(io):
        out.add(mf.manifest_path)
        for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
            out.add(entry.data_file.file_path)
    return out


def reachable(table, snapshot_ids=None):
    """The union of snapshot_files over the table's snapshots (or those with the given ids)."""
    out = set()
    for snap in table.metadata.snapshots:
        if snapshot_ids is None or snap.snapshot_id in snapshot_ids:
            out |= snapshot_files(table, snap)
    return out


def planned_paths(doc):
    """Every path an expire-snapshots report plans or deleted."""
    out = set()
    for field in ("deleted_files", "deleted_manifests", "deleted_statistics_files"):
        for item in doc.get(field, []):
            out.add(item["path"] if isinstance(item, dict) else item)
    return out


# ---- tables a test expires or sweeps ------------------------------------------------------------

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


def hadoop_layout(server, table):
    """Give the PyIceberg table a filesystem-layout pointer too: its current metadata as
    metadata/v1.metadata.json and a version hint, so that the bare table location opens it."""
    c = h.client(server, attempts=4)
    body = c.get_object(Bucket=server.bucket,
                        Key=key_of(table.metadata_location, server.bucket))["Body"].read()
    root = key_of(table.location(), server.bucket)
    c.put_object(Bucket=server.bucket, Key=f"{root}/metadata/v1.metadata.json", Body=body)
    c.put_object(Bucket=server.bucket, Key=f"{root}/metadata/version-hint.text", Body=b"1")
    return root


def start_until_first_delete_batch(ctl, args, env, cwd):
    """Start the CLI with `args` (a Popen with text stdout and stderr) and return once its first
    DeleteObjects reached the S3 fault proxy `ctl`, which holds that request until the test
    calls ctl.release() (at most 30 s): the window in which a test changes the table under a
    run that is deleting."""
    ctl.set_rules([{"kind": "DeleteObjects", "action": "hold", "delay_ms": 30000, "times": 1}])
    p = subprocess.Popen([CLI, *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for _ in range(800):
        if any(x.get("kind") == "DeleteObjects" for x in ctl.log()):
            return p
        time.sleep(0.025)
    p.kill()
    pytest.fail("no DeleteObjects seen: " + p.communicate()[1])

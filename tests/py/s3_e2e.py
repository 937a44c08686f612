"""Helpers of the end-to-end S3 tests (test_s3_*.py): the servers, buckets, exact key sets,
PyIceberg tables written on S3, and the icemaint CLI run against them.

Servers come from the environment (.ci/run starts them on loopback):
  ICM_TEST_S3_ENDPOINT, ICM_TEST_S3_ACCESS_KEY_ID, ICM_TEST_S3_SECRET_ACCESS_KEY,
  ICM_TEST_S3_REGION (default us-east-1)           moto in server mode
  ICM_TEST_S3V_ENDPOINT, ICM_TEST_S3V_ACCESS_KEY_ID, ICM_TEST_S3V_SECRET_ACCESS_KEY,
  ICM_TEST_S3V_REGION                              a server that verifies SigV4 signatures
  ICM_TEST_S3_PROXY_ENDPOINT, ICM_TEST_S3_PROXY_CONTROL
                                                   the fault proxy in front of moto, and its
                                                   control URL
A server that is missing fails the test under CI (env CI set), else skips it with the reason.

Every test works in a bucket of its own and asserts the exact set of keys afterwards; the
expected set is computed from PyIceberg's view of the table, never from icemaint's report.
"""
import json
import os
import subprocess
import uuid
from dataclasses import dataclass

import pytest

CLI = os.environ.get("ICM_CLI") or (
    os.path.join(os.environ["ICM_BUILD_DIR"], "icemaint") if os.environ.get("ICM_BUILD_DIR") else None)


def missing(what):
    """A prerequisite is missing: fail under CI, skip (with the reason) otherwise."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI is set: the S3 end-to-end tests must run)")
    pytest.skip(what)


def need_cli():
    if not CLI or not os.path.exists(CLI):
        missing(f"icemaint CLI not found (ICM_CLI={CLI})")
    return CLI


@dataclass
class Server:
    """One S3 endpoint and the credentials it accepts."""
    endpoint: str
    access_key: str
    secret_key: str
    region: str

    def client(self, secret=None):
        import boto3
        from botocore.config import Config
        return boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
            aws_secret_access_key=secret or self.secret_key, region_name=self.region,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 10,
                                                                     "mode": "standard"}))

    def pyiceberg_props(self):
        """FileIO properties with PyIceberg's names."""
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": self.access_key,
                "s3.secret-access-key": self.secret_key, "s3.region": self.region}

    def aws_env(self, secret=None):
        """The AWS environment alone (no catalog): what the SDKs read."""
        return {"AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": secret or self.secret_key,
                "AWS_REGION": self.region, "AWS_ENDPOINT_URL_S3": self.endpoint}


def server(prefix="ICM_TEST_S3"):
    """The server configured under `prefix` (ICM_TEST_S3, ICM_TEST_S3V); missing → fail/skip."""
    endpoint = os.environ.get(f"{prefix}_ENDPOINT")
    if not endpoint:
        missing(f"{prefix}_ENDPOINT is not set: no S3 test server (.ci/run starts them)")
    return Server(endpoint, os.environ.get(f"{prefix}_ACCESS_KEY_ID", "testing"),
                  os.environ.get(f"{prefix}_SECRET_ACCESS_KEY", "testing"),
                  os.environ.get(f"{prefix}_REGION", "us-east-1"))


def proxy():
    """(the proxy as a Server with moto's credentials, its control URL); missing → fail/skip."""
    endpoint = os.environ.get("ICM_TEST_S3_PROXY_ENDPOINT")
    control = os.environ.get("ICM_TEST_S3_PROXY_CONTROL")
    if not endpoint or not control:
        missing("ICM_TEST_S3_PROXY_ENDPOINT / ICM_TEST_S3_PROXY_CONTROL are not set: no fault "
                "proxy")
    base = server()
    return Server(endpoint, base.access_key, base.secret_key, base.region), control


def new_bucket(srv):
    name = "icm-" + uuid.uuid4().hex[:16]
    srv.client().create_bucket(Bucket=name)
    return name


def keys(srv, bucket, prefix=""):
    """Every key of the bucket below `prefix`, exactly as stored."""
    out = set()
    pages = srv.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        out.update(o["Key"] for o in page.get("Contents", []))
    return out


def put(srv, bucket, key, body=b"x"):
    srv.client().put_object(Bucket=bucket, Key=key, Body=body)


def key_of(location, bucket):
    """The key of an s3:// (or s3a/s3n) location in `bucket`."""
    for scheme in ("s3://", "s3a://", "s3n://"):
        if location.startswith(scheme):
            rest = location[len(scheme):]
            b, _, key = rest.partition("/")
            assert b == bucket, f"{location} is not in bucket {bucket}"
            return key
    raise AssertionError(f"not an S3 location: {location}")


def icm(srv, *args, env=None, cwd=None, secret=None, aws=True):
    """Run the CLI with the AWS environment of `srv` (aws=False: none; no other configuration
    is found: HOME and PYICEBERG_HOME point at `cwd`). Returns the CompletedProcess."""
    home = cwd or os.environ.get("TMPDIR", "/tmp")
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("AWS_", "PYICEBERG_"))}
    if aws:
        full.update(srv.aws_env(secret))
    full.update({"HOME": home, "PYICEBERG_HOME": home, "AWS_CONFIG_FILE": "/dev/null",
                 "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true"})
    full.update(env or {})
    return subprocess.run([need_cli(), *args], capture_output=True, text=True, env=full,
                          cwd=cwd, timeout=600)


def icm_json(srv, *args, **kw):
    res = icm(srv, "--json", *args, **kw)
    assert res.returncode == 0, f"icemaint {' '.join(args)} -> {res.returncode}: {res.stderr}"
    return json.loads(res.stdout)


class Catalog:
    """A PyIceberg SQL catalog on SQLite whose warehouse is s3://<bucket>/wh, and the same
    catalog for the CLI (PYICEBERG_CATALOG__<NAME>__* variables: uri, warehouse and the s3.*
    FileIO properties, which must reach icemaint's S3 back end)."""

    def __init__(self, srv, bucket, tmp_path, io_impl="pyarrow"):
        self.srv = srv
        self.bucket = bucket
        self.name = "c" + uuid.uuid4().hex[:8]
        self.uri = f"sqlite:///{tmp_path}/catalog.db"
        self.warehouse = f"s3://{bucket}/wh"
        self.tmp_path = tmp_path
        self.io_impl = {"pyarrow": "pyiceberg.io.pyarrow.PyArrowFileIO",
                        "fsspec": "pyiceberg.io.fsspec.FsspecFileIO"}[io_impl]

    def props(self):
        return {"uri": self.uri, "warehouse": self.warehouse, "py-io-impl": self.io_impl,
                **self.srv.pyiceberg_props()}

    def catalog(self):
        from pyiceberg.catalog.sql import SqlCatalog
        return SqlCatalog(self.name, **self.props())

    def env(self):
        """The catalog for the CLI, by PyIceberg's environment variables only; the AWS
        variables are removed so that the s3.* properties are what reaches S3."""
        up = self.name.upper()
        env = {f"PYICEBERG_CATALOG__{up}__URI": self.uri,
               f"PYICEBERG_CATALOG__{up}__WAREHOUSE": self.warehouse,
               f"PYICEBERG_CATALOG__{up}__S3__ENDPOINT": self.srv.endpoint,
               f"PYICEBERG_CATALOG__{up}__S3__ACCESS_KEY_ID": self.srv.access_key,
               f"PYICEBERG_CATALOG__{up}__S3__SECRET_ACCESS_KEY": self.srv.secret_key,
               f"PYICEBERG_CATALOG__{up}__S3__REGION": self.srv.region,
               "PYICEBERG_DEFAULT_CATALOG": self.name}
        return env

    def cli(self, *args, check=True):
        res = icm(self.srv, *args, env=self.env(), cwd=str(self.tmp_path), aws=False)
        if check and res.returncode != 0:
            raise AssertionError(f"icemaint {' '.join(args)} -> {res.returncode}: {res.stderr}")
        return res


def schema():
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    return Schema(NestedField(1, "id", LongType(), required=False),
                  NestedField(2, "data", StringType(), required=False))


def rows(ids):
    import pyarrow as pa
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "data": pa.array([f"r{i}" for i in ids], pa.string())})


def make_table(cat, ident="ns.t", n_appends=4, overwrite_at=(2,), location=None):
    """A table with a history: appends (one small file each) and overwrites that drop earlier
    files, so expiry has manifests lists, manifests and data files to delete."""
    c = cat.catalog()
    ns = ident.rsplit(".", 1)[0]
    try:
        c.create_namespace(ns)
    except Exception:  # already there
        pass
    t = c.create_table(ident, schema=schema(), location=location) if location else \
        c.create_table(ident, schema=schema())
    for i in range(n_appends):
        if i in overwrite_at:
            t.overwrite(rows([100 + i]))
        else:
            t.append(rows([i]))
    return c.load_table(ident)


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


def read_every_snapshot(table):
    """The judge: PyIceberg reads every retained snapshot in full; returns {id: sorted ids}."""
    out = {}
    for snap in table.metadata.snapshots:
        data = table.scan(snapshot_id=snap.snapshot_id).to_arrow()
        out[snap.snapshot_id] = sorted(data.column("id").to_pylist())
    return out

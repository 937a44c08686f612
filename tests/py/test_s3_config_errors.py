"""Configuration mistakes a new user makes with S3, and what icemaint says about them (issue #18).

 - A mistyped `s3.*` key in the catalog entry (`s3.endpont`) is ignored by every S3 client, so
   its setting silently does not apply: icemaint warns once, naming the key and the name meant.
   Every name Java's S3FileIO or PyIceberg reads is known and never warned about.
 - An S3 endpoint whose host does not resolve, or that refuses every connection, is a wrong
   configuration, not a table with missing files: every command fails fast (a couple of
   attempts), exit 1, with one line naming the endpoint and the failure; `check` never reports
   a file missing or unreadable for it (exit 6), and expiry and the sweep delete nothing.
"""
import json
import shutil
import socket
import time

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)


def small_table(wh, appends=2):
    cat = wh.catalog()
    cat.create_namespace_if_not_exists("ns")
    t = cat.create_table("ns.t", h._schema())
    for i in range(appends):
        t.append(h._rows([i]))
    return cat.load_table("ns.t")


def with_props(wh, **props):
    """The catalog environment (PyIceberg variables only) plus extra s3.* properties, given as
    PyIceberg spells them in variables (`s3__endpont` is `s3.endpont`)."""
    env = e.catalog_env(wh)
    cat = f"PYICEBERG_CATALOG__{wh.name.upper()}__"
    for k, v in props.items():
        env[cat + k.upper()] = v
    return env


def warnings_of(stderr):
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


# ---- mistyped s3.* keys ------------------------------------------------------------------------

def test_unknown_s3_property_warns_once_with_the_name_meant(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    small_table(wh)
    env = with_props(wh, S3__ENDPONT="http://127.0.0.1:1", S3__ACESS_KEY_ID="AKIAX",
                     S3__BUCKET_NAME="x")
    res = e.icm("inspect", "ns.t", env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(warnings_of(res.stderr)) == sorted([
        f"warning: catalog '{wh.name}': unknown property s3.endpont (did you mean s3.endpoint?)",
        f"warning: catalog '{wh.name}': unknown property s3.acess-key-id "
        f"(did you mean s3.access-key-id?)",
        f"warning: catalog '{wh.name}': unknown property s3.bucket-name (no S3 client reads it)",
    ])
    # a command that reads files too (manifest lists through the same FileIO): still once each
    res = e.icm("check", "ns.t", "--all", env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len(warnings_of(res.stderr)) == 3
    # -q keeps stderr to errors
    res = e.icm("-q", "inspect", "ns.t", env=env, cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == ""


def test_known_s3_properties_never_warn(tmp_path, moto, s3_prefix):  # noqa: F811
    """Names Java's S3FileIO and PyIceberg read (a catalog entry shared with them holds them)."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    small_table(wh)
    env = with_props(wh, S3__SSE__TYPE="none", S3__MULTIPART__PART_SIZE_BYTES="33554432",
                     S3__WRITE__TAGS__TEAM="data", S3__DELETE__BATCH_SIZE="500",
                     S3__PROXY_URI="", S3__RESOLVE_REGION="false", S3__CHECKSUM_ENABLED="true",
                     S3__STAGING_DIR="/tmp", S3__RETRY__NUM_RETRIES="3")
    res = e.icm("check", "ns.t", env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert warnings_of(res.stderr) == []


# ---- an endpoint that cannot be reached --------------------------------------------------------

def closed_port():
    """A loopback port nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


BAD_ENDPOINTS = {
    "unresolvable": ("http://icm-no-such-host.invalid:9000", "icm-no-such-host.invalid",
                     "resolve", 15.0),
    # refused on every attempt: retried as a transient failure would be (10 attempts with
    # backoff), then a configuration error, and no other file waits as long again
    "refused": (None, "127.0.0.1", "connect", 90.0),
}


def bad_endpoint(kind):
    url, host, why, limit = BAD_ENDPOINTS[kind]
    if url is None:
        url = f"http://127.0.0.1:{closed_port()}"
        host = url.split("://", 1)[1]
    return url, host, why, limit


def one_error_line(res, host, why):
    lines = res.stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith("warning: ")]
    assert len(errors) == 1, res.stderr
    assert host in errors[0] and why in errors[0].lower(), errors[0]
    assert "missing" not in res.stdout.lower() and "problem" not in res.stdout.lower()
    return errors[0]


def local_metadata_copy(tmp_path, server, table):
    """The table's current metadata file, copied to local disk: it names the table's files on
    S3, so reading it needs no S3 but checking its files does."""
    body = h.client(server, attempts=4).get_object(
        Bucket=server.bucket, Key=e.key_of(table.metadata_location, server.bucket))["Body"].read()
    path = tmp_path / "copy.metadata.json"
    path.write_bytes(body)
    return path


@pytest.mark.parametrize("kind", list(BAD_ENDPOINTS))
def test_check_with_unreachable_endpoint_is_a_configuration_error(tmp_path, moto, s3_prefix,  # noqa: F811
                                                                  kind):
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = small_table(wh, appends=3)
    md = local_metadata_copy(tmp_path, moto, t)
    url, host, why, limit = bad_endpoint(kind)
    env = e.aws_env(moto, endpoint=url)
    start = time.monotonic()
    res = e.icm("check", str(md), "--all", env=env, cwd=tmp_path)
    took = time.monotonic() - start
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    one_error_line(res, host, why)
    assert took < limit, f"took {took:.1f} s"
    res = e.icm("--json", "check", str(md), "--all", env=env, cwd=tmp_path)
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert doc["error"]["exit_code"] == 1 and "problems" not in doc


@pytest.mark.parametrize("kind", list(BAD_ENDPOINTS))
def test_maintenance_with_unreachable_endpoint_deletes_nothing(tmp_path, moto, s3_prefix, kind):  # noqa: F811
    """Through the catalog (the metadata on S3 too) and from the local metadata copy with a
    path map to the real store for the metadata only: expiry and the sweep fail with one line
    naming the endpoint, exit 1, and every object is still there."""
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = small_table(wh, appends=3)
    before = e.keys(moto, s3_prefix)
    url, host, why, _ = bad_endpoint(kind)
    env = with_props(wh, S3__ENDPOINT=url)
    now = str(int(time.time() * 1000) + 1000)
    for args in (["expire-snapshots", "ns.t", "--older-than", now, "--retain-last", "1"],
                 ["remove-orphan-files", "ns.t", "--older-than", now, "--force", "--settle",
                  "0s"],
                 ["check", "ns.t"]):
        res = e.icm(*args, env=env, cwd=tmp_path)
        assert res.returncode == 1, (args, res.returncode, res.stderr)
        one_error_line(res, host, why)
    assert e.keys(moto, s3_prefix) == before
    assert t.metadata_location == wh.catalog().load_table("ns.t").metadata_location

"""The REST catalog test environment itself (scripts/start-rest.sh): the Apache Iceberg REST fixture
answers as the spec says, listens on loopback only, vends s3.* credentials on S3, PyIceberg's REST
client writes tables through it that every judge reads, and the fault proxy in front of it does
what each REST mode promises. The end-to-end tests (test_rest_*.py) rely on each property.
"""
import time
import urllib.parse

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
from rest_helpers import rest_local, rest_wh  # noqa: E402,F401 (fixtures)


@pytest.mark.parametrize("which", ["local", "s3"])
def test_config_lists_the_routes_and_no_prefix(which):
    server = r.need_rest(which)
    status, doc = r.http_json("GET", server.uri + "/v1/config")
    assert status == 200
    assert "prefix" not in doc.get("overrides", {}) and "prefix" not in doc.get("defaults", {})
    for route in ("GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                  "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                  "POST /v1/{prefix}/namespaces/{namespace}/register",
                  "POST /v1/{prefix}/transactions/commit"):
        assert route in doc["endpoints"], route


@pytest.mark.parametrize("which", ["local", "s3"])
def test_fixture_and_proxy_listen_on_loopback_only(which):
    server = r.need_rest(which)
    for url in (server.uri, server.proxy_uri, server.proxy_control):
        port = urllib.parse.urlsplit(url).port
        addresses = r.listening_addresses(port)
        assert addresses, f"nothing listens on {port} ({url})"
        assert all(r.is_loopback(a) for a in addresses), (url, addresses)


def test_is_loopback_tells_wildcards_apart():
    assert r.is_loopback("127.0.0.1") and r.is_loopback("::ffff:127.0.0.1")
    assert r.is_loopback("::1")
    assert not r.is_loopback("0.0.0.0") and not r.is_loopback("::")


def test_s3_fixture_vends_credentials_local_one_does_not(tmp_path):
    for which, vends in (("s3", True), ("local", False)):
        wh = r.RestWarehouse(r.need_rest(which), tmp_path)
        cat = wh.catalog()
        cat.create_namespace(wh.namespace)
        try:
            from pyiceberg.schema import Schema
            from pyiceberg.types import LongType, NestedField
            cat.create_table(wh.ident(), Schema(NestedField(1, "id", LongType())))
            status, doc = r.http_json(
                "GET", r.table_url(wh.server.uri, wh.namespace, "t"),
                headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
            assert status == 200
            creds = {k: v for k, v in doc.get("config", {}).items()
                     if k.startswith("s3.")}
            if vends:
                assert creds == wh.server.vended
                assert doc["metadata-location"].startswith(wh.server.warehouse + "/")
            else:
                assert creds == {}
                assert r.local_path(doc["metadata-location"]).startswith(
                    r.local_path(wh.server.warehouse) + "/")
        finally:
            wh.cleanup()


def test_pyiceberg_writes_through_the_proxy_and_every_judge_reads_every_snapshot(rest_wh):
    ctl = r.proxy_of(rest_wh.server)
    # Written through the proxy: the same path icemaint's fault tests take.
    proxied = r.RestWarehouse(rest_wh.server, rest_wh.tmp)
    proxied.namespace = rest_wh.namespace
    proxied._catalogs = {rest_wh.server.uri: proxied.catalog(via_proxy=True)}
    expected = r.write_history_with_refs(proxied)
    assert ctl.counters()["by_kind"].get("CommitTable", 0) >= 6
    refs = rest_wh.table().metadata.refs
    assert set(refs) == {"main", "v1", "audit"}
    assert len(expected) == 7
    r.assert_judges_read(rest_wh, "t", expected)
    # Every file the snapshots need is below the table location, and exists.
    assert r.needed_files(rest_wh) <= rest_wh.files()


def _commit_body(table):
    """A no-op-safe commit: set a property, asserting the table's uuid."""
    return {"requirements": [{"type": "assert-table-uuid",
                              "uuid": str(table.metadata.table_uuid)}],
            "updates": [{"action": "set-properties", "updates": {"probe": str(time.time_ns())}}]}


@pytest.fixture
def probe_table(rest_local, tmp_path):
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField
    cat.create_table(wh.ident(), Schema(NestedField(1, "id", LongType())))
    yield wh
    wh.cleanup()


def _commit_through_proxy(wh, rule):
    """Commit one property change through the proxy under `rule`; (status, body, applied)."""
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{"kind": "CommitTable", **rule}])
    before = wh.table()
    try:
        status, body = r.http_json("POST", r.table_url(wh.server.proxy_uri, wh.namespace, "t"),
                                   _commit_body(before), timeout=5)
    except OSError as e:  # the connection was dropped or timed out
        status, body = None, repr(e)
    after = wh.table()
    applied = after.metadata_location != before.metadata_location
    ctl.clear()
    return status, body, applied


@pytest.mark.parametrize("status", [409, 500, 502, 503, 504])
def test_proxy_answers_iceberg_errors_without_forwarding(probe_table, status):
    got, body, applied = _commit_through_proxy(probe_table, {"action": "iceberg_error",
                                                             "status": status})
    assert got == status
    assert body["error"]["code"] == status and body["error"]["type"]
    assert not applied


def test_proxy_applied_then_500(probe_table):
    got, body, applied = _commit_through_proxy(
        probe_table, {"action": "iceberg_error", "status": 500, "forward": True})
    assert (got, body["error"]["type"], applied) == (500, "CommitStateUnknownException", True)


@pytest.mark.parametrize("action", ["reset_after", "close_after"])
def test_proxy_applied_then_dropped(probe_table, action):
    got, body, applied = _commit_through_proxy(probe_table, {"action": action})
    assert got is None, body
    assert applied


def test_proxy_slow_response_is_applied_before_the_client_gives_up(probe_table):
    got, body, applied = _commit_through_proxy(probe_table, {"action": "delay_response",
                                                             "delay_ms": 8000})
    assert got is None and "timed out" in body
    assert applied


def test_proxy_gateway_page_and_retry_after(probe_table):
    got, body, applied = _commit_through_proxy(
        probe_table, {"action": "iceberg_error", "status": 502, "body": "<html>bad gateway</html>",
                      "headers": {"Retry-After": "1"}})
    assert (got, body, applied) == (502, "<html>bad gateway</html>", False)


def test_proxy_401_once_then_passes(probe_table):
    wh = probe_table
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{"action": "iceberg_error", "status": 401, "kind": "LoadTable", "times": 1}])
    url = r.table_url(wh.server.proxy_uri, wh.namespace, "t")
    first, body = r.http_json("GET", url)
    second, doc = r.http_json("GET", url)
    assert (first, body["error"]["type"]) == (401, "NotAuthorizedException")
    assert second == 200 and doc["metadata-location"]
    log = ctl.log()
    assert [(e["kind"], e["status"], e["fault"]) for e in log] == [
        ("LoadTable", 401, "iceberg_error"), ("LoadTable", 200, None)]


def test_proxy_matches_request_bodies(probe_table):
    wh = probe_table
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{"action": "iceberg_error", "status": 409, "kind": "CommitTable",
                    "request_body": '"remove-snapshots"'}])
    url = r.table_url(wh.server.proxy_uri, wh.namespace, "t")
    status, _ = r.http_json("POST", url, _commit_body(wh.table()))
    assert status == 200  # a set-properties commit does not match
    body = _commit_body(wh.table())
    body["updates"] = [{"action": "remove-snapshots", "snapshot-ids": []}]
    status, _ = r.http_json("POST", url, body)
    assert status == 409
    assert ctl.counters()["faults"] == {"iceberg_error": 1}


def test_proxy_names_rest_operations(probe_table):
    wh = probe_table
    ctl = r.proxy_of(wh.server)
    base = wh.server.proxy_uri
    r.http_json("GET", base + "/v1/config")
    r.http_json("GET", base + "/v1/namespaces")
    r.http_json("GET", f"{base}/v1/namespaces/{wh.namespace}/tables")
    r.http_json("GET", r.table_url(base, wh.namespace, "t"))
    r.http_json("POST", r.table_url(base, wh.namespace, "t"), _commit_body(wh.table()))
    r.http_json("POST", base + "/v1/transactions/commit", {"table-changes": []})
    assert [e["kind"] for e in ctl.log()] == ["Config", "ListNamespaces", "ListTables",
                                             "LoadTable", "CommitTable", "CommitTransaction"]

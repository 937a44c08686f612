"""The REST catalog as PyIceberg users configure it (tests/py/rest_helpers.py): a .pyiceberg.yaml
entry with `type: rest` and OAuth2 client credentials, nested namespaces (the fixture advertises
`.` as its namespace separator), and listing.
"""
import json
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
import s3_e2e  # noqa: E402
from rest_helpers import rest_local, rest_wh  # noqa: E402,F401 (fixtures)


def test_pyiceberg_yaml_entry_with_client_credentials(rest_local, tmp_path):
    wh = r.RestWarehouse(rest_local, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    try:
        expected = r.write_history_with_refs(wh)
        (tmp_path / ".pyiceberg.yaml").write_text(
            "catalog:\n"
            "  lake:\n"
            "    type: rest\n"
            f"    uri: {rest_local.proxy_uri}\n"
            "    credential: icm-client:icm-secret\n"
            "    scope: catalog\n"
            "    header.X-Icm-Test: yes\n")
        ctl = r.proxy_of(rest_local)
        before = wh.files()
        res = s3_e2e.icm("--catalog", "lake", "--json", "check", wh.ident(), "--all", env={},
                           cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["ok"] is True and len(doc["snapshots"]) == len(expected)
        kinds = [e["kind"] for e in ctl.log()]
        assert kinds[:2] == ["Token", "Config"] or kinds[:2] == ["Config", "Token"], kinds
        assert "LoadTable" in kinds and "CommitTable" not in kinds
        assert wh.files() == before
    finally:
        wh.cleanup()


def test_nested_namespace_listing_and_expiry(rest_wh):
    wh = rest_wh
    inner = f"{wh.namespace}.inner"
    wh.catalog().create_namespace(inner)
    nested = r.RestWarehouse(wh.server, wh.tmp)
    nested.namespace = inner
    try:
        expected = r.write_history_with_refs(nested)

        res = wh.cli("--json", "list-namespaces", wh.namespace)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["namespaces"] == [inner]
        res = wh.cli("--json", "list-tables", inner)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout) == {"namespace": inner, "tables": ["t"]}

        before = nested.files()
        keep = r.retained_by_refs(nested.table())
        gone = r.needed_files(nested) - r.needed_files(nested, snapshot_ids=keep)
        res = wh.cli("expire-snapshots", nested.ident(), "--older-than",
                     str(int(time.time() * 1000)), "--retain-last", "1")
        assert res.returncode == 0, res.stderr
        assert r.snapshot_ids(nested) == keep
        after = nested.files()
        assert before - after == gone
        assert after - before == r.version_files(nested)
        r.assert_judges_read(nested, "t", expected)
    finally:
        nested.cleanup()


def test_unknown_table_and_namespace_are_named(rest_wh):
    wh = rest_wh
    res = wh.cli("check", f"{wh.namespace}.missing")
    assert res.returncode == 1
    assert f"{wh.namespace}.missing" in res.stderr and "\n" not in res.stderr.strip()
    res = wh.cli("list-tables", "icm_no_such_namespace")
    assert res.returncode == 1
    assert "icm_no_such_namespace" in res.stderr

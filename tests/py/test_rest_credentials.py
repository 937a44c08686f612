"""Vended credentials that expire in the middle of a run, over the REST fixture on S3 (moto).

The fault proxy in front of the REST fixture (tests/tools/faultproxy.py, "vend") gives every
load-table answer a session token of its own that expires TTL_MS later
(`s3.session-token-expires-at-ms`), points the table's `s3.endpoint` at the S3 fault proxy, and
(unless told not to) advertises and answers the spec's credentials endpoint with a new token.
The S3 fault proxy ("expire_session_tokens") answers 400 ExpiredToken to any request signed
with one of those tokens after its expiry, as S3 does: moto itself checks no credentials, so
without this the test could not tell a renewal from none. The S3 proxy adds latency so that
the run outlives the first token (asserted: a run shorter than the token's life proves
nothing).

Each test asserts the exit code, exactly which files exist below the table afterwards
(computed from PyIceberg's view of what each snapshot needs), and from the proxies' counters
how the credentials were renewed: through the credentials endpoint when the catalog
advertises it, by loading the table again when it does not; and when the catalog refuses to
renew, that the run stops with one line naming the table and the refusal, with nothing
committed or deleted.
"""
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
import s3_helpers as h  # noqa: E402
from rest_helpers import vend_wh  # noqa: E402,F401 (fixture)

TTL_MS = 1500
S3_LATENCY_MS = 150


def arm(wh, rest, s3, *, ttl_ms=TTL_MS, latency_ms=S3_LATENCY_MS, advertise=True, rules=()):
    rest._call("POST", "/rules", {"rules": list(rules), "vend": {
        "ttl_ms": ttl_ms, "s3_endpoint": wh.server.s3.proxy_endpoint, "advertise": advertise}})
    s3._call("POST", "/rules", {"rules": [], "latency_ms": latency_ms,
                                "expire_session_tokens": True})
    rest._call("DELETE", "/counters")
    s3._call("DELETE", "/counters")


def expire(wh, *args):
    """The CLI through the REST proxy; the S3 endpoint comes from the vended configuration."""
    env = wh.env(via_proxy=True, **{"s3.endpoint": wh.server.s3.proxy_endpoint})
    started = time.monotonic()
    res = r.s3_e2e.icm("expire-snapshots", wh.ident(), *args, env=env, cwd=wh.tmp)
    return res, (time.monotonic() - started) * 1000


def expiry_case(wh):
    """A table with history; (files before, files the expiry must delete, ids it keeps,
    expected rows per snapshot, cutoff)."""
    expected = r.write_history_with_refs(wh)
    before = wh.files()
    keep = r.retained_by_refs(wh.table())
    gone = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=keep)
    assert gone, "the expired snapshots must own files of their own"
    return before, gone, keep, expected, str(int(time.time() * 1000))


def test_s3_proxy_refuses_expired_vended_tokens(vend_wh):
    """The premise of the tests below: a request signed with an expired vended token is refused
    (ExpiredToken), one with a valid token passes."""
    wh, rest, s3 = vend_wh
    arm(wh, rest, s3, latency_ms=0)
    from botocore.exceptions import ClientError
    c = h.client(wh.server.s3, endpoint=wh.server.s3.proxy_endpoint)
    key = f"{wh.namespace}/probe"
    now = int(time.time() * 1000)
    for token, refused in ((f"vended-{now - 1000}-0", True), (f"vended-{now + 60000}-0", False)):
        c.meta.events.register("before-sign.s3.*", lambda request, t=token, **_: request.headers
                               .__setitem__("X-Amz-Security-Token", t))
        try:
            c.put_object(Bucket=wh.server.s3.bucket, Key=key, Body=b"x")
            outcome = None
        except ClientError as err:
            outcome = err.response["Error"]["Code"]
        c.meta.events.unregister("before-sign.s3.*")
        assert outcome == ("ExpiredToken" if refused else None), token
    c.delete_object(Bucket=wh.server.s3.bucket, Key=key)
    assert s3.counters()["faults"].get("expired_token") == 1


def test_expiry_renews_through_the_credentials_endpoint(vend_wh):
    wh, rest, s3 = vend_wh
    before, gone, keep, expected, cutoff = expiry_case(wh)
    arm(wh, rest, s3)
    res, took_ms = expire(wh, "--older-than", cutoff, "--retain-last", "1")
    assert res.returncode == 0, res.stderr
    assert took_ms > 2 * TTL_MS, f"the run ({took_ms:.0f} ms) must outlive its first token"
    renewals = rest.counters()["by_kind"].get("LoadCredentials", 0)
    assert renewals >= 1, "the vended credentials were renewed through the endpoint"
    assert r.snapshot_ids(wh) == keep
    after = wh.files()
    assert before - after == gone, "exactly the expired snapshots' own files are deleted"
    assert after - before == r.version_files(wh)
    r.assert_judges_read(wh, "t", expected)


def test_expiry_renews_by_reloading_when_the_endpoint_is_not_offered(vend_wh):
    wh, rest, s3 = vend_wh
    before, gone, keep, expected, cutoff = expiry_case(wh)
    arm(wh, rest, s3, advertise=False)
    res, took_ms = expire(wh, "--older-than", cutoff, "--retain-last", "1")
    assert res.returncode == 0, res.stderr
    assert took_ms > 2 * TTL_MS, f"the run ({took_ms:.0f} ms) must outlive its first token"
    kinds = rest.counters()["by_kind"]
    assert kinds.get("LoadCredentials", 0) == 0, "a server that does not offer it is not asked"
    assert kinds.get("LoadTable", 0) >= 2
    assert r.snapshot_ids(wh) == keep
    after = wh.files()
    assert before - after == gone
    assert after - before == r.version_files(wh)
    r.assert_judges_read(wh, "t", expected)


def test_refused_renewal_stops_the_run_before_anything_is_deleted(vend_wh):
    """The catalog refuses to renew (403) and the first token expires while the expiry plans:
    the run stops with the message, commits nothing and deletes nothing."""
    wh, rest, s3 = vend_wh
    before, _gone, _keep, _expected, cutoff = expiry_case(wh)
    all_ids = r.snapshot_ids(wh)
    metadata_before = wh.table().metadata_location
    arm(wh, rest, s3, ttl_ms=300, latency_ms=400, rules=[
        {"kind": "LoadCredentials", "action": "iceberg_error", "status": 403,
         "type": "ForbiddenException", "message": "credential vending revoked"}])
    res, _took = expire(wh, "--older-than", cutoff, "--retain-last", "1")
    assert res.returncode == 1, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if "vended S3 credentials" in ln]
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert f"for table {wh.ident()} of catalog 'rest'" in line, line
    assert "expired at" in line and "could not be renewed" in line, line
    assert "HTTP 403 ForbiddenException: credential vending revoked" in line, line
    for secret in wh.server.vended.values():
        assert secret not in res.stderr
    assert "vended-" not in res.stderr, "no session token in a message"
    assert rest.counters()["by_kind"].get("LoadCredentials", 0) >= 1
    assert wh.table().metadata_location == metadata_before, "nothing committed"
    assert r.snapshot_ids(wh) == all_ids
    assert wh.files() == before, "nothing deleted"

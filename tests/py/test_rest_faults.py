"""Commit outcomes over HTTP: icemaint's commits through the fault proxy in front of the Apache
Iceberg REST fixture (tests/tools/faultproxy.py --api rest; tests/py/rest_helpers.py).

Only the commit POST (`POST .../namespaces/<ns>/tables/<t>`, kind CommitTable) is faulted; loads
pass. Each case asserts the exit code (docs: 3 commit failed, nothing of ours left behind; 4 outcome
unknown, our files kept), exactly which files exist below the table afterwards, and whether the
change is in the catalog:
  409                                -> 3, the transaction's own files deleted, nothing else
  500, 502 (JSON or a gateway's HTML page), 503, 504, a reset before forwarding
                                     -> 4, not applied, no file deleted (reloading the table
                                        does not show the change)
  applied-then-500, applied-then-dropped (RST or a clean close), a response after the 60 s
  request timeout                    -> 0, applied: reloading the table shows the change (a
                                        warning says the answer was lost); no file deleted,
                                        expiry's own deletes included
  409 once, 401 once (a new token), 503 with Retry-After once, 429 once, slow
                                     -> 0, exactly one change, no leftover of a failed attempt
  503 with Retry-After, then 409     -> 4 (the 409 may answer our own first attempt)
  400, 403, 404                      -> 1, refused: the transaction's own files deleted
and every unknown outcome sent the commit POST exactly once (the replay regression below).
"""
import json
import time

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
import s3_e2e  # noqa: E402
from rest_helpers import rest_local, rest_wh  # noqa: E402,F401 (fixtures)

COMMIT = {"kind": "CommitTable"}
RC_REFUSED = 1

NOT_APPLIED = {
    "500": {"action": "iceberg_error", "status": 500},
    "502": {"action": "iceberg_error", "status": 502},
    "502-html": {"action": "iceberg_error", "status": 502,
                 "body": "<html><body>502 Bad Gateway</body></html>"},
    "503": {"action": "iceberg_error", "status": 503},
    "504": {"action": "iceberg_error", "status": 504},
    "reset-unforwarded": {"action": "reset_before"},
}
APPLIED = {
    "applied-then-500": {"action": "iceberg_error", "status": 500, "forward": True},
    "applied-then-reset": {"action": "reset_after"},
    "applied-then-closed": {"action": "close_after"},
}


def arm(wh, rule):
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{**COMMIT, **rule}])
    return ctl


def commits(ctl):
    return [(e["status"], e["fault"]) for e in ctl.log() if e["kind"] == "CommitTable"]


# ---- a transaction (add-files): it writes a manifest list and manifests of its own ----------------

@pytest.fixture
def appendable(rest_wh):
    """A table with history and refs, and a Parquet file below data/ to add."""
    wh = rest_wh
    wh.expected = r.write_history_with_refs(wh)
    wh.incoming = r.write_parquet_into(wh, "t", "incoming.parquet", [900, 901])
    return wh


def add_files(wh, *, env=None):
    return wh.cli("add-files", wh.ident(), wh.incoming, via_proxy=True, env=env)


def own_files(added):
    """Files a failed add-files left (or would leave): its manifest list and manifests."""
    assert all(p.startswith("metadata/") and p.endswith(".avro") for p in added), added
    assert any(p.rsplit("/", 1)[-1].startswith("snap-") for p in added), added
    return added


def test_add_files_409_deletes_its_own_files_and_nothing_else(appendable):
    wh = appendable
    before, metadata = wh.files(), wh.table().metadata_location
    ctl = arm(wh, {"action": "iceberg_error", "status": 409})
    res = add_files(wh)
    assert res.returncode == 3, res.stderr
    assert wh.files() == before, "the transaction's own files are deleted; nothing else"
    assert wh.table().metadata_location == metadata
    assert commits(ctl) and all(c == (409, "iceberg_error") for c in commits(ctl))


@pytest.mark.parametrize("fault", sorted(NOT_APPLIED))
def test_add_files_unknown_not_applied_keeps_everything(appendable, fault):
    wh = appendable
    before, metadata = wh.files(), wh.table().metadata_location
    ctl = arm(wh, NOT_APPLIED[fault])
    res = add_files(wh)
    assert res.returncode == 4, res.stderr
    assert "reloading the table does not show the change" in res.stderr
    assert len(commits(ctl)) == 1, "a commit POST is never re-sent after an unknown outcome"
    after = wh.files()
    assert before <= after, "no file is deleted after an unknown outcome"
    own_files(after - before)
    assert wh.table().metadata_location == metadata, "the proxy did not forward: not applied"
    r.assert_judges_read(wh, "t", wh.expected)


@pytest.mark.parametrize("fault", sorted(APPLIED))
def test_add_files_unknown_applied_is_reconciled_and_keeps_everything(appendable, fault):
    """The answer is lost after the catalog applied the commit: reloading the table finds the
    transaction's own snapshot (its id and manifest list), so the commit is reported done (exit
    0, with a warning that the answer was lost) and nothing is deleted."""
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    base_rows = sorted(wh.table().scan().to_arrow()["id"].to_pylist())
    ctl = arm(wh, APPLIED[fault])
    res = add_files(wh)
    assert res.returncode == 0, res.stderr
    assert "warning: the commit's answer was lost" in res.stderr
    assert "reloading the table shows it applied" in res.stderr
    assert len(commits(ctl)) == 1, "a commit POST is never re-sent after an unknown outcome"
    after = wh.files()
    assert before <= after, "no file is deleted after an unknown outcome"
    # The change is there: one new snapshot whose files are exactly the ones icemaint wrote.
    t = wh.table()
    new = r.snapshot_ids(wh) - ids_before
    assert len(new) == 1 and t.metadata.current_snapshot_id in new
    mine = r.needed_files(wh, snapshot_ids=new) - r.needed_files(wh, snapshot_ids=ids_before)
    rel_incoming = r.relative(wh, "t", wh.incoming)
    assert after - before == own_files(mine - {rel_incoming}) | r.version_files(wh)
    wh.expected[t.metadata.current_snapshot_id] = sorted(base_rows + [900, 901])
    r.assert_judges_read(wh, "t", wh.expected)


def _succeeds_with_one_change(wh, res, ids_before, before):
    assert res.returncode == 0, res.stderr
    new = r.snapshot_ids(wh) - ids_before
    assert len(new) == 1, "exactly one change"
    rel_incoming = r.relative(wh, "t", wh.incoming)
    mine = r.needed_files(wh, snapshot_ids=new) - r.needed_files(wh, snapshot_ids=ids_before)
    after = wh.files()
    assert before - after == set()
    assert after - before == own_files(mine - {rel_incoming}) | r.version_files(wh), \
        "no leftover of a failed attempt"


def test_add_files_409_once_retries_without_leftovers(appendable):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = arm(wh, {"action": "iceberg_error", "status": 409, "times": 1})
    res = add_files(wh)
    _succeeds_with_one_change(wh, res, ids_before, before)
    assert commits(ctl) == [(409, "iceberg_error"), (200, None)]


def test_add_files_401_once_gets_a_new_token_and_commits_once(appendable):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = arm(wh, {"action": "iceberg_error", "status": 401, "times": 1})
    res = add_files(wh, env=wh.env(via_proxy=True, credential="icm-client:icm-secret"))
    _succeeds_with_one_change(wh, res, ids_before, before)
    assert commits(ctl) == [(401, "iceberg_error"), (200, None)]
    tokens = [e for e in ctl.log() if e["kind"] == "Token"]
    assert len(tokens) == 2, "one token at start, a new one after the 401"


def test_add_files_503_with_retry_after_is_resent(appendable):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = arm(wh, {"action": "iceberg_error", "status": 503, "times": 1,
                   "headers": {"Retry-After": "1"}})
    res = add_files(wh)
    _succeeds_with_one_change(wh, res, ids_before, before)
    assert commits(ctl) == [(503, "iceberg_error"), (200, None)]


def test_add_files_slow_catalog_succeeds(appendable):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{**COMMIT, "action": "delay", "delay_ms": 1500}], latency_ms=50)
    t0 = time.monotonic()
    res = add_files(wh)
    assert time.monotonic() - t0 >= 1.5
    _succeeds_with_one_change(wh, res, ids_before, before)
    assert commits(ctl) == [(200, "delay")]


# ---- expiry: the catalog writes the metadata, so a failed commit leaves nothing of ours ---------

@pytest.fixture
def expirable(rest_wh):
    wh = rest_wh
    wh.expected = r.write_history_with_refs(wh)
    wh.keep = r.retained_by_refs(wh.table())
    return wh


def expire(wh):
    return wh.cli("expire-snapshots", wh.ident(), "--older-than",
                  str(int(time.time() * 1000)), "--retain-last", "1", via_proxy=True)


def test_expire_409_deletes_nothing(expirable):
    wh = expirable
    before, ids, metadata = wh.files(), r.snapshot_ids(wh), wh.table().metadata_location
    arm(wh, {"action": "iceberg_error", "status": 409})
    res = expire(wh)
    assert res.returncode == 3, res.stderr
    assert wh.files() == before
    assert r.snapshot_ids(wh) == ids and wh.table().metadata_location == metadata


@pytest.mark.parametrize("fault", sorted(NOT_APPLIED))
def test_expire_unknown_not_applied_deletes_nothing(expirable, fault):
    wh = expirable
    before, ids, metadata = wh.files(), r.snapshot_ids(wh), wh.table().metadata_location
    ctl = arm(wh, NOT_APPLIED[fault])
    res = expire(wh)
    assert res.returncode == 4, res.stderr
    assert "reloading the table does not show the change" in res.stderr
    assert len(commits(ctl)) == 1
    assert wh.files() == before
    assert r.snapshot_ids(wh) == ids and wh.table().metadata_location == metadata
    r.assert_judges_read(wh, "t", wh.expected)


@pytest.mark.parametrize("fault", sorted(APPLIED))
def test_expire_unknown_applied_is_reconciled_and_deletes_nothing(expirable, fault):
    """Reloading shows the expiry applied: reported committed (exit 0, commit_reconciled), but
    never a file deleted after a lost answer: the expired snapshots' files stay as orphans."""
    wh = expirable
    before = wh.files()
    ctl = arm(wh, APPLIED[fault])
    res = wh.cli("--json", "expire-snapshots", wh.ident(), "--older-than",
                 str(int(time.time() * 1000)), "--retain-last", "1", via_proxy=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["commit_reconciled"] is True and doc["total_deleted"] == 0
    assert doc["deleted_files"] == [] and doc["deleted_manifests"] == []
    assert doc["metadata_location"] == wh.table().metadata_location
    assert "warning: the commit's answer was lost" in res.stderr
    assert len(commits(ctl)) == 1
    assert r.snapshot_ids(wh) == wh.keep, "the catalog applied the expiry"
    after = wh.files()
    assert before - after == set(), "no file is deleted after an unknown outcome"
    assert after - before == r.version_files(wh)
    r.assert_judges_read(wh, "t", wh.expected)


def test_expire_through_the_proxy_without_faults_counts_one_commit(expirable):
    wh = expirable
    before = wh.files()
    gone = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=wh.keep)
    ctl = r.proxy_of(wh.server)
    res = wh.cli("--json", "expire-snapshots", wh.ident(), "--older-than",
                 str(int(time.time() * 1000)), "--retain-last", "1", via_proxy=True)
    assert res.returncode == 0, res.stderr
    assert commits(ctl) == [(200, None)]
    body_kinds = {e["kind"] for e in ctl.log()}
    assert "CommitTable" in body_kinds and "LoadTable" in body_kinds
    assert r.snapshot_ids(wh) == wh.keep
    after = wh.files()
    assert before - after == gone
    assert after - before == r.version_files(wh)
    doc = json.loads(res.stdout)
    assert {r.relative(wh, "t", p) for p in s3_e2e.planned_paths(doc)} == gone


# ---- regression: a commit replayed below icemaint after the connection dropped -----------------
#
# Data-loss class "replayed commit": the first POST is applied, the connection then drops with no
# response, and the HTTP library sends the same POST again on a fresh connection (libcurl does so
# for any method when a *reused* keep-alive connection dies before a response byte). The replay
# meets its own applied change: 409 (add-files: the table moved on) or 400 (expiry: the snapshots
# are gone). Read as "failed, not applied", add-files deleted its manifest list and manifests --
# which the committed snapshot references -- and the table's current snapshot could not be read.
# Only the first POST is faulted here, so a replay would get the catalog's real answer.

@pytest.mark.parametrize("action", ["reset_after", "close_after"])
def test_replayed_commit_after_applied_then_dropped_add_files(appendable, action):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = arm(wh, {"action": action, "times": 1})
    res = add_files(wh)
    sent = commits(ctl)
    # Whatever icemaint reports, every file of every snapshot the catalog holds must exist.
    after = wh.files()
    assert r.needed_files(wh) <= after, "a committed snapshot lost its files"
    assert before <= after
    assert len(sent) == 1, f"the commit POST was sent {len(sent)} times: {sent}"
    assert res.returncode == 0, res.stderr  # applied, and the reload shows it
    assert len(r.snapshot_ids(wh) - ids_before) == 1


@pytest.mark.parametrize("action", ["reset_after", "close_after"])
def test_replayed_commit_after_applied_then_dropped_expiry(expirable, action):
    wh = expirable
    before = wh.files()
    ctl = arm(wh, {"action": action, "times": 1})
    res = expire(wh)
    sent = commits(ctl)
    assert before - wh.files() == set(), "no file is deleted after an unknown outcome"
    assert len(sent) == 1, f"the commit POST was sent {len(sent)} times: {sent}"
    assert res.returncode == 0, res.stderr  # applied, and the reload shows it
    assert "no file was deleted" in res.stdout
    assert r.snapshot_ids(wh) == wh.keep


# ---- the other answers: re-sent only when the server did not act; refusals are cleanable -------

def test_add_files_429_once_is_resent(appendable):
    wh = appendable
    before, ids_before = wh.files(), r.snapshot_ids(wh)
    ctl = arm(wh, {"action": "iceberg_error", "status": 429, "times": 1,
                   "headers": {"Retry-After": "1"}})
    res = add_files(wh)
    _succeeds_with_one_change(wh, res, ids_before, before)
    assert commits(ctl) == [(429, "iceberg_error"), (200, None)]


def test_add_files_409_after_a_resend_is_unknown(appendable):
    """A 409 that answers a re-sent POST may be our own first attempt, applied: unknown, and
    the transaction's files stay."""
    wh = appendable
    before, metadata = wh.files(), wh.table().metadata_location
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{**COMMIT, "action": "iceberg_error", "status": 503, "times": 1,
                    "headers": {"Retry-After": "1"}},
                   {**COMMIT, "action": "iceberg_error", "status": 409}])
    res = add_files(wh)
    assert res.returncode == 4, res.stderr
    assert commits(ctl) == [(503, "iceberg_error"), (409, "iceberg_error")]
    after = wh.files()
    assert before <= after
    own_files(after - before)
    assert wh.table().metadata_location == metadata


@pytest.mark.parametrize("status", [400, 403, 404])
def test_add_files_refused_is_not_applied_and_cleaned(appendable, status):
    """400, 403 and 404 on a commit: refused, not applied (Java's CleanableFailure): the
    transaction's own files are deleted, nothing else, and the table is unchanged."""
    wh = appendable
    before, metadata = wh.files(), wh.table().metadata_location
    ctl = arm(wh, {"action": "iceberg_error", "status": status})
    res = add_files(wh)
    assert res.returncode == RC_REFUSED, res.stderr
    assert commits(ctl) == [(status, "iceberg_error")]
    assert wh.files() == before
    assert wh.table().metadata_location == metadata


def test_add_files_commit_timeout_is_reconciled(rest_local, tmp_path):
    """The catalog applies the commit but answers after icemaint's 60 s request timeout: the
    outcome is unknown until the reload shows the change (exit 0), the transaction's files kept,
    the change there. (One case, local files: it waits out the timeout.)"""
    wh = r.RestWarehouse(rest_local, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    try:
        r.write_history_with_refs(wh)
        incoming = r.write_parquet_into(wh, "t", "incoming.parquet", [900, 901])
        before, ids_before = wh.files(), r.snapshot_ids(wh)
        ctl = arm(wh, {"action": "delay_response", "delay_ms": 75_000})
        t0 = time.monotonic()
        res = wh.cli("add-files", wh.ident(), incoming, via_proxy=True)
        assert res.returncode == 0, res.stderr
        assert "reloading the table shows it applied" in res.stderr
        assert 55 <= time.monotonic() - t0 < 75, "gave up at the request timeout"
        assert commits(ctl)[0][1] == "delay_response" and len(commits(ctl)) == 1
        new = r.snapshot_ids(wh) - ids_before
        assert len(new) == 1, "the catalog applied it"
        mine = r.needed_files(wh, snapshot_ids=new) - r.needed_files(wh, snapshot_ids=ids_before)
        after = wh.files()
        assert before <= after
        assert after - before == own_files(mine - {r.relative(wh, "t", incoming)}) | \
            r.version_files(wh)
    finally:
        wh.cleanup()


def test_expire_401_once_on_load_gets_a_new_token(expirable):
    """The catalog rejects the token once (on the load): icemaint asks for a new one and goes on;
    the expiry is committed once and deletes exactly the expired snapshots' own files."""
    wh = expirable
    before = wh.files()
    gone = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=wh.keep)
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{"kind": "LoadTable", "action": "iceberg_error", "status": 401, "times": 1}])
    res = wh.cli("expire-snapshots", wh.ident(), "--older-than", str(int(time.time() * 1000)),
                 "--retain-last", "1", via_proxy=True,
                 env=wh.env(via_proxy=True, credential="icm-client:icm-secret"))
    assert res.returncode == 0, res.stderr
    log = ctl.log()
    assert [e["status"] for e in log if e["kind"] == "LoadTable"][0] == 401
    assert len([e for e in log if e["kind"] == "Token"]) == 2
    assert commits(ctl) == [(200, None)]
    assert r.snapshot_ids(wh) == wh.keep
    after = wh.files()
    assert before - after == gone
    assert after - before == r.version_files(wh)
    r.assert_judges_read(wh, "t", wh.expected)

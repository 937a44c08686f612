"""Regression tests, one per data-loss class (docs/semantics.md#commit-outcomes): what icemaint
does with a table it reloads from a REST catalog after a commit, a refusal, a lost answer, or a
delete S3 refused with ExpiredToken. Each drives the fault proxies (tests/tools/faultproxy.py)
in front of the Apache Iceberg REST fixture (and, for the S3 cases, in front of moto) and asserts
the exit code, exactly which files exist below the table afterwards, and, where files were
deleted or a commit landed, that `icemaint check` passes (exit 0: every file every snapshot
needs is there).

  test_delete_refused_expired_token_is_checked_again        -> 0, the file a writer named again
      while the renewal was slow is kept (expiry and orphan sweep)
  test_stale_reload_after_commit_deletes_nothing            -> 5, nothing deleted
  test_table_dropped_and_recreated_after_commit_deletes_nothing -> 5, nothing of the old table
      deleted, and the dropped table registered again passes check
  test_refusal_after_apply_keeps_the_transaction_files      -> 0, the applied snapshot's files kept
  test_reconcile_ignores_a_stale_reload                     -> 4, the tag still there
"""
import json
import threading
import time
import urllib.request

import pytest

pytest.importorskip("pyiceberg.catalog.rest")

import rest_helpers as r  # noqa: E402
import s3_e2e  # noqa: E402
import s3_helpers as h  # noqa: E402
from rest_helpers import rest_local, rest_wh, vend_wh  # noqa: E402,F401 (fixtures)

RC_REFUSED_BY_SAFETY_CHECK = 5
# A "hold" rule of the fault proxy keeps a request until the test's other writer is done
# (POST /release), at most this long: below icemaint's 60 s request timeout.
HOLD_MS = 30000
RC_COMMIT_UNKNOWN = 4


def check(wh, table="t"):
    """`icemaint check` of the table, straight to the catalog (no proxy)."""
    return s3_e2e.icm("check", wh.ident(table), env=wh.env(), cwd=wh.tmp)


def metadata_files(wh, table="t") -> set[str]:
    """The table's metadata JSON files the catalog knows (current and metadata-log), with the
    Hadoop checksum file beside each on local files, relative to the table location."""
    t = wh.table(table)
    out = set()
    for location in [e.metadata_file for e in t.metadata.metadata_log] + [t.metadata_location]:
        rel = r.relative_to(t.metadata.location, location)
        out.add(rel)
        if wh.server.s3 is None:
            head, _, name = rel.rpartition("/")
            out.add(f"{head}/.{name}.crc")
    return out


def stale_load_rule(wh, table="t"):
    """A genuine LoadTable answer of the table as it is now, served by the REST proxy (after
    icemaint's first load) in place of the catalog's: a lagging replica or a cache."""
    with urllib.request.urlopen(r.table_url(wh.server.uri, wh.namespace, table)) as resp:
        body = resp.read().decode()
    return {"kind": "LoadTable", "action": "iceberg_error", "status": 200, "body": body,
            "after": 1, "path": f"/namespaces/{wh.namespace}/tables/{table}$"}


# ---- a delete refused with ExpiredToken is checked again, never re-sent as it was ---------------
#
# The first DeleteObjects is answered 400 ExpiredToken (as S3 answers an expired session token);
# the credentials are renewed by loading the table again (the catalog does not offer the
# credentials endpoint), and the REST proxy holds that first load after the refusal back until
# the writer's commit is done (at most RENEWAL_HOLD_MS): a slow catalog. Meanwhile a writer
# commits a snapshot that names the file the refused batch held (expiry: a data file only the
# expired snapshots had; sweep: a file written but not yet committed). Re-sent at once after the renewal, the delete removed a file
# the table's current snapshot references; it must go back to the delete engine, whose reload
# and re-check see the writer's commit.

# Held until the writer's commit is done (a fixed delay raced a slow writer on a loaded box:
# the reload then came first, legitimately saw no commit, and the test failed); the cap is below
# icemaint's 60 s request timeout.
RENEWAL_HOLD_MS = 30000
# LoadTable requests icemaint sends before its first delete batch (6 for expiry and the sweep,
# counted from the proxy's log; one is the walk of the catalog's other tables loading the table
# itself, to tell it by its uuid and metadata file): the next one is the renewal (or, fixed,
# the delete engine's reload). The writer asserts the premise (the held
# load came after the refusal, and its commit before any delete was sent again), so a change of
# this count fails the test at once instead of leaving it without the race.
LOADS_BEFORE_DELETE = 6


def expired_only_data_file(wh):
    """A table whose older snapshots own data files the current one does not need; returns
    (cutoff ms, victim location: one such data file)."""
    cat = wh.catalog()
    t = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
    t.append(h._rows([1, 2]))
    t = cat.load_table(wh.ident())
    t.append(h._rows([3, 4]))
    t = cat.load_table(wh.ident())
    old = {task.file.file_path for task in t.scan().plan_files()}
    t.overwrite(h._rows([5, 6]))
    cutoff = str(int(time.time() * 1000) + 1)
    time.sleep(0.01)
    current = {task.file.file_path for task in cat.load_table(wh.ident()).scan().plan_files()}
    assert old and not old & current
    return cutoff, sorted(old)[0]


def uncommitted_data_file(wh):
    """A table with one append, and a data file below it no snapshot names (a writer's, not yet
    committed), older than the sweep's 2 s; returns its location."""
    t = wh.catalog().create_table(wh.ident(), schema=h._rows([1]).schema)
    t.append(h._rows([1, 2]))
    victim = r.write_parquet_into(wh, "t", "pending-writer.parquet", [7, 8])
    time.sleep(2.5)
    return victim


@pytest.mark.parametrize("command", ["expire-snapshots", "remove-orphan-files"])
def test_delete_refused_expired_token_is_checked_again(vend_wh, command):
    wh, rest, s3 = vend_wh
    if command == "expire-snapshots":
        cutoff, victim = expired_only_data_file(wh)
        args = ["--older-than", cutoff, "--retain-last", "1"]
        keep = {wh.table().metadata.current_snapshot_id}
        meant = r.needed_files(wh) - r.needed_files(wh, snapshot_ids=keep)
    else:
        victim = uncommitted_data_file(wh)
        args = ["--older-than", "2s", "--force"]
        meant = {r.relative(wh, "t", victim)}
    rel_victim = r.relative(wh, "t", victim)
    assert rel_victim in meant, "the premise: the run means to delete the victim"
    before = wh.files()

    rest._call("POST", "/rules", {
        "rules": [{"kind": "LoadTable", "action": "hold", "delay_ms": RENEWAL_HOLD_MS,
                   "after": LOADS_BEFORE_DELETE, "times": 1}],
        "vend": {"ttl_ms": 3600_000, "s3_endpoint": wh.server.s3.proxy_endpoint,
                 "advertise": False}})
    s3._call("POST", "/rules", {"rules": [{"kind": "DeleteObjects", "action": "error",
                                           "status": 400, "code": "ExpiredToken",
                                           "times": 1}]})
    rest._call("DELETE", "/counters")
    s3._call("DELETE", "/counters")

    writer = {}

    def write_again():
        """Once the delete was refused: commit a snapshot naming the victim, and note whether
        that commit was done before any delete went to S3 again (the race is real)."""
        try:
            deadline = time.monotonic() + 120
            while s3.counters()["faults"].get("error", 0) < 1:
                assert time.monotonic() < deadline, "the delete was never refused"
                assert rest.counters()["faults"].get("hold", 0) == 0, (
                    "the held load came before the refusal: LOADS_BEFORE_DELETE is stale")
                time.sleep(0.005)
            while rest.counters()["faults"].get("hold", 0) < 1:
                assert time.monotonic() < deadline, "no load of the table after the refusal"
                time.sleep(0.005)
            wh.catalog().load_table(wh.ident()).add_files([victim])
            deletes = [e for e in s3.log() if e["kind"] == "DeleteObjects"]
            writer["first"] = len(deletes) == 1
        except Exception as err:  # noqa: BLE001 - reported by the test below
            writer["error"] = err
        finally:
            rest.release()

    thread = threading.Thread(target=write_again)
    thread.start()
    res = s3_e2e.icm("--json", command, wh.ident(), *args, cwd=wh.tmp,
                     env=wh.env(via_proxy=True, **{"s3.endpoint": wh.server.s3.proxy_endpoint}))
    thread.join(timeout=60)
    assert "error" not in writer, f"the writer failed: {writer.get('error')!r}"
    assert writer.get("first"), ("the writer must commit before any delete goes again (the "
                                 "delayed load is no longer the one after the refusal?)")

    assert res.returncode == 0, res.stderr
    t = wh.table()
    assert victim in {task.file.file_path for task in t.scan().plan_files()}, \
        "the writer's snapshot references the victim"
    after = wh.files()
    assert rel_victim in after, "the file the writer named again is not deleted"
    assert before - after == meant - {rel_victim}, "everything else the run meant to delete went"
    added = after - before
    assert added == (r.needed_files(wh) - before) | (metadata_files(wh) - before), \
        "nothing appeared but the commits' own files"
    assert rel_victim not in {r.relative(wh, "t", p) for p in
                              s3_e2e.planned_paths(json.loads(res.stdout))}
    chk = check(wh)
    assert chk.returncode == 0, chk.stdout + chk.stderr


# ---- expiry plans its deletes only against a reload that follows its commit ---------------------

def test_stale_reload_after_commit_deletes_nothing(rest_wh):
    """After expiry's commit, every LoadTable is answered with the table as it was two
    appends earlier (a lagging replica): the snapshots the expiry kept are missing from it, so
    planning against it would delete the current snapshot's files. Refused (exit 5), the
    message says the reload does not follow the commit, nothing is deleted."""
    wh = rest_wh
    cat = wh.catalog()
    t = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
    t.append(h._rows([1, 2]))
    stale = stale_load_rule(wh)
    for ids in ([3, 4], [5, 6]):
        cat.load_table(wh.ident()).append(h._rows(ids))
    snaps = sorted(wh.table().metadata.snapshots, key=lambda s: s.sequence_number)
    keep = {s.snapshot_id for s in snaps[-2:]}
    cutoff = str(int(time.time() * 1000) + 1)
    time.sleep(0.01)
    before = wh.files()

    ctl = r.proxy_of(wh.server)
    ctl.set_rules([stale])
    res = wh.cli("--json", "expire-snapshots", wh.ident(), "--older-than", cutoff,
                 "--retain-last", "2", via_proxy=True)
    assert ctl.counters()["faults"].get("iceberg_error", 0) >= 1, "the stale answer was served"
    ctl.clear()

    assert res.returncode == RC_REFUSED_BY_SAFETY_CHECK, res.stderr
    assert "does not follow it" in res.stderr and "nothing was deleted" in res.stderr, res.stderr
    assert "the expiry was committed" in res.stderr, res.stderr
    error = json.loads(res.stdout)["error"]
    assert error["code"] == "ICM_EREFUSED" and error["exit_code"] == 5, error
    assert "does not follow it" in error["message"], error
    assert "a stale answer or another table under the name" in error["message"], error
    assert r.snapshot_ids(wh) == keep, "the expiry itself was committed"
    after = wh.files()
    assert before - after == set(), "nothing deleted"
    assert after - before == r.version_files(wh)
    chk = check(wh)
    assert chk.returncode == 0, chk.stdout + chk.stderr


def test_table_dropped_and_recreated_after_commit_deletes_nothing(rest_local, tmp_path):
    """Between expiry's commit and its reload the table is dropped (not purged) and a new one
    created under the name, at the same location: the reload is another table (another
    table-uuid). Refused (exit 5); nothing of the old table is deleted, and the dropped table,
    registered again, passes check."""
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    try:
        t = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
        for ids in ([1, 2], [3, 4], [5, 6]):
            t.append(h._rows(ids))
            t = cat.load_table(wh.ident())
        old_uuid = t.metadata.table_uuid
        location = t.metadata.location
        cutoff = str(int(time.time() * 1000) + 1)
        time.sleep(0.01)
        before = wh.files()

        ctl = r.proxy_of(wh.server)
        ctl.set_rules([{"kind": "LoadTable", "action": "hold", "delay_ms": HOLD_MS, "after": 1}])
        swapped = {}

        def drop_and_create():
            try:
                deadline = time.monotonic() + 60
                while not any(e["kind"] == "CommitTable" and e["status"] == 200
                              for e in ctl.log()):
                    assert time.monotonic() < deadline, "expiry never committed"
                    time.sleep(0.01)
                swapped["committed"] = cat.load_table(wh.ident()).metadata_location
                cat.drop_table(wh.ident())  # not purged: the files stay
                new = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
                swapped["new"] = new.metadata_location
                swapped["new_uuid"] = new.metadata.table_uuid
            except Exception as err:  # noqa: BLE001 - reported by the test below
                swapped["error"] = err
            finally:
                ctl.release()

        thread = threading.Thread(target=drop_and_create)
        thread.start()
        res = wh.cli("expire-snapshots", wh.ident(), "--older-than", cutoff,
                     "--retain-last", "1", via_proxy=True)
        thread.join(timeout=60)
        ctl.clear()
        assert "error" not in swapped, f"drop and create failed: {swapped.get('error')!r}"
        assert r.local_path(wh.location()) == r.local_path(location), "the same location"
        assert swapped["new_uuid"] != old_uuid

        assert res.returncode == RC_REFUSED_BY_SAFETY_CHECK, res.stderr
        assert "does not follow it" in res.stderr and "table-uuid differs" in res.stderr, \
            res.stderr
        after = r.files_below(wh, location)
        assert before - after == set(), "nothing of the old table deleted"
        added = set()
        for md in (swapped["committed"], swapped["new"]):
            rel = r.relative_to(location, md)
            head, _, name = rel.rpartition("/")
            added |= {rel, f"{head}/.{name}.crc"}
        assert after - before == added, "only expiry's metadata file and the new table's"

        cat.register_table(wh.ident("t_old"), swapped["committed"])  # the dropped table
        assert cat.load_table(wh.ident("t_old")).metadata.table_uuid == old_uuid
        chk = check(wh, "t_old")
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


# ---- a refusal is checked by reloading before a transaction deletes its own files ---------------

@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_refusal_after_apply_keeps_the_transaction_files(rest_local, tmp_path, status):
    """A gateway passes the commit on (the catalog applies it) and answers it with a refusal;
    with a static token nothing is re-sent. The reload shows the transaction's own snapshot:
    committed (exit 0, a warning names the refusal), its manifest list and manifests kept."""
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    try:
        cat.create_table(wh.ident(), schema=h._rows([1]).schema).append(h._rows([1, 2]))
        incoming = r.write_parquet_into(wh, "t", "extra.parquet", [9])
        before, ids_before = wh.files(), r.snapshot_ids(wh)

        ctl = r.proxy_of(wh.server)
        ctl.set_rules([{"kind": "CommitTable", "action": "iceberg_error", "status": status,
                        "times": 1, "forward": True}])
        res = wh.cli("add-files", wh.ident(), incoming, via_proxy=True,
                     env=wh.env(via_proxy=True, token="static-token"))
        commits = [(e["status"], e["fault"]) for e in ctl.log() if e["kind"] == "CommitTable"]
        ctl.clear()

        assert res.returncode == 0, res.stderr
        assert commits == [(status, "iceberg_error")], "sent once, never again"
        assert "the catalog refused the commit" in res.stderr, res.stderr
        assert "reloading the table shows it applied" in res.stderr, res.stderr
        new = r.snapshot_ids(wh) - ids_before
        assert len(new) == 1 and wh.table().metadata.current_snapshot_id in new
        mine = r.needed_files(wh, snapshot_ids=new) - r.needed_files(wh, snapshot_ids=ids_before)
        rel_incoming = r.relative(wh, "t", incoming)
        after = wh.files()
        assert before - after == set(), "nothing deleted"
        own = mine - {rel_incoming}
        assert own and all(p.startswith("metadata/") and p.endswith(".avro") for p in own)
        assert after - before == own | r.version_files(wh), \
            "the applied snapshot's manifest list and manifests are kept"
        assert sorted(wh.table().scan().to_arrow()["id"].to_pylist()) == [1, 2, 9]
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


def test_refusal_after_apply_found_with_a_trimmed_metadata_log(rest_local, tmp_path):
    """The same refusal after apply, on a table keeping one previous
    metadata file (write.metadata.previous-versions-max=1); while icemaint's first reload is held,
    another writer appends on top of its commit, so the reload's metadata-log no longer names the
    base. The transaction's own snapshot still proves the commit: exit 0, nothing deleted, the
    table reads whole. (Before: exit 1 and the manifest list and manifest deleted.)"""
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    try:
        t = cat.create_table(wh.ident(), schema=h._rows([1]).schema,
                             properties={"write.metadata.previous-versions-max": "1"})
        t.append(h._rows([1, 2]))
        incoming = r.write_parquet_into(wh, "t", "extra.parquet", [9])
        n0 = len(cat.load_table(wh.ident()).metadata.snapshots)
        before = wh.files()
        ctl = r.proxy_of(wh.server)
        ctl.set_rules([{"kind": "CommitTable", "action": "iceberg_error", "status": 401,
                        "times": 1, "forward": True},
                       {"kind": "LoadTable", "action": "hold", "delay_ms": HOLD_MS, "after": 1,
                        "times": 1}])
        appended = []

        def other_writer():
            try:
                for _ in range(200):
                    time.sleep(0.05)
                    tt = cat.load_table(wh.ident())
                    if len(tt.metadata.snapshots) > n0:
                        tt.append(h._rows([7]))
                        appended.append(True)
                        return
            finally:
                ctl.release()

        th = threading.Thread(target=other_writer)
        th.start()
        res = wh.cli("add-files", wh.ident(), incoming, via_proxy=True,
                     env=wh.env(via_proxy=True, token="static-token"))
        th.join()
        ctl.clear()
        assert appended, "the other writer committed on top of icemaint's commit"
        assert res.returncode == 0, res.stderr
        assert "reloading the table shows it applied" in res.stderr, res.stderr
        after = wh.files()
        assert before - after == set(), "nothing deleted"
        assert sorted(wh.table().scan().to_arrow()["id"].to_pylist()) == [1, 2, 7, 9]
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


def _answered_after_apply(wh, status, rules=lambda wh: [], props=None, other_writer=None):
    """A table with one append; `add-files` of one new file through the REST proxy, whose
    CommitTable is forwarded (the catalog applies it) and answered `status`, once, beside
    `rules`; `other_writer(wh, ids0)` runs meanwhile. Returns (result, files before, snapshot
    ids before, the CommitTable answers the proxy gave)."""
    cat = wh.catalog()
    cat.create_table(wh.ident(), schema=h._rows([1]).schema,
                     properties=props or {}).append(h._rows([1, 2]))
    incoming = r.write_parquet_into(wh, "t", "extra.parquet", [9])
    ids0, before = r.snapshot_ids(wh), wh.files()
    ctl = r.proxy_of(wh.server)
    ctl.set_rules([{"kind": "CommitTable", "action": "iceberg_error", "status": status,
                    "times": 1, "forward": True}] + rules(wh))

    def writer_then_release():
        try:
            other_writer(wh, ids0)
        finally:
            ctl.release()

    th = threading.Thread(target=writer_then_release) if other_writer else None
    if th:
        th.start()
    res = wh.cli("add-files", wh.ident(), incoming, via_proxy=True,
                 env=wh.env(via_proxy=True, token="static-token"))
    if th:
        th.join()
    commits = [(e["status"], e["fault"]) for e in ctl.log() if e["kind"] == "CommitTable"]
    ctl.clear()
    return res, before, ids0, commits


EXPIRED_BY_THE_OTHER_WRITER = []


def _append_twice_and_expire_ours(wh, ids0):
    """Once icemaint's snapshot is in the table: two appends on top, then icemaint's snapshot
    and its child expired (recorded in EXPIRED_BY_THE_OTHER_WRITER)."""
    cat = wh.catalog()
    EXPIRED_BY_THE_OTHER_WRITER.clear()
    for _ in range(300):
        time.sleep(0.05)
        ours = r.snapshot_ids(wh) - ids0
        if ours:
            cat.load_table(wh.ident()).append(h._rows([7]))
            child = r.snapshot_ids(wh) - ids0 - ours
            cat.load_table(wh.ident()).append(h._rows([8]))
            cat.load_table(wh.ident()).maintenance.expire_snapshots().by_ids(
                sorted(ours | child)).commit()
            EXPIRED_BY_THE_OTHER_WRITER.extend(sorted(ours | child))
            return


def _hold_first_reload(wh):
    """The first reload held until the other writer is done (_answered_after_apply releases)."""
    return [{"kind": "LoadTable", "action": "hold", "delay_ms": HOLD_MS, "after": 1, "times": 1}]


def test_refusal_after_apply_with_its_snapshot_expired_keeps_the_files_still_reached(
        rest_local, tmp_path):
    """Data-loss class "refusal believed after its snapshot was expired": a gateway passes the
    commit on and answers 401; while icemaint's first reload is held, another writer appends
    twice on top of icemaint's snapshot and expires it and its child, so no snapshot of the
    reload is icemaint's or names it as parent, yet the newest one's manifest list still
    carries the manifest icemaint wrote. The transaction must not delete what the table
    reaches: exit 4 (the catalog said refused, the table says applied), nothing deleted, the
    table reads whole. (Before: exit 1 and the manifest deleted; the table lost rows 9.)"""
    wh = r.RestWarehouse(rest_local, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    try:
        res, before, _, _ = _answered_after_apply(wh, 401, _hold_first_reload,
                                               other_writer=_append_twice_and_expire_ours)
        expired = list(EXPIRED_BY_THE_OTHER_WRITER)
        assert len(expired) == 2, "the other writer expired icemaint's snapshot and its child"
        assert not set(expired) & r.snapshot_ids(wh)
        assert res.returncode == RC_COMMIT_UNKNOWN, res.stderr
        assert "a file this transaction wrote" in res.stderr, res.stderr
        assert before - wh.files() == set(), "nothing deleted"
        assert sorted(wh.table().scan().to_arrow()["id"].to_pylist()) == [1, 2, 7, 8, 9]
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


def test_conflict_answered_after_apply_is_found_before_a_retry(rest_local, tmp_path):
    """Data-loss class "conflict believed after the commit applied": a gateway passes the commit
    on (the catalog applies it) and answers 409. The retry's reload holds the transaction's own
    snapshot: the commit applied, so it is neither retried (a retry took the own snapshot for a
    collision and its files for another writer's, then deleted the manifest list and manifest)
    nor cleaned up: exit 0 with a warning, one CommitTable, nothing deleted, the table reads
    whole. (Before: exit 3 and the current snapshot's manifest list and manifest deleted.)"""
    wh = r.RestWarehouse(rest_local, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    try:
        res, before, ids0, commits = _answered_after_apply(wh, 409)
        assert res.returncode == 0, res.stderr
        assert commits == [(409, "iceberg_error")], "not retried"
        assert "holds the commit's own snapshot" in res.stderr, res.stderr
        assert len(r.snapshot_ids(wh) - ids0) == 1
        assert before - wh.files() == set(), "nothing deleted"
        assert sorted(wh.table().scan().to_arrow()["id"].to_pylist()) == [1, 2, 9]
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


# ---- conflicts answered after the commit applied: every path that deletes checks the table ------
#
# Data-loss class "conflict believed on a path that deletes": a gateway passes the commit on (it
# applies) and answers 409. Whatever happens next -- the reload for the retry fails, another
# writer builds on the commit and expires its snapshot before the retry's reload, or the retry's
# reload is stale so the next attempt meets a genuine conflict -- the transaction took the 409
# for proof and deleted its manifest list and manifests, which the current snapshot needs. Now
# its files go only when the table, reloaded, reaches none of them: here it does (or cannot be
# read), so exit 4 and nothing deleted.

CONFLICT_CASES = {
    # the reloads after the 409 fail: nothing tells whether it applied
    "reload-fails": (lambda wh: [{"kind": "LoadTable", "action": "iceberg_error", "status": 503,
                                  "after": 1}], {}, None, [1, 2, 9]),
    "reload-fails-no-retry": (lambda wh: [{"kind": "LoadTable", "action": "iceberg_error",
                                           "status": 503, "after": 1}],
                              {"commit.retry.num-retries": "0"}, None, [1, 2, 9]),
    # the retry's reload is held while another writer builds on the commit and expires it
    "own-snapshot-expired": (_hold_first_reload, {}, _append_twice_and_expire_ours,
                             [1, 2, 7, 8, 9]),
    # the retry's reload is stale: attempt 2 meets a genuine conflict, attempt 1 applied
    "earlier-attempt-applied": (lambda wh: [dict(stale_load_rule(wh), times=1)],
                                {"commit.retry.num-retries": "1"}, None, [1, 2, 9]),
}


@pytest.mark.parametrize("case", sorted(CONFLICT_CASES))
def test_conflict_after_apply_keeps_the_files_the_table_reaches(rest_local, tmp_path, case):
    rules, props, writer, rows = CONFLICT_CASES[case]
    wh = r.RestWarehouse(rest_local, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    try:
        res, before, _, _ = _answered_after_apply(wh, 409, rules, props, writer)
        assert res.returncode == RC_COMMIT_UNKNOWN, res.stderr
        assert "no file of this transaction was deleted" in res.stderr, res.stderr
        assert before - wh.files() == set(), "nothing deleted"
        assert sorted(wh.table().scan().to_arrow()["id"].to_pylist()) == rows
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


# ---- a commit of another writer between expiry's base and its commit -------------------------
#
# Data-loss class "expiry applied on top of a commit it never saw": the requirements assert only
# the base's refs, so a tag created (or gc.enabled=false set) while the expiry's commit is on its
# way does not stop the catalog, which removes the snapshots and drops a ref left naming one.
# Planning base -> reload then deleted the tagged snapshot's files (or files GC was turned off
# for). The committed metadata must follow the base directly; otherwise nothing is deleted.

@pytest.mark.parametrize("writer", ["create-tag", "gc-disabled"])
def test_expiry_applied_on_top_of_another_commit_deletes_nothing(rest_local, tmp_path, writer):
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    try:
        t = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
        t.append(h._rows([1]))
        first = cat.load_table(wh.ident()).metadata.current_snapshot_id
        cat.load_table(wh.ident()).overwrite(h._rows([2]))
        cat.load_table(wh.ident()).overwrite(h._rows([3]))
        time.sleep(0.05)
        cutoff = str(int(time.time() * 1000))
        time.sleep(0.05)
        before = wh.files()
        ctl = r.proxy_of(wh.server)
        ctl.set_rules([{"kind": "CommitTable", "action": "hold", "delay_ms": HOLD_MS}])
        done = []

        def other_writer():
            try:
                for _ in range(600):
                    if any(e["kind"] == "CommitTable" for e in ctl.log()):
                        break
                    time.sleep(0.01)
                tt = cat.load_table(wh.ident())
                if writer == "create-tag":
                    tt.manage_snapshots().create_tag(first, "audit").commit()
                else:
                    with tt.transaction() as tx:
                        tx.set_properties({"gc.enabled": "false"})
                done.append(True)
            finally:
                ctl.release()

        th = threading.Thread(target=other_writer)
        th.start()
        res = wh.cli("expire-snapshots", wh.ident(), "--older-than", cutoff, "--retain-last",
                     "1", via_proxy=True)
        th.join()
        ctl.clear()
        assert done, "the other writer committed while the expiry's commit was on its way"
        assert res.returncode == RC_REFUSED_BY_SAFETY_CHECK, res.stdout + res.stderr
        assert "nothing was deleted" in res.stderr, res.stderr
        assert before - wh.files() == set(), "nothing deleted"
        chk = check(wh)
        assert chk.returncode == 0, chk.stdout + chk.stderr
    finally:
        wh.cleanup()


# ---- a lost answer is reconciled only against a successor of the base ---------------------------

def test_reconcile_ignores_a_stale_reload(rest_local, tmp_path):
    """remove-ref's commit is answered 503 (not forwarded: not applied), and the reloads that
    look for the change get the table as it was before the tag existed: it shows the tag gone,
    but it is no successor of the commit's base. Unknown (exit 4), the tag still there, nothing
    deleted."""
    wh = r.RestWarehouse(rest_local, tmp_path)
    cat = wh.catalog()
    cat.create_namespace(wh.namespace)
    try:
        t = cat.create_table(wh.ident(), schema=h._rows([1]).schema)
        t.append(h._rows([1, 2]))
        stale = stale_load_rule(wh)  # before the tag
        t = cat.load_table(wh.ident())
        with t.manage_snapshots() as ms:
            ms.create_tag(t.metadata.current_snapshot_id, "keep")
        cat.load_table(wh.ident()).append(h._rows([3]))
        before, metadata = wh.files(), wh.table().metadata_location
        assert set(wh.table().metadata.refs) == {"main", "keep"}

        ctl = r.proxy_of(wh.server)
        ctl.set_rules([{"kind": "CommitTable", "action": "iceberg_error", "status": 503,
                        "times": 1}, stale])
        res = wh.cli("remove-ref", wh.ident(), "keep", via_proxy=True)
        served = ctl.counters()["faults"]
        commits = [e["status"] for e in ctl.log() if e["kind"] == "CommitTable"]
        ctl.clear()
        assert served.get("iceberg_error", 0) >= 2, "the 503 and at least one stale reload"

        assert res.returncode == RC_COMMIT_UNKNOWN, res.stderr
        # a stale answer tells nothing either way: only a successor of the base could
        assert "gave metadata that does not follow the commit's base" in res.stderr, res.stderr
        assert commits == [503], "the commit POST is sent once"
        assert set(wh.table().metadata.refs) == {"main", "keep"}, "the tag is still there"
        assert wh.table().metadata_location == metadata, "nothing committed"
        assert wh.files() == before, "nothing deleted"
    finally:
        wh.cleanup()

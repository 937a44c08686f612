"""Regressions for the data-loss classes "commits that land while a run deletes", "output that
fails after deleting" (the journal) and "overlapping runs", on real PyIceberg tables.

  * commits that land while a run deletes: a PyIceberg `add_files` loop (copy a live data file to
    a new name, set its mtime 10 days back, add it) races `remove-orphan-files` and, separately,
    `expire-snapshots`; afterwards every file every snapshot references exists and PyIceberg
    scans every snapshot (today's main lost a file in every run of the sweep race);
  * overlapping runs: a run that deletes takes the table lease; a second run is refused (exit 5)
    naming the holder; a stale lease is taken over; `--no-lock` overrides; the lease is gone
    after success and after errors; a dry run takes none;
  * `already_gone`: a planned file that is gone at delete time is counted apart;
  * the `--log-out` journal: exact lines; a bad path stops the command before anything is
    deleted; a report that cannot be printed (stdout closed or full) leaves the journal complete
    and the exit code says the report failed, not the deletes.
"""
import glob
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import sql_table_of_three_appends  # noqa: E402

CLI = os.environ.get("ICM_CLI")
TEN_DAYS_S = 10 * 86400
LEASE = ".icemaint-lease"
IN_FLIGHT = "cannot read this metadata file to tell whether another table lives under"


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    return sql_table_of_three_appends(tmp_path, "reg")


def cli_args(tbl, *args):
    return [CLI, "--config", tbl["cfg"], "--catalog", "reg", *args]


def icm(tbl, *args, check=True):
    p = subprocess.run(cli_args(tbl, *args), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        raise AssertionError(f"icemaint {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


def age(*paths):
    old = time.time() - TEN_DAYS_S
    for p in paths:
        os.utime(p, (old, old))


def age_all(path):
    age(*glob.glob(str(path / "**" / "*"), recursive=True))


def strays(tbl, n, prefix="stray"):
    out = []
    for i in range(n):
        p = tbl["dir"] / "data" / f"{prefix}-{i}.parquet"
        p.write_bytes(b"not referenced %d" % i)
        out.append(p)
    age(*out)
    return out


def lost_files(tbl):
    """Files some snapshot of the table references that do not exist (PyIceberg plans them)."""
    t = tbl["cat"].load_table("ns.t")
    lost = set()
    for s in t.metadata.snapshots:
        for task in t.scan(snapshot_id=s.snapshot_id).plan_files():
            for f in [task.file] + list(task.delete_files):
                path = f.file_path.replace("file://", "")
                if not os.path.exists(path):
                    lost.add(path)
        if not os.path.exists(s.manifest_list.replace("file://", "")):
            lost.add(s.manifest_list)
    return lost


def read_every_snapshot(tbl):
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in t.metadata.snapshots}


def lease_path(tbl):
    """<table location>/metadata/.icemaint-lease, wherever the current metadata file is."""
    t = tbl["cat"].load_table("ns.t")
    return os.path.join(t.location().replace("file://", ""), "metadata", LEASE)


def write_lease(tbl, expires_ms, host="other-host", pid=4242, token="a1b2c3"):
    doc = {"owner": "someone", "host": host, "pid": pid, "start_ms": expires_ms - 600000,
           "expires_ms": expires_ms, "command": "remove-orphan-files", "token": token}
    with open(lease_path(tbl), "w") as f:
        json.dump(doc, f)


def now_ms():
    return int(time.time() * 1000)


# ---- commits that land while a run deletes ----------------------------------------------------

def add_files_loop(tbl, rounds, runner):
    """The writer: copy a live data file to a new name, set its mtime 10 days back, add_files it;
    `runner` (a thread) runs the maintenance command over and over meanwhile. Returns the runs'
    exit codes and how many add_files calls failed (a copy deleted before PyIceberg read it is
    not lost: it was never committed)."""
    data = tbl["dir"] / "data"
    src = sorted(data.glob("*.parquet"))[0]
    stop = threading.Event()
    codes = []
    t = threading.Thread(target=runner, args=(stop, codes))
    t.start()
    failed = 0
    try:
        for i in range(rounds):
            dst = data / f"copy-{i:04d}.parquet"
            shutil.copy(src, dst)
            age(dst)
            try:
                tbl["cat"].load_table("ns.t").add_files([str(dst)])
            except (FileNotFoundError, OSError):
                failed += 1
    finally:
        stop.set()
        t.join(timeout=120)
    assert not t.is_alive()
    return codes, failed


def test_add_files_racing_the_orphan_sweep_loses_no_live_file(table):
    age_all(table["dir"])
    before = read_every_snapshot(table)

    def sweeper(stop, codes):
        n = 0
        while not stop.is_set():
            strays(table, 20, prefix=f"junk-{n}")  # something to delete every run
            p = icm(table, "remove-orphan-files", "ns.t", check=False)
            # the one refusal a racing writer can cause: its metadata file caught mid-write
            codes.append(0 if p.returncode == 5 and IN_FLIGHT in p.stderr else p.returncode)
            n += 1

    codes, failed = add_files_loop(table, 120, sweeper)
    assert lost_files(table) == set()
    assert codes and all(c == 0 for c in codes), codes
    after = read_every_snapshot(table)
    assert {k: after[k] for k in before} == before
    assert len(after) == len(before) + 120 - failed
    assert failed <= 2  # the writer itself practically never loses its copy before adding it


def test_add_files_racing_expiry_loses_no_live_file(table):
    age_all(table["dir"])

    def expirer(stop, codes):
        while not stop.is_set():
            codes.append(icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01",
                             "--retain-last", "2", check=False).returncode)

    codes, failed = add_files_loop(table, 100, expirer)
    assert lost_files(table) == set()
    # 3: the writer won every commit retry (nothing of ours left); never an error or refusal
    assert codes.count(0) >= 2 and set(codes) <= {0, 3}, codes
    assert failed == 0
    t = table["cat"].load_table("ns.t")
    assert t.scan().to_arrow().num_rows == 15 + 100 * 5
    read_every_snapshot(table)


# ---- overlapping runs -------------------------------------------------------------------------

def test_overlapping_sweeps_delete_each_file_once(table):
    """Two sweeps at once: one takes the lease, the other is refused (exit 5), so one deletion
    is reported once."""
    victims = strays(table, 3)
    age_all(table["dir"])
    procs = [subprocess.Popen(cli_args(table, "--json", "remove-orphan-files", "ns.t"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 5], outs
    refused = outs[[p.returncode for p in procs].index(5)][1]
    assert "lease" in refused and "--no-lock" in refused and "pid" in refused
    done = json.loads(outs[[p.returncode for p in procs].index(0)][0])
    assert done["deleted"] == 3
    assert not any(v.exists() for v in victims)
    assert not os.path.exists(lease_path(table))
    assert lost_files(table) == set()


def test_second_run_is_refused_naming_the_holder(table):
    victims = strays(table, 2)
    age_all(table["dir"])
    write_lease(table, now_ms() + 600000)
    n = len(table["cat"].load_table("ns.t").metadata.snapshots)
    for args in (("remove-orphan-files", "ns.t"),
                 ("expire-snapshots", "ns.t", "--older-than", "2099-01-01")):
        p = icm(table, *args, check=False)
        assert p.returncode == 5, p.stderr
        assert "other-host" in p.stderr and "pid 4242" in p.stderr and "--no-lock" in p.stderr
        assert p.stderr.count("\n") == 1, p.stderr
    assert all(v.exists() for v in victims)
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == n
    # --no-lock overrides, and leaves the other run's lease alone
    icm(table, "remove-orphan-files", "ns.t", "--no-lock")
    assert not any(v.exists() for v in victims)
    assert os.path.exists(lease_path(table))
    icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--no-lock")
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == 1
    assert lost_files(table) == set()


def test_stale_lease_is_taken_over_and_released(table):
    victims = strays(table, 2)
    age_all(table["dir"])
    write_lease(table, now_ms() - 1000, token="deadbeef")
    p = icm(table, "remove-orphan-files", "ns.t")
    assert not any(v.exists() for v in victims)
    assert not os.path.exists(lease_path(table)), p.stderr
    assert not glob.glob(lease_path(table) + "*")  # no takeover marker left behind
    assert lost_files(table) == set()


def dead_pid():
    """A pid no process has now: a child that has exited and been reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    try:
        os.kill(child.pid, 0)
    except ProcessLookupError:
        return child.pid
    pytest.skip("not applicable here: the pid of an exited child was reused at once")


def test_lease_of_a_dead_run_on_this_host_is_taken_over_at_once(table):
    """A crashed run's lease (this host, its pid gone) does not block the table until it
    expires: it is stale at once and taken over, and the sweep and expiry run. One naming a
    live pid on this host (the test's own) or any pid on another host is refused."""
    victims = strays(table, 2)
    age_all(table["dir"])
    n = len(table["cat"].load_table("ns.t").metadata.snapshots)
    for host, pid in ((socket.gethostname(), os.getpid()), ("other-host", dead_pid())):
        write_lease(table, now_ms() + 600000, host=host, pid=pid)
        for args in (("remove-orphan-files", "ns.t"),
                     ("expire-snapshots", "ns.t", "--older-than", "2099-01-01")):
            p = icm(table, *args, check=False)
            assert p.returncode == 5, p.stderr
            assert f"{host}, pid {pid}" in p.stderr and "--no-lock" in p.stderr, p.stderr
        assert all(v.exists() for v in victims)
        assert len(table["cat"].load_table("ns.t").metadata.snapshots) == n
    write_lease(table, now_ms() + 600000, host=socket.gethostname(), pid=dead_pid(),
                token="dead01")
    p = icm(table, "--json", "remove-orphan-files", "ns.t")
    assert not any(v.exists() for v in victims)
    assert not glob.glob(lease_path(table) + "*")  # taken over, released, no marker left
    assert json.loads(p.stdout)["hidden"] == 0  # its own lease is not a hidden table file
    write_lease(table, now_ms() + 600000, host=socket.gethostname(), pid=dead_pid(),
                token="dead02")
    icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == 1
    assert not glob.glob(lease_path(table) + "*")
    assert lost_files(table) == set()


def test_lease_is_released_after_errors(table):
    strays(table, 1)
    age_all(table["dir"])
    # refused by a safety check inside the run (cutoff less than 24 h ago)
    p = icm(table, "remove-orphan-files", "ns.t", "--older-than", "1h", check=False)
    assert p.returncode == 5, p.stderr
    assert not os.path.exists(lease_path(table))
    # an expiry that fails (unknown snapshot id)
    p = icm(table, "expire-snapshots", "ns.t", "--snapshot-id", "12345", check=False)
    assert p.returncode == 1, p.stderr
    assert not os.path.exists(lease_path(table))


def test_dry_run_takes_no_lease(table):
    victims = strays(table, 1)
    age_all(table["dir"])
    write_lease(table, now_ms() + 600000)
    p = icm(table, "--json", "remove-orphan-files", "ns.t", "--dry-run")
    assert [o["path"] for o in json.loads(p.stdout)["orphans"]] == [f"file://{victims[0]}"]
    icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--dry-run")
    assert victims[0].exists()
    with open(lease_path(table)) as f:
        assert json.load(f)["host"] == "other-host"  # untouched


# ---- already_gone -----------------------------------------------------------------------------

def test_file_gone_at_delete_time_is_counted_as_already_gone(table, tmp_path):
    """An inventory (--file-list) names a file that no longer exists: it is planned, and at
    delete time it is already gone: counted apart, not as deleted, not an error."""
    victims = strays(table, 1)
    age_all(table["dir"])
    ghost = table["dir"] / "data" / "ghost.parquet"
    old_ms = now_ms() - TEN_DAYS_S * 1000
    lines = []
    for f in glob.glob(str(table["dir"] / "**" / "*"), recursive=True):
        if os.path.isfile(f):
            lines.append(f"file://{f}\t{os.path.getsize(f)}\t{old_ms}")
    lines.append(f"file://{ghost}\t10\t{old_ms}")
    inventory = tmp_path / "inventory.tsv"
    inventory.write_text("\n".join(lines) + "\n")
    journal = tmp_path / "j.jsonl"
    p = icm(table, "--json", "remove-orphan-files", "ns.t", "--file-list", str(inventory),
            "--log-out", str(journal))
    doc = json.loads(p.stdout)
    assert doc["deleted"] == 1 and doc["already_gone"] == 1 and doc["failed"] == 0
    states = {o["path"]: o["state"] for o in doc["orphans"]}
    assert states == {f"file://{victims[0]}": "deleted", f"file://{ghost}": "already_gone"}
    assert sum(doc["counts"].values()) == 1
    rows = [json.loads(x) for x in journal.read_text().splitlines()]
    assert {r["path"]: r["outcome"] for r in rows if r["type"] == "file"} == states
    assert rows[-1]["deleted"] == 1 and rows[-1]["already_gone"] == 1
    assert not victims[0].exists()


def test_lease_stays_put_when_a_commit_moves_the_metadata_folder(table, tmp_path):
    """The lease lives in <location>/metadata, not beside the current metadata file (before:
    a commit that moved write.metadata.path let a second run take a lease in the new
    folder and sweep beside the first). A held lease still refuses after such a commit, and
    a table whose metadata is elsewhere from its first commit takes it there too."""
    victims = strays(table, 2)
    age_all(table["dir"])
    write_lease(table, now_ms() + 600000)
    held = lease_path(table)
    meta2 = tmp_path / "meta2"
    meta2.mkdir()
    t = table["cat"].load_table("ns.t")
    with t.transaction() as tx:
        tx.set_properties({"write.metadata.path": f"file://{meta2}"})
    assert table["cat"].load_table("ns.t").metadata_location.startswith(f"file://{meta2}/")
    assert lease_path(table) == held
    for args in (("remove-orphan-files", "ns.t"), ("remove-orphan-files", "ns.t", "--location",
                                                   str(table["dir"] / "data")),
                 ("expire-snapshots", "ns.t", "--older-than", "2099-01-01")):
        p = icm(table, *args, check=False)
        assert p.returncode == 5, (args, p.stderr)
        assert "other-host" in p.stderr and "--no-lock" in p.stderr, p.stderr
    assert all(v.exists() for v in victims)
    assert not any(LEASE in f for f in os.listdir(meta2))
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == 3
    os.unlink(held)
    icm(table, "remove-orphan-files", "ns.t")
    assert not any(v.exists() for v in victims)
    assert not os.path.exists(held)
    assert lost_files(table) == set()


# ---- the --log-out journal --------------------------------------------------------------------

def test_journal_lists_every_deleted_file_then_a_summary(table, tmp_path):
    victims = strays(table, 3)
    age_all(table["dir"])
    journal = tmp_path / "sweep.jsonl"
    icm(table, "remove-orphan-files", "ns.t", "--log-out", str(journal))
    rows = [json.loads(x) for x in journal.read_text().splitlines()]
    files = rows[:-1]
    assert sorted(r["path"] for r in files) == sorted(f"file://{v}" for v in victims)
    for r in files:
        assert set(r) == {"type", "command", "path", "kind", "size_bytes", "outcome", "error",
                          "time_ms"}
        assert (r["type"], r["command"], r["kind"], r["outcome"], r["error"]) == \
            ("file", "remove-orphan-files", "data", "deleted", None)
        assert r["size_bytes"] == len(b"not referenced 0")
    s = rows[-1]
    assert (s["type"], s["deleted"], s["already_gone"], s["failed"], s["complete"],
            s["exit_code"], s["report"], s["table"]) == \
        ("summary", 3, 0, 0, True, 0, "printed", "ns.t")
    assert s["bytes_deleted"] == 3 * len(b"not referenced 0")

    # expiry: one line per file it deleted, the same files its JSON report lists
    journal2 = tmp_path / "expire.jsonl"
    p = icm(table, "--json", "expire-snapshots", "ns.t", "--older-than", "2099-01-01",
            "--log-out", str(journal2))
    doc = json.loads(p.stdout)
    reported = {f["path"] for k in ("deleted_files", "deleted_manifests",
                                    "deleted_statistics_files") for f in doc[k]}
    rows = [json.loads(x) for x in journal2.read_text().splitlines()]
    assert reported and {r["path"] for r in rows[:-1]} == reported
    assert all(r["outcome"] == "deleted" and r["command"] == "expire-snapshots"
               for r in rows[:-1])
    assert rows[-1]["type"] == "summary" and rows[-1]["deleted"] == len(reported)
    assert not any(os.path.exists(x.replace("file://", "")) for x in reported)
    assert lost_files(table) == set()


def test_bad_log_out_path_stops_before_any_delete(table, tmp_path):
    victims = strays(table, 2)
    age_all(table["dir"])
    n = len(table["cat"].load_table("ns.t").metadata.snapshots)
    bad = str(tmp_path / "no-such-dir" / "j.jsonl")
    for args in (("remove-orphan-files", "ns.t"),
                 ("expire-snapshots", "ns.t", "--older-than", "2099-01-01")):
        p = icm(table, *args, "--log-out", bad, check=False)
        assert p.returncode == 1, p.stderr
        assert bad in p.stderr and p.stderr.count("\n") == 1
    assert all(v.exists() for v in victims)
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == n
    assert not os.path.exists(lease_path(table))


def test_log_out_never_writes_into_a_table_file_nor_a_file_that_is_not_a_journal(table,
                                                                                tmp_path):
    """--log-out gets --plan-out's rule (before: journal lines appended to the
    current metadata file, or after a live Parquet file's footer, broke the table): a FILE
    inside the table's location (existing or not) or an existing FILE that is not an earlier
    journal is refused (exit 5) before anything is done, and left byte for byte as it was; an
    earlier journal is appended to."""
    victims = strays(table, 2)
    age_all(table["dir"])
    t = table["cat"].load_table("ns.t")
    live = t.scan().plan_files()[0].file.file_path.replace("file://", "")
    current = t.metadata_location.replace("file://", "")
    not_a_journal = tmp_path / "notes.txt"
    not_a_journal.write_text("my notes\n")
    targets = [current, live, str(table["wh"] / "cat.db"), str(not_a_journal),
               str(table["dir"] / "data" / "journal.jsonl")]
    before = {f: open(f, "rb").read() for f in targets if os.path.exists(f)}
    files_before = {p for p in glob.glob(str(table["wh"] / "**" / "*"), recursive=True)}
    for target in targets:
        for args in (("remove-orphan-files", "ns.t"), ("remove-orphan-files", "ns.t", "--dry-run"),
                     ("expire-snapshots", "ns.t", "--older-than", "2099-01-01")):
            p = icm(table, *args, "--log-out", target, check=False)
            assert p.returncode == 5, (target, args, p.stderr)
            assert "--log-out" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert {f: open(f, "rb").read() for f in targets if os.path.exists(f)} == before
    assert {p for p in glob.glob(str(table["wh"] / "**" / "*"), recursive=True)} == files_before
    assert all(v.exists() for v in victims)
    assert len(table["cat"].load_table("ns.t").metadata.snapshots) == 3
    assert lost_files(table) == set()
    read_every_snapshot(table)

    journal = tmp_path / "j.jsonl"
    icm(table, "remove-orphan-files", "ns.t", "--dry-run", "--log-out", str(journal))
    icm(table, "remove-orphan-files", "ns.t", "--log-out", str(journal))
    rows = [json.loads(x) for x in journal.read_text().splitlines()]
    assert [r["type"] for r in rows] == ["summary", "file", "file", "summary"]
    assert not any(v.exists() for v in victims)
    assert lost_files(table) == set()


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_report_failure_after_deletes_keeps_the_journal_complete(table, tmp_path, stdout):
    victims = strays(table, 3)
    age_all(table["dir"])
    journal = tmp_path / "j.jsonl"
    args = cli_args(table, "remove-orphan-files", "ns.t", "--log-out", str(journal))
    if stdout == "closed":
        p = subprocess.run(["sh", "-c", '"$@" >&-', "sh", *args], capture_output=False,
                           stderr=subprocess.PIPE, text=True)
    else:
        with open("/dev/full", "w") as full:
            p = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 1, p.stderr
    assert "report could not be printed" in p.stderr and "3 orphan files were deleted" in p.stderr
    assert not any(v.exists() for v in victims)
    rows = [json.loads(x) for x in journal.read_text().splitlines()]
    assert sorted(r["path"] for r in rows[:-1]) == sorted(f"file://{v}" for v in victims)
    assert rows[-1]["type"] == "summary" and rows[-1]["deleted"] == 3
    assert rows[-1]["report"] == "failed" and rows[-1]["exit_code"] == 1
    assert lost_files(table) == set()

"""`icemaint expire-snapshots` judged by real engines, on every generated shape, with several
option sets (issue "Snapshot expiry", Interop).

For each option set, on the same pristine state of every table (Warehouse.save/restore):

1. icemaint plans with `--dry-run`, then expires for real with the same options (through the SQL
   catalog, `ns.table`). The dry run's plan (expired ids, every path) must equal what the real run
   reports, and every reported path must be gone from disk.
2. The judges (oracle.check_after): every table loads in PyIceberg and Java, every retained
   snapshot reads as before in PyIceberg, DuckDB and Java, every reachable file exists, and
   exactly the reported snapshots are gone.
3. Java differential: on the restored pristine state, Java's ExpireSnapshots (reachable cleanup,
   the file semantics icemaint implements) runs with the same options and the same "now" (the
   `now_ms` icemaint reports; Java's clock is fixed through IcmExpireControl). Both must expire
   the same snapshots, leave the same refs and delete exactly the same set of paths. All Java
   jobs of one option set run in one JVM (ExpireBatch).

The one documented difference: icemaint never leaves fewer than retain_last snapshots (rule 3 of
docs/semantics.md#expiry-snapshot-retention), Java only counts the snapshots of each branch's
ancestry. When Java leaves fewer, icemaint must additionally keep exactly the newest of the
snapshots Java expired (oldest-first order: timestamp, then sequence number, then id), and
delete Java's paths minus those the topped-up snapshots still reach; the `rollback` shape with retain_last 3 (main's ancestry has 2 snapshots) shows it.

Cutoffs are absolute epoch-ms values (never a duration), so "now" only matters for ref ages, and
both engines use the same one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

import javajudge
import oracle
import shapes
from warehouse import Warehouse

FAR_FUTURE_MS = 4_102_444_800_000  # 2100-01-01T00:00:00Z: every snapshot is older


def _sorted_snapshots(md) -> list:
    """Oldest first, in icemaint's order (timestamp, sequence number, id)."""
    return sorted(md.snapshots,
                  key=lambda s: (s.timestamp_ms, s.sequence_number or 0, s.snapshot_id))


def _oldest_non_ref(md) -> list[int]:
    """The oldest snapshot no ref points at and that is not current, or none."""
    heads = {r.snapshot_id for r in md.refs.values()} | {md.current_snapshot_id}
    free = [s.snapshot_id for s in _sorted_snapshots(md) if s.snapshot_id not in heads]
    return free[:1]


# option set -> options for both engines, given the table's pristine metadata.
Options = Callable[[object], dict]
CASES: dict[str, Options] = {
    # everything old: only what the refs and retain_last protect stays; unused schemas/specs go
    "far_future_retain_1": lambda md: dict(older_than_ms=FAR_FUTURE_MS, retain_last=1,
                                           clean_expired_metadata=True),
    "far_future_retain_2": lambda md: dict(older_than_ms=FAR_FUTURE_MS, retain_last=2),
    # the rollback shape's main has 2 ancestors: the documented retain_last difference
    "far_future_retain_3": lambda md: dict(older_than_ms=FAR_FUTURE_MS, retain_last=3),
    # only the named snapshot goes: the cutoff is before every snapshot
    "explicit_snapshot_id": lambda md: dict(
        older_than_ms=min(s.timestamp_ms for s in md.snapshots) - 1, retain_last=1,
        snapshot_ids=_oldest_non_ref(md)),
    # the older half by time; the newer half and everything the refs protect stay
    "older_half": lambda md: dict(
        older_than_ms=_sorted_snapshots(md)[len(md.snapshots) // 2].timestamp_ms, retain_last=1),
}


# ---- running the engines ---------------------------------------------------------------------

def _cli_args(opts: dict) -> list[str]:
    args = ["--older-than", str(opts["older_than_ms"]), "--retain-last", str(opts["retain_last"])]
    for sid in opts.get("snapshot_ids", ()):
        args += ["--snapshot-id", str(sid)]
    if opts.get("clean_expired_metadata"):
        args.append("--clean-expired-metadata")
    return args


def _icemaint(cli: Path, wh: Warehouse, table: str, opts: dict, dry_run: bool) -> dict:
    """Runs the command with --json and --plan-out; the two documents must be the same."""
    plan = wh.root.parent / f"plan-{table}-{'dry' if dry_run else 'real'}.json"
    cmd = [str(cli), *wh.icemaint_args(), "--json", "expire-snapshots", table, *_cli_args(opts),
           "--plan-out", str(plan)]
    if dry_run:
        cmd.append("--dry-run")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\nexit {proc.returncode}: {proc.stderr}"
    doc = json.loads(proc.stdout)
    assert json.loads(plan.read_text()) == doc, f"{table}: --plan-out differs from --json"
    plan.unlink()
    return doc


def _java_job(wh: Warehouse, table: str, opts: dict, now_ms: int) -> list[str]:
    """One ExpireDiff command line (see oracle.expire_with_java for the option names)."""
    args = [*wh.java_args(), "--table", table, "--cleanup-strategy", "reachable",
            "--now-ms", str(now_ms), "--older-than-ms", str(opts["older_than_ms"]),
            "--retain-last", str(opts["retain_last"])]
    for sid in opts.get("snapshot_ids", ()):
        args += ["--snapshot-id", str(sid)]
    if opts.get("clean_expired_metadata"):
        args.append("--clean-expired-metadata")
    return args


def _java_batch(wh: Warehouse, jobs: list[list[str]], work: Path) -> dict[str, dict]:
    """Runs every job in one JVM; table name -> ExpireDiff's result."""
    jobs_file = work / "java-jobs.tsv"
    jobs_file.write_text("".join("\t".join(j) + "\n" for j in jobs))
    out = {doc["table"]: doc for doc in javajudge.run("ExpireBatch", [str(jobs_file)])}
    errors = {t: d["error"] for t, d in out.items() if "error" in d}
    assert not errors, f"Java's ExpireSnapshots failed: {errors}"
    return out


# ---- reading results -------------------------------------------------------------------------

def _paths(doc: dict) -> set[str]:
    """Every path an icemaint report names (data/delete files, manifests and lists, statistics),
    as a local path: Java (Hadoop) writes `file:/p`, PyIceberg `file:///p`."""
    return {oracle.local_path(f["path"])
            for key in ("deleted_files", "deleted_manifests", "deleted_statistics_files")
            for f in doc[key]}


def _crc(path: str) -> Path:
    """The checksum file Hadoop's local file system writes next to `path` (Java tables)."""
    p = Path(path)
    return p.parent / f".{p.name}.crc"


def _snapshot_reach(table, snapshot_id: int) -> set[str]:
    """What one snapshot reaches: its manifest list, manifests, live data and delete files, and
    the statistics files recorded for it."""
    io, md = table.io, table.metadata
    snap = md.snapshot_by_id(snapshot_id)
    out = {oracle.local_path(snap.manifest_list)}
    for m in snap.manifests(io):
        out.add(oracle.local_path(m.manifest_path))
        out.update(oracle.local_path(e.data_file.file_path)
                   for e in m.fetch_manifest_entry(io, discard_deleted=True))
    out.update(oracle.local_path(s.statistics_path) for s in md.statistics
               if s.snapshot_id == snapshot_id)
    out.update(oracle.local_path(s.statistics_path) for s in md.partition_statistics
               if s.snapshot_id == snapshot_id)
    return out


def _documented_topup(md, java: dict, opts: dict) -> list[int]:
    """Snapshots icemaint keeps beyond Java to leave at least retain_last: the newest of those
    Java expired that were not named explicitly (empty when Java left enough)."""
    missing = opts["retain_last"] - len(java["retained"])
    if missing <= 0:
        return []
    named = set(opts.get("snapshot_ids", ()))
    candidates = [s.snapshot_id for s in _sorted_snapshots(md)
                  if s.snapshot_id in set(java["expired"]) and s.snapshot_id not in named]
    return candidates[-missing:] if candidates else []


# ---- the module's warehouse ------------------------------------------------------------------

@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """Every shape built once, judged once, and saved; each case restores this state."""
    work = tmp_path_factory.mktemp("expire-judges")
    wh = Warehouse(work / "warehouse")
    chosen = shapes.build(wh)
    judges = shapes.judges(chosen.values())
    before = oracle.capture(wh, judges)
    saved = work / "pristine"
    wh.save(saved)
    cat = wh.catalog()
    tables = {name: cat.load_table(name) for name in judges}
    yield wh, judges, before, saved, tables
    shutil.rmtree(saved, ignore_errors=True)


@pytest.fixture(scope="module")
def results(pristine, icemaint_cli, tmp_path_factory):
    """Per case: icemaint's dry-run and real reports, the table states after its run, the
    judges' verdict, and Java's results on the same pristine state."""
    wh, judges, before, saved, tables = pristine
    work = tmp_path_factory.mktemp("expire-judges-work")
    out = {}
    for case, make in CASES.items():
        wh.restore(saved)
        opts = {name: make(t.metadata) for name, t in tables.items()}
        # a table with no snapshot that may be named explicitly takes no part in that case
        opts = {n: o for n, o in opts.items() if o.get("snapshot_ids", [0])}
        dry = {n: _icemaint(icemaint_cli, wh, n, o, dry_run=True) for n, o in opts.items()}
        real = {n: _icemaint(icemaint_cli, wh, n, o, dry_run=False) for n, o in opts.items()}
        gone_from_disk = {n: sorted(p for p in _paths(real[n]) if Path(p).exists())
                          for n in opts}
        # Hadoop's side checksums (`.NAME.crc`) of the files icemaint deleted, still on disk
        crc_left = {n: sorted(p for p in _paths(real[n]) if _crc(p).exists()) for n in opts}
        cat = wh.catalog()
        loaded = {n: cat.load_table(n) for n in opts}
        after_md = {n: t.metadata for n, t in loaded.items()}
        after_location = {n: t.metadata_location for n, t in loaded.items()}
        verdict = None
        try:
            oracle.check_after({n: before[n] for n in opts}, wh,
                               {n: judges[n] for n in opts},
                               expired={n: set(real[n]["expired"]) for n in opts})
        except AssertionError as e:
            verdict = str(e)
        wh.restore(saved)
        java = _java_batch(wh, [_java_job(wh, n, o, real[n]["now_ms"]) for n, o in opts.items()],
                           work)
        out[case] = dict(opts=opts, dry=dry, real=real, still_on_disk=gone_from_disk, crc_left=crc_left,
                         after_md=after_md, after_location=after_location, verdict=verdict, java=java)
    wh.restore(saved)
    return out


# ---- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", list(CASES))
def test_dry_run_plans_exactly_what_the_real_run_does(case, results):
    r = results[case]
    problems = []
    for name in r["opts"]:
        dry, real = r["dry"][name], r["real"][name]
        assert dry["dry_run"] is True and real["dry_run"] is False
        if dry["expired"] != real["expired"] or dry["retained"] != real["retained"]:
            problems.append(f"{name}: dry run expires {dry['expired']} keeps {dry['retained']}, "
                            f"real run {real['expired']} / {real['retained']}")
        if _paths(dry) != _paths(real):
            problems.append(f"{name}: only planned {sorted(_paths(dry) - _paths(real))}; "
                            f"only deleted {sorted(_paths(real) - _paths(dry))}")
        if r["still_on_disk"][name]:
            problems.append(f"{name}: reported deleted but still on disk: "
                            f"{r['still_on_disk'][name]}")
        if "metadata_location" in dry:
            problems.append(f"{name}: a dry run names a committed metadata_location")
        # nothing to expire commits nothing; otherwise the report names the new current file
        committed = real.get("metadata_location")
        if real["expired"] and committed != r["after_location"][name]:
            problems.append(f"{name}: real run reports metadata_location {committed}, the "
                            f"catalog's current one is {r['after_location'][name]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", list(CASES))
def test_judges_read_every_retained_snapshot_the_same(case, results):
    r = results[case]
    assert r["verdict"] is None, r["verdict"]
    # the case really expired something somewhere, or the check proves little
    assert sum(len(d["expired"]) for d in r["real"].values()) > 0


@pytest.mark.parametrize("case", list(CASES))
def test_same_result_as_java(case, results, pristine):
    tables = pristine[4]
    r = results[case]
    problems, differences_seen = [], 0
    for name, opts in r["opts"].items():
        mine, java = r["real"][name], r["java"][name]
        md = tables[name].metadata
        topup = _documented_topup(md, java, opts)
        differences_seen += bool(topup)
        want_expired = [i for i in java["expired"] if i not in set(topup)]
        want_deleted = {oracle.local_path(p) for p in java["deleted_paths"]}
        for sid in topup:
            want_deleted -= _snapshot_reach(tables[name], sid)
        if sorted(mine["expired"]) != sorted(want_expired):
            problems.append(f"{name}: icemaint expired {sorted(mine['expired'])}, expected "
                            f"{sorted(want_expired)} (Java {sorted(java['expired'])}, "
                            f"documented top-up {topup})")
        if _paths(mine) != want_deleted:
            problems.append(f"{name}: only icemaint deleted {sorted(_paths(mine) - want_deleted)}"
                            f"; only expected {sorted(want_deleted - _paths(mine))}")
        refs_left = sorted(r["after_md"][name].refs)
        if refs_left != java["refs"]:
            problems.append(f"{name}: refs left {refs_left}, Java {java['refs']}")
        remaining = len(r["after_md"][name].snapshots)
        if remaining < min(opts["retain_last"], len(md.snapshots)) and not opts.get("snapshot_ids"):
            problems.append(f"{name}: {remaining} snapshots left, fewer than retain_last "
                            f"{opts['retain_last']}")
    assert not problems, "\n".join(problems)
    # the comparison is not vacuous: Java deleted files in this case
    assert sum(len(r["java"][n]["deleted_paths"]) for n in r["opts"]) > 0
    if case == "far_future_retain_3":
        # the documented difference must actually be exercised (by the rollback shape)
        assert differences_seen >= 1
        assert _documented_topup(tables["py.rollback"].metadata, r["java"]["py.rollback"],
                                 r["opts"]["py.rollback"])


def test_every_shape_took_part(results):
    """Every table of every shape ran in the age-based cases; the explicit-id case skips only
    tables with no snapshot outside the refs."""
    for case in ("far_future_retain_1", "far_future_retain_2", "far_future_retain_3",
                 "older_half"):
        assert set(results[case]["opts"]) == set(shapes.judges(shapes.SHAPES.values()))
    assert len(results["explicit_snapshot_id"]["opts"]) >= 8


def test_hadoop_checksums_go_with_deleted_files(results):
    """Java (Hadoop's local file system) writes `.NAME.crc` next to every file and deletes it
    with the file; so does icemaint's local FileIO, so no checksum of a file it deleted is left
    (remove-orphan-files would never collect one: a hidden name). PyIceberg writes none."""
    r = results["far_future_retain_1"]
    for name in r["opts"]:
        deleted = _paths(r["real"][name])
        if name.startswith("java."):
            assert deleted, name
        assert r["crc_left"][name] == [], name

"""`icemaint remove-orphan-files` judged by real engines, on every generated shape plus planted
strays (issue "Orphan sweep", Interop).

Times are set with os.utime relative to the wall clock at the start of the module:
  * every file the writers made is left as written (seconds old), planted "old" strays are 3 hours
    old, "new" strays are brand new;
  * sweep 1, per table: `--dry-run`, then the real sweep, both with `--older-than NOW-1h --force`
    (the cutoff is less than 24 h ago, so --force is needed). Exactly the old visible strays are
    candidates: the dry run must list exactly them and delete nothing; the real sweep must
    delete exactly them. New strays, hidden strays (`data/.hidden/`, `_temporary/`, `.x.crc`) and
    every file of the table survive, including the failed commit's leftovers (still young);
  * sweep 2, per table: every file is aged by 3 hours except the new strays, then the same sweep:
    exactly the files an independent computation (PyIceberg) calls unreferenced are deleted,
    which includes the never-committed append of `failed_commit` and the metadata files that fell
    out of `metadata_log_truncated`'s log;
  * after both sweeps, every judge reads every snapshot of every table as before, every reachable
    file exists, no snapshot is gone (oracle.check_after).

Java (Hadoop) writes a hidden `.NAME.crc` next to every file. Those names start with `.`, so the
sweep treats them as hidden and never deletes one as an orphan of its own; the checksum of a
stray it deletes is planned right after it (kind "checksum") and deleted with it, as Hadoop's
file system deletes both: asserted below.

A separate test commits with PyIceberg in a thread while sweeps run: nothing the writer commits is
deleted, and every snapshot it made reads in full. A sweep may catch the writer's new metadata
file half-written; it then refuses (exit 5, "cannot read this metadata file to tell whether
another table lives under ...") and deletes nothing. The test accepts exactly that refusal, and
only when it names one of the writer's own metadata files.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

import oracle
import shapes
from warehouse import Warehouse

HOUR = 3600


def _sweep(cli: Path, wh: Warehouse, table: str, cutoff_ms: int, dry_run: bool) -> dict:
    cmd = [str(cli), *wh.icemaint_args(), "--json", "remove-orphan-files", table,
           "--older-than", str(cutoff_ms), "--force"]
    if dry_run:
        cmd.append("--dry-run")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\nexit {proc.returncode}: {proc.stderr}"
    return json.loads(proc.stdout)


# The refusal a sweep gives when a writer's new metadata file is caught half-written (see the
# writer test and the report: a liveness problem, never a deletion).
IN_FLIGHT_REFUSAL = "cannot read this metadata file to tell whether another table lives under"


def _sweep_proc(cli: Path, wh: Warehouse, table: str, cutoff_ms: int):
    # --settle 0s: these judges test the cutoff and the keep set; a writer's files here are
    # younger than the cutoff, and the settle time (which makes a sweep that deletes take at
    # least 2 s) has its own race test (tests/py/test_safety_racing_writers.py).
    cmd = [str(cli), *wh.icemaint_args(), "--json", "remove-orphan-files", table,
           "--older-than", str(cutoff_ms), "--force", "--settle", "0s"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def _orphan_paths(doc: dict) -> set[str]:
    """The orphans proper (not the checksum companions planned with them)."""
    return {oracle.local_path(o["path"]) for o in doc["orphans"] if o["kind"] != "checksum"}


def _checksum_paths(doc: dict) -> set[str]:
    """The checksum companions: each listed right after the file it belongs to."""
    orphans = doc["orphans"]
    out = set()
    for i, o in enumerate(orphans):
        if o["kind"] == "checksum":
            crc = oracle.local_path(o["path"])
            assert i > 0 and _crc_of_target(crc) == oracle.local_path(orphans[i - 1]["path"])
            out.add(crc)
    return out


def _files(root: Path) -> set[str]:
    return {str(Path(d) / f) for d, _, fs in os.walk(root) for f in fs}


def _crc_of(path: str) -> str:
    """The checksum file Hadoop's local file system keeps next to `path` (and deletes with it,
    as icemaint does)."""
    p = Path(path)
    return str(p.parent / f".{p.name}.crc")


def _crc_of_target(crc: str) -> str:
    """The file a Hadoop checksum `.NAME.crc` belongs to."""
    p = Path(crc)
    return str(p.parent / p.name[1:-len(".crc")])


def _hidden(root: Path, path: str) -> bool:
    """A component below the table root starts with `_` or `.` (no shape has a partition field
    whose name does)."""
    return any(c.startswith(("_", ".")) for c in Path(path).relative_to(root).parts)


def _set_mtime(paths, when: float) -> None:
    for p in paths:
        os.utime(p, (when, when))


def _plant(root: Path, partition_dir: str, when: float, tag: str) -> tuple[list[str], list[str]]:
    """Strays in one table folder, all with mtime `when`; returns (visible, hidden) paths."""
    visible = [root / "data" / f"{tag}-stray.parquet",
               root / "data" / partition_dir / f"{tag}-stray.parquet",
               root / "data" / "junk" / "deeper" / f"{tag}-stray.bin",
               root / "metadata" / f"snap-9-1-{tag}-leftover.avro",
               root / f"{tag}-at-table-root.txt"]
    hidden = [root / "data" / ".hidden" / f"{tag}.parquet",
              root / "data" / "_temporary" / "0" / f"{tag}.parquet",
              root / "_temporary" / f"{tag}.parquet",
              root / "data" / f".{tag}-stray.parquet.crc",  # what Hadoop writes next to a file
              root / "metadata" / f".{tag}.metadata.json.crc"]
    for p in visible + hidden:
        p.parent.mkdir(parents=True, exist_ok=True)
        # a checksum file starts with Hadoop's "crc\0" header, as the ones Java writes do
        head = b"crc\x00" if p.name.endswith(".crc") else b""
        p.write_bytes(head + b"stray " + tag.encode())
    _set_mtime(visible + hidden, when)
    return [str(p) for p in visible], [str(p) for p in hidden]


def _unreferenced(table, root: Path) -> set[str]:
    """Independent of icemaint: visible files under the table folder that the current metadata
    does not reach (oracle.reachable_files), that are not in its metadata log and not
    version-hint.text."""
    keep = {oracle.local_path(p) for p in oracle.reachable_files(table)}
    keep.update(oracle.local_path(e.metadata_file) for e in table.metadata.metadata_log)
    keep.add(str(root / "metadata" / "version-hint.text"))
    return {p for p in _files(root) - keep if not _hidden(root, p)}


@pytest.fixture(scope="module")
def swept(tmp_path_factory, icemaint_cli):
    wh = Warehouse(tmp_path_factory.mktemp("orphans-judges") / "warehouse")
    chosen = shapes.build(wh)
    judges = shapes.judges(chosen.values())
    before = oracle.capture(wh, judges)
    cat = wh.catalog()
    roots = {n: Path(oracle.local_path(cat.load_table(n).metadata.location)) for n in judges}
    now = time.time()
    table_files = {n: _files(r) for n, r in roots.items()}  # what the writers left
    old_visible, old_hidden, new_visible, new_hidden = {}, {}, {}, {}
    for n, root in roots.items():
        old_visible[n], old_hidden[n] = _plant(root, "category=z", now - 3 * HOUR, "old")
        new_visible[n], new_hidden[n] = _plant(root, "category=z", now, "new")
    cutoff_ms = int((now - HOUR) * 1000)

    # sweep 1: only the old strays are old enough
    dry1 = {n: _sweep(icemaint_cli, wh, n, cutoff_ms, dry_run=True) for n in judges}
    on_disk_after_dry = {n: _files(r) for n, r in roots.items()}
    real1 = {n: _sweep(icemaint_cli, wh, n, cutoff_ms, dry_run=False) for n in judges}
    on_disk1 = {n: _files(r) for n, r in roots.items()}

    # sweep 2: everything but the new strays is old now
    for n, root in roots.items():
        _set_mtime(_files(root) - set(new_visible[n]) - set(new_hidden[n]), now - 3 * HOUR)
    expected2 = {n: _unreferenced(cat.load_table(n), root) - set(new_visible[n])
                 for n, root in roots.items()}
    real2 = {n: _sweep(icemaint_cli, wh, n, cutoff_ms, dry_run=False) for n in judges}
    on_disk2 = {n: _files(r) for n, r in roots.items()}
    verdict = None
    try:
        oracle.check_after(before, wh, judges)
    except AssertionError as e:
        verdict = str(e)
    return dict(tables=sorted(judges), chosen=chosen, roots=roots, table_files=table_files,
                old_visible=old_visible, old_hidden=old_hidden, new_visible=new_visible,
                new_hidden=new_hidden, dry1=dry1, on_disk_after_dry=on_disk_after_dry,
                real1=real1, on_disk1=on_disk1, expected2=expected2, real2=real2,
                on_disk2=on_disk2, verdict=verdict)


def test_dry_run_lists_exactly_the_old_visible_strays_and_deletes_nothing(swept):
    for n in swept["tables"]:
        doc = swept["dry1"][n]
        assert doc["dry_run"] is True, n
        assert _orphan_paths(doc) == set(swept["old_visible"][n]), n
        # the one planted stray with a real checksum beside it: planned with it
        assert _checksum_paths(doc) == {_crc_of(swept["old_visible"][n][0])}, n
        assert all(o["state"] == "planned" for o in doc["orphans"]), n
        # nothing changed on disk
        everything = (swept["table_files"][n] | set(swept["old_visible"][n])
                      | set(swept["old_hidden"][n]) | set(swept["new_visible"][n])
                      | set(swept["new_hidden"][n]))
        assert swept["on_disk_after_dry"][n] == everything, n


def test_real_sweep_deletes_exactly_the_old_visible_strays(swept):
    for n in swept["tables"]:
        doc = swept["real1"][n]
        assert doc["dry_run"] is False, n
        assert _orphan_paths(doc) == _orphan_paths(swept["dry1"][n]), n  # the plan held
        assert _checksum_paths(doc) == _checksum_paths(swept["dry1"][n]), n
        assert doc["deleted"] == len(swept["old_visible"][n]) + 1 and doc["failed"] == 0, n
        survivors = (swept["table_files"][n] | set(swept["old_hidden"][n])
                     | set(swept["new_visible"][n]) | set(swept["new_hidden"][n]))
        survivors -= {_crc_of(p) for p in swept["old_visible"][n]}  # went with their files
        assert swept["on_disk1"][n] == survivors, n


def test_failed_commit_leftovers_survive_while_young_and_go_once_old(swept):
    n = "py.failed_commit"
    leftovers = swept["expected2"][n]
    # the never-committed append: its data file, manifest and manifest list
    assert any(p.endswith(".parquet") for p in leftovers), leftovers
    assert any(Path(p).name.startswith("snap-") for p in leftovers), leftovers
    assert len(leftovers) >= 3, leftovers
    assert leftovers <= swept["table_files"][n]  # the writer made them, we did not plant them
    assert leftovers <= swept["on_disk1"][n]  # young: sweep 1 kept them
    assert _orphan_paths(swept["real2"][n]) == leftovers
    assert not leftovers & swept["on_disk2"][n]


def test_aged_sweep_deletes_exactly_the_unreferenced_files(swept):
    # metadata_log_truncated's dropped metadata files are unreferenced once old
    assert any(p.endswith(".metadata.json") for p in swept["expected2"]["py.metadata_log_truncated"])
    for n in swept["tables"]:
        got = _orphan_paths(swept["real2"][n])
        crcs = _checksum_paths(swept["real2"][n])
        assert got == swept["expected2"][n], n
        assert crcs == {_crc_of(p) for p in got} & swept["on_disk1"][n], n
        assert swept["real2"][n]["deleted"] == len(got) + len(crcs), n
        assert swept["on_disk2"][n] == swept["on_disk1"][n] - got - crcs, n
        assert set(swept["new_visible"][n]) <= swept["on_disk2"][n], n


def test_every_judge_reads_every_snapshot_the_same(swept):
    assert swept["verdict"] is None, swept["verdict"]


def test_hidden_files_are_never_deleted_but_checksums_go_with_their_files(swept):
    """Hidden files are never orphans. The one hidden file that goes is the Hadoop checksum
    `.NAME.crc` of a file the sweep deletes, as Hadoop's local file system (Java) deletes it."""
    java_tables = [n for n in swept["tables"] if n.startswith("java.")]
    for n in swept["tables"]:
        deleted = _orphan_paths(swept["real1"][n]) | _orphan_paths(swept["real2"][n])
        went_along = {_crc_of(p) for p in deleted}
        for p in swept["old_hidden"][n] + swept["new_hidden"][n]:
            assert (p in swept["on_disk2"][n]) == (p not in went_along), p
    for n in java_tables:
        root = swept["roots"][n]
        deleted = _orphan_paths(swept["real1"][n]) | _orphan_paths(swept["real2"][n])
        crcs = {p for p in swept["table_files"][n] if Path(p).name.endswith(".crc")}
        assert crcs, f"{n}: Java wrote no .crc files"
        assert all(Path(p).name.startswith(".") for p in crcs), n
        # every checksum of a file still there survives both sweeps; the others went along
        kept = {p for p in crcs if _crc_of_target(p) not in deleted}
        assert kept <= swept["on_disk2"][n], n
        assert not (crcs - kept) & swept["on_disk2"][n], n
        # the deleted stray's checksum went with it
        stray = root / "data" / "old-stray.parquet"
        assert str(stray) not in swept["on_disk2"][n]
        assert str(root / "data" / ".old-stray.parquet.crc") not in swept["on_disk2"][n]
    # and no report ever named a hidden path, but for the checksums planned with their files
    for n in swept["tables"]:
        root = swept["roots"][n]
        for doc in (swept["dry1"][n], swept["real1"][n], swept["real2"][n]):
            assert not [p for p in _orphan_paths(doc) if _hidden(root, p)], n
            assert {_crc_of_target(p) for p in _checksum_paths(doc)} <= _orphan_paths(doc), n


def test_a_writer_committing_during_sweeps_loses_nothing(scratch_warehouse, icemaint_cli):
    """PyIceberg appends in a thread while sweeps with a 1-hour cutoff run: the writer's files are
    younger than the cutoff, so none is deleted; the old strays planted first are."""
    wh = scratch_warehouse
    shapes.build(wh, ["append_history"])
    name = "py.append_history"
    cat = wh.catalog()
    root = Path(oracle.local_path(cat.load_table(name).metadata.location))
    now = time.time()
    _set_mtime(_files(root), now - 3 * HOUR)  # the table's existing files are old too
    old_visible, _ = _plant(root, "category=z", now - 3 * HOUR, "old")
    cutoff_ms = int((now - HOUR) * 1000)

    appends = 8
    errors: list[BaseException] = []

    def writer() -> None:
        import random
        try:
            t = wh.catalog().load_table(name)
            rng = random.Random(7)
            for i in range(appends):
                t.append(shapes.rows(rng, 10_000 + i * 5, 5))
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    thread = threading.Thread(target=writer)
    thread.start()
    deleted: set[str] = set()
    sweeps, refusals = 0, []
    while thread.is_alive() or sweeps == 0:
        proc = _sweep_proc(icemaint_cli, wh, name, cutoff_ms)
        sweeps += 1
        if proc.returncode == 5 and IN_FLIGHT_REFUSAL in proc.stderr:
            refusals.append(proc.stderr.strip())  # checked below: a file of this writer's
            continue
        assert proc.returncode == 0, proc.stderr
        deleted |= _orphan_paths(json.loads(proc.stdout))
    thread.join()
    assert not errors, errors
    final = _sweep_proc(icemaint_cli, wh, name, cutoff_ms)  # the writer is done: no refusal
    assert final.returncode == 0, final.stderr
    deleted |= _orphan_paths(json.loads(final.stdout))

    table = wh.catalog().load_table(name)
    writer_metadata = {oracle.local_path(e.metadata_file) for e in table.metadata.metadata_log}
    writer_metadata.add(oracle.local_path(table.metadata_location))
    for msg in refusals:  # only ever the writer's own metadata file, caught mid-write
        named = oracle.local_path(msg.split("icemaint: ", 1)[1].split(": ", 1)[0])
        assert named in writer_metadata, msg
    assert deleted == set(old_visible)
    table = wh.catalog().load_table(name)
    assert sweeps >= 2
    assert len(table.metadata.snapshots) == 12 + appends
    missing = [p for p in oracle.reachable_files(table) if not os.path.exists(oracle.local_path(p))]
    assert not missing
    # every snapshot, old and new, reads in full (5 rows per append)
    counts = [table.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
              for s in table.metadata.snapshots]
    assert counts == [5 * (i + 1) for i in range(12 + appends)]


def test_write_data_path_outside_the_location_and_an_underscore_partition_field(
        scratch_warehouse, icemaint_cli):
    """A PyIceberg table whose data lives under `write.data.path` outside the table location,
    partitioned by identity on a column named `_cat` (folders `_cat=a/`): a sweep of the table
    location never reaches the data folder; a sweep with `--location` set to the data path
    deletes the old strays there, including the one inside `_cat=a/` (a partition folder, not a
    hidden one), keeps the one under `_tmp/` (hidden), and every judge reads every snapshot as
    before."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    wh = scratch_warehouse
    cat = wh.create(("py",))
    data_root = wh.root / "elsewhere" / "data"
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "_cat", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000,
                                        transform=IdentityTransform(), name="_cat"))
    name = "py.underscore"
    t = cat.create_table(name, schema, partition_spec=spec,
                         properties={"write.data.path": data_root.as_uri()})
    for i in range(3):
        t.append(pa.table({"id": pa.array(range(i * 4, i * 4 + 4), pa.int64()),
                           "_cat": pa.array(["a", "b", "a", "b"])}))
    judges = {name: ("pyiceberg", "duckdb", "java")}
    before = oracle.capture(wh, judges)
    table = cat.load_table(name)
    root = Path(oracle.local_path(table.metadata.location))
    referenced = {oracle.local_path(p) for p in oracle.reachable_files(table)}
    assert any(p.startswith(str(data_root / "_cat=a") + "/") for p in referenced)

    now = time.time()
    _set_mtime(_files(wh.root), now - 3 * HOUR)
    in_data = [data_root / "_cat=a" / "old-stray.parquet", data_root / "old-stray.parquet"]
    hidden = data_root / "_tmp" / "old.parquet"
    in_location = root / "data" / "old-stray.parquet"
    for p in [*in_data, hidden, in_location]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"stray")
    _set_mtime([*in_data, hidden, in_location], now - 3 * HOUR)
    cutoff_ms = int((now - HOUR) * 1000)

    def sweep(*extra: str, dry_run: bool) -> set[str]:
        cmd = [str(icemaint_cli), *wh.icemaint_args(), "--json", "remove-orphan-files", name,
               "--older-than", str(cutoff_ms), "--force", *extra]
        if dry_run:
            cmd.append("--dry-run")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return _orphan_paths(json.loads(proc.stdout))

    assert sweep(dry_run=True) == {str(in_location)}
    assert sweep("--location", data_root.as_uri(), dry_run=True) == {str(p) for p in in_data}
    assert sweep(dry_run=False) == {str(in_location)}
    assert sweep("--location", data_root.as_uri(), dry_run=False) == {str(p) for p in in_data}
    assert hidden.exists() and not any(p.exists() for p in [*in_data, in_location])
    assert all(os.path.exists(p) for p in referenced)
    oracle.check_after(before, wh, judges)

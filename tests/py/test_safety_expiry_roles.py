"""Expiry never deletes a file the retained snapshots reference in any role (damaged or crafted
metadata: a path of one role naming a live file of another).

Expiry plans the manifest lists, manifests and statistics / partition-statistics files of
expired snapshots against a keep set of the retained snapshots' lists, manifests and statistics
files; the retained data and delete files were not in it, and with only such candidates the
retained manifests were never read. So an expired snapshot's statistics entry naming a live
data file (a garbled path, an engine bug) got the live file deleted. The rule now: a list,
manifest or statistics candidate that does not lie directly in one of the table's metadata
folders (or lies in one a data folder overlaps) is looked up among the retained manifests'
live entries and kept (problem `live_content`, a warning) when one lists it; when a retained
manifest cannot be read, every such candidate is kept (exit 1). Candidates directly in a
metadata folder no data folder overlaps are decided without reading the retained manifests
(the common case stays cheap: writers never put data files there).

Every table is written by PyIceberg (SQLite catalog) and aged 10 days; the damage is made by
editing the current metadata JSON and pointing the catalog row at the edited copy. After each
run the test asserts exactly which files exist and that PyIceberg scans every retained snapshot.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import uuid

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import age_all, files_under, local, rows_per_snapshot  # noqa: E402

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64())])


class Env:
    def __init__(self, root, appends=3, properties=None):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.wh = root, root / "wh"
        self.wh.mkdir()
        self.db = root / "cat.db"
        (root / "conf").mkdir()
        self.cfg = root / "conf" / ".pyiceberg.yaml"
        self.cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{self.db}\n"
                            f"    warehouse: file://{self.wh}\n")
        self.cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{self.db}",
                                            warehouse=f"file://{self.wh}")
        self.cat.create_namespace("ns")
        t = self.cat.create_table("ns.t", schema=SCHEMA, properties=properties or {})
        for i in range(appends):
            t.append(pa.table({"id": [i, i + 100]}, schema=SCHEMA))
        self.dir = self.wh / "ns" / "t"

    def table(self):
        return self.cat.load_table("ns.t")

    def icm(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        env["HOME"] = str(self.root / "nohome")
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "c", *args],
                              cwd=self.root, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)

    def commit_edit(self, edit):
        """Apply edit(md) to the current metadata JSON, write it as the next metadata file and
        point the catalog row at it (as a writer would commit it)."""
        cur = self.table().metadata_location
        md = json.load(open(local(cur)))
        edit(md)
        md["metadata-log"].append({"timestamp-ms": md["last-updated-ms"], "metadata-file": cur})
        n = len(md["metadata-log"])
        new = os.path.join(os.path.dirname(local(cur)), f"{n:05d}-{uuid.uuid4()}.metadata.json")
        with open(new, "w") as f:
            json.dump(md, f)
        db = sqlite3.connect(self.db)
        db.execute("update iceberg_tables set previous_metadata_location=metadata_location, "
                   "metadata_location=? where table_name='t'", ("file://" + new,))
        db.commit()
        db.close()

    def expire(self, *ids, extra=()):
        return self.icm("expire-snapshots", "ns.t", *[a for i in ids
                                                        for a in ("--snapshot-id", str(i))],
                        *extra)


def snapshots(table):
    """Snapshots oldest first."""
    return sorted(table.metadata.snapshots, key=lambda s: s.sequence_number)


def live_data(table):
    return sorted(f.file.file_path for f in table.scan().plan_files())


def stats_entry(snapshot_id, path):
    return {"snapshot-id": snapshot_id, "statistics-path": path,
            "file-size-in-bytes": os.path.getsize(local(path)), "file-footer-size-in-bytes": 10,
            "blob-metadata": []}


def part_stats_entry(snapshot_id, path):
    return {"snapshot-id": snapshot_id, "statistics-path": path,
            "file-size-in-bytes": os.path.getsize(local(path))}


def add_entry(key, entry):
    return lambda md: md.setdefault(key, []).append(entry)


def rows_of_retained(env):
    return {k: v for k, v in rows_per_snapshot(env.table()).items()}


def assert_kept_as_live(p, victim):
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert os.path.exists(local(victim)), "the live data file was deleted"
    assert "live_content" in p.stderr and local(victim) in p.stderr, p.stderr


# ---- an expired snapshot's statistics entry names a live data file ----

@pytest.mark.parametrize("key", ["statistics", "partition-statistics"])
@pytest.mark.parametrize("spelling", ["as_written", "plain_path"])
@pytest.mark.parametrize("cleanup", ["all", "metadata"])
def test_expired_statistics_path_naming_live_data_file_is_kept(tmp_path, key, spelling, cleanup):
    """The first snapshot's (partition-)statistics entry names the newest live data file (as
    the manifest spells it, or as a plain path): expiring that snapshot deletes its manifest
    list only; the data file stays, reported as `live_content`, and every retained snapshot
    scans as before."""
    env = Env(tmp_path)
    t = env.table()
    first = snapshots(t)[0]
    victim = live_data(t)[-1]
    named = victim if spelling == "as_written" else local(victim)
    entry = (stats_entry if key == "statistics" else part_stats_entry)(first.snapshot_id, victim)
    entry["statistics-path"] = named
    env.commit_edit(add_entry(key, entry))
    age_all(env.wh)
    before = files_under(env.wh)
    rows = {k: v for k, v in rows_of_retained(env).items() if k != first.snapshot_id}

    p = env.expire(first.snapshot_id, extra=("--cleanup", cleanup))
    assert_kept_as_live(p, victim)
    new_md = {local(env.table().metadata_location)}
    assert files_under(env.wh) == (before - {local(first.manifest_list)}) | new_md
    assert os.path.exists(local(victim))
    assert rows_of_retained(env) == rows


def test_statistics_path_naming_live_data_file_in_metadata_folder_is_kept(tmp_path):
    """write.data.path is the metadata folder, so data files lie directly in it: a statistics
    path there is looked up too (a data folder overlaps the metadata folder)."""
    root = tmp_path
    wh = root / "wh"
    env = Env(root, properties={"write.data.path": f"file://{wh}/ns/t/metadata"})
    t = env.table()
    first = snapshots(t)[0]
    victim = live_data(t)[-1]
    assert os.path.dirname(local(victim)) == str(env.dir / "metadata")
    env.commit_edit(add_entry("statistics", stats_entry(first.snapshot_id, victim)))
    age_all(env.wh)
    before = files_under(env.wh)
    rows = {k: v for k, v in rows_of_retained(env).items() if k != first.snapshot_id}

    p = env.expire(first.snapshot_id)
    assert_kept_as_live(p, victim)
    new_md = {local(env.table().metadata_location)}
    assert files_under(env.wh) == (before - {local(first.manifest_list)}) | new_md
    assert rows_of_retained(env) == rows


def test_expired_manifest_list_naming_live_data_file_is_kept(tmp_path):
    """The first snapshot's manifest list names a live data file: it cannot be read as a list,
    so it is kept (problem `unreadable`). (Held already before the role check: a regression
    guard.)"""
    env = Env(tmp_path)
    t = env.table()
    first = snapshots(t)[0]
    victim = live_data(t)[-1]
    rows = {k: v for k, v in rows_of_retained(env).items() if k != first.snapshot_id}

    def edit(md):
        for s in md["snapshots"]:
            if s["snapshot-id"] == first.snapshot_id:
                s["manifest-list"] = victim
    env.commit_edit(edit)
    age_all(env.wh)
    before = files_under(env.wh)

    p = env.expire(first.snapshot_id)
    assert p.returncode == 0, p.stderr
    new_md = {local(env.table().metadata_location)}
    assert files_under(env.wh) == before | new_md
    assert rows_of_retained(env) == rows


def test_unreadable_retained_manifest_keeps_statistics_outside_metadata_folder(tmp_path):
    """A statistics file of an expired snapshot outside the metadata folders must be looked up
    among the retained manifests' entries; one of those cannot be read, so it may be a live
    data file: kept (`live_content`), and the run exits 1 naming the manifest."""
    env = Env(tmp_path)
    t = env.table()
    first, _, last = snapshots(t)
    stats_dir = env.dir / "stats"
    stats_dir.mkdir()
    stats = stats_dir / f"{first.snapshot_id}-{uuid.uuid4()}.stats"
    stats.write_bytes(b"PFA1" + b"\0" * 60)
    env.commit_edit(add_entry("statistics", stats_entry(first.snapshot_id, f"file://{stats}")))
    damaged = local(last.manifests(t.io)[0].manifest_path)
    shutil.copy(damaged, str(tmp_path / "backup.avro"))
    with open(damaged, "wb") as f:
        f.write(b"not an avro file")
    age_all(env.wh)
    before = files_under(env.wh)

    p = env.expire(first.snapshot_id)
    assert os.path.exists(stats), "the statistics file was deleted"
    assert p.returncode == 1, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "live_content" in p.stderr and str(stats) in p.stderr, p.stderr
    assert damaged in p.stderr, p.stderr
    new_md = {local(env.table().metadata_location)}
    assert files_under(env.wh) == (before - {local(first.manifest_list)}) | new_md
    shutil.copy(str(tmp_path / "backup.avro"), damaged)
    assert set(rows_of_retained(env)) == {s.snapshot_id for s in snapshots(t)[1:]}


# ---- control: ordinary statistics files go with their snapshots ----

@pytest.mark.parametrize("place", ["metadata", "elsewhere"])
def test_expiry_deletes_exactly_the_expired_statistics_files(tmp_path, place):
    """Every snapshot has a statistics and a partition-statistics file (in the metadata folder
    as writers put them, or in a folder of their own, which makes the retained manifests be
    read): expiring the first two deletes exactly their manifest lists and statistics files."""
    env = Env(tmp_path)
    t = env.table()
    snaps = snapshots(t)
    folder = env.dir / ("metadata" if place == "metadata" else "stats")
    folder.mkdir(exist_ok=True)
    stats, pstats = {}, {}
    for s in snaps:
        stats[s.snapshot_id] = folder / f"{s.snapshot_id}-{uuid.uuid4()}.stats"
        stats[s.snapshot_id].write_bytes(b"PFA1" + b"\0" * 60)
        pstats[s.snapshot_id] = folder / f"partition-stats-{s.snapshot_id}-{uuid.uuid4()}.parquet"
        pstats[s.snapshot_id].write_bytes(b"PAR1" + b"\0" * 60)

    def edit(md):
        md["statistics"] = [stats_entry(i, f"file://{p}") for i, p in stats.items()]
        md["partition-statistics"] = [part_stats_entry(i, f"file://{p}")
                                      for i, p in pstats.items()]
    env.commit_edit(edit)
    age_all(env.wh)
    before = files_under(env.wh)
    rows = {k: v for k, v in rows_of_retained(env).items() if k == snaps[-1].snapshot_id}

    p = env.expire(snaps[0].snapshot_id, snaps[1].snapshot_id)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    gone = {local(s.manifest_list) for s in snaps[:2]}
    gone |= {str(stats[s.snapshot_id]) for s in snaps[:2]}
    gone |= {str(pstats[s.snapshot_id]) for s in snaps[:2]}
    new_md = {local(env.table().metadata_location)}
    assert files_under(env.wh) == (before - gone) | new_md
    assert rows_of_retained(env) == rows

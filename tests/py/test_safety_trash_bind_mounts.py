"""Data-loss class: a trashed file named through a bind mount of its trash's folder (adversary
round 7, finding 3 and 3b).

add-files and register-table (even with --force) refuse a file inside an icemaint trash
(`<trash>/<table-uuid>/files/...` beside `<table-uuid>/journal/`): `trash expire` deletes it
and `trash restore` moves it away, whatever table references it. The refusal walked up the
file's *name* (and where a link leads), so the same file named through a bind mount of its
folder (one folder at two paths: a container's volume of the trash area) was accepted, and
`trash expire` then deleted the table's file. The mount table now maps the file to its path on
its file system (mountinfo's ROOT), walked up through every mount that reaches the file; a
trash's table folder no mount shows, above a file in its `files/`, refuses as "cannot be
told"; without a mount table a local file is refused the same way.

Each scenario runs in a private mount namespace of the test's own (`unshare --map-root-user
--mount`, as root in CI; test_safety_bind_mounts.in_namespace), where the mounts are made and
icemaint run; each asserts the exit code, the message, and exactly which files exist after
(outside the namespace, where no mount is left)."""
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq

from plan_helpers import SCHEMA, Lake, age, files_under
from test_safety_bind_mounts import in_namespace


def trash_sweep(lake, trash):
    r = lake.icm("--json", "remove-orphan-files", "ns.t", "--settle", "0s", "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    return trash / str(lake.cat.load_table("ns.t").metadata.table_uuid)


def current_snapshot(lake, table="ns.t"):
    return lake.cat.load_table(table).metadata.current_snapshot_id


def assert_refused(res, undone, *phrases):
    assert res.returncode == 5, (res.stdout, res.stderr)
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert f"nothing is {undone}" in res.stderr, res.stderr
    for p in phrases:
        assert p in res.stderr, (p, res.stderr)


def test_data_loss_trashed_file_added_through_bind_mount(tmp_path):
    """ns.t's old Parquet orphan is swept into the trash. Named through a bind mount of its
    folder (files/data at mnt), of its table-uuid folder under another name, through a mount of
    that mount, add-files committed it and `trash expire` then deleted the file of the current
    snapshot. Each is refused now (exit 5, one line naming the trash, nothing committed); with
    the trash itself covered (no mount shows its journal) the file is refused as one that
    cannot be told. Expiring the trash afterwards leaves ns.t whole."""
    lake = Lake(tmp_path, appends=1)
    trash = tmp_path / "trash"
    trash.mkdir()
    lake.parquet_orphan("old.parquet", [41, 42])
    folder = trash_sweep(lake, trash)
    moved = folder / "files" / "data" / "old.parquet"
    assert moved.exists()
    mnt, mnt2, empty = tmp_path / "mnt", tmp_path / "mnt2", tmp_path / "empty"
    for d in (mnt, mnt2, empty):
        d.mkdir()
    snap = current_snapshot(lake)
    before = files_under(tmp_path)
    cases = [
        ([(moved.parent, mnt)], mnt / "old.parquet"),
        ([(folder, mnt)], mnt / "files" / "data" / "old.parquet"),
        ([(moved.parent, mnt), (mnt, mnt2)], mnt2 / "old.parquet"),
    ]
    for mounts, name in cases:
        res = in_namespace(mounts, lake, "add-files", "ns.t", str(name))
        assert_refused(res, "added", f"lies in the icemaint trash {trash}, reached through "
                       "another mount of its folder", f"{moved} on its file system")
        assert current_snapshot(lake) == snap
    # the trash covered (an empty folder mounted over it): its journal shows nowhere
    res = in_namespace([(moved.parent, mnt), (empty, trash)], lake,
                       "add-files", "ns.t", str(mnt / "old.parquet"))
    assert_refused(res, "added", "cannot be told", f"below {folder}, named like an icemaint "
                   "trash's table folder")
    assert current_snapshot(lake) == snap
    assert files_under(tmp_path) == before
    r = lake.icm("trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert not moved.exists()
    assert lake.icm("check", "ns.t").returncode == 0
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 1


def test_data_loss_trashed_metadata_registered_through_bind_mount(tmp_path):
    """3b: a copy of ns.t's current metadata file, unreferenced, is swept into the trash.
    register-table --force of it through a bind mount of its trash folder registered ns.c, whose
    current metadata file `trash expire` then deleted. Refused now (exit 5, nothing registered),
    as by its own name."""
    lake = Lake(tmp_path, appends=1)
    trash = tmp_path / "trash"
    trash.mkdir()
    current = lake.cat.load_table("ns.t").metadata_location.replace("file://", "")
    stray = lake.dir / "metadata" / "99999-stray.metadata.json"
    shutil.copyfile(current, stray)
    age([stray])
    folder = trash_sweep(lake, trash)
    moved = folder / "files" / "metadata" / "99999-stray.metadata.json"
    assert moved.exists() and not stray.exists()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    before = files_under(tmp_path)
    r = lake.icm("register-table", "ns.c", str(moved), "--force")
    assert_refused(r, "registered", f"lies in the icemaint trash {trash}:")
    res = in_namespace([(moved.parent, mnt)], lake, "register-table", "ns.c",
                       str(mnt / moved.name), "--force")
    assert_refused(res, "registered", f"lies in the icemaint trash {trash}, reached through "
                   "another mount of its folder", f"{moved} on its file system")
    assert ("ns", "c") not in lake.cat.list_tables("ns")
    assert files_under(tmp_path) == before


def test_add_files_on_a_file_system_mounted_twice(tmp_path):
    """Not obstructive: the file system holding a new Parquet file is mounted at another place
    too (its folder bind-mounted at mnt). add-files takes it by its own name and through the
    other mount, and a file in a folder merely named like a table-uuid (no journal beside it:
    no trash) through a bind mount of that folder."""
    lake = Lake(tmp_path, appends=1)
    src = tmp_path / "src"
    plain = src / "6f1c2a7e-0b9d-4c3e-9a55-1d2e3f4a5b6c" / "files"
    plain.mkdir(parents=True)
    x, y = src / "x.parquet", plain / "y.parquet"
    pq.write_table(pa.table({"id": [7, 8]}, schema=SCHEMA), str(x))
    pq.write_table(pa.table({"id": [9]}, schema=SCHEMA), str(y))
    mnt, mnt2 = tmp_path / "mnt", tmp_path / "mnt2"
    mnt.mkdir()
    mnt2.mkdir()
    res = in_namespace([(src, mnt)], lake, "add-files", "ns.t", str(x))
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 3
    snap = current_snapshot(lake)
    res = in_namespace([(plain, mnt2)], lake, "add-files", "ns.t", str(mnt2 / "y.parquet"))
    assert res.returncode == 0, (res.stdout, res.stderr)
    t = lake.cat.load_table("ns.t")
    assert t.metadata.current_snapshot_id != snap
    added = t.current_snapshot().summary
    assert added["added-data-files"] == "1" and added["added-records"] == "1", added
    assert os.path.exists(x) and os.path.exists(y)


def test_add_files_refuses_a_local_file_when_the_mount_table_cannot_be_read(tmp_path):
    """Without /proc (an empty folder mounted over it), whether a local file is a trashed file
    reached through another mount cannot be told: add-files refuses (exit 5, one line naming
    the mount table), nothing committed; with the mount table the same file is added."""
    lake = Lake(tmp_path, appends=1)
    x = tmp_path / "x.parquet"
    pq.write_table(pa.table({"id": [7]}, schema=SCHEMA), str(x))
    empty = tmp_path / "empty"
    empty.mkdir()
    snap = current_snapshot(lake)
    res = in_namespace([(empty, "/proc")], lake, "add-files", "ns.t", str(x))
    assert_refused(res, "added", "/proc/self/mountinfo", "cannot be told")
    assert current_snapshot(lake) == snap
    r = lake.icm("add-files", "ns.t", str(x))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 2

"""Data-loss class: a trashed file that a table comes to reference, or that a sweep takes for an
orphan while a trash run fills the trash (adversary round 5, findings 1 and 2).

`trash expire` deletes what lies in `<trash>/<table-uuid>/files/`, and `trash restore` moves it
away; neither sees the tables that reference a file. So where icemaint makes a table reference a
file (add-files, register-table), a file inside an icemaint trash is refused (exit 5, nothing
committed), told by the layout the sweep's guard uses (`<uuid>/journal/*.jsonl` beside it). And
a sweep's listing is no snapshot: a trash whose journal folder it read empty, before a trash run
wrote a journal and moved a file in, showed the file without the journal; the unsharded sweep
now looks live at every UUID-named folder on a candidate's path before anything is deleted.

Each test asserts the exit code and exactly which files exist after."""
import os
import shutil
import subprocess

import pyarrow as pa

from plan_helpers import CLI, SCHEMA, Lake, age, files_under


def sweep(lake, *extra, table="ns.t"):
    return lake.icm("--json", "remove-orphan-files", table, "--settle", "0s", *extra)


def uuid_of(lake, table="ns.t"):
    return str(lake.cat.load_table(table).metadata.table_uuid)


def current_snapshot(lake, table="ns.t"):
    return lake.cat.load_table(table).metadata.current_snapshot_id


def test_data_loss_add_files_of_a_trashed_file(tmp_path):
    """Finding 1: ns.t's old Parquet orphan is swept into the trash; `add-files` of the trashed
    file where it lies committed, and `trash expire` then deleted it (`trash restore` moved it
    away): the current snapshot named a missing file. add-files refuses it now (exit 5, nothing
    committed), named directly or through a symbolic link, and register-table refuses a trashed
    metadata file (even with --force); expire then leaves every table readable."""
    lake = Lake(tmp_path)
    trash = tmp_path / "trash"
    trash.mkdir()
    src = lake.parquet_orphan("old.parquet", [41, 42])
    # an unreferenced metadata file of ns.t's (a failed commit's): the sweep trashes it too
    md_dir = lake.dir / "metadata"
    current = lake.cat.load_table("ns.t").metadata_location.replace("file://", "")
    stray_md = md_dir / "99999-stray.metadata.json"
    shutil.copyfile(current, stray_md)
    age([stray_md])
    r = sweep(lake, "--trash", str(trash))
    assert r.returncode == 0, r.stderr
    files = trash / uuid_of(lake) / "files"
    moved = files / "data" / "old.parquet"
    moved_md = files / "metadata" / "99999-stray.metadata.json"
    assert not os.path.exists(src) and moved.exists() and moved_md.exists()
    link = tmp_path / "elsewhere.parquet"
    link.symlink_to(moved)
    snap = current_snapshot(lake)
    before = files_under(tmp_path)
    for name in (str(moved), f"file://{moved}", str(link)):
        r = lake.icm("add-files", "ns.t", name)
        assert r.returncode == 5, (name, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"lies in the icemaint trash {trash}" in r.stderr
        assert "icemaint trash restore" in r.stderr and "nothing is added" in r.stderr
        assert current_snapshot(lake) == snap
    r = lake.icm("register-table", "ns.t2", str(moved_md), "--force")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert f"lies in the icemaint trash {trash}" in r.stderr and "nothing is registered" in r.stderr
    assert ("ns", "t2") not in lake.cat.list_tables("ns")
    assert files_under(tmp_path) == before
    # the trash empties; ns.t stays readable
    r = lake.icm("trash", "expire", str(trash), "--older-than", "0s")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert not moved.exists() and not moved_md.exists()
    r = lake.icm("check", "ns.t")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 3

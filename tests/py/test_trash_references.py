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
from test_trash_sweep_guard import a_trashed_orphan


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


# An LD_PRELOAD shim standing in for a trash run that writes its journal while another sweep
# lists the trash: the sweep's listing walker (a relative openat of a folder named `journal`)
# reads `<uuid>/journal/` to its end, and as it closes the folder the journal written before
# the run moved its file appears there (a rename of $ICM_TEST_JOURNAL_FROM into it, named
# $ICM_TEST_JOURNAL_NAME). Whichever order the walker reads `journal/` and `files/` in, its
# listing shows the trashed file and no journal.
SHIM = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int journal_fd = -1, done;
#define WRAP(fn) int fn(int at, const char *name, int flags, ...) { \
    mode_t mode = 0; \
    if (flags & O_CREAT) { \
        va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); } \
    int (*real)(int, const char *, int, ...) = \
        (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #fn); \
    int fd = real(at, name, flags, mode); \
    if (fd >= 0 && at != AT_FDCWD && journal_fd < 0 && !done && name != NULL && \
        strcmp(name, "journal") == 0) \
        journal_fd = fd; \
    return fd; }
WRAP(openat)
WRAP(openat64)
int closedir(DIR *d) {
    int (*real)(DIR *) = (int (*)(DIR *))dlsym(RTLD_NEXT, "closedir");
    if (d != NULL && journal_fd >= 0 && dirfd(d) == journal_fd) {
        journal_fd = -1;
        done = 1;
        const char *from = getenv("ICM_TEST_JOURNAL_FROM"), *to = getenv("ICM_TEST_JOURNAL_NAME");
        if (from != NULL && to != NULL && renameat(AT_FDCWD, from, dirfd(d), to) != 0)
            abort();
    }
    return real(d);
}
"""


def build_shim(tmp_path):
    src = tmp_path / "journal_late.c"
    src.write_text(SHIM)
    so = tmp_path / "journal_late.so"
    r = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(so), str(src),
                        "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return so


def test_data_loss_trash_journal_written_while_a_sweep_lists_it(tmp_path):
    """Finding 2: ns.t's trash lies in shared/, ns.b's write.data.path (another team's landing
    folder, its table in another catalog). The trash was emptied earlier, so `<uuid>/journal/`
    and `<uuid>/files/` stood empty. ns.b's sweep of shared/ read `journal/` empty; then ns.t's
    run wrote its journal and moved old.parquet (ten days old) into `files/`, which the sweep
    read next: it saw the trashed file and no journal name, and deleted it. Now the sweep looks
    at each candidate's UUID-named folders live before deleting: refused (exit 5), dry run too;
    with the trash carved out (--exclude-location) ns.b's own orphan goes and the trashed file
    stays, and it restores."""
    so = build_shim(tmp_path)
    lake = Lake(tmp_path)
    trash = tmp_path / "shared" / "trash"
    trash.mkdir(parents=True)
    shared = trash.parent
    moved = a_trashed_orphan(lake, trash)
    src = lake.dir / "data" / "old.parquet"
    b = lake.cat.create_table("ns.b", schema=SCHEMA)
    b.append(pa.table({"id": [7]}, schema=SCHEMA))
    # (the trash's open refuses a table of its catalog around it: ns.b comes there later, as
    # a table of another catalog would be there all along)
    with b.transaction() as tx:
        tx.set_properties({"write.data.path": f"file://{shared}"})
    jdir = trash / uuid_of(lake) / "journal"
    (journal,) = os.listdir(jdir)
    b_orphan = shared / "b-orphan.parquet"
    b_orphan.write_bytes(b"b" * 9)
    age([b_orphan])
    held = tmp_path / "held.jsonl"

    def racing_sweep(*extra):
        """ns.b's sweep of shared/, the journal out of sight until the listing read jdir."""
        os.rename(jdir / journal, held)
        env = dict(os.environ, LD_PRELOAD=str(so), ICM_TEST_JOURNAL_FROM=str(held),
                   ICM_TEST_JOURNAL_NAME=journal,
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
        r = subprocess.run([CLI, "--config", str(lake.cfg), "--catalog", "reg", "--json",
                            "remove-orphan-files", "ns.b", "--settle", "0s", "--location",
                            str(shared), *extra],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env)
        assert (jdir / journal).exists() and not held.exists(), "the shim did not run"
        return r

    before = files_under(tmp_path)
    for extra in (["--dry-run"], []):
        r = racing_sweep(*extra)
        assert r.returncode == 5, (extra, r.stdout, r.stderr)
        assert f"the folder {trash} holds an icemaint trash" in r.stderr
        assert "--exclude-location" in r.stderr
        assert files_under(tmp_path) == before
    r = racing_sweep("--exclude-location", str(trash))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert files_under(tmp_path) == [p for p in before if p != str(b_orphan)]
    r = lake.icm("trash", "restore", str(trash), "--table", str(lake.dir))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert os.path.exists(src) and not moved.exists()

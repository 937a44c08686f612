"""A stale catalog pointer: a copied or restored catalog database names a table by an older
metadata file while the original catalog kept committing to the same table (same location,
same table-uuid). Swept through the stale copy, the original's newer `*.metadata.json` files
looked like this table's own unreferenced old metadata, and were deleted along with the
original's newest manifests and data files.

The rule: when an unreferenced metadata file F2 of the same table-uuid has in its metadata-log
another unreferenced same-uuid file F1 whose metadata-log names our current metadata file, F1
was some catalog's current pointer (a commit was accepted past ours): the sweep refuses (exit
5), real or dry run. A single newer file naming our current metadata (a crashed writer's
leftover) proves nothing and is still swept.

Every table is written by PyIceberg; every file is aged 10 days first. After each command the
tests assert exactly which files exist and that PyIceberg still scans every snapshot.
"""
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, referenced, rows_per_snapshot, icm as run_icm  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])



def append(table, n, base=0):
    for i in range(n):
        table.append(pa.table({"id": [base + i, base + i + 100]}, schema=SCHEMA))


def icm(cwd, *args, config=None):
    return run_icm(cwd, config, *args)


def write_config(path, db, wh):
    path.write_text(f"catalog:\n  default:\n    type: sql\n    uri: sqlite:///{db}\n"
                    f"    warehouse: file://{wh}\n")


def catalog(db, wh):
    return pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")


@pytest.mark.parametrize("props", [{}, {"write.metadata.previous-versions-max": "1"}],
                         ids=["full-log", "log-trimmed-to-one"])
def test_sweep_through_a_stale_copy_of_the_catalog_is_refused(tmp_path, props):
    """The catalog database is copied (a backup, a clone); the original commits twice more.
    Swept through the copy, whose pointer is two commits behind: refused (exit 5), real and
    dry run, naming the stale pointer and the newer metadata; every file stays and the
    original table still scans every snapshot. With the metadata-log trimmed to one entry the
    newest metadata no longer names the stale pointer itself, only the commit after it."""
    wh = tmp_path / "wh"
    wh.mkdir()
    (tmp_path / "orig").mkdir()
    (tmp_path / "copy").mkdir()
    orig_db, copy_db = tmp_path / "orig" / "cat.db", tmp_path / "copy" / "cat.db"
    orig = catalog(orig_db, wh)
    orig.create_namespace("ns")
    append(orig.create_table("ns.t", schema=SCHEMA, properties=props), 2)
    shutil.copyfile(orig_db, copy_db)
    cfg = tmp_path / "copy" / "conf.yaml"
    write_config(cfg, copy_db, wh)
    append(orig.load_table("ns.t"), 2, base=10)
    stale = catalog(copy_db, wh).load_table("ns.t")
    t = orig.load_table("ns.t")
    assert stale.metadata_location != t.metadata_location
    tdir = Path(local(t.location()))
    age_all(tmp_path)
    before = rows_per_snapshot(t)
    all_files = files_under(tdir)
    assert referenced(t) <= all_files
    assert referenced(t) - referenced(stale)
    if props:
        assert local(stale.metadata_location) not in {
            local(e.metadata_file) for e in t.metadata.metadata_log}

    for extra in ((), ("--dry-run",)):
        p = icm(tmp_path, "remove-orphan-files", "ns.t", *extra, config=cfg)
        assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        for w in ("stale", local(stale.metadata_location), local(t.metadata_location),
                  "no override"):
            assert w in p.stderr, p.stderr
        assert files_under(tdir) == all_files
    assert rows_per_snapshot(orig.load_table("ns.t")) == before


def test_a_crashed_writers_single_newer_metadata_file_is_still_swept(tmp_path):
    """One newer metadata file whose metadata-log names the current pointer, that no catalog
    ever took (a writer that crashed before its commit): nothing shows a commit past ours, so
    the sweep runs and deletes it (and a stray data file), keeping every referenced file."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, db, wh)
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA), 2)
    t = c.load_table("ns.t")
    tdir = Path(local(t.location()))
    cur = local(t.metadata_location)
    doc = json.loads(Path(cur).read_text())
    doc["metadata-log"] = doc.get("metadata-log", []) + [
        {"timestamp-ms": doc["last-updated-ms"], "metadata-file": t.metadata_location}]
    doc["last-updated-ms"] += 1000
    leftover = Path(cur).parent / f"00099-{uuid.uuid4()}.metadata.json"
    leftover.write_text(json.dumps(doc))
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tmp_path)
    before = rows_per_snapshot(t)
    keep = referenced(t)
    assert files_under(tdir) == keep | {str(leftover), str(stray)}

    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--dry-run", config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert files_under(tdir) == keep | {str(leftover), str(stray)}
    p = icm(tmp_path, "remove-orphan-files", "ns.t", config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert files_under(tdir) == keep
    assert rows_per_snapshot(c.load_table("ns.t")) == before


def stale_copy(tmp_path, commits_after=2):
    """ns.t in an original catalog; its database copied; the original then commits
    `commits_after` more times. Returns (config of the copy, copy catalog, original catalog,
    table folder)."""
    wh = tmp_path / "wh"
    wh.mkdir()
    (tmp_path / "orig").mkdir()
    (tmp_path / "copy").mkdir()
    orig_db, copy_db = tmp_path / "orig" / "cat.db", tmp_path / "copy" / "cat.db"
    orig = catalog(orig_db, wh)
    orig.create_namespace("ns")
    append(orig.create_table("ns.t", schema=SCHEMA), 2)
    shutil.copyfile(orig_db, copy_db)
    cfg = tmp_path / "copy" / "conf.yaml"
    write_config(cfg, copy_db, wh)
    append(orig.load_table("ns.t"), commits_after, base=10)
    t = orig.load_table("ns.t")
    return cfg, catalog(copy_db, wh), orig, Path(local(t.location()))


FUTURE_MS = str((int(__import__("time").time()) + 3600) * 1000)


@pytest.mark.parametrize("run", ["sweep-of-data-folder", "expire", "expire-dry-run"])
def test_stale_pointer_is_refused_whatever_the_run_lists(tmp_path, run):
    """The stale-pointer rule looks at the table's metadata folders themselves, not only at
    what the run lists: a sweep restricted to the data folder (`--location <table>/data`, which
    never lists the newer metadata) and expiry (which lists nothing) through a catalog copy two
    commits behind are refused (exit 5); every file stays, the copy's pointer is unchanged (no
    commit was made through it), and the original still scans every snapshot."""
    cfg, copy, orig, tdir = stale_copy(tmp_path)
    stale_pointer = copy.load_table("ns.t").metadata_location
    age_all(tmp_path)
    before = rows_per_snapshot(orig.load_table("ns.t"))
    all_files = files_under(tdir)
    if run == "sweep-of-data-folder":
        args = ("remove-orphan-files", "ns.t", "--location", f"file://{tdir}/data")
    else:
        args = ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)
        if run == "expire-dry-run":
            args += ("--dry-run",)
    p = icm(tmp_path, *args, config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "stale" in p.stderr and local(stale_pointer) in p.stderr, p.stderr
    assert files_under(tdir) == all_files
    assert copy.load_table("ns.t").metadata_location == stale_pointer
    assert rows_per_snapshot(orig.load_table("ns.t")) == before


def test_stale_pointer_registered_through_a_link_is_refused(tmp_path):
    """A second catalog registers the table through a symbolic link to the warehouse, so its
    pointer is spelled apart from every metadata-log entry the original writes; the original
    commits twice more. The log entries name the pointer's file in the same real folder: the
    sweep and expiry through the second catalog are refused and nothing changes."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    orig = catalog(db, wh)
    orig.create_namespace("ns")
    append(orig.create_table("ns.t", schema=SCHEMA), 2)
    t = orig.load_table("ns.t")
    link = tmp_path / "whlink"
    link.symlink_to(wh)
    linked_pointer = str(link) + local(t.metadata_location)[len(str(wh)):]
    (tmp_path / "second").mkdir()
    cfg = tmp_path / "second" / "conf.yaml"
    write_config(cfg, tmp_path / "second" / "cat.db", link)
    catalog(tmp_path / "second" / "cat.db", link).create_namespace("ns")
    p = icm(tmp_path, "register-table", "ns.t", linked_pointer, config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    append(orig.load_table("ns.t"), 2, base=10)
    tdir = Path(local(t.location()))
    age_all(tmp_path)
    before = rows_per_snapshot(orig.load_table("ns.t"))
    all_files = files_under(tdir)
    for args in (("remove-orphan-files", "ns.t"),
                 ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)):
        p = icm(tmp_path, *args, config=cfg)
        assert p.returncode == 5, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "stale" in p.stderr, p.stderr
        assert files_under(tdir) == all_files
    assert rows_per_snapshot(orig.load_table("ns.t")) == before


def test_version_hint_naming_a_newer_commit_proves_a_stale_pointer(tmp_path):
    """A directory-layout table (vN.metadata.json and version-hint.text) registered in a
    catalog at v1; then one commit through the directory writes v2 and points the hint at it.
    One commit past the pointer, but the hint names it: the catalog's pointer is stale, and the
    sweep and expiry through the catalog are refused, keeping v2, its manifests and the file
    it added."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, db, wh)
    c = catalog(db, wh)
    c.create_namespace("tmp")
    append(c.create_table("tmp.t", schema=SCHEMA), 2)
    t = c.load_table("tmp.t")
    tdir = Path(local(t.location()))
    c.drop_table("tmp.t")  # (keeps the files)
    v1 = tdir / "metadata" / "v1.metadata.json"
    shutil.copyfile(local(t.metadata_location), v1)
    (tdir / "metadata" / "version-hint.text").write_text("1")
    c.create_namespace("ns")
    p = icm(tmp_path, "register-table", "ns.t", str(v1), config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    added = tdir / "data" / "added.parquet"
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"id": pa.array([42], pa.int64())}), added)
    p = icm(tmp_path, "add-files", str(tdir), f"file://{added}", config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert (tdir / "metadata" / "v2.metadata.json").exists()
    age_all(tmp_path)
    all_files = files_under(tdir)
    for args in (("remove-orphan-files", "ns.t"),
                 ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)):
        p = icm(tmp_path, *args, config=cfg)
        assert p.returncode == 5, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "version hint" in p.stderr and "v2.metadata.json" in p.stderr, p.stderr
        assert files_under(tdir) == all_files


def registered_at(tmp_path, name, commits_before=3):
    """ns.t written by PyIceberg, its current metadata copied to `name` in the metadata folder
    and the table registered there (as a migrated or restored table is); a copy of the catalog
    taken then (returned as its config); two more commits through the live catalog. Returns
    (live catalog, config of the copy, the live table, its folder, the registered file)."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA), commits_before)
    t = c.load_table("ns.t")
    pointer = Path(local(t.metadata_location)).parent / name
    shutil.copyfile(local(t.metadata_location), pointer)
    c.drop_table("ns.t")
    c.register_table("ns.t", f"file://{pointer}")
    (tmp_path / "copy").mkdir()
    shutil.copyfile(db, tmp_path / "copy" / "cat.db")
    cfg = tmp_path / "copy" / "conf.yaml"
    write_config(cfg, tmp_path / "copy" / "cat.db", wh)
    append(c.load_table("ns.t"), 2, base=10)
    live = c.load_table("ns.t")
    assert Path(local(live.metadata_location)).name.startswith("00001-")
    return c, cfg, live, Path(local(live.location())), pointer


@pytest.mark.parametrize("run", ["sweep-of-data-folder", "expire"])
def test_stale_pointer_numbered_apart_from_the_newer_commits_is_refused(tmp_path, run):
    """A filesystem-layout pointer (`v4.metadata.json`) registered in a catalog: writers
    number the next commits from a version they cannot parse, so they are `00000-<uuid>` and
    `00001-<uuid>`, numbered below the pointer. A copy of the catalog taken before those two
    commits is stale all the same: refused (exit 5), every file stays."""
    c, cfg, live, tdir, pointer = registered_at(tmp_path, "v4.metadata.json")
    (pointer.parent / "version-hint.text").write_text("4")
    age_all(tmp_path)
    before = rows_per_snapshot(live)
    all_files = files_under(tdir)
    if run == "expire":
        args = ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)
    else:
        args = ("remove-orphan-files", "ns.t", "--location", f"file://{tdir}/data")
    p = icm(tmp_path, *args, config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "stale" in p.stderr and "v4.metadata.json" in p.stderr, p.stderr
    assert files_under(tdir) == all_files
    assert rows_per_snapshot(c.load_table("ns.t")) == before


@pytest.mark.parametrize("how", ["excluded", "hidden-write-metadata-path"])
def test_stale_pointer_is_seen_when_the_listing_skips_the_metadata(tmp_path, how):
    """The listing skips excluded and hidden files: `--exclude-location <table>/metadata` (a
    cautious "data only" sweep), or a write.metadata.path named `_metadata`. The newer commits
    there are still looked at: the sweep through a catalog copy two commits behind is refused
    and every file stays."""
    wh = tmp_path / "wh"
    wh.mkdir()
    (tmp_path / "orig").mkdir()
    (tmp_path / "copy").mkdir()
    orig_db, copy_db = tmp_path / "orig" / "cat.db", tmp_path / "copy" / "cat.db"
    orig = catalog(orig_db, wh)
    orig.create_namespace("ns")
    location = wh / "ns" / "t"
    props = {} if how == "excluded" else {"write.metadata.path": f"file://{location}/_metadata"}
    append(orig.create_table("ns.t", schema=SCHEMA, location=f"file://{location}",
                             properties=props), 2)
    shutil.copyfile(orig_db, copy_db)
    cfg = tmp_path / "copy" / "conf.yaml"
    write_config(cfg, copy_db, wh)
    append(orig.load_table("ns.t"), 2, base=10)
    age_all(tmp_path)
    before = rows_per_snapshot(orig.load_table("ns.t"))
    all_files = files_under(location)
    extra = ("--exclude-location", f"file://{location}/metadata") if how == "excluded" else ()
    p = icm(tmp_path, "remove-orphan-files", "ns.t", *extra, config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "stale" in p.stderr, p.stderr
    assert files_under(location) == all_files
    assert rows_per_snapshot(orig.load_table("ns.t")) == before


@pytest.mark.parametrize("how", ["restored-catalog", "registered-in-two-catalogs"])
def test_forked_history_is_refused_from_either_side(tmp_path, how):
    """The table's history splits below a catalog's pointer, so no metadata-log names that
    pointer: a catalog restored from a backup commits again while a copy taken before the
    restore still points into the abandoned history; or one metadata file is registered in
    two catalogs and both commit. Each side's commits are live somewhere, so the sweep and
    expiry are refused through either catalog (exit 5) and every file stays, whatever the
    modification times say."""
    import time
    wh = tmp_path / "wh"
    wh.mkdir()
    db, other_db = tmp_path / "cat.db", tmp_path / "other.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA), 2)
    if how == "restored-catalog":
        shutil.copyfile(db, tmp_path / "backup.db")
        append(c.load_table("ns.t"), 2, base=10)
        shutil.copyfile(db, other_db)              # the pre-restore copy
        time.sleep(1.1)
        shutil.copyfile(tmp_path / "backup.db", db)  # the restore
    else:
        shutil.copyfile(db, other_db)
        append(catalog(other_db, wh).load_table("ns.t"), 2, base=10)
        time.sleep(1.1)
    append(catalog(db, wh).load_table("ns.t"), 2, base=20)
    live, other = catalog(db, wh).load_table("ns.t"), catalog(other_db, wh).load_table("ns.t")
    assert live.metadata_location != other.metadata_location
    tdir = Path(local(live.location()))
    age_all(tmp_path)
    # The side that committed first is older on disk too: modification times decide nothing.
    history = lambda t: {local(t.metadata_location)} | {local(e.metadata_file)
                                                        for e in t.metadata.metadata_log}
    older = time.time() - 30 * 86400
    for f in history(other) - history(live):
        os.utime(f, (older, older))
    rows = (rows_per_snapshot(live), rows_per_snapshot(other))
    all_files = files_under(tdir)
    for side_db in (other_db, db):
        cfg = tmp_path / f"{side_db.stem}.yaml"
        write_config(cfg, side_db, wh)
        for args in (("remove-orphan-files", "ns.t"),
                     ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than",
                      FUTURE_MS)):
            p = icm(tmp_path, *args, config=cfg)
            assert p.returncode == 5, f"{side_db.name} {args}: exit {p.returncode}\n{p.stderr}"
            assert "forked" in p.stderr, p.stderr
            assert files_under(tdir) == all_files
    assert (rows_per_snapshot(catalog(db, wh).load_table("ns.t")),
            rows_per_snapshot(catalog(other_db, wh).load_table("ns.t"))) == rows


def test_table_created_again_at_the_same_place_is_seen_by_a_data_folder_sweep(tmp_path):
    """A catalog backup holds ns.t; the live catalog dropped ns.t (files kept) and created a
    new ns.t, another table-uuid, at the same location, which took writes. A sweep of the data
    folder through the backup never lists the new table's metadata, but the table's metadata
    folder holds it, written after the backup's pointer: refused, and the new table keeps
    every file."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    location = f"file://{wh}/ns/t"
    append(c.create_table("ns.t", schema=SCHEMA, location=location), 2)
    (tmp_path / "backup").mkdir()
    shutil.copyfile(db, tmp_path / "backup" / "cat.db")
    cfg = tmp_path / "backup" / "conf.yaml"
    write_config(cfg, tmp_path / "backup" / "cat.db", wh)
    c.drop_table("ns.t")
    append(c.create_table("ns.t", schema=SCHEMA, location=location), 3, base=50)
    new = c.load_table("ns.t")
    tdir = Path(local(new.location()))
    age_all(tmp_path)
    rows = rows_per_snapshot(new)
    all_files = files_under(tdir)
    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--location", f"{location}/data",
            config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "another table's metadata lies in this table's metadata folder" in p.stderr, p.stderr
    assert files_under(tdir) == all_files
    assert rows_per_snapshot(c.load_table("ns.t")) == rows


def test_pointer_numbered_without_a_uuid_is_read_as_unnumbered(tmp_path):
    """A pointer named `00005-restored.metadata.json` (numbered, no UUID after the dash):
    PyIceberg numbers after it from 0 again (`00000-<uuid>`), below 5, and a pointer written
    by a fast clock is newer than those commits by its modification time. The newer commits
    are read all the same (the name is not numbered the way writers parse it): the data
    folder sweep and expiry through a copy taken before them are refused."""
    c, cfg, live, tdir, pointer = registered_at(tmp_path, "00005-restored.metadata.json", 2)
    age_all(tmp_path)
    future = time_now() + 600
    os.utime(pointer, (future, future))
    all_files = files_under(tdir)
    for args in (("remove-orphan-files", "ns.t", "--location", f"file://{tdir}/data"),
                 ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)):
        p = icm(tmp_path, *args, config=cfg)
        assert p.returncode == 5, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "stale" in p.stderr, p.stderr
        assert files_under(tdir) == all_files


def time_now():
    import time
    return time.time()


def test_fork_below_the_pointers_metadata_log_is_refused(tmp_path):
    """Two catalogs share ns.t at one metadata file; the second commits twice, the first goes
    on for 8 commits with previous-versions-max=2, so the second branch is numbered below the
    first's whole metadata-log. Numbers count a branch's own commits, not time: the branch is
    still seen, and expiry and the sweep through the first catalog are refused."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db, other_db = tmp_path / "cat.db", tmp_path / "other.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA,
                          properties={"write.metadata.previous-versions-max": "2"}), 2)
    shutil.copyfile(db, other_db)
    append(catalog(other_db, wh).load_table("ns.t"), 2, base=10)
    append(catalog(db, wh).load_table("ns.t"), 8, base=20)
    live = catalog(db, wh).load_table("ns.t")
    other = catalog(other_db, wh).load_table("ns.t")
    tdir = Path(local(live.location()))
    age_all(tmp_path)
    rows = rows_per_snapshot(other)
    all_files = files_under(tdir)
    cfg = tmp_path / "live.yaml"
    write_config(cfg, db, wh)
    for args in (("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS),
                 ("remove-orphan-files", "ns.t"),
                 ("remove-orphan-files", "ns.t", "--location", f"file://{tdir}/data")):
        p = icm(tmp_path, *args, config=cfg)
        assert p.returncode == 5, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "forked" in p.stderr, p.stderr
        assert files_under(tdir) == all_files
    assert rows_per_snapshot(catalog(other_db, wh).load_table("ns.t")) == rows


def test_table_migrated_from_a_filesystem_layout_is_maintained(tmp_path):
    """A filesystem-layout table (v1..v3 and version-hint.text) registered in a catalog at v3,
    then 24 commits with previous-versions-max=2: the v files fell off the metadata-log long
    ago, yet they are the pointer's ancestors, followed base by base however far; expiry and
    the sweep run (exit 0) and keep everything the table references."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, db, wh)
    c = catalog(db, wh)
    c.create_namespace("tmp")
    append(c.create_table("tmp.t", schema=SCHEMA,
                          properties={"write.metadata.previous-versions-max": "2"}), 2)
    t = c.load_table("tmp.t")
    mdir = Path(local(t.metadata_location)).parent
    c.drop_table("tmp.t")
    # the Hadoop form: each metadata file renamed vN, and every log entry with it
    names = sorted(p.name for p in mdir.glob("*.metadata.json"))
    renames = {n: f"v{i}.metadata.json" for i, n in enumerate(names, start=1)}
    for old, new in renames.items():
        doc = json.loads((mdir / old).read_text())
        for e in doc.get("metadata-log", []):
            base = e["metadata-file"].rsplit("/", 1)[1]
            e["metadata-file"] = e["metadata-file"][:-len(base)] + renames[base]
        (mdir / new).write_text(json.dumps(doc))
        (mdir / old).unlink()
    (mdir / "version-hint.text").write_text(str(len(names)))
    c.create_namespace("ns")
    c.register_table("ns.t", f"file://{mdir}/v{len(names)}.metadata.json")
    append(c.load_table("ns.t"), 24, base=10)
    t = c.load_table("ns.t")
    age_all(tmp_path)
    for args in (("expire-snapshots", "ns.t", "--retain-last", "2", "--older-than", FUTURE_MS),
                 ("remove-orphan-files", "ns.t")):
        p = icm(tmp_path, *args, config=cfg)
        assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    t = c.load_table("ns.t")
    assert referenced(t) <= files_under(Path(local(t.location())))
    assert rows_per_snapshot(t)


def test_table_created_again_is_seen_whatever_the_old_tables_numbers(tmp_path):
    """As above (a table dropped and created again at its place, swept through a backup that
    still has the old one), but the new table has committed past the old one's numbers: the
    old table's metadata is read whatever its number, and the data folder sweep through the
    live catalog is refused (the backup's table writes where it lists)."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    location = f"file://{wh}/ns/t"
    append(c.create_table("ns.t", schema=SCHEMA, location=location), 2)
    c.drop_table("ns.t")
    append(c.create_table("ns.t", schema=SCHEMA, location=location,
                          properties={"write.metadata.previous-versions-max": "2"}), 6, base=50)
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, db, wh)
    tdir = Path(local(c.load_table("ns.t").location()))
    age_all(tmp_path)
    all_files = files_under(tdir)
    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--location", f"{location}/data",
            config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "another table's metadata lies in this table's metadata folder" in p.stderr, p.stderr
    assert files_under(tdir) == all_files


@pytest.mark.parametrize("run", ["expire", "sweep"])
def test_fork_in_a_metadata_folder_the_table_wrote_before_is_refused(tmp_path, run):
    """ns.t writes its metadata to m1; a backup of the catalog is taken; the live catalog
    then moves write.metadata.path to m2 and commits, while the backup's catalog commits twice
    more in m1. m1 is no metadata folder of the live pointer's metadata any more, but its
    metadata-log names files there: m1 is looked at too, and the fork is refused."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db, other_db = tmp_path / "cat.db", tmp_path / "other.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    t = c.create_table("ns.t", schema=SCHEMA, location=f"file://{wh}/T",
                       properties={"write.metadata.path": f"file://{wh}/m1"})
    append(t, 3)
    shutil.copyfile(db, other_db)
    t = c.load_table("ns.t")
    t.delete("id == 0")
    with t.transaction() as tx:
        tx.set_properties({"write.metadata.path": f"file://{wh}/m2"})
    append(c.load_table("ns.t"), 1, base=9)
    append(catalog(other_db, wh).load_table("ns.t"), 2, base=50)
    age_all(tmp_path)
    other_rows = rows_per_snapshot(catalog(other_db, wh).load_table("ns.t"))
    before = files_under(wh)
    cfg = tmp_path / "live.yaml"
    write_config(cfg, db, wh)
    args = (("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", FUTURE_MS)
            if run == "expire" else ("remove-orphan-files", "ns.t"))
    p = icm(tmp_path, *args, config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "forked" in p.stderr, p.stderr
    assert files_under(wh) == before
    assert rows_per_snapshot(catalog(other_db, wh).load_table("ns.t")) == other_rows


def test_unreadable_metadata_in_the_metadata_folder_refuses_expiry(tmp_path):
    """A fork whose only link (the other branch's first commit) is damaged: the other branch's
    newest file was committed on a file that cannot be read, so whether that branch is live
    cannot be told. Expiry is refused, naming the damaged file; nothing is deleted."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db, other_db = tmp_path / "cat.db", tmp_path / "other.db"
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA), 2)
    shutil.copyfile(db, other_db)
    other = catalog(other_db, wh)
    append(other.load_table("ns.t"), 1, base=50)
    link = Path(local(other.load_table("ns.t").metadata_location))
    append(other.load_table("ns.t"), 1, base=60)
    append(c.load_table("ns.t"), 2, base=10)
    link.write_bytes(link.read_bytes()[:100])  # damaged
    age_all(tmp_path)
    before = files_under(wh)
    cfg = tmp_path / "live.yaml"
    write_config(cfg, db, wh)
    p = icm(tmp_path, "expire-snapshots", "ns.t", "--retain-last", "1", "--older-than",
            FUTURE_MS, config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "cannot read this metadata file" in p.stderr and link.name in p.stderr, p.stderr
    assert files_under(wh) == before


def test_table_dropped_and_created_again_is_swept_once_the_old_metadata_is_moved_out(tmp_path):
    """PyIceberg's drop (no purge) and create at the same place: the old table's metadata
    stays in the metadata folder, and whether some catalog still holds the old table cannot be
    told, so the sweep refuses and says how to go on (not --exclude-location, which cannot carve
    out the table's own place). With the old metadata files moved out, the sweep runs and
    keeps every file of the new table."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, db, wh)
    c = catalog(db, wh)
    c.create_namespace("ns")
    append(c.create_table("ns.t", schema=SCHEMA), 2)
    old = c.load_table("ns.t")
    old_md = {local(old.metadata_location)} | {local(e.metadata_file)
                                              for e in old.metadata.metadata_log}
    c.drop_table("ns.t")
    append(c.create_table("ns.t", schema=SCHEMA), 2, base=50)
    new = c.load_table("ns.t")
    tdir = Path(local(new.location()))
    age_all(tmp_path)
    before = files_under(tdir)
    p = icm(tmp_path, "remove-orphan-files", "ns.t", config=cfg)
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "move its metadata files out" in p.stderr, p.stderr
    assert files_under(tdir) == before
    aside = tmp_path / "old-metadata"
    aside.mkdir()
    for f in old_md:
        shutil.move(f, aside / Path(f).name)
    p = icm(tmp_path, "remove-orphan-files", "ns.t", config=cfg)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert referenced(c.load_table("ns.t")) <= files_under(tdir)
    assert rows_per_snapshot(c.load_table("ns.t"))

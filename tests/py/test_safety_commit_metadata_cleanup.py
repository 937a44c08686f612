"""Data-loss class "commit-time metadata cleanup": it deletes only the table's own
old metadata.

With `write.metadata.delete-after-commit.enabled=true`, a commit deletes the metadata files
that fell off the metadata log (`write.metadata.previous-versions-max`). Java deletes them
unconditionally; a log entry is only a name, though. A table registered at one of the table's
older metadata files (a "clone" in the same catalog) lost its current metadata at the next
commit, and a crafted or damaged entry naming a live data file, a manifest list, another
table's metadata or a file outside the metadata folder got it deleted. The rule (README,
include/icemaint/catalog.h, src/table/retention.c): a dropped file is deleted only when it lies
directly in one of the table's metadata folders (compared where they really are), is named
`*.metadata.json(.gz)`, parses with this table's table-uuid, is neither the current metadata
file nor a log entry of another table of the catalog, and the new metadata does not name it.
Anything else is kept with a `warning:` line, and the commit succeeds.

Every table is written by PyIceberg through a SqlCatalog; the cleanup properties are set by
icemaint or written into the metadata beside a crafted entry. After each commit the tests
assert exactly which metadata files exist and that PyIceberg still loads and scans each table.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import age_all, files_under, local, rows_per_snapshot, icm  # noqa: E402

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64())])
CLEANUP = {"write.metadata.delete-after-commit.enabled": "true",
           "write.metadata.previous-versions-max": "1"}


def committed(p):
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "committed" in p.stdout, p.stdout


def catalog(tmp_path, name="default"):
    wh, db = tmp_path / "wh", tmp_path / "cat.db"
    wh.mkdir(exist_ok=True)
    cfg = tmp_path / "conf.yaml"
    if not cfg.exists():
        cfg.write_text(f"catalog:\n  default:\n    type: sql\n    uri: sqlite:///{db}\n"
                       f"    warehouse: file://{wh}\n")
    cat = pyiceberg_sql.SqlCatalog(name, uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    try:
        cat.create_namespace("ns")
    except Exception:  # noqa: BLE001 (already there)
        pass
    return cat, cfg


def make_table(cat, ident, appends, **kw):
    t = cat.create_table(ident, schema=SCHEMA, **kw)
    for i in range(appends):
        t.append(pa.table({"id": [i, i + 100]}, schema=SCHEMA))
    return cat.load_table(ident)


def metadata_files(folder):
    return {p for p in files_under(folder) if p.endswith(".metadata.json")}


def own_metadata(table):
    """The metadata files a table's current metadata names: its current file and its log."""
    return {local(table.metadata_location)} | \
        {local(e.metadata_file) for e in table.metadata.metadata_log}


def scans(table):
    rows = rows_per_snapshot(table)
    assert rows and all(n > 0 for n in rows.values())
    return rows


def craft_log_entry(table, entry):
    """Rewrite the table's current metadata file (PyIceberg's, in place) with `entry` as the
    oldest metadata-log entry and the cleanup properties set, so that icemaint's next commit
    pushes every earlier entry, `entry` included, out of the log."""
    path = Path(local(table.metadata_location))
    doc = json.loads(path.read_text())
    doc["metadata-log"].insert(0, {"timestamp-ms": 1, "metadata-file": entry})
    doc["properties"].update(CLEANUP)
    path.write_text(json.dumps(doc))


def assert_kept_with_warning(p, name, *words):
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("warning:") and name in ln]
    assert lines, p.stderr
    for w in words:
        assert any(w in ln for ln in lines), p.stderr


# ---- a table registered at one of this table's older metadata files ----

@pytest.mark.parametrize("spelling", ["same_name", "through_link", "other_catalog_name"])
def test_commit_metadata_cleanup_never_deletes_a_registered_clones_metadata(tmp_path, spelling):
    """ns.clone is registered (PyIceberg register_table) at ns.t's metadata after its first
    append, by the same name, through a link to the warehouse, or in another catalog_name of
    the same database. Two icemaint commits on ns.t with delete-after-commit and
    previous-versions-max=1 push that file (and the one before it, in the clone's log) out of
    ns.t's log: both stay, the clone loads and scans, and ns.t's other dropped files go."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.t", 3)
    mdir = Path(local(t.location())) / "metadata"
    first = sorted(mdir.glob("00001-*.metadata.json"))[0]
    name = f"file://{first}"
    if spelling == "through_link":
        os.symlink(tmp_path / "wh", tmp_path / "lnk")
        name = f"file://{tmp_path}/lnk/{first.relative_to(tmp_path / 'wh')}"
    clone_cat = cat if spelling != "other_catalog_name" else catalog(tmp_path, "other")[0]
    clone = clone_cat.register_table("ns.clone", name)
    clone_rows = scans(clone)
    age_all(tmp_path)
    committed(icm(tmp_path, cfg, "set-properties", "ns.t",
                  *[f"{k}={v}" for k, v in CLEANUP.items()]))
    p = icm(tmp_path, cfg, "set-properties", "ns.t", "x=1")
    committed(p)
    clone = clone_cat.load_table("ns.clone")
    assert first.exists()
    assert scans(clone) == clone_rows
    t = cat.load_table("ns.t")
    assert len(scans(t)) == 3
    # exactly: ns.t's current file and log, the clone's current file and its log (00000)
    assert metadata_files(mdir) == own_metadata(t) | {str(first)} | \
        {str(sorted(mdir.glob("00000-*.metadata.json"))[0])}
    assert len(metadata_files(mdir)) == 4


# ---- crafted metadata-log entries ----

def test_commit_metadata_cleanup_never_deletes_a_live_data_file(tmp_path):
    """A crafted metadata-log entry names a live data file of the current snapshot; the next
    commit pushes it out of the log. The file stays (warning: not named like a metadata
    file), the commit succeeds, the table scans."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.a", 2)
    data = sorted(Path(local(t.location())).glob("data/*.parquet"))[0]
    craft_log_entry(t, f"file://{data}")
    rows = scans(cat.load_table("ns.a"))
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "create-tag", "ns.a", "t1")
    committed(p)
    assert data.exists()
    assert_kept_with_warning(p, str(data), "not named like a metadata file")
    t = cat.load_table("ns.a")
    assert scans(t) == rows
    mdir = Path(local(t.location())) / "metadata"
    assert metadata_files(mdir) == own_metadata(t)  # the table's own dropped files went


def test_commit_metadata_cleanup_never_deletes_a_manifest_list(tmp_path):
    """A crafted entry names the current snapshot's manifest list, which lies in the metadata
    folder: not a metadata file by name, kept; the table still scans."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.a", 2)
    mlist = local(t.current_snapshot().manifest_list)
    craft_log_entry(t, f"file://{mlist}")
    rows = scans(cat.load_table("ns.a"))
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.a", "x=1")
    committed(p)
    assert os.path.exists(mlist)
    assert_kept_with_warning(p, mlist, "not named like a metadata file")
    assert scans(cat.load_table("ns.a")) == rows


@pytest.mark.parametrize("where", ["nested_table", "link_in_metadata_folder",
                                   "metadata_path_in_this_folder"])
def test_commit_metadata_cleanup_never_deletes_another_tables_metadata(tmp_path, where):
    """A crafted entry of ns.a's log names ns.b's current metadata file: ns.b nested in ns.a's
    folder (outside ns.a's metadata folder), reached through a link inside ns.a's metadata
    folder, or written into ns.a's metadata folder itself (ns.b's write.metadata.path). The
    commit on ns.a keeps it (warning), ns.b loads and scans."""
    cat, cfg = catalog(tmp_path)
    a = make_table(cat, "ns.a", 1)
    adir = Path(local(a.location()))
    kw = {}
    if where == "nested_table":
        kw = {"location": f"file://{adir}/sub_b"}
    elif where == "metadata_path_in_this_folder":
        kw = {"properties": {"write.metadata.path": f"file://{adir}/metadata"}}
    b = make_table(cat, "ns.b", 1, **kw)
    b_md = Path(local(b.metadata_location))
    entry = f"file://{b_md}"
    if where == "link_in_metadata_folder":
        os.symlink(b_md.parent, adir / "metadata" / "bl")
        entry = f"file://{adir}/metadata/bl/{b_md.name}"
    craft_log_entry(a, entry)
    b_rows = scans(b)
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.a", "x=1")
    committed(p)
    assert b_md.exists()
    assert_kept_with_warning(p, entry)
    assert scans(cat.load_table("ns.b")) == b_rows
    scans(cat.load_table("ns.a"))


def test_commit_metadata_cleanup_never_deletes_a_file_outside_the_metadata_folder(tmp_path):
    """A crafted entry names a copy of the table's own metadata kept elsewhere in its folder
    (`<location>/backup/`, same table-uuid): not directly in a metadata folder, kept."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.a", 1)
    adir = Path(local(t.location()))
    (adir / "backup").mkdir()
    copy = adir / "backup" / "00001-saved.metadata.json"
    copy.write_bytes(Path(local(t.metadata_location)).read_bytes())
    craft_log_entry(t, f"file://{copy}")
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.a", "x=1")
    committed(p)
    assert copy.exists()
    assert_kept_with_warning(p, str(copy), "does not lie directly in this table's metadata")
    scans(cat.load_table("ns.a"))


def test_commit_metadata_cleanup_never_deletes_metadata_of_another_table_uuid(tmp_path):
    """A crafted entry names a file in the table's own metadata folder that is another table's
    metadata (a different table-uuid; no catalog lists it): kept, by its table-uuid."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.a", 1)
    other = make_table(cat, "ns.o", 1)
    stray = Path(local(t.location())) / "metadata" / "00007-stray.metadata.json"
    stray.write_bytes(Path(local(other.metadata_location)).read_bytes())
    cat.drop_table("ns.o")
    craft_log_entry(t, f"file://{stray}")
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.a", "x=1")
    committed(p)
    assert stray.exists()
    assert_kept_with_warning(p, str(stray), "table-uuid")


# ---- another table whose metadata the strict reader rejects ----

@pytest.mark.parametrize("form", ["int_property", "dup_key"])
@pytest.mark.parametrize("names_it", [False, True], ids=["names_none", "names_one"])
def test_commit_metadata_cleanup_reads_another_tables_log_leniently(tmp_path, form, names_it):
    """ns.b's current metadata holds what icemaint's strict reader rejects but PyIceberg reads
    (an integer property value, a duplicate key); its metadata-log is still read, from its
    JSON: when it names one of ns.t's dropped metadata files (`names_one`), that file is kept
    (warning naming ns.b's metadata-log); when it names none, ns.t's commit deletes exactly
    what fell out of its log, with no warning (it used to keep them all: ns.b's metadata
    "could not be read")."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.t", 3)
    mdir = Path(local(t.location())) / "metadata"
    before = metadata_files(mdir)
    assert len(before) == 4
    oldest = min(before)
    b = make_table(cat, "ns.b", 1)
    b_path = Path(local(b.metadata_location))
    doc = json.loads(b_path.read_text())
    if names_it:
        doc["metadata-log"].insert(0, {"timestamp-ms": 1, "metadata-file": f"file://{oldest}"})
    if form == "int_property":
        doc["properties"]["write.parquet.row-group-limit"] = 1048576
    text = json.dumps(doc)
    if form == "dup_key":
        text = text[:-1] + ', "last-updated-ms": %d}' % doc["last-updated-ms"]
    b_path.write_text(text)
    b_rows = scans(cat.load_table("ns.b"))
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.t",
            *[f"{k}={v}" for k, v in CLEANUP.items()])
    committed(p)
    t = cat.load_table("ns.t")
    newest = max(before)
    kept = {oldest} if names_it else set()
    assert metadata_files(mdir) == {local(t.metadata_location), newest} | kept
    if names_it:
        assert_kept_with_warning(p, oldest, "metadata-log of table ns.b")
        assert len([ln for ln in p.stderr.splitlines() if ln.startswith("warning:")]) == 1
    else:
        assert "warning:" not in p.stderr, p.stderr
    scans(t)
    assert scans(cat.load_table("ns.b")) == b_rows


# ---- the normal case ----

def test_commit_metadata_cleanup_deletes_the_tables_own_dropped_metadata(tmp_path):
    """Nothing else names them: the commit deletes exactly the files that fell out of the log
    (Java's rule), with no warning, and the table scans every snapshot."""
    cat, cfg = catalog(tmp_path)
    t = make_table(cat, "ns.t", 3)
    mdir = Path(local(t.location())) / "metadata"
    rows = scans(t)
    before = metadata_files(mdir)
    assert len(before) == 4
    age_all(tmp_path)
    p = icm(tmp_path, cfg, "set-properties", "ns.t",
            *[f"{k}={v}" for k, v in CLEANUP.items()])
    committed(p)
    assert "warning:" not in p.stderr, p.stderr
    t = cat.load_table("ns.t")
    newest = max(before)  # 00003-..., the base of the commit
    assert metadata_files(mdir) == {local(t.metadata_location), newest}
    assert own_metadata(t) == {local(t.metadata_location), newest}
    p = icm(tmp_path, cfg, "create-tag", "ns.t", "t1")
    committed(p)
    assert "warning:" not in p.stderr, p.stderr
    t2 = cat.load_table("ns.t")
    assert metadata_files(mdir) == {local(t2.metadata_location), local(t.metadata_location)}
    assert scans(t2) == rows

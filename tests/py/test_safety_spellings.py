"""Data-loss class "non-canonical spellings of a table": every spelling of a table's place names
the same files.

A filesystem-layout table named by a relative directory was planned against the wrong roots: the
orphan sweep deleted its current `vN.metadata.json`, and commits through the relative path wrote
relative `metadata-file` entries into the metadata log, which a later sweep deleted. The rule:
a table's location, and every location icemaint reads, writes or records, is made absolute and
canonical once, where the table is opened; metadata never records a relative location; the
current metadata file, every metadata-log entry and the version hint are kept however spelled.

One PyIceberg-written table per spelling (relative directory, `./dir`, `a/../dir`, repeated
slashes, a relative link to the table folder, a symlinked parent folder either way round, the three `file:` forms, a `type: hadoop` catalog whose
`warehouse` is relative, dotted or through a link), turned into filesystem ("Hadoop") layout, then a sequence of every
operation through that spelling: remove-orphan-files, set-properties, create-branch, create-tag,
add-files, delete-files, remove-ref, rollback, expire-snapshots, remove-orphan-files. Before each
step every file is aged 10 days (all older than any cutoff). After each step:
  * the files under the table are exactly what its current metadata references (every
    snapshot's manifest list, manifests and live files, the current metadata file, every
    metadata-log entry, the version hint), plus the planted orphan where nothing swept it;
  * no location in the metadata, its log, manifest lists or manifests is relative;
  * PyIceberg loads the table and scans every retained snapshot.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pyiceberg_table = pytest.importorskip("pyiceberg.table")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import local  # noqa: E402
TEN_DAYS_S = 10 * 86400
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])




def is_absolute(p):
    return local(p).startswith("/")


def age_all(root):
    old = time.time() - TEN_DAYS_S
    for f in glob.glob(str(root / "**" / "*"), recursive=True):
        os.utime(f, (old, old), follow_symlinks=False)


def build_hadoop_table(root, via_link):
    """A PyIceberg table (3 appends) at root/wh/ns/t in filesystem layout: its last metadata file
    becomes metadata/v1.metadata.json (the earlier ones stay, in its metadata log) with a
    version hint. With via_link, PyIceberg writes through root/lnk -> root/wh, so the metadata
    names every file under the link."""
    wh = root / "wh"
    wh.mkdir()
    os.symlink(wh, root / "lnk")
    base = root / "lnk" if via_link else wh
    cat = pyiceberg_sql.SqlCatalog("build", uri=f"sqlite:///{root}/build.db",
                                   warehouse=f"file://{base}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    for i in range(3):
        t.append(pa.table({"id": [i * 10 + j for j in range(4)], "s": [f"r{i}"] * 4},
                          schema=SCHEMA))
    current = Path(local(cat.load_table("ns.t").metadata_location))
    os.rename(current, current.with_name("v1.metadata.json"))
    (current.parent / "version-hint.text").write_text("1")
    os.unlink(root / "build.db")
    return wh / "ns" / "t"


def current_metadata(tdir):
    n = int((tdir / "metadata" / "version-hint.text").read_text().strip())
    return tdir / "metadata" / f"v{n}.metadata.json"


def load(tdir):
    return pyiceberg_table.StaticTable.from_metadata(str(current_metadata(tdir)))


def referenced(table, md_file, tdir):
    """Every file the table's metadata keeps: snapshots' lists, manifests, live files; the
    metadata file, its log, the version hint."""
    io = table.io
    out = {str(md_file), str(tdir / "metadata" / "version-hint.text")}
    # (a relative entry names no place by itself: the tests that plant one add its file)
    out.update(local(e.metadata_file) for e in table.metadata.metadata_log
               if is_absolute(e.metadata_file))
    for snap in table.metadata.snapshots:
        out.add(local(snap.manifest_list))
        for mf in snap.manifests(io):
            out.add(local(mf.manifest_path))
            for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
                out.add(local(entry.data_file.file_path))
    return {os.path.realpath(p) for p in out}


def files_under(tdir):
    out = set()
    for dirpath, _dirs, names in os.walk(tdir):
        out.update(os.path.realpath(os.path.join(dirpath, n)) for n in names)
    return out


def assert_no_relative_location(table, md_file):
    doc = json.loads(md_file.read_text())
    assert is_absolute(doc["location"]), doc["location"]
    for e in doc.get("metadata-log", []):
        assert is_absolute(e["metadata-file"]), e
    for snap in table.metadata.snapshots:
        assert is_absolute(snap.manifest_list), snap.manifest_list
        for mf in snap.manifests(table.io):
            assert is_absolute(mf.manifest_path), mf.manifest_path
            for entry in mf.fetch_manifest_entry(table.io, discard_deleted=False):
                assert is_absolute(entry.data_file.file_path), entry.data_file.file_path


def check_table(tdir, extra=()):
    """Exactly the referenced files (plus `extra`) exist; nothing relative is recorded; PyIceberg
    loads the table and scans every retained snapshot."""
    table = load(tdir)
    md_file = current_metadata(tdir)
    want = referenced(table, md_file, tdir) | {os.path.realpath(p) for p in extra}
    have = files_under(tdir)
    assert have == want, (f"missing {sorted(want - have)}; unexpected {sorted(have - want)}")
    assert_no_relative_location(table, md_file)
    rows = {s.snapshot_id: table.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in table.metadata.snapshots}
    return table, rows


# name: (table argument, a data file's spelling, cwd) built from root and the table directory
SPELLINGS = {
    "relative_dir": lambda root, t: ("t", lambda f: f"t/data/{f}", t.parent),
    "dot_slash_dir": lambda root, t: ("./t", lambda f: f"./t/data/{f}", t.parent),
    "dot_dot_dir": lambda root, t: ("sub/../t", lambda f: f"sub/../t/data/{f}", t.parent),
    "symlinked_parent": lambda root, t: (f"{root}/lnk/ns/t",
                                         lambda f: f"{root}/lnk/ns/t/data/{f}", root),
    "real_path_of_linked_metadata": lambda root, t: (str(t), lambda f: f"{t}/data/{f}", root),
    "file_uri": lambda root, t: (f"file://{t}", lambda f: f"file://{t}/data/{f}", root),
    "file_localhost": lambda root, t: (f"file://localhost{t}",
                                       lambda f: f"file://localhost{t}/data/{f}", root),
    "file_single_slash": lambda root, t: (f"file:{t}", lambda f: f"file:{t}/data/{f}", root),
    "repeated_slashes": lambda root, t: (str(t).replace("/", "//") + "/",
                                         lambda f: f"{t}//data//{f}".replace("/", "//"), root),
    "relative_link_to_table": lambda root, t: ("lt", lambda f: f"lt/data/{f}", t.parent),
    "hadoop_relative_warehouse": lambda root, t: ("ns.t", lambda f: f"wh/ns/t/data/{f}", root),
    "hadoop_dotted_warehouse": lambda root, t: ("ns.t", lambda f: f"./ns/t/data/{f}",
                                                root / "wh"),
    "hadoop_linked_warehouse": lambda root, t: ("ns.t", lambda f: f"lnk/ns/t/data/{f}", root),
}
# the `warehouse` of the `type: hadoop` catalog (relative to the working directory) per case
WAREHOUSE = {"hadoop_dotted_warehouse": "../wh/./", "hadoop_linked_warehouse": "file:lnk"}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_table_spelling_keeps_every_referenced_file(tmp_path, spelling):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    root = tmp_path
    tdir = build_hadoop_table(root, via_link=spelling == "real_path_of_linked_metadata")
    (tdir.parent / "sub").mkdir()
    os.symlink("t", tdir.parent / "lt")  # a relative link to the table folder
    arg, spell_file, cwd = SPELLINGS[spelling](root, tdir)
    config = root / "hadoop.yaml"
    config.write_text("catalog:\n  fs:\n    type: hadoop\n"
                      f"    warehouse: {WAREHOUSE.get(spelling, 'wh')}\n")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(root / "nohome")

    def icm(*args):
        p = subprocess.run([CLI, "--config", str(config), "--catalog", "fs", *args],
                           cwd=cwd, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0, f"icemaint {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p

    def step(*args, stray=None):
        age_all(tdir)
        icm(*args)
        if stray is not None:
            assert not stray.exists(), f"{args[0]} left the orphan {stray}"
        return check_table(tdir)

    check_table(tdir)
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    step("remove-orphan-files", arg, stray=stray)
    step("set-properties", arg, "owner=spellings")
    step("create-branch", arg, "b1")
    table, _ = step("create-tag", arg, "t1")
    before_add = table.metadata.current_snapshot_id
    shutil.copy(sorted((tdir / "data").glob("*.parquet"))[0], tdir / "data" / "added.parquet")
    step("add-files", arg, spell_file("added.parquet"))
    step("delete-files", arg, spell_file("added.parquet"))
    step("remove-ref", arg, "t1")
    step("rollback", arg, str(before_add))
    table, rows = step("expire-snapshots", arg, "--older-than", "2099-01-01")
    assert table.metadata.current_snapshot_id == before_add
    assert rows[before_add] == 12
    stray.write_bytes(b"orphan again")
    step("remove-orphan-files", arg, stray=stray)
    # the commits went through this spelling: the log names every earlier file, absolutely
    log = json.loads(current_metadata(tdir).read_text())["metadata-log"]
    assert [Path(local(e["metadata-file"])).name for e in log][-8:] == \
        [f"v{n}.metadata.json" for n in range(1, 9)]


def with_relative_log_entry(tdir, extra_properties=None):
    """v2 of the table: v1's content plus a relative metadata-log entry naming v1 as an older
    icemaint recorded it after a commit through the relative table path `t`."""
    doc = json.loads((tdir / "metadata" / "v1.metadata.json").read_text())
    doc["metadata-log"].append({"timestamp-ms": doc["last-updated-ms"],
                                "metadata-file": "t/metadata/v1.metadata.json"})
    doc["properties"].update(extra_properties or {})
    (tdir / "metadata" / "v2.metadata.json").write_text(json.dumps(doc))
    (tdir / "metadata" / "version-hint.text").write_text("2")


def test_relative_metadata_log_entry_keeps_its_file(tmp_path):
    """A table that already carries a relative metadata-log entry (written by an older
    icemaint): the sweep, by absolute path from elsewhere, keeps the file it names."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    tdir = build_hadoop_table(tmp_path, via_link=False)
    with_relative_log_entry(tdir)
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tdir)
    table = load(tdir)
    want = referenced(table, current_metadata(tdir), tdir) | {str(tdir / "metadata" /
                                                                 "v1.metadata.json")}
    for args in (("remove-orphan-files", str(tdir)),
                 ("expire-snapshots", str(tdir), "--older-than", "2099-01-01")):
        p = subprocess.run([CLI, *args], cwd=tmp_path, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0, p.stderr
        table = load(tdir)
        want = (want & files_under(tdir)) | referenced(table, current_metadata(tdir), tdir)
        assert (tdir / "metadata" / "v1.metadata.json").exists()
        assert not stray.exists()
        assert files_under(tdir) == want
        for s in table.metadata.snapshots:
            table.scan(snapshot_id=s.snapshot_id).to_arrow()


def test_relative_metadata_log_entry_never_deletes_by_working_directory(tmp_path):
    """Metadata retention (delete-after-commit, previous-versions-max=1) pushes a relative
    metadata-log entry out of the log: it names a file relative to a working directory nobody
    knows, so it is never deleted, in particular not another table's file that the current
    working directory happens to hold at that relative path."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    tdir = build_hadoop_table(tmp_path, via_link=False)
    with_relative_log_entry(tdir, {"write.metadata.delete-after-commit.enabled": "true",
                                   "write.metadata.previous-versions-max": "1"})
    other = tmp_path / "elsewhere"
    decoy = other / "t" / "metadata" / "v1.metadata.json"  # another table's file
    decoy.parent.mkdir(parents=True)
    decoy.write_text("{}")
    age_all(tdir)
    p = subprocess.run([CLI, "set-properties", str(tdir), "owner=x"], cwd=other,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert decoy.exists()
    assert (tdir / "metadata" / "v1.metadata.json").exists()
    # the log's absolute entries pushed out went (Java's rule); v1, named relatively, stays
    table, _ = check_table(tdir, extra=[tdir / "metadata" / "v1.metadata.json"])
    log = [e.metadata_file for e in table.metadata.metadata_log]
    assert len(log) == 1 and is_absolute(log[0]) and log[0].endswith("v2.metadata.json")


def test_relative_catalog_pointer_keeps_current_metadata(tmp_path):
    """A SQL catalog row whose metadata_location is relative (an older icemaint registered the
    file as typed, from the warehouse's parent folder): the sweep, run from there, keeps the
    current metadata file; a commit through it is refused rather than recording it."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    for i in range(2):
        t.append(pa.table({"id": [i], "s": ["x"]}, schema=SCHEMA))
    current = Path(local(cat.load_table("ns.t").metadata_location))
    relative = os.path.relpath(current, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE iceberg_tables SET metadata_location = ? WHERE table_name = 't'",
                     (relative,))
    stray = wh / "ns" / "t" / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(wh)
    args = [CLI, "--uri", f"sqlite:///{db}", "--warehouse", f"file://{wh}", "--catalog", "c"]
    p = subprocess.run([*args, "remove-orphan-files", "ns.t"], cwd=tmp_path,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert current.exists()
    assert not stray.exists()
    table = pyiceberg_table.StaticTable.from_metadata(str(current))
    assert files_under(wh / "ns" / "t") == referenced(table, current, wh / "ns" / "t") - {
        os.path.realpath(wh / "ns" / "t" / "metadata" / "version-hint.text")}
    for s in table.metadata.snapshots:
        table.scan(snapshot_id=s.snapshot_id).to_arrow()
    p = subprocess.run([*args, "set-properties", "ns.t", "a=b"], cwd=tmp_path,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 1 and "relative" in p.stderr, p.stderr


@pytest.mark.parametrize("to_form", ["absolute", "relative"])
def test_relative_table_path_under_path_map_keeps_current_metadata(tmp_path, to_form):
    """A copy of a table swept under --path-map ORIGINAL=COPY, the copy named by a relative
    path (and the map's COPY absolute or relative): its metadata files are kept, the planted
    orphan goes, and the original is untouched."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    tdir = build_hadoop_table(tmp_path, via_link=False)
    copy = tmp_path / "copy" / "t"
    shutil.copytree(tdir, copy)
    stray = copy / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tmp_path)
    original = {os.path.relpath(f, tdir) for f in files_under(tdir)}
    to = str(copy) if to_form == "absolute" else "copy/t"
    p = subprocess.run([CLI, "--path-map", f"file://{tdir}={to}", "remove-orphan-files",
                        "copy/t"], cwd=tmp_path, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert {os.path.relpath(f, copy) for f in files_under(copy)} == original
    assert {os.path.relpath(f, tdir) for f in files_under(tdir)} == original
    check_table(tdir)

"""Table copies: maintaining a copy of a table never touches the original.

Table metadata names its `location` absolutely. A user who copied a filesystem-layout table
folder (`cp -a db/h backup-h`) and ran `remove-orphan-files backup-h` had the sweep list the
metadata's location (the ORIGINAL folder) with the COPY's keep set: it deleted the original's
newer metadata files, its new manifest list and manifest and a live data file.
`expire-snapshots backup-h` committed into the copy but deleted the original's manifest lists,
and the same happened through a catalog after `register-table db.h backup-h/metadata/vN...`.

The rule (the own-metadata check, icm_table_check_own_metadata): a run that deletes or commits
(sweep, expiry, every transaction) refuses, exit 5, when the table's current metadata file does
not lie inside its own `<location>/metadata` (or `write.metadata.path`), or a table directory
is not its metadata's location, compared where they really are; a `--path-map LOCATION=COPY`
(the documented way to work on a copy) makes the copy its own. Read-only commands and dry runs
keep working. register-table refuses such a file unless --force.

Each test builds one table with PyIceberg, turns it into filesystem layout, copies it, and then
commits once more to the original (so the two differ, as in the report); every file is aged 10
days. After each command the test asserts exactly which files exist (the original's byte for
byte) and that PyIceberg still scans every snapshot of the original.
"""
import hashlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pyiceberg_table = pytest.importorskip("pyiceberg.table")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, local  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])
CHECK = "own-metadata check"


def tree(root):
    """Every file below root with a digest of its content."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            out[p] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def write_parquet(path):
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), path)


def current_metadata(tdir):
    n = int((tdir / "metadata" / "version-hint.text").read_text().strip())
    return tdir / "metadata" / f"v{n}.metadata.json"


def scan_every_snapshot(tdir):
    table = pyiceberg_table.StaticTable.from_metadata(str(current_metadata(tdir)))
    rows = {s.snapshot_id: table.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in table.metadata.snapshots}
    assert rows, "the table should have snapshots"
    return rows


def referenced(md_file, tdir, rename=lambda p: p):
    """What a filesystem table's metadata keeps (files named through `rename`): every snapshot's
    list, manifests and live files, the metadata file, its log and the version hint."""
    table = pyiceberg_table.StaticTable.from_metadata(str(md_file))
    out = {str(md_file), str(tdir / "metadata" / "version-hint.text")}
    out.update(rename(local(e.metadata_file)) for e in table.metadata.metadata_log)
    for snap in table.metadata.snapshots:
        out.add(rename(local(snap.manifest_list)))
        for mf in snap.manifests(table.io):
            out.add(rename(local(mf.manifest_path)))
            for entry in mf.fetch_manifest_entry(table.io, discard_deleted=True):
                out.add(rename(local(entry.data_file.file_path)))
    return out


class Copied:
    """root/db/h: a PyIceberg table (4 appends) in filesystem layout, copied to root/backup-h,
    after which the original got one more commit (late.parquet added by icemaint)."""

    def __init__(self, root):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root = root
        self.orig = root / "db" / "h"
        self.copy = root / "backup-h"
        self.orig.parent.mkdir()
        cat = pyiceberg_sql.SqlCatalog("build", uri=f"sqlite:///{root}/build.db",
                                       warehouse=f"file://{root}")
        cat.create_namespace("db")
        t = cat.create_table("db.h", schema=SCHEMA, location=f"file://{self.orig}")
        for i in range(4):
            t.append(pa.table({"id": list(range(i * 5, i * 5 + 5))}, schema=SCHEMA))
        t = cat.load_table("db.h")
        n = len(t.metadata.metadata_log) + 1
        os.rename(local(t.metadata_location), self.orig / "metadata" / f"v{n}.metadata.json")
        (self.orig / "metadata" / "version-hint.text").write_text(str(n))
        os.unlink(root / "build.db")
        shutil.copytree(self.orig, self.copy, symlinks=True)
        late = self.orig / "data" / "late.parquet"
        write_parquet(late)
        self.icm_ok("add-files", str(self.orig), str(late))
        assert current_metadata(self.orig).name != current_metadata(self.copy).name
        age_all(root)
        self.orig_tree = tree(self.orig)
        self.orig_rows = scan_every_snapshot(self.orig)

    def icm(self, *args, cwd=None):
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        env["HOME"] = str(self.root / "nohome")
        return subprocess.run([CLI, *args], cwd=cwd or self.root, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    def icm_ok(self, *args, cwd=None):
        p = self.icm(*args, cwd=cwd)
        assert p.returncode == 0, f"icemaint {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p

    def assert_original_untouched(self):
        assert tree(self.orig) == self.orig_tree
        assert scan_every_snapshot(self.orig) == self.orig_rows

    def copy_name(self, p):
        """A file the copy's metadata names (the original's path) where the copy has it."""
        return p.replace(str(self.orig), str(self.copy), 1) if p.startswith(str(self.orig)) else p


def assert_refused(p, *words):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in (CHECK, "--path-map", *words):
        assert w in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def deleting_runs(table_arg, data_file):
    """Every kind of run that deletes or commits, on TABLE."""
    return [
        ("remove-orphan-files", table_arg),
        ("expire-snapshots", table_arg, "--older-than", "0m", "--retain-last", "1"),
        ("set-properties", table_arg, "owner=copy"),
        ("create-tag", table_arg, "t1"),
        ("add-files", table_arg, data_file),
    ]


@pytest.mark.parametrize("spelling", ["absolute", "relative", "file_uri"])
def test_copy_of_a_table_folder_is_never_maintained_as_the_original(tmp_path, spelling):
    """The copy, named however, is swept, expired and changed by transactions: each is refused
    (exit 5, naming the check, the metadata file, the original location and the --path-map
    that would work on the copy); neither folder changes. Read-only commands and dry runs
    still work."""
    c = Copied(tmp_path)
    arg = {"absolute": str(c.copy), "relative": "backup-h",
           "file_uri": f"file://{c.copy}"}[spelling]
    stray = c.copy / "data" / "stray.parquet"
    write_parquet(stray)
    age_all(c.copy)
    copy_tree = tree(c.copy)
    md = current_metadata(c.copy)
    for args in deleting_runs(arg, str(c.copy / "data" / "stray.parquet")):
        p = c.icm(*args)
        assert_refused(p, str(md), str(c.orig), f"={c.copy}")
        assert tree(c.copy) == copy_tree
        c.assert_original_untouched()
    for args in (("inspect", arg), ("snapshots", arg), ("files", "--all", arg),
                 ("manifests", arg), ("expire-snapshots", arg, "--older-than", "0m",
                                      "--retain-last", "1", "--dry-run")):
        c.icm_ok(*args)
    p = c.icm_ok("remove-orphan-files", arg, "--dry-run")
    assert "warning: a real run would be refused" in p.stderr and CHECK in p.stderr
    assert tree(c.copy) == copy_tree
    c.assert_original_untouched()


def test_copy_of_a_hadoop_warehouse_is_refused_through_its_catalog(tmp_path):
    """A `type: hadoop` catalog over a copied warehouse: ns.table names the copy's metadata,
    whose location is the original: refused."""
    c = Copied(tmp_path)
    wh_copy = tmp_path / "wh-copy"
    (wh_copy / "db").mkdir(parents=True)
    shutil.copytree(c.copy, wh_copy / "db" / "h", symlinks=True)
    write_parquet(wh_copy / "db" / "h" / "data" / "x.parquet")
    age_all(wh_copy)
    cfg = tmp_path / "hadoop.yaml"
    cfg.write_text(f"catalog:\n  fs:\n    type: hadoop\n    warehouse: {wh_copy}\n")
    copy_tree = tree(wh_copy)
    for args in deleting_runs("db.h", str(wh_copy / "db" / "h" / "data" / "x.parquet")):
        p = c.icm("--config", str(cfg), "--catalog", "fs", *args)
        assert_refused(p, str(c.orig))
        assert tree(wh_copy) == copy_tree
        c.assert_original_untouched()


def test_copy_under_a_path_map_is_maintained_and_the_original_untouched(tmp_path):
    """With --path-map ORIGINAL=COPY (the documented way to work on a copy), the copy is swept
    (its planted orphan goes), expired and changed, each exactly as its own metadata says,
    and the original keeps every byte."""
    c = Copied(tmp_path)
    pm = ("--path-map", f"{c.orig}={c.copy}")
    stray = c.copy / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(c.copy)

    def copy_keeps():
        md = current_metadata(c.copy)
        return referenced(md, c.copy, c.copy_name)

    keep = copy_keeps()
    assert set(tree(c.copy)) == keep | {str(stray)}
    c.icm_ok(*pm, "remove-orphan-files", str(c.copy))
    assert set(tree(c.copy)) == keep
    c.assert_original_untouched()

    c.icm_ok(*pm, "set-properties", str(c.copy), "owner=copy")
    c.icm_ok(*pm, "expire-snapshots", str(c.copy), "--older-than", "0m", "--retain-last", "1")
    keep = copy_keeps()
    snaps = pyiceberg_table.StaticTable.from_metadata(str(current_metadata(c.copy))) \
        .metadata.snapshots
    assert len(snaps) == 1
    assert set(tree(c.copy)) == keep
    c.assert_original_untouched()


PLACES_CHECK = "own-metadata check, copy places"


@pytest.mark.parametrize("case", ["data_back_to_original", "data_into_original_metadata",
                                  "data_outside_the_copy", "data_through_a_link_to_original",
                                  "copy_holds_the_original"])
def test_copy_whose_path_map_sends_a_place_back_to_the_original_is_refused(tmp_path, case):
    """Data-loss class: path-map rules that make a copy share a place with its original. With
    `--path-map ORIG=COPY --path-map ORIG/data=ORIG/data` the copy's data names were the
    original's files again: the copy's sweep of its data folder deleted the original's newest
    live data file, and the copy's expiry deleted data the original's snapshots still read.
    Rule: while the location is moved, every place the map gives the copy (its location and
    write paths, and every rule below them) shares no place with the original's roots, by name
    or through links, and rules below a root stay inside the copy's own places. Every deleting
    run is refused (exit 5, one line naming the check) and neither folder changes; a map with
    a rule that stays inside the copy still works."""
    c = Copied(tmp_path)
    orig, copy = c.orig, c.copy
    (copy / "datalink").symlink_to(orig / "data")
    rules = {
        "data_back_to_original": [f"{orig}={copy}", f"file://{orig}/data={orig}/data"],
        "data_into_original_metadata": [f"{orig}={copy}", f"{orig}/data={orig}/metadata"],
        "data_outside_the_copy": [f"{orig}={copy}", f"{orig}/data={tmp_path}/elsewhere"],
        "data_through_a_link_to_original": [f"{orig}={copy}", f"{orig}/data={copy}/datalink"],
        "copy_holds_the_original": [f"{orig}={tmp_path}"],
    }[case]
    pm = [a for r in rules for a in ("--path-map", r)]
    handed_in = tmp_path / "new.parquet"
    write_parquet(handed_in)
    stray = copy / "data" / "stray.parquet"
    write_parquet(stray)
    age_all(copy)
    copy_tree = tree(copy)
    runs = [r for r in deleting_runs(str(copy), str(handed_in))
            # a map whose TO holds its FROM cannot name a file handed in unambiguously:
            # add-files fails on that name (exit 1) before it reaches the table
            if not (case == "copy_holds_the_original" and r[0] == "add-files")] + [
        ("remove-orphan-files", str(copy), "--location", f"file://{orig}/data", "--settle", "0s"),
    ]
    for args in runs:
        p = c.icm(*pm, *args)
        assert p.returncode == 5, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        # a copy folder that holds the original is, seen through the map, not even the
        # folder its metadata lies in: the first own-metadata rule refuses it already
        assert (CHECK if case == "copy_holds_the_original" else PLACES_CHECK) in p.stderr, \
            p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert tree(copy) == copy_tree
        c.assert_original_untouched()
    c.icm_ok(*pm, "snapshots", str(copy))

    # A rule below the location that stays inside the copy is the copy's own business.
    (copy / "data2").mkdir()
    for f in (copy / "data").iterdir():
        os.rename(f, copy / "data2" / f.name)
    own = ("--path-map", f"{orig}={copy}", "--path-map", f"{orig}/data={copy}/data2")
    c.icm_ok(*own, "remove-orphan-files", str(copy), "--settle", "0s")
    c.icm_ok(*own, "expire-snapshots", str(copy), "--older-than", "0m", "--retain-last", "1")
    c.assert_original_untouched()
    table = pyiceberg_table.StaticTable.from_metadata(str(current_metadata(copy)))
    assert len(table.metadata.snapshots) == 1
    assert not stray.exists()  # the sweep took the copy's own orphan


def test_registered_copy_is_refused(tmp_path):
    """register-table of the copy's metadata file (its location is the original): refused
    unless --force; once registered with --force, every deleting run through the catalog is
    refused; under --path-map ORIGINAL=COPY the sweep works on the copy. The original keeps
    every byte."""
    c = Copied(tmp_path)
    db = tmp_path / "cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    g = ("--uri", f"sqlite:///{db}", "--warehouse", f"file://{tmp_path}/wh", "--catalog", "c")
    md = str(current_metadata(c.copy))
    write_parquet(c.copy / "data" / "x.parquet")
    age_all(c.copy)
    copy_tree = tree(c.copy)

    p = c.icm(*g, "register-table", "db.h", md)
    assert p.returncode == 5, p.stderr
    assert CHECK in p.stderr and "--force" in p.stderr and str(c.orig) in p.stderr, p.stderr
    assert cat.list_tables("db") == []
    c.icm_ok(*g, "register-table", "db.h", md, "--force")
    assert [i[1] for i in cat.list_tables("db")] == ["h"]

    for args in deleting_runs("db.h", str(c.copy / "data" / "x.parquet")):
        p = c.icm(*g, *args)
        assert_refused(p, md, str(c.orig), f"={c.copy}")
        assert tree(c.copy) == copy_tree
        c.assert_original_untouched()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT metadata_location FROM iceberg_tables").fetchall() == \
            [(md,)]

    stray = str(c.copy / "data" / "x.parquet")  # nothing references it: an orphan of the copy
    c.icm_ok(*g, "--path-map", f"{c.orig}={c.copy}", "remove-orphan-files", "db.h")
    assert tree(c.copy) == {f: h for f, h in copy_tree.items() if f != stray}
    c.assert_original_untouched()


def test_registered_copy_commit_under_a_path_map_records_where_the_file_is(tmp_path):
    """Catalog-entry corruption class: a copy registered (--force) under its own place, expired
    through its catalog under --path-map ORIGINAL=COPY. The new metadata file is written at the
    copy's place, and the catalog row must name it there (it named the copy's file before):
    recording the original's name left the copy's row pointing at a file that does not exist,
    so no reader could load the copy, and the original's own sweep was refused because of it.
    The original keeps every byte; PyIceberg loads the copy through its catalog afterwards."""
    c = Copied(tmp_path)
    db = tmp_path / "cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    g = ("--uri", f"sqlite:///{db}", "--warehouse", f"file://{tmp_path}/wh", "--catalog", "c")
    md = str(current_metadata(c.copy))
    c.icm_ok(*g, "register-table", "db.h", md, "--force")
    before = scan_every_snapshot(c.copy)
    c.icm_ok(*g, "--path-map", f"{c.orig}={c.copy}", "expire-snapshots", "db.h",
             "--older-than", "2099-01-01T00:00:00Z", "--retain-last", "1")
    with sqlite3.connect(db) as conn:
        (row,) = conn.execute("SELECT metadata_location FROM iceberg_tables").fetchall()
    new = local(row[0])
    assert new != md and new.startswith(str(c.copy) + "/metadata/"), row
    assert os.path.exists(new), row
    t = cat.load_table("db.h")
    assert len(t.metadata.snapshots) == 1
    assert t.scan().to_arrow().num_rows == before[t.metadata.current_snapshot_id]
    c.assert_original_untouched()


# ---- copies of a table whose write.data.path / write.metadata.path lie outside its location ----
#
# A --path-map LOCATION=COPY rewrites only names below the location. A table whose
# `write.data.path` or `write.metadata.path` lies outside it keeps naming the ORIGINAL's folders
# there: the copy's sweep of that folder deleted the original's newer data file, its expiry a
# data file the original's older snapshot still reads, and its commits wrote into (and metadata
# retention deleted from) the original's metadata folder. The rule (the own-metadata check, copy
# roots): while the path map moves the location, every such root must be mapped too, else the
# run is refused naming the property, its place and the --path-map for it.

ROOT_CHECK = "own-metadata check, copy roots"


class OutsideRoots:
    """root/db/t with `prop` (write.data.path or write.metadata.path) at root/outside, in a
    PyIceberg SQL catalog (root/cat.db, kept, to scan the original). Two snapshots (append, then
    overwrite: the first data file is read only by the older snapshot), then a copy: root/copy
    (filesystem layout, its metadata the original's current file as v1) and root/copy-outside
    (the outside folder's copy); then the original gets one more append, so the two differ."""

    def __init__(self, root, prop):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.prop = root, prop
        self.orig, self.outside = root / "db" / "t", root / "outside"
        self.copy, self.copy_outside = root / "copy", root / "copy-outside"
        self.cat = pyiceberg_sql.SqlCatalog("orig", uri=f"sqlite:///{root}/cat.db",
                                            warehouse=f"file://{root}")
        self.cat.create_namespace("db")
        props = {prop: str(self.outside)}
        if prop == "write.metadata.path":
            props.update({"write.metadata.delete-after-commit.enabled": "true",
                          "write.metadata.previous-versions-max": "1"})
        t = self.cat.create_table("db.t", schema=SCHEMA, location=str(self.orig),
                                  properties=props)
        t.append(pa.table({"id": [1]}, schema=SCHEMA))
        self.cat.load_table("db.t").overwrite(pa.table({"id": [2]}, schema=SCHEMA))
        md = local(self.cat.load_table("db.t").metadata_location)
        shutil.copytree(self.orig, self.copy, symlinks=True)
        shutil.copytree(self.outside, self.copy_outside, symlinks=True)
        (self.copy / "metadata").mkdir(exist_ok=True)
        for f in (self.copy / "metadata").glob("*.metadata.json"):
            f.unlink()
        shutil.copy2(md, self.copy / "metadata" / "v1.metadata.json")
        (self.copy / "metadata" / "version-hint.text").write_text("1")
        self.cat.load_table("db.t").append(pa.table({"id": [3]}, schema=SCHEMA))
        age_all(root)
        self.orig_tree = {**tree(self.orig), **tree(self.outside)}
        self.orig_rows = self.scan_original()

    def scan_original(self):
        t = self.cat.load_table("db.t")
        rows = {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
                for s in t.metadata.snapshots}
        assert len(rows) == 4  # append, overwrite (a delete and an append), append
        return rows

    def copy_tree(self):
        return {**tree(self.copy), **tree(self.copy_outside)}

    def assert_original_untouched(self):
        assert {**tree(self.orig), **tree(self.outside)} == self.orig_tree
        assert self.scan_original() == self.orig_rows

    def location_map(self):
        return ("--path-map", f"{self.orig}={self.copy}")

    def both_maps(self):
        return (*self.location_map(), "--path-map", f"{self.outside}={self.copy_outside}")

    icm = Copied.icm
    icm_ok = Copied.icm_ok


def assert_root_refused(p, c):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in (ROOT_CHECK, c.prop, str(c.outside), f"--path-map {c.outside}="):
        assert w in p.stderr, p.stderr


def test_copy_with_data_path_outside_its_location_needs_that_path_mapped(tmp_path):
    """write.data.path outside the location, path map on the location only: the sweep of the
    data path (--location), expiry (which would delete the first data file, still read by the
    original's first snapshot) and a transaction are refused and nothing changes; a dry sweep
    warns. With the data path mapped too, the copy is swept and expired in its own folders and
    the original keeps every byte."""
    c = OutsideRoots(tmp_path, "write.data.path")
    copy_tree = c.copy_tree()
    runs = [("remove-orphan-files", str(c.copy), "--location", str(c.outside), "--settle", "0s"),
            ("remove-orphan-files", str(c.copy), "--location", f"file://{c.outside}",
             "--settle", "0s"),
            ("remove-orphan-files", str(c.copy)),
            ("expire-snapshots", str(c.copy), "--older-than", "0m", "--retain-last", "1"),
            ("set-properties", str(c.copy), "owner=copy")]
    for args in runs:
        assert_root_refused(c.icm(*c.location_map(), *args), c)
        assert c.copy_tree() == copy_tree
        c.assert_original_untouched()
    p = c.icm_ok(*c.location_map(), "remove-orphan-files", str(c.copy), "--location",
                 str(c.outside), "--dry-run")
    assert "a real run would be refused" in p.stderr and ROOT_CHECK in p.stderr, p.stderr
    c.icm_ok(*c.location_map(), "snapshots", str(c.copy))

    # Both roots mapped: the copy is its own table.
    stray = c.copy_outside / "stray.parquet"
    write_parquet(stray)
    age_all(c.copy_outside)
    c.icm_ok(*c.both_maps(), "remove-orphan-files", str(c.copy), "--location", str(c.outside),
             "--settle", "0s")
    assert c.copy_tree() == copy_tree
    c.assert_original_untouched()
    c.icm_ok(*c.both_maps(), "expire-snapshots", str(c.copy), "--older-than", "0m",
             "--retain-last", "1")
    table = pyiceberg_table.StaticTable.from_metadata(str(current_metadata(c.copy)))
    assert len(table.metadata.snapshots) == 1
    rename = lambda p: p.replace(str(c.outside), str(c.copy_outside), 1)  # noqa: E731
    keep = referenced(current_metadata(c.copy), c.copy, rename) - \
        {str(c.copy / "metadata" / "v1.metadata.json")}
    outside = lambda files: {f for f in files if f.startswith(str(c.copy_outside))}  # noqa
    after = outside(c.copy_tree())
    assert after == outside(keep)
    assert after < outside(copy_tree)  # the first data file went, from the copy only
    c.assert_original_untouched()


@pytest.mark.parametrize("via_catalog", [False, True])
def test_copy_with_metadata_path_outside_its_location_needs_that_path_mapped(tmp_path,
                                                                            via_catalog):
    """write.metadata.path outside the location (retention on, one previous version), path map
    on the location only: a transaction on the copy (by its folder, or registered in a second
    catalog: register-table refuses) is refused and no metadata file is written or deleted in
    the original's folder. With the metadata path mapped too, three commits to the registered
    copy go to the copy's folders and retention deletes only the copy's files; the original
    keeps every byte. (A filesystem table never commits with write.metadata.path, as in Java.)"""
    c = OutsideRoots(tmp_path, "write.metadata.path")
    copy_tree = c.copy_tree()
    if via_catalog:
        db = tmp_path / "c2.db"
        c2 = pyiceberg_sql.SqlCatalog("c2", uri=f"sqlite:///{db}",
                                      warehouse=f"file://{tmp_path}/wh2")
        c2.create_namespace("db")
        g = ("--uri", f"sqlite:///{db}", "--warehouse", f"file://{tmp_path}/wh2",
             "--catalog", "c2")
        md = str(c.copy / "metadata" / "v1.metadata.json")
        assert_root_refused(c.icm(*g, *c.location_map(), "register-table", "db.copy", md), c)
        assert c2.list_tables("db") == []
        c.icm_ok(*g, *c.both_maps(), "register-table", "db.copy", md)
        target, pre = "db.copy", g
    else:
        target, pre = str(c.copy), ()
    for _ in range(2):
        assert_root_refused(c.icm(*pre, *c.location_map(), "set-properties", target, "k=v"), c)
        assert c.copy_tree() == copy_tree
        c.assert_original_untouched()
    if not via_catalog:
        return  # filesystem tables never commit with write.metadata.path (as in Java)

    for i in range(3):
        c.icm_ok(*pre, *c.both_maps(), "set-properties", target, f"k={i}")
    c.assert_original_untouched()
    after = c.copy_tree()
    new = set(after) - set(copy_tree)
    assert new and all(f.startswith(str(c.copy_outside)) or f.startswith(str(c.copy))
                       for f in new)
    assert len([f for f in after if f.endswith(".metadata.json")]) >= 2

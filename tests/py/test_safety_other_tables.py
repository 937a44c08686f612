"""Another catalog table's places are compared by where they really are, not by spelling.

The sweep's catalog guard and expiry's other-table hold compared another table's folders with
this table's by name, so a `write.data.path` spelled through a symbolic link (`L/a/bdata`,
`L -> W`) or with `..` (`W/a/x/../bdata`), or this table's location spelled through a link,
hid that the other table's data lay inside this table's folder: the sweep deleted it, and
expiry deleted a live file of it that this table had added and then deleted. The guard also
never asked whether the listing location lies inside a folder another catalog table writes
into (B keeping its metadata elsewhere, A located at B/data), and ignored Java's legacy data
paths `write.object-storage.path` and `write.folder-storage.path`. The rules:

- the sweep refuses (exit 5, naming the other table and its place) when one of another catalog
  table's places (metadata file, location, write paths, legacy paths) lies at or below the
  listing location, by name or by where it really is; and, with no override, when the listing
  location lies at or below a folder another table writes into (its write and legacy paths,
  its `<location>/data` and `<location>/metadata`; not merely below its location);
- expiry holds a planned file that lies in such a place, by name or by where it really is
  (warning `other_table`), and deletes the rest of what only the expired snapshots reached.
- another table's metadata that icemaint's strict reader rejects but other tools read (a tag
  on a snapshot no longer there, a property value that is not a string, a duplicate key) still
  tells its places: they are read from its JSON leniently. Metadata that is not JSON at all
  tells none: the sweep refuses (naming that table and its metadata file) and expiry holds
  every file it planned to delete.

Every table is written by PyIceberg (one SQLite catalog); every file is aged 10 days first.
After each command the tests assert exactly which files exist, and that PyIceberg still scans
the other table.
"""
import json
import os
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
expressions = pytest.importorskip("pyiceberg.expressions")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, referenced, rows_per_snapshot  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])
LEGACY = ("write.folder-storage.path", "write.object-storage.path")



def append(table, n, base=0):
    for i in range(n):
        table.append(pa.table({"id": [base + i]}, schema=SCHEMA))


class Env:
    """A SQLite catalog over the warehouse W (tmp/w), a link L (tmp/l) to W, and the
    configuration the CLI reads (outside W)."""

    def __init__(self, root):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.w, self.l = root, root / "w", root / "l"
        self.w.mkdir()
        os.symlink(self.w, self.l)
        self.db = root / "cat.db"
        self.cfg = root / "conf.yaml"
        self.cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{self.db}\n"
                            f"    warehouse: file://{self.w}\n")
        self.cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{self.db}",
                                            warehouse=f"file://{self.w}")
        self.cat.create_namespace("ns")

    def spell(self, s):
        """`@W`/`@L` in s replaced with the warehouse and the link to it."""
        return s.replace("@W", str(self.w)).replace("@L", str(self.l))

    def table(self, name, location=None, properties=None, rows=1, base=0):
        kw = {"location": "file://" + self.spell(location)} if location else {}
        t = self.cat.create_table(f"ns.{name}", schema=SCHEMA,
                                  properties={k: "file://" + self.spell(v)
                                              for k, v in (properties or {}).items()}, **kw)
        append(t, rows, base)
        return self.cat.load_table(f"ns.{name}")

    def load(self, name):
        return self.cat.load_table(f"ns.{name}")

    def icm(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        env["HOME"] = str(self.root / "nohome")
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "c", *args],
                              cwd=self.root, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)


def to_legacy_path(env, name, prop):
    """Move ns.name's write.data.path to Java's legacy property `prop` (as Java's older tables
    have it; PyIceberg writes only through write.data.path)."""
    t = env.load(name)
    path = t.properties["write.data.path"]
    with t.transaction() as tx:
        tx.set_properties({prop: path})
        tx.remove_properties("write.data.path")
    t = env.load(name)
    assert t.properties.get(prop) == path and "write.data.path" not in t.properties
    return t


def assert_refused(p, *words):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in words:
        assert w in p.stderr, p.stderr


def assert_sweep_refused_and_nothing_deleted(env, table, *words, extra=()):
    age_all(env.w)
    b_rows = rows_per_snapshot(env.load("b"))
    before = files_under(env.w)
    for args in ((), ("--dry-run",), extra):
        p = env.icm("remove-orphan-files", table, *args)
        assert_refused(p, "ns.b", *words)
        assert files_under(env.w) == before
    assert rows_per_snapshot(env.load("b")) == b_rows


UNPARSEABLE = ("dangling_ref", "int_property", "dup_key")


def rewrite_b_metadata(env, form):
    """Point ns.b at a new current metadata file (its old one in the metadata-log) that holds
    what another tool may leave and icemaint's strict reader rejects: `dangling_ref` a tag on a
    snapshot no longer in the metadata, `int_property` an integer property value, `dup_key` a
    duplicate key; PyIceberg still reads and scans ns.b. `not_json`: no JSON at all. Returns
    the new file's path."""
    cur = env.load("b").metadata_location
    md = json.loads(Path(local(cur)).read_text())
    if form == "dangling_ref":
        md["refs"]["old-tag"] = {"snapshot-id": 1234567, "type": "tag"}
    elif form == "int_property":
        md["properties"]["write.parquet.row-group-limit"] = 1048576
    md["metadata-log"].append({"timestamp-ms": md["last-updated-ms"], "metadata-file": cur})
    text = json.dumps(md)
    if form == "dup_key":
        text = text[:-1] + ', "last-updated-ms": %d}' % md["last-updated-ms"]
    elif form == "not_json":
        text = "this is not JSON\n"
    new = Path(local(cur)).parent / f"00099-{uuid.uuid4()}.metadata.json"
    new.write_text(text)
    db = sqlite3.connect(env.db)
    db.execute("update iceberg_tables set previous_metadata_location=metadata_location, "
               "metadata_location=? where table_namespace='ns' and table_name='b'",
               ("file://" + str(new),))
    db.commit()
    db.close()
    if form != "not_json":
        t = env.load("b")
        assert t.metadata_location == "file://" + str(new)
        assert t.scan().to_arrow().num_rows == 2
    return str(new)


# ---- the sweep ---------------------------------------------------------------------------

@pytest.mark.parametrize("a_location,b_data", [
    ("@W/a", "@L/a/bdata"),   # B's write.data.path spelled through the link
    ("@L/a", "@W/a/bdata"),   # A's location spelled through the link
], ids=["other-spelled-via-link", "own-location-via-link"])
def test_other_table_place_spelled_through_a_link_is_never_swept(tmp_path, a_location, b_data):
    """ns.b's data lies physically in ns.a's folder (W/a/bdata), one of the two spelled through
    the link L -> W: the sweep of ns.a refuses, naming ns.b's write.data.path; nothing goes."""
    env = Env(tmp_path)
    env.table("a", location=a_location)
    env.table("b", properties={"write.data.path": b_data}, rows=2)
    assert any(f.endswith(".parquet") for f in files_under(env.w / "a" / "bdata"))
    (env.w / "a" / "data" / "stray.parquet").write_bytes(b"orphan")
    assert_sweep_refused_and_nothing_deleted(env, "ns.a", "write.data.path",
                                             "refusing to sweep a folder shared")


@pytest.mark.parametrize("a_location,b_data,exclude", [
    ("@W/a", "@L/a/bdata", "@L/a/bdata"),   # excluded as B spells it (through the link)
    ("@L/a", "@W/a/bdata", "@W/a/bdata"),   # A spelled through the link, B's real folder
], ids=["as-the-other-table-spells-it", "real-folder-under-a-linked-location"])
def test_exclusion_the_refusal_accepts_is_what_the_listing_skips(tmp_path, a_location, b_data,
                                                                 exclude):
    """The refusal says to carve ns.b's folder out with --exclude-location; the folder spelled
    as ns.b (or the refusal) spells it lifts the refusal, so the listing must skip the same
    files under the listing's own spelling: only ns.a's stray file goes, ns.b keeps every
    file and scans as before."""
    env = Env(tmp_path)
    env.table("a", location=a_location)
    env.table("b", properties={"write.data.path": b_data}, rows=2)
    stray = env.w / "a" / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(env.w)
    b_rows = rows_per_snapshot(env.load("b"))
    before = files_under(env.w)
    p = env.icm("remove-orphan-files", "ns.a", "--exclude-location",
                "file://" + env.spell(exclude))
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert files_under(env.w) == before - {str(stray)}
    assert rows_per_snapshot(env.load("b")) == b_rows


def test_other_table_place_spelled_with_dot_dot_is_never_swept(tmp_path):
    """ns.b's write.data.path is W/a/x/../bdata, i.e. W/a/bdata in ns.a's folder: refused."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/x/../bdata"}, rows=2)
    assert any(f.endswith(".parquet") for f in files_under(env.w / "a" / "bdata"))
    assert_sweep_refused_and_nothing_deleted(env, "ns.a", "write.data.path",
                                             str(env.w / "a" / "bdata"))


def test_listing_inside_another_tables_data_folder_is_never_swept(tmp_path):
    """ns.b (location W/b) keeps its metadata elsewhere (write.metadata.path W/bmeta), so no
    W/b/metadata folder shows on disk; ns.a is located at W/b/data, ns.b's data folder. The
    sweep of ns.a refuses with no override (--exclude-location of ns.b's files does not help).
    A table at the warehouse root does not make every other table unsweepable: only the
    folders it writes into count, so ns.c (below it) is still swept."""
    env = Env(tmp_path)
    env.table("b", location="@W/b", properties={"write.metadata.path": "@W/bmeta"}, rows=2)
    assert not (env.w / "b" / "metadata").exists()
    env.table("a", location="@W/b/data")
    env.table("root", location="@W")
    env.table("c", location="@W/ns/c")
    stray = env.w / "ns" / "c" / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    b_files = [local(f) for f in referenced(env.load("b")) if f.endswith(".parquet")]
    assert b_files and all(f.startswith(str(env.w / "b" / "data")) for f in b_files)
    assert_sweep_refused_and_nothing_deleted(
        env, "ns.a", "data folder", "no override",
        extra=tuple(a for f in b_files for a in ("--exclude-location", f)))
    p = env.icm("remove-orphan-files", "ns.c")
    assert p.returncode == 0, p.stderr
    assert not stray.exists()
    assert files_under(env.w / "ns" / "c") == referenced(env.load("c"))


@pytest.mark.parametrize("prop", LEGACY)
def test_other_tables_legacy_data_path_inside_the_listing_is_never_swept(tmp_path, prop):
    """ns.b writes its data through Java's legacy `prop` into W/a/legacy, inside ns.a's
    folder: the sweep of ns.a refuses, naming that property."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/legacy"}, rows=2)
    to_legacy_path(env, "b", prop)
    assert any(f.endswith(".parquet") for f in files_under(env.w / "a" / "legacy"))
    assert_sweep_refused_and_nothing_deleted(env, "ns.a", prop)


@pytest.mark.parametrize("prop", LEGACY)
def test_listing_at_another_tables_legacy_data_path_is_never_swept(tmp_path, prop):
    """ns.a is located at W/shared, the folder ns.b writes its data into through Java's legacy
    `prop`: the sweep of ns.a refuses with no override."""
    env = Env(tmp_path)
    env.table("b", properties={"write.data.path": "@W/shared"}, rows=2)
    to_legacy_path(env, "b", prop)
    env.table("a", location="@W/shared")
    assert_sweep_refused_and_nothing_deleted(env, "ns.a", prop, "no override")


@pytest.mark.parametrize("form", UNPARSEABLE)
def test_other_table_whose_metadata_the_strict_reader_rejects_is_never_swept(tmp_path, form):
    """ns.b writes its data into W/a/bdata, inside ns.a's folder, and its current metadata
    holds what icemaint's strict reader rejects but PyIceberg reads (`form`): its places are
    read from its JSON leniently, so the sweep of ns.a refuses naming ns.b's write.data.path
    (it used to judge ns.b by its pointer alone and delete ns.b's data)."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/bdata"}, rows=2)
    rewrite_b_metadata(env, form)
    assert any(f.endswith(".parquet") for f in files_under(env.w / "a" / "bdata"))
    assert_sweep_refused_and_nothing_deleted(env, "ns.a", "write.data.path",
                                             "refusing to sweep a folder shared")


def test_other_table_whose_metadata_is_not_json_refuses_every_sweep(tmp_path):
    """ns.b's current metadata file is not JSON at all: where ns.b's files go cannot be told
    (its data lies in W/a/bdata, inside ns.a's folder), so the sweep of ns.a refuses, naming
    ns.b and its metadata file; nothing is deleted."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/bdata"}, rows=2)
    b_data = {f for f in files_under(env.w / "a" / "bdata") if f.endswith(".parquet")}
    assert b_data
    bad = rewrite_b_metadata(env, "not_json")
    age_all(env.w)
    before = files_under(env.w)
    for args in ((), ("--dry-run",)):
        p = env.icm("remove-orphan-files", "ns.a", *args)
        assert_refused(p, "ns.b", bad, "not table metadata", "refusing to sweep",
                       "repair that table's metadata, or drop it from the catalog")
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(env.w) == before


# ---- expiry ------------------------------------------------------------------------------

def real(paths):
    """Where each path really is (the link L resolved), as files_under names them."""
    return {os.path.realpath(local(p)) for p in paths}


def expire_after_adding_b_file(env, b_file, add_as=None, all_held=False):
    """ns.a adds ns.b's live file `b_file` (named `add_as`), deletes those rows, and expires
    every snapshot but the current one: exit 0, the file is held (a warning naming ns.b and
    the file), ns.b keeps every file and row, and what went is exactly ns.a's files that only
    the expired snapshots reached (`all_held`: none, every one lies in ns.b's places too)."""
    name = add_as or b_file
    env.load("a").add_files([name])
    (value,) = pq.read_table(b_file).column("id").to_pylist()
    env.load("a").delete(expressions.EqualTo("id", value))
    age_all(env.w)
    time.sleep(1.1)
    a_before = real(referenced(env.load("a")))
    b_refs = real(referenced(env.load("b")))
    b_rows = rows_per_snapshot(env.load("b"))
    before = files_under(env.w)
    assert b_refs <= before
    p = env.icm("expire-snapshots", "ns.a", "--retain-last", "1", "--older-than", "1s")
    assert p.returncode == 0, p.stderr
    a_after = env.load("a")
    assert len(a_after.metadata.snapshots) == 1
    after = files_under(env.w)
    expected_gone = a_before - real(referenced(a_after)) - {os.path.realpath(b_file)}
    assert expected_gone
    if all_held:
        assert before <= after and all(f.endswith(".metadata.json") for f in after - before)
        for f in expected_gone:
            assert any(l.startswith("warning: ") and f in l and "ns.b" in l
                       for l in p.stderr.splitlines()), (f, p.stderr)
    else:
        assert before - after == expected_gone, (before - after, expected_gone)
    assert b_refs <= after
    assert rows_per_snapshot(env.load("b")) == b_rows
    assert any(l.startswith("warning: ") and "ns.b" in l and local(name) in l and
               "another catalog table may use it" in l for l in p.stderr.splitlines()), p.stderr
    return p


@pytest.mark.parametrize("a_location,b_data,add_via", [
    ("@W/a", "@L/a/bdata", "@W"),   # B's write.data.path through the link, file added by W
    ("@L/a", "@W/a/bdata", "@L"),   # A's location through the link, file added through it
    ("@W/a", "@W/a/x/../bdata", "@W"),  # B's write.data.path with ".."
], ids=["other-spelled-via-link", "own-location-via-link", "other-spelled-with-dot-dot"])
def test_other_table_place_spelled_through_a_link_is_held_by_expiry(tmp_path, a_location,
                                                                    b_data, add_via):
    """ns.b's data lies physically in ns.a's folder, spelled differently; ns.a adds one of
    ns.b's live files, deletes those rows, and expires: the file is held (other_table
    warning naming ns.b), the expired manifests and lists go."""
    env = Env(tmp_path)
    env.table("a", location=a_location)
    env.table("b", properties={"write.data.path": b_data}, rows=2, base=500)
    b_file = sorted(f for f in files_under(env.w / "a" / "bdata") if f.endswith(".parquet"))[0]
    add_as = env.spell(add_via) + b_file[len(str(env.w)):]
    expire_after_adding_b_file(env, b_file, add_as=add_as)


def test_file_in_another_tables_data_folder_at_this_tables_location_is_held_by_expiry(tmp_path):
    """ns.a is located at W/b/data, ns.b's data folder (ns.b keeps its metadata elsewhere): a
    live file of ns.b that ns.a added and deleted is held by expiry. So is every file of ns.a
    (its own files lie in ns.b's data folder too, where they cannot be told from ns.b's): the
    expiry commits and deletes nothing."""
    env = Env(tmp_path)
    env.table("b", location="@W/b", properties={"write.metadata.path": "@W/bmeta"}, rows=2,
              base=500)
    env.table("a", location="@W/b/data")
    b_file = sorted(local(f) for f in referenced(env.load("b")) if f.endswith(".parquet"))[0]
    expire_after_adding_b_file(env, b_file, all_held=True)


@pytest.mark.parametrize("prop", LEGACY)
def test_file_under_another_tables_legacy_data_path_is_held_by_expiry(tmp_path, prop):
    """ns.b writes its data through Java's legacy `prop` into W/a/legacy, inside ns.a's folder:
    a live file of ns.b that ns.a added and deleted is held by expiry."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/legacy"}, rows=2, base=500)
    to_legacy_path(env, "b", prop)
    b_file = sorted(f for f in files_under(env.w / "a" / "legacy") if f.endswith(".parquet"))[0]
    expire_after_adding_b_file(env, b_file)


@pytest.mark.parametrize("form", UNPARSEABLE)
def test_file_of_other_table_whose_metadata_the_strict_reader_rejects_is_held_by_expiry(
        tmp_path, form):
    """ns.b writes its data into W/a/bdata and its current metadata holds what icemaint's
    strict reader rejects but PyIceberg reads (`form`); ns.a adds one of ns.b's live files,
    deletes those rows, and expires: the file is held (other_table warning naming ns.b)."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/bdata"}, rows=2, base=500)
    b_file = sorted(f for f in files_under(env.w / "a" / "bdata") if f.endswith(".parquet"))[0]
    rewrite_b_metadata(env, form)
    expire_after_adding_b_file(env, b_file)


def test_other_table_whose_metadata_is_not_json_holds_every_file_expiry_planned(tmp_path):
    """ns.b's current metadata file is not JSON at all; ns.a adds one of ns.b's live files,
    deletes those rows, and expires: where ns.b's files go cannot be told, so every file the
    expiry planned to delete is held (a warning naming ns.b and its metadata file), ns.b's
    files among them; the expiry itself commits."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    env.table("b", properties={"write.data.path": "@W/a/bdata"}, rows=2, base=500)
    b_data = {f for f in files_under(env.w / "a" / "bdata") if f.endswith(".parquet")}
    b_file = sorted(b_data)[0]
    env.load("a").add_files([b_file])
    env.load("a").delete(expressions.EqualTo("id", pq.read_table(b_file).column("id")[0].as_py()))
    bad = rewrite_b_metadata(env, "not_json")
    age_all(env.w)
    time.sleep(1.1)
    before = files_under(env.w)
    p = env.icm("expire-snapshots", "ns.a", "--retain-last", "1", "--older-than", "1s")
    assert p.returncode == 0, p.stderr
    assert len(env.load("a").metadata.snapshots) == 1
    after = files_under(env.w)
    assert before <= after and all(f.endswith(".metadata.json") for f in after - before)
    assert any(l.startswith("warning: ") and b_file in l and "ns.b" in l and bad in l
               for l in p.stderr.splitlines()), p.stderr


@pytest.mark.parametrize("exclude", ["relative-from-elsewhere", "outside"])
def test_exclusion_that_would_leave_nothing_alone_is_refused(tmp_path, exclude):
    """A relative --exclude-location is taken from the working directory: `keep` typed in the
    warehouse's parent meant the table's `keep/` folder but names another place, and an
    exclusion outside the listing location leaves nothing alone either. Both are refused
    (exit 1, naming the exclusion and the listing location) before anything is deleted, so
    the file the user meant to keep stays."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    keep = env.w / "a" / "keep" / "x.csv"
    keep.parent.mkdir()
    keep.write_bytes(b"keep me")
    age_all(env.w)
    before = files_under(env.w)
    arg = "keep" if exclude == "relative-from-elsewhere" else str(tmp_path / "elsewhere")
    for extra in (("--dry-run",), ()):
        p = env.icm("remove-orphan-files", "ns.a", "--exclude-location", arg, *extra)
        assert p.returncode == 1, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "outside the listing location" in p.stderr and str(env.w / "a") in p.stderr, \
            p.stderr
        assert files_under(env.w) == before
    p = env.icm("remove-orphan-files", "ns.a", "--exclude-location", str(env.w / "a" / "keep"))
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert str(keep) in files_under(env.w)


def test_other_table_named_by_a_relative_pointer_refuses_the_sweep(tmp_path):
    """ns.b was registered with a relative metadata location (a catalog row written as typed:
    PyIceberg reads it from the working directory). B writes inside ns.a and keeps its
    metadata outside. Swept from another working directory, B's metadata cannot be found, but
    that does not mean B is gone: the sweep of ns.a is refused (exit 5), naming B, and B keeps
    every file."""
    env = Env(tmp_path)
    env.table("a", location="@W/a")
    b = env.table("b0", location="@W/a/bsub",
                  properties={"write.metadata.path": "@W/bmeta"}, rows=2)
    rel = os.path.relpath(local(b.metadata_location), env.w)
    env.cat.drop_table("ns.b0")
    cwd = os.getcwd()
    try:
        os.chdir(env.w)
        env.cat.register_table("ns.b", rel)
        b_rows = rows_per_snapshot(env.load("b"))
    finally:
        os.chdir(cwd)
    age_all(env.w)
    before = files_under(env.w)
    p = env.icm("remove-orphan-files", "ns.a")  # (run from tmp_path, not the warehouse)
    assert_refused(p, "ns.b", "relative")
    assert files_under(env.w) == before
    os.chdir(env.w)
    try:
        assert rows_per_snapshot(env.load("b")) == b_rows
    finally:
        os.chdir(cwd)


# ---- a table whose name has a dot (adversary round 20, H1) -------------------------------------

def dotted_pair(env):
    """a.b.t (namespace a.b, table t) at W/x, and table `b.t` of namespace a at W/y writing its
    data into W/x/sub/data (two appends): joined with '.', both names are "a.b.t". Returns
    b.t's data files."""
    env.cat.create_namespace("a")
    env.cat.create_namespace(("a", "b"))
    x = env.cat.create_table(("a", "b", "t"), schema=SCHEMA, location=f"file://{env.w}/x")
    append(x, 1)
    y = env.cat.create_table(("a", "b.t"), schema=SCHEMA, location=f"file://{env.w}/y",
                             properties={"write.data.path": f"file://{env.w}/x/sub/data"})
    append(y, 2, base=500)
    assert ("a", "b.t") in env.cat.list_tables("a") and ("a", "b", "t") in env.cat.list_tables(
        ("a", "b"))
    y_files = {local(t.file.file_path) for t in env.cat.load_table(("a", "b.t")).scan(
        ).plan_files()}
    assert len(y_files) == 2 and all(f.startswith(f"{env.w}/x/sub/data/") for f in y_files)
    return sorted(y_files)


def test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself(tmp_path):
    """The sweep of a.b.t took table `b.t` of namespace a for the table itself (the SQL row's
    table_namespace "a" + "." + table_name "b.t" is "a.b.t") and deleted b.t's live data files,
    written below a.b.t's location: it refuses (exit 5, naming that table as a.`b.t` and its
    write.data.path), nothing is deleted, b.t still scans."""
    env = Env(tmp_path)
    dotted_pair(env)
    y_rows = rows_per_snapshot(env.cat.load_table(("a", "b.t")))
    age_all(env.w)
    before = files_under(env.w)
    for args in (("--dry-run",), ()):
        p = env.icm("remove-orphan-files", "a.b.t", *args)
        assert_refused(p, "catalog table a.`b.t` ", "write.data.path",
                       f"file://{env.w}/x/sub/data", "refusing to sweep")
        assert files_under(env.w) == before
    assert rows_per_snapshot(env.cat.load_table(("a", "b.t"))) == y_rows


def test_file_of_other_table_whose_name_has_a_dot_is_held_by_expiry(tmp_path):
    """a.b.t adds a live data file of table `b.t` (namespace a), deletes those rows and
    expires: the file was deleted (b.t taken for a.b.t itself); it is held now (a warning
    naming b.t's write.data.path), and exactly a.b.t's own files that only the expired
    snapshots reached go."""
    env = Env(tmp_path)
    y_files = dotted_pair(env)
    y_file = y_files[0]
    (value,) = pq.read_table(y_file).column("id").to_pylist()
    env.cat.load_table(("a", "b", "t")).add_files([y_file])
    env.cat.load_table(("a", "b", "t")).delete(expressions.EqualTo("id", value))
    age_all(env.w)
    time.sleep(1.1)
    x_before = referenced(env.cat.load_table(("a", "b", "t")))
    y_rows = rows_per_snapshot(env.cat.load_table(("a", "b.t")))
    before = files_under(env.w)
    p = env.icm("expire-snapshots", "a.b.t", "--retain-last", "1", "--older-than", "1s")
    assert p.returncode == 0, p.stderr
    x_after = env.cat.load_table(("a", "b", "t"))
    assert len(x_after.metadata.snapshots) == 1
    after = files_under(env.w)
    expected_gone = x_before - referenced(x_after) - {y_file}
    assert expected_gone
    assert before - after == expected_gone, (before - after, expected_gone)
    assert set(y_files) <= after
    assert any(l.startswith("warning: ") and y_file in l and "another catalog table may use it"
               in l and "table a.`b.t` " in l and f"{env.w}/x/sub/data" in l
               for l in p.stderr.splitlines()), p.stderr
    assert rows_per_snapshot(env.cat.load_table(("a", "b.t"))) == y_rows


def test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself_in_a_filesystem_catalog(
        tmp_path):
    """The same in a `type: hadoop` catalog over W: table folders W/a/b/t (namespace a.b,
    table t) and W/a/b.t (namespace a, table `b.t`, writing its data into W/a/b/t/sub/data),
    each with v1.metadata.json and version-hint.text. The sweep of a.b.t took a.`b.t` for
    itself and deleted its live data file; it refuses (exit 5), nothing is deleted."""
    env = Env(tmp_path)
    wh = tmp_path / "fs"
    env.cat.create_namespace("a")
    env.cat.create_namespace(("a", "b"))
    x = env.cat.create_table(("a", "b", "t"), schema=SCHEMA, location=f"file://{wh}/a/b/t")
    append(x, 1)
    y = env.cat.create_table(("a", "b.t"), schema=SCHEMA, location=f"file://{wh}/a/b.t",
                             properties={"write.data.path": f"file://{wh}/a/b/t/sub/data"})
    append(y, 1, base=500)
    for ident, folder in ((("a", "b", "t"), wh / "a" / "b" / "t"), (("a", "b.t"), wh / "a" / "b.t")):
        md = Path(local(env.cat.load_table(ident).metadata_location))
        (folder / "metadata" / "v1.metadata.json").write_bytes(md.read_bytes())
        (folder / "metadata" / "version-hint.text").write_text("1")
    y_data = {f for f in files_under(wh / "a" / "b" / "t" / "sub") if f.endswith(".parquet")}
    assert len(y_data) == 1
    cfg = tmp_path / "fs.yaml"
    cfg.write_text(f"catalog:\n  fs:\n    type: hadoop\n    warehouse: {wh}\n")
    age_all(wh)
    before = files_under(wh)
    for args in (("--dry-run",), ()):
        p = subprocess.run([CLI, "--config", str(cfg), "--catalog", "fs", "remove-orphan-files",
                            "a.b.t", *args], cwd=tmp_path, capture_output=True, text=True,
                           env={**{k: v for k, v in os.environ.items()
                                   if not k.upper().startswith("PYICEBERG_")},
                                "HOME": str(tmp_path / "nohome")}, stdin=subprocess.DEVNULL)
        assert_refused(p, "catalog table a.`b.t` ", "write.data.path",
                       f"file://{wh}/a/b/t/sub/data")
        assert files_under(wh) == before

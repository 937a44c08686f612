"""Data-loss class "files the catalog itself lives in": the orphan sweep never deletes them
(docs/semantics.md#sweep-keep-set, #sweep-refusals).

A table whose location was the catalog's warehouse root had the SQLite catalog database (which
holds every table's pointer) swept as an orphan. The rule: the sweep never plans a file the
catalog uses (a SQLite database and its -wal/-shm/-journal, .pyiceberg.yaml) and refuses (exit 5,
naming the reason and the override, --exclude-location) a location that holds one, or holds
another catalog table's location (the catalog is asked, beyond the metadata-file check). And
(a clear refusal) register-table refuses a metadata file or table location that another table of
the same catalog already uses, unless --force.

Every table is written by PyIceberg (SQLite catalog); every file is aged 10 days first. After
each command the test asserts exactly which files exist and that PyIceberg still loads each
table and scans every snapshot.
"""
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pyiceberg_table = pytest.importorskip("pyiceberg.table")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, referenced, rows_per_snapshot  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])



def append(table, n):
    for i in range(n):
        table.append(pa.table({"id": [i, i + 100]}, schema=SCHEMA))


class Env:
    """A SQLite catalog with its .pyiceberg.yaml kept outside the warehouse (conf/)."""

    def __init__(self, root, db):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.wh, self.db = root, root / "wh", db
        self.wh.mkdir(exist_ok=True)
        (root / "conf").mkdir()
        self.cfg = root / "conf" / ".pyiceberg.yaml"
        self.cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{db}\n"
                            f"    warehouse: file://{self.wh}\n")
        self.cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}",
                                            warehouse=f"file://{self.wh}")
        self.cat.create_namespace("ns")

    def icm(self, *args, env=None):
        run_env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        run_env["HOME"] = str(self.root / "nohome")
        run_env.update(env or {})
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "c", *args],
                              cwd=self.root, env=run_env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)


def assert_refused(p, *words):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in words:
        assert w in p.stderr, p.stderr


def test_sqlite_catalog_database_at_table_location_is_never_swept(tmp_path):
    """ns.root lives at the warehouse root, where the SQLite database (in WAL mode, with its
    -wal and -shm present) lies: refused; with the override the stray goes and the database,
    its -wal and -shm stay."""
    env = Env(tmp_path, tmp_path / "wh" / "catalog.db")
    root_table = env.cat.create_table("ns.root", schema=SCHEMA, location=f"file://{env.wh}")
    append(root_table, 3)
    hold = sqlite3.connect(env.db)  # WAL mode keeps -wal and -shm while a connection is open
    hold.execute("PRAGMA journal_mode=WAL")
    hold.execute("CREATE TABLE IF NOT EXISTS keep_wal (x)")
    hold.execute("INSERT INTO keep_wal VALUES (1)")
    hold.commit()
    catalog_files = {str(env.db), f"{env.db}-wal", f"{env.db}-shm"}
    assert all(os.path.exists(f) for f in catalog_files)
    stray = env.wh / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(env.wh)
    table = env.cat.load_table("ns.root")
    before = rows_per_snapshot(table)
    keep = referenced(table) | catalog_files

    for args in (("remove-orphan-files", "ns.root"),
                 ("remove-orphan-files", "ns.root", "--dry-run"),
                 ("remove-orphan-files", "ns.root", "--exclude-location", str(env.db))):
        p = env.icm(*args)
        assert_refused(p, "catalog", "--exclude-location")
        assert files_under(env.wh) == keep | {str(stray)}

    p = env.icm("remove-orphan-files", "ns.root", *[a for f in sorted(catalog_files)
                                                    for a in ("--exclude-location", f)])
    assert p.returncode == 0, p.stderr
    assert files_under(env.wh) == keep
    hold.close()
    assert rows_per_snapshot(env.cat.load_table("ns.root")) == before


def test_directory_table_never_sweeps_the_configured_catalog_files(tmp_path):
    """A table named by its directory (no catalog behind it) whose folder holds the SQLite
    database and the .pyiceberg.yaml the resolved configuration names: refused, and the
    catalog's files are never planned, also with the override."""
    (tmp_path / "wh" / "ns" / "t").mkdir(parents=True)
    env = Env(tmp_path, tmp_path / "wh" / "ns" / "t" / "catalog.db")
    t = env.cat.create_table("ns.t", schema=SCHEMA)
    append(t, 2)
    tdir = env.wh / "ns" / "t"
    current = Path(local(env.cat.load_table("ns.t").metadata_location))
    os.rename(current, current.with_name("v1.metadata.json"))
    (tdir / "metadata" / "version-hint.text").write_text("1")
    home = tdir / "conf-home"  # $PYICEBERG_HOME inside the table: its .pyiceberg.yaml
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(env.cfg.read_text())
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tdir)
    static = pyiceberg_table.StaticTable.from_metadata(str(tdir / "metadata" /
                                                           "v1.metadata.json"))
    before = rows_per_snapshot(static)
    catalog_files = {str(env.db), str(home / ".pyiceberg.yaml")}
    keep = referenced(static) | {str(tdir / "metadata" / "v1.metadata.json"),
                                 str(tdir / "metadata" / "version-hint.text")} | catalog_files

    p = env.icm("remove-orphan-files", str(tdir))
    assert_refused(p, "catalog.db", "--exclude-location")
    assert files_under(tdir) == keep | {str(stray)}
    # the configuration found through $PYICEBERG_HOME, inside the table, is named too
    cfg_env = {"PYICEBERG_HOME": str(home)}
    p = subprocess.run([CLI, "--catalog", "c", "remove-orphan-files", str(tdir),
                        "--exclude-location", str(env.db)], cwd=tmp_path,
                       env={**os.environ, **cfg_env}, capture_output=True, text=True)
    assert_refused(p, ".pyiceberg.yaml")
    assert files_under(tdir) == keep | {str(stray)}

    p = env.icm("remove-orphan-files", str(tdir), "--exclude-location", str(env.db))
    assert p.returncode == 0, p.stderr
    assert files_under(tdir) == keep
    assert rows_per_snapshot(pyiceberg_table.StaticTable.from_metadata(
        str(tdir / "metadata" / "v1.metadata.json"))) == before


def unconfigured_env(tmp_path):
    """The environment of a run with no .pyiceberg.yaml in reach."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(tmp_path / "nohome")
    return env


def sweep_dir(tmp_path, tdir, *args):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    return subprocess.run([CLI, "remove-orphan-files", str(tdir), *args], cwd=tmp_path,
                          env=unconfigured_env(tmp_path), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def exclude(files):
    return [a for f in files for a in ("--exclude-location", str(f))]


def hold_in_wal_mode(db):
    """A connection that keeps db in WAL mode with its -wal and -shm present."""
    hold = sqlite3.connect(db)
    hold.execute("PRAGMA journal_mode=WAL")
    hold.execute("CREATE TABLE IF NOT EXISTS keep_wal (x)")
    hold.execute("INSERT INTO keep_wal VALUES (1)")
    hold.commit()
    return hold


def test_catalog_database_no_configuration_names_is_never_swept(tmp_path):
    """Data-loss class: a catalog store in the table location that no configuration names. A
    filesystem-layout table at a warehouse root held the SQL catalog's cat.db; named by its
    directory with no .pyiceberg.yaml in reach, the sweep deleted cat.db (every table's
    pointer) and the catalog table's current metadata file. Rule: a SQLite database found in
    the listing (by its first bytes) is asked for its tables like a configured catalog; one
    whose pointer or location lies here refuses, naming it and the database; dry runs too, and
    whatever else is carved out. The database is read only: its -wal and -shm stay."""
    tdir = tmp_path / "wh"
    tdir.mkdir()
    db = tdir / "cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}", warehouse=f"file://{tdir}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA, location=f"file://{tdir}")
    append(t, 2)
    pointer = local(cat.load_table("ns.t").metadata_location)
    md = tdir / "metadata"
    (md / "v1.metadata.json").write_bytes(Path(pointer).read_bytes())
    (md / "version-hint.text").write_text("1")
    hold = hold_in_wal_mode(db)
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tdir)
    before = files_under(tdir)
    assert {f"{db}-wal", f"{db}-shm"} <= before
    rows = rows_per_snapshot(cat.load_table("ns.t"))
    for args in ((), ("--dry-run",), tuple(exclude([db, f"{db}-wal", f"{db}-shm", pointer]))):
        p = sweep_dir(tmp_path, tdir, *args)
        assert_refused(p, "catalog table ns.t", f"database file://{db}", "--exclude-location")
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(tdir) == before
    hold.close()
    assert rows_per_snapshot(cat.load_table("ns.t")) == rows


def test_sqlite_file_is_never_swept_whatever_its_name(tmp_path):
    """The same class, for SQLite files that are no catalog (or whose catalog is elsewhere): a
    database (here in WAL mode with its -wal and -shm, and a copy of it under a data-like
    name) or a rollback journal among the candidates refuses the sweep, naming them; dry runs
    too. With them carved out, only the stray goes, and the database keeps its -wal and -shm
    (looking into it never writes it)."""
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{tmp_path}/build.db",
                                   warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    tdir = tmp_path / "t"
    t = cat.create_table("ns.t", schema=SCHEMA, location=f"file://{tdir}")
    append(t, 2)
    md = tdir / "metadata"
    os.rename(local(cat.load_table("ns.t").metadata_location), md / "v1.metadata.json")
    (md / "version-hint.text").write_text("1")
    os.unlink(tmp_path / "build.db")
    db = tdir / "app.sqlite"
    hold = hold_in_wal_mode(db)
    disguised = tdir / "data" / "part-00000.bin"
    disguised.write_bytes(db.read_bytes())
    journal = tdir / "other.db-journal"
    journal.write_bytes(bytes.fromhex("d9d505f920a163d7") + bytes(504))
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    stores = [str(db), f"{db}-wal", str(disguised), str(journal)]
    age_all(tdir)
    before = files_under(tdir)
    assert set(stores) | {f"{db}-shm"} <= before
    static = pyiceberg_table.StaticTable.from_metadata(str(md / "v1.metadata.json"))
    rows = rows_per_snapshot(static)
    for args in ((), ("--dry-run",), tuple(exclude([db]))):
        p = sweep_dir(tmp_path, tdir, *args)
        assert_refused(p, "SQLite", "--exclude-location", str(disguised), str(journal),
                       f"{db}-wal")
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(tdir) == before
    p = sweep_dir(tmp_path, tdir, *exclude(stores + [f"{db}-shm"]))
    assert p.returncode == 0, p.stderr
    assert files_under(tdir) == before - {str(stray)}
    hold.close()
    assert rows_per_snapshot(pyiceberg_table.StaticTable.from_metadata(
        str(md / "v1.metadata.json"))) == rows


def filesystem_table(tmp_path):
    """A filesystem-layout table at tmp/t (v1.metadata.json and a version hint), two appends,
    no catalog in reach; returns its folder."""
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{tmp_path}/build.db",
                                   warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    tdir = tmp_path / "t"
    t = cat.create_table("ns.t", schema=SCHEMA, location=f"file://{tdir}")
    append(t, 2)
    md = tdir / "metadata"
    os.rename(local(cat.load_table("ns.t").metadata_location), md / "v1.metadata.json")
    (md / "version-hint.text").write_text("1")
    os.unlink(tmp_path / "build.db")
    return tdir


def rows_of(tdir):
    return rows_per_snapshot(pyiceberg_table.StaticTable.from_metadata(
        str(tdir / "metadata" / "v1.metadata.json")))


@pytest.mark.parametrize("name", ["x.parquet", "data/version-hint.text", "data/x.avro"])
def test_sqlite_file_named_like_a_table_file_is_never_swept(tmp_path, name):
    """Data-loss class: the sweep read the first bytes only of listed files not named like
    table files, so a SQLite database named x.parquet, version-hint.text (outside a metadata
    folder) or data/x.avro was deleted as an orphan, unread. Every candidate is looked at now,
    whatever its name: refused naming it, dry runs too; carved out, only the stray goes."""
    tdir = filesystem_table(tmp_path)
    db = tdir / name
    c = sqlite3.connect(db)  # (rollback journal mode: no journal left after the commit)
    c.execute("CREATE TABLE x (a)")
    c.execute("INSERT INTO x VALUES (1)")
    c.commit()
    c.close()
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tdir)
    before = files_under(tdir)
    rows = rows_of(tdir)
    for args in ((), ("--dry-run",)):
        p = sweep_dir(tmp_path, tdir, *args)
        assert_refused(p, "SQLite", str(db), "--exclude-location")
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(tdir) == before
    p = sweep_dir(tmp_path, tdir, *exclude([db]))
    assert p.returncode == 0, p.stderr
    assert files_under(tdir) == before - {str(stray)}
    assert rows_of(tdir) == rows


def test_sqlite_database_named_like_a_table_file_is_never_swept_with_its_wal(tmp_path):
    """The same for a database in WAL mode, data/x.parquet with its x.parquet-wal and
    x.parquet-shm beside it: all three are named (the -shm has no header: it counts for the
    database beside it), dry run too; with the -wal and -shm carved out, the database itself
    still refuses the sweep (it was deleted); with all three carved out, only the stray goes
    and the three stay."""
    tdir = filesystem_table(tmp_path)
    db = tdir / "data" / "x.parquet"
    hold = hold_in_wal_mode(db)
    sides = [f"{db}-wal", f"{db}-shm"]
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tdir)
    before = files_under(tdir)
    assert set(sides) <= before
    rows = rows_of(tdir)
    p = sweep_dir(tmp_path, tdir)
    assert_refused(p, "3 files", str(db) + ")", *sides)
    assert files_under(tdir) == before
    # (asking the database for its tables went through its -shm, which is now too recent to
    # be a candidate: kept either way)
    p = sweep_dir(tmp_path, tdir, "--dry-run")
    assert_refused(p, str(db) + ")", sides[0])
    assert files_under(tdir) == before
    p = sweep_dir(tmp_path, tdir, *exclude(sides))
    assert_refused(p, "1 file under it is", str(db))
    assert files_under(tdir) == before
    p = sweep_dir(tmp_path, tdir, *exclude([db] + sides))
    assert p.returncode == 0, p.stderr
    assert files_under(tdir) == before - {str(stray)}
    hold.close()
    assert rows_of(tdir) == rows


def test_other_catalog_table_below_the_swept_location_is_refused(tmp_path):
    """ns.b lives below ns.root's location but keeps its metadata elsewhere
    (write.metadata.path), so no metadata file of it is listed: the catalog is asked, the sweep
    refuses and ns.b keeps every file; carving ns.b out lets the sweep go on."""
    env = Env(tmp_path, tmp_path / "catalog.db")
    root_table = env.cat.create_table("ns.root", schema=SCHEMA, location=f"file://{env.wh}")
    append(root_table, 2)
    elsewhere = tmp_path / "b-metadata"
    b = env.cat.create_table("ns.b", schema=SCHEMA, location=f"file://{env.wh}/ns/b",
                             properties={"write.metadata.path": f"file://{elsewhere}"})
    append(b, 2)
    stray = env.wh / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(env.wh, elsewhere)
    tables = {n: env.cat.load_table(n) for n in ("ns.root", "ns.b")}
    before = {n: rows_per_snapshot(t) for n, t in tables.items()}
    b_files = {f for f in referenced(tables["ns.b"]) if f.startswith(str(env.wh))}
    assert b_files, "ns.b should have data files below ns.root's location"
    keep = referenced(tables["ns.root"]) | b_files

    p = env.icm("remove-orphan-files", "ns.root")
    assert_refused(p, "ns.b", "--exclude-location")
    assert files_under(env.wh) == keep | {str(stray)}

    p = env.icm("remove-orphan-files", "ns.root", "--exclude-location", str(env.wh / "ns" / "b"))
    assert p.returncode == 0, p.stderr
    assert files_under(env.wh) == keep
    for n in tables:
        assert rows_per_snapshot(env.cat.load_table(n)) == before[n]


def test_register_table_of_a_metadata_file_in_use_is_refused(tmp_path):
    """ns.t's current metadata file, or an older one of it (the same table location),
    registered as another table: refused unless --force; the catalog is unchanged."""
    env = Env(tmp_path, tmp_path / "catalog.db")
    t = env.cat.create_table("ns.t", schema=SCHEMA)
    append(t, 2)
    t = env.cat.load_table("ns.t")
    older = local(t.metadata.metadata_log[-1].metadata_file)
    for md in (local(t.metadata_location), older):
        p = env.icm("register-table", "ns.copy", md)
        assert_refused(p, "ns.t", "--force")
        assert [i[1] for i in env.cat.list_tables("ns")] == ["t"]
    p = env.icm("register-table", "ns.copy", older, "--force")
    assert p.returncode == 0, p.stderr
    assert sorted(i[1] for i in env.cat.list_tables("ns")) == ["copy", "t"]
    assert local(env.cat.load_table("ns.copy").metadata_location) == older
    assert rows_per_snapshot(env.cat.load_table("ns.t"))


@pytest.mark.parametrize("victim", ["cat.db", ".pyiceberg.yaml", "cat.db-shm"])
def test_expiry_never_deletes_a_catalog_file_a_damaged_manifest_names(tmp_path, victim):
    """Data-loss class: expiry deleted whatever an expired-only manifest entry named inside the
    table. A table at the warehouse root (its SQLite catalog and .pyiceberg.yaml below it);
    the first snapshot's manifest, reached by expired snapshots only, has its entry renamed to
    the catalog database or the config. Expiry (dry run too) holds that file back, as it holds
    another table's files: a warning names it (not deleted, damaged or crafted manifest), the
    file stays, the rest of the expiry goes on, and the catalog still loads the table."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    import fastavro
    from pyiceberg.expressions import AlwaysTrue
    wh = tmp_path / "wh"
    wh.mkdir()
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA, location=f"file://{wh}")
    append(t, 1)
    t = cat.load_table("ns.t")
    first = t.current_snapshot().manifests(t.io)[0].manifest_path
    t.delete(AlwaysTrue())
    t = cat.load_table("ns.t")
    t.append(pa.table({"id": [7, 8]}, schema=SCHEMA))
    manifest = local(first)
    with open(manifest, "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
    for rec in recs:
        rec["data_file"]["file_path"] = f"file://{wh}/{victim}"
    with open(manifest, "wb") as f:
        fastavro.writer(f, schema, recs, metadata=meta, codec="deflate")
    # WAL mode with a connection open: the -shm (which has no header) and -wal are present
    hold = hold_in_wal_mode(wh / "cat.db") if victim == "cat.db-shm" else None
    age_all(wh)
    before = files_under(wh)
    assert str(wh / victim) in before
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(tmp_path / "nohome")
    for extra in (("--dry-run",), ()):
        p = subprocess.run([CLI, "--config", str(cfg), "--catalog", "c", "expire-snapshots",
                            "ns.t", "--retain-last", "1", "--older-than", "0s", *extra],
                           cwd=tmp_path, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        held = [ln for ln in p.stderr.splitlines() if ln.startswith("warning: ") and
                f"{wh}/{victim}: not deleted" in ln and "damaged or crafted" in ln]
        assert len(held) == 1, p.stderr
        gone = before - files_under(wh)
        if extra:
            assert gone == set()
        else:  # the rest of the expiry went on: only the expired snapshots' own files
            assert gone and all(f.startswith((str(wh / "metadata") + "/",
                                              str(wh / "data") + "/")) for f in gone), gone
        assert os.path.exists(wh / victim) and os.path.exists(wh / "cat.db") and cfg.exists()
    if hold is not None:
        hold.close()
    assert rows_per_snapshot(cat.load_table("ns.t"))

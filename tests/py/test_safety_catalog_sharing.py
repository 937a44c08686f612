"""Every catalog a database or a configuration holds is a catalog
(docs/semantics.md#sweep-refusals).

A SQLite database can hold the tables of several catalogs (rows keyed by catalog_name, as
PyIceberg and Java's JdbcCatalog share one database), and a `.pyiceberg.yaml` can name several
catalogs. The sweep's other-tables check read only the resolved catalog's rows, and its
own-files rule only the resolved catalog's database, so a table of catalog `other` (or the same
table registered in `other` and appended there) lost live files and metadata, and another
catalog's database was swept. Expiry did not look at other tables at all. The rules:

- every pointer the database holds (every catalog_name) is another table for the sweep's
  refusal and for expiry's hold (a candidate under another table's folders is kept);
- the files of every catalog the configuration names are the catalog's own files, given or
  reached through a link: never planned, and named in the refusal.

Every table is written by PyIceberg; every file is aged 10 days first. After each command the
tests assert exactly which files exist and that PyIceberg still loads and scans each table.
"""
import os
import subprocess
import time
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


def assert_refused(p, *words):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in words:
        assert w in p.stderr, p.stderr


def write_config(path, catalogs):
    text = "catalog:\n"
    for name, (db, wh) in catalogs.items():
        text += f"  {name}:\n    type: sql\n    uri: sqlite:///{db}\n    warehouse: file://{wh}\n"
    path.write_text(text)


def two_catalogs_one_db(tmp_path):
    wh, db = tmp_path / "wh", tmp_path / "cat.db"
    wh.mkdir()
    cfg = tmp_path / "conf.yaml"
    write_config(cfg, {"default": (db, wh)})
    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    o = pyiceberg_sql.SqlCatalog("other", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    d.create_namespace("ns")
    o.create_namespace("o")
    return wh, cfg, d, o


def test_other_catalog_name_table_writing_inside_the_swept_table_is_refused(tmp_path):
    """o.x of catalog `other`, in the same database, writes its data inside ns.t's folder
    (write.data.path): the sweep of ns.t refuses, naming o.x, and deletes nothing."""
    wh, cfg, d, o = two_catalogs_one_db(tmp_path)
    t = d.create_table("ns.t", schema=SCHEMA)
    append(t, 2)
    tdir = Path(local(d.load_table("ns.t").location()))
    x = o.create_table("o.x", schema=SCHEMA, location=f"file://{tmp_path}/otherwh/o/x",
                       properties={"write.data.path": f"file://{tdir}/data/x"})
    append(x, 2, base=50)
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tmp_path)
    tables = {"t": d.load_table("ns.t"), "x": o.load_table("o.x")}
    before = {k: rows_per_snapshot(v) for k, v in tables.items()}
    x_here = {f for f in referenced(tables["x"]) if f.startswith(str(tdir))}
    assert x_here
    keep = referenced(tables["t"]) | x_here

    for extra in ((), ("--dry-run",)):
        p = icm(tmp_path, "remove-orphan-files", "ns.t", *extra, config=cfg)
        assert_refused(p, "o.x", "other", "--exclude-location")
        assert files_under(tdir) == keep | {str(stray)}

    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--exclude-location",
            str(tdir / "data" / "x"), config=cfg)
    assert p.returncode == 0, p.stderr
    assert files_under(tdir) == keep
    assert rows_per_snapshot(d.load_table("ns.t")) == before["t"]
    assert rows_per_snapshot(o.load_table("o.x")) == before["x"]


def test_same_table_registered_in_another_catalog_name_is_refused(tmp_path):
    """ns.t registered in catalog `other` of the same database and appended there: its
    current metadata and new data lie in ns.t's folder; the sweep of default's ns.t refuses
    and every file stays."""
    wh, cfg, d, o = two_catalogs_one_db(tmp_path)
    t = d.create_table("ns.t", schema=SCHEMA)
    append(t, 2)
    o.create_namespace("ns")
    fork = o.register_table("ns.t", d.load_table("ns.t").metadata_location)
    append(fork, 1, base=90)
    tdir = Path(local(d.load_table("ns.t").location()))
    age_all(tmp_path)
    tables = {"d": d.load_table("ns.t"), "o": o.load_table("ns.t")}
    before = {k: rows_per_snapshot(v) for k, v in tables.items()}
    all_files = files_under(tdir)
    assert referenced(tables["o"]) <= all_files
    assert referenced(tables["o"]) - referenced(tables["d"])

    for extra in ((), ("--dry-run",)):
        p = icm(tmp_path, "remove-orphan-files", "ns.t", *extra, config=cfg)
        assert_refused(p, "ns.t", "other", "--exclude-location")
        assert files_under(tdir) == all_files
    assert rows_per_snapshot(d.load_table("ns.t")) == before["d"]
    assert rows_per_snapshot(o.load_table("ns.t")) == before["o"]


def root_table_with_second_catalog(tmp_path):
    """ns.t located at the warehouse root, where .pyiceberg.yaml names two catalogs whose
    databases (cat.db of `default`, other.db of `other`) both lie."""
    wh = tmp_path / "wh"
    wh.mkdir()
    db, other_db, other_wh = wh / "cat.db", wh / "other.db", tmp_path / "otherwh"
    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    d.create_namespace("ns")
    t = d.create_table("ns.t", schema=SCHEMA, location=f"file://{wh}")
    append(t, 2)
    o = pyiceberg_sql.SqlCatalog("other", uri=f"sqlite:///{other_db}",
                                 warehouse=f"file://{other_wh}")
    o.create_namespace("o")
    append(o.create_table("o.t", schema=SCHEMA), 1)
    cfg = wh / ".pyiceberg.yaml"
    write_config(cfg, {"default": (db, wh), "other": (other_db, other_wh)})
    return wh, cfg, d, o


def test_every_configured_catalog_database_is_a_catalog_file(tmp_path):
    """Following the refusal's overrides for the resolved catalog's files only still refuses,
    naming other.db: the database of every catalog the configuration names is never
    planned."""
    wh, cfg, d, o = root_table_with_second_catalog(tmp_path)
    stray = wh / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(tmp_path)
    before = {"t": rows_per_snapshot(d.load_table("ns.t")),
              "o": rows_per_snapshot(o.load_table("o.t"))}
    own = {str(cfg), str(wh / "cat.db"), str(wh / "other.db")}
    keep = referenced(d.load_table("ns.t")) | own

    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--dry-run", config=cfg)
    assert_refused(p, *[f"--exclude-location {f}" for f in sorted(own)])
    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--exclude-location", str(cfg),
            "--exclude-location", str(wh / "cat.db"), config=cfg)
    assert_refused(p, f"--exclude-location {wh / 'other.db'}")
    assert files_under(wh) == keep | {str(stray)}

    p = icm(tmp_path, "remove-orphan-files", "ns.t",
            *[a for f in sorted(own) for a in ("--exclude-location", f)], config=cfg)
    assert p.returncode == 0, p.stderr
    assert files_under(wh) == keep
    assert rows_per_snapshot(d.load_table("ns.t")) == before["t"]
    assert rows_per_snapshot(o.load_table("o.t")) == before["o"]


def test_config_file_reached_through_a_link_is_protected_by_both_names(tmp_path):
    """--config link.yaml (a link to catalog.yaml, both in the table's folder): both names are
    the catalog's files, and the refusal names both. Carving out the link alone leaves
    catalog.yaml alone too (an exclusion is also matched where it really is, in the listing's
    spelling), so the run goes on and deletes neither; so does carving out both."""
    wh, cfg, d, o = root_table_with_second_catalog(tmp_path)
    real = wh / "catalog.yaml"
    os.rename(cfg, real)
    link = wh / "link.yaml"
    link.symlink_to(real)
    age_all(tmp_path)
    keep = referenced(d.load_table("ns.t")) | {str(real), str(link), str(wh / "cat.db"),
                                               str(wh / "other.db")}
    assert files_under(wh) == keep
    dbs = ("--exclude-location", str(wh / "cat.db"), "--exclude-location",
           str(wh / "other.db"))

    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--dry-run", config=link)
    assert_refused(p, f"--exclude-location {link}", f"--exclude-location {real}")
    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--exclude-location", str(link), *dbs,
            config=link)
    assert p.returncode == 0, p.stderr
    assert files_under(wh) == keep

    p = icm(tmp_path, "remove-orphan-files", "ns.t", "--exclude-location", str(link),
            "--exclude-location", str(real), *dbs, config=link)
    assert p.returncode == 0, p.stderr
    assert files_under(wh) == keep
    assert rows_per_snapshot(d.load_table("ns.t"))


def test_table_of_another_configured_database_inside_the_swept_table_is_refused(tmp_path):
    """The configuration names `other` (other.db, outside the table); its table o.y writes its
    data inside ns.t's folder: the sweep of ns.t refuses, naming o.y, and deletes nothing."""
    wh, cfg, d, o = two_catalogs_one_db(tmp_path)
    other_db, other_wh = tmp_path / "other.db", tmp_path / "otherwh"
    write_config(cfg, {"default": (tmp_path / "cat.db", wh), "other": (other_db, other_wh)})
    t = d.create_table("ns.t", schema=SCHEMA)
    append(t, 2)
    tdir = Path(local(d.load_table("ns.t").location()))
    o2 = pyiceberg_sql.SqlCatalog("other", uri=f"sqlite:///{other_db}",
                                  warehouse=f"file://{other_wh}")
    o2.create_namespace("o")
    y = o2.create_table("o.y", schema=SCHEMA, properties={"write.data.path":
                                                          f"file://{tdir}/data/y"})
    append(y, 2, base=70)
    age_all(tmp_path)
    y_here = {f for f in referenced(o2.load_table("o.y")) if f.startswith(str(tdir))}
    assert y_here
    keep = referenced(d.load_table("ns.t")) | y_here
    assert files_under(tdir) == keep
    before = rows_per_snapshot(o2.load_table("o.y"))

    p = icm(tmp_path, "remove-orphan-files", "ns.t", config=cfg)
    assert_refused(p, "o.y", "other", "--exclude-location")
    assert files_under(tdir) == keep
    assert rows_per_snapshot(o2.load_table("o.y")) == before


def test_expiry_keeps_files_of_a_table_nested_in_its_folder(tmp_path):
    """ns.b is located inside ns.a's data folder; ns.a adds one of b's live data files, then
    deletes those rows: expiring ns.a's old snapshots keeps b's file (reported as another
    table's, a warning) and deletes the rest of what only they reached."""
    from pyiceberg.expressions import EqualTo
    wh, cfg, d, o = two_catalogs_one_db(tmp_path)
    a = d.create_table("ns.a", schema=SCHEMA)
    append(a, 1)
    adir = Path(local(d.load_table("ns.a").location()))
    b = d.create_table("ns.b", schema=SCHEMA, location=f"file://{adir}/data/b")
    append(b, 1, base=500)
    b_file = [t.file.file_path for t in d.load_table("ns.b").scan().plan_files()][0]
    a = d.load_table("ns.a")
    a.add_files([b_file])
    d.load_table("ns.a").delete(EqualTo("id", 500))
    age_all(tmp_path)
    b_before = rows_per_snapshot(d.load_table("ns.b"))
    metadata_files = {f for f in files_under(adir) if f.endswith(".metadata.json")}
    time.sleep(1.1)

    p = icm(tmp_path, "expire-snapshots", "ns.a", "--retain-last", "1", "--older-than", "1s",
            config=cfg)
    assert p.returncode == 0, p.stderr
    assert "ns.b" in p.stderr and local(b_file) in p.stderr, p.stderr
    a_after = d.load_table("ns.a")
    assert len(a_after.metadata.snapshots) == 1
    expected = (referenced(a_after) | referenced(d.load_table("ns.b")) | metadata_files |
                {f for f in files_under(adir) if f.endswith(".metadata.json")})
    assert files_under(adir) == expected
    assert os.path.exists(local(b_file))
    assert rows_per_snapshot(d.load_table("ns.b")) == b_before
    assert rows_per_snapshot(a_after)


def test_expiry_of_a_table_inside_a_root_table_is_not_held(tmp_path):
    """ns.root is located at the warehouse root, which holds ns.t: ns.root's folder encloses
    ns.t's own location, so it holds nothing back; expiring ns.t deletes what only its
    expired snapshots reached."""
    wh, cfg, d, o = two_catalogs_one_db(tmp_path)
    append(d.create_table("ns.root", schema=SCHEMA, location=f"file://{wh}"), 1)
    append(d.create_table("ns.t", schema=SCHEMA), 3)
    tdir = Path(local(d.load_table("ns.t").location()))
    age_all(tmp_path)
    time.sleep(1.1)
    p = icm(tmp_path, "expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "1s",
            config=cfg)
    assert p.returncode == 0, p.stderr
    assert "other_table" not in p.stderr, p.stderr
    t = d.load_table("ns.t")
    metadata_files = {f for f in files_under(tdir) if f.endswith(".metadata.json")}
    assert files_under(tdir) == referenced(t) | metadata_files
    assert rows_per_snapshot(t)

"""Data-loss class: a table whose folder another table format manages.

Delta Lake UniForm (and Apache XTable over Delta or Hudi) writes Iceberg metadata beside the
other format's own log, over the same data files. The other format is the writer and its
Iceberg conversion runs behind it: Delta commits a data file that the Iceberg metadata does not
name yet, and Delta time travel still reads files the Iceberg metadata no longer names. Both
logs (`_delta_log/`, Hudi's `.hoodie/`) are hidden names, which the sweep skipped: it deleted
Delta's live data file. Rule: when the table location, the listing location, a folder between
them or a folder in the listing holds `_delta_log/` or `.hoodie/`, the sweep refuses (exit 5,
dry runs too, naming the folder and the other format's own cleaner), and expiry refuses the
same way before committing or deleting anything. A nested folder carved out whole with
--exclude-location is the one way past.

Every file is aged 10 days first; after each command the test asserts exactly which files
exist (nothing changed).
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
FIXTURES = os.environ.get("ICM_FIXTURES_DIR")
from safety_helpers import age_all, files_under, local, rows_per_snapshot  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])

UNIFORM = "unitycatalog-uniform/etc/data/external/unity/default/tables/marksheet_uniform"
UNIFORM_LOCATION = "file:/tmp/marksheet_uniform"
UNIFORM_METADATA = "metadata/00002-5b7aa739-d074-4764-b49d-ad6c63419576.metadata.json"
UNIFORM_PART = "part-00000-5af50cc4-3218-465b-a3a4-eb4fc709421d-c000.snappy.parquet"

# What each format keeps in its folder (the first commit of each, as its writer names it).
DELTA = ("_delta_log", "VACUUM", {
    "00000000000000000000.json":
        '{"commitInfo":{"timestamp":1717800000000,"operation":"WRITE"}}\n'
        '{"add":{"path":"data/delta-part-0.parquet","partitionValues":{},"size":6,'
        '"modificationTime":1717800000000,"dataChange":true}}\n'})
HUDI = (".hoodie", "Hudi's own cleaner", {
    "hoodie.properties": "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\n",
    "20240101000000000.commit": '{"partitionToWriteStats":{}}\n'})


class Env:
    """A SQLite catalog with its .pyiceberg.yaml outside the warehouse (conf/)."""

    def __init__(self, root):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.wh = root, root / "wh"
        self.wh.mkdir()
        (root / "conf").mkdir()
        self.cfg = root / "conf" / ".pyiceberg.yaml"
        db = root / "conf" / "catalog.db"
        self.cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{db}\n"
                            f"    warehouse: file://{self.wh}\n")
        self.cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}",
                                            warehouse=f"file://{self.wh}")
        self.cat.create_namespace("ns")

    def icm(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        env["HOME"] = str(self.root / "nohome")
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "c", *args],
                              cwd=self.root, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)


def assert_refused(p, *words):
    assert p.returncode == 5, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    for w in words:
        assert w in p.stderr, p.stderr


def plant(folder, fmt):
    """The other format's folder (`_delta_log/` or `.hoodie/`) with its files, in `folder`."""
    marker, _cleaner, files = fmt
    (folder / marker).mkdir(parents=True)
    for name, text in files.items():
        (folder / marker / name).write_text(text)


def table_with_expired_data(env):
    """ns.t at wh/t: two appends, then an overwrite, so expiry would delete the first two
    snapshots' data files."""
    t = env.cat.create_table("ns.t", schema=SCHEMA, location=f"file://{env.wh}/t")
    for i in range(2):
        t.append(pa.table({"id": [i, i + 100]}, schema=SCHEMA))
    env.cat.load_table("ns.t").overwrite(pa.table({"id": [7]}, schema=SCHEMA))
    return env.wh / "t"


def expire_all_but_one(env, *extra):
    return env.icm("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "0s",
                   *extra)


def test_delta_uniform_table_whose_iceberg_metadata_lags_is_never_swept(tmp_path):
    """The UniForm fixture (Iceberg metadata at Delta version 1) after Delta commits version 2,
    which adds part-00001: the Iceberg conversion has not run yet. The sweep deleted part-00001;
    now it refuses (dry run too) naming the table folder and Delta's VACUUM, and expiry refuses
    too. Nothing changes."""
    if not FIXTURES:
        pytest.fail("ICM_FIXTURES_DIR is not set")
    env = Env(tmp_path)
    tdir = tmp_path / "uniform"
    shutil.copytree(Path(FIXTURES) / UNIFORM, tdir)
    part = f"part-00001-11111111-2222-3333-4444-555555555555-c000.snappy.parquet"
    shutil.copy(tdir / UNIFORM_PART, tdir / part)
    (tdir / "_delta_log" / "00000000000000000002.json").write_text(
        '{"commitInfo":{"timestamp":1717900000000,"operation":"WRITE"}}\n'
        f'{{"add":{{"path":"{part}","partitionValues":{{}},"size":2151,'
        '"modificationTime":1717900000000,"dataChange":true}}\n')
    age_all(tdir)
    pm = ("--path-map", f"{UNIFORM_LOCATION}={tdir}")
    p = env.icm(*pm, "register-table", "ns.u", f"{UNIFORM_LOCATION}/{UNIFORM_METADATA}")
    assert p.returncode == 0, p.stderr
    before = files_under(tdir)
    assert str(tdir / part) in before
    for args in (("remove-orphan-files", "ns.u"), ("remove-orphan-files", "ns.u", "--dry-run"),
                 ("expire-snapshots", "ns.u", "--older-than", "0s"),
                 ("expire-snapshots", "ns.u", "--older-than", "0s", "--dry-run")):
        p = env.icm(*pm, *args)
        assert_refused(p, UNIFORM_LOCATION, "_delta_log/", "Delta Lake's own VACUUM")
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(tdir) == before


@pytest.mark.parametrize("fmt", [DELTA, HUDI], ids=["delta", "hudi"])
def test_table_location_another_format_manages_is_never_swept_or_expired(tmp_path, fmt):
    """The other format's folder in the table location, and a data file only its log names:
    the sweep (dry run too) and expiry (dry run too; it would delete the expired snapshots'
    data files) refuse, naming the folder and the other format's cleaner; nothing changes, no
    commit either. An expiry that deletes nothing (--cleanup none) still runs."""
    env = Env(tmp_path)
    tdir = table_with_expired_data(env)
    plant(tdir, fmt)
    (tdir / "data" / "delta-part-0.parquet").write_bytes(b"theirs")
    age_all(env.wh)
    table = env.cat.load_table("ns.t")
    rows = rows_per_snapshot(table)
    assert len(rows) == 4  # (the overwrite is a delete and an append)
    before = files_under(env.wh)
    for args in (("remove-orphan-files", "ns.t"), ("remove-orphan-files", "ns.t", "--dry-run")):
        p = env.icm(*args)
        assert_refused(p, f"{tdir}", f"{fmt[0]}/", fmt[1])
        assert files_under(env.wh) == before
    for extra in (("--dry-run",), ()):
        p = expire_all_but_one(env, *extra)
        assert_refused(p, f"{tdir}", f"{fmt[0]}/", fmt[1])
        assert files_under(env.wh) == before
    after = env.cat.load_table("ns.t")
    assert after.metadata_location == table.metadata_location
    assert rows_per_snapshot(after) == rows

    p = expire_all_but_one(env, "--cleanup", "none")
    assert p.returncode == 0, p.stderr
    assert len(env.cat.load_table("ns.t").metadata.snapshots) == 1
    assert before <= files_under(env.wh)  # (a new metadata file; nothing deleted)


@pytest.mark.parametrize("fmt", [DELTA, HUDI], ids=["delta", "hudi"])
def test_other_format_folder_below_the_listing_location_is_never_swept(tmp_path, fmt):
    """A Delta (or Hudi) table nested in a subfolder of the listing, `data/ext/`: the listing
    shows its log (hidden, never a candidate) and its data file (a candidate); the sweep
    refuses naming the nested folder, dry run too. Carved out with --exclude-location, the
    sweep goes on: the stray goes, the nested table keeps every file."""
    env = Env(tmp_path)
    tdir = table_with_expired_data(env)
    nested = tdir / "data" / "ext"
    plant(nested, fmt)
    (nested / "delta-part-0.parquet").write_bytes(b"theirs")
    stray = tdir / "data" / "stray.parquet"
    stray.write_bytes(b"orphan")
    age_all(env.wh)
    before = files_under(env.wh)
    rows = rows_per_snapshot(env.cat.load_table("ns.t"))
    for extra in ((), ("--dry-run",)):
        p = env.icm("remove-orphan-files", "ns.t", *extra)
        assert_refused(p, f"{nested}", f"{fmt[0]}/", fmt[1], "--exclude-location")
        assert files_under(env.wh) == before
    p = env.icm("remove-orphan-files", "ns.t", "--exclude-location", str(nested))
    assert p.returncode == 0, p.stderr
    assert files_under(env.wh) == before - {str(stray)}
    assert rows_per_snapshot(env.cat.load_table("ns.t")) == rows


def test_other_format_folder_between_table_and_listing_location_is_never_swept(tmp_path):
    """`_delta_log/` in data/, the sweep told to list data/part/ (--location): the log is not in
    the listing, but the folder it lies in holds the listing location: refused, naming data/."""
    env = Env(tmp_path)
    tdir = table_with_expired_data(env)
    plant(tdir / "data", DELTA)
    part = tdir / "data" / "part"
    part.mkdir()
    (part / "delta-part-0.parquet").write_bytes(b"theirs")
    age_all(env.wh)
    before = files_under(env.wh)
    for extra in ((), ("--dry-run",)):
        p = env.icm("remove-orphan-files", "ns.t", "--location", f"file://{part}", *extra)
        assert_refused(p, f"{tdir}/data", "_delta_log/", "VACUUM")
        assert files_under(env.wh) == before


@pytest.mark.parametrize("fmt", [DELTA, HUDI], ids=["delta", "hudi"])
def test_table_inside_a_folder_another_format_manages_is_never_swept_or_expired(tmp_path, fmt):
    """The other format's folder lies above the table location (the Iceberg table was made
    inside a Delta or Hudi table's folder): that format's files lie around and below the
    table, so the sweep (dry run too) and expiry refuse, naming the folder; nothing changes."""
    env = Env(tmp_path)
    tdir = table_with_expired_data(env)
    plant(env.wh, fmt)
    (tdir / "data" / "delta-part-0.parquet").write_bytes(b"theirs")
    age_all(env.wh)
    before = files_under(env.wh)
    for args in (("remove-orphan-files", "ns.t"), ("remove-orphan-files", "ns.t", "--dry-run"),
                 ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "0s"),
                 ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "0s",
                  "--dry-run")):
        p = env.icm(*args)
        assert_refused(p, f"{env.wh}", f"{fmt[0]}/", fmt[1])
        assert files_under(env.wh) == before

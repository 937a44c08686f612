"""The sweep refuses a listing location that lies inside another table.

Catalog table A's write.data.path lies inside B, a filesystem-layout (Hadoop) table that no
catalog lists (B/metadata/vN.metadata.json and version-hint.text). Sweeping A's data folder
(`remove-orphan-files ns.a --location <write.data.path>`, as the README says to do) deleted
B's live data files: the sweep looked for other tables only below the swept folder, and
B/metadata is a sibling of B/data. Now the listing location and every folder enclosing it are
looked at first: one whose `metadata/` folder holds table metadata that is not A's refuses the
sweep (exit 5), dry runs too. The control: a write.data.path in a plain folder is swept as
before, and only A's planted orphan goes.

Tables are written by PyIceberg; every file is aged 10 days first. After each command the tests
assert exactly which files exist and that PyIceberg still scans every snapshot of B.
"""
import gzip
import os
import subprocess
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
from pyiceberg.table import StaticTable  # noqa: E402

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, icm  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])


def make_fs_table(tmp_path, where):
    """A Hadoop-layout table at `where` with two snapshots, written through a throw-away
    catalog that is then removed. Returns B's current metadata file."""
    tmp_db = tmp_path / "tmpcat.db"
    tmp_cat = pyiceberg_sql.SqlCatalog("tmp", uri=f"sqlite:///{tmp_db}",
                                       warehouse=f"file://{tmp_path}/tmpwh")
    tmp_cat.create_namespace("nb")
    b = tmp_cat.create_table("nb.b", schema=SCHEMA, location=f"file://{where}")
    b.append(pa.table({"id": [500, 600]}, schema=SCHEMA))
    b.append(pa.table({"id": [700]}, schema=SCHEMA))
    tmp_db.unlink()
    names = sorted(p.name for p in (where / "metadata").glob("*.metadata.json"))
    for n, name in enumerate(names, start=1):
        (where / "metadata" / name).rename(where / "metadata" / f"v{n}.metadata.json")
    (where / "metadata" / "version-hint.text").write_text(str(len(names)))
    return where / "metadata" / f"v{len(names)}.metadata.json"


def scan_every_snapshot(b_meta):
    t = StaticTable.from_metadata(f"file://{b_meta}")
    out = []
    for snap in t.metadata.snapshots:
        out.append(sorted(t.scan(snapshot_id=snap.snapshot_id).to_arrow()
                          .column("id").to_pylist()))
    return out


def setup(tmp_path, data_path):
    """Catalog table ns.a whose write.data.path is `data_path`, with one append and one
    planted orphan there (orphan.parquet); everything aged. Returns (cfg, A's folder, orphan)."""
    wh, db = tmp_path / "wh", tmp_path / "cat.db"
    wh.mkdir()
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  default:\n    type: sql\n    uri: sqlite:///{db}\n"
                   f"    warehouse: file://{wh}\n")
    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    d.create_namespace("ns")
    a = d.create_table("ns.a", schema=SCHEMA,
                       properties={"write.data.path": f"file://{data_path}"})
    a.append(pa.table({"id": [1, 2]}, schema=SCHEMA))
    adir = Path(local(d.load_table("ns.a").location()))
    orphan = data_path / "orphan.parquet"
    orphan.write_bytes(b"not referenced by anything")
    age_all(tmp_path)
    time.sleep(1.1)
    return cfg, adir, orphan


def sweep(tmp_path, cfg, data_path, *extra):
    return icm(tmp_path, cfg, "remove-orphan-files", "ns.a", "--location",
               f"file://{data_path}", *extra)


@pytest.mark.parametrize("below", ["data", "data/sub", "metadata/sub", "link-to-data",
                                   "data:legacy-gz-metadata"])
def test_sweep_refuses_a_write_data_path_inside_a_filesystem_table(tmp_path, below):
    """`link-to-data`: A's folder is a symbolic link (outside B) to B's data folder, so only
    the listing location's real place lies inside B. `data:legacy-gz-metadata`: B's only
    metadata is Java's legacy `v1.metadata.json.gz` (no version hint)."""
    bdir = tmp_path / "nb" / "b"
    b_meta = make_fs_table(tmp_path, bdir)
    b_scans = scan_every_snapshot(b_meta)
    assert b_scans == [[500, 600], [500, 600, 700]]
    if below == "link-to-data":
        data_path = tmp_path / "alink"
        data_path.symlink_to(bdir / "data")
    else:
        data_path = bdir / below.split(":")[0]
        data_path.mkdir(parents=True, exist_ok=True)
    cfg, adir, orphan = setup(tmp_path, data_path)
    if below.endswith(":legacy-gz-metadata"):  # B keeps its first version, gzip'd, only
        first = bdir / "metadata" / "v1.metadata.json"
        with open(first, "rb") as src, gzip.open(str(first) + ".gz", "wb") as dst:
            dst.write(src.read())
        for f in (bdir / "metadata").glob("v*.metadata.json"):
            f.unlink()
        (bdir / "metadata" / "version-hint.text").unlink()
        age_all(bdir)
        b_meta = Path(str(first) + ".gz")
        b_scans = None
    before = files_under(tmp_path)
    assert str(orphan) in before.union(files_under(data_path))
    # B's two data files, and A's own there too when A writes below B/data
    b_data = [f for f in files_under(bdir / "data") if f.endswith(".parquet")]
    assert len(b_data) >= (2 if below.startswith("metadata") else 3)

    for extra in (("--dry-run",), ()):
        p = sweep(tmp_path, cfg, data_path, *extra)
        assert p.returncode == 5, (extra, p.stdout, p.stderr)
        assert "inside another table" in p.stderr and str(bdir / "metadata") in p.stderr, \
            p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert files_under(tmp_path) == before
        assert files_under(bdir / "data") >= set(b_data)
    if b_scans is not None:
        assert scan_every_snapshot(b_meta) == b_scans


def test_control_a_write_data_path_in_a_plain_folder_is_swept(tmp_path):
    data_path = tmp_path / "plain" / "adata"
    data_path.mkdir(parents=True)
    cfg, adir, orphan = setup(tmp_path, data_path)
    before = files_under(tmp_path)
    p = sweep(tmp_path, cfg, data_path)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert files_under(tmp_path) == before - {str(orphan)}


def test_control_a_folder_inside_another_table_but_outside_what_it_writes_is_swept(tmp_path):
    """A table at a warehouse root holds every other table's folder without writing there: a
    listing location inside B but outside B's data/ and metadata/ folders is swept (only A's
    orphan goes), and B keeps every file and reads as before."""
    bdir = tmp_path / "nb" / "b"
    b_meta = make_fs_table(tmp_path, bdir)
    b_scans = scan_every_snapshot(b_meta)
    data_path = bdir / "ns" / "a-data"
    data_path.mkdir(parents=True)
    cfg, adir, orphan = setup(tmp_path, data_path)
    before = files_under(tmp_path)
    p = sweep(tmp_path, cfg, data_path)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert files_under(tmp_path) == before - {str(orphan)}
    assert scan_every_snapshot(b_meta) == b_scans


FUTURE_MS = str((int(time.time()) + 3600) * 1000)


@pytest.mark.parametrize("below", ["data", "link-to-data"])
def test_expiry_refuses_a_table_whose_folder_lies_inside_a_filesystem_table(tmp_path, below):
    """Expiry has the same rule as the sweep: A writes into B's data folder (by name, or
    through a link), A adds one of B's live files with add-files and removes it with
    delete-files, then expires: the file would be A's to delete. Refused before committing
    (exit 5, dry run too); every file stays and B reads as before."""
    bdir = tmp_path / "nb" / "b"
    b_meta = make_fs_table(tmp_path, bdir)
    b_scans = scan_every_snapshot(b_meta)
    if below == "link-to-data":
        data_path = tmp_path / "alink"
        data_path.symlink_to(bdir / "data")
    else:
        data_path = bdir / "data"
    b_file = sorted(files_under(bdir / "data"))[0]
    cfg, adir, orphan = setup(tmp_path, data_path)
    orphan.unlink()
    for cmd in ("add-files", "delete-files"):
        p = icm(tmp_path, cfg, cmd, "ns.a", f"file://{b_file}")
        assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    age_all(tmp_path)
    before = files_under(tmp_path)
    for extra in (("--dry-run",), ()):
        p = icm(tmp_path, cfg, "expire-snapshots", "ns.a", "--retain-last", "1",
                "--older-than", FUTURE_MS, *extra)
        assert p.returncode == 5, (extra, p.stdout, p.stderr)
        assert "inside another table" in p.stderr and str(bdir / "metadata") in p.stderr, \
            p.stderr
        assert files_under(tmp_path) == before
    assert scan_every_snapshot(b_meta) == b_scans


def test_control_expiry_of_a_table_in_a_plain_folder_deletes_what_it_expired(tmp_path):
    """The same table in a plain folder: expiry commits and deletes the expired snapshot's
    manifest list, and nothing else."""
    data_path = tmp_path / "plain" / "adata"
    data_path.mkdir(parents=True)
    cfg, adir, orphan = setup(tmp_path, data_path)
    d = pyiceberg_sql.SqlCatalog("default", uri=f"sqlite:///{tmp_path / 'cat.db'}",
                                 warehouse=f"file://{tmp_path / 'wh'}")
    d.load_table("ns.a").append(pa.table({"id": [3]}, schema=SCHEMA))
    a = d.load_table("ns.a")
    first = min(a.metadata.snapshots, key=lambda s: s.sequence_number)
    age_all(tmp_path)
    before = files_under(tmp_path)
    p = icm(tmp_path, cfg, "expire-snapshots", "ns.a", "--retain-last", "1",
            "--older-than", FUTURE_MS)
    assert p.returncode == 0, (p.stdout, p.stderr)
    after = files_under(tmp_path)
    gone = before - after
    assert gone == {local(first.manifest_list)}, gone


def test_nested_table_with_hidden_metadata_is_never_swept(tmp_path):
    """Table B, of a catalog the sweep cannot reach, lies in A's folder and keeps its metadata
    in a hidden `_metadata` folder (its write.metadata.path). The listing skips hidden files
    as candidates but still reads a hidden metadata file for another table: the sweep of A is
    refused (exit 5) and B keeps every file."""
    data_path = tmp_path / "plain" / "adata"
    data_path.mkdir(parents=True)
    cfg, adir, orphan = setup(tmp_path, data_path)
    other = pyiceberg_sql.SqlCatalog("other", uri=f"sqlite:///{tmp_path}/other.db",
                                     warehouse=f"file://{tmp_path}/otherwh")
    other.create_namespace("nb")
    bdir = adir / "b"
    b = other.create_table("nb.b", schema=SCHEMA, location=f"file://{bdir}",
                           properties={"write.metadata.path": f"file://{bdir}/_metadata"})
    b.append(pa.table({"id": [7, 8, 9]}, schema=SCHEMA))
    age_all(tmp_path)
    before = files_under(tmp_path)
    p = icm(tmp_path, cfg, "remove-orphan-files", "ns.a")
    assert p.returncode == 5, (p.stdout, p.stderr)
    assert "another table's metadata" in p.stderr and "_metadata" in p.stderr, p.stderr
    assert files_under(tmp_path) == before
    assert other.load_table("nb.b").scan().to_arrow().num_rows == 3


def test_enclosing_table_is_judged_by_every_metadata_file(tmp_path):
    """Table B (a catalog out of reach) appends 8 times, then sets write.data.path to
    B/custom and appends 3 times; A writes into B/custom. B's older metadata files name no
    such path, its newer ones do: every metadata file in B/metadata is judged (not the first
    the listing gives), and the sweep of A's data folder is refused."""
    other = pyiceberg_sql.SqlCatalog("o", uri=f"sqlite:///{tmp_path}/other.db",
                                     warehouse=f"file://{tmp_path}/owh")
    other.create_namespace("nb")
    bdir = tmp_path / "B"
    b = other.create_table("nb.b", schema=SCHEMA, location=f"file://{bdir}")
    for i in range(8):
        other.load_table("nb.b").append(pa.table({"id": [i]}, schema=SCHEMA))
    b = other.load_table("nb.b")
    with b.transaction() as tx:
        tx.set_properties({"write.data.path": f"file://{bdir}/custom"})
    for i in range(3):
        other.load_table("nb.b").append(pa.table({"id": [100 + i]}, schema=SCHEMA))
    data_path = bdir / "custom"
    cfg, adir, orphan = setup(tmp_path, data_path)
    before = files_under(tmp_path)
    p = sweep(tmp_path, cfg, data_path)
    assert p.returncode == 5, (p.stdout, p.stderr)
    assert "inside another table" in p.stderr, p.stderr
    assert files_under(tmp_path) == before
    assert other.load_table("nb.b").scan().to_arrow().num_rows == 11

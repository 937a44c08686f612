"""The sweep reads a folder once for a run of orphans in it (src/maint/folder_names.h) instead
of an open per orphan, for the checksum companion (`.NAME.crc`) and the catalog-store look
(issue #21). Runs of at least 4 orphans in one folder take that path: the companions planned,
the files deleted and the refusals must be exactly those of one open per orphan."""
import json
import os
import sqlite3
import time

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import icm as run_icm, local, sql_table_of_three_appends  # noqa: E402

TEN_DAYS_S = 10 * 86400
HADOOP_CRC = b"crc\0\0\0\2\0\1\2\3\4"


@pytest.fixture
def table(tmp_path):
    tbl = sql_table_of_three_appends(tmp_path, "runs")
    tbl["tmp"] = tmp_path
    return tbl


def icm(tbl, *args, check=True):
    p = run_icm(tbl["tmp"], tbl["cfg"], "--catalog", "runs", *args)
    if check and p.returncode != 0:
        raise AssertionError(f"icemaint {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


def age(paths):
    old = time.time() - TEN_DAYS_S
    for f in paths:
        os.utime(f, (old, old))


def plant(folder, names, crc_of=(), foreign_crc_of=()):
    """Orphans `names` in `folder` (aged), a Hadoop `.NAME.crc` beside those in crc_of and a
    `.NAME.crc` that is not Hadoop's beside those in foreign_crc_of."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for n in names:
        (folder / n).write_bytes(b"stray " + n.encode())
        made.append(folder / n)
    for n in crc_of:
        (folder / f".{n}.crc").write_bytes(HADOOP_CRC)
    for n in foreign_crc_of:
        (folder / f".{n}.crc").write_bytes(b"PAR1 not a checksum")
    age(made)
    return made


def test_companions_of_runs_of_orphans_are_exactly_the_hadoop_ones(table):
    data = table["dir"] / "data"
    run1 = [f"a{i}.parquet" for i in range(6)]
    run2 = [f"b{i}.parquet" for i in range(5)]
    plant(data / "extra", run1, crc_of=["a1.parquet", "a4.parquet"],
          foreign_crc_of=["a2.parquet"])
    plant(data / "extra" / "deeper", run2, crc_of=["b0.parquet", "b4.parquet"])
    # a companion whose file is not an orphan (no file): never planned
    (data / "extra" / ".nofile.parquet.crc").write_bytes(HADOOP_CRC)
    p = icm(table, "remove-orphan-files", "ns.t", "--dry-run", "--json")
    doc = json.loads(p.stdout)
    planned = sorted(os.path.relpath(local(o["path"]), data)
                     for o in doc["orphans"] if o["kind"] == "checksum")
    assert planned == ["extra/.a1.parquet.crc", "extra/.a4.parquet.crc",
                       "extra/deeper/.b0.parquet.crc", "extra/deeper/.b4.parquet.crc"]
    files = sorted(os.path.relpath(local(o["path"]), data)
                   for o in doc["orphans"] if o["kind"] != "checksum")
    assert files == sorted([f"extra/{n}" for n in run1] + [f"extra/deeper/{n}" for n in run2])
    # each companion right after its file
    orphans = doc["orphans"]
    for i, o in enumerate(orphans):
        if o["kind"] == "checksum":
            base = os.path.basename(o["path"])[1:-len(".crc")]
            assert i > 0 and os.path.basename(orphans[i - 1]["path"]) == base
    icm(table, "remove-orphan-files", "ns.t")
    left = sorted(str(x.relative_to(data)) for x in (data / "extra").rglob("*"))
    assert left == ["extra/.a2.parquet.crc", "extra/.nofile.parquet.crc", "extra/deeper"]


def test_sqlite_database_in_a_run_of_orphans_refuses_the_sweep(table, tmp_path):
    data = table["dir"] / "data"
    names = [f"c{i}.parquet" for i in range(5)]
    made = plant(data / "more", names)
    db = data / "more" / "c9.parquet"  # a catalog's store named like a data file
    con = sqlite3.connect(db)
    con.execute("create table notes (x text)")
    con.commit()
    con.close()
    age([db])
    p = icm(table, "remove-orphan-files", "ns.t", check=False)
    assert p.returncode != 0 and "SQLite database" in p.stderr, p.stderr
    assert all(f.exists() for f in made) and db.exists()

"""A shard refuses whenever the unsharded run refuses, also when the check's evidence lies in
another shard's range than the file it protects (regression class: adversary round adv2,
findings 1, 4 and 6; docs/SHARDS.md, "Every range's checks").

Before a shard plans its own range it plans every other range of the same run for its verdict
only (one at a time, nothing kept): a refusal there refuses the shard, and a referenced file
missing in any range refuses every shard once any range has an orphan. Cases, local disk:
 - presence: a manifest entry names a live file wrongly (its bytes lie at another name, in
   another range): the unsharded run refuses (a damaged manifest may name a live file
   wrongly); sharded, the range with the missing reference has no orphan and the range with
   the real file sees its own references all present: every shard must refuse anyway;
 - a SQLite catalog database (no configuration names it) in the location, and its table's
   `write.data.path` (live data) in another range: every shard refuses;
 - a listed name referenced only under another bucket (a conflict, --prefix-mismatch error)
   is in tests/py/test_s3_inventory_shards.py (an object store is needed for two buckets).
Each asserts the live files exist after dry and deleting runs of every shard.
"""
import glob
import os

import pyarrow as pa
from pyiceberg.catalog import sql as pyiceberg_sql

from plan_helpers import SCHEMA, Lake, age, files_under
from test_shard_guards import referenced_count, run_all

APPENDS = 8


def refuses_everywhere(lake, n, needle):
    """The unsharded dry run and every shard's dry and deleting runs refuse, naming `needle`;
    nothing is deleted."""
    before = lake.files()
    whole = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert whole.returncode == 5 and needle in whole.stderr, whole.stderr
    for extra in (("--dry-run",), ()):
        results = run_all(lake, n, *extra)
        assert [rc for rc, _, _ in results] == [5] * n, [err for _, _, err in results]
        for i, (_, _, err) in enumerate(results):
            assert f"shard {i}/{n}: " in err and needle in err, err
    assert lake.files() == before


def test_data_loss_shard_presence_across_ranges(tmp_path):
    lake = Lake(tmp_path, appends=APPENDS)
    data = sorted(glob.glob(f"{lake.dir}/data/*.parquet"))
    named = data[0]  # referenced as data/<name>: its bytes now lie at zz/<name>
    real = lake.dir / "zz" / os.path.basename(named)
    real.parent.mkdir()
    os.rename(named, real)
    age([str(real)])
    for n in (2, 8):
        refuses_everywhere(lake, n, "a damaged manifest may name a live file wrongly")
    assert real.exists()
    # One bit of the name's first character differs, same folder (the README's flipped bit).
    flipped = lake.dir / "data" / (chr(ord(real.name[0]) ^ 0x40) + real.name[1:])
    os.rename(real, flipped)
    refuses_everywhere(lake, 8, "a damaged manifest may name a live file wrongly")
    assert flipped.exists()


def test_data_loss_shard_presence_needs_an_orphan_somewhere(tmp_path):
    """A missing reference alone (no orphan in any range) refuses neither the unsharded run nor
    a shard: each plans nothing, as before."""
    lake = Lake(tmp_path, appends=APPENDS)
    os.remove(sorted(glob.glob(f"{lake.dir}/data/*.parquet"))[0])
    whole = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert whole.returncode == 0, whole.stderr
    results = run_all(lake, 4, "--dry-run")
    assert [rc for rc, _, _ in results] == [0] * 4, [err for _, _, err in results]
    assert all(doc["orphans"] == [] for _, doc, _ in results)


def test_data_loss_shard_catalog_db_across_ranges(tmp_path):
    lake = Lake(tmp_path, appends=APPENDS)
    loc = lake.dir
    elsewhere = tmp_path / "elsewhere"
    other_db = loc / "a-other.db"  # sorts before data/: the first range
    other = pyiceberg_sql.SqlCatalog("o", uri=f"sqlite:///{other_db}",
                                     warehouse=f"file://{elsewhere}")
    other.create_namespace("x")
    o = other.create_table("x.o", schema=SCHEMA, location=f"file://{elsewhere}/o",
                           properties={"write.data.path": f"file://{loc}/zdata"})
    o.append(pa.table({"id": [42]}, schema=SCHEMA))  # its data sorts after metadata/: the last
    del other, o
    age(files_under(loc) + files_under(elsewhere))
    theirs = sorted(glob.glob(f"{loc}/zdata/**/*.parquet", recursive=True))
    assert theirs
    for n in (2, referenced_count(lake)):
        refuses_everywhere(lake, n, "a-other.db")
    assert all(os.path.exists(f) for f in theirs) and other_db.exists()


def test_shard_refusal_names_the_other_range(tmp_path):
    """The message of a shard refused over another range names both shards."""
    lake = Lake(tmp_path, appends=APPENDS)
    named = sorted(glob.glob(f"{lake.dir}/data/*.parquet"))[0]
    real = lake.dir / "zz" / os.path.basename(named)
    real.parent.mkdir()
    os.rename(named, real)
    results = run_all(lake, 2, "--dry-run")
    assert [rc for rc, _, _ in results] == [5, 5]
    assert "shard 1/2: shard 0/2 of the same run refuses: 1 file the table's snapshots " \
           "reference here is not in the listing" in results[1][2], results[1][2]

"""bench/gen_catalog_tables.py: N small tables behind one SQLite catalog, for
bench/maintain_all.sh (docs/BENCHMARKS.md, "maintain --all over 1,000 small tables").

    python bench/gen_catalog_tables.py BENCH_EXPIRE WORK_DIR [N_TABLES [SNAPSHOTS [FILES]]]

Each table is written by `bench_expire gen` (the library's own manifest and manifest-list
writers: SNAPSHOTS fast appends of FILES data files, every 10th snapshot deleting an earlier
manifest's files; timestamps in 2023, so every snapshot but the last is old enough to expire)
at WORK_DIR/wh/db/tNNNN/t, its data files created by `bench_expire touch` and made as long as
the manifests say (1 MiB, sparse: verification compares sizes), plus two unreferenced files
dated 2020 in data/ (orphans). The catalog database WORK_DIR/catalog.db is created by
PyIceberg's SqlCatalog (catalog name `bench`, namespace `db`) and every table registered with
register_table: writing thousands of commits through PyIceberg would time PyIceberg, not the
tables. Defaults: 1000 tables, 12
snapshots, 5 files each.
"""
import os
import subprocess
import sys
import time

from pyiceberg.catalog.sql import SqlCatalog


def main():
    bench, work = sys.argv[1], os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    snapshots = sys.argv[4] if len(sys.argv) > 4 else "12"
    files = sys.argv[5] if len(sys.argv) > 5 else "5"
    start = time.monotonic()
    wh = os.path.join(work, "wh")
    os.makedirs(os.path.join(wh, "db"), exist_ok=True)
    cat = SqlCatalog("bench", uri=f"sqlite:///{work}/catalog.db", warehouse="file://" + wh)
    cat.create_namespace("db")
    old = 1577836800  # 2020-01-01: older than any cutoff
    for i in range(n):
        d = os.path.join(wh, "db", f"t{i:04d}")
        subprocess.run([bench, "gen", d, snapshots, files], check=True, stdout=subprocess.DEVNULL)
        os.makedirs(os.path.join(d, "t", "data"), exist_ok=True)
        subprocess.run([bench, "touch", d, snapshots, files], check=True, stdout=subprocess.DEVNULL)
        data = os.path.join(d, "t", "data")
        for name in os.listdir(data):  # the size the manifests record (sparse: no disk used)
            os.truncate(os.path.join(data, name), 1048576)
        for k in range(2):
            orphan = os.path.join(d, "t", "data", f"orphan-{k}.parquet")
            with open(orphan, "wb"):
                pass
            os.utime(orphan, (old, old))
        cat.register_table(f"db.t{i:04d}", os.path.join(d, "t", "metadata", "v1.metadata.json"))
    print(f"gen_catalog_tables: {n} tables in {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()

"""A sharded orphan-file report of one Iceberg table as a PySpark job (docs/SHARDS.md).

The job runs N Spark tasks; task I runs `icemaint remove-orphan-files TABLE --shard I/N
--dry-run --json` as a subprocess on its executor (icemaint must be installed there, with the
catalog configured as for PyIceberg: PYICEBERG_HOME or PYICEBERG_CATALOG__* variables) and
returns the shard's JSON document. The driver checks that every shard answered for the same
metadata file and unions the documents: the orphans of the whole table, exactly what one
unsharded run plans, computed with each task listing and holding only 1/N of the location.

    spark-submit orphan_shards.py db.events 16 [--older-than 3d] > orphans.json

The job only reports (--dry-run: no lease, so all N tasks run at once). Deleting shards take
the table lease one at a time; run them as the Kubernetes example does (examples/k8s/), or
review this report and delete with `icemaint remove-orphan-files --shard I/N` per shard.

Spark is used only to place N processes; icemaint does the work. The task function below
is plain Python, so it runs (and is tested: tests/py/test_examples_shards.py) without Spark.
"""
import json
import os
import subprocess
import sys


def run_shard(table, index, count, extra_args=(), icemaint=None):
    """One shard's dry-run report (a dict); raises RuntimeError when icemaint fails."""
    cmd = [icemaint or os.environ.get("ICEMAINT", "icemaint"), "--json",
           "remove-orphan-files", table, "--shard", f"{index}/{count}", "--dry-run",
           *extra_args]
    res = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        raise RuntimeError(f"shard {index}/{count} exited {res.returncode}: "
                           f"{res.stderr.strip()}")
    return json.loads(res.stdout)


def union(docs):
    """The whole table's report from its shards' documents (in any order)."""
    if not docs:
        raise ValueError("no shard reports")
    count = len(docs)
    seen = sorted(d["shard"] or "0/1" for d in docs)
    expected = sorted(f"{i}/{count}" for i in range(count)) if count > 1 else ["0/1"]
    if seen != expected:
        raise ValueError(f"shards {seen}, expected {expected}")
    planned_from = {d["planned_from"] for d in docs}
    if len(planned_from) != 1:
        # The ranges are cut from the metadata: shards that read different metadata may
        # overlap or leave gaps. Run the job again (nothing was deleted).
        raise ValueError(f"shards planned from different metadata: {sorted(planned_from)}")
    orphans = sorted((o for d in docs for o in d["orphans"]), key=lambda o: o["path"])
    paths = [o["path"] for o in orphans]
    if len(paths) != len(set(paths)):
        raise ValueError("a file is planned by two shards")
    return {
        "table": docs[0]["table"],
        "planned_from": planned_from.pop(),
        "shards": count,
        "orphans": orphans,
        "total": len(orphans),
        "total_bytes": sum(max(o["size_bytes"], 0) for o in orphans),
        "listed": sum(d["listed"] for d in docs),
        "warnings": sorted({w for d in docs for w in d.get("warnings", [])}),
    }


def sweep_report(sc, table, count, extra_args=()):
    """N tasks, one shard each (one partition per shard), unioned on the driver."""
    args = list(extra_args)
    docs = (sc.parallelize(range(count), count)
            .map(lambda i: run_shard(table, i, count, args))
            .collect())
    return union(docs)


def main(argv):
    if len(argv) < 3:
        print("usage: orphan_shards.py TABLE N [icemaint options...]", file=sys.stderr)
        return 2
    from pyspark import SparkContext
    sc = SparkContext(appName=f"icemaint-orphans-{argv[1]}")
    try:
        report = sweep_report(sc, argv[1], int(argv[2]), argv[3:])
    finally:
        sc.stop()
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

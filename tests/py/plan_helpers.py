"""Shared set-up of the reviewed-plan and guard-rail tests (test_plan_apply.py,
test_guard_rails.py): a PyIceberg table in a SQLite catalog with a few appends, every file aged
ten days, plus orphan files of chosen sizes; and the icemaint CLI run against it."""
import glob
import json
import os
import subprocess
import time

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
TEN_DAYS_S = 10 * 86400
SCHEMA = pa.schema([("id", pa.int64())])


def age(paths, seconds=TEN_DAYS_S):
    old = time.time() - seconds
    for p in paths:
        os.utime(p, (old, old))


def files_under(root):
    return sorted(p for p in glob.glob(str(root) + "/**/*", recursive=True)
                  if os.path.isfile(p))


class Lake:
    """One warehouse with a catalog `reg` holding `ns.t` (and whatever a test adds)."""

    def __init__(self, tmp_path, appends=3):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.wh = tmp_path / "wh"
        self.wh.mkdir()
        self.tmp = tmp_path
        self.cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{self.wh}/cat.db",
                                            warehouse=f"file://{self.wh}")
        self.cat.create_namespace("ns")
        self.table = self.cat.create_table("ns.t", schema=SCHEMA)
        for i in range(appends):
            self.table.append(pa.table({"id": [i]}, schema=SCHEMA))
        self.cfg = self.wh / ".pyiceberg.yaml"
        self.cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{self.wh}/cat.db\n"
                            f"    warehouse: file://{self.wh}\n")
        self.dir = self.wh / "ns" / "t"
        age(files_under(self.dir))

    def orphan(self, name, size, aged=True):
        """An unreferenced file under data/ of `size` bytes (aged ten days unless not)."""
        p = self.dir / "data" / name
        p.write_bytes(b"x" * size)
        if aged:
            age([p])
        return str(p)

    def parquet_orphan(self, name, ids):
        """An unreferenced Parquet file of the table's schema (aged), for add_files later."""
        p = self.dir / "data" / name
        pq.write_table(pa.table({"id": ids}, schema=SCHEMA), str(p))
        age([p])
        return str(p)

    def icm(self, *args):
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "reg", *args],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    def plan(self, name="plan.json", *extra):
        path = str(self.tmp / name)
        r = self.icm("remove-orphan-files", "ns.t", "--dry-run", "--plan-out", path, *extra)
        assert r.returncode == 0, r.stderr
        return path

    def apply(self, plan, *extra):
        return self.icm("--json", "apply", plan, "--settle", "0s", *extra)

    def files(self):
        return files_under(self.dir)

    def rows(self):
        t = self.cat.load_table("ns.t")
        return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
                for s in t.metadata.snapshots}


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri

"""The safety checks never refuse a healthy table.

Each check that refuses a run (a stale or forked pointer, another table in the metadata folder,
a table enclosing the run's folders) must tell an ordinary table apart from the dangers it
guards against. These tables are ordinary: writers whose clocks differ, metadata-logs trimmed
by previous-versions-max, two tables sharing one write.metadata.path, a namespace that happens
to be called `metadata`. Expiry and the sweep run on them (exit 0), and afterwards every file
the table references still exists and PyIceberg scans every retained snapshot.
"""
import os
import subprocess
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
snapshots_module = pytest.importorskip("pyiceberg.table.snapshots")

CLI = os.environ.get("ICM_CLI")
from safety_helpers import age_all, files_under, local, referenced, rows_per_snapshot  # noqa: E402
SCHEMA = pa.schema([("id", pa.int64())])


class Env:
    def __init__(self, root):
        if not CLI or not os.path.exists(CLI):
            pytest.fail("ICM_CLI does not name the built icemaint binary")
        self.root, self.wh = root, root / "wh"
        self.wh.mkdir()
        self.cfg = root / "conf.yaml"
        db = root / "cat.db"
        self.cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{db}\n"
                            f"    warehouse: file://{self.wh}\n")
        self.cat = pyiceberg_sql.SqlCatalog("c", uri=f"sqlite:///{db}",
                                            warehouse=f"file://{self.wh}")

    def icm(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
        env["HOME"] = str(self.root / "nohome")
        return subprocess.run([CLI, "--config", str(self.cfg), "--catalog", "c", *args],
                              cwd=self.root, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)

    def maintain(self, name):
        """Expire (all but the last 2 snapshots) and sweep `name`, each must exit 0; then every
        file the table references exists and every snapshot scans."""
        for args in (("expire-snapshots", name, "--retain-last", "2", "--older-than", "0s"),
                     ("remove-orphan-files", name)):
            p = self.icm(*args)
            assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        t = self.cat.load_table(name)
        assert referenced(t) <= files_under(self.wh)
        assert rows_per_snapshot(t)


def append(table, i):
    table.append(pa.table({"id": [i]}, schema=SCHEMA))


class SkewedClock:
    """time as a writer whose host clock runs `skew_s` seconds ahead sees it."""

    def __init__(self, skew_s):
        self.skew_s = skew_s

    def time(self):
        return time.time() + self.skew_s

    def __getattr__(self, name):
        return getattr(time, name)


@pytest.mark.parametrize("skew_s", [5, -5])
def test_writers_with_skewed_clocks_and_a_trimmed_log_are_maintained(tmp_path, monkeypatch,
                                                                     skew_s):
    """Two writers whose clocks differ by 5 s commit alternately to a table keeping 2
    metadata-log entries: last-updated-ms does not grow with the history, and the files trimmed
    from the log name each other. Nothing there is a fork or a stale pointer."""
    env = Env(tmp_path)
    env.cat.create_namespace("ns")
    t = env.cat.create_table("ns.t", schema=SCHEMA,
                             properties={"write.metadata.previous-versions-max": "2"})
    append(t, 0)
    for i in range(1, 7):
        if i % 2:
            monkeypatch.setattr(snapshots_module, "time", SkewedClock(skew_s))
        append(env.cat.load_table("ns.t"), i)
        monkeypatch.setattr(snapshots_module, "time", time)
    age_all(tmp_path)
    env.maintain("ns.t")


def test_two_tables_sharing_one_metadata_path_are_maintained(tmp_path):
    """Iceberg names metadata files uniquely, so two tables may share one write.metadata.path
    folder: neither sweep lists it, and neither is refused for the other's metadata there."""
    env = Env(tmp_path)
    env.cat.create_namespace("ns")
    shared = f"file://{env.wh}/shared-metadata"
    for name in ("a", "b"):
        t = env.cat.create_table(f"ns.{name}", schema=SCHEMA,
                                 properties={"write.metadata.path": shared})
        for i in range(3):
            append(env.cat.load_table(f"ns.{name}"), i)
    age_all(tmp_path)
    env.maintain("ns.a")
    env.maintain("ns.b")


def test_tables_in_a_namespace_named_metadata_are_maintained(tmp_path):
    """A namespace called `metadata` puts every table of it below `<warehouse>/metadata`,
    which looks like the metadata folder of a table at the warehouse root; only files directly
    in a `metadata/` folder make its parent a table, so no table here encloses another."""
    env = Env(tmp_path)
    env.cat.create_namespace("metadata")
    for name in ("users", "items"):
        t = env.cat.create_table(f"metadata.{name}", schema=SCHEMA)
        for i in range(3):
            append(env.cat.load_table(f"metadata.{name}"), i)
    assert (env.wh / "metadata" / "users" / "metadata").is_dir()
    age_all(tmp_path)
    env.maintain("metadata.users")
    env.maintain("metadata.items")


def test_table_whose_metadata_path_moved_twice_is_maintained(tmp_path):
    """write.metadata.path moves from the table's metadata/ to m1 (25 commits there, the log
    keeping 3) and then to m2: the pointer's ancestry runs through m1, which no metadata folder
    of the pointer names any more, back to metadata/; followed base by base, none of it is a
    fork, and expiry and the sweep run."""
    env = Env(tmp_path)
    env.cat.create_namespace("ns")
    t = env.cat.create_table("ns.t", schema=SCHEMA,
                             properties={"write.metadata.previous-versions-max": "3"})
    append(t, 0)
    for folder, n in (("m1", 25), ("m2", 3)):
        t = env.cat.load_table("ns.t")
        with t.transaction() as tx:
            tx.set_properties({"write.metadata.path": f"file://{env.wh}/{folder}"})
        for i in range(n):
            append(env.cat.load_table("ns.t"), i)
    age_all(tmp_path)
    env.maintain("ns.t")

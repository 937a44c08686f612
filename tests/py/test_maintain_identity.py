"""`maintain` maintains exactly the catalog tables it listed, each by its own identity.

Each step of each table is a child process. The children used to be given the dotted name
(`-- ns.table`) and read it back as a TABLE argument, so (class: wrong table maintained)
a folder named like the table in the working directory, or a namespace holding `/`, made the
child sweep a filesystem table nobody named; and (class: dotted names collide) ("ns","a.b") and
("ns","a","b") were one name: one of them was never maintained. The children now get
`--table-id` (the levels and the name, resolved through the catalog only), jobs are keyed by
(namespace, name), and journals are named so that no two tables share one.
Every test asserts the exit code, the lines, and which files exist afterwards.
"""
import glob
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from safety_helpers import TEN_DAYS_S, local  # noqa: E402

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64())])


def stray(d):
    """An old stray file in the table folder d (an orphan past any cutoff)."""
    p = Path(d) / "data" / "stray-old.parquet"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"x" * 100)
    past = time.time() - TEN_DAYS_S
    os.utime(p, (past, past))
    return p


def make_catalog(root):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = root / "wh"
    wh.mkdir(parents=True)
    uri = f"sqlite:///{root}/cat.db"
    cfg = root / "conf.yaml"
    cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: {uri}\n    warehouse: file://{wh}\n")
    return pyiceberg_sql.SqlCatalog("c", uri=uri, warehouse=f"file://{wh}"), cfg


def add_table(cat, ident, location=None):
    try:
        cat.create_namespace(ident[:-1])
    except Exception:  # it exists
        pass
    kw = {"location": location} if location else {}
    t = cat.create_table(ident, schema=SCHEMA, **kw)
    for i in range(2):
        t.append(pa.table({"id": [i]}, schema=SCHEMA))
    return stray(local(cat.load_table(ident).metadata.location))


def filesystem_table(path):
    """A filesystem (Hadoop) layout table at path, with an old stray: what a TABLE argument
    spelled like `path` would open."""
    cat = pyiceberg_sql.SqlCatalog("s", uri=f"sqlite:///{path}.scratch.db",
                                   warehouse=f"file://{path}.scratch-wh")
    cat.create_namespace("x")
    t = cat.create_table(("x", "y"), schema=SCHEMA, location=f"file://{path}")
    t.append(pa.table({"id": [1]}, schema=SCHEMA))
    last = sorted(glob.glob(f"{path}/metadata/*.metadata.json"))[-1]
    shutil.copy(last, f"{path}/metadata/v9.metadata.json")
    Path(f"{path}/metadata/version-hint.text").write_text("9")
    os.unlink(f"{path}.scratch.db")
    return stray(path)


def run(cfg, cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(cwd)
    p = subprocess.run([CLI, "--config", str(cfg), "--catalog", "c", "maintain",
                        "--settle", "0s", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines and "summary" in lines[-1], (p.stdout, p.stderr)
    return p, lines[:-1], lines[-1]["summary"]


def test_wrong_table_maintained_folder_named_like_the_table(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    mine = add_table(cat, ("ns", "t"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    other = filesystem_table(cwd / "ns.t")  # ./ns.t: a path for a TABLE argument
    p, lines, summary = run(cfg, cwd, "ns")
    assert p.returncode == 0, p.stderr
    assert [(x["namespace"], x["table_id"], x["outcome"]) for x in lines] == \
        [("ns", ["ns", "t"], "ok")]
    assert lines[0]["sweep"]["total"] == 1
    assert not mine.exists()  # the catalog table was swept
    assert other.exists()     # the folder nobody named was not


def test_wrong_table_maintained_namespace_spelled_like_a_path(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    ns = f"{tmp_path}/victim"  # one level holding '/': `ns.t` reads as the path victim.t
    mine = add_table(cat, (ns, "t"), location=f"file://{tmp_path}/lake/wh/innocent")
    other = filesystem_table(tmp_path / "victim.t")
    p, lines, summary = run(cfg, tmp_path, "--all")
    assert p.returncode == 0, p.stderr
    assert [(x["table"], x["outcome"]) for x in lines] == [(f"{ns}.t", "ok")]
    assert lines[0]["metadata_location_before"] == cat.load_table((ns, "t")).metadata_location
    assert not mine.exists()
    assert other.exists()


def test_dotted_names_collide_each_table_maintained_once(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    dotted = add_table(cat, ("ns", "a.b"))     # table "a.b" in ns
    nested = add_table(cat, ("ns", "a", "b"))  # table "b" in ns.a: also "ns.a.b"
    logs = tmp_path / "logs"
    logs.mkdir()
    p, lines, summary = run(cfg, tmp_path, "--all", "--log-out", str(logs))
    assert p.returncode == 0, p.stderr
    assert [(x["table"], x["namespace"], x["table_id"], x["outcome"]) for x in lines] == [
        ("ns.a.b", "ns", ["ns", "a.b"], "ok"), ("ns.a.b", "ns.a", ["ns", "a", "b"], "ok")]
    for line, ident in zip(lines, [("ns", "a.b"), ("ns", "a", "b")]):
        assert line["metadata_location_before"] == \
            cat.load_table(ident).metadata_location, line
        assert line["sweep"]["total"] == 1
    assert summary["tables"] == 2 and summary["ok"] == 2
    assert not dotted.exists() and not nested.exists()
    # one journal per step of each table, each named in its line
    steps = ("expire-snapshots", "remove-orphan-files")
    assert sorted(os.listdir(logs)) == sorted(
        f"{t}.{c}.jsonl" for t in ("ns.a%2Eb", "ns.a.b") for c in steps)
    for line, stray_file in zip(lines, (dotted, nested)):
        assert sorted(line["journals"]) == sorted(steps)
        sweep = [json.loads(x) for x in
                 Path(line["journals"]["remove-orphan-files"]).read_text().splitlines()]
        assert [local(x["path"]) for x in sweep if x["type"] == "file"] == [str(stray_file)]


def test_table_id_refuses_what_is_not_a_catalog_table(tmp_path):
    """--table-id is never a path: a table directory given as one level and name is looked up
    in the catalog (not found, exit 1), and nothing is deleted."""
    cat, cfg = make_catalog(tmp_path / "lake")
    other = filesystem_table(tmp_path / "ns.t")
    for cmd in ("remove-orphan-files", "expire-snapshots"):
        p = subprocess.run([CLI, "--config", str(cfg), "--catalog", "c", cmd, "--table-id",
                            '["ns","t"]'], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "HOME": str(tmp_path)}, stdin=subprocess.DEVNULL)
        assert p.returncode == 1, (cmd, p.stderr)
        assert other.exists()
        p = subprocess.run([CLI, "--config", str(cfg), "--catalog", "c", cmd, "--table-id",
                            '"ns.t"'], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "HOME": str(tmp_path)}, stdin=subprocess.DEVNULL)
        assert p.returncode == 2 and "--table-id" in p.stderr, (cmd, p.stderr)

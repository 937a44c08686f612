"""Helpers the safety tests (tests/py/test_safety_*.py) share: aging files past the cutoff,
naming what exists, reading every snapshot back with PyIceberg.

Every safety test ages the table's files 10 days (well past the sweep's 3-day default and any
cutoff the tests use) and then asserts exactly which files exist afterwards.
"""
import glob
import os
import time
from pathlib import Path

TEN_DAYS_S = 10 * 86400


def age_all(*roots, seconds=TEN_DAYS_S):
    """Set every file and folder below each root (hidden ones too, links themselves, not their
    targets) `seconds` into the past."""
    old = time.time() - seconds
    for root in roots:
        for f in glob.glob(str(Path(root) / "**" / "*"), recursive=True) + \
                glob.glob(str(Path(root) / "**" / ".*"), recursive=True):
            os.utime(f, (old, old), follow_symlinks=False)


def local(p):
    """The local path of a `file:` location (`file://localhost/p`, `file:///p`, `file:/p`)."""
    for prefix in ("file://localhost", "file://", "file:"):
        if p.startswith(prefix):
            return p[len(prefix):]
    return p


def files_under(root):
    """Every file below root (str paths)."""
    out = set()
    for dirpath, _dirs, names in os.walk(root):
        out.update(str(Path(dirpath) / n) for n in names)
    return out


def rows_per_snapshot(table):
    """{snapshot id: rows} of a PyIceberg table, each snapshot scanned whole."""
    return {s.snapshot_id: table.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in table.metadata.snapshots}


def referenced(table):
    """What a PyIceberg table's metadata keeps (local paths): every snapshot's manifest list,
    manifests and live files, the metadata file and its metadata-log."""
    io = table.io
    out = {local(table.metadata_location)}
    out.update(local(e.metadata_file) for e in table.metadata.metadata_log)
    for snap in table.metadata.snapshots:
        out.add(local(snap.manifest_list))
        for mf in snap.manifests(io):
            out.add(local(mf.manifest_path))
            for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
                out.add(local(entry.data_file.file_path))
    return out


def icm(cwd, cfg, *args):
    """Run the icemaint binary ICM_CLI names with `--config cfg` (none when cfg is None) in `cwd` (no PYICEBERG_*
    variables, HOME in cwd/nohome); a CompletedProcess with text output."""
    import pytest
    import subprocess
    cli = os.environ.get("ICM_CLI")
    if not cli or not os.path.exists(cli):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(Path(cwd) / "nohome")
    pre = ["--config", str(cfg)] if cfg is not None else []
    return subprocess.run([cli, *pre, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def sql_table_of_three_appends(tmp_path, catalog):
    """A PyIceberg table `ns.t` (id long, s string) of three appends of five rows each, in a SQL
    catalog `catalog` (SQLite) whose warehouse is tmp_path/wh, with a .pyiceberg.yaml naming
    it: {"wh", "cat", "cfg" (the yaml's path), "dir" (the table's folder), "schema"}."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog(catalog, uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("ns.t", schema=schema)
    for i in range(3):
        t.append(pa.table({"id": [i * 10 + j for j in range(5)], "s": [f"r{i}"] * 5},
                          schema=schema))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  {catalog}:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t", "schema": schema}

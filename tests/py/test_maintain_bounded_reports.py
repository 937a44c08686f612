"""Class: crash at scale. `maintain` read each step's whole --json report (a path per orphan,
~1.25 KB each) into memory and parsed it, per running table: 10M orphans of one table were
~12 GB in the scheduler, times --parallel. The steps now print `--counts-only` reports: every
count, byte total and metadata field, no per-file list, so a report's size does not grow with
the number of files (no timing and no memory measurement here: the size of what the child
prints is what the parent holds). Each test asserts the exit code, the report and the files.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from safety_helpers import TEN_DAYS_S, local
from test_maintain_identity import CLI, SCHEMA, add_table, make_catalog, pa, run  # noqa: F401


def orphans(d, n):
    """Old orphans in d until it holds n of them."""
    past = time.time() - TEN_DAYS_S
    for i in range(len(list(Path(d).glob("orphan-*"))), n):
        p = Path(d) / f"orphan-{i:06d}-with-a-longish-name-like-a-real-data-file.parquet"
        p.write_bytes(b"z")
        os.utime(p, (past, past))


def icm(cfg, cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(cwd)
    return subprocess.run([CLI, "--config", str(cfg), "--catalog", "c", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def test_parent_memory_sweep_report_is_constant_in_the_orphan_count(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    stray = add_table(cat, ("ns", "a"))
    data = stray.parent
    sizes = {}
    for n in (3, 300):
        orphans(data, n)
        cutoff = str(int((time.time() - 3 * 86400) * 1000))
        args = ["remove-orphan-files", "--json", "--dry-run", "--older-than", cutoff,
                "--table-id", '["ns","a"]']
        full = icm(cfg, tmp_path, *args)
        short = icm(cfg, tmp_path, *args, "--counts-only")
        assert full.returncode == 0 and short.returncode == 0, (full.stderr, short.stderr)
        f, s = json.loads(full.stdout), json.loads(short.stdout)
        assert len(f["orphans"]) == n + 1 and "orphans" not in s and "warnings" not in s
        assert s["warning_count"] == len(f["warnings"])
        assert s == {k: v for k, v in f.items() if k not in ("orphans", "warnings")} | {
            "warning_count": len(f["warnings"]), "created_ms": s["created_ms"]}
        assert s["total"] == n + 1 and s["counts"]["data"] == n + 1
        sizes[n] = len(short.stdout)
    assert abs(sizes[300] - sizes[3]) <= 16, sizes  # a few more digits, nothing per file
    assert len(list(data.glob("orphan-*"))) == 300 and stray.exists()  # dry runs
    # maintain reads only such reports, and its line has the counts
    p, lines, summary = run(cfg, tmp_path, "--all")
    assert p.returncode == 0, p.stderr
    assert lines[0]["sweep"]["total"] == 301 and lines[0]["sweep"]["total_bytes"] == 400
    assert summary["deleted_files"] == 301
    assert list(data.glob("orphan-*")) == [] and not stray.exists()


def test_parent_memory_expire_report_is_counts_only(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    add_table(cat, ("ns", "a"))
    t = cat.load_table(("ns", "a"))
    for i in range(3):
        t.append(pa.table({"id": [i]}, schema=SCHEMA))
    t = cat.load_table(("ns", "a"))
    snaps = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
    lists = [local(s.manifest_list) for s in snaps]
    time.sleep(0.01)
    p = icm(cfg, tmp_path, "expire-snapshots", "--json", "--counts-only", "--older-than",
            str(int(time.time() * 1000)), "--retain-last", "1", "--table-id", '["ns","a"]')
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    for key in ("deleted_files", "deleted_manifests", "deleted_statistics_files",
                "deleted_checksum_files", "not_deleted", "problems"):
        assert key not in doc, key
    assert doc["expired"] == [s.snapshot_id for s in snaps[:-1]]
    assert doc["total_deleted"] == len(snaps) - 1 == doc["counts"]["manifest_list"]
    assert doc["problem_count"] == 0
    assert [os.path.exists(x) for x in lists] == [False] * (len(snaps) - 1) + [True]

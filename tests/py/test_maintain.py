"""`icemaint maintain [NS ...] | --all` over a SQLite catalog built with PyIceberg.

The catalog holds tables in nested namespaces, each with its own retention properties, and an
old and a young stray file in each table's data folder. Every test asserts the exact outcome:
the JSON line of each table (expired snapshot ids, counts, outcome, metadata locations), the
exit code, and which files exist afterwards, compared with what each table's own properties
keep (computed from PyIceberg's view of the table before the run).
"""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from safety_helpers import TEN_DAYS_S, files_under, local  # noqa: E402

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64())])

# table -> properties; every table gets three appends
TABLES = {
    # every snapshot is past a 1 ms age: only the current one stays
    "ns.a": {"history.expire.max-snapshot-age-ms": "1"},
    # the same age, but two snapshots are kept
    "ns.b": {"history.expire.max-snapshot-age-ms": "1",
             "history.expire.min-snapshots-to-keep": "2"},
    # a nested namespace, the default 5 days: nothing expires
    "ns.sub.c": {},
    # gc disabled: skipped, nothing deleted
    "ns.d": {"history.expire.max-snapshot-age-ms": "1", "gc.enabled": "false"},
    # another top-level namespace
    "other.e": {"history.expire.max-snapshot-age-ms": "1"},
}
# how many of the oldest snapshots each table's properties expire
EXPIRES = {"ns.a": 2, "ns.b": 1, "ns.sub.c": 0, "ns.d": 0, "other.e": 2}


def table_dir(wh, name):
    *ns, t = name.split(".")
    return wh / ".".join(ns) / t


@pytest.fixture
def lake(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    uri = f"sqlite:///{tmp_path}/cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=uri, warehouse=f"file://{wh}")
    for ns in ("ns", "ns.sub", "other"):
        cat.create_namespace(ns)
    before = {}
    for name, props in TABLES.items():
        t = cat.create_table(name, schema=SCHEMA)
        for i in range(3):
            t.append(pa.table({"id": [i]}, schema=SCHEMA))
        if props:
            with t.transaction() as tx:
                tx.set_properties(props)
        t = cat.load_table(name)
        snaps = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
        d = Path(local(t.metadata.location))
        old, young = d / "data" / "stray-old.parquet", d / "data" / "stray-young.parquet"
        old.write_bytes(b"x" * 100)
        young.write_bytes(b"y" * 10)
        past = time.time() - TEN_DAYS_S
        os.utime(old, (past, past))
        before[name] = {"dir": d, "md": t.metadata_location, "snaps": snaps,
                        "old": old, "young": young}
    time.sleep(0.01)  # every snapshot is past the 1 ms age
    for name in before:
        before[name]["files"] = files_under(before[name]["dir"])
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: {uri}\n    warehouse: file://{wh}\n")
    return {"cat": cat, "cfg": cfg, "root": tmp_path, "wh": wh, "before": before}


def maintain(lake, *args):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(lake["root"])
    p = subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", "maintain",
                        "--settle", "0s", *args], cwd=lake["root"], env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines and "summary" in lines[-1], (p.stdout, p.stderr)
    return p, {x["table"]: x for x in lines[:-1]}, lines[-1]["summary"]


def expected_files(b, line, cat, name):
    """What must remain of a table: its files before, less the manifest lists of the expired
    snapshots (PyIceberg's fast appends carry every manifest forward, so the lists are all an
    expiry of these tables releases) and the old stray file, plus the committed metadata
    file."""
    n = EXPIRES[name]
    gone = {local(s.manifest_list) for s in b["snaps"][:n]}
    if line["outcome"] == "ok":
        gone.add(str(b["old"]))
    files = (b["files"] - gone)
    if line["metadata_location_after"] != b["md"]:
        files.add(local(line["metadata_location_after"]))
    return files


def assert_maintained(lake, lines, names):
    cat = lake["cat"]
    for name in names:
        b, line = lake["before"][name], lines[name]
        n = EXPIRES[name]
        assert line["namespace"] == name.rsplit(".", 1)[0]
        assert line["metadata_location_before"] == b["md"]
        if name == "ns.d":
            assert line["outcome"] == "skipped" and line["exit_code"] == 0
            assert line["reason"] == "gc.enabled='false': no snapshot expired, no file deleted"
            assert line["metadata_location_after"] == b["md"]
            assert line["expire"] is None and line["sweep"] is None
            assert files_under(b["dir"]) == b["files"]
            continue
        assert line["outcome"] == "ok", line
        assert line["expire"]["expired"] == [s.snapshot_id for s in b["snaps"][:n]]
        assert line["expire"]["expired_snapshots"] == n
        assert line["expire"]["counts"]["manifest_list"] == n
        assert line["expire"]["total"] == n
        assert line["sweep"]["total"] == 1 and line["sweep"]["total_bytes"] == 100
        assert line["policy"]["properties"]["history.expire.max-snapshot-age-ms"] == \
            TABLES[name].get("history.expire.max-snapshot-age-ms")
        assert line["policy"]["retain_last"] == \
            int(TABLES[name].get("history.expire.min-snapshots-to-keep", "1"))
        now = cat.load_table(name)
        assert line["metadata_location_after"] == now.metadata_location
        assert (line["metadata_location_after"] != b["md"]) == (n > 0)
        assert [s.snapshot_id for s in sorted(now.metadata.snapshots,
                                              key=lambda s: s.timestamp_ms)] == \
            [s.snapshot_id for s in b["snaps"][n:]]
        assert files_under(b["dir"]) == expected_files(b, line, cat, name), name
        assert now.scan().to_arrow().num_rows == 3


@pytest.mark.parametrize("parallel", ["1", "3"])
def test_all_tables_by_their_own_properties(lake, parallel):
    metrics = lake["root"] / "icemaint.prom"
    p, lines, summary = maintain(lake, "--all", "--parallel", parallel,
                                 "--metrics", str(metrics))
    assert p.returncode == 0, p.stderr
    assert sorted(lines) == sorted(TABLES)
    assert_maintained(lake, lines, TABLES)
    assert summary["tables"] == 5 and summary["ok"] == 4 and summary["skipped"] == 1
    assert summary["failed"] == 0 and summary["exit_code"] == 0
    assert summary["expired_snapshots"] == sum(EXPIRES.values())
    assert summary["deleted_files"] == sum(EXPIRES.values()) + 4
    samples = parse_prometheus(metrics.read_text())
    assert not (lake["root"] / "icemaint.prom.tmp").exists()
    assert samples[("icemaint_maintain_table_success",
                    (("namespace", "ns.sub"), ("outcome", "ok"), ("table", "ns.sub.c")))] == 1
    assert samples[("icemaint_maintain_tables", (("outcome", "skipped"),))] == 1
    assert samples[("icemaint_maintain_exit_code", ())] == 0


def test_namespace_selection_includes_nested_namespaces_only(lake):
    p, lines, summary = maintain(lake, "ns.sub", "other")
    assert p.returncode == 0, p.stderr
    assert sorted(lines) == ["ns.sub.c", "other.e"]
    assert_maintained(lake, lines, ["ns.sub.c", "other.e"])
    for name in ("ns.a", "ns.b", "ns.d"):  # untouched
        b = lake["before"][name]
        assert files_under(b["dir"]) == b["files"]
        assert lake["cat"].load_table(name).metadata_location == b["md"]


def test_overlapping_namespaces_maintain_each_table_once(lake):
    p = subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", "maintain",
                        "--settle", "0s", "ns.sub", "ns", "ns.sub"], cwd=lake["root"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    names = [json.loads(x).get("table") for x in p.stdout.splitlines()[:-1]]
    assert names == ["ns.a", "ns.b", "ns.d", "ns.sub.c"]  # name order, each once
    assert_maintained(lake, {json.loads(x)["table"]: json.loads(x)
                             for x in p.stdout.splitlines()[:-1]}, names)
    assert json.loads(p.stdout.splitlines()[-1])["summary"]["tables"] == 4


def test_dry_run_deletes_nothing_and_plans_the_same(lake):
    p, lines, summary = maintain(lake, "--all", "--dry-run", "--parallel", "2")
    assert p.returncode == 0, p.stderr
    for name, b in lake["before"].items():
        assert files_under(b["dir"]) == b["files"], name
        assert lake["cat"].load_table(name).metadata_location == b["md"]
        line = lines[name]
        assert line["dry_run"] is True
        assert line["metadata_location_after"] == b["md"]
        if name == "ns.d":
            assert line["outcome"] == "skipped"
            continue
        n = EXPIRES[name]
        assert line["expire"]["expired"] == [s.snapshot_id for s in b["snaps"][:n]]
        assert line["expire"]["counts"]["manifest_list"] == n
        assert line["sweep"]["total"] == 1
    assert summary["planned_files"] == sum(EXPIRES.values()) + 4
    assert "deleted_files" not in summary


def damage_table(lake, name, damage):
    """Break table `name`'s current metadata file: remove it, make it not JSON, or leave it JSON
    naming the table's location but of an unknown format version."""
    broken = Path(local(lake["before"][name]["md"]))
    if damage == "missing":
        broken.unlink()
    elif damage == "not-json":
        broken.write_text("{ not json")
    else:
        doc = json.loads(broken.read_text())
        doc["format-version"] = 99
        broken.write_text(json.dumps(doc))
    return broken


@pytest.mark.parametrize("damage", ["missing", "format-version"])
def test_one_broken_table_does_not_stop_the_others(lake, damage):
    broken = damage_table(lake, "ns.b", damage)
    metrics = lake["root"] / "m.prom"
    p, lines, summary = maintain(lake, "--all", "--parallel", "3", "--metrics", str(metrics))
    assert p.returncode == 1, p.stderr
    line = lines["ns.b"]
    assert line["outcome"] == "failed" and line["exit_code"] == 1
    assert line["error"]["step"] == "load"
    assert line["error"]["code"].startswith("ICM_E") and str(broken) in line["error"]["message"]
    assert line["expire"] is None and line["sweep"] is None
    b = lake["before"]["ns.b"]
    assert files_under(b["dir"]) == b["files"] - ({str(broken)} if damage == "missing" else set())
    assert_maintained(lake, lines, [n for n in TABLES if n != "ns.b"])
    assert summary["failed"] == 1 and summary["ok"] == 3 and summary["exit_code"] == 1
    samples = parse_prometheus(metrics.read_text())
    assert samples[("icemaint_maintain_table_success",
                    (("namespace", "ns"), ("outcome", "failed"), ("table", "ns.b")))] == 0
    assert samples[("icemaint_maintain_exit_code", ())] == 1


def test_unreadable_table_blocks_the_sweeps_not_the_expiries(lake):
    """A catalog table whose metadata cannot be read at all might lie inside any other table's
    location: every sweep refuses (exit 5, nothing deleted), and expiry commits but keeps the
    files the expired snapshots released (they may be the unreadable table's); the others'
    runs still happen, and the run's exit code is the error's (1, before 5)."""
    damage_table(lake, "ns.b", "not-json")
    p, lines, summary = maintain(lake, "--all", "--parallel", "3")
    assert p.returncode == 1, p.stderr
    assert lines["ns.b"]["outcome"] == "failed" and lines["ns.b"]["error"]["step"] == "load"
    for name in ("ns.a", "ns.sub.c", "other.e"):
        b, line = lake["before"][name], lines[name]
        n = EXPIRES[name]
        assert line["outcome"] == "failed" and line["exit_code"] == 5, line
        assert line["error"]["step"] == "remove-orphan-files"
        assert "refusing to sweep" in line["error"]["message"]
        assert line["expire"]["expired"] == [s.snapshot_id for s in b["snaps"][:n]]
        assert line["sweep"] is None
        assert line["expire"]["total"] == 0
        assert [s.snapshot_id for s in lake["cat"].load_table(name).metadata.snapshots] == \
            [s.snapshot_id for s in b["snaps"][n:]]
        new = {local(line["metadata_location_after"])} if n else set()
        assert files_under(b["dir"]) == b["files"] | new, (line, p.stderr)
        assert b["old"].exists()
    assert lines["ns.d"]["outcome"] == "skipped"
    assert summary["failed"] == 4 and summary["exit_code"] == 1


def test_log_out_journals_each_step_of_each_table(lake):
    logs = lake["root"] / "logs"
    logs.mkdir()
    p, lines, summary = maintain(lake, "ns", "--log-out", str(logs))
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(logs)) == sorted(
        f"{t}.{c}.jsonl" for t in ("ns.a", "ns.b", "ns.sub.c")
        for c in ("expire-snapshots", "remove-orphan-files"))
    for name in ("ns.a", "ns.b", "ns.sub.c"):
        b = lake["before"][name]
        exp = [json.loads(x) for x in
               (logs / f"{name}.expire-snapshots.jsonl").read_text().splitlines()]
        assert sorted(local(x["path"]) for x in exp if x["type"] == "file") == \
            sorted(local(s.manifest_list) for s in b["snaps"][:EXPIRES[name]])
        assert all(x["outcome"] == "deleted" for x in exp if x["type"] == "file")
        sweep = [json.loads(x) for x in
                 (logs / f"{name}.remove-orphan-files.jsonl").read_text().splitlines()]
        assert [(local(x["path"]), x["outcome"]) for x in sweep if x["type"] == "file"] == \
            [(str(b["old"]), "deleted")]
        assert sweep[-1]["type"] == "summary"
    assert_maintained(lake, lines, ["ns.a", "ns.b", "ns.sub.c", "ns.d"])


def test_guard_rail_refuses_a_table_and_the_others_go_on(lake):
    """--max-delete 1 bounds each step of each table: ns.a's expiry (two manifest lists) is
    refused before its commit (exit 5, nothing changed), the other tables stay within it."""
    p, lines, summary = maintain(lake, "ns", "other", "--max-delete", "1")
    assert p.returncode == 5, p.stderr
    a = lines["ns.a"]
    assert a["outcome"] == "failed" and a["exit_code"] == 5
    assert a["error"]["step"] == "expire-snapshots" and a["error"]["code"] == "ICM_EREFUSED"
    assert a["sweep"] is None and a["metadata_location_after"] == lake["before"]["ns.a"]["md"]
    b = lake["before"]["ns.a"]
    assert files_under(b["dir"]) == b["files"]
    assert lake["cat"].load_table("ns.a").metadata_location == b["md"]
    assert lines["other.e"]["outcome"] == "failed"  # two manifest lists as well
    assert_maintained(lake, lines, ["ns.b", "ns.sub.c", "ns.d"])
    assert summary["failed"] == 2 and summary["exit_code"] == 5


def test_metrics_label_values_are_escaped(tmp_path):
    """A namespace named with a quote and a backslash: the label values read back as the
    names (the format's escapes), and the file still parses."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    uri = f"sqlite:///{tmp_path}/cat.db"
    cat = pyiceberg_sql.SqlCatalog("c", uri=uri, warehouse=f"file://{wh}")
    ns = 'q"u\\o te'
    cat.create_namespace(ns)
    cat.create_table((ns, "t"), schema=SCHEMA).append(pa.table({"id": [1]}, schema=SCHEMA))
    cfg = tmp_path / "conf.yaml"
    cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: {uri}\n    warehouse: file://{wh}\n")
    lake = {"cfg": cfg, "root": tmp_path}
    metrics = tmp_path / "out.prom"
    p, lines, summary = maintain(lake, "--all", "--metrics", str(metrics))
    assert p.returncode == 0, p.stderr
    assert list(lines) == [ns + ".t"] and lines[ns + ".t"]["namespace"] == ns
    samples = parse_prometheus(metrics.read_text())
    key = ("icemaint_maintain_table_success",
           (("namespace", ns), ("outcome", "ok"), ("table", ns + ".t")))
    assert samples[key] == 1, samples


def test_catalog_that_cannot_be_listed_still_writes_the_metrics(lake):
    metrics = lake["root"] / "m.prom"
    p = subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", "maintain",
                        "ns", "nosuch", "--metrics", str(metrics)], cwd=lake["root"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 1 and "nosuch" in p.stderr, p.stderr
    assert p.stdout == ""
    samples = parse_prometheus(metrics.read_text())
    assert samples[("icemaint_maintain_exit_code", ())] == 1
    assert {k: v for k, v in samples.items() if k[0] != "icemaint_maintain_exit_code" and
            k[0] != "icemaint_maintain_last_run_timestamp_seconds"} == {
        ("icemaint_maintain_tables", (("outcome", o),)): 0 for o in ("ok", "skipped", "failed")}
    for name, b in lake["before"].items():
        assert files_under(b["dir"]) == b["files"]


def test_usage_errors(lake):
    for args, why in ((["--all", "ns"], "not both"), ([], "missing argument"),
                      (["--all", "--parallel", "0"], "--parallel"),
                      (["--all", "--older-than", "yesterday"], "--older-than")):
        p = subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", "maintain",
                            *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert p.returncode == 2 and why in p.stderr, (args, p.stderr)
    # an output that cannot be written is found before any table is touched (exit 1)
    for args in (["--metrics", "/nonexistent/m.prom"], ["--log-out", "/nonexistent"]):
        p = subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", "maintain",
                            "--all", *args], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 1 and args[0] in p.stderr and p.stdout == "", (args, p.stderr)
    for name, b in lake["before"].items():
        assert files_under(b["dir"]) == b["files"]


# ---- Prometheus text format: a small strict reader ----

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def parse_prometheus(text):
    """{(name, sorted label pairs): value}; fails on any line that is not a HELP or TYPE
    comment or a `name{labels} value` sample, and on a sample of a metric without both HELP
    and TYPE before it."""
    assert text.endswith("\n")
    helped, typed, out = set(), set(), {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split(" ")[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("gauge", "counter"), line
            typed.add(name)
            continue
        m = SAMPLE.match(line)
        assert m, line
        name, labels_text, value = m.group(1), m.group(3) or "", m.group(4)
        assert name.startswith("icemaint_") and name in helped and name in typed, line
        labels, pos = [], 0
        while pos < len(labels_text):
            lm = LABEL.match(labels_text, pos)
            assert lm, line
            value_text = re.sub(r'\\(.)', lambda e: "\n" if e.group(1) == "n" else e.group(1),
                                lm.group(2))
            labels.append((lm.group(1), value_text))
            pos = lm.end()
        assert len({k for k, _ in labels}) == len(labels), line
        out[(name, tuple(sorted(labels)))] = float(value)
    return out

"""`icemaint health`: exact figures of a PyIceberg table, thresholds and their exit code (6,
each breach named), the expiry's `icemaint.last-expire-ms` (set in the expiry's own commit),
`--all` JSON lines, the Prometheus file, and that health changes nothing.

Every expected figure is computed here, independently of icemaint: from the table's manifests
through PyIceberg, from the files on disk, and from the orphans this test plants.
"""
import json
import os
import re
import time
from pathlib import Path

import pytest

from safety_helpers import files_under, icm, local, sql_table_of_three_appends

DAY_MS = 86400000


def health(env, *args):
    return icm(env["wh"], env["cfg"], "--catalog", "cat", "--json", "health", *args)


def health_doc(env, *args, code=0):
    p = health(env, *args)
    assert p.returncode == code, p.stderr
    return json.loads(p.stdout)


def live_files(io, snap):
    """{path: file_size_in_bytes} of the live data and delete files of a snapshot."""
    out = {}
    for mf in snap.manifests(io):
        for e in mf.fetch_manifest_entry(io, discard_deleted=True):
            out[e.data_file.file_path] = e.data_file.file_size_in_bytes
    return out


@pytest.fixture
def table(tmp_path):
    """ns.t of three appends then an overwrite (so the current snapshot references less than
    all snapshots do), with planted orphans."""
    import pyarrow as pa
    env = sql_table_of_three_appends(tmp_path, "cat")
    t = env["cat"].load_table("ns.t")
    t.overwrite(pa.table({"id": [100, 101], "s": ["o", "o"]}, schema=env["schema"]))
    env["table"] = env["cat"].load_table("ns.t")
    d = env["dir"]
    planted = {d / "data" / "orphan-a.parquet": 123,
               d / "data" / "x=1" / "orphan-b.parquet": 4567,
               d / "metadata" / "stray-m0.avro": 89,
               d / "notes.txt": 10}
    for p, n in planted.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * n)
    # hidden: the sweep skips it, so it is not unreferenced bytes either
    (d / "data" / "_temporary").mkdir()
    (d / "data" / "_temporary" / "part-0.parquet").write_bytes(b"y" * 1000)
    env["planted"] = planted
    return env


def test_figures_are_exact(table):
    t = table["table"]
    io = t.io
    md = t.metadata
    snaps = md.snapshots
    oldest = min(s.timestamp_ms for s in snaps)
    now = oldest + 5 * DAY_MS + 1234
    doc = health_doc(table, "ns.t", "--now", str(now))

    assert doc["table"] == "ns.t" and doc["namespace"] == "ns"
    assert doc["metadata_location"] == t.metadata_location
    assert doc["now_ms"] == now
    assert doc["snapshots"] == {"count": len(snaps), "current_snapshot_id": md.current_snapshot_id,
                                "oldest_timestamp_ms": oldest,
                                "oldest_age_ms": 5 * DAY_MS + 1234}
    assert len(snaps) == 5  # three appends; the overwrite is a delete and an append

    # metadata files: what is in metadata/ on disk
    docs = [p for p in (table["dir"] / "metadata").iterdir()
            if p.name.endswith(".metadata.json")]
    assert doc["metadata_files"] == {
        "log_entries": len(md.metadata_log),
        "listed": len(docs),
        "listed_bytes": sum(p.stat().st_size for p in docs),
        "current_bytes": os.path.getsize(local(t.metadata_location))}

    # referenced: the manifests' file_size_in_bytes, current and the union of all snapshots
    cur = live_files(io, t.current_snapshot())
    union = {}
    for s in snaps:
        union.update(live_files(io, s))
    assert len(union) == 4 and len(cur) == 1
    for path, size in union.items():  # the manifests record the real sizes
        assert os.path.getsize(local(path)) == size
    manifests = {}
    per_snapshot = []
    for s in snaps:
        mfs = s.manifests(io)
        per_snapshot.append(len(mfs))
        manifests.update({m.manifest_path: m.manifest_length for m in mfs})
    cur_mfs = t.current_snapshot().manifests(io)
    assert doc["referenced"] == {
        "current": {"data_files": 1, "data_bytes": sum(cur.values()), "delete_files": 0,
                    "delete_bytes": 0, "manifests": len(cur_mfs),
                    "manifest_bytes": sum(m.manifest_length for m in cur_mfs)},
        "all_snapshots": {"data_files": 4, "data_bytes": sum(union.values()),
                          "delete_files": 0, "delete_bytes": 0,
                          "manifests": len(manifests),
                          "manifest_bytes": sum(manifests.values())}}

    # unreferenced: exactly the planted files (the hidden one is the sweep's to skip)
    unref = sum(table["planted"].values())
    listed = len(files_under(table["dir"]))  # the hidden file is listed, then skipped
    assert doc["unreferenced"]["files"] == len(table["planted"])
    assert doc["unreferenced"]["bytes"] == unref
    assert doc["unreferenced"]["listed_files"] == listed
    assert doc["unreferenced"]["error"] is None
    assert doc["unreferenced"]["percent"] == pytest.approx(
        100.0 * unref / (unref + sum(union.values())), rel=1e-12)

    # manifests per snapshot, the small share (every manifest here is below 8 MiB)
    assert doc["manifests"] == {
        "current": len(cur_mfs),
        "per_snapshot_mean": pytest.approx(sum(per_snapshot) / len(per_snapshot), rel=1e-12),
        "per_snapshot_max": max(per_snapshot),
        "small_bound_bytes": 8388608, "small_current": len(cur_mfs), "small_percent": 100.0}
    assert doc["expiry"] == {"last_expire_ms": None, "last_expire_age_ms": None,
                             "snapshots_expired_before": False}
    assert doc["breaches"] == [] and doc["healthy"] is True and doc["exit_code"] == 0


def test_small_manifest_bound(table):
    """--small-manifest-bytes, and the table's commit.manifest.target-size-bytes otherwise."""
    t = table["table"]
    lengths = sorted(m.manifest_length for m in t.current_snapshot().manifests(t.io))
    bound = lengths[0] + 1
    small = sum(1 for n in lengths if n < bound)
    doc = health_doc(table, "ns.t", "--small-manifest-bytes", str(bound))
    assert doc["manifests"]["small_bound_bytes"] == bound
    assert doc["manifests"]["small_current"] == small
    assert doc["manifests"]["small_percent"] == pytest.approx(100.0 * small / len(lengths))
    with t.transaction() as tx:
        tx.set_properties({"commit.manifest.target-size-bytes": str(bound)})
    doc = health_doc(table, "ns.t")
    assert doc["manifests"]["small_bound_bytes"] == bound
    assert doc["manifests"]["small_current"] == small


def test_thresholds_exit_6_and_name_each_breach(table):
    t = table["table"]
    oldest = min(s.timestamp_ms for s in t.metadata.snapshots)
    now = str(oldest + 5 * DAY_MS)
    n = len(t.metadata.snapshots)
    ok = health_doc(table, "ns.t", "--now", now, "--max-snapshot-age", "6d",
                    "--max-snapshots", str(n), "--max-metadata-files", "10",
                    "--max-unreferenced-percent", "99", "--max-small-manifest-percent", "100",
                    "--max-expiry-age", "6d")
    assert ok["breaches"] == [] and ok["healthy"] is True

    p = health(table, "ns.t", "--now", now, "--max-snapshot-age", "4d",
               "--max-snapshots", str(n - 1),
               "--max-metadata-files", "2", "--max-unreferenced-percent", "0.5",
               "--max-small-manifest-percent", "50", "--max-expiry-age", "4d")
    assert p.returncode == 6, p.stderr
    doc = json.loads(p.stdout)
    assert [b["threshold"] for b in doc["breaches"]] == [
        "max-snapshot-age", "max-snapshots", "max-metadata-files", "max-unreferenced-percent",
        "max-small-manifest-percent"]
    by = {b["threshold"]: b for b in doc["breaches"]}
    assert by["max-snapshot-age"]["value"] == 5 * DAY_MS
    assert by["max-snapshot-age"]["limit"] == 4 * DAY_MS
    assert by["max-snapshots"]["value"] == n and by["max-snapshots"]["limit"] == n - 1
    # the table's default retention (5 days) released nothing yet 4 days ago: not overdue
    assert "no expiry recorded" not in p.stdout
    doc["breaches"] = [b for b in doc["breaches"] if b["threshold"] != "max-expiry-age"]
    assert doc["healthy"] is False and doc["exit_code"] == 6

    # text output names the breach too, and the exit code is the same
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "health", "ns.t", "--max-snapshots", "3")
    assert p.returncode == 6
    assert f"UNHEALTHY max-snapshots: {n} snapshots are retained (limit 3)" in p.stdout

    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "health", "ns.t",
            "--max-unreferenced-percent", "101")
    assert p.returncode == 2 and "--max-unreferenced-percent" in p.stderr


def test_expiry_sets_the_property_in_its_own_commit(table):
    t = table["table"]
    md_dir = table["dir"] / "metadata"
    before = set(md_dir.iterdir())
    t0 = int(time.time() * 1000)
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "expire-snapshots", "ns.t",
            "--older-than", str(t0 + 1), "--retain-last", "1")
    t1 = int(time.time() * 1000)
    assert p.returncode == 0, p.stderr
    # one commit: one new metadata file, which both removed the snapshots and set the property
    new = [f for f in set(md_dir.iterdir()) - before if f.name.endswith(".metadata.json")]
    assert len(new) == 1
    committed = json.loads(new[0].read_text())
    assert len(committed["snapshots"]) == 1
    stamp = int(committed["properties"]["icemaint.last-expire-ms"])
    assert t0 <= stamp <= t1
    reloaded = table["cat"].load_table("ns.t")
    assert reloaded.metadata_location == f"file://{new[0]}" or \
        local(reloaded.metadata_location) == str(new[0])
    assert reloaded.properties["icemaint.last-expire-ms"] == str(stamp)

    doc = health_doc(table, "ns.t", "--now", str(stamp + 3600000))
    assert doc["expiry"] == {"last_expire_ms": stamp, "last_expire_age_ms": 3600000,
                             "snapshots_expired_before": True}
    assert doc["snapshots"]["count"] == 1
    # one snapshot left: nothing to expire, so an expiry an hour ago is not overdue
    health_doc(table, "ns.t", "--now", str(stamp + 3600000), "--max-expiry-age", "30m")

    # a dry run commits nothing and so records nothing
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "expire-snapshots", "ns.t",
            "--older-than", str(int(time.time() * 1000)), "--dry-run")
    assert p.returncode == 0, p.stderr
    assert table["cat"].load_table("ns.t").properties["icemaint.last-expire-ms"] == str(stamp)


def test_health_changes_nothing(table):
    everything = {p: (os.path.getsize(p), os.stat(p).st_mtime_ns)
                  for p in files_under(table["wh"])}
    p = health(table, "ns.t", "--max-snapshots", "1")
    assert p.returncode == 6
    after = {p: (os.path.getsize(p), os.stat(p).st_mtime_ns) for p in files_under(table["wh"])}
    assert after == everything


def test_refused_listing_is_a_finding(table):
    """gc.enabled=false: the sweep refuses even a dry run; health reports why and the rest."""
    t = table["table"]
    with t.transaction() as tx:
        tx.set_properties({"gc.enabled": "false"})
    p = health(table, "ns.t", "--max-unreferenced-percent", "0")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    u = doc["unreferenced"]
    assert u["files"] is None and u["bytes"] is None and u["percent"] is None
    assert "gc" in u["error"].lower()
    assert "warning: ns.t: no unreferenced figures" in p.stderr
    assert doc["snapshots"]["count"] == 5


def test_a_list_that_cannot_be_trusted_is_unhealthy(table):
    """A retained snapshot's manifest list cut at an Avro block boundary (valid Avro, one row
    fewer): health breaches unreadable-metadata (exit 6) naming the list, with and without a
    listing; the whole table first reads whole and is healthy."""
    import io as _io
    import fastavro
    doc = health_doc(table, "ns.t")
    assert doc["integrity"] == {"unreadable_files": 0, "first": None} and doc["healthy"]
    snap = table["table"].metadata.snapshots[2]
    assert snap.summary["total-data-files"] == "3"
    lst = local(snap.manifest_list)
    with open(lst, "rb") as f:
        r = fastavro.reader(f)
        recs, meta, schema = list(r), dict(r.metadata), r.writer_schema
    for k in ("avro.schema", "avro.codec"):
        meta.pop(k, None)
    out = _io.BytesIO()
    fastavro.writer(out, schema, recs[1:], codec="deflate", metadata=meta, sync_interval=1)
    with open(lst, "wb") as f:
        f.write(out.getvalue())
    for extra in ((), ("--no-listing",)):
        doc = health_doc(table, "ns.t", *extra, code=6)
        assert doc["integrity"]["unreadable_files"] == 1, doc["integrity"]
        assert doc["integrity"]["first"].startswith(snap.manifest_list + ": ")
        assert "total-data-files 3" in doc["integrity"]["first"]
        assert [b["threshold"] for b in doc["breaches"]] == ["unreadable-metadata"]
        assert doc["healthy"] is False and doc["exit_code"] == 6
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "health", "ns.t", "--no-listing")
    assert p.returncode == 6, p.stderr
    assert f"integrity: 1 cannot be trusted; the first: {snap.manifest_list}: " in p.stdout
    assert "UNHEALTHY unreadable-metadata: 1 manifest list or manifest" in p.stdout


PROM_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                         r'(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? '
                         r'(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[+-]Inf)$')


def check_prometheus(text):
    """Every line is HELP, TYPE or a sample `name{labels} value`; each family has HELP and TYPE
    before its samples; returns {family: [(labels, value)]}."""
    helped, typed, samples = set(), set(), {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert name in helped and kind == "gauge", line
            typed.add(name)
            continue
        m = PROM_SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        assert m.group(1) in typed, f"sample before its TYPE: {line!r}"
        samples.setdefault(m.group(1), []).append((m.group(3) or "", float(m.group(5))))
    assert helped == typed
    return samples


def test_all_json_lines_and_metrics(table):
    import pyarrow as pa
    cat = table["cat"]
    cat.create_namespace("other")
    cat.create_namespace(("other", "deep"))
    t2 = cat.create_table("other.deep.u", schema=table["schema"])
    t2.append(pa.table({"id": [1], "s": ["a"]}, schema=table["schema"]))
    cat.create_table("other.empty", schema=table["schema"])
    metrics = table["wh"] / "health.prom"
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "--json", "health", "--all",
            "--max-snapshots", "3", "--metrics", str(metrics))
    assert p.returncode == 6, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(lines) == 4
    by = {d["table"]: d for d in lines[:3]}
    assert set(by) == {"ns.t", "other.deep.u", "other.empty"}
    assert by["other.deep.u"]["namespace"] == "other.deep"
    assert by["ns.t"]["exit_code"] == 6 and by["other.deep.u"]["exit_code"] == 0
    assert by["other.empty"]["snapshots"]["count"] == 0
    assert by["other.empty"]["snapshots"]["oldest_age_ms"] is None
    assert lines[3] == {"summary": {"tables": 3, "healthy": 2, "unhealthy": 1, "failed": 0,
                                    "exit_code": 6}}

    assert not Path(str(metrics) + ".tmp").exists()
    s = check_prometheus(metrics.read_text())
    assert ('namespace="ns",table="ns.t"', 5.0) in s["icemaint_health_snapshots"]
    assert ('namespace="other.deep",table="other.deep.u"', 1.0) in s["icemaint_health_snapshots"]
    assert s["icemaint_health_threshold_breached"] == [
        ('namespace="ns",table="ns.t",threshold="max-snapshots"', 1.0)]
    assert ('namespace="ns",table="ns.t"', float(sum(table["planted"].values()))) in \
        s["icemaint_health_unreferenced_bytes"]
    assert s["icemaint_health_exit_code"] == [("", 6.0)]
    assert sorted(v for _, v in s["icemaint_health_up"]) == [1.0, 1.0, 1.0]
    assert all(name.startswith("icemaint_health_") for name in s)

    # a table that cannot be measured: its line has the error, the others are still reported,
    # and the exit code is 1 (it wins over 6)
    u_md = local(cat.load_table("other.deep.u").metadata_location)
    os.remove(u_md)
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "--json", "health", "--all",
            "--max-snapshots", "3", "--metrics", str(metrics))
    assert p.returncode == 1
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    by = {d["table"]: d for d in lines[:3]}
    assert by["other.deep.u"]["error"]["exit_code"] == 1
    assert "snapshots" not in by["other.deep.u"]
    assert by["ns.t"]["exit_code"] == 6 and by["other.empty"]["exit_code"] == 0
    assert lines[3]["summary"] == {"tables": 3, "healthy": 1, "unhealthy": 1, "failed": 1,
                                   "exit_code": 1}
    s = check_prometheus(metrics.read_text())
    assert ('namespace="other.deep",table="other.deep.u"', 0.0) in s["icemaint_health_up"]
    assert not any("other.deep.u" in lab for lab, _ in s["icemaint_health_snapshots"])


def test_usage(table):
    p = icm(table["wh"], table["cfg"], "health")
    assert p.returncode == 2
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "health", "ns.t", "--all")
    assert p.returncode == 2
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "health", "ns.t",
            "--max-snapshot-age", "soon")
    assert p.returncode == 2 and "--max-snapshot-age" in p.stderr


def test_fixtures_match_the_index():
    """Every fixture table without missing files (fixtures README): snapshots and the distinct
    live data and delete files of all snapshots are what index.tsv counts."""
    from test_check import FIXTURES, fixture_rows, path_maps
    cli = os.environ.get("ICM_CLI")
    if not cli or not os.path.exists(cli):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    import subprocess
    checked = 0
    for row in fixture_rows():
        if json.loads(row["missing_refs"]):
            continue
        td = os.path.join(FIXTURES, row["table_dir"])
        args = [cli]
        for frm, to in path_maps(row):
            args += ["--path-map", f"{frm}={to}"]
        args += ["--json", "health", "--no-listing", os.path.join(td, row["current_metadata"])]
        p = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        # Impala's hand-made table: its manifests hold more entries than their rows count
        # (docs/semantics.md), which the sweep and the expiry do not trust
        damaged = row["table_dir"].endswith("/iceberg_v2_null_delete_record")
        assert p.returncode == (6 if damaged else 0), f"{row['table_dir']}: {p.stderr}"
        d = json.loads(p.stdout)
        assert (d["integrity"]["unreadable_files"] > 0) == damaged, (row["table_dir"], d)
        a = d["referenced"]["all_snapshots"]
        assert (d["snapshots"]["count"], a["data_files"], a["delete_files"]) == \
            (int(row["snapshots"]), int(row["data_files"]), int(row["delete_files"])), \
            row["table_dir"]
        assert d["unreferenced"] == {"listed_files": None, "files": None, "bytes": None,
                                     "percent": None, "error": None}
        checked += 1
    assert checked > 90


def test_fixture_with_nothing_unreferenced():
    """A Spark table (fixture, used in place: health writes nothing): every listed file is
    referenced, and the referenced bytes are the manifests' sizes, read here with fastavro."""
    import fastavro
    from test_check import FIXTURES
    cli = os.environ.get("ICM_CLI")
    rel = "duckdb-iceberg/data/iceberg/generated_spec2_0_001/pyspark_iceberg_table"
    td = os.path.join(FIXTURES, rel)
    if not os.path.isdir(td):
        pytest.fail(f"fixture {td} missing (ICM_FIXTURES_DIR)")
    frm = "data/iceberg/generated_spec2_0_001/pyspark_iceberg_table"
    md_path = os.path.join(td, "metadata", "v9.metadata.json")
    import subprocess
    p = subprocess.run([cli, "--path-map", f"{frm}={td}", "--json", "health", md_path],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    md = json.loads(Path(md_path).read_text())

    def here(path):
        return td + path[len(frm):]

    def live(snapshot):
        out = {}
        with open(here(snapshot["manifest-list"]), "rb") as f:
            for m in fastavro.reader(f):
                with open(here(m["manifest_path"]), "rb") as g:
                    for e in fastavro.reader(g):
                        if e["status"] != 2:
                            out[e["data_file"]["file_path"]] = (
                                e["data_file"].get("content", 0),
                                e["data_file"]["file_size_in_bytes"])
        return out

    cur = live(next(s for s in md["snapshots"]
                    if s["snapshot-id"] == md["current-snapshot-id"]))
    union = {}
    for s in md["snapshots"]:
        union.update(live(s))

    def sums(files):
        data = [v[1] for v in files.values() if v[0] == 0]
        dels = [v[1] for v in files.values() if v[0] != 0]
        return len(data), sum(data), len(dels), sum(dels)

    r = d["referenced"]
    for got, files in ((r["current"], cur), (r["all_snapshots"], union)):
        assert (got["data_files"], got["data_bytes"], got["delete_files"],
                got["delete_bytes"]) == sums(files)
    on_disk = files_under(td)
    assert d["unreferenced"] == {"listed_files": len(on_disk), "files": 0, "bytes": 0,
                                 "percent": 0.0, "error": None}


def test_a_table_that_cannot_be_opened_is_down_in_the_metrics(table):
    metrics = table["wh"] / "down.prom"
    missing = str(table["wh"] / "no-such-table")
    p = icm(table["wh"], table["cfg"], "--catalog", "cat", "--json", "health", missing,
            "--metrics", str(metrics))
    assert p.returncode == 1
    assert json.loads(p.stdout)["error"]["exit_code"] == 1
    s = check_prometheus(metrics.read_text())
    assert s["icemaint_health_up"] == [(f'namespace="",table="{missing}"', 0.0)]
    assert s["icemaint_health_exit_code"] == [("", 1.0)]
    assert "icemaint_health_snapshots" not in s


def test_expiry_overdue_only_when_released_snapshots_wait(table):
    """Class: false alarms. A scheduled `maintain` that finds nothing to expire commits, and
    so records, nothing; --max-expiry-age used to breach on such a table once its last
    recorded expiry (or, with none, its oldest snapshot) was older than the limit. It breaches
    now only when snapshots the table's own retention released more than the limit ago are
    still there, and no expiry was recorded in that time."""
    t = table["table"]
    snaps = sorted(s.timestamp_ms for s in t.metadata.snapshots)
    n = len(snaps)
    newest = snaps[-1]
    # default retention 5 days: at newest + 5d + 1h nothing was released an hour ago...
    health_doc(table, "ns.t", "--now", str(newest + 5 * DAY_MS + 3600000),
               "--max-expiry-age", "2h")
    # ...but at newest + 5d + 3h, the n - 1 non-current snapshots were released 3h ago
    p = health(table, "ns.t", "--now", str(newest + 5 * DAY_MS + 3 * 3600000),
               "--max-expiry-age", "2h")
    assert p.returncode == 6, p.stderr
    (b,) = json.loads(p.stdout)["breaches"]
    assert b["threshold"] == "max-expiry-age"
    assert f"no expiry recorded (icemaint.last-expire-ms), and {n - 1} snapshots released" \
        in b["message"], b
    # the table's own retention decides: 1 hour releases them an hour after each was replaced
    with t.transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "3600000"})
    p = health(table, "ns.t", "--now", str(newest + 4 * 3600000), "--max-expiry-age", "2h")
    assert p.returncode == 6, p.stderr
    assert [x["threshold"] for x in json.loads(p.stdout)["breaches"]] == ["max-expiry-age"]
    health_doc(table, "ns.t", "--now", str(newest + 2 * 3600000), "--max-expiry-age", "2h")
    # an expiry recorded within the limit: not overdue; recorded before it: overdue
    now = newest + 4 * 3600000
    for recorded, code in ((now - 3600000, 0), (now - 3 * 3600000, 6)):
        with t.transaction() as tx:
            tx.set_properties({"icemaint.last-expire-ms": str(recorded)})
        p = health(table, "ns.t", "--now", str(now), "--max-expiry-age", "2h", "--no-listing")
        assert p.returncode == code, p.stdout
        if code:
            (b,) = json.loads(p.stdout)["breaches"]
            assert b["message"].startswith("the last expiry was 3h 0m ago (limit 2h 0m), and "
                                           f"{n - 1} snapshots released"), b
    # gc.enabled=false turns expiry off, so it cannot be overdue
    with t.transaction() as tx:
        tx.set_properties({"gc.enabled": "false"})
    p = health(table, "ns.t", "--now", str(newest + 4 * 3600000), "--max-expiry-age", "2h",
               "--no-listing")
    assert "max-expiry-age" not in p.stdout, p.stdout

"""`icemaint check TABLE [--snapshot-id ID | --all]` (data-loss class "corruption that becomes
permanent": check proves what is kept exists) on PyIceberg tables and
on the engine-written fixtures (env ICM_CLI, ICM_FIXTURES_DIR).

The expected problems come from outside icemaint: the tables' own files read with PyIceberg and
fastavro and sized with os.path.getsize, and the fixtures' index.tsv (`missing_refs`, counted
by an independent reader when the fixtures were collected).
"""
import collections
import csv
import glob
import json
import os
import shutil
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
fastavro = pytest.importorskip("fastavro")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
FIXTURES = os.environ.get("ICM_FIXTURES_DIR")
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA)
    for i in range(3):
        t.append(pa.table({"id": [i * 10 + j for j in range(5)], "s": [f"r{i}"] * 5},
                          schema=SCHEMA))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t"}


def icm(tbl, *args):
    return subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "reg", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def all_files(root):
    return sorted(p for p in glob.glob(str(root / "**" / "*"), recursive=True)
                  if os.path.isfile(p))


def needs(tbl, snapshot):
    """What a snapshot needs, read with PyIceberg: its list, manifests and live files."""
    t = tbl["cat"].load_table("ns.t")
    manifests = snapshot.manifests(t.io)
    files = {e.data_file.file_path for m in manifests for e in m.fetch_manifest_entry(t.io)}
    return snapshot.manifest_list, {m.manifest_path: m for m in manifests}, files


def problems_of(doc):
    """{snapshot id: {(path, kind, problem)}} from a check --json document."""
    return {s["snapshot_id"]: {(p["path"], p["kind"], p["problem"]) for p in s["problems"]}
            for s in doc["snapshots"]}


def test_check_clean_table_exits_0(table):
    t = table["cat"].load_table("ns.t")
    files_before = all_files(table["dir"])
    for args in ((), ("--all",)):
        p = icm(table, "--json", "check", "ns.t", *args)
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        assert doc["ok"] is True and doc["problem_count"] == 0
        assert doc["metadata_location"] == t.metadata_location
        assert doc["metadata_problems"] == []
        want = [s.snapshot_id for s in t.metadata.snapshots] if args else \
            [t.current_snapshot().snapshot_id]
        assert [s["snapshot_id"] for s in doc["snapshots"]] == want
        for s in doc["snapshots"]:
            ml, manifests, files = needs(table, t.snapshot_by_id(s["snapshot_id"]))
            assert s["files_checked"] == 1 + len(manifests) + len(files)
            assert s["problems"] == []
    p = icm(table, "check", "ns.t")
    assert p.returncode == 0 and " ok" in p.stdout, p.stdout + p.stderr
    assert all_files(table["dir"]) == files_before


def test_check_missing_data_file_and_truncated_manifest_exit_6(table):
    t = table["cat"].load_table("ns.t")
    s1, s2, s3 = t.metadata.snapshots
    _, _, first_files = needs(table, s1)
    (gone,) = first_files                               # live in all three snapshots
    os.remove(local(gone))
    _, manifests3, _ = needs(table, s3)
    (own,) = [m for m in manifests3.values() if m.added_snapshot_id == s3.snapshot_id]
    with open(local(own.manifest_path), "r+b") as f:   # only the current snapshot lists it
        f.truncate(own.manifest_length - 7)
    files_before = all_files(table["dir"])

    p = icm(table, "--json", "check", "ns.t", "--all")
    assert p.returncode == 6, p.stderr
    doc = json.loads(p.stdout)
    assert doc["ok"] is False
    got = problems_of(doc)
    missing = (gone, "data", "missing")
    short = (own.manifest_path, "manifest", "wrong_size")
    unreadable = (own.manifest_path, "manifest", "unreadable")
    assert got == {s1.snapshot_id: {missing}, s2.snapshot_id: {missing},
                   s3.snapshot_id: {missing, short, unreadable}}
    assert doc["problem_count"] == 5
    # the JSON shape, per problem
    by = {(p["path"], p["problem"]): p for s in doc["snapshots"] for p in s["problems"]}
    m = by[(gone, "missing")]
    assert m["actual_size_bytes"] == "missing"
    assert isinstance(m["expected_size_bytes"], int) and m["expected_size_bytes"] > 0
    w = by[(own.manifest_path, "wrong_size")]
    assert w["expected_size_bytes"] == own.manifest_length
    assert w["actual_size_bytes"] == own.manifest_length - 7
    for q in by.values():
        assert set(q) == {"path", "kind", "problem", "expected_size_bytes",
                          "actual_size_bytes", "message"} and q["message"]

    # default: the current snapshot only; --snapshot-id: the named ones
    p = icm(table, "--json", "check", "ns.t")
    assert p.returncode == 6
    assert problems_of(json.loads(p.stdout)) == {s3.snapshot_id: {missing, short, unreadable}}
    p = icm(table, "--json", "check", "ns.t", "--snapshot-id", str(s1.snapshot_id))
    assert p.returncode == 6
    assert problems_of(json.loads(p.stdout)) == {s1.snapshot_id: {missing}}
    # text: one line per problem naming the file
    p = icm(table, "check", "ns.t", "--all")
    assert p.returncode == 6
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("  ")]
    assert sum(gone in ln and "missing" in ln for ln in lines) == 3
    assert sum(own.manifest_path in ln and "wrong_size" in ln for ln in lines) == 1
    # it never changes anything
    assert all_files(table["dir"]) == files_before


def test_check_path_map_looks_at_mapped_files_reports_original_names(table, tmp_path):
    t = table["cat"].load_table("ns.t")
    moved = tmp_path / "copy"
    shutil.copytree(table["dir"], moved)
    md = str(moved / "metadata" / os.path.basename(local(t.metadata_location)))
    orig = t.location()
    run = [CLI, "--path-map", f"{orig}={moved}", "--json", "check", md, "--all"]
    p = subprocess.run(run, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    _, _, files = needs(table, t.current_snapshot())
    victim = sorted(files)[0]
    os.remove(str(moved) + local(victim)[len(local(orig)):])
    p = subprocess.run(run, capture_output=True, text=True)
    assert p.returncode == 6, p.stderr
    paths = {q["path"] for s in json.loads(p.stdout)["snapshots"] for q in s["problems"]}
    assert paths == {victim}  # the metadata's name, not the copy's
    assert os.path.exists(local(victim))


def test_check_usage_errors(table):
    p = icm(table, "check", "ns.t", "--all", "--snapshot-id", "1")
    assert p.returncode == 2
    p = icm(table, "check", "ns.t", "--snapshot-id", "12345")
    assert p.returncode == 1 and "12345" in p.stderr


# ---- the fixtures ----

def fixture_rows():
    if not FIXTURES:
        pytest.fail("ICM_FIXTURES_DIR is not set")
    with open(os.path.join(FIXTURES, "index.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [r for r in rows
            if not r["table_dir"].startswith("metadata-json/") and r["format_version"] != "None"]


def path_maps(row):
    """The --path-map rules of the fixtures README (as tests/unit/test_cli.c builds them)."""
    td = os.path.join(FIXTURES, row["table_dir"])
    loc = row["location_in_metadata"]
    maps = []
    if loc and loc != "None":
        maps.append((loc, td))
    if loc.startswith("./"):
        maps.append((loc[2:], td))
    if loc.startswith("/test-warehouse/iceberg_test/"):
        maps.append(("/test-warehouse/iceberg_test",
                     os.path.join(FIXTURES, "impala/testdata/data/iceberg_test")))
    if row["table_dir"].startswith("duckdb-iceberg/"):
        maps.append(("data", os.path.join(FIXTURES, "duckdb-iceberg/data")))
    return maps


def mapped(path, maps):
    """Where a metadata path lies locally: the longest matching FROM at a segment boundary."""
    best = None
    for frm, to in maps:
        if path == frm or path.startswith(frm.rstrip("/") + "/"):
            if best is None or len(frm) > len(best[0]):
                best = (frm, to)
    if best is not None:
        path = best[1] + path[len(best[0]):]
    return local(path)


def test_check_fixtures_find_exactly_the_missing_refs():
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    rows = fixture_rows()
    assert len(rows) > 50
    clean = damaged = 0
    for row in rows:
        td = os.path.join(FIXTURES, row["table_dir"])
        maps = path_maps(row)
        args = [CLI]
        for frm, to in maps:
            args += ["--path-map", f"{frm}={to}"]
        args += ["--json", "check", "--all", os.path.join(td, row["current_metadata"])]
        p = subprocess.run(args, capture_output=True, text=True)
        assert p.returncode in (0, 6), f"{row['table_dir']}: {p.returncode} {p.stderr}"
        doc = json.loads(p.stdout)
        seen = {}
        for s in doc["snapshots"]:
            for q in s["problems"]:
                seen[(q["path"], q["problem"])] = q
        # missing files: exactly those index.tsv counts, by kind
        missing = collections.Counter(q["kind"] for (path, what), q in seen.items()
                                      if what == "missing")
        assert dict(missing) == json.loads(row["missing_refs"]), row["table_dir"]
        # every other problem is true of the files on disk
        for (path, what), q in seen.items():
            if what == "wrong_size":
                size = os.path.getsize(mapped(path, maps))
                assert q["actual_size_bytes"] == size != q["expected_size_bytes"], path
            elif what == "missing":
                assert not os.path.exists(mapped(path, maps)), path
        assert (p.returncode == 6) == bool(seen) == (doc["problem_count"] > 0), row["table_dir"]
        clean += not seen
        damaged += bool(seen)
    assert clean > 30 and damaged > 0


def test_check_of_a_copys_metadata_warns_that_it_checks_the_original(table):
    """`cp -a` of a table folder: the copy's metadata names the original's location, so
    `check` of the copy's metadata file checks the original's files. With a file of the copy
    missing, the report is clean (the original has it), so the run warns on stderr, naming
    the metadata file and the --path-map that checks the copy; the exit code stays 0."""
    t = table["cat"].load_table("ns.t")
    backup = table["wh"] / "backup-t"
    shutil.copytree(table["dir"], backup, symlinks=True)
    copy_md = backup / "metadata" / os.path.basename(local(t.metadata_location))
    victim = sorted((backup / "data").glob("*.parquet"))[0]
    victim.unlink()
    p = icm(table, "check", str(copy_md))
    assert p.returncode == 0, p.stderr
    assert "0 problems" in p.stdout, p.stdout
    assert "warning: " in p.stderr, p.stderr
    assert str(copy_md) in p.stderr and "--path-map" in p.stderr, p.stderr
    q = icm(table, "--path-map", f"file://{table['dir']}={backup}", "check", str(copy_md))
    assert q.returncode == 6, q.stdout + q.stderr
    assert victim.name in q.stdout
    r = icm(table, "check", "ns.t")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr

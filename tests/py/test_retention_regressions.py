"""Regressions for snapshot retention at its boundaries (docs/semantics.md#expiry-ref-retention),
on real PyIceberg
tables: each builds a small table with PyIceberg (SQLite catalog), sets the retention setting at
its boundary, runs `icemaint expire-snapshots` (env ICM_CLI), and asserts exactly which
snapshots, refs and files exist afterwards and that PyIceberg still scans every snapshot left.

  * a tag whose snapshot's age does not fit int64 (a timestamp near INT64_MIN) stays, with the
    data file only that snapshot reaches: Java's `now - timestamp` wraps to a negative age,
    within any max-ref-age-ms, so Java keeps it; icemaint once saturated the age, dropped the
    tag, expired the snapshot and deleted its file;
  * a malformed history.expire.* property (here min-snapshots-to-keep beyond int32, which Java's
    Integer.parseInt refuses) stops the expiry before anything is committed or deleted.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")
DAY_MS = 86_400_000


@pytest.fixture
def table(tmp_path):
    """ns.t: append A, overwrite with B (A is reached only by the first snapshot), append C."""
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64())])
    t = cat.create_table("ns.t", schema=schema)
    t.append(pa.table({"id": [1, 2]}, schema=schema))
    t.overwrite(pa.table({"id": [3]}, schema=schema))
    t.append(pa.table({"id": [4]}, schema=schema))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t"}


def icm(tbl, *args):
    return subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "reg", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def local(uri: str) -> Path:
    return Path(uri.replace("file://", "", 1))


def edit_metadata(tbl, edit) -> None:
    """Rewrite the table's current metadata file in place with edit(document)."""
    path = local(tbl["cat"].load_table("ns.t").metadata_location)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def every_file(tbl) -> set[Path]:
    return {p for p in tbl["dir"].rglob("*") if p.is_file()}


def scan_every_snapshot(tbl) -> dict[int, list[int]]:
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: sorted(t.scan(snapshot_id=s.snapshot_id).to_arrow()["id"].to_pylist())
            for s in t.metadata.snapshots}


def test_ref_age_beyond_int64_keeps_the_tag_and_its_files(table):
    t = table["cat"].load_table("ns.t")
    first = t.metadata.snapshots[0]
    a_files = {local(task.file.file_path) for task in t.scan(snapshot_id=first.snapshot_id)
               .plan_files()}

    def ancient_tag(doc):
        for s in doc["snapshots"]:
            if s["snapshot-id"] == first.snapshot_id:
                s["timestamp-ms"] = -2**63 + 5
        doc["refs"]["ancient"] = {"snapshot-id": first.snapshot_id, "type": "tag",
                                  "max-ref-age-ms": DAY_MS}
    edit_metadata(table, ancient_tag)
    before = scan_every_snapshot(table)
    files_before = every_file(table)
    p = icm(table, "--json", "expire-snapshots", "ns.t", "--older-than", "2099-01-01",
            "--retain-last", "1")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    after_md = table["cat"].load_table("ns.t").metadata
    assert "ancient" in after_md.refs and "ancient" not in report["removed_refs"]
    # the tagged snapshot and the current one stay; only the overwrite snapshot goes
    kept = {s.snapshot_id for s in after_md.snapshots}
    assert first.snapshot_id in kept and after_md.current_snapshot_id in kept and len(kept) == 2
    assert a_files and all(f.exists() for f in a_files)
    # exactly the reported files are gone, nothing else
    gone = files_before - every_file(table)
    reported = {local(f["path"]) for k in ("deleted_files", "deleted_manifests",
                                           "deleted_statistics_files") for f in report[k]}
    assert gone == reported and not (gone & a_files)
    reasons = {k["snapshot_id"]: k["reasons"] for k in report["retained_reasons"]}
    assert reasons[first.snapshot_id] == [{"reason": "ref", "ref": "ancient"}]
    after = scan_every_snapshot(table)
    assert after == {sid: before[sid] for sid in kept}
    assert after[first.snapshot_id] == [1, 2]


def test_malformed_retention_property_stops_before_any_change(table):
    edit_metadata(table, lambda doc: doc["properties"].update(
        {"history.expire.min-snapshots-to-keep": "2147483648"}))
    md_before = table["cat"].load_table("ns.t").metadata_location
    files_before = every_file(table)
    before = scan_every_snapshot(table)
    p = icm(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert p.returncode == 1, p.stdout + p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and "history.expire.min-snapshots-to-keep" in line, line
    assert table["cat"].load_table("ns.t").metadata_location == md_before
    assert every_file(table) == files_before
    assert scan_every_snapshot(table) == before

"""The oracle itself: the fingerprint's properties, check_after accepting a correct expiry (made
by Java's ExpireSnapshots through the ExpireDiff tool) and rejecting the damage it exists to
catch: a reachable file deleted, changed contents, a snapshot that should have gone."""

from __future__ import annotations

import datetime as dt
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.manifest import ManifestEntryStatus

import oracle
import shapes


def test_fingerprint_ignores_row_order_but_not_duplicates_or_types():
    a = {1: 7, 2: "x", 3: None, 4: dt.date(2024, 1, 2)}
    b = {1: 8, 2: "y", 3: True, 4: dt.date(2024, 1, 3)}
    assert oracle.fingerprint([a, b]) == oracle.fingerprint([b, a])
    assert oracle.fingerprint([a, b]).rows == 2
    assert oracle.fingerprint([a, a, b]) != oracle.fingerprint([a, b, b])
    assert oracle.fingerprint([{1: 1}]) != oracle.fingerprint([{1: "1"}])
    assert oracle.fingerprint([{1: None}]) != oracle.fingerprint([{1: "n"}])
    assert oracle.fingerprint([{1: 1, 2: 2}]) != oracle.fingerprint([{1: 2, 2: 1}])
    assert oracle.fingerprint([]) == oracle.Fingerprint(0, "0" * 16)
    with pytest.raises(TypeError):
        oracle.fingerprint([{1: 1.5}])


def test_untouched_tables_pass_check_after(built, before):
    wh, chosen = built
    oracle.check_after(before, wh, shapes.judges(chosen.values()))


def _one_shape(wh, name, judges=None):
    shapes.build(wh, [name])
    table_judges = {t: judges or shapes.SHAPES[name].judges for t in shapes.SHAPES[name].tables}
    return table_judges, oracle.capture(wh, table_judges)


def _all_data_files(table) -> dict[int, set[str]]:
    return {s.snapshot_id: {e.data_file.file_path for m in s.manifests(table.io)
                            for e in m.fetch_manifest_entry(table.io)}
            for s in table.metadata.snapshots}


def _removal_recorded_by(table, snapshot_ids: set[int]) -> set[str]:
    """Data files whose DELETED entries the given snapshots wrote."""
    return {
        e.data_file.file_path
        for s in table.metadata.snapshots if s.snapshot_id in snapshot_ids
        for m in s.manifests(table.io)
        for e in m.fetch_manifest_entry(table.io, discard_deleted=False)
        if e.status == ManifestEntryStatus.DELETED and e.snapshot_id == s.snapshot_id
    }


@pytest.mark.parametrize("strategy", ["reachable", "incremental"])
def test_java_expiry_passes_check_after_and_deletes_what_its_strategy_says(
        strategy, scratch_warehouse, tmp_path):
    wh = scratch_warehouse
    name = "py.cow_overwrite_delete"
    judges, before = _one_shape(wh, "cow_overwrite_delete")
    wh.save(tmp_path / "saved")
    table = wh.catalog().load_table(name)
    current = table.metadata.current_snapshot_id
    older = set(before[name].snapshot_ids) - {current}
    files = _all_data_files(table)
    if strategy == "reachable":
        # Every data file no retained snapshot has live.
        expected = set().union(*files.values()) - files[current]
    else:
        # Only files whose removal an expired snapshot recorded; a file removed by the retained
        # current snapshot stays, since that snapshot's DELETED entry still names it.
        expected = _removal_recorded_by(table, older)
    assert expected and not expected & files[current]

    result = oracle.expire_with_java(wh, name, older_than_ms=int(time.time() * 1000) + 1000,
                                     retain_last=1, cleanup_strategy=strategy)

    assert result["retained"] == [current]
    assert set(result["expired"]) == older
    deleted = set(result["deleted_paths"])
    assert {p for p in deleted if p.endswith(".parquet")} == expected
    assert not any(os.path.exists(oracle.local_path(p)) for p in deleted)
    oracle.check_after(before, wh, judges, expired={name: older})

    # restore() brings back the state before the expiry (what a differential test relies on).
    wh.restore(tmp_path / "saved")
    oracle.check_after(before, wh, {name: ("pyiceberg",)})
    assert all(os.path.exists(oracle.local_path(p)) for p in deleted)


def test_java_expiry_measures_ref_age_from_the_given_now(scratch_warehouse, tmp_path):
    """tag_short has max-ref-age 1 h: two hours after the build it has expired, at build time it
    has not. Only a fixed "now" can show both on the same table."""
    wh = scratch_warehouse
    shapes.build(wh, ["refs"])
    wh.save(tmp_path / "saved")
    built_ms = max(s.timestamp_ms for s in wh.catalog().load_table("py.refs").metadata.snapshots)
    keep_all = {"older_than_ms": 0, "cleanup_strategy": "auto"}

    later = oracle.expire_with_java(wh, "py.refs", now_ms=built_ms + 2 * 3_600_000, **keep_all)
    wh.restore(tmp_path / "saved")
    at_build = oracle.expire_with_java(wh, "py.refs", now_ms=built_ms, **keep_all)

    all_refs = ["branch_plain", "branch_ret", "main", "tag_keep", "tag_short"]
    assert at_build["refs"] == all_refs
    assert later["refs"] == [r for r in all_refs if r != "tag_short"]
    assert later["expired"] == at_build["expired"] == []


def test_check_after_reports_a_deleted_reachable_file(scratch_warehouse):
    wh = scratch_warehouse
    judges, before = _one_shape(wh, "append_history", judges=("pyiceberg", "duckdb"))
    table = wh.catalog().load_table("py.append_history")
    first = table.metadata.snapshots[0].snapshot_id
    (victim,) = _all_data_files(table)[first]
    os.remove(oracle.local_path(victim))
    with pytest.raises(AssertionError) as err:
        oracle.check_after(before, wh, judges)
    assert f"reachable file missing: {victim}" in str(err.value)
    assert "pyiceberg cannot read" in str(err.value)


def test_check_after_reports_changed_contents(scratch_warehouse):
    wh = scratch_warehouse
    judges, before = _one_shape(wh, "append_history", judges=("pyiceberg",))
    table = wh.catalog().load_table("py.append_history")
    first = table.metadata.snapshots[0].snapshot_id
    (victim,) = _all_data_files(table)[first]
    local = oracle.local_path(victim)
    data = pq.read_table(local)
    # Same row count and schema (field ids kept in the field metadata), different ids.
    field = data.schema.field("id")
    shifted = pa.array([i + 1000 for i in data.column("id").to_pylist()], field.type)
    pq.write_table(data.set_column(data.schema.get_field_index("id"), field, shifted), local)
    with pytest.raises(AssertionError) as err:
        oracle.check_after(before, wh, judges)
    assert f"snapshot {first} reads Fingerprint(rows=5," in str(err.value)


def test_check_after_reports_snapshots_that_were_not_expired(scratch_warehouse):
    wh = scratch_warehouse
    judges, before = _one_shape(wh, "append_history", judges=("pyiceberg",))
    first = before["py.append_history"].snapshot_ids[0]
    with pytest.raises(AssertionError) as err:
        oracle.check_after(before, wh, judges, expired={"py.append_history": {first}})
    assert f"snapshots removed [], expected [{first}]" in str(err.value)

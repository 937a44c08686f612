"""Reviewed plans (issue #21): `remove-orphan-files --plan-out` / `expire-snapshots --cleanup
none --plan-out` write a plan; `icemaint apply PLAN` re-validates it against the table as it is
now and deletes only what is still an orphan. Each test asserts the exit code and which files
exist afterwards.

Classes of data loss guarded here: a planned file that became live again (re-referenced), a
planned name whose content changed (rewritten), a file the plan never named, a plan for
another table, a stale plan, and a tampered plan (a path outside the table, a path a retained
snapshot references, a location outside the table, a cutoff moved forward).
"""
import json
import os
import time

import pytest

from plan_helpers import SCHEMA, Lake, age, files_under, load, local, pa, pq, pyiceberg_sql, save

DAY_MS = 86400 * 1000


def now_ms():
    return int(time.time() * 1000)


def outcomes(result):
    doc = json.loads(result.stdout)
    return {local(f["path"]): f["outcome"] for f in doc["files"]}


def test_plan_then_apply_deletes_exactly_the_planned_orphans(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10 + i) for i in range(4)]
    plan = lake.plan()
    doc = load(plan)
    assert doc["plan_version"] == 1 and doc["command"] == "remove-orphan-files"
    assert doc["table"] == "ns.t" and doc["shard"] is None
    assert doc["table_uuid"] == str(lake.cat.load_table("ns.t").metadata.table_uuid)
    assert doc["planned_from"] == lake.cat.load_table("ns.t").metadata_location
    assert abs(doc["created_ms"] - now_ms()) < 60000
    assert sorted(local(o["path"]) for o in doc["orphans"]) == sorted(orphans)
    assert all(o["size_bytes"] >= 10 and o["mtime_ms"] > 0 for o in doc["orphans"])
    live = [f for f in lake.files() if f not in orphans]
    rows = lake.rows()
    log = str(tmp_path / "journal.log")
    r = lake.apply(plan, "--log-out", log)
    assert r.returncode == 0, r.stderr
    assert set(outcomes(r).values()) == {"deleted"}
    assert lake.files() == live
    assert lake.rows() == rows
    lines = [json.loads(x) for x in open(log)]
    assert {local(x["path"]) for x in lines if x["type"] == "file"} == set(orphans)
    assert all(x["command"] == "apply" and x["plan"] == plan for x in lines)
    assert lines[-1]["type"] == "summary" and lines[-1]["deleted"] == 4


def spread_orphans(lake):
    """Sixteen orphans whose names spread over the data files' (`00000-0-<uuid>`), so that
    the shards' key ranges, cut at the references' quantiles, each hold some."""
    return [lake.orphan(f"00000-0-{h:x}{h:x}-orphan.parquet", 10 + h) for h in range(16)]


def test_shard_plans_apply_shard_by_shard(tmp_path):
    """Issue #21: `--shard I/N --dry-run --plan-out` writes shard I's plan, and `apply` carries
    it out as shard I/N (its range listed and kept, every other range checked as in the
    planning run). The three shards' plans name disjoint sets whose union is the whole-table
    plan; applied one by one they delete exactly those orphans, each apply only its own; the
    table reads as before."""
    lake = Lake(tmp_path)
    orphans = spread_orphans(lake)
    whole = {o["path"] for o in load(lake.plan("whole.json"))["orphans"]}
    assert {local(p) for p in whole} == set(orphans)
    plans = []
    for i in range(3):
        path = lake.plan(f"shard-{i}.json", "--shard", f"{i}/3")
        doc = load(path)
        assert doc["shard"] == f"{i}/3"
        plans.append((path, {o["path"] for o in doc["orphans"]}))
    assert set().union(*(names for _, names in plans)) == whole
    assert sum(len(names) for _, names in plans) == len(whole)
    live = [f for f in lake.files() if f not in orphans]
    rows = lake.rows()
    left = set(orphans)
    for path, names in plans:
        r = lake.apply(path)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["shard"] == load(path)["shard"]
        assert outcomes(r) == {local(n): "deleted" for n in names}, r.stdout
        left -= {local(n) for n in names}
        assert lake.files() == sorted(live + list(left))
    assert lake.files() == live
    assert lake.rows() == rows


def test_shard_plan_is_applied_as_its_shard(tmp_path):
    """A shard's plan edited to name an orphan of another shard's range: apply, as that
    shard, lists only its own range, so the other range's orphan is not among its candidates
    (`not_orphan`) and stays; the plan's own orphans go."""
    lake = Lake(tmp_path)
    orphans = spread_orphans(lake)
    docs = [load(lake.plan(f"shard-{i}.json", "--shard", f"{i}/3")) for i in range(3)]
    with_orphans = [d for d in docs if d["orphans"]]
    assert len(with_orphans) >= 2, [len(d["orphans"]) for d in docs]
    mine, other = with_orphans[:2]
    stranger = other["orphans"][0]
    mine["orphans"].append(stranger)
    path = str(tmp_path / "edited.json")
    save(path, mine)
    r = lake.apply(path)
    assert r.returncode == 0, r.stderr
    got = outcomes(r)
    assert got[local(stranger["path"])] == "not_orphan", r.stdout
    assert {k for k, v in got.items() if v == "deleted"} == \
        {local(o["path"]) for o in mine["orphans"][:-1]}
    assert os.path.exists(local(stranger["path"]))
    assert len([o for o in orphans if os.path.exists(o)]) == \
        len(orphans) - (len(mine["orphans"]) - 1)


@pytest.mark.parametrize("spelling, shard", [("0/1", None), ("00/3", "0/3"), ("2/03", "2/3")])
def test_plan_shard_is_reported_as_apply_reads_it(tmp_path, spelling, shard):
    """Adversary round 13, F5: an edited plan's shard spelled `0/1` (the whole table, which a
    planning run writes as null) or with leading zeros was echoed as written. apply reports
    the shard it ran as: null for the whole table, else I/N in plain decimal; and it deletes
    only the planned orphans of that range."""
    lake = Lake(tmp_path)
    orphans = spread_orphans(lake)
    plan = lake.plan()
    doc = load(plan)
    doc["shard"] = spelling
    save(plan, doc)
    r = lake.apply(plan, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["shard"] == shard
    would = {k for k, v in outcomes(r).items() if v == "planned"}
    if shard is None:
        assert would == set(orphans)
    else:
        mine = load(lake.plan("mine.json", "--shard", shard))
        assert would == {local(o["path"]) for o in mine["orphans"]}
    assert all(os.path.exists(o) for o in orphans)


def test_file_referenced_again_between_plan_and_apply_is_kept(tmp_path):
    lake = Lake(tmp_path)
    back = lake.parquet_orphan("comes-back.parquet", [7, 8])
    gone = lake.orphan("stays-orphan.parquet", 20)
    plan = lake.plan()
    assert {local(o["path"]) for o in load(plan)["orphans"]} == {back, gone}
    lake.cat.load_table("ns.t").add_files([f"file://{back}"])  # live again
    age([back])
    log = str(tmp_path / "journal.log")
    r = lake.apply(plan, "--log-out", log)
    assert r.returncode == 0, r.stderr
    assert outcomes(r) == {back: "not_orphan", gone: "deleted"}
    lines = [json.loads(x) for x in open(log)]
    assert {local(x["path"]): x["outcome"] for x in lines if x["type"] == "file"} == \
        {back: "not_orphan", gone: "deleted"}
    assert lines[-1]["deleted"] == 1 and lines[-1]["plan"] == plan
    assert os.path.exists(back) and not os.path.exists(gone)
    assert sum(lake.rows().values()) > 0
    t = lake.cat.load_table("ns.t")
    assert t.scan().to_arrow().num_rows == 5  # 3 appends + the 2 rows added back


def test_rewritten_file_is_kept(tmp_path):
    lake = Lake(tmp_path)
    grown = lake.orphan("grown.parquet", 10)
    touched = lake.orphan("touched.parquet", 10)
    same = lake.orphan("same.parquet", 10)
    plan = lake.plan()
    with open(grown, "ab") as f:  # another size, still old
        f.write(b"y")
    age([grown])
    age([touched], seconds=9 * 86400)  # same size, another (still old) mtime
    r = lake.apply(plan)
    assert r.returncode == 0, r.stderr
    out = outcomes(r)
    assert out == {grown: "kept", touched: "kept", same: "deleted"}
    assert os.path.exists(grown) and os.path.exists(touched) and not os.path.exists(same)
    assert "changed since it was listed" in r.stderr


def test_file_not_in_the_plan_is_kept_even_if_orphan(tmp_path):
    lake = Lake(tmp_path)
    planned = lake.orphan("planned.parquet", 10)
    plan = lake.plan()
    late = lake.orphan("late.parquet", 10)  # an orphan, old, but after the plan
    r = lake.apply(plan)
    assert r.returncode == 0, r.stderr
    assert outcomes(r) == {planned: "deleted"}
    assert os.path.exists(late) and not os.path.exists(planned)


def test_plan_for_another_table_is_refused(tmp_path):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = lake.plan()
    lake.cat.create_table("ns.u", schema=lake.table.schema())
    r = lake.apply(plan, "ns.u")
    assert r.returncode == 5, r.stderr
    assert "table-uuid" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # the same name, dropped and created again: another table
    lake.cat.drop_table("ns.t")
    lake.cat.create_table("ns.t", schema=lake.table.schema(), location=f"file://{lake.dir}")
    r = lake.apply(plan)
    assert r.returncode == 5, r.stderr
    assert os.path.exists(o)


def test_plan_too_old_or_from_the_future_is_refused(tmp_path):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = lake.plan()
    doc = load(plan)
    doc["created_ms"] = now_ms() - 8 * DAY_MS  # older than the 7d default
    doc["older_than_ms"] = doc["created_ms"] - DAY_MS  # the orphan is ten days old
    save(plan, doc)
    r = lake.apply(plan)
    assert r.returncode == 5, r.stderr
    assert "--max-plan-age" in r.stderr
    assert os.path.exists(o)
    r = lake.apply(plan, "--max-plan-age", "30m")
    assert r.returncode == 5 and os.path.exists(o)
    doc["created_ms"] = now_ms() + DAY_MS
    save(plan, doc)
    r = lake.apply(plan)
    assert r.returncode == 5 and "future" in r.stderr and os.path.exists(o)
    # within a raised limit the (still valid) plan goes through
    doc["created_ms"] = now_ms() - 8 * DAY_MS
    save(plan, doc)
    r = lake.apply(plan, "--max-plan-age", "9d")
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(o)


def test_tampered_plan_deletes_nothing_outside_the_orphans(tmp_path):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = lake.plan()
    doc = load(plan)
    outside_dir = tmp_path / "elsewhere"
    outside_dir.mkdir()
    outside = outside_dir / "precious.parquet"
    outside.write_bytes(b"p" * 10)
    age([outside])
    sibling = lake.wh / "ns" / "t_2" / "data" / "x.parquet"  # prefix of the location, not in it
    sibling.parent.mkdir(parents=True)
    sibling.write_bytes(b"s" * 10)
    age([sibling])
    t = lake.cat.load_table("ns.t")
    live = [local(task.file.file_path) for task in t.scan().plan_files()]
    oldest = t.metadata.snapshots[0]
    live_old = [local(task.file.file_path)
                for task in t.scan(snapshot_id=oldest.snapshot_id).plan_files()]
    targets = [str(outside), str(sibling), live[0], live_old[0],
               local(t.metadata_location), local(oldest.manifest_list)]
    for p in targets:
        st = os.stat(p)
        doc["orphans"].append({"path": f"file://{p}", "size_bytes": st.st_size,
                               "mtime_ms": int(st.st_mtime * 1000), "kind": "data"})
    save(plan, doc)
    before = {p: open(p, "rb").read() for p in targets}
    rows = lake.rows()
    r = lake.apply(plan)
    assert r.returncode == 0, r.stderr
    out = outcomes(r)
    assert out[o] == "deleted"
    assert all(out[p] == "not_orphan" for p in targets), out
    assert all(open(p, "rb").read() == before[p] for p in targets)
    assert lake.rows() == rows
    # a location outside the table: refused before anything
    o2 = lake.orphan("o2.parquet", 10)
    plan2 = lake.plan("plan2.json")
    doc = load(plan2)
    doc["location"] = f"file://{outside_dir}"
    doc["orphans"] = [{"path": f"file://{outside}", "size_bytes": 10,
                       "mtime_ms": int(os.stat(outside).st_mtime * 1000)}]
    save(plan2, doc)
    r = lake.apply(plan2)
    assert r.returncode == 5, r.stderr
    assert outside.exists() and os.path.exists(o2)


def test_tampered_cutoff_cannot_reach_young_files(tmp_path):
    lake = Lake(tmp_path)
    young = lake.orphan("young.parquet", 10, aged=False)  # maybe a commit in progress
    plan = lake.plan()
    assert load(plan)["orphans"] == []
    doc = load(plan)
    st = os.stat(young)
    doc["older_than_ms"] = doc["created_ms"]  # cutoff moved up to the plan's making
    doc["orphans"] = [{"path": f"file://{young}", "size_bytes": st.st_size,
                       "mtime_ms": int(st.st_mtime * 1000)}]
    save(plan, doc)
    r = lake.apply(plan)
    assert r.returncode == 5, r.stderr
    assert "24 h" in r.stderr and os.path.exists(young)


def test_apply_dry_run_deletes_nothing(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(3)]
    plan = lake.plan()
    before = lake.files()
    r = lake.apply(plan, "--dry-run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["dry_run"] is True and doc["would_delete"] == 3 and doc["deleted"] == 0
    assert set(outcomes(r).values()) == {"planned"}
    assert lake.files() == before and all(os.path.exists(o) for o in orphans)


@pytest.mark.parametrize("content, says", [
    ("{not json", "line 1"),
    (json.dumps({"plan_version": 2, "command": "remove-orphan-files"}), "plan_version 2"),
    (json.dumps({"dry_run": True, "orphans": []}), "no plan_version"),
    ("[]", "not a JSON object"),
])
def test_malformed_plan_is_a_one_line_error(tmp_path, content, says):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = tmp_path / "bad.json"
    plan.write_text(content)
    r = lake.apply(str(plan))
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(plan) in lines[0] and says in lines[0], lines
    assert os.path.exists(o)


@pytest.mark.parametrize("field, value", [
    ("table_uuid", None), ("created_ms", "yesterday"), ("older_than_ms", None),
    ("location", None), ("orphans", {}), ("shard", "8/8"), ("shard", "2"), ("shard", 2),
    ("shard", "1/1"), ("shard", "10000/10001"),
])
def test_plan_missing_or_wrong_field_is_refused(tmp_path, field, value):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = lake.plan()
    doc = load(plan)
    if value is None:
        del doc[field]
    else:
        doc[field] = value
    save(plan, doc)
    r = lake.apply(plan)
    assert r.returncode == 1, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and plan in r.stderr
    assert os.path.exists(o)


def test_planned_file_entry_without_size_is_refused(tmp_path):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    plan = lake.plan()
    doc = load(plan)
    del doc["orphans"][0]["size_bytes"]
    save(plan, doc)
    r = lake.apply(plan)
    assert r.returncode == 1 and "orphans[0]" in r.stderr
    assert os.path.exists(o)


def test_missing_plan_file_and_usage(tmp_path):
    lake = Lake(tmp_path)
    r = lake.apply(str(tmp_path / "nope.json"))
    assert r.returncode == 1 and "nope.json" in r.stderr
    r = lake.icm("apply")
    assert r.returncode == 2
    # options are checked before the plan is read
    for bad in (["--max-plan-age", "soon"], ["--settle", "x"], ["--max-delete", "-3"],
                ["--max-concurrent-deletes", "0"], ["--no-such-option"]):
        r = lake.apply(str(tmp_path / "nope.json"), *bad)
        assert r.returncode == 2, (bad, r.stderr)
    r = lake.icm("apply", "a.json", "ns.t", "extra")
    assert r.returncode == 2


def test_expiry_plan_then_apply(tmp_path):
    lake = Lake(tmp_path)
    t = lake.cat.load_table("ns.t")
    t.overwrite(lake.table.scan().to_arrow().slice(0, 0))  # releases every data file later
    lake.cat.load_table("ns.t").append(__import__("pyarrow").table({"id": [42]},
                                                                   schema=t.schema().as_arrow()))
    t = lake.cat.load_table("ns.t")
    old_data = [local(task.file.file_path) for s in t.metadata.snapshots[:3]
                for task in t.scan(snapshot_id=s.snapshot_id).plan_files()]
    assert old_data
    age(lake.files())
    plan = str(tmp_path / "expire-plan.json")
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--cleanup", "none", "--plan-out", plan)
    assert r.returncode == 0, r.stderr
    doc = load(plan)
    assert doc["command"] == "expire-snapshots" and doc["plan_version"] == 1
    released = {local(f["path"]) for f in doc["released"]}
    assert set(old_data) <= released
    assert all(os.path.exists(p) for p in released)  # --cleanup none deleted nothing
    live = {local(task.file.file_path) for task in lake.cat.load_table("ns.t").scan().plan_files()}
    assert not (live & released)
    # within 24 h of the plan the sweep's minimum age applies: refused without --force
    r = lake.apply(plan)
    assert r.returncode == 5 and all(os.path.exists(p) for p in released)
    r = lake.apply(plan, "--force")
    assert r.returncode == 0, r.stderr
    assert set(outcomes(r).values()) == {"deleted"}
    assert not any(os.path.exists(p) for p in released)
    assert all(os.path.exists(p) for p in live)
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 1


def test_expiry_cleanup_all_plan_is_not_for_apply(tmp_path):
    lake = Lake(tmp_path)
    plan = str(tmp_path / "p.json")
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--plan-out", plan)
    assert r.returncode == 0, r.stderr
    before = lake.files()
    r = lake.apply(plan, "--force")
    assert r.returncode == 1 and "released" in r.stderr
    assert lake.files() == before


def test_name_a_file_list_cannot_carry_is_kept(tmp_path):
    lake = Lake(tmp_path)
    tab = lake.orphan("a\tb.parquet", 10)
    newline = lake.orphan("c\nd.parquet", 10)
    plain = lake.orphan("plain.parquet", 10)
    plan = lake.plan()
    assert {local(o["path"]) for o in load(plan)["orphans"]} == {tab, newline, plain}
    r = lake.apply(plan)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert outcomes(r) == {tab: "skipped", newline: "skipped", plain: "deleted"}
    assert doc["skipped"] == 2 and doc["deleted"] == 1
    assert os.path.exists(tab) and os.path.exists(newline) and not os.path.exists(plain)


def test_table_made_inside_the_location_after_the_plan_keeps_its_files(tmp_path):
    """A filesystem-layout table created inside the location after the plan, whose live file
    is a planned orphan (add-files of an old file keeps its size and mtime): the plan names
    none of its metadata, which a listing sweep would have seen; apply looks at the planned
    files' folders and keeps what lies in another table's."""
    lake = Lake(tmp_path)
    nested = lake.dir / "data" / "nest"
    nested.mkdir()
    taken = str(nested / "data" / "taken.parquet")
    os.makedirs(os.path.dirname(taken))
    with open(taken, "wb") as f:
        f.write(b"t" * 10)
    age([taken])
    free = lake.orphan("free.parquet", 10)
    plan = lake.plan()
    assert {local(o["path"]) for o in load(plan)["orphans"]} == {taken, free}
    (nested / "metadata").mkdir()
    (nested / "metadata" / "version-hint.text").write_text("1")
    r = lake.apply(plan)
    assert r.returncode == 0, r.stderr
    assert outcomes(r) == {taken: "not_orphan", free: "deleted"}
    assert "another table may use it" in r.stderr
    assert os.path.exists(taken) and not os.path.exists(free)


# ---- apply sees what a sweep sees: other tables and formats appear beside planned files --------
#
# Data-loss class "apply blind to what lies beside the plan": apply read only the plan's names,
# so a Delta or Hudi table made in a planned folder after the review (CONVERT TO DELTA keeps the
# files' size and mtime), or another catalog's Iceberg table whose metadata lies elsewhere and
# which add_files'd a planned file, went unseen, and apply deleted their live files while a sweep
# of the same table refused. Apply now lists the location as a sweep does: refused, exit 5.

def _old_parquet(lake, rel, ids):
    p = lake.dir / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": ids}, schema=SCHEMA), str(p))
    age([p])
    return str(p)


@pytest.mark.parametrize("fmt", ["delta", "hudi"])
def test_apply_refuses_a_table_of_another_format_made_beside_planned_files(tmp_path, fmt):
    lake = Lake(tmp_path)
    pf = _old_parquet(lake, "data/events/part-00000.parquet", [42, 43])
    plan = lake.plan()
    assert pf in [o["path"].removeprefix("file://") for o in load(plan)["orphans"]]
    events = lake.dir / "data" / "events"
    if fmt == "delta":
        (events / "_delta_log").mkdir()
        st = os.stat(pf)
        (events / "_delta_log" / "00000000000000000000.json").write_text(json.dumps(
            {"add": {"path": "part-00000.parquet", "partitionValues": {}, "size": st.st_size,
                     "modificationTime": int(st.st_mtime * 1000), "dataChange": True}}) + "\n")
    else:
        (events / ".hoodie").mkdir()
        (events / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=events\n")
    before = files_under(lake.dir)
    r = lake.apply(plan)
    assert r.returncode == 5, r.stdout + r.stderr
    assert files_under(lake.dir) == before, "nothing deleted"


@pytest.mark.parametrize("md", ["data/imports/_metadata", "imp_meta"])
def test_apply_refuses_another_catalogs_table_made_over_planned_files(tmp_path, md):
    lake = Lake(tmp_path)
    pf = _old_parquet(lake, "data/imports/batch-0001.parquet", [42, 43])
    plan = lake.plan()
    other = pyiceberg_sql.SqlCatalog("other", uri=f"sqlite:///{tmp_path}/other.db",
                                     warehouse=f"file://{lake.wh}")
    other.create_namespace("x")
    imp = other.create_table("x.imp", schema=SCHEMA, location=f"file://{lake.dir}/data/imports",
                             properties={"write.metadata.path": f"file://{lake.dir}/{md}"})
    imp.add_files([f"file://{pf}"])
    before = files_under(lake.dir)
    r = lake.apply(plan)
    assert r.returncode == 5, r.stdout + r.stderr
    assert files_under(lake.dir) == before, "nothing deleted"
    assert other.load_table("x.imp").scan().to_arrow().num_rows == 2

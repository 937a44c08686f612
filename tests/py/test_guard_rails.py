"""Guard rails (issue #21): --max-delete N, --max-delete-bytes B, --max-delete-percent P on
remove-orphan-files, apply and expire-snapshots. A plan over a bound is refused before
anything is deleted (exit 5, one line naming the bound and the plan's number); a plan exactly
at the bound goes through. For expiry the check runs before the commit: a refused expiry
commits nothing either."""
import json
import os

import pytest

from plan_helpers import Lake, files_under, load, local


def sweep(lake, *extra):
    return lake.icm("--json", "remove-orphan-files", "ns.t", "--settle", "0s", *extra)


def one_error_line(r):
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith("warning:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize("option, over, at", [
    ("--max-delete", "3", "4"),
    ("--max-delete-bytes", "99", "100"),
])
def test_sweep_refuses_above_and_passes_at_the_limit(tmp_path, option, over, at):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 25) for i in range(4)]  # 4 files, 100 bytes
    before = lake.files()
    r = sweep(lake, option, over)
    assert r.returncode == 5, r.stderr
    line = one_error_line(r)
    assert f"{option} {over}" in line and ("4 files" in line or "100 bytes" in line)
    assert lake.files() == before
    r = sweep(lake, option, at)
    assert r.returncode == 0, r.stderr
    assert not any(os.path.exists(o) for o in orphans)
    assert sorted(lake.files()) == sorted(f for f in before if f not in orphans)


def test_sweep_percent_of_the_files_listed(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(4)]
    listed = json.loads(sweep(lake, "--dry-run").stdout)["listed"]
    assert listed == len(lake.files())
    exact = 100.0 * 4 / listed
    below = f"{exact - 0.01:.2f}"
    r = sweep(lake, "--max-delete-percent", below)
    assert r.returncode == 5, r.stderr
    assert f"4 of {listed} files" in one_error_line(r)
    assert all(os.path.exists(o) for o in orphans)
    # at the bound: exact when 4/listed is a whole percentage, else the next hundredth
    r = sweep(lake, "--max-delete-percent",
              str(400 // listed) if 400 % listed == 0 else f"{exact + 0.01:.2f}")
    assert r.returncode == 0, r.stderr
    assert not any(os.path.exists(o) for o in orphans)


def test_sweep_dry_run_over_a_bound_warns_and_writes_the_plan(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(3)]
    plan = str(tmp_path / "plan.json")
    r = lake.icm("remove-orphan-files", "ns.t", "--dry-run", "--max-delete", "1",
                 "--plan-out", plan)
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "--max-delete 1" in r.stderr
    assert len(load(plan)["orphans"]) == 3
    assert all(os.path.exists(o) for o in orphans)


def test_size_suffixes_follow_spark(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan("big.parquet", 1024), lake.orphan("one.parquet", 1)]
    r = sweep(lake, "--max-delete-bytes", "1k")  # 1024 < 1025
    assert r.returncode == 5 and "--max-delete-bytes 1024" in r.stderr
    assert all(os.path.exists(o) for o in orphans)
    r = sweep(lake, "--max-delete-bytes", "1KiB")
    assert r.returncode == 5
    r = sweep(lake, "--max-delete-bytes", "1g")
    assert r.returncode == 0, r.stderr
    assert not any(os.path.exists(o) for o in orphans)


@pytest.mark.parametrize("option, value", [
    ("--max-delete", "-1"), ("--max-delete", "ten"), ("--max-delete-bytes", "5x"),
    ("--max-delete-bytes", "99999999999999999999"), ("--max-delete-bytes", "9000000p"),
    ("--max-delete-percent", "101"), ("--max-delete-percent", "abc"),
])
def test_bad_values_are_usage_errors(tmp_path, option, value):
    lake = Lake(tmp_path)
    o = lake.orphan("o.parquet", 10)
    r = sweep(lake, option, value)
    assert r.returncode == 2, r.stderr
    assert value in r.stderr and os.path.exists(o)


def test_apply_guard_rails(tmp_path):
    lake = Lake(tmp_path)
    orphans = [lake.orphan(f"o{i}.parquet", 10) for i in range(4)]
    plan = lake.plan()
    for option, over in (("--max-delete", "3"), ("--max-delete-bytes", "39"),
                         ("--max-delete-percent", "1")):  # of every file listed (< 400)
        r = lake.apply(plan, option, over)
        assert r.returncode == 5, r.stderr
        assert option in r.stderr
        assert all(os.path.exists(o) for o in orphans)
    r = lake.apply(plan, "--max-delete", "4", "--max-delete-bytes", "40",
                   "--max-delete-percent", "100")
    assert r.returncode == 0, r.stderr
    assert not any(os.path.exists(o) for o in orphans)


def expirable(tmp_path):
    lake = Lake(tmp_path, appends=1)
    t = lake.cat.load_table("ns.t")
    t.overwrite(t.scan().to_arrow())  # the first snapshot's data file becomes expirable
    return lake


def test_expiry_refused_before_the_commit(tmp_path):
    lake = expirable(tmp_path)
    plan = json.loads(lake.icm("--json", "expire-snapshots", "ns.t", "--older-than", "0s",
                               "--retain-last", "1", "--dry-run").stdout)
    files = [f["path"] for k in ("deleted_files", "deleted_manifests",
                                 "deleted_statistics_files") for f in plan[k]]
    n = len(files)
    assert n >= 2
    metadata_before = lake.cat.load_table("ns.t").metadata_location
    before = lake.files()
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--max-delete", str(n - 1))
    assert r.returncode == 5, r.stderr
    assert f"--max-delete {n - 1}" in r.stderr and f"{n} files" in r.stderr
    assert lake.cat.load_table("ns.t").metadata_location == metadata_before  # no commit
    assert lake.files() == before
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--max-delete", str(n))
    assert r.returncode == 0, r.stderr
    assert lake.cat.load_table("ns.t").metadata_location != metadata_before
    assert not any(os.path.exists(local(p)) for p in files)
    assert lake.cat.load_table("ns.t").scan().to_arrow().num_rows == 1


def test_expiry_bytes_bound_and_dry_run_warning(tmp_path):
    lake = expirable(tmp_path)
    doc = json.loads(lake.icm("--json", "expire-snapshots", "ns.t", "--older-than", "0s",
                              "--retain-last", "1", "--dry-run").stdout)
    total = sum(doc["bytes"].values())
    assert total > 1
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--dry-run", "--max-delete-bytes", str(total - 1))
    assert r.returncode == 0 and "warning:" in r.stderr and "would be refused" in r.stderr
    metadata_before = lake.cat.load_table("ns.t").metadata_location
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--max-delete-bytes", str(total - 1))
    assert r.returncode == 5, r.stderr
    assert lake.cat.load_table("ns.t").metadata_location == metadata_before
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1",
                 "--max-delete-bytes", str(total))
    assert r.returncode == 0, r.stderr


def test_expiry_has_no_percent_bound(tmp_path):
    lake = expirable(tmp_path)
    r = lake.icm("expire-snapshots", "ns.t", "--max-delete-percent", "10")
    assert r.returncode == 2 and "--max-delete-percent" in r.stderr


def test_byte_bound_refuses_files_of_unknown_size(tmp_path):
    """Data-loss class "byte bound over unknown sizes": an inventory whose size column is empty
    for some orphans let --max-delete-bytes count them as 0 bytes and pass any amount. Now
    refused (exit 5), nothing deleted."""
    lake = Lake(tmp_path)
    big = [lake.orphan(f"big-{i}.bin", 262144) for i in range(4)]
    inv = tmp_path / "inventory.tsv"
    with open(inv, "w") as f:
        for p in files_under(lake.dir):
            st = os.stat(p)
            size = "" if p in big else str(st.st_size)
            f.write(f"file://{p}\t{size}\t{int(st.st_mtime * 1000)}\n")
    r = lake.icm("remove-orphan-files", "ns.t", "--file-list", str(inv), "--max-delete-bytes",
                 "1k", "--settle", "0s")
    assert r.returncode == 5, r.stderr
    assert "--max-delete-bytes" in r.stderr and "no known size" in r.stderr
    assert all(os.path.exists(p) for p in big)

"""remove-orphan-files --shard I/N on local disk (issue #21, "Shards on an existing engine").

N shards, run as N processes at once, plan together exactly what one unsharded run plans, path
by path, with no file in two shards; their `listed` counts add up to the unsharded one (each
file listed by exactly one shard). The orphans are put where range boundaries fall: the ranges
are cut at referenced keys, so beside every referenced file lie an orphan sorting just before
it and one just after it, plus names with spaces, `+`, `%2F`, non-ASCII letters and a nested
folder. N runs over {1, 2, 3, 7} and one N larger than the number of referenced keys (the last
shards then get no range and plan nothing). Deleting runs of every shard leave exactly the
files one unsharded run leaves; --file-list shards read only their range of the list.
"""
import json
import os
import subprocess

import pytest

from plan_helpers import CLI, Lake, age, files_under, local

ODD_NAMES = ["x y.parquet", "a+b.parquet", "p%2Fq.parquet", "\u00fc-\u00f1-\u6f22.parquet",
             "sub dir/\u00e9t\u00e9.parquet", "zz/last.parquet", "!first.parquet",
             "~tilde.parquet"]


def beside(path):
    """Two names next to `path` in byte order: just before it and just after it."""
    head, last = path[:-1], path[-1]
    return [head + chr(ord(last) - 1) + "~", path + "~"]


def lake_with_boundary_orphans(tmp_path, appends=5):
    lake = Lake(tmp_path, appends=appends)
    # Every file now under the table is referenced (a fresh PyIceberg table has no orphans);
    # the cuts are drawn from the ones the snapshots reach (all but the metadata documents).
    referenced = [p for p in lake.files() if not p.endswith(".metadata.json")]
    orphans = []
    for p in referenced:
        for o in beside(p):
            with open(o, "wb") as f:
                f.write(b"o")
            orphans.append(o)
    for name in ODD_NAMES:
        p = lake.dir / "data" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"odd")
        orphans.append(str(p))
    age(orphans)
    return lake, sorted(orphans)


def shard_cmd(lake, i, n, *extra):
    return [CLI, "--config", str(lake.cfg), "--catalog", "reg", "--json",
            "remove-orphan-files", "ns.t", "--settle", "0s", "--shard", f"{i}/{n}", *extra]


def run_shards(lake, n, *extra):
    """All n shards as n processes at once; their JSON documents in shard order."""
    procs = [subprocess.Popen(shard_cmd(lake, i, n, *extra), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
             for i in range(n)]
    docs = []
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"shard {i}/{n}: {err}"
        doc = json.loads(out)
        # 0/1 is the whole location: a plan for the whole table (null), which apply takes
        assert doc["shard"] == (f"{i}/{n}" if n > 1 else None)
        docs.append(doc)
    return docs


def paths(doc):
    return [local(o["path"]) for o in doc["orphans"]]


def assert_union_equals(whole, docs):
    union = [p for d in docs for p in paths(d)]
    assert len(union) == len(set(union)), "a file is planned by two shards"
    assert sorted(union) == sorted(paths(whole))
    assert sum(d["listed"] for d in docs) == whole["listed"]
    assert sum(d["referenced_listed"] for d in docs) == whole["referenced_listed"]


@pytest.fixture(scope="module")
def boundary_lake(tmp_path_factory):
    return lake_with_boundary_orphans(tmp_path_factory.mktemp("shards"))


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_union_of_shards_is_one_run(boundary_lake, n):
    lake, orphans = boundary_lake
    r = lake.icm("--json", "remove-orphan-files", "ns.t", "--dry-run")
    assert r.returncode == 0, r.stderr
    whole = json.loads(r.stdout)
    assert whole["shard"] is None
    assert sorted(paths(whole)) == orphans  # the unsharded run finds every orphan put there
    docs = run_shards(lake, n, "--dry-run")
    assert_union_equals(whole, docs)
    if n > 1:  # the work is split: no shard lists everything
        assert all(d["listed"] < whole["listed"] for d in docs)
        assert all(d["referenced"] < whole["referenced"] for d in docs)


def test_more_shards_than_referenced_keys(tmp_path):
    lake, orphans = lake_with_boundary_orphans(tmp_path, appends=1)
    whole = json.loads(lake.icm("--json", "remove-orphan-files", "ns.t", "--dry-run").stdout)
    n = 64
    docs = run_shards(lake, n, "--dry-run")
    assert_union_equals(whole, docs)
    # fewer referenced keys than shards: the last shards have no range, list and plan nothing
    assert docs[-1]["listed"] == 0 and docs[-1]["orphans"] == []


def test_file_list_shards_read_only_their_range(boundary_lake, tmp_path):
    lake, orphans = boundary_lake
    inventory = tmp_path / "inventory.tsv"
    with open(inventory, "w", encoding="utf-8") as f:
        for p in files_under(lake.dir):
            st = os.stat(p)
            f.write(f"file://{p}\t{st.st_size}\t{int(st.st_mtime * 1000)}\n")
    r = lake.icm("--json", "remove-orphan-files", "ns.t", "--dry-run", "--file-list",
                 str(inventory))
    assert r.returncode == 0, r.stderr
    whole = json.loads(r.stdout)
    assert len(paths(whole)) == len(orphans)
    docs = run_shards(lake, 3, "--dry-run", "--file-list", str(inventory))
    assert_union_equals(whole, docs)


def test_deleting_shards_leave_what_one_run_leaves(tmp_path):
    lake, orphans = lake_with_boundary_orphans(tmp_path)
    before = lake.files()
    expected = sorted(set(before) - set(orphans))
    # Deleting runs take the table lease, so they run one after another here.
    for i in range(3):
        r = subprocess.run(shard_cmd(lake, i, 3), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["shard"] == f"{i}/3"
    assert lake.files() == expected
    assert lake.rows() == {s: i + 1 for i, s in enumerate(lake.rows())}  # every snapshot reads


@pytest.mark.parametrize("bad", ["3/3", "-1/2", "1", "a/2", "0/0", "1/1", "2/x", "0/10001"])
def test_bad_shard_is_a_usage_error(boundary_lake, bad):
    lake, _ = boundary_lake
    before = lake.files()
    r = lake.icm("remove-orphan-files", "ns.t", "--shard", bad)
    assert r.returncode == 2, r.stderr
    assert "--shard" in r.stderr
    assert lake.files() == before


def test_bad_message_empty_shard_range_warns_check_location(tmp_path):
    """Regression class (adv3 F4): a shard whose range is empty (more shards than keys) is
    normal; it says so once, naming the shard, and does not warn "check the location"."""
    lake, _ = lake_with_boundary_orphans(tmp_path, appends=1)
    idle = subprocess.run(shard_cmd(lake, 63, 64, "--dry-run"), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert idle.returncode == 0, idle.stderr
    assert json.loads(idle.stdout)["listed"] == 0
    assert "check the location" not in idle.stderr, idle.stderr
    assert idle.stderr.count("shard 63/64: its key range is empty") == 1, idle.stderr

"""A sharded sweep's refusal after planning names its shard (issue #21): each of the N runs of
`remove-orphan-files --shard I/N` refuses on its own, and its message starts with "shard I/N: "
so the refusing shard is found without matching N logs against N commands. The unsharded
sweep's message carries no shard. Exit codes and the files on disk are unchanged by it."""
import os

from plan_helpers import Lake
from test_shard_guards import add_live, put_old, referenced_count, run_all


def test_guard_refusal_names_each_shard(tmp_path):
    """Another table's metadata below the location: every shard refuses (the guard), each
    naming itself."""
    lake = Lake(tmp_path)
    other = lake.dir / "data" / "other"
    add_live(lake, "data/other/k.parquet")
    put_old(other / "metadata" / "00000-other.metadata.json", b"{}")
    theirs = put_old(other / "data" / "f.parquet")
    n = referenced_count(lake)
    r = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert r.returncode == 5, r.stderr
    assert "shard" not in r.stderr.split("\n")[0]
    for dry in (("--dry-run",), ()):
        results = run_all(lake, n, *dry)
        assert [rc for rc, _, _ in results] == [5] * n
        for i, (_, _, err) in enumerate(results):
            assert f": shard {i}/{n}: " in err or err.startswith(f"shard {i}/{n}: "), err
            assert "00000-other.metadata.json" in err
    assert os.path.exists(theirs)


def test_max_delete_refusal_names_the_shard(tmp_path):
    """--max-delete 1 with two orphans in every shard's range: each shard refuses the limit,
    naming itself, and deletes nothing."""
    lake = Lake(tmp_path)
    # the ranges are cut at referenced keys: two orphans before every one of them (data/0*)
    # and two after every one (metadata/zz*) put two in the first range and two in the last
    orphans = [lake.orphan(name, 10) for name in ("0a.bin", "0b.bin")]
    orphans += [put_old(lake.dir / "metadata" / name) for name in ("zz-a.bin", "zz-b.bin")]
    n = 2
    results = run_all(lake, n, "--max-delete", "1")
    assert [rc for rc, _, _ in results] == [5] * n, [e for _, _, e in results]
    for i, (_, _, err) in enumerate(results):
        assert f"shard {i}/{n}: " in err, err
    assert all(os.path.exists(p) for p in orphans)
    r = lake.icm("remove-orphan-files", "ns.t", "--max-delete", "1", "--settle", "0s")
    assert r.returncode == 5 and "shard" not in r.stderr, r.stderr
    assert all(os.path.exists(p) for p in orphans)

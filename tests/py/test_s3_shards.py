"""remove-orphan-files --shard I/N on S3 (moto): exact keys in, exact keys out.

N shards run as N processes at once plan together exactly what one unsharded run plans, key by
key, no key in two shards, and their `listed` counts add up to the unsharded one, for N in
{1, 2, 3, 7}. The ranges are cut at referenced keys, so beside every referenced key lie an
orphan sorting just before it and one just after; odd keys too: a space, `+`, `%2F`, non-ASCII
letters, `//` (listed in the shard whose range holds the key as listed, compared with the keep
set under its collapsed form) and `!`/`~` at the ends of the byte order. Deleting runs of every
shard (one after another: each takes the table lease) leave exactly the keys one run leaves.
"""
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)
from test_s3_orphans import cutoff_between, new_table


def beside(key):
    head, last = key[:-1], key[-1]
    return [head + chr(ord(last) - 1) + "~", key + "~"]


def odd_keys(root):
    return [f"{root}/data/x y.parquet", f"{root}/data/x+y.parquet", f"{root}/data/x%2Fy.parquet",
            f"{root}/data//double.parquet", f"{root}/data/\u00fc-\u00f1-\u6f22.parquet",
            f"{root}/data/!first.parquet", f"{root}/data/~last.parquet",
            f"{root}/data/p=1/\u00e9t\u00e9 old.parquet", f"{root}/stray-at-root.txt"]


def sweep_args(cutoff, *extra):
    return ["--json", "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
            "--settle", "0s", *extra]


def run(wh, tmp_path, *args):
    res = e.cat_cli(wh, *args, cwd=tmp_path)
    return json.loads(res.stdout)


def run_shards(wh, tmp_path, n, cutoff, *extra):
    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(run, wh, tmp_path, *sweep_args(cutoff, "--shard", f"{i}/{n}",
                                                              *extra))
                   for i in range(n)]
        docs = [f.result() for f in futures]
    for i, d in enumerate(docs):
        assert d["shard"] == (f"{i}/{n}" if n > 1 else None)
    return docs


def keys_of(doc, bucket):
    return [e.key_of(o["path"], bucket) for o in doc["orphans"]]


@pytest.fixture
def sharded_table(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=4)
    root = e.key_of(t.location(), moto.bucket)
    referenced = [k for k in e.keys(moto, root + "/") if not k.endswith(".metadata.json")]
    orphans = sorted({o for k in referenced for o in beside(k)} | set(odd_keys(root)))
    cutoff = cutoff_between(lambda: [e.put(moto, k) for k in orphans], lambda: None)
    return wh, orphans, cutoff


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_s3_union_of_shards_is_one_run(tmp_path, moto, sharded_table, n):  # noqa: F811
    wh, orphans, cutoff = sharded_table
    before = e.keys(moto, wh.prefix)
    whole = run(wh, tmp_path, *sweep_args(cutoff, "--dry-run"))
    assert sorted(keys_of(whole, moto.bucket)) == orphans
    docs = run_shards(wh, tmp_path, n, cutoff, "--dry-run")
    union = [k for d in docs for k in keys_of(d, moto.bucket)]
    assert len(union) == len(set(union)), "a key is planned by two shards"
    assert sorted(union) == orphans
    assert sum(d["listed"] for d in docs) == whole["listed"]
    assert sum(d["referenced_listed"] for d in docs) == whole["referenced_listed"]
    if n > 1:
        assert all(d["listed"] < whole["listed"] for d in docs)
    assert e.keys(moto, wh.prefix) == before


def test_s3_deleting_shards_leave_what_one_run_leaves(tmp_path, moto, sharded_table):  # noqa: F811
    wh, orphans, cutoff = sharded_table
    before = e.keys(moto, wh.prefix)
    for i in range(3):
        doc = run(wh, tmp_path, *sweep_args(cutoff, "--shard", f"{i}/3"))
        assert all(o["state"] == "deleted" for o in doc["orphans"])
    assert e.keys(moto, wh.prefix) == before - set(orphans)
    rows = h.judge_pyiceberg(wh, "ns.t")
    current = wh.catalog().load_table("ns.t").metadata.current_snapshot_id
    assert sorted(rows[current]) == [0, 1, 2, 3]


def test_s3_wrong_result_double_slash_reference_in_another_range(tmp_path, moto, s3_prefix):  # noqa: F811
    """Regression class (adv3 F3): a referenced key spelled `data//zz.parquet` is listed by the
    shard whose range holds that spelling (shard 0), while its keep-set key `data/zz.parquet`
    lies in another shard's range. No shard refused falsely ("none of the files ... was found")
    and the union of the shards' plans is the unsharded plan; once the object is gone, the
    shard that lists its spelling names it as missing, as the unsharded run does."""
    from test_s3_orphans import parquet_bytes
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=4)
    root = e.key_of(t.location(), moto.bucket)
    dbl = f"{root}/data//zz.parquet"
    e.put(moto, dbl, parquet_bytes([9]))
    e.cat_cli(wh, "add-files", "ns.t", f"s3://{moto.bucket}/{dbl}", cwd=tmp_path)
    orphans = [f"{root}/data//aa-orphan.parquet", f"{root}/data/zz-orphan.parquet"]
    cutoff = cutoff_between(lambda: [e.put(moto, k) for k in orphans], lambda: None)
    n = len([k for k in e.keys(moto, root + "/") if not k.endswith(".metadata.json")])
    whole = run(wh, tmp_path, *sweep_args(cutoff, "--dry-run"))
    assert sorted(keys_of(whole, moto.bucket)) == sorted(orphans)
    union = []
    for i in range(n):
        r = e.cat_cli(wh, *sweep_args(cutoff, "--dry-run", "--shard", f"{i}/{n}"),
                      cwd=tmp_path, check=False)
        assert r.returncode == 0, (i, r.stderr)
        union += keys_of(json.loads(r.stdout), moto.bucket)
    assert sorted(union) == sorted(orphans)
    h.client(moto).delete_object(Bucket=moto.bucket, Key=dbl)
    gone = e.cat_cli(wh, *sweep_args(cutoff, "--dry-run"), cwd=tmp_path, check=False)
    assert gone.returncode == 5 and "zz.parquet" in gone.stderr, gone.stderr
    shards = [e.cat_cli(wh, *sweep_args(cutoff, "--dry-run", "--shard", f"{i}/{n}"),
                        cwd=tmp_path, check=False) for i in range(n)]
    named = [i for i, r in enumerate(shards) if r.returncode == 5 and "zz.parquet" in r.stderr
             and "none of the" not in r.stderr]
    assert named, [(r.returncode, r.stderr[-200:]) for r in shards]


def test_s3_data_loss_other_table_metadata_json_in_another_range(tmp_path, moto, s3_prefix):  # noqa: F811
    """Regression class (adv3 F1, on S3): another table's metadata JSON directly in its folder
    (data/other/v1.metadata.json) lies in one shard's range and its data file
    (data/other/data/f.parquet) in another's: the unsharded sweep refuses, and so does every
    shard (each lists the names of the whole prefix); no shard plans the other table's file."""
    from test_s3_orphans import add_live
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=2)
    root = e.key_of(t.location(), moto.bucket)
    add_live(wh, moto, "ns.t", f"{root}/data/other/k.parquet", [7])
    md_key = e.key_of(wh.catalog().load_table("ns.t").metadata_location, moto.bucket)
    md = json.loads(h.client(moto).get_object(Bucket=moto.bucket, Key=md_key)["Body"].read())
    md["table-uuid"] = "00000000-0000-4000-8000-0000000000b1"
    md["location"] = f"s3://{moto.bucket}/{root}/data/other"
    theirs = f"{root}/data/other/data/f.parquet"
    cutoff = cutoff_between(lambda: (e.put(moto, f"{root}/data/other/v1.metadata.json",
                                           json.dumps(md).encode()), e.put(moto, theirs)),
                            lambda: None)
    n = len([k for k in e.keys(moto, root + "/") if not k.endswith(".metadata.json")])
    whole = e.cat_cli(wh, *sweep_args(cutoff, "--dry-run"), cwd=tmp_path, check=False)
    assert whole.returncode == 5 and "another table's metadata" in whole.stderr, whole.stderr
    for i in range(n):
        r = e.cat_cli(wh, *sweep_args(cutoff, "--dry-run", "--shard", f"{i}/{n}"),
                      cwd=tmp_path, check=False)
        assert r.returncode == 5 and "another table's metadata" in r.stderr, (i, r.stdout, r.stderr)
    assert theirs in e.keys(moto, root + "/")

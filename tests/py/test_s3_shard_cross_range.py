"""A shard refuses whenever the unsharded run refuses, over a listing or an inventory report on
S3 (moto), also when the evidence lies in another shard's range than the file it protects
(regression class: adversary round adv2, findings 1 and 6; local cases and the rule in
tests/py/test_shard_cross_range.py, docs/SHARDS.md "Every range's checks"):
 - a conflict: the table references s3://OTHER/<root>/zz/f.parquet (add_files from another
   bucket) and the table's bucket holds the same key, so a listed name matches a reference only
   up to the bucket; with --prefix-mismatch error (the default) the unsharded run refuses.
   Sharded, the range holding zz/ refuses on its own; the range holding an old orphan
   `<root>/a-orphan.parquet` must refuse too;
 - presence: one referenced data file's bytes lie at `<root>/zz/<name>` (a manifest naming a
   live file wrongly): the unsharded run refuses; every shard must, and the bytes stay.
After dry and deleting runs of every shard (N = 2), every key is still there.
"""
import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)
from test_s3_inventory import Report, csv_row, listing
from test_s3_orphans import cutoff_between, new_table, parquet_bytes

N = 2


def args(cutoff, *extra):
    return ["--json", "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
            "--settle", "0s", *extra]


def every_run_refuses(wh, tmp_path, server, prefix, root, cutoff, source, needle):
    extra = ()
    if source == "inventory":
        rows = [csv_row(server.bucket, o) for o in listing(server, prefix)]
        extra = ("--inventory", Report(server.bucket, "d", rows).write_local(tmp_path / "dest"))
    before = sorted(e.keys(server, root + "/"))
    whole = e.cat_cli(wh, *args(cutoff, "--dry-run", *extra), cwd=tmp_path, check=False)
    assert whole.returncode == 5 and needle in whole.stderr, whole.stderr
    for mode in (("--dry-run",), ()):
        for i in range(N):
            r = e.cat_cli(wh, *args(cutoff, "--shard", f"{i}/{N}", *mode, *extra), cwd=tmp_path,
                          check=False)
            assert r.returncode == 5 and f"shard {i}/{N}: " in r.stderr and needle in r.stderr, \
                (i, mode, r.stderr)
    assert sorted(e.keys(server, root + "/")) == before


@pytest.mark.parametrize("source", ["listing", "inventory"])
def test_data_loss_shard_conflicting_names_across_ranges(tmp_path, moto, s3_prefix, source):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=4)
    root = e.key_of(t.location(), moto.bucket)
    other = e.new_bucket(moto)
    try:
        conflict_key = f"{root}/zz/f.parquet"
        body = parquet_bytes([7])
        e.put(moto, conflict_key, body, bucket=other)
        wh.catalog().load_table("ns.t").add_files([f"s3://{other}/{conflict_key}"])
        early = f"{root}/a-orphan.parquet"
        cutoff = cutoff_between(lambda: [e.put(moto, conflict_key, body), e.put(moto, early)],
                                lambda: None)
        every_run_refuses(wh, tmp_path, moto, s3_prefix, root, cutoff, source,
                          "match referenced files only up to scheme or authority")
        assert early in e.keys(moto, root + "/")
    finally:
        e.remove_bucket(moto, other)


@pytest.mark.parametrize("source", ["listing", "inventory"])
def test_data_loss_shard_presence_across_ranges_s3(tmp_path, moto, s3_prefix, source):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=4)
    root = e.key_of(t.location(), moto.bucket)
    data = sorted(k for k in e.keys(moto, root + "/") if k.startswith(root + "/data/"))
    named = data[0]
    real = f"{root}/zz/{named.rsplit('/', 1)[1]}"
    c = h.client(moto, attempts=4)

    def move():
        body = c.get_object(Bucket=moto.bucket, Key=named)["Body"].read()
        e.put(moto, real, body)
        c.delete_object(Bucket=moto.bucket, Key=named)
    cutoff = cutoff_between(move, lambda: None)
    every_run_refuses(wh, tmp_path, moto, s3_prefix, root, cutoff, source,
                      "a damaged manifest may name a live file wrongly")
    assert real in e.keys(moto, root + "/")

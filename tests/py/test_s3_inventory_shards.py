"""remove-orphan-files --shard I/N --inventory MANIFEST on S3 (moto): exact keys in, exact keys out.

A shard classifies only the report's rows in its key range and reads the report again for the
names of the rest (docs/SHARDS.md, "What every shard lists"), keeping only what the guards need.
Asserted:
 - the union of N shards' dry-run plans over a report is the unsharded inventory run's plan,
   key by key, no key in two shards, `listed` adding up (N = 1, 3, 8; the manifest in a
   destination bucket and as a local copy of one). The table is test_s3_shards' (an orphan just
   before and just after every referenced key, odd keys, `//`); the report lists some orphans
   twice (one candidate each) and one (`data//double.parquet`, whose keep-set key may lie in
   another range) twice with different sizes (kept, with a warning, sharded or not). Deleting
   runs of every shard, one after another, leave exactly the keys the plan leaves;
 - each guard class that refuses the unsharded inventory sweep by a row of the report refuses
   EVERY shard (exit 5, nothing deleted), also the shards whose range does not hold the
   offending row: another table's `*.metadata.json` in its root, another table's custom
   write.metadata.path, an unreadable old `*.metadata.json`, another format's log (a Delta
   `_delta_log/`, a Hudi `.hoodie/`). N = the number of referenced keys and a live file
   placed between the offending row and the other table's (format's) old file put them in
   different ranges;
 - a table made below the location after the report (its metadata in no row): each shard looks
   at its candidates' folders live, as the unsharded run does, so the shard holding the
   adopted file refuses and no shard plans or deletes it.
"""
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)
from test_s3_inventory import Report, csv_row, listing
from test_s3_orphans import add_live, cutoff_between, new_table
from test_s3_shards import keys_of, sharded_table, sweep_args  # noqa: F401 (fixture)


def cli(wh, tmp_path, *args):
    return e.cat_cli(wh, *args, cwd=tmp_path, check=False)


def dry_doc(wh, tmp_path, *args):
    res = cli(wh, tmp_path, *args)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def report_rows(server, prefix, twice=(), conflict=None):
    objs = listing(server, prefix)
    rows = [csv_row(server.bucket, o) for o in objs]
    rows += [csv_row(server.bucket, o) for o in objs if o["Key"] in twice]
    rows += [csv_row(server.bucket, o, size=o["Size"] + 1) for o in objs if o["Key"] == conflict]
    return rows


# ---- the union of the shards is one run ----

@pytest.mark.parametrize("where", ["s3", "local"])
@pytest.mark.parametrize("n", [1, 3, 8])
def test_s3_inventory_union_of_shards_is_one_run(tmp_path, moto, sharded_table, n, where):  # noqa: F811
    wh, orphans, cutoff = sharded_table
    root = orphans[0].split("/data/")[0]
    conflict = f"{root}/data//double.parquet"
    twice = {f"{root}/data/x+y.parquet", f"{root}/data/~last.parquet",
             f"{root}/data/!first.parquet", f"{root}/stray-at-root.txt"} | set(orphans[::5])
    twice.discard(conflict)
    rows = report_rows(moto, wh.prefix, twice, conflict)
    dest = e.new_bucket(moto) if where == "s3" else None
    try:
        rep = Report(moto.bucket, dest or "dest-copy", rows, parts=3)
        manifest = rep.upload(moto, dest) if dest else rep.write_local(tmp_path / "dest-copy")
        inv = ("--inventory", manifest)
        before = e.keys(moto, wh.prefix)
        whole = dry_doc(wh, tmp_path, *sweep_args(cutoff, "--dry-run", *inv))
        want = sorted(set(orphans) - {conflict})
        assert sorted(keys_of(whole, moto.bucket)) == want
        assert any(conflict in w and "different sizes" in w for w in whole["warnings"])

        def shard(i):
            return dry_doc(wh, tmp_path, *sweep_args(cutoff, "--dry-run", "--shard", f"{i}/{n}",
                                                     *inv))
        with ThreadPoolExecutor(max_workers=min(n, 4)) as pool:
            docs = list(pool.map(shard, range(n)))
        for i, d in enumerate(docs):
            assert d["shard"] == (f"{i}/{n}" if n > 1 else None)
        union = [k for d in docs for k in keys_of(d, moto.bucket)]
        assert len(union) == len(set(union)), "a key is planned by two shards"
        assert sorted(union) == want
        assert sum(d["listed"] for d in docs) == whole["listed"]
        assert any(conflict in w and "different sizes" in w for d in docs for w in d["warnings"])
        assert e.keys(moto, wh.prefix) == before

        # deleting shards, one after another (each takes the table lease)
        for i in range(n):
            res = cli(wh, tmp_path, *sweep_args(cutoff, "--shard", f"{i}/{n}", *inv))
            assert res.returncode == 0, res.stderr
        assert e.keys(moto, wh.prefix) == before - set(want)
    finally:
        if dest:
            e.remove_bucket(moto, dest)


# ---- every guard refuses every shard ----

def other_table_md(wh, server, location_key, **props):
    md_key = e.key_of(wh.catalog().load_table("ns.t").metadata_location, server.bucket)
    body = h.client(server, attempts=4).get_object(Bucket=server.bucket, Key=md_key)["Body"]
    md = json.loads(body.read())
    md["table-uuid"] = "00000000-0000-4000-8000-0000000000a1"
    md["location"] = f"s3://{server.bucket}/{location_key}"
    md.setdefault("properties", {}).update(
        {k: v.format(bucket=server.bucket) for k, v in props.items()})
    return json.dumps(md).encode()


def every_shard_refuses(tmp_path, server, prefix, live, old, needle):
    """A table with one old orphan-like file of someone else's (`old`: key -> body, the last
    one theirs) around a live file at <root>/`live`: the unsharded inventory sweep refuses
    naming `needle`, and so does every shard, dry or not; every key stays."""
    wh = h.S3Warehouse(tmp_path, server, prefix)
    t = new_table(wh, "ns.t", appends=1)
    root = e.key_of(t.location(), server.bucket)
    add_live(wh, server, "ns.t", f"{root}/{live}", [42])
    bodies = {f"{root}/{k}": (v(wh, root) if callable(v) else v) for k, v in old.items()}
    cutoff = cutoff_between(lambda: [e.put(server, k, b) for k, b in bodies.items()],
                            lambda: None)
    manifest = Report(server.bucket, "d", report_rows(server, prefix)).write_local(
        tmp_path / "dest-copy")
    inv = ("--inventory", manifest)
    theirs = list(bodies)[-1]
    referenced = [k for k in e.keys(server, root + "/") if not k.endswith(".metadata.json")
                  and k not in bodies]
    n = len(referenced)
    assert n >= 4
    before = e.keys(server, prefix)
    whole = cli(wh, tmp_path, *sweep_args(cutoff, "--dry-run", *inv))
    assert whole.returncode == 5 and needle in whole.stderr, whole.stderr
    for dry in (("--dry-run",), ()):
        results = [cli(wh, tmp_path, *sweep_args(cutoff, *dry, "--shard", f"{i}/{n}", *inv))
                   for i in range(n)]
        assert [r.returncode for r in results] == [5] * n, \
            [(r.returncode, r.stderr[-300:]) for r in results]
        assert all(needle in r.stderr for r in results)
        assert e.keys(server, prefix) == before
    assert theirs in e.keys(server, prefix)


def test_data_loss_sharded_inventory_other_table_metadata_json(tmp_path, moto, s3_prefix):  # noqa: F811
    """data/other/data/f.parquet < data/other/k.parquet (live: a cut) < data/other/v1.metadata.json
    (another table's, in its root)."""
    every_shard_refuses(
        tmp_path, moto, s3_prefix, "data/other/k.parquet",
        {"data/other/v1.metadata.json":
            lambda wh, root: other_table_md(wh, moto, f"{root}/data/other"),
         "data/other/data/f.parquet": b"theirs"},
        "another table's metadata")


def test_data_loss_sharded_inventory_other_table_custom_metadata_path(tmp_path, moto, s3_prefix):  # noqa: F811
    """write.metadata.path inside the other table's tree: data/o/data/f.parquet <
    data/o/k.parquet (live) < data/o/meta/00001-x.metadata.json."""
    every_shard_refuses(
        tmp_path, moto, s3_prefix, "data/o/k.parquet",
        {"data/o/meta/00001-x.metadata.json":
            lambda wh, root: other_table_md(
                wh, moto, f"{root}/data/o",
                **{"write.metadata.path": "s3://{bucket}/" + f"{root}/data/o/meta"}),
         "data/o/data/f.parquet": b"theirs"},
        "another table's metadata")


def test_data_loss_sharded_inventory_unreadable_old_metadata_json(tmp_path, moto, s3_prefix):  # noqa: F811
    """data/w/a.parquet < data/w/k.parquet (live) < data/w/zz.metadata.json (not JSON, old):
    whose table it is cannot be told."""
    every_shard_refuses(
        tmp_path, moto, s3_prefix, "data/w/k.parquet",
        {"data/w/zz.metadata.json": b"{not json", "data/w/a.parquet": b"theirs"},
        "cannot read this metadata file")


@pytest.mark.parametrize("log", ["_delta_log/00000000000000000000.json",
                                 ".hoodie/hoodie.properties"])
def test_data_loss_sharded_inventory_other_format_log(tmp_path, moto, s3_prefix, log):  # noqa: F811
    """data/f/_delta_log/0.json (or data/f/.hoodie/hoodie.properties) < data/f/a.parquet
    (live) < data/f/b.parquet."""
    every_shard_refuses(tmp_path, moto, s3_prefix, "data/f/a.parquet",
                        {f"data/f/{log}": b"{}\n", "data/f/b.parquet": b"theirs"},
                        log.split("/")[0])


def test_data_loss_sharded_inventory_nested_table_made_after_the_report(tmp_path, moto, s3_prefix):  # noqa: F811
    """A table made below the location after the report, taking an old orphan of it as its
    live file: the report does not show its metadata, so each shard looks at its candidates'
    folders live, as the unsharded run does; the shard whose range holds the file refuses (the
    others have no candidate there), and no shard plans or deletes it."""
    from test_s3_inventory import adopt_in_nested_table, nested_scenario
    wh, root, cutoff, old, stray = nested_scenario(tmp_path, moto, s3_prefix)
    manifest = Report(moto.bucket, "d", report_rows(moto, s3_prefix)).write_local(
        tmp_path / "copy")
    cat2 = adopt_in_nested_table(tmp_path, moto, s3_prefix, root, old)
    inv = ("--inventory", manifest)
    whole = cli(wh, tmp_path, *sweep_args(cutoff, "--dry-run", *inv))
    assert whole.returncode == 5 and "another table's metadata" in whole.stderr, whole.stderr
    n = 3
    for dry in (("--dry-run",), ()):
        results = [cli(wh, tmp_path, *sweep_args(cutoff, *dry, "--shard", f"{i}/{n}", *inv))
                   for i in range(n)]
        refusing = [r for r in results if r.returncode == 5]
        assert len(refusing) >= 1 and all("another table's metadata" in r.stderr
                                          for r in refusing), [r.stderr for r in results]
        assert all(r.returncode in (0, 5) for r in results), [r.stderr for r in results]
        planned = {k for r in results if r.returncode == 0
                   for k in keys_of(json.loads(r.stdout), moto.bucket)}
        assert old not in planned
        assert old in e.keys(moto, s3_prefix)
    assert cat2.load_table("o.nested").scan().to_arrow().num_rows == 1

"""Every guard of the sweep holds in each shard (--shard I/N), also when what it looks at lies in
another shard's range (regression class: a shard deletes what only another shard's listing
shows to be someone else's).

The ranges are cut at the referenced keys, and with N = the number of referenced keys every
referenced key ends a range; a live file added where we choose puts a cut between another
table's (or format's) metadata and an orphan beside it:
 - another table nested in the location: its `metadata/*.metadata.json` in one shard's range,
   an old file of its `data/` in the range before; the unsharded sweep refuses, and so does
   every shard (each lists the names of the whole location: docs/SHARDS.md);
 - a Delta Lake folder: its `_delta_log/` in one range, an old Parquet file beside it in the
   next; the unsharded sweep refuses; so does every shard that would plan that file.
After deleting runs of every shard the other table's and the Delta folder's files all exist.
"""
import json
import os
import subprocess

from plan_helpers import Lake, age, local
from test_shards import shard_cmd


def referenced_count(lake):
    return len([p for p in lake.files() if not p.endswith(".metadata.json")])


def add_live(lake, rel):
    """A live Parquet file at <table>/rel (add_files), aged."""
    path = lake.parquet_orphan("tmp-live.parquet", [42])
    dest = lake.dir / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, dest)
    lake.cat.load_table("ns.t").add_files([f"file://{dest}"])
    age(lake.files())


def put_old(path, body=b"x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    age([str(path)])
    return str(path)


def run_all(lake, n, *extra):
    out = []
    for i in range(n):
        r = subprocess.run(shard_cmd(lake, i, n, *extra), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        out.append((r.returncode, json.loads(r.stdout) if r.returncode == 0 else None, r.stderr))
    return out


def planned(results):
    return {local(o["path"]) for rc, doc, _ in results if rc == 0 for o in doc["orphans"]}


def test_nested_table_split_across_shards(tmp_path):
    lake = Lake(tmp_path)
    nested = lake.dir / "data" / "nested"
    # data/nested/data/f.parquet < data/nested/k.parquet (live: a cut) < data/nested/metadata/
    add_live(lake, "data/nested/k.parquet")
    md = json.loads(open(local(lake.cat.load_table("ns.t").metadata_location)).read())
    md["table-uuid"] = "00000000-0000-4000-8000-000000000001"
    md["location"] = f"file://{nested}"
    other_md = put_old(nested / "metadata" / "00000-other.metadata.json",
                       json.dumps(md).encode())
    their_file = put_old(nested / "data" / "f.parquet")
    n = referenced_count(lake)
    r = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert r.returncode == 5 and "00000-other.metadata.json" in r.stderr, r.stderr
    results = run_all(lake, n, "--dry-run")
    assert their_file not in planned(results)
    # every shard lists the names of the whole location: each refuses, as the unsharded run
    assert [rc for rc, _, _ in results] == [5] * n
    assert all("00000-other.metadata.json" in err for _, _, err in results)
    before = lake.files()
    real = run_all(lake, n)
    assert [rc for rc, _, _ in real] == [5] * n
    assert os.path.exists(their_file) and os.path.exists(other_md)
    assert set(before) == set(lake.files())


def test_delta_folder_split_across_shards(tmp_path):
    lake = Lake(tmp_path)
    delta = lake.dir / "data" / "delta"
    # data/delta/_delta_log/0.json < data/delta/a.parquet (live: a cut) < data/delta/b.parquet
    add_live(lake, "data/delta/a.parquet")
    log = put_old(delta / "_delta_log" / "00000000000000000000.json", b"{}")
    theirs = put_old(delta / "b.parquet")
    n = referenced_count(lake)
    r = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert r.returncode == 5 and "_delta_log" in r.stderr
    results = run_all(lake, n, "--dry-run")
    assert theirs not in planned(results)
    refusing = [err for rc, _, err in results if rc == 5]
    assert len(refusing) >= 2, "the shard with the log and the shard with b.parquet refuse"
    assert all("_delta_log" in err for err in refusing)
    real = run_all(lake, n)
    assert theirs not in planned(real)
    assert os.path.exists(theirs) and os.path.exists(log)


# Regression class: a shard deletes a file the unsharded sweep refuses over, because the
# evidence (another table's `*.metadata.json` wherever it lies, or an unreadable old one) is
# in another shard's range (adversary round adv3, F1/F2). Every shard now lists the names of
# the whole location, so each refuses as the unsharded run does.

def _other_table_md(lake, location, **props):
    md = json.loads(open(local(lake.cat.load_table("ns.t").metadata_location)).read())
    md["table-uuid"] = "00000000-0000-4000-8000-0000000000a1"
    md["location"] = f"file://{location}"
    md.setdefault("properties", {}).update(props)
    return json.dumps(md).encode()


def _every_shard_refuses_like_unsharded(lake, theirs, needle):
    n = referenced_count(lake)
    r = lake.icm("remove-orphan-files", "ns.t", "--dry-run")
    assert r.returncode == 5 and needle in r.stderr, r.stderr
    results = run_all(lake, n, "--dry-run")
    assert theirs not in planned(results)
    assert [rc for rc, _, _ in results] == [5] * n, [(rc, e[-200:]) for rc, _, e in results]
    assert all(needle in err for _, _, err in results)
    real = run_all(lake, n)
    assert [rc for rc, _, _ in real] == [5] * n
    assert os.path.exists(theirs)


def test_data_loss_other_table_metadata_json_in_its_root_in_another_range(tmp_path):
    """Another table's metadata JSON directly in its folder (not in a `metadata/` one):
    data/other/data/f.parquet < data/other/k.parquet (live: a cut) < data/other/v1.metadata.json."""
    lake = Lake(tmp_path)
    other = lake.dir / "data" / "other"
    add_live(lake, "data/other/k.parquet")
    md = put_old(other / "v1.metadata.json", _other_table_md(lake, other))
    theirs = put_old(other / "data" / "f.parquet")
    _every_shard_refuses_like_unsharded(lake, theirs, "another table's metadata")
    assert os.path.exists(md)


def test_data_loss_other_table_custom_metadata_path_in_another_range(tmp_path):
    """write.metadata.path inside the other table's own tree (data/o/meta)."""
    lake = Lake(tmp_path)
    other = lake.dir / "data" / "o"
    add_live(lake, "data/o/k.parquet")
    put_old(other / "meta" / "00001-x.metadata.json",
            _other_table_md(lake, other, **{"write.metadata.path": f"file://{other}/meta"}))
    theirs = put_old(other / "data" / "f.parquet")
    _every_shard_refuses_like_unsharded(lake, theirs, "another table's metadata")


def test_data_loss_unreadable_old_metadata_json_in_another_range(tmp_path):
    """An unreadable `*.metadata.json` older than the cutoff: whose table it is cannot be told."""
    lake = Lake(tmp_path)
    add_live(lake, "data/w/k.parquet")
    put_old(lake.dir / "data" / "w" / "zz.metadata.json", b"{not json")
    theirs = put_old(lake.dir / "data" / "w" / "a.parquet")
    _every_shard_refuses_like_unsharded(lake, theirs, "cannot read this metadata file")

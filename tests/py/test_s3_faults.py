"""Faults between icemaint and S3, through the fault proxy (tests/tools/faultproxy.py) in front
of moto. PyIceberg and the assertions talk to moto directly; only icemaint goes through the
proxy.

 - 503 SlowDown every 3rd request during an expiry, a sweep and a commit: each command succeeds
   (it retries) with exactly the objects a fault-free run leaves;
 - a connection reset after the upstream applied a commit's metadata write: settled by reading
   it back (committed), or the commit stops unmoved; nothing deleted either way;
 - a fault at every request: for an expiry, a sweep and an add-files commit, one clean run counts
   the requests N; then for each i in 1..N the table is restored and the command runs with a 500
   (and then a reset after the upstream applied it) at request i only. After each run the table
   loads in PyIceberg, every retained snapshot reads as before, no file a retained snapshot needs
   is lost, and a run that says it succeeded left exactly the clean run's keys.
"""
import io
import json
import os
import shutil
import time

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import fault_proxy, moto, s3_prefix  # noqa: F401 (fixtures)


class Scene:
    """A small table on S3 (write_history) plus a few old orphans, that can be put back
    exactly as it was (every object's bytes and the catalog database) between runs."""

    def __init__(self, tmp_path, server, prefix, proxy_endpoint, orphans=True):
        self.server, self.prefix, self.tmp = server, prefix, tmp_path
        self.wh = h.S3Warehouse(tmp_path, server, prefix)            # PyIceberg: direct
        self.via = h.S3Warehouse(tmp_path, server, prefix, endpoint=proxy_endpoint,
                                 name=self.wh.name)                  # icemaint: the proxy
        self.via.sqlite_path = self.wh.sqlite_path
        self.rows = h.write_history(self.wh, appends=2)
        t = self.wh.catalog().load_table("ns.t")
        root = e.key_of(t.location(), server.bucket)
        self.orphans = [f"{root}/data/orphan-{i}.parquet" for i in range(2)] if orphans else []
        for k in self.orphans:
            e.put(server, k)
        if orphans:
            time.sleep(1.5)
        self.cutoff = int(time.time() * 1000)
        self.saved = {k: h.client(server, attempts=4).get_object(
            Bucket=server.bucket, Key=k)["Body"].read() for k in e.keys(server, prefix)}
        self.db_copy = str(self.wh.sqlite_path) + ".saved"
        shutil.copyfile(self.wh.sqlite_path, self.db_copy)

    def restore(self):
        c = h.client(self.server, attempts=4)
        for k in e.keys(self.server, self.prefix) - set(self.saved):
            c.delete_object(Bucket=self.server.bucket, Key=k)
        for k, body in self.saved.items():
            c.put_object(Bucket=self.server.bucket, Key=k, Body=body)
        shutil.copyfile(self.db_copy, self.wh.sqlite_path)

    def keys(self):
        return e.keys(self.server, self.prefix)

    def run(self, *args):
        return e.cat_cli(self.via, *args, cwd=self.tmp, check=False)

    def sound(self):
        """The table loads, every snapshot it retains reads as written, no needed file is lost."""
        t = self.wh.catalog().load_table("ns.t")
        have = self.keys()
        lost = {p for p in e.reachable(t) if e.key_of(p, self.server.bucket) not in have}
        assert not lost, f"files retained snapshots need are gone: {sorted(lost)}"
        assert e.key_of(t.metadata_location, self.server.bucket) in have
        judged = h.judge_pyiceberg(self.wh, "ns.t")
        for sid, ids in judged.items():
            if sid in self.rows:
                assert ids == self.rows[sid], f"snapshot {sid} reads {ids}"
        return t


def commands(scene):
    """name → (argv, parsed-JSON → None): the three commands of the fault loop."""
    t = scene.wh.catalog().load_table("ns.t")
    snaps = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
    incoming = f"{scene.prefix}incoming/new.parquet"
    buf = io.BytesIO()
    import pyarrow.parquet as pq
    pq.write_table(h._rows([900]), buf)
    e.put(scene.server, incoming, buf.getvalue())
    scene.saved[incoming] = buf.getvalue()
    return {
        "expire": ("expire-snapshots", "ns.t", "--older-than", str(snaps[-2].timestamp_ms),
                   "--retain-last", "1"),
        "sweep": ("remove-orphan-files", "ns.t", "--older-than", str(scene.cutoff), "--force",
                  "--settle", "0s"),
        "commit": ("add-files", "ns.t", f"s3://{scene.server.bucket}/{incoming}"),
    }


def same_outcome(scene, clean_keys):
    """A successful run leaves the clean run's keys, apart from the names of the files it
    wrote (metadata file, manifest list, manifests: fresh UUIDs each run): same count per
    folder, and every other key equal."""
    got = scene.keys()
    def fixed(ks):
        return {k for k in ks if "/metadata/" not in k}
    def per_folder(ks):
        out = {}
        for k in ks:
            out[k.rsplit("/", 1)[0]] = out.get(k.rsplit("/", 1)[0], 0) + 1
        return out
    assert fixed(got) == fixed(clean_keys)
    assert per_folder(got) == per_folder(clean_keys)
    kept_meta = {k for k in clean_keys if "/metadata/" in k} & set(scene.saved)
    assert kept_meta <= got


def test_slowdown_every_third_request(tmp_path, moto, s3_prefix, fault_proxy):  # noqa: F811
    endpoint, ctl = fault_proxy
    scene = Scene(tmp_path, moto, s3_prefix, endpoint)
    cmds = commands(scene)
    for name, argv in cmds.items():
        scene.restore()
        ctl.clear()
        res = scene.run(*argv)
        assert res.returncode == 0, f"{name}: {res.stderr}"
        clean = scene.keys()
        scene.sound()
        scene.restore()
        ctl.clear()
        ctl.set_rules([{"action": "slowdown", "every": 3}])
        res = scene.run(*argv)
        ctl.set_rules([])
        assert res.returncode == 0, f"{name} under SlowDown: {res.stderr}"
        assert ctl.counters()["faults"], "no fault was injected"
        same_outcome(scene, clean)
        scene.sound()


def test_reset_after_commit_write(tmp_path, moto, s3_prefix, fault_proxy):  # noqa: F811
    """The metadata file's PUT is applied upstream and its answer lost (connection reset). With
    a SQL catalog that write comes before the pointer swap, so either the back end proves the
    object ours (it reads it back) and the commit goes on (exit 0, the new rows readable), or
    the commit stops with the pointer unmoved (exit 1, or 4) and nothing at all deleted: never
    a delete after a write whose outcome was not settled."""
    endpoint, ctl = fault_proxy
    scene = Scene(tmp_path, moto, s3_prefix, endpoint, orphans=False)
    argv = commands(scene)["commit"]
    before = scene.keys()
    current = scene.wh.catalog().load_table("ns.t").metadata.current_snapshot_id
    ctl.set_rules([{"action": "reset_after", "method": "PUT", "path": r"\.metadata\.json$",
                    "times": 1}])
    res = scene.run(*argv)
    ctl.set_rules([])
    assert ctl.counters()["faults"], "the reset was not injected"
    after = scene.keys()
    assert before <= after, f"deleted after a lost answer: {sorted(before - after)}"
    t = scene.sound()
    if res.returncode == 0:
        assert t.metadata.current_snapshot_id != current
        assert 900 in t.scan().to_arrow()["id"].to_pylist()
    else:
        assert res.returncode in (1, 4), res.stderr
        assert t.metadata.current_snapshot_id == current


@pytest.mark.parametrize("fault", ["internal_error", "reset_after"])
def test_fault_at_every_request(tmp_path, moto, s3_prefix, fault_proxy, fault):  # noqa: F811
    endpoint, ctl = fault_proxy
    scene = Scene(tmp_path, moto, s3_prefix, endpoint)
    cmds = commands(scene)
    limit = int(os.environ.get("ICM_TEST_S3_FAULT_LOOP_MAX", "400"))
    for name, argv in cmds.items():
        scene.restore()
        ctl.clear()
        res = scene.run(*argv)
        assert res.returncode == 0, f"{name}: {res.stderr}"
        n = ctl.counters()["total"]
        clean = scene.keys()
        assert 0 < n <= limit, f"{name}: {n} requests"
        for i in range(1, n + 1):
            scene.restore()
            ctl.clear()
            ctl.set_rules([{"action": fault, "after": i - 1, "times": 1}])
            res = scene.run(*argv)
            ctl.set_rules([])
            what = f"{name}, {fault} at request {i}/{n}: exit {res.returncode}: {res.stderr}"
            assert res.returncode in (0, 1, 3, 4), what
            scene.sound()
            if res.returncode == 0:
                same_outcome(scene, clean)
            if res.returncode == 4:  # outcome unknown: nothing may have been deleted
                assert set(scene.saved) <= scene.keys(), what

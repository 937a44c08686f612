"""--trash on S3 when a CopyObject's answer is lost (issue #21): the copy may have landed while
the client saw a reset, and the HEAD that would confirm it may fail too. A retry of the file
must then go back to the same trash name (and take the copy there, confirmed by HEAD with the
source's size and ETag) instead of copying to `.trash-2`, `-3`, ... once per attempt; after
ICM_TRASH_COPY_ATTEMPTS (3) unconfirmed copies the file fails, not retried, and stays where it
was. Through the fault proxy, with one HTTP attempt per request (s3.retry.max-attempts=1) so the
faults land on known requests; only the requests of the first orphan (o1) are faulted."""
import json

import s3_e2e as e
from s3_helpers import fault_proxy, moto, s3_prefix  # noqa: F401 (fixtures)
from test_s3_trash import scene

COPY_ATTEMPTS = 3  # ICM_TRASH_COPY_ATTEMPTS (icemaint/trash.h)


def sweep_once_per_request(via, tmp_path, cutoff, trash):
    env = e.catalog_env(via)
    env[f"PYICEBERG_CATALOG__{via.name.upper()}__S3__RETRY__MAX_ATTEMPTS"] = "1"
    return e.icm("--json", "remove-orphan-files", "ns.t", "--older-than", str(cutoff), "--force",
                 "--settle", "0s", "--trash", trash, env=env, cwd=tmp_path)


def run(tmp_path, moto, s3_prefix, fault_proxy, rules):  # noqa: F811
    endpoint, ctl = fault_proxy
    wh, via, t, root, orphans, cutoff = scene(tmp_path, moto, s3_prefix, endpoint)
    uuid = str(t.metadata.table_uuid)
    trash_prefix = f"{s3_prefix}trash"
    files = f"{trash_prefix}/{uuid}/files/"
    before = e.keys(moto, s3_prefix)
    ctl.clear()
    ctl.set_rules(rules)
    r = sweep_once_per_request(via, tmp_path, cutoff, f"s3://{moto.bucket}/{trash_prefix}")
    log = ctl.log()
    ctl.clear()
    after = e.keys(moto, s3_prefix)
    o1, o2 = orphans
    d1, d2 = (files + k[len(root) + 1:] for k in orphans)
    copies_o1 = [x for x in log if x.get("method") == "PUT" and "/files/data/o1" in
                 x.get("target", "")]
    return r, before, after, (o1, o2), (d1, d2), files, copies_o1


O1 = r"/files/data/o1\.parquet"


def test_a_retry_takes_the_copy_its_lost_answer_left(tmp_path, moto, s3_prefix,
                                                     fault_proxy):  # noqa: F811
    """The first CopyObject lands but its answer is lost (reset after the server applied it)
    and the HEAD after it fails; the second attempt HEADs the same name, finds the source's
    object there and deletes the source: one copy in the trash, not one per attempt."""
    r, before, after, (o1, o2), (d1, d2), files, copies = run(
        tmp_path, moto, s3_prefix, fault_proxy,
        [{"action": "reset_after", "method": "PUT", "path": O1, "times": 1},
         # pick the name (404), check it is free (404), then the HEAD after the copy: 500
         {"action": "internal_error", "method": "HEAD", "path": O1, "after": 2, "times": 1}])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"] == 2
    assert len(copies) == 1
    assert {k for k in after if k.startswith(files)} == {d1, d2}
    assert {k for k in after if not k.startswith(s3_prefix + "trash/")} == before - {o1, o2}
    c = e.h.client(moto, attempts=4)
    assert c.get_object(Bucket=moto.bucket, Key=d1)["Body"].read() == o1.encode()


def test_copies_never_confirmed_stop_after_the_cap(tmp_path, moto, s3_prefix,
                                                   fault_proxy):  # noqa: F811
    """Every CopyObject of o1 is cut before it reaches the store: the same trash name is tried
    ICM_TRASH_COPY_ATTEMPTS times (not the delete phase's 8), then o1 fails naming itself, the
    trash name and the last error, and stays; o2 moves."""
    r, before, after, (o1, o2), (d1, d2), files, copies = run(
        tmp_path, moto, s3_prefix, fault_proxy,
        [{"action": "reset_before", "method": "PUT", "path": O1}])
    assert r.returncode != 0
    assert len(copies) == COPY_ATTEMPTS
    assert {x["target"].split("?")[0] for x in copies} == {copies[0]["target"].split("?")[0]}
    assert {k for k in after if k.startswith(files)} == {d2}
    assert {k for k in after if not k.startswith(s3_prefix + "trash/")} == before - {o2}
    out = r.stdout + r.stderr
    assert f"after {COPY_ATTEMPTS} copies to s3://{moto.bucket}/{d1} were not confirmed" in out
    assert "it stays where it was" in out


def test_a_copy_that_cannot_be_confirmed_keeps_the_source(tmp_path, moto, s3_prefix,
                                                          fault_proxy):  # noqa: F811
    """Every CopyObject of o1 lands with its answer lost and every HEAD of its trash name after
    the first two fails: o1 is not deleted (no HEAD showed the copy), and the trash holds one
    copy of it, never a `.trash-2`."""
    r, before, after, (o1, o2), (d1, d2), files, copies = run(
        tmp_path, moto, s3_prefix, fault_proxy,
        [{"action": "reset_after", "method": "PUT", "path": O1},
         {"action": "internal_error", "method": "HEAD", "path": O1, "after": 2}])
    assert r.returncode != 0
    assert 1 <= len(copies) <= COPY_ATTEMPTS
    assert {k for k in after if k.startswith(files)} == {d1, d2}
    assert {k for k in after if not k.startswith(s3_prefix + "trash/")} == before - {o2}
    assert o1 in after
    assert "the source is not deleted" in r.stdout + r.stderr

"""--trash on S3 (issue #21): remove-orphan-files moves each orphan with a server-side copy
(CopyObject, SigV4-signed) to <trash>/<table-uuid>/files/<key below the table location> and
deletes the source only once the copy is confirmed. On moto and on the verifying server
(versitygw: checks every signature): exact keys in the table and in the trash after the sweep
and after `icemaint trash restore`. Through the fault proxy: a CopyObject that fails (500 on
every attempt, or 200 with an <Error> body) leaves the original in place and nothing half
moved."""
import json
import time

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import fault_proxy, moto, s3_prefix, verifying  # noqa: F401 (fixtures)


def scene(tmp_path, server, prefix, endpoint=None):
    wh = h.S3Warehouse(tmp_path, server, prefix)
    cat = wh.catalog()
    cat.create_namespace_if_not_exists("ns")
    t = cat.create_table("ns.t", h._schema())
    t.append(h._rows([1]))
    t = cat.load_table("ns.t")
    root = e.key_of(t.location(), server.bucket)
    orphans = [f"{root}/data/o1.parquet", f"{root}/data/p=1/o 2.parquet"]
    for k in orphans:
        e.put(server, k, body=k.encode())
    time.sleep(1.5)
    cutoff = int(time.time() * 1000)
    via = wh
    if endpoint is not None:
        via = h.S3Warehouse(tmp_path, server, prefix, endpoint=endpoint, name=wh.name)
        via.sqlite_path = wh.sqlite_path
    return wh, via, t, root, orphans, cutoff


def sweep(via, tmp_path, cutoff, trash, *extra):
    return e.cat_cli(via, "--json", "remove-orphan-files", "ns.t", "--older-than", str(cutoff),
                     "--force", "--settle", "0s", "--trash", trash, *extra, cwd=tmp_path,
                     check=False)


@pytest.mark.parametrize("which", ["moto", "verifying"])
def test_sweep_moves_by_copy_then_delete_and_restore(tmp_path, s3_prefix, which,
                                                      request):  # noqa: F811
    server = request.getfixturevalue(which)
    wh, via, t, root, orphans, cutoff = scene(tmp_path, server, s3_prefix)
    uuid = str(t.metadata.table_uuid)
    trash_prefix = f"{s3_prefix}trash"
    trash = f"s3://{server.bucket}/{trash_prefix}"
    before = e.keys(server, s3_prefix)
    r = sweep(via, tmp_path, cutoff, trash)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"] == 2
    moved = {f"{trash_prefix}/{uuid}/files/{k[len(root) + 1:]}" for k in orphans}
    after = e.keys(server, s3_prefix)
    table_keys = {k for k in after if not k.startswith(trash_prefix + "/")}
    assert table_keys == before - set(orphans)
    files = {k for k in after if k.startswith(f"{trash_prefix}/{uuid}/files/")}
    assert files == moved
    c = h.client(server, attempts=4)
    for k in orphans:
        dst = f"{trash_prefix}/{uuid}/files/{k[len(root) + 1:]}"
        assert c.get_object(Bucket=server.bucket, Key=dst)["Body"].read() == k.encode()
    journals = [k for k in after if k.startswith(f"{trash_prefix}/{uuid}/journal/")]
    recs = [json.loads(line) for k in journals
            for line in c.get_object(Bucket=server.bucket, Key=k)["Body"].read().splitlines()]
    assert sorted(r["original"] for r in recs) == sorted(f"s3://{server.bucket}/{k}"
                                                         for k in orphans)
    assert h.judge_pyiceberg(wh, "ns.t")  # the table still reads

    r = e.cat_cli(via, "trash", "restore", trash, "--table", t.location(), cwd=tmp_path,
                  check=False)
    assert r.returncode == 0, r.stderr
    after = e.keys(server, s3_prefix)
    assert {k for k in after if not k.startswith(trash_prefix + "/")} == before
    assert not any(k.startswith(f"{trash_prefix}/{uuid}/files/") for k in after)


@pytest.mark.parametrize("scheme", ["s3", "S3", "s3a", "S3A", "s3n"])
def test_data_loss_trash_inside_the_location_is_refused(tmp_path, moto, s3_prefix,
                                                        scheme):  # noqa: F811
    """Data loss class: a trash inside the table location is refused however the scheme is
    spelled (the back end addresses `S3://` and `s3a://` as `s3://`): the next sweep would
    delete every trashed file as an orphan."""
    wh, via, t, root, orphans, cutoff = scene(tmp_path, moto, s3_prefix)
    before = e.keys(moto, s3_prefix)
    r = sweep(via, tmp_path, cutoff, f"{scheme}://{moto.bucket}/{root}/trash")
    assert r.returncode == 5, r.stderr
    assert e.keys(moto, s3_prefix) == before


@pytest.mark.parametrize("fault", [
    {"action": "internal_error"},
    {"action": "error", "status": 200, "code": "InternalError"},
])
def test_failed_copy_keeps_the_original(tmp_path, moto, s3_prefix, fault_proxy,
                                        fault):  # noqa: F811
    endpoint, ctl = fault_proxy
    wh, via, t, root, orphans, cutoff = scene(tmp_path, moto, s3_prefix, endpoint)
    uuid = str(t.metadata.table_uuid)
    trash_prefix = f"{s3_prefix}trash"
    trash = f"s3://{moto.bucket}/{trash_prefix}"
    before = e.keys(moto, s3_prefix)
    ctl.clear()
    # every CopyObject (a PUT below files/) fails; the journal and probe PUTs pass
    ctl.set_rules([{**fault, "method": "PUT", "path": "/files/"}])
    r = sweep(via, tmp_path, cutoff, trash)
    log = ctl.log()
    ctl.clear()
    assert r.returncode != 0, r.stderr
    copies = [x for x in log if x.get("method") == "PUT" and "/files/" in x.get("target", "")]
    assert copies, "no CopyObject was sent"
    after = e.keys(moto, s3_prefix)
    assert set(orphans) <= after  # the originals stay
    assert {k for k in after if not k.startswith(trash_prefix + "/")} == before
    assert not any(k.startswith(f"{trash_prefix}/{uuid}/files/") for k in after)
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    if doc is not None and "orphans" in doc:
        assert {o["state"] for o in doc["orphans"]} == {"failed"}


def test_failing_head_in_the_trash_fails_the_file_without_trying_other_names(
        tmp_path, moto, s3_prefix, fault_proxy):  # noqa: F811
    """A HEAD of a trash name that fails (500 on every attempt) is no "name taken": the file
    fails at once instead of walking `.trash-2` ... `.trash-1000`, each with full retries."""
    endpoint, ctl = fault_proxy
    wh, via, t, root, orphans, cutoff = scene(tmp_path, moto, s3_prefix, endpoint)
    uuid = str(t.metadata.table_uuid)
    trash_prefix = f"{s3_prefix}trash"
    trash = f"s3://{moto.bucket}/{trash_prefix}"
    before = e.keys(moto, s3_prefix)
    ctl.clear()
    ctl.set_rules([{"action": "internal_error", "method": "HEAD", "path": "/files/"}])
    started = time.monotonic()
    r = sweep(via, tmp_path, cutoff, trash)
    took = time.monotonic() - started
    log = ctl.log()
    ctl.clear()
    assert r.returncode != 0, r.stderr
    heads = [x.get("target", "") for x in log if x.get("method") == "HEAD"]
    assert any("/files/" in x for x in heads), "no HEAD of a trash name was sent"
    assert not any(".trash-" in x for x in heads), "another name was tried after a failed HEAD"
    assert took < 120
    after = e.keys(moto, s3_prefix)
    assert set(orphans) <= after  # the originals stay
    assert {k for k in after if not k.startswith(trash_prefix + "/")} == before
    assert not any(k.startswith(f"{trash_prefix}/{uuid}/files/") for k in after)


def test_copy_applied_but_answer_lost_leaves_one_copy(tmp_path, moto, s3_prefix,
                                                      fault_proxy):  # noqa: F811
    """Every CopyObject is applied and then its connection reset: the move sees the target
    hold the source's object (size and ETag) and counts the copy as done: one trashed copy
    per file, the originals go, no `.trash-N` copies pile up."""
    endpoint, ctl = fault_proxy
    wh, via, t, root, orphans, cutoff = scene(tmp_path, moto, s3_prefix, endpoint)
    uuid = str(t.metadata.table_uuid)
    trash_prefix = f"{s3_prefix}trash"
    trash = f"s3://{moto.bucket}/{trash_prefix}"
    before = e.keys(moto, s3_prefix)
    ctl.clear()
    ctl.set_rules([{"action": "reset_after", "method": "PUT", "path": "/files/"}])
    r = sweep(via, tmp_path, cutoff, trash)
    ctl.clear()
    assert r.returncode == 0, r.stderr
    after = e.keys(moto, s3_prefix)
    assert {k for k in after if not k.startswith(trash_prefix + "/")} == before - set(orphans)
    moved = {f"{trash_prefix}/{uuid}/files/{k[len(root) + 1:]}": k for k in orphans}
    assert {k for k in after if k.startswith(f"{trash_prefix}/{uuid}/files/")} == set(moved)
    c = h.client(moto, attempts=4)
    for dst, k in moved.items():
        assert c.get_object(Bucket=moto.bucket, Key=dst)["Body"].read() == k.encode()

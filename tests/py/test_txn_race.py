"""Racing writers: icemaint (`add-files`, one process per commit) and PyIceberg (`append`) commit
to one SQLite-catalog table at the same time.

Every commit must land or fail cleanly: icemaint exits 0 (committed) or 3 (failed after its
retries), never 4 (unknown) on a local SQLite catalog. Afterwards the table reads exactly the
rows of the commits that landed, no file referenced by any snapshot is missing, and no failed
or superseded icemaint attempt left a manifest or manifest list behind (icemaint's lists carry
attempt numbers from 1, PyIceberg's 0, so every leftover can be attributed).
"""
import json
import os
import re
import threading

import pytest

pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from pyiceberg.exceptions import CommitFailedException  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

from txn_helpers import Db, local, need_cli, referenced_files, write_parquet  # noqa: E402

ROUNDS = 8
LIST_RE = re.compile(r"^snap-(-?\d+)-(\d+)-([0-9a-f-]{36})\.avro$")
MANIFEST_RE = re.compile(r"^([0-9a-f-]{36})-m\d+\.avro$")


@pytest.mark.parametrize("retries", ["20", "0"])
def test_icemaint_and_pyiceberg_race(tmp_path, retries):
    need_cli()
    db = Db(tmp_path)
    cat = db.catalog()
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "data", StringType(), required=False))
    # Short waits; with 20 retries most commits land after retrying, with 0 conflicts fail
    # (exit 3) and must leave nothing behind. Both writers honour these properties.
    cat.create_table("ns.t", schema, properties={
        "commit.retry.num-retries": retries, "commit.retry.min-wait-ms": "5",
        "commit.retry.max-wait-ms": "50"})
    incoming = tmp_path / "incoming"
    incoming.mkdir()

    landed, outcomes, errors, attempts = [], {"ice": [], "py": []}, [], []
    lock = threading.Lock()

    def icemaint_writer():
        for i in range(ROUNDS):
            ids = [100000 + 10 * i + k for k in range(3)]
            f = write_parquet(incoming / f"ice{i}.parquet", ids)
            res = db.cli("--json", "add-files", "ns.t", f, check=False)
            with lock:
                outcomes["ice"].append(res.returncode)
                if res.returncode == 0:
                    landed.extend(ids)
                    attempts.append(json.loads(res.stdout)["attempts"])
                elif res.returncode != 3:
                    errors.append(f"icemaint exit {res.returncode}: {res.stderr}")
            assert os.path.exists(f)  # caller files are never deleted

    def pyiceberg_writer():
        c = db.catalog()
        for i in range(ROUNDS):
            ids = [200000 + 10 * i + k for k in range(2)]
            try:
                t = c.load_table("ns.t")
                t.append(pa.table({"id": pa.array(ids, pa.int64()),
                                   "data": pa.array([f"p{x}" for x in ids])}))
                ok = True
            except CommitFailedException:
                ok = False
            with lock:
                outcomes["py"].append(ok)
                if ok:
                    landed.extend(ids)

    threads = [threading.Thread(target=icemaint_writer), threading.Thread(target=pyiceberg_writer)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert len(outcomes["ice"]) == ROUNDS and len(outcomes["py"]) == ROUNDS

    t = db.catalog().load_table("ns.t")
    got = sorted(t.scan().to_arrow().column("id").to_pylist())
    assert got == sorted(landed)
    refs = referenced_files(t)
    for path in refs:
        assert os.path.exists(local(path)), f"referenced file missing: {path}"

    # Every manifest or list left in metadata/ that no snapshot references is an orphan; none
    # of them may be icemaint's.
    mdir = os.path.join(local(t.metadata.location), "metadata")
    referenced_names = {os.path.basename(local(p)) for p in refs}
    ours_uuids, py_uuids = set(), set()
    names = [n for n in os.listdir(mdir) if n.endswith(".avro")]
    for n in names:
        m = LIST_RE.match(n)
        if m:
            (ours_uuids if int(m.group(2)) >= 1 else py_uuids).add(m.group(3))
    ours_orphans = []
    for n in names:
        if n in referenced_names:
            continue
        lm, mm = LIST_RE.match(n), MANIFEST_RE.match(n)
        if lm and int(lm.group(2)) >= 1:
            ours_orphans.append(n)
        elif mm and mm.group(1) not in py_uuids:
            ours_orphans.append(n)  # a manifest of no PyIceberg commit: icemaint's
    assert ours_orphans == [], ours_orphans
    committed_ice = sum(1 for rc in outcomes["ice"] if rc == 0)
    committed_py = sum(1 for ok in outcomes["py"] if ok)
    print(f"retries={retries}: icemaint committed {committed_ice}/{ROUNDS}, PyIceberg {committed_py}/{ROUNDS}, "
          f"snapshots {len(t.metadata.snapshots)}, icemaint retries {sum(attempts) - len(attempts)}")
    assert len(t.metadata.snapshots) == committed_ice + committed_py

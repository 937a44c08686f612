"""Data-loss class: a manifest list or manifest cut short, or altered, read as a smaller table
(adversary round 5b, findings 1 and 3).

An Avro file cut right after a sync marker is a valid Avro file with fewer records (a writer that
flushes per block and crashes, a torn copy, a partial restore), and an entry's status is one byte.
Read as they are, the keep set loses what the cut rows or the flipped entry named, and the sweep
and the expiry deleted live data files of the current snapshot. Rules: a manifest must agree with
its manifest list row (its entries by status against the row's added/existing/deleted counts; its
length where the row has no counts), and every retained snapshot's manifest list with its
snapshot's summary (the live entries of the manifests its rows name are at least
`total-data-files` and `total-delete-files`; round 7 found the rule applied to ref heads only,
and only where every row had counts). Anything else is an unreadable file: nothing is deleted.

Each test asserts the exit code and exactly which files exist after."""
import io
import os
import shutil

import fastavro
import pyarrow as pa

from plan_helpers import SCHEMA, Lake, age, files_under


def rewrite(path, change):
    """Rewrite the Avro file at `path` one record per block (same schema, codec and header
    metadata), its records passed through `change` first."""
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        recs, meta, schema, codec = list(r), dict(r.metadata), r.writer_schema, r.codec
    for k in ("avro.schema", "avro.codec"):
        meta.pop(k, None)
    out = io.BytesIO()
    fastavro.writer(out, schema, change(recs), codec=codec, metadata=meta, sync_interval=1)
    with open(path, "wb") as f:
        f.write(out.getvalue())


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def rewrite_padded(path, recs, length):
    """Write `recs` to the Avro file at `path` (its schema, codec and header kept), padded with a
    header value to exactly `length` bytes."""
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        meta, schema, codec = dict(r.metadata), r.writer_schema, r.codec
    for k in ("avro.schema", "avro.codec"):
        meta.pop(k, None)

    def write(pad, one_block):
        out = io.BytesIO()
        fastavro.writer(out, schema, recs, codec=codec,
                        metadata=meta if pad is None else dict(meta, pad="p" * pad),
                        **({} if one_block else {"sync_interval": 1}))
        return out.getvalue()
    body = None
    for one_block in (True, False):
        short = len(write(0, one_block))
        for pad in [None, *range(max(0, length - short - 8), max(0, length - short + 8))]:
            if body is None and len(b := write(pad, one_block)) == length:
                body = b
    assert body is not None, (path, length)
    with open(path, "wb") as f:
        f.write(body)


def without_counts(recs):
    """Manifest list rows with the per-row file and row counts null (optional in v1)."""
    for x in recs:
        for k in list(x):
            if k.endswith("_files_count") or k.endswith("_rows_count"):
                x[k] = None
    return recs


def one_snapshot_lake(tmp_path, merged=False, expired=True, v1=False):
    """ns.t with 3 appends, expired to its last snapshot unless not `expired`: (lake, the current
    manifest list, the paths of its manifests). `merged`: one manifest names all three data
    files. `v1`: a format-version 1 table."""
    props = {"commit.manifest-merge.enabled": "true",
             "commit.manifest.min-count-to-merge": "2"} if merged else {}
    if v1:
        props["format-version"] = "1"
    lake = Lake(tmp_path, appends=0)
    lake.cat.drop_table("ns.t")
    shutil.rmtree(lake.dir)  # (the dropped table's metadata would make the sweep refuse)
    t = lake.cat.create_table("ns.t", schema=SCHEMA, properties=props)
    for i in range(3):
        t.append(pa.table({"id": [i]}, schema=SCHEMA))
    if expired:
        r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
        assert r.returncode == 0, r.stderr
    age(files_under(lake.dir))
    lst = local(lake.cat.load_table("ns.t").current_snapshot().manifest_list)
    with open(lst, "rb") as f:
        manifests = [local(m["manifest_path"]) for m in fastavro.reader(f)]
    return lake, lst, manifests


def files_but_documents(lake):
    """The table's files but its metadata documents (an expiry's commit adds one)."""
    return {p for p in lake.files() if not p.endswith(".metadata.json")}


def data_files(lake):
    return sorted(p for p in lake.files() if "/data/" in p)


def test_data_loss_manifest_list_cut_at_a_block_boundary(tmp_path):
    """The current snapshot's list cut after 2 of its 3 rows, then cut to its header alone:
    the sweep refuses both (exit 5) and every file stays; the summary says 3 data files."""
    lake, lst, manifests = one_snapshot_lake(tmp_path)
    assert len(manifests) == 3
    before = lake.files()
    for keep in (2, 0):
        rewrite(lst, lambda recs: recs[:keep])
        age([lst])
        r = lake.icm("remove-orphan-files", "ns.t")
        assert r.returncode == 5, (keep, r.stdout, r.stderr)
        assert "total-data-files 3" in r.stderr, r.stderr
        assert lake.files() == before


def test_data_loss_manifest_list_cut_before_an_expiry(tmp_path):
    """The same cut on the current list of a 3-snapshot table: the expiry keeps every data file
    and every manifest the cut rows named (the list is unreadable: nothing it hides goes)."""
    lake = Lake(tmp_path)
    lst = local(lake.cat.load_table("ns.t").current_snapshot().manifest_list)
    data_before = data_files(lake)
    rewrite(lst, lambda recs: recs[:2])
    manifests_before = sorted(p for p in lake.files() if p.endswith("-m0.avro"))
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    # committed, then the cleanup held back (exit 1): only the expired lists go
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "total-data-files 3" in r.stderr and "repair or restore it" in r.stderr
    assert data_files(lake) == data_before
    assert sorted(p for p in lake.files() if p.endswith("-m0.avro")) == manifests_before
    with open(lst, "rb") as f:
        assert len(list(fastavro.reader(f))) == 2  # the evidence is left as it was


def test_data_loss_manifest_cut_or_an_entry_flipped_to_deleted(tmp_path):
    """One manifest names all three data files (1 ADDED, 2 EXISTING). Cut after its first entry,
    or with its first EXISTING entry's status set to DELETED: the sweep refuses (exit 5) naming
    the manifest, and the three data files stay."""
    for kind in ("cut", "flip"):
        (tmp_path / kind).mkdir()
        lake, lst, manifests = one_snapshot_lake(tmp_path / kind, merged=True)
        assert len(manifests) == 1
        before = lake.files()
        assert len(data_files(lake)) == 3

        def change(recs):
            if kind == "cut":
                return recs[:1]
            flipped = next(e for e in recs if e["status"] == 0)
            flipped["status"] = 2
            return recs
        rewrite(manifests[0], change)
        age([manifests[0]])
        r = lake.icm("remove-orphan-files", "ns.t")
        assert r.returncode == 5, (kind, r.stdout, r.stderr)
        assert os.path.basename(manifests[0]) in r.stderr and "manifest list counts" in r.stderr
        assert lake.files() == before


def test_data_loss_manifest_cut_then_padded_to_its_recorded_length(tmp_path):
    """A manifest cut after its first entry and padded back (a longer header value) to the length
    its list records: the length agrees, the counts do not. The expiry of the two snapshots before
    deletes none of the three data files (all live in the current snapshot), nor does a sweep."""
    lake, lst, manifests = one_snapshot_lake(tmp_path, merged=True, expired=False)
    with open(lst, "rb") as f:
        recorded = next(iter(fastavro.reader(f)))["manifest_length"]
    m = manifests[0]
    with open(m, "rb") as f:
        recs = list(fastavro.reader(f))
    rewrite_padded(m, recs[:1], recorded)
    age([m])
    before = data_files(lake)
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    assert data_files(lake) == before, (r.stdout, r.stderr)
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert data_files(lake) == before


def overwritten_lake(tmp_path):
    """ns.t with 3 appends (S1..S3), then an overwrite (S4 deletes, S5 appends): S3's manifests
    are named by no list after it. (lake, S3's manifest list, its rows' manifests)."""
    lake = Lake(tmp_path)
    t = lake.cat.load_table("ns.t")
    t.overwrite(pa.table({"id": [99]}, schema=SCHEMA))
    age(files_under(lake.dir))
    s3 = lake.cat.load_table("ns.t").metadata.snapshots[2]
    assert s3.summary["total-data-files"] == "3"
    lst = local(s3.manifest_list)
    with open(lst, "rb") as f:
        manifests = [local(m["manifest_path"]) for m in fastavro.reader(f)]
    return lake, lst, manifests


def test_data_loss_retained_manifest_list_not_a_ref_head_cut(tmp_path):
    """S3 is retained but no ref's head. Its list cut to its 2 older rows (its own manifest's row
    dropped): the sweep refuses (exit 5) and every file stays, S3's own data file included."""
    lake, lst, manifests = overwritten_lake(tmp_path)
    assert len(manifests) == 3
    before = lake.files()
    rewrite(lst, lambda recs: recs[1:])
    age([lst])
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "total-data-files 3" in r.stderr, r.stderr
    assert lake.files() == before


def test_data_loss_retained_manifest_list_not_a_ref_head_cut_before_an_expiry(tmp_path):
    """The same table, S3's list cut to its 2 newer rows (S1's manifest's row dropped); the
    expiry keeps S3..S5 and expires S1, S2: S1's data file and manifest, still S3's, stay (exit
    1: the cleanup is held back); only the expired snapshots' lists go."""
    lake, lst, manifests = overwritten_lake(tmp_path)
    md = lake.cat.load_table("ns.t").metadata
    expired_lists = {local(s.manifest_list) for s in md.snapshots[:2]}
    rewrite(lst, lambda recs: recs[:2])
    before = files_but_documents(lake)
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "3")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "total-data-files 3" in r.stderr and "repair or restore it" in r.stderr
    assert files_but_documents(lake) == before - expired_lists


def test_data_loss_v1_manifest_list_without_counts_cut(tmp_path):
    """A v1 table whose list rows carry no counts (optional in v1): with the list whole the sweep
    deletes a real orphan; cut to 2 of its 3 rows it refuses (exit 5; the manifests' entries as
    read count 2 live data files, the summary 3) and every file stays."""
    lake, lst, manifests = one_snapshot_lake(tmp_path, v1=True)
    assert len(manifests) == 3
    rewrite(lst, without_counts)
    age([lst])
    orphan = lake.orphan("orphan.parquet", 10)
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(orphan)
    before = lake.files()
    rewrite(lst, lambda recs: without_counts(recs)[:2])
    age([lst])
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "counts 2 live data files" in r.stderr and "total-data-files 3" in r.stderr
    assert lake.files() == before


def test_data_loss_v1_entry_flipped_to_deleted_in_a_manifest_without_row_counts(tmp_path):
    """The same count-less v1 list, whole; one manifest's only entry set from ADDED to DELETED
    and the file padded back to the length the row records (the row's one check passes). The
    sweep refuses (exit 5) and the entry's data file stays."""
    lake, lst, manifests = one_snapshot_lake(tmp_path, v1=True)
    with open(lst, "rb") as f:
        rows = list(fastavro.reader(f))
    rewrite(lst, without_counts)
    m = local(rows[0]["manifest_path"])
    with open(m, "rb") as f:
        recs = list(fastavro.reader(f))
    assert [e["status"] for e in recs] == [1]
    recs[0]["status"] = 2
    rewrite_padded(m, recs, rows[0]["manifest_length"])
    age([lst, m])
    before = lake.files()
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "total-data-files 3" in r.stderr, r.stderr
    assert lake.files() == before


def test_data_loss_v1_manifest_list_without_counts_cut_before_an_expiry(tmp_path):
    """A v1 table of 3 appends whose current list has no counts, cut to its 2 newer rows (the
    first snapshot's manifest's row dropped). The expiry of the two older snapshots reads the
    count-less rows' manifests to judge the list: 2 live data files against total-data-files
    3, so the cleanup is held back (exit 1) and the first data file and its manifest stay."""
    lake, lst, manifests = one_snapshot_lake(tmp_path, v1=True, expired=False)
    assert len(manifests) == 3
    rewrite(lst, lambda recs: without_counts(recs)[:2])
    md = lake.cat.load_table("ns.t").metadata
    expired_lists = {local(s.manifest_list) for s in md.snapshots[:2]}
    before = files_but_documents(lake)
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "counts 2 live data files" in r.stderr and "total-data-files 3" in r.stderr
    assert files_but_documents(lake) == before - expired_lists


def test_data_loss_list_row_replaced_by_a_second_row_of_a_manifest_it_names(tmp_path):
    """Adversary round 8, finding 1: S3's own manifest's row replaced by a second row for a
    manifest the list already names (an exact copy of its row; the same path spelled without
    `file://`; that spelling with its count raised to 2): the list still has 3 rows counting 3
    files. Each manifest counts once, by the row that first named it: 2 live files against
    total-data-files 3, so the sweep refuses (exit 5) and every file stays."""
    lake, lst, manifests = overwritten_lake(tmp_path)
    before = lake.files()
    with open(lst, "rb") as f:
        rows = list(fastavro.reader(f))
    assert [local(r["manifest_path"]) for r in rows] == manifests and len(rows) == 3

    def second(respell, count):
        row = dict(rows[1])
        if respell:
            row["manifest_path"] = local(row["manifest_path"])
        if count is not None:
            row["added_files_count"] = count
        return row
    for respell, count in ((False, None), (True, None), (True, 2)):
        rewrite(lst, lambda recs: [second(respell, count)] + recs[1:])
        age([lst])
        r = lake.icm("remove-orphan-files", "ns.t")
        assert r.returncode == 5, (respell, count, r.stdout, r.stderr)
        assert "counts 2 live data files" in r.stderr and "total-data-files 3" in r.stderr
        assert lake.files() == before
        rewrite(lst, lambda recs: rows)


def test_data_loss_list_row_replaced_by_a_row_naming_a_byte_copy_of_another_manifest(tmp_path):
    """Adversary round 9, finding 2 (round 8, finding 1's `copy`): S3's own manifest's row
    replaced by a row naming a byte copy of S2's manifest under a new name, its counts true:
    every manifest named once, 3 rows counting 3 files. But S3 then names S2's data file as
    added twice by S2's commit (once in each copy), which no commit does: the sweep refuses
    (exit 5) and every file stays (S3's data file and manifest among them)."""
    lake, lst, manifests = overwritten_lake(tmp_path)
    with open(lst, "rb") as f:
        rows = list(fastavro.reader(f))
    copy = os.path.join(os.path.dirname(manifests[1]), "copy-of-" + os.path.basename(manifests[1]))
    shutil.copy(manifests[1], copy)
    row = dict(rows[1], manifest_path="file://" + copy)
    rewrite(lst, lambda recs: [row] + recs[1:])
    age([lst, copy])
    before = lake.files()
    r = lake.icm("remove-orphan-files", "ns.t")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "as added twice by commit" in r.stderr and "copy-of-" in r.stderr, r.stderr
    assert lake.files() == before


def test_data_loss_list_row_cut_and_another_rows_count_raised_before_an_expiry(tmp_path):
    """Adversary round 8, finding 4: S3's list loses S1's manifest's row and S2's manifest's row
    says 2 files instead of 1 (the totals agree). The expiry keeping S3..S5 finds the lie only
    when it reads S2's manifest for its candidates: then no manifest goes either (S1's was
    deleted before), only the expired snapshots' lists; exit 1."""
    lake, lst, manifests = overwritten_lake(tmp_path)
    md = lake.cat.load_table("ns.t").metadata
    expired_lists = {local(s.manifest_list) for s in md.snapshots[:2]}

    def lie(recs):
        recs = recs[:2]
        recs[1]["added_files_count"] += 1
        return recs
    rewrite(lst, lie)
    before = files_but_documents(lake)
    r = lake.icm("expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "3")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "no manifest, data or delete file is deleted" in r.stderr, r.stderr
    assert files_but_documents(lake) == before - expired_lists

"""Verification before deleting (data-loss class "corruption that becomes permanent") and the
listing refusal, on real
PyIceberg tables driven through the icemaint CLI (env ICM_CLI).

Avro deflate blocks carry no checksum: one flipped bit in a *retained* manifest can change a
live file's path. The real file then looks unreferenced, and a maintenance run that deletes it
makes the damage permanent (restoring the manifest from a backup no longer helps). The tests
damage a retained manifest the way such a bit does (one character of one live data file's path,
rewritten with fastavro) and check that:

  * expire-snapshots and remove-orphan-files refuse (exit 5), delete nothing, and name the
    missing path and a snapshot that references it; after the manifest is restored from its
    backup, PyIceberg reads every retained snapshot as before;
  * --no-verify gives back the behaviour without the check (the real file is deleted);
  * when the listing lacks files the snapshots reference, the sweep's refusal names the first
    10 with a snapshot each and says how many there are.
"""
import glob
import os
import re
import shutil
import time

import pytest

pa = pytest.importorskip("pyarrow")
fastavro = pytest.importorskip("fastavro")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

import subprocess  # noqa: E402

CLI = os.environ.get("ICM_CLI")
TEN_DAYS_S = 10 * 86400
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def make_table(tmp_path, appends=3, merge=False, schema=SCHEMA, partition_spec=None):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = pyiceberg_sql.SqlCatalog("reg", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    props = {}
    if merge:  # MergeAppend: each snapshot's one manifest rewrites the earlier files as EXISTING
        props = {"commit.manifest-merge.enabled": "true",
                 "commit.manifest.min-count-to-merge": "2"}
    extra = {"partition_spec": partition_spec} if partition_spec is not None else {}
    t = cat.create_table("ns.t", schema=schema, properties=props, **extra)
    for i in range(appends):
        t.append(pa.table({"id": [i * 10 + j for j in range(5)], "s": [f"r{i}"] * 5},
                          schema=SCHEMA))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  reg:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"wh": wh, "cat": cat, "cfg": str(cfg), "dir": wh / "ns" / "t"}


def icm(tbl, *args):
    return subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "reg", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def all_files(tbl):
    return sorted(p for p in glob.glob(str(tbl["dir"] / "**" / "*"), recursive=True)
                  if os.path.isfile(p))


def age_all(path):
    old = time.time() - TEN_DAYS_S
    for f in glob.glob(str(path / "**" / "*"), recursive=True):
        os.utime(f, (old, old))


def read_every_snapshot(tbl):
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in t.metadata.snapshots}


def live_paths(tbl, snapshot):
    t = tbl["cat"].load_table("ns.t")
    return {e.data_file.file_path for m in snapshot.manifests(t.io)
            for e in m.fetch_manifest_entry(t.io)}


def outside(victim):
    """`victim` with one character of its table folder changed (`/ns/t/` -> `/ns/u/`): a path
    outside the table, with the file's own name."""
    assert "/ns/t/" in victim
    return victim.replace("/ns/t/", "/ns/u/", 1)


def flip_one_path(manifest, victim, damage=None, keep_length=False, rewrite=None):
    """Rewrite `manifest` (same codec and metadata) with one character of `victim`'s path
    changed (by `damage`, else its name's last character), as one flipped bit in a deflate
    block would; returns the damaged path. keep_length: the file padded (a header metadata
    key) to its old length in bytes, so that the length its list row records still holds.
    rewrite(records): how another writer would have written the same entries."""
    with open(manifest, "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
        codec = r.metadata.get("avro.codec", "null")
    hits = [rec for rec in recs if rec["data_file"]["file_path"] == victim]
    assert len(hits) == 1 and hits[0]["status"] in (0, 1), "victim must be one live entry"
    i = len(victim) - len(".parquet") - 1
    damaged = damage(victim) if damage else victim[:i] + ("x" if victim[i] != "x" else "y") + \
        victim[i + 1:]
    hits[0]["data_file"]["file_path"] = damaged
    if rewrite:
        rewrite(recs)
    size = os.path.getsize(manifest)

    def encoded(metadata, level=9):
        import io
        out = io.BytesIO()
        fastavro.writer(out, schema, recs, codec=codec, codec_compression_level=level,
                        metadata=metadata)
        return out.getvalue()

    def fitted(level):
        """At this compression level, the file at `size` bytes, or None. The header is not
        compressed: its `schema` text takes trailing spaces (still the same JSON), and sheds
        an empty `identifier-field-ids` when the damaged data compresses worse; without a
        `schema`, a pad key (8 bytes at least) is added."""
        variants = [meta]
        if '"identifier-field-ids":[]' in meta.get("schema", ""):
            variants.append(dict(meta, schema=meta["schema"].replace(
                ',"identifier-field-ids":[]', "")))
        for m in variants:
            gap = size - len(encoded(m, level))
            if "schema" in m:
                tries = (dict(m, schema=m["schema"] + " " * n) for n in range(max(0, gap - 2),
                                                                                  gap + 1))
            else:
                tries = (dict(m, **({"x-pad": "p" * pad} if pad else {}))
                         for pad in range(max(0, gap - 8), gap + 8))
            d = next((d for d in map(lambda t: encoded(t, level), tries) if len(d) == size),
                     None)
            if d is not None:
                return d
        return None
    data = encoded(meta)
    if keep_length:
        data = next((d for d in map(fitted, (9, 6, 3, 1)) if d is not None), None)
        assert data is not None, f"{manifest} cannot be padded to {size} bytes"
    with open(manifest, "wb") as f:
        f.write(data)
    return damaged


def named_missing(stderr):
    """(path, snapshot id) pairs a refusal names, as `PATH (KIND, snapshot ID)` (or with
    `, outside the table, named like ...` before the parenthesis closes)."""
    pattern = r"(\S+) \([a-z_]+, snapshot (-?\d+)(?:, outside the table[^)]*)?\)"
    return [(m.group(1), int(m.group(2))) for m in re.finditer(pattern, stderr)]


def kept_for(stderr, victim, reference, why):
    """Whether a warning says `victim` is kept because `reference` (outside the table) bears
    its name or size (`why`)."""
    return any(ln.startswith("warning:") and victim in ln and f"references {reference}" in ln
               and f"with this file's {why}" in ln and "may still need it; kept" in ln
               for ln in stderr.splitlines())


def damaged_merge_table(tmp_path, damage=None, keep_length=False):
    """Three appends with MergeAppend: the current snapshot's single manifest lists the first
    two data files as EXISTING, so expiring the older snapshots makes those files candidates
    that only the retained manifest keeps. One of them is misnamed in that manifest."""
    tbl = make_table(tmp_path, merge=True)
    t = tbl["cat"].load_table("ns.t")
    first, current = t.metadata.snapshots[0], t.current_snapshot()
    victim = sorted(live_paths(tbl, first))[0]
    manifests = current.manifests(t.io)
    assert len(manifests) == 1 and victim in live_paths(tbl, current)
    manifest = local(manifests[0].manifest_path)
    backup = manifest + ".backup"
    shutil.copy(manifest, backup)
    before = read_every_snapshot(tbl)
    damaged = flip_one_path(manifest, victim, damage, keep_length)
    return tbl, victim, damaged, manifest, backup, before, current.snapshot_id


def backed_up_manifest(tbl, path):
    """The current snapshot's manifest naming `path` live, and a backup copy of it to restore
    once the test has damaged it: (manifest, backup)."""
    manifest = manifest_naming(tbl, path)
    backup = str(tbl["wh"] / "manifest.backup")
    shutil.copy(manifest, backup)
    return manifest, backup


def restore(manifest, backup):
    shutil.move(backup, manifest)


def test_corrupt_retained_manifest_blocks_expiry_deletes(tmp_path):
    tbl, victim, damaged, manifest, backup, before, current = damaged_merge_table(tmp_path)
    files_before = [f for f in all_files(tbl) if f != backup]

    dry = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--dry-run")
    assert dry.returncode == 5, dry.stderr
    assert (damaged, current) in named_missing(dry.stderr), dry.stderr

    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert p.returncode == 5, p.stderr
    assert (damaged, current) in named_missing(p.stderr), p.stderr
    # the damaged path, and the manifest itself: rewritten, it no longer has the length its
    # manifest list records
    assert "2 files " in p.stderr and "--no-verify" in p.stderr
    assert f"{manifest} (manifest, snapshot {current}, wrong size)" in p.stderr.replace(
        "file://", ""), p.stderr
    # nothing deleted: the real file and every other file are still there (the commit only
    # added its metadata file)
    assert os.path.exists(local(victim))
    files_after = [f for f in all_files(tbl) if f != backup]
    added = sorted(set(files_after) - set(files_before))
    assert set(files_before) <= set(files_after)
    assert len(added) == 1 and added[0].endswith(".metadata.json")
    # the expiry itself was committed; with the manifest restored every retained snapshot
    # reads as before
    restore(manifest, backup)
    after = read_every_snapshot(tbl)
    assert set(after) == {current}
    assert after == {k: before[k] for k in after}


def test_entry_renamed_to_another_existing_file_blocks_expiry_deletes(tmp_path):
    """Data-loss class: a damaged entry that names another file which exists. The retained
    manifest's entry for the first data file is made to name the third one (which exists, with
    another size): existence alone passed, and expiry deleted the real first file. Verification
    compares sizes with the metadata's too (the stat is made anyway): refused, exit 5, naming the
    renamed-to file as wrong size, nothing deleted; restored, every snapshot reads."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    t = tbl["cat"].load_table("ns.t")
    for n in (1, 50, 500):
        t.append(pa.table({"id": list(range(n)), "s": ["v" * n] * n}, schema=SCHEMA))
    t = tbl["cat"].load_table("ns.t")
    first, current = t.metadata.snapshots[0], t.current_snapshot()
    victim = sorted(live_paths(tbl, first))[0]
    other = sorted(live_paths(tbl, current) - live_paths(tbl, t.metadata.snapshots[1]))[0]
    assert os.path.getsize(local(victim)) != os.path.getsize(local(other))
    manifests = current.manifests(t.io)
    assert len(manifests) == 1
    manifest = local(manifests[0].manifest_path)
    backup = manifest + ".backup"
    shutil.copy(manifest, backup)
    before = read_every_snapshot(tbl)
    with open(manifest, "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
        codec = r.metadata.get("avro.codec", "null")
    hits = [rec for rec in recs if rec["data_file"]["file_path"] == victim]
    assert len(hits) == 1
    hits[0]["data_file"]["file_path"] = other
    with open(manifest, "wb") as f:
        fastavro.writer(f, schema, recs, metadata=meta, codec=codec)
    age_all(tbl["dir"])
    files_before = [f for f in all_files(tbl) if f != backup]
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 5, p.stderr
        assert f"{local(other)} (data, snapshot {current.snapshot_id}, wrong size)" in \
            p.stderr.replace("file://", ""), p.stderr
        assert os.path.exists(local(victim))
        assert set(files_before) <= set(f for f in all_files(tbl) if f != backup)
    restore(manifest, backup)
    after = read_every_snapshot(tbl)
    assert after == {k: before[k] for k in after}


def test_data_loss_entry_renamed_to_a_same_size_sibling(tmp_path):
    """Adversary round 8, finding 2: three data files of one size added by one commit
    (add_files), the first file's entry made to name the third. The size check passes (same
    size); the manifest now names the third file as added twice by one commit, which no writer
    does: the sweep refuses (exit 5, naming it, dry run too) and `check` reports the manifest;
    the first file stays; restored, the table reads as before."""
    import pyarrow.parquet as pq
    tbl = make_table(tmp_path, appends=0)
    t = tbl["cat"].load_table("ns.t")
    files = []
    for i in range(3):
        f = tbl["dir"] / "data" / f"part-0000{i + 1}.parquet"
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": [1, 2], "s": ["same", "same"]}, schema=SCHEMA), str(f))
        files.append(f"file://{f}")
    t.add_files(files)
    t = tbl["cat"].load_table("ns.t")
    victim, other = files[0], files[2]
    assert os.path.getsize(local(victim)) == os.path.getsize(local(other))
    (m,) = t.current_snapshot().manifests(t.io)
    manifest = local(m.manifest_path)
    backup = str(tbl["wh"] / "manifest.backup")
    shutil.copy(manifest, backup)
    before = read_every_snapshot(tbl)
    flip_one_path(manifest, victim, lambda _: other)
    age_all(tbl["dir"])
    files_before = all_files(tbl)
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 5, p.stderr
        assert f"names {other} as added twice" in p.stderr, p.stderr
        assert all_files(tbl) == files_before
    p = icm(tbl, "check", "ns.t")
    assert p.returncode == 6 and f"names {other} as added twice" in p.stdout, p.stdout
    restore(manifest, backup)
    assert read_every_snapshot(tbl) == before


def same_size_files(tbl, rows):
    """One Parquet file per row list under data/ (distinct rows, one size), as file URIs."""
    import pyarrow.parquet as pq
    files = []
    for i, ids in enumerate(rows):
        f = tbl["dir"] / "data" / f"part-0000{i + 1}.parquet"
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": ids, "s": ["same"] * len(ids)}, schema=SCHEMA), str(f))
        files.append(f"file://{f}")
    assert len({os.path.getsize(local(f)) for f in files}) == 1
    return files


def current_ids(tbl):
    t = tbl["cat"].load_table("ns.t")
    return sorted(t.scan().to_arrow().column("id").to_pylist())


def manifest_naming(tbl, path):
    """The current snapshot's manifest with a live entry for `path` (its local path)."""
    t = tbl["cat"].load_table("ns.t")
    hits = [m for m in t.current_snapshot().manifests(t.io)
            if any(e.data_file.file_path == path and e.status.value in (0, 1)
                   for e in m.fetch_manifest_entry(t.io, discard_deleted=False))]
    assert len(hits) == 1, hits
    return local(hits[0].manifest_path)


def refused_everywhere(tbl, message, expire_args=None):
    """The sweep (dry run too) refuses with `message`, `check` reports it, and the expiry (when
    given its arguments) refuses after its commit, naming the damaged list (`check` says
    why): no data file, manifest or list deleted."""
    age_all(tbl["dir"])
    files_before = all_files(tbl)
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 5, p.stderr
        assert message in p.stderr, p.stderr
        assert all_files(tbl) == files_before
    p = icm(tbl, "check", "ns.t")
    assert p.returncode == 6 and message in p.stdout, p.stdout
    if expire_args is not None:
        p = icm(tbl, "expire-snapshots", "ns.t", *expire_args)
        assert p.returncode == 5, p.stderr
        assert "(manifest_list, snapshot 0, cannot be checked)" in p.stderr, p.stderr
        assert [f for f in all_files(tbl) if not f.endswith(".metadata.json")] == \
            [f for f in files_before if not f.endswith(".metadata.json")]


def rename_first_onto_third(tbl, files, message, expire_args=None, after=None):
    """One character of the manifest naming files[0] turns it into files[2] (length kept):
    refused everywhere (refused_everywhere), files[0] stays; restored, the table reads `after`."""
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: files[2], keep_length=True)
    refused_everywhere(tbl, message, expire_args)
    assert os.path.exists(local(files[0]))
    restore(manifest, backup)
    assert current_ids(tbl) == after


def test_data_loss_live_entry_renamed_to_a_file_its_snapshot_deleted(tmp_path):
    """Adversary round 9, finding 1: add_files of three same-size files, then a delete of the
    third file's rows, for which PyIceberg rewrites the manifest (the first two EXISTING, the
    third DELETED); one character of that manifest turns the first file's EXISTING entry into
    the third's name. No path is live twice and the size check passes, but the snapshot names
    the third file live, added before the commit that deleted it: the sweep and the expiry
    refuse, `check` reports it; the first file stays; restored, the table reads as before."""
    from pyiceberg.expressions import GreaterThanOrEqual
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").delete(GreaterThanOrEqual("id", 5))
    assert current_ids(tbl) == [1, 2, 3, 4]
    rename_first_onto_third(tbl, files, f"names {files[2]} live (in",
                            ("--older-than", "0s", "--retain-last", "1"), after=[1, 2, 3, 4])


def test_data_loss_entry_renamed_to_a_same_size_file_a_later_commit_added(tmp_path):
    """Adversary round 9, finding 1a: the first and second files added by one commit, the third
    by the next; one character of the first commit's manifest (carried into the second
    snapshot) turns the first file's entry into the third's name. The current snapshot names
    the third file live twice, by two commits (which Java allows for one file appended again),
    but the two entries disagree on its bounds: they cannot both describe it. The sweep refuses,
    `check` reports it; the first file stays; restored, the table reads as before."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files[:2])
    tbl["cat"].load_table("ns.t").add_files(files[2:])
    rename_first_onto_third(tbl, files, f"names {files[2]} twice with a different size, "
                            f"record count or bounds", after=[1, 2, 3, 4, 5, 6])


def test_data_loss_existing_entry_of_a_merged_manifest_renamed_to_a_sibling(tmp_path):
    """Adversary round 9, finding 1b (round 8, 2b): add_files of three same-size files, then an
    append that merges the manifests (the three EXISTING in the merged one); one character of
    the merged manifest turns the first file's entry into the third's name: two EXISTING
    entries added by one commit. The expiry of the first snapshot, which would make the first
    file a candidate, refuses; so do the sweep and `check`; the first file stays."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [9], "s": ["x"]}, schema=SCHEMA))
    rename_first_onto_third(tbl, files, f"names {files[2]} as added twice",
                            ("--older-than", "0s", "--retain-last", "1"),
                            after=[1, 2, 3, 4, 5, 6, 9])


def test_file_deleted_and_added_again_is_no_damage(tmp_path):
    """The table's own history may name one path twice: a file deleted, then added again by a
    later commit (the DELETED entry stays in the deleting commit's manifest). That is no damage:
    `check`, the sweep and the expiry go on, and nothing live goes."""
    from pyiceberg.expressions import GreaterThanOrEqual
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").delete(GreaterThanOrEqual("id", 5))
    tbl["cat"].load_table("ns.t").add_files(files[2:])
    assert current_ids(tbl) == [1, 2, 3, 4, 5, 6]
    age_all(tbl["dir"])
    before = all_files(tbl)
    p = icm(tbl, "check", "ns.t", "--all")
    assert p.returncode == 0, p.stdout + p.stderr
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert all_files(tbl) == before
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    assert p.returncode == 0, p.stderr
    assert {f for f in all_files(tbl) if "/data/" in f} == {local(f) for f in files}
    assert current_ids(tbl) == [1, 2, 3, 4, 5, 6]


def test_data_loss_entry_renamed_onto_a_file_with_the_same_description(tmp_path):
    """Adversary round 10, finding 5: on a table that keeps no column metrics the first file's
    entry is renamed onto the third file, of the same size and record count (added by a later
    commit): nothing tells the damaged entry from the third file appended a second time. A file
    live twice is refused either way (the message says both), and appending one file twice is
    refused by PyIceberg's add_files by default: the sweep refuses, `check` reports it; the
    first file stays. Appended twice for real (check_duplicate_files=False), the table is
    refused the same way."""
    tbl = make_table(tmp_path, appends=0)
    tbl["cat"].load_table("ns.t").transaction().set_properties(
        {"write.metadata.metrics.default": "none"}).commit_transaction()
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files[:2])
    tbl["cat"].load_table("ns.t").add_files(files[2:])
    rename_first_onto_third(tbl, files, f"names {files[2]} live twice", after=[1, 2, 3, 4, 5, 6])
    tbl["cat"].load_table("ns.t").add_files(files[:1], check_duplicate_files=False)
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 5 and "either one file was appended twice" in p.stderr, p.stderr


def test_data_loss_table_folder_flipped_onto_a_sibling_tables_file(tmp_path):
    """Adversary round 10, finding 1: one bit of a retained entry's table folder (`/ns/t/` ->
    `/ns/u/`) names the sibling table's file of the same name and size: it exists with the
    recorded size, so the outside-name check passed it and the real file looked unreferenced.
    A reference outside the table bearing the name of a file about to be deleted keeps that
    file whether the reference exists or not (adversary round 11, finding 4: keeping it, not
    refusing the run): the sweep keeps it with a warning naming the reference, and deletes the
    true orphan beside it."""
    tbl = make_table(tmp_path, appends=0)
    cat = tbl["cat"]
    u_dir = tbl["wh"] / "ns" / "u"
    cat.create_table("ns.u", schema=SCHEMA)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    import pyarrow.parquet as pq
    (u_dir / "data").mkdir(parents=True)
    sibling = u_dir / "data" / "part-00001.parquet"
    pq.write_table(pa.table({"id": [101, 102], "s": ["same"] * 2}, schema=SCHEMA), str(sibling))
    assert os.path.getsize(sibling) == os.path.getsize(local(files[0]))
    cat.load_table("ns.t").add_files(files)
    cat.load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], outside, keep_length=True)
    stray = tbl["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"an orphan of another size")
    age_all(tbl["dir"])
    before = all_files(tbl)
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert kept_for(p.stderr, files[0], outside(files[0]), "name"), p.stderr
    assert all_files(tbl) == [f for f in before if f != str(stray)]
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def outside_file_of_the_same_size(tbl, rows=(101, 102)):
    """A Parquet file in a plain folder of the warehouse, outside the table, with another name
    and the size of same_size_files' files of two rows."""
    import pyarrow.parquet as pq
    elsewhere = tbl["wh"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    f = elsewhere / "other-00009.parquet"
    pq.write_table(pa.table({"id": list(rows), "s": ["same"] * len(rows)}, schema=SCHEMA),
                   str(f))
    return f"file://{f}"


def test_data_loss_entry_renamed_onto_an_outside_file_of_the_same_size(tmp_path):
    """Adversary round 11, finding 1: a retained entry's whole path changed onto a file outside
    the table with another name and the same size (it exists with the size the entry records,
    and its name is no file's of the table): the sweep, dry run too, exited 0 and deleted the
    live file. A reference outside the table bearing the size of a file about to be deleted
    keeps that file (a warning names the reference); the true orphan beside it goes; restored,
    the table reads as before."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    elsewhere = outside_file_of_the_same_size(tbl)
    assert os.path.getsize(local(elsewhere)) == os.path.getsize(local(files[0]))
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: elsewhere, keep_length=True)
    stray = tbl["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"an orphan of another size")
    age_all(tbl["dir"])
    before = all_files(tbl)
    p = icm(tbl, "remove-orphan-files", "ns.t", "--dry-run")
    assert p.returncode == 0 and kept_for(p.stderr, files[0], elsewhere, "size"), p.stderr
    assert all_files(tbl) == before
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0 and kept_for(p.stderr, files[0], elsewhere, "size"), p.stderr
    assert all_files(tbl) == [f for f in before if f != str(stray)]
    assert os.path.exists(local(elsewhere))
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def expire_keeps_a_merged_entrys_file_renamed_onto(tmp_path, target, kept, rewrite=None,
                                                   copied=False):
    """The retained snapshot's merged manifest lists the first of two add_files files as
    EXISTING, and its path is changed onto `target(tbl)` (a file of the same size): the file
    becomes a candidate of the expired snapshot. The expiry, dry run and real, keeps it
    (`kept(stderr, file, target)` names the warning) while the expired snapshot's manifest list
    and manifest go; restored, the table reads as before. rewrite: as flip_one_path.
    copied: a byte-identical copy of the first file is added too (the same rows twice)."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    other = target(tbl)
    copies = []
    if copied:
        copies = [f"file://{tbl['dir'] / 'data' / 'part-copy.parquet'}"]
        shutil.copy(local(files[0]), local(copies[0]))
    tbl["cat"].load_table("ns.t").add_files(files + copies)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    t = tbl["cat"].load_table("ns.t")
    first = t.metadata.snapshots[0]
    expired = [local(first.manifest_list)] + [local(m.manifest_path)
                                              for m in first.manifests(t.io)]
    manifest = manifest_naming(tbl, files[0])
    assert manifest not in expired
    backup = str(tbl["wh"] / "manifest.backup")
    shutil.copy(manifest, backup)
    flip_one_path(manifest, files[0], lambda _: other, keep_length=True, rewrite=rewrite)
    age_all(tbl["dir"])
    before = all_files(tbl)
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 0, p.stderr
        assert kept(p.stderr, files[0], other), p.stderr
    after = [f for f in all_files(tbl) if not f.endswith(".metadata.json")]
    assert after == [f for f in before if f not in expired and not f.endswith(".metadata.json")]
    assert os.path.exists(local(files[0])) and os.path.exists(local(other))
    restore(manifest, backup)
    assert current_ids(tbl) == sorted([1, 2, 3, 4, 50] + ([1, 2] if copied else []))


def test_data_loss_merged_entry_renamed_onto_an_outside_file_of_the_same_size(tmp_path):
    """Adversary round 11, finding 1, expiry: a path changed onto an outside file of another
    name and the same size made the live file a candidate, and the expiry exited 0 and deleted
    it. Kept now, a warning naming the outside reference."""
    expire_keeps_a_merged_entrys_file_renamed_onto(
        tmp_path, outside_file_of_the_same_size,
        lambda stderr, victim, ref: kept_for(stderr, victim, ref, "size"))


def test_data_loss_merged_entry_renamed_to_a_dot_dot_spelling_of_a_missing_file(tmp_path):
    """A retained entry renamed to `data/sub/../other.parquet`, a file that does not exist:
    the guards never call a path with a `..` segment inside the table, so expiry's
    verification skipped it (not inside, and not named like a candidate), and the real file,
    a candidate of the expired snapshots, was deleted. A path whose location key (the keep
    set's identity) lies inside the table is verified as a file of the table: refused (exit 5),
    naming it; the real file stays."""
    def damage(victim):
        return victim.replace("/data/", "/data/sub/../", 1)[:-len(".parquet")] + "-0.parquet"
    tbl, victim, damaged, manifest, backup, before, current = damaged_merge_table(
        tmp_path, damage, keep_length=True)
    assert not os.path.exists(local(damaged))
    files_before = [f for f in all_files(tbl) if f != backup]
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 5, p.stderr
        assert (damaged, current) in named_missing(p.stderr), p.stderr
        assert [f for f in all_files(tbl) if f != backup and
                not f.endswith(".metadata.json")] == \
            [f for f in files_before if not f.endswith(".metadata.json")]
    restore(manifest, backup)
    after = read_every_snapshot(tbl)
    assert after == {k: before[k] for k in after}


@pytest.mark.parametrize("command", ["expire-snapshots", "remove-orphan-files"])
def test_data_loss_entry_renamed_through_a_link_and_dot_dot(tmp_path, command):
    """Adversary round 12, F1: the table holds a linked folder `data/lnk` -> `<wh>/elsewhere/
    sub`, and a retained entry is renamed to `data/lnk/../other-00009.parquet`. Its location
    key (`data/other-00009.parquet`, which does not exist) lies in the table, so it was no
    lookalike; the kernel follows the link before the `..` to `<wh>/elsewhere/other-00009.
    parquet`, a file of the entry's size, so the stat and the link-aware listing passed it, and
    the expiry and the sweep deleted the live file. Such a path, in the table by key but led
    out of it by a link, is judged as a reference outside the table too: it bears the live
    file's size, so the file is kept (a warning naming the reference, exit 0; dry run too), and
    no data file goes. (A `..` after a link that stays in the table names the kernel's file, as
    PyIceberg reads it: test_safety_links.py.)"""
    tbl = make_table(tmp_path, appends=0, merge=command == "expire-snapshots")
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    elsewhere = local(outside_file_of_the_same_size(tbl))
    other = os.path.join(os.path.dirname(elsewhere), "sub", "..", "other-00009.parquet")
    os.rename(elsewhere, os.path.normpath(other))
    os.makedirs(os.path.join(os.path.dirname(elsewhere), "sub"))
    os.symlink(os.path.join(os.path.dirname(elsewhere), "sub"), tbl["dir"] / "data" / "lnk")
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    damaged = f"file://{tbl['dir']}/data/lnk/../other-00009.parquet"
    assert os.path.getsize(local(damaged)) == os.path.getsize(local(files[0]))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: damaged, keep_length=True)
    age_all(tbl["dir"])
    data_before = [f for f in all_files(tbl) if "/data/" in f]
    args = ("--older-than", "2099-01-01") if command == "expire-snapshots" else ()
    for extra in (("--dry-run",), ()):
        p = icm(tbl, command, "ns.t", *args, *extra)
        assert p.returncode == 0, p.stderr
        assert kept_for(p.stderr, files[0], damaged, "size"), p.stderr
        assert [f for f in all_files(tbl) if "/data/" in f] == data_before
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def test_data_loss_outside_path_referenced_twice_with_two_sizes(tmp_path):
    """Adversary round 13, F1: a tagged snapshot references `<wh>/out/x.parquet` for real (an
    expired-only file of the table has its size, so it is a lookalike), and the current
    snapshot's entry for a live file is damaged onto that same path, keeping its own size.
    Expiry's verification reported each outside path once, so the second recorded size never
    reached the lookalikes, and the live file was deleted (exit 0). Each path and recorded size
    counts now: the live file is kept with a warning naming the reference; the table reads as
    before once restored."""
    import pyarrow.parquet as pq
    tbl = make_table(tmp_path, appends=0, merge=True)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    out = tbl["wh"] / "out"
    out.mkdir()
    x = out / "x.parquet"
    pq.write_table(pa.table({"id": list(range(5000, 5005)), "s": ["same"] * 5},
                           schema=SCHEMA), str(x))
    (tbl["dir"] / "data").mkdir(parents=True)
    d = tbl["dir"] / "data" / "d.parquet"
    pq.write_table(pa.table({"id": list(range(9000, 9005)), "s": ["same"] * 5},
                           schema=SCHEMA), str(d))
    assert os.path.getsize(d) == os.path.getsize(x)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    assert os.path.getsize(local(files[0])) != os.path.getsize(x)
    load().add_files([f"file://{x}"])
    load().manage_snapshots().create_tag(load().current_snapshot().snapshot_id, "keep").commit()
    load().delete("id >= 5000")
    load().add_files([f"file://{d}"])
    load().delete("id >= 9000")
    load().add_files(files)
    load().append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: f"file://{x}", keep_length=True)
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01")
    assert p.returncode == 0, p.stderr
    assert kept_for(p.stderr, files[0], f"file://{x}", "size"), p.stderr
    assert kept_for(p.stderr, f"file://{d}", f"file://{x}", "size"), p.stderr
    assert os.path.exists(local(files[0])) and os.path.exists(d) and os.path.exists(x)
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def test_data_loss_outside_path_referenced_twice_with_one_size_and_two_descriptions(tmp_path):
    """A tagged snapshot references an outside file x for real, and the current snapshot's entry
    for a live file of x's size is damaged onto x's path: two references to one outside path
    with one recorded size, describing two files: the live file is kept, the table reads once
    restored."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    x = outside_file_of_the_same_size(tbl)
    assert os.path.getsize(local(x)) == os.path.getsize(local(files[0]))
    load().add_files([x])
    load().manage_snapshots().create_tag(load().current_snapshot().snapshot_id, "keep").commit()
    load().delete("id >= 100")
    load().add_files(files)
    load().append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: x, keep_length=True)
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_for(p.stderr, files[0], x, "size"), p.stderr
    assert os.path.exists(local(files[0])) and os.path.exists(local(x))
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def test_data_loss_twin_of_a_file_added_again_with_other_metrics(tmp_path):
    """Adversary round 18, F1 (inside): a file deleted and then added again from its path under
    another metrics mode has expired entries of two descriptions (with bounds, then without).
    The retained entry carried from the second, damaged onto a leftover of the file's size,
    agreed with only one of them, and the expiry judged the file by the other and deleted it.
    Each description is judged now: kept; restored, the table reads."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    other = leftover_of_the_same_size(tbl)
    load().add_files(files)
    load().delete("id <= 2")
    load().transaction().set_properties(
        {"write.metadata.metrics.default": "none"}).commit_transaction()
    load().add_files(files[:1])
    load().append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_as_twin(p.stderr, files[0], other), p.stderr
    assert os.path.exists(local(files[0]))
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


@pytest.mark.parametrize("first,again", [("truncate(16)", "none"), ("none", "full"),
                                         ("counts", "truncate(4)")])
def test_data_loss_twin_of_a_file_added_again_with_metrics_only_its_retained_entry_has(
        tmp_path, first, again):
    """Adversary round 19, L2: a file deleted and then added again from its path under another
    metrics mode by a fast append has one entry with the new metrics, in a retained manifest
    only; none of its expired entries shares them. Damaged onto a leftover of its size, that
    entry agreed with no expired description and the expiry deleted the file. An entry that
    agrees on format, record count and partition and whose bounds the file's own footer fits
    stands for it now: kept; restored, the table reads."""
    tbl = make_table(tmp_path, appends=0)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    metrics = lambda mode: load().transaction().set_properties(  # noqa: E731
        {"write.metadata.metrics.default": mode}).commit_transaction()
    files = same_size_files(tbl, [[1, 2]])  # (no other retained file of its size)
    other = leftover_of_the_same_size(tbl)
    metrics(first)
    load().add_files(files)
    load().delete("id <= 2")
    metrics(again)
    load().add_files(files)
    load().append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    expire_keeps_a_re_added_file(tbl, files[0], other)


def expire_keeps_a_re_added_file(tbl, f, other,
                                 expire=("--older-than", "2099-01-01")):
    """Damage the retained (re-add) entry of `f` onto `other` (same size, kept length); the
    expiry (dry and real; options `expire`) keeps f as a file the entry may describe;
    restored, the table reads as before the damage (and f's rows are among them)."""
    rows = lambda: sorted(tbl["cat"].load_table("ns.t").scan().to_arrow()  # noqa: E731
                          .column(0).to_pylist())
    before = rows()
    manifest, backup = backed_up_manifest(tbl, f)
    flip_one_path(manifest, f, lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", *expire, *extra)
        assert p.returncode == 0, p.stderr
        assert any(ln.startswith("warning:") and f in ln and f"references {other}" in ln
                   and "whose entry describes this file's content" in ln and "kept" in ln
                   for ln in p.stderr.splitlines()), p.stderr
    assert os.path.exists(local(f)) and os.path.exists(local(other))
    restore(manifest, backup)
    assert rows() == before


def copy_with_one_byte_changed(f):
    """A copy of the Parquet file `f` beside it (a leftover of its size) with one byte of its
    first column chunk changed: other bytes, the same footer."""
    other = local(f)[:-len(".parquet")] + "-leftover.parquet"
    data = bytearray(open(local(f), "rb").read())
    data[4] ^= 0x01
    open(other, "wb").write(bytes(data))
    return f"file://{other}"


def re_added_after_two_columns_swapped_names(tmp_path, tag=None):
    """A table of columns a (id 1) and b (id 2): a file f appended (its snapshot tagged `tag`
    when given), deleted, the two columns' names swapped (three renames), f added again with
    add_files. PyIceberg maps the footer's statistics to ids by the table's names, so the
    re-add's entry holds each column's bounds under the other's id. Returns (tbl, f)."""
    import pyarrow.parquet as pq
    schema = pa.schema([pa.field("a", pa.int64(), metadata={"PARQUET:field_id": "1"}),
                        pa.field("b", pa.int64(), metadata={"PARQUET:field_id": "2"})])
    tbl = make_table(tmp_path, appends=0, schema=schema)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    load().append(pa.table({"a": list(range(1, 11)), "b": list(range(1001, 1011))},
                           schema=schema))
    f = [t.file.file_path for t in load().scan().plan_files()][0]
    if tag:
        load().manage_snapshots().create_tag(load().current_snapshot().snapshot_id,
                                             tag).commit()
    load().append(pa.table({"a": list(range(11, 21)), "b": list(range(2011, 2021))},
                           schema=schema))
    load().delete("a <= 10")
    swap_names(tbl)
    assert pq.read_metadata(local(f)).schema.column(0).name == "a"
    load().add_files([f])
    return tbl, f


def test_data_loss_twin_of_a_file_added_again_after_two_columns_swapped_names(tmp_path):
    """Adversary round 20, D1 (expiry): re_added_after_two_columns_swapped_names. By its own
    ids the file did not fit its re-add's entry, and damaged onto a leftover of its size, the
    entry let the expiry delete it. Its columns are also matched by name under the adding
    snapshot's schema now: kept; restored, the table reads."""
    tbl, f = re_added_after_two_columns_swapped_names(tmp_path)
    expire_keeps_a_re_added_file(tbl, f, copy_with_one_byte_changed(f))


def swap_names(tbl):
    """Swap the names of columns a and b (three renames)."""
    for old, new in (("a", "tmp"), ("b", "a"), ("tmp", "b")):
        with tbl["cat"].load_table("ns.t").update_schema() as u:
            u.rename_column(old, new)


def swapped_back_and_appended(tmp_path, bases, tag=None):
    """re_added_after_two_columns_swapped_names (tag), the names swapped back (PyIceberg
    reuses the first schema's id), then one append of ten rows per base in `bases` (a from
    base, b from base + 3000). Returns (tbl, f)."""
    tbl, f = re_added_after_two_columns_swapped_names(tmp_path, tag=tag)
    swap_names(tbl)
    schema = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.int64())])
    for base in bases:
        tbl["cat"].load_table("ns.t").append(pa.table(
            {"a": list(range(base, base + 10)), "b": list(range(base + 3000, base + 3010))},
            schema=schema))
    return tbl, f


LEFTOVER_KINDS = ["one-byte-changed", "no-ids", "no-statistics", "other-ids", "a-null",
                  "a-without-statistics", "a-missing"]


@pytest.mark.parametrize("kind", [None] + LEFTOVER_KINDS[1:])
@pytest.mark.parametrize("command", ["expire", "sweep"])
def test_data_loss_file_added_again_by_a_schema_the_expiry_removed(tmp_path, command, kind):
    """Adversary round 21, D2: re_added_after_two_columns_swapped_names, then the names swapped
    back (PyIceberg reuses the first schema's id) and one more append, so that
    `--clean-expired-metadata` removes the schema add_files mapped the re-add's statistics by,
    with the snapshot that added it. Expiry judged the file against the metadata after the
    expiry, where that schema is gone, and deleted it; the sweep, whose adding schema is gone
    for good, did too. Expiry now reads the schemas of the metadata before it; the sweep
    judges a file with ids whose adding schema is gone by its row count, the file the entry
    names by its row count too: kept; restored, the table reads. Round 23, D1: a leftover
    sharing no compared column with the entry (`kind`) "fitted" it on its row count alone."""
    tbl, f = swapped_back_and_appended(tmp_path, (31,))
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    expire = ("expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1",
              "--clean-expired-metadata")
    if command == "expire":
        other = leftover_sharing_no_compared_column(f, kind or "one-byte-changed")
        expire_keeps_a_re_added_file(tbl, f, other, expire[2:])
        assert len(load().metadata.schemas) == 1
        return
    age_all(tbl["dir"])
    p = icm(tbl, *expire)
    assert p.returncode == 0, p.stderr
    assert len(load().metadata.schemas) == 1
    sweep_keeps_a_file_renamed_onto_a_non_parquet_leftover(tbl, f, kind)


def leftover_sharing_no_compared_column(f, kind):
    """A Parquet leftover beside `f` with its size and row count and other values, no column
    of which is compared with f's entry's bounds: `one-byte-changed` (f's footer, other
    bytes: it is compared, and does not fit the swapped bounds), `no-ids` (columns x and y
    without field ids), `no-statistics` (f's ids, written without statistics) or `other-ids`
    (ids 7 and 8); or `other-values` (f's ids and statistics, values no bound of f's entry
    holds under any mapping of its columns); or one whose column b (id 2) holds f's a, so
    that only the swapped entry's bound of id 2 is compared, its column a null in every row
    (`a-null`), written without statistics (`a-without-statistics`) or none at all, a column
    z of id 9 in its place (`a-missing`). Zero bytes before the footer pad it to f's size."""
    import struct
    import pyarrow.parquet as pq
    if kind == "one-byte-changed":
        return copy_with_one_byte_changed(f)
    other = local(f)[:-len(".parquet")] + "-leftover.parquet"
    ids = {"no-ids": None, "no-statistics": ("1", "2"), "other-ids": ("7", "8"),
           "other-values": ("1", "2"), "a-null": ("1", "2"),
           "a-without-statistics": ("1", "2"), "a-missing": ("9", "2")}[kind]
    names = ("x", "y") if ids is None else ("z" if kind == "a-missing" else "a", "b")
    schema = pa.schema([pa.field(n, pa.int64(),
                                 metadata=None if ids is None else {"PARQUET:field_id": i})
                        for n, i in zip(names, ids or (None, None))])
    columns = [list(range(500, 510)), list(range(700, 710))]
    if kind.startswith("a-"):  # (b within the entry's bound for id 2: f's a, 1..10)
        columns = [[None] * 10 if kind == "a-null" else list(range(500, 510)),
                   list(range(1, 11))]
    statistics = {"no-statistics": False, "a-without-statistics": ["b"]}.get(kind, True)
    pq.write_table(pa.table(columns, schema=schema), other, write_statistics=statistics,
                   store_schema=False)
    data = open(other, "rb").read()
    pad = os.path.getsize(local(f)) - len(data)
    assert pad >= 0, (kind, len(data))
    footer = len(data) - 8 - struct.unpack("<I", data[-8:-4])[0]
    open(other, "wb").write(data[:footer] + b"\0" * pad + data[footer:])
    assert pq.ParquetFile(other).metadata.num_rows == 10
    return f"file://{other}"


@pytest.mark.parametrize("kind", LEFTOVER_KINDS)
def test_data_loss_file_added_again_by_a_schema_an_earlier_expiry_removed(tmp_path, kind):
    """Adversary round 22, D1: as test_data_loss_file_added_again_by_a_schema_the_expiry_
    removed, but the snapshot that added the file again and its schema went in an earlier
    expiry, while a tag on the file's first snapshot kept the file live; the tag is removed
    and the entry damaged before the second. No metadata left says how the re-add's
    statistics were mapped: the file's row count describes it, and the file the entry names
    fits it in no way left: kept; restored, the table reads. Round 23, D1: a leftover that
    shares no compared column with the entry (`kind`, leftover_sharing_no_compared_column)
    "fitted" it on its row count alone, and the file went; round 24, D1: so did one whose
    column of a bounded id states no value (a-null, a-without-statistics); round 25, D1: or
    that has no such column (a-missing)."""
    tbl, f = swapped_back_and_appended(tmp_path, (31, 41), tag="old")
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    expire = ("--older-than", "2099-01-01", "--retain-last", "1", "--clean-expired-metadata")
    age_all(tbl["dir"])
    p = icm(tbl, "expire-snapshots", "ns.t", *expire)
    assert p.returncode == 0, p.stderr
    assert len(load().metadata.schemas) == 1 and os.path.exists(local(f))
    load().manage_snapshots().remove_tag("old").commit()
    expire_keeps_a_re_added_file(tbl, f, leftover_sharing_no_compared_column(f, kind), expire)


def re_added_by_a_schema_since_removed(tmp_path):
    """swapped_back_and_appended with a file g of f's size and row count (other values: a
    21..30, b 3021..3030), and an expiry with --retain-last 1 --clean-expired-metadata that
    removes the snapshot that added f again and the schema it mapped f's statistics by.
    Returns (tbl, f, g, the expiry's options)."""
    tbl, f = swapped_back_and_appended(tmp_path, (21,))
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    g = [t.file.file_path for t in load().scan().plan_files()
         if t.file.lower_bounds.get(1) == (21).to_bytes(8, "little", signed=True)][0]
    assert os.path.getsize(local(g)) == os.path.getsize(local(f))
    expire = ("--older-than", "2099-01-01", "--retain-last", "1", "--clean-expired-metadata")
    age_all(tbl["dir"])
    p = icm(tbl, "expire-snapshots", "ns.t", *expire)
    assert p.returncode == 0, p.stderr
    assert len(load().metadata.schemas) == 1 and len(load().metadata.snapshots) == 1
    return tbl, f, g, expire


def test_expiry_deletes_a_dead_file_beside_a_re_add_whose_schema_is_gone(tmp_path):
    """Adversary round 23, F1 (a false hold for ever): re_added_by_a_schema_since_removed, then
    g deleted and its snapshot expired. f's entry (bounds swapped, its schema gone) fits f in
    no way left, and g, of f's size and count, was described by its row count alone: held on
    every run while f lived. g's values lie within f's bounds under no mapping of its
    columns now: deleted; f stays and the table reads."""
    tbl, f, g, expire = re_added_by_a_schema_since_removed(tmp_path)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    load().delete("a >= 21 and a <= 30")
    load().append(pa.table({"a": [41], "b": [4041]},
                           schema=pa.schema([("a", pa.int64()), ("b", pa.int64())])))
    age_all(tbl["dir"])
    p = icm(tbl, "expire-snapshots", "ns.t", *expire)
    assert p.returncode == 0, p.stderr
    assert "warning:" not in p.stderr.replace("warning: the cutoff", ""), p.stderr
    assert not os.path.exists(local(g)) and os.path.exists(local(f))
    assert sorted(load().scan().to_arrow().column("a").to_pylist()) == list(range(1, 21)) + [41]


def test_sweep_deletes_an_orphan_beside_a_re_add_whose_schema_is_gone(tmp_path):
    """Adversary round 23, F1 (sweep): re_added_by_a_schema_since_removed, and an orphan of f's
    size and row count with f's field ids whose values no bound of f's entry holds under any
    mapping of its columns. It was described by its row count alone and kept on every
    sweep: deleted now; f and g stay and the table reads."""
    tbl, f, g, _ = re_added_by_a_schema_since_removed(tmp_path)
    orphan = leftover_sharing_no_compared_column(f, "other-values")
    age_all(tbl["dir"])
    rows = lambda: sorted(tbl["cat"].load_table("ns.t").scan().to_arrow()  # noqa: E731
                          .column("a").to_pylist())
    before = rows()
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert "not deleted" not in p.stderr, p.stderr
    assert not os.path.exists(local(orphan))
    assert os.path.exists(local(f)) and os.path.exists(local(g))
    assert rows() == before


def sweep_keeps_a_file_renamed_onto_a_non_parquet_leftover(tbl, f, kind=None):
    """Damage the live entry of `f` onto a leftover of its size that is no Parquet file (or
    one of leftover_sharing_no_compared_column's `kind`); the sweep (dry and real) keeps f,
    the entry describing it and not the leftover; restored, the table reads as before."""
    rows = lambda: sorted(tbl["cat"].load_table("ns.t").scan().to_arrow()  # noqa: E731
                          .column(0).to_pylist())
    before = rows()
    if kind:
        other = leftover_sharing_no_compared_column(f, kind)
    else:
        other = local(f)[:-len(".parquet")] + "-leftover.parquet"
        with open(other, "wb") as out:
            out.write(b"\0" * os.path.getsize(local(f)))
        other = f"file://{other}"
    manifest, backup = backed_up_manifest(tbl, f)
    flip_one_path(manifest, f, lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_as_described(p.stderr, f, other), p.stderr
    assert os.path.exists(local(f)) and os.path.exists(local(other))
    restore(manifest, backup)
    assert rows() == before


def test_data_loss_sweep_file_with_ids_added_again_after_two_columns_swapped_names(tmp_path):
    """Adversary round 20, D1 (sweep): re_added_after_two_columns_swapped_names, the history
    expired, then the re-add's entry damaged onto a leftover of the file's size that is no
    Parquet file. The file is the sweep's candidate; its footer did not fit the entry by its
    ids, so the sweep deleted it. By name under the adding snapshot's schema it fits, and the
    file the entry names does not: kept; restored, the table reads."""
    tbl, f = re_added_after_two_columns_swapped_names(tmp_path)
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1")
    assert p.returncode == 0, p.stderr
    sweep_keeps_a_file_renamed_onto_a_non_parquet_leftover(tbl, f)


@pytest.mark.parametrize("own_null", [False, True], ids=["own-tuple", "own-tuple-with-null"])
@pytest.mark.parametrize("mode", ["none", "counts"])
def test_data_loss_twin_of_a_file_added_again_to_a_partitioned_table_without_bounds(
        tmp_path, mode, own_null):
    """Adversary round 20, D2: a partitioned table (identity of `s`); a file deleted, then added
    again with add_files under metrics none or counts. PyIceberg infers an added file's
    partition from its statistics, so with none kept the entry records a null partition, and
    the expiry took the other tuple for another file's: damaged onto a leftover of its size,
    the entry let the file go. A tuple with a null value no longer tells a re-add apart:
    kept. own-tuple-with-null (round 21, D1): the table is also partitioned by r, which the
    file holds null in every row, so its own tuple ('x', null) has a null too."""
    from pyiceberg.partitioning import PartitionSpec, PartitionField
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField, LongType, StringType
    ice = Schema(NestedField(1, "id", LongType(), required=False),
                 NestedField(2, "s", StringType(), required=False),
                 NestedField(3, "r", StringType(), required=False))
    fields = [PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                             name="s")]
    if own_null:
        fields.append(PartitionField(source_id=3, field_id=1001, transform=IdentityTransform(),
                                     name="r"))
    tbl = make_table(tmp_path, appends=0, schema=ice, partition_spec=PartitionSpec(*fields))
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    rows = pa.schema([("id", pa.int64()), ("s", pa.string()), ("r", pa.string())])
    load().append(pa.table({"id": [1, 2], "s": ["x", "x"], "r": [None, None]}, schema=rows))
    f = [t.file.file_path for t in load().scan().plan_files()][0]
    load().append(pa.table({"id": [3], "s": ["y"], "r": ["z"]}, schema=rows))
    load().delete("id <= 2")
    load().transaction().set_properties(
        {"write.metadata.metrics.default": mode}).commit_transaction()
    load().add_files([f])
    other = copy_with_one_byte_changed(f)
    expire_keeps_a_re_added_file(tbl, f, other)


def kept_as_twin(stderr, victim, reference):
    """Whether a warning says `victim` is kept because `reference`, a file of the table that a
    retained entry agreeing with the victim's own entry names, has other bytes."""
    return any(ln.startswith("warning:") and victim in ln and f"references {reference}" in ln
               and "a file of the table whose entry agrees with this file's" in ln
               and "may still need this one; kept" in ln
               for ln in stderr.splitlines())


def leftover_of_the_same_size(tbl, rows=(101, 102)):
    """An unreferenced Parquet file in the table's data folder (a failed write's leftover) with
    the size of same_size_files' two-row files and other rows."""
    import pyarrow.parquet as pq
    f = tbl["dir"] / "data" / "leftover-00009.parquet"
    pq.write_table(pa.table({"id": list(rows), "s": ["same"] * len(rows)}, schema=SCHEMA),
                   str(f))
    return f"file://{f}"


def test_data_loss_merged_entry_renamed_onto_an_unreferenced_file_of_the_same_size(tmp_path):
    """Adversary round 12, F2, expiry: a path changed onto an unreferenced leftover of the
    table with the live file's size passed every stat, and the expiry exited 0 and deleted the
    live file. Its own (expired) entry agrees with the damaged one on size, record count,
    format and bounds while the leftover's bytes differ: kept now, a warning naming the
    leftover."""
    expire_keeps_a_merged_entrys_file_renamed_onto(tmp_path, leftover_of_the_same_size,
                                                   kept_as_twin)


def kept_as_described(stderr, victim, reference):
    """Whether a sweep's warning says `victim` is kept because a retained entry naming
    `reference` describes the victim's footer and not that file's."""
    return any(ln.startswith("warning:") and victim in ln and f"references {reference}" in ln
               and "whose entry describes this file" in ln
               and "may still need this one; kept" in ln
               for ln in stderr.splitlines())


def sweep_with_an_entry_renamed_onto(tmp_path, rows, expect_kept, bounds="full"):
    """A fast-append table: add_files of two Parquet files of one size, then an append; the
    manifest listing the first is rewritten with its path changed onto a leftover of the same
    size holding `rows` (an unreferenced file of the table). The first file is then referenced
    by nothing and old: the sweep's candidate. bounds: "full", or "none" (the manifest keeps
    no bounds: `write.metadata.metrics.default=none`)."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    other = leftover_of_the_same_size(tbl, rows)
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    manifest, backup = backed_up_manifest(tbl, files[0])

    def drop_bounds(records):
        for rec in records:
            rec["data_file"]["lower_bounds"] = rec["data_file"]["upper_bounds"] = None
    flip_one_path(manifest, files[0], lambda _: other, keep_length=True,
                  rewrite=drop_bounds if bounds == "none" else None)
    age_all(tbl["dir"])
    data_before = [f for f in all_files(tbl) if "/data/" in f]
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_as_described(p.stderr, files[0], other) == expect_kept, p.stderr
    gone = [] if expect_kept else [local(files[0])]
    assert [f for f in all_files(tbl) if "/data/" in f] == \
        [f for f in data_before if f not in gone]
    if expect_kept:
        restore(manifest, backup)
        assert current_ids(tbl) == [1, 2, 3, 4, 50]


def test_data_loss_sweep_entry_renamed_onto_an_unreferenced_file_of_the_same_size(tmp_path):
    """Adversary round 12, F2, the sweep's side: the entry renamed onto a leftover of the live
    file's size passed every check and the sweep deleted the live file. Its footer (2 rows,
    ids 1 and 2) fits the damaged entry's count and bounds, and the leftover's (ids 101 and
    102) does not: kept, a warning naming the leftover; restored, the table reads."""
    sweep_with_an_entry_renamed_onto(tmp_path, (101, 102), expect_kept=True)


def test_data_loss_sweep_entry_without_bounds_renamed_onto_a_file_of_another_size(tmp_path):
    """The same in a table whose entries keep no bounds, onto a leftover of three rows and
    another size. The sweep looks for referenced files, not at their sizes, so the orphan
    went; an entry whose file has another size than it records describes no file there, and
    the orphan has the recorded size: kept, whatever its format."""
    sweep_with_an_entry_renamed_onto(tmp_path, (101, 102, 103), expect_kept=True,
                                     bounds="none")


def test_sweep_deletes_an_orphan_the_entry_of_its_lookalike_fits_too(tmp_path):
    """No hold without evidence: a leftover whose rows lie within the entry's bounds, with its
    row count, fits the entry as well as the live file does. The entry then describes the file
    it names (a reader gets rows the metadata promised), and the orphan goes, as before."""
    sweep_with_an_entry_renamed_onto(tmp_path, (2, 1), expect_kept=False)


@pytest.mark.parametrize("adder", ["retained", "expired", "cleaned"])
def test_data_loss_sweep_file_without_field_ids_after_two_columns_swapped_names(tmp_path,
                                                                                adder):
    """Adversary round 14, F8: files written without field ids (add_files) are matched to an
    entry's bounds by column name. After two columns of one type swap names, the current
    schema maps the orphan's `id` column onto the entry's bounds of the other column, so the
    damaged entry no longer described the orphan and the sweep deleted the live file. Matched
    under the schema of the snapshot that added the file (`retained`), or under each of the
    table's schemas when that snapshot is gone (`expired`): kept. Round 18, F2 (`cleaned`): the
    expiry also removed the schemas no retained snapshot uses, the one the bounds were written
    with among them; the columns matched by name then say nothing, and the orphan the entry
    describes by its row count is kept. Restored, the table reads."""
    from pyiceberg.types import LongType
    import pyarrow.parquet as pq
    three = pa.schema([("id", pa.int64()), ("s", pa.string()), ("n", pa.int64())])
    tbl = make_table(tmp_path, appends=0)
    load = lambda: tbl["cat"].load_table("ns.t")  # noqa: E731
    with load().update_schema() as u:
        u.add_column("n", LongType())

    def write(name, ids, ns):
        f = tbl["dir"] / "data" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": ids, "s": ["same"] * len(ids), "n": ns}, schema=three),
                       str(f))
        return f"file://{f}"
    files = [write("part-00001.parquet", [1, 2], [500, 600]),
             write("part-00002.parquet", [3, 4], [700, 800])]
    other = write("leftover-00009.parquet", [101, 102], [900, 901])
    assert len({os.path.getsize(local(f)) for f in files + [other]}) == 1
    load().add_files(files)
    load().append(pa.table({"id": [50], "s": ["x"], "n": [5]}, schema=three))
    with load().update_schema() as u:  # the two long columns swap names
        u.rename_column("id", "tmp")
    with load().update_schema() as u:
        u.rename_column("n", "id")
    with load().update_schema() as u:
        u.rename_column("tmp", "n")
    load().append(pa.table({"id": [6], "s": ["y"], "n": [60]}, schema=three))
    if adder in ("expired", "cleaned"):
        age_all(tbl["dir"])
        clean = ("--clean-expired-metadata",) if adder == "cleaned" else ()
        p = icm(tbl, "expire-snapshots", "ns.t", "--retain-last", "1",
                "--older-than", "2099-01-01", *clean)
        assert p.returncode == 0, p.stderr
        assert len(list(load().snapshots())) == 1
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    sweep_keeps(tbl, files[0], other)
    restore(manifest, backup)
    assert load().scan().to_arrow().num_rows == 6  # (every file there to read)


def sweep_keeps(tbl, victim, other, *extra):
    """The sweep, dry run and real (with `extra`), exits 0 and keeps `victim` as described by
    the entry naming `other`."""
    for dry in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra, *dry)
        assert p.returncode == 0, p.stderr
        assert kept_as_described(p.stderr, victim, other), p.stderr
    assert os.path.exists(local(victim))


def test_data_loss_sweep_damaged_entry_among_many_of_one_size(tmp_path):
    """Adversary round 14, F2: the sweep compared an orphan with the first 16 entries of its
    size by path, and a table of 17 equal-size files lost the live file when the damaged
    entry's new name sorted after them. Every entry of its size is compared now."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[2 * i + 1, 2 * i + 2] for i in range(9)])
    more = []
    for i in range(9, 17):
        f = tbl["dir"] / "data" / f"part-1{i:04d}.parquet"
        import pyarrow.parquet as pq
        pq.write_table(pa.table({"id": [2 * i + 1, 2 * i + 2], "s": ["same"] * 2},
                                schema=SCHEMA), str(f))
        more.append(f"file://{f}")
    assert len({os.path.getsize(local(f)) for f in files + more}) == 1
    other = f"file://{tbl['dir'] / 'data' / 'zz-leftover.parquet'}"
    shutil.copy(local(leftover_of_the_same_size(tbl)), local(other))
    os.remove(tbl["dir"] / "data" / "leftover-00009.parquet")
    tbl["cat"].load_table("ns.t").add_files(files + more)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    flip_one_path(manifest_naming(tbl, files[0]), files[0], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    sweep_keeps(tbl, files[0], other)


def test_data_loss_sweep_damaged_entry_behind_entries_carried_forward(tmp_path):
    """Adversary round 14, F3: the entries kept per size counted one entry again for every
    merged manifest that carried it forward, so nine files added one commit each filled the
    room and hid the damaged entry. Each entry counts once now."""
    tbl = make_table(tmp_path, appends=0, merge=True)
    files = same_size_files(tbl, [[2 * i + 1, 2 * i + 2] for i in range(9)])
    other = leftover_of_the_same_size(tbl, (901, 902))
    for f in files:
        tbl["cat"].load_table("ns.t").add_files([f])
    flip_one_path(manifest_naming(tbl, files[-1]), files[-1], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    sweep_keeps(tbl, files[-1], other)


@pytest.mark.parametrize("size", ["", "-1"])
def test_data_loss_sweep_file_list_without_sizes(tmp_path, size):
    """Adversary round 14, F4: a --file-list row may leave the size out (empty or -1); such a
    candidate skipped the check and the live file was deleted. Its size is looked up."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    other = leftover_of_the_same_size(tbl)
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    flip_one_path(manifest_naming(tbl, files[0]), files[0], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    listing = tmp_path / "list.tsv"
    with open(listing, "w") as out:
        for f in all_files(tbl):
            out.write(f"file://{f}\t{size}\t{int(os.stat(f).st_mtime * 1000)}\n")
    sweep_keeps(tbl, files[0], other, "--file-list", str(listing))


def test_sweep_reads_a_bounded_number_of_footers(tmp_path):
    """The sweep's twin check looks at files one by one: at most 1,024 a run. 1,100 orphans of
    a referenced file's size: the entry's own file (a stat) and the first 1,023 orphans'
    footers are read (none is a Parquet file the entry describes), the other 77 are not, a
    warning says so, and all 1,100 go as before."""
    tbl = make_table(tmp_path, appends=1)
    (live,) = live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot())
    size = os.path.getsize(local(live))
    orphans = []
    for i in range(1100):
        o = tbl["dir"] / "data" / f"junk-{i:04d}.parquet"
        o.write_bytes(bytes([i % 251]) * size)
        orphans.append(str(o))
    age_all(tbl["dir"])
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert "77 orphans that have the size of a data file the snapshots reference were not " \
        "compared with its entry" in p.stderr, p.stderr
    assert not any(os.path.exists(o) for o in orphans) and os.path.exists(local(live))


def test_data_loss_merged_entry_renamed_with_its_bounds_in_another_order(tmp_path):
    """Adversary round 13, F1: the same damage, in a manifest whose writer lists each entry's
    bounds maps in another key order (maps have none; Java rewrites them from a hash map).
    The bounds were compared as bytes, the entries looked like two files', and the expiry
    deleted the live file. Compared as sets of pairs now: kept, as above."""
    def reverse_bounds(records):
        for rec in records:
            for k in ("lower_bounds", "upper_bounds"):
                pairs = rec["data_file"].get(k)
                assert pairs is None or len(pairs) == 2, pairs  # both columns (id, s) bounded
                if pairs:
                    rec["data_file"][k] = list(reversed(pairs))
    expire_keeps_a_merged_entrys_file_renamed_onto(tmp_path, leftover_of_the_same_size,
                                                   kept_as_twin, rewrite=reverse_bounds)


def test_data_loss_merged_entry_renamed_beside_an_identical_copy(tmp_path):
    """Adversary round 13, F2: the same damage in a table that also holds a byte-identical
    copy of the live file (the same rows added twice). The copy's entry agrees and has its
    bytes, which settled it, and the expiry deleted the live file the damaged entry stood for.
    Any agreeing entry naming other bytes keeps it now, naming the leftover."""
    expire_keeps_a_merged_entrys_file_renamed_onto(tmp_path, leftover_of_the_same_size,
                                                   kept_as_twin, copied=True)


def test_expiry_deletes_a_removed_file_whose_bytes_a_retained_file_has(tmp_path):
    """The twin rule keeps no file whose content the table still has: the same rows appended
    twice give two byte-identical files; after the first is deleted by a later commit, expiry
    deletes it although the retained second file has its size and row count."""
    tbl = make_table(tmp_path, appends=0)
    rows = pa.table({"id": [7, 8, 9], "s": ["a", "b", "c"]}, schema=SCHEMA)
    tbl["cat"].load_table("ns.t").append(rows)
    first = live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot())
    tbl["cat"].load_table("ns.t").overwrite(rows)
    t = tbl["cat"].load_table("ns.t")
    second = live_paths(tbl, t.current_snapshot())
    (a,), (b,) = first, second
    assert a != b and open(local(a), "rb").read() == open(local(b), "rb").read()
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1")
    assert p.returncode == 0 and "not deleted" not in p.stderr, p.stderr
    assert not os.path.exists(local(a)) and os.path.exists(local(b))
    assert current_ids(tbl) == [7, 8, 9]


def test_expiry_deletes_a_replaced_file_of_the_same_size_and_row_count(tmp_path):
    """The twin rule keeps no file its entry tells apart: one-row files of one size (an append
    replaced by an overwrite with other values, as four engine-written fixtures have) differ in
    their bounds, so the replaced file is deleted, with no warning."""
    tbl = make_table(tmp_path, appends=0)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [0], "s": ["a"]}, schema=SCHEMA))
    (a,) = live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot())
    tbl["cat"].load_table("ns.t").overwrite(pa.table({"id": [4], "s": ["b"]}, schema=SCHEMA))
    (b,) = live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot())
    assert a != b and os.path.getsize(local(a)) == os.path.getsize(local(b))
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1")
    assert p.returncode == 0 and "not deleted" not in p.stderr, p.stderr
    assert not os.path.exists(local(a)) and os.path.exists(local(b))
    assert current_ids(tbl) == [4]


def test_data_loss_twin_of_a_file_added_again(tmp_path):
    """Adversary round 14, F1: files added (A), deleted whole (B) and added again (C), as an
    accidental delete is undone; the retained entry (added by C) is renamed onto a leftover of
    its size. The file's own expired entry says "added by A", so a rule requiring the adding
    snapshots to agree let the expiry delete the live file. The adding snapshot is not
    compared: kept, a warning naming the leftover; restored, the table reads as before."""
    tbl = make_table(tmp_path, appends=0)
    files = same_size_files(tbl, [[1, 2], [3, 4]])
    other = leftover_of_the_same_size(tbl)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").delete("id < 10")
    tbl["cat"].load_table("ns.t").add_files(files)
    manifest, backup = backed_up_manifest(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: other, keep_length=True)
    age_all(tbl["dir"])
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last",
                "1", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_as_twin(p.stderr, files[0], other), p.stderr
    assert os.path.exists(local(files[0])) and os.path.exists(local(files[1]))
    restore(manifest, backup)
    assert current_ids(tbl) == [1, 2, 3, 4, 50]


def expire_keeps_live_file_renamed_onto_a_leftover(tbl, live):
    """The current snapshot's entry of `live` renamed onto a leftover of its size with other
    bytes (its first byte after the magic flipped); the expiry of all but the last snapshot,
    dry run and real, keeps `live` with a warning naming the leftover. The manifest is then
    restored."""
    manifest, backup = backed_up_manifest(tbl, live)
    leftover = flip_one_path(manifest, live, keep_length=True)
    with open(local(live), "rb") as f:
        body = bytearray(f.read())
    body[4] ^= 0xFF
    with open(local(leftover), "wb") as f:
        f.write(body)
    age_all(tbl["dir"])
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last",
                "1", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_as_twin(p.stderr, live, leftover), p.stderr
    assert os.path.exists(local(live))
    restore(manifest, backup)


def partitioned_table(tmp_path, metrics):
    """A table of SCHEMA partitioned by identity(s), metrics mode `metrics` (`counts`, `none`:
    entries without bounds), whose one append writes a file of rows 1, 2, 3 in each of the
    partitions s=a and s=b: one commit's two files, of one size and record count. Returns the
    table and the two files (a's first)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType
    tbl = make_table(tmp_path, appends=0)
    tbl["cat"].drop_table("ns.t")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "s", StringType(), required=False))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "s"))
    t = tbl["cat"].create_table("ns.t", schema=schema, partition_spec=spec,
                                properties={"write.metadata.metrics.default": metrics})
    t.append(pa.table({"id": [1, 2, 3, 1, 2, 3], "s": ["a"] * 3 + ["b"] * 3}, schema=SCHEMA))
    files = sorted(live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot()))
    assert len(files) == 2 and "/s=a/" in files[0] and "/s=b/" in files[1], files
    assert os.path.getsize(local(files[0])) == os.path.getsize(local(files[1]))
    return tbl, files


@pytest.mark.parametrize("metrics", ["counts", "none"])
def test_expiry_deletes_a_dropped_partitions_file_whose_sibling_lies_in_another(tmp_path,
                                                                                metrics):
    """Adversary round 14, F5 (a false hold): the files one commit writes into two partitions
    agree on size, record count, format and (without metrics) bounds, so the file of a dropped
    partition was kept, every run, as a "twin" of its sibling. A damaged path leaves the
    entry's partition tuple as it was: the sibling's entry (s=b) cannot stand for the dropped
    file (s=a). Deleted, with no warning."""
    tbl, (a, b) = partitioned_table(tmp_path, metrics)
    tbl["cat"].load_table("ns.t").delete("s = 'a'")
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1")
    assert p.returncode == 0 and "not deleted" not in p.stderr, p.stderr
    assert not os.path.exists(local(a)) and os.path.exists(local(b))
    assert current_ids(tbl) == [1, 2, 3]


def test_data_loss_twin_in_a_partitioned_table(tmp_path):
    """The partition tuple tells two partitions' files apart, never a file from its own
    damaged entry: the retained entry of s=a's file (rewritten EXISTING when s=b was dropped)
    is renamed onto a leftover of its size in s=a with other bytes. Its expired entry and the
    damaged one agree on the tuple too: kept, a warning naming the leftover; restored, the
    table reads as before."""
    tbl, (a, b) = partitioned_table(tmp_path, "counts")
    tbl["cat"].load_table("ns.t").delete("s = 'b'")
    expire_keeps_live_file_renamed_onto_a_leftover(tbl, a)
    assert not os.path.exists(local(b))
    assert current_ids(tbl) == [1, 2, 3]


@pytest.mark.parametrize("rewrite", ["delete", "merge"])
def test_data_loss_twin_whose_double_partition_value_was_carried_rounded(tmp_path, rewrite):
    """Adversary round 16, F1: PyIceberg 0.12 writes a double partition value it carries into
    a rewritten manifest rounded to float32 (1.1 becomes 1.100000023841858), so one file's
    expired and retained entries disagree on the tuple. Comparing real values told the damaged
    retained entry apart and the live file was deleted (caeebd1). Float and double partition
    values are not compared: kept, a warning naming the leftover; restored, the table reads as
    before."""
    from pyiceberg.expressions import EqualTo
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField
    tbl = make_table(tmp_path, appends=0)
    tbl["cat"].drop_table("ns.t")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "p", DoubleType(), required=False))
    props = {"format-version": "2"}
    if rewrite == "merge":
        props.update({"commit.manifest-merge.enabled": "true",
                      "commit.manifest.min-count-to-merge": "2"})
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p"))
    t = tbl["cat"].create_table("ns.t", schema=schema, properties=props, partition_spec=spec)
    rows = pa.schema([("id", pa.int64()), ("p", pa.float64())])
    t.append(pa.table({"id": [1, 2], "p": [1.1, -2.5]}, schema=rows))
    (f,) = [p for p in live_paths(tbl, tbl["cat"].load_table("ns.t").current_snapshot())
            if "p=1.1" in p]
    if rewrite == "delete":
        tbl["cat"].load_table("ns.t").delete(EqualTo("id", 2))
    else:
        tbl["cat"].load_table("ns.t").append(pa.table({"id": [3], "p": [-2.5]}, schema=rows))
    expire_keeps_live_file_renamed_onto_a_leftover(tbl, f)
    assert sorted(tbl["cat"].load_table("ns.t").scan().to_arrow().column("id").to_pylist()) == \
        ([1] if rewrite == "delete" else [1, 2, 3])


def test_external_file_named_like_a_removed_file_refuses_nothing(tmp_path):
    """Adversary round 11, finding 4 (a false refusal): add_files of a file outside the table
    whose name is a removed file's of the table (Hive's `000000_0` repeats in every folder)
    made the expiry and the sweep refuse the whole run, for good. Now only the removed file of
    that name is kept (a warning names the outside file); the rest of the expiry goes on."""
    import pyarrow.parquet as pq
    tbl = make_table(tmp_path, appends=0)
    data = tbl["dir"] / "data"
    data.mkdir(parents=True)
    own, other = data / "000000_0.parquet", data / "000001_0.parquet"
    pq.write_table(pa.table({"id": [1, 2], "s": ["a", "b"]}, schema=SCHEMA), str(own))
    pq.write_table(pa.table({"id": [3], "s": ["c"]}, schema=SCHEMA), str(other))
    tbl["cat"].load_table("ns.t").add_files([f"file://{own}", f"file://{other}"])
    tbl["cat"].load_table("ns.t").delete("id <= 3")  # both files removed
    ext = tbl["wh"] / "external"
    ext.mkdir()
    pq.write_table(pa.table({"id": list(range(7, 20)), "s": ["e"] * 13}, schema=SCHEMA),
                   str(ext / "000000_0.parquet"))
    assert os.path.getsize(ext / "000000_0.parquet") not in (os.path.getsize(own),
                                                              os.path.getsize(other))
    tbl["cat"].load_table("ns.t").add_files([f"file://{ext}/000000_0.parquet"])
    age_all(tbl["dir"])
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1")
    assert p.returncode == 0, p.stderr
    assert kept_for(p.stderr, f"file://{own}", f"file://{ext}/000000_0.parquet", "name"), p.stderr
    assert os.path.exists(own) and not os.path.exists(other)
    assert len(tbl["cat"].load_table("ns.t").metadata.snapshots) == 1
    assert current_ids(tbl) == list(range(7, 20))
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    assert kept_for(p.stderr, f"file://{own}", f"file://{ext}/000000_0.parquet", "name"), p.stderr
    assert os.path.exists(own)


def test_data_loss_entry_renamed_onto_another_spelling_of_a_sibling(tmp_path):
    """Adversary round 10, finding 2: the first file's entry renamed onto the third file spelled
    another way (`data//part-00003`, `data/./part-00003`, without `file:`, `file:/`): the
    keep set takes each for the third file, so the judgement compares paths the same way
    (location keys) and finds the third file named twice: the sweep refuses."""
    for spell in (lambda p: p.replace("/data/", "/data//"),
                  lambda p: p.replace("/data/", "/data/./"),
                  lambda p: local(p),
                  lambda p: p.replace("file://", "file:")):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        root.mkdir()
        tbl = make_table(root, appends=0)
        files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
        tbl["cat"].load_table("ns.t").add_files(files[:2])
        tbl["cat"].load_table("ns.t").add_files(files[2:])
        manifest = manifest_naming(tbl, files[0])
        flip_one_path(manifest, files[0], lambda _: spell(files[2]), keep_length=True)
        age_all(tbl["dir"])
        before = all_files(tbl)
        p = icm(tbl, "remove-orphan-files", "ns.t")
        assert p.returncode == 5 and "twice" in p.stderr, p.stderr
        assert all_files(tbl) == before and os.path.exists(local(files[0]))


def test_data_loss_v1_live_entry_renamed_to_a_file_deleted_after_its_commit_expired(tmp_path):
    """Adversary round 10, finding 4: on a v1 table (no sequence numbers) the commit that added
    the three files is expired first; then a delete drops the third file's rows (its manifest
    rewritten: two EXISTING, one DELETED), and one character turns the first file's EXISTING
    entry into the third's name. Its adding commit is no longer known while the deleting one
    is: it counts as before, so the expiry refuses; the first file stays."""
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
    tbl = make_table(tmp_path, appends=0)
    tbl["cat"].drop_table("ns.t")
    tbl["cat"].create_table("ns.t", schema=SCHEMA, properties={"format-version": "1"})
    files = same_size_files(tbl, [[1, 2], [3, 4], [5, 6]])
    tbl["cat"].load_table("ns.t").add_files(files)
    tbl["cat"].load_table("ns.t").append(pa.table({"id": [50], "s": ["x"]}, schema=SCHEMA))
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    assert p.returncode == 0, p.stderr
    tbl["cat"].load_table("ns.t").delete(GreaterThanOrEqual("id", 5) & ~EqualTo("id", 50))
    assert current_ids(tbl) == [1, 2, 3, 4, 50]
    manifest = manifest_naming(tbl, files[0])
    flip_one_path(manifest, files[0], lambda _: files[2], keep_length=True)
    age_all(tbl["dir"])
    before = [f for f in all_files(tbl) if "/data/" in f]
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "0s", "--retain-last", "1")
    assert p.returncode == 5, p.stderr
    assert [f for f in all_files(tbl) if "/data/" in f] == before
    p = icm(tbl, "check", "ns.t")
    assert p.returncode == 6 and f"names {files[2]} live (in" in p.stdout, p.stdout


def test_data_loss_new_file_renamed_onto_the_file_its_commit_deleted(tmp_path):
    """Adversary round 10, finding 3: a partial delete (PyIceberg rewrites the third file's
    rows [5, 6] as a new file holding [5]: DELETED part-00003, ADDED the new file, one commit)
    whose ADDED entry is renamed onto part-00003 (padded beforehand to the new file's size):
    the snapshot says the commit deleted part-00003 and added it again, which passed, and the
    new file looked unreferenced. A commit adding again the path it deletes must describe the
    same file; here the record counts and bounds differ: the sweep refuses; the new file stays."""
    import pyarrow.parquet as pq
    from pyiceberg.expressions import EqualTo

    def build(root, pad):
        root.mkdir()
        tbl = make_table(root, appends=0)
        files = same_size_files(tbl, [[1, 2], [3, 4]])
        third = tbl["dir"] / "data" / "part-00003.parquet"
        schema = SCHEMA.with_metadata({b"pad": b"x" * pad}) if pad else SCHEMA
        pq.write_table(pa.table({"id": [5, 6], "s": ["same"] * 2}, schema=schema), str(third))
        files.append(f"file://{third}")
        tbl["cat"].load_table("ns.t").add_files(files)
        tbl["cat"].load_table("ns.t").delete(EqualTo("id", 6))
        (new,) = [f for f in os.listdir(tbl["dir"] / "data") if not f.startswith("part-")]
        return tbl, files, f"file://{tbl['dir'] / 'data' / new}"
    _, _, probe = build(tmp_path / "probe", 0)
    want = os.path.getsize(local(probe))

    def padded_size(n):
        pq.write_table(pa.table({"id": [5, 6], "s": ["same"] * 2},
                                schema=SCHEMA.with_metadata({b"pad": b"x" * n})),
                       str(tmp_path / "p.parquet"))
        return os.path.getsize(tmp_path / "p.parquet")
    pad = next(n for n in range(0, 2000) if padded_size(n) == want)
    tbl, files, new = build(tmp_path / "t", pad)
    assert os.path.getsize(local(files[2])) == os.path.getsize(local(new))
    assert current_ids(tbl) == [1, 2, 3, 4, 5]
    manifest = manifest_naming(tbl, new)
    flip_one_path(manifest, new, lambda _: files[2], keep_length=True)
    age_all(tbl["dir"])
    before = all_files(tbl)
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 5, p.stderr
    assert f"names {files[2]} twice with a different size, record count or bounds" in p.stderr
    assert all_files(tbl) == before and os.path.exists(local(new))


def test_no_verify_expiry_deletes_as_without_the_check(tmp_path):
    tbl, victim, damaged, manifest, backup, before, current = damaged_merge_table(tmp_path)
    p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--no-verify")
    assert p.returncode == 0, p.stderr
    # without the check the misnamed live file is taken for a candidate and deleted: the loss
    # the check exists for
    assert not os.path.exists(local(victim))


def damaged_fast_table(tmp_path, damage=None):
    """Three fast appends; the current snapshot's own manifest misnames its data file, which
    then looks like an orphan to the sweep."""
    tbl = make_table(tmp_path)
    t = tbl["cat"].load_table("ns.t")
    current = t.current_snapshot()
    own = [m for m in current.manifests(t.io) if m.added_snapshot_id == current.snapshot_id]
    assert len(own) == 1
    victim = [e.data_file.file_path for e in own[0].fetch_manifest_entry(t.io)][0]
    manifest = local(own[0].manifest_path)
    backup = str(tbl["wh"] / "manifest.backup")  # outside the table: never an orphan
    shutil.copy(manifest, backup)
    before = read_every_snapshot(tbl)
    damaged = flip_one_path(manifest, victim, damage)
    age_all(tbl["dir"])
    return tbl, victim, damaged, manifest, backup, before, current.snapshot_id


def test_corrupt_retained_manifest_blocks_orphan_sweep_deletes(tmp_path):
    tbl, victim, damaged, manifest, backup, before, current = damaged_fast_table(tmp_path)
    files_before = all_files(tbl)
    for extra in ((), ("--dry-run",)):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 5, p.stderr
        assert named_missing(p.stderr) == [(damaged, current)], p.stderr
        assert "1 file " in p.stderr and "--no-verify" in p.stderr
        assert all_files(tbl) == files_before
    restore(manifest, backup)
    assert read_every_snapshot(tbl) == before


def test_no_verify_sweep_deletes_as_without_the_check(tmp_path):
    tbl, victim, damaged, manifest, backup, before, current = damaged_fast_table(tmp_path)
    p = icm(tbl, "remove-orphan-files", "ns.t", "--no-verify")
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(local(victim))


def test_data_loss_entry_path_moved_outside_the_table_blocks_sweep_deletes(tmp_path):
    """Adversary round 6, 2a: the damaged character lies in the table's folder, so the damaged
    reference points outside the listing, where the presence check never looked, and the real
    file (same name) was deleted. The orphan a reference outside the listing may stand for
    (same name) is kept, dry run too, with a warning naming the reference; restored, every
    snapshot reads; --no-verify deletes the real file (the loss the check prevents)."""
    tbl, victim, damaged, manifest, backup, before, current = damaged_fast_table(tmp_path,
                                                                                  outside)
    assert damaged == outside(victim)
    files_before = all_files(tbl)
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "remove-orphan-files", "ns.t", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_for(p.stderr, victim, damaged, "name"), p.stderr
        assert f"snapshot {current} references" in p.stderr
        assert all_files(tbl) == files_before
    p = icm(tbl, "remove-orphan-files", "ns.t", "--no-verify")
    assert p.returncode == 0 and not os.path.exists(local(victim)), p.stderr


def test_data_loss_entry_path_moved_outside_the_table_blocks_expiry_deletes(tmp_path):
    """The same damage in the retained merged manifest of an expiry (the manifest keeps its
    length, so its own size check passes): the expired snapshots' copy of the file is a
    candidate, and the retained reference, moved outside the table's places, was never
    verified. The candidate it may stand for (same name) is kept with a warning naming it,
    dry run too; the expired snapshots' own files go; restored, every retained snapshot
    reads."""
    tbl, victim, damaged, manifest, backup, before, current = damaged_merge_table(
        tmp_path, outside, keep_length=True)
    files_before = [f for f in all_files(tbl) if f != backup]
    for extra in (("--dry-run",), ()):
        p = icm(tbl, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", *extra)
        assert p.returncode == 0, p.stderr
        assert kept_for(p.stderr, victim, damaged, "name"), p.stderr
        assert f"retained snapshot {current} references" in p.stderr
        assert os.path.exists(local(victim))
    assert "expired 2 snapshots" in p.stdout, p.stdout
    restore(manifest, backup)
    after = read_every_snapshot(tbl)
    assert set(after) == {current}
    assert after == {k: before[k] for k in after}


def flip_one_manifest_path(manifest_list, victim):
    """Rewrite a manifest list with one character of manifest `victim`'s path changed."""
    with open(manifest_list, "rb") as f:
        r = fastavro.reader(f)
        schema, recs = r.writer_schema, list(r)
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
        codec = r.metadata.get("avro.codec", "null")
    hits = [rec for rec in recs if rec["manifest_path"] == victim]
    assert len(hits) == 1
    i = len(victim) - len(".avro") - 1
    damaged = victim[:i] + ("x" if victim[i] != "x" else "y") + victim[i + 1:]
    hits[0]["manifest_path"] = damaged
    with open(manifest_list, "wb") as f:
        fastavro.writer(f, schema, recs, metadata=meta, codec=codec)
    return damaged


@pytest.mark.parametrize("command", ["expire-snapshots", "remove-orphan-files"])
def test_corrupt_retained_manifest_list_blocks_manifest_deletes(tmp_path, command):
    # Fast appends: the current snapshot's list names the first snapshot's manifest too. Its
    # path misnamed there, the real manifest is only the expired first snapshot's (an expiry
    # candidate) and looks unreferenced (a sweep's orphan); deleting it loses the first data
    # file's only record.
    tbl = make_table(tmp_path)
    t = tbl["cat"].load_table("ns.t")
    first, current = t.metadata.snapshots[0], t.current_snapshot()
    (victim,) = [m.manifest_path for m in first.manifests(t.io)]
    ml = local(current.manifest_list)
    backup = str(tbl["wh"] / "list.backup")
    shutil.copy(ml, backup)
    before = read_every_snapshot(tbl)
    damaged = flip_one_manifest_path(ml, victim)
    age_all(tbl["dir"])
    files_before = all_files(tbl)
    args = ["--older-than", "2099-01-01"] if command == "expire-snapshots" else []
    p = icm(tbl, command, "ns.t", *args)
    expired_lists = set()
    if command == "expire-snapshots":
        # the expiry reads the retained manifests for its candidates: the misnamed one cannot
        # be read, so no manifest (nor data file) is planned, and the run exits 1 naming it;
        # only the expired snapshots' own lists go
        assert p.returncode == 1, p.stderr
        assert f"{damaged}: manifest of retained snapshot {current.snapshot_id} cannot be " \
            "read" in p.stderr and "no manifest, data or delete file is deleted" in p.stderr
        expired_lists = {local(s.manifest_list) for s in t.metadata.snapshots[:-1]}
    else:  # the sweep reads every manifest: its unreadable-manifest refusal names it
        assert p.returncode == 5, p.stderr
        assert damaged in p.stderr, p.stderr
    assert os.path.exists(local(victim))
    files_after = all_files(tbl)
    assert set(files_before) - expired_lists <= set(files_after)
    assert set(files_before) - set(files_after) == expired_lists
    assert all(f.endswith(".metadata.json") for f in set(files_after) - set(files_before))
    restore(ml, backup)
    after = read_every_snapshot(tbl)
    assert after == {k: before[k] for k in after} and current.snapshot_id in after


def test_listing_missing_referenced_files_refusal_names_them(tmp_path):
    # A table copy that lost 11 of its 12 data files, plus a stray file: the sweep must not
    # take the listing for the table, and says which files it lacks and who needs them.
    tbl = make_table(tmp_path, appends=12)
    t = tbl["cat"].load_table("ns.t")
    snaps = t.metadata.snapshots
    needs = {s.snapshot_id: live_paths(tbl, s) for s in snaps}
    every = sorted(needs[t.current_snapshot().snapshot_id])
    assert len(every) == 12
    lost = every[:11]
    for f in lost:
        os.remove(local(f))
    stray = tbl["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"not referenced")
    age_all(tbl["dir"])
    files_before = all_files(tbl)
    p = icm(tbl, "remove-orphan-files", "ns.t")
    assert p.returncode == 5, p.stderr
    named = named_missing(p.stderr)
    assert len(named) == 10 and "11 files" in p.stderr and "and 1 more" in p.stderr, p.stderr
    assert len({path for path, _ in named}) == 10
    for path, snap in named:
        assert path in lost
        assert path in needs[snap], f"snapshot {snap} does not reference {path}"
    assert all_files(tbl) == files_before
    # --no-verify sweeps (the stray goes; nothing referenced is touched)
    p = icm(tbl, "remove-orphan-files", "ns.t", "--no-verify")
    assert p.returncode == 0, p.stderr
    assert all_files(tbl) == [f for f in files_before if f != str(stray)]

"""Cross-check icemaint's manifest list / manifest decoding against fastavro, per fixture file.

For every .avro file under ICM_FIXTURES_DIR, tests/tools/avro_dump (env ICM_AVRO_DUMP) prints
what icemaint decodes; fastavro reads the same file independently. Per file we compare the kind
(manifest list vs manifest, from the schema), the number of entries and, entry by entry, the
referenced paths and the tracking fields expiry relies on. Files that are not Iceberg metadata
(Avro data files, the AES-GCM encrypted manifest list) must fail cleanly with ICM_EINVALID.
Values are compared as written in the file (avro_dump passes no inheritance context); only the
v1 defaults of the spec's Appendix E (content 0, sequence numbers 0) are applied to fastavro's
side for manifest lists.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

fastavro = pytest.importorskip("fastavro")

FIXTURES = Path(os.environ.get("ICM_FIXTURES_DIR", Path(__file__).resolve().parents[3] / "shared" / "fixtures"))
# The dump tool: ICM_AVRO_DUMP, else the one in ICM_BUILD_DIR (set by scripts/test.sh).
DUMP = os.environ.get("ICM_AVRO_DUMP") or (
    os.path.join(os.environ["ICM_BUILD_DIR"], "tests", "tools", "avro_dump")
    if os.environ.get("ICM_BUILD_DIR") else None)

FILES = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.avro")) if FIXTURES.is_dir() else []
# Files icemaint's own writer produced (the checked-in fuzz seeds): every codec x version.
REPO = Path(__file__).resolve().parents[2]
OWN = sorted(str(p) for p in (REPO / "fuzz" / "corpus").rglob("*.avro"))


def run_dump(paths):
    """avro_dump's JSON object per path, keyed by the path as given."""
    if not DUMP or not os.path.exists(DUMP):
        if os.environ.get("CI"):
            pytest.fail(f"avro_dump tool not found ({DUMP!r}): set ICM_AVRO_DUMP or ICM_BUILD_DIR")
        pytest.skip("ICM_AVRO_DUMP does not name the built avro_dump tool")
    out = {}
    # Batches keep the command line short; one JSON object per file comes back.
    for i in range(0, len(paths), 100):
        res = subprocess.run([DUMP, *paths[i:i + 100]], capture_output=True, text=True, check=False)
        assert res.returncode in (0, 1), res.stderr
        for line in res.stdout.splitlines():
            obj = json.loads(line)
            out[obj["file"]] = obj
    return out


@pytest.fixture(scope="module")
def dumped():
    raw = run_dump([str(FIXTURES / f) for f in FILES])
    return {os.path.relpath(k, FIXTURES): v for k, v in raw.items()}


@pytest.fixture(scope="module")
def dumped_own():
    return run_dump(OWN)


def ids_to_names(record_schema):
    """Map Iceberg field-id -> field name for one Avro record schema."""
    return {f.get("field-id"): f["name"] for f in record_schema["fields"] if "field-id" in f}


def unwrap(t):
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        return rest[0] if len(rest) == 1 else t
    return t


def read_fastavro(path):
    with open(path, "rb") as fh:
        reader = fastavro.reader(fh)
        schema = reader.writer_schema
        rows = list(reader)
    return schema, rows


def kind_of(schema):
    names = {f["name"]: f for f in schema.get("fields", [])} if isinstance(schema, dict) else {}
    ids = ids_to_names(schema) if isinstance(schema, dict) and "fields" in schema else {}
    if 500 in ids or "manifest_path" in names:
        return "manifest_list"
    df = names.get("data_file")
    if df is not None and isinstance(unwrap(df["type"]), dict) and unwrap(df["type"]).get("type") == "record":
        return "manifest"
    return None


# The spec's names, for files written without field ids (the reader falls back to names too).
SPEC_NAMES = {
    500: ["manifest_path"], 501: ["manifest_length"], 502: ["partition_spec_id"],
    503: ["added_snapshot_id"], 504: ["added_files_count", "added_data_files_count"],
    505: ["existing_files_count", "existing_data_files_count"],
    506: ["deleted_files_count", "deleted_data_files_count"], 507: ["partitions"],
    512: ["added_rows_count"], 513: ["existing_rows_count"], 514: ["deleted_rows_count"],
    515: ["sequence_number"], 516: ["min_sequence_number"], 517: ["content"],
    520: ["first_row_id"],
    0: ["status"], 1: ["snapshot_id"], 3: ["sequence_number"], 4: ["file_sequence_number"],
    100: ["file_path"], 101: ["file_format"], 103: ["record_count"],
    104: ["file_size_in_bytes"], 134: ["content"], 142: ["first_row_id"],
    143: ["referenced_data_file"], 144: ["content_offset"], 145: ["content_size_in_bytes"],
}


def get(row, names, fid, default=None):
    if names:  # the file has field ids: only the id decides
        name = names.get(fid)
        return row.get(name, default) if name is not None else default
    for name in SPEC_NAMES[fid]:
        if name in row:
            return row[name]
    return default


def test_fixtures_present():
    assert len(FILES) > 400, f"expected the shared fixtures under {FIXTURES}"


@pytest.mark.parametrize("rel", FILES)
def test_file_matches_fastavro(dumped, rel):
    ours = dumped[rel]
    path = FIXTURES / rel
    if path.read_bytes()[:4] != b"Obj\x01":  # not an Avro container (the encrypted list)
        assert ours.get("error") == "ICM_EINVALID", ours
        return
    try:
        schema, rows = read_fastavro(path)
    except ValueError as exc:  # fastavro needs cramjam for snappy, zstandard for zstd
        if "install" in str(exc):
            pytest.skip(f"fastavro lacks a codec library: {exc}")
        raise
    kind = kind_of(schema)
    if kind is None:  # an Avro *data* file, not Iceberg metadata
        assert ours.get("error") == "ICM_EINVALID", ours
        return
    assert "error" not in ours, ours
    assert ours["kind"] == kind
    assert len(ours["entries"]) == len(rows)
    if kind == "manifest_list":
        check_manifest_list(schema, rows, ours)
    else:
        check_manifest(schema, rows, ours)


def test_own_files_present():
    assert len(OWN) >= 20


@pytest.mark.parametrize("path", OWN, ids=[os.path.basename(p) for p in OWN])
def test_written_file_matches_fastavro(dumped_own, path):
    """Manifests and lists written by icemaint (all codecs, v1-v3) read the same in fastavro."""
    ours = dumped_own[path]
    try:
        schema, rows = read_fastavro(path)
    except ValueError as exc:  # fastavro needs cramjam for snappy, backports.zstd for zstd
        if "install" in str(exc):
            pytest.skip(f"fastavro lacks a codec library: {exc}")
        raise
    kind = kind_of(schema)
    assert kind is not None
    assert "error" not in ours, ours
    assert ours["kind"] == kind
    assert len(ours["entries"]) == len(rows) > 0
    if kind == "manifest_list":
        check_manifest_list(schema, rows, ours)
    else:
        check_manifest(schema, rows, ours)


def check_manifest_list(schema, rows, ours):
    names = ids_to_names(schema)
    for want, got in zip(rows, ours["entries"]):
        assert got["manifest_path"] == get(want, names, 500)
        assert got["manifest_length"] == get(want, names, 501)
        assert got["partition_spec_id"] == get(want, names, 502)
        assert got["content"] == get(want, names, 517, 0)
        assert got["sequence_number"] == get(want, names, 515, 0)
        assert got["min_sequence_number"] == get(want, names, 516, 0)
        assert got["added_snapshot_id"] == get(want, names, 503)
        assert got["added_files_count"] == get(want, names, 504)
        assert got["existing_files_count"] == get(want, names, 505)
        assert got["deleted_files_count"] == get(want, names, 506)
        assert got["added_rows_count"] == get(want, names, 512)
        assert got["deleted_rows_count"] == get(want, names, 514)
        assert got["first_row_id"] == get(want, names, 520)
        assert got["has_partitions"] == (get(want, names, 507) is not None)


def check_manifest(schema, rows, ours):
    names = ids_to_names(schema)
    df_field = next(f for f in schema["fields"] if f["name"] == "data_file")
    df_names = ids_to_names(unwrap(df_field["type"]))
    for want, got in zip(rows, ours["entries"]):
        df = want["data_file"]
        assert got["file_path"] == get(df, df_names, 100)
        assert got["status"] == get(want, names, 0)
        assert got["snapshot_id"] == get(want, names, 1)
        assert got["content"] == get(df, df_names, 134, 0)
        assert got["file_format"] == get(df, df_names, 101)
        assert got["record_count"] == get(df, df_names, 103)
        assert got["file_size_in_bytes"] == get(df, df_names, 104)
        assert got["referenced_data_file"] == get(df, df_names, 143)
        assert got["content_offset"] == get(df, df_names, 144)
        assert got["content_size_in_bytes"] == get(df, df_names, 145)
        assert got["first_row_id"] == get(df, df_names, 142)
        if ours["format_version"] >= 2:
            assert got["sequence_number"] == get(want, names, 3)
            assert got["file_sequence_number"] == get(want, names, 4)
        else:  # v1: sequence number 0 (spec Appendix E)
            assert got["sequence_number"] == 0


def test_referenced_paths_per_file(dumped):
    """The set of referenced paths, file by file, equals fastavro's (the orphan-sweep input)."""
    for rel in FILES:
        if (FIXTURES / rel).read_bytes()[:4] != b"Obj\x01":
            continue
        try:
            schema, rows = read_fastavro(FIXTURES / rel)
        except ValueError as exc:
            if "install" in str(exc):
                continue
            raise
        kind = kind_of(schema)
        if kind is None:
            continue
        ours = dumped[rel]
        if kind == "manifest_list":
            want = sorted(r["manifest_path"] for r in rows)
            got = sorted(e["manifest_path"] for e in ours["entries"])
        else:
            want = sorted(r["data_file"]["file_path"] for r in rows)
            got = sorted(e["file_path"] for e in ours["entries"])
        assert got == want, rel

"""The oracle: what every judge reads from every snapshot of a table, before and after icemaint.

A fingerprint is (row count, order-independent hash of the rows) for one snapshot. The row hash is
defined once and implemented twice, here and in the Java judge (Harness.rowHash), so that the
engines can be compared with each other and not just with themselves:

    row text = "<field id>=<value>" for each top-level field in field-id order, joined by U+001F,
               value "n" for null, "b:true"/"b:false", "i:<decimal>", "s:<text>", "d:<yyyy-mm-dd>"
    row hash = first 8 bytes (big-endian) of SHA-256(row text, UTF-8)
    table hash = sum of row hashes mod 2^64, as 16 lowercase hex digits

Judges: PyIceberg (scan with snapshot_id), DuckDB (iceberg_scan with snapshot_from_id, through
the extension that PyPI ships; see duckdb_connect), and Java (Fingerprint tool, one JVM for all
tables). A shape can exclude a judge that cannot read it (PyIceberg 0.12 refuses equality deletes).

capture() records the state before an operation; check_after() states what must hold after it.
"""

from __future__ import annotations

import datetime as dt
import functools
import glob
import hashlib
import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping
from urllib.parse import unquote, urlsplit

from pyiceberg.manifest import DataFileContent, ManifestContent
from pyiceberg.table import Table

import javajudge
from warehouse import Warehouse

JUDGES = ("pyiceberg", "duckdb", "java")
_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Fingerprint:
    rows: int
    hash: str


# ---- the row hash -------------------------------------------------------------------------------

def canonical(v: Any) -> str:
    if v is None:
        return "n"
    if isinstance(v, bool):  # before int: bool is an int subclass
        return "b:true" if v else "b:false"
    if isinstance(v, int):
        return f"i:{v}"
    if isinstance(v, str):
        return f"s:{v}"
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        return f"d:{v.isoformat()}"
    raise TypeError(f"fingerprint: unsupported value type {type(v).__name__}")


def row_hash(row: Mapping[int, Any]) -> int:
    text = "\x1f".join(f"{fid}={canonical(row[fid])}" for fid in sorted(row))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def fingerprint(rows: Iterable[Mapping[int, Any]]) -> Fingerprint:
    n, total = 0, 0
    for r in rows:
        n += 1
        total = (total + row_hash(r)) & _MASK64
    return Fingerprint(n, f"{total:016x}")


def _by_field_id(table: Table, snapshot_id: int, columns: dict[str, list]) -> Iterable[dict]:
    """Rows of name-keyed columns re-keyed by the field ids of the snapshot's schema."""
    snap = table.metadata.snapshot_by_id(snapshot_id)
    schema = table.metadata.schema_by_id(snap.schema_id) if snap.schema_id is not None \
        else table.schema()
    ids = {name: schema.find_field(name).field_id for name in columns}
    n = len(next(iter(columns.values()))) if columns else 0
    for i in range(n):
        yield {ids[name]: values[i] for name, values in columns.items()}


# ---- judges -------------------------------------------------------------------------------------

def pyiceberg_fingerprints(table: Table) -> dict[int, Fingerprint]:
    out = {}
    for snap in table.metadata.snapshots:
        arrow = table.scan(snapshot_id=snap.snapshot_id).to_arrow()
        out[snap.snapshot_id] = fingerprint(_by_field_id(table, snap.snapshot_id, arrow.to_pydict()))
    return out


@functools.lru_cache(maxsize=1)
def duckdb_connect():
    """A DuckDB connection with the iceberg extension loaded from the PyPI extension packages.

    DuckDB would fetch extensions from its own server, which this machine and CI cannot reach;
    autoinstall is off so a missing extension fails here, loudly, instead of hanging on network.
    """
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    for name in ("avro", "iceberg"):  # iceberg needs avro loaded first
        mod = importlib.import_module(f"duckdb_extension_{name}")
        found = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "*",
                                       f"{name}.duckdb_extension"))
        if not found:
            raise RuntimeError(f"no {name}.duckdb_extension inside {mod.__file__}")
        con.execute(f"LOAD '{found[0]}'")
    return con


def duckdb_fingerprints(table: Table) -> dict[int, Fingerprint]:
    con = duckdb_connect()
    out = {}
    for snap in table.metadata.snapshots:
        cur = con.execute("SELECT * FROM iceberg_scan(?, snapshot_from_id => ?)",
                          [table.metadata_location, snap.snapshot_id])
        names = [d[0] for d in cur.description]
        data = cur.fetchall()
        columns = {name: [r[i] for r in data] for i, name in enumerate(names)}
        out[snap.snapshot_id] = fingerprint(_by_field_id(table, snap.snapshot_id, columns))
    return out


def java_fingerprints(wh: Warehouse, names: list[str]) -> dict[str, dict[int, Fingerprint] | str]:
    """Per table: snapshot id -> fingerprint, or the error text when Java could not read it."""
    out: dict[str, dict[int, Fingerprint] | str] = {}
    for doc in javajudge.run("Fingerprint", [*wh.java_args(), *names]):
        if "error" in doc:
            out[doc["table"]] = doc["error"]
        else:
            out[doc["table"]] = {s["snapshot_id"]: Fingerprint(s["rows"], s["hash"])
                                 for s in doc["snapshots"]}
    return out


# ---- files reachable from the metadata ------------------------------------------------------------

def local_path(uri: str) -> str:
    """A local filesystem path for file:///x, file:/x or /x (the warehouse is local)."""
    if uri.startswith("file:"):
        return unquote(urlsplit(uri).path)
    return uri


def reachable_files(table: Table) -> set[str]:
    """Every file the table's current metadata reaches: manifest lists, manifests, live data and
    delete files of every snapshot, statistics and partition-statistics files."""
    io, md = table.io, table.metadata
    files = {table.metadata_location}
    for snap in md.snapshots:
        files.add(snap.manifest_list)
        for manifest in snap.manifests(io):
            files.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                files.add(entry.data_file.file_path)
    files.update(s.statistics_path for s in md.statistics)
    files.update(s.statistics_path for s in md.partition_statistics)
    return files


# ---- before / after -----------------------------------------------------------------------------

@dataclass
class TableState:
    name: str
    metadata_location: str
    snapshot_ids: list[int]
    # judge -> snapshot id -> fingerprint
    fingerprints: dict[str, dict[int, Fingerprint]] = field(default_factory=dict)


def _read_all(wh: Warehouse, judges: Mapping[str, tuple[str, ...]]) -> tuple[dict, list[str]]:
    """Loads every table and reads it with its judges; returns (states, problems)."""
    cat = wh.catalog()
    states: dict[str, TableState] = {}
    problems: list[str] = []
    java_names = [n for n, js in judges.items() if "java" in js]
    java = java_fingerprints(wh, java_names) if java_names else {}
    for name, js in judges.items():
        try:
            table = cat.load_table(name)
        except Exception as e:  # noqa: BLE001 - any load failure is a verdict
            problems.append(f"{name}: PyIceberg cannot load the table: {e}")
            continue
        st = TableState(name, table.metadata_location, [s.snapshot_id for s in table.metadata.snapshots])
        for judge, read in (("pyiceberg", pyiceberg_fingerprints), ("duckdb", duckdb_fingerprints)):
            if judge in js:
                try:
                    st.fingerprints[judge] = read(table)
                except Exception as e:  # noqa: BLE001 - e.g. a data file that is gone
                    problems.append(f"{name}: {judge} cannot read the table: {type(e).__name__}: {e}")
        if "java" in js:
            got = java.get(name, "no output for this table")
            if isinstance(got, str):
                problems.append(f"{name}: Java cannot read the table: {got}")
            else:
                st.fingerprints["java"] = got
        problems += _disagreements(st)
        states[name] = st
    return states, problems


def _disagreements(st: TableState) -> list[str]:
    """Snapshots on which the judges that read this table do not agree."""
    out = []
    judges = list(st.fingerprints)
    for sid in st.snapshot_ids:
        seen = {j: st.fingerprints[j].get(sid) for j in judges}
        if len(set(seen.values())) > 1:
            out.append(f"{st.name}: judges disagree on snapshot {sid}: {seen}")
    return out


def capture(wh: Warehouse, judges: Mapping[str, tuple[str, ...]]) -> dict[str, TableState]:
    """Reads every snapshot of every table with its judges (table name -> judges to use).
    Raises AssertionError if a table does not load or the judges already disagree."""
    states, problems = _read_all(wh, judges)
    if problems:
        raise AssertionError("before the operation:\n" + "\n".join(problems))
    return states


def check_after(before: Mapping[str, TableState], wh: Warehouse,
                judges: Mapping[str, tuple[str, ...]],
                expired: Mapping[str, set[int]] | None = None) -> dict[str, TableState]:
    """After an operation on the tables captured in `before`:
      - each table loads in PyIceberg and in Java (when Java judges it);
      - every retained snapshot that existed before reads the same in every judge as before;
      - every file reachable from the retained snapshots exists;
      - the snapshots named in `expired` are gone from the metadata, and no other snapshot is.
    Raises AssertionError listing every violation; returns the new states."""
    expired = expired or {}
    after, problems = _read_all(wh, judges)
    cat = wh.catalog()
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            continue  # load failure already reported
        gone = set(old.snapshot_ids) - set(new.snapshot_ids)
        want_gone = set(expired.get(name, set()))
        if gone != want_gone:
            problems.append(f"{name}: snapshots removed {sorted(gone)}, expected {sorted(want_gone)}")
        for judge, prints in new.fingerprints.items():
            for sid in set(old.snapshot_ids) & set(new.snapshot_ids):
                was = old.fingerprints.get(judge, {}).get(sid)
                if was is not None and prints.get(sid) != was:
                    problems.append(f"{name}: snapshot {sid} reads {prints.get(sid)} in {judge}, "
                                    f"was {was}")
        missing = sorted(p for p in reachable_files(cat.load_table(name))
                         if not os.path.exists(local_path(p)))
        problems += [f"{name}: reachable file missing: {p}" for p in missing]
    if problems:
        raise AssertionError("after the operation:\n" + "\n".join(problems))
    return after


# ---- manifests as each engine decodes them --------------------------------------------------------

def pyiceberg_manifests(table: Table) -> list[dict]:
    """Every snapshot's manifest list and manifests as PyIceberg decodes them, in the shape of the
    Java ManifestDump tool's output (so the two can be compared with ==)."""
    io = table.io
    out = []
    for snap in table.metadata.snapshots:
        manifests = []
        for m in snap.manifests(io):
            entries = [{
                "status": e.status.name, "snapshot_id": e.snapshot_id,
                "sequence_number": e.sequence_number,
                "file_sequence_number": e.file_sequence_number,
                "content": DataFileContent(e.data_file.content).name,  # a plain 0 in v1
                "path": e.data_file.file_path,
                "format": e.data_file.file_format.value, "record_count": e.data_file.record_count,
                "file_size_bytes": e.data_file.file_size_in_bytes, "spec_id": e.data_file.spec_id,
            } for e in m.fetch_manifest_entry(io, discard_deleted=False)]
            manifests.append({
                "path": m.manifest_path, "length": m.manifest_length,
                "spec_id": m.partition_spec_id,
                # v1 lists carry no content field; PyIceberg then leaves a plain 0 (DATA).
                "content": ManifestContent(m.content).name,
                "sequence_number": m.sequence_number, "min_sequence_number": m.min_sequence_number,
                "added_snapshot_id": m.added_snapshot_id, "added_files": m.added_files_count,
                "existing_files": m.existing_files_count, "deleted_files": m.deleted_files_count,
                "added_rows": m.added_rows_count, "existing_rows": m.existing_rows_count,
                "deleted_rows": m.deleted_rows_count, "entries": entries,
            })
        out.append({"snapshot_id": snap.snapshot_id, "manifest_list": snap.manifest_list,
                    "manifests": manifests})
    return out


def java_manifests(wh: Warehouse, names: list[str]) -> dict[str, list[dict] | str]:
    """Per table: Java's decoding (ManifestDump), or the error text when Java could not read it."""
    return {doc["table"]: doc.get("error") or doc["snapshots"]
            for doc in javajudge.run("ManifestDump", [*wh.java_args(), *names])}


_ENTRY_STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
_FILE_CONTENT = {0: "DATA", 1: "POSITION_DELETES", 2: "EQUALITY_DELETES"}
_MANIFEST_CONTENT = {0: "DATA", 1: "DELETES"}


def _avro_records(uri: str) -> list[dict]:
    import fastavro

    with open(local_path(uri), "rb") as f:
        return list(fastavro.reader(f))


def _count(row: dict, name: str):
    """A manifest list count; v1 writers name the file counts added_data_files_count etc."""
    if name in row:
        return row[name]
    return row.get(name.replace("_files_", "_data_files_"))


def fastavro_manifests(table: Table) -> list[dict]:
    """The same view as pyiceberg_manifests, decoded from the raw Avro with fastavro and the
    spec's inheritance rules applied here ("Manifest Entry Fields", "Sequence Number
    Inheritance", "First Row ID Inheritance" aside): a null snapshot_id comes from the manifest's
    added_snapshot_id; a null data or file sequence number of an ADDED entry from the manifest's
    sequence_number; v1 files have no sequence numbers (0) and only DATA content."""
    out = []
    for snap in table.metadata.snapshots:
        manifests = []
        for row in _avro_records(snap.manifest_list):
            seq = row.get("sequence_number") or 0
            entries = []
            for e in _avro_records(row["manifest_path"]):
                status = _ENTRY_STATUS[e["status"]]
                df = e["data_file"]

                def inherit(value, _status=status):
                    return seq if value is None and _status == "ADDED" else (value or 0)

                entries.append({
                    "status": status,
                    "snapshot_id": e["snapshot_id"] if e["snapshot_id"] is not None
                    else row["added_snapshot_id"],
                    "sequence_number": inherit(e.get("sequence_number")),
                    "file_sequence_number": inherit(e.get("file_sequence_number")),
                    "content": _FILE_CONTENT[df.get("content", 0)],
                    "path": df["file_path"], "format": df["file_format"].upper(),
                    "record_count": df["record_count"],
                    "file_size_bytes": df["file_size_in_bytes"],
                    "spec_id": row["partition_spec_id"],
                })
            manifests.append({
                "path": row["manifest_path"], "length": row["manifest_length"],
                "spec_id": row["partition_spec_id"],
                "content": _MANIFEST_CONTENT[row.get("content", 0)],
                "sequence_number": seq, "min_sequence_number": row.get("min_sequence_number") or 0,
                "added_snapshot_id": row["added_snapshot_id"],
                "added_files": _count(row, "added_files_count"),
                "existing_files": _count(row, "existing_files_count"),
                "deleted_files": _count(row, "deleted_files_count"),
                "added_rows": row.get("added_rows_count"),
                "existing_rows": row.get("existing_rows_count"),
                "deleted_rows": row.get("deleted_rows_count"),
                "entries": entries,
            })
        out.append({"snapshot_id": snap.snapshot_id, "manifest_list": snap.manifest_list,
                    "manifests": manifests})
    return out


# ---- Java's snapshot expiry, the reference for the differential tests ----------------------------

def expire_with_java(wh: Warehouse, table: str, *, now_ms: int | None = None,
                     older_than_ms: int | None = None, retain_last: int | None = None,
                     snapshot_ids: Iterable[int] = (), cleanup_level: str | None = None,
                     clean_expired_metadata: bool = False,
                     cleanup_strategy: str = "reachable") -> dict:
    """Runs Java's ExpireSnapshots on `table` (really deleting files) and returns
    {"expired", "retained", "refs", "deleted_paths"} as the ExpireDiff tool prints them.
    Save the warehouse first (Warehouse.save) to run icemaint on the same state afterwards."""
    args = [*wh.java_args(), "--table", table, "--cleanup-strategy", cleanup_strategy]
    for flag, value in (("--now-ms", now_ms), ("--older-than-ms", older_than_ms),
                        ("--retain-last", retain_last), ("--cleanup-level", cleanup_level)):
        if value is not None:
            args += [flag, str(value)]
    for sid in snapshot_ids:
        args += ["--snapshot-id", str(sid)]
    if clean_expired_metadata:
        args.append("--clean-expired-metadata")
    (result,) = javajudge.run("ExpireDiff", args)
    return result

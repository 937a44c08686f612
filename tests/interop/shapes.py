"""Named, seeded table shapes for the interop harness.

Each shape is a small table (or two) whose history exercises one thing snapshot expiry and orphan
removal must get right: long append histories, copy-on-write rewrites, merge-on-read deletes,
evolution, refs with and without retention, rollback, WAP and cherry-pick, a data file path that
is removed and later added again, statistics files, format v1/v2/v3, leftovers of a failed
commit, a truncated metadata log, and two tables whose folders share a name prefix (t, t_2).

PyIceberg writes what it can; the rest is written by the Java judge's GenerateTables in one JVM
run. Row data is seeded and deterministic; snapshot ids and timestamps are chosen by the writers.
Every shape states the row count each of its snapshots must read as, in commit order, worked out
from how the shape is built, so the generator itself is checked against an independent
expectation rather than against the judges alone.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.expressions import GreaterThanOrEqual, LessThan
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import DateType, IntegerType, LongType, NestedField, StringType

import javajudge
from warehouse import Warehouse

PY_NS = "py"
JAVA_NS = "java"
CATEGORIES = ("a", "b", "c", "d")

# Same columns and field ids as GenerateTables.SCHEMA on the Java side.
ROW_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "value", IntegerType(), required=False),
    NestedField(4, "day", DateType(), required=False),
)


@dataclass(frozen=True)
class Shape:
    name: str
    engine: str  # "pyiceberg" or "java": who writes it
    about: str
    # Table name (in the shape's namespace) -> rows read at each snapshot, in commit order.
    expected_rows: dict[str, tuple[int, ...]]
    build: Callable[[Catalog, random.Random], None] | None = None  # PyIceberg shapes only
    format_version: int = 2
    # Engines that read every snapshot of the shape (oracle.JUDGES minus those that cannot).
    judges: tuple[str, ...] = ("pyiceberg", "duckdb", "java")

    @property
    def namespace(self) -> str:
        return PY_NS if self.engine == "pyiceberg" else JAVA_NS

    @property
    def tables(self) -> list[str]:
        return [f"{self.namespace}.{t}" for t in self.expected_rows]


# ---- data ---------------------------------------------------------------------------------------

def rows(rng: random.Random, first_id: int, n: int, *, value_name: str = "value",
         note: bool = False) -> pa.Table:
    """n rows with ids first_id.. and seeded category/value/day; ~10% of values are null."""
    ids = list(range(first_id, first_id + n))
    cols: dict[str, pa.Array] = {
        "id": pa.array(ids, pa.int64()),
        "category": pa.array([rng.choice(CATEGORIES) for _ in ids], pa.string()),
        value_name: pa.array([None if rng.randrange(10) == 0 else rng.randrange(1000) for _ in ids],
                             pa.int32()),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(60)) for _ in ids],
                        pa.date32()),
    }
    if note:
        cols["note"] = pa.array([f"n{i}" for i in ids], pa.string())
    return pa.table(cols)


def _create(cat: Catalog, name: str, version: int = 2, props: dict[str, str] | None = None,
            **kw) -> Table:
    properties = {"format-version": str(version), **(props or {})}
    return cat.create_table(f"{PY_NS}.{name}", ROW_SCHEMA, properties=properties, **kw)


def _snapshot_ids(t: Table) -> list[int]:
    """Snapshot ids in commit order: the metadata lists snapshots in the order they were added
    (sequence numbers would do only from v2 on, timestamps can tie)."""
    return [s.snapshot_id for s in t.metadata.snapshots]


# ---- PyIceberg shapes ---------------------------------------------------------------------------

def build_append_history(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "append_history")
    for i in range(12):
        t.append(rows(rng, i * 5, 5))


def build_cow_overwrite_delete(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "cow_overwrite_delete", props={"write.delete.mode": "copy-on-write"})
    for i in range(3):
        t.append(rows(rng, i * 20, 20))  # ids 0..59
    # Overwrite ids >= 40 (20 rows) with 10 new rows: a delete of rewritten files plus an append.
    t.overwrite(rows(rng, 100, 10), overwrite_filter=GreaterThanOrEqual("id", 40))
    t.delete(delete_filter=LessThan("id", 5))  # rewrites the first file without ids 0..4


def build_evolution(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "evolution")
    t.append(rows(rng, 0, 10))
    with t.update_schema() as u:
        u.add_column("note", StringType())
    t.append(rows(rng, 10, 10, note=True))
    with t.update_spec() as u:
        u.add_identity("category")
    t.append(rows(rng, 20, 10, note=True))
    with t.update_schema() as u:
        u.rename_column("value", "amount")
    t.append(rows(rng, 30, 10, value_name="amount", note=True))
    with t.update_schema() as u:
        u.delete_column("note")
    with t.update_spec() as u:
        u.remove_field("category")
    t.append(rows(rng, 40, 10, value_name="amount"))


def build_refs(cat: Catalog, rng: random.Random) -> None:
    hour_ms, day_ms = 3_600_000, 86_400_000
    t = _create(cat, "refs")
    for i in range(4):
        t.append(rows(rng, i * 10, 10))
    s1, s2, s3, _ = _snapshot_ids(t)
    with t.manage_snapshots() as m:
        m.create_tag(s1, "tag_keep")
        m.create_tag(s2, "tag_short", max_ref_age_ms=hour_ms)
        m.create_branch(s2, "branch_ret")
        m.create_branch(s3, "branch_plain")
    t.append(rows(rng, 100, 5), branch="branch_ret")
    t.append(rows(rng, 105, 5), branch="branch_ret")
    t.append(rows(rng, 200, 7), branch="branch_plain")
    # PyIceberg 0.12 rewrites a branch's ref without its retention settings when it commits to
    # the branch, so the retention is set afterwards by re-creating the ref at the same head.
    head = t.metadata.refs["branch_ret"].snapshot_id
    with t.manage_snapshots() as m:
        m.remove_branch("branch_ret")
    with t.manage_snapshots() as m:
        m.create_branch(head, "branch_ret", max_ref_age_ms=7 * day_ms, max_snapshot_age_ms=day_ms,
                        min_snapshots_to_keep=2)


def build_rollback(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "rollback")
    for i in range(4):
        t.append(rows(rng, i * 10, 10))
    s2 = _snapshot_ids(t)[1]
    with t.manage_snapshots() as m:
        m.rollback_to_snapshot(s2)  # current moves back; snapshots 3 and 4 leave main's history


def build_path_readded(cat: Catalog, rng: random.Random) -> None:
    """One Parquet file added, removed by a delete, then added again under the same path."""
    t = _create(cat, "path_readded")
    t.append(rows(rng, 0, 10))
    path = f"{t.location()}/data/readded-00000.parquet"
    local = path.removeprefix("file://")
    pq.write_table(rows(rng, 1000, 10), local)
    t.add_files([path])
    t.delete(delete_filter=GreaterThanOrEqual("id", 1000))  # drops the whole file: DELETED entry
    t.append(rows(rng, 10, 10))
    t.add_files([path])


def build_format_v1(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "format_v1", version=1)
    for i in range(3):
        t.append(rows(rng, i * 10, 10))
    t.delete(delete_filter=LessThan("id", 10))


def build_failed_commit(cat: Catalog, rng: random.Random) -> None:
    """Two commits, then a transaction that writes its data file, manifest and manifest list but
    is never committed: the files are on disk, no metadata names them."""
    t = _create(cat, "failed_commit")
    t.append(rows(rng, 0, 10))
    t.append(rows(rng, 10, 10))
    tx = t.transaction()
    tx.append(rows(rng, 20, 10))
    # Deliberately no tx.commit_transaction().


def build_metadata_log_truncated(cat: Catalog, rng: random.Random) -> None:
    t = _create(cat, "metadata_log_truncated", props={"write.metadata.previous-versions-max": "3"})
    for i in range(8):
        t.append(rows(rng, i * 3, 3))


def build_siblings(cat: Catalog, rng: random.Random) -> None:
    """Tables t and t_2: folders <warehouse>/py/t and <warehouse>/py/t_2 share the prefix ".../t"."""
    for name in ("t", "t_2"):
        t = cat.create_table(f"{PY_NS}.{name}", ROW_SCHEMA)
        for i in range(3):
            t.append(rows(rng, i * 4, 4))


def _cumulative(*sizes: int) -> tuple[int, ...]:
    out, total = [], 0
    for s in sizes:
        total += s
        out.append(total)
    return tuple(out)


SHAPES: dict[str, Shape] = {s.name: s for s in [
    Shape("append_history", "pyiceberg", "12 small appends on main",
          {"append_history": _cumulative(*[5] * 12)}, build_append_history),
    Shape("cow_overwrite_delete", "pyiceberg",
          "3 appends; copy-on-write overwrite (delete + append snapshots) and delete",
          # overwrite = a delete snapshot (60 -> 40) then an append (40 -> 50); delete ids 0..4.
          {"cow_overwrite_delete": (20, 40, 60, 40, 50, 45)}, build_cow_overwrite_delete),
    Shape("evolution", "pyiceberg", "add/rename/drop column; add then remove a partition field",
          {"evolution": _cumulative(*[10] * 5)}, build_evolution),
    Shape("refs", "pyiceberg",
          "tags and branches, with and without max-ref-age / branch retention; commits on branches",
          {"refs": (10, 20, 30, 40, 25, 30, 37)}, build_refs),
    Shape("rollback", "pyiceberg", "4 appends, current rolled back to the 2nd",
          {"rollback": (10, 20, 30, 40)}, build_rollback),
    Shape("path_readded", "pyiceberg", "a data file path added, deleted, then added again",
          {"path_readded": (10, 20, 10, 20, 30)}, build_path_readded),
    Shape("format_v1", "pyiceberg", "format v1: appends and a copy-on-write delete",
          {"format_v1": (10, 20, 30, 20)}, build_format_v1, format_version=1),
    Shape("failed_commit", "pyiceberg",
          "2 commits plus data file, manifest and manifest list of a never-committed append",
          {"failed_commit": (10, 20)}, build_failed_commit),
    Shape("metadata_log_truncated", "pyiceberg",
          "8 commits with write.metadata.previous-versions-max=3",
          {"metadata_log_truncated": _cumulative(*[3] * 8)}, build_metadata_log_truncated),
    Shape("siblings", "pyiceberg", "tables t and t_2 in sibling folders",
          {"t": (4, 8, 12), "t_2": (4, 8, 12)}, build_siblings),
    # Java shapes: built by GenerateTables; counts follow its construction (see that file).
    Shape("java_mor_deletes", "java",
          "merge-on-read: position deletes (10 rows) and equality deletes (6 ids), then an append",
          # PyIceberg 0.12 refuses to scan snapshots with equality deletes.
          {"java_mor_deletes": (100, 90, 84, 114)}, judges=("duckdb", "java")),
    Shape("java_pos_deletes", "java", "merge-on-read position deletes only (3 rows), then an append",
          {"java_pos_deletes": (30, 27, 37)}),
    Shape("java_wap_cherrypick", "java",
          "staged WAP snapshot, main append, 2nd staged snapshot, cherry-pick of the 1st",
          {"java_wap_cherrypick": (20, 40, 40, 60, 60)}),
    Shape("java_statistics", "java", "partitioned; Puffin statistics and partition statistics",
          {"java_statistics": (40, 80, 120)}),
    Shape("java_v3_dv", "java", "format v3 with deletion vectors, one DV replacing another",
          {"java_v3_dv": (80, 77, 75, 73)}, format_version=3),
]}


def judges(shapes: Iterable[Shape]) -> dict[str, tuple[str, ...]]:
    """Table name -> judges, the argument oracle.capture and oracle.check_after take."""
    return {table: s.judges for s in shapes for table in s.tables}


def build(wh: Warehouse, names: list[str] | None = None, seed: int = 42) -> dict[str, Shape]:
    """Builds the named shapes (default: all) into wh; Java shapes in a single JVM run."""
    chosen = [SHAPES[n] for n in (names or list(SHAPES))]
    cat = wh.create((PY_NS, JAVA_NS))
    for shape in chosen:
        if shape.engine == "pyiceberg":
            shape.build(cat, random.Random(f"{seed}:{shape.name}"))
    java = [s.name for s in chosen if s.engine == "java"]
    if java:
        javajudge.run("GenerateTables", [*wh.java_args(), "--namespace", JAVA_NS,
                                         "--seed", str(seed), *java])
    return {s.name: s for s in chosen}

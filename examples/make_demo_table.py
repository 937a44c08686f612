#!/usr/bin/env python3
"""Write the demo table with a real engine (PyIceberg) and a realistic history.

Creates WAREHOUSE (removing an old one first) with a SQLite catalog `demo` (PyIceberg
SqlCatalog: WAREHOUSE/catalog.db, data under file://WAREHOUSE) and the table `shop.orders`,
partitioned by `region`, then commits:
  1-3. three appends (one day of orders each, spread over three regions),
  4.   an overwrite of the `apac` orders with corrected amounts (PyIceberg commits it as a
       delete snapshot plus an append snapshot),
  5.   a delete of the cancelled orders (rewrites the files that hold them).
It also writes WAREHOUSE/.pyiceberg.yaml describing the catalog (for `icemaint --config`).

Progress goes to stderr; stdout gets exactly one line: the table's current metadata location,
for the demo script to hand to icemaint.

Usage: make_demo_table.py WAREHOUSE
"""

import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (DoubleType, LongType, NestedField, StringType,
                             TimestamptzType)

NAMESPACE = "shop"
TABLE = "shop.orders"
DAY0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
ROWS_PER_DAY = 500
REGIONS = ("eu", "us", "apac")

SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "customer", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    NestedField(4, "status", StringType(), required=False),
    NestedField(5, "ordered_at", TimestamptzType(), required=False),
    NestedField(6, "region", StringType(), required=False),
)
# Identity partitioning: PyIceberg computes it in pure Python (time transforms would need the
# optional pyiceberg-core package).
SPEC = PartitionSpec(PartitionField(source_id=6, field_id=1000, transform=IdentityTransform(),
                                    name="region"))
ARROW_SCHEMA = pa.schema([
    pa.field("order_id", pa.int64(), nullable=False),
    pa.field("customer", pa.string()),
    pa.field("amount", pa.float64()),
    pa.field("status", pa.string()),
    pa.field("ordered_at", pa.timestamp("us", tz="UTC")),
    pa.field("region", pa.string()),
])


def log(msg: str) -> None:
    print(f"make_demo_table: {msg}", file=sys.stderr)


def orders(ids: list, day: int, amount_factor: float = 1.0) -> pa.Table:
    """Deterministic orders on DAY0 + day; every 10th is cancelled."""
    start = DAY0 + timedelta(days=day)
    return pa.Table.from_pylist(
        [{
            "order_id": i,
            "customer": f"customer-{i % 37:02d}",
            "amount": round((i % 97) * 1.25 * amount_factor, 2),
            "status": "cancelled" if i % 10 == 0 else "paid",
            "ordered_at": start + timedelta(seconds=(i * 97) % 86400),
            "region": REGIONS[i % len(REGIONS)],
        } for i in ids],
        schema=ARROW_SCHEMA,
    )


def write_pyiceberg_yaml(warehouse: Path, uri: str, warehouse_uri: str) -> None:
    (warehouse / ".pyiceberg.yaml").write_text(
        "# PyIceberg catalog configuration for the demo warehouse (written by\n"
        "# examples/make_demo_table.py). Use with PYICEBERG_HOME=<this folder>.\n"
        "catalog:\n"
        "  demo:\n"
        "    type: sql\n"
        f"    uri: {uri}\n"
        f"    warehouse: {warehouse_uri}\n")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    warehouse = Path(sys.argv[1]).resolve()
    if warehouse.exists():
        shutil.rmtree(warehouse)
    warehouse.mkdir(parents=True)
    uri = f"sqlite:///{warehouse}/catalog.db"
    warehouse_uri = f"file://{warehouse}"
    catalog = SqlCatalog("demo", uri=uri, warehouse=warehouse_uri)
    write_pyiceberg_yaml(warehouse, uri, warehouse_uri)

    catalog.create_namespace(NAMESPACE)
    table = catalog.create_table(TABLE, schema=SCHEMA, partition_spec=SPEC)
    log(f"created {TABLE} at {table.location()}")

    for day in range(3):
        table.append(orders(list(range(day * ROWS_PER_DAY, (day + 1) * ROWS_PER_DAY)), day))
        log(f"append: day {day} ({ROWS_PER_DAY} orders)")

    # The apac amounts were booked in the wrong currency: replace them with corrected rows.
    apac_ids = [i for i in range(3 * ROWS_PER_DAY) if REGIONS[i % len(REGIONS)] == "apac"]
    table.overwrite(orders(apac_ids, day=2, amount_factor=1.1),
                    overwrite_filter=EqualTo("region", "apac"))
    log(f"overwrite: {len(apac_ids)} apac orders replaced with corrected amounts")

    table.delete(EqualTo("status", "cancelled"))
    log("delete: cancelled orders removed")

    table = catalog.load_table(TABLE)
    rows = table.scan().to_arrow().num_rows
    log(f"{len(table.metadata.snapshots)} snapshots, {rows} rows, "
        f"metadata {table.metadata_location}")
    print(table.metadata_location)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Read the demo table back with PyIceberg, through its SQLite catalog, to show it is whole.

Loads `shop.orders` from the catalog in WAREHOUSE (see make_demo_table.py) and scans every row of
the current snapshot, which opens every live data file: a file deleted by mistake makes this
fail. Prints the row count, the snapshot count and the current snapshot id.

Usage: read_demo_table.py WAREHOUSE [--count | --expect-rows N]
  --count          print only the row count
  --expect-rows N  exit 1 unless the table has exactly N rows
"""

import sys
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog


def main() -> int:
    args = sys.argv[1:]
    if not args or len(args) > 3:
        print(__doc__, file=sys.stderr)
        return 2
    warehouse = Path(args[0]).resolve()
    catalog = SqlCatalog("demo", uri=f"sqlite:///{warehouse}/catalog.db",
                         warehouse=f"file://{warehouse}")
    table = catalog.load_table("shop.orders")
    rows = table.scan().to_arrow().num_rows
    if args[1:] == ["--count"]:
        print(rows)
        return 0
    snapshot = table.current_snapshot()
    print(f"PyIceberg read shop.orders: {rows} rows, {len(table.metadata.snapshots)} snapshots, "
          f"current snapshot {snapshot.snapshot_id if snapshot else None}")
    if len(args) == 3 and args[1] == "--expect-rows":
        if rows != int(args[2]):
            print(f"read_demo_table: expected {args[2]} rows", file=sys.stderr)
            return 1
        print(f"same {rows} rows as before the maintenance")
    return 0


if __name__ == "__main__":
    sys.exit(main())

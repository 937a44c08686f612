#!/usr/bin/env bash
# THE main job (README "Quick start"): on a fresh machine, install the dependencies, build
# icemaint, write an Iceberg table with a real engine (PyIceberg, SQLite catalog) with a
# realistic history, inspect it with icemaint, expire old snapshots, remove an orphan file, and
# read the table back with PyIceberg to show it whole (same rows as before).
#
#   examples/.venv/            Python virtualenv with pinned PyIceberg + pyarrow (kept; reused)
#   examples/demo-warehouse/   the warehouse: catalog.db, .pyiceberg.yaml, shop/orders/...
#                              (recreated on every run, so the demo is repeatable)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/examples/.venv"
WAREHOUSE="$ROOT/examples/demo-warehouse"
# Pinned: the demo's output should not change under us.
PY_REQUIREMENTS=("pyiceberg[sql-sqlite,pyarrow]==0.12.0" "pyarrow==26.0.1")
ICEMAINT="$ROOT/build/icemaint"

say() { printf '\n=== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. dependencies (Debian packages)"
./scripts/install-deps.sh

say "2. build icemaint (build/)"
BUILD_LOG="$ROOT/build/demo-build.log"
mkdir -p "$ROOT/build"
if ! { cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       ninja -C "$ROOT/build" -j "${ICM_JOBS:-2}" icemaint_cli; } >"$BUILD_LOG" 2>&1; then
  tail -n 40 "$BUILD_LOG" >&2
  echo "demo: the build failed (full log: $BUILD_LOG)" >&2
  exit 1
fi
run "$ICEMAINT" --version

say "3. Python virtualenv with PyIceberg (examples/.venv)"
STAMP="$VENV/.demo-requirements"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${PY_REQUIREMENTS[*]}" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PY_REQUIREMENTS[@]}"
  # written last, so an interrupted install is retried next time
  echo "${PY_REQUIREMENTS[*]}" > "$STAMP"
fi
"$VENV/bin/python" -c 'import pyiceberg; print("PyIceberg", pyiceberg.__version__)'

say "4. write shop.orders with PyIceberg: 3 appends, an overwrite, a delete"
METADATA="$("$VENV/bin/python" examples/make_demo_table.py "$WAREHOUSE")"
echo "current metadata: $METADATA"

say "5. icemaint inspect / snapshots / files"
# By its current metadata file ...
run "$ICEMAINT" inspect "$METADATA"
echo
# ... or by name, through the same SQLite catalog PyIceberg used (.pyiceberg.yaml).
CATALOG=(--config "$WAREHOUSE/.pyiceberg.yaml" --catalog demo)
run "$ICEMAINT" "${CATALOG[@]}" snapshots shop.orders
echo
run "$ICEMAINT" "${CATALOG[@]}" files shop.orders

ROWS="$("$VENV/bin/python" examples/read_demo_table.py "$WAREHOUSE" --count)"
echo
echo "PyIceberg reads $ROWS rows"

say "6. expire snapshots: keep the last 2 (dry run first)"
run "$ICEMAINT" "${CATALOG[@]}" expire-snapshots shop.orders --older-than 0m --retain-last 2 --dry-run
echo
run "$ICEMAINT" "${CATALOG[@]}" expire-snapshots shop.orders --older-than 0m --retain-last 2

say "7. remove orphan files (a crashed writer left one behind five days ago)"
STRAY="$WAREHOUSE/shop/orders/data/region=eu/00000-9-crashed-writer.parquet"
echo "not a real Parquet file: written by a job that died before its commit" > "$STRAY"
touch -d '5 days ago' "$STRAY"
run "$ICEMAINT" "${CATALOG[@]}" remove-orphan-files shop.orders --dry-run
echo
run "$ICEMAINT" "${CATALOG[@]}" remove-orphan-files shop.orders

say "8. read the table back with PyIceberg"
"$VENV/bin/python" examples/read_demo_table.py "$WAREHOUSE" --expect-rows "$ROWS"
run "$ICEMAINT" "${CATALOG[@]}" snapshots shop.orders

say "demo finished: warehouse in examples/demo-warehouse (catalog config: .pyiceberg.yaml)"

#!/usr/bin/env bash
# bench/maintain_all.sh: `icemaint maintain --all` over many small tables in one SQLite catalog
# against the sum of the single-table runs (issue #21, "Scale": maintain --all's CPU at most 2x
# the sum of the single runs'; docs/BENCHMARKS.md, "maintain --all over 1,000 small tables").
#
#   bench/maintain_all.sh BUILD_DIR [WORK_DIR [N_TABLES]]
#     defaults /tmp/icm-maintain-all, 1000 tables (bench/gen_catalog_tables.py: 12 snapshots of
#     5 data files each, 2 orphans dated 2020, registered in WORK_DIR/catalog.db as bench.db.tNNNN).
#     WORK_DIR is removed after unless KEEP=1.
#   Environment: DRY (default 1: every run is a dry run, so the tables stay as generated and the
#   runs can be repeated; DRY=0: real runs, the single runs on one copy of the warehouse and
#   maintain --all on another, `--settle 0s` for the single sweeps), RUNS (default 3: repeats of
#   the whole single-run sum and of maintain --all), MAINTAIN_ARGS (extra options for maintain).
#
# The single runs: for every table, `icemaint expire-snapshots db.tNNNN` then
# `icemaint remove-orphan-files db.tNNNN`, each its own process under /usr/bin/time (user+sys
# CPU, wall); the script sums them. Then `icemaint maintain --all` under /usr/bin/time -v, if the
# CLI has the command (`icemaint maintain --help` succeeds); otherwise it says the comparison is
# pending. Needs the project venv's PyIceberg (ICM_VENV, default /work/main/build/venv).
set -euo pipefail

BUILD=${1:?usage: maintain_all.sh BUILD_DIR [WORK_DIR [N_TABLES]]}
WORK=${2:-/tmp/icm-maintain-all}
N=${3:-1000}
DRY=${DRY:-1}
RUNS=${RUNS:-3}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="$(cd "$BUILD" && pwd)/icemaint"
PY="${ICM_VENV:-/work/main/build/venv}/bin/python"

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
if [ ! -e "$WORK/gen/catalog.db" ]; then
    rm -rf "$WORK/gen"
    "$PY" "$ROOT/bench/gen_catalog_tables.py" "$BUILD/bench/bench_expire" "$WORK/gen" "$N"
fi
echo "warehouse: $(du -sh "$WORK/gen/wh" | cut -f1), $(find "$WORK/gen/wh" -type f | wc -l) files"

dry=()
[ "$DRY" = 1 ] && dry=(--dry-run)
# A copy of the generated catalog and warehouse at $1 (the catalog records absolute paths, so
# the copy's rows are rewritten to name the copy's tables).
copy_to() {
    rm -rf "$1" && cp -a "$WORK/gen" "$1"
    "$PY" - "$1" "$WORK/gen" <<'PY'
import sqlite3, sys
dst, src = sys.argv[1], sys.argv[2]
db = sqlite3.connect(f"{dst}/catalog.db")
db.execute("UPDATE iceberg_tables SET metadata_location = replace(metadata_location, ?, ?)",
           (src, dst))
db.commit()
PY
}
cat_args() { echo --uri "sqlite:///$1/catalog.db" --warehouse "file://$1/wh" --catalog bench; }

for run in $(seq "$RUNS"); do
    d="$WORK/gen"
    if [ "$DRY" != 1 ]; then
        d="$WORK/single"
        copy_to "$d"
    fi
    : > "$WORK/single_$run.txt"
    start=$(date +%s.%N)
    for i in $(seq 0 $((N - 1))); do
        t=$(printf 'db.t%04d' "$i")
        /usr/bin/time -a -o "$WORK/single_$run.txt" -f "expire %U %S %e %M" \
            "$CLI" $(cat_args "$d") expire-snapshots "$t" "${dry[@]}" > /dev/null
        settle=()
        [ "$DRY" = 1 ] || settle=(--settle 0s)
        /usr/bin/time -a -o "$WORK/single_$run.txt" -f "orphans %U %S %e %M" \
            "$CLI" $(cat_args "$d") remove-orphan-files "$t" "${dry[@]}" "${settle[@]}" > /dev/null
    done
    end=$(date +%s.%N)
    awk -v n="$N" -v run="$run" -v span="$(echo "$end - $start" | bc)" '
        { cpu[$1] += $2 + $3; wall[$1] += $4; if ($5 > rss) rss = $5; c[$1]++ }
        END { printf "single runs %d: %d tables, CPU expire %.2f s + orphans %.2f s = %.2f s; wall sum %.2f s (loop %.1f s); max peak RSS %.1f MiB\n",
              run, n, cpu["expire"], cpu["orphans"], cpu["expire"] + cpu["orphans"],
              wall["expire"] + wall["orphans"], span, rss / 1024 }' "$WORK/single_$run.txt"
done | tee "$WORK/single.txt"

if ! "$CLI" maintain --help > /dev/null 2>&1; then
    echo "maintain --all: this icemaint has no maintain command; the comparison is pending"
    exit 0
fi
. "$ROOT/bench/timed.sh"
mdry=()
[ "$DRY" = 1 ] && mdry=(--dry-run)
for run in $(seq "$RUNS"); do
    d="$WORK/gen"
    if [ "$DRY" != 1 ]; then
        d="$WORK/all"
        copy_to "$d"
    fi
    timed_v "maintain_all_$run" "$CLI" $(cat_args "$d") maintain --all "${mdry[@]}" \
        ${MAINTAIN_ARGS:-}
done | tee "$WORK/all.txt"
python3 - "$WORK/single.txt" "$WORK/all.txt" <<'PY'
import re, statistics, sys
single = [float(re.search(r"= ([0-9.]+) s;", l).group(1)) for l in open(sys.argv[1])]
alls = [float(re.search(r"cpu +([0-9.]+) s", l).group(1)) for l in open(sys.argv[2])]
s, a = statistics.median(single), statistics.median(alls)
print(f"CPU: single runs' sum median {s:.2f} s (best {min(single):.2f}); maintain --all median "
      f"{a:.2f} s (best {min(alls):.2f}); ratio {a / s:.2f}x (target at most 2x: "
      f"{'met' if a <= 2 * s else 'MISSED'})")
PY

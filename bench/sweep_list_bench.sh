#!/usr/bin/env bash
# bench/sweep_list_bench.sh: the sweep's classification rate over a big file list (issue #21,
# "Scale"; docs/BENCHMARKS.md, "Orphan sweep over a file list at scale").
#
#   bench/sweep_list_bench.sh BUILD_DIR [N_ROWS [WORK_DIR]]
#     BUILD_DIR  a build with icemaint and bench/bench_orphans (RelWithDebInfo or Release)
#     N_ROWS     rows in the file list (default 10000000)
#     WORK_DIR   where the table and the list go (default /tmp/icm-sweep-list; removed after,
#                unless KEEP=1)
#   Environment: ORPHAN_PERCENT (default 10), RUNS (default 3), SHARD (e.g. 3/8: passed as
#   `--shard 3/8` when the CLI has it; the shard's own peak RSS is the number the issue bounds),
#   REFONLY (default 1: also time the list without its orphan rows, which isolates the
#   classification of referenced rows from the per-orphan work).
#
# 1. `bench_orphans meta` writes a filesystem-layout table whose one snapshot references
#    N_ROWS * (100 - ORPHAN_PERCENT) / 100 data files (manifests of 10,000 entries, written by
#    the library's manifest writer); no data file exists on disk.
# 2. `bench_orphans list` streams the file list (path<TAB>size<TAB>mtime_ms, mtimes in 2020):
#    every referenced file once, the orphans spread evenly among them. About 65 bytes a row, so
#    the free space of WORK_DIR is checked first (6.3 GB at 100M rows, 12 GB with REFONLY).
# 3. RUNS times, under /usr/bin/time -v: `icemaint remove-orphan-files WORK/t --dry-run
#    --file-list LIST` (default cutoff 3 days: every row is old enough), stdout (one line per
#    orphan) to /dev/null. Prints wall, user+sys CPU, peak RSS, and rows per CPU second and
#    per wall second; then the best and the median.
set -euo pipefail

BUILD=${1:?usage: sweep_list_bench.sh BUILD_DIR [N_ROWS [WORK_DIR]]}
N=${2:-10000000}
WORK=${3:-/tmp/icm-sweep-list}
ORPHAN_PERCENT=${ORPHAN_PERCENT:-10}
RUNS=${RUNS:-3}
SHARD=${SHARD:-}
BENCH="$BUILD/bench/bench_orphans"
CLI="$BUILD/icemaint"
REFERENCED=$((N - N * ORPHAN_PERCENT / 100))
LIST="$WORK/list.tsv"

mkdir -p "$WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
# the list (about 65 bytes a row) and, with REFONLY, its copy without orphans; metadata; 1 GiB spare
row_bytes=70
[ "${REFONLY:-1}" = 1 ] && row_bytes=140
need_kb=$((N * row_bytes / 1024 + N / 10000 * 60 + 1048576))
free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt "$need_kb" ]; then
    echo "sweep_list_bench: $WORK has $((free_kb / 1048576)) GiB free, needs about $((need_kb / 1048576)) GiB" >&2
    exit 1
fi

shard_args=()
if [ -n "$SHARD" ]; then
    if "$CLI" remove-orphan-files --help | grep -q -- '--shard'; then
        shard_args=(--shard "$SHARD")
    else
        echo "sweep_list_bench: this icemaint has no --shard; SHARD=$SHARD ignored (pending)" >&2
    fi
fi

if [ ! -e "$WORK/t/metadata/v1.metadata.json" ] || [ ! -s "$LIST" ] ||
   [ "$(cat "$WORK/rows" 2>/dev/null)" != "$N $ORPHAN_PERCENT" ]; then
    rm -rf "$WORK/t" "$LIST" "$WORK/refonly.tsv"
    echo "generating: table referencing $REFERENCED files, list of $N rows ($ORPHAN_PERCENT% orphans)"
    /usr/bin/time -f "meta: %e s wall, %U+%S s CPU, peak RSS %M KB" "$BENCH" meta "$WORK" "$REFERENCED"
    /usr/bin/time -f "list: %e s wall, %U+%S s CPU" "$BENCH" list "$WORK" "$N" "$ORPHAN_PERCENT" > "$LIST"
    echo "$N $ORPHAN_PERCENT" > "$WORK/rows"
fi
echo "list: $(du -h "$LIST" | cut -f1), metadata: $(du -sh "$WORK/t/metadata" | cut -f1)"
cat "$LIST" > /dev/null # into the page cache if it fits: the sweep, not the disk, is measured

measure() { # LABEL LIST ROWS
    local label=$1 list=$2 rows=$3
    for i in $(seq "$RUNS"); do
        /usr/bin/time -v "$CLI" remove-orphan-files "$WORK/t" --dry-run --file-list "$list" \
            ${shard_args[@]+"${shard_args[@]}"} > /dev/null 2> "$WORK/run_$i.time"
        awk -v n="$rows" -v i="$i" -v l="$label" -F': ' '
        /Elapsed \(wall clock\)/ { k = split($2, p, ":"); w = p[k] + (k > 1 ? p[k-1] * 60 : 0) + (k > 2 ? p[k-2] * 3600 : 0) }
        /User time/ { u = $2 } /System time/ { s = $2 }
        /Maximum resident/ { r = $2 / 1024 }
        END { printf "%s run %d: wall %.2f s, cpu %.2f s (user %.2f, sys %.2f), peak RSS %.1f MiB, %.0f rows/CPU s, %.0f rows/wall s\n",
              l, i, w, u + s, u, s, r, n / (u + s), n / w }' "$WORK/run_$i.time"
    done | tee "$WORK/runs.txt"
    python3 - "$WORK/runs.txt" <<'PY'
import re, statistics, sys
runs = [dict(zip(("wall", "cpu", "rss"), map(float, re.search(
    r"wall ([0-9.]+) s, cpu ([0-9.]+) s.*peak RSS ([0-9.]+) MiB", line).groups())))
    for line in open(sys.argv[1])]
for k in ("wall", "cpu", "rss"):
    v = [r[k] for r in runs]
    print(f"  {k}: best {min(v):.2f}, median {statistics.median(v):.2f}, max {max(v):.2f}")
PY
}
ROWS=$(wc -l < "$LIST")
measure "all rows ($ROWS: $N data rows + metadata files)" "$LIST" "$ROWS"
if [ "${REFONLY:-1}" = 1 ]; then
    [ -s "$WORK/refonly.tsv" ] || grep -v '/o-' "$LIST" > "$WORK/refonly.tsv"
    ROWS=$(wc -l < "$WORK/refonly.tsv")
    cat "$WORK/refonly.tsv" > /dev/null
    measure "referenced rows only ($ROWS)" "$WORK/refonly.tsv" "$ROWS"
fi

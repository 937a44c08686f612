#!/bin/sh
# bench/orphans_bench.sh: the orphan-sweep benchmark (docs/BENCHMARKS.md, "Orphan sweep").
#
# Usage: bench/orphans_bench.sh BUILD_DIR [N_FILES] [WORK_DIR]
#   BUILD_DIR  a Release build with bench_orphans (cmake -DCMAKE_BUILD_TYPE=Release)
#   N_FILES    total data files, 10% of them orphans (default 1000000)
#   WORK_DIR   where the table is generated (default /dev/shm/icm-orphans-bench; removed after)
#
# Measures, on a warm cache, three runs each:
#   - the listing floor: `find DIR -type f` (names only) and `find -printf` with size and mtime
#     (what a sweep needs: it must stat every file);
#   - `bench_orphans run`: an in-process dry run of icm_remove_orphan_files (keep set from the
#     manifests, streamed listing, classification), with its peak RSS and keep-set size.
set -eu

BUILD=${1:?usage: orphans_bench.sh BUILD_DIR [N_FILES] [WORK_DIR]}
N=${2:-1000000}
WORK=${3:-/dev/shm/icm-orphans-bench}
BIN="$BUILD/bench/bench_orphans"
ORPHANS=$((N / 10))
REFERENCED=$((N - ORPHANS))

rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

echo "generating $REFERENCED referenced + $ORPHANS orphan files under $WORK"
start=$(date +%s.%N)
"$BIN" gen "$WORK" "$REFERENCED" "$ORPHANS"
end=$(date +%s.%N)
echo "generation: $(echo "$end - $start" | bc) s"

# warm the dentry/inode cache once
find "$WORK/t" -type f > /dev/null

timed() { # label command...
    label=$1
    shift
    for i in 1 2 3; do
        /usr/bin/time -f "$label run $i: %e s, peak RSS %M KB" "$@" > /dev/null
    done
}

timed "find -type f" find "$WORK/t" -type f
timed "find -printf size+mtime" find "$WORK/t" -type f -printf '%s %T@ %p\n'
for i in 1 2 3; do
    /usr/bin/time -f "dry run process $i: %e s, peak RSS %M KB" "$BIN" run "$WORK"
done

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
#     (a stat per file; the sweep lists names only and stats just the unreferenced files);
#   - `bench_orphans run`: an in-process dry run of icm_orphan_sweep (classification, keep set
#     from the manifests, streamed listing), with its peak RSS and keep-set size;
#   - PAIRS (default 10) alternating pairs of `find -type f` and `bench_orphans run`, each pair
#     a ratio (the floor comparison; medians and ranges printed).
# Then, against Java Iceberg ("DIY on core utilities": tests/interop/java BenchOrphans, Spark's
# DeleteOrphanFilesSparkAction without Spark, built from public core calls; needs java 17 and
# mvn, see scripts/setup-java.sh) with one cutoff for both (now + 1 h: every file is old enough):
#   - whole processes under /usr/bin/time -v (wall, user+sys CPU, peak RSS): the icemaint CLI
#     `icemaint --json remove-orphan-files DIR/t --dry-run --force --older-than CUTOFF` and
#     BenchOrphans --warmup 0 --iterations 1 (JVM start, metadata, valid set, listing, compare);
#   - Java in-process: --warmup 3 --iterations 5, one listing thread (as icemaint), then
#     --threads 2 (Spark's driver/executor split of the listing and manifest reads on a pool);
#   - the orphan sets of the CLI and of Java must be identical, path by path (checked; the
#     script fails otherwise and prints the paths that differ).
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

# The floor comparison: on a shared machine both sides move by a third from one minute to the
# next, so find and the in-process dry run alternate, PAIRS times, and each pair gives a ratio.
PAIRS=${PAIRS:-10}
echo "$PAIRS alternating pairs: find -type f, then bench_orphans run"
for i in $(seq "$PAIRS"); do
    f=$( { /usr/bin/time -f "%e" find "$WORK/t" -type f > /dev/null; } 2>&1 )
    d=$("$BIN" run "$WORK" | sed -n 's/^dry_run_seconds=\([0-9.]*\).*/\1/p')
    echo "pair $i: find $f s, dry run $d s"
done | tee "$WORK/pairs.txt"
python3 - "$WORK/pairs.txt" <<'EOF'
import re, statistics, sys
pairs = [tuple(map(float, re.findall(r"([0-9.]+) s", line))) for line in open(sys.argv[1])]
finds, dry = [p[0] for p in pairs], [p[1] for p in pairs]
ratios = sorted(d / f for f, d in pairs)
print(f"find min {min(finds):.3f} median {statistics.median(finds):.3f}; "
      f"dry run min {min(dry):.3f} median {statistics.median(dry):.3f}; "
      f"ratio per pair: median {statistics.median(ratios):.2f}, range {ratios[0]:.2f}-{ratios[-1]:.2f}")
EOF

# --- icemaint CLI and Java Iceberg (DIY on core utilities), whole processes and in-process ---
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CUTOFF=$(( $(date +%s) * 1000 + 3600000 ))
CP=$("$ROOT/scripts/setup-java.sh")

. "$ROOT/bench/timed.sh"

echo "cutoff $CUTOFF (now + 1 h)"
for i in 1 2 3; do
    timed_v "icemaint_cli_$i" "$BUILD/icemaint" --json remove-orphan-files "$WORK/t" --dry-run \
        --force --older-than "$CUTOFF"
done
for i in 1 2 3; do
    timed_v "java_process_$i" java -XX:+UseParallelGC -cp "$CP" dev.icemaint.interop.BenchOrphans \
        --table "$WORK/t" --older-than-ms "$CUTOFF" --warmup 0 --iterations 1 \
        --orphans-out "$WORK/java_orphans.txt"
    grep '"timed"' "$WORK/java_process_$i.out"
done
echo "Java in-process, 1 thread:"
java -XX:+UseParallelGC -cp "$CP" dev.icemaint.interop.BenchOrphans --table "$WORK/t" \
    --older-than-ms "$CUTOFF" --warmup 3 --iterations 5
echo "Java in-process, 2 threads:"
java -XX:+UseParallelGC -cp "$CP" dev.icemaint.interop.BenchOrphans --table "$WORK/t" \
    --older-than-ms "$CUTOFF" --warmup 3 --iterations 5 --threads 2

echo "same orphan set?"
python3 - "$WORK/icemaint_cli_1.out" "$WORK/java_orphans.txt" <<'EOF'
import json, sys
def norm(p):  # Hadoop lists file:/x; icemaint names the location as the metadata does (/x)
    for prefix in ("file://", "file:"):
        if p.startswith(prefix):
            return p[len(prefix):]
    return p
doc = json.load(open(sys.argv[1]))
mine = {norm(o["path"]) for o in doc["orphans"]}
java = {norm(line.rstrip("\n")) for line in open(sys.argv[2]) if line.strip()}
print(f"icemaint {len(mine)} orphans (listed {doc['listed']}, referenced {doc['referenced']}),",
      f"Java {len(java)}:", "identical" if mine == java else "DIFFERENT")
for name, extra in (("only icemaint", mine - java), ("only Java", java - mine)):
    for p in sorted(extra)[:20]:
        print(f"  {name}: {p}")
sys.exit(0 if mine == java else 1)
EOF

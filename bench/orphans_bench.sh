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
#   - `bench_orphans run`: an in-process dry run of icm_remove_orphan_files (keep set from the
#     manifests, streamed listing, classification), with its peak RSS and keep-set size.
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

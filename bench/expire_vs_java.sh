#!/usr/bin/env bash
# bench/expire_vs_java.sh: snapshot-expiry planning, icemaint against Java Iceberg's
# ExpireSnapshots and against the floor (docs/BENCHMARKS.md, "Snapshot expiry: icemaint vs Java
# and the floor").
#
#   bench/expire_vs_java.sh BUILD_DIR WORK_DIR [SNAPSHOTS [FILES_PER_SNAPSHOT]]
#
# 1. `bench_expire gen` (icemaint's own manifest and manifest-list writers) writes a table at
#    WORK_DIR/t unless it is there: SNAPSHOTS fast appends of FILES_PER_SNAPSHOT data files each,
#    every 10th also deleting an earlier manifest's files (defaults 2000 x 50: 100,000 data
#    files, 2,200 manifests, 2,000 manifest lists). Its metadata JSON has an empty snapshot-log,
#    which Java's TableMetadata.Builder cannot rebuild from (NoSuchElementException in
#    updateSnapshotLog); this script fills the snapshot-log in from the snapshots (as every real
#    writer keeps it), once, before either engine runs.
# 2. The cutoff is the timestamp of the middle snapshot (the same one `bench_expire run` uses):
#    the older half expires, retain_last 1.
# 3. Whole processes under /usr/bin/time -v (wall, user+sys CPU, peak RSS):
#    `icemaint --json expire-snapshots DIR/t --dry-run --no-verify --older-than CUTOFF` (the
#    generated table has no data files, and Java plans without verifying) and Java BenchExpire
#    with no warm-up and one iteration (JVM start, class loading, metadata parse, expiry).
# 4. In-process: `bench_expire run` (open + plan, library call) and `bench_expire floor` (read and
#    decode every manifest list and every unique manifest once), 3 runs each, and the lower
#    inflate-only floors (`bench_expire inflate`: read every Avro file once and inflate its
#    blocks, decoding nothing; with zlib and with libdeflate, which the library uses), 3 runs
#    each; Java BenchExpire
#    with 3 warm-up and 5 timed iterations around ExpireSnapshots.commit() (reachable cleanup; an
#    extra run with --strategy auto shows Java's own choice, incremental here).
# 5. icemaint's planned paths and Java's collected paths must be the same set (checked).
# Needs: java 17 and mvn (scripts/setup-java.sh), python3, /usr/bin/time.
set -euo pipefail

BUILD=${1:?usage: expire_vs_java.sh BUILD_DIR WORK_DIR [SNAPSHOTS [FILES_PER_SNAPSHOT]]}
WORK=${2:?usage: expire_vs_java.sh BUILD_DIR WORK_DIR [SNAPSHOTS [FILES_PER_SNAPSHOT]]}
SNAPSHOTS=${3:-2000}
FILES_PER=${4:-50}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$BUILD/bench/bench_expire"
CLI="$BUILD/icemaint"
META="$WORK/t/metadata/v1.metadata.json"

mkdir -p "$WORK"
if [ ! -f "$META" ]; then
  "$BENCH" gen "$WORK" "$SNAPSHOTS" "$FILES_PER" 2>/dev/null
  python3 - "$META" <<'EOF'
import json, sys
path = sys.argv[1]
md = json.load(open(path))
if not md.get("snapshot-log"):
    snaps = sorted(md["snapshots"], key=lambda s: s["sequence-number"])
    md["snapshot-log"] = [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]}
                          for s in snaps]
    json.dump(md, open(path, "w"))
EOF
fi
CUTOFF=$(python3 -c '
import json, sys
s = sorted(json.load(open(sys.argv[1]))["snapshots"], key=lambda s: s["timestamp-ms"])
print(s[len(s) // 2]["timestamp-ms"])' "$META")
CP="$("$ROOT/scripts/setup-java.sh")"
JAVA=(java -XX:+UseParallelGC -cp "$CP" dev.icemaint.interop.BenchExpire --metadata "$META"
      --older-than-ms "$CUTOFF")

. "$ROOT/bench/timed.sh"

echo "table: $WORK/t ($SNAPSHOTS snapshots x $FILES_PER files), cutoff $CUTOFF"
echo "== whole processes"
timed_v icemaint_cli "$CLI" --json expire-snapshots "$WORK/t" --dry-run --no-verify \
  --older-than "$CUTOFF"
timed_v java_process "${JAVA[@]}" --warmup 0 --iterations 1 --paths-out "$WORK/java_paths.txt"
echo "== in-process"
for i in 1 2 3; do timed_v "icemaint_run_$i" "$BENCH" run "$WORK"; cat "$WORK/icemaint_run_$i.out"; done
for i in 1 2 3; do timed_v "floor_$i" "$BENCH" floor "$WORK"; cat "$WORK/floor_$i.out"; done
for i in 1 2 3; do "$BENCH" inflate "$WORK" zlib; done
for i in 1 2 3; do "$BENCH" inflate "$WORK" libdeflate; done | tee "$WORK/inflate_libdeflate.out"
"${JAVA[@]}" --warmup 3 --iterations 5 | tee "$WORK/java_inprocess.out"
echo "== Java, strategy auto (its own choice)"
"${JAVA[@]}" --warmup 3 --iterations 3 --strategy auto | tail -3
echo "== ratios (best of each, all from this run of the script)"
python3 - "$WORK" <<'EOF'
import glob, json, re, sys
work = sys.argv[1]
runs = [open(f).read() for f in sorted(glob.glob(work + "/icemaint_run_*.out"))]
m = [re.search(r"dry run: ([0-9.]+) s \(cpu [0-9.]+ s; table open [0-9.]+ s, cpu [0-9.]+ s; "
               r"expiry ([0-9.]+) s", r) for r in runs]
total = min(float(x.group(1)) for x in m)
expiry = min(float(x.group(2)) for x in m)
floor = min(float(x) for x in re.findall(r"inflate floor \(libdeflate\): ([0-9.]+) s",
                                         open(work + "/inflate_libdeflate.out").read()))
java = [json.loads(l) for l in open(work + "/java_inprocess.out") if l.startswith("{")]
jbest = min(j["seconds"] for j in java if j.get("phase") == "timed")
print(f"icemaint expiry call {expiry:.3f} s (open + expiry {total:.3f} s); Java commit() "
      f"{jbest:.3f} s; libdeflate floor {floor:.3f} s")
print(f"vs Java: {jbest / expiry:.1f}x ({jbest / total:.1f}x counting the open); "
      f"vs the floor: {expiry / floor:.2f}x ({total / floor:.2f}x counting the open)")
EOF
echo "== same deleted set?"
python3 - "$WORK/icemaint_cli.out" "$WORK/java_paths.txt" <<'EOF'
import json, sys
norm = lambda p: p[len("file:"):] if p.startswith("file:") else p
doc = json.load(open(sys.argv[1]))
mine = {norm(f["path"]) for k in ("deleted_files", "deleted_manifests", "deleted_statistics_files")
        for f in doc[k]}
java = {norm(line.strip()) for line in open(sys.argv[2]) if line.strip()}
print(f"icemaint {len(mine)} paths ({len(doc['expired'])} snapshots), Java {len(java)} paths:",
      "identical" if mine == java else f"DIFFERENT: {len(mine - java)} only icemaint, "
      f"{len(java - mine)} only Java")
sys.exit(0 if mine == java else 1)
EOF

#!/usr/bin/env bash
# bench/expire_10m.sh: snapshot expiry of a table with about 10M live data files, peak memory and
# time (issue #21, "Scale": at most 1 GB peak; docs/BENCHMARKS.md, "Expiry of a table with 10M
# live files").
#
#   bench/expire_10m.sh BUILD_DIR [WORK_DIR [SNAPSHOTS [FILES_PER_SNAPSHOT]]]
#     defaults: /tmp/icm-expire-10m, 2000 snapshots x 5600 files: 11.2M files appended, the
#     200 deleting snapshots remove 1.12M of them, so the current snapshot has 10.08M live
#     data files in 2,000 manifests (2,200 written), and the 2,000 manifest lists hold 2.0M
#     rows. WORK_DIR is removed after unless KEEP=1. RUNS (default 3) runs of each step.
#
# 1. `bench_expire gen` (the library's manifest and manifest-list writers) writes the table
#    unless WORK_DIR/t exists; data files are not created (planning never opens them).
#    The live count is checked with `icemaint files` (one line per live file).
# 2. The cutoff is the middle snapshot's timestamp: the older 1,000 snapshots expire, and with
#    them the manifests only they reach and the 0.5M data files their deleting snapshots
#    dropped.
# 3. Under /usr/bin/time -v (wall, user+sys CPU, peak RSS), RUNS times each:
#    - `icemaint expire-snapshots WORK/t --dry-run --no-verify --older-than CUTOFF`;
#    - the real expiry (commit, then delete), from a copy of the metadata folder restored
#      before each run: `icemaint expire-snapshots WORK/t --no-verify --older-than CUTOFF`.
#    --no-verify: verification stats every retained data file (10M here), which do not exist;
#    what it costs is measured in "Verification before deleting".
set -euo pipefail

BUILD=${1:?usage: expire_10m.sh BUILD_DIR [WORK_DIR [SNAPSHOTS [FILES_PER_SNAPSHOT]]]}
WORK=${2:-/tmp/icm-expire-10m}
SNAPSHOTS=${3:-2000}
FILES_PER=${4:-5600}
RUNS=${RUNS:-3}
CLI="$BUILD/icemaint"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

mkdir -p "$WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
if [ ! -e "$WORK/t/metadata/v1.metadata.json" ]; then
    /usr/bin/time -f "gen: %e s wall, peak RSS %M KB" "$BUILD/bench/bench_expire" gen "$WORK" \
        "$SNAPSHOTS" "$FILES_PER"
    rm -rf "$WORK/metadata.orig"
fi
[ -d "$WORK/metadata.orig" ] || cp -a "$WORK/t/metadata" "$WORK/metadata.orig"
echo "metadata: $(du -sh "$WORK/t/metadata" | cut -f1), $(ls "$WORK/t/metadata" | wc -l) files"
echo "live files in the current snapshot: $("$CLI" files "$WORK/t" | tail -n 1)"
CUTOFF=$(python3 -c '
import json, sys
s = sorted(json.load(open(sys.argv[1]))["snapshots"], key=lambda s: s["timestamp-ms"])
print(s[len(s) // 2]["timestamp-ms"])' "$WORK/t/metadata/v1.metadata.json")
echo "cutoff $CUTOFF (the middle snapshot)"

. "$ROOT/bench/timed.sh"
restore() {
    rm -rf "$WORK/t/metadata" && cp -a "$WORK/metadata.orig" "$WORK/t/metadata"
}
for i in $(seq "$RUNS"); do
    restore
    timed_v "dry_$i" "$CLI" --json expire-snapshots "$WORK/t" --dry-run --no-verify \
        --older-than "$CUTOFF"
done
python3 - "$WORK/dry_1.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"dry run plans: {len(d['expired'])} snapshots expired, counts {d.get('counts')}")
PY
for i in $(seq "$RUNS"); do
    restore
    timed_v "real_$i" "$CLI" --json expire-snapshots "$WORK/t" --no-verify --older-than "$CUTOFF"
    python3 - "$WORK/real_$i.out" "$WORK/t/metadata" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
left = [f for f in os.listdir(sys.argv[2]) if f.endswith(".avro")]
print(f"  real run: {len(d['expired'])} snapshots expired, counts {d.get('counts')}, "
      f"{len(left)} Avro files left in metadata/")
PY
done
restore

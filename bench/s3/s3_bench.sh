#!/usr/bin/env bash
# bench/s3/s3_bench.sh: the S3 benchmarks of issue #18 (docs/BENCHMARKS.md, "S3: behind a 20 ms
# proxy"), all in one run, against one versitygw (posix back end) behind the project's fault
# proxy (tests/tools/faultproxy.py) with LATENCY_MS (default 20) added to every request.
#
#   bench/s3/s3_bench.sh BUILD_DIR [WORK_DIR]
#
# BUILD_DIR: a Release build with the benchmarks (cmake -DCMAKE_BUILD_TYPE=Release
# -DBUILD_TESTING=OFF; icemaint, bench_expire, bench_orphans, bench_s3_list). WORK_DIR (default
# /dev/shm/icm-s3-bench) holds the server's data and every output; it is removed at the end
# unless KEEP=1. Needs: versitygw (scripts/setup-s3.sh), java 17 + mvn (scripts/setup-java.sh),
# curl, python3, /usr/bin/time. PARTS (default "floor expire list sweep delete") picks parts;
# RUNS (default 3) repeats of each icemaint measurement (SWEEP_RUNS, default 1, of the 1M sweep;
# SWEEP_CHECK_IN_FLIGHT "32 64 128" gives each of them its s3.check.max-in-flight, default 64);
# JAVA_WARM "W I" (default "1 2") Java's in-process warm-up and timed iterations; PROXIES
# (default 1) fault-proxy processes sharing the proxy's port (SO_REUSEPORT), for runs whose
# request rate one Python process cannot carry (about 1,550/s here). Two runs of the
# script with different PARTS and WORK_DIRs have servers of their own (the 1M sweep, which takes
# the longest, can run beside the other parts: say so with the numbers).
#
# The tables are written straight into versitygw's bucket folder (its posix back end serves a
# folder as a bucket and every file under it as an object; no PUT per object): bench_expire gen
# (2,000 snapshots x 50 files, 2,200 manifests) at s3://icm-bench/expire/t and bench_orphans gen
# (900,000 referenced + 100,000 orphan empty files in 1,000 partition folders) at
# s3://icm-bench/orphans/t (parts list and sweep), and the same shape with N_SMALL (default
# 20,000) objects at s3://icm-bench/small/t (part delete). Every measurement goes through the
# proxy; the proxy's counters give the requests of each run. Parts:
#   floor   what the proxy and the server cost alone: 200 sequential GETs of one small object
#           with curl (--aws-sigv4, one kept-alive connection) direct, through the proxy at 0 ms
#           and at LATENCY_MS; then bench_s3_get: every object of the expiry table's metadata
#           folder (what the expiry plan reads) read with 32 in flight (icemaint's in-flight
#           limit) through icemaint's own HTTP client, at 0 ms ("transfer") and at LATENCY_MS
#           (the request-loop floor), 3 each.
#   expire  the expiry plan (dry run, reachable, older half expires, retain_last 1): icemaint CLI
#           whole process and bench_expire run (in-process) RUNS times; Java ExpireSnapshots with
#           S3FileIO (bench/s3/java S3Peers expire) as a whole process and warmed in-process; the
#           two deleted sets compared; the bound 1.3 x ceil(objects read / 32) x LATENCY_MS +
#           transfer printed.
#   list    bench_s3_list over the 1M-object prefix: one sequential ListObjectsV2 chain vs 16 key
#           ranges at once, 2 alternating rounds; also the sequential chain direct to the server
#           (no proxy, no latency: the server's own page time); pages per 1,000 keys.
#   sweep   the whole dry-run sweep of the 1M objects: Java (S3Peers orphans: valid set, FileIO
#           prefix listing, FileURI compare) whole process and warmed, then the icemaint CLI
#           SWEEP_RUNS times; wall, CPU, peak RSS; orphan sets compared.
#   delete  real deletes on the small table: icemaint's sweep deletes its orphans (DeleteObjects
#           per 1,000 deleted), the orphans are written again, Java's orphan removal deletes them
#           (S3FileIO.deleteFiles); then a real expiry of the expiry table (its 100,000 data
#           files created first; --no-verify: verification is one HEAD per retained file, one at
#           a time, about 95,000 here) with its DeleteObjects per 1,000 deleted.
set -euo pipefail

BUILD=$(cd "${1:?usage: s3_bench.sh BUILD_DIR [WORK_DIR]}" && pwd)
WORK=${2:-/dev/shm/icm-s3-bench}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PARTS=${PARTS:-floor expire list sweep delete}
RUNS=${RUNS:-3}
LAT=${LATENCY_MS:-20}
read -r JW JI <<< "${JAVA_WARM:-1 2}"
NFILES=${N_FILES:-1000000} # objects of the sweep table, a tenth of them orphans (for trials)
NSMALL=${N_SMALL:-20000}    # objects of the deleting sweeps' table
SWEEP_RUNS=${SWEEP_RUNS:-1}
PROXIES=${PROXIES:-1}
BUCKET=icm-bench
REGION=us-east-1
INFLIGHT=32

has_part() { [[ " $PARTS " == *" $1 "* ]]; }
log() { printf '\n== %s (%s UTC, load %s)\n' "$*" "$(date -u +%T)" "$(cut -d' ' -f1-3 /proc/loadavg)"; }

bash "$ROOT/scripts/setup-s3.sh"
VGW=$(awk '$1 == "versitygw" { print $2 }' "$ROOT/build/s3/verifying")
CP="$("$ROOT/scripts/setup-java.sh")"
mkdir -p "$BUILD/bench-java"
javac -nowarn -d "$BUILD/bench-java" -cp "$CP" "$ROOT"/bench/s3/java/dev/icemaint/bench/*.java
JAVA=(java -XX:+UseParallelGC -cp "$BUILD/bench-java:$CP" dev.icemaint.bench.S3Peers)

rm -rf "$WORK"
mkdir -p "$WORK/vgw"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 -- "-$pid" 2>/dev/null || true
  done
  [[ "${KEEP:-0}" == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- the server and the proxy -------------------------------------------------------------------
export AWS_ACCESS_KEY_ID="AKIA$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
export AWS_SECRET_ACCESS_KEY="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
export AWS_REGION=$REGION AWS_EC2_METADATA_DISABLED=true
export AWS_REQUEST_CHECKSUM_CALCULATION=when_required AWS_RESPONSE_CHECKSUM_VALIDATION=when_required
VPORT=$(free_port)
SERVER="http://127.0.0.1:$VPORT"
ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
  setsid "$VGW" --quiet --port "127.0.0.1:$VPORT" --region $REGION posix "$WORK/vgw" \
  > "$WORK/versitygw.log" 2>&1 < /dev/null &
PIDS+=($!)
# PROXIES proxy processes share one port (SO_REUSEPORT): one Python process tops out around
# 1,550 requests/s here, below what the 1M sweep's checks ask of it. Every client (icemaint and
# Java alike) goes through the same port; the rules are set on each and the counters summed.
if (( PROXIES > 1 )); then REUSE=(--reuse-port); else REUSE=(); fi
setsid python3 "$ROOT/tests/tools/faultproxy.py" --upstream "$SERVER" "${REUSE[@]}" \
  --ready-file "$WORK/proxy.json" > "$WORK/proxy.log" 2>&1 < /dev/null &
PIDS+=($!)
for _ in $(seq 300); do
  [[ -f "$WORK/proxy.json" ]] && curl -s -o /dev/null "$SERVER/" && break
  sleep 0.1
done
PROXY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["endpoint"])' "$WORK/proxy.json")
CONTROLS=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["control"])' "$WORK/proxy.json")")
for i in $(seq 2 "$PROXIES"); do
  setsid python3 "$ROOT/tests/tools/faultproxy.py" --upstream "$SERVER" "${REUSE[@]}" \
    --port "${PROXY##*:}" --ready-file "$WORK/proxy$i.json" > "$WORK/proxy$i.log" 2>&1 < /dev/null &
  PIDS+=($!)
  for _ in $(seq 300); do [[ -f "$WORK/proxy$i.json" ]] && break; sleep 0.1; done
  CONTROLS+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["control"])' "$WORK/proxy$i.json")")
done
CONTROL=${CONTROLS[0]}
export AWS_ENDPOINT_URL_S3=$PROXY
SIGN=(--aws-sigv4 "aws:amz:$REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
curl -sf -X PUT "${SIGN[@]}" "$SERVER/$BUCKET" > /dev/null
BDIR="$WORK/vgw/$BUCKET"
JPROPS=(--prop "s3.endpoint=$PROXY" --prop s3.path-style-access=true
        --prop "s3.access-key-id=$AWS_ACCESS_KEY_ID" --prop "s3.secret-access-key=$AWS_SECRET_ACCESS_KEY"
        --prop "client.region=$REGION")

latency() { for c in "${CONTROLS[@]}"; do curl -sf -X POST -d "{\"latency_ms\": $1}" "$c/rules" > /dev/null; done; }
reset_counters() { for c in "${CONTROLS[@]}"; do curl -sf -X DELETE "$c/counters" > /dev/null; done; }
# counters LABEL: the proxy's counters since the last reset, saved and summarised on one line
counters() {
  local k=0
  for c in "${CONTROLS[@]}"; do
    k=$((k + 1))
    curl -sf "$c/counters" > "$WORK/$1.counters.$k.json"
    curl -sf "$c/log" > "$WORK/$1.log.$k.json"
  done
  python3 - "$WORK/$1.counters.json" "$WORK/$1.log.json" "$1" "$k" <<'EOF'
import json, sys
# the proxies' counters summed and their logs joined (one proxy: its own)
out_c, out_l, label, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = {"total": 0, "by_kind": {}}; log = []
for i in range(1, k + 1):
    ci = json.load(open(f"{out_c[:-5]}.{i}.json"))
    c["total"] += ci["total"]
    for kind, v in ci["by_kind"].items():
        c["by_kind"][kind] = c["by_kind"].get(kind, 0) + v
    log += json.load(open(f"{out_l[:-5]}.{i}.json"))
json.dump(c, open(out_c, "w")); json.dump(log, open(out_l, "w"))
gets = {e["target"] for e in log if e["kind"] == "GetObject"}
bad = sum(1 for e in log if not (isinstance(e["status"], int) and e["status"] < 300))
print(f"{label:28s} requests {c['total']}: {json.dumps(c['by_kind'], sort_keys=True)}; "
      f"unique objects read {len(gets)}; non-2xx {bad}")
EOF
}
# progress LABEL: in the background until killed, every second the seconds since it started
# and the proxies' counters by kind summed (where a run's time goes: listing, then checks)
progress() {
  python3 - "${CONTROLS[@]}" > "$WORK/$1.progress" <<'EOF' &
import json, sys, time, urllib.request
t0 = time.monotonic()
while True:
    kinds = {}
    for c in sys.argv[1:]:
        try:
            d = json.load(urllib.request.urlopen(c + "/counters", timeout=5))
        except Exception:
            continue
        for k, v in d["by_kind"].items():
            kinds[k] = kinds.get(k, 0) + v
    print(f"{time.monotonic() - t0:7.1f} s " + " ".join(f"{k} {v}" for k, v in sorted(kinds.items())), flush=True)
    time.sleep(1)
EOF
  PROGRESS_PID=$!
}
. "$ROOT/bench/timed.sh"
latency "$LAT"
echo "versitygw $("$VGW" --version 2>/dev/null | head -1 || true) at $SERVER, fault proxy $PROXY (+$LAT ms per request; $PROXIES process(es) on the port)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); build $(git -C "$ROOT" rev-parse --short HEAD)"

# ---- the tables, straight into the bucket folder --------------------------------------------------
log "generating"
t0=$(date +%s.%N)
"$BUILD/bench/bench_expire" gen "$BDIR/expire" 2000 50 "s3://$BUCKET/expire/t" > /dev/null 2>&1
EMETA="$BDIR/expire/t/metadata/v1.metadata.json"
python3 - "$EMETA" <<'EOF'
import json, sys
path = sys.argv[1]
md = json.load(open(path))
snaps = sorted(md["snapshots"], key=lambda s: s["sequence-number"])
md["snapshot-log"] = [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps]
json.dump(md, open(path, "w"))
EOF
ECUT=$(python3 -c '
import json, sys
s = sorted(json.load(open(sys.argv[1]))["snapshots"], key=lambda s: s["timestamp-ms"])
print(s[len(s) // 2]["timestamp-ms"])' "$EMETA")
t1=$(date +%s.%N)
if has_part list || has_part sweep; then
  "$BUILD/bench/bench_orphans" gen "$BDIR/orphans" $((NFILES - NFILES / 10)) $((NFILES / 10)) \
    "s3://$BUCKET/orphans/t"
fi
t2=$(date +%s.%N)
if has_part delete; then
  "$BUILD/bench/bench_orphans" gen "$BDIR/small" $((NSMALL - NSMALL / 10)) $((NSMALL / 10)) \
    "s3://$BUCKET/small/t"
fi
echo "expiry table $(echo "$t1 - $t0" | bc) s; 1M-object table $(echo "$t2 - $t1" | bc) s"
echo "objects: $(for d in "$BDIR"/*/; do echo -n "$(basename "$d")/ $(find "$d" -type f | wc -l); "; done)"
ETAB="s3://$BUCKET/expire/t"
OTAB="s3://$BUCKET/orphans/t"
STAB="s3://$BUCKET/small/t"
OCUT=$(( $(date +%s) * 1000 + 3600000 ))

# recreate_orphans: the small table's orphan files again (after a deleting sweep)
recreate_orphans() {
  python3 - "$BDIR/small/t/data" $((NSMALL / 10)) <<'EOF'
import sys
d = sys.argv[1]
for i in range(int(sys.argv[2])):
    open(f"{d}/p={i % 1000:04d}/o-{i:08d}.parquet", "wb").close()
EOF
}

# ---- floor ---------------------------------------------------------------------------------------
if has_part floor; then
  log "floor: the proxy and the server alone"
  one="$BUCKET/expire/t/metadata/version-hint.text"
  seqloop() { # LABEL BASE_URL LATENCY
    latency "$3"
    local urls=() s e
    for _ in $(seq 200); do urls+=("$2/$one"); done
    s=$(date +%s.%N)
    curl -sf "${SIGN[@]}" -o /dev/null "${urls[@]}" > /dev/null
    e=$(date +%s.%N)
    echo "$1: 200 sequential GETs $(echo "$e - $s" | bc) s, $(echo "($e - $s) * 5" | bc) ms per request"
  }
  seqloop "curl direct to versitygw" "$SERVER" 0
  seqloop "curl through the proxy at 0 ms" "$PROXY" 0
  seqloop "curl through the proxy at $LAT ms" "$PROXY" "$LAT"
  find "$BDIR/expire/t/metadata" -type f -printf "$ETAB/metadata/%f\n" > "$WORK/floor_uris.txt"
  for l in 0 "$LAT"; do
    latency "$l"
    for i in 1 2 3; do
      reset_counters
      timed_v "floor_par_${l}ms_$i" "$BUILD/bench/bench_s3_get" "$WORK/floor_uris.txt" $INFLIGHT
      cat "$WORK/floor_par_${l}ms_$i.out"
      counters "floor_par_${l}ms_$i"
    done
  done
  latency "$LAT"
fi

# ---- expire --------------------------------------------------------------------------------------
if has_part expire; then
  log "expiry plan: icemaint (cutoff $ECUT)"
  for i in $(seq "$RUNS"); do
    reset_counters
    timed_v "icemaint_expire_cli_$i" "$BUILD/icemaint" --json expire-snapshots "$ETAB" --dry-run \
      --no-verify --older-than "$ECUT"
    counters "icemaint_expire_cli_$i"
  done
  for i in $(seq "$RUNS"); do
    reset_counters
    timed_v "icemaint_expire_run_$i" "$BUILD/bench/bench_expire" run "$ETAB"
    cat "$WORK/icemaint_expire_run_$i.out"
    counters "icemaint_expire_run_$i"
  done
  log "expiry plan: Java ExpireSnapshots + S3FileIO, whole process"
  reset_counters
  timed_v java_expire_process "${JAVA[@]}" expire --metadata "$ETAB/metadata/v1.metadata.json" \
    --older-than-ms "$ECUT" --warmup 0 --iterations 1 --paths-out "$WORK/java_expire_paths.txt" "${JPROPS[@]}"
  grep timed "$WORK/java_expire_process.out"
  counters java_expire_process
  log "expiry plan: Java in-process, warm-up $JW, timed $JI"
  reset_counters
  "${JAVA[@]}" expire --metadata "$ETAB/metadata/v1.metadata.json" --older-than-ms "$ECUT" \
    --warmup "$JW" --iterations "$JI" "${JPROPS[@]}" | tee "$WORK/java_expire_inprocess.out"
  counters java_expire_inprocess
  python3 - "$WORK" "$RUNS" "$LAT" "$INFLIGHT" <<'EOF'
import glob, json, math, re, statistics, sys
work, runs, lat, inflight = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(f"{work}/icemaint_expire_cli_1.out"))
mine = {f["path"] for k in ("deleted_files", "deleted_manifests", "deleted_statistics_files") for f in doc[k]}
java = {l.strip() for l in open(f"{work}/java_expire_paths.txt") if l.strip()}
print(f"deleted sets: icemaint {len(mine)}, Java {len(java)}:",
      "identical" if mine == java else f"DIFFERENT ({len(mine - java)} only icemaint, {len(java - mine)} only Java)")
def wall(label):
    t = open(f"{work}/{label}.time").read()
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", t)
    return int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
cli = [wall(f"icemaint_expire_cli_{i}") for i in range(1, runs + 1)]
call = [float(re.search(r"expiry ([0-9.]+) s", open(f"{work}/icemaint_expire_run_{i}.out").read()).group(1))
        for i in range(1, runs + 1)]
reads = json.load(open(f"{work}/icemaint_expire_cli_1.log.json"))
unique = len({e["target"] for e in reads if e["kind"] == "GetObject"})
floors = {}
for l in ("0", sys.argv[3]):
    floors[l] = sorted(float(re.search(r"in flight: ([0-9.]+) s", open(p).read()).group(1))
                       for p in glob.glob(f"{work}/floor_par_{l}ms_*.out"))
jt = [json.loads(l)["seconds"] for l in open(f"{work}/java_expire_inprocess.out") if '"timed"' in l]
jp = wall("java_expire_process")
print(f"icemaint CLI whole process: best {min(cli):.2f} s, median {statistics.median(cli):.2f} s; "
      f"in-process expiry call best {min(call):.3f} s, median {statistics.median(call):.3f} s")
print(f"Java: whole process {jp:.2f} s; warmed commit() best {min(jt):.3f} s (all {jt})")
print(f"vs Java: whole process {jp / min(cli):.1f}x (median {jp / statistics.median(cli):.1f}x); "
      f"in-process {min(jt) / min(call):.1f}x (median over median {statistics.median(jt) / statistics.median(call):.1f}x)")
if floors["0"] and floors[sys.argv[3]]:
    transfer = min(floors["0"])
    bound = 1.3 * math.ceil(unique / inflight) * lat / 1000 + transfer
    print(f"unique objects read {unique}; bound 1.3 x ceil({unique}/{inflight}) x {lat:g} ms + transfer "
          f"{transfer:.2f} s = {bound:.2f} s; request-loop floor at {lat:g} ms {min(floors[sys.argv[3]]):.2f} s; "
          f"icemaint expiry call / bound = {min(call) / bound:.2f} (median {statistics.median(call) / bound:.2f})")
EOF
fi

# ---- list ----------------------------------------------------------------------------------------
if has_part list; then
  log "listing the 1M-object prefix: sequential vs 16 ranges (2 alternating rounds)"
  reset_counters
  timed_v list_proxy "$BUILD/bench/bench_s3_list" "$OTAB/" 16 2
  cat "$WORK/list_proxy.out"
  counters list_proxy
  python3 - "$WORK/list_proxy.counters.json" "$WORK/list_proxy.out" <<'EOF'
import json, re, sys
c = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read()
keys = sum(int(k) for k in re.findall(r": (\d+) keys", out))
seq = [float(x) for x in re.findall(r"seq: \d+ keys, ([0-9.]+) s", out)]
rng = [float(x) for x in re.findall(r"ranges\(\d+\): \d+ keys, ([0-9.]+) s", out)]
pages = c["by_kind"].get("ListObjectsV2", 0)
print(f"ListObjectsV2 pages {pages} for {keys} keys listed: {1000 * pages / keys:.3f} per 1,000 keys; "
      f"sequential {seq} s vs ranges {rng} s: {min(seq) / min(rng):.1f}x (best), {sum(seq) / sum(rng):.1f}x (mean)")
EOF
  log "listing: direct to versitygw (no proxy, no latency)"
  AWS_ENDPOINT_URL_S3=$SERVER timed_v list_direct "$BUILD/bench/bench_s3_list" "$OTAB/" 16 1
  cat "$WORK/list_direct.out"
fi

# ---- sweep ---------------------------------------------------------------------------------------
if has_part sweep; then
  log "whole dry-run sweep of the 1M objects: Java (S3Peers orphans), whole process (cutoff $OCUT)"
  reset_counters
  timed_v java_sweep_process "${JAVA[@]}" orphans --metadata "$OTAB/metadata/v1.metadata.json" \
    --older-than-ms "$OCUT" --warmup 0 --iterations 1 --orphans-out "$WORK/java_orphans.txt" "${JPROPS[@]}"
  grep timed "$WORK/java_sweep_process.out"
  counters java_sweep_process
  log "whole dry-run sweep: Java in-process, warm-up $JW, timed $JI"
  "${JAVA[@]}" orphans --metadata "$OTAB/metadata/v1.metadata.json" --older-than-ms "$OCUT" \
    --warmup "$JW" --iterations "$JI" "${JPROPS[@]}" | tee "$WORK/java_sweep_inprocess.out"
  read -r -a CHECKS <<< "${SWEEP_CHECK_IN_FLIGHT:-}"
  for i in $(seq "$SWEEP_RUNS"); do
    # SWEEP_CHECK_IN_FLIGHT "A B ...": run i with s3.check.max-in-flight = the i-th (the default
    # catalog's property, as a user sets it; icemaint only: Java has no such checks)
    knob=${CHECKS[$((i - 1))]:-}
    log "whole dry-run sweep: icemaint, run $i${knob:+ (s3.check.max-in-flight $knob)}"
    reset_counters
    progress "icemaint_sweep_cli_$i"
    timed_v "icemaint_sweep_cli_$i" env "PYICEBERG_CATALOG__DEFAULT__S3__CHECK__MAX_IN_FLIGHT=${knob:-64}" \
      "$BUILD/icemaint" --json remove-orphan-files "$OTAB" --dry-run --force --older-than "$OCUT"
    kill "$PROGRESS_PID" 2>/dev/null || true
    counters "icemaint_sweep_cli_$i"
    echo "progress (every 5th second: s, requests by kind so far):"
    awk 'NR % 5 == 1' "$WORK/icemaint_sweep_cli_$i.progress"
  done
  python3 - "$WORK/icemaint_sweep_cli_1.out" "$WORK/java_orphans.txt" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
mine = {o["path"] for o in doc["orphans"]}
java = {l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()}
print(f"orphan sets: icemaint {len(mine)} (listed {doc['listed']}), Java {len(java)}:",
      "identical" if mine == java else f"DIFFERENT ({len(mine - java)} only icemaint, {len(java - mine)} only Java)")
for p in sorted(java - mine)[:5]: print("  only Java:", p)
for p in sorted(mine - java)[:5]: print("  only icemaint:", p)
EOF
fi

# ---- delete --------------------------------------------------------------------------------------
if has_part delete; then
  log "deleting sweep: icemaint deletes the small table's $((NSMALL / 10)) orphans"
  reset_counters
  timed_v icemaint_sweep_delete "$BUILD/icemaint" --json remove-orphan-files "$STAB" --force \
    --older-than "$OCUT"
  counters icemaint_sweep_delete
  left=$(find "$BDIR/small/t/data" -name 'o-*' | wc -l)
  python3 - "$WORK/icemaint_sweep_delete.counters.json" "$left" $((NSMALL / 10)) <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
deleted = int(sys.argv[3]) - int(sys.argv[2])
d = c["by_kind"].get("DeleteObjects", 0)
print(f"icemaint deleted {deleted} orphans ({sys.argv[2]} left in the bucket); DeleteObjects {d}: "
      f"{1000 * d / max(deleted, 1):.3f} per 1,000 deleted")
EOF
  recreate_orphans
  log "deleting sweep: Java deletes them (S3FileIO.deleteFiles), whole process"
  reset_counters
  timed_v java_sweep_delete "${JAVA[@]}" orphans --metadata "$STAB/metadata/v1.metadata.json" \
    --older-than-ms "$OCUT" --warmup 0 --iterations 1 --delete "${JPROPS[@]}"
  grep timed "$WORK/java_sweep_delete.out"
  counters java_sweep_delete
  echo "orphan files left after Java: $(find "$BDIR/small/t/data" -name 'o-*' | wc -l)"
  recreate_orphans

  log "real expiry: the 100,000 data files created, then expire-snapshots --no-verify"
  mkdir -p "$BDIR/expire/t/data"
  "$BUILD/bench/bench_expire" touch "$BDIR/expire" 2000 50 > /dev/null
  reset_counters
  timed_v icemaint_expire_delete "$BUILD/icemaint" --json expire-snapshots "$ETAB" --no-verify \
    --older-than "$ECUT"
  counters icemaint_expire_delete
  python3 - "$WORK/icemaint_expire_delete.out" "$WORK/icemaint_expire_delete.counters.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
n = sum(len(doc[k]) for k in ("deleted_files", "deleted_manifests", "deleted_statistics_files"))
d = c["by_kind"].get("DeleteObjects", 0)
print(f"icemaint expiry deleted {n} files; DeleteObjects {d}: {1000 * d / max(n, 1):.3f} per 1,000 deleted")
EOF
  echo "data files left: $(find "$BDIR/expire/t/data" -type f | wc -l) of 100,050 created"
fi
log "done"

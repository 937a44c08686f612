#!/usr/bin/env bash
# bench/rest/rest_bench.sh: the REST + S3 benchmark of issue #19 (docs/BENCHMARKS.md, "REST + S3:
# behind a 20 ms proxy (issue #19)"): one table behind the Apache Iceberg REST catalog fixture
# (tests/rest/java's LoopbackRestServer: JdbcCatalog on SQLite, S3FileIO warehouse on versitygw,
# include-credentials, so load-table vends the S3 keys), maintained by icemaint, by iceberg-go's
# CLI (v0.6.0) and by Java (Iceberg 1.12 through RESTCatalog, bench/rest/java RestPeers), all in
# one run. Both the catalog and the object store are reached through the project's fault proxy
# (tests/tools/faultproxy.py, one --api rest, one S3) with LATENCY_MS (default 20) added to every
# request; the proxies' counters give each run's requests. The catalog server itself reaches
# versitygw directly (its own metadata reads and writes are not counted and not delayed).
#
#   bench/rest/rest_bench.sh BUILD_DIR [WORK_DIR]
#
# BUILD_DIR: a Release build (cmake -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF; icemaint and
# bench/bench_expire). WORK_DIR (default /dev/shm/icm-rest-bench) holds the servers' data and
# every output; removed at the end unless KEEP=1. Needs versitygw (scripts/setup-s3.sh), java 17 +
# mvn (scripts/setup-java.sh, scripts/setup-rest.sh), go (iceberg-go's CLI is installed with
# `go install github.com/apache/iceberg-go/cmd/iceberg@v0.6.0` into ICEBERG_GO_BIN, default
# ~/.cache/icemaint-bench/iceberg-go-v0.6.0, once), python3, /usr/bin/time.
# Knobs: SNAPSHOTS (100) x FILES (30) data files per snapshot, ORPHANS (500), RETAIN (10: expiry
# keeps the newest RETAIN snapshots, --older-than now), RUNS (3) of every measurement, PEERS
# ("icemaint icemaint-verify iceberg-go java"). "icemaint" runs with --no-verify (the peers check
# nothing before deleting); "icemaint-verify" is icemaint as shipped (before deleting, expiry
# checks that every file the retained snapshots reference is there at its recorded size: one
# HEAD per retained data file), expiry only, VERIFY_RUNS (1) times; iceberg-go GO_RUNS (1) times
# (its CLI re-reads every snapshot's manifests one GET at a time: minutes per run here).
#
# The table is written straight into versitygw's bucket folder (its posix back end serves each
# file as an object) by bench_expire gen (format v2; snapshot k appends one manifest of FILES
# files; every 10th snapshot deletes the files of the manifest appended 9 snapshots earlier),
# every data file created (empty), ORPHANS unreferenced files under data/ and 20 under
# metadata/, every mtime set 7 days back, the Hadoop version-hint removed (a catalog table has
# none), and registered in the catalog (POST .../register). Before EVERY measured run the table
# is reset to that state: dropped from the catalog (no purge), its folder restored from a
# pristine copy (mtimes kept), registered again; so every peer does the same work. Runs:
#   expire-dry   the plan without committing or deleting. icemaint --dry-run (full plan:
#                every file it would delete); iceberg-go --dry-run (only the snapshots that
#                would go: v0.6.0's dry run plans no files); Java: no dry run exists through a
#                catalog, so RestPeers loads through RESTCatalog and expires the loaded
#                metadata in memory with every delete collected (IcmDryExpire).
#   expire       the real expiry: commit through the catalog, then the deletes.
#   orphans-dry  the orphan sweep, dry run (cutoff 3 days; every peer's default or its equal).
#   orphans      the orphan sweep, deleting.
# Checks: icemaint's and Java's planned expiry deletes path by path; iceberg-go's expired
# snapshot ids against icemaint's; after each real expiry the snapshots the catalog keeps and
# the objects gone from the bucket, peer against peer; the dry-run orphan lists and the objects
# the real sweeps removed, peer against peer.
set -euo pipefail

BUILD=$(cd "${1:?usage: rest_bench.sh BUILD_DIR [WORK_DIR]}" && pwd)
WORK=${2:-/dev/shm/icm-rest-bench}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LAT=${LATENCY_MS:-20}
SNAPS=${SNAPSHOTS:-100}
FILES=${FILES:-30}
NORPH=${ORPHANS:-500}
RETAIN=${RETAIN:-10}
RUNS=${RUNS:-3}
PEERS=${PEERS:-icemaint icemaint-verify iceberg-go java}
VERIFY_RUNS=${VERIFY_RUNS:-1}
GO_RUNS=${GO_RUNS:-1}
BUCKET=icm-bench
REGION=us-east-1
NS=bench
TBL=t
GOBIN_DIR=${ICEBERG_GO_BIN:-$HOME/.cache/icemaint-bench/iceberg-go-v0.6.0}

log() { printf '\n== %s (%s UTC, load %s)\n' "$*" "$(date -u +%T)" "$(cut -d' ' -f1-3 /proc/loadavg)"; }
has_peer() { [[ " $PEERS " == *" $1 "* ]]; }

bash "$ROOT/scripts/setup-s3.sh"
VGW=$(awk '$1 == "versitygw" { print $2 }' "$ROOT/build/s3/verifying")
CP="$("$ROOT/scripts/setup-java.sh")"
FCP="$(bash "$ROOT/scripts/setup-rest.sh")"
mkdir -p "$BUILD/bench-java-rest"
javac -nowarn -d "$BUILD/bench-java-rest" -cp "$CP" "$ROOT"/bench/rest/java/dev/icemaint/bench/*.java
JAVA=(java -XX:+UseParallelGC -cp "$BUILD/bench-java-rest:$CP" dev.icemaint.bench.RestPeers)
if has_peer iceberg-go && [[ ! -x "$GOBIN_DIR/iceberg" ]]; then
  mkdir -p "$GOBIN_DIR"
  GOBIN="$GOBIN_DIR" GOFLAGS=-mod=mod go install github.com/apache/iceberg-go/cmd/iceberg@v0.6.0
fi
GOCLI="$GOBIN_DIR/iceberg"

rm -rf "$WORK"
mkdir -p "$WORK/vgw" "$WORK/out"
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
jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
wait_file() { for _ in $(seq 1200); do [[ -s "$1" ]] && return 0; sleep 0.1; done; echo "no $1" >&2; return 1; }

# ---- versitygw, the REST fixture, a proxy in front of each -----------------------------------------
KEY="AKIA$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
SECRET="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
VPORT=$(free_port)
SERVER="http://127.0.0.1:$VPORT"
ROOT_ACCESS_KEY=$KEY ROOT_SECRET_KEY=$SECRET \
  setsid "$VGW" --quiet --port "127.0.0.1:$VPORT" --region $REGION posix "$WORK/vgw" \
  > "$WORK/versitygw.log" 2>&1 < /dev/null &
PIDS+=($!)
setsid python3 "$ROOT/tests/tools/faultproxy.py" --upstream "$SERVER" \
  --ready-file "$WORK/s3proxy.json" > "$WORK/s3proxy.log" 2>&1 < /dev/null &
PIDS+=($!)
wait_file "$WORK/s3proxy.json"
S3PROXY=$(jfield "$WORK/s3proxy.json" endpoint)
S3CTL=$(jfield "$WORK/s3proxy.json" control)
mkdir -p "$WORK/vgw/$BUCKET" # versitygw's posix back end: a folder is a bucket
BDIR="$WORK/vgw/$BUCKET"

CATALOG_WAREHOUSE="s3://$BUCKET/wh" CATALOG_URI="jdbc:sqlite:$WORK/catalog.db" \
  CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO CATALOG_S3_ENDPOINT="$SERVER" \
  CATALOG_S3_PATH__STYLE__ACCESS=true CATALOG_CLIENT_REGION=$REGION \
  CATALOG_S3_ACCESS__KEY__ID="$KEY" CATALOG_S3_SECRET__ACCESS__KEY="$SECRET" \
  CATALOG_INCLUDE__CREDENTIALS=true AWS_REGION=$REGION \
  setsid java -Xmx1g -XX:+UseSerialGC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$FCP" \
  org.apache.iceberg.rest.LoopbackRestServer "$WORK/rest.json" > "$WORK/rest.log" 2>&1 < /dev/null &
PIDS+=($!)
wait_file "$WORK/rest.json"
REST=$(jfield "$WORK/rest.json" uri)
setsid python3 "$ROOT/tests/tools/faultproxy.py" --api rest --upstream "$REST" \
  --ready-file "$WORK/restproxy.json" > "$WORK/restproxy.log" 2>&1 < /dev/null &
PIDS+=($!)
wait_file "$WORK/restproxy.json"
RPROXY=$(jfield "$WORK/restproxy.json" endpoint)
RCTL=$(jfield "$WORK/restproxy.json" control)

# rest METHOD PATH [BODY]: a request straight to the catalog (not through the proxy: set-up and
# checks are not measured)
rest() {
  python3 - "$REST" "$@" <<'PY'
import sys, urllib.request
base, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(base + path, data=body, method=method,
                             headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=120) as r:
    sys.stdout.write(r.read().decode())
PY
}
for c in "$S3CTL" "$RCTL"; do
  python3 -c 'import sys,urllib.request as u; u.urlopen(u.Request(sys.argv[1]+"/rules", data=sys.argv[2].encode(), method="POST")).read()' "$c" "{\"latency_ms\": $LAT}"
done
ctl() { python3 -c 'import sys,urllib.request as u; print(u.urlopen(u.Request(sys.argv[1], method=sys.argv[2])).read().decode())' "$2" "$1"; }
reset_counters() { ctl DELETE "$S3CTL/counters" > /dev/null; ctl DELETE "$RCTL/counters" > /dev/null; }
# counters LABEL: both proxies' counters since the last reset, saved, summarised on one line
counters() {
  ctl GET "$S3CTL/counters" > "$WORK/out/$1.s3.json"
  ctl GET "$RCTL/counters" > "$WORK/out/$1.rest.json"
  python3 - "$WORK/out/$1" "$1" <<'PY'
import json, sys
s3 = json.load(open(sys.argv[1] + ".s3.json")); rest = json.load(open(sys.argv[1] + ".rest.json"))
print(f"  {sys.argv[2]:26s} REST {rest['total']} {json.dumps(rest['by_kind'], sort_keys=True)}; "
      f"S3 {s3['total']} {json.dumps(s3['by_kind'], sort_keys=True)}")
PY
}
WORK_OUT="$WORK/out"
timed() { # LABEL COMMAND...: /usr/bin/time -v; one line wall / CPU / peak RSS
  local label=$1; shift
  echo "  command: $*" >> "$WORK/commands.txt"
  /usr/bin/time -v "$@" > "$WORK_OUT/$label.out" 2> "$WORK_OUT/$label.time" || {
    echo "  $label FAILED (exit $?): $(grep -v '^\s' "$WORK_OUT/$label.time" | tail -3 | tr '\n' ' ')"; return 0; }
  awk -v l="$label" -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = p[n] + (n > 1 ? p[n-1] * 60 : 0) }
    /User time/ { u = $2 } /System time/ { s = $2 }
    /Maximum resident/ { r = $2 / 1024 }
    END { printf "  %-26s wall %7.2f s  cpu %7.2f s  peak RSS %7.1f MiB\n", l, w, u + s, r }' \
    "$WORK_OUT/$label.time"
}

echo "versitygw at $SERVER (S3 proxy $S3PROXY), REST fixture at $REST (proxy $RPROXY), +$LAT ms per request on both proxies"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); build $(git -C "$ROOT" rev-parse --short HEAD)"
echo "iceberg-go: $("$GOCLI" --version 2>&1 | head -1 || true); java: $(java -version 2>&1 | head -1)"

# ---- the table ------------------------------------------------------------------------------------
log "generating: $SNAPS snapshots x $FILES files, $NORPH + 20 orphans"
LOC="s3://$BUCKET/$NS/$TBL"
"$BUILD/bench/bench_expire" gen "$BDIR/$NS" "$SNAPS" "$FILES" "$LOC" > /dev/null
mkdir -p "$BDIR/$NS/$TBL/data"
"$BUILD/bench/bench_expire" touch "$BDIR/$NS" "$SNAPS" "$FILES" > /dev/null
# the size the manifests record (1 MiB), sparse: verification compares it, nothing reads the bytes
find "$BDIR/$NS/$TBL/data" -name 'part-*' -exec truncate -s 1M {} +
rm -f "$BDIR/$NS/$TBL/metadata/version-hint.text"
python3 - "$BDIR/$NS/$TBL" "$NORPH" <<'PY'
import json, os, sys
t, n = sys.argv[1], int(sys.argv[2])
path = f"{t}/metadata/v1.metadata.json"
md = json.load(open(path))
snaps = sorted(md["snapshots"], key=lambda s: s["sequence-number"])
md["snapshot-log"] = [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps]
json.dump(md, open(path, "w"))
os.makedirs(f"{t}/data/orphans", exist_ok=True)
for i in range(n):
    with open(f"{t}/data/orphans/o-{i:06d}.parquet", "wb") as f:
        f.write(b"x" * 64)
for i in range(20):
    with open(f"{t}/metadata/o-{i:03d}.avro", "wb") as f:
        f.write(b"x" * 64)
PY
find "$BDIR/$NS" -exec touch -h -d '7 days ago' {} +
cp -a --sparse=always "$BDIR/$NS" "$WORK/pristine"
find "$WORK/pristine/$TBL" -type f -printf '%P\n' | sort > "$WORK/pristine.txt"
echo "objects: $(wc -l < "$WORK/pristine.txt") ($(find "$BDIR/$NS/$TBL/data" -type f | wc -l) under data/, $(find "$BDIR/$NS/$TBL/metadata" -type f | wc -l) under metadata/)"
rest POST /v1/namespaces "{\"namespace\": [\"$NS\"]}" > /dev/null
REGISTER="{\"name\": \"$TBL\", \"metadata-location\": \"$LOC/metadata/v1.metadata.json\"}"
rest POST "/v1/namespaces/$NS/register" "$REGISTER" > /dev/null

# reset: the table as generated, in the catalog and in the bucket
reset_table() {
  rest DELETE "/v1/namespaces/$NS/tables/$TBL" > /dev/null
  rm -rf "${BDIR:?}/$NS"
  cp -a --sparse=always "$WORK/pristine" "$BDIR/$NS"
  rest POST "/v1/namespaces/$NS/register" "$REGISTER" > /dev/null
}
# after LABEL: what the catalog keeps and which objects are gone, for the real runs
after() {
  rest GET "/v1/namespaces/$NS/tables/$TBL" | python3 -c '
import json, sys
md = json.load(sys.stdin)["metadata"]
print("\n".join(str(s["snapshot-id"]) for s in sorted(md.get("snapshots", []), key=lambda s: s["snapshot-id"])))' \
    > "$WORK_OUT/$1.retained.txt"
  find "$BDIR/$NS/$TBL" -type f -printf '%P\n' | sort | comm -23 "$WORK/pristine.txt" - > "$WORK_OUT/$1.gone.txt"
  echo "  $1: catalog keeps $(wc -l < "$WORK_OUT/$1.retained.txt") snapshots; $(wc -l < "$WORK_OUT/$1.gone.txt") objects gone"
}
NOW_MS=$(( $(date +%s) * 1000 + 60000 )) # every snapshot is older (gen stamps the past)
OCUT_MS=$(( ($(date +%s) - 3 * 86400) * 1000 ))

# icemaint: the catalog as PyIceberg's variables (no keys: vended), the S3 endpoint of the proxy
export PYICEBERG_CATALOG__BENCH__TYPE=rest PYICEBERG_CATALOG__BENCH__URI="$RPROXY" \
  PYICEBERG_CATALOG__BENCH__S3__ENDPOINT="$S3PROXY" PYICEBERG_CATALOG__BENCH__S3__REGION=$REGION \
  PYICEBERG_CATALOG__BENCH__S3__PATH_STYLE_ACCESS=true
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
ICM=("$BUILD/icemaint" --catalog bench --json)
# iceberg-go: REST catalog flags; the S3 endpoint from AWS_S3_ENDPOINT (path style), region from
# AWS_REGION; keys: vended
GO=(env AWS_S3_ENDPOINT="$S3PROXY" AWS_REGION=$REGION AWS_EC2_METADATA_DISABLED=true
    GOMAXPROCS=2 "$GOCLI" --catalog rest --uri "$RPROXY" --output json)
JPROPS=(--prop "s3.endpoint=$S3PROXY" --prop s3.path-style-access=true --prop "client.region=$REGION")
JAVA_T=(--uri "$RPROXY" --table "$NS.$TBL")

# run LABEL PEER OP: one measured run on a fresh table
run() {
  local label=$1 peer=$2 op=$3
  reset_table
  reset_counters
  case "$peer:$op" in
    icemaint:expire-dry) timed "$label" "${ICM[@]}" expire-snapshots "$NS.$TBL" --dry-run --no-verify --older-than "$NOW_MS" --retain-last "$RETAIN" ;;
    icemaint:expire) timed "$label" "${ICM[@]}" expire-snapshots "$NS.$TBL" --no-verify --older-than "$NOW_MS" --retain-last "$RETAIN" ;;
    icemaint:orphans-dry) timed "$label" "${ICM[@]}" remove-orphan-files "$NS.$TBL" --dry-run --no-verify --older-than "$OCUT_MS" ;;
    icemaint:orphans) timed "$label" "${ICM[@]}" remove-orphan-files "$NS.$TBL" --no-verify --older-than "$OCUT_MS" ;;
    icemaint-verify:expire-dry) timed "$label" "${ICM[@]}" expire-snapshots "$NS.$TBL" --dry-run --older-than "$NOW_MS" --retain-last "$RETAIN" ;;
    icemaint-verify:expire) timed "$label" "${ICM[@]}" expire-snapshots "$NS.$TBL" --older-than "$NOW_MS" --retain-last "$RETAIN" ;;
    iceberg-go:expire-dry) timed "$label" "${GO[@]}" expire-snapshots "$NS.$TBL" --dry-run --older-than 0s --retain-last "$RETAIN" ;;
    iceberg-go:expire) timed "$label" "${GO[@]}" expire-snapshots "$NS.$TBL" --yes --older-than 0s --retain-last "$RETAIN" ;;
    iceberg-go:orphans-dry) timed "$label" "${GO[@]}" clean-orphan-files "$NS.$TBL" --dry-run --older-than 72h ;;
    iceberg-go:orphans) timed "$label" "${GO[@]}" clean-orphan-files "$NS.$TBL" --yes --older-than 72h ;;
    java:expire-dry) timed "$label" "${JAVA[@]}" expire "${JAVA_T[@]}" --dry-run --older-than-ms "$NOW_MS" --retain-last "$RETAIN" --paths-out "$WORK_OUT/$label.paths" "${JPROPS[@]}" ;;
    java:expire) timed "$label" "${JAVA[@]}" expire "${JAVA_T[@]}" --older-than-ms "$NOW_MS" --retain-last "$RETAIN" "${JPROPS[@]}" ;;
    java:orphans-dry) timed "$label" "${JAVA[@]}" orphans "${JAVA_T[@]}" --older-than-ms "$OCUT_MS" --orphans-out "$WORK_OUT/$label.paths" "${JPROPS[@]}" ;;
    java:orphans) timed "$label" "${JAVA[@]}" orphans "${JAVA_T[@]}" --older-than-ms "$OCUT_MS" --delete "${JPROPS[@]}" ;;
  esac
  counters "$label"
  case "$op" in expire | orphans) after "$label" ;; esac
}

: > "$WORK/commands.txt"
for op in expire-dry expire orphans-dry orphans; do
  for i in $(seq "$RUNS"); do
    for peer in $PEERS; do
      [[ $peer == icemaint-verify && ($i -gt $VERIFY_RUNS || $op == orphans*) ]] && continue
      [[ $peer == iceberg-go && $i -gt $GO_RUNS ]] && continue
      log "$op: $peer, run $i"
      run "$op.$peer.$i" "$peer" "$op"
    done
  done
done

# ---- summary and checks -----------------------------------------------------------------------------
log "summary"
python3 - "$WORK_OUT" "$RUNS" "$PEERS" "$LOC" <<'PY'
import glob, json, os, re, statistics, sys
out, runs, peers, loc = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
def tm(label):
    p = f"{out}/{label}.time"
    if not os.path.exists(p): return None
    t = open(p).read()
    if "Exit status: 0" not in t: return None
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", t)
    w = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1)) + \
          float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
    return w, cpu, rss
def reqs(label):
    try:
        r = json.load(open(f"{out}/{label}.rest.json")); s = json.load(open(f"{out}/{label}.s3.json"))
        return r["total"], s["total"]
    except Exception: return None
print("| operation | peer | wall s (median; best) | CPU s (median) | peak RSS MiB (max) | REST requests | S3 requests |")
print("|---|---|---|---|---|---|---|")
for op in ("expire-dry", "expire", "orphans-dry", "orphans"):
    for peer in peers:
        n = sum(1 for i in range(1, runs + 1) if os.path.exists(f"{out}/{op}.{peer}.{i}.time"))
        ts = [tm(f"{op}.{peer}.{i}") for i in range(1, n + 1)]
        ok = [t for t in ts if t]
        if not any(os.path.exists(f"{out}/{op}.{peer}.{i}.time") for i in range(1, runs + 1)): continue
        if not ok:
            print(f"| {op} | {peer} | failed | | | | |"); continue
        rq = [reqs(f"{op}.{peer}.{i}") for i in range(1, n + 1) if ts[i - 1]]
        rr = sorted({r[0] for r in rq if r}); ss = sorted({r[1] for r in rq if r})
        print(f"| {op} | {peer} | {statistics.median(t[0] for t in ok):.2f}; {min(t[0] for t in ok):.2f} "
              f"| {statistics.median(t[1] for t in ok):.2f} | {max(t[2] for t in ok):.0f} "
              f"| {'/'.join(map(str, rr))} | {'/'.join(map(str, ss))} |" + f" {len(ok)} run(s)" + ("" if len(ok) == n else f" ({n - len(ok)} failed)"))
print()
# equivalence
def icm_doc(label):
    try: return json.load(open(f"{out}/{label}.out"))
    except Exception: return None
def rel(p): return p[len(loc) + 1:] if p.startswith(loc + "/") else p
d = icm_doc("expire-dry.icemaint.1")
if d is not None:
    mine = {rel(f["path"]) for k, v in d.items() if k.startswith("deleted_") and isinstance(v, list) for f in v}
    print(f"expiry plan, icemaint: {len(mine)} files ({', '.join(f'{k} {len(v)}' for k, v in d.items() if k.startswith('deleted_') and isinstance(v, list))})")
    if os.path.exists(f"{out}/expire-dry.java.1.paths"):
        java = {rel(l.strip()) for l in open(f"{out}/expire-dry.java.1.paths") if l.strip()}
        print(f"  vs Java's planned deletes {len(java)}:", "identical" if mine == java else
              f"DIFFERENT ({len(mine - java)} only icemaint, {len(java - mine)} only Java) e.g. {sorted(mine ^ java)[:3]}")
    exp = {int(s) for s in d.get("expired", [])}
    try:
        g = json.load(open(f"{out}/expire-dry.iceberg-go.1.out"))
        gexp = {int(s["snapshot_id"]) for s in g.get("expired_snapshots") or []}
        print(f"  expired snapshots: icemaint {len(exp)}, iceberg-go {len(gexp)}:", "identical" if exp == gexp else "DIFFERENT")
    except Exception as e:
        print(f"  iceberg-go dry expiry: no result ({e})")
def sets(op, suffix):
    r = {}
    for peer in peers:
        p = f"{out}/{op}.{peer}.1.{suffix}"
        if os.path.exists(p) and tm(f"{op}.{peer}.1"):
            r[peer] = {l.strip() for l in open(p) if l.strip()}
    return r
for op, suffix, what in (("expire", "retained.txt", "snapshots the catalog keeps"), ("expire", "gone.txt", "objects the real expiry removed"),
                         ("orphans", "gone.txt", "objects the real sweep removed")):
    s = sets(op, suffix)
    base = next(iter(s.items()), None)
    if base:
        print(f"{what}: " + "; ".join(f"{p} {len(v)}" + ("" if v == base[1] else f" (DIFFERENT from {base[0]}: {len(v - base[1])} more, {len(base[1] - v)} fewer, e.g. {sorted(v ^ base[1])[:3]})") for p, v in s.items()))
orph = {}
d = icm_doc("orphans-dry.icemaint.1")
if d: orph["icemaint"] = {rel(o["path"]) for o in d["orphans"]}
try:
    g = json.load(open(f"{out}/orphans-dry.iceberg-go.1.out"))
    orph["iceberg-go"] = {rel(o["path"]) for o in g.get("orphan_files") or []}
except Exception: pass
if os.path.exists(f"{out}/orphans-dry.java.1.paths"):
    orph["java"] = {rel(l.strip()) for l in open(f"{out}/orphans-dry.java.1.paths") if l.strip()}
if orph:
    base = next(iter(orph.items()))
    print("dry-run orphan lists: " + "; ".join(f"{p} {len(v)}" + ("" if v == base[1] else f" (DIFFERENT from {base[0]}: e.g. {sorted(v ^ base[1])[:3]})") for p, v in orph.items()))
PY
echo
echo "commands (each preceded by the reset):"
python3 - "$WORK/commands.txt" "$CP" "$WORK" <<'PY'
import re, sys
cmds, cp, work = sys.argv[1:4]
seen = []
for line in open(cmds):
    line = re.sub(r"\b\d{13}\b", "<ms>", line.rstrip().replace(cp, "<scripts/setup-java.sh>").replace(work, "$WORK"))
    if line not in seen: seen.append(line)
print("\n".join(seen))
PY
log "done"

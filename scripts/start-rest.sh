#!/usr/bin/env bash
# scripts/start-rest.sh: start the Apache Iceberg REST catalog fixture for the REST tests (.ci/run
# and scripts/test.sh call it; developers can too), on free 127.0.0.1 ports, with data under DIR:
#   rest-local  JdbcCatalog over DIR/rest-local/catalog.db (SQLite), warehouse file://DIR/rest-local/wh
#   rest-s3     JdbcCatalog over DIR/rest-s3/catalog.db, warehouse s3://BUCKET/rest-wh on the moto
#               server of scripts/start-s3.sh (ICM_TEST_S3_* must be set: source its env first),
#               S3FileIO, and include-credentials: load-table vends s3.access-key-id,
#               s3.secret-access-key and s3.session-token in its `config`
# and a fault proxy (tests/tools/faultproxy.py --api rest) in front of each. The fixture is
# Iceberg's own adapter and servlet (scripts/setup-rest.sh builds the classpath from Maven Central
# once and caches it) served by tests/rest/java's LoopbackRestServer, which binds 127.0.0.1 only.
#
# Usage: scripts/start-rest.sh DIR          prints `export ICM_TEST_REST...=...` lines, also in DIR/env
#        scripts/start-rest.sh --stop DIR   stops every process started from DIR
# By hand:
#   d=$(mktemp -d) && scripts/start-s3.sh "$d/s3" >/dev/null && . "$d/s3/env" &&
#   scripts/start-rest.sh "$d/rest" >/dev/null && . "$d/rest/env"
#   ... run tests ...; scripts/start-rest.sh --stop "$d/rest"; scripts/start-s3.sh --stop "$d/s3"
# Variables: ICM_TEST_REST_{URI,WAREHOUSE,PROXY_URI,PROXY_CONTROL} (local files) and
# ICM_TEST_REST_S3_{URI,WAREHOUSE,PROXY_URI,PROXY_CONTROL,ACCESS_KEY,SECRET_KEY,SESSION_TOKEN}
# (on S3; the keys are what the fixture vends).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

stop=0
if [[ "${1:-}" == "--stop" ]]; then
  stop=1
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/start-rest.sh [--stop] DIR" >&2
  exit 2
fi
mkdir -p "$1"
dir="$(cd "$1" && pwd)"

# stop_all: end each process recorded in DIR/*.pid (its own session: the whole group), TERM
# first, KILL after 10 s. Only the pids this script recorded are touched.
stop_all() {
  local f pid i
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    pid="$(cat "$f")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "-$pid" 2>/dev/null; then
      kill -TERM "-$pid" 2>/dev/null || true
      for i in $(seq 100); do
        kill -0 "-$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL "-$pid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
}

if [[ $stop == 1 ]]; then
  stop_all
  exit 0
fi

# A failed start leaves nothing running.
trap 'stop_all' ERR

CP="$(bash "$ROOT/scripts/setup-rest.sh")"
PY="${ICM_PYTHON:-python3}"

# start NAME READY_FILE COMMAND...: run COMMAND in its own session, log in DIR/NAME.log, pid in
# DIR/NAME.pid, and wait (up to 120 s: a JVM on two busy cores) for it to write READY_FILE.
start() {
  local name="$1" ready="$2" i
  shift 2
  rm -f "$ready"
  setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
  for i in $(seq 1200); do
    [ -s "$ready" ] && return 0
    if ! kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
      echo "start-rest: $name exited during start-up; its log:" >&2
      tail -n 30 "$dir/$name.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "start-rest: $name not ready after 120 s; its log:" >&2
  tail -n 30 "$dir/$name.log" >&2
  return 1
}

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# fixture NAME ENV...: one REST fixture with the CATALOG_* settings given, then its fault proxy.
# Prints the fixture's URI, the proxy's URI and its control URL, one a line.
fixture() {
  local name="$1"
  shift
  mkdir -p "$dir/$name"
  start "$name" "$dir/$name/ready.json" env "$@" CATALOG_URI="jdbc:sqlite:$dir/$name/catalog.db" \
    java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" \
    org.apache.iceberg.rest.LoopbackRestServer "$dir/$name/ready.json"
  local uri
  uri="$(json_field "$dir/$name/ready.json" uri)"
  # The health check the reference recipe names: /v1/config answers 200.
  "$PY" -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=30).read()' \
    "$uri/v1/config" >/dev/null
  start "$name-proxy" "$dir/$name/proxy.json" \
    "$PY" "$ROOT/tests/tools/faultproxy.py" --api rest --upstream "$uri" \
    --ready-file "$dir/$name/proxy.json"
  echo "$uri"
  json_field "$dir/$name/proxy.json" endpoint
  json_field "$dir/$name/proxy.json" control
}

mkdir -p "$dir/rest-local/wh"
mapfile -t local_ < <(fixture rest-local CATALOG_WAREHOUSE="file://$dir/rest-local/wh")
[ ${#local_[@]} -eq 3 ]
{
  echo "export ICM_TEST_REST_URI=${local_[0]}"
  echo "export ICM_TEST_REST_WAREHOUSE=file://$dir/rest-local/wh"
  echo "export ICM_TEST_REST_PROXY_URI=${local_[1]}"
  echo "export ICM_TEST_REST_PROXY_CONTROL=${local_[2]}"
} >"$dir/env.tmp"

if [ -n "${ICM_TEST_S3_ENDPOINT:-}" ]; then
  # Vended credentials: the moto server's keys plus a session token (moto checks none of them;
  # the tests prove icemaint uses the vended ones by giving it no others).
  token="icm-rest-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  wh="s3://$ICM_TEST_S3_BUCKET/rest-wh"
  mapfile -t s3_ < <(fixture rest-s3 CATALOG_WAREHOUSE="$wh" \
    CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
    CATALOG_S3_ENDPOINT="$ICM_TEST_S3_ENDPOINT" CATALOG_S3_PATH__STYLE__ACCESS=true \
    CATALOG_CLIENT_REGION="$ICM_TEST_S3_REGION" \
    CATALOG_S3_ACCESS__KEY__ID="$ICM_TEST_S3_ACCESS_KEY" \
    CATALOG_S3_SECRET__ACCESS__KEY="$ICM_TEST_S3_SECRET_KEY" \
    CATALOG_S3_SESSION__TOKEN="$token" CATALOG_INCLUDE__CREDENTIALS=true \
    AWS_REGION="$ICM_TEST_S3_REGION")
  [ ${#s3_[@]} -eq 3 ]
  {
    echo "export ICM_TEST_REST_S3_URI=${s3_[0]}"
    echo "export ICM_TEST_REST_S3_WAREHOUSE=$wh"
    echo "export ICM_TEST_REST_S3_PROXY_URI=${s3_[1]}"
    echo "export ICM_TEST_REST_S3_PROXY_CONTROL=${s3_[2]}"
    echo "export ICM_TEST_REST_S3_ACCESS_KEY=$ICM_TEST_S3_ACCESS_KEY"
    echo "export ICM_TEST_REST_S3_SECRET_KEY=$ICM_TEST_S3_SECRET_KEY"
    echo "export ICM_TEST_REST_S3_SESSION_TOKEN=$token"
  } >>"$dir/env.tmp"
else
  echo "start-rest: ICM_TEST_S3_ENDPOINT unset (start scripts/start-s3.sh first): no REST fixture on S3" >&2
fi
mv "$dir/env.tmp" "$dir/env"
cat "$dir/env"

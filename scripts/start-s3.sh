#!/usr/bin/env bash
# scripts/start-s3.sh: start the S3 test servers on loopback for the tests (.ci/run and
# scripts/test.sh call it; developers can too). Starts moto (server mode), the
# signature-verifying server (scripts/setup-s3.sh installs it) and a fault proxy
# (tests/tools/faultproxy.py) in front of each, on free 127.0.0.1 ports, with data under DIR.
#
# Usage: scripts/start-s3.sh DIR          prints `export ICM_TEST_S3...=...` lines, also in DIR/env
#        scripts/start-s3.sh --stop DIR   stops every process started from DIR
# By hand:
#   d=$(mktemp -d) && scripts/start-s3.sh "$d" >/dev/null && . "$d/env"
#   ... run tests ...; scripts/start-s3.sh --stop "$d"
# Variables: ICM_TEST_S3_{ENDPOINT,ACCESS_KEY,SECRET_KEY,BUCKET,REGION,SERVER} (moto),
# ICM_TEST_S3V_{...} (verifying server), ICM_TEST_S3{,V}_PROXY_{ENDPOINT,CONTROL} (fault proxies).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ICM_VENV:-build/venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac

stop=0
if [[ "${1:-}" == "--stop" ]]; then
  stop=1
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/start-s3.sh [--stop] DIR" >&2
  exit 2
fi
dir="$1"

if [[ $stop == 1 ]]; then
  # Stopping needs only Python's standard library: it works even if the venv is gone.
  exec python3 "$ROOT/tests/tools/s3servers.py" stop "$dir"
fi

bash "$ROOT/scripts/setup-python.sh"
bash "$ROOT/scripts/setup-s3.sh"
exec "$VENV/bin/python" "$ROOT/tests/tools/s3servers.py" start "$dir"

#!/usr/bin/env bash
# Create (or refresh) the Python virtualenv the interop harness and Python tests run in.
# Idempotent and quick when up to date: pip runs only when tests/interop/requirements.txt changed
# since the last successful install (its hash is kept in a stamp file inside the venv).
# Usage: scripts/setup-python.sh      (venv at ${ICM_VENV:-build/venv}, relative to the repo root;
#        ICM_WITH_PYSPARK=1 adds PySpark, see spark() below)
# Prints nothing on the fast path; the venv's python is at "$ICM_VENV/bin/python".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ICM_VENV:-build/venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
REQ="$ROOT/tests/interop/requirements.txt"
STAMP="$VENV/.icm-requirements.sha256"
PYTHON="${PYTHON:-python3}"

# Opt-in extras: ICM_WITH_PYSPARK=1 also installs tests/interop/requirements-spark.txt
# (PySpark, for the Spark example's real-SparkContext test; about 2 minutes and 491 MB).
spark() {
  [ "${ICM_WITH_PYSPARK:-0}" = 1 ] || return 0
  local req="$ROOT/tests/interop/requirements-spark.txt" stamp="$VENV/.icm-spark.sha256" h
  h="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$h" ]; then return 0; fi
  echo "setup-python: installing $req" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  echo "$h" > "$stamp"
}

want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  spark
  exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup-python: creating virtualenv $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
fi
echo "setup-python: installing $REQ" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
# Written last, so an interrupted install is retried on the next run.
echo "$want" > "$STAMP"
spark

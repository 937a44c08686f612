#!/usr/bin/env bash
# scripts/setup-s3.sh: install the S3 servers the tests run against (idempotent; quick when done).
#   - moto (server mode) comes with the Python venv (tests/interop/requirements.txt).
#   - The signature-verifying server: versitygw v1.8.0, built from its Go module into build/s3/bin
#     (Go's module and build caches, ~/go/pkg/mod and ~/.cache/go-build, make a rebuild quick).
#     README "S3 test servers" says why this one.
# Writes build/s3/verifying ("KIND PATH"), which tests/tools/s3servers.py reads.
# Usage: scripts/setup-s3.sh        (prints nothing on the fast path)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/build/s3"
VERSITYGW_VERSION="v1.8.0"
BIN="$OUT/bin/versitygw"
STAMP="$OUT/bin/.versitygw-$VERSITYGW_VERSION"
mkdir -p "$OUT/bin"

if [ ! -x "$BIN" ] || [ ! -f "$STAMP" ]; then
  GO="$(command -v go || true)"
  if [ -z "$GO" ] && [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; fi
  if [ -z "$GO" ]; then
    echo "setup-s3: no Go toolchain (go) to build versitygw $VERSITYGW_VERSION" >&2
    exit 1
  fi
  echo "setup-s3: building versitygw $VERSITYGW_VERSION (Go module)" >&2
  GOBIN="$OUT/bin" GOFLAGS=-mod=mod "$GO" install \
    "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2
  touch "$STAMP"
fi
echo "versitygw $BIN" > "$OUT/verifying.tmp"
mv "$OUT/verifying.tmp" "$OUT/verifying"

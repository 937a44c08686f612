#!/usr/bin/env bash
# Build the Java judge of the interop harness (tests/interop/java) if its sources changed.
# Idempotent: skips Maven when target/classpath.txt and the compiled classes are newer than
# pom.xml and every Java source. The first build downloads Iceberg 1.12 and its dependencies
# from Maven Central into ~/.m2 (about 20-60 s); later builds run Maven offline.
# Prints the classpath to run the tools with, e.g.
#   java -cp "$(scripts/setup-java.sh)" dev.icemaint.interop.Fingerprint ...
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$ROOT/tests/interop/java"
CP_FILE="$MOD/target/classpath.txt"
STAMP="$MOD/target/.icm-built"

needs_build() {
  [ -f "$STAMP" ] && [ -f "$CP_FILE" ] || return 0
  [ -n "$(find "$MOD/pom.xml" "$MOD/src" -newer "$STAMP" -print -quit)" ]
}

if needs_build; then
  command -v mvn >/dev/null || { echo "setup-java: mvn not found (apt-get install maven)" >&2; exit 1; }
  echo "setup-java: building $MOD" >&2
  # Offline first (fast, and works without a network once ~/.m2 is filled); online on a miss.
  if ! mvn -q -B -o -f "$MOD/pom.xml" compile >/dev/null 2>&1; then
    mvn -q -B -f "$MOD/pom.xml" compile >&2
  fi
  touch "$STAMP"
fi
echo "$MOD/target/classes:$(cat "$CP_FILE")"

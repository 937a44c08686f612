#!/usr/bin/env bash
# Build the Apache Iceberg REST catalog fixture (tests/rest/java: Iceberg's test-fixture classes
# from Maven Central plus our loopback launcher) if its sources changed, and print its classpath:
#   java -cp "$(scripts/setup-rest.sh)" org.apache.iceberg.rest.LoopbackRestServer READY_FILE
# Idempotent: Maven is skipped when target/classpath.txt and the classes are newer than pom.xml
# and every source. The first build fills ~/.m2 (about 30 s); later builds run Maven offline, so
# a cached machine starts the fixture without the network.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$ROOT/tests/rest/java"
CP_FILE="$MOD/target/classpath.txt"
STAMP="$MOD/target/.icm-built"

needs_build() {
  [ -f "$STAMP" ] && [ -f "$CP_FILE" ] || return 0
  [ -n "$(find "$MOD/pom.xml" "$MOD/src" -newer "$STAMP" -print -quit)" ] && return 0
  # The cached classpath names jars in ~/.m2: a cleaned repository needs a rebuild.
  local jar
  while IFS= read -r jar; do
    [ -f "$jar" ] || return 0
  done < <(tr ':' '\n' <"$CP_FILE")
  return 1
}

if needs_build; then
  command -v mvn >/dev/null || { echo "setup-rest: mvn not found (apt-get install maven)" >&2; exit 1; }
  echo "setup-rest: building $MOD" >&2
  # Offline first (fast, and works without a network once ~/.m2 is filled); online on a miss.
  if ! mvn -q -B -o -f "$MOD/pom.xml" compile >/dev/null 2>&1; then
    mvn -q -B -f "$MOD/pom.xml" compile >&2
  fi
  touch "$STAMP"
fi
echo "$MOD/target/classes:$(cat "$CP_FILE")"

#!/usr/bin/env bash
# scripts/start-postgres.sh: start (or reuse) a throw-away PostgreSQL server for the catalog
# tests, using Debian's PostgreSQL binaries. Idempotent: a server already running from DIR is
# reused. Listens on 127.0.0.1 only, trust authentication, database `icemaint_test`.
#
# Usage: scripts/start-postgres.sh [DIR]        (default DIR: build/pg)
#        scripts/start-postgres.sh --stop [DIR]
# Prints the DSN on stdout and writes it to DIR/dsn; use it as ICM_PG_DSN:
#   export ICM_PG_DSN="$(scripts/start-postgres.sh)"
# Port: $ICM_PG_PORT if set, else 54329 when free, else the first free port above it.
# initdb refuses to run as root, so as root the cluster is owned by (and the server runs as) the
# `postgres` system user (created by the Debian package).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
stop=0
if [[ "${1:-}" == "--stop" ]]; then
    stop=1
    shift
fi
dir="${1:-$here/build/pg}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
data="$dir/data"
log="$dir/server.log"

bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
    echo "start-postgres: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin" \
         "(apt-get install postgresql)" >&2
    exit 1
fi

# Run a command as the cluster owner.
as_owner() {
    if [[ "$(id -u)" == "0" ]]; then
        # `su` keeps our environment out; pass the command as one quoted string.
        su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    else
        "$@"
    fi
}

if [[ "$(id -u)" == "0" ]]; then
    if ! id postgres >/dev/null 2>&1; then
        echo "start-postgres: running as root needs the 'postgres' user" >&2
        exit 1
    fi
    chown postgres "$dir"
fi

running() {
    [[ -f "$data/postmaster.pid" ]] && as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1
}

if [[ $stop == 1 ]]; then
    if running; then
        as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    fi
    exit 0
fi

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

if ! running; then
    if [[ ! -f "$data/PG_VERSION" ]]; then
        as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 \
            --no-locale >"$dir/initdb.log" 2>&1 || {
            cat "$dir/initdb.log" >&2
            exit 1
        }
    fi
    port="${ICM_PG_PORT:-54329}"
    if [[ -z "${ICM_PG_PORT:-}" ]]; then
        while ! port_free "$port"; do
            port=$((port + 1))
        done
    fi
    # Sockets go to the data dir: /var/run/postgresql may not exist or be writable.
    as_owner "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off" start >/dev/null || {
        tail -n 20 "$log" >&2
        exit 1
    }
    echo "$port" >"$dir/port"
fi
port="$(cat "$dir/port")"

if ! as_owner "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'icemaint_test'" | grep -q 1; then
    as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres icemaint_test
fi

dsn="postgresql://postgres@127.0.0.1:$port/icemaint_test"
echo "$dsn" >"$dir/dsn"
echo "$dsn"

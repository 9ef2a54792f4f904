#!/usr/bin/env bash
# Runs a command next to a throwaway PostgreSQL server on a free loopback port.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# CMD sees POSTFLOWS_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:<port>/postgres; the server and
# its data directory are removed when this script exits (normally, on failure or on interrupt). The exit code
# is CMD's. If POSTFLOWS_TEST_POSTGRES_URL is already set, CMD runs against that server instead.
set -euo pipefail

log() { echo "with-postgres: $*" >&2; }

if [ "$#" -eq 0 ]; then
    log "usage: $0 CMD [ARGS...]"
    exit 2
fi

if [ -n "${POSTFLOWS_TEST_POSTGRES_URL:-}" ]; then
    log "using the server already named in POSTFLOWS_TEST_POSTGRES_URL"
    set +e
    "$@"
    exit $?
fi

highest_bindir() {
    local dir
    dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -type d -name bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
        echo "$dir"
    fi
}

BINDIR=$(highest_bindir)
if [ -z "$BINDIR" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        log "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; install the 'postgresql' package"
        exit 3
    fi
    log "installing PostgreSQL server packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq postgresql >/dev/null
    BINDIR=$(highest_bindir)
    if [ -z "$BINDIR" ]; then
        log "PostgreSQL installed but no server binaries found"
        exit 3
    fi
fi

WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/postflows-pg.XXXXXX")
DATADIR="$WORKDIR/data"
SERVER_LOG="$WORKDIR/server.log"
STARTED=0

# As root the server must run as the unprivileged postgres user (PostgreSQL refuses to run as root).
as_server_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ "$STARTED" -eq 1 ]; then
        as_server_user "$BINDIR/pg_ctl" -D "$DATADIR" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$WORKDIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$WORKDIR"
fi
chmod 700 "$WORKDIR"

as_server_user "$BINDIR/initdb" -D "$DATADIR" -U postgres -A trust -E UTF8 --no-locale --no-sync \
    >"$WORKDIR/initdb.log" 2>&1 </dev/null || {
    log "initdb failed:"
    tail -n 30 "$WORKDIR/initdb.log" >&2
    exit 3
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The port is free when picked but could be taken before the server binds it, so a failed start retries.
PORT=""
for attempt in 1 2 3; do
    PORT=$(free_port)
    if as_server_user "$BINDIR/pg_ctl" -D "$DATADIR" -l "$SERVER_LOG" -w -t 60 \
        -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$WORKDIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null 2>&1 </dev/null; then
        STARTED=1
        break
    fi
    log "server start attempt $attempt on port $PORT failed"
done
if [ "$STARTED" -ne 1 ]; then
    log "could not start PostgreSQL; server log tail:"
    tail -n 40 "$SERVER_LOG" >&2 || true
    exit 3
fi

for _ in $(seq 1 100); do
    if "$BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PORT" -U postgres; then
        break
    fi
    sleep 0.1
done
if ! "$BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PORT" -U postgres; then
    log "PostgreSQL did not become ready; server log tail:"
    tail -n 40 "$SERVER_LOG" >&2 || true
    exit 3
fi

export POSTFLOWS_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres"
log "PostgreSQL $(basename "$(dirname "$BINDIR")") on 127.0.0.1:$PORT"

set +e
"$@"
rc=$?
set -e
exit "$rc"

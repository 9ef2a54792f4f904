#!/usr/bin/env bash
# Screenshots of every deployment's custom-run form in the Prefect UI, for the README: docs/ui/<name>.png.
#
# Starts a throwaway Prefect server (UI on) and `postflows serve` on loopback, opens each deployment's
# "Custom run" page in headless Chromium (Debian's `chromium` package) and stops both again.
#
#   scripts/ui-screenshots.sh                 # all deployments
#   scripts/ui-screenshots.sh address-batch   # only these
#
# Settings: VENV (default .venv), CHROMIUM (default: chromium on the PATH), OUT (default docs/ui),
# WIDTH/HEIGHT of the window (1280x2600), WAIT_MS the page gets to render (12000).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV=${VENV:-.venv}
PY="$VENV/bin/python"
OUT=${OUT:-docs/ui}
WIDTH=${WIDTH:-1280}
HEIGHT=${HEIGHT:-2600}
WAIT_MS=${WAIT_MS:-12000}

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [[ -z "$CHROMIUM" || ! -x "$CHROMIUM" ]]; then
    echo "ui-screenshots: Chromium is not installed, so no screenshot was taken." >&2
    echo "ui-screenshots: install it (Debian: apt-get install chromium) or set CHROMIUM=/path/to/chrome." >&2
    exit 2
fi
if [[ ! -x "$PY" ]]; then
    echo "ui-screenshots: no Python at $PY (run make install, or set VENV)" >&2
    exit 2
fi

WORK=$(mktemp -d)
PIDS=()
stop_all() {
    for pid in "${PIDS[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap stop_all EXIT

PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ORIGIN="http://127.0.0.1:$PORT"
export PREFECT_HOME="$WORK/prefect-home" PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
export PREFECT_API_URL="$ORIGIN/api" POSTFLOWS_DATA_DIR="$WORK/data"
# The checkout's packages, not whatever an editable install points at.
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

echo "ui-screenshots: Prefect server on $ORIGIN (log $WORK/server.log)"
setsid "$VENV/bin/prefect" server start --host 127.0.0.1 --port "$PORT" >"$WORK/server.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 240); do
    curl -fsS "$ORIGIN/api/health" >/dev/null 2>&1 && break
    sleep 0.5
done
curl -fsS "$ORIGIN/api/health" >/dev/null || { cat "$WORK/server.log" >&2; exit 1; }

setsid "$PY" -c 'from postflows.cli import main; main()' serve --sandbox >"$WORK/serve.log" 2>&1 &
PIDS+=("$!")

# Every catalog deployment registered: name and id, one per line.
list_deployments() {
    "$PY" - "$ORIGIN" "$@" <<'PYTHON'
import sys

import httpx

from deployments.catalog import CATALOG

origin, wanted = sys.argv[1], set(sys.argv[2:]) or {spec.name for spec in CATALOG}
served = httpx.post(f"{origin}/api/deployments/filter", json={"limit": 200}, timeout=10).json()
ids = {deployment["name"]: deployment["id"] for deployment in served}
if not wanted <= set(ids):
    sys.exit(1)
for name in sorted(wanted):
    print(name, ids[name])
PYTHON
}
for _ in $(seq 240); do
    list_deployments "$@" >"$WORK/deployments.txt" 2>/dev/null && break
    sleep 0.5
done
[[ -s "$WORK/deployments.txt" ]] || { echo "deployments did not appear" >&2; cat "$WORK/serve.log" >&2; exit 1; }

mkdir -p "$OUT"
while read -r name id; do
    url="$ORIGIN/v2/deployments/deployment/$id/run"
    "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --disable-quic --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$WORK/chromium" --window-size="$WIDTH,$HEIGHT" \
        --virtual-time-budget="$WAIT_MS" --screenshot="$OUT/$name.png" "$url" >/dev/null 2>&1
    echo "ui-screenshots: $OUT/$name.png  ($url)"
done <"$WORK/deployments.txt"

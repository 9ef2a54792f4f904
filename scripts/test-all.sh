#!/usr/bin/env bash
# The whole suite, as `make test` runs it (inside scripts/with-postgres.sh): first every test but the
# end-to-end ones, spread over pytest-xdist worker processes as `make test-fast` does but generating every
# fuzz case and running the fault matrix too (each test marked `long` heads a worker's share); then the
# end-to-end tests in one process (they start real servers and kill processes, and some measure the
# machine's processes). Arguments go to both runs;
# a run that selects no test (pytest's exit code 5) is no failure.
set -uo pipefail

PY=${PY:-.venv/bin/python}
WORKERS=${TEST_WORKERS:-$(( $(nproc) + 1 ))}

run() {
    "$PY" -m pytest "$@"
    local code=$?
    if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
        exit "$code"
    fi
}

run -n "$WORKERS" --dist worksteal --ignore=tests/e2e "$@"
run tests/e2e "$@"

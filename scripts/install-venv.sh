#!/usr/bin/env bash
# Create the project's virtualenv and install postflows with its dev and sandbox extras (`make install` runs
# this). The sandbox extra requires postflows-sandbox, which no index holds: it is installed from this tree
# (sandbox/pyproject.toml) in the same command, editable like postflows.
#
# uv does it in seconds; pip is the fallback when uv cannot be had or fails. uv compiles the bytecode at
# install, as pip does: where PYTHONDONTWRITEBYTECODE is set, a venv without it imports everything from
# source in every process (Prefect's server takes twice as long to import). uv is taken from PATH, else from
# a tools folder shared by every clone (POSTFLOWS_TOOLS, default ~/.cache/postflows/tools), where pip puts it
# once. uv installs from the same index as pip: UV_DEFAULT_INDEX, else UV_INDEX_URL, else PIP_INDEX_URL, else
# pip's configured global.index-url, else PyPI; PIP_CERT is used for TLS when SSL_CERT_FILE is not set.
#
#   USE_UV=0   pip only              PYTHON   interpreter for the venv (python3)
#   VENV       venv folder (.venv)   UV_VERSION  the uv that is bootstrapped when none is on PATH
set -euo pipefail

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
USE_UV=${USE_UV:-1}
UV_VERSION=${UV_VERSION:-0.13.9}
TOOLS=${POSTFLOWS_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/postflows/tools}
SPEC='.[dev,sandbox]'
SANDBOX=./sandbox

say() { echo "install: $*" >&2; }

# The uv to use, on stdout: PATH's, else the tools folder's, bootstrapped with pip when missing.
find_uv() {
    local uv_dir="$TOOLS/uv-$UV_VERSION" log
    if command -v uv >/dev/null 2>&1 && uv --version >/dev/null 2>&1; then
        command -v uv
        return
    fi
    if ! "$uv_dir/bin/uv" --version >/dev/null 2>&1; then
        say "bootstrapping uv $UV_VERSION into $uv_dir"
        log=$(mktemp)
        if ! "$PYTHON" -m pip install -q --disable-pip-version-check --no-warn-script-location \
            --target "$uv_dir.part" "uv==$UV_VERSION" >"$log" 2>&1; then
            cat "$log" >&2
            rm -rf "$log" "$uv_dir.part"
            return 1
        fi
        rm -rf "$log" "$uv_dir"
        mv "$uv_dir.part" "$uv_dir"
    fi
    echo "$uv_dir/bin/uv"
}

# pip's index when it names one, for uv to use the same.
pip_index() {
    if [ -n "${PIP_INDEX_URL:-}" ]; then
        echo "$PIP_INDEX_URL"
    else
        "$PYTHON" -m pip config get global.index-url 2>/dev/null || true
    fi
}

install_with_uv() {
    local uv index
    uv=$(find_uv) || return 1
    if [ -z "${UV_DEFAULT_INDEX:-}${UV_INDEX_URL:-}" ]; then
        index=$(pip_index)
        if [ -n "$index" ]; then
            export UV_DEFAULT_INDEX=$index
        fi
    fi
    if [ -z "${SSL_CERT_FILE:-}" ] && [ -n "${PIP_CERT:-}" ]; then
        export SSL_CERT_FILE=$PIP_CERT
    fi
    say "uv ($uv): $VENV"
    "$uv" venv -q --allow-existing --python "$PYTHON" "$VENV" &&
        "$uv" pip install -q --compile-bytecode --python "$VENV/bin/python" -e "$SANDBOX" -e "$SPEC"
}

install_with_pip() {
    say "pip: $VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$SANDBOX" -e "$SPEC"
}

if [ "$USE_UV" != 0 ]; then
    if install_with_uv; then
        exit 0
    fi
    say "uv failed; falling back to pip"
    rm -rf "$VENV"
fi
install_with_pip

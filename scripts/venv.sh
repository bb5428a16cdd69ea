#!/usr/bin/env bash
# scripts/venv.sh [-v]
#
# Make sure the project's Python virtualenv (.venv/ at the project root) exists
# and holds exactly what scripts/requirements.txt pins. Idempotent and cheap
# when nothing changed: the SHA-256 of requirements.txt is kept in
# .venv/requirements.sha256 and the install only runs when it differs (or the
# venv is missing/broken). Silent except for errors; -v shows what it does.
#
# Also links .venv/bin/osmem-server to the server binary bundled in the
# osmem-server wheel (the wheel installs no console script of its own).
#
# Python: $PYTHON if set, else python3.11, else python3 (3.10+ needed).
# Works without a TTY (CI=true, no stdin): pip never prompts.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
req="$root/scripts/requirements.txt"
stamp="$venv/requirements.sha256"

verbose=0
case "${1:-}" in
    -v | --verbose) verbose=1 ;;
    "") ;;
    *) echo "usage: $0 [-v]" >&2; exit 2 ;;
esac
say() { if [ "$verbose" = 1 ]; then echo "venv.sh: $*" >&2; fi; }
die() { echo "venv.sh: $*" >&2; exit 1; }

hash_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

[ -f "$req" ] || die "missing $req"
want="$(hash_of "$req")"

up_to_date() {
    [ -x "$venv/bin/python" ] &&
        "$venv/bin/python" -c 'import sys' >/dev/null 2>&1 &&
        [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
        [ -x "$venv/bin/osmem-server" ]
}

if up_to_date; then
    say "up to date ($venv)"
    exit 0
fi

# Serialise concurrent runs (parallel test jobs) on a lock beside the venv.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$root/.venv.lock"
    flock 9
    if up_to_date; then
        say "up to date (after waiting for another run)"
        exit 0
    fi
fi

pick_python() {
    if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
    local c
    for c in python3.11 python3; do
        if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi
    done
    die "no python3.11 or python3 on PATH (set PYTHON=...)"
}

export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
log="$(mktemp "${TMPDIR:-/tmp}/neardup-venv.XXXXXX")"
trap 'rm -f "$log"' EXIT
run() {
    # Run quietly; on failure show the captured output on stderr.
    say "+ $*"
    if [ "$verbose" = 1 ]; then
        "$@"
    elif ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        die "failed: $*"
    fi
}

py="$(pick_python)"
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null ||
    die "$py is older than Python 3.10 (set PYTHON=python3.11)"

# (Re)create the venv only when it is missing or broken; a changed
# requirements.txt is installed into the existing one (pins are exact).
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; }; then
    say "creating $venv with $py"
    rm -rf "$venv"
    if ! "$py" -m venv "$venv" >"$log" 2>&1; then
        # Debian-style Pythons without ensurepip: make a pip-less venv and
        # install into it with the outer pip (pip >= 22.3 has --python).
        say "venv with pip failed; trying --without-pip"
        rm -rf "$venv"
        "$py" -m venv --without-pip "$venv" >"$log" 2>&1 || { cat "$log" >&2; die "cannot create $venv"; }
    fi
fi

rm -f "$stamp"
if "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    pip=("$venv/bin/python" -m pip)
elif "$py" -m pip --version >/dev/null 2>&1; then
    pip=("$py" -m pip --python "$venv/bin/python")
else
    die "no pip available (install python3-pip or python3.11-venv)"
fi
quiet=(-q)
[ "$verbose" = 1 ] && quiet=()
run "${pip[@]}" install "${quiet[@]}" -r "$req"

# Expose the bundled server binary at a stable path.
# The link is relative so that the project directory can be moved.
bin="$("$venv/bin/python" -c 'import os, osmem_server; print(os.path.relpath(os.path.join(os.path.dirname(osmem_server.__file__), "bin", "osmem-server"), os.path.join(os.sys.prefix, "bin")))')"
[ -x "$venv/bin/$bin" ] || die "osmem-server binary not found in the wheel ($bin): no wheel for this platform?"
ln -sfn "$bin" "$venv/bin/osmem-server"

echo "$want" >"$stamp"
say "ready: $venv"

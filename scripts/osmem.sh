#!/usr/bin/env bash
# scripts/osmem.sh [start [SERVER-ARGS...]] | stop | status
#
# Run osmem-server (in-memory OpenSearch-compatible server, from the pinned
# PyPI wheel) in the background for manual testing and demos.
#
#   scripts/osmem.sh              start (or reuse) a server, print its URL
#   scripts/osmem.sh start -seed DIR   extra args go to osmem-server
#   scripts/osmem.sh status       print the URL if running, else exit 1
#   scripts/osmem.sh stop         stop it
#
# How: scripts/venv.sh provides .venv/bin/osmem-server. The server normally
# exits when its stdin closes (so it dies with the process that started it);
# here it is started detached (setsid, nohup) with -no-stdin-watch so that it
# outlives this script. Its first stdout line is JSON with the URL, printed
# once it listens; that URL is printed and kept in .venv/run/osmem.url, the
# pid in .venv/run/osmem.pid, the output in .venv/run/osmem.log. Data lives in
# memory only: a stop loses it. Listens on $OSMEM_ADDR (default 127.0.0.1:0,
# a free port); Japanese analysis is off (-no-ja).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run="$root/.venv/run"
pidf="$run/osmem.pid"
urlf="$run/osmem.url"
logf="$run/osmem.log"

die() { echo "osmem.sh: $*" >&2; exit 1; }

# The pid in the pid file, if that process is alive and is osmem-server.
running_pid() {
    [ -f "$pidf" ] || return 1
    local pid
    pid="$(cat "$pidf")"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    if [ -r "/proc/$pid/cmdline" ]; then
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q osmem-server || return 1
    fi
    echo "$pid"
}

start() {
    bash "$root/scripts/venv.sh"
    mkdir -p "$run"
    if running_pid >/dev/null && [ -s "$urlf" ]; then
        cat "$urlf"
        return 0
    fi
    rm -f "$pidf" "$urlf"
    local launcher=()
    command -v setsid >/dev/null 2>&1 && launcher=(setsid -w)
    nohup "${launcher[@]}" "$root/.venv/bin/osmem-server" \
        -addr "${OSMEM_ADDR:-127.0.0.1:0}" -no-ja -no-stdin-watch "$@" \
        </dev/null >"$logf" 2>&1 &
    local pid=$!
    echo "$pid" >"$pidf"
    local url="" i
    for i in $(seq 1 300); do # up to 30 s (seeding can take a while)
        url="$(head -n 1 "$logf" 2>/dev/null | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')"
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$logf" >&2; rm -f "$pidf"; die "osmem-server exited during startup"; }
        sleep 0.1
    done
    if [ -z "$url" ]; then
        kill "$pid" 2>/dev/null || true
        rm -f "$pidf"
        cat "$logf" >&2
        die "osmem-server did not report a URL within 30 s"
    fi
    # Prefer the pid the server reports (setsid may have forked).
    local spid
    spid="$(head -n 1 "$logf" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')"
    [ -n "$spid" ] && echo "$spid" >"$pidf"
    echo "$url" >"$urlf"
    echo "$url"
}

stop() {
    local pid
    if ! pid="$(running_pid)"; then
        rm -f "$pidf" "$urlf"
        return 0
    fi
    kill "$pid" 2>/dev/null || true
    local i
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidf" "$urlf"
}

status() {
    if running_pid >/dev/null && [ -s "$urlf" ]; then
        cat "$urlf"
    else
        echo "osmem-server is not running" >&2
        return 1
    fi
}

cmd="${1:-start}"
[ $# -gt 0 ] && shift
case "$cmd" in
    start) start "$@" ;;
    stop) stop ;;
    status) status ;;
    -h | --help | help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (start, stop, status)" ;;
esac

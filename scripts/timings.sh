# Sourced by scripts/test and .ci/run: the wall time of each step, so that
# the next slow one shows at once.
#
#   timings_start         own a table (unless a caller already does) and
#                         print it when the script exits, however it exits;
#                         the exit status is kept
#   timed NAME CMD...     run CMD (a program or script, not a shell
#                         function), note NAME, its seconds and its exit
#                         status, and return that status
#
# The table lives in the file $NEARDUP_TIMINGS, so that the steps of
# scripts/test run from .ci/run land in .ci/run's table.

timings_start() {
    if [ -n "${NEARDUP_TIMINGS:-}" ]; then
        return 0
    fi
    NEARDUP_TIMINGS=$(mktemp "${TMPDIR:-/tmp}/neardup-timings.XXXXXX")
    export NEARDUP_TIMINGS
    timings_started=$(timings_now)
    timings_load_before=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)
    trap 'timings_status=$?; timings_print; rm -f "$NEARDUP_TIMINGS"; exit "$timings_status"' EXIT
}

# Microseconds since the epoch (EPOCHREALTIME's decimal point may be a
# comma in some locales).
timings_now() {
    echo "${EPOCHREALTIME//[.,]/}"
}

timed() {
    local name=$1
    shift
    local start status=0
    start=$(timings_now)
    "$@" || status=$?
    printf '%s\t%s\t%s\n' "$name" "$(($(timings_now) - start))" "$status" >>"$NEARDUP_TIMINGS"
    return "$status"
}

timings_print() {
    local total=$(($(timings_now) - timings_started))
    echo
    echo "== wall time of each step (s)"
    awk -F '\t' -v total="$total" '
        { printf "%-40s %8.1f%s\n", $1, $2 / 1e6, ($3 == 0 ? "" : "   FAILED (exit " $3 ")") }
        END { printf "%-40s %8.1f\n", "total (with what no step times)", total / 1e6 }
    ' "$NEARDUP_TIMINGS"
    echo "load average (1, 5, 15 min) at the start: $timings_load_before; at the end: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)"
}

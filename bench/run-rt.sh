#!/bin/sh
# Real-time figures: 8 streams at a 64-frame quantum (1.33 ms at 48 kHz) for
# SECONDS, first on an idle machine, then with a CPU hog (a busy loop pinned
# to the last core). Prints one CSV row each (see audiod-load for columns),
# each after the machine's own timer-jitter baseline for the same condition
# (audiod-timer-jitter): xruns can only be read against that.
#   bench/run-rt.sh [BUILD_DIR] [SECONDS]
set -eu
build=${1:-build/release}
seconds=${2:-60}
work=$(mktemp -d /tmp/audiod-rt-XXXXXX)
server=""
hogs=""
cleanup() {
    [ -n "$hogs" ] && kill $hogs 2>/dev/null
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket"
printf '[server]\nquantum = 64\nrt-priority = 20\n[sinks.null]\ntype = "null"\n' >"$work/audiod.conf"
"$build/bin/audiod" --quiet --config "$work/audiod.conf" &
server=$!
until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
"$build/bin/audioctl" info | grep -E "scheduling|memory" >&2

echo "condition,quantum,streams,seconds,server_cpu_pct,server_pct_per_stream,client_cpu_pct,client_pct_per_stream,server_wakeups_per_s,client_wakeups_per_s,underruns,xruns,longest_write_ms,failures"
"$build/bin/audiod-timer-jitter" --quantum 64 --seconds "$seconds" >&2
printf 'idle,'
"$build/bin/audiod-load" --streams 8 --seconds "$seconds" --csv
# A busy loop on the other core (the last one).
last=$(($(nproc) - 1))
taskset -c "$last" sh -c 'while :; do :; done' &
hogs=$!
"$build/bin/audiod-timer-jitter" --quantum 64 --seconds "$seconds" >&2
printf 'cpu-hog,'
"$build/bin/audiod-load" --streams 8 --seconds "$seconds" --csv

#!/bin/sh
# Side-by-side load figures: starts a private audiod with a null sink at
# each quantum, runs audiod-load for each stream count, prints a table.
#   bench/run-load.sh [BUILD_DIR] [SECONDS]
# Environment: QUANTA="256 64", STREAMS="1 8 32 64", LATENCY_MS=100.
set -eu
build=${1:-build/release}
seconds=${2:-10}
quanta=${QUANTA:-"256 64"}
counts=${STREAMS:-"1 8 32 64"}
latency=${LATENCY_MS:-100}
work=$(mktemp -d /tmp/audiod-bench-XXXXXX)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
export AUDIOD_SOCKET="$work/socket"

echo "quantum,streams,seconds,server_cpu_pct,server_pct_per_stream,client_cpu_pct,client_pct_per_stream,server_wakeups_per_s,client_wakeups_per_s,underruns,xruns,longest_write_ms,failures"
for q in $quanta; do
    printf '[server]\nquantum = %s\n[sinks.null]\ntype = "null"\n' "$q" >"$work/audiod.conf"
    "$build/bin/audiod" --quiet --config "$work/audiod.conf" &
    server=$!
    until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
    for n in $counts; do
        "$build/bin/audiod-load" --streams "$n" --seconds "$seconds" --latency-ms "$latency" --csv
    done
    kill "$server"
    wait "$server" || true
    server=""
done

#!/bin/sh
# Why real-time players underrun more on an idle virtual machine than on a
# busy one: 8 `audioplay --latency-ms 3` streams at a 64-frame quantum
# (1.33 ms), normal and `--realtime`, each with and without a SCHED_IDLE
# busy loop on every CPU. The loops take no time from anything else, but
# keep the virtual CPUs from halting; a woken thread that lands on a
# halted virtual CPU waits for the host to run it again. Prints the
# underruns the server counted for the streams, and its sink's xruns.
#   bench/run-rt-idle.sh [BUILD_DIR] [SECONDS]
set -eu
build=${1:-build/release}
seconds=${2:-30}
work=$(mktemp -d /tmp/audiod-rt-idle-XXXXXX)
server=""
players=""
spinners=""
# (The pid lists are split into words on purpose.)
# shellcheck disable=SC2086
stop_all() {
    [ -z "$players" ] || { kill $players 2>/dev/null || true; wait $players 2>/dev/null || true; }
    [ -z "$server" ] || { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
    [ -z "$spinners" ] || kill $spinners 2>/dev/null || true
    players="" server="" spinners=""
}
trap 'stop_all; rm -rf "$work"' EXIT
export AUDIOD_SOCKET="$work/socket"
printf '[server]\nquantum = 64\nrt-priority = 20\n[sinks.null]\ntype = "null"\n' >"$work/audiod.conf"
sox -n -r 48000 -c 2 -b 16 "$work/tone.wav" synth $((seconds + 10)) sine 440 vol 0.5
total() { # total of the "xruns" of every stream or sink listed
    "$build/bin/audioctl" --json list "$1" |
        python3 -c 'import json,sys; print(sum(x.get("xruns", 0) for x in json.load(sys.stdin)))'
}
echo "players,spinning,seconds,stream_underruns,sink_xruns"
for spin in no yes; do
    for kind in normal realtime; do
        if [ "$spin" = yes ]; then
            cpu=0
            while [ "$cpu" -lt "$(nproc)" ]; do
                chrt -i 0 taskset -c "$cpu" sh -c 'while :; do :; done' &
                spinners="$spinners $!"
                cpu=$((cpu + 1))
            done
        fi
        "$build/bin/audiod" --quiet --config "$work/audiod.conf" --state "$work/state" &
        server=$!
        until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
        flag=""
        [ "$kind" = realtime ] && flag=--realtime
        for _ in 1 2 3 4 5 6 7 8; do
            "$build/bin/audioplay" -q --latency-ms 3 $flag "$work/tone.wav" &
            players="$players $!"
        done
        sleep 2 # all eight playing
        streams=$(total streams)
        sinks=$(total sinks)
        sleep "$seconds"
        echo "$kind,$spin,$seconds,$(($(total streams) - streams)),$(($(total sinks) - sinks))"
        stop_all
    done
done

#!/bin/sh
# The lowest jitter-buffer target that a loopback RTP link holds for a long
# play without concealing a packet. One server sends a tone from each of
# its RTP sinks `netT` to its own RTP source `rxT`, one link per target T
# (ms), all at once for SECONDS; then prints, per link, the jitter-buffer
# target it holds (at least what the packets and the cycles allow), the
# latency it kept (read half-way), the packets received, lost (concealed:
# they missed their deadline) and late, and the xruns. All links run side by
# side, so each is measured under the load of the others: the figure is, if
# anything, pessimistic.
# Run it on a quiet machine.
#   bench/run-rtp-floor.sh [BUILD_DIR] [SECONDS] [PAYLOAD] [PTIME] [QUANTUM] [TARGETS]
# defaults: build/release 300 opus 10 64 "1 2 3 5 8 10 15 20"
set -eu
build=${1:-build/release}
seconds=${2:-300}
payload=${3:-opus}
ptime=${4:-10}
quantum=${5:-64}
targets=${6:-1 2 3 5 8 10 15 20}
work=$(mktemp -d /tmp/audiod-rtp-floor-XXXXXX)
server=""
players=""
cleanup() {
    # shellcheck disable=SC2086
    [ -n "$players" ] && kill $players 2>/dev/null
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket"
base=$((40000 + $$ % 5000 * 4))

{
    printf '[server]\nquantum = %s\n[sinks.main]\ntype = "null"\n' "$quantum"
    port=$base
    for t in $targets; do
        printf '[sinks.net%s]\ntype = "rtp"\ndestination = "127.0.0.1"\nport = %s\n' "$t" "$port"
        printf 'payload = "%s"\nptime = %s\n' "$payload" "$ptime"
        printf '[sources.rx%s]\ntype = "rtp"\naddress = "127.0.0.1"\nport = %s\n' "$t" "$port"
        printf 'payload = "%s"\nlatency-ms = %s\n' "$payload" "$t"
        port=$((port + 2))
    done
} >"$work/audiod.conf"
"$build/bin/audiod" --quiet --config "$work/audiod.conf" &
server=$!
until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done

field() { # SOURCE KEY: one key=value of `audioctl list sources`
    "$build/bin/audioctl" list sources | grep "^$1:" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
xruns() { # sinks|sources NAME: the XRUNS column
    "$build/bin/audioctl" list "$1" | awk -v n="$2" '$1 == n { print $NF }'
}
for t in $targets; do
    "$build/bin/audioplay" --quiet --sink "net$t" --tone 1000 --duration "$seconds" &
    players="$players $!"
done
# The latency each link holds, read half-way through (an idle source shows 0).
sleep $((seconds / 2))
for t in $targets; do
    field "rx$t" latency-ms >"$work/latency$t"
done
# shellcheck disable=SC2086
wait $players
players=""
sleep 2 # the last packets are played out

echo "payload,ptime_ms,quantum,target_ms,held_target_ms,latency_ms,seconds,received,lost,recovered,late,jitter_ms,source_xruns,sink_xruns"
for t in $targets; do
    printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$payload" "$ptime" "$quantum" "$t" \
        "$(field "rx$t" target-ms)" "$(cat "$work/latency$t")" "$seconds" "$(field "rx$t" received)" "$(field "rx$t" lost)" \
        "$(field "rx$t" recovered)" "$(field "rx$t" late)" "$(field "rx$t" jitter-ms)" \
        "$(xruns sources "rx$t")" "$(xruns sinks "net$t")"
done

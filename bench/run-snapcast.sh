#!/bin/sh
# Snapcast's rooms, measured as audiod's are (bench/run-rooms.sh): one
# snapserver reads the probe (audiod-sync-probe make) from a pipe and
# three snapclients play it, each through audiod's PulseAudio-protocol
# server into a file sink whose clock is set -100, 0 or +100 ppm off and
# which writes when its frames played. audiod-sync-probe measure then
# says how far apart the rooms heard each sample, by the same analysis.
# Snapclient keeps time by the latency its player reports (libpulse's,
# which audiod's pulse server answers from the sink it plays into) and
# by dropping or adding samples, as it would on sound cards.
#
#   bench/run-snapcast.sh [BUILD_DIR]
#   env: SECONDS_OF_AUDIO=600 CODEC=flac (pcm: lossless too) SETTLE=5
#        KEEP=DIR keeps the recordings and play times there
#
# Needs snapserver and snapclient (Debian 12: 0.26).
set -eu
build=${1:-build/release}
seconds=${SECONDS_OF_AUDIO:-600}
codec=${CODEC:-flac}
settle=${SETTLE:-5}
bin="$build/bin"
for program in snapserver snapclient sox; do
    command -v "$program" >/dev/null || { echo "run-snapcast: $program is missing" >&2; exit 2; }
done
work=$(mktemp -d /tmp/audiod-snapcast-XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP" && cp "$work"/*.wav "$work"/*.times "$work"/*.log "$KEEP"/ 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket" XDG_RUNTIME_DIR="$work"
stream_port=$((30000 + $$ % 10000 * 2))
control_port=$((stream_port + 1))

{
    printf '[server]\nrt-priority = 0\ndefault-sink = "spare"\n[sinks.spare]\ntype = "null"\n'
    printf '[pulse]\nenable = true\nsocket = "%s/pulse-native"\n' "$work"
    for room in kitchen:-100 hall:0 study:100; do
        name=${room%%:*}
        printf '[sinks.%s]\ntype = "file"\nformat = "f32le"\npath = "%s/%s.wav"\n' "$name" "$work" "$name"
        printf 'play-times = "%s/%s.times"\nclock-ppm = %s\n' "$work" "$name" "${room##*:}"
    done
} >"$work/audiod.conf"

"$bin/audiod-sync-probe" make --seconds "$seconds" "$work/probe.wav"
sox "$work/probe.wav" -t raw "$work/probe.raw"
mkfifo "$work/fifo"
"$bin/audiod" --quiet --config "$work/audiod.conf" --state "$work/state" &
pids="$pids $!"
until "$bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
snapserver -c /dev/null --server.datadir="$work" --http.enabled=false \
    --tcp.port="$control_port" --stream.port="$stream_port" \
    "--stream.source=pipe://$work/fifo?name=probe&sampleformat=48000:16:2&codec=$codec" \
    --logging.sink=stderr 2>"$work/snapserver.log" &
pids="$pids $!"
sleep 1
for name in kitchen hall study; do
    snapclient -h 127.0.0.1 -p "$stream_port" --hostID "$name" -s "$name" \
        --player "pulse:server=unix:$work/pulse-native" --logsink stderr 2>"$work/snapclient-$name.log" &
    pids="$pids $!"
done
# Each client plays into its room before the probe starts.
for name in kitchen hall study; do
    until "$bin/audioctl" list streams | grep -q " $name "; do sleep 0.1; done
done
cat "$work/probe.raw" >"$work/fifo"
# What is in the pipeline plays out: snapserver's buffer (1 s) and more.
sleep 3
for p in $pids; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
pids=""
echo "snapcast $(snapserver --version | head -1 | cut -d' ' -f2) codec=$codec seconds=$seconds settle=${settle}s"
"$bin/audiod-sync-probe" measure --settle "$settle" \
    kitchen="$work/kitchen.wav,$work/kitchen.times" hall="$work/hall.wav,$work/hall.times" \
    study="$work/study.wav,$work/study.times"

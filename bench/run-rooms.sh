#!/bin/sh
# Rooms in sync, measured (doc/rooms.md): one server sends the probe
# (audiod-sync-probe make) to a multicast group on loopback; three RTP
# sources with link-offset-ms = 150 play it into three file sinks whose
# clocks are set -100, 0 and +100 ppm off, each writing when its frames
# played; audiod-sync-probe measure then says how far apart the rooms
# heard each sample. With LOSS or JITTER_MS, each room hears the stream
# through a relay of its own (audiod-udp-relay, seeded) that loses and
# delays packets.
#
#   bench/run-rooms.sh [BUILD_DIR]
#   env: SECONDS_OF_AUDIO=600 PAYLOAD=l24 (l16, opus) LOSS=0 JITTER_MS=0 SETTLE=5
#        KEEP=DIR keeps the recordings and play times there
#
# Opus keeps no index ramp: the rooms are measured by the probe's noise
# bursts (a point every half second). Prints the measure's lines (per
# room: what it heard and any steps; per pair: |delta| p50, p99.9 and max
# in microseconds after SETTLE seconds, and the drift) and the relays'.
set -eu
build=${1:-build/release}
seconds=${SECONDS_OF_AUDIO:-600}
payload=${PAYLOAD:-l24}
loss=${LOSS:-0}
jitter=${JITTER_MS:-0}
settle=${SETTLE:-5}
bin="$build/bin"
work=$(mktemp -d /tmp/audiod-rooms-XXXXXX)
server=""
relays=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    for r in $relays; do kill "$r" 2>/dev/null || true; done
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP" && cp "$work"/*.wav "$work"/*.times "$KEEP"/ 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket" XDG_RUNTIME_DIR="$work"
port=$((40000 + $$ % 10000 * 2))
group="239.255.89.$(($$ % 250 + 1))"
networked=no
[ "$loss" != 0 ] || [ "$jitter" != 0 ] && networked=yes

{
    printf '[server]\nrt-priority = 0\ndefault-sink = "spare"\n[sinks.spare]\ntype = "null"\n'
    printf '[sinks.net]\ntype = "rtp"\ndestination = "%s"\nport = %s\npayload = "%s"\n' \
        "$group" "$port" "$payload"
    n=0
    for room in kitchen:-100 hall:0 study:100; do
        name=${room%%:*}
        ppm=${room##*:}
        n=$((n + 1))
        printf '[sinks.%s]\ntype = "file"\nformat = "f32le"\npath = "%s/%s.wav"\n' "$name" "$work" "$name"
        printf 'play-times = "%s/%s.times"\nclock-ppm = %s\n' "$work" "$name" "$ppm"
        if [ $networked = yes ]; then
            to=$((port + 2 * n))
            "$bin/audiod-udp-relay" --group "$group" --listen "$port" --to "127.0.0.1:$to" \
                --loss "$loss" --jitter-ms "$jitter" --seed "$n" >"$work/relay-$name.json" &
            relays="$relays $!"
            from="address = \"127.0.0.1\"\nport = $to"
        else
            from="address = \"$group\"\nport = $port"
        fi
        printf "[sources.rx-%s]\ntype = \"rtp\"\n$from\npayload = \"%s\"\nlatency-ms = 30\n" "$name" "$payload"
        printf 'link-offset-ms = 150\nsink = "%s"\n' "$name"
    done
} >"$work/audiod.conf"

ramp=""
bursts=""
[ "$payload" = opus ] && ramp="--no-ramp" && bursts="--bursts"
"$bin/audiod-sync-probe" make --seconds "$seconds" $ramp "$work/probe.wav"
"$bin/audiod" --quiet --config "$work/audiod.conf" --state "$work/state" &
server=$!
until "$bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
"$bin/audioplay" --quiet --sink net --latency-ms 500 "$work/probe.wav"
sleep 1
"$bin/audioctl" list sources | grep -o 'rx-[a-z]*\|lost=[0-9]*\|recovered=[0-9]*\|play-sync-error-us=[-0-9.]*\|play-realigns=[0-9]*' | paste -sd' '
kill "$server"
wait "$server" 2>/dev/null || true
server=""
for r in $relays; do kill "$r"; wait "$r" 2>/dev/null || true; done
relays=""
[ $networked = yes ] && cat "$work"/relay-*.json
echo "payload=$payload seconds=$seconds loss=$loss% jitter-ms=$jitter settle=${settle}s"
"$bin/audiod-sync-probe" measure $bursts --settle "$settle" \
    kitchen="$work/kitchen.wav,$work/kitchen.times" hall="$work/hall.wav,$work/hall.times" \
    study="$work/study.wav,$work/study.times"

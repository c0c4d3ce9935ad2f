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
# With PTP=1 the stream is AES67 (RTP times on the PTP clock) and time
# comes from ptp4l instead of RTCP: tests/integration/ptp-network.sh runs
# a grandmaster and a free-running ptp4l per room in network namespaces
# (root only); the rooms' wall clocks are taken to read 2 ms ahead, 1.5 ms
# behind and right (reference-offset-us), each room's ptp4l measures as
# much through a path asymmetry, and each room follows its ptp4l.
# PTP_RELAY="ARGS" carries each room's PTP through audiod-ptp-relay with
# ARGS (e.g. "--loss 1 --jitter-us 1000 --transparent-clock").
#
#   bench/run-rooms.sh [BUILD_DIR]
#   env: SECONDS_OF_AUDIO=600 PAYLOAD=l24 (l16, opus) LOSS=0 JITTER_MS=0 SETTLE=5
#        BURST=1 (losses in runs of this many packets on average: Gilbert-Elliott)
#        PTP=0 PTP_RELAY= KEEP=DIR keeps the recordings and play times there
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
burst=${BURST:-1}
ptp=${PTP:-0}
ptp_relay=${PTP_RELAY:-}
bin="$build/bin"
network="$(dirname "$0")/../tests/integration/ptp-network.sh"
work=$(mktemp -d /tmp/audiod-rooms-XXXXXX)
server=""
relays=""
cleanup() {
    [ "$ptp" = 1 ] && "$network" down "$work"
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

if [ "$ptp" = 1 ]; then
    if [ -n "$ptp_relay" ]; then
        "$network" up "$work" --relay "$bin/audiod-ptp-relay $ptp_relay" \
            gm kitchen:2000 hall:-1500 study:0
    else
        "$network" up "$work" gm kitchen:2000 hall:-1500 study:0
    fi
    "$network" wait "$work" kitchen hall study
fi
{
    printf '[server]\nrt-priority = 0\ndefault-sink = "spare"\n[sinks.spare]\ntype = "null"\n'
    printf '[sinks.net]\ntype = "rtp"\ndestination = "%s"\nport = %s\npayload = "%s"\n' \
        "$group" "$port" "$payload"
    [ "$ptp" = 1 ] && printf 'aes67 = true\nptp4l = "%s/gm.ptp4l"\n' "$work"
    n=0
    for room in kitchen:-100:2000 hall:0:-1500 study:100:0; do
        name=${room%%:*}
        ppm=${room#*:}
        ppm=${ppm%%:*}
        offset_us=${room##*:}
        n=$((n + 1))
        printf '[sinks.%s]\ntype = "file"\nformat = "f32le"\npath = "%s/%s.wav"\n' "$name" "$work" "$name"
        printf 'play-times = "%s/%s.times"\nclock-ppm = %s\n' "$work" "$name" "$ppm"
        if [ $networked = yes ]; then
            to=$((port + 2 * n))
            "$bin/audiod-udp-relay" --group "$group" --listen "$port" --to "127.0.0.1:$to" \
                --loss "$loss" --burst-length "$burst" --jitter-ms "$jitter" --seed "$n" \
                >"$work/relay-$name.json" &
            relays="$relays $!"
            from="address = \"127.0.0.1\"\nport = $to"
        else
            from="address = \"$group\"\nport = $port"
        fi
        printf "[sources.rx-%s]\ntype = \"rtp\"\n$from\npayload = \"%s\"\nlatency-ms = 30\n" "$name" "$payload"
        printf 'link-offset-ms = 150\nsink = "%s"\n' "$name"
        if [ "$ptp" = 1 ]; then
            printf 'media-clock = "direct"\nptp4l = "%s/%s.ptp4l"\nreference-offset-us = %s\n' \
                "$work" "$name" "$offset_us"
        fi
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
"$bin/audioctl" list sources | grep -o 'rx-[a-z]*\|lost=[0-9]*\|recovered=[0-9]*\|play-sync-error-us=[-0-9.]*\|play-realigns=[0-9]*\|clock-source=[a-z]*\|ptp4l-state=[a-z-]*\|ptp4l-offset-ns=[-0-9]*' | paste -sd' '
kill "$server"
wait "$server" 2>/dev/null || true
server=""
for r in $relays; do kill "$r"; wait "$r" 2>/dev/null || true; done
relays=""
[ $networked = yes ] && cat "$work"/relay-*.json
echo "payload=$payload seconds=$seconds loss=$loss% burst=$burst jitter-ms=$jitter settle=${settle}s ptp=$ptp ptp-relay=${ptp_relay:-none}"
"$bin/audiod-sync-probe" measure $bursts --settle "$settle" \
    kitchen="$work/kitchen.wav,$work/kitchen.times" hall="$work/hall.wav,$work/hall.times" \
    study="$work/study.wav,$work/study.times"

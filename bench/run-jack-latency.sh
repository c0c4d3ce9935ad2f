#!/bin/sh
# JACK figures: the round trip through audiod inside a JACK graph, at JACK
# periods of 64, 128 and 256 frames with the server's quantum the same.
# jack_iodelay (jackd2) sends its test signal into a `jack` source, which
# plays into a `jack` sink (`sink = "studio"`: the relay, with the
# smallest queue it takes), whose output goes back to jack_iodelay, which
# measures the delay. Printed beside it: what the server reports for the
# same path (the source's latency, the player's queue, the sink's latency).
# Runs a `jackd -d dummy` of its own (no sound card, no real-time rights).
# With `portaudio`, the source and sink are `portaudio` ones on PortAudio's
# JACK host API instead (each in its helper process, whose JACK clients
# audiod-studio-in and audiod-studio are connected to jack_iodelay here).
#   bench/run-jack-latency.sh [BUILD_DIR] [jack|portaudio]
set -eu
build=$(cd "${1:-build/release}" && pwd)
kind=${2:-jack}
work=$(mktemp -d /tmp/audiod-jack-XXXXXX)
pids=""
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket"
export JACK_DEFAULT_SERVER="audiod-bench-$$"
ctl() { "$build/bin/audioctl" "$@"; }
field() { # LISTING KEY: a key=value of `audioctl list`'s details
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

echo "period,measured_ms,reported_ms,source_ms,player_queue_ms,sink_ms"
for period in 64 128 256; do
    jackd -n "$JACK_DEFAULT_SERVER" -r -d dummy -r 48000 -p "$period" >"$work/jackd.log" 2>&1 &
    jackd=$!
    timeout 30 jack_wait -w -t 30 >/dev/null
    jack_iodelay >"$work/iodelay.log" 2>&1 &
    iodelay=$!
    pids="$jackd $iodelay"
    until jack_lsp 2>/dev/null | grep -q '^jack_delay:in'; do sleep 0.05; done
    if [ "$kind" = portaudio ]; then
        printf '[server]\nquantum = %s\nrt-priority = 0\n[sinks.studio]\ntype = "portaudio"\nhost-api = "jack"\n[sources.studio-in]\ntype = "portaudio"\nhost-api = "jack"\nsink = "studio"\nplay-latency-ms = 1\n' \
            "$period" >"$work/audiod.conf"
    else
        printf '[server]\nquantum = %s\nrt-priority = 0\n[sinks.studio]\ntype = "jack"\nconnect = "jack_delay:in"\n[sources.studio-in]\ntype = "jack"\nconnect = "jack_delay:out"\nsink = "studio"\nplay-latency-ms = 1\n' \
            "$period" >"$work/audiod.conf"
    fi
    "$build/bin/audiod" --quiet --config "$work/audiod.conf" 2>>"$work/audiod.log" &
    server=$!
    pids="$pids $server"
    until ctl info >/dev/null 2>&1; do sleep 0.05; done
    if [ "$kind" = portaudio ]; then
        # PortAudio connects its clients to the system ports; jack_iodelay's
        # are connected here.
        until jack_lsp 2>/dev/null | grep -q '^audiod-studio-in:in_0'; do sleep 0.05; done
        jack_connect jack_delay:out audiod-studio-in:in_0
        jack_connect audiod-studio:out_0 jack_delay:in
    fi
    sleep 8 # the player's queue settles, and jack_iodelay locks on
    sources=$(ctl list sources)
    sink_ms=$(ctl --json list sinks | grep -o '"name":"studio"[^}]*"latency_frames":[0-9]*' |
        grep -o '[0-9]*$' | awk '{printf "%.1f", $1 / 48}')
    source_ms=$(echo "$sources" | awk '$1 == "studio-in" {print $7; exit}')
    queue_ms=$(field "$sources" play-queue-ms)
    measured=$(grep -o '[0-9.]* ms total roundtrip' "$work/iodelay.log" | tail -1 | cut -d' ' -f1)
    printf '%s,%s,%s,%s,%s,%s\n' "$period" "${measured:-none}" \
        "$(echo "$source_ms $queue_ms $sink_ms" | awk '{printf "%.1f", $1 + $2 + $3}')" \
        "$source_ms" "$queue_ms" "$sink_ms"
    for pid in $server $iodelay $jackd; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    pids=""
done

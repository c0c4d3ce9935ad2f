#!/bin/sh
# PortAudio figures: the server's share of a core while one stereo 48 kHz
# stream plays for SECONDS into the test sound card, through the `alsa`
# sink and through the `portaudio` sink (PortAudio's ALSA host API), at
# quanta 256 and 64, with the same queue (3 quanta). Needs a build with the
# tests (the test sound card). Run it on a quiet machine.
#   bench/run-portaudio.sh [BUILD_DIR] [SECONDS]
set -eu
build=$(cd "${1:-build/release}" && pwd)
seconds=${2:-10}
work=$(mktemp -d /tmp/audiod-portaudio-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket"
export ALSA_CONFIG_PATH="$build/tests/alsa/asound.conf"
export AUDIOD_TESTCARD_DIR="$work/card"
mkdir -p "$AUDIOD_TESTCARD_DIR"

start() { # CONFIG-TEXT
    printf '%b' "$1" >"$work/audiod.conf"
    "$build/bin/audiod" --quiet --config "$work/audiod.conf" 2>>"$work/audiod.log" &
    server=$!
    until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
}
stop() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=""
}
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$server/stat"
}
echo "sink,quantum,server_cpu_pct"
for quantum in 256 64; do
    for type in alsa portaudio; do
        if [ "$type" = alsa ]; then
            options="device = \"testcard\"\nperiods = 3"
        else
            options="device = \"testcard\"\nlatency-ms = $((quantum * 3 * 1000 / 48000 + 1))"
        fi
        start "[server]\nquantum = $quantum\n[sinks.card]\ntype = \"$type\"\n$options\n"
        "$build/bin/audioplay" --quiet --sink card --tone 1000 --duration $((seconds + 2)) &
        player=$!
        sleep 1
        before=$(cpu_ticks)
        sleep "$seconds"
        after=$(cpu_ticks)
        wait "$player"
        printf '%s,%s,%s\n' "$type" "$quantum" \
            "$(echo "$before $after $seconds $(getconf CLK_TCK)" | awk '{printf "%.2f", ($2 - $1) / $4 / $3 * 100}')"
        stop
    done
done

#!/bin/sh
# RTP figures over loopback: a server sends RTP from its sink `net` to its
# own source `rx`.
#  - latency: tone onset in (net.monitor) to onset out (rx), median of 7
#    bursts, for Opus at each ptime and L16, at jitter-buffer targets of 20
#    and 40 ms (audiod-bench-rtp-latency);
#  - CPU: the server's share of a core while it sends and receives one
#    stereo 48 kHz stream for SECONDS, less the same server playing the same
#    stream into a null sink.
# Run it on a quiet machine: other RTP traffic on the same port, or a loaded
# CPU, shows as scattered figures.
#   bench/run-rtp.sh [BUILD_DIR] [SECONDS]
set -eu
build=${1:-build/release}
seconds=${2:-10}
work=$(mktemp -d /tmp/audiod-rtp-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export AUDIOD_SOCKET="$work/socket"
port=$((40000 + $$ % 10000 * 2))

start() { # CONFIG-TEXT
    printf '%b' "$1" >"$work/audiod.conf"
    "$build/bin/audiod" --quiet --config "$work/audiod.conf" &
    server=$!
    until "$build/bin/audioctl" info >/dev/null 2>&1; do sleep 0.05; done
}
stop() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=""
}
link() { # PAYLOAD PTIME LATENCY QUANTUM
    echo "[server]\nquantum = $4\n[sinks.main]\ntype = \"null\"\n[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\nport = $port\npayload = \"$1\"\nptime = $2\n[sources.rx]\ntype = \"rtp\"\naddress = \"127.0.0.1\"\nport = $port\npayload = \"$1\"\nlatency-ms = $3\n"
}
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$server/stat"
}
server_cpu_pct() { # SINK: a tone into SINK for $seconds, the server's % of a core
    "$build/bin/audioplay" --quiet --sink "$1" --tone 1000 --duration $((seconds + 2)) &
    player=$!
    sleep 1
    before=$(cpu_ticks)
    sleep "$seconds"
    after=$(cpu_ticks)
    wait "$player"
    echo "$before $after $seconds $(getconf CLK_TCK)" | awk '{printf "%.2f", ($2 - $1) / $4 / $3 * 100}'
}

echo "payload,ptime_ms,target_ms,quantum,latency_median_ms,latency_min_ms,latency_max_ms"
for target in 20 40; do
    for row in "opus 2.5" "opus 5" "opus 10" "opus 20" "l16 5" "l16 1"; do
        set -- $row
        start "$(link "$1" "$2" "$target" 64)"
        printf '%s,%s,%s,64,' "$1" "$2" "$target"
        "$build/bin/audiod-bench-rtp-latency" --runs 7 || echo "failed"
        stop
    done
done

echo "what,server_cpu_pct"
start "[server]\n[sinks.main]\ntype = \"null\"\n"
printf 'null sink (baseline),%s\n' "$(server_cpu_pct main)"
stop
for row in "opus 10" "l16 5"; do
    set -- $row
    start "$(link "$1" "$2" 40 256)"
    printf '%s send+receive (%s ms packets),%s\n' "$1" "$2" "$(server_cpu_pct net)"
    stop
done

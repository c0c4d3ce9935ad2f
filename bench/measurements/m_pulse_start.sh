#!/bin/bash
# Pulse clients' start and the servers' idle memory, side by side:
#   time to first sound: the whole `paplay` of a 50 ms click, process start
#     to exit (it drains: it ends once the server has played the click),
#     median and worst of RUNS;
#   idle memory: the servers' processes after IDLE s with no client, as
#     proportional set size (Pss, /proc/PID/smaps_rollup: shared pages
#     divided among their users) and resident set size, summed.
# usage (from the harness, as bench/run-side-by-side.sh runs it):
#   m_pulse_start.sh SERVER...   e.g. audiod-pulse pipewire pulseaudio-paplay
# env: RUNS=10 IDLE=5
# out: $BENCH_ROOT/results/pulse-start-<stamp>.jsonl
cd "$(dirname "$0")" && . lib/common.sh
export BENCH_TMP=$BENCH_ROOT/pulse-start
RUNS=${RUNS:-10}; IDLE=${IDLE:-5}
mkdir -p $BENCH_ROOT/results; OUT=${OUT:-$BENCH_ROOT/results/pulse-start-$(date +%Y%m%d-%H%M%S).jsonl}
click=$BENCH_ROOT/click-50ms.wav
[ -s $click ] || sox -q -n -r 48000 -c 2 -b 16 $click synth 0.05 sine 1000 vol 0.2

memory() {  # memory PID...: "pss_kib rss_kib" summed
    local p pss=0 rss=0
    for p in "$@"; do
        [ -r /proc/$p/smaps_rollup ] || continue
        pss=$((pss + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup)))
        rss=$((rss + $(awk '/^Rss:/ {print $2}' /proc/$p/smaps_rollup)))
    done
    echo "$pss $rss"
}

one() {  # one SERVER (inside with_server)
    srv_start || { log "$1 failed to start"; return 1; }
    sleep $IDLE
    local mem times=() t0 t1 i processes
    mem=$(memory $(srv_pids))
    processes=$(srv_pids | wc -w)
    for i in $(seq $RUNS); do
        t0=$(date +%s%N)
        paplay -d bench_a $click || log "$1: paplay failed"
        t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000 )))
        sleep 0.5
    done
    srv_stop
    local sorted=($(printf '%s\n' "${times[@]}" | sort -n))
    echo "{\"server\":\"$1\",\"runs\":$RUNS,\"first_sound_median_ms\":$((sorted[RUNS / 2] / 1000)).$(( (sorted[RUNS / 2] % 1000) / 100 )),\"first_sound_worst_ms\":$((sorted[RUNS - 1] / 1000)).$(( (sorted[RUNS - 1] % 1000) / 100 )),\"idle_pss_kib\":${mem% *},\"idle_rss_kib\":${mem#* },\"processes\":$processes}" | tee -a $OUT
}

for s in "$@"; do
    log "$s"
    with_server $s one $s
done
log "wrote $OUT"

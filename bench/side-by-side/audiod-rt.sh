# Adapter: audiod with real-time clients. As the shared servers/audiod.sh,
# but the players' feeding threads run SCHED_FIFO where the system permits
# it (the bench runs as root): audioplay asks for it itself (--realtime, at
# libaudiod's default priority 15, below the server's 20); aplay does not
# ask, so it is started as a user who wants it would start it, under
# `chrt -f 15`. PipeWire's own clients' data threads run SCHED_FIFO too.
. servers/audiod.sh
SRV_NAME=audiod-rt
SRV_DIR=$BENCH_TMP/srv-audiod-rt

srv_play() {
    local kind=$1 file=$2 mode=${3:-default} sink=${4:-bench_a} q ms
    q=$(_q $mode)
    [ "$mode" != default -a "$mode" != mixed ] && ms=$(( (2 * q * 1000 + 47999) / 48000 ))
    case $kind in
      native) exec audioplay -q --realtime --sink $sink ${ms:+--latency-ms $ms} "$file" ;;
      alsa)   exec chrt -f 15 aplay -D audiod:$sink ${ms:+--buffer-time=$((q*4*1000000/48000)) --period-time=$((q*1000000/48000))} "$file" ;;
    esac
}

# Adapter: audiod serving PulseAudio's protocol. As the shared
# servers/audiod.sh, with its pulse server on $SRV_DIR/run/pulse/native and
# a client kind more, `paplay` (libpulse's paplay, as the PipeWire adapter
# plays through pipewire-pulse). libpulse sends its audio in a memfd pool
# here (shared memory, on by default); audiod-pulse-copy.sh has it go
# through the socket, as pipewire-pulse always has it.
. servers/audiod.sh
SRV_NAME=audiod-pulse
SRV_DIR=$BENCH_TMP/srv-audiod-pulse
SRV_KINDS="native alsa paplay"
SRV_PULSE=1
AUDIOD_SHARED_MEMORY=${AUDIOD_SHARED_MEMORY:-true}

srv_env() {
    export PATH=$AUDIOD_PREFIX/bin:$PATH
    export HOME=$SRV_DIR/home XDG_RUNTIME_DIR=$SRV_DIR/run
    export XDG_STATE_HOME=$SRV_DIR/home/.local/state XDG_CONFIG_HOME=$SRV_DIR/home/.config
    export AUDIOD_SOCKET=$SRV_DIR/run/audiod.sock
    export ALSA_CONFIG_PATH=$SRV_DIR/alsa.conf
    export PULSE_SERVER=unix:$SRV_DIR/run/pulse/native
    export PULSE_CLIENTCONFIG=$SRV_DIR/client.conf
    unset PIPEWIRE_RUNTIME_DIR PIPEWIRE_REMOTE
}

_audiod_run() {
    echo "autospawn = no" > $SRV_DIR/client.conf
    cat > $SRV_DIR/audiod.conf <<EOF2
[server]
rate = 48000
channels = 2
quantum = $1
default-sink = "bench_a"

[sinks.bench_a]
type = "null"

[sinks.bench_b]
type = "null"

[pulse]
socket = "$SRV_DIR/run/pulse/native"
shared-memory = $AUDIOD_SHARED_MEMORY
EOF2
    echo $1 > $SRV_DIR/quantum
    audiod --config $SRV_DIR/audiod.conf --state $SRV_DIR/state >> $SRV_DIR/server.log 2>&1 </dev/null &
    echo $! > $SRV_DIR/pid
    wait_for audioctl info
    wait_for pactl info
}

# paplay as the PipeWire adapter runs it: --latency-msec of one quantum at a
# low setting, libpulse's default (2 s) otherwise.
srv_play() {
    local kind=$1 file=$2 mode=${3:-default} sink=${4:-bench_a} q ms
    q=$(_q $mode)
    case $kind in
      paplay) [ "$mode" != default -a "$mode" != mixed ] && ms=$(( (q * 1000 + 47999) / 48000 ))
              exec paplay -v -d $sink ${ms:+--latency-msec=$ms} "$file" ;;
      *)      [ "$mode" != default -a "$mode" != mixed ] && ms=$(( (2 * q * 1000 + 47999) / 48000 ))
              case $kind in
                native) exec audioplay -q --sink $sink ${ms:+--latency-ms $ms} "$file" ;;
                alsa)   exec aplay -D audiod:$sink ${ms:+--buffer-time=$((q*4*1000000/48000)) --period-time=$((q*1000000/48000))} "$file" ;;
              esac ;;
    esac
}

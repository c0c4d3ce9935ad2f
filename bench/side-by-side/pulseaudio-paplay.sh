# Adapter: the shared servers/pulseaudio.sh (PulseAudio 16), whose own
# client kind `native` is paplay, under the kind name the pulse adapters
# use (`paplay`), so that KINDS=paplay runs audiod-pulse, pipewire and
# PulseAudio side by side in one run.
. servers/pulseaudio.sh
SRV_KINDS="paplay"
eval "$(declare -f srv_play | sed '1s/srv_play/_pulseaudio_play/')"
srv_play() {
    local kind=$1
    shift
    [ "$kind" = paplay ] && kind=native
    _pulseaudio_play "$kind" "$@"
}

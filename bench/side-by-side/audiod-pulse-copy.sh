# Adapter: audiod-pulse.sh with shared memory turned off ([pulse]
# shared-memory = false): libpulse's audio goes through the socket, as
# with pipewire-pulse. Side by side with audiod-pulse, what the memfd pool
# saves.
AUDIOD_SHARED_MEMORY=false
. servers/audiod-pulse.sh
SRV_NAME=audiod-pulse-copy
SRV_DIR=$BENCH_TMP/srv-audiod-pulse-copy

# Adapter: audiod-rt's real-time players (audioplay --realtime, aplay under
# `chrt -f 15`) on the earlier audiod under $BENCH_ROOT/audiod-before, for
# before/after figures of real-time clients in one run.
AUDIOD_PREFIX=$BENCH_ROOT/audiod-before
. servers/audiod-rt.sh
SRV_NAME=audiod-before-rt
SRV_DIR=$BENCH_TMP/srv-audiod-before-rt

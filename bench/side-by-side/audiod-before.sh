# Adapter: an earlier audiod, installed under $BENCH_ROOT/audiod-before, for
# before/after figures in one run (bench/run-side-by-side.sh --before REV
# installs it). Otherwise the shared servers/audiod.sh.
AUDIOD_PREFIX=$BENCH_ROOT/audiod-before
. servers/audiod.sh
SRV_NAME=audiod-before
SRV_DIR=$BENCH_TMP/srv-audiod-before

#!/bin/sh
# Runs one of the shared side-by-side measurements (../shared/bench: audiod,
# PipeWire and PulseAudio in one run) with this project's extra adapters:
#
#   bench/run-side-by-side.sh m1_cpu.sh audiod pipewire
#   LATS=low HOGS="0 1" N=8 DUR=60 REPS=1 \
#       bench/run-side-by-side.sh m2_xruns.sh audiod-rt audiod pipewire
#   bench/run-side-by-side.sh --before 2e092e6 m1_cpu.sh audiod-before audiod pipewire
#   bench/run-side-by-side.sh m_pulse_start.sh audiod-pulse pipewire pulseaudio-paplay
#
# Adapters added (bench/side-by-side/): audiod-rt, audiod whose players feed
# their streams from SCHED_FIFO threads; audiod-pulse, audiod serving the
# PulseAudio protocol with a `paplay` client kind (as the PipeWire adapter's,
# through pipewire-pulse), and audiod-pulse-copy, the same without shared
# memory; pulseaudio-paplay, the shared PulseAudio adapter under the client
# kind name `paplay`; audiod-before, an earlier revision
# (--before REV builds and installs it under /tmp/bench/audiod-before). The
# harness is copied to /tmp/bench/harness so that the shared one stays as it
# is; install this checkout for it first with ../shared/bench/setup-audiod.sh.
# Measurements of ours (bench/measurements/) run beside the shared ones:
# m_pulse_start.sh, pulse clients' time to first sound and idle memory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=${AUDIOD_SHARED_BENCH:-$here/../../shared/bench}
[ -d "$shared" ] || { echo "run-side-by-side: no shared bench at $shared" >&2; exit 2; }
if [ "${1:-}" = --before ]; then
    [ $# -ge 2 ] || { echo "usage: $0 --before REV MEASUREMENT.sh SERVER..." >&2; exit 2; }
    tree=/tmp/bench/audiod-before-src
    rm -rf "$tree" /tmp/bench/audiod-before
    git -C "$here/.." worktree add --force --detach "$tree" "$2" >/dev/null
    cmake -S "$tree" -B "$tree/build" -DAUDIOD_BUILD_TESTS=OFF -DAUDIOD_BUILD_BENCH=OFF >/dev/null
    cmake --build "$tree/build" -j"$(nproc)" >/dev/null
    cmake --install "$tree/build" --prefix /tmp/bench/audiod-before >/dev/null
    git -C "$here/.." worktree remove --force "$tree"
    echo "audiod $2 installed under /tmp/bench/audiod-before"
    shift 2
fi
[ $# -ge 2 ] || { echo "usage: $0 [--before REV] MEASUREMENT.sh SERVER..." >&2; exit 2; }
harness=/tmp/bench/harness
rm -rf "$harness"
mkdir -p "$harness"
cp -r "$shared"/. "$harness"/
cp "$here"/side-by-side/*.sh "$harness"/servers/
cp "$here"/measurements/*.sh "$harness"/
# The shared adapter reads each stream's server-side count as "underruns";
# audioctl's JSON calls it "xruns", so every stream read as 0.
sed -i 's/get("underruns", 0)/get("xruns", 0)/g' "$harness"/servers/audiod.sh
script=$1
shift
exec "$harness/$script" "$@"

#!/bin/sh
# The installed tree is complete and relocatable: install, move it elsewhere,
# then run the moved server (finding its modules and default configuration
# relative to itself), play through it, and build a C client against it with
# pkg-config. The ALSA plugins find the moved libaudiod, and aplay plays
# through them.
set -eu
build=$1
# A sanitizer build's libaudiod needs its client built the same way.
sanitize=${2:-}
# The build's library folder (CMAKE_INSTALL_LIBDIR): lib, or lib/<multiarch>.
l=${3:-lib}
extra=""
[ -n "$sanitize" ] && extra="-fsanitize=$sanitize"
work=$(mktemp -d /tmp/audiod-install-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install_tree: $*" >&2; exit 1; }

# A build for a distribution package installs a link into /etc/alsa/conf.d,
# outside any prefix: installing it here would leave that link pointing into
# this test's temporary tree, and every ALSA program on the machine failing.
if grep -qx 'AUDIOD_SYSTEM_PACKAGE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    fail "$build is configured with AUDIOD_SYSTEM_PACKAGE=ON, which installs outside the prefix; this test needs a build without it"
fi

cmake --install "$build" --prefix "$work/first" >/dev/null
# The systemd user units are where systemd looks, name the installed server,
# and pass systemd's own checks.
units="$work/first/lib/systemd/user"
grep -qx "ExecStart=$work/first/bin/audiod" "$units/audiod.service" ||
    fail "audiod.service does not start $work/first/bin/audiod"
mkdir -m 0700 "$work/runtime"
XDG_RUNTIME_DIR="$work/runtime" systemd-analyze verify --user --man=no \
    "$units/audiod.socket" "$units/audiod-pulse.socket" "$units/audiod.service" ||
    fail "systemd-analyze rejects the units"
system="$work/first/lib/systemd/system/audiod-system.service"
grep -qx "ExecStart=$work/first/bin/audiod --system" "$system" ||
    fail "audiod-system.service does not start $work/first/bin/audiod --system"
systemd-analyze verify --man=no "$system" || fail "systemd-analyze rejects audiod-system.service"
[ -e "$work/first/lib/sysusers.d/audiod.conf" ] || fail "missing lib/sysusers.d/audiod.conf"
mv "$work/first" "$work/prefix"
p="$work/prefix"
for f in bin/audiod bin/audioctl bin/audioplay bin/audiorec $l/libaudiod.so include/audiod/audiod.h \
         include/audiod/module.h $l/pkgconfig/audiod.pc $l/audiod/modules/null.so \
         $l/audiod/modules/file.so $l/audiod/modules/alsa.so $l/audiod/modules/portaudio.so $l/audiod/modules/jack.so \
         share/audiod/audiod.conf \
         $l/alsa-lib/libasound_module_pcm_audiod.so $l/alsa-lib/libasound_module_ctl_audiod.so \
         share/alsa/alsa.conf.d/50-audiod.conf; do
    [ -e "$p/$f" ] || fail "missing $f"
done
# Every man page is there and reads without a warning.
for page in man8/audiod.8 man1/audioctl.1 man1/audioplay.1 man1/audiorec.1 man5/audiod.conf.5; do
    [ -e "$p/share/man/$page" ] || fail "missing share/man/$page"
    warnings=$(MANWIDTH=80 man --warnings -l "$p/share/man/$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "man -l share/man/$page: $warnings"
    MANWIDTH=80 man -l "$p/share/man/$page" 2>/dev/null | grep -q "SEE ALSO" ||
        fail "share/man/$page has no SEE ALSO"
done
soname=$(readelf -d "$p/$l/libaudiod.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libaudiod.so.0" ] || fail "unexpected soname '$soname'"

export AUDIOD_SOCKET="$work/socket"
export XDG_CONFIG_HOME="$work/no-user-config"
export XDG_STATE_HOME="$work/state"
unset AUDIOD_MODULE_DIR || true
"$p/bin/audiod" >"$work/log" 2>&1 &
server=$!
i=0
until "$p/bin/audioctl" info >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 200 ] || { cat "$work/log" >&2; fail "installed server did not start"; }
    sleep 0.05
done
grep -q "share/audiod/audiod.conf" "$work/log" || fail "default config not found relative to the binary"
"$p/bin/audioctl" list sinks | grep -q "default \*" || fail "default sink missing"
"$p/bin/audioplay" --quiet --tone 440 --duration 0.2 || fail "audioplay failed"

cat >"$work/client.c" <<'C'
#include <audiod/audiod.h>
#include <stdio.h>
int main(void) {
    audiod_context* ctx;
    audiod_stream* stream;
    audiod_stream_params params;
    static short silence[4800 * 2];
    int rc = audiod_connect("pkg-config-client", -1, &ctx);
    if (rc != 0) { fprintf(stderr, "connect: %s\n", audiod_strerror(rc)); return 1; }
    audiod_stream_params_init(&params);
    rc = audiod_stream_create(ctx, &params, &stream);
    if (rc != 0) { fprintf(stderr, "create: %s\n", audiod_strerror(rc)); return 1; }
    if (audiod_stream_write(stream, silence, 4800, -1) != 4800) return 1;
    if (audiod_stream_drain(stream, -1) != 0) return 1;
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
    printf("played through libaudiod %s\n", audiod_version());
    return 0;
}
C
flags=$(PKG_CONFIG_PATH="$p/$l/pkgconfig" pkg-config --cflags --libs audiod)
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Wpedantic -Werror $extra -o "$work/client" "$work/client.c" $flags \
    -Wl,-rpath,"$p/$l" || fail "cannot build a C client with pkg-config"
"$work/client" || fail "the C client failed"

# The snippet names the plugins by the prefix they were installed to; point
# a copy at the moved tree.
sed "s|$work/first|$p|g" "$p/share/alsa/alsa.conf.d/50-audiod.conf" >"$work/alsa.conf"
grep -q "$p/$l/alsa-lib/libasound_module_pcm_audiod.so" "$work/alsa.conf" ||
    fail "the ALSA snippet does not name the installed plugin"
if [ -z "$sanitize" ]; then
    # (A sanitizer build's plugin needs its runtime preloaded into aplay;
    # the alsa_plugin tests do that.)
    head -c 19200 /dev/zero | ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$work/alsa.conf" \
        aplay -q -D audiod -t raw -f S16_LE -r 48000 -c 2 - || fail "aplay through the plugin failed"
fi

kill "$server"
wait "$server" || fail "server did not stop cleanly"
server=""
echo "install tree OK"

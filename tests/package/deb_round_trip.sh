#!/bin/sh
# The Debian package as a user meets it: installed with dpkg -i on this
# machine (CI runs as root on a throwaway machine), the installed server
# plays what `aplay -D audiod` sends through the ALSA snippet alsa-lib finds
# by itself (no ALSA_CONFIG_PATH), every man page reads without a warning,
# dpkg -r leaves none of the package's files behind, and dpkg -P removes
# the system-wide server's state.
#
#   tests/package/deb_round_trip.sh build/package/audiod_VERSION_ARCH.deb
set -eu
deb=$1
fail() { echo "deb_round_trip: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root to install the package (CI runs as root)"
if dpkg-query -W -f='${Status}' audiod 2>/dev/null | grep -q "install ok installed"; then
    fail "audiod is installed on this machine already; this test would replace and remove it"
fi
work=$(mktemp -d /tmp/audiod-deb-XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    dpkg -P audiod >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The package's files (not its folders, which other packages share).
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||' >"$work/files"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i failed"; }
for f in /usr/bin/audiod /usr/lib/systemd/user/audiod.socket /etc/alsa/conf.d/50-audiod.conf; do
    [ -e "$f" ] || fail "$f is not installed"
done

cat >"$work/audiod.conf" <<CONF
[sinks.main]
type = "file"
path = "$work/out.wav"
CONF
export AUDIOD_SOCKET="$work/socket"
unset ALSA_CONFIG_PATH AUDIOD_MODULE_DIR || true
/usr/bin/audiod --config "$work/audiod.conf" --state "$work/state" >"$work/log" 2>&1 &
server=$!
i=0
until /usr/bin/audioctl info >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 400 ] || { cat "$work/log" >&2; fail "the installed server did not start"; }
    sleep 0.05
done
sox -q -n -r 48000 -c 2 -b 16 "$work/tone.wav" synth 0.5 sine 440 gain -6
aplay -q -D audiod "$work/tone.wav" || fail "aplay -D audiod failed through the installed plugin"
kill "$server"
wait "$server" || fail "the server did not stop cleanly"
server=""
peak=$(sox "$work/out.wav" -n stat 2>&1 | sed -n 's/^Maximum amplitude: *//p')
awk -v p="$peak" 'BEGIN { exit !(p > 0.4) }' || fail "the tone did not come out (peak $peak)"

for page in man8/audiod.8 man1/audioctl.1 man1/audioplay.1 man1/audiorec.1 man5/audiod.conf.5; do
    file=/usr/share/man/$page.gz
    [ -e "$file" ] || fail "missing $file"
    warnings=$(MANWIDTH=80 man --warnings -l "$file" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "man -l $file: $warnings"
done

dpkg -r audiod >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -r failed"; }
left=""
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then
        left="$left $f"
    fi
done <"$work/files"
[ -z "$left" ] || fail "left behind after dpkg -r:$left"
# Purging forgets what a system-wide server remembered.
mkdir -p /var/lib/audiod
echo "# what a system-wide server remembered" >/var/lib/audiod/state
dpkg -P audiod >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -P failed"; }
[ ! -e /var/lib/audiod ] || fail "dpkg -P left /var/lib/audiod"
echo "deb_round_trip: installed, played, read its man pages, removed and purged $(basename "$deb")"

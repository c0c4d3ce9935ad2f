#!/bin/sh
# A PTP network on one machine, for the rooms tests and bench/run-rooms.sh:
# network namespaces joined by a bridge, a ptp4l in each (software time
# stamps, over UDP/IPv4): a grandmaster, and a slave per room whose
# measure of its clock is made OFFSET_US off by a path asymmetry
# (delayAsymmetry), standing in for a room whose clock is that far ahead
# of the grandmaster's. Every ptp4l runs with free_running 1: all the
# namespaces share this machine's one clock, which must not be steered.
# Each answers on DIR/NAME.ptp4l (its uds_address), as audiod's ptp4l
# option asks. A member NAME:- has a namespace and no ptp4l (for a PTP
# client of its own: GStreamer's). This machine's own namespace is on the
# bridge too, at 10.201.0.254; member N (in the order given) is at
# 10.201.0.N, written to DIR/NAME.address.
#
#   ptp-network.sh up DIR [--relay "PROGRAM ARGS"] gm NAME:OFFSET_US|NAME:- ...
#                                    (exits 77 where the machine refuses)
#
# With --relay, each room's ptp4l runs in a namespace of its own behind
# the room's (NAME-ptp, 10.202.N.2, linked to the room's 10.202.N.1), and
# PROGRAM (audiod-ptp-relay, with ARGS: its loss, jitter, whether it is a
# transparent clock) carries PTP between the bridge and it: the
# grandmaster's messages reach the room's ptp4l lost and delayed as a
# network would, and the room's reach the grandmaster so.
#   ptp-network.sh wait DIR NAME ...   until each slave follows a grandmaster
#   ptp-network.sh exec DIR NAME COMMAND...   runs COMMAND in NAME's namespace
#   ptp-network.sh down DIR
set -eu
command=$1
dir=$2
shift 2
tag=$(printf '%s' "$dir" | cksum | cut -c1-6)

down() {
    for pid in "$dir"/*.ptp4l.pid "$dir"/*.relay.pid; do
        [ -e "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
    done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^ad$tag-" || true); do
        ip netns delete "$ns" 2>/dev/null || true
    done
    ip link delete "ad$tag-h" 2>/dev/null || true
    rm -f "$dir"/*.ptp4l.pid "$dir"/*.relay.pid
}

case $command in
up)
    relay=""
    if [ "${1:-}" = --relay ]; then
        relay=$2
        shift 2
    fi
    if ! command -v ptp4l >/dev/null || ! ip netns add "ad$tag-br" 2>/dev/null; then
        echo "ptp-network: needs ptp4l (linuxptp) and network namespaces (root)" >&2
        exit 77
    fi
    ip -n "ad$tag-br" link add br0 type bridge
    ip -n "ad$tag-br" link set br0 up
    # This namespace's link (one a slow namespace deletion left goes first).
    ip link delete "ad$tag-h" 2>/dev/null || true
    ip link add "ad$tag-h" type veth peer name "p${tag}h" netns "ad$tag-br"
    ip -n "ad$tag-br" link set "p${tag}h" master br0 up
    ip addr add 10.201.0.254/24 dev "ad$tag-h"
    ip link set "ad$tag-h" up
    n=0
    for member in "$@"; do
        name=${member%%:*}
        offset_us=0
        [ "$name" != "$member" ] && offset_us=${member#*:}
        n=$((n + 1))
        ns="ad$tag-$name"
        ip netns add "$ns"
        ip link add "v$tag$n" netns "$ns" type veth peer name "p$tag$n" netns "ad$tag-br"
        ip -n "ad$tag-br" link set "p$tag$n" master br0 up
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "v$tag$n" up
        ip -n "$ns" addr add "10.201.0.$n/24" dev "v$tag$n"
        # Multicast (PTP's, a stream's) goes out on the bridge: a PTP
        # client that names no interface (GStreamer's) finds a route.
        ip -n "$ns" route add 224.0.0.0/4 dev "v$tag$n"
        echo "10.201.0.$n" >"$dir/$name.address"
        [ "$offset_us" = - ] && continue
        ptp_ns=$ns
        ptp_if="v$tag$n"
        if [ -n "$relay" ] && [ "$name" != gm ]; then
            ptp_ns="$ns-ptp"
            ptp_if="j$tag$n"
            ip netns add "$ptp_ns"
            ip link add "i$tag$n" netns "$ns" type veth peer name "$ptp_if" netns "$ptp_ns"
            ip -n "$ns" addr add "10.202.$n.1/24" dev "i$tag$n"
            ip -n "$ns" link set "i$tag$n" up
            ip -n "$ptp_ns" link set lo up
            ip -n "$ptp_ns" addr add "10.202.$n.2/24" dev "$ptp_if"
            ip -n "$ptp_ns" link set "$ptp_if" up
            ip -n "$ptp_ns" route add 224.0.0.0/4 dev "$ptp_if"
            # shellcheck disable=SC2086
            ip netns exec "$ns" $relay --outer "10.201.0.$n" --inner "10.202.$n.1" \
                --master 10.201.0.1 --slave "10.202.$n.2" --seed "$n" \
                >"$dir/$name.relay.json" 2>&1 &
            echo $! >"$dir/$name.relay.pid"
        fi
        # Fast: announces every 250 ms, 16 syncs and delay requests a
        # second, so that a slave follows within a few seconds.
        {
            printf '[global]\nuds_address %s/%s.ptp4l\nfree_running 1\n' "$dir" "$name"
            printf 'logAnnounceInterval -2\nannounceReceiptTimeout 3\n'
            printf 'logSyncInterval -4\nlogMinDelayReqInterval -4\n'
            if [ "$name" = gm ]; then
                printf 'priority1 1\n'
            else
                printf 'slaveOnly 1\ndelayAsymmetry %s\n' "$((-offset_us * 1000))"
            fi
        } >"$dir/$name.ptp4l.conf"
        ip netns exec "$ptp_ns" ptp4l -S -4 -i "$ptp_if" -f "$dir/$name.ptp4l.conf" -m \
            >"$dir/$name.ptp4l.log" 2>&1 &
        echo $! >"$dir/$name.ptp4l.pid"
    done
    ;;
wait)
    for name in "$@"; do
        tries=0
        until pmc -u -b 0 -s "$dir/$name.ptp4l" 'GET TIME_STATUS_NP' 2>/dev/null |
            grep -q 'gmPresent *true'; do
            tries=$((tries + 1))
            if [ $tries -gt 300 ]; then
                echo "ptp-network: $name follows no grandmaster after 30 s" >&2
                tail -n 5 "$dir/$name.ptp4l.log" >&2
                exit 1
            fi
            sleep 0.1
        done
    done
    ;;
exec)
    name=$1
    shift
    exec ip netns exec "ad$tag-$name" "$@"
    ;;
down)
    down
    ;;
*)
    echo "ptp-network.sh up|wait|down DIR ..." >&2
    exit 2
    ;;
esac

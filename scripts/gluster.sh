#!/usr/bin/env bash
# A throwaway single-node GlusterFS for the tests: glusterd bound to a
# loopback address, one distribute volume "hangar" with its brick under
# DIR, FUSE-mounted N times (one mount per Hangar server, so that the
# client-side caching between servers is real). Needs root, /dev/fuse and
# Debian's glusterfs-server + glusterfs-client (.ci/run installs them).
#
#   scripts/gluster.sh start DIR [N]   # prints the mount points, one per line
#   scripts/gluster.sh stop DIR
#   scripts/gluster.sh brick-down DIR  # kill the brick of a second volume,
#   scripts/gluster.sh brick-up DIR    # "fault" (mounted at DIR/fault), which
#                                      # only fault tests use; start it again
#
# Mounts use Gluster's default client caching: Hangar relies only on files
# that are written once and published under a new name, which every mount
# sees at once (see README "Several servers").
set -euo pipefail
cmd=${1:?usage: $0 start|stop|brick-down|brick-up DIR [N]}
dir=${2:?usage: $0 start|stop|brick-down|brick-up DIR [N]}
n=${3:-2}
# The gluster CLI refuses "localhost" and 127.0.0.1 by name; any 127/8
# address is loopback too.
host=${GLUSTER_HOST:-127.0.0.2}

G() { timeout 60 gluster --mode=script --log-file="$dir/log/cli.log" "$@"; }
wait_for() { # SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}
stop_pid() {
	kill -0 "$1" 2>/dev/null || return 0
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
}
brick_pid() { # VOLUME
	G volume status "$1" --xml | python3 -c '
import sys, xml.etree.ElementTree as ET
for n in ET.parse(sys.stdin).iter("node"):
    if n.findtext("path", "").endswith("brick") and (n.findtext("pid") or "0").isdigit() and int(n.findtext("pid") or 0) > 0:
        print(n.findtext("pid"))'
}

case "$cmd" in
start)
	[ "$(id -u)" = 0 ] || { echo "gluster.sh: needs root (FUSE mounts)" >&2; exit 1; }
	command -v glusterd >/dev/null || { echo "gluster.sh: glusterfs-server is not installed" >&2; exit 1; }
	if ss -Hltn 'sport = :24007' | grep -q .; then
		echo "gluster.sh: port 24007 is taken (only one glusterd per machine)" >&2
		exit 1
	fi
	mkdir -p "$dir"/{state,brick,fault-brick,fault,log,run}
	cat >"$dir/glusterd.vol" <<VOL
volume management
    type mgmt/glusterd
    option working-directory $dir/state
    option transport-type socket
    option transport.socket.bind-address $host
    option transport.socket.listen-port 24007
    option ping-timeout 0
    option event-threads 1
end-volume
VOL
	glusterd -f "$dir/glusterd.vol" -p "$dir/run/glusterd.pid" -l "$dir/log/glusterd.log"
	wait_for 60 G pool list || { echo "gluster.sh: glusterd did not answer" >&2; exit 1; }
	# force: the brick is on the root file system.
	G volume create hangar transport tcp "$host:$dir/brick" force >/dev/null
	G volume start hangar force >/dev/null
	G volume create fault transport tcp "$host:$dir/fault-brick" force >/dev/null
	G volume start fault force >/dev/null
	mount -t glusterfs -o "log-file=$dir/log/fault.log" "$host:/fault" "$dir/fault"
	for i in $(seq 1 "$n"); do
		mp=$dir/mnt$i
		mkdir -p "$mp"
		mount -t glusterfs -o "log-file=$dir/log/mnt$i.log" "$host:/hangar" "$mp"
		wait_for 60 stat -f "$mp" || { echo "gluster.sh: mount $mp failed" >&2; exit 1; }
		echo "$mp"
	done
	;;
stop)
	for mp in "$dir"/mnt* "$dir/fault"; do
		[ -d "$mp" ] || continue
		if mountpoint -q "$mp"; then umount "$mp" 2>/dev/null || umount -l "$mp"; fi
	done
	if [ -s "$dir/run/glusterd.pid" ] && kill -0 "$(cat "$dir/run/glusterd.pid")" 2>/dev/null; then
		pids="$(brick_pid hangar || true) $(brick_pid fault || true)"
		G volume stop hangar >/dev/null 2>&1 || true
		G volume stop fault >/dev/null 2>&1 || true
		for p in $pids; do stop_pid "$p"; done
		stop_pid "$(cat "$dir/run/glusterd.pid")"
	fi
	;;
brick-down)
	# TERM, so that the brick signs out of glusterd's port map: after a KILL
	# the clients keep asking for the dead port for a minute or more.
	for p in $(brick_pid fault); do stop_pid "$p"; done
	;;
brick-up)
	G volume start fault force >/dev/null
	;;
*)
	echo "usage: $0 start|stop|brick-down|brick-up DIR [N]" >&2
	exit 2
	;;
esac

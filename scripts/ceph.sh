#!/usr/bin/env bash
# A throwaway single-node Ceph (Debian's Pacific packages) with its S3
# gateway, for the S3 store's tests: one mon, one mgr, one BlueStore OSD on
# a sparse file, pool size 1, radosgw on 127.0.0.1:PORT with one S3 user.
# Everything under DIR; daemons run in the foreground of background jobs
# (never daemonized) and are stopped by recorded PID. Needs root.
#
#   scripts/ceph.sh start DIR    # prints "ENDPOINT ACCESS_KEY SECRET_KEY"
#   scripts/ceph.sh stop DIR
#   scripts/ceph.sh rgw-down DIR # stop the second gateway (DIR/fault.endpoint),
#   scripts/ceph.sh rgw-up DIR   # which only fault tests use, and start it again
set -euo pipefail
cmd=${1:?usage: $0 start|stop|rgw-down|rgw-up DIR}
dir=${2:?usage: $0 start|stop|rgw-down|rgw-up DIR}
access=HANGARTESTACCESSKEY01
secret=hangartestsecretkey000000000000000000001
export CEPH_CONF=$dir/ceph.conf

C() { timeout 30 ceph --connect-timeout 10 "$@"; }
wait_for() { # SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || return 1
		sleep 0.5
	done
}
bg() { # NAME CMD...: a daemon in the foreground (-f) as a background job
	local n=$1
	shift
	setsid "$@" -f >"$dir/log/$n.stdout" 2>&1 </dev/null &
	echo $! >"$dir/run/$n.pid"
}
stop_pid() {
	[ -s "$1" ] || return 0
	local p
	p=$(cat "$1")
	kill -TERM "$p" 2>/dev/null || return 0
	for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null || true
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_rgw() { # ID: gateway a serves the tests, f the fault tests
	if [ -s "$dir/run/rgw.$1.pid" ] && kill -0 "$(cat "$dir/run/rgw.$1.pid")" 2>/dev/null; then
		return 0 # already up
	fi
	bg "rgw.$1" radosgw -n "client.rgw.$1"
	wait_for 120 curl -fsS -o /dev/null "http://127.0.0.1:$(cat "$dir/rgw.$1.port")/" ||
		{ echo "ceph.sh: radosgw $1 did not answer (see $dir/log)" >&2; exit 1; }
}

case "$cmd" in
start)
	[ "$(id -u)" = 0 ] || { echo "ceph.sh: needs root" >&2; exit 1; }
	command -v ceph-mon >/dev/null || { echo "ceph.sh: ceph-mon is not installed" >&2; exit 1; }
	mkdir -p "$dir"/{run,log,keyring,mon,mgr,osd,rgw}
	v2=$(free_port) v1=$(free_port) rgw=$(free_port) rgwf=$(free_port)
	echo "$rgw" >"$dir/rgw.a.port"
	echo "$rgwf" >"$dir/rgw.f.port"
	echo "http://127.0.0.1:$rgwf" >"$dir/fault.endpoint"
	fsid=$(uuidgen)
	cat >"$CEPH_CONF" <<CONF
[global]
fsid = $fsid
mon initial members = a
mon host = [v2:127.0.0.1:$v2,v1:127.0.0.1:$v1]
public network = 127.0.0.0/8
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
keyring = $dir/keyring/\$name.keyring
run dir = $dir/run
pid file = $dir/run/\$name.daemon.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
log to stderr = false
crash dir = $dir/log
mon cluster log file = $dir/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
[client]
admin socket = $dir/run/\$name.\$pid.asok
[mon]
mon data = $dir/mon/\$cluster-\$id
mon data avail warn = 2
mon data avail crit = 1
[mgr]
mgr data = $dir/mgr/\$cluster-\$id
[osd]
osd data = $dir/osd/\$cluster-\$id
osd objectstore = bluestore
osd memory target = 1073741824
bluestore block create = true
bluestore block size = 21474836480
bluestore fsck on mkfs = false
bluestore fsck on mount = false
[client.rgw.a]
# tcp_nodelay: without it small GETs wait 40 ms on delayed ACKs.
rgw frontends = beast endpoint=127.0.0.1:$rgw tcp_nodelay=1
rgw data = $dir/rgw/\$cluster-\$id
# Deleted data is reclaimed after a minute, not two hours: a full OSD
# makes S3 clients hang instead of failing.
rgw gc obj min wait = 60
rgw gc processor period = 60
[client.rgw.f]
rgw frontends = beast endpoint=127.0.0.1:$rgwf tcp_nodelay=1
rgw data = $dir/rgw/\$cluster-\$id
CONF
	ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
	ceph-authtool --create-keyring "$dir/keyring/client.admin.keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
	ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/keyring/client.admin.keyring" >/dev/null
	monmaptool --create --addv a "[v2:127.0.0.1:$v2,v1:127.0.0.1:$v1]" --fsid "$fsid" "$dir/monmap" >/dev/null
	ceph-mon --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon.keyring"
	bg mon ceph-mon -i a
	wait_for 120 C mon stat || { echo "ceph.sh: mon did not answer" >&2; exit 1; }
	C auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' -o "$dir/keyring/mgr.x.keyring"
	mkdir -p "$dir/mgr/ceph-x"
	bg mgr ceph-mgr -i x
	uuid=$(uuidgen)
	id=$(C osd new "$uuid")
	mkdir -p "$dir/osd/ceph-$id"
	C auth get-or-create "osd.$id" mon 'allow profile osd' mgr 'allow profile osd' osd 'allow *' -o "$dir/keyring/osd.$id.keyring"
	ceph-osd -i "$id" --mkfs --osd-uuid "$uuid" >"$dir/log/osd-mkfs.log" 2>&1
	bg osd ceph-osd -i "$id"
	osd_up() { C osd dump -f json | python3 -c 'import json,sys; sys.exit(0 if any(o["up"] for o in json.load(sys.stdin)["osds"]) else 1)'; }
	wait_for 120 osd_up || { echo "ceph.sh: osd did not come up" >&2; exit 1; }
	for g in a f; do
		mkdir -p "$dir/rgw/ceph-rgw.$g"
		C auth get-or-create "client.rgw.$g" mon 'allow rw' osd 'allow rwx' mgr 'allow rw' -o "$dir/keyring/client.rgw.$g.keyring"
		start_rgw "$g"
	done
	radosgw-admin user create --uid=hangar --display-name="Hangar tests" --access-key="$access" --secret-key="$secret" >/dev/null
	echo "http://127.0.0.1:$rgw $access $secret"
	;;
stop)
	for n in rgw.a rgw.f osd mgr mon; do stop_pid "$dir/run/$n.pid"; done
	;;
rgw-down)
	stop_pid "$dir/run/rgw.f.pid"
	;;
rgw-up)
	start_rgw f
	;;
*)
	echo "usage: $0 start|stop|rgw-down|rgw-up DIR" >&2
	exit 2
	;;
esac

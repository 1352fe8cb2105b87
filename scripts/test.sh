#!/usr/bin/env bash
# The project's test command (README "Run the tests"; CI runs it too).
# It installs what the tests need when it can (Debian packages as root, a
# Python venv with the real OpenStack clients), then runs every Go test,
# the end-to-end tests against a real `hangar serve`, and brief fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '== %s\n' "$*"; }

# Debian packages: strace proves the sendfile path, curl drives uploads,
# qemu-utils (qemu-nbd) is what the ovirt-imageio client reads images with.
missing=()
for tool in strace curl cmp md5sum sha512sum qemu-nbd; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
command -v glusterd >/dev/null || missing+=(glusterfs-server)
command -v radosgw >/dev/null || missing+=(radosgw)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing Debian packages for: ${missing[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends strace curl diffutils coreutils qemu-utils postgresql glusterfs-server glusterfs-client \
			ceph-common ceph-mon ceph-mgr ceph-osd radosgw uuid-runtime >/dev/null
	else
		say "missing ${missing[*]}: tests that need them will skip (and fail under CI=true)"
	fi
fi

# Python venv with python-glanceclient, the openstack CLI and the
# ovirt-imageio client, rebuilt when the requirements change.
venv=${HANGAR_TEST_VENV:-.cache/venv}
stamp="$venv/.requirements.sha256"
want=$(sha256sum scripts/requirements-test.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	say "making the client venv in $venv"
	rm -rf "$venv"
	if ! python3 -m venv "$venv" 2>/dev/null; then
		[ "$(id -u)" = 0 ] && apt-get install -y -qq python3-venv >/dev/null && python3 -m venv "$venv"
	fi
	"$venv/bin/pip" install -q --disable-pip-version-check -r scripts/requirements-test.txt
	echo "$want" >"$stamp"
fi
export HANGAR_TEST_VENV
HANGAR_TEST_VENV=$(cd "$venv" && pwd)

# Real engines for the catalog and storage suites, started here, stopped
# on exit: PostgreSQL (Debian's postgresql package).
cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
	pgdir=$(mktemp -d /var/tmp/hangar-pg.XXXXXX)
	say "starting PostgreSQL in $pgdir"
	HANGAR_TEST_POSTGRES=$(scripts/postgres.sh start "$pgdir")
	export HANGAR_TEST_POSTGRES
	cleanup+=("scripts/postgres.sh stop '$pgdir'; rm -rf '$pgdir'")
else
	say "no PostgreSQL installed: its tests skip (and fail under CI=true)"
fi
# GlusterFS (Debian's glusterfs-server): one volume, three FUSE mounts, as three
# servers would have. FUSE mounts need root.
if [ "$(id -u)" = 0 ] && command -v glusterd >/dev/null; then
	gldir=$(mktemp -d /var/tmp/hangar-gluster.XXXXXX)
	say "starting GlusterFS in $gldir"
	HANGAR_TEST_GLUSTER=$(scripts/gluster.sh start "$gldir" 3 | paste -sd:)
	HANGAR_TEST_GLUSTER_DIR=$gldir # its "fault" volume is the fault tests'
	export HANGAR_TEST_GLUSTER HANGAR_TEST_GLUSTER_DIR
	cleanup+=("scripts/gluster.sh stop '$gldir'; rm -rf --one-file-system '$gldir'")
else
	say "no GlusterFS (needs root and glusterfs-server): its tests skip (and fail under CI=true)"
fi
# Ceph (Debian's Pacific packages): mon, mgr, one OSD and the S3 gateway
# (plus a second gateway the fault tests stop and start).
if [ "$(id -u)" = 0 ] && command -v ceph-mon >/dev/null; then
	cephdir=$(mktemp -d /var/tmp/hangar-ceph.XXXXXX)
	say "starting Ceph RGW in $cephdir (about 20 s)"
	HANGAR_TEST_S3=$(scripts/ceph.sh start "$cephdir")
	HANGAR_TEST_CEPH_DIR=$cephdir
	export HANGAR_TEST_S3 HANGAR_TEST_CEPH_DIR
	cleanup+=("scripts/ceph.sh stop '$cephdir'; rm -rf '$cephdir'")
else
	say "no Ceph (needs root and ceph-mon, radosgw): the S3 tests skip (and fail under CI=true)"
fi

say "go vet"
go vet ./...
say "go test"
go test -count=1 -timeout 15m ./...
say "go test -race (the concurrent packages)"
go test -race -count=1 -timeout 10m ./internal/...
say "fuzzing (${FUZZTIME:=15s} per target)"
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime "$FUZZTIME" ./internal/httprange
go test -run '^$' -fuzz '^FuzzDecodePatch$' -fuzztime "$FUZZTIME" ./internal/api/glance
# The benchmark harness itself, on tiny data against every peer (it
# installs nginx, glance-api and wrk as root). Under CI it must run; in a
# developer's run without root it is skipped, and says so.
if [ "$(id -u)" = 0 ] || [ "${CI:-}" = true ]; then
	say "benchmark harness smoke run (bench/run --smoke)"
	bench/run --smoke >/dev/null
else
	say "SKIPPED: bench/run --smoke (needs root to install nginx, glance-api, wrk)"
fi
say "all tests passed"

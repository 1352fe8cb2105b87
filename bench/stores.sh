#!/usr/bin/env bash
# Single-server throughput of Hangar on each store, same machine, same run:
# the local disk, a GlusterFS volume (FUSE mount), and a bucket on Ceph RGW
# (S3); then three servers on one PostgreSQL catalog and the Gluster volume,
# each downloading the same image at once. Starts the engines itself with
# the test scripts (root; Debian's postgresql, glusterfs-server and ceph
# packages, which .ci/run installs) and stops them at the end.
#
#   bench/stores.sh [SIZE_MIB]   (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-1024}
work=$(mktemp -d /var/tmp/hangar-stores.XXXXXX)
chmod 755 "$work" # the postgres user runs its server under it
pids=()
cleanup() {
	local status=$?
	if [ "$status" != 0 ]; then # say why before the evidence goes
		for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 5 "$f" >&2; }; done
	fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	scripts/ceph.sh stop "$work/ceph" 2>/dev/null || true
	scripts/gluster.sh stop "$work/gluster" 2>/dev/null || true
	scripts/postgres.sh stop "$work/pg" 2>/dev/null || true
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
go build -o "$work/hangar" ./cmd/hangar
head -c $((size_mib << 20)) /dev/urandom >"$work/img.raw"

mounts=$(scripts/gluster.sh start "$work/gluster" 3 | paste -sd' ')
read -r m1 m2 m3 <<<"$mounts"
read -r ep ak sk <<<"$(scripts/ceph.sh start "$work/ceph")"
export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
dsn=$(scripts/postgres.sh start "$work/pg")

serve() { # NAME ARGS...: starts a server and sets $url (not in a $(…)
	# subshell, so that its PID reaches the cleanup)
	local addr
	addr=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$work/hangar" serve --data "$work/data-$1" --listen "$addr" --log-level warn "${@:2}" >"$work/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do curl -sf -o /dev/null "http://$addr/healthz" && break; sleep 0.1; done
	url=http://$addr
}
now() { date +%s.%N; }
gbps() { python3 -c "print(f'{$1/1e9/($3-$2):.2f} GB/s ({$3-$2:.2f} s)')"; }
bytes=$((size_mib << 20))

printf '| store | curl PUT (Image API) | hangar upload, 4 conns | first GET (cold) | second GET (cached) |\n|---|---|---|---|---|\n'
for store in local gluster s3; do
	case $store in
	local) serve local ;;
	gluster) serve gluster --store "file://$m1/single" ;;
	s3) serve s3 --store "s3://bench/single?endpoint=$ep&create_bucket=true" ;;
	esac
	id=$(curl -sf -X POST "$url/v2/images" -H 'Content-Type: application/json' -d '{"name":"put","disk_format":"raw","container_format":"bare"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	t0=$(now)
	curl -sf -X PUT -H 'Content-Type: application/octet-stream' -T "$work/img.raw" "$url/v2/images/$id/file"
	t1=$(now)
	"$work/hangar" upload "$work/img.raw" --name up --connections 4 --url "$url" -o json >/dev/null 2>&1
	t2=$(now)
	# Cold: no copy in the page cache (or the S3 read cache) yet.
	find "$work" "$m1" -path "*$id*" -type f -exec python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)' {} \; 2>/dev/null || true
	t3=$(now)
	curl -sf -o /dev/null "$url/v2/images/$id/file"
	t4=$(now)
	curl -sf -o /dev/null "$url/v2/images/$id/file"
	t5=$(now)
	echo "| $store | $(gbps $bytes $t0 $t1) | $(gbps $bytes $t1 $t2) | $(gbps $bytes $t3 $t4) | $(gbps $bytes $t4 $t5) |"
done

# Three servers, one catalog, one Gluster volume (a mount each): the same
# image downloaded by 3, 6 and 12 clients at once spread over the servers,
# against the same clients on one server.
echo
printf '| clients | 1 server, aggregate | 3 servers, aggregate |\n|---|---|---|\n'
serve c1 --catalog "$dsn" --store "file://$m1/multi"
u1=$url
serve c2 --catalog "$dsn" --store "file://$m2/multi"
u2=$url
serve c3 --catalog "$dsn" --store "file://$m3/multi"
u3=$url
id=$(curl -sf -X POST "$u1/v2/images" -H 'Content-Type: application/json' -d '{"name":"m","disk_format":"raw","container_format":"bare"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
curl -sf -X PUT -H 'Content-Type: application/octet-stream' -T "$work/img.raw" "$u1/v2/images/$id/file"
for u in "$u1" "$u2" "$u3"; do curl -sf -o /dev/null "$u/v2/images/$id/file"; done # warm each mount
storm() { # N URL...
	local n=$1 i
	shift
	local urls=("$@")
	local t0 t1 clients=()
	t0=$(now)
	for i in $(seq 0 $((n - 1))); do
		curl -sf -o /dev/null "${urls[$((i % ${#urls[@]}))]}/v2/images/$id/file" &
		clients+=($!)
	done
	wait "${clients[@]}"
	t1=$(now)
	python3 -c "print(f'{$n*$bytes/1e9/($t1-$t0):.2f} GB/s')"
}
for n in 3 6 12; do
	echo "| $n | $(storm "$n" "$u1") | $(storm "$n" "$u1" "$u2" "$u3") |"
done
echo
echo "Machine: $(nproc) cores; image ${size_mib} MiB of random data; GB = 10^9 bytes."

#!/usr/bin/env bash
# Quick side-by-side of a 1 GiB upload and download with curl: Hangar's
# Image API vs the machine's disk write+fsync and, when nginx is installed,
# nginx serving the same file. Prints GB/s and server CPU seconds per GiB.
# Usage: bench/curl1g.sh [RUNS]   (needs curl, python3; nginx optional)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
work=$(mktemp -d /var/tmp/hangar-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/hangar" ./cmd/hangar
img=$work/1g.img
head -c $((1 << 30)) /dev/urandom >"$img"
chmod 755 "$work" && chmod 644 "$img" # nginx workers run as www-data

# wait_for URL: up to 15 s for a server to answer.
wait_for() {
	for _ in $(seq 150); do curl -sf -o /dev/null -r 0-0 "$1" && return; sleep 0.1; done
	echo "no answer from $1" >&2
	exit 1
}

gbps() { python3 -c "print(f'{(1<<30)/1e9/$1:.3f}')"; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cpus() { python3 -c "print(f'{($2 - $1) / 100:.2f}')"; }

for i in $(seq "$runs"); do
	t=$( { /usr/bin/time -f %e dd if="$img" of="$work/dd.out" bs=1M conv=fsync status=none; } 2>&1 )
	rm -f "$work/dd.out"
	echo "disk write+fsync run $i: $(gbps "$t") GB/s"
done

"$work/hangar" serve --data "$work/data" --listen 127.0.0.1:19292 --log-level warn &
pid=$!
wait_for http://127.0.0.1:19292/healthz
url=http://127.0.0.1:19292/v2/images
for i in $(seq "$runs"); do
	id=$(curl -sf -X POST $url -H 'Content-Type: application/json' -d '{"name": "bench"}' |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
	up=$(curl -sf -o /dev/null -w '%{time_total}' -T "$img" -H 'Content-Type: application/octet-stream' "$url/$id/file")
	# The first download follows the upload; the second is the one timed
	# for CPU, both from the page cache like nginx's file here.
	cold=$(curl -sf -o /dev/null -w '%{time_total}' "$url/$id/file")
	c0=$(cpu $pid)
	down=$(curl -sf -o /dev/null -w '%{time_total}' "$url/$id/file")
	c1=$(cpu $pid)
	echo "hangar run $i: upload $(gbps "$up") GB/s; first download $(gbps "$cold") GB/s; cached download $(gbps "$down") GB/s, server CPU $(cpus "$c0" "$c1") s/GiB"
done

if command -v nginx >/dev/null; then
	mkdir -p "$work/www"
	ln "$img" "$work/www/1g.img"
	cat >"$work/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $work/nginx.pid; error_log $work/nginx.err;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on;
       server { listen 127.0.0.1:19293; root $work/www; } }
CONF
	nginx -c "$work/nginx.conf" &
	wait_for http://127.0.0.1:19293/1g.img
	worker=$(pgrep -f "nginx: worker" | head -1)
	for i in $(seq "$runs"); do
		c0=$(cpu "$worker")
		down=$(curl -sf -o /dev/null -w '%{time_total}' http://127.0.0.1:19293/1g.img)
		c1=$(cpu "$worker")
		echo "nginx run $i: download $(gbps "$down") GB/s, worker CPU $(cpus "$c0" "$c1") s/GiB"
	done
else
	echo "nginx not installed: no nginx figures (apt-get install nginx)"
fi

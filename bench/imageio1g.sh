#!/usr/bin/env bash
# The ovirt-imageio Python client against Hangar's transfer API: upload and
# download of a 1 GiB dense image and an 8 GiB-virtual sparse one (1 GiB of
# data in 16 scattered extents), with 1 and 4 workers. Prints GB/s and, for
# uploads, the bytes the server received.
# Usage: bench/imageio1g.sh   (needs the venv scripts/test.sh makes, curl, qemu-utils)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${HANGAR_TEST_VENV:-.cache/venv}
py=$venv/bin/python
client=test/e2e/testdata/imageio_client.py
work=$(mktemp -d /var/tmp/hangar-imageio.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/hangar" ./cmd/hangar
head -c $((1 << 30)) /dev/urandom >"$work/dense.raw"
truncate -s 8G "$work/sparse.raw"
for i in $(seq 0 15); do
	dd if=/dev/urandom of="$work/sparse.raw" bs=1M count=64 seek=$((i * 512)) conv=notrunc status=none
done

"$work/hangar" serve --data "$work/data" --listen 127.0.0.1:19294 --log-level warn &
for _ in $(seq 150); do curl -sf -o /dev/null http://127.0.0.1:19294/healthz && break; sleep 0.1; done
api=http://127.0.0.1:19294/v2/images
field() { python3 -c "import json, sys; print(json.load(sys.stdin)[\"$1\"])"; }

for img in dense sparse; do
	size=$(stat -c %s "$work/$img.raw")
	for workers in 1 4; do
		id=$(curl -sf -X POST $api -H 'Content-Type: application/json' -d '{"name": "b", "disk_format": "raw"}' | field id)
		tr=$(curl -sf -X POST "$api/$id/transfers" -H 'Content-Type: application/json' -d "{\"ops\": [\"write\"], \"size\": $size}")
		url=$(echo "$tr" | field transfer_url)
		tid=$(echo "$tr" | field id)
		up=$("$py" $client upload "$work/$img.raw" "$url" $workers | field seconds)
		wire=$(curl -sf "$api/$id/transfers/$tid" | field transferred)
		curl -sf -o /dev/null -X POST "$api/$id/transfers/$tid/finalize"
		rurl=$(curl -sf -X POST "$api/$id/transfers" -H 'Content-Type: application/json' -d '{"ops": ["read"]}' | field transfer_url)
		rm -f "$work/out.raw"
		down=$("$py" $client download "$rurl" "$work/out.raw" $workers | field seconds)
		cmp "$work/$img.raw" "$work/out.raw"
		python3 -c "s=$size; print(f'$img ({s/2**30:.0f} GiB virtual), $workers workers: upload {s/1e9/$up:.2f} GB/s ({$up:.2f} s, {$wire/2**20:.0f} MiB on the wire), download {s/1e9/$down:.2f} GB/s ({$down:.2f} s)')"
	done
done

#!/usr/bin/env bash
# Side by side, same machine, same run: `hangar upload`/`hangar download`
# against hangar serve, and the ovirt-imageio client against the
# ovirt-imageio 2.5.1 daemon (file backend, plain HTTP on loopback), for a
# 1 GiB dense image and an 8 GiB-virtual sparse one holding 1 GiB of data,
# with 1 and 4 connections. Prints wall time, GB/s of image size, and the
# ratio Hangar / imageio, and when the server had recorded Glance's checksums.
# Usage: bench/transfer.sh   (needs the venv scripts/test.sh makes: it has
#        ovirt-imageio; and curl, qemu-utils)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(cd "${HANGAR_TEST_VENV:-.cache/venv}" && pwd)
client=$PWD/test/e2e/testdata/imageio_client.py
work=$(mktemp -d /var/tmp/hangar-transfer.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/imageio/conf/conf.d" "$work/imageio/run" "$work/imageio/images"
go build -o "$work/hangar" ./cmd/hangar

head -c $((1 << 30)) /dev/urandom >"$work/dense.raw"
truncate -s 8G "$work/sparse.raw"
for i in $(seq 0 15); do
	dd if=/dev/urandom of="$work/sparse.raw" bs=1M count=64 seek=$((i * 512)) conv=notrunc status=none
done

# Hangar on its embedded default.
"$work/hangar" serve --data "$work/hangar-data" --listen 127.0.0.1:19295 --log-level warn &
for _ in $(seq 150); do curl -sf -o /dev/null http://127.0.0.1:19295/healthz && break; sleep 0.1; done

# ovirt-imageio daemon: plain HTTP on a fixed loopback port, control socket.
ctl=$work/imageio/run/control.sock
cat >"$work/imageio/conf/conf.d/99-bench.conf" <<CONF
[daemon]
systemd_enable = false
drop_privileges = false
run_dir = $work/imageio/run
[tls]
enable = false
[remote]
host = 127.0.0.1
port = 19296
[local]
enable = false
[control]
transport = unix
socket = $ctl
[handlers]
keys = logfile
[handler_logfile]
args = ("$work/imageio/daemon.log",)
CONF
"$venv/bin/ovirt-imageio" -c "$work/imageio/conf" >"$work/imageio/stdout.log" 2>&1 &
for _ in $(seq 150); do grep -q "Ready for requests" "$work/imageio/daemon.log" 2>/dev/null && break; sleep 0.1; done

now() { date +%s.%N; }
rate() { python3 -c "print(f'{$1/1e9/($3-$2):.2f} GB/s ({$3-$2:.2f} s)')"; }
ratio() { python3 -c "print(f'{($4-$3)/($2-$1):.2f}x')"; }

ticket() { # id size path ops
	curl -sf --unix-socket "$ctl" -X PUT -d "{\"uuid\": \"$1\", \"size\": $2, \"url\": \"file://$3\", \"timeout\": 3000, \"ops\": [\"$4\"]}" "http://localhost/tickets/$1"
}

printf '| image | connections | direction | hangar CLI → hangar | imageio client → ovirt-imageio | Hangar / imageio | Glance checksums ready |\n|---|---|---|---|---|---|---|\n'
for img in dense sparse; do
	src=$work/$img.raw
	size=$(stat -c %s "$src")
	for n in 1 4; do
		name=$img-$n
		t0=$(now)
		"$work/hangar" upload "$src" --name "$name" --connections "$n" --url http://127.0.0.1:19295 -o json >/dev/null 2>&1
		t1=$(now)
		rm -f "$work/out.raw"
		"$work/hangar" download "$name" "$work/out.raw" --connections "$n" --url http://127.0.0.1:19295 -o json >/dev/null 2>&1
		t2=$(now)
		# Glance's checksums are computed after finalize, in the background
		# at nice 19: wait for them so they do not share the imageio runs'
		# CPU, and report when they were ready.
		until curl -sf "http://127.0.0.1:19295/v2/images?name=$name" | grep -Eq '"checksum": ?"'; do sleep 0.1; done
		t3=$(now)
		cmp "$src" "$work/out.raw"

		target=$work/imageio/images/$name.raw
		rm -f "$target"
		truncate -s "$size" "$target"
		ticket "w-$name" "$size" "$target" write
		i0=$(now)
		"$venv/bin/python" "$client" upload "$src" "http://127.0.0.1:19296/images/w-$name" "$n" >/dev/null
		i1=$(now)
		ticket "r-$name" "$size" "$target" read
		rm -f "$work/out.raw"
		i2=$(now)
		"$venv/bin/python" "$client" download "http://127.0.0.1:19296/images/r-$name" "$work/out.raw" "$n" >/dev/null
		i3=$(now)
		cmp "$src" "$work/out.raw"
		rm -f "$target" "$work/out.raw"
		echo "| $img | $n | upload | $(rate "$size" "$t0" "$t1") | $(rate "$size" "$i0" "$i1") | $(ratio "$t0" "$t1" "$i0" "$i1") | $(python3 -c "print(f'{$t3-$t1:.1f} s after')") |"
		echo "| $img | $n | download | $(rate "$size" "$t1" "$t2") | $(rate "$size" "$i2" "$i3") | $(ratio "$t1" "$t2" "$i2" "$i3") | |"
	done
done
echo
echo "GB/s of image size (8 GiB for sparse). hangar upload includes creating the image, finalizing"
echo "(imageio's block checksum, compared with the file's) and the image turning active; hangar"
echo "download includes verifying the block checksum. imageio's client verifies nothing and its"
echo "upload does not finalize. Glance's MD5 + SHA-512 are computed by the server after finalize"
echo "(nice 19, while the download runs): the last column is when they were recorded."

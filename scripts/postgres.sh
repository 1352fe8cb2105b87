#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, on 127.0.0.1 and a free port,
# everything under DIR (Debian's postgresql package provides the binaries;
# .ci/run installs it).
#
#   scripts/postgres.sh start DIR   # prints the DSN; writes DIR/dsn
#   scripts/postgres.sh stop DIR
#   scripts/postgres.sh pause DIR   # stop it, keeping its data and port (fault tests)
#   scripts/postgres.sh resume DIR  # start it again
#
# As root the server runs as the postgres user (initdb refuses root).
set -euo pipefail
cmd=${1:?usage: $0 start|stop|pause|resume DIR}
dir=${2:?usage: $0 start|stop|pause|resume DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bin/pg_ctl" ] || { echo "postgres.sh: PostgreSQL is not installed (Debian package postgresql)" >&2; exit 1; }

as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

run_server() {
	# fsync off: a test server, only ever stopped cleanly.
	as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $(cat "$dir/port") -k $dir -c fsync=off -c max_connections=300" start >/dev/null
}

case "$cmd" in
start)
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres "$dir"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1
	echo "$port" >"$dir/port"
	run_server
	echo "host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable" | tee "$dir/dsn"
	;;
stop)
	[ -d "$dir/data" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
	;;
pause)
	as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	;;
resume)
	run_server
	;;
*)
	echo "usage: $0 start|stop|pause|resume DIR" >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# Usage: scripts/pg-cluster.sh start DIR
#        scripts/pg-cluster.sh restart DIR
#        scripts/pg-cluster.sh stop DIR
#        scripts/pg-cluster.sh resume DIR
#
# Throwaway PostgreSQL 15 clusters for tests; the one implementation behind
# scripts/with-postgres.sh and the tests that need a cluster of their own
# (apitest's outage test restarts one).
#
#   start DIR    creates a cluster in DIR/data (DIR is made if missing),
#                starts it on a free 127.0.0.1 port with its socket in
#                DIR/sock, creates the role repohost and its database
#                repohost_test, and prints the DSN on stdout:
#                postgres://repohost@127.0.0.1:PORT/repohost_test?sslmode=disable
#   restart DIR  pg_ctl restart -m fast: sessions are cut, the server comes
#                back on the same port (as a production restart would).
#   stop DIR     pg_ctl stop -m fast, if it is running. DIR stays for the
#                caller to delete.
#   resume DIR   starts a cluster that stop stopped, on the port it had
#                (an outage that ends, as the health-check test needs).
#
# Every pg_ctl call names its data directory; no other cluster is touched.
# DIR must be reachable by the postgres OS user (a path under /tmp) and
# short: Unix socket paths are limited to ~107 bytes.
set -euo pipefail

usage() {
	echo "usage: $0 start|restart|stop|resume DIR" >&2
	exit 2
}
[ "$#" -eq 2 ] || usage
cmd=$1
dir=$2

here=$(cd "$(dirname "$0")" && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

# initdb and postgres refuse to run as root, so the cluster belongs to the
# postgres OS user (created by the Debian package). From / so that the
# postgres user never stands in a directory it may not read.
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

# Debian's package is the only source of PostgreSQL on these machines. Install
# it when the binaries are missing (a fresh machine), without starting the
# system cluster: policy-rc.d answering 101 tells the maintainer scripts not
# to start services. We only add that file when nobody else has one.
install_postgres() {
	echo "pg-cluster: $PGBIN/initdb is missing; installing Debian's postgresql package" >&2
	export DEBIAN_FRONTEND=noninteractive
	local added_policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		added_policy=1
	fi
	apt-get update -qq
	apt-get install -y -qq postgresql >/dev/null
	if [ -n "$added_policy" ]; then
		rm -f /usr/sbin/policy-rc.d
	fi
	if [ ! -x "$PGBIN/initdb" ]; then
		echo "pg-cluster: installing postgresql did not provide $PGBIN/initdb" >&2
		exit 1
	fi
}

start() {
	if [ ! -x "$PGBIN/initdb" ]; then
		install_postgres
	fi
	if [ -e "$dir/data" ]; then
		echo "pg-cluster: $dir/data already exists" >&2
		exit 1
	fi
	mkdir -p "$dir/sock"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir" "$dir/sock"
	fi

	local t0 t1 port started=
	t0=$(date +%s.%N)

	# --no-sync: nothing here needs to survive a crash, and it saves seconds.
	as_pg "$PGBIN/initdb" -D "$dir/data" --auth=trust -U postgres -E UTF8 --locale=C --no-sync \
		>"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		echo "pg-cluster: initdb failed (is $dir reachable by the postgres user?)" >&2
		exit 1
	}

	# Durability is pointless for a throwaway cluster; turning it off makes
	# the per-test CREATE SCHEMA / migrations much faster. The tests run in
	# parallel and every test server has its own connection pool, hence 200.
	cat >>"$dir/data/postgresql.conf" <<EOF

# repohost test cluster (scripts/pg-cluster.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF

	for attempt in 1 2 3; do
		# Another process may take the port between the check and the bind.
		port=$("$here/free-port.sh")
		if as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -o "-p $port" -w -t 60 start >/dev/null 2>&1; then
			started=1
			break
		fi
		echo "pg-cluster: start on port $port failed (attempt $attempt)" >&2
	done
	if [ -z "$started" ]; then
		tail -n 30 "$dir/postgres.log" >&2 || true
		echo "pg-cluster: could not start PostgreSQL" >&2
		exit 1
	fi

	# Tests connect as an ordinary role that owns the test database, as the
	# server would in production; they create one schema per test inside it.
	"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE ROLE repohost LOGIN" \
		-c "CREATE DATABASE repohost_test OWNER repohost" >/dev/null

	t1=$(date +%s.%N)
	printf 'pg-cluster: PostgreSQL %s ready on 127.0.0.1:%s in %.2fs (data in %s)\n' \
		"$("$PGBIN/postgres" --version | awk '{print $3}')" "$port" "$(awk "BEGIN{print $t1 - $t0}")" "$dir" >&2
	echo "postgres://repohost@127.0.0.1:$port/repohost_test?sslmode=disable"
}

restart() {
	# pg_ctl restart reuses the options of the last start (postmaster.opts),
	# so the port stays the same.
	as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -m fast -w -t 60 restart >/dev/null || {
		tail -n 30 "$dir/postgres.log" >&2 || true
		echo "pg-cluster: restart failed" >&2
		exit 1
	}
}

resume() {
	# postmaster.opts keeps the options of the last start, the port included.
	local port
	port=$(sed -n 's/.*"-p" "\([0-9]*\)".*/\1/p' "$dir/data/postmaster.opts")
	as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -o "-p $port" -w -t 60 start >/dev/null || {
		tail -n 30 "$dir/postgres.log" >&2 || true
		echo "pg-cluster: resume failed" >&2
		exit 1
	}
}

stop() {
	# postmaster.pid rather than any record of a start: a start that timed
	# out may still have left a server running.
	if [ -f "$dir/data/postmaster.pid" ]; then
		# -m fast: roll back open sessions and stop now.
		as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || {
			echo "pg-cluster: pg_ctl stop failed; see $dir/postgres.log" >&2
			exit 1
		}
	fi
}

case "$cmd" in
start) start ;;
restart) restart ;;
stop) stop ;;
resume) resume ;;
*) usage ;;
esac

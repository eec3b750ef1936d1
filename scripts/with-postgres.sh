#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh CMD [ARGS...]
#
# Starts a throwaway PostgreSQL 15 cluster, runs CMD with
# REPOHOST_TEST_PG=postgres://... exported, then stops the cluster and deletes
# it, also when CMD fails or the script is interrupted. The exit status is
# CMD's. It never touches any other cluster: the data directory, the socket
# and the port are all its own, and every pg_ctl call names its data directory.
set -euo pipefail

if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

# Debian's package is the only source of PostgreSQL on these machines. Install
# it when the binaries are missing (a fresh machine), without starting the
# system cluster: policy-rc.d answering 101 tells the maintainer scripts not
# to start services. We only add that file when nobody else has one.
if [ ! -x "$PGBIN/initdb" ]; then
	echo "with-postgres: $PGBIN/initdb is missing; installing Debian's postgresql package" >&2
	export DEBIAN_FRONTEND=noninteractive
	added_policy=
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
		echo "with-postgres: installing postgresql did not provide $PGBIN/initdb" >&2
		exit 1
	fi
fi

# initdb and postgres refuse to run as root, so the cluster belongs to the
# postgres OS user (created by the Debian package).
if [ "$(id -u)" -eq 0 ]; then
	as_pg() { runuser -u postgres -- "$@"; }
else
	as_pg() { "$@"; }
fi

# Under /tmp rather than $TMPDIR: the postgres user must be able to reach it,
# and the socket path must stay short (Unix socket paths are limited to ~107
# bytes).
dir=$(mktemp -d /tmp/repohost-pg.XXXXXX)
started=

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local status=$?
	# postmaster.pid rather than $started: a start that timed out may still
	# have left a server running.
	if [ -f "$dir/data/postmaster.pid" ]; then
		# -m fast: roll back open sessions and stop now; tests are over.
		as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 ||
			echo "with-postgres: pg_ctl stop failed; see $dir/postgres.log" >&2
	fi
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT

# An interrupt exits through the EXIT trap, which stops the cluster.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$dir/sock"
if [ "$(id -u)" -eq 0 ]; then
	chown postgres: "$dir" "$dir/sock"
fi

t0=$(date +%s.%N)

# --no-sync: nothing here needs to survive a crash, and it saves seconds.
(cd / && as_pg "$PGBIN/initdb" -D "$dir/data" --auth=trust -U postgres -E UTF8 --locale=C --no-sync) \
	>"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log" >&2
	echo "with-postgres: initdb failed" >&2
	exit 1
}

# Durability is pointless for a cluster deleted after the run; turning it off
# makes the per-test CREATE SCHEMA / migrations much faster. The tests run in
# parallel and every test server has its own connection pool, hence 200.
cat >>"$dir/data/postgresql.conf" <<EOF

# repohost test cluster (scripts/with-postgres.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF

port=
for attempt in 1 2 3; do
	# Another process may take the port between the check and the bind.
	port=$("$here/free-port.sh")
	if (cd / && as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -o "-p $port" -w -t 60 start) >/dev/null 2>&1; then
		started=1
		break
	fi
	echo "with-postgres: start on port $port failed (attempt $attempt)" >&2
done
if [ -z "$started" ]; then
	tail -n 30 "$dir/postgres.log" >&2 || true
	echo "with-postgres: could not start PostgreSQL" >&2
	exit 1
fi

# The tests connect as an ordinary role that owns the test database, as the
# server would in production; they create one schema per test inside it.
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
	-c "CREATE ROLE repohost LOGIN" \
	-c "CREATE DATABASE repohost_test OWNER repohost" >/dev/null

t1=$(date +%s.%N)
printf 'with-postgres: PostgreSQL %s ready on 127.0.0.1:%s in %.2fs (data in %s)\n' \
	"$("$PGBIN/postgres" --version | awk '{print $3}')" "$port" "$(awk "BEGIN{print $t1 - $t0}")" "$dir" >&2

export REPOHOST_TEST_PG="postgres://repohost@127.0.0.1:$port/repohost_test?sslmode=disable"

# CMD runs in the foreground, in this script's process group: Ctrl-C reaches
# it directly, and the traps above then stop the cluster. (A TERM sent to
# this script alone is handled once CMD has finished.) Not exec: the cluster
# must be stopped afterwards.
status=0
"$@" || status=$?
exit "$status"

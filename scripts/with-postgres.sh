#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh CMD [ARGS...]
#
# Starts a throwaway PostgreSQL 15 cluster (scripts/pg-cluster.sh), runs CMD
# with REPOHOST_TEST_PG=postgres://... exported, then stops the cluster and
# deletes it, also when CMD fails or the script is interrupted. The exit
# status is CMD's. It never touches any other cluster: the data directory,
# the socket and the port are all its own, and every pg_ctl call names its
# data directory.
#
# Tests that need a cluster of their own (one they may restart) make it under
# REPOHOST_TEST_PG_DIR, also exported; every cluster found there is stopped
# at the end too, so a test killed before its cleanup leaves no server behind.
set -euo pipefail

if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)

# Under /tmp rather than $TMPDIR: the postgres user must be able to reach it,
# and the socket path must stay short (Unix socket paths are limited to ~107
# bytes).
dir=$(mktemp -d /tmp/repohost-pg.XXXXXX)

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local status=$?
	local d
	for d in "$dir"/clusters/*/ "$dir"; do
		if [ -d "$d" ]; then
			"$here/pg-cluster.sh" stop "${d%/}" || true
		fi
	done
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT

# An interrupt exits through the EXIT trap, which stops the cluster.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

dsn=$("$here/pg-cluster.sh" start "$dir")

mkdir -p "$dir/clusters"
if [ "$(id -u)" -eq 0 ]; then
	chown postgres: "$dir/clusters"
fi

export REPOHOST_TEST_PG="$dsn"
export REPOHOST_TEST_PG_DIR="$dir/clusters"

# CMD runs in the foreground, in this script's process group: Ctrl-C reaches
# it directly, and the traps above then stop the cluster. (A TERM sent to
# this script alone is handled once CMD has finished.) Not exec: the cluster
# must be stopped afterwards.
status=0
"$@" || status=$?
exit "$status"

#!/usr/bin/env bash
# Usage: scripts/bench.sh   (make bench; make bench-postgres sets BENCH_DB)
#
# Measures every hot path on a large dataset. It builds the binaries, seeds an
# empty database straight through the store (cmd/repohost-bench seed: 5,000
# users, 10,000 repositories, one repository with 100,000 issues and one with
# 60), serves it from a temp data directory on a free 127.0.0.1 port (the
# embedded database unless BENCH_DB names a postgres:// URL) and runs
# `repohost-bench suite`: for each scenario it measures repohost and then a
# bare net/http server answering the very same bytes (the floor), and prints
# requests/s, p50/p99 and the share of the floor. It is a measurement, not a
# test: the numbers are printed, not judged; it fails only when the server
# misbehaves (a non-2xx answer).
#
# Tunables: BENCH_DURATION (5s per measurement), BENCH_CONCURRENCY (16),
# BENCH_ONLY (regular expression selecting scenarios), BENCH_USERS (5000),
# BENCH_REPOS (10000), BENCH_ISSUES (100000), BENCH_DB (unset: SQLite),
# BENCH_SERVER_FLAGS (extra flags for `repohost serve`), BENCH_UPLOAD_BYTES
# (size of the generic package file uploaded once after the table, with the
# server's resident memory sampled during it; 1 GiB, 0 for none),
# BENCH_WEBHOOK_EVENTS (1000 issue events for the webhook delay, API call to
# receiver; 0 for none).
#
# After the table, whatever BENCH_ONLY says: git over smart HTTP with the
# real git client (needs git; skipped with a note without it), on a private
# repository of BENCH_GIT_COMMITS commits (300, each adding a 4 KiB file and
# changing another), pushed once: BENCH_CLONES bare clones one after
# another (5; median, p90, MiB/s; beside as many from git's own upload-pack
# over file://, the floor), BENCH_FETCHES fetches with nothing new
# (10; median, p90) and BENCH_GIT_CLONES_AT_ONCE clones at once (8; total
# time, clones/s; 0 for none); BENCH_GIT=0 leaves it out. Then the time of
# the merge API call over BENCH_MERGES pull requests opened first, each
# adding its own file (20; median, p90, plus one squash and one rebase; 0
# for none). Then pushes: the latency of a contents-API commit to a branch
# with no open pull request and with BENCH_PUSH_PULLS (500; 0 for none)
# open on it, BENCH_PUSH_COMMITS (10) of each, and the time until every
# pull request shows the new base. On a busy 2-core machine they took about a minute, most of it
# the clones (BENCH_GIT_CLONES_AT_ONCE=0 or fewer BENCH_CLONES shorten it).
#
# Last, the abuse group (cmd/repohost-bench/abuse.go): loads run once each
# while the server's resident memory is sampled (before, highest, after):
# BENCH_ABUSE_PUSHES parallel pushes (8) of one BENCH_ABUSE_PUSH_MIB file
# (200) with the real git client, BENCH_ABUSE_RUNNER_BODIES anonymous
# runner-protocol bodies (4) of BENCH_ABUSE_RUNNER_MIB (150),
# BENCH_ABUSE_NPM npm publishes (4) of BENCH_ABUSE_NPM_MIB (40),
# BENCH_ABUSE_ARCHIVES archive downloads (20) of a pushed repository and
# BENCH_ABUSE_JSON API bodies (32) of BENCH_ABUSE_JSON_MIB (7). The
# goal is to stay under 200 MB throughout. BENCH_ABUSE=0 leaves it out;
# smaller sizes make a quick run (the full one writes and pushes
# 8 × 200 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${BENCH_DURATION:-5s}
concurrency=${BENCH_CONCURRENCY:-16}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/repohost-bench.XXXXXX")
server_pid=

cleanup() {
	local status=$?
	if [ -n "$server_pid" ]; then
		# Only the server this script started, by its PID; SIGTERM lets it
		# shut down cleanly.
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "bench: $*" >&2
	exit 1
}

# server_failed ends the run after a measurement failed, with the end of
# the server's log.
# server_log_tail shows the end of the server's log without the lines every
# request and event writes, so a warning or an error is not buried.
server_log_tail() {
	grep -v '"msg":"request"\|"msg":"event"' "$tmp/server.log" | tail -n 30 >&2 || true
}

server_failed() {
	echo "bench: last lines of the server log:" >&2
	server_log_tail
	exit 1
}

echo "bench: building"
go build -o "$tmp/repohost" ./cmd/repohost
go build -o "$tmp/repohost-bench" ./cmd/repohost-bench

db_flag=()
label=sqlite
if [ -n "${BENCH_DB:-}" ]; then
	db_flag=(--db "$BENCH_DB")
	label=postgresql
fi

echo "bench: seeding ($label)"
"$tmp/repohost-bench" seed -data "$tmp/data" ${BENCH_DB:+-db "$BENCH_DB"} -out "$tmp/dataset.json" \
	-users "${BENCH_USERS:-5000}" -repos "${BENCH_REPOS:-10000}" -big-issues "${BENCH_ISSUES:-100000}"

port=$(scripts/free-port.sh)
base="http://127.0.0.1:$port"

# The server logs one line per request; keep that out of the report but
# available for a failure message.
# shellcheck disable=SC2086 # BENCH_SERVER_FLAGS is a list of flags
# Loopback receivers are allowed for the webhook measurement.
"$tmp/repohost" serve --listen "127.0.0.1:$port" --data "$tmp/data" "${db_flag[@]}" --webhook-allowed-hosts loopback ${BENCH_SERVER_FLAGS:-} \
	>"$tmp/server.log" 2>&1 &
server_pid=$!

for i in $(seq 1 150); do
	if curl -fsS -o /dev/null "$base/api/v1/version" 2>/dev/null; then
		break
	fi
	if ! kill -0 "$server_pid" 2>/dev/null; then
		server_log_tail
		server_pid=
		die "the server exited during start-up"
	fi
	if [ "$i" -eq 150 ]; then
		server_log_tail
		die "the server did not answer $base/api/v1/version within 30s"
	fi
	sleep 0.2
done
echo "bench: serving on $base (data in $tmp/data${BENCH_DB:+, database $BENCH_DB})"

if ! "$tmp/repohost-bench" suite -base "$base" -dataset "$tmp/dataset.json" -c "$concurrency" -d "$duration" \
	-server-pid "$server_pid" -label "$label" ${BENCH_ONLY:+-only "$BENCH_ONLY"} \
	-upload-bytes "${BENCH_UPLOAD_BYTES:-1073741824}"; then
	server_failed
fi

# Webhooks: API call to receiver, over BENCH_WEBHOOK_EVENTS issue events,
# created in a burst by BENCH_CONCURRENCY clients and then by one client
# at a time. BENCH_WEBHOOK_EVENTS=0 leaves the measurement out.
if [ "${BENCH_WEBHOOK_EVENTS:-1000}" -gt 0 ] && { [ -z "${BENCH_ONLY:-}" ] || [[ "webhook delivery" =~ ${BENCH_ONLY} ]]; }; then
	for clients in "$concurrency" 1; do
		if ! "$tmp/repohost-bench" webhooks -base "$base" -dataset "$tmp/dataset.json" -n "${BENCH_WEBHOOK_EVENTS:-1000}" -c "$clients"; then
			server_failed
		fi
	done
fi

# Git over smart HTTP, and the merge API call (see the header).
if [ "${BENCH_GIT:-1}" != 0 ]; then
	if ! "$tmp/repohost-bench" git -base "$base" -dataset "$tmp/dataset.json" -tmp "$tmp" \
		-commits "${BENCH_GIT_COMMITS:-300}" -clones "${BENCH_CLONES:-5}" -fetches "${BENCH_FETCHES:-10}" \
		-c "${BENCH_GIT_CLONES_AT_ONCE:-8}"; then
		server_failed
	fi
fi
if [ "${BENCH_PUSH_PULLS:-500}" -gt 0 ]; then
	if ! "$tmp/repohost-bench" pushes -base "$base" -dataset "$tmp/dataset.json" -pulls "${BENCH_PUSH_PULLS:-500}" \
		-commits "${BENCH_PUSH_COMMITS:-10}"; then
		server_failed
	fi
fi
if [ "${BENCH_MERGES:-20}" -gt 0 ]; then
	if ! "$tmp/repohost-bench" merges -base "$base" -dataset "$tmp/dataset.json" -n "${BENCH_MERGES:-20}"; then
		server_failed
	fi
fi

# The abuse group (see the header).
if [ "${BENCH_ABUSE:-1}" != 0 ]; then
	if ! "$tmp/repohost-bench" abuse -base "$base" -dataset "$tmp/dataset.json" -tmp "$tmp" -server-pid "$server_pid" \
		-pushes "${BENCH_ABUSE_PUSHES:-8}" -push-mib "${BENCH_ABUSE_PUSH_MIB:-200}" \
		-runner-bodies "${BENCH_ABUSE_RUNNER_BODIES:-4}" -runner-mib "${BENCH_ABUSE_RUNNER_MIB:-150}" \
		-npm "${BENCH_ABUSE_NPM:-4}" -npm-mib "${BENCH_ABUSE_NPM_MIB:-40}" \
		-archives "${BENCH_ABUSE_ARCHIVES:-20}" \
		-json-bodies "${BENCH_ABUSE_JSON:-32}" -json-mib "${BENCH_ABUSE_JSON_MIB:-7}"; then
		server_failed
	fi
fi

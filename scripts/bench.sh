#!/usr/bin/env bash
# Usage: scripts/bench.sh   (make bench)
#
# Measures the two hottest reads: GET /repos/{owner}/{repo} and
# GET /users/{username}/repos. It builds the binary, serves it from a temp data
# directory on a free 127.0.0.1 port (embedded database unless BENCH_DB names a
# postgres:// URL), seeds a user, a token and BENCH_REPOS repositories through
# the API, drives both endpoints with cmd/repohost-bench and prints requests/s
# and p50/p99 latency for each. It is a measurement, not a test: the numbers
# are printed, not judged; it fails only when the server misbehaves.
#
# Tunables: BENCH_DURATION (10s), BENCH_CONCURRENCY (8), BENCH_REPOS (40),
# BENCH_DB (unset: SQLite in the temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${BENCH_DURATION:-10s}
concurrency=${BENCH_CONCURRENCY:-8}
nrepos=${BENCH_REPOS:-40}

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

echo "bench: building"
go build -o "$tmp/repohost" ./cmd/repohost
go build -o "$tmp/repohost-bench" ./cmd/repohost-bench

port=$(scripts/free-port.sh)
base="http://127.0.0.1:$port"
admin_pw="bench-admin-$RANDOM$RANDOM"
db_flag=()
if [ -n "${BENCH_DB:-}" ]; then
	db_flag=(--db "$BENCH_DB")
fi

# The server logs one line per request; keep that out of the report but
# available for a failure message.
REPOHOST_ADMIN_PASSWORD=$admin_pw "$tmp/repohost" serve --listen "127.0.0.1:$port" \
	--data "$tmp/data" "${db_flag[@]}" >"$tmp/server.log" 2>&1 &
server_pid=$!

# Migrations and the first admin's password hash take a moment.
for i in $(seq 1 150); do
	if curl -fsS -o /dev/null "$base/api/v1/version" 2>/dev/null; then
		break
	fi
	if ! kill -0 "$server_pid" 2>/dev/null; then
		tail -n 20 "$tmp/server.log" >&2
		server_pid=
		die "the server exited during start-up"
	fi
	if [ "$i" -eq 150 ]; then
		tail -n 20 "$tmp/server.log" >&2
		die "the server did not answer $base/api/v1/version within 30s"
	fi
	sleep 0.2
done
echo "bench: serving on $base (data in $tmp/data${BENCH_DB:+, database $BENCH_DB})"

# api METHOD PATH BODY WANT CURL_ARGS... : sends one JSON request and fails
# with a readable message unless the status is WANT; prints the body.
api() {
	local method=$1 path=$2 body=$3 want=$4
	shift 4
	local status
	status=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X "$method" \
		-H 'Content-Type: application/json' -H 'Accept: application/json' \
		--data "$body" "$@" "$base/api/v1$path") || die "$method $path: request failed"
	if [ "$status" != "$want" ]; then
		echo "bench: seeding failed: $method /api/v1$path answered $status, want $want:" >&2
		head -c 500 "$tmp/resp" >&2
		echo >&2
		case "$status" in
		404 | 405 | 501)
			echo "bench: that endpoint is probably not implemented yet;" \
				"'go test ./apitest/ -run TestEveryOperationIsDispatched' lists the unrouted ones." >&2
			;;
		esac
		exit 1
	fi
	cat "$tmp/resp"
}

user=bench
user_pw="bench-pw-$RANDOM$RANDOM"
echo "bench: seeding user '$user', a token and $nrepos repositories"
api POST /admin/users \
	"{\"username\":\"$user\",\"email\":\"$user@example.com\",\"password\":\"$user_pw\",\"must_change_password\":false}" \
	201 -u "admin:$admin_pw" >/dev/null

token=$(api POST "/users/$user/tokens" '{"name":"bench","scopes":["all"]}' 201 -u "$user:$user_pw" |
	sed -n 's/.*"sha1"[[:space:]]*:[[:space:]]*"\([0-9a-fA-F]*\)".*/\1/p')
[ -n "$token" ] || die "POST /users/$user/tokens answered 201 without a sha1 field"

repo_paths=()
for i in $(seq 1 "$nrepos"); do
	name=$(printf 'repo-%03d' "$i")
	# Every fourth repository is private, so visibility filtering has work.
	private=false
	if [ $((i % 4)) -eq 0 ]; then private=true; fi
	api POST /user/repos "{\"name\":\"$name\",\"auto_init\":true,\"private\":$private}" 201 \
		-H "Authorization: token $token" >/dev/null
	repo_paths+=("/api/v1/repos/$user/$name")
done

echo "bench: $concurrency workers for $duration per endpoint (2xx only in the latencies)"
"$tmp/repohost-bench" -base "$base" -token "$token" -c "$concurrency" -d "$duration" \
	-name "GET /repos/{owner}/{repo}" "${repo_paths[@]}"
"$tmp/repohost-bench" -base "$base" -token "$token" -c "$concurrency" -d "$duration" \
	-name "GET /users/{username}/repos" "/api/v1/users/$user/repos"

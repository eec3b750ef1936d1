#!/usr/bin/env bash
# Usage: scripts/with-s3.sh CMD [ARGS...]
#        scripts/with-s3.sh --build   (only build weed when missing; make test
#                                      runs it beside the first pass)
#
# Starts a throwaway S3-compatible service (SeaweedFS: master, volume, filer
# and S3 gateway in one `weed server` process, on free 127.0.0.1 ports, in a
# temporary directory), runs CMD with
#
#   REPOHOST_TEST_S3=http://KEY:SECRET@127.0.0.1:PORT/repohost-test
#
# exported (a storage address as `repohost serve --storage` takes it; tests
# keep each server's files under a base path of their own in that bucket),
# then stops the service by its PID and deletes its data, also when CMD
# fails or the script is interrupted. The exit status is CMD's.
#
# The `weed` binary is built from the Go module proxy once, into
# $REPOHOST_CACHE (default $HOME/.cache/repohost), and reused: SeaweedFS is
# Apache-2.0 (MinIO's server is AGPL and is not used). The first build takes
# several minutes; set WEED to use a binary of your own.
set -euo pipefail

if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
weed_version=v0.0.0-20261109003541-7506e5f91cd6
cache=${REPOHOST_CACHE:-$HOME/.cache/repohost}
weed=${WEED:-$cache/weed-$weed_version}

if [ ! -x "$weed" ]; then
	echo "with-s3: building SeaweedFS $weed_version into $weed (once)" >&2
	mkdir -p "$cache"
	build=$(mktemp -d)
	start=$(date +%s)
	(
		cd "$build"
		go mod init weedbuild >/dev/null 2>&1
		GOFLAGS=-mod=mod go get "github.com/seaweedfs/seaweedfs@$weed_version" >/dev/null
		GOFLAGS=-mod=mod go build -o "$weed.tmp.$$" github.com/seaweedfs/seaweedfs/weed
	) || {
		rm -rf "$build" "$weed.tmp.$$"
		echo "with-s3: building SeaweedFS failed" >&2
		exit 1
	}
	mv "$weed.tmp.$$" "$weed"
	rm -rf "$build"
	echo "with-s3: built SeaweedFS in $(($(date +%s) - start))s" >&2
fi

if [ "$1" = "--build" ]; then
	exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/repohost-s3.XXXXXX")
pid=

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local status=$?
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

key=repohost
bucket=repohost-test
secret=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$dir/s3.json" <<JSON
{"identities": [{"name": "repohost", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
JSON
mkdir -p "$dir/data"

# A port taken between free-port.sh and the start makes weed fail: retry.
for attempt in 1 2 3; do
	ports=()
	for _ in 1 2 3 4 5 6 7 8; do
		ports+=("$("$here/free-port.sh")")
	done
	s3port=${ports[0]}
	"$weed" server -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
		-master.port="${ports[1]}" -master.port.grpc="${ports[2]}" \
		-volume.port="${ports[3]}" -volume.port.grpc="${ports[4]}" \
		-master.volumeSizeLimitMB=64 -volume.max=32 -volume.preStopSeconds=0 \
		-filer -filer.port="${ports[5]}" -filer.port.grpc="${ports[6]}" \
		-s3 -s3.port="$s3port" -s3.port.grpc="${ports[7]}" -s3.config="$dir/s3.json" \
		-s3.port.iceberg=0 -s3.port.lance=0 \
		>"$dir/weed.log" 2>&1 &
	pid=$!
	ready=
	for _ in $(seq 1 1200); do
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		# Ready once the bucket can be made and an object written (the
		# gateway may answer before the filer and the volumes are up).
		if curl -fsS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
			-X PUT "http://127.0.0.1:$s3port/$bucket" 2>/dev/null ||
			curl -fsS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
				"http://127.0.0.1:$s3port/$bucket?location" 2>/dev/null; then
			if printf ready | curl -fsS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
				-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
				-X PUT --data-binary @- "http://127.0.0.1:$s3port/$bucket/probe" 2>/dev/null; then
				ready=1
				break
			fi
		fi
		sleep 0.1
	done
	if [ -n "$ready" ]; then
		break
	fi
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
	echo "with-s3: SeaweedFS did not start (attempt $attempt):" >&2
	tail -n 20 "$dir/weed.log" >&2
	if [ "$attempt" -eq 3 ]; then
		exit 1
	fi
done

export REPOHOST_TEST_S3="http://$key:$secret@127.0.0.1:$s3port/$bucket"

status=0
"$@" || status=$?
exit "$status"

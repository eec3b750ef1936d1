#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that nothing listens on. A refused connection
# means the port is free; another process may still take it before the caller
# binds it, so callers retry on a failed start.
set -euo pipefail
for _ in $(seq 1 200); do
	# 20000-32767: above the well-known ports and below Linux's default
	# ephemeral range (32768-60999), so outgoing connections never hold it.
	port=$((20000 + RANDOM % 12768))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "$port"
		exit 0
	fi
done
echo "free-port: no free port found on 127.0.0.1" >&2
exit 1

#!/usr/bin/env bash
# Screenshots of the OAuth2 sign-in and consent pages in headless Chromium:
# docs/oauth-signin.png (chromium --screenshot on the authorization URL) and
# docs/oauth-consent.png (scripts/screenshot-oauth, which signs in through
# the form in the same browser and captures the page that follows).
# Installs Debian's chromium when it is missing. Run from the project root.
set -euo pipefail
root=$(pwd)
command -v chromium >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null
tmp=$(mktemp -d); pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/repohost" ./cmd/repohost
"$tmp/repohost" admin user create --data "$tmp/data" --username alice --password alice-secret-pw --email alice@example.com >/dev/null
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$tmp/repohost" serve --data "$tmp/data" --listen "127.0.0.1:$port" --root-url "$base/" >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do curl -sf "$base/api/v1/version" >/dev/null && break; sleep 0.2; done
client_id=$(curl -sf -u alice:alice-secret-pw -H 'Content-Type: application/json' \
	-d '{"name":"Example CI","redirect_uris":["http://127.0.0.1:9/callback"]}' \
	"$base/api/v1/user/applications/oauth2" | python3 -c 'import json,sys;print(json.load(sys.stdin)["client_id"])')
# A fixed PKCE challenge: the screenshots never exchange the code.
url="$base/login/oauth/authorize?response_type=code&client_id=$client_id&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&state=xyz&scope=openid+profile+email+read%3Arepository+write%3Aissue&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
mkdir -p docs
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=900,760 \
	--screenshot="$root/docs/oauth-signin.png" "$url" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log"; exit 1; }
(cd scripts/screenshot-oauth && go run . -url "$url" -user alice -password alice-secret-pw -out "$root/docs/oauth-consent.png" -width 900 -height 760)
echo "wrote docs/oauth-signin.png docs/oauth-consent.png"

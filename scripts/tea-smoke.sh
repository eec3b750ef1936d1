#!/usr/bin/env bash
# Runs the tea CLI (code.gitea.io/tea) against a fresh server built from this
# tree: login, issues (create/list/show/close/reopen/edit), pulls
# (create/list/show/close/reopen/merge), labels, milestones, times, org and
# notifications, failing on the first command that fails or prints the
# wrong thing.
#
#   TEA=/path/to/tea scripts/tea-smoke.sh
#   TEA_SRC=/path/to/tea/checkout scripts/tea-smoke.sh   # builds tea first
#
# Without either, it exits 0 after saying it skipped (tea is not vendored).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/tea-smoke.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

tea=${TEA:-}
if [ -z "$tea" ] && [ -n "${TEA_SRC:-}" ]; then
	(cd "$TEA_SRC" && go build -o "$work/tea" .)
	tea=$work/tea
fi
if [ -z "$tea" ]; then
	echo "tea-smoke: skipped (set TEA or TEA_SRC)"
	exit 0
fi

go build -o "$work/repohost" ./cmd/repohost
port=$(scripts/free-port.sh)
base=http://127.0.0.1:$port
api=$base/api/v1
REPOHOST_ADMIN_PASSWORD=adminpass123 "$work/repohost" serve --listen "127.0.0.1:$port" \
	--data "$work/data" --root-url "$base/" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	curl -sf "$api/version" >/dev/null && break
	sleep 0.1
done

export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
mkdir -p "$HOME"
token() { # user password
	curl -sf -u "$1:$2" -X POST "$api/users/$1/tokens" -H 'content-type: application/json' \
		-d '{"name":"tea","scopes":["all"]}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["sha1"])'
}
curlt() { curl -sf -H "Authorization: token $tok" -H 'content-type: application/json' "$@" >/dev/null; }

# t runs tea and expects its output to contain each further argument.
out=""
t() {
	local args=("$@") want=()
	while [ "${args[-1]:-}" != "--" ] && [ ${#args[@]} -gt 0 ]; do
		want=("${args[-1]}" "${want[@]}")
		unset 'args[-1]'
	done
	unset 'args[-1]'
	echo "\$ tea ${args[*]}"
	if ! out=$("$tea" "${args[@]}" 2>&1); then
		echo "$out"
		echo "tea-smoke: FAILED: tea ${args[*]}"
		exit 1
	fi
	echo "$out"
	for w in "${want[@]}"; do
		if ! grep -qF -- "$w" <<<"$out"; then
			echo "tea-smoke: FAILED: tea ${args[*]}: output lacks \"$w\""
			exit 1
		fi
	done
}

tok=$(token admin adminpass123)
t login add --name local --url "$base" --token "$tok" -- "successful"
curlt -X POST "$api/user/repos" -d '{"name":"proj","auto_init":true}'
curlt -X POST "$api/repos/admin/proj/branches" -d '{"new_branch_name":"feat","old_branch_name":"main"}'
curlt -X POST "$api/repos/admin/proj/contents/f.txt" -d '{"content":"eA==","branch":"feat","message":"add f"}'
curl -sf -u admin:adminpass123 -X POST "$api/admin/users" -H 'content-type: application/json' \
	-d '{"username":"bob","email":"bob@example.com","password":"bobpass12345","must_change_password":false}' >/dev/null
L=(--login local --repo admin/proj)

t issues create "${L[@]}" --title "first issue" --description "body here" -- "#1 first issue (open)"
t issues list "${L[@]}" -- "first issue" "open"
t issues "${L[@]}" 1 -- "body here"
t issues close "${L[@]}" 1 -- "(closed)"
t issues reopen "${L[@]}" 1 -- "(open)"
t labels create "${L[@]}" --name bug --color "#ff0000" --description "a bug" --
t labels list "${L[@]}" -- "ff0000" "bug"
t milestones create "${L[@]}" --title v1 --description first -- "v1"
t milestones list "${L[@]}" -- "v1"
t issues edit "${L[@]}" 1 --add-labels bug --milestone v1 -- "first issue"
t milestones issues "${L[@]}" v1 -- "first issue" "bug"
t times add "${L[@]}" 1 1h30m --
t times list "${L[@]}" -- "#1" "1h30m0s"
t times list "${L[@]}" "#1" -- "admin" "1h30m0s"
t times "${L[@]}" --mine -- "admin/proj"
t pulls create "${L[@]}" --head feat --base main --title Feature --description "Fixes #1" -- "#2 Feature (open)"
t pulls list "${L[@]}" -- "Feature"
t pulls "${L[@]}" 2 -- "Fixes #1"
t pulls close "${L[@]}" 2 -- "(closed)"
t pulls reopen "${L[@]}" 2 -- "(open)"
t org create --login local acme -- "acme"
t org list --login local -- "acme"
t org --login local acme -- "Visibility: public"

# bob is mentioned; the comment gives him a thread.
curlt -X POST "$api/repos/admin/proj/issues/1/comments" -d '{"body":"hey @bob"}'
tok=$(token bob bobpass12345)
t login add --name bob --url "$base" --token "$tok" -- "successful"
for _ in $(seq 1 100); do
	"$tea" notifications ls --login bob --mine 2>/dev/null | grep -q "first issue" && break
	sleep 0.1
done
t notifications ls --login bob --mine -- "unread" "Issue" "first issue" "admin/proj"
t notifications --login bob --repo admin/proj -- "first issue"
t notifications read --login bob 1 -- "/repos/admin/proj/issues/1"
t notifications pin --login bob 1 --
t notifications ls --login bob --mine --states pinned -- "pinned"
t notifications unpin --login bob 1 --

# The merge closes #1 ("Fixes #1").
t pulls merge "${L[@]}" 2 --
t issues list "${L[@]}" --state all -- "closed"
t notifications ls --login bob --mine --states unread,read --types issue -- "closed"
echo "tea-smoke: ok"

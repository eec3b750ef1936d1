#!/usr/bin/env bash
# Fails when models/, restapi/ or gen/client/ differ from what swagger.yml generates.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/generate.sh
git add --intent-to-add models restapi gen/client
if ! git diff --exit-code --stat -- models restapi gen/client; then
	echo "generated code is out of date: run 'make generate' and commit the result" >&2
	exit 1
fi
echo "generated code is in sync with swagger.yml"

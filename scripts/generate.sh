#!/usr/bin/env bash
# Regenerates models/, restapi/ and gen/client/ from swagger.yml with the pinned
# go-swagger. Everything it writes is committed; scripts/check-generated.sh
# proves the committed copy matches.
set -euo pipefail
cd "$(dirname "$0")/.."
SWAGGER_VERSION=${SWAGGER_VERSION:-v0.33.1}
BIN=$PWD/.bin
if [ ! -x "$BIN/swagger-$SWAGGER_VERSION" ]; then
	mkdir -p "$BIN"
	GOFLAGS= GOBIN="$BIN" go install "github.com/go-swagger/go-swagger/cmd/swagger@$SWAGGER_VERSION"
	mv "$BIN/swagger" "$BIN/swagger-$SWAGGER_VERSION"
fi
SWAGGER="$BIN/swagger-$SWAGGER_VERSION"
"$SWAGGER" validate -q swagger.yml
rm -rf models restapi gen/client
mkdir -p gen
# stratoscale turns every tag into a Go interface, so an operation added to the
# spec does not compile until impl/ implements it.
"$SWAGGER" generate server -q -f swagger.yml -t . -A repohost --template=stratoscale --exclude-main
"$SWAGGER" generate client -q -f swagger.yml -t gen -c client --skip-models --existing-models repohost/models
# The generated API would analyse the spec a second time for its router
# (NewRoutableContext), though loads.Analyzed already did: the router takes
# that analysis instead, so a server keeps one copy (about 6 MiB of live
# heap, which the collector walks under the memory limit).
sed -i 's/middleware\.NewRoutableContext(o\.spec, o, nil)/middleware.NewRoutableContextWithAnalyzedSpec(o.spec, o.spec.Analyzer, o, nil)/' \
	restapi/operations/repohost_api.go
grep -q 'NewRoutableContextWithAnalyzedSpec(o.spec, o.spec.Analyzer' restapi/operations/repohost_api.go || {
	echo "generate.sh: the router's context is no longer built as expected; see the comment above" >&2
	exit 1
}
gofmt -w models restapi gen/client

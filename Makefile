# repohost developer loop. `make run` serves a local instance; `make test` runs
# everything (vet, then the whole suite on SQLite and again on a throwaway
# PostgreSQL). See README.md.

GO ?= go
# Generous: the suite runs twice, each pass on a 2-core machine.
TEST_TIMEOUT ?= 30m
TEST_FLAGS ?=
DATA ?= ./data

.PHONY: all generate check-generated build run test test-sqlite test-postgres bench bench-postgres lint

all: build

# Regenerate models/, restapi/ and gen/client/ from swagger.yml (pinned go-swagger).
generate:
	scripts/generate.sh

# Fail when the committed generated code differs from what swagger.yml generates.
check-generated:
	scripts/check-generated.sh

build:
	$(GO) build -o repohost ./cmd/repohost

run: build
	@echo "repohost: serving on http://127.0.0.1:3000/ with data in $(DATA) (embedded SQLite)."
	@echo "repohost: on first start the site admin 'admin' is created and its password is printed"
	@echo "repohost: in the log line \"created the site admin\"; set REPOHOST_ADMIN_PASSWORD to choose it."
	./repohost serve --data $(DATA)

# Both passes always run, so one `make test` reports failures on both
# databases; it fails if either failed. An empty REPOHOST_TEST_PG selects
# SQLite even when the caller's environment has one set. The S3-compatible
# service the object-storage tests also run on (scripts/with-s3.sh,
# SeaweedFS) is built once into ~/.cache/repohost; on a machine without it
# the build runs at low priority beside the SQLite pass, which does not
# need it. The PostgreSQL pass runs beside the service, and the storage
# tests run on it once more with SQLite.
S3_TESTS ?= S3|ObjectStorage|LFS
test:
	$(GO) vet ./...
	@status=0; \
	nice -n 19 scripts/with-s3.sh --build > .s3-build.log 2>&1 & build=$$!; \
	echo "==> go test on SQLite"; \
	start=$$(date +%s); \
	REPOHOST_TEST_PG= REPOHOST_TEST_S3= $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) || status=1; \
	echo "==> SQLite pass took $$(( $$(date +%s) - start ))s"; \
	start=$$(date +%s); \
	wait $$build || { cat .s3-build.log; echo "==> building the S3 service failed"; status=1; }; \
	cat .s3-build.log; rm -f .s3-build.log; \
	echo "==> waited $$(( $$(date +%s) - start ))s more for the S3 service's build"; \
	echo "==> go test on PostgreSQL, beside S3"; \
	start=$$(date +%s); \
	scripts/with-postgres.sh scripts/with-s3.sh $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) || status=1; \
	echo "==> PostgreSQL pass took $$(( $$(date +%s) - start ))s"; \
	echo "==> storage tests on SQLite, beside S3"; \
	start=$$(date +%s); \
	REPOHOST_TEST_PG= scripts/with-s3.sh $(GO) test ./store/objects ./apitest -run '$(S3_TESTS)' -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) || status=1; \
	echo "==> SQLite storage pass took $$(( $$(date +%s) - start ))s"; \
	if [ $$status -ne 0 ]; then echo "==> FAILED (see above)"; fi; \
	exit $$status

# One database only, for a quicker loop.
test-sqlite:
	REPOHOST_TEST_PG= $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS)

test-postgres:
	scripts/with-postgres.sh $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS)

bench:
	scripts/with-s3.sh scripts/bench.sh

# The same measurement with the server on a throwaway PostgreSQL.
bench-postgres:
	scripts/with-postgres.sh scripts/with-s3.sh sh -c 'BENCH_DB="$$REPOHOST_TEST_PG" scripts/bench.sh'

lint:
	@unformatted=$$(gofmt -l .); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

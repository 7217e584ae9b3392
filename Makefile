# Every test: the commit subjects, vet and gofmt, the test suite with the
# race detector, then each fuzz target for a short time. `make test` is
# what CI runs.

GO       ?= go
FUZZTIME ?= 10s

# Fuzz targets as package:target.
FUZZ_TARGETS := \
	./jsonrpc:FuzzDecodeMessage \
	./jsonrpc:FuzzLineReader \
	./internal/wire:FuzzValid \
	./internal/wire:FuzzFlatSchema \
	./internal/wire:FuzzAppendTextResult \
	./internal/redact:FuzzString \
	./internal/redact:FuzzArgs \
	./mcp:FuzzSessionHandle \
	./taskstore:FuzzDecodeCursor \
	./mcphttp:FuzzPOST \
	./mcphttp:FuzzSSEReader \
	./auth/oauthclient:FuzzParseWWWAuthenticate \
	./gateway/config:FuzzParse \
	./toolsearch:FuzzSearch \
	./toolsearch:FuzzSplitQuoted \
	./toolsearch:FuzzQueryValues \
	./toolsearch:FuzzWords \
	./toolsearch:FuzzEstimate \
	./toolsearch/lexicon:FuzzLexicon \
	./toolsearch/wordvec:FuzzEmbed \
	./toolsearch/wordvec:FuzzRead \
	./openapi:FuzzLoad \
	./openapi:FuzzBuildRequest \
	./openapi:FuzzCredentials

.PHONY: eval-search test commits deps vet unit fuzz conformance conformance-next conformance-cluster build docs bench interop

test: commits deps vet unit fuzz conformance conformance-cluster interop

# Subjects of the commits after the baseline in scripts/check-commits.sh:
# at most 72 characters, `pkg: what changed`. First, as it is quick.
commits:
	@scripts/check-commits.sh

# The pinned npm servers of the real-server test (cmd/mcpgate/testdata/
# realservers/core), and Prism and the OpenAPI descriptions of openapi's
# tests (openapi/testdata/npm), installed here so that the tests' time is
# their own.
deps:
	@scripts/ensure-deps.sh
	@cmd/mcpgate/testdata/realservers/install.sh core
	@openapi/testdata/npm/install.sh
	@contrib/use-embeddings/install.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# MCPGATE_REQUIRE_SERVICES=1: a test whose redis-server, Postgres or
# haproxy is missing fails rather than skips (internal/testservice).
unit:
	MCPGATE_REQUIRE_SERVICES=1 $(GO) test -race -count=1 ./...

fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh $(FUZZ_TARGETS)

# The official conformance suite, pinned in conformance/suite (npm ci
# installs it with the Node it needs): server mode against `mcpgate
# conformance-server`, then client mode with `mcpgate conformance-client`,
# then the pinned 0.2.0 alpha in both modes for the 2026-07-28 revision
# (the same server, both eras on one endpoint), and the alpha's tasks
# extension scenarios (not scored by the suite; run here all the same).
# Fails on any failed check or warning.
TASKS_SCENARIOS = tasks-lifecycle tasks-capability-negotiation tasks-wire-fields \
	tasks-request-state-removal tasks-mrtr-input tasks-request-headers \
	tasks-dispatch-and-envelope tasks-status-notifications \
	tasks-required-task-error tasks-mrtr-composition
conformance:
	scripts/conformance.sh
	MODE=client scripts/conformance.sh
	SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2026-07-28" scripts/conformance.sh
	SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2026-07-28" MODE=client scripts/conformance.sh
	SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2026-07-28" SCENARIOS="$(TASKS_SCENARIOS)" scripts/conformance.sh

# The server-mode runs of `conformance` again, through HAProxy (round
# robin, no stickiness) in front of CLUSTER_REPLICAS conformance-server
# replicas sharing one Redis (internal/testdata/clusterup; redis-server
# and haproxy from scripts/ensure-deps.sh): 0.1.16, the 2026-07-28 alpha
# and its tasks scenarios. Fails on any failed check or warning, as
# `conformance` does.
CLUSTER_REPLICAS ?= 3
conformance-cluster:
	CLUSTER=$(CLUSTER_REPLICAS) scripts/conformance.sh
	CLUSTER=$(CLUSTER_REPLICAS) SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2026-07-28" scripts/conformance.sh
	CLUSTER=$(CLUSTER_REPLICAS) SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2026-07-28" SCENARIOS="$(TASKS_SCENARIOS)" scripts/conformance.sh

# The newer 0.2.0 alpha line of the suite for spec 2025-11-25; reported,
# not yet part of `make test`.
conformance-next:
	SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2025-11-25" scripts/conformance.sh
	SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2025-11-25" MODE=client scripts/conformance.sh

# The interop matrix (interop/, a module of its own): mcpgate's server and
# client against the TypeScript SDK, the Go SDKs, mcp-remote, the MCP
# Inspector and the reference servers, pinned in interop/package-lock.json
# and interop/go.sum. npm ci runs when the lockfile differs from the one
# last installed. Prints the matrix; see interop/README.md.
interop:
	@cd interop && if ! cmp -s package-lock.json node_modules/.interop-lock 2>/dev/null; then \
		echo "interop: npm ci"; \
		npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.interop-lock; \
	fi
	cd interop && $(GO) vet ./... && MCPGATE_REQUIRE_SERVICES=1 $(GO) test -count=1 -timeout 5m

# The version `mcpgate version` and `--version` print: the nearest tag,
# else the commit, with -dirty for uncommitted changes (GOFLAGS may turn
# Go's own VCS stamping off, and a plain go build says "dev").
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

# Generated documentation: docs/config.md from gateway/config's types.
# `make test` fails when it is out of date (TestConfigReference).
docs:
	$(GO) generate ./gateway/config

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/mcpgate ./cmd/mcpgate

# Tool search on the public Azure MCP tool-selection set (not part of
# test: the data lives outside the repository, in ../shared/eval).
eval-search:
	$(GO) run ./internal/evalsearch -data ../shared/eval/azure-mcp -split -devset internal/evalsearch/devset -tools ../shared/eval/tools

# The benchmark suite (bench/, a module of its own): mcpgate's echo server
# against the official Go SDK, mcp-go, the TypeScript server-everything and
# two limit servers, over stdio and Streamable HTTP, then the gateway hop.
# Prints the tables; results in bench/.work/results/. N, REPS, ONLY and
# BASELINE (a git revision of mcpgate to measure beside this tree) from
# the environment (see README "Benchmarks"). bench-micro runs the Go
# micro-benchmarks of the hot paths.
.PHONY: bench bench-micro
bench:
	GO=$(GO) bench/run.sh

bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem ./jsonrpc ./mcp ./mcphttp ./cmd/mcpgate

# Issue 23's scale figures: TestClusterScale at 10,000 sessions, each with
# its GET stream open, over three gateway replicas behind HAProxy sharing
# one Redis, then a rolling restart; prints the fan-out time, Redis memory,
# each replica's RSS and the restart steps (make test runs it at 1,000).
.PHONY: scale
scale:
	MCPGATE_SCALE_SESSIONS=10000 MCPGATE_REQUIRE_SERVICES=1 $(GO) test -run '^TestClusterScale$$' -v -count=1 -timeout 20m ./cmd/mcpgate

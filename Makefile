# Every test: vet and gofmt, the test suite with the race detector, then
# each fuzz target for a short time. `make test` is what CI runs.

GO       ?= go
FUZZTIME ?= 10s

# Fuzz targets as package:target.
FUZZ_TARGETS := \
	./jsonrpc:FuzzDecodeMessage \
	./jsonrpc:FuzzLineReader \
	./mcp:FuzzSessionHandle \
	./taskstore:FuzzDecodeCursor \
	./mcphttp:FuzzPOST

.PHONY: test deps vet unit fuzz build bench

test: deps vet unit fuzz

deps:
	@scripts/ensure-deps.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -count=1 ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg; \
	done

build:
	$(GO) build -o bin/mcpgate ./cmd/mcpgate

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./jsonrpc ./mcp ./cmd/mcpgate

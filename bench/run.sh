#!/usr/bin/env bash
# `make bench`: builds the benchmark servers, the driver and mcpgate,
# installs the pinned TypeScript peer (npm ci, when package-lock.json
# changed), then runs the driver, which measures every server in turn and
# prints the tables. Results go to bench/.work/results/<UTC time>/.
#
#   make bench                       # N=5000 REPS=3
#   N=2000 REPS=1 make bench         # a quick run
#   ONLY="mcpgate go-sdk" make bench # a subset of: mcpgate baseline go-sdk mcp-go ts limit gateway gateway-traced
#   BASELINE=HEAD~3 make bench       # also mcpgate at HEAD~3, as the server "baseline"
#   bench/.work/bin/driver -report bench/.work/results/T   # the tables of run T again
set -euo pipefail
cd "$(dirname "$0")"
GO=${GO:-go}
mkdir -p .work/bin
$GO build -o .work/bin/ ./driver ./servers/...
(cd .. && $GO build -o bench/.work/bin/mcpgate ./cmd/mcpgate)

# BASELINE=REV: mcpgate at REV, extracted with git archive into
# .work/baseline-src; its own bench/servers/echo, built against that
# tree's library (its bench/go.mod replaces the module with ../), becomes
# .work/bin/echo-baseline, and its cmd/mcpgate mcpgate-baseline when the
# gateway hop runs. Outside a git checkout -buildvcs would stamp the
# enclosing repository's state, so it is off.
baseline=()
if [ -n "${BASELINE:-}" ]; then
	rev=$(git -C .. rev-parse --verify --quiet "$BASELINE^{commit}") || {
		echo "bench: BASELINE=$BASELINE is not a commit of this repository" >&2
		exit 1
	}
	short=$(git -C .. rev-parse --short "$rev")
	work=$PWD/.work
	src=$work/baseline-src
	echo "bench: baseline mcpgate $short ($BASELINE) in .work/baseline-src"
	rm -rf "$src"
	mkdir -p "$src"
	git -C .. archive "$rev" | tar -x -C "$src"
	if [ ! -d "$src/bench/servers/echo" ]; then
		echo "bench: $short has no bench/servers/echo to build" >&2
		exit 1
	fi
	(cd "$src/bench" && $GO build -buildvcs=false -o "$work/bin/echo-baseline" ./servers/echo)
	only=" ${ONLY:-} "
	only=${only//,/ }
	if [ -z "${ONLY:-}" ] || [[ $only == *" gateway "* && $only == *" baseline "* ]]; then
		(cd "$src" && $GO build -buildvcs=false -o "$work/bin/mcpgate-baseline" ./cmd/mcpgate)
	fi
	baseline=(-baseline "$short")
fi
if command -v npm >/dev/null && command -v node >/dev/null; then
	if ! cmp -s package-lock.json node_modules/.bench-lock 2>/dev/null; then
		echo "bench: npm ci"
		npm ci --no-audit --no-fund --loglevel=error
		cp package-lock.json node_modules/.bench-lock
	fi
elif [ -z "${ONLY:-}" ]; then
	echo "bench: no node/npm, leaving out the TypeScript server"
	export ONLY="mcpgate go-sdk mcp-go limit gateway gateway-traced${BASELINE:+ baseline}"
fi
exec .work/bin/driver -work .work ${baseline[@]+"${baseline[@]}"}

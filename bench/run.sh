#!/usr/bin/env bash
# `make bench`: builds the benchmark servers, the driver and mcpgate,
# installs the pinned TypeScript peer (npm ci, when package-lock.json
# changed), then runs the driver, which measures every server in turn and
# prints the tables. Results go to bench/.work/results/<UTC time>/.
#
#   make bench                       # N=5000 REPS=3
#   N=2000 REPS=1 make bench         # a quick run
#   ONLY="mcpgate go-sdk" make bench # a subset of: mcpgate go-sdk mcp-go ts limit gateway
#   bench/.work/bin/driver -report bench/.work/results/T   # the tables of run T again
set -euo pipefail
cd "$(dirname "$0")"
GO=${GO:-go}
mkdir -p .work/bin
$GO build -o .work/bin/ ./driver ./servers/...
(cd .. && $GO build -o bench/.work/bin/mcpgate ./cmd/mcpgate)
if command -v npm >/dev/null && command -v node >/dev/null; then
	if ! cmp -s package-lock.json node_modules/.bench-lock 2>/dev/null; then
		echo "bench: npm ci"
		npm ci --no-audit --no-fund --loglevel=error
		cp package-lock.json node_modules/.bench-lock
	fi
elif [ -z "${ONLY:-}" ]; then
	echo "bench: no node/npm, leaving out the TypeScript server"
	export ONLY="mcpgate go-sdk mcp-go limit gateway"
fi
exec .work/bin/driver -work .work

#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/suite) and
# fails on any failed check and any warning: in server mode against
# `mcpgate conformance-server`, in client mode with `mcpgate
# conformance-client` as the client under test.
#
#   scripts/conformance.sh                          # server, 0.1.16, --suite all
#   MODE=client scripts/conformance.sh              # client, 0.1.16, --suite all
#   SUITE=active scripts/conformance.sh
#   SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2025-11-25" \
#     scripts/conformance.sh                        # the pinned 0.2.0 alpha
#   SCENARIOS="tasks-lifecycle tasks-mrtr-input" ...  # these scenarios only,
#     forced (extension scenarios are on no spec timeline), one server
#   CLUSTER=3 scripts/conformance.sh                # server mode against
#     HAProxy (round robin, no stickiness) in front of 3 conformance-server
#     replicas sharing one Redis (internal/testdata/clusterup)
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${MODE:-server}
SUITE=${SUITE:-all}
SUITE_DIR=${SUITE_DIR:-conformance/suite}
SUITE_ARGS=${SUITE_ARGS:-}
CLUSTER=${CLUSTER:-}
if [ -n "$CLUSTER" ] && [ "$MODE" = client ]; then
	echo "CLUSTER=$CLUSTER: a cluster of servers is for MODE=server; client mode runs no server of ours" >&2
	exit 2
fi
OUT=conformance/results/$(date -u +%Y%m%d-%H%M%S)-$MODE${CLUSTER:+-cluster$CLUSTER}
mkdir -p "$OUT" bin

if [ ! -x "$SUITE_DIR/node_modules/.bin/conformance" ] || [ ! -x "$SUITE_DIR/node_modules/.bin/node" ]; then
	(cd "$SUITE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
NODE=$PWD/$SUITE_DIR/node_modules/.bin/node
CLI=$PWD/$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js

go build -o bin/mcpgate ./cmd/mcpgate
set +e
if [ "$MODE" = client ]; then
	echo "conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)), client suite $SUITE"
	# The runner appends the test server's URL to the command; each
	# scenario's stderr (our client's debug log) is kept in $OUT.
	# shellcheck disable=SC2086 # SUITE_ARGS is a list of words
	"$NODE" "$CLI" client --command "$PWD/bin/mcpgate conformance-client --log-level debug" \
		--suite "$SUITE" $SUITE_ARGS -o "$OUT" | tee "$OUT/summary.txt"
	rc=${PIPESTATUS[0]}
else
	if [ -n "$CLUSTER" ]; then
		# The replicas, Redis and HAProxy on ports clusterup picks; it
		# names the front on stderr once everything answers, and stops
		# everything on SIGTERM.
		go build -o bin/clusterup ./internal/testdata/clusterup
		bin/clusterup -n "$CLUSTER" -- "$PWD/bin/mcpgate" conformance-server --addr '127.0.0.1:{port}' \
			--redis '{redis}' --replica-id 'replica-{i}' --log-level warn 2>"$OUT/server.log" &
		ready='^cluster front http://127.0.0.1:\([0-9]*\)/mcp$'
	else
		# Port 0: the server names the port it got on its first line of stderr.
		bin/mcpgate conformance-server --addr 127.0.0.1:0 --log-level warn 2>"$OUT/server.log" &
		ready='^conformance fixtures on http://127.0.0.1:\([0-9]*\)/mcp$'
	fi
	pid=$!
	trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
	port=
	# A cluster takes longer: Redis, each replica, then HAProxy.
	for _ in $(seq 600); do
		port=$(sed -n "s|$ready|\1|p" "$OUT/server.log")
		[ -n "$port" ] && break
		kill -0 $pid 2>/dev/null || { cat "$OUT/server.log"; exit 1; }
		sleep 0.05
	done
	[ -n "$port" ] || { echo "the fixtures server did not start" >&2; cat "$OUT/server.log"; exit 1; }
	[ -z "$CLUSTER" ] || sed -n 's/^cluster //p' "$OUT/server.log"

	if [ -n "${SCENARIOS:-}" ]; then
		echo "conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)), scenarios $SCENARIOS, http://localhost:$port/mcp"
		rc=0
		for sc in $SCENARIOS; do
			# shellcheck disable=SC2086 # SUITE_ARGS is a list of words
			"$NODE" "$CLI" server --url "http://localhost:$port/mcp" --scenario "$sc" --force $SUITE_ARGS -o "$OUT" | tee -a "$OUT/summary.txt"
			[ "${PIPESTATUS[0]}" = 0 ] || rc=1
		done
	else
		echo "conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)), suite $SUITE, http://localhost:$port/mcp"
		# shellcheck disable=SC2086 # SUITE_ARGS is a list of words
		"$NODE" "$CLI" server --url "http://localhost:$port/mcp" --suite "$SUITE" $SUITE_ARGS -o "$OUT" | tee "$OUT/summary.txt"
		rc=${PIPESTATUS[0]}
	fi
fi
set -e

"$NODE" scripts/conformance-summary.js "$OUT" || rc=1
echo "results in $OUT"
exit $rc

#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/suite) against
# `mcpgate conformance-server`, and fails on any failed check and any warning.
#
#   scripts/conformance.sh                          # 0.1.16, --suite all
#   SUITE=active scripts/conformance.sh
#   SUITE_DIR=conformance/suite-next SUITE_ARGS="--spec-version 2025-11-25" \
#     scripts/conformance.sh                        # the pinned 0.2.0 alpha
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${SUITE:-all}
SUITE_DIR=${SUITE_DIR:-conformance/suite}
SUITE_ARGS=${SUITE_ARGS:-}
OUT=conformance/results/$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT" bin

if [ ! -x "$SUITE_DIR/node_modules/.bin/conformance" ] || [ ! -x "$SUITE_DIR/node_modules/.bin/node" ]; then
	(cd "$SUITE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
NODE=$PWD/$SUITE_DIR/node_modules/.bin/node
CLI=$PWD/$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js

go build -o bin/mcpgate ./cmd/mcpgate
# Port 0: the server names the port it got on its first line of stderr.
bin/mcpgate conformance-server --addr 127.0.0.1:0 --log-level warn 2>"$OUT/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
port=
for _ in $(seq 200); do
	port=$(sed -n 's|^conformance fixtures on http://127.0.0.1:\([0-9]*\)/mcp$|\1|p' "$OUT/server.log")
	[ -n "$port" ] && break
	kill -0 $pid 2>/dev/null || { cat "$OUT/server.log"; exit 1; }
	sleep 0.05
done
[ -n "$port" ] || { echo "the fixtures server did not start" >&2; cat "$OUT/server.log"; exit 1; }

echo "conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)), suite $SUITE, http://localhost:$port/mcp"
set +e
# shellcheck disable=SC2086 # SUITE_ARGS is a list of words
"$NODE" "$CLI" server --url "http://localhost:$port/mcp" --suite "$SUITE" $SUITE_ARGS -o "$OUT" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
set -e

# The suite's exit code ignores warnings; count them from the checks files.
"$NODE" -e '
const fs = require("fs"), path = require("path");
const files = [];
(function walk(d) { for (const f of fs.readdirSync(d)) { const p = path.join(d, f);
  if (fs.statSync(p).isDirectory()) walk(p); else if (f === "checks.json") files.push(p); } })(process.argv[1]);
let scen = 0, ok = 0, counts = {SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0}, bad = [];
for (const f of files) {
  const checks = JSON.parse(fs.readFileSync(f, "utf8")); scen++;
  let fail = false;
  for (const c of checks) { counts[c.status] = (counts[c.status] || 0) + 1;
    if (c.status === "FAILURE" || c.status === "WARNING") { fail = true;
      bad.push(`${path.basename(path.dirname(f))}: ${c.status} ${c.name}: ${c.errorMessage || ""}`); } }
  if (!fail) ok++;
}
console.log(`scenarios: ${ok}/${scen} clean; checks: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ${counts.WARNING} warnings`);
for (const b of bad) console.log("  " + b);
process.exit(counts.FAILURE || counts.WARNING || scen === 0 ? 1 : 0);
' "$OUT" || rc=1
echo "results in $OUT"
exit $rc

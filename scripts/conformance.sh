#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/suite) against
# `mcpgate conformance-server`, and fails on any failed check and any warning.
#
#   scripts/conformance.sh            # --suite all
#   SUITE=active scripts/conformance.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${SUITE:-all}
SUITE_DIR=conformance/suite
OUT=conformance/results/$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT" bin

if [ ! -x "$SUITE_DIR/node_modules/.bin/conformance" ] || [ ! -x "$SUITE_DIR/node_modules/.bin/node" ]; then
	(cd "$SUITE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
NODE=$PWD/$SUITE_DIR/node_modules/.bin/node
CLI=$PWD/$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js

go build -o bin/mcpgate ./cmd/mcpgate
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 3901)
bin/mcpgate conformance-server --addr "127.0.0.1:$port" --log-level warn 2>"$OUT/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.1
done

echo "conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)), suite $SUITE, http://localhost:$port/mcp"
set +e
"$NODE" "$CLI" server --url "http://localhost:$port/mcp" --suite "$SUITE" -o "$OUT" | tee "$OUT/summary.txt"
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

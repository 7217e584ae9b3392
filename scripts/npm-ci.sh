#!/usr/bin/env bash
# npm-ci.sh DIR LABEL: installs the npm packages pinned by DIR's
# package-lock.json into DIR/node_modules, with npm ci, only when the
# lockfile differs from the one it last installed. --ignore-scripts: no
# install script may download anything but the registry's packages.
# Without npm it says so and succeeds: the tests that need the packages
# skip (and fail under MCPGATE_REQUIRE_SERVICES=1, as make test sets).
set -euo pipefail
dir="$1" label="$2"
cd "$dir"

if ! command -v npm >/dev/null 2>&1; then
	echo "$label: npm is not installed; the tests that need its packages will skip (fail under MCPGATE_REQUIRE_SERVICES=1)" >&2
	exit 0
fi
if cmp -s package-lock.json node_modules/.installed-lock 2>/dev/null; then
	exit 0
fi
echo "$label: npm ci in $dir" >&2
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
cp package-lock.json node_modules/.installed-lock

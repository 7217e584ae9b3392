#!/usr/bin/env bash
# Installs the pinned npm packages of the published MCP servers that the
# real-server test and measurement start, so that `npx -y pkg@version`
# run in a folder here finds the package in node_modules and downloads
# nothing. Folders to install are named as arguments (default: core, the
# test's set; "all" for every folder). npm ci runs only when a folder's
# lockfile differs from the one it last installed.
#
# Why several folders: npx runs the bin of the package's name from
# node_modules/.bin, and five packages name theirs "mcp" (brightdata,
# stripe, launchdarkly, eslint, mui), so each of those needs a folder of
# its own; and npm's resolver does not finish on all the rest in one
# tree (peer ranges of the SDK's 1.x and 2.x lines), so they are split in
# more-a and more-b. pdf-reader's lockfile cannot go through npm ci: an
# optional dependency of it (@sylphx/gust-napi@0.1.7) is not on the
# registry, which npm ci takes for a lockfile out of date; npm install
# --no-save installs the same locked versions without that check.
# --ignore-scripts: no install script may download a
# browser or a prebuilt binary (there is no network but the registry).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
	echo "realservers: npm is not installed; the real-server test will skip" >&2
	exit 0
fi

folders=("$@")
if [ ${#folders[@]} -eq 0 ]; then folders=(core); fi
if [ "${folders[0]}" = all ]; then
	folders=()
	for f in "$here"/*/package-lock.json; do folders+=("$(basename "$(dirname "$f")")"); done
fi

for f in "${folders[@]}"; do
	d="$here/$f"
	if cmp -s "$d/package-lock.json" "$d/node_modules/.installed-lock" 2>/dev/null; then
		continue
	fi
	echo "realservers: npm ci in $f" >&2
	how=ci
	if [ "$f" = pdf-reader ]; then how="install --no-save"; fi
	(cd "$d" && npm $how --ignore-scripts --no-audit --no-fund --loglevel=error >&2 &&
		cp package-lock.json node_modules/.installed-lock)
done

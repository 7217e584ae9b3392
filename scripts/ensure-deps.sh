#!/usr/bin/env bash
# Installs what the tests need on a fresh machine and nothing more, from
# Debian packages only: the race detector needs cgo, so a C compiler;
# internal/testservice starts redis-server, Postgres and haproxy of its
# own on loopback ports (never the system services the packages bring).
set -euo pipefail

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
# Debian keeps initdb off PATH, under /usr/lib/postgresql/VERSION/bin.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
	need+=(postgresql)
fi

if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-deps: missing ${need[*]} and no apt-get to install them" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "ensure-deps: installing ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null

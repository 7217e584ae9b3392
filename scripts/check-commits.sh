#!/usr/bin/env bash
# Checks commit subjects: at most 72 characters, and `pkg: what changed`,
# where pkg is one or more lower-case package paths separated by commas
# (`gateway: ...`, `bench/driver: ...`, `gateway, mcp: ...`) or a top-level
# file (`README: ...`, `Makefile: ...`). Lists every commit that breaks
# either rule, with its subject's length, and fails. Merge commits are
# not checked. `make test` runs it first.
#
#   scripts/check-commits.sh                   # the commits after $BASELINE, to HEAD
#   scripts/check-commits.sh A..B              # any git rev-list range instead
#   scripts/check-commits.sh origin/main..HEAD
set -euo pipefail
cd "$(dirname "$0")/.."

# The rule holds from this commit on; older history is exempt (it has
# subjects of whole paragraphs, written before the rule).
BASELINE=bb5b4451f2fac5eefa35d92f6ce5cd74524bfd93
MAX=72

# A component: a lower-case path, or a top-level file's name under an
# optional lower-case path (README, interop/README).
comp='([a-z0-9./_-]+|([a-z0-9._-]+/)*(README|Makefile|LICENSE|NOTICE)(\.md)?)'
form="^$comp(, ?$comp)*: .+"

if [ $# -eq 0 ]; then
	if ! git rev-parse --git-dir >/dev/null 2>&1; then
		echo "check-commits: not a git checkout, nothing to check"
		exit 0
	fi
	if ! git cat-file -e "$BASELINE^{commit}" 2>/dev/null; then
		echo "check-commits: baseline ${BASELINE:0:12} is not in this clone (shallow?); skipped"
		exit 0
	fi
	set -- "$BASELINE..HEAD"
fi

# Fails here, not silently with no commits, on a range git does not know.
log=$(git log --no-merges --format='%h %s' "$@")
n=0
bad=()
while IFS= read -r line; do
	[ -n "$line" ] || continue
	hash=${line%% *}
	subject=${line#* }
	n=$((n + 1))
	# Characters, not bytes (×, ÷, → are one each).
	len=$(printf '%s' "$subject" | LC_ALL=C.UTF-8 wc -m)
	why=""
	if [ "$len" -gt $MAX ]; then
		why="longer than $MAX"
	fi
	if ! [[ $subject =~ $form ]]; then
		why="${why:+$why, }not 'pkg: what changed'"
	fi
	if [ -n "$why" ]; then
		bad+=("$(printf '  %s %3d chars, %s: %s' "$hash" "$len" "$why" "$subject")")
	fi
done <<<"$log"

if [ ${#bad[@]} -gt 0 ]; then
	echo "check-commits: ${#bad[@]} of $n commits in $* break the subject rule (at most $MAX characters, 'pkg: what changed'):"
	printf '%s\n' "${bad[@]}"
	echo "check-commits: reword them before they are shared (git commit --amend for the last one)"
	exit 1
fi
echo "check-commits: $n commits in $*, subjects fine"

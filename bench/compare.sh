#!/usr/bin/env bash
# Side-by-side stdio comparison in one run: mcpgate's echo server (all
# phases), `mcpgate serve --stdio` (ping only: it has no echo tool) and the
# Go SDK and mcp-go peers, driven by the black-box harness in
# $MCPBENCH_SRC (default ../../shared/bench, outside this repository).
#
#   ./compare.sh                 # N=20000 REPS=3
#   N=2000 REPS=1 ./compare.sh   # quick
set -euo pipefail
cd "$(dirname "$0")"
SRC=${MCPBENCH_SRC:-$PWD/../../shared/bench}
N=${N:-20000}
REPS=${REPS:-3}
WORK=$PWD/.work
OUT=${OUT:-$WORK/results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$WORK/bin" "$OUT"
[ -d "$SRC/mcpbench" ] || { echo "harness not found in $SRC (set MCPBENCH_SRC)" >&2; exit 1; }

(cd "$SRC/mcpbench" && go build -o "$WORK/bin/mcpbench" .)
(cd "$SRC/peers" && go build -o "$WORK/bin/" ./gosdk ./mcpgo)
go build -o "$WORK/bin/mcpgate-echo" ./servers/echo
(cd .. && go build -o "$WORK/bin/mcpgate" ./cmd/mcpgate)
B=$WORK/bin/mcpbench
DB=$(mktemp -d)/tasks.db
rev=$(git rev-parse --short HEAD 2>/dev/null || echo dev)

{ echo "date: $(date -u +%FT%TZ)"; echo "nproc: $(nproc)"; echo "go: $(go version)"; echo "load: $(cat /proc/loadavg)"; echo "N=$N REPS=$REPS rev=$rev"; } | tee "$OUT/env.txt"

run() { # label flags... -- cmd...
	local label=$1; shift
	echo "stdio  $label"
	"$B" stdio -n "$N" -json -label "$label" "$@" >>"$OUT/stdio.jsonl" 2>>"$OUT/mcpbench.stderr" || echo "  FAILED"
}
starts() {
	local label=$1; shift
	for _ in 1 2 3 4 5; do "$B" stdio -phases none -json -label "$label" "$@" >>"$OUT/startup.jsonl" 2>>"$OUT/mcpbench.stderr" || true; done
}

for rep in $(seq "$REPS"); do
	echo "== repetition $rep of $REPS"
	run "mcpgate echo $rev" -- "$WORK/bin/mcpgate-echo"
	run "mcpgate serve $rev" -phases ping,pingpipe -- "$WORK/bin/mcpgate" serve --stdio --log-level error --db "$DB"
	run "go-sdk" -- "$WORK/bin/gosdk" -stdio
	run "mcp-go" -- "$WORK/bin/mcpgo" -stdio
	starts "mcpgate echo $rev" -- "$WORK/bin/mcpgate-echo"
	starts "go-sdk" -- "$WORK/bin/gosdk" -stdio
	starts "mcp-go" -- "$WORK/bin/mcpgo" -stdio
done
"$B" table "$OUT"/stdio.jsonl "$OUT"/startup.jsonl | tee "$OUT/table.md"
echo "results in $OUT"

#!/usr/bin/env bash
# Side-by-side comparison in one run, driven by the black-box harness in
# $MCPBENCH_SRC (default ../../shared/bench, outside this repository):
#   stdio: mcpgate's echo server (all phases), `mcpgate serve --stdio` (ping
#          only: it has no echo tool), and the Go SDK and mcp-go peers;
#   http:  tools/call echo with 1 and 32 clients against mcpgate's echo
#          server answering JSON and answering SSE, the Go SDK in both modes
#          (SSE is its default) and mcp-go.
#
#   ./compare.sh                 # N=20000 REPS=3
#   N=2000 REPS=1 ./compare.sh   # quick
#   ONLY=http ./compare.sh       # only the http runs (or ONLY=stdio)
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
http_run() { # label port c -- server command...
	local label=$1 port=$2 c=$3; shift 4
	echo "http   $label c=$c"
	"$@" >>"$OUT/servers.log" 2>&1 &
	local pid=$! up=""
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
		sleep 0.1
	done
	if [ -n "$up" ]; then
		"$B" http -url "http://127.0.0.1:$port/mcp" -n "$N" -c "$c" -json -label "$label" -pid "$pid" \
			>>"$OUT/http.jsonl" 2>>"$OUT/mcpbench.stderr" || echo "  FAILED"
	else
		echo "  server did not listen on $port"
	fi
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
starts() {
	local label=$1; shift
	for _ in 1 2 3 4 5; do "$B" stdio -phases none -json -label "$label" "$@" >>"$OUT/startup.jsonl" 2>>"$OUT/mcpbench.stderr" || true; done
}

ONLY=${ONLY:-stdio http}
want() { [[ " $ONLY " == *" $1 "* ]]; }
E=$WORK/bin/mcpgate-echo
for rep in $(seq "$REPS"); do
	echo "== repetition $rep of $REPS"
	if want stdio; then
		run "mcpgate echo $rev" -- "$E"
		run "mcpgate serve $rev" -phases ping,pingpipe -- "$WORK/bin/mcpgate" serve --stdio --log-level error --db "$DB"
		run "go-sdk" -- "$WORK/bin/gosdk" -stdio
		run "mcp-go" -- "$WORK/bin/mcpgo" -stdio
		starts "mcpgate echo $rev" -- "$E"
		starts "go-sdk" -- "$WORK/bin/gosdk" -stdio
		starts "mcp-go" -- "$WORK/bin/mcpgo" -stdio
	fi
	if want http; then
		for c in 1 32; do
			http_run "mcpgate echo $rev (JSON)" 18091 "$c" -- "$E" -http 127.0.0.1:18091
			http_run "mcpgate echo $rev (SSE)" 18092 "$c" -- "$E" -http 127.0.0.1:18092 -sse
			http_run "go-sdk (SSE)" 18093 "$c" -- "$WORK/bin/gosdk" -http 127.0.0.1:18093
			http_run "go-sdk (JSONResponse)" 18094 "$c" -- "$WORK/bin/gosdk" -http 127.0.0.1:18094 -json-response
			http_run "mcp-go" 18095 "$c" -- "$WORK/bin/mcpgo" -http 127.0.0.1:18095
		done
	fi
done
touch "$OUT/stdio.jsonl" "$OUT/startup.jsonl" "$OUT/http.jsonl"
"$B" table "$OUT"/stdio.jsonl "$OUT"/startup.jsonl "$OUT"/http.jsonl | tee "$OUT/table.md"
echo "results in $OUT"

#!/usr/bin/env bash
# bench/trace.sh [BUILD_DIR] - what the trace costs (issue 9), measured in one run:
#   1. the writer's throughput (bench/trace_writer: synthetic events, one producer);
#   2. bytes per event on disk for `python3 -c 'import json'` at --trace-level security;
#   3. wall time of a python start-up and the getppid loop under stockade with no trace,
#      --trace (security) and --trace-level all (every syscall: the strace mode),
#      interleaved, medians.
# Traces are written under /dev/shm (outside the places the sandbox may write, and off
# the disk: the disk's own speed is not the writer's). Exit 0 when every case ran.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
build=$(cd "${1:-./build}" && pwd)
REPS=${REPS:-11}
EVENTS=${EVENTS:-5000000}
KERNEL_ITERS=${KERNEL_ITERS:-200000}
need_built bench stockade bench/trace_writer bench/walltime bench/syscall_cost
# The system's interpreter: a pyenv one under /root is not executable by nobody (the
# command's user when this runs as root).
python=/usr/bin/python3
[[ -x $python ]] || python=$(python3 -c 'import sys; print(sys.executable)')
# Traces outside the places the sandbox may write; the runs themselves in a scratch cwd.
work=$(mktemp -d /dev/shm/stockade-trace-bench.XXXXXX)
scratch=$(mktemp -d /tmp/stockade-trace-bench.XXXXXX)
chmod 755 "$scratch"
trap 'rm -rf -- "$work" "$scratch"' EXIT
cd "$scratch"

echo "stockade trace bench: $(nproc) CPUs, kernel $(uname -r), medians of $REPS"

# 1. writer throughput
for i in 1 2 3; do "$build/bench/trace_writer" "$EVENTS" "$work"; done | tee "$work/w" |
	sed 's/^/  /'
echo "writer: $(sed 's/.* events_per_s=\([0-9]*\).*/\1/' "$work/w" | median) events/s wall clock," \
	"$(sed 's/.*writer_cpu_events_per_s=\([0-9]*\).*/\1/' "$work/w" | median) events per CPU-second" \
	"of the writer thread (target >= 1000000)"

# 2. bytes per event
for ((i = 0; i < REPS; i++)); do
	"$stockade" run --trace "$work/j.trace" -- "$python" -c 'import json' 2>/dev/null
	events=$("$stockade" trace export --format jsonl "$work/j.trace" |
		sed -n 's/^{"type":"end".*"events":\([0-9]*\).*/\1/p')
	echo "$(stat -c %s "$work/j.trace") $events" | awk '{printf "%.2f\n", $1 / $2}'
done >"$work/b"
echo "python3 -c 'import json', --trace-level security: $(median <"$work/b") bytes/event" \
	"($events events) (target <= 24)"

# 3. cost: no trace, --trace, --trace-level all; interleaved
variants=("none" "security" "all")
opts() {
	case $1 in
	none) ;;
	security) echo --trace "$work/c.trace" ;;
	all) echo --trace "$work/c.trace" --trace-level all ;;
	esac
}
for v in "${variants[@]}"; do : >"$work/py.$v"; : >"$work/k.$v"; done
for ((i = 0; i < REPS; i++)); do
	for v in "${variants[@]}"; do
		# shellcheck disable=SC2046
		"$build/bench/walltime" "$stockade" run $(opts "$v") -- "$python" \
			-c 'import json,email,http.client,sqlite3' >>"$work/py.$v" 2>/dev/null
		# shellcheck disable=SC2046
		"$stockade" run $(opts "$v") -- "$build/bench/syscall_cost" kernel "$KERNEL_ITERS" \
			2>/dev/null | sed -n 's/^kernel ns_per_iter=//p' >>"$work/k.$v"
	done
done
printf '%-44s %12s %12s %12s\n' "case" "no trace" "--trace" "--trace-level all"
printf '%-44s %10.2fms %10.2fms %10.2fms\n' "python3 import json,email,http.client,sqlite3" \
	"$(median <"$work/py.none" | awk '{print $1/1e6}')" \
	"$(median <"$work/py.security" | awk '{print $1/1e6}')" \
	"$(median <"$work/py.all" | awk '{print $1/1e6}')"
printf '%-44s %10.1fns %10.1fns %10.1fns\n' "getppid loop, per call" \
	"$(median <"$work/k.none")" "$(median <"$work/k.security")" "$(median <"$work/k.all")"

#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR] - stockade against the native run, side by side.
#
# Builds nothing: BUILD_DIR (default ./build) must hold stockade, bench/syscall_cost
# and bench/walltime (`cmake --build build --target bench`). Every case runs native
# and under `stockade run --` alternately, rep by rep, so that whatever else the
# machine does hits both sides alike; the table reports medians. See bench/README.md.
#
# Environment knobs (defaults in brackets):
#   REPS [11]        repetitions of each syscall loop, per side
#   CMD_REPS [31]    repetitions of each whole command, per side
#   KERNEL_ITERS [2000000] NOTIFY_ITERS [50000] OPENCLOSE_ITERS [20000]
#                    iterations inside one syscall_cost run
#   CASE_TIMEOUT [60] seconds one run may take before it counts as failed
#   PYTHON [python3]  the interpreter to time (its real executable, not a shim)
#
# Exit status: 0 when every case ran on both sides (a missed target is a result,
# not a failure), 1 when stockade (or the native run) failed a case, 2 on bad usage.
# Uses no network.

set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/run.sh [BUILD_DIR]

Time system-call loops and whole commands natively and under `stockade run --`,
interleaved, and print a table of medians. BUILD_DIR defaults to ./build.

Example:
  cmake --build build --target bench && bench/run.sh build
  REPS=21 CMD_REPS=51 bench/run.sh build
EOF
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	usage
	exit 0
fi
if (($# > 1)); then
	usage >&2
	exit 2
fi

REPS=${REPS:-11}
CMD_REPS=${CMD_REPS:-31}
KERNEL_ITERS=${KERNEL_ITERS:-2000000}
NOTIFY_ITERS=${NOTIFY_ITERS:-50000}
OPENCLOSE_ITERS=${OPENCLOSE_ITERS:-20000}
CASE_TIMEOUT=${CASE_TIMEOUT:-60}
PYTHON=${PYTHON:-python3}

whole_numbers REPS CMD_REPS KERNEL_ITERS NOTIFY_ITERS OPENCLOSE_ITERS CASE_TIMEOUT

find_build "${1:-./build}" bench stockade bench/syscall_cost bench/walltime
syscall_cost=$build/bench/syscall_cost
limit_runs

scratch "${TMPDIR:-/tmp}" stockade-bench
# Everything runs from the scratch directory: gcc writes hello.o here, and no case
# touches the caller's tree.
cd "$work"

failed=0
results=$work/results # one line per case, read by report()
: >"$results"

# Prepended to both sides of a syscall loop (taskset for the one-CPU case); the
# stockade side gets it outside, so that supervisor and program share it.
prefix=()

# loop_once SIDE MODE ITERS OUT: one syscall_cost run; appends ns/iter to OUT.
loop_once() {
	local side=$1 mode=$2 iters=$3 out=$4 line rc=0
	local cmd=("$syscall_cost" "$mode" "$iters")

	if [[ $side == stockade ]]; then
		cmd=("$stockade" run "${as_user[@]}" -- "${cmd[@]}")
	fi
	cmd=("${prefix[@]}" "${cmd[@]}")
	line=$("${limit[@]}" "${cmd[@]}" 2>"$work/stderr") || rc=$?
	if ((rc != 0)) || ! [[ $line =~ ^$mode\ ns_per_iter=([0-9.]+)$ ]]; then
		note "run.sh: $side $mode failed ($(why "$rc")): ${cmd[*]}"
		sed 's/^/    /' "$work/stderr" >&2
		return 1
	fi
	echo "${BASH_REMATCH[1]}" >>"$out"
}

# cmd_once SIDE OUT CMD...: one wall-time sample of a whole command; appends ns to OUT.
cmd_once() {
	local side=$1 out=$2 ns rc=0
	shift 2
	local cmd=("$@")

	if [[ $side == stockade ]]; then
		cmd=("$stockade" run "${as_user[@]}" -- "${cmd[@]}")
	fi
	ns=$("${limit[@]}" "$walltime" "${cmd[@]}" 2>"$work/stderr") || rc=$?
	if ((rc != 0)) || ! [[ $ns =~ ^[0-9]+$ ]]; then
		note "run.sh: $side run failed ($(why "$rc")): ${cmd[*]}"
		sed 's/^/    /' "$work/stderr" >&2
		return 1
	fi
	echo "$ns" >>"$out"
}

# record NAME LABEL TARGET_KIND TARGET_VALUE: summarise NAME's samples into $results.
# TARGET_KIND: ratio (stockade/native <= value), abs (stockade <= value ns),
# delta (stockade - native <= value ns).
record() {
	local name=$1 label=$2 kind=$3 value=$4 n s
	n=$(stats "$work/$name.native")
	s=$(stats "$work/$name.stockade")
	printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$n" "$s" "$kind" "$value" >>"$results"
}

record_failed() {
	printf '%s\tFAILED\n' "$1" >>"$results"
	failed=1
}

# side_by_side REPS RUNNER ARGS...: RUNNER SIDE ARGS... for both sides, REPS times,
# alternating which side goes first so neither always runs on a cache the other warmed.
side_by_side() {
	local reps=$1 i first second
	shift
	local runner=$1
	shift
	for ((i = 0; i < reps; i++)); do
		if ((i % 2 == 0)); then
			first=native second=stockade
		else
			first=stockade second=native
		fi
		"$runner" "$first" "$@" || return 1
		"$runner" "$second" "$@" || return 1
	done
}

# bench_loop NAME MODE ITERS LABEL TARGET_KIND TARGET_VALUE
bench_loop() {
	local name=$1 mode=$2 iters=$3 label=$4 kind=$5 value=$6

	note "run.sh: $label: $REPS x 2 runs of $iters iterations"
	: >"$work/$name.native"
	: >"$work/$name.stockade"
	# Warm-up pair, not recorded: page cache, and the first exec of stockade.
	if loop_once native "$mode" "$iters" /dev/null &&
		loop_once stockade "$mode" "$iters" /dev/null &&
		side_by_side "$REPS" loop_once_pair "$name" "$mode" "$iters"; then
		record "$name" "$label" "$kind" "$value"
	else
		record_failed "$label"
	fi
}

# loop_once with the output file derived from the case and the side, for side_by_side.
loop_once_pair() {
	loop_once "$1" "$3" "$4" "$work/$2.$1"
}

bench_cmd() {
	local name=$1 label=$2 kind=$3 value=$4
	shift 4

	note "run.sh: $label: $CMD_REPS x 2 runs"
	: >"$work/$name.native"
	: >"$work/$name.stockade"
	if cmd_once native /dev/null "$@" && cmd_once stockade /dev/null "$@" &&
		side_by_side "$CMD_REPS" cmd_once_pair "$name" "$@"; then
		record "$name" "$label" "$kind" "$value"
	else
		record_failed "$label"
	fi
}

cmd_once_pair() {
	local side=$1 name=$2
	shift 2
	cmd_once "$side" "$work/$name.$side" "$@"
}

# A sandbox that cannot start at all fails every case the same way: say it once.
if ! "${limit[@]}" "$stockade" run "${as_user[@]}" -- /bin/true 2>"$work/stderr"; then
	note "run.sh: \`$stockade run -- /bin/true\` fails on this host:"
	sed 's/^/    /' "$work/stderr" >&2
	exit 1
fi

start=$(date +%s)

bench_loop kernel kernel "$KERNEL_ITERS" "kernel: getppid loop" ratio 1.2
bench_loop notify notify "$NOTIFY_ITERS" "notify: getpgid loop" delta 3000
# The same loop with program and supervisor held on one CPU: no cross-CPU wake-up
# (on a VM, an IPI to an idle vCPU) on either leg. Not a target, a diagnosis: the
# gap to the row above is what wake-up placement costs, this row what the round
# trip costs by itself.
if command -v taskset >/dev/null && (($(nproc) > 1)); then
	prefix=(taskset -c 0)
	bench_loop notify1cpu notify "$NOTIFY_ITERS" "notify: same, on one CPU" info 0
	prefix=()
fi
bench_loop openclose openclose "$OPENCLOSE_ITERS" "open+fstat+close loop" abs 5000
bench_loop statmissing statmissing "$OPENCLOSE_ITERS" "stat of a missing file" abs 3000
# The other ways the calls that look are made (issues 6 and 7): a relative name from the cwd,
# fstatat(dirfd, name) as find and ls do, and a listing of the scratch directory.
bench_loop statcwd statcwd "$OPENCLOSE_ITERS" "stat of a missing relative name" info 0
bench_loop statrel statrel "$OPENCLOSE_ITERS" "fstatat(dirfd, name) loop" info 0
bench_loop listdir listdir "$OPENCLOSE_ITERS" "getdents64 of a dir, to its end" info 0

bench_cmd true "/bin/true start-up" abs 5000000 /bin/true

# The real interpreter, not a pyenv/asdf shim (a shell script that would be timed too).
if python=$(command -v "$PYTHON") &&
	python=$("$python" -c 'import sys; print(sys.executable)' 2>/dev/null) && [[ -x $python ]]; then
	bench_cmd python "python3 import json,email,..." ratio 1.3 \
		"$python" -c 'import json,email,http.client,sqlite3'
else
	note "run.sh: no $PYTHON; skipping the python case"
fi

if gcc=$(command -v gcc); then
	printf '#include <stdio.h>\n\nint main(void)\n{\n\tputs("hello");\n\treturn 0;\n}\n' >hello.c
	bench_cmd gcc "gcc -O2 -c hello.c" ratio 1.3 "$gcc" -O2 -c hello.c -o hello.o
else
	note "run.sh: no gcc; skipping the gcc case"
fi

note "run.sh: done in $(($(date +%s) - start)) s"

# The table. Times are ns internally; fmt() picks the unit.
echo
printf 'stockade bench: %s, %s CPUs, kernel %s; medians of %s (loops) / %s (commands) interleaved runs per side\n' \
	"$build" "$(nproc)" "$(uname -r)" "$REPS" "$CMD_REPS"
awk -F'\t' '
	function fmt(ns) {
		if (ns < 1e3) return sprintf("%.1f ns", ns)
		if (ns < 1e6) return sprintf("%.2f us", ns / 1e3)
		if (ns < 1e9) return sprintf("%.2f ms", ns / 1e6)
		return sprintf("%.2f s", ns / 1e9)
	}
	BEGIN {
		row = "%-32s %11s %11s %7s  %-23s %-14s %s\n"
		printf row, "case", "native", "stockade", "ratio", "stockade min..max", "target", ""
	}
	$2 == "FAILED" { printf row, $1, "-", "FAILED", "-", "", "", ""; next }
	{
		split($2, n, " "); split($3, s, " ")
		ratio = n[1] > 0 ? s[1] / n[1] : 0
		if ($4 == "ratio") { got = ratio; tgt = sprintf("<= %.2fx", $5) }
		else if ($4 == "abs") { got = s[1]; tgt = "<= " fmt($5) }
		else if ($4 == "delta") { got = s[1] - n[1]; tgt = "rtt <= " fmt($5) }
		else tgt = "(info)"
		printf row, $1, fmt(n[1]), fmt(s[1]), sprintf("%.2fx", ratio),
			fmt(s[2]) ".." fmt(s[3]), tgt, $4 == "info" ? "" : got <= $5 ? "ok" : "MISS"
		med[$1 "/n"] = n[1]; med[$1 "/s"] = s[1]
	}
	END {
		print ""
		print "derived (stockade median - native median):"
		split("kernel: getppid loop|notify: getpgid loop|notify: same, on one CPU|open+fstat+close loop", k, "|")
		split("BPF filter, per allowed syscall|notification round trip, per call|... with both on one CPU|open+fstat+close, per iteration", what, "|")
		for (i = 1; i in k; i++)
			if ((k[i] "/n") in med)
				printf "  %-36s %s\n", what[i] ":", fmt(med[k[i] "/s"] - med[k[i] "/n"])
	}' "$results"

if ((failed)); then
	note "run.sh: some cases FAILED (see above)"
	exit 1
fi

#!/usr/bin/env bash
# bench/fast.sh [BUILD_DIR] - what `stockade run --fast` buys, side by side.
#
# Each case is timed natively, under `stockade run -q` (the default view: the current
# directory copy-on-write) and under `stockade run -q --fast` (stat, access, readlink and
# listings left to the kernel), alternately, rep by rep, so that whatever else the machine
# does hits every side alike; the table reports medians. See bench/README.md ("What --fast
# buys"). The cases:
#   1. start-up: /bin/true
#   2. gcc -O2 -c hello.c                                   (skipped without gcc)
#   3. /usr/bin/python3 -c 'import json,email,http.client,sqlite3'
#                                (the real binary, not a pyenv shim; skipped without it)
#   4. ls -laR over a tree of TREE_FILES files (50 directories)
#   5. find . -printf '%s %p\n' over the same tree
#   6. git status in a committed GIT_FILES-file repository, 1% of the files modified
#                                                           (skipped without git)
# With RW=1 (the default) cases 4-6 also run under `--rw .` and `--rw . --fast` in the same
# rounds (five sides, one round each), and a second table shows them against the same native
# runs: that separates what the overlay costs from what the interception costs.
#
# One unrecorded warm-up round, then REPS rounds; each round starts one side further on
# (native, default, fast; then default, fast, native; ...), so that no side always runs right
# after the same other one. Each command is timed by bench/walltime (spawn to reap, stdout to
# /dev/null). As root the sandbox runs `--user root`: the bench measures the interception,
# not nobody's rights. The copy-on-write runs that change something (gcc's hello.o, git's
# index lock) keep one named session per case and side for the whole case, so that every
# recorded run starts from the same state; the sessions are discarded after the case.
#
# Everything lives in one scratch directory under BENCH_DIR (sessions in its own
# --state-dir, shared by all the stockade sides), removed at the end. Not /tmp: the sandbox's
# /tmp is private.
#
# Environment knobs (defaults in brackets):
#   REPS [7]             recorded runs of each case, per side (one unrecorded round first)
#   TREE_FILES [5000]    files in the tree of cases 4 and 5 (a multiple of 50)
#   GIT_FILES [2000]     files in the repository of case 6 (a multiple of 20)
#   RW [1]               1: also run cases 4-6 under --rw . and --rw . --fast; 0: not
#   CASES [true gcc python ls find git]  which cases to run
#   CASE_TIMEOUT [120]   seconds one run may take before it counts as failed
#   BENCH_DIR [/var/tmp] where the scratch directory goes
#
# Exit status: 0 when every case ran on every side (a skipped case is noted, not a failure),
# 1 when a run failed (which one and why is printed), 2 on bad usage or a missing build or
# tool. Uses no network.

set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/fast.sh [BUILD_DIR]

Time start-up, gcc, python imports, ls -laR, find and git status natively, under
`stockade run` (the default copy-on-write view) and under `stockade run --fast`,
interleaved, and print a table of medians. BUILD_DIR defaults to ./build.

Knobs (environment): REPS (7), TREE_FILES (5000), GIT_FILES (2000), RW (1: also
cases ls, find, git under --rw .), CASES ("true gcc python ls find git"),
CASE_TIMEOUT (120), BENCH_DIR (/var/tmp; not /tmp).

Example:
  cmake --build build --target stockade walltime && bench/fast.sh build
  REPS=3 TREE_FILES=1000 GIT_FILES=200 bench/fast.sh build        # a quick try
  RW=0 CASES="ls find" bench/fast.sh build
EOF
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	usage
	exit 0
fi
if (($# > 1)) || [[ ${1:-} == -* ]]; then
	usage >&2
	exit 2
fi

REPS=${REPS:-7}
TREE_FILES=${TREE_FILES:-5000}
GIT_FILES=${GIT_FILES:-2000}
RW=${RW:-1}
CASES=${CASES:-true gcc python ls find git}
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
BENCH_DIR=${BENCH_DIR:-/var/tmp}

whole_numbers REPS TREE_FILES GIT_FILES CASE_TIMEOUT
if ((TREE_FILES % 50 || GIT_FILES % 20)); then
	echo "fast.sh: TREE_FILES must be a multiple of 50, GIT_FILES of 20" >&2
	exit 2
fi
if [[ $RW != [01] ]]; then
	echo "fast.sh: RW must be 0 or 1" >&2
	exit 2
fi
for c in $CASES; do
	case $c in
	true | gcc | python | ls | find | git) ;;
	*)
		echo "fast.sh: CASES: unknown case \`$c\` (true gcc python ls find git)" >&2
		exit 2
		;;
	esac
done
want() { [[ " $CASES " == *" $1 "* ]]; }

find_build "${1:-./build}" "stockade walltime" stockade bench/walltime
for t in find ls; do
	command -v "$t" >/dev/null || { echo "fast.sh: needs $t" >&2; exit 2; }
done
# $work in BENCH_DIR, its sessions in $state, and $sbx, the default view keeping them there.
session_scratch bench-fast-run
limit_runs

# git: no user or system configuration on any side; commits need a name.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
	GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid

failed=0
failures=()   # "case side: why", for the summary
results=$work/results # one line per row, read by the tables
: >"$results"

# on_side CASE SIDE: cd to where SIDE runs and set pre=() to what goes before the command.
# The copy-on-write sides run in $dir, the native and --rw . sides in $native_dir.
on_side() {
	local name=$1 side=$2
	case $side in
	native) cd "$native_dir" && pre=() ;;
	default) cd "$dir" && pre=("${sbx[@]}" --session "fb-$name-default" --) ;;
	fast) cd "$dir" && pre=("${sbx[@]}" --fast --session "fb-$name-fast" --) ;;
	rw) cd "$native_dir" && pre=("${sbx[@]}" --rw . --) ;;
	rwfast) cd "$native_dir" && pre=("${sbx[@]}" --rw . --fast --) ;;
	esac
}

# run_side CASE SIDE OUT: one sample of the case's command ($cmd) on SIDE.
run_side() {
	on_side "$1" "$2" && sample "$3" "${pre[@]}" "${cmd[@]}"
}

# same CASE LABEL SIDE... -- CMD...: untimed, CMD's output (sorted) must be the same on every
# side: a side that saw less (a file the view or the kernel left out) would look cheaper.
same() {
	local name=$1 label=$2 sides=() s sum ref='' rc
	shift 2
	while [[ $1 != -- ]]; do
		sides+=("$1")
		shift
	done
	shift
	for s in "${sides[@]}"; do
		on_side "$name" "$s"
		rc=0
		sum=$("${limit[@]}" "${pre[@]}" "$@" 2>"$work/stderr" | sort | md5sum) || rc=$?
		if ((rc)); then
			last_why="the check \`$*\` failed on $s (exit $rc)"
		elif [[ -z $ref ]]; then
			ref=$sum
			continue
		elif [[ $sum == "$ref" ]]; then
			continue
		else
			last_why="\`$*\` shows something else on $s than natively"
		fi
		note "fast.sh: $label: $last_why"
		grep -v 'holds hidden paths' "$work/stderr" | sed 's/^/    /' >&2 || true
		printf '%s\t%s\tFAILED\t%s\n' "$name" "$label" "$last_why" >>"$results"
		failures+=("$label: $last_why")
		failed=1
		return 1
	done
}

# bench CASE LABEL SIDE...: one unrecorded round, then REPS rounds over the sides, starting
# each round one side further on; samples go to $work/CASE.SIDE, and one line per side to
# the results ("CASE<TAB>LABEL<TAB>SIDE<TAB>median min max"), or a FAILED line.
bench() {
	local name=$1 label=$2 i j k n s
	shift 2
	local sides=("$@")
	n=${#sides[@]}
	note "fast.sh: $label: 1 + $REPS rounds of ${sides[*]}"
	for s in "${sides[@]}"; do
		: >"$work/$name.$s"
	done
	for ((i = -1; i < REPS; i++)); do
		for ((j = 0; j < n; j++)); do
			k=$(((i + 1 + j) % n))
			s=${sides[k]}
			if ! run_side "$name" "$s" "$( ((i < 0)) && echo /dev/null || echo "$work/$name.$s")"; then
				printf '%s\t%s\tFAILED\t%s\n' "$name" "$label" "$s: $last_why" >>"$results"
				failures+=("$label, $s: $last_why")
				failed=1
				discard "fb-$name-default"
				discard "fb-$name-fast"
				return 0
			fi
		done
	done
	for s in "${sides[@]}"; do
		printf '%s\t%s\t%s\t%s\n' "$name" "$label" "$s" "$(stats "$work/$name.$s")" >>"$results"
	done
	discard "fb-$name-default"
	discard "fb-$name-fast"
}

# skip CASE LABEL WHY: a row that says why the case did not run.
skip() {
	note "fast.sh: skipping $2 ($3)"
	printf '%s\t%s\tSKIPPED\t%s\n' "$1" "$2" "$3" >>"$results"
}

sides=(native default fast)
tree_sides=(native default fast)
((RW)) && tree_sides+=(rw rwfast)

start=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 1. start-up ---------------------------------------------------------------------------
if want true; then
	dir=$work/ws-true native_dir=$dir
	mkdir "$dir"
	cmd=(/bin/true)
	bench true "/bin/true" "${sides[@]}"
fi

# ---- 2. gcc --------------------------------------------------------------------------------
# The native side compiles in a copy of the directory: its hello.o does not change the
# sandboxes' lower directory.
if want gcc; then
	if command -v gcc >/dev/null; then
		dir=$work/ws-gcc native_dir=$work/gcc-native
		mkdir "$dir" "$native_dir"
		printf '#include <stdio.h>\n\nint main(void)\n{\n\tputs("hello");\n\treturn 0;\n}\n' \
			| tee "$dir/hello.c" >"$native_dir/hello.c"
		cmd=(gcc -O2 -c hello.c)
		bench gcc "gcc -O2 -c hello.c" "${sides[@]}"
	else
		skip gcc "gcc -O2 -c hello.c" "no gcc"
	fi
fi

# ---- 3. python -----------------------------------------------------------------------------
# The real binary: python3 on PATH may be a pyenv shim (a shell script, slow).
if want python; then
	if [[ -x /usr/bin/python3 ]]; then
		dir=$work/ws-python native_dir=$dir
		mkdir "$dir"
		cmd=(/usr/bin/python3 -c 'import json,email,http.client,sqlite3')
		bench python "python3 import json,email,..." "${sides[@]}"
	else
		skip python "python3 import json,email,..." "no /usr/bin/python3"
	fi
fi

# ---- 4, 5. ls -laR and find over a tree ----------------------------------------------------
if want ls || want find; then
	dir=$work/ws-tree native_dir=$dir
	mkdir "$dir"
	per=$((TREE_FILES / 50))
	note "fast.sh: making a tree of $TREE_FILES files (50 directories of $per)"
	for ((d = 0; d < 50; d++)); do
		mkdir "$dir/d$d"
		for ((i = 0; i < per; i++)); do
			echo "file $d.$i" >"$dir/d$d/f$i"
		done
	done
	# Names, sizes, modes and types, as every side sees them (ls -l's link counts and
	# directory sizes differ in the overlay by design).
	listing=(find . -printf '%p %s %m %y\n')
	if want ls; then
		cmd=(ls -laR)
		label="ls -laR, $TREE_FILES files"
		same ls "$label" "${tree_sides[@]}" -- "${listing[@]}" &&
			bench ls "$label" "${tree_sides[@]}"
	fi
	if want find; then
		cmd=(find . -printf '%s %p\n')
		label="find -printf, $TREE_FILES files"
		same find "$label" "${tree_sides[@]}" -- "${listing[@]}" &&
			bench find "$label" "${tree_sides[@]}"
	fi
fi

# ---- 6. git status -------------------------------------------------------------------------
# GIT_FILES files in 20 directories, committed; then every 100th file (at least one) changed.
# The index is refreshed once natively (untimed) after a second, so that no file is as new
# as the index ("racily clean", re-read by every status) and no side has to write it.
if want git; then
	if command -v git >/dev/null; then
		dir=$work/ws-git native_dir=$dir
		mkdir "$dir"
		cd "$dir"
		note "fast.sh: making a git repository of $GIT_FILES files"
		per=$((GIT_FILES / 20))
		for ((d = 0; d < 20; d++)); do
			mkdir "src$d"
			for ((i = 0; i < per; i++)); do
				printf '/* unit %d.%d */\nint f_%d_%d(int x)\n{\n\treturn x + %d;\n}\n' \
					"$d" "$i" "$d" "$i" "$i" >"src$d/u$i.c"
			done
		done
		quiet git init -q .
		quiet git add -A
		quiet git commit -q -m init
		n=0
		for f in src*/*.c; do
			n=$((n + 1))
			if ((n % 100 == 0 || n == GIT_FILES)); then
				echo "/* changed */" >>"$f"
			fi
		done
		sleep 1
		quiet git status
		cmd=(git status)
		label="git status, $GIT_FILES files"
		same git "$label" "${tree_sides[@]}" -- git status --porcelain &&
			bench git "$label" "${tree_sides[@]}"
	else
		skip git "git status" "no git"
	fi
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
note "fast.sh: done in $(($(date +%s) - start)) s"

# ---- the tables ----------------------------------------------------------------------------
echo
printf 'stockade --fast bench: %s, %s CPUs, kernel %s, uid %s%s, %s on %s\n' \
	"$build" "$(nproc)" "$(uname -r)" "$(id -u)" "${as_user[*]:+ (${as_user[*]})}" \
	"$(findmnt -no FSTYPE -T "$work" 2>/dev/null || echo '?')" "$BENCH_DIR"
printf 'medians of %s interleaved runs per side, in ms; load average %s before, %s after\n' \
	"$REPS" "$load_before" "$load_after"
# table BASE A B TITLE_A TITLE_B SHORT_A SHORT_B ONLY: one row per case, A and B against the
# native runs (and B against A); ONLY, if not empty, the cases to show.
table() {
	awk -F'\t' -v a="$1" -v b="$2" -v ta="$3" -v tb="$4" -v sa="$5" -v sb="$6" -v only="$7" '
		function ms(ns) { return sprintf("%.2f", ns / 1e6) }
		function spread(v,   f) { split(v, f, " "); return sprintf("%.1f..%.1f", f[2] / 1e6, f[3] / 1e6) }
		function shown(c) { return only == "" || index(" " only " ", " " c " ") }
		BEGIN {
			row = "%-30s %8s %8s %11s %14s %14s %14s  %s\n"
			printf row, "case", "native", ta, tb, sa "/native", sb "/native", sb "/" sa, \
				"min..max: native; " ta "; " tb
		}
		$3 == "SKIPPED" { if (shown($1)) { seen[$1]; lab[$1] = $2; skp[$1] = $4; order[++n] = $1 } next }
		$3 == "FAILED" { if (!(($1) in seen)) { seen[$1]; lab[$1] = $2; order[++n] = $1 } bad[$1] = $4; next }
		{
			if (!(($1) in seen)) { seen[$1]; lab[$1] = $2; order[++n] = $1 }
			v[$1, $3] = $4
		}
		END {
			for (i = 1; i <= n; i++) {
				c = order[i]
				if (!shown(c)) continue
				if (c in skp) { printf row, lab[c], "-", "-", "-", "", "", "", "skipped: " skp[c]; continue }
				if (c in bad) { printf row, lab[c], "-", "-", "-", "", "", "", "FAILED (" bad[c] ")"; continue }
				if (!((c, a) in v)) continue
				split(v[c, "native"], n0, " "); split(v[c, a], a0, " "); split(v[c, b], b0, " ")
				printf row, lab[c], ms(n0[1]), ms(a0[1]), ms(b0[1]),
					sprintf("%.2fx", a0[1] / n0[1]), sprintf("%.2fx", b0[1] / n0[1]),
					sprintf("%.2fx", b0[1] / a0[1]),
					spread(v[c, "native"]) "; " spread(v[c, a]) "; " spread(v[c, b])
			}
		}' "$results"
}
echo
table default fast default --fast default fast ""
if ((RW)); then
	echo
	echo "ls, find and git status with the current directory writable (--rw .), against the same native runs:"
	table rw rwfast "--rw ." "--rw . --fast" rw rwfast "ls find git"
fi
echo
echo "default = stockade run -q (the current directory copy-on-write); --fast = the same with --fast;"
echo "x/native = median / native median; fast/default = median --fast / median default"

if ((failed)); then
	note ""
	note "fast.sh: runs FAILED:"
	for f in "${failures[@]}"; do
		note "  $f"
	done
	exit 1
fi

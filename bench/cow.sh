#!/usr/bin/env bash
# bench/cow.sh [BUILD_DIR] - what the copy-on-write workspace costs, side by side.
#
# Four cases, each timed natively (or, for b, under `stockade run --rw .`) and under
# `stockade run -q` with the default view (the current directory copy-on-write), alternately,
# rep by rep, so that whatever else the machine does hits both sides alike; the table reports
# medians. See bench/README.md ("The copy-on-write workspace").
#   a) the first write of a BIG_MIB file (the copy-up) vs native `cp --reflink=auto`
#   b) writing a new file, reading a copied-up file, creating and first-writing small files:
#      cow vs `--rw .` (the same stockade, no overlay)
#   c) `ls -laR` and `find -printf` over a merged tree of TREE_FILES files vs native
#   d) `git status` in a GIT_FILES-file repository worked on in the session vs native
# plus the fixed start-up (`stockade run -- true` vs `true`), to read the ratios with.
#
# Everything lives in one scratch directory under BENCH_DIR (sessions in its own
# --state-dir), removed at the end. Not /tmp: the sandbox's /tmp is private.
#
# Environment knobs (defaults in brackets):
#   REPS [7]           recorded runs of each case, per side (one unrecorded round first)
#   TRUE_REPS [3*REPS] runs of the start-up case, per side
#   BIG_MIB [1024]     size of case a's file
#   RW_MIB [256]       size of case b's written and read files
#   SMALL_FILES [1000] files created / first-written in case b
#   TREE_FILES [5000]  files in case c's tree (a multiple of 100, at least 1000)
#   GIT_FILES [2000]   files in case d's repository (a multiple of 20)
#   CASES [a b c d]    which cases to run (the start-up is always measured)
#   CASE_TIMEOUT [600] seconds one run may take before it counts as failed
#   BENCH_DIR [/var/tmp] where the scratch directory goes (needs ~2*BIG_MIB free)
#   COW_EMUL [0]       1: without a mount namespace (STOCKADE_TEST_DISABLE=userns,ipcns),
#                      the layers merged by the supervisor instead of overlayfs
#
# Exit status: 0 when every case ran on every side (a missed target is a result, not a
# failure), 1 when a run failed, 2 on bad usage or a missing build or tool. Uses no network.

set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/cow.sh [BUILD_DIR]

Time the copy-on-write workspace (copy-up, writes and reads, listings of a merged
tree, git status) natively and under `stockade run`, interleaved, and print a table
of medians. BUILD_DIR defaults to ./build.

Example:
  cmake --build build --target bench && bench/cow.sh build
  REPS=11 CASES="c d" bench/cow.sh build
  BIG_MIB=16 RW_MIB=8 TREE_FILES=1000 GIT_FILES=200 REPS=2 bench/cow.sh build   # a quick try
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

REPS=${REPS:-7}
TRUE_REPS=${TRUE_REPS:-$((3 * REPS))}
BIG_MIB=${BIG_MIB:-1024}
RW_MIB=${RW_MIB:-256}
SMALL_FILES=${SMALL_FILES:-1000}
TREE_FILES=${TREE_FILES:-5000}
GIT_FILES=${GIT_FILES:-2000}
CASES=${CASES:-a b c d}
CASE_TIMEOUT=${CASE_TIMEOUT:-600}
BENCH_DIR=${BENCH_DIR:-/var/tmp}

whole_numbers REPS TRUE_REPS BIG_MIB RW_MIB SMALL_FILES TREE_FILES GIT_FILES CASE_TIMEOUT
if ((TREE_FILES % 100 || TREE_FILES < 1000 || GIT_FILES % 20)); then
	echo "cow.sh: TREE_FILES must be a multiple of 100 from 1000, GIT_FILES of 20" >&2
	exit 2
fi
for c in $CASES; do
	[[ $c == [abcd] ]] || { echo "cow.sh: CASES: unknown case \`$c\` (a b c d)" >&2; exit 2; }
done
want() { [[ " $CASES " == *" $1 "* ]]; }

find_build "${1:-./build}" bench stockade bench/walltime
for t in cp dd find ls git sync; do
	command -v "$t" >/dev/null || { echo "cow.sh: needs $t" >&2; exit 2; }
done
# $work in BENCH_DIR, its sessions in $state, and $sbx, the default view keeping them there.
session_scratch bench-cow-run
limit_runs

failed=0
results=$work/results # one line per row, read by the table
: >"$results"

# interleave CASE REPS SIDE...: calls CASE_SIDE OUTFILE for every side, REPS rounds after one
# unrecorded warm-up round, starting each round one side further on, so that no side always
# runs right after the same other one. Samples go to $work/CASE.SIDE.
interleave() {
	local name=$1 reps=$2 i j k n
	shift 2
	local sides=("$@")
	n=${#sides[@]}
	for s in "${sides[@]}"; do
		: >"$work/$name.$s"
	done
	for s in "${sides[@]}"; do
		"${name}_$s" /dev/null || return 1
	done
	for ((i = 0; i < reps; i++)); do
		for ((j = 0; j < n; j++)); do
			k=$(((i + j) % n))
			"${name}_${sides[k]}" "$work/$name.${sides[k]}" || return 1
		done
	done
}

# record LABEL CASE BASE_SIDE SIDE KIND VALUE: a row of the table, SIDE against BASE_SIDE.
# KIND: ratio (median SIDE / median BASE_SIDE <= VALUE) or info (no target).
record() {
	local label=$1 name=$2 base=$3 side=$4 kind=$5 value=$6
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$base" "$side" \
		"$(stats "$work/$name.$base")" "$(stats "$work/$name.$side")" "$kind" "$value" >>"$results"
}

record_failed() {
	printf '%s\tFAILED\n' "$1" >>"$results"
	failed=1
}

# bench CASE REPS SIDE... -- ROW...: run the case, then record each row, given as
# "LABEL|CASE|BASE_SIDE|SIDE|KIND|VALUE" (record's arguments).
bench() {
	local name=$1 reps=$2 sides=() rows=() r f
	shift 2
	while (($#)) && [[ $1 != -- ]]; do
		sides+=("$1")
		shift
	done
	shift
	rows=("$@")
	if interleave "$name" "$reps" "${sides[@]}"; then
		for r in "${rows[@]}"; do
			IFS='|' read -r -a f <<<"$r"
			record "${f[@]}"
		done
	else
		for r in "${rows[@]}"; do
			record_failed "${r%%|*}"
		done
	fi
}

start=$(date +%s)

# ---- start-up: `true` -------------------------------------------------------------------
mkdir "$work/ws-true"
cd "$work/ws-true"
true_native() { sample "$1" true; }
true_cow() { sample "$1" "${sbx[@]}" -- true; }
true_rw() { sample "$1" "${sbx[@]}" --rw . -- true; }
note "cow.sh: start-up: $TRUE_REPS rounds of true, stockade (cow .), stockade --rw ."
bench true "$TRUE_REPS" native cow rw -- \
	"start-up: true|true|native|cow|info|0" \
	"start-up: true, --rw .|true|native|rw|info|0"

# ---- a) the first write of a big file: the copy-up ---------------------------------------
if want a; then
	mkdir "$work/ws-a"
	cd "$work/ws-a"
	note "cow.sh: a) writing a $BIG_MIB MiB file"
	quiet dd if=/dev/urandom of=big bs=1M count="$BIG_MIB" status=none
	quiet sync
	# Each sample starts with nothing dirty (sync, untimed): the previous run's 1 GiB of
	# writeback must not land in this one.
	a_native() {
		quiet sync && sample "$1" cp --reflink=auto big big2 && rm -f big2
	}
	a_fsync() {
		quiet sync && sample "$1" sh -c 'cp --reflink=auto big big2 && sync big2' && rm -f big2
	}
	a_cow() {
		quiet sync &&
			sample "$1" "${sbx[@]}" --session a -- dd if=/dev/zero of=big bs=1 count=1 \
				conv=notrunc status=none || return 1
		# The copy-up must have happened, in full.
		if [[ $(stat -c %s "$state/sessions/a/0/upper/big" 2>/dev/null) != $((BIG_MIB << 20)) ]]; then
			note "cow.sh: a) the session holds no copy of big after the write"
			return 1
		fi
		discard a
	}
	note "cow.sh: a) $REPS rounds: cp --reflink=auto, cp + fsync, stockade first write"
	bench a "$REPS" native fsync cow -- \
		"a) first write of ${BIG_MIB} MiB file|a|native|cow|ratio|1.5" \
		"a) ... vs native cp + fsync|a|fsync|cow|info|0" \
		"a) (native cp + fsync vs cp)|a|native|fsync|info|0"
fi

# ---- b) new writes and reads: cow vs --rw . -----------------------------------------------
if want b; then
	mkdir "$work/ws-b-cow" "$work/ws-b-rw" "$work/ws-b-cow/small" "$work/ws-b-rw/small"
	note "cow.sh: b) writing two $RW_MIB MiB files and 2 x $SMALL_FILES small files"
	for d in "$work/ws-b-cow" "$work/ws-b-rw"; do
		cd "$d"
		quiet dd if=/dev/urandom of=data bs=1M count="$RW_MIB" status=none
		for ((i = 0; i < SMALL_FILES; i++)); do
			printf 'line %d\n%4000s\n' "$i" x >"small/s$i"
		done
	done
	cd "$work/ws-b-cow"
	# The read side's session: data copied up once (opened for append), kept for every rep.
	quiet "${sbx[@]}" --session b-read -- sh -c ': >>data'
	[[ -f $state/sessions/b-read/0/upper/data ]] ||
		{ note "cow.sh: b) no copy-up of data in session b-read"; exit 1; }
	quiet sync

	# The small files' loops run in one shell: one open per file, no fork.
	# shellcheck disable=SC2016 # expanded by the sandbox's sh
	create_small='mkdir "$2" && cd "$2" && i=0; while [ $i -lt $1 ]; do echo $i >new$i; i=$((i + 1)); done'
	# shellcheck disable=SC2016
	append_small='for f in small/*; do echo more >>"$f"; done'
	# Nothing made by b3 and b4 is removed before the end of b: ext4 skips the inodes it freed
	# in the last minutes when it allocates one (recently_deleted), a scan that made 1,000
	# creates take 0.5 s natively right after 1,000 deletions; that would time ext4, not us.
	n_made=0
	keep=()

	# Each b case runs three ways: cow (a session over ws-b-cow), --rw . (in ws-b-rw) and
	# native (in ws-b-rw): PREFIX... is empty or the --rw . sandbox.
	rw_sbx=("${sbx[@]}" --rw . --)
	# b1: a new file of RW_MIB
	bw_cow() {
		cd "$work/ws-b-cow" && quiet sync &&
			sample "$1" "${sbx[@]}" --session b-write -- \
				dd if=/dev/zero of=new bs=1M count="$RW_MIB" status=none && discard b-write
	}
	bw_plain() {
		local out=$1
		shift
		cd "$work/ws-b-rw" && quiet sync &&
			sample "$out" "$@" dd if=/dev/zero of=new bs=1M count="$RW_MIB" status=none && rm -f new
	}
	bw_rw() { bw_plain "$1" "${rw_sbx[@]}"; }
	bw_native() { bw_plain "$1"; }
	# b2: read the copied-up file (cow) / the same file in place (rw, native)
	br_cow() {
		cd "$work/ws-b-cow" &&
			sample "$1" "${sbx[@]}" --session b-read -- dd if=data of=/dev/null bs=1M status=none
	}
	br_plain() {
		local out=$1
		shift
		cd "$work/ws-b-rw" && sample "$out" "$@" dd if=data of=/dev/null bs=1M status=none
	}
	br_rw() { br_plain "$1" "${rw_sbx[@]}"; }
	br_native() { br_plain "$1"; }
	# b3: create SMALL_FILES new files, in a new directory
	bc_cow() {
		n_made=$((n_made + 1))
		keep+=("b-made-$n_made")
		cd "$work/ws-b-cow" && sample "$1" "${sbx[@]}" --session "b-made-$n_made" -- \
			sh -c "$create_small" sh "$SMALL_FILES" "out.$n_made"
	}
	bc_plain() {
		local out=$1
		shift
		n_made=$((n_made + 1))
		cd "$work/ws-b-rw" && sample "$out" "$@" sh -c "$create_small" sh "$SMALL_FILES" "out.$n_made"
	}
	bc_rw() { bc_plain "$1" "${rw_sbx[@]}"; }
	bc_native() { bc_plain "$1"; }
	# b4: the first write (append) to SMALL_FILES existing 4 KiB files: a copy-up each under cow
	ba_cow() {
		n_made=$((n_made + 1))
		keep+=("b-made-$n_made")
		cd "$work/ws-b-cow" && quiet sync &&
			sample "$1" "${sbx[@]}" --session "b-made-$n_made" -- sh -c "$append_small"
	}
	ba_plain() {
		local out=$1 f
		shift
		# the same files each time: the appended line is cut off again (untimed)
		cd "$work/ws-b-rw" && quiet sync && sample "$out" "$@" sh -c "$append_small" &&
			for f in small/*; do truncate -s -5 "$f"; done
	}
	ba_rw() { ba_plain "$1" "${rw_sbx[@]}"; }
	ba_native() { ba_plain "$1"; }
	note "cow.sh: b) $REPS rounds each: write, read, create, first write of small files"
	bench bw "$REPS" native rw cow -- \
		"b) write new ${RW_MIB} MiB file, cow vs --rw|bw|rw|cow|ratio|1.0" \
		"b) ... --rw . vs native|bw|native|rw|info|0"
	bench br "$REPS" native rw cow -- \
		"b) read copied-up ${RW_MIB} MiB, cow vs --rw|br|rw|cow|ratio|1.0" \
		"b) ... --rw . vs native|br|native|rw|info|0"
	bench bc "$REPS" native rw cow -- \
		"b) create ${SMALL_FILES} files, cow vs --rw|bc|rw|cow|ratio|1.0" \
		"b) ... --rw . vs native|bc|native|rw|info|0"
	bench ba "$REPS" native rw cow -- \
		"b) 1st write ${SMALL_FILES} files, cow vs --rw|ba|rw|cow|info|0" \
		"b) ... --rw . vs native|ba|native|rw|info|0"
	for k in "${keep[@]}"; do
		discard "$k"
	done
	rm -rf "$work/ws-b-rw"/out.*
fi

# ---- c) listings of a merged tree ---------------------------------------------------------
# TREE_FILES files in 10 x 10 directories; the same changes are made natively in a plain copy
# and inside session c over the original, so that both show the very same tree: in every
# fourth leaf directory 5 files changed (copied up), 5 deleted (whiteouts), 5 created; one
# leaf directory removed whole, one new directory with 10 files.
# shellcheck disable=SC2016 # a script for sh, run on both sides
mutate='
set -e
n=0
for d in t*/u*; do
	n=$((n + 1))
	[ $((n % 4)) -eq 0 ] || continue
	for i in 0 1 2 3 4; do echo changed >>"$d/f$i"; done
	for i in 5 6 7 8 9; do rm "$d/f$i"; done
	for i in 0 1 2 3 4; do echo new >"$d/n$i"; done
done
rm -r t0/u1
mkdir t0/new
for i in 0 1 2 3 4 5 6 7 8 9; do echo new >t0/new/n$i; done
'
if want c; then
	note "cow.sh: c) a tree of $TREE_FILES files, merged in session c and copied natively"
	mkdir "$work/ws-c"
	cd "$work/ws-c"
	per=$((TREE_FILES / 100))
	for t in 0 1 2 3 4 5 6 7 8 9; do
		for u in 0 1 2 3 4 5 6 7 8 9; do
			mkdir -p "t$t/u$u"
			for ((i = 0; i < per; i++)); do
				echo "file $t.$u.$i" >"t$t/u$u/f$i"
			done
		done
	done
	quiet cp -a "$work/ws-c" "$work/c-native"
	quiet "${sbx[@]}" --session c -- sh -c "$mutate"
	(cd "$work/c-native" && sh -c "$mutate")
	# Both sides must list the same names, sizes and modes.
	listing='find . -printf "%p %s %m %y\n"'
	a=$(cd "$work/c-native" && sh -c "$listing" | sort | md5sum)
	b=$("${sbx[@]}" --session c -- sh -c "$listing" 2>/dev/null | sort | md5sum)
	if [[ $a != "$b" ]]; then
		note "cow.sh: c) the merged tree and the native copy differ"
		exit 1
	fi
	# Metadata only: %u or %TY would make find look up a user (open /etc/passwd) and stat
	# /etc/localtime (glibc's localtime) for every file, which would time those, not the tree.
	printf_fmt='%y %M %n %s %T@ %p\n'
	cl_native() { cd "$work/c-native" && sample "$1" ls -laR; }
	cl_cow() { cd "$work/ws-c" && sample "$1" "${sbx[@]}" --session c -- ls -laR; }
	cl_rw() { cd "$work/c-native" && sample "$1" "${sbx[@]}" --rw . -- ls -laR; }
	cf_native() { cd "$work/c-native" && sample "$1" find . -printf "$printf_fmt"; }
	cf_cow() { cd "$work/ws-c" && sample "$1" "${sbx[@]}" --session c -- find . -printf "$printf_fmt"; }
	cf_rw() { cd "$work/c-native" && sample "$1" "${sbx[@]}" --rw . -- find . -printf "$printf_fmt"; }
	note "cow.sh: c) $REPS rounds each: ls -laR, find -printf (native, cow, --rw . on the copy)"
	bench cl "$REPS" native cow rw -- \
		"c) ls -laR, ${TREE_FILES} files merged|cl|native|cow|ratio|2.0" \
		"c) ls -laR, --rw . on the copy|cl|native|rw|info|0" \
		"c) ls -laR, cow vs --rw .|cl|rw|cow|info|0"
	bench cf "$REPS" native cow rw -- \
		"c) find -printf, merged|cf|native|cow|ratio|2.0" \
		"c) find -printf, --rw . on the copy|cf|native|rw|info|0" \
		"c) find -printf, cow vs --rw .|cf|rw|cow|info|0"
fi

# ---- d) git status in a worked-on repository ----------------------------------------------
# GIT_FILES files in 20 directories, committed; then 1% of them changed (appended to) and 5
# untracked files made, inside session d over the repository and natively in a plain copy.
# shellcheck disable=SC2016
git_work='
set -e
n=0
for f in src*/*.c; do
	n=$((n + 1))
	[ $((n % 100)) -eq 0 ] && echo "/* changed */" >>"$f"
done
for i in 0 1 2 3 4; do echo untracked >"scratch$i.txt"; done
'
if want d; then
	note "cow.sh: d) a git repository of $GIT_FILES files, worked on in session d and natively"
	mkdir "$work/ws-d"
	cd "$work/ws-d"
	per=$((GIT_FILES / 20))
	for ((d = 0; d < 20; d++)); do
		mkdir "src$d"
		for ((i = 0; i < per; i++)); do
			printf '/* unit %d.%d */\nint f_%d_%d(int x)\n{\n\treturn x + %d;\n}\n' \
				"$d" "$i" "$d" "$i" "$i" >"src$d/u$i.c"
		done
	done
	export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid \
		GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
	sleep 1 # no file as new as the index: none "racily clean", re-read by every status
	quiet git init -q .
	quiet git add -A
	quiet git commit -q -m init
	quiet cp -a "$work/ws-d" "$work/d-native"
	quiet "${sbx[@]}" --session d -- sh -c "$git_work"
	(cd "$work/d-native" && sh -c "$git_work")
	sleep 1
	# Untimed: each side refreshes its index once (the copy's inodes and ctimes are new;
	# the session's index becomes a copy-up).
	quiet "${sbx[@]}" --session d -- git status
	(cd "$work/d-native" && quiet git status)
	a=$(cd "$work/d-native" && git status --porcelain | md5sum)
	b=$("${sbx[@]}" --session d -- git status --porcelain 2>/dev/null | md5sum)
	if [[ $a != "$b" ]]; then
		note "cow.sh: d) git status differs between the session and the native copy"
		exit 1
	fi
	gs_native() { cd "$work/d-native" && sample "$1" git status; }
	gs_cow() { cd "$work/ws-d" && sample "$1" "${sbx[@]}" --session d -- git status; }
	gs_rw() { cd "$work/d-native" && sample "$1" "${sbx[@]}" --rw . -- git status; }
	note "cow.sh: d) $REPS rounds: git status (native copy, cow session, --rw . on the copy)"
	bench gs "$REPS" native cow rw -- \
		"d) git status, ${GIT_FILES} files, worked on|gs|native|cow|ratio|1.5" \
		"d) git status, --rw . on the copy|gs|native|rw|info|0" \
		"d) git status, cow vs --rw .|gs|rw|cow|info|0"
fi

note "cow.sh: done in $(($(date +%s) - start)) s"

# ---- the table ----------------------------------------------------------------------------
echo
printf 'stockade cow bench: %s, %s CPUs, kernel %s, %s on %s; medians of %s interleaved runs per side (start-up: %s)\n' \
	"$build" "$(nproc)" "$(uname -r)" "$(findmnt -no FSTYPE -T "$work" 2>/dev/null || echo '?')" \
	"$BENCH_DIR" "$REPS" "$TRUE_REPS"
awk -F'\t' '
	function fmt(ns) {
		if (ns < 1e6) return sprintf("%.2f us", ns / 1e3)
		if (ns < 1e9) return sprintf("%.1f ms", ns / 1e6)
		return sprintf("%.2f s", ns / 1e9)
	}
	BEGIN {
		row = "%-42s %-9s %10s %10s %7s %8s  %-21s %s\n"
		printf row, "case", "vs", "baseline", "measured", "ratio", "-startup", "measured min..max", "target"
	}
	$2 == "FAILED" { printf row, $1, "", "-", "FAILED", "-", "", "", ""; next }
	{
		split($4, b, " "); split($5, m, " ")
		if ($1 == "start-up: true") startup["cow"] = m[1] - b[1]
		if ($1 == "start-up: true, --rw .") startup["rw"] = m[1] - b[1]
		ratio = b[1] > 0 ? m[1] / b[1] : 0
		# start-up taken off each sandboxed side: the start-up of the same kind of run (cow
		# or --rw .), so cow vs --rw . is (cow - its start-up) / (rw - its start-up)
		adj = "-"
		if ($1 !~ /^start-up/ && ($3 in startup) && ($2 == "native" || $2 in startup)) {
			d = b[1] - ($2 == "native" ? 0 : startup[$2])
			if (d > 0)
				adj = sprintf("%.2fx", (m[1] - startup[$3]) / d)
		}
		if ($6 == "ratio")
			tgt = sprintf("<= %.2fx %s", $7, ratio <= $7 ? "ok" : "MISS")
		else
			tgt = "(info)"
		what = $3 == "cow" ? "cow" : $3 == "rw" ? "--rw ." : $3 == "fsync" ? "cp+fsync" : $3
		printf row, $1, $2 == "native" ? "native" : $2 == "rw" ? "--rw ." : $2 == "fsync" ? "cp+fsync" : $2,
			fmt(b[1]), fmt(m[1]), sprintf("%.2fx", ratio), adj, fmt(m[2]) ".." fmt(m[3]), tgt
	}
	END {
		if ("cow" in startup)
			printf "\nstart-up = median(stockade run -- true) - median(true): %s (cow .), %s (--rw .)\n", fmt(startup["cow"]), fmt(startup["rw"])
		print "ratio = measured / baseline, raw; -startup = the same with each sandboxed side less the start-up of its kind of run"
	}' "$results"

if ((failed)); then
	note "cow.sh: some cases FAILED (see above)"
	exit 1
fi

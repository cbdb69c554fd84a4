# shellcheck shell=bash
# shellcheck disable=SC2034 # as_user, stockade, walltime, ...: set here for the scripts
# bench/lib.sh - what the bench scripts share; sourced, never run. Each script keeps its own
# `set -euo pipefail`, knobs, cases and table: here are only the steps that were written out
# the same way in several of them, so that a fix to one of them reaches every script.

# The script's name, for its messages (fast.sh, cow.sh, ...).
me=${0##*/}

# As root, stockade runs the command as nobody unless told otherwise; the bench measures the
# interception, not nobody's rights (root's pyenv python, the scratch directory): keep uid 0.
as_user=()
if [[ $(id -u) -eq 0 ]]; then
	as_user=(--user root)
fi

note() { printf '%s\n' "$*" >&2; }

# whole_numbers KNOB...: exits 2 naming the first KNOB (a variable's name) whose value is not
# a positive whole number.
whole_numbers() {
	local v
	for v in "$@"; do
		if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
			echo "$me: $v=${!v} is not a positive whole number" >&2
			exit 2
		fi
	done
}

# find_build DIR TARGET PROGRAM...: sets $build (DIR, absolute) and checks the PROGRAMs in it
# as need_built does; exits 2 if DIR does not exist.
find_build() {
	if ! build=$(cd "$1" 2>/dev/null && pwd); then
		echo "$me: build directory \`$1\` does not exist (cmake -S . -B build first)" >&2
		exit 2
	fi
	shift
	need_built "$@"
}

# need_built TARGET PROGRAM...: sets $stockade and $walltime (their paths in $build); exits 2
# if a PROGRAM (a path in $build: stockade, bench/walltime, ...) is not there, naming the
# command that builds TARGET.
need_built() {
	local target=$1 b
	shift
	for b in "$@"; do
		if [[ ! -x $build/$b ]]; then
			echo "$me: $build/$b is missing; build it with: cmake --build $build --target $target" >&2
			exit 2
		fi
	done
	stockade=$build/stockade
	walltime=$build/bench/walltime
}

# limit_runs: sets $limit, what goes before each run so that one that hangs (an unanswered
# notification) does not hang the whole bench: timeout(1) puts itself and the run in their own
# process group and signals it after CASE_TIMEOUT seconds. Without timeout(1), nothing.
limit_runs() {
	limit=()
	if command -v timeout >/dev/null; then
		limit=(timeout "$CASE_TIMEOUT")
	fi
}

# scratch PARENT NAME: sets $work, a new directory PARENT/NAME.XXXXXX, removed on exit.
# overlayfs leaves its work/work directory mode 000: everything is made removable first.
scratch() {
	work=$(mktemp -d "$1/$2.XXXXXX")
	trap 'chmod -R u+rwx -- "$work" 2>/dev/null; rm -rf -- "$work"' EXIT
}

# session_scratch NAME: the scratch directory of the benches that keep sessions, in BENCH_DIR
# (exits 2 if it does not exist or is under /tmp: the sandbox's /tmp is private), with the
# sessions in its own state directory $state; $sbx is the sandbox of the default view (the
# current directory copy-on-write) that keeps them there.
session_scratch() {
	if ! BENCH_DIR=$(cd "$BENCH_DIR" 2>/dev/null && pwd -P); then
		echo "$me: BENCH_DIR does not exist" >&2
		exit 2
	fi
	if [[ $BENCH_DIR == /tmp || $BENCH_DIR == /tmp/* ]]; then
		echo "$me: BENCH_DIR must not be under /tmp (the sandbox's /tmp is private)" >&2
		exit 2
	fi
	scratch "$BENCH_DIR" "$1"
	state=$work/state
	mkdir "$state"
	sbx=("$stockade" run -q "${as_user[@]}" --state-dir "$state")
	# COW_EMUL=1: as on a host without user namespaces, where the supervisor merges the
	# copy-on-write layers itself (README, "Without a mount namespace")
	if [[ ${COW_EMUL:-} == 1 ]]; then
		export STOCKADE_TEST_DISABLE=userns,ipcns
		sbx+=(--allow-degraded)
	fi
}

# why STATUS: a failed run's exit status in words.
why() {
	if (($1 == 124)) && ((${#limit[@]})); then
		echo "timed out after ${CASE_TIMEOUT}s"
	elif (($1 == 0)); then
		echo "exit 0 but no result"
	else
		echo "exit $1"
	fi
}

# sample OUT CMD...: one wall-time sample of CMD from the current directory (its stdout to
# /dev/null); appends ns to OUT. On failure sets $last_why. stockade's note about hidden
# paths beneath /var/tmp (the state directory is one) is dropped from what a failure shows.
last_why=
sample() {
	local out=$1 ns rc=0
	shift
	ns=$("${limit[@]}" "$walltime" "$@" 2>"$work/stderr") || rc=$?
	if ((rc != 0)) || ! [[ $ns =~ ^[0-9]+$ ]]; then
		last_why=$(why "$rc")
		note "$me: run failed ($last_why): (cd $PWD && $*)"
		grep -v 'holds hidden paths' "$work/stderr" | sed 's/^/    /' >&2 || true
		return 1
	fi
	echo "$ns" >>"$out"
}

# quiet CMD...: an untimed step (set-up, clean-up); its output is shown only if it fails.
quiet() {
	local rc=0
	"${limit[@]}" "$@" >"$work/step" 2>&1 || rc=$?
	if ((rc != 0)); then
		note "$me: step failed (exit $rc): (cd $PWD && $*)"
		grep -v 'holds hidden paths' "$work/step" | sed 's/^/    /' >&2 || true
		return 1
	fi
}

# discard SESSION: drops a session of $state, if there is one.
discard() {
	[[ -d $state/sessions/$1 ]] || return 0
	quiet "$stockade" discard "$1" --state-dir "$state"
}

# stats FILE -> "median min max" of the numbers in FILE, one per line.
stats() {
	sort -g "$1" | awk '{ a[NR] = $1 }
		END {
			if (NR == 0) { print "nan nan nan"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			print m, a[1], a[NR]
		}'
}

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

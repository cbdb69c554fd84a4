#!/usr/bin/env bash
# bench/make.sh [BUILD_DIR] - `make -j4` of a generated 40-file C project, natively and under
# `stockade run --`, side by side (issue 6, items 9 and 11: target <= 1.3x native). Many
# processes at once (make, 4 gcc drivers, cc1, as, ld) make path calls in parallel, so this is
# the case that shows whether the supervisor's notifier threads serve them side by side.
#
# Each repetition: `make clean` (not timed), then `make -j4` timed by bench/walltime, native and
# sandboxed alternately, swapping which goes first every pair; one warm-up pair first. Prints
# medians and the ratio. Knobs: REPS [11], FILES [40], JOBS [4], CASE_TIMEOUT [300],
# STOCKADE_FLAGS [none]: more flags for `stockade run` (STOCKADE_FLAGS=--fast).
# Builds nothing: BUILD_DIR (default ./build) must hold stockade and bench/walltime
# (`cmake --build build --target bench`). Needs make and gcc; uses no network.
# Exit status: 0 when every run succeeded (a missed target is a result), 1 when a run failed,
# 2 on bad usage or a missing build or tool.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	echo "Usage: bench/make.sh [BUILD_DIR]   (REPS=11 FILES=40 JOBS=4)"
	exit 0
fi
REPS=${REPS:-11}
FILES=${FILES:-40}
JOBS=${JOBS:-4}
CASE_TIMEOUT=${CASE_TIMEOUT:-300}
whole_numbers REPS FILES JOBS CASE_TIMEOUT
find_build "${1:-./build}" bench stockade bench/walltime
for t in make gcc; do
	command -v "$t" >/dev/null || { echo "make.sh: needs $t" >&2; exit 2; }
done
limit_runs

scratch "${TMPDIR:-/tmp}" stockade-make
proj=$work/proj

# The project: FILES translation units of some substance (a few functions each, the usual
# libc headers, a shared header), linked into one program. -MMD writes dependency files, as
# real projects do: more files opened and stat'ed per compile.
mkdir -p "$proj/src" "$proj/include"
{
	echo '#pragma once'
	echo '#include <stddef.h>'
	for ((i = 0; i < FILES; i++)); do
		echo "long unit$i(const char *s, size_t n);"
	done
} >"$proj/include/units.h"
for ((i = 0; i < FILES; i++)); do
	cat >"$proj/src/unit$i.c" <<EOF
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "units.h"

struct item$i { char name[32]; long value; struct item$i *next; };

static struct item$i *push$i(struct item$i *head, const char *name, long value)
{
	struct item$i *it = calloc(1, sizeof(*it));
	if (!it)
		abort();
	snprintf(it->name, sizeof(it->name), "%s-%d", name, $i);
	it->value = value;
	it->next = head;
	return it;
}

static int cmp$i(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

long unit$i(const char *s, size_t n)
{
	struct item$i *head = NULL;
	long v[64], sum = 0;
	size_t k;

	for (k = 0; k < n && k < 64; k++) {
		v[k] = (isalpha((unsigned char)s[k]) ? toupper((unsigned char)s[k]) : s[k]) * ($i + 1);
		head = push$i(head, s, v[k]);
	}
	qsort(v, k, sizeof(v[0]), cmp$i);
	while (head) {
		struct item$i *next = head->next;
		sum += head->value + (long)strlen(head->name);
		free(head);
		head = next;
	}
	return sum + (k ? v[k / 2] : 0);
}
EOF
done
{
	echo '#include <stdio.h>'
	echo '#include <string.h>'
	echo '#include "units.h"'
	echo 'int main(int argc, char **argv)'
	echo '{'
	echo '	const char *s = argc > 1 ? argv[1] : "stockade";'
	echo '	long t = 0;'
	for ((i = 0; i < FILES; i++)); do
		echo "	t += unit$i(s, strlen(s));"
	done
	echo '	printf("%ld\n", t);'
	echo '	return 0;'
	echo '}'
} >"$proj/src/main.c"
cat >"$proj/Makefile" <<'EOF'
SRCS := $(wildcard src/*.c)
OBJS := $(patsubst src/%.c,obj/%.o,$(SRCS))
CFLAGS := -O2 -g -Wall -Iinclude -MMD -MP
prog: $(OBJS)
	$(CC) -o $@ $^
obj/%.o: src/%.c | obj
	$(CC) $(CFLAGS) -c -o $@ $<
obj:
	mkdir -p obj
-include $(OBJS:.o=.d)
clean:
	rm -rf obj prog
.PHONY: clean
EOF
cd "$proj"

# once SIDE OUT: make clean, then one timed make -jJOBS; appends ns to OUT.
once() {
	local side=$1 out=$2 ns rc=0 cmd=(make -s -j"$JOBS")
	make -s clean
	# shellcheck disable=SC2086 # STOCKADE_FLAGS: words, on purpose
	# --rw .: the build's output lands on the host, where the next step checks it (the
	# default view's copy-on-write would keep it in a session: bench/cow.sh measures that).
	[[ $side == stockade ]] && cmd=("$stockade" run -q --rw . "${as_user[@]}" ${STOCKADE_FLAGS:-} -- "${cmd[@]}")
	ns=$("${limit[@]}" "$walltime" "${cmd[@]}" 2>"$work/stderr") || rc=$?
	if ((rc != 0)) || ! [[ $ns =~ ^[0-9]+$ ]] || [[ ! -x prog ]]; then
		note "make.sh: $side run failed (exit $rc): ${cmd[*]}"
		sed 's/^/    /' "$work/stderr" >&2
		return 1
	fi
	echo "$ns" >>"$out"
}

note "make.sh: make -j$JOBS of $((FILES + 1)) C files: 1 warm-up pair, then $REPS x 2 runs"
once native /dev/null && once stockade /dev/null || exit 1
: >"$work/native"
: >"$work/stockade"
for ((i = 0; i < REPS; i++)); do
	if ((i % 2 == 0)); then
		once native "$work/native" && once stockade "$work/stockade" || exit 1
	else
		once stockade "$work/stockade" && once native "$work/native" || exit 1
	fi
done
# The program both sides built must work.
[[ $(./prog) =~ ^[0-9]+$ ]] || { note "make.sh: the built program does not run"; exit 1; }

read -r nmed nmin nmax < <(stats "$work/native")
read -r smed smin smax < <(stats "$work/stockade")
echo
printf 'stockade make bench: %s, %s CPUs, kernel %s; medians of %s interleaved runs per side\n' \
	"$build" "$(nproc)" "$(uname -r)" "$REPS"
awk -v nmed="$nmed" -v nmin="$nmin" -v nmax="$nmax" -v smed="$smed" -v smin="$smin" \
	-v smax="$smax" -v label="make -j$JOBS, $((FILES + 1)) files${STOCKADE_FLAGS:+ $STOCKADE_FLAGS}" 'BEGIN {
	row = "%-28s %10s %10s %7s  %-19s %-19s %s\n"
	printf row, "case", "native", "stockade", "ratio", "native min..max", "stockade min..max", "target"
	r = smed / nmed
	printf row, label, sprintf("%.0f ms", nmed / 1e6), sprintf("%.0f ms", smed / 1e6),
		sprintf("%.2fx", r), sprintf("%.0f..%.0f ms", nmin / 1e6, nmax / 1e6),
		sprintf("%.0f..%.0f ms", smin / 1e6, smax / 1e6), r <= 1.3 ? "<= 1.30x ok" : "<= 1.30x MISS"
}'

#!/usr/bin/env bash
# bench/overlay.sh - what a fresh kernel overlay costs by itself, without stockade: `find
# -printf` over a tree of FILES files natively, then in a user and mount namespace of its own
# (`unshare -Urm`) over an overlay of that tree as a `--fast` copy-on-write run mounts it
# (userxattr, volatile, an empty upper), twice: the first walk pays every look-up of the new
# overlay (its dentries and inodes are made then), the second finds them cached. Every
# copy-on-write `--fast` run mounts a new overlay, so its tree walks pay the first figure;
# the README's copy-on-write targets are judged against it. Medians of REPS [11] rounds,
# each native and overlay side by side; FILES [5000] in DIRS [50] directories. Needs
# unprivileged user namespaces (or root).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPS=${REPS:-11}
FILES=${FILES:-5000}
DIRS=${DIRS:-50}
whole_numbers REPS FILES DIRS
if ! unshare -Urm true 2>/dev/null; then
	echo "$me: needs a user namespace (unshare -Urm), which this host refuses" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/overlay-bench.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/lower" "$work/m"
for ((d = 0; d < DIRS; d++)); do
	mkdir "$work/lower/d$d"
	for ((f = 0; f < FILES / DIRS; f++)); do
		echo x >"$work/lower/d$d/f$f"
	done
done

# One round: native, then the overlay's first and second walk; microseconds, one line.
round() {
	local s e
	s=$(date +%s%N)
	find "$work/lower" -printf '%p %s %m\n' >/dev/null
	e=$(date +%s%N)
	printf '%d ' $(((e - s) / 1000))
	rm -rf "$work/up" "$work/wk"
	mkdir "$work/up" "$work/wk"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -Urm bash -c '
		set -e
		w=$1
		mount -t overlay overlay -o "lowerdir=$w/lower,upperdir=$w/up,workdir=$w/wk,userxattr,volatile" "$w/m"
		for i in 1 2; do
			s=$(date +%s%N)
			find "$w/m" -printf "%p %s %m\n" >/dev/null
			e=$(date +%s%N)
			printf "%d " $(((e - s) / 1000))
		done' _ "$work"
	echo
}

for ((i = 0; i < REPS; i++)); do
	round
done >"$work/rounds"
col() { awk -v c="$1" '{print $c}' "$work/rounds" | median; }
n=$(col 1) first=$(col 2) second=$(col 3)
printf '| find -printf, %d files | native | overlay, first walk | overlay, second walk |\n' "$FILES"
printf '|---|---|---|---|\n'
awk -v n="$n" -v f="$first" -v s="$second" 'BEGIN {
	printf "| µs (medians of %d) | %d | %d (%.2fx) | %d (%.2fx) |\n", '"$REPS"', n, f, f / n, s, s / n }'

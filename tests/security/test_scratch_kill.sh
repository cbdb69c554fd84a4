#!/usr/bin/env bash
# The scratch directories (/dev/shm/stockade-*, /tmp/stockade-tmp-*) are removed however
# stockade ends, SIGKILL during its start included: a stockade killed between making them and
# forking their cleaner once left the pair for good (about 1 kill in 150 at 1-15 ms after
# exec). strace's fault injection stretches that moment to a second, then the run is killed
# there; the directories strace saw made must be gone once the cleaner is.
# Usage: test_scratch_kill.sh STOCKADE
set -euo pipefail
stockade=$(realpath "$1")
command -v strace >/dev/null || { echo "skipped: needs strace (scripts/deps.sh installs it)"; exit 77; }

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-sk.XXXXXX")
trap 'rm -rf -- "$top"' EXIT
chmod 755 "$top"
user=()
[ "$(id -u)" -eq 0 ] && user=(--user root)
fails=0
fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

# strace's counter is per process: the first directory each makes is delayed a second. The
# stockade is killed in that second, whichever process makes the directories.
log=$top/strace.log
(cd "$top" && exec strace -f -qq -o "$log" -e trace=mkdir,mkdirat \
        -e inject=mkdir,mkdirat:delay_exit=2000000:when=1 \
        "$stockade" run -q "${user[@]}" --rw . -- sleep 30) >/dev/null 2>&1 &
spid=$!
for _ in $(seq 100); do
        grep -q 'stockade-' "$log" 2>/dev/null && break
        sleep 0.05
done
sleep 0.2
pkill -KILL -P $spid || fail "no stockade to kill" # strace's only child
made=$(grep -o '"[^"]*/stockade-[^"/]*"' "$log" | tr -d '"' | sort -u || true)
[ -n "$made" ] || fail "strace saw no scratch directory made: $(cat "$log")"
left=$made
for _ in $(seq 150); do
        left=$(for d in $made; do [ ! -e "$d" ] || echo "$d"; done)
        [ -n "$left" ] || break
        sleep 0.1
done
for d in $left; do
        fail "left after a SIGKILL during the start: $d"
        rm -rf -- "$d"
done
kill -KILL $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
echo "$fails failure(s)"
[ $fails -eq 0 ]

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

# Root running the command as another user: that user reaches /dev/shm/stockade-X/shm from
# the host, and a tree deeper than the cleaner's own walk goes to the shell's way, whose
# chmod -R as root followed a symlink swapped in at the right moment (an outside review made
# a root file world-writable so). As root the shell's way runs no chmod at all: the tree
# (mode-000 directories included) is removed by find alone, and the scratch is gone.
if [ "$(id -u)" -eq 0 ]; then
        # chmod and find as the cleaner's shell finds them on stockade's PATH, logged
        mkdir "$top/bin"
        for t in chmod find; do
                printf '#!/bin/sh\necho "%s $(id -u) $(pwd -P)" >>"%s/tools.log"\nexec /usr/bin/%s "$@"\n' \
                        "$t" "$top" "$t" >"$top/bin/$t"
                chmod 755 "$top/bin/$t"
        done
        (cd "$top" && PATH=$top/bin:$PATH "$stockade" run -q -- /bin/sh -c '
                cd /dev/shm && i=0
                while [ $i -lt 80 ]; do /bin/mkdir d && cd d && i=$((i + 1)); done
                echo x >f && /bin/mkdir z && /bin/chmod 000 z') >/dev/null 2>&1 ||
                fail "the deep-tree run failed"
        for _ in $(seq 50); do
                [ -s "$top/tools.log" ] && break
                sleep 0.1
        done
        sleep 0.5
        scratch=$(awk '$1 == "find" { print $3; exit }' "$top/tools.log" 2>/dev/null || true)
        [ -n "$scratch" ] ||
                fail "the cleaner's shell way did not run (the tree was not deep enough to test it)"
        ! grep -q '^chmod 0 ' "$top/tools.log" || fail "root's cleaner ran chmod -R: $(cat "$top/tools.log")"
        [ -z "$scratch" ] || [ ! -e "$scratch" ] || fail "the deep scratch was left: $scratch"
else
        echo "not run here: the cleaner's shell way as root (this pass runs as uid $(id -u))"
fi
echo "$fails failure(s)"
[ $fails -eq 0 ]

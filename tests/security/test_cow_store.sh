#!/usr/bin/env bash
# Issue 7: the run's end and the session store, attacked by other runs' programs while a
# copy-on-write run runs, judged from outside the sandbox. Usage:
#   test_cow_store.sh STOCKADE
# Sections 17.-17l. of the copy-on-write checks (test_cow_run.sh holds the others, merged
# mode is test_cow_merged.sh; the prelude they share is cow_common.sh): the workspace's
# parent, a session's directory or the store's `sessions` swapped for a look-alike or a
# symlink; the run's end acts by the fds opened at the start, and keeps or removes what is
# its own only. Skips (77) where no mount namespace can be made.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=cow_common.sh
source "$(dirname "$0")/cow_common.sh"
# Each run with --state-dir lists its store for the runs to come to hide (cow_stores.c): in
# this test's own default store, not yours. A run that never read that list (`outsider`:
# started before the store was first used, or with another XDG_STATE_HOME) is how the attacks
# below still reach a store, to test what stands behind the list (17j tests the list).
export XDG_STATE_HOME=$top/xdg
outsider() { # outsider CMD...: CMD with a default store of its own
        XDG_STATE_HOME=$top/outsider "$@"
}
# The session store's attacker of 17e (tests/helpers/swapper.c).
swapper=$(realpath "${2:?usage: test_cow_store.sh STOCKADE SWAPPER}")

# 17. The run's end compares the session with your tree (a run that changed nothing leaves
# none). The sandbox may write the workspace's parent's parent (--rw here; /var/tmp in the
# default view): it renames the parent away and puts a look-alike of its own change at the
# old path. The comparison is with your tree as the run began, by the fd opened then: the
# change is kept and named (it was lost, unannounced: an outside review).
sw=$top/own/swap
for how in overlay merged; do
        rm -rf "$sw" && mkdir -p "$sw/par/ws" && echo original >"$sw/par/ws/file"
        env=() flags=()
        [ $how = merged ] && env=(STOCKADE_TEST_DISABLE=mntns) flags=(--allow-degraded)
        out=$(cd "$sw/par/ws" && env "${env[@]}" "$stockade" run "${user[@]}" --state-dir "$state" \
                --rw "$sw" "${flags[@]}" -- sh -c "echo changed >file &&
                mkdir -p '$sw/fake/ws' && echo changed >'$sw/fake/ws/file' &&
                touch -r file '$sw/fake/ws/file' && mv '$sw/par' '$sw/moved' &&
                mv '$sw/fake' '$sw/par' && echo swapped" 2>&1) || true
        grep -q 'changes are in session' <<<"$out" ||
                fail "a change was dropped after the workspace's parent was swapped ($how): $out"
        if grep -qx swapped <<<"$out"; then
                [ "$(cat "$sw/moved/ws/file")" = original ] || fail "the workspace changed ($how)"
        elif [ $how = merged ]; then
                # Merged, the workspace's parent is read-only to the kernel (README): the
                # rename is refused, and the workspace stays where it was.
                [ "$(cat "$sw/par/ws/file")" = original ] || fail "the workspace changed ($how)"
        else
                fail "the swap ($how) did not run: $out"
        fi
        n=$(sed -n 's/.*changes are in session \([^:]*\):.*/\1/p' <<<"$out")
        [ -z "$n" ] || "$stockade" discard "$n" --state-dir "$state" >/dev/null 2>&1 || true
done
# 17b. A state directory other runs' programs may write (stockade warns): while run A runs,
# another sandbox puts a symlink to a directory of yours in place of A's session directory
# `0`, and a copy of that directory's file in A's workspace. A's end removes what it finds by
# fd from the session's own directory, never through the symlink: the directory keeps
# its files (the janitor, which runs without Landlock, removed them).
s6=$top/own/store6
rm -rf "$s6" && mkdir -p "$s6/state" "$s6/wsA" "$s6/wsB" "$s6/victim/upper"
echo precious >"$s6/victim/upper/precious.txt" && echo j >"$s6/victim/journal"
(cd "$s6/wsA" && "$stockade" run -q "${user[@]}" --state-dir "$s6/state" --rw "$s6" -- sh -c "
        for i in \$(seq 200); do [ -e '$s6/planted' ] && exit 0; sleep 0.1; done; exit 3") \
        2>"$top/err6" &
a6=$!
for _ in $(seq 100); do
        d6=$(ls -d "$s6"/state/sessions/*/0 2>/dev/null | head -1) && [ -n "$d6" ] && break
        sleep 0.1
done
(cd "$s6/wsB" && outsider "$stockade" run -q "${user[@]}" --rw "$s6" -- sh -c "
        mv '$d6' '$d6.orig' && ln -s '$s6/victim' '$d6' &&
        cp -p '$s6/victim/upper/precious.txt' '$s6/wsA/' && : >'$s6/planted'") 2>&1 ||
        fail "the second sandbox could not plant its symlink"
wait $a6 || fail "run A: $(cat "$top/err6")"
for _ in $(seq 30); do [ -z "$(ls "$s6/state/sessions" | grep '^\.gone')" ] && break; sleep 0.1; done
[ -e "$s6/victim/upper/precious.txt" ] && [ -e "$s6/victim/journal" ] ||
        fail "the end of a run removed files through a symlink in its session: $(ls -R "$s6/victim")"

# 17c. The store's `sessions` swapped for a symlink before a run (by another run's program,
# in a store it may write): the run makes nothing where it leads (an empty directory of the
# session's name was made there) and stops with an error.
s7=$top/own/store7
mkdir -p "$s7/state" "$s7/victim" "$s7/ws"
ln -s "$s7/victim" "$s7/state/sessions"
[ -L "$s7/state/sessions" ] || fail "17c: the symlink was not made"
rc=0
(cd "$s7/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s7/state" -- true) \
        2>"$top/err7" || rc=$?
[ "$rc" = 125 ] || fail "a run with its store's sessions a symlink exited $rc: $(cat "$top/err7")"
[ -z "$(ls -A "$s7/victim")" ] ||
        fail "a run made its session through a symlinked sessions: $(ls -A "$s7/victim")"

# 17d. The store's `sessions` swapped for a symlink during a run (by another run's program, in
# a store it may write), to a directory holding a decoy of the session. The run's end (the
# janitor, which runs without Landlock and outlives stockade) acts on the session by the fds
# opened at the start: the decoy is untouched, the real session (in the directory moved away)
# removed when unused (no `.gone-NAME` left once the janitor is done), kept with its metadata
# brought up to date and its change announced when named, or when it holds a change. The
# janitor renamed the decoy away, and wrote its metadata, through the symlink.
# session_file STATE: the metadata file of the first session in the store STATE once a run
# has written it (up to 10 s), or nothing.
session_file() {
        local m=""
        for _ in $(seq 100); do
                m=$(ls "$1"/sessions/*/session 2>/dev/null | head -1) || true
                [ -z "$m" ] || break
                sleep 0.1
        done
        echo "$m"
}
decoy_snap() {
        (cd "$1" && find . -printf '%p %y %m %s %i %T@\n' | sort && find . -type f -print0 |
                sort -z | xargs -0 -r sha256sum)
}
for how in unused named changed; do
        s8=$top/own/store8-$how
        mkdir -p "$s8/state" "$s8/wsA" "$s8/wsB" "$s8/decoy"
        echo original >"$s8/wsA/file"
        named=() change=:
        [ $how = named ] && named=(--session keep8)
        [ $how = unused ] || change='echo changed >file'
        (cd "$s8/wsA" && "$stockade" run "${user[@]}" --state-dir "$s8/state" "${named[@]}" -- \
                sh -c "$change; for i in \$(seq 200); do [ -e '$s8/planted' ] && sleep 1.2 &&
                exit 0; sleep 0.1; done; exit 3") >"$top/out8" 2>&1 &
        a8=$!
        m8=$(session_file "$s8/state")
        [ -n "$m8" ] || fail "17d ($how): run A made no session"
        n8=$(basename "$(dirname "$m8")")
        mkdir -p "$s8/decoy/$n8/0/upper"
        echo precious >"$s8/decoy/$n8/0/upper/precious.txt"
        cp "$m8" "$s8/decoy/$n8/session" && : >"$s8/decoy/$n8/lock"
        touch -d @1600000000 "$s8/decoy/$n8/session"
        dbefore=$(decoy_snap "$s8/decoy")
        (cd "$s8/wsB" && outsider "$stockade" run -q "${user[@]}" --rw "$s8" -- sh -c "
                mv '$s8/state/sessions' '$s8/state/real' &&
                ln -s '$s8/decoy' '$s8/state/sessions' && : >'$s8/planted'") 2>&1 ||
                fail "17d ($how): the second sandbox could not swap sessions"
        [ -L "$s8/state/sessions" ] || fail "17d ($how): no swap (the test proves nothing)"
        wait $a8 || fail "17d ($how): run A: $(cat "$top/out8")"
        real=$s8/state/real
        for _ in $(seq 50); do # the janitor removes an unused session after stockade exits
                [ $how != unused ] || { [ ! -e "$real/$n8" ] && [ ! -e "$real/.gone-$n8" ]; } && break
                sleep 0.1
        done
        [ "$(decoy_snap "$s8/decoy")" = "$dbefore" ] ||
                fail "17d ($how): the run's end changed the decoy: $(ls -AR "$s8/decoy")"
        if [ $how = unused ]; then
                [ -z "$(ls -A "$real")" ] ||
                        fail "17d ($how): the unused session was not removed: $(ls -A "$real")"
        else
                grep -q "changes are in session $n8:" "$top/out8" ||
                        fail "17d ($how): the change was not announced: $(cat "$top/out8")"
                [ "$(cat "$real/$n8/0/upper/file" 2>&1)" = changed ] ||
                        fail "17d ($how): the session lost its change: $(ls -AR "$real")"
                c8=$(sed -n 's/^created //p' "$real/$n8/session")
                u8=$(sed -n 's/^updated //p' "$real/$n8/session")
                [ -n "$c8" ] && [ -n "$u8" ] && [ "$u8" -gt "$c8" ] ||
                        fail "17d ($how): metadata not brought up to date: $(cat "$real/$n8/session")"
        fi
        [ "$(cat "$s8/wsA/file")" = original ] || fail "17d ($how): the workspace changed"
done

# 17e. The session's directory swapped for a symlink while the run starts: as soon as its
# `lock` is held (the run has opened the directory and locked it), another run's program
# (tests/helpers/swapper.c, in a sandbox given the store) moves it away and puts a symlink to
# a directory of its choosing at its name. The run made its mount's `0/`, upper, work
# directory and journal by path after that, so root's stockade made them in that directory,
# and the change went there (an outside review won the race on its 6th run). Now each is made
# and opened beneath the session's directory's fd, and the namespace maker checks that what
# the upper's and work's paths open is what was made: the directory swapped in stays empty
# (a run that lost the race may fail; it must not write there). New sessions and a named one
# continued (whose start reads its metadata first: a wider window), in turn.
s9=$top/own/store9
mkdir -p "$s9/state/sessions" "$s9/victim" "$s9/ws"
chmod 700 "$s9/state/sessions"
echo original >"$s9/ws/file"
outsider "$stockade" run -q "${user[@]}" --rw "$s9" -- "$swapper" "$s9/state/sessions" "$s9/victim" 90 \
        >"$top/swap9" 2>&1 &
b9=$!
for _ in $(seq 100); do
        grep -q ready "$top/swap9" && break
        sleep 0.1
done
if grep -q ready "$top/swap9"; then
        for i in $(seq 40); do
                named=()
                [ $((i % 2)) -eq 0 ] && named=(--session race9)
                (cd "$s9/ws" && "$stockade" run "${user[@]}" --state-dir "$s9/state" \
                        "${named[@]}" -- sh -c "echo changed-$i >file") >"$top/out9" 2>&1 || true
                if [ -n "$(ls -A "$s9/victim")" ]; then
                        fail "17e: run $i made its session's state in the swapped-in directory:" \
                                "$(find "$s9/victim" -printf '%p ' | head -c 300)"
                        break
                fi
                # the named session back in its place for the next run
                if [ -L "$s9/state/sessions/race9" ]; then
                        rm "$s9/state/sessions/race9"
                        [ ! -d "$s9/state/sessions/.mv-race9" ] ||
                                mv "$s9/state/sessions/.mv-race9" "$s9/state/sessions/race9"
                fi
        done
        grep -q '^swapped' "$top/swap9" || fail "17e: nothing was swapped (the test proves nothing)"
else
        fail "17e: the swapper did not start: $(cat "$top/swap9")"
fi
kill "$b9" 2>/dev/null || true
wait "$b9" 2>/dev/null || true
[ "$(cat "$s9/ws/file")" = original ] || fail "17e: the workspace changed"

# 17f. A FIFO put at the session's `.session.new` during a run that changes a file (by another
# run's program, in a store it may write). The janitor opened it to write the metadata and
# waited for a reader, and stockade for the janitor, past its program's end, without limit (an
# outside review). Now what is there is removed and the file made anew (O_EXCL): the run ends
# at once, its change kept and announced.
s10=$top/own/store10
mkdir -p "$s10/state" "$s10/ws"
echo original >"$s10/ws/file"
(cd "$s10/ws" && timeout -k 5 30 "$stockade" run "${user[@]}" --state-dir "$s10/state" -- \
        sh -c "echo changed >file; for i in \$(seq 200); do [ -e '$s10/planted' ] && exit 0;
        sleep 0.1; done; exit 3") >"$top/out10" 2>&1 &
a10=$!
m10=$(session_file "$s10/state")
[ -n "$m10" ] || fail "17f: the run made no session"
n10=$(basename "$(dirname "$m10")")
outsider "$stockade" run -q "${user[@]}" --rw "$s10" -- mkfifo "$s10/state/sessions/$n10/.session.new" ||
        fail "17f: the second sandbox could not make the FIFO"
# Looked at before run A is let go: its end replaces the FIFO at once.
[ -p "$s10/state/sessions/$n10/.session.new" ] || fail "17f: no FIFO (the test proves nothing)"
: >"$s10/planted"
rc=0
wait $a10 || rc=$?
[ $rc -eq 0 ] || fail "17f: the run ended $rc (124: it waited on the FIFO): $(cat "$top/out10")"
grep -q "changes are in session $n10:" "$top/out10" ||
        fail "17f: the change was not announced: $(cat "$top/out10")"
[ "$(cat "$s10/state/sessions/$n10/0/upper/file" 2>&1)" = changed ] ||
        fail "17f: the session lost its change"
[ "$(cat "$s10/ws/file")" = original ] || fail "17f: the workspace changed"

# 17g. A FIFO at a session's `0/lent` (apply's record of the write bits it lends, put there by
# another run's program): apply refuses it by name, touching nothing, instead of an error
# about giving a directory its mode back that nothing ever lent; without it, apply works.
s11=$top/own/store11
mkdir -p "$s11/state" "$s11/ws"
echo original >"$s11/ws/file"
(cd "$s11/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s11/state" --session lent11 -- \
        sh -c 'echo changed >file') || fail "17g: the run failed"
mkfifo "$s11/state/sessions/lent11/0/lent"
rc=0
out=$(cd "$s11/ws" && timeout -k 5 20 "$stockade" apply --state-dir "$s11/state" lent11 2>&1) ||
        rc=$?
[ $rc -eq 125 ] && grep -q "0/lent is not a regular file" <<<"$out" ||
        fail "17g: apply with a FIFO at 0/lent ended $rc: $out"
[ "$(cat "$s11/ws/file")" = original ] || fail "17g: apply changed the workspace all the same"
rm "$s11/state/sessions/lent11/0/lent"
(cd "$s11/ws" && "$stockade" apply --state-dir "$s11/state" lent11 >/dev/null 2>&1) ||
        fail "17g: apply failed once the FIFO was gone"
[ "$(cat "$s11/ws/file")" = changed ] || fail "17g: apply did not write the change"

# 17g'. The same record a symlink (to a file of yours): apply refuses it by name; discard,
# which refused too (an outside review: the session could not be discarded), removes the
# session with it, and what the symlink names is untouched.
(cd "$s11/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s11/state" --session lent11b \
        -- sh -c 'echo again >file') || fail "17g': the run failed"
echo mine >"$s11/mine" && ln -s "$s11/mine" "$s11/state/sessions/lent11b/0/lent"
rc=0
out=$(cd "$s11/ws" && "$stockade" apply --state-dir "$s11/state" lent11b 2>&1) || rc=$?
[ $rc -eq 125 ] && grep -q "0/lent is not a regular file" <<<"$out" ||
        fail "17g': apply with a symlink at 0/lent ended $rc: $out"
out=$("$stockade" discard --state-dir "$s11/state" lent11b 2>&1) ||
        fail "17g': discard refused a session whose 0/lent is a symlink: $out"
[ ! -e "$s11/state/sessions/lent11b" ] || fail "17g': discard left the session"
[ "$(cat "$s11/mine")" = mine ] && [ "$(cat "$s11/ws/file")" = changed ] ||
        fail "17g': a file changed"

# 17h. A session's `0` swapped for a symlink to a look-alike (by another run's program, in a
# store it may write) before apply: apply followed `0` (only the last component of
# 0/upper, 0/journal and 0/lent was not followed), so it wrote the look-alike's change to the
# workspace and its journal and lent records in the directory the symlink names. Now `0` is
# opened beneath the session's fd without following a symlink: apply and diff refuse the
# session as damaged, nothing is written there or in the workspace, and discard removes the
# symlink, not what it names.
s12=$top/own/store12
mkdir -p "$s12/state" "$s12/ws"
echo original >"$s12/ws/file"
(cd "$s12/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s12/state" --session zero12 -- \
        sh -c 'echo changed >file') || fail "17h: the run failed"
z12=$s12/state/sessions/zero12/0
mkdir "$s12/decoy" && cp -a "$z12/upper" "$z12/journal" "$s12/decoy/"
echo decoy >"$s12/decoy/upper/file"
mv "$z12" "$z12.away" && ln -s "$s12/decoy" "$z12"
decoy_before=$(cd "$s12/decoy" && find . -printf '%p %s %T@\n' | sort)
rc=0
out=$(cd "$s12/ws" && "$stockade" apply --state-dir "$s12/state" zero12 2>&1) || rc=$?
[ $rc -eq 125 ] && grep -q "not a directory" <<<"$out" ||
        fail "17h: apply with 0 a symlink ended $rc: $out"
[ "$(cat "$s12/ws/file")" = original ] || fail "17h: apply wrote through the symlinked 0"
rc=0
out=$("$stockade" diff --state-dir "$s12/state" zero12 2>&1) || rc=$?
[ $rc -eq 125 ] && ! grep -q '^M file' <<<"$out" ||
        fail "17h: diff with 0 a symlink ended $rc and showed the look-alike: $out"
"$stockade" discard --state-dir "$s12/state" zero12 >/dev/null 2>&1 || fail "17h: discard failed"
[ ! -e "$s12/state/sessions/zero12" ] || fail "17h: discard left the session"
[ "$(cd "$s12/decoy" && find . -printf '%p %s %T@\n' | sort)" = "$decoy_before" ] ||
        fail "17h: the directory the symlinked 0 names changed: $(ls -la "$s12/decoy")"

# 17i. The run's end waits for the janitor (its verdict on the copies, its "done"), which
# could be stuck (a slow or hung file system): SIGTERM then ends stockade's wait, with one
# line, instead of going unanswered (it did: blocked for the loop, read by nobody). The
# janitor holds the session's lock from the moment it is told, so a run that takes the
# session meanwhile is refused as in use; once the janitor goes on, the session is whole.
# The janitor is stopped from outside (SIGSTOP) to stand for the stuck one.
s13=$top/own/store13
mkdir -p "$s13/state" "$s13/ws"
echo original >"$s13/ws/file"
(cd "$s13/ws" && exec "$stockade" run "${user[@]}" --state-dir "$s13/state" --session jan13 -- \
        sh -c "echo changed >file; while [ ! -e '$s13/go' ]; do sleep 0.05; done") \
        >"$top/out13" 2>&1 &
a13=$!
j13=
for _ in $(seq 100); do
        for p in $(pgrep -x stockade-sess); do
                [ "$(readlink "/proc/$p/fd/5" 2>/dev/null)" = "$s13/state/sessions/jan13" ] && j13=$p
        done
        [ -n "$j13" ] && break
        sleep 0.1
done
if [ -z "$j13" ]; then
        fail "17i: no janitor (stockade-sess) found for the session"
        : >"$s13/go"
        wait $a13 || true
else
        kill -STOP "$j13"
        : >"$s13/go"
        sleep 1
        kill -0 $a13 2>/dev/null || fail "17i: stockade did not wait for its stopped janitor"
        kill -TERM $a13 2>/dev/null || true
        for _ in $(seq 50); do kill -0 $a13 2>/dev/null || break; sleep 0.1; done
        if kill -0 $a13 2>/dev/null; then
                fail "17i: stockade still waits for its janitor 5 s after SIGTERM"
                kill -CONT "$j13"
        else
                grep -q "SIGTERM: not waiting for the end of session jan13" "$top/out13" ||
                        fail "17i: no word of the janitor left to finish: $(cat "$top/out13")"
                rc=0
                out=$(cd "$s13/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s13/state" \
                        --session jan13 -- true 2>&1) || rc=$?
                [ $rc -eq 125 ] && grep -q "in use" <<<"$out" ||
                        fail "17i: a run took the session while its janitor held it ($rc): $out"
                kill -CONT "$j13"
        fi
        wait $a13 || true
        for _ in $(seq 50); do kill -0 "$j13" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$j13" 2>/dev/null && fail "17i: the janitor did not end once let go"
        out=$("$stockade" diff --state-dir "$s13/state" jan13 2>&1) ||
                fail "17i: diff after the janitor's end failed: $out"
        grep -q '^M file' <<<"$out" || fail "17i: the session lost its change: $out"
        [ "$(cat "$s13/ws/file")" = original ] || fail "17i: the workspace changed"
fi

# 17j. A store named with --state-dir is hidden in every later run, not only in those that
# name it: the run lists it (in the default store's directory, XDG_STATE_HOME here) and each
# run reads that list. Whoever writes a session's file decides where apply writes: an outside
# review had a run with --rw over the store point root's apply at a root-only directory.
# Judged from outside: the session file is unchanged, and the later run saw no store. An
# outsider (a run that never read the list) still can, which is what 17b-17f attack.
s14=$top/own/store14
mkdir -p "$s14/state" "$s14/ws"
echo original >"$s14/ws/file"
(cd "$s14/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s14/state" --session list14 -- \
        sh -c 'echo changed >file') || fail "17j: the run failed"
meta14=$s14/state/sessions/list14/session
sum14=$(sha256sum <"$meta14")
rc=0
out=$("$stockade" run -q "${user[@]}" --rw "$s14" -- sh -c "
        ls '$s14/state' || echo unseen; echo forged >>'$meta14'" 2>&1) || rc=$?
[ "$(sha256sum <"$meta14")" = "$sum14" ] ||
        fail "17j: a later run wrote the listed store's session file: $out"
grep -q unseen <<<"$out" || fail "17j: a later run could list the store: $out"
out=$(outsider "$stockade" run -q "${user[@]}" --rw "$s14" -- ls "$s14/state" 2>&1) ||
        fail "17j: an outsider could not see the store (the test proves nothing): $out"
(cd "$s14/ws" && "$stockade" discard --state-dir "$s14/state" list14 >/dev/null 2>&1) ||
        fail "17j: discard failed"

# 17j'. A listed store removed, and a symlink put at its path (anyone can, beneath /var/tmp):
# the list names no store there any more, so nothing is hidden where the symlink leads (an
# outside review hid a run's --rw directory and its workspace that way).
mkdir -p "$s14/gone/state" "$s14/rwdir"
(cd "$s14/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s14/gone/state" -- true) ||
        fail "17j': the run failed"
rm -rf "$s14/gone/state" && ln -s "$s14/rwdir" "$s14/gone/state"
out=$("$stockade" run -q "${user[@]}" --rw "$s14/rwdir" -- sh -c "touch '$s14/rwdir/made'" 2>&1) ||
        true
[ -e "$s14/rwdir/made" ] || fail "17j': a symlink at a removed store's path hid its target: $out"

# 17j''. A removed store's path swapped to and fro between a directory and a symlink (by
# another run's program, RENAME_EXCHANGE in a loop) while later runs start: the list's check
# may see the directory, and what the run looks up after must not follow the symlink (an
# outside review hid a run's --rw directory in 4 of 30 starts). None of 30 may hide it.
r16=$top/own/race16
mkdir -p "$r16/w" "$r16/victimrw" "$r16/st"
(cd "$r16/w" && "$stockade" run -q "${user[@]}" --state-dir "$r16/st" -- true) ||
        fail "17j'': the run failed"
rm -rf "$r16/st"
outsider "$stockade" run -q "${user[@]}" --rw "$r16" -- python3 -c '
import ctypes, os, sys
d = sys.argv[1]; libc = ctypes.CDLL(None, use_errno=True); n = 0
os.mkdir(d + "/st", 0o700); os.symlink(d + "/victimrw", d + "/ln")
open(d + "/ready", "w").close()
while not os.path.exists(d + "/stop"):
    n += libc.renameat2(-100, (d + "/st").encode(), -100, (d + "/ln").encode(), 2) == 0
open(d + "/swaps", "w").write(str(n))' "$r16" &
pid16=$!
for _ in $(seq 100); do [ -e "$r16/ready" ] && break; sleep 0.1; done
hid=0
for _ in $(seq 30); do
        "$stockade" run -q "${user[@]}" --rw "$r16/victimrw" -- touch "$r16/victimrw/x" \
                2>/dev/null && [ -e "$r16/victimrw/x" ] || hid=$((hid + 1))
        rm -f "$r16/victimrw/x"
done
touch "$r16/stop"
wait $pid16 || true
[ "$(cat "$r16/swaps" 2>/dev/null || echo 0)" -gt 0 ] ||
        fail "17j'': nothing was swapped (the test proves nothing)"
[ $hid -eq 0 ] || fail "17j'': $hid of 30 runs hid their --rw directory (a swapped store path)"

# 17k. The same store under another name that a bind mount on the host gives it (root only:
# the test makes the bind): hidden there too (an outside review wrote a listed store through
# a bind of its parent, for a store beneath /var/tmp, which the view alone hides).
if [ "$(id -u)" -eq 0 ] && mkdir -p "$top/alias15" "$s14/state" &&
        mount --bind "$s14" "$top/alias15" 2>/dev/null; then
        (cd "$s14/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s14/state" -- true) ||
                fail "17k: the run failed"
        out=$("$stockade" run -q "${user[@]}" --rw "$top/alias15" -- sh -c "
                ls '$top/alias15/state' || echo unseen; mkdir '$top/alias15/state/sessions/x'
                mv '$top/alias15/state' '$top/alias15/moved'" 2>&1) || true
        [ -d "$s14/state/sessions" ] && [ ! -e "$s14/state/sessions/x" ] &&
                [ ! -e "$s14/moved" ] ||
                fail "17k: a later run wrote the listed store through a bind of it: $out"
        grep -q unseen <<<"$out" || fail "17k: a later run listed the store through a bind: $out"
        umount "$top/alias15" || fail "17k: the bind could not be undone"
fi

# 17l. The kernel's own write: a program that crashes gets a core dump written by the kernel
# in its current directory (core_pattern `core`), past the view. A later run went into a
# listed store's session (chdir is the kernel's) and crashed there, and apply then wrote the
# core into that project (an outside review). No run may dump core: its hard limit is 0.
(cd "$s14/ws" && "$stockade" run -q "${user[@]}" --state-dir "$s14/state" --session core17 -- \
        sh -c 'echo changed >file') || fail "17l: the run failed"
up17=$s14/state/sessions/core17/0/upper
before17=$(ls -A "$up17")
out=$(cd "$s14/ws" && "$stockade" run -q "${user[@]}" --rw "$s14/ws" -- sh -c "
        echo hard=\$(ulimit -H -c); cd '$up17' && echo in-store; ulimit -c unlimited;
        sh -c 'kill -SEGV \$\$'" 2>&1) || true
[ "$(ls -A "$up17")" = "$before17" ] || fail "17l: a crash wrote into a listed store: $out"
grep -qx hard=0 <<<"$out" || fail "17l: a program may dump core: $out"
[ -e "$s14/ws/core" ] && fail "17l: a core dump was written in the workspace: $out"
(cd "$s14/ws" && "$stockade" discard --state-dir "$s14/state" core17 >/dev/null 2>&1) ||
        fail "17l: discard failed"

[ "$(snap)" = "$before" ] || fail "the host tree changed by the end"
echo "the run's end and the session store checked; $fails failure(s)"
[ $fails -eq 0 ]

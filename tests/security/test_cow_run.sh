#!/usr/bin/env bash
# Issue 7: the copy-on-write workspace, judged from outside the sandbox. Usage:
#   test_cow_run.sh STOCKADE
# The default view's current directory is copy-on-write: the host tree (bytes, modes, times)
# must be exactly as before after any change the program makes, the changes must be in the
# session (its upper directory, and the journal's baselines), the program must see its own
# changes as a real tree would show them, and it must not reach any session by any path.
# Merged by stockade without a mount namespace (7.): test_cow_merged.sh; the run's end and
# the session store attacked by other runs (17.-17d.): test_cow_store.sh; the prelude they
# share (scratch, workspace, fail, sbx, snap): cow_common.sh.
# Skips (77) where no mount namespace can be made.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=cow_common.sh
source "$(dirname "$0")/cow_common.sh"

# 1. Every kind of change, and the program sees them as a real tree would.
out=$(sbx -- sh -c '
        echo new >src/main.c &&
        chmod 600 src/deep/keep.txt &&
        rm -rf gone &&
        mkdir -p build/obj && echo o >build/obj/a.o &&
        mv src/deep/keep.txt src/kept.txt &&
        ln -s main.c src/link &&
        touch -d @1600000000 run.sh &&
        python3 -c "import os; os.truncate(\"trunc.txt\", 3)" &&
        printf "#!/bin/sh\necho built-ran\n" >build/tool && chmod 755 build/tool &&
        cd build/obj && pwd && cd ../.. &&
        ./build/tool && ./run.sh &&
        cat src/main.c && ls -A && ls -A src && test ! -e gone && echo seen-ok') || true
echo "$out" | grep -qx "$ws/build/obj" || fail "getcwd in a new directory: $out"
echo "$out" | grep -qx built-ran || fail "a binary made in the workspace did not run: $out"
echo "$out" | grep -qx script-ran || fail "the lower's script did not run: $out"
echo "$out" | grep -qx new || fail "the program does not read its own write: $out"
echo "$out" | grep -qx seen-ok || fail "the program's view is wrong: $out ($(cat "$top/err"))"
[ "$(snap)" = "$before" ] || {
        fail "the host tree changed under copy-on-write"
        diff <(echo "$before") <(snap) >&2 || true
}
# When stockade returns, the session is final: nothing works in it afterwards.
state_now() { find "$state" -path '*/work/*' -prune -o -printf '%p %s %T@\n' | sort; }
stable=$(state_now)
sleep 0.5
[ "$(state_now)" = "$stable" ] ||
        fail "the session still changed after stockade returned"
sessions=("$state"/sessions/*)
[ ${#sessions[@]} -eq 1 ] && [ -d "${sessions[0]}" ] || fail "expected one session: ${sessions[*]}"
s=${sessions[0]}
name=$(basename "$s")
grep -q "^mount 0 $ws $ws $(stat -c %d:%i "$ws")\$" "$s/session" || fail "session metadata: $(cat "$s/session")"
[ "$(cat "$s/0/upper/src/main.c")" = new ] || fail "the upper lacks the new content"
[ -c "$s/0/upper/gone" ] || [ -d "$s/0/upper/gone" ] || fail "no whiteout for gone"
for p in src/main.c src/deep/keep.txt gone/sub/f run.sh trunc.txt; do
        grep -q "^B $p " "$s/0/journal" || fail "no baseline for $p: $(cat "$s/0/journal")"
done
grep -q "^B src/main.c f 0644 $(stat -c %s "$ws/src/main.c") 1700000000.000000000 " "$s/0/journal" ||
        fail "baseline of src/main.c is not the host's: $(grep main.c "$s/0/journal")"

# 2. A run that changes nothing leaves no session behind.
sbx -- sh -c 'cat src/main.c >/dev/null; ls >/dev/null' || fail "read-only run: $(cat "$top/err")"
n=$(ls "$state/sessions" | wc -l)
[ "$n" -eq 1 ] || fail "a run without changes left a session ($n)"
# ...nor does one that opens files for writing and writes nothing (sqlite opens its database
# so): the copies equal yours, and no "changes are in session" line is printed.
out=$(cd "$ws" && "$stockade" run "${user[@]}" --state-dir "$state" -- python3 -c '
open("src/main.c", "r+").read(); open("trunc.txt", "a").close()' 2>&1) || fail "r+ run: $out"
! grep -q 'changes are in session' <<<"$out" || fail "an open without a write told of changes: $out"
n=$(ls "$state/sessions" | wc -l)
[ "$n" -eq 1 ] || fail "a run that opened files for writing and wrote nothing left a session ($n)"

# 3. A named session continues: the second run sees the first one's changes.
sbx --session cont -- sh -c 'echo one >note' || fail "named run: $(cat "$top/err")"
out=$(sbx --session cont -- sh -c 'cat note; echo two >>note; cat note') || true
[ "$out" = "$(printf 'one\none\ntwo')" ] || fail "the continued session did not see its changes: $out"
[ ! -e "$ws/note" ] || fail "a named session wrote the host"

# 3b. Back to back: each run hands its overlay to the janitor, which lets it go before the
# session is unlocked (a run that changed something) or after the name is gone (one that
# did not). A run that reads many files between writes does not lose any.
for i in 1 2 3 4; do
        sbx --session b2b -- sh -c "echo $i >>b2b.txt; find . -xdev >/dev/null" ||
                fail "back-to-back run $i: $(cat "$top/err")"
        sbx -- sh -c 'find . -xdev >/dev/null' || fail "read-only run $i: $(cat "$top/err")"
done
out=$(sbx --session b2b -- cat b2b.txt) || true
[ "$out" = "$(printf '1\n2\n3\n4')" ] || fail "back-to-back runs of one session lost a write: $out"
[ ! -e "$ws/b2b.txt" ] || fail "a named session wrote the host"

# 4. Two runs cannot use one session at once.
(cd "$ws" && "$stockade" run -q "${user[@]}" --state-dir "$state" --session busy -- sleep 3) 2>/dev/null &
sleep 1
rc=0
sbx --session busy -- true || rc=$?
[ $rc -eq 125 ] && grep -q 'session `busy` is in use' "$top/err" ||
        fail "a session in use was not refused (exit $rc: $(cat "$top/err"))"
wait

# 5. No path reaches a session: the state directory by its path, through .., through /proc.
out=$(sbx -- sh -c "
        ls '$state' 2>&1; cat '$s/0/upper/src/main.c' 2>&1; echo x >'$s/0/upper/planted' 2>&1;
        cd '$ws/..' && ls state 2>&1; cat /proc/self/root'$s/session' 2>&1;
        echo y >'$state/sessions/evil' 2>&1; true") || true
for f in "$s/0/upper/planted" "$state/sessions/evil"; do
        [ ! -e "$f" ] || fail "the sandbox wrote $f"
done
if echo "$out" | grep -qE '^new$|stockade-session|mount 0'; then
        fail "the sandbox read a session: $out"
fi

# 5b. A hidden path beneath the cow directory: the calls the kernel resolves itself (an O_PATH
# open and fstat, getxattr, chdir and a listing) find nothing of it either. Judged by what
# reached the program: the host objects' inode numbers, an xattr's value, a name inside.
ws3=$top/ws3
mkdir -p "$ws3/hid"
echo key >"$ws3/hid/key"
echo tok >"$ws3/hid.txt"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.tag", b"xattr-leaked")' "$ws3/hid.txt"
probe='
import os
for p in ("hid", "hid.txt"):
    try:
        fd = os.open(p, os.O_PATH | os.O_NOFOLLOW); print(p, "ino", os.fstat(fd).st_ino)
    except OSError as e: print(p, "O_PATH", e.strerror)
    try: print(p, "xattr", os.getxattr(p, "user.tag"))
    except OSError as e: print(p, "getxattr", e.strerror)
for f, a in ((os.rename, ("hid.txt", "moved")), (os.unlink, ("hid.txt",)),
             (os.rename, ("hid", "moved-dir")), (os.rmdir, ("hid",))):
    try: f(*a); print("changed", a)
    except OSError as e: pass
for f in (os.mkdir, os.rmdir): # the slow way names "." as the kernel does
    try: f(".")
    except OSError as e: print("dot", f.__name__, e.strerror)
try:
    os.chdir("hid"); print("listed", os.listdir("."))
except OSError as e: print("chdir", e.strerror)'
out=$(cd "$ws3" && "$stockade" run -q "${user[@]}" --state-dir "$state" --hide "$ws3/hid" \
        --hide "$ws3/hid.txt" -- python3 -c "$probe" 2>"$top/err") || true
for p in hid hid.txt; do
        if grep -q "ino $(stat -c %i "$ws3/$p")\$" <<<"$out"; then
                fail "an O_PATH open reached the hidden $p: $out"
        fi
done
! grep -qE 'xattr-leaked|key' <<<"$out" || fail "a hidden path's content reached the program: $out"
! grep -q '^changed' <<<"$out" || fail "a hidden path was renamed or removed: $out"
grep -qx 'dot mkdir File exists' <<<"$out" && grep -qx 'dot rmdir Invalid argument' <<<"$out" ||
        fail "mkdir(\".\") or rmdir(\".\") the slow way: $out"
[ -z "$(find "$state" -path '*/work/*' -prune -o \( -name 'moved*' -o -name 'hid*' \) -print)" ] ||
        fail "a hidden path reached a session"
# 5b'. Merged by stockade (no mount namespace covers hid): chdir, O_PATH, statfs and inotify
# are performed by the kernel on the path the tracer gives it. Beneath a magic link
# (/proc/self/root/..., /proc/self/cwd/...) the kernel's walk would reach the hidden paths:
# the view refuses them. Judged by the inode the program got; the control is the magic link
# itself, the program's own directory.
probe_ml='
import os, sys
ws = os.getcwd()
for p in ["/proc/self/root" + ws + "/hid", "/proc/self/cwd/hid", "/proc/self/cwd/hid.txt",
          "/proc/self/root" + ws + "/hid.txt", "/proc/self/cwd"]:
    try: fd = os.open(p, os.O_PATH); print(p, "O_PATH ino", os.fstat(fd).st_ino); os.close(fd)
    except OSError as e: print(p, "O_PATH", e.strerror)
    try:
        os.chdir(p); fd = os.open(".", os.O_PATH)
        print(p, "chdir ino", os.fstat(fd).st_ino); os.close(fd); os.chdir(ws)
    except OSError as e: print(p, "chdir", e.strerror)
    try: os.statvfs(p); print(p, "statfs ok")
    except OSError as e: print(p, "statfs", e.strerror)'
oml=$(cd "$ws3" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" --hide "$ws3/hid" --hide "$ws3/hid.txt" -- python3 -c "$probe_ml" \
        2>"$top/err") || true
grep -qx "/proc/self/cwd O_PATH ino $(stat -c %i "$ws3")" <<<"$oml" ||
        fail "merged: the control, an O_PATH open of /proc/self/cwd, failed: $oml $(cat "$top/err")"
for p in hid hid.txt; do
        ! grep -q "ino $(stat -c %i "$ws3/$p")\$" <<<"$oml" ||
                fail "merged: a walk beneath a magic link reached the hidden $p: $oml"
done
! grep -q "hid.* statfs ok" <<<"$oml" || fail "merged: statfs beneath a magic link reached hid: $oml"
# 5c. Hidden paths beneath the cow directory that no mount covers: one that is a symlink
# (~/.aws -> dotfiles/aws; its real path too), one made on the host after the start. Judged
# by what reached the host's pipe.
fh=$top/own/fakehome
mkdir -p "$fh/dotfiles/aws"
echo AWS-SECRET >"$fh/dotfiles/aws/credentials"
ln -s dotfiles/aws "$fh/.aws"
o5c=$(cd "$fh" && HOME=$fh "$stockade" run -q "${user[@]}" --state-dir "$state" -- sh -c '
        cat .aws/credentials dotfiles/aws/credentials "$HOME/dotfiles/aws/credentials"
        sleep 1; cat .netrc "$HOME/.netrc"; echo probe-done' 2>/dev/null & sleep 0.5; echo NETRC-SECRET >"$fh/.netrc"; wait) || true
grep -qx probe-done <<<"$o5c" || fail "the hidden-path probe did not run: $o5c"
! grep -qE 'AWS-SECRET|NETRC-SECRET' <<<"$o5c" || fail "a hidden path beneath the cow directory was read: $o5c"
# The default session store in a workspace run without copy-on-write (--rw . from a home
# directory): hidden too, so that no program can forge a session there.
mkdir -p "$fh/.local/state/stockade/sessions" "$fh/work" # (no new entry directly in a home)
(cd "$fh" && HOME=$fh "$stockade" run -q "${user[@]}" --rw . -- sh -c \
        'mkdir .local/state/stockade/sessions/forged; echo x >.local/state/stockade/sessions/f;
         echo x >work/made-by-rw-run') >/dev/null 2>&1 || true
[ -e "$fh/work/made-by-rw-run" ] || fail "the --rw run did not run (the store check proves nothing)"
[ -z "$(ls -A "$fh/.local/state/stockade/sessions")" ] ||
        fail "a --rw run wrote the session store: $(ls -A "$fh/.local/state/stockade/sessions")"

# ... and where the home lies in /var/tmp (CI's), which the default view lets every run
# write: hidden by the view alone there (carved out of Landlock, /var/tmp would be granted by
# its entries and no file could be made directly in it). Every way of changing a file is
# tried by absolute path from a workspace elsewhere; an open that truncates once acted before
# the view's judgement (the fast way, and a reopen of an O_PATH fd through /proc/self/fd).
vh=$(mktemp -d /var/tmp/stockade-vh.XXXXXX)
chmod 755 "$vh"
vs=$vh/.local/state/stockade/sessions
mkdir -p "$vs" "$vh/work"
echo orig >"$vs/existing"
chmod 644 "$vs/existing"
echo mine >"$vh/work/mine"
cat >"$vh/work/probe.py" <<'PY'
import ctypes, os, sys
S, direct = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def t(name, f):
    try:
        f()
        print(name, "changed")
    except OSError as e:
        print(name, "refused", e.errno)
def opath():
    return os.open(S + "/existing", os.O_PATH)
def linkat_empty():
    if libc.linkat(opath(), b"", -100, b"linked", 0x1000) != 0:
        raise OSError(ctypes.get_errno(), "linkat")
t("mkdir", lambda: os.mkdir(S + "/forged"))
t("create", lambda: open(S + "/f", "x").write("x"))
t("trunc", lambda: open(S + "/existing", "w").write("forged"))
t("append", lambda: open(S + "/existing", "a").write("forged"))
t("rdonly-trunc", lambda: os.open(S + "/existing", os.O_RDONLY | os.O_TRUNC))
t("truncate", lambda: os.truncate(S + "/existing", 1))
t("chmod", lambda: os.chmod(S + "/existing", 0o777))
t("utime", lambda: os.utime(S + "/existing", (1, 1)))
t("setxattr", lambda: os.setxattr(S + "/existing", "user.x", b"1"))
t("symlink", lambda: os.symlink("/etc/passwd", S + "/sl"))
t("link", lambda: os.link("mine", S + "/hl"))
t("rename-in", lambda: os.rename("mine", S + "/moved"))
t("rename-out", lambda: os.rename(S + "/existing", "stolen"))
t("mkfifo", lambda: os.mkfifo(S + "/fifo"))
t("unlink", lambda: os.unlink(S + "/existing"))
t("reopen-trunc", lambda: open("/proc/self/fd/%d" % opath(), "w"))
t("reopen-chmod", lambda: os.chmod("/proc/self/fd/%d" % opath(), 0o777))
t("fd-chmod", lambda: os.chmod(opath(), 0o777))
t("fd-utime", lambda: os.utime(opath(), (2, 2)))
t("reopen-truncate", lambda: os.truncate("/proc/self/fd/%d" % opath(), 0))
t("linkat-empty", linkat_empty)
H = S[:-len("/.local/state/stockade/sessions")]  # the sandbox's HOME may be another
t("rename-state", lambda: os.rename(H + "/.local/state", H + "/.local/st2"))
t("rename-local", lambda: os.rename(H + "/.local", H + "/l2"))
os.chdir(os.path.dirname(S))
t("relative", lambda: open(os.path.basename(S) + "/g", "x").write("x"))
open(direct, "x").write("x")
print("probe-done")
PY
for how in "" mntns; do
        vout=$(cd "$vh/work" && HOME=$vh STOCKADE_TEST_DISABLE=$how "$stockade" run -q --allow-degraded \
                "${user[@]}" --rw . -- python3 probe.py "$vs" "$vh/direct" 2>&1) || true
        grep -qx probe-done <<<"$vout" && [ -e "$vh/direct" ] ||
                fail "the store probe in /var/tmp did not run (${how:-namespace}): $vout"
        [ "$(ls -A "$vs")" = existing ] && [ "$(cat "$vs/existing")" = orig ] &&
                [ "$(stat -c %a "$vs/existing")" = 644 ] ||
                fail "a run wrote the session store in /var/tmp (${how:-namespace}): $(ls -lA "$vs"): $vout"
        ! grep -q changed <<<"$vout" || fail "a change in the store was answered as done: $vout"
        [ -d "$vh/.local/state" ] && [ ! -L "$vh/.local/state" ] && [ ! -e "$vh/.local/st2" ] &&
                [ ! -e "$vh/l2" ] || fail "a run moved the store's directories (${how:-namespace}): $(ls -la "$vh" "$vh/.local")"
        rm -f "$vh/direct" "$vh/work/linked"
        rm -rf "${vs:?}"/* && echo orig >"$vs/existing" && chmod 644 "$vs/existing"
done
# A home with no store yet (CI's first run): nothing may be put where the store will be made
# (a symlink to the program's directory took the next runs' sessions there).
mkdir -p "$vh/fresh/.local/bin" "$vh/work/evil/stockade/sessions/forged"
for how in "" mntns; do
        vout=$(cd "$vh/work" && HOME=$vh/fresh STOCKADE_TEST_DISABLE=$how "$stockade" run -q \
                --allow-degraded "${user[@]}" --rw . -- sh -c '
                ln -s "$PWD/evil" "$1/.local/state" && echo planted-link
                mkdir -p "$1/.local/state" && mv evil/stockade "$1/.local/state/" && echo moved-in
                ln -s "$PWD/evil/stockade" "$1/.local/state/stockade" && echo planted-store
                rmdir "$1/.local/state"
                python3 -c "import os, sys; os.symlink(os.getcwd() + \"/evil\", \"lnk\")
os.link(\"lnk\", sys.argv[1] + \"/.local/state\", follow_symlinks=False)" "$1" && echo linked-link
                true >"$1/.local/state" && echo file-made
                echo fresh-done' sh "$vh/fresh" 2>&1) || true
        grep -qx fresh-done <<<"$vout" || fail "the fresh-home probe did not run (${how:-namespace}): $vout"
        [ ! -e "$vh/fresh/.local/state" ] && [ ! -L "$vh/fresh/.local/state" ] &&
                [ -d "$vh/work/evil/stockade/sessions/forged" ] ||
                fail "a run planted the store in a fresh home (${how:-namespace}): $vout"
        rm -rf "$vh/fresh/.local/state" "$vh/work/lnk"
done
# The program may chmod the directories on the way to the store (a workspace's parents are
# its to change), which would let another user replace them: the host's stockade then
# refuses the store, naming the directory, rather than trust what it holds.
(cd "$vh/work" && HOME=$vh "$stockade" run -q "${user[@]}" --rw . -- chmod 0777 "$vh/.local") >/dev/null 2>&1 || true
if [ "$(stat -c %a "$vh/.local")" = 777 ]; then
        rc=0
        HOME=$vh "$stockade" sessions >"$top/out" 2>&1 || rc=$?
        [ $rc -eq 125 ] && grep -q "store's directory \`$vh/.local\` belongs to another user or is writable by every user" "$top/out" ||
                fail "a store whose parent every user may write was trusted (exit $rc): $(cat "$top/out")"
        chmod 755 "$vh/.local"
        HOME=$vh "$stockade" sessions >"$top/out" 2>&1 || fail "the store once mended: $(cat "$top/out")"
else
        fail "the chmod of the store's parent did not run (the refusal is not tested)"
fi
# A home that is a symlink (the store hidden by its real path): the link is not renamed away.
mkdir -p "$vh/realhome/.local/state/stockade/sessions"
ln -s realhome "$vh/homelink"
for how in "" mntns; do
        vout=$(cd "$vh/work" && HOME=$vh/homelink STOCKADE_TEST_DISABLE=$how "$stockade" run -q \
                --allow-degraded "${user[@]}" --rw . -- sh -c 'mv "$1" old && echo moved; echo link-done' \
                sh "$vh/homelink" 2>&1) || true
        grep -qx link-done <<<"$vout" || fail "the symlinked-home probe did not run (${how:-namespace}): $vout"
        [ "$(readlink "$vh/homelink")" = realhome ] && [ ! -e "$vh/work/old" ] ||
                fail "a run renamed a symlinked home away (${how:-namespace}): $vout"
done
rm -rf "$vh"

# The slow way only where a hidden path lies beneath (the default view's patterns, other
# users' homes among them, do not reach beneath a workspace).
v=$(cd "$ws3" && "$stockade" run -v "${user[@]}" --state-dir "$state" --hide "$ws3/hid" -- true 2>&1)
grep -q 'copy-on-write: hidden paths beneath it (1 covered' <<<"$v" || fail "-v with a hidden path beneath: $v"
v=$(cd "$ws" && "$stockade" run -v "${user[@]}" --state-dir "$state" -- true 2>&1)
! grep -q 'copy-on-write: hidden paths beneath' <<<"$v" || fail "-v without a hidden path beneath: $v"
grep -q '^hid O_PATH\|^hid ino' <<<"$out" || fail "the probe did not run: $out $(cat "$top/err")"

# 6. --cow where it is given explicitly, and a --ro beneath it is refused.
rc=0
sbx --cow "$ws" --ro "$ws/src" -- true || rc=$?
[ $rc -eq 125 ] && grep -q 'beneath the copy-on-write' "$top/err" ||
        fail "--ro beneath --cow was not refused (exit $rc: $(cat "$top/err"))"

# 6b. TMPDIR in the workspace (TMPDIR=$PWD/.tmp in a CI job): the private /tmp is not made
# there, where the overlay would show it read-only and the workspace's listing would show it.
[ "$(snap)" = "$before" ] || fail "the host tree changed by the end of section 6"
mkdir -p "$ws/tmpd"
out=$(cd "$ws" && TMPDIR=$ws/tmpd "$stockade" run -q "${user[@]}" --state-dir "$state" -- \
        sh -c 'echo tx >/tmp/a && cat /tmp/a && ls -A tmpd && echo listed' 2>&1) || true
[ "$out" = "$(printf 'tx\nlisted')" ] || fail "TMPDIR in the workspace: the private /tmp: $out"
[ -z "$(ls -A "$ws/tmpd")" ] || fail "TMPDIR in the workspace: left in it: $(ls -A "$ws/tmpd")"
rmdir "$ws/tmpd"
before=$(snap) # tmpd, made and removed, changed the workspace's time

# 8. End to end, on a second tree: apply refused when the host changed since the run, naming
# the file and writing nothing; apply of one path; --force; discard.
ws2=$top/ws2
mkdir -p "$ws2/a" "$ws2/b" "$ws2/c"
echo a1 >"$ws2/a/f"
echo b1 >"$ws2/b/g"
echo c1 >"$ws2/c/m"
chmod 644 "$ws2/c/m"
st=(--state-dir "$state")
(cd "$ws2" && "$stockade" run -q "${user[@]}" "${st[@]}" --session e2e -- sh -c \
        'echo a2 >a/f && echo b2 >b/g && echo new >b/n && chmod 600 c/m') 2>"$top/err" ||
        fail "e2e run: $(cat "$top/err")"
echo host-edit >"$ws2/a/f"
chmod 640 "$ws2/c/m" # a mode change on the host is a change too
rc=0
"$stockade" apply e2e "${st[@]}" 2>"$top/err" || rc=$?
[ $rc -eq 125 ] && grep -q 'conflict: a/f: changed on the host' "$top/err" &&
        grep -q 'conflict: c/m: changed on the host' "$top/err" ||
        fail "apply over a host change was not refused (exit $rc): $(cat "$top/err")"
[ "$(cat "$ws2/a/f" "$ws2/b/g")" = "$(printf 'host-edit\nb1')" ] && [ ! -e "$ws2/b/n" ] ||
        fail "a refused apply wrote something"
"$stockade" apply e2e b "${st[@]}" >/dev/null 2>"$top/err" || fail "apply e2e b: $(cat "$top/err")"
[ "$(cat "$ws2/a/f" "$ws2/b/g" "$ws2/b/n")" = "$(printf 'host-edit\nb2\nnew')" ] ||
        fail "apply of b: $(cat "$ws2/a/f" "$ws2/b/g" "$ws2/b/n" 2>&1)"
[ "$("$stockade" diff e2e "${st[@]}")" = "$(printf 'M a/f\nM c/m (mode 640 -> 600)')" ] ||
        fail "left after apply of b: $("$stockade" diff e2e "${st[@]}" 2>&1)"
"$stockade" apply e2e --force "${st[@]}" >/dev/null 2>"$top/err" && [ "$(cat "$ws2/a/f")" = a2 ] &&
        [ "$(stat -c %a "$ws2/c/m")" = 600 ] ||
        fail "apply --force: $(cat "$top/err")"
"$stockade" discard e2e "${st[@]}" && [ ! -e "$state/sessions/e2e" ] || fail "discard e2e"

# 9. A run killed with SIGKILL while it writes: the session has what was written, the host
# nothing, and the session is not left locked.
(cd "$ws2" && exec "$stockade" run -q "${user[@]}" "${st[@]}" --session killed -- sh -c \
        'i=0; while :; do i=$((i + 1)); echo "line $i" >>log; done') 2>/dev/null &
pid=$!
disown $pid # no "Killed" notice from the shell
sleep 1.5
kill -KILL $pid
while kill -0 $pid 2>/dev/null; do sleep 0.1; done
sleep 0.5
"$stockade" diff killed "${st[@]}" >"$top/out" 2>"$top/err" || fail "diff of a killed run: $(cat "$top/err")"
grep -qx 'A log' "$top/out" || fail "the killed run's file is not in its diff: $(cat "$top/out")"
head -1 "$state/sessions/killed/0/upper/log" | grep -qx 'line 1' || fail "the killed run's log"
[ ! -e "$ws2/log" ] || fail "a killed run wrote the host"
"$stockade" discard killed "${st[@]}" 2>"$top/err" ||
        fail "the killed run's session cannot be discarded: $(cat "$top/err")"
# An unnamed run killed before it changed anything leaves no session behind.
before_kill=$(ls "$state/sessions" | sort)
(cd "$ws2" && exec "$stockade" run -q "${user[@]}" "${st[@]}" -- sleep 30) 2>/dev/null &
pid=$!
disown $pid
sleep 1
[ "$(ls "$state/sessions" | sort)" != "$before_kill" ] ||
        fail "the run to be killed made no session (the check below proves nothing)"
kill -KILL $pid
while kill -0 $pid 2>/dev/null; do sleep 0.1; done
sleep 0.5
[ "$(ls "$state/sessions" | sort)" = "$before_kill" ] ||
        fail "a killed run without changes left a session: $(ls "$state/sessions")"

# 10. The program renames the workspace away (its parent is its own, in /var/tmp) and puts a
# symlink to a victim directory, then another directory, at the workspace's path: diff and
# apply refuse the session (the directory is not the one it was made for) and write nothing.
for swap in symlink dir; do
        p=$top/own/p-$swap victim=$top/victim-$swap # own: no hidden path beneath
        mkdir -p "$p/ws" "$victim"
        echo keep >"$victim/keep"
        chmod 755 "$victim"
        vbefore=$(ls -la "$victim")
        if [ $swap = symlink ]; then plant="ln -s '$victim' '$p/ws'"; else plant="mkdir '$p/ws'"; fi
        (cd "$p/ws" && "$stockade" run -q "${user[@]}" "${st[@]}" --session swap-$swap -- sh -c "
                echo pwned >pwned && cd / && mv '$p' '$p.old' && mkdir '$p' && $plant") \
                2>"$top/err" || fail "the $swap swap run: $(cat "$top/err")"
        [ -e "$p.old" ] || fail "the $swap swap did not happen (the test proves nothing)"
        rc=0
        "$stockade" apply swap-$swap "${st[@]}" >"$top/out" 2>&1 || rc=$?
        [ $rc -eq 125 ] && grep -q 'not the one the session was made for' "$top/out" ||
                fail "apply after a $swap swap (exit $rc): $(cat "$top/out")"
        [ "$(ls -la "$victim")" = "$vbefore" ] && [ ! -e "$p/ws/pwned" ] ||
                fail "apply wrote through the $swap swap"
        "$stockade" discard swap-$swap "${st[@]}" 2>"$top/err" || fail "discard: $(cat "$top/err")"
done

# 11. A hard link from the workspace to a file outside it: the program's chmod and touch of
# it, applied, reach the workspace's name only (apply replaces such a file, never changes
# it in place), and so does a new name the program linked to it.
hw=$top/own/hl-ws
mkdir -p "$hw"
echo secret >"$top/outside-secret"
chmod 600 "$top/outside-secret"
ln "$top/outside-secret" "$hw/hl"
obefore=$(stat -c '%a %Y %s' "$top/outside-secret")
(cd "$hw" && "$stockade" run -q "${user[@]}" "${st[@]}" --session hl -- sh -c \
        'chmod 644 hl && touch -d @1000000000 hl && ln hl hl2') 2>"$top/err" ||
        fail "the hard-link run: $(cat "$top/err")"
"$stockade" apply hl "${st[@]}" >/dev/null 2>"$top/err" || fail "apply hl: $(cat "$top/err")"
[ "$(stat -c '%a %Y' "$hw/hl")" = "644 1000000000" ] || fail "apply did not give hl its mode and time"
# (its link count drops: the workspace's name is another file now, as in the session)
[ "$(stat -c '%a %Y %s' "$top/outside-secret")" = "$obefore" ] ||
        fail "apply reached the file outside through a hard link: $(stat -c '%a %Y %h' "$top/outside-secret")"
"$stockade" discard hl "${st[@]}" 2>/dev/null || true

# 12. A tree deeper than PATH_MAX in a continued session: left out with a warning, and the
# session's other changes are still shown and applied.
dw=$top/own/deep-ws
mkdir -p "$dw"
(cd "$dw" && "$stockade" run -q "${user[@]}" "${st[@]}" --session deep -- sh -c 'echo good >legit') \
        2>"$top/err" || fail "deep run 1: $(cat "$top/err")"
(cd "$dw" && "$stockade" run -q "${user[@]}" "${st[@]}" --session deep -- python3 -c '
import os
for i in range(21):
    os.mkdir("d" * 200); os.chdir("d" * 200)') 2>"$top/err" || fail "deep run 2: $(cat "$top/err")"
"$stockade" diff deep "${st[@]}" >"$top/out" 2>"$top/err" || fail "diff of a deep session: $(cat "$top/err")"
grep -qx 'A legit' "$top/out" && grep -q 'deeper than PATH_MAX' "$top/err" ||
        fail "diff of a deep session: $(cat "$top/out" "$top/err")"
"$stockade" apply deep legit "${st[@]}" >/dev/null 2>"$top/err" && [ "$(cat "$dw/legit")" = good ] ||
        fail "apply of a deep session's other change: $(cat "$top/err")"
"$stockade" discard deep "${st[@]}" 2>"$top/err" || fail "discard of a deep session: $(cat "$top/err")"

# 13. stockade killed while it starts. An unnamed run's session that was given its metadata
# goes with the run (its janitor must survive writing to a dead stockade); one killed before
# that holds no `session` file: it "never began", a run with its name starts it afresh, and
# one older than ten seconds is swept by `stockade sessions`. A session with content stays.
kst=$top/kstate
kws=$top/own/kill-ws
mkdir -p "$kws"
for rep in 1 2; do
        for d in 0 0.001 0.002 0.003 0.004 0.005 0.006 0.007 0.008 0.010 0.012 0.015; do
                (cd "$kws" && exec "$stockade" run -q "${user[@]}" --state-dir "$kst" -- sleep 5) \
                        >/dev/null 2>&1 &
                pid=$!
                sleep $d
                kill -KILL $pid 2>/dev/null || true
                wait $pid 2>/dev/null || true
        done
done
with_meta() { find "$kst/sessions" -mindepth 2 -maxdepth 2 -name session 2>/dev/null; }
# Wait for every process of those runs (a janitor, the cleaner: forks of stockade, so their
# command lines name $kst) to end: a janitor may write its metadata after the kill, then
# remove the session once its stockade is gone. Checking before that caught it in between.
for _ in $(seq 150); do
        pgrep -f -- "--state-dir $kst" >/dev/null || break
        sleep 0.2
done
[ -z "$(with_meta)" ] || fail "runs killed while they started left sessions: $(with_meta)"
mkdir -p "$kst/sessions/unborn/0/upper/d" "$kst/sessions/unborn/0/work"
: >"$kst/sessions/unborn/lock"
: >"$kst/sessions/unborn/0/journal"
cp -a "$kst/sessions/unborn" "$kst/sessions/20200101-000000-0abc"
cp -a "$kst/sessions/unborn" "$kst/sessions/20200101-000000-1abc"
echo work >"$kst/sessions/20200101-000000-1abc/0/upper/d/f"
# What a janitor killed between its rename and the removal left: swept when old, kept when young.
mkdir -p "$kst/sessions/.gone-20200101-000000-2abc/0/upper" "$kst/sessions/.gone-young/0/upper"
touch -d @1577836800 "$kst/sessions/.gone-20200101-000000-2abc"
# ... and another file system mounted in one (root only can) is not emptied.
gm=""
if [ "$(id -u)" -eq 0 ]; then
        mkdir -p "$top/gone-src" "$kst/sessions/.gone-20200101-000000-3abc/m"
        echo keep >"$top/gone-src/keep"
        if mount --bind "$top/gone-src" "$kst/sessions/.gone-20200101-000000-3abc/m"; then
                gm=$kst/sessions/.gone-20200101-000000-3abc/m
                touch -d @1577836800 "$kst/sessions/.gone-20200101-000000-3abc"
        fi
fi
touch -d @1577836800 "$kst/sessions/20200101-000000-0abc" "$kst/sessions/20200101-000000-1abc"
"$stockade" sessions --state-dir "$kst" >"$top/out" 2>"$top/err" || fail "sessions: $(cat "$top/err")"
grep -q '^unborn .*never began' "$top/out" || fail "an unborn session's listing: $(cat "$top/out")"
[ ! -e "$kst/sessions/20200101-000000-0abc" ] || fail "an old unborn session was not swept"
[ ! -e "$kst/sessions/.gone-20200101-000000-2abc" ] && [ -d "$kst/sessions/.gone-young" ] ||
        fail "a janitor's left-over: $(ls -A "$kst/sessions")"
rm -rf "$kst/sessions/.gone-young"
if [ -n "$gm" ]; then
        [ -e "$top/gone-src/keep" ] || fail "the sweep of a janitor's left-over emptied a mount in it"
        umount "$gm" && rm -rf "$kst/sessions/.gone-20200101-000000-3abc"
fi
grep -q '^20200101-000000-1abc .*damaged' "$top/out" && [ -e "$kst/sessions/20200101-000000-1abc" ] ||
        fail "a session with content and no metadata was not kept as damaged: $(cat "$top/out")"
"$stockade" diff unborn --state-dir "$kst" >/dev/null 2>"$top/err" && fail "diff of an unborn session succeeded"
grep -q 'never began' "$top/err" || fail "diff of an unborn session: $(cat "$top/err")"
(cd "$kws" && "$stockade" run -q "${user[@]}" --state-dir "$kst" --session unborn -- sh -c \
        'echo x >made') 2>"$top/err" || fail "a run in an unborn session: $(cat "$top/err")"
"$stockade" diff unborn --state-dir "$kst" >"$top/out" 2>"$top/err" && grep -qx 'A made' "$top/out" ||
        fail "the unborn session started afresh: $(cat "$top/out" "$top/err")"
[ ! -e "$kws/made" ] || fail "the run in an unborn session wrote the host"

# 14. --rw of the workspace spelt through a symlink is the workspace: writes by either
# spelling reach the host, and no session is made (it was silently copy-on-write).
lw=$top/own/link-real
mkdir -p "$lw" "$top/lstate"
ln -s link-real "$top/own/link-ws"
(cd "$lw" && "$stockade" run -q "${user[@]}" --state-dir "$top/lstate" --rw "$top/own/link-ws" \
        -- sh -c "echo a >viacwd && echo b >'$top/own/link-ws/vialink'") 2>"$top/err" ||
        fail "the run with --rw through a symlink: $(cat "$top/err")"
[ "$(cat "$lw/viacwd" "$lw/vialink" 2>/dev/null)" = "$(printf 'a\nb')" ] ||
        fail "--rw through a symlink did not write the host: $(ls -A "$lw")"
[ -z "$(ls -A "$top/lstate/sessions" 2>/dev/null)" ] ||
        fail "--rw through a symlink made a session: $(ls "$top/lstate/sessions")"

# 15. Reopens through a magic link answer as the kernel does (natively, on a copy; under
# --rw .; merged by stockade): the checks before the reopen once made O_NOFOLLOW open the
# file and O_CREAT open a directory, and in the merge an fd opened before its file's copy-up,
# and the workspace's root (which always has an upper), could not be reopened (EACCES).
ro=$top/own/reopen
mkdir -p "$ro/native" "$ro/ws"
cat >"$ro/probe.py" <<'PY'
import errno, os
def t(name, f):
    try:
        r = f()
        print(name, "ok", "" if r is None else r)
    except OSError as e:
        print(name, errno.errorcode[e.errno])
os.mkdir("sub")
open("f", "w").write("orig\n")
fd = os.open("f", os.O_RDONLY)
p = "/proc/self/fd/%d" % fd
t("read", lambda: open(p).read().strip())
t("excl", lambda: os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
t("nofollow", lambda: os.open(p, os.O_NOFOLLOW))
t("directory", lambda: os.open(p, os.O_DIRECTORY))
t("creat-file", lambda: os.close(os.open(p, os.O_CREAT | os.O_RDONLY)))
t("creat-dir", lambda: os.open("/proc/self/cwd", os.O_CREAT | os.O_RDONLY))
t("cwd", lambda: sorted(os.listdir("/proc/self/cwd")))
open("f", "a").write("more\n")
t("after-write", lambda: open(p).read().split())
t("write-through", lambda: open(p, "a").write("third\n"))
t("content", lambda: open("f").read().split())
os.chdir("sub")
t("sub-cwd", lambda: os.listdir("/proc/self/cwd"))
PY
cp "$ro/probe.py" "$ro/native/"
(cd "$ro/native" && python3 probe.py) >"$ro/want" 2>&1
for how in rw merged; do
        rm -rf "${ro:?}/ws" && mkdir "$ro/ws" && cp "$ro/probe.py" "$ro/ws/"
        env=() flags=(--rw .)
        [ $how = merged ] && env=(STOCKADE_TEST_DISABLE=mntns) flags=(--allow-degraded)
        (cd "$ro/ws" && env "${env[@]}" "$stockade" run -q "${user[@]}" --state-dir "$state" \
                "${flags[@]}" -- python3 probe.py) >"$ro/got" 2>&1 || true
        diff "$ro/want" "$ro/got" >"$ro/diff" || fail "reopens through magic links ($how) differ from a native run: $(cat "$ro/diff")"
done

# 16. The files you give the command as its stdin, stdout and stderr are yours, in the
# copy-on-write workspace too: `> /dev/stdout`, `> /dev/stderr` and `/dev/stdin` reach them
# (they were EACCES, the reopen's path not being the view's; merged, a write went to a copy
# in the session). The read-only stdin is not made writable so: refused, or (merged) written
# to the session's copy, as any write of a workspace file.
io=$top/own/stdio
for how in overlay merged; do
        rm -rf "$io" && mkdir -p "$io" && echo given >"$io/in.txt"
        env=() flags=()
        [ $how = merged ] && env=(STOCKADE_TEST_DISABLE=mntns) flags=(--allow-degraded)
        (cd "$io" && env "${env[@]}" "$stockade" run -q "${user[@]}" --state-dir "$state" \
                --session "stdio-$how-$$" "${flags[@]}" -- sh -c 'echo one; echo two >/dev/stdout;
                echo three >/dev/stderr; cat /dev/stdin; echo x >/dev/stdin; echo end' \
                <"$io/in.txt" >"$io/out.log" 2>"$io/err.log") || true
        [ "$(cat "$io/out.log")" = "$(printf 'one\ntwo\ngiven\nend')" ] &&
                grep -qx three "$io/err.log" && [ "$(cat "$io/in.txt")" = given ] ||
                fail "stdio reopened ($how): out: $(cat "$io/out.log") err: $(cat "$io/err.log")"
        d=$("$stockade" diff "stdio-$how-$$" --state-dir "$state" 2>&1) || true
        [ -z "$(grep -vx 'M in.txt' <<<"$d")" ] || fail "stdio reopened ($how): the session has changes: $d"
        "$stockade" discard "stdio-$how-$$" --state-dir "$state" >/dev/null 2>&1 || true
done

[ "$(snap)" = "$before" ] || fail "the host tree changed by the end"
echo "session $name checked; $fails failure(s)"
[ $fails -eq 0 ]

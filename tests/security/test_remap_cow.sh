#!/usr/bin/env bash
# Remapped copy-on-write mounts, `--cow HOST:SANDBOX` (docs/plans/remapped-mounts.md §4), judged
# from outside the sandbox. Usage:
#   test_remap_cow.sh STOCKADE
# The host directory HOST is the overlay's lower, mounted at SANDBOX (an existing directory of
# the view, whose own content must stay its own): every change lands in the session, HOST
# untouched and unwritable at its own path inside; the session says `mount 0 SANDBOX HOST`;
# `stockade diff` shows SANDBOX-relative paths and `apply` writes HOST; a continued session
# with another SANDBOX is refused; a hidden path beneath the target is hidden at both names.
# Where no mount namespace can be made: the remap is refused (exit 125), then 77.
set -euo pipefail
stockade=$(realpath "$1")

# Under the build directory (ctest's working directory), not in /tmp: the sandbox's is its own.
base=$PWD
case "$base" in /tmp | /tmp/*) base=/var/tmp ;; esac
top=$(mktemp -d "$base/remap-cow.XXXXXX")
cleanup() {
        chmod -R u+rwx -- "$top" 2>/dev/null || true # overlayfs's work/work is mode 000
        rm -rf -- "$top" || echo "warning: $top could not be removed" >&2
}
trap cleanup EXIT
chmod 755 "$top"
fails=0
fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

# In the source's name: no output of the program may hold it.
src=$top/src-hostsideQZ
ws=$top/ws
t=$ws/t
state=$top/state
mkdir -p "$src/sub" "$src/hid" "$t" "$ws/t2" "$ws/scratch" "$state"
printf 'SRC-F\n' >"$src/f"
printf 'SRC-G\n' >"$src/sub/g"
printf 'SRC-DEL\n' >"$src/del"
printf 'TOKEN-COW-5k\n' >"$src/hid/key"
printf 'T-OWN\n' >"$t/t-own"
chmod 644 "$src/f" "$src/sub/g" "$src/del" "$src/hid/key"
touch -d @1500000000 "$src/f" "$src/sub/g" "$src/del"

# As root the command runs as nobody by default: --user root keeps these trees writable (it
# has no capability: HOST is protected by the walls, not by its modes).
user=()
[ "$(id -u)" -eq 0 ] && user=(--user root)
# A run that simulates a missing layer (STOCKADE_TEST_DISABLE) must say so, as runner.c does.
[ -n "${STOCKADE_TEST_ALLOW_DEGRADED:-}" ] && user+=(--allow-degraded)

sbx() { # sbx ARGS... -- CMD...: from the workspace, which is writable (not a cow mount)
        (cd "$ws" && "$stockade" run -q "${user[@]}" --state-dir "$state" --rw "$ws" "$@") 2>"$top/err"
}

# path, type, mode, size, mtime, ctime, content
snap() {
        (cd "$1" && find . -printf '%p %y %m %s %T@ %C@\n' | LC_ALL=C sort &&
                find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}

layers=$(cd "$top" && "$stockade" run -v "${user[@]}" -- true 2>&1) || true
if ! grep -q 'private directories (--tmp)  yes' <<<"$layers"; then
        rc=0
        sbx --cow "$src:$t" -- sh -c "echo ran >'$ws/ran'" || rc=$?
        [ $rc -eq 125 ] && grep -q -- "--cow.*$t.*namespace" "$top/err" && [ ! -e "$ws/ran" ] ||
                fail "without a mount namespace --cow $src:$t was not refused (exit $rc): $(cat "$top/err")"
        [ $fails -eq 0 ] || exit 1
        echo "skipped: no mount namespace can be made here, so no copy-on-write"
        exit 77
fi

src_before=$(snap "$src")
t_before=$(snap "$t")

# 1. Every kind of change, through the target; the program sees them; the source's own path
# is not writable (a write there would bypass the copy). Judged from outside.
out=$(sbx --session rc --cow "$src:$t" -- sh -c "
        exec 2>&1
        echo changed >t/f && echo new >t/new && rm t/del && mkdir t/nd && echo x >t/nd/x &&
        chmod 600 t/sub/g && echo changes-made
        echo \"f=\$(cat t/f)\"; ls -A t | sed 's/^/ls:/'; (cd t/nd && echo \"pwd=\$(pwd -P)\")
        (echo planted >'$src/planted') 2>/dev/null && echo wrote-src-new
        (echo x >>'$src/f') 2>/dev/null && echo wrote-src-f
        rm '$src/del' 2>/dev/null && echo removed-src-del
        (echo y >'$ws/scratch/beside') && echo wrote-ws") || true
grep -qx changes-made <<<"$out" || fail "the changes were not made: $out ($(cat "$top/err"))"
grep -qx f=changed <<<"$out" || fail "the program does not read its own change: $out"
grep -qx ls:new <<<"$out" && ! grep -qx ls:del <<<"$out" && ! grep -qx ls:t-own <<<"$out" ||
        fail "the target's listing: $out"
grep -qx "pwd=$t/nd" <<<"$out" || fail "getcwd in a new directory of the target: $out"
! grep -q 'wrote-src\|removed-src' <<<"$out" || fail "the source was writable at its own path: $out"
grep -qx wrote-ws <<<"$out" || fail "(control) the workspace was not writable: $out"
! grep -q hostsideQZ <<<"$out" || fail "the source's host path reached the program: $out"
[ "$(snap "$src")" = "$src_before" ] || {
        fail "the source changed on the host under copy-on-write"
        diff <(echo "$src_before") <(snap "$src") >&2 || true
}
[ "$(snap "$t")" = "$t_before" ] || fail "the host directory under the target changed"
s=$state/sessions/rc
grep -qx "mount 0 $t $src $(stat -c %d:%i "$src")" "$s/session" 2>/dev/null ||
        fail "session metadata: $(cat "$s/session" 2>&1)"
[ "$(cat "$s/0/upper/f" 2>&1)" = changed ] || fail "the upper lacks the change"
grep -q "^B f " "$s/0/journal" 2>/dev/null || fail "no baseline for f: $(cat "$s/0/journal" 2>&1)"
[ -z "$(find "$state" -path '*/work/*' -prune -o -name planted -print)" ] ||
        fail "a write at the source's path reached the session"

# 2. diff shows the target's relative paths.
want=$(printf 'D del\nM f\nA nd/\nA nd/x\nA new\nM sub/g (mode 644 -> 600)')
got=$("$stockade" diff rc --state-dir "$state" 2>"$top/err") || true
[ "$got" = "$want" ] || fail "stockade diff: $got ($(cat "$top/err"))"

# 3. The session continues with the same target (the control for 4) ...
out=$(sbx --session rc --cow "$src:$t" -- sh -c 'cat t/f t/new') || true
[ "$out" = "$(printf 'changed\nnew')" ] || fail "the continued session: $out ($(cat "$top/err"))"
# 4. ... and is refused with another one, before anything runs.
rc=0
sbx --session rc --cow "$src:$ws/t2" -- sh -c "echo ran >'$ws/ran'" || rc=$?
[ $rc -eq 125 ] && grep -q "session \`rc\`.*$ws/t2" "$top/err" && [ ! -e "$ws/ran" ] ||
        fail "a continued session with another target (exit $rc): $(cat "$top/err")"

# 5. A hidden path beneath the target hides the source's path too, by every name: the
# calls the kernel resolves (chdir, O_PATH + fstat) included. The control first: without
# --hide the same reads print the token.
probe="
        exec 2>&1
        cat t/hid/key; cat '$src/hid/key'; (cd t/hid && cat key && ls -A); ls -A t/hid
        ls -A t | sed 's/^/ls:/'
        /usr/bin/python3 -c 'import os
for p in (\"t/hid/key\", \"t/hid\", \"$src/hid/key\"):
    try: fd = os.open(p, os.O_PATH); print(\"ino\", os.fstat(fd).st_ino)
    except OSError as e: print(p, e.strerror); continue
    try: print(open(\"/proc/self/fd/%d\" % fd).read())
    except OSError as e: print(\"reopen\", e.strerror)'
        echo probe-done"
out=$(sbx --cow "$src:$t" -- sh -c "$probe") || true
grep -q TOKEN-COW-5k <<<"$out" || fail "(control) without --hide the token was not read: $out"
out=$(sbx --cow "$src:$t" --hide "$t/hid" -- sh -c "$probe") || true
grep -qx probe-done <<<"$out" || fail "the hidden-path probe did not run: $out ($(cat "$top/err"))"
! grep -q TOKEN-COW <<<"$out" || fail "a hidden path beneath the cow target was read: $out"
! grep -qx ls:hid <<<"$out" || fail "the listing shows the hidden path: $out"
for p in "$src/hid/key" "$src/hid"; do
        ! grep -qx "ino $(stat -c %i "$p")" <<<"$out" || fail "an O_PATH open reached $p: $out"
done

# 6. apply writes the source, and only it; then discard.
"$stockade" apply rc --state-dir "$state" >/dev/null 2>"$top/err" || fail "apply: $(cat "$top/err")"
[ "$(cat "$src/f" "$src/new" "$src/nd/x" 2>&1)" = "$(printf 'changed\nnew\nx')" ] &&
        [ ! -e "$src/del" ] && [ "$(stat -c %a "$src/sub/g")" = 600 ] ||
        fail "apply did not write the source: $(ls -lR "$src")"
[ "$(snap "$t")" = "$t_before" ] || fail "apply wrote the host directory under the target"
[ ! -e "$ws/new" ] && [ ! -e "$ws/f" ] || fail "apply wrote the workspace"
"$stockade" discard rc --state-dir "$state" 2>/dev/null || true

echo "$fails failure(s)"
[ $fails -eq 0 ]

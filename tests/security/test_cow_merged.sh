#!/usr/bin/env bash
# Issue 7: the copy-on-write workspace merged by stockade itself, without a mount namespace
# (STOCKADE_TEST_DISABLE=mntns), judged from outside the sandbox. Usage:
#   test_cow_merged.sh STOCKADE
# Section 7. of the copy-on-write checks (test_cow_run.sh holds the others where a mount
# namespace is made, test_cow_store.sh the run's end and the session store attacked; the
# prelude they share is cow_common.sh). The host tree must be exactly as before at the end.
# Skips (77) where no mount namespace can be made, as the others do.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=cow_common.sh
source "$(dirname "$0")/cow_common.sh"

# 7. Without a mount namespace the supervisor merges the layers itself (syscalls/fs_cow.h):
# --cow and the default view's working directory are copy-on-write there too, the host
# untouched (test_cow_workloads_emul and test_workload_cowemul_* do the real work). The new
# directory is entered through a symlink outside the workspace too: the kernel's walk would
# find the lower only.
ln -s "$ws" "$top/wslink"
export WSLINK=$top/wslink
for how in "--cow ." ""; do
        rc=0
        (cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -v --allow-degraded \
                "${user[@]}" --state-dir "$state" $how -- sh -c \
                'echo emul >emul.txt && rm -f src/main.c && mkdir nd && cd "$WSLINK/nd" && stat -f -c %b "$WSLINK/nd" >/dev/null &&
                 cd "$OLDPWD" && cd nd &&
                 stat -f -c %b . >/dev/null && printf "#!/bin/sh\necho ran\n" >t.sh &&
                 chmod +x t.sh && ./t.sh && cat ../emul.txt') >"$top/out" \
                2>"$top/err" || rc=$?
        [ $rc -eq 0 ] && grep -q '^emul$' "$top/out" && grep -q '^ran$' "$top/out" ||
                fail "without a mount namespace ($how): exit $rc: $(cat "$top/err")"
        grep -q 'merged by stockade itself' "$top/err" ||
                fail "-v does not say who merges ($how): $(cat "$top/err")"
        # The upper directory's fd was once left open at the end (the view was freed first).
        grep -q 'no fd leaked' "$top/err" || fail "the merged run leaked an fd ($how): $(cat "$top/err")"
        [ "$(snap)" = "$before" ] || fail "without a mount namespace ($how) the host tree changed"
done
# --no-exec-writable covers the merged workspace: neither layer is a writable place, and an
# outside review ran your tree's script and a binary it copied there.
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" --no-exec-writable -- sh -c './run.sh; echo host=$?;
        cp /bin/true ./t && ./t; echo made=$?' 2>&1) || true
grep -q 'host=126' <<<"$out" && grep -q 'made=126' <<<"$out" ||
        fail "merged: --no-exec-writable let the workspace's programs run: $out"
# The sticky bit's rule: in a shared directory only a name's owner (or the directory's) removes
# or renames it away (merged mode let the sandbox remove root's file there, and an apply as
# root then carried the removal to the host). Root only: it takes a file of another owner; the
# run is uid 65534's, without a mount namespace.
if [ "$(id -u)" -eq 0 ]; then
        sd=$(mktemp -d /var/tmp/stockade-sticky.XXXXXX)
        mkdir -p "$sd/ws/sticky" "$sd/state" "$sd/home" && chmod 755 "$sd" "$sd/ws" &&
                chmod 1777 "$sd/ws/sticky" && echo root >"$sd/ws/sticky/f" &&
                chown 65534:65534 "$sd/state" "$sd/home"
        out=$(cd "$sd/ws" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i \
                HOME="$sd/home" PATH=/usr/bin:/bin STOCKADE_TEST_DISABLE=userns,ipcns \
                "$stockade" run -q --allow-degraded --state-dir "$sd/state" -- sh -c '
                rm -f sticky/f; echo rm=$?; mv sticky/f sticky/g 2>/dev/null; echo mv=$?;
                echo n >sticky/mine && mv sticky/mine sticky/mine2 && rm sticky/mine2 &&
                echo own-ok' 2>&1) || true
        grep -q 'rm=1' <<<"$out" && grep -q 'mv=1' <<<"$out" && grep -q own-ok <<<"$out" ||
                fail "merged: the sticky bit's rule was not kept: $out"
        [ "$(cat "$sd/ws/sticky/f")" = root ] || fail "merged: the sticky directory's file changed"
        rm -rf "$sd"
else
        echo "note: the sticky bit's case needs root (a file of another owner): not run"
fi
# An inotify watch on a directory your tree has (a dev server's reload on save) sees the
# run's changes there: it is put on the session's copy of the directory, made for it (a watch
# on yours saw nothing), and the session shows no change for that. So does a watch on a file
# of your tree (node --watch, tsc --watch): on the session's copy, made for it unchanged.
wsess=inotify-$$
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" --session "$wsess" -- python3 -c '
import ctypes, os, select, struct, subprocess
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
wds = {}
for d in (b"src", b"src/deep", b"src/main.c", b"src/deep/keep.txt"):
    wd = libc.inotify_add_watch(fd, d, 0x2 | 0x80 | 0x100 | 0x200)
    if wd < 0:
        print("watch failed", d, ctypes.get_errno())
    wds[wd] = d.decode()
subprocess.run(["sh", "-c", "echo more >>src/main.c; echo n >src/deep/new.txt; rm src/deep/new.txt"])
seen, buf = set(), b""
while select.select([fd], [], [], 1)[0]:
    buf += os.read(fd, 65536)
i = 0
while i < len(buf):
    wd, mask, cookie, n = struct.unpack_from("iIII", buf, i)
    seen.add("%s:%s:%x" % (wds.get(wd, "?"), buf[i + 16:i + 16 + n].rstrip(b"\0").decode(), mask))
    i += 16 + n
print(" ".join(sorted(seen)))
' 2>&1) || true
for ev in "src:main.c:2" "src/deep:new.txt:100" "src/deep:new.txt:2" "src/deep:new.txt:200" \
        "src/main.c::2"; do
        grep -q "$ev" <<<"$out" || fail "merged: inotify missed '$ev' in your tree: $out"
done
d=$("$stockade" diff "$wsess" --state-dir "$state" 2>&1) || true
[ "$d" = "M src/main.c" ] || fail "merged: the watched directories show as changes: $d"
"$stockade" discard "$wsess" --state-dir "$state" >/dev/null 2>&1 || true
# Watches alone change nothing: no "changes are in session", and no session is left.
before_watch=$(ls "$state/sessions")
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run --allow-degraded "${user[@]}" \
        --state-dir "$state" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
print(*(libc.inotify_add_watch(fd, p, 0x2) > 0 for p in (b"src", b"src/main.c")))' 2>&1) || true
grep -qx 'True True' <<<"$out" || fail "merged: the watches failed: $out"
! grep -q 'changes are in session' <<<"$out" || fail "merged: watches alone told of changes: $out"
[ "$(ls "$state/sessions")" = "$before_watch" ] || fail "merged: watches alone left a session"
# What the run made, reached through a symlink outside the workspace that leads into it: the
# kernel's walk, tried first, sees your tree only (its ENOENT was taken as final).
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" -- sh -c 'mkdir -p made/nd && echo f >made/nd/f && cat "$WSLINK/made/nd/f" &&
        mkdir "$WSLINK/made/nd/deeper" && echo g >"$WSLINK/made/nd/g" && cat made/nd/g &&
        stat -c %s "$WSLINK/made/nd/f" && echo link-done' 2>&1) || true
[ "$(printf 'f\ng\n2\nlink-done')" = "$out" ] || fail "merged: what the run made, through an outside symlink: $out"
[ ! -e "$ws/made" ] || fail "merged: the run through an outside symlink wrote your tree"
# A hidden file beneath the merged workspace is absent however the path is spelt: "/./" and
# "//" once took the kernel's walk, whose ENOTDIR for "FILE/x" told that it existed.
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" --hide "$ws/src/main.c" -- python3 -c '
import os, sys
ws = sys.argv[1]
for f in ("src/main.c", "src/none.c"):
    for sp in (ws + "/" + f, ws.replace("/", "/./", 1) + "/" + f, "/" + ws + "//" + f):
        for q, fl in ((sp, os.O_RDONLY | os.O_DIRECTORY), (sp + "/x", os.O_RDONLY)):
            try:
                os.open(q, fl)
                print(q, "opened")
            except OSError as e:
                print(q, os.strerror(e.errno))
' "$ws" 2>&1) || true
[ "$(grep -c 'No such file or directory' <<<"$out")" -eq 12 ] ||
        fail "merged: a hidden file's existence told by a path's spelling: $out"
# Unix sockets bound in the merged workspace (a dev server's, a test harness's) are bound in
# the upper, where the kernel's walk of connect's and sendto's path cannot find them: the
# view's walk does (they were ENOENT, then EACCES as inside the hidden session store).
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" -- python3 -c '
import os, socket
os.mkdir("sockdir")
for p in ["s.sock", "src/s.sock", os.path.abspath("src/deep/t.sock"), "sockdir/s.sock"]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    s.listen()
    c = socket.socket(socket.AF_UNIX)
    c.connect(p)
    a, _ = s.accept()
    c.send(b"hi")
    print("stream", p, a.recv(2).decode())
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.bind("dg.sock")
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"dg", "dg.sock")
print("dgram", d.recv(2).decode())' 2>&1) || fail "unix sockets in the merged workspace: $out"
[ "$(echo "$out" | grep -c '^stream .* hi$')" -eq 4 ] && echo "$out" | grep -qx 'dgram dg' ||
        fail "unix sockets in the merged workspace: $out"
[ "$(snap)" = "$before" ] || fail "unix sockets in the merged workspace changed the host tree"
# getxattrat, listxattrat and file_getattr would be answered by the kernel from the lower alone
# (and from files the view hides): ENOSYS where the workspace is merged, and getxattr, which
# the view answers, sees an attribute set in the run on a file made in the run.
out=$(cd "$ws" && STOCKADE_TEST_DISABLE=mntns "$stockade" run -q --allow-degraded "${user[@]}" \
        --state-dir "$state" -- python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
open("xnew", "w").close()
try:
    os.setxattr("xnew", "user.k", b"v")
    print("getxattr", os.getxattr("xnew", "user.k").decode())
except OSError as e:
    print("getxattr", errno.errorcode[e.errno])
buf = ctypes.create_string_buffer(64)
args = (ctypes.c_uint64 * 2)(ctypes.addressof(buf), 64)
for name, nr, a in [("getxattrat", 464, (-100, b"xnew", 0, b"user.k", args, 16)),
                    ("listxattrat", 465, (-100, b"xnew", 0, buf, 64)),
                    ("file_getattr", 468, (-100, b"xnew", buf, 64, 0))]:
    r = libc.syscall(nr, *a)
    print(name, r if r >= 0 else errno.errorcode[ctypes.get_errno()])' 2>&1) ||
        fail "xattr reads in the merged workspace: $out"
grep -qx 'getxattr \(v\|ENOTSUP\)' <<<"$out" && grep -qx 'getxattrat ENOSYS' <<<"$out" &&
        grep -qx 'listxattrat ENOSYS' <<<"$out" && grep -qx 'file_getattr ENOSYS' <<<"$out" ||
        fail "xattr reads in the merged workspace (want getxattr v, the *at forms ENOSYS): $out"
[ -e "$ws/xnew" ] && fail "xattr reads in the merged workspace: xnew reached the host tree"
# Without ptrace the kernel would be left to find chdir's and exec's paths in the lower only:
# refused, saying so.
rc=0
(cd "$ws" && STOCKADE_TEST_DISABLE=mntns,ptrace "$stockade" run --allow-degraded "${user[@]}" \
        --state-dir "$state" -- true) 2>"$top/err" || rc=$?
[ $rc -eq 125 ] && grep -q 'without a mount namespace needs ptrace' "$top/err" ||
        fail "merged cow without ptrace was not refused (exit $rc: $(cat "$top/err"))"
# The copy-up's temporaries (.stockade-cowup.*) are no names of the merge: not listed while a
# large file is copied up, not made, not a rename's target (a second outside attack swapped one
# for a symlink during the copy, and the supervisor's chmod of it followed the symlink onto a
# file of its choice).
ws5=$top/ws5
mkdir -p "$ws5"
head -c 64M /dev/zero >"$ws5/big"
echo secret >"$top/victim"
chmod 600 "$top/victim"
rc=0
(cd "$ws5" && STOCKADE_TEST_DISABLE=mntns "$stockade" run --allow-degraded "${user[@]}" \
        --state-dir "$state" -- python3 -c '
import os, threading
seen = set()
done = threading.Event()
def lister():
    while not done.is_set():
        for n in os.listdir("."):
            if n.startswith(".stockade-cowup."):
                seen.add(n)
t = threading.Thread(target=lister)
t.start()
with open("big", "r+b") as f:
    f.write(b"x")
done.set()
t.join()
print("seen", len(seen))
for what, fn in (("made", lambda: open(".stockade-cowup.1.1", "w")),
                 ("renamed to", lambda: os.rename("big", ".stockade-cowup.2.2"))):
    try:
        fn()
        print(what, "allowed")
    except OSError as e:
        print(what, "refused", e.errno)
') >"$top/out" 2>"$top/err" || rc=$?
[ $rc -eq 0 ] && grep -qx 'seen 0' "$top/out" && grep -qx 'made refused 13' "$top/out" &&
        grep -qx 'renamed to refused 13' "$top/out" ||
        fail "the copy-up's temporary names: exit $rc: $(cat "$top/out" "$top/err")"
[ "$(stat -c %a "$top/victim")" = 600 ] || fail "a file outside changed mode"
rm -rf "$ws5"

# A --rw directory beneath the merged workspace (a package cache in a home directory) stays
# writable: its Landlock grant was once skipped as if an overlay covered it.
ws4=$top/ws4
mkdir -p "$ws4/rwsub"
rc=0
(cd "$ws4" && STOCKADE_TEST_DISABLE=mntns "$stockade" run --allow-degraded "${user[@]}" \
        --state-dir "$state" --rw ./rwsub -- sh -c 'echo through >rwsub/f && echo merged >m') \
        2>"$top/err" || rc=$?
[ $rc -eq 0 ] && [ "$(cat "$ws4/rwsub/f" 2>/dev/null)" = through ] && [ ! -e "$ws4/m" ] ||
        fail "--rw beneath the merged workspace: exit $rc, rwsub/f $(cat "$ws4/rwsub/f" 2>&1), m $(ls "$ws4/m" 2>&1): $(cat "$top/err")"

[ "$(snap)" = "$before" ] || fail "the host tree changed by the end"
echo "merged copy-on-write checked; $fails failure(s)"
[ $fails -eq 0 ]

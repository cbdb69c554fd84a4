#!/usr/bin/env bash
# Issue 7: the copy-on-write workspace under real work, judged from outside. Usage:
#   test_cow_workloads.sh STOCKADE MODE        MODE: overlay | emul
# The acceptance test of both implementations of `--cow`: overlay is overlayfs in the
# sandbox's mount namespace (the reference: it must pass today); emul is the supervisor's
# emulation of the overlay for hosts with no mount namespace (docs/plans/cow-without-mntns.md),
# forced with STOCKADE_TEST_DISABLE=userns,ipcns and --allow-degraded. While --cow is refused
# there ("copy-on-write needs a mount namespace") emul FAILS: it is a test of what will be.
# overlay skips (77) where no mount namespace can be made.
#
# Each workload gets a fresh copy of one host tree in $ws (files of several modes, times set
# to the nanosecond, symlinks, subdirectories, an empty directory, a name with spaces, a
# user.* xattr where the file system takes one) and its own session, and is judged five ways:
#   1. the host tree is byte for byte as before (path, type, mode, owner, size, links,
#      mtime, ctime, inode, content hash, symlink target, user.* xattrs);
#   2. what the program saw (its own ls -laR, find, cat, stat, and a walk with lstat, content
#      hashes and xattrs) equals what the same script prints when run natively on a copy of
#      the tree (cp -a to $top/native), less what legitimately differs: inode and device
#      numbers, directories' link counts and sizes, and times that are the run's own ("recent":
#      a time the host tree had is compared to the nanosecond, on directories too);
#   3. `stockade diff NAME` lists what the native run changed (derived from the native copy:
#      A/D/M/T per path, a rename as its D and A), and for some workloads exactly the lines
#      expected, annotations included;
#   4. `stockade apply NAME` makes the host tree what the native run made (the same walk,
#      directories' times aside: apply renames files into them);
#   5. the session is empty afterwards, and discarded.
# (Three differences of apply this test found — a changed file's user.* xattrs lost, a hard
# link to an unchanged host file made a copy, a directory that became a symlink failing the
# apply — are fixed, and fail it.)
# STOCKADE_TEST_KEEP=1 keeps the outputs ($top/NAME.{nat,got,diff,...}) for a look.
# Not here: executing a file made in the run and `cd` into a directory made in the run
# (test_cow_run's section 7 and test_workload_cowemul_* do that without a mount namespace),
# and renaming a directory the host has (test_workload_*_mv).
# Run as root, stockade runs with --user root (the workspace is root's); the native side runs
# as the caller. Passes as root and as an unprivileged user (TMPDIR a directory it can write).
# The workloads are sh scripts in single quotes, expanded by the sandbox's shell:
# shellcheck disable=SC2016
set -euo pipefail
[ $# -eq 2 ] && { [ "$2" = overlay ] || [ "$2" = emul ]; } || {
        echo "usage: $0 STOCKADE overlay|emul" >&2
        exit 2
}
stockade=$(realpath "$1")
mode=$2

export LC_ALL=C TZ=UTC
# A clean, fixed environment for git, the same on both sides: commits hash alike.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_DATE=@1700000000
export GIT_COMMITTER_DATE=@1700000000
PY=/usr/bin/python3 # Debian's interpreter, not a pyenv shim that another user cannot read
if [ ! -x "$PY" ]; then
        echo "skipped: $PY is missing (the snapshots are made with it)"
        exit 77
fi
export PY

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-cowwl.XXXXXX")
# The removal must not decide the verdict (set -e would make a failing trap the exit code).
cleanup() {
        if [ -n "${STOCKADE_TEST_KEEP:-}" ]; then # for a look at the outputs afterwards
                echo "kept: $top"
                return
        fi
        chmod -R u+rwx -- "$top" 2>/dev/null || true # overlayfs's work/work is mode 000
        rm -rf -- "$top" 2>&1 || {
                echo "warning: $top could not be removed; left in it:" >&2
                find "$top" -maxdepth 4 -printf '%M %u %p\n' >&2 || true
        }
}
trap cleanup EXIT
chmod 755 "$top"
state=$top/state
ws=$top/ws
native=$top/native
pristine=$top/pristine
outside=$top/outside
fails=0
# Times from here on are the runs' own: "recent" on both sides. The host tree's are older.
t0=$(($(date +%s) - 2))
export T0=$t0 SNAP=$top/snap.py

fail() {
        echo "FAIL [$wl]: $*" >&2
        fails=$((fails + 1))
}
wl=setup

# As root the command runs as nobody by default: --user root keeps the workspace writable.
user=()
[ "$(id -u)" -eq 0 ] && user=(--user root)
# The sandbox's environment (TMPDIR: the state directory is hidden and the directories on the
# way to it cannot take new entries; the sandbox's /tmp is its own where it can be).
envs=(env TMPDIR=/tmp)
extra=()
if [ "$mode" = emul ]; then
        envs+=("STOCKADE_TEST_DISABLE=userns,ipcns")
        extra=(--allow-degraded)
fi

layers=$(cd / && "${envs[@]}" "$stockade" run -v "${user[@]}" "${extra[@]}" -- true 2>&1) || true
if [ "$mode" = overlay ]; then
        if ! grep -q 'private directories (--tmp)  yes' <<<"$layers"; then
                echo "skipped: no mount namespace can be made here, so no overlay copy-on-write"
                exit 77
        fi
else
        if ! grep -qE 'Landlock +ABI' <<<"$layers"; then
                echo "skipped: no Landlock here: the emulated copy-on-write has no wall without it"
                exit 77
        fi
        grep -q 'private directories (--tmp)  no' <<<"$layers" || {
                echo "FAIL [setup]: STOCKADE_TEST_DISABLE=userns,ipcns still made a mount namespace: $layers" >&2
                exit 1
        }
fi

# --- The snapshot: one line per path, sorted. raw: everything (the host before and after a
# run); view: what must be the same natively and in the sandbox (no inode, ctime, directory
# link count or size; a time the run made is "recent"); apply: view without directories' times
# (apply replaces files by renaming into their directory: their time is apply's). Paths whose content may differ
# legitimately (git's index holds inode numbers) are given as a regex: their hash is left out.
cat >"$SNAP" <<'EOF'
import hashlib, os, re, stat, sys
how, t0, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ign = re.compile(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
def when(ns):
    return "recent" if how != "raw" and ns // 10**9 >= t0 else str(ns)
def xattrs(p):
    try:
        names = sorted(n for n in os.listxattr(p, follow_symlinks=False) if n.startswith("user."))
        return ",".join("%s=%s" % (n, os.getxattr(p, n, follow_symlinks=False).hex()) for n in names)
    except OSError as e:
        return "xattr-error:%d" % e.errno
def walk(rel):
    p = os.path.join(root, rel) if rel != "." else root
    st = os.lstat(p)
    m = st.st_mode
    t = "d" if stat.S_ISDIR(m) else "f" if stat.S_ISREG(m) else "l" if stat.S_ISLNK(m) else "o"
    f = [rel, t, "%o" % stat.S_IMODE(m), str(st.st_uid), str(st.st_gid)]
    if t != "d" or how == "raw":
        f += ["s=%d" % st.st_size, "n=%d" % st.st_nlink]
    if t != "d" or how != "apply": # apply: directories' times are not compared
        f.append("m=" + when(st.st_mtime_ns))
    if how == "raw":
        f += ["c=%d" % st.st_ctime_ns, "i=%d" % st.st_ino]
    if t == "f":
        if ign and ign.search(rel):
            f.append("sha=ignored")
        else:
            try:
                with open(p, "rb") as fh:
                    f.append("sha=" + hashlib.sha256(fh.read()).hexdigest())
            except OSError as e:
                f.append("unreadable:%d" % e.errno)
    elif t == "l":
        f.append("-> " + os.readlink(p))
    f.append("x=" + xattrs(p))
    print(" ".join(f))
    if t == "d":
        for n in sorted(os.listdir(p)):
            walk(n if rel == "." else rel + "/" + n)
walk(".")
EOF

snap() { "$PY" "$SNAP" raw "$t0" "$1"; }        # snap DIR: everything, for "unchanged"
view() { "$PY" "$SNAP" view "$t0" "$1" "${2:-}"; } # view DIR [IGNORE]: as it must look
applied() { "$PY" "$SNAP" apply "$t0" "$1" "${2:-}"; }

# The ops `stockade diff` must list, from the native run: each path added (A), deleted (D),
# of another type (T), or changed (M: a file's content, mode or mtime; a symlink's target; a
# directory's mode), directories with a trailing slash. stockade's output is brought to the
# same form by plain_diff (annotations dropped, a rename split into its D and A).
cat >"$top/expect.py" <<'EOF'
import sys
def load(f):
    d = {}
    for line in open(f):
        parts = line.rstrip("\n").split(" ")
        # path (may hold spaces), then type mode uid gid [s= n=] m= [sha= | -> target] x=
        i = next(k for k in range(1, len(parts)) if parts[k] in ("d", "f", "l", "o") and
                 k + 1 < len(parts) and parts[k + 1].isdigit() and len(parts[k + 1]) <= 5)
        d[" ".join(parts[:i])] = parts[i:]
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
def name(p, t): return p + ("/" if t == "d" else "")
out = []
for p in sorted(set(a) | set(b)):
    if p == ".":
        continue
    if p not in b: out.append("D " + name(p, a[p][0])); continue
    if p not in a: out.append("A " + name(p, b[p][0])); continue
    x, y = a[p], b[p]
    if x[0] != y[0]: out.append("T " + name(p, y[0])); continue
    def field(v, pre): return [s for s in v if s.startswith(pre)]
    if x[0] == "d":
        changed = x[1] != y[1]
    elif x[0] == "l":
        changed = x[x.index("->") + 1:] != y[y.index("->") + 1:]
    else:
        changed = x[1] != y[1] or field(x, "sha=") != field(y, "sha=") or field(x, "m=") != field(y, "m=")
    if changed: out.append("M " + name(p, x[0]))
print("\n".join(sorted(out)))
EOF
plain_diff() { # stockade diff's lines as "OP path", a rename as its deletion and addition
        sed -E -e 's/ \((content|times|mode|symlink|file|dir|link|other)[^()]*(\([^()]*\)[^()]*)*\)$//' \
                -e 's/^R (.*) -> (.*)$/D \1\nA \2/' | LC_ALL=C sort
}

# The programs' listings, brought to what must match: `ls -l --time-style=+%s` lines without
# directories' link counts and sizes (nor the column widths they set), "recent" for the run's
# own times, no `total` or `..` lines.
norm_out() {
        sed "s|$native|$ws|g" | awk -v t0="$t0" '
                /^total [0-9]+$/ { next }
                NF >= 7 && $1 ~ /^[-dlcbps][-rwxsStT]+[.+@]?$/ && $2 ~ /^[0-9]+$/ {
                        if (NF == 7 && $7 == "..") next
                        if (substr($1, 1, 1) == "d") { $2 = "-"; $5 = "-" }
                        if ($6 ~ /^[0-9]+$/ && $6 + 0 >= t0) $6 = "recent"
                        $1 = $1
                }
                { print }'
}


# same WHAT EXPECTED GOT: a failure with the difference when they differ.
same() {
        if ! diff -u --label "expected ($1)" --label "got ($1)" "$2" "$3" >"$top/d.out"; then
                fail "$1 differs:"
                head -n 80 "$top/d.out" >&2
                [ "$(wc -l <"$top/d.out")" -le 80 ] || echo "  ... ($(wc -l <"$top/d.out") lines)" >&2
                return 1
        fi
}

# sbx NAME [FLAGS...] -- SCRIPT: the script under stockade in $ws, session NAME; its stdout in
# $top/NAME.sbx, stockade's stderr in $top/NAME.err; the exit status returned.
sbx() {
        local name=$1 rc=0
        shift
        (cd "$ws" && "${envs[@]}" "$stockade" run -q "${user[@]}" "${extra[@]}" --cow "$ws" \
                --session "$name" --state-dir "$state" "$@") >"$top/$name.sbx" 2>"$top/$name.err" || rc=$?
        return $rc
}

# --- The host tree, made once and copied for each workload. Times set to the nanosecond.
mkdir -p "$pristine"/{sub/deep/er,tree/x/y,empty,"dir with space",pyhost}
cd "$pristine"
printf 'alpha\n' >a.txt
printf 'bravo\n' >b.txt
printf '#!/bin/sh\necho hi\n' >exec.sh
printf 'readonly\n' >ro.txt
head -c 65536 /dev/urandom >big.bin
printf 'x\n' >xattr.txt
printf 'one\n' >sub/one.txt
printf 'two\n' >sub/two.txt
printf 'three\n' >sub/deep/three.txt
printf 'four\n' >sub/deep/er/four.txt
printf 'k\n' >tree/k.txt
printf 'hidden\n' >tree/.hidden
printf 'z\n' >tree/x/y/z.txt
printf 'spaced\n' >"dir with space/file with space.txt"
for i in $(seq -w 0 49); do echo "host $i" >"pyhost/f0$i"; done
ln -s a.txt link
ln -s nowhere dangling
chmod 644 a.txt xattr.txt sub/one.txt sub/two.txt sub/deep/three.txt
chmod 600 b.txt
chmod 755 exec.sh
chmod 444 ro.txt
chmod 640 big.bin sub/deep/er/four.txt
find . -type d -exec chmod 755 {} +
chmod 700 sub/deep
chmod 750 tree/x
xattrs=yes
"$PY" -c 'import os; os.setxattr("xattr.txt", "user.test", b"hello")' 2>/dev/null || {
        xattrs=no
        echo "note: $(df --output=fstype . | tail -1) takes no user.* xattrs here: none in the tree"
}
i=0
while read -r -d '' p; do # deepest first, so that a directory's time is set after its entries
        i=$((i + 1))
        touch -h -d "@$((1600000000 + i * 1000)).$(printf '%09d' $((i * 7654321 % 1000000000)))" "$p"
done < <(find . -depth -print0)
cd /
[ "$("$PY" -c 'import os,sys; print(os.lstat(sys.argv[1]).st_mtime_ns % 10**9 != 0)' "$pristine/a.txt")" = True ] ||
        echo "note: this file system keeps no sub-second times"

# --- One workload: run_workload NAME SCRIPT [IGNORE]: restore the workspace, run $hook in it,
# make the native copy, run natively and under stockade, judge. Sets $got_diff (stockade diff).
hook=""
run_workload() {
        local name=$1 script=$2 ign=${3:-} rc_n=0 rc_s=0 before
        wl=$name
        chmod -R u+rwx -- "$ws" "$native" 2>/dev/null || true
        rm -rf -- "$ws" "$native"
        cp -a "$pristine" "$ws"
        [ -z "$hook" ] || (cd "$ws" && eval "$hook")
        cp -a "$ws" "$native"
        view "$ws" >"$top/$name.v0"
        view "$native" >"$top/$name.vn0"
        same "the native copy of the tree (cp -a)" "$top/$name.v0" "$top/$name.vn0" || true
        before=$(snap "$ws")

        (cd "$native" && "${envs[@]}" sh -c "$script") >"$top/$name.nat.raw" 2>&1 || rc_n=$?
        sbx "$name" -- sh -c "$script" || rc_s=$?
        if grep -q 'copy-on-write needs a mount namespace' "$top/$name.err"; then
                fail "stockade refused --cow: $(cat "$top/$name.err")"
                return 0
        fi
        [ -s "$top/$name.err" ] && {
                echo "note [$name]: stockade's stderr:" >&2
                sed 's/^/  /' "$top/$name.err" >&2
        }
        [ "$rc_n" = "$rc_s" ] || fail "the script exited $rc_n natively, $rc_s under stockade"

        # 1. The host tree, unchanged.
        if [ "$(snap "$ws")" != "$before" ]; then
                fail "the host tree changed under copy-on-write:"
                diff <(echo "$before") <(snap "$ws") | head -n 40 >&2 || true
        fi
        # 2. What the program saw.
        norm_out <"$top/$name.nat.raw" >"$top/$name.nat"
        norm_out <"$top/$name.sbx" >"$top/$name.got"
        same "what the program saw, native vs stockade" "$top/$name.nat" "$top/$name.got" || true
        # 3. The session's diff against the native run's changes.
        if "$stockade" diff "$name" --state-dir "$state" >"$top/$name.diff" 2>"$top/$name.derr"; then
                "$PY" "$top/expect.py" "$top/$name.v0" <(view "$native" "$ign") >"$top/$name.dexp"
                plain_diff <"$top/$name.diff" >"$top/$name.dgot"
                same "stockade diff (as OP path) vs the native run's changes" "$top/$name.dexp" \
                        "$top/$name.dgot" || sed 's/^/  diff: /' "$top/$name.diff" >&2
        else
                fail "stockade diff $name: $(cat "$top/$name.derr")"
        fi
        got_diff=$(cat "$top/$name.diff")
        # 4. apply: the host tree as the native run made it.
        if "$stockade" apply "$name" --state-dir "$state" >"$top/$name.apply" 2>&1; then
                applied "$native" "$ign" >"$top/$name.vn"
                applied "$ws" "$ign" >"$top/$name.vs"
                # (apply once made a name the run linked to an unchanged host file a copy,
                # and lost a changed file's user.* xattrs: both carried now)
                same "the host tree after apply vs the native run's" "$top/$name.vn" \
                        "$top/$name.vs" || true
        else
                fail "stockade apply $name: $(cat "$top/$name.apply")"
        fi
        # 5. Nothing left; discarded.
        "$stockade" diff "$name" --state-dir "$state" >"$top/$name.left" 2>&1 && [ ! -s "$top/$name.left" ] ||
                fail "left in the session after apply: $(cat "$top/$name.left")"
        "$stockade" discard "$name" --state-dir "$state" 2>"$top/$name.derr" ||
                fail "discard $name: $(cat "$top/$name.derr")"
        echo "workload $name: done"
}

# exact_diff NAME LINES: stockade diff's lines, annotations included (compared sorted).
exact_diff() {
        LC_ALL=C sort <<<"$2" >"$top/$1.xexp"
        LC_ALL=C sort <<<"$got_diff" >"$top/$1.xgot"
        same "stockade diff, line for line" "$top/$1.xexp" "$top/$1.xgot" || true
}

# The listing every script ends with.
listing='echo "== ls -laR"; ls -laR --time-style=+%s .
echo "== find"; find . | sort
echo "== walk"; "$PY" "$SNAP" view "$T0" . "$IGN"'
export IGN=""

# --- In emul mode, first: is --cow taken at all?
if [ "$mode" = emul ]; then
        rm -rf -- "$ws"
        cp -a "$pristine" "$ws"
        rc=0
        sbx probe -- true || rc=$?
        if [ $rc -ne 0 ]; then
                wl=emul
                fail "--cow without a mount namespace: exit $rc: $(cat "$top/probe.err")"
                echo "(every workload needs it: none was run; $fails failure(s))"
                exit 1
        fi
        "$stockade" discard probe --state-dir "$state" >/dev/null 2>&1 || true
fi

# 1. Files: create, append, truncate, overwrite, cp, mv in one directory and across, ln -s,
# ln, chmod, touch -d, mkdir -p, rmdir, rm -f.
w1='exec 2>&1
echo x >>a.txt
: >b.txt
printf "brand new\n" >new.txt
printf "over\n" >sub/one.txt
printf "re" >"dir with space/file with space.txt"
echo more >>xattr.txt
cp exec.sh copy.sh
cp -p sub/two.txt sub/two-copy.txt
mv sub/deep/three.txt sub/deep/three-renamed.txt
mv big.bin sub/big.bin
ln -s a.txt newlink
ln -s ../new.txt sub/relink
ln new.txt new-hard
ln sub/two.txt two-hard
chmod 600 a.txt
chmod 751 exec.sh
chmod 700 sub
touch -d @1500000000.25 sub/deep/er/four.txt
touch -d "2001-02-03 04:05:06" b.txt
mkdir -p a/b/c
mkdir -p made/gone && rmdir made/gone
rmdir empty
rm -f ro.txt dangling
echo "== cat"; cat a.txt b.txt new.txt new-hard sub/one.txt sub/relink newlink xattr.txt "dir with space/file with space.txt"
echo "== stat"; stat -c "%n %a %s %h" a.txt b.txt new.txt new-hard two-hard sub/two.txt sub/two-copy.txt exec.sh copy.sh sub/big.bin sub/deep/er/four.txt
stat -c "%n %a" sub sub/deep a a/b/c made
test -e ro.txt || echo ro.txt gone; test -e empty || echo empty gone; test -L dangling || echo dangling gone
'"$listing"
run_workload files "$w1"
exact_diff files "A a/
A a/b/
A a/b/c/
M a.txt (content; mode 644 -> 600)
M b.txt
A copy.sh
D dangling
M dir with space/file with space.txt
D empty/
M exec.sh (mode 755 -> 751)
A made/
A new-hard
A new.txt
A newlink (symlink to a.txt)
D ro.txt
M sub/ (mode 755 -> 700)
R big.bin -> sub/big.bin
M sub/deep/er/four.txt (times)
R sub/deep/three.txt -> sub/deep/three-renamed.txt
M sub/one.txt
A sub/relink (symlink to ../new.txt)
A sub/two-copy.txt
A two-hard
M xattr.txt"

# 2. rm -rf of a subtree the host has, then the same name made again (an opaque directory):
# the listing shows only the new entries; and one level down, a directory of other mode.
w2='exec 2>&1
rm -rf tree && mkdir tree && echo fresh >tree/only.txt
rm -rf sub/deep && mkdir -p sub/deep/er && echo n >sub/deep/er/new.txt
echo "== tree"; ls -la --time-style=+%s tree; ls -A tree/
echo "== deep"; ls -laR --time-style=+%s sub/deep; find sub | sort
cat tree/only.txt; test -e tree/k.txt || echo k.txt gone; test -e tree/x || echo x gone
test -e tree/.hidden || echo .hidden gone; test -e sub/deep/three.txt || echo three gone
'"$listing"
run_workload opaque "$w2"
exact_diff opaque "M sub/deep/ (mode 700 -> 755)
D sub/deep/er/four.txt
A sub/deep/er/new.txt
D sub/deep/three.txt
D tree/.hidden
D tree/k.txt
A tree/only.txt
D tree/x/
D tree/x/y/
D tree/x/y/z.txt"
[ "$(find "$ws/tree" -mindepth 1 -printf '%P\n')" = only.txt ] || fail "tree after apply: $(ls -A "$ws/tree")"

# 3. tar xf of an archive in the workspace: it overwrites host files (a.txt, sub/one.txt),
# adds others (a directory of mode 750, a symlink, a hard link), and sets "."'s time.
ts=$top/tarsrc
mkdir -p "$ts/sub" "$ts/newdir/inner"
printf 'from tar\n' >"$ts/a.txt"
printf 'tar one\n' >"$ts/sub/one.txt"
printf 'added\n' >"$ts/sub/added.txt"
printf 'inner\n' >"$ts/newdir/inner/f"
ln "$ts/newdir/inner/f" "$ts/newdir/hl"
ln -s ../a.txt "$ts/newdir/l"
chmod 664 "$ts/a.txt"
chmod 600 "$ts/sub/added.txt"
chmod 755 "$ts" "$ts/sub" "$ts/newdir/inner"
chmod 750 "$ts/newdir"
find "$ts" -exec touch -h -d @1550000000.5 {} +
tar -C "$ts" -cf "$top/a.tar" .
touch -d @1550000100 "$top/a.tar"
hook='cp -p "$top/a.tar" archive.tar && touch -d @1560000000 .'
w3='exec 2>&1
tar xf archive.tar && echo extracted
echo "== cat"; cat a.txt sub/one.txt sub/added.txt newdir/inner/f newdir/hl newdir/l
stat -c "%n %a %s %h %Y" a.txt sub/one.txt sub/added.txt newdir/inner/f newdir/hl
stat -c "%n %a %Y" . newdir sub
'"$listing"
run_workload tar "$w3"
hook=""

# 4. git: init, add, commit, an edit, status, diff --stat, commit -a, log.
if command -v git >/dev/null; then
        w4='exec 2>&1
git init -q && git add -A && git -c user.email=a@b -c user.name=a commit -qm one && echo committed
echo edit >>sub/one.txt
echo "== status"; git status --porcelain
echo "== diff"; git diff --stat
git -c user.email=a@b -c user.name=a commit -qam two && echo committed again
echo "== log"; git log --oneline | wc -l; git log --format="%H %s"; git status --porcelain
git ls-files -s | sort
'"$listing"
        # The index holds inode numbers and ctimes: its bytes differ, its size does not.
        IGN='^(\./)?\.git/index$'
        run_workload git "$w4" "$IGN"
        IGN=""
        git -c safe.directory='*' -C "$ws" fsck --no-progress 2>&1 | sed 's/^/  git fsck: /' >&2 ||
                fail "git fsck of the applied repository"
        [ "$(git -c safe.directory='*' -C "$ws" log --format=%s | tr '\n' ' ')" = "two one " ] ||
                fail "git log of the applied repository: $(git -c safe.directory='*' -C "$ws" log --format=%s)"
else
        echo "note: git is not installed: workload git skipped (apt-get install git)"
fi

# 5. python3: 300 files made and 100 deleted (30 of them the host's), os.walk and os.scandir
# counts and names, shutil.rmtree of a host subtree, os.rename and os.replace of host files.
w5='exec 2>&1
"$PY" - <<"PYEOF"
import hashlib, os, shutil
d = "pyhost"
for i in range(300):
    with open("%s/n%03d" % (d, i), "w") as f:
        f.write("new %d\n" % i)
for i in range(70):
    os.unlink("%s/n%03d" % (d, i))
for i in range(30):
    os.unlink("%s/f%03d" % (d, i))
names = sorted(os.listdir(d))
print("listdir", len(names), names[:3], names[-3:], hashlib.sha256("\n".join(names).encode()).hexdigest())
with os.scandir(d) as it:
    sc = sorted((e.name, e.is_file(), e.is_dir(), e.is_symlink()) for e in it)
print("scandir", len(sc), sum(1 for e in sc if e[1]), sc == [(n, True, False, False) for n in names])
def walk():
    out = []
    for dp, dn, fn in os.walk("."):
        out.append((dp, sorted(dn), sorted(fn)))
    out.sort()
    return out
w = walk()
print("walk dirs", len(w), "files", sum(len(x[2]) for x in w))
for x in w:
    if x[0] != "./pyhost":
        print(x)
shutil.rmtree("tree")
os.rename("a.txt", "sub/a-moved.txt")
os.rename("exec.sh", "exec2.sh")
os.replace("b.txt", "sub/two.txt")
os.replace("sub/deep/three.txt", "sub/deep/er/four.txt")
w = walk()
print("after: walk dirs", len(w), "files", sum(len(x[2]) for x in w))
for x in w:
    if x[0] != "./pyhost":
        print(x)
with os.scandir(".") as it:
    print(sorted((e.name, e.is_file(follow_symlinks=False), e.is_dir(follow_symlinks=False), e.is_symlink()) for e in it))
for p in ("sub/two.txt", "sub/a-moved.txt", "sub/deep/er/four.txt"):
    st = os.stat(p)
    print(p, oct(st.st_mode), st.st_size, st.st_mtime_ns, open(p).read().strip())
PYEOF
'"$listing"
run_workload python "$w5"

# 6. A directory of 2,200 entries, 1,400 the host's (files, directories, symlinks) and 800
# new, 100 of the host's deleted: read with getdents64 and a buffer of 64 bytes (an entry or
# two a call), a seek back to a d_off seen midway, a rewind; os.scandir; ls -f; find.
hook='mkdir many && cd many && for i in $(seq -w 0 1499); do
        case $i in *0) mkdir "h$i" && echo in >"h$i/in" ;; *5) ln -s "h$i-target" "h$i" ;; *) echo "$i" >"h$i" ;; esac
done && cd .. && find many -exec touch -h -d @1590000000 {} +'
w6='exec 2>&1
"$PY" - <<"PYEOF"
import ctypes, os, platform, shutil, stat, struct
d = "many"
for i in range(800):
    with open("%s/n%04d" % (d, i), "w") as f:
        f.write("n\n")
for i in range(100):
    p = "%s/h%04d" % (d, i)
    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": 217, "aarch64": 61}[platform.machine()]
def getdents(fd, size):
    buf = ctypes.create_string_buffer(size)
    n = libc.syscall(NR, fd, buf, size)
    if n < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    raw, pos, out = buf.raw[:n], 0, []
    while pos < n:
        ino, off, reclen, typ = struct.unpack_from("QqHB", raw, pos)
        out.append((raw[pos + 19:pos + reclen].split(b"\0", 1)[0].decode(), off, typ))
        pos += reclen
    return out
def read_all(fd, size):
    out, calls = [], 0
    while True:
        got = getdents(fd, size)
        calls += 1
        if not got:
            return out, calls
        out += got
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
try:
    getdents(fd, 16)
    print("16-byte buffer: no error")
except OSError as e:
    print("16-byte buffer:", e.strerror)
first, calls = read_all(fd, 64)
names = [x[0] for x in first]
print("tiny reads", len(names), "calls>1000", calls > 1000, "duplicates", len(names) - len(set(names)))
want = sorted([".", ".."] + ["h%04d" % i for i in range(100, 1500)] + ["n%04d" % i for i in range(800)])
print("names as expected", sorted(names) == want)
kinds = {4: "d", 8: "f", 10: "l"}
bad = [n for n, off, t in first if n not in (".", "..") and kinds.get(t) != ("d" if stat.S_ISDIR(os.lstat(d + "/" + n).st_mode) else "l" if stat.S_ISLNK(os.lstat(d + "/" + n).st_mode) else "f")]
print("d_type wrong for", len(bad), bad[:5])
mid = len(first) // 2
os.lseek(fd, first[mid][1], os.SEEK_SET)
rest, _ = read_all(fd, 64)
print("seek to a d_off midway gives the rest", [x[0] for x in rest] == names[mid + 1:])
os.lseek(fd, 0, os.SEEK_SET)
again, _ = read_all(fd, 4096)
print("rewind and read again", [x[0] for x in again] == names)
os.close(fd)
with os.scandir(d) as it:
    sc = sorted(e.name for e in it)
print("scandir", len(sc), sc == want[2:])
PYEOF
echo "== ls -f"; ls -f many | sort | wc -l; ls -f many | sort | cksum
echo "== find"; find . -type f | wc -l; find . -type l | wc -l; find . -type d | wc -l
ls -la --time-style=+%s many | head -n 12
'
run_workload many "$w6"
hook=""

# 7. Write permission as the merge has it: access(W_OK) of the workspace's files and
# directories (merged mode once said EROFS for all of them: `test -w`, and pip's check of a
# venv's site-packages, failed), and a read-only directory made writable in the run, filled,
# and one made read-only again after (merged mode judged the host's mode: EACCES).
hook='mkdir rodir rodir2 && chmod 555 rodir rodir2'
w7='exec 2>&1
for p in a.txt exec.sh b.txt sub sub/deep . "dir with space" tree; do
        if test -w "$p"; then echo "$p w"; else echo "$p -"; fi
done
echo n >fresh.txt && test -w fresh.txt && echo fresh.txt w
mkdir nd && test -w nd && echo nd w
"$PY" -c "import os; print(os.access(\"sub\", os.W_OK), os.access(\"a.txt\", os.W_OK | os.R_OK))"
chmod u+w rodir && echo made >rodir/new.txt && mkdir rodir/d && ls rodir && test -w rodir && echo rodir w
chmod u+w rodir2 && echo f >rodir2/f && chmod u-w rodir2 && ls rodir2
stat -c "%n %a" rodir rodir2
'"$listing"
run_workload perms "$w7"
hook=""

# 8. Scripts: the name the interpreter is given ($0) is the one the program ran the script by,
# as binfmt_script gives it (merged mode gave the absolute path with symlinks resolved), from
# a directory the run made too; and a "#!" naming its interpreter by a relative path (every
# mode killed the run: the interpreter was looked for from /, then the one that ran was not
# the one judged).
hook='mkdir -p low up && printf "#!/bin/sh\necho \"0=\$0\"\n" >low/s.sh && chmod 755 low/s.sh &&
ln -s ../low/s.sh up/link && cp /bin/sh mysh && printf "#!./mysh\necho \"i0=\$0\"\n" >low/i.sh &&
chmod 755 low/i.sh'
w8='exec 2>&1
./low/s.sh; up/link; low/s.sh
cp low/s.sh new.sh && ./new.sh
mkdir nd && cd nd && ../low/s.sh && ../new.sh && cd ..
./low/i.sh
'"$listing"
run_workload scripts "$w8"
hook=""

# 9. Security, judged from outside: no path changes the host tree (chmod, touch, truncate,
# and calls on an fd opened read-only before any write: each fails or lands in the session);
# the session store is out of reach; a symlink to a file outside the writable places (--ro),
# written through, changes nothing there; and apply makes the session's symlinks as symlinks,
# never following one (the symlink that replaces sub/deep leads to a directory holding the
# names sub/deep held: apply's deletions must not reach them).
wl=security
mkdir -p "$outside/er"
printf 'outside\n' >"$outside/target"
printf 'not three\n' >"$outside/three.txt"
printf 'not four\n' >"$outside/er/four.txt"
oview() { (cd "$outside" && find . -printf '%p %y %m %s %T@ %C@\n' | sort && find . -type f -exec sha256sum {} + | sort); }
obefore=$(oview)
export OUTSIDE=$outside STATE=$state
w7='exec 2>&1
chmod 777 a.txt && echo chmod ok
touch -d @1000000000 b.txt && echo touch ok
truncate -s0 exec.sh && echo truncate ok
"$PY" - <<"PYEOF"
import os
def probe(name, path, fn):
    fd = os.open(path, os.O_RDONLY)
    try:
        fn(fd)
        print(name, "ok")
    except OSError as e:
        print(name, "failed:", e.strerror)
    finally:
        os.close(fd)
probe("fchmod", "sub/one.txt", lambda fd: os.fchmod(fd, 0o777))
probe("futimens", "sub/two.txt", lambda fd: os.utime(fd, ns=(10**18, 10**18)))
probe("fsetxattr", "xattr.txt", lambda fd: os.setxattr(fd, "user.evil", b"1"))
probe("ftruncate-ro", "ro.txt", lambda fd: os.ftruncate(fd, 0))
# The inode generation, which an owner may set on a read-only fd (FS_IOC_SETVERSION)
import fcntl, struct
probe("setversion", "sub/one.txt", lambda fd: fcntl.ioctl(fd, 0x40087602, struct.pack("l", 12345)))
probe("setversion-ext4", "sub/one.txt", lambda fd: fcntl.ioctl(fd, 0x40086604, struct.pack("l", 54321)))
# A reopen for writing through /proc/self/fd of a read-only and of an O_PATH fd: an outside
# attack wrote the host file so where the supervisor merges the layers; it must be a change
# in the session, as any write.
def reopen(name, how):
    fd = os.open("dir with space/file with space.txt", how)
    try:
        w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_TRUNC)
        os.write(w, b"reopened\n")
        os.close(w)
        print(name, "ok")
    except OSError as e:
        print(name, "failed:", e.strerror)
    finally:
        os.close(fd)
reopen("reopen-ro", os.O_RDONLY)
reopen("reopen-path", os.O_PATH)
print("seen reopened", open("dir with space/file with space.txt").read().strip())
for p in ("sub/one.txt", "sub/two.txt", "xattr.txt", "ro.txt"):
    st = os.stat(p)
    try:
        x = sorted(os.listxattr(p))
    except OSError:
        x = "?"
    print("seen", p, oct(st.st_mode & 0o7777), st.st_size, st.st_mtime_ns, x)
PYEOF
ls "$STATE" >/dev/null 2>&1 && echo "state: listed" || echo "state: hidden"
cat "$STATE/sessions/security/session" 2>/dev/null && echo "session: read" || echo "session: unread"
echo x >"$STATE/sessions/security/0/upper/planted" 2>/dev/null && echo "session: planted" || echo "session: not planted"
ls /proc/self/root"$STATE"/sessions >/dev/null 2>&1 && echo "state via /proc: listed" || echo "state via /proc: hidden"
ln -s "$OUTSIDE/target" escape && echo pwned >escape && echo "escape: written" || echo "escape: refused"
ln -s "$OUTSIDE" escdir && echo pwned >escdir/new && echo "escdir: written" || echo "escdir: refused"
rm -rf sub/deep && ln -s "$OUTSIDE" sub/deep && echo "sub/deep: a symlink"
echo pwned >sub/deep/three.txt && echo "through sub/deep: written" || echo "through sub/deep: refused"
rm -f link && ln -s "$OUTSIDE/target" link && echo "link: retargeted"
'
rm -rf -- "$ws"
cp -a "$pristine" "$ws"
before=$(snap "$ws")
rc=0
sbx security --ro "$outside" -- sh -c "$w7" || rc=$?
out=$(cat "$top/security.sbx")
[ $rc -eq 0 ] || fail "the security run exited $rc: $(cat "$top/security.err") $out"
if [ "$(snap "$ws")" != "$before" ]; then
        fail "the host tree changed:"
        diff <(echo "$before") <(snap "$ws") | head -n 40 >&2 || true
fi
[ "$(oview)" = "$obefore" ] || fail "the file outside changed in the run: $(oview)"
for l in "chmod ok" "touch ok" "truncate ok" "state: hidden" "session: unread" "session: not planted" \
        "state via /proc: hidden" "escape: refused" "escdir: refused" "sub/deep: a symlink" \
        "through sub/deep: refused" "link: retargeted"; do
        grep -qx "$l" <<<"$out" || fail "expected \"$l\" in the program's output: $out"
done
! grep -q 'stockade-session\|^mount 0' <<<"$out" || fail "the program read the session: $out"
[ ! -e "$state/sessions/security/0/upper/planted" ] || fail "the program wrote into its session"
# What the session must hold: the path changes, and each fd change that did not fail.
want="M a.txt (mode 644 -> 777)
M b.txt (times)
M exec.sh
A escape (symlink to $outside/target)
A escdir (symlink to $outside)
M link (symlink to $outside/target)
T sub/deep (dir -> symlink to $outside)
D sub/deep/er/
D sub/deep/er/four.txt
D sub/deep/three.txt"
grep -qx 'fchmod ok' <<<"$out" && want+=$'\nM sub/one.txt (mode 644 -> 777)'
grep -qx 'futimens ok' <<<"$out" && want+=$'\nM sub/two.txt (times)'
grep -qx 'ftruncate-ro ok' <<<"$out" && fail "ftruncate of a read-only fd succeeded: $out"
grep -qx 'setversion ok' <<<"$out" && fail "FS_IOC_SETVERSION on a read-only fd succeeded: $out"
grep -qx 'setversion-ext4 ok' <<<"$out" && fail "EXT4_IOC_SETVERSION on a read-only fd succeeded: $out"
grep -qx 'reopen-ro ok' <<<"$out" && grep -qx 'reopen-path ok' <<<"$out" &&
        grep -qx 'seen reopened reopened' <<<"$out" ||
        fail "a reopen for writing through /proc/self/fd did not land in the session: $out"
want+=$'\nM dir with space/file with space.txt'
"$stockade" diff security --state-dir "$state" >"$top/security.diff" 2>&1 || fail "diff: $(cat "$top/security.diff")"
got_diff=$(cat "$top/security.diff")
exact_diff security "$want"
# The program's own view of the fd changes: what it was told happened is what it sees.
grep -qx 'fchmod ok' <<<"$out" && ! grep -q '^seen sub/one.txt 0o777 ' <<<"$out" &&
        fail "fchmod said ok, the program does not see it: $out"
grep -qx 'fchmod failed:.*' <<<"$out" && ! grep -q '^seen sub/one.txt 0o644 ' <<<"$out" &&
        fail "fchmod failed, yet the mode changed: $out"
if [ $xattrs = yes ] && grep -qx 'fsetxattr ok' <<<"$out"; then
        grep -q "^seen xattr.txt .*'user.evil'" <<<"$out" || fail "fsetxattr said ok, the program does not see it: $out"
fi
# apply: symlinks made as symlinks; nothing outside written, nothing there deleted.
rc=0
"$stockade" apply security --state-dir "$state" >"$top/security.apply" 2>&1 || rc=$?
# (A directory that became a symlink once made apply walk into the symlink while pruning the
# session: ELOOP, exit 125 after writing the host; cowprune.c passes over it now.)
[ $rc -eq 0 ] || fail "apply: exit $rc: $(cat "$top/security.apply")"
[ "$(oview)" = "$obefore" ] || {
        fail "apply changed the directory outside:"
        diff <(echo "$obefore") <(oview) >&2 || true
}
[ "$(readlink "$ws/escape")" = "$outside/target" ] && [ "$(readlink "$ws/sub/deep")" = "$outside" ] &&
        [ "$(readlink "$ws/link")" = "$outside/target" ] && [ "$(readlink "$ws/escdir")" = "$outside" ] ||
        fail "apply did not make the symlinks: $(ls -la "$ws" "$ws/sub")"
[ "$(stat -c %a "$ws/a.txt")" = 777 ] && [ "$(stat -c %Y "$ws/b.txt")" = 1000000000 ] &&
        [ ! -s "$ws/exec.sh" ] || fail "apply of chmod/touch/truncate: $(ls -la --time-style=+%s "$ws")"
"$stockade" discard security --state-dir "$state" 2>/dev/null || fail "discard security"
echo "workload security: done"

wl=end
echo "$mode: $fails failure(s)"
[ $fails -eq 0 ]

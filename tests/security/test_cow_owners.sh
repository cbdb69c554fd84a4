#!/usr/bin/env bash
# Issue 7: copy-on-write of files the sandbox's user namespace cannot own. Without root the
# namespace maps the user's own uid and gid only; overlayfs refuses to copy up a file of
# another owner or group (EOVERFLOW), though the user may write it natively: a file of the
# user's in a team's group, a world-writable file of root's. The supervisor makes the copy
# (supervisor/cow_owncopy.c). Judged from outside: the writes, truncate, utime and chmod
# work in the sandbox, the host files are untouched until apply, `stockade diff` lists them,
# and apply writes them, the team's group kept. Usage:
#   test_cow_owners.sh STOCKADE
# Root only (it makes files of other owners and runs stockade as uid 65534 with a
# supplementary group); 77 elsewhere, and where no mount namespace can be made.
set -euo pipefail
stockade=$(realpath "$1")
team=4242

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        echo "skipped: needs root and setpriv(1) to make files of other owners and run as 65534"
        exit 77
fi
as_user() {
        setpriv --reuid=65534 --regid=65534 --groups=$team env HOME="$top/home" "$@"
}

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-owners.XXXXXX")
trap 'rm -rf -- "$top" || true' EXIT
chmod 755 "$top"
mkdir "$top/ws" "$top/state" "$top/home"
chown 65534:65534 "$top/ws" "$top/state" "$top/home"
if ! as_user test -x "$stockade"; then
        echo "skipped: uid 65534 cannot run $stockade (build it where others can read)"
        exit 77
fi
layers=$(cd "$top/ws" && as_user "$stockade" run -v --rw . -- true 2>&1) || true
if ! grep -q 'private directories (--tmp)  yes' <<<"$layers"; then
        echo "skipped: no mount namespace can be made here for uid 65534, so no copy-on-write"
        exit 77
fi
printf 'team\n' >"$top/ws/teamfile"
chown 65534:$team "$top/ws/teamfile"
chmod 664 "$top/ws/teamfile"
printf 'root\n' >"$top/ws/rootfile"
chmod 666 "$top/ws/rootfile"
truncate -s 1G "$top/ws/sparse"
chmod 666 "$top/ws/sparse"
printf 'root only\n' >"$top/ws/rootro"
chmod 644 "$top/ws/rootro"
touch -d '2020-01-01 00:00' "$top/ws/teamfile" "$top/ws/rootfile" "$top/ws/rootro"
snapshot() { (cd "$top/ws" && stat -c '%n %s %Y %a %u %g' teamfile rootfile rootro && sha256sum teamfile rootfile rootro); }
before=$(snapshot)

fails=0
fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

out=$(cd "$top/ws" && as_user "$stockade" run -q --state-dir "$top/state" --session own -- \
        python3 -c '
import os
def refused(what, f):
    try:
        f()
        print(what, "allowed")
    except PermissionError:
        pass
# What the files deny natively, the copy must not grant: writing root'"'"'s 644 file,
# changing the mode or the times of root'"'"'s 666 file before anything copied it.
refused("append rootro", lambda: open("rootro", "a"))
refused("truncate rootro", lambda: os.truncate("rootro", 0))
refused("chmod rootfile", lambda: os.chmod("rootfile", 0o600))
refused("utime rootfile", lambda: os.utime("rootfile", (1, 1)))
with open("teamfile", "a") as f:
    f.write("more\n")
with open("rootfile", "a") as f:
    f.write("more\n")
with open("sparse", "a") as f:
    f.write("y")
os.chmod("teamfile", 0o644)
os.truncate("rootfile", 3)
os.utime("teamfile", (0, 86400))
# Copied, root'"'"'s file is the user'"'"'s in the sandbox, but what only root could do
# to it stays refused.
refused("chmod rootfile copied", lambda: os.chmod("rootfile", 0o777))
refused("utime rootfile copied", lambda: os.utime("rootfile", (1, 1)))
st = os.stat("teamfile")
print(open("teamfile").read().split(), open("rootfile").read(), int(st.st_mtime), oct(st.st_mode & 0o777))
') 2>"$top/err" || fail "the run failed: $(cat "$top/err")"
[ "$out" = "['team', 'more'] roo 86400 0o644" ] || fail "in the sandbox: $out"
[ "$(snapshot)" = "$before" ] || fail "the host files changed before apply: $(snapshot)"
# The copy keeps the holes: a gigabyte of nothing is not written out.
copy=$(find "$top/state" -name sparse -type f | head -1)
[ -n "$copy" ] && [ "$(stat -c %s "$copy")" = 1073741825 ] && [ "$(du -k "$copy" | cut -f1)" -lt 1024 ] ||
        fail "the sparse file's copy: ${copy:-none} $(du -k "$copy" 2>/dev/null)"
diff=$(as_user "$stockade" diff own --state-dir "$top/state" 2>&1) || fail "diff: $diff"
grep -qx 'M rootfile.*' <<<"$diff" || fail "diff lacks rootfile: $diff"
grep -qx 'M teamfile (content; mode 664 -> 644; times)' <<<"$diff" || grep -qx 'M teamfile (content; mode 664 -> 644)' <<<"$diff" ||
        fail "diff lacks teamfile: $diff"
(cd "$top/ws" && as_user "$stockade" apply own --state-dir "$top/state" >/dev/null 2>"$top/err") ||
        fail "apply: $(cat "$top/err")"
[ "$(cat "$top/ws/teamfile")" = "$(printf 'team\nmore')" ] || fail "teamfile after apply"
[ "$(cat "$top/ws/rootfile")" = roo ] || fail "rootfile after apply"
[ "$(stat -c %s "$top/ws/sparse")" = 1073741825 ] && [ "$(du -k "$top/ws/sparse" | cut -f1)" -lt 1024 ] ||
        fail "apply wrote the sparse file's holes out: $(du -k "$top/ws/sparse")"
[ "$(stat -c '%g %a' "$top/ws/teamfile")" = "$team 644" ] ||
        fail "teamfile's group or mode after apply: $(stat -c '%g %a' "$top/ws/teamfile")"
# A team's set-group-ID project: every directory is the user's in the team's group, which
# overlayfs could not copy up either (EOVERFLOW for anything made in them). They are made in
# the upper beforehand, as they are; what the run makes takes the team's group, as natively.
tw=$top/team
mkdir -p "$tw/sub" "$tw/state2"
printf 'f\n' >"$tw/sub/f"
chown -R 65534:$team "$tw"
chown 65534:65534 "$tw/state2"
ts=$top/state/team # the session store: not in the team's directory, which its members may write
chmod 2775 "$tw" "$tw/sub"
chmod 664 "$tw/sub/f"
tbefore=$(cd "$tw" && find . -path ./state2 -prune -o -printf '%p %m %u %g %s %T@\n' | sort)
touch -d '2020-01-01 00:00' "$tw"
tbefore=$(cd "$tw" && find . -path ./state2 -prune -o -printf '%p %m %u %g %s %T@\n' | sort)
# A store in the team's directory is refused: any member could swap it under the run.
rc=0
(cd "$tw" && as_user "$stockade" run -q --state-dir "$tw/state2" --session team -- true) \
        2>"$top/err" || rc=$?
[ $rc -eq 125 ] && grep -q "is writable by its group" "$top/err" ||
        fail "a store in the team's directory was taken (exit $rc): $(cat "$top/err")"
out=$(cd "$tw" && as_user "$stockade" run -q --state-dir "$ts" --session team -- sh -c '
        stat -c "%n %a %g %Y" . && echo y >sub/new2 && mkdir sub/d2 && echo z >>sub/f &&
        echo x >new && stat -c "%n %g" new sub/new2 sub/d2') 2>"$top/err" ||
        fail "the team run: $(cat "$top/err")"
[ "$out" = "$(printf '. 2775 %s %s\nnew %s\nsub/new2 %s\nsub/d2 %s' $team "$(stat -c %Y "$tw")" $team $team $team)" ] ||
        fail "in the team's project: $out"
[ "$(cd "$tw" && find . -path ./state2 -prune -o -printf '%p %m %u %g %s %T@\n' | sort)" = "$tbefore" ] ||
        fail "the team's project changed before apply"
(cd "$tw" && as_user "$stockade" apply team --state-dir "$ts" >/dev/null 2>"$top/err") ||
        fail "apply team: $(cat "$top/err")"
[ "$(stat -c %g "$tw/sub/new2" 2>/dev/null)" = $team ] && [ "$(cat "$tw/sub/f")" = "$(printf 'f\nz')" ] ||
        fail "the team's project after apply"

echo "files of other owners checked; $fails failure(s)"
[ $fails -eq 0 ]

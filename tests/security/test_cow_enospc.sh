#!/usr/bin/env bash
# Issue 7: a full disk during copy-up. The session store is a 4 MiB tmpfs; the program appends
# to an 8 MiB file of the workspace, whose copy-up cannot fit. Judged from outside: the
# program's call failed with ENOSPC, the host file is byte for byte as before, and the session
# is consistent (what did fit is in `stockade diff`; discard works). Usage:
#   test_cow_enospc.sh STOCKADE
# Root only (it mounts the tmpfs in a mount namespace of its own); 77 elsewhere, and where no
# mount namespace can be made for the sandbox.
set -euo pipefail
stockade=$(realpath "$1")

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
        echo "skipped: needs root and unshare(1) to mount a small tmpfs for the session store"
        exit 77
fi
if [ -z "${STOCKADE_ENOSPC_NS:-}" ]; then
        STOCKADE_ENOSPC_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-enospc.XXXXXX")
trap 'umount "$top/state" 2>/dev/null || true; rm -rf -- "$top" || true' EXIT
chmod 755 "$top"
mkdir "$top/ws" "$top/state"
layers=$(cd "$top/ws" && "$stockade" run -v --rw . -- true 2>&1) || true
if ! grep -q 'private directories (--tmp)  yes' <<<"$layers"; then
        echo "skipped: no mount namespace can be made here, so no copy-on-write"
        exit 77
fi
mount -t tmpfs -o size=4m,mode=0700 tmpfs "$top/state"
head -c 8M /dev/urandom >"$top/ws/big"
echo small >"$top/ws/small"
before=$(cd "$top/ws" && stat -c '%n %s %Y %a' big small && sha256sum big small)

fails=0
fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

out=$(cd "$top/ws" && TMPDIR=/tmp "$stockade" run -q --user root --state-dir "$top/state" \
        --session full -- sh -c '
        python3 -c "
import errno
try:
    open(\"big\", \"a\").write(\"x\")
    print(\"appended\")
except OSError as e:
    print(\"append:\", errno.errorcode[e.errno])
"
        echo fits >small2 && cat small2') 2>"$top/err" || fail "the run failed: $(cat "$top/err")"
grep -qx 'append: ENOSPC' <<<"$out" || fail "the append that cannot be copied up: $out"
grep -qx fits <<<"$out" || fail "a small write after the full disk: $out"
[ "$(cd "$top/ws" && stat -c '%n %s %Y %a' big small && sha256sum big small)" = "$before" ] ||
        fail "the host file changed"
[ ! -e "$top/ws/small2" ] || fail "the host got small2"
diff=$("$stockade" diff full --state-dir "$top/state" 2>&1) || fail "diff after the full disk: $diff"
[ "$diff" = "A small2" ] || fail "the session after the full disk: $diff"
"$stockade" discard full --state-dir "$top/state" 2>"$top/err" || fail "discard: $(cat "$top/err")"
# A store too full for the session's metadata (written by the janitor, in parallel with the
# rest of the start-up): the run is refused before the command starts, and no session stays.
head -c 4M /dev/zero >"$top/state/fill" 2>/dev/null || true
if out=$(cd "$top/ws" && "$stockade" run -q --user root --state-dir "$top/state" -- \
        sh -c 'echo ran; echo x >ran-file' 2>"$top/err"); then
        fail "a run with a full session store: $out"
fi
grep -q 'write its metadata' "$top/err" || fail "the message for a full store: $(cat "$top/err")"
[ -z "$out" ] && [ ! -e "$top/ws/ran-file" ] || fail "the command ran with a full store: $out"
# (.gone-NAME: a session being removed by its janitor after stockade exited: not kept)
left=$(find "$top/state/sessions" -mindepth 1 -maxdepth 1 ! -name '.gone-*' 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || fail "a full store kept $left session(s)"
rm -f "$top/state/fill"
echo "full disk checked; $fails failure(s)"
[ $fails -eq 0 ]

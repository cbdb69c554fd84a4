# shellcheck shell=bash
# The prelude of the copy-on-write tests judged from outside the sandbox (test_cow_run.sh,
# test_cow_merged.sh, test_cow_store.sh), sourced by each with the stockade binary as $1.
# It makes the scratch directory $top (removed at exit), the workspace $ws with the initial
# tree the checks rely on, and $before, the host tree's snapshot taken then; it gives fail,
# sbx and snap. Exits 77 where no mount namespace can be made.
# shellcheck disable=SC2034 # the variables are the sourcing script's
stockade=$(realpath "$1")

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-cow.XXXXXX")
# The removal must not decide the verdict (set -e would make a failing trap the exit code),
# but a tree it cannot remove is worth a word: something may still be working in it.
cleanup() {
        [ -z "${vh:-}" ] || rm -rf -- "$vh"
        # a bind a root-only check made and did not undo (it failed half-way)
        findmnt -rno TARGET | grep "^$top/" | sort -r | xargs -r -n1 umount 2>/dev/null || true
        chmod -R u+rwx -- "$top" 2>/dev/null || true # overlayfs's work/work is mode 000
        rm -rf -- "$top" 2>&1 || {
                echo "warning: $top could not be removed; left in it:" >&2
                find "$top" -maxdepth 5 -printf '%M %u %p\n' >&2 || true
        }
}
trap cleanup EXIT
chmod 755 "$top"
state=$top/state
ws=$top/ws
fails=0

fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

# As root the command runs as nobody by default: --user root keeps the workspace writable.
user=()
[ "$(id -u)" -eq 0 ] && user=(--user root)

sbx() { # sbx ARGS... -- CMD...: stockade run from the workspace; stderr to $top/err
        (cd "$ws" && "$stockade" run -q "${user[@]}" --state-dir "$state" "$@") 2>"$top/err"
}

# A snapshot of the host tree: path, type, mode, size, mtime, content hash.
snap() {
        (cd "$ws" && find . -printf '%p %y %m %s %T@\n' | sort && find . -type f -print0 |
                sort -z | xargs -0 -r sha256sum)
}

layers=$(cd "$top" && "$stockade" run -v --rw . -- true 2>&1) || true
if ! grep -q 'private directories (--tmp)  yes' <<<"$layers"; then
        echo "skipped: no mount namespace can be made here, so no copy-on-write"
        exit 77
fi

# The initial tree: a file with a known time (its baseline is checked), a tree to remove, one
# to truncate, a script of yours to run.
mkdir -p "$ws/src/deep" "$ws/gone/sub"
echo 'int main(void){return 0;}' >"$ws/src/main.c"
echo keep >"$ws/src/deep/keep.txt"
echo old >"$ws/gone/sub/f"
echo truncate-me >"$ws/trunc.txt"
printf '#!/bin/sh\necho script-ran\n' >"$ws/run.sh"
chmod 755 "$ws/run.sh"
touch -d @1700000000 "$ws/src/main.c"
before=$(snap)

#!/usr/bin/env bash
# Build and run the whole test suite (ctest). Run as root, it then runs the suite again as
# an unprivileged user (uid 65534) on a copy of the tree, since users will not be root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/build}

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "=== ctest as $(id -un) (uid $(id -u))"
ctest --test-dir "$build" --output-on-failure

if [ "$(id -u)" -eq 0 ] && [ "${STOCKADE_SKIP_UNPRIVILEGED:-0}" != 1 ]; then
        work=$(mktemp -d /tmp/stockade-unpriv.XXXXXX)
        trap 'rm -rf "$work"' EXIT
        mkdir "$work/src"
        tar -C "$src" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$work/src" -xf -
        chown -R 65534:65534 "$work"
        chmod 755 "$work"
        echo "=== again as uid 65534"
        setpriv --reuid=65534 --regid=65534 --clear-groups \
                env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
                BUILD_DIR="$work/build" bash "$work/src/tests/run.sh"
fi

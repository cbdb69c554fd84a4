#!/usr/bin/env bash
# Build and run the whole test suite (ctest). Run as root, it then runs the suite again as
# an unprivileged user (uid 65534) on a copy of the tree, since users will not be root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/build}
# The sandbox's /tmp is its own (the default view): the helpers the tests run inside it and
# the workspaces they make under the build directory must not live in the host's /tmp.
case "$build" in
/tmp/* | /tmp)
        build=/var/tmp/stockade-build-$(id -u)-$(printf '%s' "$build" | md5sum | cut -c1-8)
        echo "=== building in $build (the sandbox's /tmp is its own)"
        ;;
esac

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "=== ctest as $(id -un) (uid $(id -u))"
ctest --test-dir "$build" --output-on-failure

if [ "$(id -u)" -eq 0 ] && [ "${STOCKADE_SKIP_UNPRIVILEGED:-0}" != 1 ]; then
        # Not in /tmp: the sandbox's /tmp is its own, and the helpers the tests run from
        # the build directory must be there for it.
        work=$(mktemp -d /var/tmp/stockade-unpriv.XXXXXX)
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

#!/usr/bin/env bash
# Install what is missing, build, and run a real program under the default policy.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/build}

"$src/scripts/deps.sh"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "--- running python3 under stockade:"
"$build/stockade" run -v -- python3 -c 'import os, sys; print("hello from pid", os.getpid(), "python", sys.version.split()[0])'

#!/usr/bin/env bash
# Install what building and testing stockade needs on Debian 12 (bookworm), if missing.
set -euo pipefail

pkgs=(build-essential cmake pkg-config libseccomp-dev libzstd-dev libprotobuf-c-dev
      protobuf-c-compiler libunwind-dev libcmocka-dev libyaml-dev python3 util-linux procps
      # the Python trace reader's test (proto/read_trace.py): skipped without them
      python3-zstandard python3-protobuf protobuf-compiler
      # the workload tests (tests/integration/test_workloads.sh): skipped without them
      git tar findutils make python3-venv
      # CPython's own regression tests, run under stockade (tests/integration/test_python_suite.sh)
      libpython3.11-testsuite
      # fault injection: a stockade killed at a chosen moment (tests/security/test_scratch_kill.sh)
      strace)

missing=()
for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
                missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "installing: ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}"

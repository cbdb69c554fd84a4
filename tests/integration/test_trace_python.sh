#!/usr/bin/env bash
# The Python reader of docs/trace-format.md (proto/read_trace.py) on a real trace, and on
# the same trace cut short. Needs python3-zstandard, python3-protobuf and protoc (Debian:
# protobuf-compiler); exits 77 (skipped) without them.
set -euo pipefail
stockade=$1
src=$(cd "$(dirname "$0")/../.." && pwd)

py=
for p in /usr/bin/python3 python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import zstandard, google.protobuf' 2>/dev/null; then
                py=$p
                break
        fi
done
if [ -z "$py" ] || ! command -v protoc >/dev/null; then
        echo "skipped: needs python3 with zstandard and protobuf, and protoc"
        exit 77
fi
if ! dir=$(mktemp -d /dev/shm/stockade-py-XXXXXX); then
        echo "skipped: no /dev/shm"
        exit 77
fi
trap 'rm -rf "$dir"' EXIT
protoc --python_out="$dir" -I"$src/proto" "$src/proto/trace.proto"
"$stockade" run --trace "$dir/t.trace" -- sh -c 'ls / >/dev/null; kill -0 1 2>/dev/null; exit 3' \
        || [ $? -eq 3 ]
PYTHONPATH=$dir "$py" "$src/proto/read_trace.py" "$dir/t.trace" >"$dir/out"
grep -q '^session ' "$dir/out"
grep -q '^process EXEC ' "$dir/out"
grep -q '^event .* kill(1, 0) = -3 DENIED' "$dir/out"
grep -q '^end exit=3 ' "$dir/out"

# Cut: every record before the cut, then one line, exit 1.
size=$(stat -c %s "$dir/t.trace")
head -c $((size - 20)) "$dir/t.trace" >"$dir/cut.trace"
if PYTHONPATH=$dir "$py" "$src/proto/read_trace.py" "$dir/cut.trace" >"$dir/cut.out" 2>"$dir/cut.err"; then
        echo "a cut trace read without complaint"
        exit 1
fi
grep -q truncated "$dir/cut.err"
grep -q '^session ' "$dir/cut.out"
echo ok

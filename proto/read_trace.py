#!/usr/bin/env python3
"""Read a stockade trace with nothing but the zstandard and protobuf packages.

The format (docs/trace-format.md): a 16-byte header, then a zstd stream (one or more
frames) of length-delimited Record messages: a varint length, then the message.

    protoc --python_out=DIR -I proto proto/trace.proto      # writes DIR/trace_pb2.py
    PYTHONPATH=DIR python3 proto/read_trace.py run.trace

Prints one line per record; exits 1 (after every record it could read) when the trace
is truncated, corrupted, not a trace, or of a newer version. Debian 12:
apt-get install python3-zstandard python3-protobuf protobuf-compiler.
"""
import struct
import sys

import zstandard
from google.protobuf.message import DecodeError

import trace_pb2

MAGIC = b"\x89STKTRC\n"
VERSION = 1


class Damaged(Exception):
    pass


def decompressed(f):
    """The bytes of the zstd stream after the header, frame after frame."""
    dctx = zstandard.ZstdDecompressor()
    obj = dctx.decompressobj()
    in_frame = False
    while True:
        data = f.read(1 << 16)
        if not data:
            break
        while data:
            in_frame = True
            try:
                out = obj.decompress(data)
            except zstandard.ZstdError as e:
                raise Damaged("corrupted: %s" % e)
            if out:
                yield out
            if obj.eof:  # a frame ended; the next one starts in unused_data
                in_frame = False
                data = obj.unused_data
                obj = dctx.decompressobj()
            else:
                data = b""
    if in_frame:
        raise Damaged("truncated: the data stops inside a zstd frame")


def varint(buf, pos):
    """(value, next position), or None when buf ends first."""
    shift = value = 0
    while pos < len(buf):
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise Damaged("corrupted: impossible record length")
    return None


def records(f):
    """Yield each Record; raise Damaged after the last readable one."""
    header = f.read(16)
    if header[:8] != MAGIC:
        raise Damaged("not a stockade trace")
    if len(header) < 16:
        raise Damaged("truncated in the header")
    version, size = struct.unpack_from("<HH", header, 8)
    if version > VERSION:
        raise Damaged("trace format version %d is newer than this reader (%d)" % (version, VERSION))
    f.read(size - 16)  # a longer header of a later version
    buf = b""
    seen_end = False
    for chunk in decompressed(f):
        buf += chunk
        pos = 0
        while True:
            v = varint(buf, pos)
            if v is None or v[1] + v[0] > len(buf):
                break
            length, start = v
            rec = trace_pb2.Record()
            try:
                rec.ParseFromString(buf[start:start + length])
            except DecodeError:
                raise Damaged("corrupted: a record does not parse")
            pos = start + length
            seen_end = rec.WhichOneof("kind") == "end"
            yield rec
        buf = buf[pos:]
    if buf:
        raise Damaged("truncated: the last record is cut off")
    if not seen_end:
        raise Damaged("truncated: no end record (the run was cut short)")


def line(rec):
    kind = rec.WhichOneof("kind")
    if kind == "session":
        s = rec.session
        return "session %s %s level=%s" % (s.version, " ".join(s.argv), s.level)
    if kind == "event":
        e = rec.event
        verdict = trace_pb2.Verdict.Name(e.verdict)
        if not e.has_result:
            result = "?"
        elif e.error:
            result = "-%d" % e.error
        else:
            result = str(e.result)
        return "event %.6f %d %s(%s) = %s %s %s" % (
            e.time_ns / 1e9, e.tid, e.syscall, ", ".join(e.args), result, verdict, e.rule)
    if kind == "process":
        p = rec.process
        return "process %s %d %s" % (trace_pb2.Process.Kind.Name(p.kind), p.tid,
                                     p.path or p.child or p.exit_code)
    if kind == "backtrace":
        return "backtrace %d: %s" % (rec.backtrace.id,
                                     " <- ".join(f.function or hex(f.ip) for f in rec.backtrace.frames))
    if kind == "end":
        return "end exit=%d events=%d dropped=%d" % (rec.end.exit_code, rec.end.events,
                                                     rec.end.events_dropped)
    if kind is None:
        return "unknown record (a newer stockade): skipped"
    return "%s %s" % (kind, getattr(rec, kind))


def main():
    if len(sys.argv) != 2:
        print("usage: read_trace.py TRACE", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        try:
            for rec in records(f):
                print(line(rec))
        except Damaged as e:
            sys.stdout.flush()
            print("read_trace.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

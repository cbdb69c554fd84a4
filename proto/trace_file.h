/*
 * The trace file format, without the supervisor: a 16-byte header, then a zstd stream of
 * length-delimited Record messages (proto/trace.proto). docs/trace-format.md is the
 * reference; this is the one implementation of it in C, used by the recorder
 * (supervisor/trace.c) and by `stockade trace` (supervisor/trace_cli.c).
 */
#ifndef STOCKADE_TRACE_FILE_H
#define STOCKADE_TRACE_FILE_H

#include "proto/trace.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_MAGIC       "\x89STKTRC\n" /* 8 bytes; the \x89 keeps text tools away */
#define TRACE_MAGIC_LEN   8
#define TRACE_VERSION     1
#define TRACE_HEADER_SIZE 16          /* magic, u16le version, u16le header size, u32le flags */
#define TRACE_RECORD_MAX  (16u << 20) /* a length beyond this is corruption */

/* ---- writing ---------------------------------------------------------------------------- */

struct trace_out {
        int fd;
        bool socket; /* send(MSG_NOSIGNAL) instead of write */
        void *zc;    /* ZSTD_CCtx */
        uint8_t *buf;
        size_t cap, len;    /* compressed bytes not yet written */
        size_t pending;     /* uncompressed bytes since the last flush */
        size_t frame_in;    /* uncompressed bytes in the current zstd frame */
        uint64_t bytes_out; /* header included */
        size_t frame_max;   /* end the zstd frame at the flush past this much input */
        uint8_t *stage;     /* records not yet given to zstd: one call per 64 KiB, not per
                               * record (zstd's per-call cost dominates small records) */
        size_t stage_len;
};

/* Start a trace on `fd` (ownership passes; closed by trace_out_close): write the header.
 * `level` is the zstd level. Returns 0 or -errno. */
int trace_out_open(struct trace_out *o, int fd, bool socket, int level);
/* Append one packed Record. Data reaches the fd at the latest at the next flush. Returns 0
 * or -errno (the write failed; the record is kept and written by a later call). */
int trace_out_append(struct trace_out *o, const uint8_t *rec, size_t len);
/* Pack and append a Record. */
int trace_out_record(struct trace_out *o, const Stockade__Trace__Record *r);
/* Make everything appended so far decodable from the file: end the current zstd block
 * (and, past a size, the frame, so its checksum is checked), write it all. 0 or -errno. */
int trace_out_flush(struct trace_out *o);
/* End the stream and close the fd. Returns 0 or -errno of a failed write. */
int trace_out_close(struct trace_out *o);

/* Encode `v` as a protobuf varint into out (10 bytes at most); returns its length. */
size_t trace_varint(uint8_t *out, uint64_t v);

/* ---- reading ---------------------------------------------------------------------------- */

enum trace_status {
        TRACE_OK,        /* a record was read */
        TRACE_END,       /* the stream ended cleanly */
        TRACE_AGAIN,     /* --follow: no more data yet */
        TRACE_TRUNCATED, /* the data stops in the middle of a frame or a message */
        TRACE_CORRUPT,   /* zstd or protobuf refused the data */
        TRACE_NOT_TRACE, /* no trace header */
        TRACE_NEWER,     /* written by a newer stockade */
        TRACE_IO,        /* read() failed */
};

struct trace_in {
        int fd;
        bool header_done;
        uint8_t header[TRACE_HEADER_SIZE]; /* what of it was read (a followed file may be */
        size_t header_got;                 /* followed before its header is written) */
        unsigned version;
        void *zd; /* ZSTD_DCtx */
        uint8_t *zin;
        size_t zin_len, zin_pos, zin_cap;
        uint8_t *msg; /* decompressed bytes not yet parsed */
        size_t msg_len, msg_pos, msg_cap;
        size_t zret;        /* last ZSTD_decompressStream result: 0 = at a frame boundary */
        bool eof;           /* read() returned 0 */
        uint64_t in_offset; /* file bytes consumed */
        uint64_t records;
        bool saw_end;             /* the End record was read */
        enum trace_status failed; /* a failure found ahead of the records still to read */
        char why[256];            /* the one line that says what is wrong */
};

/* Start reading `fd` (not owned). */
void trace_in_init(struct trace_in *in, int fd);
/* The next record into *rec (free with stockade__trace__record__free_unpacked). With
 * `follow`, the end of the data is TRACE_AGAIN (unless the End record was seen: the caller
 * stops there). Any status other than TRACE_OK/TRACE_AGAIN is final; in->why says it. */
enum trace_status trace_in_next(struct trace_in *in, Stockade__Trace__Record **rec, bool follow);
void trace_in_free(struct trace_in *in);

#endif

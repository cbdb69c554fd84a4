/*
 * The trace file format (docs/trace-format.md).
 *
 * Why it survives a cut at any byte: records go into one zstd stream, and every flush
 * (ZSTD_e_flush, at least every 100 ms while recording) ends a zstd block. A decoder
 * produces a block's bytes only once the whole block is there, so whatever precedes the
 * last complete block of a cut file decodes, and the records wholly inside it parse. Past
 * 1 MiB of input a flush ends the frame instead (ZSTD_e_end): each frame carries an XXH64
 * checksum, so a flipped bit is found even where the block decoder does not notice it.
 */
#include "proto/trace_file.h"
#include "supervisor/util.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zstd.h>

#define FRAME_INPUT_MAX (1u << 20)
#define STAGE_SIZE      (64u << 10)

size_t trace_varint(uint8_t *out, uint64_t v)
{
        size_t n = 0;

        while (v >= 0x80) {
                out[n++] = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        out[n++] = (uint8_t)v;
        return n;
}

static int write_all(struct trace_out *o, const uint8_t *p, size_t n)
{
        while (n) {
                ssize_t w = o->socket ? send(o->fd, p, n, MSG_NOSIGNAL) : write(o->fd, p, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                struct pollfd pfd = {.fd = o->fd, .events = POLLOUT};
                                poll(&pfd, 1, 100);
                                continue;
                        }
                        return -errno;
                }
                p += w;
                n -= (size_t)w;
                o->bytes_out += (uint64_t)w;
        }
        return 0;
}

/* Write out what the compressor produced; on failure keep it for the next try. */
static int drain(struct trace_out *o)
{
        int r = write_all(o, o->buf, o->len);

        if (r == 0)
                o->len = 0;
        return r;
}

static int compress(struct trace_out *o, const uint8_t *p, size_t n, ZSTD_EndDirective end)
{
        ZSTD_inBuffer in = {p, n, 0};
        size_t left;

        do {
                if (o->cap - o->len < ZSTD_CStreamOutSize()) {
                        int r = drain(o);
                        if (r < 0 && o->cap - o->len < ZSTD_CStreamOutSize()) {
                                o->cap *= 2; /* keep the data; the next call retries */
                                o->buf = xrealloc(o->buf, o->cap);
                        }
                }
                ZSTD_outBuffer out = {o->buf, o->cap, o->len};
                left = ZSTD_compressStream2(o->zc, &out, &in, end);
                if (ZSTD_isError(left))
                        return -EIO;
                o->len = out.pos;
        } while (end == ZSTD_e_continue ? in.pos < in.size : left != 0);
        return 0;
}

int trace_out_open(struct trace_out *o, int fd, bool socket, int level)
{
        uint8_t h[TRACE_HEADER_SIZE] = {0};

        memset(o, 0, sizeof(*o));
        o->fd = fd;
        o->socket = socket;
        o->frame_max = FRAME_INPUT_MAX;
        o->zc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(o->zc, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(o->zc, ZSTD_c_checksumFlag, 1);
        o->cap = 2 * ZSTD_CStreamOutSize();
        o->buf = xcalloc(1, o->cap);
        o->stage = xcalloc(1, STAGE_SIZE);
        memcpy(h, TRACE_MAGIC, TRACE_MAGIC_LEN);
        h[8] = TRACE_VERSION & 0xff;
        h[9] = TRACE_VERSION >> 8;
        h[10] = TRACE_HEADER_SIZE;
        return write_all(o, h, sizeof(h));
}

/* Hand the staged records to zstd. */
static int unstage(struct trace_out *o)
{
        int r = o->stage_len ? compress(o, o->stage, o->stage_len, ZSTD_e_continue) : 0;

        o->stage_len = 0;
        return r;
}

int trace_out_append(struct trace_out *o, const uint8_t *rec, size_t len)
{
        uint8_t v[10];
        size_t n = trace_varint(v, len);
        int r = 0;

        if (o->stage_len + n + len > STAGE_SIZE)
                r = unstage(o);
        if (n + len > STAGE_SIZE) {
                if (r == 0)
                        r = compress(o, v, n, ZSTD_e_continue);
                if (r == 0)
                        r = compress(o, rec, len, ZSTD_e_continue);
        } else {
                memcpy(o->stage + o->stage_len, v, n);
                memcpy(o->stage + o->stage_len + n, rec, len);
                o->stage_len += n + len;
        }
        o->pending += n + len;
        o->frame_in += n + len;
        if (r == 0 && o->len >= o->cap / 2)
                r = drain(o);
        return r;
}

int trace_out_record(struct trace_out *o, const Stockade__Trace__Record *rec)
{
        uint8_t small[512];
        size_t n = stockade__trace__record__get_packed_size(rec);
        uint8_t *p = n <= sizeof(small) ? small : xcalloc(1, n);
        int r;

        stockade__trace__record__pack(rec, p);
        r = trace_out_append(o, p, n);
        if (p != small)
                free(p);
        return r;
}

int trace_out_flush(struct trace_out *o)
{
        int r = 0;

        if (o->pending) {
                bool end = o->frame_in >= o->frame_max;
                r = unstage(o);
                if (r == 0)
                        r = compress(o, NULL, 0, end ? ZSTD_e_end : ZSTD_e_flush);
                if (end)
                        o->frame_in = 0;
                o->pending = 0;
        }
        return r < 0 ? r : drain(o);
}

int trace_out_close(struct trace_out *o)
{
        int r = 0;

        if (o->zc) {
                r = unstage(o);
                if (r == 0)
                        r = compress(o, NULL, 0, ZSTD_e_end);
                if (r == 0)
                        r = drain(o);
                ZSTD_freeCCtx(o->zc);
        }
        free(o->buf);
        free(o->stage);
        if (o->fd >= 0 && close(o->fd) < 0 && r == 0)
                r = -errno;
        memset(o, 0, sizeof(*o));
        o->fd = -1;
        return r;
}

/* ---- reading ---------------------------------------------------------------------------- */

void trace_in_init(struct trace_in *in, int fd)
{
        memset(in, 0, sizeof(*in));
        in->fd = fd;
        in->zd = ZSTD_createDCtx();
        in->zin_cap = ZSTD_DStreamInSize();
        in->zin = xcalloc(1, in->zin_cap);
        in->msg_cap = 1 << 16;
        in->msg = xcalloc(1, in->msg_cap);
}

void trace_in_free(struct trace_in *in)
{
        ZSTD_freeDCtx(in->zd);
        free(in->zin);
        free(in->msg);
        in->zd = in->zin = in->msg = NULL;
}

static enum trace_status fail(struct trace_in *in, enum trace_status st, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static enum trace_status fail(struct trace_in *in, enum trace_status st, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(in->why, sizeof(in->why), fmt, ap);
        va_end(ap);
        return st;
}

/* Read more file bytes into zin. Returns >0, 0 at the end of the data, or -errno. */
static ssize_t fill(struct trace_in *in)
{
        ssize_t n;

        if (in->zin_pos == in->zin_len)
                in->zin_pos = in->zin_len = 0;
        if (in->zin_len == in->zin_cap)
                return 1; /* still undecoded input */
        while ((n = read(in->fd, in->zin + in->zin_len, in->zin_cap - in->zin_len)) < 0 &&
               errno == EINTR)
                ;
        if (n < 0)
                return -errno;
        in->zin_len += (size_t)n;
        return n;
}

/* Whether the n bytes read of a header can still become one. */
static bool header_so_far(const uint8_t *h, size_t n)
{
        return memcmp(h, TRACE_MAGIC, n < TRACE_MAGIC_LEN ? n : TRACE_MAGIC_LEN) == 0;
}

/* With `follow`, a file whose header is not all written yet (the run has just begun) is
 * TRACE_AGAIN, what was read of it kept: `trace show --follow` started with the run. */
static enum trace_status read_header(struct trace_in *in, bool follow)
{
        uint8_t *h = in->header;
        size_t got, hsize;

        while (in->header_got < sizeof(in->header)) {
                ssize_t n = read(in->fd, h + in->header_got, sizeof(in->header) - in->header_got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return fail(in, TRACE_IO, "read: %s", strerror(errno));
                if (n == 0)
                        break;
                in->header_got += (size_t)n;
        }
        got = in->header_got;
        if (follow && got < sizeof(in->header) && header_so_far(h, got))
                return TRACE_AGAIN;
        if (got < TRACE_MAGIC_LEN || memcmp(h, TRACE_MAGIC, TRACE_MAGIC_LEN) != 0)
                return fail(in, TRACE_NOT_TRACE, "not a stockade trace (no trace header)");
        if (got < sizeof(in->header))
                return fail(in, TRACE_TRUNCATED, "truncated in the header (%zu bytes)", got);
        in->version = h[8] | (unsigned)h[9] << 8;
        hsize = h[10] | (size_t)h[11] << 8;
        if (in->version > TRACE_VERSION)
                return fail(in, TRACE_NEWER,
                            "trace format version %u is newer than this stockade reads (%u); "
                            "use a newer stockade",
                            in->version, TRACE_VERSION);
        if (in->version == 0 || hsize < TRACE_HEADER_SIZE)
                return fail(in, TRACE_CORRUPT, "corrupted header (version %u, size %zu)",
                            in->version, hsize);
        /* A later version may have a longer header: skip the rest. */
        for (size_t skip = hsize - TRACE_HEADER_SIZE; skip;) {
                uint8_t tmp[256];
                ssize_t n = read(in->fd, tmp, skip < sizeof(tmp) ? skip : sizeof(tmp));
                if (n <= 0)
                        return fail(in, TRACE_TRUNCATED, "truncated in the header");
                skip -= (size_t)n;
        }
        in->in_offset = hsize;
        in->header_done = true;
        return TRACE_OK;
}

/* A complete message at msg_pos? Returns 1 (and its bounds), 0 (need more) or -1 (bad). */
static int frame_at(struct trace_in *in, size_t *start, size_t *len)
{
        uint64_t v = 0;
        size_t p = in->msg_pos;

        for (unsigned shift = 0;; shift += 7) {
                if (p == in->msg_len)
                        return 0;
                if (shift > 63)
                        return -1;
                v |= (uint64_t)(in->msg[p] & 0x7f) << shift;
                if (!(in->msg[p++] & 0x80))
                        break;
        }
        if (v > TRACE_RECORD_MAX)
                return -1;
        if (in->msg_len - p < v)
                return 0;
        *start = p;
        *len = (size_t)v;
        return 1;
}

/* Decompress what zin holds into msg. Returns 0 or a failure status. */
static enum trace_status decompress(struct trace_in *in)
{
        if (in->msg_pos) {
                memmove(in->msg, in->msg + in->msg_pos, in->msg_len - in->msg_pos);
                in->msg_len -= in->msg_pos;
                in->msg_pos = 0;
        }
        while (in->zin_pos < in->zin_len) {
                if (in->msg_cap - in->msg_len < ZSTD_DStreamOutSize()) {
                        in->msg_cap *= 2;
                        in->msg = xrealloc(in->msg, in->msg_cap);
                }
                ZSTD_inBuffer zi = {in->zin, in->zin_len, in->zin_pos};
                ZSTD_outBuffer zo = {in->msg, in->msg_cap, in->msg_len};
                size_t r = ZSTD_decompressStream(in->zd, &zo, &zi);
                in->in_offset += zi.pos - in->zin_pos;
                in->zin_pos = zi.pos;
                in->msg_len = zo.pos;
                if (ZSTD_isError(r))
                        /* What decoded before the damage is still read first. */
                        return in->failed = fail(in, TRACE_CORRUPT, "corrupted at byte %llu: %s",
                                                 (unsigned long long)in->in_offset,
                                                 ZSTD_getErrorName(r));
                in->zret = r;
                if (zo.pos == zo.size)
                        continue; /* more output may be pending */
                if (zi.pos == zi.size)
                        break;
        }
        return TRACE_OK;
}

enum trace_status trace_in_next(struct trace_in *in, Stockade__Trace__Record **rec, bool follow)
{
        enum trace_status st;

        *rec = NULL;
        if (!in->header_done && (st = read_header(in, follow)) != TRACE_OK)
                return st;
        for (;;) {
                size_t start, len;
                int f = frame_at(in, &start, &len);
                ssize_t n;

                if (f < 0)
                        return fail(in, TRACE_CORRUPT,
                                    "corrupted after record %llu: impossible record length",
                                    (unsigned long long)in->records);
                if (f > 0) {
                        *rec = stockade__trace__record__unpack(NULL, len, in->msg + start);
                        if (!*rec)
                                return fail(in, TRACE_CORRUPT,
                                            "corrupted after record %llu: a record does not "
                                            "parse",
                                            (unsigned long long)in->records);
                        in->msg_pos = start + len;
                        in->records++;
                        in->saw_end = (*rec)->kind_case == STOCKADE__TRACE__RECORD__KIND_END;
                        return TRACE_OK;
                }
                if (in->failed)
                        return in->failed;
                n = fill(in);
                if (n < 0)
                        return fail(in, TRACE_IO, "read: %s", strerror((int)-n));
                if (n == 0 && in->zin_pos == in->zin_len) {
                        if (follow)
                                return TRACE_AGAIN;
                        if (in->zret != 0 || in->msg_len != in->msg_pos)
                                return fail(in, TRACE_TRUNCATED,
                                            "truncated after record %llu (byte %llu): the "
                                            "rest was cut off",
                                            (unsigned long long)in->records,
                                            (unsigned long long)in->in_offset);
                        if (!in->saw_end)
                                return fail(in, TRACE_TRUNCATED,
                                            "ends after record %llu without its end record: "
                                            "the run was cut short",
                                            (unsigned long long)in->records);
                        return TRACE_END;
                }
                decompress(in);
        }
}

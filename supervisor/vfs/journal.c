#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/session.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/util.h"

/*
 * The hash: 64-bit words mixed by multiply and rotate (the constants are the 64-bit
 * golden ratio and two odd numbers from splitmix64), then a final avalanche with the
 * length. Not cryptographic: it tells "the host file changed since" with a collision chance
 * of about 2^-64 for an honest change; the size and mtime are compared too.
 */
#define K0 0x9e3779b97f4a7c15ULL
#define K1 0xbf58476d1ce4e5b9ULL
#define K2 0x94d049bb133111ebULL

static uint64_t rotl(uint64_t x, int r)
{
        return (x << r) | (x >> (64 - r));
}

static uint64_t mix(uint64_t h, uint64_t w)
{
        return rotl(h ^ (w * K1), 29) * K0;
}

void journal_hash_init(struct journal_hasher *hs)
{
        memset(hs, 0, sizeof(*hs));
        hs->h = K2;
}

void journal_hash_update(struct journal_hasher *hs, const void *buf, size_t n)
{
        const unsigned char *p = buf;

        hs->len += n;
        while (hs->ntail && n) {
                hs->tail[hs->ntail++] = *p++;
                n--;
                if (hs->ntail == 8) {
                        uint64_t w;

                        memcpy(&w, hs->tail, 8);
                        hs->h = mix(hs->h, w);
                        hs->ntail = 0;
                }
        }
        for (; n >= 8; p += 8, n -= 8) {
                uint64_t w;

                memcpy(&w, p, 8);
                hs->h = mix(hs->h, w);
        }
        memcpy(hs->tail + hs->ntail, p, n);
        hs->ntail += n;
}

uint64_t journal_hash_final(struct journal_hasher *hs)
{
        uint64_t w = 0, h;

        memcpy(&w, hs->tail, hs->ntail);
        h = mix(hs->h, w) ^ hs->len;
        h = (h ^ (h >> 30)) * K1;
        h = (h ^ (h >> 27)) * K2;
        return h ^ (h >> 31);
}

/*
 * Version 2 of the content hash, for speed (a 1 GiB copy-up spent as long hashing its
 * baseline as copying): the content cut in CHUNK-byte chunks, each hashed in four
 * independent lanes of 64-bit words (word k to lane k % 4: no chain waits on the last
 * multiply), the chunks' values chained in order with the total length. The chunks of a
 * large file are hashed by two threads; the value does not depend on how many.
 */
#define CHUNK ((size_t)16 << 20)

static uint64_t finish(uint64_t h, uint64_t len)
{
        h ^= len;
        h = (h ^ (h >> 30)) * K1;
        h = (h ^ (h >> 27)) * K2;
        return h ^ (h >> 31);
}

struct lanes {
        uint64_t l[4];
        uint64_t len;
        unsigned char tail[32];
        size_t ntail;
};

static void lanes_init(struct lanes *z)
{
        memset(z, 0, sizeof(*z));
        for (int i = 0; i < 4; i++)
                z->l[i] = K2 + (uint64_t)i * K0;
}

static void lanes_block(struct lanes *z, const unsigned char *p)
{
        uint64_t w[4];

        memcpy(w, p, sizeof(w));
        z->l[0] = mix(z->l[0], w[0]);
        z->l[1] = mix(z->l[1], w[1]);
        z->l[2] = mix(z->l[2], w[2]);
        z->l[3] = mix(z->l[3], w[3]);
}

static void lanes_update(struct lanes *z, const void *buf, size_t n)
{
        const unsigned char *p = buf;

        z->len += n;
        while (z->ntail && n) {
                z->tail[z->ntail++] = *p++;
                n--;
                if (z->ntail == sizeof(z->tail)) {
                        lanes_block(z, z->tail);
                        z->ntail = 0;
                }
        }
        for (; n >= 32; p += 32, n -= 32)
                lanes_block(z, p);
        memcpy(z->tail + z->ntail, p, n);
        z->ntail += n;
}

static uint64_t lanes_final(struct lanes *z)
{
        unsigned char last[32] = {0};
        uint64_t h = K0;

        memcpy(last, z->tail, z->ntail);
        lanes_block(z, last);
        for (int i = 0; i < 4; i++)
                h = mix(h, z->l[i]);
        return finish(h, z->len);
}

uint64_t journal_hash2_buf(const void *buf, size_t n)
{
        const unsigned char *p = buf;
        uint64_t h = K2;
        size_t off = 0;

        do { /* the chunks a file of these bytes is cut in (hash2_fd); one if empty */
                size_t take = n - off < CHUNK ? n - off : CHUNK;
                struct lanes z;

                lanes_init(&z);
                lanes_update(&z, p + off, take);
                h = mix(h, lanes_final(&z));
                off += take;
        } while (off < n);
        return finish(h, n);
}

/* The value of a chunk of `n` zero bytes (a hole), hashed as the bytes would be. */
static uint64_t zeros_value(size_t n)
{
        static const unsigned char zero[65536];
        struct lanes z;

        lanes_init(&z);
        for (size_t k; n; n -= k) {
                k = n < sizeof(zero) ? n : sizeof(zero);
                lanes_update(&z, zero, k);
        }
        return lanes_final(&z);
}

static uint64_t zero_chunk;
static pthread_once_t zero_chunk_once = PTHREAD_ONCE_INIT;

static void zero_chunk_init(void)
{
        zero_chunk = zeros_value(CHUNK);
}

/* The offset of the first data at or after `off` (SEEK_DATA): INT64_MAX when none (only
 * holes up to the end), `off` itself where the file system cannot tell (all data). */
static off_t next_data(int fd, off_t off)
{
        off_t d = lseek(fd, off, SEEK_DATA);

        if (d >= 0)
                return d;
        return errno == ENXIO ? INT64_MAX : off;
}

struct chunks {
        int fd;
        off_t size;    /* the file's, when the hash began */
        size_t n;      /* chunks */
        uint64_t *v;   /* each chunk's value */
        uint64_t *len; /* each chunk's bytes */
        int first, step;
        int err;
};

static void *hash_chunks(void *arg)
{
        struct chunks *c = arg;
        size_t cap = 1 << 20;
        char *buf = malloc(cap);

        if (!buf) {
                c->err = ENOMEM;
                return NULL;
        }
        off_t data = -1; /* the first data at or after the last look */

        for (size_t k = (size_t)c->first; k < c->n && !c->err; k += (size_t)c->step) {
                off_t off = (off_t)(k * CHUNK), end = off + (off_t)CHUNK;
                struct lanes z;

                /* A chunk wholly in a hole is zeros, and hashed as such without reading
                 * them: a sparse file of terabytes takes the time of its data. */
                if (data < off)
                        data = next_data(c->fd, off);
                if (data >= end && end <= c->size) {
                        pthread_once(&zero_chunk_once, zero_chunk_init);
                        c->len[k] = CHUNK;
                        c->v[k] = zero_chunk;
                        continue;
                }
                if (data >= c->size && off < c->size) { /* the last chunk, short, a hole */
                        c->len[k] = (uint64_t)(c->size - off);
                        c->v[k] = zeros_value((size_t)(c->size - off));
                        continue;
                }
                lanes_init(&z);
                while (off < end) {
                        size_t want = (size_t)(end - off) < cap ? (size_t)(end - off) : cap;
                        ssize_t got = pread(c->fd, buf, want, off);

                        if (got < 0 && errno == EINTR)
                                continue;
                        if (got < 0) {
                                c->err = errno;
                                break;
                        }
                        if (got == 0)
                                break;
                        lanes_update(&z, buf, (size_t)got);
                        off += got;
                }
                c->len[k] = z.len;
                c->v[k] = lanes_final(&z);
        }
        free(buf);
        return NULL;
}

static int hash2_fd(int fd, uint64_t *out)
{
        struct chunks a = {.fd = fd, .first = 0, .step = 1}, b;
        uint64_t h = K2, total = 0;
        struct stat st;
        pthread_t t;
        bool two;

        if (fstat(fd, &st) < 0)
                return -errno;
        a.size = st.st_size;
        a.n = st.st_size > 0 ? ((size_t)st.st_size + CHUNK - 1) / CHUNK : 1;
        a.v = calloc(a.n, sizeof(*a.v));
        a.len = calloc(a.n, sizeof(*a.len));
        if (!a.v || !a.len) {
                free(a.v);
                free(a.len);
                return -ENOMEM;
        }
        b = a;
        two = a.n >= 4;
        if (two) {
                a.step = b.step = 2;
                b.first = 1;
                two = pthread_create(&t, NULL, hash_chunks, &b) == 0;
                if (!two)
                        a.step = 1;
        }
        hash_chunks(&a);
        if (two) {
                pthread_join(t, NULL);
                if (!a.err)
                        a.err = b.err;
        }
        for (size_t k = 0; k < a.n && !a.err; k++) {
                /* A chunk cut short (the file shrank meanwhile) ends the content. */
                h = mix(h, a.v[k]);
                total += a.len[k];
                if (a.len[k] < CHUNK)
                        break;
        }
        free(a.v);
        free(a.len);
        if (a.err)
                return -a.err;
        *out = finish(h, total);
        return 0;
}

int journal_hash_fd_v(int fd, int version, uint64_t *out)
{
        return version == 1 ? journal_hash_fd(fd, out) : hash2_fd(fd, out);
}

int journal_hash_fd(int fd, uint64_t *out)
{
        struct journal_hasher hs;
        size_t cap = 1 << 20;
        _cleanup_free_ char *buf = malloc(cap);
        off_t off = 0;

        if (!buf)
                return -ENOMEM;
        journal_hash_init(&hs);
        for (;;) {
                ssize_t n = pread(fd, buf, cap, off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                journal_hash_update(&hs, buf, (size_t)n);
                off += n;
        }
        *out = journal_hash_final(&hs);
        return 0;
}

static bool must_escape(unsigned char c)
{
        return c <= 0x20 || c == 0x7f || c == '%';
}

char *journal_escape(const char *in)
{
        size_t n = 0;
        char *out, *o;

        for (const unsigned char *p = (const unsigned char *)in; *p; p++)
                n += must_escape(*p) ? 3 : 1;
        out = malloc(n + 1);
        if (!out)
                return NULL;
        o = out;
        for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
                if (must_escape(*p))
                        o += sprintf(o, "%%%02X", *p);
                else
                        *o++ = (char)*p;
        }
        *o = '\0';
        return out;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int journal_unescape(char *s)
{
        char *o = s;

        for (char *p = s; *p; p++) {
                if (*p != '%') {
                        *o++ = *p;
                        continue;
                }
                int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);

                if (hi < 0 || lo < 0 || (hi | lo) == 0)
                        return -EINVAL;
                *o++ = (char)(hi * 16 + lo);
                p += 2;
        }
        *o = '\0';
        return 0;
}

int journal_describe(int fd, const char *path, struct journal_rec *rec)
{
        return journal_describe_v(fd, path, JOURNAL_HASH_CURRENT, rec);
}

int journal_describe_v(int fd, const char *path, int version, struct journal_rec *rec)
{
        struct stat st;
        int r = 0;

        memset(rec, 0, sizeof(*rec));
        rec->hashv = (unsigned char)version;
        if (fstat(fd, &st) < 0)
                return -errno;
        rec->type = S_ISREG(st.st_mode)   ? 'f'
                    : S_ISDIR(st.st_mode) ? 'd'
                    : S_ISLNK(st.st_mode) ? 'l'
                                          : 'o';
        rec->mode = st.st_mode & 07777;
        rec->size = (uint64_t)st.st_size;
        rec->mtime_sec = st.st_mtim.tv_sec;
        rec->mtime_nsec = st.st_mtim.tv_nsec;
        if (rec->type == 'f') {
                char proc[64];
                int rd;

                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                rd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (rd < 0)
                        return -errno;
                r = journal_hash_fd_v(rd, version, &rec->hash);
                close(rd);
        } else if (rec->type == 'l') {
                char target[PATH_MAX];
                ssize_t n = readlinkat(fd, "", target, sizeof(target));
                struct journal_hasher hs;

                if (n < 0)
                        return -errno;
                journal_hash_init(&hs);
                journal_hash_update(&hs, target, (size_t)n);
                rec->hash = version == 1 ? journal_hash_final(&hs)
                                         : journal_hash2_buf(target, (size_t)n);
                rec->size = (uint64_t)n;
        }
        if (r < 0)
                return r;
        rec->path = strdup(path);
        return rec->path ? 0 : -ENOMEM;
}

char *journal_format(const struct journal_rec *rec)
{
        _cleanup_free_ char *p = journal_escape(rec->path);
        char *line = NULL;

        if (!p || asprintf(&line, "B %s %c %04o %" PRIu64 " %" PRId64 ".%09ld %s%016" PRIx64 "\n",
                           p, rec->type, (unsigned)(rec->mode & 07777), rec->size, rec->mtime_sec,
                           rec->mtime_nsec, rec->hashv == 1 ? "" : "2.", rec->hash) < 0)
                return NULL;
        return line;
}

int journal_append(int fd, const struct journal_rec *rec)
{
        _cleanup_free_ char *line = journal_format(rec);
        size_t len;
        ssize_t n;

        if (!line)
                return -ENOMEM;
        len = strlen(line);
        do
                n = write(fd, line, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EIO;
}

/* One line, NUL-terminated in place; 0 or -EINVAL. */
static int parse_line(char *line, struct journal_rec *rec)
{
        char *f[7], *save = NULL, *end;
        int n = 0;
        unsigned long mode;

        for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
                if (n < 7)
                        f[n++] = t;
                else
                        return -EINVAL;
        if (n != 7 || strcmp(f[0], "B") != 0 || strlen(f[2]) != 1 || !strchr("fdlo", f[2][0]) ||
            journal_unescape(f[1]) < 0 || !f[1][0])
                return -EINVAL;
        memset(rec, 0, sizeof(*rec));
        rec->type = f[2][0];
        errno = 0;
        mode = strtoul(f[3], &end, 8);
        if (*end || mode > 07777)
                return -EINVAL;
        rec->mode = (mode_t)mode;
        rec->size = strtoull(f[4], &end, 10);
        if (*end || errno)
                return -EINVAL;
        rec->mtime_sec = strtoll(f[5], &end, 10);
        if (*end != '.' || errno)
                return -EINVAL;
        rec->mtime_nsec = strtol(end + 1, &end, 10);
        if (*end || rec->mtime_nsec < 0 || rec->mtime_nsec > 999999999L)
                return -EINVAL;
        /* 16 hex digits: version 1 of the hash (sessions of older stockades); "2." and 16
         * hex digits: version 2. */
        rec->hashv = 1;
        if (strlen(f[6]) == 18 && strncmp(f[6], "2.", 2) == 0) {
                rec->hashv = 2;
                f[6] += 2;
        }
        if (strlen(f[6]) != 16 || !isxdigit((unsigned char)f[6][0]))
                return -EINVAL;
        rec->hash = strtoull(f[6], &end, 16);
        if (*end || errno)
                return -EINVAL;
        rec->path = strdup(f[1]);
        return rec->path ? 0 : -ENOMEM;
}

/* By path, then by order in the file: the first record of a path wins. */
static int by_path_then_order(const void *a, const void *b, void *base)
{
        const struct journal_rec *v = base;
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        int c = strcmp(v[x].path, v[y].path);

        return c ? c : (x < y ? -1 : x > y);
}

static int push(struct journal *j, struct journal_rec *rec)
{
        if (j->n == j->cap) {
                size_t cap = j->cap ? j->cap * 2 : 64;
                struct journal_rec *v = realloc(j->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                j->v = v;
                j->cap = cap;
        }
        j->v[j->n++] = *rec;
        return 0;
}

int journal_parse(struct journal *j, const char *buf, size_t len)
{
        struct journal_rec *sorted;
        size_t start = 0, w = 0, *idx;

        memset(j, 0, sizeof(*j));
        for (size_t i = 0; i < len; i++) {
                struct journal_rec rec;
                _cleanup_free_ char *line = NULL;
                size_t n = i - start;
                int r;

                if (buf[i] != '\n')
                        continue;
                /* a NUL inside a line: malformed */
                line = memchr(buf + start, '\0', n) ? NULL : strndup(buf + start, n);
                start = i + 1;
                if (!line)
                        continue;
                r = parse_line(line, &rec);
                if (r == -ENOMEM)
                        return r;
                if (r == 0 && push(j, &rec) < 0) {
                        journal_rec_free(&rec);
                        return -ENOMEM;
                }
        }
        if (!j->n)
                return 0;
        idx = malloc(j->n * sizeof(*idx));
        sorted = malloc(j->n * sizeof(*sorted));
        if (!idx || !sorted) {
                free(idx);
                free(sorted);
                return -ENOMEM;
        }
        for (size_t i = 0; i < j->n; i++)
                idx[i] = i;
        qsort_r(idx, j->n, sizeof(*idx), by_path_then_order, j->v);
        for (size_t i = 0; i < j->n; i++) {
                struct journal_rec *r = &j->v[idx[i]];

                if (w && strcmp(sorted[w - 1].path, r->path) == 0)
                        journal_rec_free(r);
                else
                        sorted[w++] = *r;
        }
        free(idx);
        free(j->v);
        j->v = sorted;
        j->n = w;
        j->cap = j->n;
        return 0;
}

int journal_load(struct journal *j, const char *path)
{
        _cleanup_close_ int fd = session_open_regular(path); /* no symlink, no FIFO */
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        memset(j, 0, sizeof(*j));
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        char *b = realloc(buf, cap = cap ? cap * 2 : 65536);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        return journal_parse(j, buf, len);
}

static int cmp_key(const void *key, const void *elem)
{
        return strcmp(key, ((const struct journal_rec *)elem)->path);
}

const struct journal_rec *journal_find(const struct journal *j, const char *path)
{
        return j->n ? bsearch(path, j->v, j->n, sizeof(*j->v), cmp_key) : NULL;
}

void journal_rec_free(struct journal_rec *rec)
{
        free(rec->path);
        rec->path = NULL;
}

void journal_free(struct journal *j)
{
        for (size_t i = 0; i < j->n; i++)
                journal_rec_free(&j->v[i]);
        free(j->v);
        memset(j, 0, sizeof(*j));
}

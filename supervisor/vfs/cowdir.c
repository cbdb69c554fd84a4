/*
 * The listing of a merged directory (cowdir.h): both layers read into one array, sorted by
 * (hash, name, layer) so that the upper's entry of a name comes right before the lower's,
 * the second of each name dropped, whiteouts dropped; then records cut from it by position.
 */
#include "supervisor/vfs/cowdir.h"
#include "supervisor/vfs/cowup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/treemove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME  0x100000001b3ull

enum layer { UPPER, LOWER };

/* An entry while the layers are read: its name is an offset into the growing storage. */
struct item {
        struct cowdir_entry e;
        size_t name_off;
        unsigned char layer;
        bool whiteout;
};

struct build {
        struct item *v;
        size_t n, cap;
        char *names;
        size_t len, names_cap;
};

uint32_t cowdir_hash(const char *name)
{
        uint64_t h = FNV64_OFFSET;
        uint32_t pos;

        for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
                h ^= *p;
                h *= FNV64_PRIME;
        }
        /* Both halves count, as FNV's authors advise for a shorter hash (xor-folding). */
        pos = (uint32_t)(h ^ (h >> 31) ^ (h >> 62)) & 0x7fffffffu;
        return pos <= COWDIR_POS_DOTDOT ? pos + 3 : pos;
}

/* Append `name` (with its NUL) to the storage; its offset there. */
static size_t store_name(struct build *b, const char *name)
{
        size_t len = strlen(name) + 1, off = b->len;

        if (b->len + len > b->names_cap) {
                b->names_cap = b->names_cap ? b->names_cap * 2 : 4096;
                if (b->names_cap < b->len + len)
                        b->names_cap = b->len + len;
                b->names = xrealloc(b->names, b->names_cap);
        }
        memcpy(b->names + off, name, len);
        b->len += len;
        return off;
}

static void add(struct build *b, const char *name, uint64_t ino, unsigned char type,
                enum layer layer, bool whiteout)
{
        if (b->n == b->cap) {
                b->cap = b->cap ? b->cap * 2 : 64;
                b->v = xrealloc(b->v, b->cap * sizeof(*b->v));
        }
        b->v[b->n++] = (struct item){
                .e = {.ino = ino, .hash = cowdir_hash(name), .type = type},
                .name_off = store_name(b, name),
                .layer = (unsigned char)layer,
                .whiteout = whiteout,
        };
}

/*
 * What an upper entry that may be a whiteout is: its type, and whether it is one. A
 * character device says so in d_type, but a file system without d_type (DT_UNKNOWN) only
 * in its stat. 0, 1 for an entry gone since it was read (nothing to list), or -errno.
 */
static int upper_kind(DIR *dir, const struct dirent *de, unsigned char *type, bool *whiteout)
{
        struct stat st;

        *whiteout = false;
        if (de->d_type != DT_CHR && de->d_type != DT_UNKNOWN)
                return 0;
        if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 1 : -errno;
        *type = IFTODT(st.st_mode);
        *whiteout = S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
        return 0;
}

/*
 * Read the directory `fd` (through a stream of its own: the offset of `fd` stays where it
 * is) into b. ".." is not added: its inode goes to *dotdot when the layer lists one. The
 * lower's entries are taken as they are: a character device 0:0 there is a host file (the
 * lower is no overlayfs layer), and a DT_UNKNOWN stays one, as overlayfs passes it on.
 */
static int read_layer(struct build *b, int fd, enum layer layer, uint64_t *dotdot)
{
        int err = 0;
        DIR *dir = vfs_dir_at(fd, ".", &err);
        struct dirent *de;

        if (!dir)
                return err;
        for (;;) {
                unsigned char type;
                bool whiteout = false;
                int r = 0;

                errno = 0;
                de = readdir(dir);
                if (!de) {
                        err = errno ? -errno : 0;
                        break;
                }
                if (strcmp(de->d_name, ".") == 0)
                        continue;
                if (strcmp(de->d_name, "..") == 0) {
                        *dotdot = de->d_ino;
                        continue;
                }
                if (cowup_is_tmp(de->d_name))
                        continue; /* a copy-up in progress (cowup.h): no name of the merge */
                type = de->d_type;
                if (layer == UPPER)
                        r = upper_kind(dir, de, &type, &whiteout);
                if (r < 0) {
                        err = r;
                        break;
                }
                if (r == 0)
                        add(b, de->d_name, de->d_ino, type, layer, whiteout);
        }
        closedir(dir);
        return err;
}

/* By position, then name; of one name the upper's first. */
static int cmp_item(const void *a, const void *b)
{
        const struct item *x = a, *y = b;
        int c;

        if (x->e.hash != y->e.hash)
                return x->e.hash < y->e.hash ? -1 : 1;
        c = strcmp(x->e.name, y->e.name);
        return c ? c : (int)x->layer - (int)y->layer;
}

/* The sorted items into out: the first of each name only (the upper's, when the upper has
 * it), and no whiteout. "." and ".." are out->v[0] and [1] already. */
static void merge(struct build *b, struct cowdir *out)
{
        for (size_t i = 0; i < b->n; i++) {
                const struct item *it = &b->v[i];

                if (i > 0 && it->e.hash == b->v[i - 1].e.hash &&
                    strcmp(it->e.name, b->v[i - 1].e.name) == 0)
                        continue; /* hidden by the upper's (or, within a layer that changed
                                     while it was read, listed already) */
                if (!it->whiteout)
                        out->v[out->n++] = it->e;
        }
}

int cowdir_read(int upper, int lower, struct cowdir *out)
{
        struct build b = {0};
        struct stat st;
        uint64_t dotdot;
        size_t dot_off, dotdot_off;
        int r;

        *out = (struct cowdir){0};
        if (upper < 0 && lower < 0)
                return -EINVAL;
        if (fstat(upper >= 0 ? upper : lower, &st) < 0)
                return -errno;
        dotdot = st.st_ino; /* when the layer's listing has no ".." */
        dot_off = store_name(&b, ".");
        dotdot_off = store_name(&b, "..");
        r = upper >= 0 ? read_layer(&b, upper, UPPER, &dotdot) : 0;
        if (r == 0 && lower >= 0) {
                uint64_t unused;

                r = read_layer(&b, lower, LOWER, upper >= 0 ? &unused : &dotdot);
        }
        if (r < 0) {
                free(b.v);
                free(b.names);
                return r;
        }
        /* The storage moves no more: the names can be pointed at. */
        for (size_t i = 0; i < b.n; i++)
                b.v[i].e.name = b.names + b.v[i].name_off;
        qsort(b.v, b.n, sizeof(*b.v), cmp_item);
        out->names = b.names;
        out->v = xcalloc(b.n + 2, sizeof(*out->v));
        out->v[0] = (struct cowdir_entry){st.st_ino, COWDIR_POS_DOT, DT_DIR, b.names + dot_off};
        out->v[1] = (struct cowdir_entry){dotdot, COWDIR_POS_DOTDOT, DT_DIR, b.names + dotdot_off};
        out->n = 2;
        merge(&b, out);
        free(b.v);
        return 0;
}

void cowdir_free(struct cowdir *d)
{
        free(d->v);
        free(d->names);
        *d = (struct cowdir){0};
}

/* The kernel's d_reclen: ALIGN(header + name + NUL, 8) for getdents64; for getdents one
 * byte more (d_type after the NUL), aligned to a long (fs_dir.c's old_reclen, on 64 bits). */
static size_t reclen(size_t namelen, bool old)
{
        if (old)
                return (offsetof(struct dirent_old, d_name) + namelen + 2 + sizeof(long) - 1) &
                       ~(sizeof(long) - 1);
        return (offsetof(struct dirent64_k, d_name) + namelen + 1 + 7) & ~(size_t)7;
}

/*
 * One record at rec (len bytes, from reclen). The header is copied rather than stored
 * through a cast: the caller's buffer need not be aligned. The padding is cleared (the
 * kernel leaves it unwritten; ours would be the supervisor's heap).
 */
static void put(char *rec, size_t len, const struct cowdir_entry *e, size_t namelen, bool old)
{
        memset(rec, 0, len);
        if (old) {
                struct dirent_old h = {
                        .d_ino = (unsigned long)e->ino,
                        .d_off = e->hash,
                        .d_reclen = (unsigned short)len,
                };

                memcpy(rec, &h, offsetof(struct dirent_old, d_name));
                memcpy(rec + offsetof(struct dirent_old, d_name), e->name, namelen);
                rec[len - 1] = (char)e->type;
        } else {
                struct dirent64_k h = {
                        .d_ino = e->ino,
                        .d_off = e->hash,
                        .d_reclen = (unsigned short)len,
                        .d_type = e->type,
                };

                memcpy(rec, &h, offsetof(struct dirent64_k, d_name));
                memcpy(rec + offsetof(struct dirent64_k, d_name), e->name, namelen);
        }
}

/* The index of the first entry past `pos` (binary search: the entries are sorted). */
static size_t first_after(const struct cowdir *d, uint64_t pos)
{
        size_t lo = 0, hi = d->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (d->v[mid].hash <= pos)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The bytes the run of entries [i, end) of one hash takes; *end set. 0 with *err set when
 * the old format cannot carry one of its inode numbers (a 32-bit long). */
static size_t run_len(const struct cowdir *d, size_t i, bool old, size_t *end, int *err)
{
        size_t len = 0, j;

        *err = 0;
        for (j = i; j < d->n && d->v[j].hash == d->v[i].hash; j++) {
                if (old && (unsigned long)d->v[j].ino != d->v[j].ino)
                        *err = -EOVERFLOW;
                len += reclen(strlen(d->v[j].name), old);
        }
        *end = j;
        return *err ? 0 : len;
}

ssize_t cowdir_fill(const struct cowdir *d, uint64_t pos, bool old, char *buf, size_t size,
                    uint64_t *next)
{
        size_t filled = 0, end;

        for (size_t i = first_after(d, pos); i < d->n; i = end) {
                int err;
                size_t len = run_len(d, i, old, &end, &err);

                if (err < 0 || filled + len > size) {
                        if (filled == 0)
                                return err < 0 ? err : -EINVAL;
                        break;
                }
                for (size_t k = i; k < end; k++) {
                        size_t namelen = strlen(d->v[k].name), rl = reclen(namelen, old);

                        put(buf + filled, rl, &d->v[k], namelen, old);
                        filled += rl;
                }
                *next = d->v[i].hash;
        }
        return (ssize_t)filled;
}

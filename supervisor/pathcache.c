/* The start-up's memo of lstat and readlink (pathcache.h). */
#include "supervisor/pathcache.h"
#include "supervisor/util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct entry {
        char *path;
        int err; /* 0, or why it does not exist (ENOENT, ENOTDIR) */
        struct stat st;
        char *target; /* a symlink's, once read */
};

/* The entries side by side, in the order met, and a small index of them by hash: a table of
 * the entries themselves (~170 bytes each) spread them over ~80 pages, each a page fault
 * (costly in a VM) for a few hundred paths. */
static struct {
        struct entry *v;
        size_t n, cap;
        uint32_t *index; /* entry number + 1, 0: free; size a power of two */
        size_t slots;
        bool on;
} pc;

static uint64_t hash(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
        return h;
}

/* The index slot of `path`: its entry's, or the free one where it would go. */
static uint32_t *slot(const char *path)
{
        size_t i = hash(path) & (pc.slots - 1);

        while (pc.index[i] && strcmp(pc.v[pc.index[i] - 1].path, path) != 0)
                i = (i + 1) & (pc.slots - 1);
        return &pc.index[i];
}

/* Room for one more entry, the index at most half full. */
static void grow(void)
{
        if (pc.n == pc.cap) {
                pc.cap = pc.cap ? 2 * pc.cap : 256;
                pc.v = xrealloc(pc.v, pc.cap * sizeof(*pc.v));
        }
        if ((pc.n + 1) * 2 > pc.slots) {
                free(pc.index);
                pc.slots = pc.slots ? 2 * pc.slots : 1024;
                pc.index = xcalloc(pc.slots, sizeof(*pc.index));
                for (size_t i = 0; i < pc.n; i++)
                        *slot(pc.v[i].path) = (uint32_t)(i + 1);
        }
}

void pathcache_begin(void)
{
        pathcache_end();
        pc.on = true;
}

void pathcache_end(void)
{
        for (size_t i = 0; i < pc.n; i++) {
                free(pc.v[i].path);
                free(pc.v[i].target);
        }
        free(pc.v);
        free(pc.index);
        pc.v = NULL;
        pc.index = NULL;
        pc.n = pc.cap = pc.slots = 0;
        pc.on = false;
}

/* The entry of an existing `path` (lstat'ed now or before), or NULL with errno. */
static struct entry *look(const char *path)
{
        struct entry *e;
        struct stat st = {0};
        uint32_t *at;
        int err = 0;

        at = pc.slots ? slot(path) : NULL;
        if (!at || !*at) {
                if (lstat(path, &st) < 0) {
                        /* Only a missing path is remembered missing; EACCES, ELOOP... are
                         * asked again. */
                        if (errno != ENOENT && errno != ENOTDIR)
                                return NULL;
                        err = errno;
                }
                grow();
                e = &pc.v[pc.n++];
                *e = (struct entry){.path = xstrdup(path), .err = err, .st = st};
                *slot(path) = (uint32_t)pc.n;
        } else {
                e = &pc.v[*at - 1];
        }
        if (e->err) {
                errno = e->err;
                return NULL;
        }
        return e;
}

void pathcache_forget(void)
{
        if (pc.on)
                pathcache_begin();
}

int pc_lstat(const char *path, struct stat *st)
{
        struct entry *e;

        if (!pc.on)
                return lstat(path, st);
        e = look(path);
        if (!e)
                return -1;
        *st = e->st;
        return 0;
}

static const char *target_of(struct entry *e)
{
        char buf[PATH_MAX];
        ssize_t n;

        if (e->target)
                return e->target;
        n = readlink(e->path, buf, sizeof(buf) - 1);
        if (n < 0)
                return NULL;
        buf[n] = '\0';
        e->target = xstrdup(buf);
        return e->target;
}

/*
 * realpath(3) by components, as glibc walks it (each symlink's target put before what is left,
 * at most 40, "." and ".." taken lexically on the resolved prefix, a component followed by a
 * slash must be a directory), with each prefix's lstat and readlink from the memo. What is
 * left to walk grows as glibc's does: only the resolved prefix, which the kernel is asked
 * about, and the answer are bound by PATH_MAX (an outside review made a 4 KB target plus
 * "/more" fail here and not in libc, and the hidden path beyond went unhidden).
 */
char *pc_realpath(const char *path, char *real)
{
        char res[PATH_MAX], *rest, *next;
        size_t rl = 0; /* res[0, rl): the resolved prefix, "" for "/" */
        const char *p;
        int links = 0;

        /* /proc's magic links (/proc/self/fd/N) lead where no text does: libc's own walk. */
        if (!pc.on || path[0] != '/' || strncmp(path, "/proc/", 6) == 0)
                return realpath(path, real);
        rest = xstrdup(path);
        res[0] = '\0';
        for (p = rest; *p;) {
                const char *comp, *target;
                struct entry *e;
                size_t len;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                comp = p;
                len = strcspn(p, "/");
                p += len;
                if (len == 1 && comp[0] == '.')
                        continue;
                if (len == 2 && comp[0] == '.' && comp[1] == '.') {
                        while (rl && res[--rl] != '/')
                                ;
                        res[rl] = '\0';
                        continue;
                }
                if (rl + 1 + len >= sizeof(res)) {
                        errno = ENAMETOOLONG;
                        goto fail;
                }
                res[rl] = '/';
                memcpy(res + rl + 1, comp, len);
                res[rl + 1 + len] = '\0';
                e = look(res);
                if (!e) {
                        res[rl] = '\0';
                        goto fail;
                }
                if (S_ISLNK(e->st.st_mode)) {
                        res[rl] = '\0';
                        if (++links > 40) {
                                errno = ELOOP;
                                goto fail;
                        }
                        target = target_of(e);
                        if (!target)
                                goto fail;
                        if (!target[0]) {
                                errno = ENOENT;
                                goto fail;
                        }
                        next = xrealloc(NULL, strlen(target) + strlen(p) + 1);
                        strcpy(next, target);
                        strcat(next, p);
                        if (target[0] == '/')
                                rl = 0, res[0] = '\0';
                        free(rest);
                        rest = next;
                        p = rest;
                        continue;
                }
                if (*p == '/' && !S_ISDIR(e->st.st_mode)) {
                        errno = ENOTDIR;
                        goto fail;
                }
                rl += 1 + len;
        }
        free(rest);
        snprintf(real, PATH_MAX, "%s", rl ? res : "/");
        return real;
fail:
        links = errno;
        free(rest);
        errno = links;
        return NULL;
}

int pc_stat(const char *path, struct stat *st)
{
        char real[PATH_MAX];

        if (!pc.on || path[0] != '/' || strncmp(path, "/proc/", 6) == 0)
                return stat(path, st);
        return pc_realpath(path, real) ? pc_lstat(real, st) : -1;
}

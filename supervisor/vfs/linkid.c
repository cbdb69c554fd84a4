/*
 * The identity a hard link keeps in a copy-on-write mount (linkid.h): an open-addressed
 * table, linear probing, never shrunk; an entry whose object died stays, and matches no
 * object born later.
 */
#include "supervisor/vfs/linkid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

void linkid_init(struct linkid *l)
{
        memset(l, 0, sizeof(*l));
        pthread_mutex_init(&l->lock, NULL);
}

void linkid_fini(struct linkid *l)
{
        free(l->v);
        l->v = NULL;
        l->cap = 0;
        atomic_store(&l->n, 0);
        pthread_mutex_destroy(&l->lock);
}

int linkid_stat(int dirfd, const char *name, int flags, struct linkid_obj *o)
{
        struct statx stx;

        if (statx(dirfd, name, flags, STATX_INO | STATX_NLINK | STATX_BTIME, &stx) < 0)
                return -errno;
        o->nlink = stx.stx_nlink;
        o->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        o->ino = stx.stx_ino;
        o->btime_sec = stx.stx_btime.tv_sec;
        o->btime_nsec = stx.stx_btime.tv_nsec;
        return stx.stx_mask & STATX_BTIME ? 0 : -ENODATA;
}

static size_t slot_of(const struct linkid_obj *o, size_t cap)
{
        uint64_t h = ((uint64_t)o->dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)o->ino;

        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
        return (size_t)h & (cap - 1);
}

static bool same(const struct linkid_obj *a, const struct linkid_obj *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->btime_sec == b->btime_sec &&
               a->btime_nsec == b->btime_nsec;
}

/* The slot holding `o`, or the free one where it belongs. Under the lock; cap > 0. */
static struct linkid_entry *find(const struct linkid *l, const struct linkid_obj *o)
{
        size_t i = slot_of(o, l->cap);

        while (l->v[i].raw.ino != 0 && !same(&l->v[i].raw, o))
                i = (i + 1) & (l->cap - 1);
        return &l->v[i];
}

/* Room for one more entry, the table at most half full. Under the lock. */
static bool grow(struct linkid *l)
{
        size_t n = atomic_load(&l->n), cap = l->cap ? l->cap * 2 : 1024;
        struct linkid linked = {.cap = cap};

        if ((n + 1) * 2 <= l->cap)
                return true;
        linked.v = calloc(cap, sizeof(*linked.v));
        if (!linked.v)
                return false;
        for (size_t i = 0; i < l->cap; i++)
                if (l->v[i].raw.ino != 0)
                        *find(&linked, &l->v[i].raw) = l->v[i];
        free(l->v);
        l->v = linked.v;
        l->cap = cap;
        return true;
}

bool linkid_note(struct linkid *l, const struct linkid_obj *made, dev_t dev, ino_t ino)
{
        struct linkid_entry *e;
        bool noted = false;

        if (made->ino == 0 || (made->dev == dev && made->ino == ino))
                return false;
        pthread_mutex_lock(&l->lock);
        if (atomic_load(&l->n) < LINKID_MAX && grow(l)) {
                e = find(l, made);
                if (e->raw.ino == 0)
                        atomic_fetch_add(&l->n, 1);
                *e = (struct linkid_entry){.raw = *made, .dev = dev, .ino = ino};
                noted = true;
        }
        pthread_mutex_unlock(&l->lock);
        return noted;
}

bool linkid_shown(struct linkid *l, const struct linkid_obj *raw, dev_t *dev, ino_t *ino)
{
        const struct linkid_entry *e;
        bool found = false;

        if (atomic_load(&l->n) == 0 || raw->ino == 0)
                return false;
        pthread_mutex_lock(&l->lock);
        e = find(l, raw);
        if (e->raw.ino != 0) {
                *dev = e->dev;
                *ino = e->ino;
                found = true;
        }
        pthread_mutex_unlock(&l->lock);
        return found;
}

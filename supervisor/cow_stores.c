/*
 * The session stores you have used, remembered so that every later run hides them (cow.h,
 * cow_stores_*). A store given with --state-dir is hidden in the runs that name it; a run
 * that does not could write it (another run's program with `--rw` above it, or /var/tmp's
 * store under the default view), and whoever writes a session's file decides where `stockade
 * apply` writes (an outside review had root's apply write into a root-only directory). So
 * each run with --state-dir adds the store's real path to `stores` in the default store's
 * directory, which every run hides where it could write it, and every run reads that list.
 */
#include "supervisor/cow.h"
#include "supervisor/cow_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/error.h"
#include "supervisor/session_owner.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/session.h"

#define STORES_FILE "stores"
/* The last 16 stores used: each hidden entry is also a hidden place (places.h), of which a
 * run holds 64 at most; an outside review made every run fail with 52 stores listed. */
#define STORES_MAX 16

/* The default store's directory, O_PATH, when it exists, is ours and no one else may write it;
 * else -1. `def` gets its path. */
static int default_dir(char def[PATH_MAX])
{
        struct stat st;
        int fd;

        if (store_default_quiet(def) < 0)
                return -1;
        fd = open(def, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Each path the list holds, up to STORES_MAX, to fn; stops when fn returns non-zero. */
static void each_store(int (*fn)(const char *path, void *ctx), void *ctx)
{
        char def[PATH_MAX];
        _cleanup_close_ int dir = default_dir(def);
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f;
        struct stat st;

        if (dir < 0)
                return;
        fd = session_open_regular_at(dir, STORES_FILE); /* no symlink, no FIFO */
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))
                return;
        f = fdopen(fd, "r");
        if (!f)
                return;
        fd = -1; /* the FILE's now */
        for (int n = 0; n < STORES_MAX && getline(&line, &cap, f) > 0; n++) {
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '/' && fn(line, ctx))
                        break;
        }
        fclose(f);
}

struct seen {
        const char *want;
        bool found;
};

static int is_want(const char *path, void *ctx)
{
        struct seen *s = ctx;

        s->found = strcmp(path, s->want) == 0;
        return s->found;
}

struct list {
        char *v[STORES_MAX];
        size_t n;
};

/* Whether the listed `path` still is a store of ours: it resolves to itself (no symlink on
 * the way now) and is a directory of ours. Else it was removed, and what is there may be
 * anyone's (beneath /var/tmp, another user can make the path and put a symlink at it, to have
 * our runs hide where it leads: an outside review). Its real path in canon. */
static bool still_ours(const char *path, char canon[PATH_MAX])
{
        struct stat st;

        return realpath(path, canon) && strcmp(canon, path) == 0 && stat(canon, &st) == 0 &&
               S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

/* A listed store kept when the list is written again: one that still is ours, once. */
static int keep(const char *path, void *ctx)
{
        struct list *l = ctx;
        char canon[PATH_MAX];

        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i], path) == 0)
                        return 0;
        if (l->n < STORES_MAX && still_ours(path, canon))
                l->v[l->n++] = xstrdup(path);
        return 0;
}

/* The default store's directory, made if missing as a run makes its store (judged on the
 * way, one name at a time, and nobody else's), O_PATH; or -1. */
static int default_dir_made(char def[PATH_MAX])
{
        struct error e = {0};
        struct sess_owner o;
        int dir = default_dir(def);

        if (dir >= 0 || store_default_quiet(def) < 0)
                return dir;
        if (store_judge(def, &o, NULL, &e) == 0 && o.uid == 0 && store_make(def, &o, NULL, &e) == 0)
                dir = default_dir(def);
        return dir;
}

int cow_stores_remember(const char *canon, const char **why)
{
        char def[PATH_MAX];
        _cleanup_close_ int dir = -1, lock = -1, fd = -1;
        struct seen s = {canon, false};
        struct list l = {.n = 0};
        bool listed = false;
        int r = 0;

        if (canon[0] != '/' || strchr(canon, '\n')) {
                *why = "a name with a newline";
                return -1;
        }
        each_store(is_want, &s);
        if (s.found)
                return 0; /* the common case: nothing written */
        dir = default_dir_made(def);
        if (dir < 0) {
                *why = "no default store of yours to list it in: HOME or XDG_STATE_HOME, a "
                       "directory of yours that no one else may write";
                return -1;
        }
        /* Written again whole, beside and renamed (readers see the old list or the new),
         * under a lock of its own so that two runs adding at once keep both. Stores gone
         * since are dropped, and the oldest when it is full: the list stays short, since
         * every run reads it. */
        *why = "its list could not be written";
        lock = session_append_regular_at(dir, STORES_FILE ".lock");
        if (lock < 0 || flock(lock, LOCK_EX) < 0)
                return -1;
        each_store(keep, &l);
        for (size_t i = 0; i < l.n && !listed; i++)
                listed = strcmp(l.v[i], canon) == 0; /* by another run, since we looked */
        if (!listed && l.n == STORES_MAX) {
                free(l.v[0]);
                memmove(l.v, l.v + 1, --l.n * sizeof(l.v[0]));
        }
        if (!listed)
                l.v[l.n++] = xstrdup(canon);
        fd = listed ? -1 : session_create_new_at(dir, STORES_FILE ".new"); /* no FIFO, no link */
        for (size_t i = 0; i < l.n; i++) {
                if (fd >= 0 && r == 0 && dprintf(fd, "%s\n", l.v[i]) < 0)
                        r = -1;
                free(l.v[i]);
        }
        if (listed ||
            (fd >= 0 && r == 0 && renameat(dir, STORES_FILE ".new", dir, STORES_FILE) == 0))
                return 0;
        if (fd >= 0)
                unlinkat(dir, STORES_FILE ".new", 0);
        return -1;
}

struct hiding {
        struct supervisor *sup;
        struct vfs_view *view;
        const char *own; /* the run's own store, hidden already */
        int (*writable)(const struct supervisor *, const struct vfs_view *, const char *);
};

static int hide_one(const char *path, void *ctx)
{
        struct hiding *h = ctx;
        char canon[PATH_MAX];
        struct vfs_mount m;
        int w;

        if (!still_ours(path, canon) || (h->own && strcmp(canon, h->own) == 0))
                return 0; /* a store removed is no store */
        w = h->writable(h->sup, h->view, canon);
        if (w && vfs_mount_init_literal(&m, VFS_HIDDEN, canon, NULL, "a session store") == 0) {
                m.view_only = w == 2;
                m.nofollow = true; /* checked now by path: a swap after must hide nothing */
                vfs_view_add(h->view, &m);
        }
        return 0;
}

void cow_stores_hide(struct supervisor *sup, struct vfs_view *view, const char *own,
                     int (*writable)(const struct supervisor *, const struct vfs_view *,
                                     const char *))
{
        struct hiding h = {sup, view, own, writable};

        each_store(hide_one, &h);
}

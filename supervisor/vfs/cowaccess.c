/*
 * What `stockade apply` needs of the host's directories (cowapply_int.h): to walk through
 * them, to make or remove names in them, to set their modes and times. Checked before
 * anything is written (cowapply_access: one read-only to the user and not the user's to make
 * writable is a conflict), and, for a read-only directory of the user's, its owner's write
 * bit lent while apply works and given back after (cowapply_lend_all, cowapply_restore_lent).
 * Each lend is written down in the session first (cow_apply.lent_path), so that an apply
 * killed before it gave the bits back has the next one give them back (cowapply_unlend_left),
 * the mount root's included, whose mode no entry of the diff carries.
 */
#include "supervisor/vfs/cowapply.h"
#include "supervisor/vfs/cowapply_int.h"
#include "supervisor/vfs/session.h"
#include "supervisor/util.h"
#include "supervisor/vfs/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What apply needs of a host directory: to walk through it (the check too), to make or
 * remove names in it, to set its own mode and times (phase 4). */
enum { NEED_SEARCH = 1, NEED_WRITE = 2, NEED_META = 4 };

struct need {
        char *path;
        int what;
};

struct needs {
        struct need *v;
        size_t n, cap;
};

static void need(struct needs *ns, const char *path, size_t len, int what)
{
        if (ns->n == ns->cap) {
                ns->cap = ns->cap ? ns->cap * 2 : 16;
                ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
        }
        ns->v[ns->n].path = strndup(path, len);
        if (!ns->v[ns->n].path)
                abort();
        ns->v[ns->n++].what = what;
}

/* `what` of the directory holding `path`; a search of it and of every directory above. */
static void need_parent(struct needs *ns, const char *path, int what)
{
        const char *last = strrchr(path, '/');

        need(ns, path, 0, NEED_SEARCH);
        for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
                need(ns, path, (size_t)(p - path), NEED_SEARCH);
        need(ns, path, last ? (size_t)(last - path) : 0, what | NEED_SEARCH);
}

/* Whether c's host object at its path is set by a rename in its directory rather than in place:
 * new content, or a file replaced_whole. */
static bool renames_in(const struct cow_apply *a, const struct cow_change *c)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (c->op != COW_MOD)
                return true;
        if (c->type == 'd' || c->type == 'o')
                return false;
        if (c->content)
                return true;
        fd = cowdiff_open(a->host_fd, c->path, O_PATH | O_NOFOLLOW);
        return fd >= 0 && fstat(fd, &st) == 0 && cowapply_replaced_whole(&st);
}

static int cmp_need(const void *x, const void *y)
{
        return strcmp(((const struct need *)x)->path, ((const struct need *)y)->path);
}

/* The needs of the selected changes, one per directory, parents first. */
static void collect_needs(const struct cow_apply *a, struct needs *ns)
{
        size_t k = 0;

        for (size_t i = 0; i < a->diff->n; i++) {
                const struct cow_change *c = &a->diff->v[i];

                if (a->sel[i] != SEL_YES || c->op == COW_SAME)
                        continue;
                need_parent(ns, c->path, renames_in(a, c) ? NEED_WRITE : 0);
                if (c->op == COW_REN)
                        need_parent(ns, c->old_path, NEED_WRITE);
                if (c->type == 'd' && c->op != COW_DEL)
                        need(ns, c->path, strlen(c->path), NEED_META);
        }
        if (ns->n)
                qsort(ns->v, ns->n, sizeof(*ns->v), cmp_need);
        for (size_t i = 0; i < ns->n; i++) {
                if (k && strcmp(ns->v[k - 1].path, ns->v[i].path) == 0) {
                        ns->v[k - 1].what |= ns->v[i].what;
                        free(ns->v[i].path);
                } else {
                        ns->v[k++] = ns->v[i];
                }
        }
        ns->n = k;
}

static void needs_free(struct needs *ns)
{
        for (size_t i = 0; i < ns->n; i++)
                free(ns->v[i].path);
        free(ns->v);
        memset(ns, 0, sizeof(*ns));
}

enum verdict { FINE = 0, LEND = 1, REFUSE = 2 };

/*
 * Whether apply, as it runs (its effective ids: root's DAC override included), can do what
 * `nd` asks of the host directory open at `fd` (O_PATH): FINE; LEND when it is the user's
 * own, searchable, and lacks only its owner's write bit (apply lends it, cowapply.h); else
 * REFUSE with *why. Returns the verdict or -errno.
 */
static int judge(int fd, int what, struct stat *st, const char **why)
{
        char proc[64];
        bool mine;

        if (fstat(fd, st) < 0)
                return -errno;
        mine = geteuid() == 0 || st->st_uid == geteuid();
        *why = "not yours: apply cannot set its mode and times";
        if ((what & NEED_META) && !mine)
                return REFUSE;
        if (!(what & (NEED_SEARCH | NEED_WRITE)))
                return FINE;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (faccessat(AT_FDCWD, proc, X_OK | (what & NEED_WRITE ? W_OK : 0), AT_EACCESS) == 0)
                return FINE;
        if (errno == EROFS)
                *why = "on a read-only file system";
        else if (errno != EACCES)
                return -errno;
        else if (!mine && (what & NEED_WRITE))
                *why = "read-only to you, and not yours to make writable: apply cannot make or "
                       "remove names in it";
        else if (!mine)
                *why = "not searchable by you";
        else if (!(st->st_mode & S_IXUSR))
                *why = "not searchable, even by you, its owner: `chmod u+x` it, then apply again";
        else
                return LEND;
        return REFUSE;
}

/* The host directory a need names, O_PATH, or -errno. A directory that is not there is one
 * this apply makes (or one the check reports); one beneath a directory that cannot be
 * searched is judged there: both -ENOENT. */
static int open_need(const struct cow_apply *a, const struct need *nd)
{
        int fd = cowdiff_open(a->host_fd, nd->path, O_PATH | O_DIRECTORY);

        if (fd == -ENOTDIR || fd == -ELOOP || fd == -EXDEV || fd == -EACCES)
                return -ENOENT;
        return fd;
}

/* Each need's directory judged, and `fn` told the verdict (FINE, LEND, REFUSE and *why), with
 * the directory's O_PATH fd and stat; a directory not there is skipped. Stops at the first
 * -errno, of a judge or of fn, which it returns (with *failed naming the need when failed is
 * not NULL). */
static int each_need(const struct cow_apply *a,
                     int (*fn)(void *ctx, int fd, const struct need *nd, int verdict,
                               const struct stat *st, const char *why),
                     void *ctx, char **failed)
{
        struct needs ns = {0};
        int r = 0;

        collect_needs(a, &ns);
        for (size_t i = 0; r >= 0 && i < ns.n; i++) {
                _cleanup_close_ int fd = open_need(a, &ns.v[i]);
                const char *why = NULL;
                struct stat st;

                if (fd == -ENOENT)
                        continue;
                r = fd < 0 ? fd : judge(fd, ns.v[i].what, &st, &why);
                if (r >= 0)
                        r = fn(ctx, fd, &ns.v[i], r, &st, why);
                if (r < 0 && failed)
                        *failed = xstrdup(ns.v[i].path);
        }
        needs_free(&ns);
        return r < 0 ? r : 0;
}

static int note_refused(void *ctx, int fd, const struct need *nd, int verdict,
                        const struct stat *st, const char *why)
{
        (void)fd, (void)st;
        if (verdict == REFUSE)
                cowapply_conflict(ctx, nd->path, why);
        return 0;
}

int cowapply_access(const struct cow_apply *a, struct cow_conflicts *out)
{
        memset(out, 0, sizeof(*out));
        return each_need(a, note_refused, out, NULL);
}

void cowapply_lents_free(struct cowapply_lents *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].path);
        free(l->v);
        memset(l, 0, sizeof(*l));
}

/* The lend of `path` (dev, ino, its own mode) written down in the session, on disk before the
 * chmod. One line: "DEV INO MODE PATH", the path escaped as the journal's. */
static int write_down(const struct cow_apply *a, const char *path, const struct stat *st)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *esc = NULL, *line = NULL;
        int n, r = 0;

        if (!a->lent_path)
                return 0;
        esc = journal_escape(path[0] ? path : ".");
        n = asprintf(&line, "%ju %ju %o %s\n", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
                     (unsigned)(st->st_mode & 07777), esc);
        if (n < 0)
                abort();
        fd = session_append_regular_at(AT_FDCWD, a->lent_path); /* a FIFO there: no hang */
        if (fd < 0)
                r = fd;
        else if (write(fd, line, (size_t)n) != n || fsync(fd) < 0)
                r = errno ? -errno : -EIO;
        return r;
}

/* Lend `fd`'s directory its owner's write and search bits, recorded in l first. */
static int lend_one(const struct cow_apply *a, int fd, const char *path, const struct stat *st,
                    struct cowapply_lents *l)
{
        char proc[64];
        int r = write_down(a, path, st);

        if (r < 0)
                return r;
        l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
        l->v[l->n++] =
                (struct cowapply_lent){xstrdup(path), st->st_mode & 07777, st->st_dev, st->st_ino};
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return chmod(proc, (st->st_mode & 07777) | LEND_BITS) < 0 ? -errno : 0;
}

struct lending {
        const struct cow_apply *a;
        struct cowapply_lents *l;
};

static int lend_needed(void *ctx, int fd, const struct need *nd, int verdict, const struct stat *st,
                       const char *why)
{
        struct lending *g = ctx;

        (void)why;
        if (verdict == REFUSE) /* not so when cowapply_access looked: changed since */
                return -EACCES;
        return verdict == LEND ? lend_one(g->a, fd, nd->path, st, g->l) : 0;
}

/* Before any write: every directory apply must write in and cannot, lent its write bit. */
int cowapply_lend_all(const struct cow_apply *a, struct cowapply_lents *l, char **failed)
{
        struct lending g = {a, l};

        return each_need(a, lend_needed, &g, failed);
}

/* `path`'s mode back to `mode` when it is still the directory lent (dev, ino) and has the
 * mode apply gave it; one changed since is the user's. Returns 0 or -errno. */
static int give_back(const struct cow_apply *a, const char *path, dev_t dev, ino_t ino, mode_t mode,
                     bool only_lent)
{
        _cleanup_close_ int fd = cowdiff_open(a->host_fd, path, O_PATH | O_DIRECTORY);
        char proc[64];
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)
                return 0; /* gone or replaced */
        if (only_lent && (st.st_mode & 07777) != (mode | LEND_BITS))
                return 0;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return chmod(proc, mode) < 0 ? -errno : 0;
}

int cowapply_unlend_left(const struct cow_apply *a, char **failed)
{
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f;
        int r = 0;

        *failed = NULL;
        if (!a->lent_path)
                return 0;
        f = session_fopen_regular(a->lent_path); /* no symlink, no FIFO */
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && getline(&line, &cap, f) > 0) {
                uintmax_t dev, ino;
                unsigned mode;
                char *path = xcalloc(1, strlen(line) + 1);

                /* A line cut short by the crash names nothing: its chmod never came. */
                if (sscanf(line, "%ju %ju %o %s", &dev, &ino, &mode, path) == 4 &&
                    line[strlen(line) - 1] == '\n' && journal_unescape(path) == 0) {
                        r = give_back(a, strcmp(path, ".") == 0 ? "" : path, (dev_t)dev, (ino_t)ino,
                                      mode & 07777, true);
                        if (r < 0)
                                *failed = xstrdup(path);
                }
                free(path);
        }
        fclose(f);
        if (r == 0 && unlink(a->lent_path) < 0 && errno != ENOENT)
                r = -errno;
        return r;
}

/* The lent directories' own modes back, deepest first; one gone or replaced is skipped.
 * Returns the first error (*failed names it when failed is not NULL). */
int cowapply_restore_lent(const struct cow_apply *a, const struct cowapply_lents *l, char **failed)
{
        int r = 0;

        for (size_t k = l->n; k-- > 0;) {
                int e = give_back(a, l->v[k].path, l->v[k].dev, l->v[k].ino, l->v[k].mode, false);

                if (e < 0 && r == 0) {
                        r = e;
                        if (failed)
                                *failed = xstrdup(l->v[k].path);
                }
        }
        /* All given back: nothing for the next apply to give back. */
        if (r == 0 && a->lent_path && unlink(a->lent_path) < 0 && errno != ENOENT)
                r = -errno;
        return r;
}

/*
 * After `stockade apply` wrote changes onto the host, they leave the session
 * (cowapply_prune): their journal records, then their upper entries and whiteouts. The
 * merged view of what is left must not move: an entry removed from the upper now shows the
 * host's object, which apply made equal to it; an opaque directory above it would hide that
 * object, so it first becomes a plain directory with a whiteout for each host name it hid.
 *
 * Each step can be interrupted: a journal rewritten but an upper entry left is an entry
 * equal to the host (COW_SAME), removed by the next apply.
 */
#include "supervisor/vfs/cowapply.h"
#include "supervisor/vfs/session.h"
#include "supervisor/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define XATTR_OPAQUE "user.overlay.opaque"

static bool at_or_under(const char *path, const char *top)
{
        size_t n = strlen(top);

        return n == 0 || (strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/* Whether a change that stays in the session is at `path` (pending: not selected). */
static bool pending_at(const struct cow_apply *a, const char *path, bool or_under)
{
        const struct cow_diff *d = a->diff;

        for (size_t i = 0; i < d->n; i++) {
                const struct cow_change *c = &d->v[i];

                if (a->sel[i] == SEL_YES || c->op == COW_SAME)
                        continue;
                if (or_under ? at_or_under(c->path, path) ||
                                       (c->old_path && at_or_under(c->old_path, path))
                             : strcmp(c->path, path) == 0 ||
                                       (c->old_path && strcmp(c->old_path, path) == 0))
                        return true;
        }
        return false;
}

/* Whether a selected entry is at `path`, or beneath it. */
static bool selected_at_or_under(const struct cow_apply *a, const char *path)
{
        const struct cow_diff *d = a->diff;

        for (size_t i = 0; i < d->n; i++)
                if (a->sel[i] == SEL_YES &&
                    (at_or_under(d->v[i].path, path) ||
                     (d->v[i].old_path && at_or_under(d->v[i].old_path, path))))
                        return true;
        return false;
}

/* ---- the journal ------------------------------------------------------------------------- */

/* A record goes when no pending change needs it and it is at or above a selected entry. */
static bool record_goes(const struct cow_apply *a, const char *path)
{
        return !pending_at(a, path, false) && selected_at_or_under(a, path);
}

static int write_all(int fd, const char *s)
{
        for (size_t off = 0, n = strlen(s); off < n;) {
                ssize_t w = write(fd, s + off, n - off);

                if (w < 0)
                        return -errno;
                off += (size_t)w;
        }
        return 0;
}

/* The journal without the records that go: written beside, fsync'd, renamed. */
static int prune_journal(const struct cow_apply *a, const char *journal_path)
{
        char tmp[PATH_MAX];
        _cleanup_close_ int fd = -1;
        size_t gone = 0;
        int r = 0;

        for (size_t i = 0; i < a->journal->n; i++)
                gone += record_goes(a, a->journal->v[i].path);
        if (!gone)
                return 0;
        if (snprintf(tmp, sizeof(tmp), "%s.new", journal_path) >= (int)sizeof(tmp))
                return -ENAMETOOLONG;
        fd = session_create_new_at(AT_FDCWD, tmp); /* never a FIFO or link put there */
        if (fd < 0)
                return fd;
        for (size_t i = 0; r >= 0 && i < a->journal->n; i++) {
                _cleanup_free_ char *line = NULL;

                if (record_goes(a, a->journal->v[i].path))
                        continue;
                line = journal_format(&a->journal->v[i]);
                r = write_all(fd, line);
        }
        if (r >= 0 && (fsync(fd) < 0 || rename(tmp, journal_path) < 0))
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}

/* ---- opaque directories ------------------------------------------------------------------ */

static int is_opaque(int fd)
{
        char v[8];
        ssize_t n = fgetxattr(fd, XATTR_OPAQUE, v, sizeof(v));

        if (n < 0)
                return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
        return n == 1 && v[0] == 'y';
}

/*
 * One name of the host directory beneath the opaque upper `u`: hidden until now, so it
 * gets a whiteout if the upper lacks it, and a directory of the upper over a host directory
 * is marked opaque (it was, through its parent).
 */
static int keep_hidden(int u, int h, const char *name)
{
        _cleanup_close_ int child = -1;
        struct stat su, sh;

        if (fstatat(h, name, &sh, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstatat(u, name, &su, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return -errno;
                return mknodat(u, name, S_IFCHR | 0000, makedev(0, 0)) < 0 ? -errno : 0;
        }
        if (!S_ISDIR(su.st_mode) || !S_ISDIR(sh.st_mode))
                return 0;
        child = openat(u, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0)
                return -errno;
        return fsetxattr(child, XATTR_OPAQUE, "y", 1, 0) < 0 ? -errno : 0;
}

/* The upper directory at `path`, if opaque over a host directory, made plain. */
static int unopaque(const struct cow_apply *a, const char *path)
{
        _cleanup_close_ int u =
                cowdiff_open(a->upper_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        _cleanup_close_ int h = -1;
        DIR *dir;
        int r, e = 0;

        if (u < 0)
                return u == -ENOENT || u == -ENOTDIR || u == -ELOOP ? 0 : u;
        r = is_opaque(u);
        if (r <= 0)
                return r;
        h = cowdiff_open(a->host_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (h < 0)
                return h == -ENOENT || h == -ENOTDIR || h == -ELOOP ? 0 : h;
        dir = fdopendir(h);
        if (!dir)
                return -errno;
        h = -1; /* the stream's now */
        for (struct dirent *de; r >= 0 && (de = cowdiff_readdir(dir, &e));)
                r = keep_hidden(u, dirfd(dir), de->d_name);
        if (r >= 0)
                r = e;
        closedir(dir);
        if (r >= 0 && fremovexattr(u, XATTR_OPAQUE) < 0)
                r = -errno;
        return r;
}

/* Every directory above a selected entry, parents first: made plain where opaque. */
static int unopaque_parents(const struct cow_apply *a, char **failed)
{
        const struct cow_diff *d = a->diff;
        int r = unopaque(a, "");

        for (size_t i = 0; r >= 0 && i < d->n; i++) {
                const char *paths[2] = {d->v[i].path, d->v[i].old_path};

                if (a->sel[i] != SEL_YES)
                        continue;
                for (size_t p = 0; r >= 0 && p < 2 && paths[p]; p++) {
                        char buf[PATH_MAX];

                        snprintf(buf, sizeof(buf), "%s", paths[p]);
                        for (char *s = strchr(buf, '/'); r >= 0 && s; s = strchr(s + 1, '/')) {
                                *s = '\0';
                                r = unopaque(a, buf);
                                if (r < 0)
                                        *failed = xstrdup(buf);
                                *s = '/';
                        }
                }
        }
        return r;
}

/* ---- upper entries ----------------------------------------------------------------------- */

/*
 * unlinkat in an upper directory, lending it the owner's write bit when the run made it
 * read-only (`tar x` of a 555 directory; without CAP_DAC_OVERRIDE the removal fails), then
 * putting its mode back: what stays in the session stays as the run left it. `parent` may
 * be O_PATH: its mode is changed through /proc.
 */
static int unlink_lent(int parent, const char *name, int flags)
{
        char proc[64];
        struct stat st;
        int r = 0;

        if (unlinkat(parent, name, flags) == 0)
                return 0;
        if (errno != EACCES)
                return -errno;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", parent);
        if (fstat(parent, &st) < 0 || chmod(proc, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) < 0)
                return -EACCES;
        if (unlinkat(parent, name, flags) < 0)
                r = -errno;
        if (chmod(proc, st.st_mode & 07777) < 0 && r == 0)
                r = -errno;
        return r;
}

/* Remove the upper's entry at `path` (a directory only if empty; ENOTEMPTY keeps it). */
static int remove_upper(const struct cow_apply *a, const char *path, bool dir)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *parent_path = slash ? strndup(path, (size_t)(slash - path)) : NULL;
        _cleanup_close_ int parent = -1;
        int r;

        if (slash && !parent_path)
                abort();
        parent = cowdiff_open(a->upper_fd, parent_path ? parent_path : "", O_PATH | O_DIRECTORY);
        /* gone, a whiteout above, or a symlink above (a directory the run replaced by one:
         * what the lower had beneath is deleted, nothing of it is in the upper) */
        if (parent < 0)
                return parent == -ENOENT || parent == -ENOTDIR || parent == -ELOOP ? 0 : parent;
        r = unlink_lent(parent, slash ? slash + 1 : path, dir ? AT_REMOVEDIR : 0);
        /* a directory that still holds something, or a whiteout where one was, stays */
        return r == -ENOENT || (dir && (r == -ENOTEMPTY || r == -ENOTDIR)) ? 0 : r;
}

static int remove_entry(const struct cow_apply *a, const struct cow_change *c)
{
        int r = 0;

        switch (c->op) {
        case COW_DEL:
                return c->whiteout ? remove_upper(a, c->path, false) : 0;
        case COW_REN:
                r = remove_upper(a, c->path, false);
                if (r >= 0 && c->whiteout)
                        r = remove_upper(a, c->old_path, false);
                return r;
        case COW_SAME:
        case COW_ADD:
        case COW_MOD:
        case COW_TYPE:
                break;
        }
        return remove_upper(a, c->path, c->type == 'd');
}

/* An upper directory above removed entries, empty now, that no pending change needs. */
static int remove_empty_parents(const struct cow_apply *a, const char *path)
{
        char buf[PATH_MAX];
        int r = 0;

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *s = strrchr(buf, '/'); r >= 0 && s; s = strrchr(buf, '/')) {
                *s = '\0';
                if (pending_at(a, buf, true))
                        break;
                r = remove_upper(a, buf, true);
        }
        return r;
}

int cowapply_prune(const struct cow_apply *a, const char *journal_path, char **failed)
{
        const struct cow_diff *d = a->diff;
        int r;

        *failed = NULL;
        r = prune_journal(a, journal_path);
        if (r < 0) {
                *failed = xstrdup("journal");
                return r;
        }
        r = unopaque_parents(a, failed);
        for (size_t k = 0; r >= 0 && k < d->n; k++) {
                size_t i = d->n - 1 - k; /* deepest first */

                if (a->sel[i] != SEL_YES)
                        continue;
                r = remove_entry(a, &d->v[i]);
                if (r >= 0)
                        r = remove_empty_parents(a, d->v[i].path);
                if (r < 0)
                        *failed = xstrdup(d->v[i].path);
        }
        return r;
}

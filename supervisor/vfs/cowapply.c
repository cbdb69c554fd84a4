/*
 * `stockade apply`'s engine (cowapply.h): which changes, whether the host still holds what
 * the run saw, and the writes. The host is the user's: every step on it starts from the
 * host root's fd and walks with cowdiff_open (no symlink, nothing above the root), and a
 * name is made beside and renamed into place, so that a crash leaves the old or the new.
 */
#include "supervisor/vfs/cowapply.h"
#include "supervisor/vfs/cowapply_int.h"
#include "supervisor/vfs/treemove.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether `path` is `top` or lies beneath it ("" is above everything). */
static bool at_or_under(const char *path, const char *top)
{
        size_t n = strlen(top);

        return n == 0 || (strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/* The entry of the diff at `path` (its new path for an R), or -1. */
static ssize_t find_change(const struct cow_diff *d, const char *path)
{
        size_t lo = 0, hi = d->n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(d->v[mid].path, path);

                if (c == 0)
                        return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* A change that makes a directory where the host has none: A of a directory, T to one. */
static bool makes_dir(const struct cow_change *c)
{
        return (c->op == COW_ADD || c->op == COW_TYPE) && c->type == 'd';
}

/* A change that would make a FIFO, socket or device on the host. */
static bool makes_special(const struct cow_change *c)
{
        return c->type == 'o' &&
               (c->op == COW_ADD || c->op == COW_TYPE || (c->op == COW_MOD && c->content));
}

/* Select the new directories above `path` that the host does not have yet. */
static void select_parents(struct cow_apply *a, const char *path)
{
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
                ssize_t k;

                *slash = '\0';
                k = find_change(a->diff, buf);
                if (k >= 0 && makes_dir(&a->diff->v[k]))
                        a->sel[k] = SEL_YES;
        }
}

void cowapply_select(struct cow_apply *a, const char *const *paths, size_t n_paths, bool *matched)
{
        const struct cow_diff *d = a->diff;

        memset(a->sel, SEL_NO, d->n);
        for (size_t i = 0; i < d->n; i++)
                for (size_t k = 0; k < n_paths; k++) {
                        const struct cow_change *c = &d->v[i];

                        if (!at_or_under(c->path, paths[k]) &&
                            !(c->old_path && at_or_under(c->old_path, paths[k])))
                                continue;
                        a->sel[i] = SEL_YES;
                        if (c->op != COW_SAME)
                                matched[k] = true;
                }
        for (size_t i = 0; i < d->n; i++)
                if (a->sel[i] == SEL_YES)
                        select_parents(a, d->v[i].path);
        for (size_t i = 0; i < d->n; i++)
                if (a->sel[i] == SEL_YES && makes_special(&d->v[i]))
                        a->sel[i] = SEL_SPECIAL;
}

/* ---- what is where ---------------------------------------------------------------------- */

struct obj {
        bool exists;
        bool loop; /* a symlink (or a non-directory) where a directory is expected */
        struct journal_rec r;
};

/* The object at `path` beneath `root`, described as the journal would record it, its hash of
 * `version` (that of the baseline it is compared with: a session of an older stockade holds
 * version 1). */
static int describe(int root, const char *path, int version, struct obj *o)
{
        int fd = cowdiff_open(root, path, O_PATH | O_NOFOLLOW), r;

        memset(o, 0, sizeof(*o));
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd == -ELOOP || fd == -EXDEV) {
                o->loop = true;
                return 0;
        }
        if (fd < 0)
                return fd;
        r = journal_describe_v(fd, path, version, &o->r);
        close(fd);
        o->exists = r >= 0;
        return r;
}

static void obj_free(struct obj *o)
{
        if (o->exists)
                journal_rec_free(&o->r);
}

/*
 * Whether `h` is `m` as apply may have left it meanwhile (LEND_BITS, WITHHELD_BITS:
 * cowapply_int.h): an apply cut short leaves such a
 * mode, and the next one takes it for `m` (the bits are the owner's own, or withheld).
 */
static bool dir_mode_as(mode_t h, mode_t m)
{
        mode_t d = (h ^ m) & 07777;

        return (d & ~(LEND_BITS | WITHHELD_BITS)) == 0 && (d & LEND_BITS & ~h) == 0 &&
               (d & WITHHELD_BITS & h) == 0;
}

/* The host already has what the upper has: same type, same content (dirs: any). */
static bool same_content(const struct journal_rec *h, const struct journal_rec *u)
{
        if (h->type != u->type)
                return false;
        if (h->type == 'd')
                return true;
        return h->type != 'o' && h->size == u->size && h->hash == u->hash;
}

/*
 * The host already has everything the upper has at a change: the content, the mode (a
 * symlink's aside; set-ID bits aside, which apply may withhold) and, for a change of times,
 * the modification time. Less is not done: a mode the user changed on the host since is a
 * conflict, not something an earlier apply did.
 */
static bool same_state(const struct journal_rec *h, const struct journal_rec *u, bool times)
{
        if (!same_content(h, u))
                return false;
        if (h->type == 'd')
                return dir_mode_as(h->mode & 01777, u->mode & 01777); /* set last, in phase 4 */
        if (h->type != 'l' && (h->mode & 01777) != (u->mode & 01777))
                return false;
        return !times || (h->mtime_sec == u->mtime_sec && h->mtime_nsec == u->mtime_nsec);
}

/* The host still has the baseline: type, mode, size, mtime, hash (dirs: type and mode, or
 * the mode an apply cut short lent it). */
static bool same_as_baseline(const struct journal_rec *h, const struct journal_rec *b)
{
        if (h->type != b->type)
                return false;
        if (h->type == 'd')
                return dir_mode_as(h->mode, b->mode);
        return (h->type == 'l' || h->mode == b->mode) && h->size == b->size &&
               h->mtime_sec == b->mtime_sec && h->mtime_nsec == b->mtime_nsec && h->hash == b->hash;
}

/* Whether an ancestor of `path` is a selected change that makes a directory. */
static bool parent_made(const struct cow_apply *a, const char *path)
{
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
                ssize_t k;

                *slash = '\0';
                k = find_change(a->diff, buf);
                if (k >= 0 && a->sel[k] == SEL_YES && makes_dir(&a->diff->v[k]))
                        return true;
        }
        return false;
}

/*
 * A host file whose mode and times apply cannot set in place (copy_meta): one with other
 * names, which may lie outside the tree (a chmod would reach them), or, without root,
 * another user's (only its owner may). It is written beside and renamed over instead.
 */
bool cowapply_replaced_whole(const struct stat *st)
{
        return S_ISREG(st->st_mode) &&
               (st->st_nlink > 1 || (geteuid() != 0 && st->st_uid != geteuid()));
}

/* ---- the check --------------------------------------------------------------------------- */

void cowapply_conflict(struct cow_conflicts *out, const char *path, const char *why)
{
        if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 8;
                out->v = xrealloc(out->v, out->cap * sizeof(*out->v));
        }
        out->v[out->n++] = (struct cow_conflict){xstrdup(path), why};
}

void cowapply_conflicts_free(struct cow_conflicts *cs)
{
        for (size_t i = 0; i < cs->n; i++)
                free(cs->v[i].path);
        free(cs->v);
        memset(cs, 0, sizeof(*cs));
}

/*
 * One host path: done already (absent when `gone`, else what the upper has at `path`), or
 * still the journal's baseline (or absent with none), or a conflict.
 */
static int check_path(const struct cow_apply *a, const char *path, bool gone, bool times,
                      struct cow_conflicts *out)
{
        const struct journal_rec *base = journal_find(a->journal, path);
        struct obj h, u = {0};
        bool done;
        int v = base && base->hashv ? base->hashv : JOURNAL_HASH_CURRENT;
        int r = describe(a->host_fd, path, v, &h);

        if (r < 0)
                return r;
        if (h.loop && !parent_made(a, path)) {
                cowapply_conflict(out, path,
                                  "a symlink or a file on the host where a directory is expected");
                return 0;
        }
        if (!gone && (r = describe(a->upper_fd, path, v, &u)) < 0) {
                obj_free(&h);
                return r;
        }
        done = gone ? !h.exists : h.exists && u.exists && same_state(&h.r, &u.r, times);
        if (done)
                r = 0;
        else if (base && !h.exists)
                cowapply_conflict(out, path, "removed from the host since the run changed it");
        else if (base && !same_as_baseline(&h.r, base))
                cowapply_conflict(out, path, "changed on the host since the run changed it");
        else if (!base && h.exists)
                cowapply_conflict(out, path, "on the host, but the journal has no baseline for it");
        obj_free(&h);
        obj_free(&u);
        return 0;
}

int cowapply_check(const struct cow_apply *a, struct cow_conflicts *out)
{
        const struct cow_diff *d = a->diff;
        int r = 0;

        memset(out, 0, sizeof(*out));
        for (size_t i = 0; r >= 0 && i < d->n; i++) {
                const struct cow_change *c = &d->v[i];

                if (a->sel[i] != SEL_YES || c->op == COW_SAME)
                        continue;
                if (c->op == COW_REN)
                        r = check_path(a, c->old_path, true, false, out);
                if (r >= 0)
                        r = check_path(a, c->path, c->op == COW_DEL, c->times, out);
        }
        return r < 0 ? r : 0;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* The host directory of `path` (O_PATH, beneath the root) and the last name. */
static int host_parent(int root, const char *path, const char **name)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = slash ? strndup(path, (size_t)(slash - path)) : xstrdup("");

        if (!dir)
                abort();
        if (!cowdiff_path_ok(path))
                return -EINVAL;
        *name = slash ? slash + 1 : path;
        return cowdiff_open(root, dir, O_PATH | O_DIRECTORY);
}

/*
 * The mode the host gets: the upper's, but a set-user-ID or set-group-ID bit on a file only
 * where the host's file has it already (copied up and kept). The sandbox cannot make one;
 * an upper tampered with must not make apply, as root, leave a set-ID file on the host.
 */
static mode_t host_mode(mode_t upper, mode_t host_old)
{
        /* As root, a directory takes the group of the directory it is made in (take_owner), not
         * the sandbox's: its set-group-ID bit would hand that group (root's, say) to every file
         * made in it. It keeps the bit where the host's has it (inherited from its parent). */
        if (S_ISDIR(upper) && geteuid() == 0)
                return (upper & 05777) | (upper & host_old & S_ISGID);
        if (!S_ISREG(upper))
                return upper & 07777;
        return (upper & 01777) | (upper & host_old & 06000);
}

/* A name beside the target, unique for this process. */
static void tmp_name(char *buf, size_t n)
{
        static unsigned counter;

        snprintf(buf, n, ".stockade-apply.%d.%u", (int)getpid(), counter++);
}

/* As root: what replaces `name` takes its owner, or the directory's for a new name.
 * Otherwise it takes the group of the file it replaces where the user may give it (a group
 * the user is in: a team's shared files stay the team's, as an edit in place leaves them). */
static void take_owner(int parent, const char *name, const char *tmp)
{
        struct stat st;

        if (geteuid() != 0) {
                if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_gid != getegid())
                        (void)fchownat(parent, tmp, (uid_t)-1, st.st_gid, AT_SYMLINK_NOFOLLOW);
                return;
        }
        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
            fstatat(parent, "", &st, AT_EMPTY_PATH) < 0)
                return;
        if (fchownat(parent, tmp, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* the applying user's, then */
}

static int sync_dir(int parent)
{
        _cleanup_close_ int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 || fsync(fd) < 0 ? -errno : 0;
}

/*
 * Put `tmp` in the place of `name`: a rename, or, when `swap` (a directory on one side), an
 * exchange and then the removal of the old object, now at `tmp`.
 */
static int install(int parent, const char *tmp, const char *name, bool swap, bool old_dir)
{
        if (!swap) {
                if (renameat(parent, tmp, parent, name) < 0)
                        return -errno;
        } else if (renameat2(parent, tmp, parent, name, RENAME_EXCHANGE) == 0) {
                if (unlinkat(parent, tmp, old_dir ? AT_REMOVEDIR : 0) < 0)
                        return -errno;
        } else if (errno == EINVAL) { /* no exchange on this file system */
                if (unlinkat(parent, name, old_dir ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
                        return -errno;
                if (renameat(parent, tmp, parent, name) < 0)
                        return -errno;
        } else {
                return -errno;
        }
        return sync_dir(parent);
}

/*
 * A new directory, made at once with the mode it keeps until phase 4 (dir_mode_as): the
 * upper's `mode`, its owner's write and search bits lent (apply fills it, whatever the
 * session's mode), the group's and others' write bits withheld (nobody else makes a name in
 * it while apply does). The umask aside, so that an apply cut short leaves exactly that.
 */
static int mkdir_meanwhile(int parent, const char *name, mode_t mode)
{
        mode_t old = umask(0);
        int r = mkdirat(parent, name, ((mode | LEND_BITS) & ~WITHHELD_BITS) & 01777);
        int e = errno;

        umask(old);
        errno = e;
        return r < 0 ? -errno : 0;
}

/* The upper's regular file at `path`, copied to `tmp` in `parent` with its mode, times and
 * user.* xattrs. */
static int make_file(const struct cow_apply *a, const char *path, int parent, const char *name,
                     const char *tmp)
{
        _cleanup_close_ int src =
                cowdiff_open(a->upper_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        _cleanup_close_ int dst = -1;
        struct stat st, old = {0};
        int r;

        if (src < 0)
                return src;
        if (fstat(src, &st) < 0 || !S_ISREG(st.st_mode))
                return -ESTALE;
        if (fstatat(parent, name, &old, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(old.st_mode))
                old.st_mode = 0;
        dst = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (dst < 0)
                return -errno;
        take_owner(parent, name, tmp);
        r = vfs_copy_bytes(src, dst);
        if (r >= 0)
                vfs_copy_user_xattrs(src, dst); /* the file's, which the rename would lose */
        if (r >= 0 &&
            (fchmod(dst, host_mode(st.st_mode, old.st_mode)) < 0 ||
             futimens(dst, (struct timespec[]){st.st_atim, st.st_mtim}) < 0 || fsync(dst) < 0))
                r = -errno;
        return r;
}

/* The upper's symlink at `path`, made (not followed) as `tmp` in `parent`. */
static int make_link(const struct cow_apply *a, const char *path, int parent, const char *name,
                     const char *tmp)
{
        _cleanup_close_ int src = cowdiff_open(a->upper_fd, path, O_PATH | O_NOFOLLOW);
        char target[PATH_MAX];
        struct stat st;
        ssize_t n;

        if (src < 0)
                return src;
        if (fstat(src, &st) < 0 || !S_ISLNK(st.st_mode))
                return -ESTALE;
        n = readlinkat(src, "", target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        if (symlinkat(target, parent, tmp) < 0)
                return -errno;
        take_owner(parent, name, tmp);
        if (utimensat(parent, tmp, (struct timespec[]){st.st_atim, st.st_mtim},
                      AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/*
 * A file of the upper with more than one name (a hard link made in the run, `tar x` of one):
 * link `tmp` to the name this apply already wrote for it, an earlier change of the diff
 * (phase 1 goes in its order), so that the names stay one file.
 * Returns 1 when linked, 0 when there is no such name (the bytes are copied then), or -errno.
 */
static int host_has(const struct cow_apply *a, const char *host_path, const char *upper_path);

/* The upper's object at `path`, not followed, by the same walk as the rest. */
static int upper_stat(const struct cow_apply *a, const char *path, struct stat *st)
{
        _cleanup_close_ int fd = cowdiff_open(a->upper_fd, path, O_PATH | O_NOFOLLOW);

        if (fd < 0)
                return fd;
        return fstat(fd, st) < 0 ? -errno : 0;
}

static int link_twin(const struct cow_apply *a, const struct cow_change *c, int parent,
                     const char *tmp)
{
        struct stat st, ot;
        char proc[64];
        int r;

        if ((r = upper_stat(a, c->path, &st)) < 0)
                return r;
        if (!S_ISREG(st.st_mode) || st.st_nlink < 2)
                return 0;
        for (const struct cow_change *o = a->diff->v; o < a->diff->v + a->diff->n; o++) {
                _cleanup_close_ int fd = -1;
                bool written =
                        o < c && a->sel[o - a->diff->v] == SEL_YES &&
                        (o->op == COW_ADD || o->op == COW_TYPE || (o->op == COW_MOD && o->content));

                /* A file this apply wrote before, or a host file the run linked to without
                 * changing it (=: `ln HOSTFILE new`), whose content the host still has: the
                 * new name joins it, as natively (its other names, outside the tree too,
                 * are the ones `ln` joined in the run: the session's upper copy stood for
                 * them). Not one kept with another mode or renamed: that is no longer the
                 * file the run linked. */
                if (o == c || o->type != 'f' || (!written && o->op != COW_SAME) ||
                    upper_stat(a, o->path, &ot) < 0 || ot.st_ino != st.st_ino ||
                    ot.st_dev != st.st_dev)
                        continue;
                r = host_has(a, o->path, o->path);
                if (r <= 0)
                        continue;
                fd = cowdiff_open(a->host_fd, o->path, O_PATH | O_NOFOLLOW);
                if (fd < 0 || fstat(fd, &ot) < 0 || !S_ISREG(ot.st_mode))
                        continue;
                /* By /proc: linkat's AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH. */
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                if (linkat(AT_FDCWD, proc, parent, tmp, AT_SYMLINK_FOLLOW) == 0)
                        return 1;
        }
        return 0;
}

/* The upper's object at c->path, made beside and put in place of the host's. */
static int write_object(const struct cow_apply *a, const struct cow_change *c, bool swap)
{
        const char *name;
        _cleanup_close_ int parent = host_parent(a->host_fd, c->path, &name);
        char tmp[64];
        int r;

        if (parent < 0)
                return parent;
        tmp_name(tmp, sizeof(tmp));
        if (c->type == 'f') {
                r = link_twin(a, c, parent, tmp);
                if (r == 0)
                        r = make_file(a, c->path, parent, name, tmp);
        } else if (c->type == 'l')
                r = make_link(a, c->path, parent, name, tmp);
        else if (c->type == 'd')
                r = mkdir_meanwhile(parent, tmp, c->mode);
        else
                return -EOPNOTSUPP;
        if (r >= 0 && c->type == 'd')
                take_owner(parent, name, tmp);
        if (r >= 0)
                r = install(parent, tmp, name, swap, c->old_type == 'd');
        if (r >= 0 && c->type == 'f')
                unlinkat(parent, tmp, 0); /* a rename onto a link of itself leaves both */
        if (r < 0)
                unlinkat(parent, tmp, c->type == 'd' ? AT_REMOVEDIR : 0);
        return r;
}

/* Whether the host's object at `host_path` is what the upper has at `upper_path`. */
static int host_has(const struct cow_apply *a, const char *host_path, const char *upper_path)
{
        struct obj h, u;
        int r = describe(a->host_fd, host_path, JOURNAL_HASH_CURRENT, &h);

        if (r < 0)
                return r;
        r = describe(a->upper_fd, upper_path, JOURNAL_HASH_CURRENT, &u);
        if (r >= 0)
                r = h.exists && u.exists && same_content(&h.r, &u.r);
        obj_free(&h);
        obj_free(&u);
        return r;
}

static int host_done(const struct cow_apply *a, const char *path)
{
        return host_has(a, path, path);
}

/*
 * The upper's file at `path` written beside the host's and renamed over it. For a host file
 * with other names: a hard link from the workspace to a file elsewhere is a separate file in
 * the session since its copy-up, and a chmod in place would reach that other file.
 */
static int replace_file(const struct cow_apply *a, const char *path)
{
        const char *name;
        _cleanup_close_ int parent = host_parent(a->host_fd, path, &name);
        char tmp[64];
        int r;

        if (parent < 0)
                return parent;
        tmp_name(tmp, sizeof(tmp));
        r = make_file(a, path, parent, name, tmp);
        if (r >= 0)
                r = install(parent, tmp, name, false, false);
        if (r < 0)
                unlinkat(parent, tmp, 0);
        return r;
}

/* Mode and times of the upper's object onto the host's, which has the same content. */
static int copy_meta(const struct cow_apply *a, const char *path)
{
        _cleanup_close_ int u = cowdiff_open(a->upper_fd, path, O_PATH | O_NOFOLLOW);
        _cleanup_close_ int h = -1;
        struct stat st, old;

        if (u < 0)
                return u;
        if (fstat(u, &st) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode))
                return 0; /* made with its times; a symlink has no mode */
        h = cowdiff_open(a->host_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (h < 0)
                return h;
        if (fstat(h, &old) < 0)
                return -errno;
        if ((old.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
                return -ESTALE;
        if (cowapply_replaced_whole(&old))
                return replace_file(a, path);
        if (fchmod(h, host_mode(st.st_mode, old.st_mode)) < 0 ||
            futimens(h, (struct timespec[]){st.st_atim, st.st_mtim}) < 0)
                return -errno;
        return 0;
}

/*
 * R: the host's old file renamed to the new name when it holds the upper's bytes; else (it
 * is gone, or --force over a file changed since) the upper's copied and the old name removed.
 */
static int write_rename(const struct cow_apply *a, const struct cow_change *c)
{
        const char *oname, *nname;
        _cleanup_close_ int op = -1, np = -1;
        int r = host_done(a, c->path);

        if (r != 0)
                return r < 0 ? r : copy_meta(a, c->path);
        op = host_parent(a->host_fd, c->old_path, &oname);
        r = host_has(a, c->old_path, c->path);
        if (r < 0)
                return r;
        if (!r) {
                r = write_object(a, c, false);
                if (r >= 0 && op >= 0 && unlinkat(op, oname, 0) < 0 && errno != ENOENT)
                        r = -errno;
                return r;
        }
        np = host_parent(a->host_fd, c->path, &nname);
        if (op < 0 || np < 0)
                return op < 0 ? op : np;
        if (renameat(op, oname, np, nname) < 0)
                return -errno;
        if ((r = sync_dir(np)) < 0 || (r = sync_dir(op)) < 0)
                return r;
        return copy_meta(a, c->path);
}

static int make_dir(const struct cow_apply *a, const struct cow_change *c)
{
        const char *name;
        _cleanup_close_ int parent = host_parent(a->host_fd, c->path, &name);
        struct stat st;
        int r;

        if (parent < 0)
                return parent;
        r = mkdir_meanwhile(parent, name, c->mode);
        if (r == 0) {
                take_owner(parent, "", name);
                return sync_dir(parent);
        }
        if (r != -EEXIST)
                return r;
        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return 0;
        return write_object(a, c, true); /* T, or A with --force: the host's goes */
}

/* Phase 1, parents first: everything but deletions and directories turned into files. */
static int write_new(const struct cow_apply *a, const struct cow_change *c)
{
        int r;

        if (c->op == COW_REN)
                return write_rename(a, c);
        if (c->op == COW_DEL || (c->op == COW_TYPE && c->old_type == 'd'))
                return 0;
        if (c->type == 'd')
                return c->op == COW_MOD ? 0 : make_dir(a, c);
        r = host_done(a, c->path);
        if (r != 0)
                return r < 0 ? r : copy_meta(a, c->path);
        return write_object(a, c, false);
}

/* Phase 2, deepest first. */
static int delete_old(const struct cow_apply *a, const struct cow_change *c)
{
        const char *name;
        _cleanup_close_ int parent = -1;
        struct stat st;

        if (c->op != COW_DEL)
                return 0;
        parent = host_parent(a->host_fd, c->path, &name);
        if (parent == -ENOENT || parent == -ENOTDIR)
                return 0; /* its directory went first: done */
        if (parent < 0)
                return parent;
        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (unlinkat(parent, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
                return -errno;
        return sync_dir(parent);
}

/* Phase 3: a directory (emptied in phase 2) becomes a file or a symlink. */
static int replace_dir(const struct cow_apply *a, const struct cow_change *c)
{
        int r;

        if (c->op != COW_TYPE || c->old_type != 'd')
                return 0;
        r = host_done(a, c->path);
        if (r != 0)
                return r < 0 ? r : copy_meta(a, c->path);
        return write_object(a, c, true);
}

/* The upper root's times onto the host root. */
static int root_times(const struct cow_apply *a)
{
        _cleanup_close_ int h = cowdiff_open(a->host_fd, "", O_RDONLY | O_DIRECTORY);
        struct stat st, hst;

        if (h < 0)
                return h;
        if (fstat(h, &hst) < 0 || fstat(a->upper_fd, &st) < 0)
                return -errno;
        if (geteuid() != 0 && hst.st_uid != geteuid())
                return 0; /* only its owner may set them: a shared root keeps the host's */
        if (futimens(h, (struct timespec[]){st.st_atim, st.st_mtim}) < 0)
                return -errno;
        return 0;
}

/* Phase 4, deepest first: a directory's mode and times, once nothing more changes in it. */
static int dir_meta(const struct cow_apply *a, const struct cow_change *c)
{
        if (c->type != 'd' || c->op == COW_DEL || c->op == COW_SAME)
                return 0;
        return copy_meta(a, c->path);
}

/* One phase over the selected changes: 0 and 2 parents first, 1 and 3 deepest first. */
static int run_phase(const struct cow_apply *a, size_t phase, bool *applied, char **failed)
{
        static int (*const up[])(const struct cow_apply *,
                                 const struct cow_change *) = {write_new, replace_dir};
        static int (*const down[])(const struct cow_apply *,
                                   const struct cow_change *) = {delete_old, dir_meta};
        const struct cow_diff *d = a->diff;

        for (size_t k = 0; k < d->n; k++) {
                size_t i = phase % 2 ? d->n - 1 - k : k;
                const struct cow_change *c = &d->v[i];
                int r;

                if (a->sel[i] != SEL_YES || c->op == COW_SAME)
                        continue;
                r = phase % 2 ? down[phase / 2](a, c) : up[phase / 2](a, c);
                if (r < 0) {
                        *failed = xstrdup(c->path);
                        return r;
                }
                *applied = true;
        }
        return 0;
}

int cowapply_write(const struct cow_apply *a, char **failed)
{
        struct cowapply_lents lent = {0};
        bool applied = false;
        int r, rr;

        *failed = NULL;
        r = cowapply_lend_all(a, &lent, failed);
        for (size_t phase = 0; r >= 0 && phase < 3; phase++)
                r = run_phase(a, phase, &applied, failed);
        /* The lent modes go back once no name changes any more (after a failure too: what
         * stays as it was keeps its mode); then phase 4 gives the directories the session
         * changed their own. */
        rr = cowapply_restore_lent(a, &lent, r >= 0 ? failed : NULL);
        cowapply_lents_free(&lent);
        if (r >= 0)
                r = rr;
        if (r >= 0)
                r = run_phase(a, 3, &applied, failed);
        /* The root is no entry of the diff: its times (what `tar x` of `.` sets, and what
         * the entries made in it changed) follow when everything went. Its mode does not:
         * the diff shows no change of it. */
        if (r >= 0 && applied && a->root_times && (r = root_times(a)) < 0)
                *failed = xstrdup(".");
        return r;
}

/*
 * Moving a directory by copying it (treemove.h): check the whole tree, copy it beside the
 * target under a temporary name, rename that into place, remove the source.
 */
#include "supervisor/vfs/treemove.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Deeper than this, a move is refused with EXDEV (tools then copy on their own): the copy
 * recurses on a notifier thread's stack. */
#define DEPTH_MAX 128

/* A file of the tree with other names: its first copy, relative to the copy's root. */
struct twin {
        dev_t dev;
        ino_t ino;
        char *rel;
};

struct move {
        uid_t uid; /* the caller's file-system ids and groups, for the check */
        gid_t gid;
        gid_t groups[64];
        int n_groups;
        int root; /* the copy's root, once made */
        char rel[PATH_MAX];
        size_t len;
        struct twin *twins;
        size_t n_twins;
};

/* ---- the check --------------------------------------------------------------------------- */

/* The caller's permission bits on st (owner, group or other), as the kernel picks them. */
static mode_t bits_for(const struct move *m, const struct stat *st)
{
        if (st->st_uid == m->uid)
                return (st->st_mode >> 6) & 7;
        if (st->st_gid == m->gid)
                return (st->st_mode >> 3) & 7;
        for (int i = 0; i < m->n_groups; i++)
                if (m->groups[i] == st->st_gid)
                        return (st->st_mode >> 3) & 7;
        return st->st_mode & 7;
}

DIR *vfs_dir_at(int parent, const char *name, int *err)
{
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);

        if (!d) {
                *err = fd < 0 ? -errno : -ENOMEM;
                if (fd >= 0)
                        close(fd);
        }
        return d;
}

/* Whether `name` in `parent` (or `parent` itself, name "") is the root of a mount (statx,
 * 5.8); true when that cannot be told. */
static bool mount_root(int parent, const char *name)
{
        struct statx sx;

        if (statx(parent, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name ? 0 : AT_EMPTY_PATH),
                  STATX_TYPE, &sx) < 0)
                return errno != ENOENT;
        return !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
               (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* Everything beneath can be read and recreated, every directory listed and emptied. */
static int check(const struct move *m, int parent, const char *name, int depth)
{
        struct stat st;
        DIR *d;
        int r = 0, e = 0;

        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        /* A mount point of the sandbox's namespace (a remapped mount, a mask) in the tree:
         * the removal, done from the host's namespace, would go into the mount (a --rw
         * HOST's files) and then let the mount point go (an outside attack lost a --rw
         * HOST's files to `mv -T sub sub2`). As rename(2) of such a tree answers here. */
        if (mount_root(parent, name))
                return -EXDEV;
        if (S_ISREG(st.st_mode))
                return bits_for(m, &st) & 4 ? 0 : -EXDEV;
        if (S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
                return 0;
        if (!S_ISDIR(st.st_mode) || (bits_for(m, &st) & 7) != 7 || depth > DEPTH_MAX)
                return -EXDEV; /* a device node; a directory it could not list or empty */
        d = vfs_dir_at(parent, name, &r);
        if (!d)
                return r;
        for (struct dirent *de; r == 0 && (de = cowdiff_readdir(d, &e));)
                r = check(m, dirfd(d), de->d_name, depth + 1);
        closedir(d);
        return r ? r : e;
}

/* ---- the copy ---------------------------------------------------------------------------- */

void vfs_copy_user_xattrs(int from, int to)
{
        char names[4096], value[4096];
        ssize_t n = flistxattr(from, names, sizeof(names));

        for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
                ssize_t v;

                /* overlayfs's own (an upper's whiteout and opaque marks) are never content */
                if (strncmp(names + i, "user.", 5) != 0 ||
                    strncmp(names + i, "user.overlay.", 13) == 0)
                        continue;
                v = fgetxattr(from, names + i, value, sizeof(value));
                if (v >= 0)
                        (void)fsetxattr(to, names + i, value, (size_t)v, 0);
        }
}

/* Bytes [at, end) of `from` to the same offsets of `to`: copy_file_range, else by hand. */
static int copy_range(int from, int to, off_t at, off_t end)
{
        const size_t size = 65536;
        char *buf = NULL;
        int r = 0;

        while (r == 0 && at < end) {
                size_t want = end - at > (off_t)(1 << 30) ? (size_t)1 << 30 : (size_t)(end - at);
                off_t in = at, out = at;
                ssize_t n = buf ? -1 : copy_file_range(from, &in, to, &out, want, 0);

                if (n > 0) {
                        at += n;
                        continue;
                }
                if (n == 0) {
                        r = -EIO; /* shorter than fstat said: the file changed */
                        break;
                }
                if (!buf) {
                        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
                            errno != EOPNOTSUPP)
                                return -errno;
                        buf = xcalloc(1, size); /* not on the stack: the copy recurses */
                }
                n = pread(from, buf, want < size ? want : size, at);
                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;
                        break;
                }
                for (ssize_t w = 0, k; r == 0 && w < n; w += k)
                        if ((k = pwrite(to, buf + w, (size_t)(n - w), at + w)) < 0)
                                r = -errno;
                at += n;
        }
        free(buf);
        return r;
}

int vfs_copy_bytes(int from, int to)
{
        struct stat st;
        off_t at = 0;
        int r = 0;

        if (fstat(from, &st) < 0)
                return -errno;
        if (ftruncate(to, st.st_size) < 0)
                return -errno;
        while (r == 0 && at < st.st_size) {
                off_t data = lseek(from, at, SEEK_DATA), hole;

                if (data < 0)
                        return errno == ENXIO ? 0 : copy_range(from, to, at, st.st_size);
                hole = lseek(from, data, SEEK_HOLE);
                if (hole < 0 || hole > st.st_size)
                        hole = st.st_size;
                r = copy_range(from, to, data, hole);
                at = hole;
        }
        return r;
}

/* Mode (no set-ID bit on a file: the sandbox makes none) and times, then the fd closed. */
static int finish(int fd, const struct stat *st, int r)
{
        mode_t mode = st->st_mode & (S_ISDIR(st->st_mode) ? 07777 : 01777);

        if (r == 0 && (fchmod(fd, mode) < 0 ||
                       futimens(fd, (struct timespec[]){st->st_atim, st->st_mtim}) < 0))
                r = -errno;
        close(fd);
        return r;
}

static int copy_node(struct move *m, int sp, const char *sn, int dp, const char *dn);

static int copy_file(struct move *m, int sp, const char *sn, int dp, const char *dn,
                     const struct stat *st)
{
        int s, d, r;

        for (size_t i = 0; st->st_nlink > 1 && i < m->n_twins; i++)
                if (m->twins[i].dev == st->st_dev && m->twins[i].ino == st->st_ino)
                        return linkat(m->root, m->twins[i].rel, dp, dn, 0) < 0 ? -errno : 0;
        s = openat(sp, sn, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (s < 0)
                return -errno;
        d = openat(dp, dn, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (d < 0) {
                r = -errno;
                close(s);
                return r;
        }
        r = vfs_copy_bytes(s, d);
        if (r == 0)
                vfs_copy_user_xattrs(s, d);
        close(s);
        r = finish(d, st, r);
        if (r == 0 && st->st_nlink > 1) {
                m->twins = xrealloc(m->twins, (m->n_twins + 1) * sizeof(*m->twins));
                m->twins[m->n_twins++] = (struct twin){st->st_dev, st->st_ino, xstrdup(m->rel)};
        }
        return r;
}

static int copy_dir(struct move *m, int sp, const char *sn, int dp, const char *dn,
                    const struct stat *st)
{
        int d, r = 0, e = 0;
        DIR *dir;

        if (mkdirat(dp, dn, 0700) < 0)
                return -errno;
        d = openat(dp, dn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
                return -errno;
        if (m->root < 0)
                m->root = dup(d); /* the copy's root: twins link from it */
        dir = vfs_dir_at(sp, sn, &r);
        if (!dir) {
                close(d);
                return r;
        }
        for (struct dirent *de; r == 0 && (de = cowdiff_readdir(dir, &e));) {
                size_t saved = m->len, n = strlen(de->d_name);

                if (m->len + n + 2 > sizeof(m->rel)) {
                        r = -ENAMETOOLONG;
                        break;
                }
                m->len += (size_t)snprintf(m->rel + m->len, sizeof(m->rel) - m->len, "%s%s",
                                           m->len ? "/" : "", de->d_name);
                r = copy_node(m, dirfd(dir), de->d_name, d, de->d_name);
                m->len = saved;
                m->rel[saved] = '\0';
        }
        if (r == 0)
                r = e;
        if (r == 0)
                vfs_copy_user_xattrs(dirfd(dir), d);
        closedir(dir);
        return finish(d, st, r);
}

static int copy_node(struct move *m, int sp, const char *sn, int dp, const char *dn)
{
        struct stat st;
        char *target;
        ssize_t n;

        if (fstatat(sp, sn, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        switch (st.st_mode & S_IFMT) {
        case S_IFDIR:
                return copy_dir(m, sp, sn, dp, dn, &st);
        case S_IFREG:
                return copy_file(m, sp, sn, dp, dn, &st);
        case S_IFLNK:
                target = xcalloc(1, PATH_MAX); /* not on the stack: the copy recurses */
                n = readlinkat(sp, sn, target, PATH_MAX - 1);
                if (n >= 0)
                        target[n] = '\0';
                n = n < 0 || symlinkat(target, dp, dn) < 0 ? -errno : 0;
                free(target);
                if (n < 0)
                        return (int)n;
                break;
        case S_IFIFO:
        case S_IFSOCK:
                if (mknodat(dp, dn, st.st_mode & (S_IFMT | 01777), 0) < 0)
                        return -errno;
                break;
        default:
                return -EXDEV;
        }
        return utimensat(dp, dn, (struct timespec[]){st.st_atim, st.st_mtim}, AT_SYMLINK_NOFOLLOW) <
                               0
                       ? -errno
                       : 0;
}

/* ---- removal ----------------------------------------------------------------------------- */

int vfs_remove_tree(int parent, const char *name, bool open_up)
{
        _cleanup_close_ int pin = -1;
        struct stat st;
        DIR *d;
        int r = 0, e = 0;

        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        /* The very directory from here on: what is judged is what is emptied, whatever is
         * mounted or swapped in at the name meanwhile. */
        pin = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pin < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Another file system mounted there (a bind put in a store by its owner): its content
         * is not ours to remove. */
        if (mount_root(pin, ""))
                return -EBUSY;
        if (open_up && (st.st_mode & 0700) != 0700) {
                char self[48];

                snprintf(self, sizeof(self), "/proc/self/fd/%d", pin);
                if (chmod(self, st.st_mode | 0700) < 0)
                        return -errno;
        }
        d = vfs_dir_at(pin, ".", &r);
        if (!d)
                return r;
        close(pin); /* one fd a level, as deep as a tree goes */
        pin = -1;
        for (struct dirent *de; r == 0 && (de = cowdiff_readdir(d, &e));)
                r = vfs_remove_tree(dirfd(d), de->d_name, open_up);
        closedir(d);
        if (r == 0)
                r = e;
        if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0)
                r = -errno;
        return r;
}

/* ---- the move ---------------------------------------------------------------------------- */

/* rename(2)'s rules for the target, before any copy. */
static int target_ok(int ddir, const char *dname, int noreplace)
{
        struct stat st;
        DIR *d;
        int r = 0;

        if (fstatat(ddir, dname, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (noreplace)
                return -EEXIST;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        d = vfs_dir_at(ddir, dname, &r);
        if (!d)
                return r;
        if (cowdiff_readdir(d, &r))
                r = -ENOTEMPTY;
        closedir(d);
        return r;
}

int treemove(int sdir, const char *sname, int ddir, const char *dname, int noreplace)
{
        static unsigned counter;
        struct move m = {.root = -1};
        char tmp[64];
        int r;

        m.uid = (uid_t)setfsuid((uid_t)-1); /* the current value: -1 changes nothing */
        m.gid = (gid_t)setfsgid((gid_t)-1);
        m.n_groups = getgroups(64, m.groups);
        if (m.n_groups < 0)
                return -EXDEV;
        r = target_ok(ddir, dname, noreplace);
        if (r == 0)
                r = check(&m, sdir, sname, 0);
        if (r < 0)
                return r;
        snprintf(tmp, sizeof(tmp), ".stockade-move.%d.%u", (int)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        r = copy_node(&m, sdir, sname, ddir, tmp);
        if (r == 0 && renameat2(ddir, tmp, ddir, dname, noreplace ? RENAME_NOREPLACE : 0) < 0)
                r = -errno;
        if (r < 0)
                vfs_remove_tree(ddir, tmp, false); /* the source as it was; the target too */
        else
                r = vfs_remove_tree(sdir, sname, false);
        for (size_t i = 0; i < m.n_twins; i++)
                free(m.twins[i].rel);
        free(m.twins);
        if (m.root >= 0)
                close(m.root);
        return r;
}

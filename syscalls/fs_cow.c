/*
 * Copy-on-write mounts the supervisor merges itself (fs_cow.h): the changes of fs_open.c,
 * fs_path.c and fs_meta.c on such a mount.
 *
 * The permission a change needs is judged as the program on the lower's object or directory
 * (faccessat with AT_EACCESS, as the program's fsuid, or its ownership), which is what the
 * program would meet natively; the upper's copies keep the lower's modes (and owners, when
 * stockade is root), so a call made there as the program meets the same. The supervisor's
 * own bookkeeping in the upper (copies, whiteouts, opaque marks) is made with its own ids.
 * The sticky bit's rule (sticky_ok) is kept too, with the owner of the lower's object for a
 * name the lower has (its copy may be the user's).
 */
#include "syscalls/fs_cow.h"
#include "syscalls/fs_common.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdir.h"
#include "supervisor/vfs/cowup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

bool fs_cow_any(const struct supervisor *sup)
{
        return sup->cow_merged;
}

void fs_cow_name_take(struct vfs_result *res, struct fs_cow_name *cn)
{
        const struct vfs_mount *m = res->kind == VFS_ABSENT ? res->parent_mount : res->mount;

        cn->mount = NULL;
        cn->lower = -1;
        if (!m || !m->emulated || (res->kind != VFS_HOST && res->kind != VFS_ABSENT))
                return;
        cn->mount = m;
        snprintf(cn->path, sizeof(cn->path), "%s", res->path);
        cn->lower = res->parent_lower_fd;
        res->parent_lower_fd = -1;
        cn->parent_upper = res->parent_upper;
        cn->exists = res->kind == VFS_HOST;
        cn->upper = cn->exists && res->upper;
}

void fs_cow_name_release(struct fs_cow_name *cn)
{
        if (cn->lower >= 0)
                close(cn->lower);
        cn->lower = -1;
        cn->mount = NULL;
}

/* `path` relative to the mount's root ("" for the root itself). */
static const char *rel_of(const struct vfs_mount *m, const char *path)
{
        size_t n = strlen(m->sandbox);

        if (n == 1)
                return path + 1;
        return path[n] == '/' ? path + n + 1 : path + n;
}

bool fs_cow_path_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

bool fs_cow_fast_ok(const struct supervisor *sup, const char *path)
{
        if (!sup->cow_merged)
                return true;
        if (path[0] != '/')
                return false;
        /* Spelt other than plainly ("//", "/./", ".."): the prefix below cannot tell where it
         * leads, and the kernel's walk would answer from the lower alone (an outside review
         * told a hidden file's existence by the ENOTDIR of ".../id_rsa/x" spelt with "/./"). */
        for (const char *c = path; *c; c++)
                if (c[0] == '/' &&
                    (c[1] == '/' ||
                     (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
                                      (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))))
                        return false;
        for (size_t i = 0; i < sup->view.n_mounts; i++)
                if (sup->view.mounts[i].emulated &&
                    fs_cow_path_under(path, sup->view.mounts[i].sandbox))
                        return false;
        return true;
}

int fs_cow_where(const struct supervisor *sup, int fd, const struct vfs_mount **m, char *path)
{
        char link[48], host[PATH_MAX];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, host, sizeof(host) - 1);
        if (n <= 0 || host[0] != '/')
                return 0;
        host[n] = '\0';
        /* The upper first: a session store may lie in a merged tree (--cow ~). */
        for (size_t k = 0; k < sup->cow.n; k++) {
                const struct vfs_mount *vm = &sup->view.mounts[sup->cow.view_index[k]];
                const char *up = sup->cow.m[k].upper;
                size_t un = strlen(up);

                if (!vm->emulated || !fs_cow_path_under(host, up))
                        continue;
                if (snprintf(path, PATH_MAX, "%s%s", strcmp(vm->sandbox, "/") ? vm->sandbox : "",
                             host + un) >= PATH_MAX)
                        return 0;
                if (!path[0])
                        snprintf(path, PATH_MAX, "/");
                *m = vm;
                return 2;
        }
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *vm = &sup->view.mounts[i];

                /* not another mount beneath it (a --rw cache in a workspace that is home) */
                if (vm->emulated && fs_cow_path_under(host, vm->sandbox) &&
                    vfs_view_mount_of(&sup->view, host) == vm) {
                        snprintf(path, PATH_MAX, "%s", host);
                        *m = vm;
                        return 1;
                }
        }
        return 0;
}

bool fs_cow_in_merged(const struct supervisor *sup, int fd)
{
        const struct vfs_mount *m;
        char path[PATH_MAX];

        return sup->cow_merged && fs_cow_where(sup, fd, &m, path) != 0;
}

bool fs_cow_found(const struct supervisor *sup, int fd)
{
        const struct vfs_mount *m;
        char path[PATH_MAX];

        return sup->cow_merged && fs_cow_where(sup, fd, &m, path) != 0;
}

bool fs_cow_missed(const struct supervisor *sup, int base, const char *path, uint64_t resolve)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = resolve};
        char dir[PATH_MAX];
        char *slash;
        bool r;
        int fd;

        if (!sup->cow_merged || path[0] != '/' ||
            snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
                return false;
        while ((slash = strrchr(dir, '/'))) {
                slash[slash == dir] = '\0'; /* "/x" leaves "/" */
                fd = sys_openat2(base, dir, &how);
                if (fd >= 0) {
                        r = fs_cow_found(sup, fd);
                        close(fd);
                        return r;
                }
                if ((errno != ENOENT && errno != ENOTDIR) || slash == dir)
                        return false;
        }
        return false;
}

void fs_cow_sandbox_path(const struct supervisor *sup, char *path, size_t size)
{
        for (size_t k = 0; sup->cow_merged && k < sup->cow.n; k++) {
                const struct vfs_mount *vm = &sup->view.mounts[sup->cow.view_index[k]];
                const char *up = sup->cow.m[k].upper;
                size_t un = strlen(up);
                char rest[PATH_MAX];

                if (!vm->emulated || !fs_cow_path_under(path, up))
                        continue;
                snprintf(rest, sizeof(rest), "%s", path + un);
                if (snprintf(path, size, "%s%s", strcmp(vm->sandbox, "/") == 0 ? "" : vm->sandbox,
                             rest) >= (int)size)
                        path[0] = '\0';
                if (!path[0] && size > 1)
                        snprintf(path, size, "/");
                return;
        }
}

/* Whether the program may do `mode` (W_OK, X_OK) to the object `fd`, as the kernel judges
 * it for the program. Under fs_as. */
static bool may_access(int fd, int mode)
{
        char proc[48];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return faccessat(AT_FDCWD, proc, mode, AT_EACCESS) == 0;
}

/* The same, entering the program's credentials for the check. Returns 0 or -errno. */
static int program_may(struct supervisor *sup, pid_t tid, int fd, int mode)
{
        struct fs_as as;
        int r = fs_as_enter(sup, tid, false, &as);

        if (r < 0)
                return r;
        r = may_access(fd, mode) ? 0 : -errno;
        fs_as_leave(&as);
        return r;
}

/* The lower's object at sandbox path `path` of `m`, O_PATH, not followed; or -errno. */
static int lower_object(const struct vfs_mount *m, const char *path)
{
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        const char *rel = rel_of(m, path);
        int fd = sys_openat2(m->host_fd, *rel ? rel : ".", &how);

        return fd < 0 ? -errno : fd;
}

static void note_parents(struct supervisor *sup, const struct vfs_mount *m, const char *path);

int fs_cow_up(struct supervisor *sup, pid_t tid, const struct vfs_mount *m, const char *path,
              enum cow_own_need need)
{
        const char *rel = rel_of(m, path);
        int lower = lower_object(m, path), r;
        struct fs_as as;
        struct stat st;

        if (lower < 0)
                return lower;
        r = fs_as_enter(sup, tid, false, &as);
        if (r == 0) {
                if (need == COW_OWN_OWNER)
                        r = fstat(lower, &st) < 0                     ? -errno
                            : st.st_uid == (uid_t)setfsuid((uid_t)-1) ? 0
                                                                      : -EPERM;
                else
                        r = may_access(lower, W_OK) ? 0 : -errno;
                fs_as_leave(&as);
        }
        close(lower);
        if (r < 0)
                return r;
        if (!*rel) {
                r = fcntl(m->upper_fd, F_DUPFD_CLOEXEC, 0);
                return r < 0 ? -errno : r;
        }
        note_parents(sup, m, path);
        cow_note_path(sup, path);
        return cowup_object(m->upper_fd, m->host_fd, rel);
}

/* What the lower has at each directory from the mount's root down to sandbox path `dir`,
 * noted for apply (cow.h) before they are copied up: their times and modes are changes too. */
static void note_dirs(struct supervisor *sup, const struct vfs_mount *m, const char *dir)
{
        char p[PATH_MAX];
        size_t root = strlen(m->sandbox);

        snprintf(p, sizeof(p), "%s", dir);
        for (char *s = p + root + (root > 1); s && *s; s = strchr(s + 1, '/')) {
                char c = *s == '/' ? '/' : 0;

                if (c)
                        *s = '\0';
                cow_note_path(sup, p);
                if (c)
                        *s = c;
        }
        cow_note_path(sup, p);
}

int fs_cow_dir_up(struct supervisor *sup, const struct vfs_mount *m, const char *path)
{
        const char *rel = rel_of(m, path);

        if (rel[0])
                note_dirs(sup, m, path);
        return cowup_dir(m->upper_fd, m->host_fd, rel);
}

/* The same for the directories above the object at `path`. */
static void note_parents(struct supervisor *sup, const struct vfs_mount *m, const char *path)
{
        char dir[PATH_MAX];
        char *slash;

        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) <= strlen(m->sandbox))
                return; /* in the mount's root */
        *slash = '\0';
        note_dirs(sup, m, dir);
}

/* The name's parent in the upper, made if need be: *parent replaced. Returns 0 or -errno. */
static int parent_up(struct supervisor *sup, struct fs_cow_name *cn, int *parent)
{
        char rel[PATH_MAX], dir[PATH_MAX];
        char *slash;
        int fd;

        if (cn->parent_upper)
                return 0;
        snprintf(rel, sizeof(rel), "%s", rel_of(cn->mount, cn->path));
        slash = strrchr(rel, '/');
        if (slash)
                *slash = '\0';
        else
                rel[0] = '\0';
        snprintf(dir, sizeof(dir), "%s", cn->path);
        slash = strrchr(dir, '/');
        if (slash && slash != dir)
                *slash = '\0';
        if (rel[0])
                note_dirs(sup, cn->mount, dir);
        fd = cowup_dir(cn->mount->upper_fd, cn->mount->host_fd, rel);
        if (fd < 0)
                return fd;
        if (*parent >= 0)
                close(*parent);
        *parent = fd;
        cn->parent_upper = true;
        return 0;
}

/* Whether the lower has `name` in the parent's directory (*st filled). */
static bool lower_has(const struct fs_cow_name *cn, const char *name, struct stat *st)
{
        return cn->lower >= 0 && fstatat(cn->lower, name, st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The directory whose write permission a change of a name needs: the upper's copy where there
 * is one, which has the mode the run gave it (`chmod u+w` of a read-only directory, then a
 * file made in it); but the lower's where the copy has another owner or group (the user's
 * copy of another's directory, which only the owner's rights may change); else the lower's. */
static int judged_dir(const struct fs_cow_name *cn, int parent)
{
        struct stat up, lo;

        if (cn->lower < 0)
                return parent;
        if (!cn->parent_upper || parent < 0 || fstat(parent, &up) < 0 ||
            fstat(cn->lower, &lo) < 0 || up.st_uid != lo.st_uid || up.st_gid != lo.st_gid)
                return cn->lower;
        return parent;
}

/* The sticky bit's rule for removing or renaming away a name of `owner` from the directory
 * `dir`: in a sticky directory only the name's owner or the directory's may (the program has
 * no CAP_FOWNER). Returns 0 or -EPERM (or -errno). */
static int sticky_ok(struct supervisor *sup, pid_t tid, int dir, uid_t owner)
{
        struct fs_as as;
        struct stat ds;
        uid_t me;
        int r;

        if (fstat(dir, &ds) < 0)
                return -errno;
        if (!(ds.st_mode & S_ISVTX))
                return 0;
        r = fs_as_enter(sup, tid, false, &as);
        if (r < 0)
                return r;
        me = (uid_t)setfsuid((uid_t)-1);
        fs_as_leave(&as);
        return me == owner || me == ds.st_uid ? 0 : -EPERM;
}

/* `last` without its trailing slashes, into name[NAME_MAX + 1]; whether it had any. */
static bool strip(const char *last, char *name)
{
        size_t n = strcspn(last, "/");

        snprintf(name, NAME_MAX + 1, "%.*s", (int)n, last);
        return last[n] == '/';
}

int fs_cow_make_ready(struct supervisor *sup, pid_t tid, struct fs_cow_name *cn, int *parent,
                      const char *name, bool *whiteout)
{
        struct stat st;
        int r;

        *whiteout = false;
        if (cowup_is_tmp(name))
                return -EACCES; /* the copy-up's temporaries' names are never the program's */
        if (cn->exists && !cn->upper)
                return -EEXIST;
        if (cn->exists)
                return 0; /* the call on the upper answers EEXIST itself */
        r = program_may(sup, tid, judged_dir(cn, *parent), W_OK | X_OK);
        if (r == 0)
                r = parent_up(sup, cn, parent);
        if (r < 0)
                return r;
        if (fstatat(*parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && cowup_is_whiteout(&st)) {
                if (unlinkat(*parent, name, 0) < 0)
                        return -errno;
                *whiteout = true;
        }
        return 0;
}

void fs_cow_made_dir(int parent, const char *name, bool whiteout)
{
        int fd;

        if (!whiteout)
                return;
        fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
                (void)cowup_set_opaque(fd);
                close(fd);
        }
}

/* The whiteouts in the upper's directory `name` of `parent` (the merge found it empty),
 * removed so that the directory itself can be. Returns 0 or -errno. */
static int clear_whiteouts(int parent, const char *name)
{
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *e;
        struct stat st;
        DIR *d;
        int r = 0;

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -ENOMEM;
        }
        while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !cowup_is_whiteout(&st)) {
                        r = -ENOTEMPTY;
                        break;
                }
                if (unlinkat(dirfd(d), e->d_name, 0) < 0) {
                        r = -errno;
                        break;
                }
        }
        closedir(d);
        return r;
}

/* The merged object's type at the name: the upper's, else the lower's. */
static int merged_stat(const struct fs_cow_name *cn, int parent, const char *name, struct stat *st)
{
        if (!cn->exists)
                return -ENOENT;
        if (cn->upper)
                return fstatat(parent, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
        return fstatat(cn->lower, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* A directory of the merge with nothing in it: 0, -ENOTEMPTY, or -errno. */
static int merged_empty(const struct fs_cow_name *cn)
{
        int r = cowup_merged_empty(cn->mount->upper_fd, cn->mount->host_fd,
                                   rel_of(cn->mount, cn->path));

        return r < 0 ? r : r ? 0 : -ENOTEMPTY;
}

int fs_cow_remove(struct supervisor *sup, pid_t tid, struct fs_cow_name *cn, int *pparent,
                  const char *last, bool dir)
{
        char name[NAME_MAX + 1];
        bool slash = strip(last, name), in_lower;
        int parent = *pparent;
        struct stat st, lst;
        int r = merged_stat(cn, parent, name, &st);

        if (r < 0)
                return r;
        if (dir && !S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (!dir && S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!dir && slash)
                return -ENOTDIR;
        in_lower = lower_has(cn, name, &lst);
        r = program_may(sup, tid, judged_dir(cn, parent), W_OK | X_OK);
        if (r == 0)
                r = sticky_ok(sup, tid, judged_dir(cn, parent), in_lower ? lst.st_uid : st.st_uid);
        if (r == 0 && dir)
                r = merged_empty(cn);
        if (r < 0)
                return r;
        cow_note_path(sup, cn->path);
        if (cn->upper) {
                if (dir && (r = clear_whiteouts(parent, name)) < 0)
                        return r;
                if (unlinkat(parent, name, dir ? AT_REMOVEDIR : 0) < 0)
                        return -errno;
        }
        if (!in_lower)
                return 0;
        r = parent_up(sup, cn, pparent); /* the caller's fd is replaced (and closed) */
        return r < 0 ? r : cowup_whiteout(*pparent, name);
}

/*
 * Every entry the merge shows beneath the directory at sandbox path `path` (a buffer of
 * PATH_MAX, restored on return) copied up, then the upper's directory marked opaque: the
 * lower has nothing more to say there. What the lower held is noted for apply first. 128
 * levels at most (the walk recurses on a notifier thread's stack): EXDEV beyond, as a rename
 * that cannot be done here. Returns 0 or -errno.
 */
static int tree_up(struct supervisor *sup, const struct vfs_mount *m, char *path, int depth)
{
        size_t len = strlen(path);
        struct cowdir d = {0};
        int up, lo, r, fd;

        if (depth > 128)
                return -EXDEV;
        r = fs_cow_layers(sup, path, &up, &lo);
        if (r <= 0)
                return r < 0 ? r : -EXDEV;
        if (lo < 0) { /* the upper's alone already */
                if (up >= 0)
                        close(up);
                return 0;
        }
        r = cowdir_read(up, lo, &d);
        if (up >= 0)
                close(up);
        close(lo);
        for (size_t i = 2; r == 0 && i < d.n; i++) {
                if (len + 1 + strlen(d.v[i].name) >= PATH_MAX) {
                        r = -ENAMETOOLONG;
                        break;
                }
                snprintf(path + len, PATH_MAX - len, "/%s", d.v[i].name);
                cow_note_path(sup, path);
                fd = cowup_object(m->upper_fd, m->host_fd, rel_of(m, path));
                if (fd < 0) {
                        r = fd;
                } else {
                        struct stat st;

                        r = fstat(fd, &st) < 0 ? -errno : 0;
                        close(fd);
                        if (r == 0 && S_ISDIR(st.st_mode))
                                r = tree_up(sup, m, path, depth + 1);
                }
                path[len] = '\0';
        }
        cowdir_free(&d);
        if (r < 0)
                return r;
        fd = cowup_dir(m->upper_fd, m->host_fd, rel_of(m, path));
        if (fd < 0)
                return fd;
        r = cowup_set_opaque(fd);
        close(fd);
        return r;
}

int fs_cow_rename(struct supervisor *sup, pid_t tid, struct fs_cow_name *a, int *pa, const char *la,
                  struct fs_cow_name *b, int *pb, const char *lb, unsigned flags)
{
        char na[NAME_MAX + 1], nb[NAME_MAX + 1];
        bool slash = strip(la, na) | strip(lb, nb), a_lower, b_lower;
        struct stat sa, sb, sla, slb, st;
        int r, fd;

        if (a->mount != b->mount)
                return -EXDEV;
        if (cowup_is_tmp(nb))
                return -EACCES; /* as for a name made (fs_cow_make_ready) */
        if (flags & ~(unsigned)RENAME_NOREPLACE)
                return flags & RENAME_EXCHANGE ? -EXDEV : -EINVAL;
        r = merged_stat(a, *pa, na, &sa);
        if (r < 0)
                return r;
        if (slash && !S_ISDIR(sa.st_mode))
                return -ENOTDIR;
        if (strcmp(a->path, b->path) == 0)
                return 0; /* the same name: nothing to do, as rename(2) */
        a_lower = lower_has(a, na, &sla);
        b_lower = lower_has(b, nb, &slb);
        if (b->exists) {
                if (flags & RENAME_NOREPLACE)
                        return -EEXIST;
                r = merged_stat(b, *pb, nb, &sb);
                if (r < 0)
                        return r;
                if (S_ISDIR(sa.st_mode) && !S_ISDIR(sb.st_mode))
                        return -ENOTDIR;
                if (!S_ISDIR(sa.st_mode) && S_ISDIR(sb.st_mode))
                        return -EISDIR;
                if (S_ISDIR(sb.st_mode) && (r = merged_empty(b)) < 0)
                        return r;
        }
        r = program_may(sup, tid, judged_dir(a, *pa), W_OK | X_OK);
        if (r == 0)
                r = program_may(sup, tid, judged_dir(b, *pb), W_OK | X_OK);
        if (r == 0)
                r = sticky_ok(sup, tid, judged_dir(a, *pa), a_lower ? sla.st_uid : sa.st_uid);
        if (r == 0 && b->exists)
                r = sticky_ok(sup, tid, judged_dir(b, *pb), b_lower ? slb.st_uid : sb.st_uid);
        if (r < 0)
                return r;
        cow_note_path(sup, a->path);
        cow_note_path(sup, b->path);
        /* A directory the lower has: all of it copied up first, then it is the upper's
         * alone and moves as one (overlayfs without redirect_dir says EXDEV, and only some
         * programs copy then: `git mv`, Python's os.rename do not) */
        if (S_ISDIR(sa.st_mode) && a_lower) {
                char p[PATH_MAX];

                note_parents(sup, a->mount, a->path);
                snprintf(p, sizeof(p), "%s", a->path);
                r = tree_up(sup, a->mount, p, 0);
                if (r < 0)
                        return r;
                a->upper = true;
        }
        if (!a->upper) {
                note_parents(sup, a->mount, a->path);
                fd = cowup_object(a->mount->upper_fd, a->mount->host_fd, rel_of(a->mount, a->path));
                if (fd < 0)
                        return fd;
                close(fd);
        }
        if ((r = parent_up(sup, a, pa)) < 0 || (r = parent_up(sup, b, pb)) < 0)
                return r;
        if (fstatat(*pb, nb, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (cowup_is_whiteout(&st) && unlinkat(*pb, nb, 0) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode) && (r = clear_whiteouts(*pb, nb)) < 0)
                        return r;
        }
        if (renameat(*pa, na, *pb, nb) < 0)
                return -errno;
        if (S_ISDIR(sa.st_mode) && b_lower)
                fs_cow_made_dir(*pb, nb, true);
        return a_lower ? cowup_whiteout(*pa, na) : 0;
}

int fs_cow_link(struct supervisor *sup, pid_t tid, struct fs_cow_name *a, int pa, const char *la,
                struct fs_cow_name *b, int *pb, const char *lb)
{
        char na[NAME_MAX + 1], nb[NAME_MAX + 1];
        struct fs_link_was was;
        bool whiteout;
        struct stat sa;
        struct fs_as as;
        int r, src;

        if (a->mount != b->mount)
                return -EXDEV;
        if (strip(la, na) || strip(lb, nb))
                return -ENOENT;
        r = merged_stat(a, pa, na, &sa);
        if (r < 0)
                return r;
        if (S_ISDIR(sa.st_mode))
                return -EPERM;
        /* The identity the source shows now, kept by the new name (vfs/linkid.h) */
        if (a->upper)
                fs_link_before(sup, pa, na, AT_SYMLINK_NOFOLLOW, &was);
        else /* one name of several the host's: not kept (vfs/linkid.h) */
                was = (struct fs_link_was){
                        .known = sa.st_nlink == 1, .dev = sa.st_dev, .ino = sa.st_ino};
        if (!a->upper) {
                note_parents(sup, a->mount, a->path);
                cow_note_path(sup, a->path);
        }
        src = a->upper ? openat(pa, na, O_PATH | O_NOFOLLOW | O_CLOEXEC)
                       : cowup_object(a->mount->upper_fd, a->mount->host_fd,
                                      rel_of(a->mount, a->path));
        if (src < 0)
                return a->upper ? -errno : src;
        r = fs_cow_make_ready(sup, tid, b, pb, nb, &whiteout);
        if (r == 0)
                r = fs_as_enter(sup, tid, true, &as);
        if (r == 0) {
                char self[48];

                snprintf(self, sizeof(self), "/proc/self/fd/%d", src);
                r = linkat(AT_FDCWD, self, *pb, nb, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
                fs_as_leave(&as);
        }
        if (r == 0)
                fs_link_after(sup, &was, *pb, nb);
        close(src);
        return r;
}

int fs_cow_layers(const struct supervisor *sup, const char *path, int *upper, int *lower)
{
        const struct vfs_mount *m = NULL;
        int r;

        *upper = *lower = -1;
        for (size_t i = 0; i < sup->view.n_mounts && !m; i++)
                if (sup->view.mounts[i].emulated &&
                    fs_cow_path_under(path, sup->view.mounts[i].sandbox))
                        m = &sup->view.mounts[i];
        if (!m || vfs_view_mount_of(&sup->view, path) != m)
                return 0;
        r = cowup_layers(m->upper_fd, m->host_fd, rel_of(m, path), upper, lower);
        return r < 0 ? r : 1;
}

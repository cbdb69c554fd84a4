/*
 * open, openat and creat, emulated in the view (supervisor/vfs/): the supervisor opens the
 * file itself, from its own copy of the path, with the program's rights, and installs the fd
 * in the caller (SECCOMP_IOCTL_NOTIF_ADDFD). Nothing is answered CONTINUE.
 *
 *   1. Copy the path ONCE, take the base (the caller's dirfd, or its cwd, for a relative
 *      path), check ID_VALID.
 *   2. The fast way, for a path that stays on one file system away from /proc and /dev:
 *      openat2(base, path, RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS), as the program. The
 *      supervisor is inside the sandbox's Landlock rules (spawn.c), so the kernel judges the
 *      open as it would judge the program's own: a hidden file is refused (EACCES), a file
 *      on a read-only place cannot be opened for writing. NO_XDEV keeps the walk off /proc
 *      (whose "self" would be the supervisor) and /dev: crossing a mount fails with EXDEV.
 *   3. The slow way, when the fast one cannot decide (EXDEV, ELOOP of a magic link, EACCES,
 *      an O_PATH open — which Landlock does not judge — a base on /proc or /dev): the path is
 *      resolved in the view, component by component (vfs_resolve), so that a hidden path
 *      does not exist (ENOENT) however it is reached, and /proc and /dev show the sandbox's
 *      own view (vfs/special.h): /proc/PID of a process outside the tree does not exist,
 *      /dev has only the devices a program needs and the sandbox's own terminals.
 *
 * O_PATH opens do not come here: ADDFD cannot install an O_PATH file, and such an fd gives
 * no access by itself, so the filter leaves them to the kernel (syscalls/filter.c); every
 * later use of one by path (a dirfd, a reopen through /proc/self/fd) comes back here.
 *
 * The path the kernel prints for a base is its sandbox path: printed in the sandbox's mount
 * namespace, where a remapped mount (--ro HOST:SANDBOX) is bound at SANDBOX (docs/view.md).
 * Blocking opens (a FIFO, a slow device) block
 * this notifier thread only; the pool starts another (notify.c).
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/creds.h"
#include "supervisor/dns.h"
#include "supervisor/notify.h"
#include "supervisor/sockmaker.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/trace_decode.h"
#include "supervisor/util.h"
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/special.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef TIOCGPTN
#define TIOCGPTN _IOR('T', 0x30, unsigned int)
#endif

#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif

/* Every flag open(2) knows; openat2 refuses unknown ones where open ignores them. */
#define OPEN_FLAGS                                                                                 \
        (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |     \
         O_SYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |      \
         O_PATH | O_TMPFILE | FASYNC)

struct open_call {
        pid_t tid;
        int dirfd;
        int flags; /* as the program gave them, masked to OPEN_FLAGS */
        mode_t mode;
        int base;         /* our copy of the dirfd or cwd; AT_FDCWD for an absolute path */
        bool proc_view;   /* the fd came through the sandbox's /proc view */
        uint64_t resolve; /* openat2's RESOLVE_* flags; 0 for the others */
        char path[PATH_MAX];
};

/* O_TMPFILE includes O_DIRECTORY: test it whole. */
static bool creates(int flags)
{
        return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static bool writes(int flags)
{
        return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || creates(flags);
}

/* openat2 as the program (fs_as_enter). Returns the fd or -errno. */
static int open_as(struct supervisor *sup, const struct open_call *oc, int dirfd, const char *path,
                   int flags, uint64_t resolve)
{
        /* O_NOCTTY: a terminal never becomes the supervisor's. openat2 takes nothing but
         * O_DIRECTORY and O_NOFOLLOW with O_PATH (open ignores the rest). */
        struct open_how how = {
                .flags = (uint64_t)(flags & O_PATH ? flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW)
                                                   : flags | O_NOCTTY) |
                         O_CLOEXEC,
                .resolve = resolve};
        struct fs_as as;
        int fd, r;

        if (creates(flags))
                how.mode = fs_as_mode(oc->tid, oc->mode);
        r = fs_as_enter(sup, oc->tid, creates(flags), &as);
        if (r < 0)
                return r;
        fd = sys_openat2(dirfd, path, &how);
        r = fd < 0 ? -errno : fd;
        fs_as_leave(&as);
        return r;
}

/* ---- the sandbox's /proc and /dev ------------------------------------------------------ */

/* The object `fd` (O_PATH, ours to close), judged already, opened with the call's flags
 * through our own /proc, as the program. Returns the new fd or -errno. */
static int reopen(struct supervisor *sup, const struct open_call *oc, int fd)
{
        char self[48];
        int r;

        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        r = open_as(sup, oc, AT_FDCWD, self, oc->flags & ~(O_EXCL | O_NOFOLLOW), 0);
        close(fd);
        return r;
}

/* A reopen for a change of the object `fd` (O_PATH, ours to close) on a merged cow mount:
 * its lower's object copied up first (fs_cow.h); anything else reopened as it is. Returns
 * the new fd or -errno. */
static int cow_reopen(struct supervisor *sup, const struct open_call *oc, int fd)
{
        const struct vfs_mount *m;
        char path[PATH_MAX];
        int r = fs_cow_where(sup, fd, &m, path);

        if (r == 1) {
                r = fs_cow_up(sup, oc->tid, m, path, COW_OWN_WRITABLE);
                close(fd);
                if (r < 0)
                        return r;
                fd = r;
        }
        return reopen(sup, oc, fd);
}

/* Whether the lower layer of `m`, a copy-on-write mount we merge, holds the object `st` at
 * sandbox path `path` (beneath m). */
static bool lower_at(const struct vfs_mount *m, const char *path, const struct stat *st)
{
        const char *rel = path + strlen(m->sandbox);
        struct stat low;

        while (*rel == '/')
                rel++;
        return m->emulated && m->host_fd >= 0 &&
               fstatat(m->host_fd, rel, &low, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) == 0 &&
               low.st_dev == st->st_dev && low.st_ino == st->st_ino;
}

/*
 * What a magic link led to (a reopen through /proc/PID/fd/N, exe, cwd, root, map_files):
 * an object the program holds, but one it may hold only because the kernel opened it O_PATH,
 * which no rule judges. It passes only if the view shows it under the path it has: resolved
 * again in the view, that path must lead to this very object. A hidden file, the host's
 * /dev/shm, another procfs or anything outside the view does not; nor does anything on
 * procfs at all (the /proc view is reached by name only). Pipes, sockets and the like, which
 * have no path, pass: they are the program's own. On a copy-on-write mount we merge, an
 * object of the lower whose path the view now shows as the upper's copy (a file written, or a
 * directory given an upper, since the program opened it: the workspace's root always has
 * one) passes as that copy, which *fd becomes, as overlayfs reopens the copy.
 */
int fs_view_admits(struct supervisor *sup, pid_t tid, int *fd)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        char link[48], path[PATH_MAX];
        struct vfs_special_ctx ctx;
        struct vfs_special sp;
        struct stat st, seen;
        struct statfs sfs;
        struct fs_as as;
        ssize_t n;
        int r;

        if (fstat(*fd, &st) < 0)
                return -errno;
        if (fstatfs(*fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
                return -EACCES;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", *fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n < 0)
                return -errno;
        path[n] = '\0';
        if (path[0] != '/')
                return 0; /* "pipe:[...]", "socket:[...]", "anon_inode:..." */
        if (n > 10 && strcmp(path + n - 10, " (deleted)") == 0) {
                const struct vfs_mount *m;

                /* No object left at the name to compare with: the name it had is judged. A
                 * hidden file the host made after the start (no mask over it), held O_PATH
                 * by the program and then deleted or renamed over, stays unreadable. */
                path[n - 10] = '\0';
                fs_sandbox_path(sup, path, sizeof(path));
                m = vfs_view_find(&sup->view, path);
                return S_ISREG(st.st_mode) && m && m->mode != VFS_HIDDEN ? 0 : -EACCES;
        }
        fs_sandbox_path(sup, path, sizeof(path));
        r = fs_as_enter(sup, tid, false, &as);
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, "/", path, 0, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r == -ENOENT ? -EACCES : r;
        if (res.kind == VFS_HOST) {
                r = fstat(res.fd, &seen) < 0 ? -errno : 0;
        } else if (res.kind == VFS_SPECIAL && res.mount->mode == VFS_DEV) {
                r = fs_special_ctx(sup, tid, &ctx);
                if (r == 0)
                        r = vfs_dev_map(res.rest, &ctx, &sp);
                if (r == 0 && sp.kind == VFS_SP_TTY)
                        r = -ENXIO;
                if (r == 0 && stat(sp.host, &seen) < 0)
                        r = -errno;
        } else {
                r = -EACCES;
        }
        if (r < 0)
                return r == -ENOENT ? -EACCES : r;
        if (seen.st_dev == st.st_dev && seen.st_ino == st.st_ino)
                return 0;
        if (res.kind == VFS_HOST && res.upper && lower_at(res.mount, res.path, &st)) {
                r = fcntl(res.fd, F_DUPFD_CLOEXEC, 0);
                if (r < 0)
                        return -errno;
                close(*fd);
                *fd = r;
                return 0;
        }
        return -EACCES;
}

/*
 * For a reopen of `host` (/proc/PID/fd/N) that led to the object `obj`: the caller's own fd N,
 * taken, when it is a description of that very object (not O_PATH) whose access mode covers
 * what `oc` asks — access the program holds already, so nothing is granted. Such a reopen
 * shares the description, as BSD's /dev/fd does (its offset; O_TRUNC does not truncate), where
 * Linux would make a new one. Returns our copy, or -1.
 */
static int held_description(const struct open_call *oc, const char *host, int obj)
{
        const char *last = strrchr(host, '/');
        int want = oc->flags & O_ACCMODE, fd, fl;
        struct stat a, b;
        char *end;
        long n;

        if (!last || last - host < 3 || strncmp(last - 3, "/fd", 3) != 0 || want == O_ACCMODE)
                return -1;
        n = strtol(last + 1, &end, 10);
        if (end == last + 1 || *end || n < 0 || n > INT_MAX)
                return -1;
        fd = tfd_take(oc->tid, (int)n);
        if (fd < 0)
                return -1;
        fl = fcntl(fd, F_GETFL);
        if (fl < 0 || (fl & O_PATH) ||
            ((fl & O_ACCMODE) != O_RDWR && (fl & O_ACCMODE) != want && want != O_RDONLY) ||
            (want == O_RDONLY && (fl & O_ACCMODE) == O_WRONLY) || fstat(fd, &a) < 0 ||
            fstat(obj, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
            ((oc->flags & O_DIRECTORY) && !S_ISDIR(a.st_mode))) {
                close(fd);
                return -1;
        }
        return fd;
}

/* /proc/PID/...: a magic link only as the last component, where it names an object the
 * process holds, judged again by fs_view_admits. */
static int open_proc(struct supervisor *sup, const struct open_call *oc,
                     const struct vfs_special *sp)
{
        uint64_t resolve = RESOLVE_NO_MAGICLINKS;
        int base = fs_abs_base(sup, &resolve);
        char parent[PATH_MAX];
        char *slash;
        int dfd, fd, r;

        if (fs_sysnet(sup, sp->host))
                return sockmaker_open_sysnet(&sup->netns, sp->host, oc->flags);
        /* In the sandbox's mount namespace, never ours: from a directory of our /proc, `..`
         * would lead the program into our tree, where its overlay, private /tmp and masks
         * are not (an outside review wrote the workspace's host copy from there). */
        fd = open_as(sup, oc, base, sp->host, oc->flags, resolve);
        if (fd != -ELOOP || !sp->process || !fs_magic_last(sp->host))
                return fd;
        snprintf(parent, sizeof(parent), "%s", sp->host);
        slash = strrchr(parent, '/');
        *slash = '\0';
        dfd = open_as(sup, oc, base, parent, O_PATH | O_DIRECTORY, resolve);
        if (dfd < 0)
                return dfd;
        /* Judged before it is opened as asked: an open that truncates acts at once, and
         * Landlock refuses only what it carves out (not a path the view alone hides, such
         * as the session store in /var/tmp, whose file an outside review truncated so).
         * Where a cow mount is merged, a reopen that changes copies a file of its lower up
         * and opens the copy (Landlock refuses the lower's anyway). */
        if ((oc->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) || (oc->flags & O_NOFOLLOW)) {
                close(dfd);
                /* the kernel's answers: a magic link is never followed so */
                return oc->flags & O_EXCL ? -EEXIST : -ELOOP;
        }
        fd = open_as(sup, oc, dfd, slash + 1, O_PATH, 0);
        close(dfd);
        if (fd < 0)
                return fd;
        r = fs_view_admits(sup, oc->tid, &fd);
        /* A description the caller holds already: the file you gave as its stdout, outside
         * the view or in the copy-on-write workspace (where a write must reach your file, as
         * `> build.log` asked, not a copy in the session). */
        if (r < 0 || (fs_cow_any(sup) && writes(oc->flags))) {
                int held = held_description(oc, sp->host, fd);

                if (held >= 0 || r < 0) {
                        close(fd);
                        return held >= 0 ? held : r;
                }
        }
        return fs_cow_any(sup) && writes(oc->flags) ? cow_reopen(sup, oc, fd) : reopen(sup, oc, fd);
}

/* /dev/tty: the caller's controlling terminal. The sandbox's own pty is the only one it can
 * have (the shim made it the controlling terminal of a new session), or one it made. */
static int open_tty(struct supervisor *sup, const struct open_call *oc)
{
        char path[48], buf[512], *p;
        unsigned long tty_nr;
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)oc->tid);
        if (fs_read_text(path, buf, sizeof(buf)) < 0)
                return -ESRCH;
        p = strrchr(buf, ')'); /* comm may hold anything */
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %lu", &tty_nr) != 1 || tty_nr == 0)
                return -ENXIO;
        if (sup->tty.active && fstat(sup->tty.slave, &st) == 0 && st.st_rdev == tty_nr) {
                snprintf(path, sizeof(path), "/proc/self/fd/%d", sup->tty.slave);
                return open_as(sup, oc, AT_FDCWD, path, oc->flags, 0);
        }
        /* A pty of the sandbox's own making: /dev/pts is major 136-143. */
        if (major(tty_nr) >= 136 && major(tty_nr) <= 143) {
                unsigned ptn = (major(tty_nr) - 136) * 256 + minor(tty_nr);
                if (fs_pts_allowed(sup, ptn)) {
                        snprintf(path, sizeof(path), "/dev/pts/%u", ptn);
                        return open_as(sup, oc, AT_FDCWD, path, oc->flags, RESOLVE_NO_SYMLINKS);
                }
        }
        return -ENXIO;
}

static int open_shm(struct supervisor *sup, const struct open_call *oc,
                    const struct vfs_special *sp)
{
        size_t n = strlen(sup->shm_dir);
        const char *rel = sp->host + n + (sp->host[n] == '/');
        int root = fs_shm_root(sup), fd;

        if (root < 0)
                return root;
        fd = open_as(sup, oc, root, *rel ? rel : ".", oc->flags,
                     RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
        close(root);
        return fd == -EXDEV ? -EACCES : fd;
}

static int open_special(struct supervisor *sup, struct open_call *oc, const struct vfs_result *res)
{
        struct vfs_special_ctx ctx;
        struct vfs_special sp;
        int r = fs_special_ctx(sup, oc->tid, &ctx);

        if (r < 0)
                return r;
        r = res->mount->mode == VFS_PROC ? vfs_proc_map(res->rest, &ctx, &sp)
                                         : vfs_dev_map(res->rest, &ctx, &sp);
        if (r < 0)
                return r;
        switch (sp.kind) {
        case VFS_SP_TTY:
                return open_tty(sup, oc);
        case VFS_SP_PROC:
                oc->proc_view = true;
                /* Nothing of the host's /proc is the sandbox's to change (the kernel's knobs
                 * under /proc/sys least of all); its own processes' files are, as the kernel
                 * judges them (/proc/self/mem, comm, oom_score_adj). */
                if (writes(oc->flags) && !sp.process)
                        return -EACCES;
                return open_proc(sup, oc, &sp);
        case VFS_SP_SHM:
                /* The sandbox's own /dev/shm: beneath it, whatever its symlinks say. */
                return open_shm(sup, oc, &sp);
        case VFS_SP_DEV:
                break;
        }
        /* In the sandbox's mount namespace, as for /proc (open_proc) */
        uint64_t resolve = RESOLVE_NO_MAGICLINKS;
        int base = fs_abs_base(sup, &resolve);

        return open_as(sup, oc, base, sp.host, oc->flags, resolve);
}

/* ---- the slow way: resolution in the view ----------------------------------------------- */

/* A new file on a merged copy-on-write mount: made in the upper (fs_cow.h), its parent
 * there replaced in *res. Returns 0 or -errno. */
static int cow_create_ready(struct supervisor *sup, const struct open_call *oc,
                            struct vfs_result *res)
{
        struct fs_cow_name cn;
        bool whiteout;
        int r;

        fs_cow_name_take(res, &cn);
        r = fs_cow_make_ready(sup, oc->tid, &cn, &res->parent_fd, res->name, &whiteout);
        fs_cow_name_release(&cn);
        return r;
}

static int open_slow(struct supervisor *sup, struct open_call *oc)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        char start[PATH_MAX], self[48];
        struct fs_as as;
        unsigned flags = 0;
        int r = fs_base_path(sup, oc->base, start, sizeof(start));

        if (r < 0)
                return r;
        if (!(oc->flags & O_NOFOLLOW) && (oc->flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL))
                flags |= VFS_FOLLOW;
        if (oc->flags & O_CREAT)
                flags |= VFS_CREATE;
        r = fs_as_enter(sup, oc->tid, false, &as); /* lookups need the program's search rights */
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, start, oc->path, flags, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r;
        switch (res.kind) {
        case VFS_SPECIAL:
                return open_special(sup, oc, &res);
        case VFS_SYNTHETIC:
                return -EACCES; /* a directory the view makes up: nothing to open */
        case VFS_ABSENT:
                if (res.parent_fd < 0)
                        return -EACCES;
                if (res.trailing_slash)
                        return -EISDIR;
                if (fs_view_over_hidden(sup, res.parent_fd, res.name))
                        return -EACCES;
                if (res.parent_mount && res.parent_mount->emulated) {
                        r = cow_create_ready(sup, oc, &res);
                        if (r < 0)
                                return r;
                }
                /* O_NOFOLLOW: a symlink put there since the walk is not followed. */
                return open_as(sup, oc, res.parent_fd, res.name, oc->flags | O_NOFOLLOW,
                               RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
        case VFS_HOST:
                break;
        }
        if ((oc->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
                return -EEXIST;
        /* A change to what a merged copy-on-write mount's lower holds: to the upper's copy. */
        if (res.mount && res.mount->emulated && !res.upper && !(oc->flags & O_PATH) &&
            (writes(oc->flags) || (oc->flags & O_TRUNC)) && res.type != S_IFLNK) {
                r = fs_cow_up(sup, oc->tid, res.mount, res.path, COW_OWN_WRITABLE);
                if (r < 0)
                        return r;
                close(res.fd);
                res.fd = r;
        }
        if (oc->flags & O_PATH) {
                if ((oc->flags & O_DIRECTORY) && res.type != S_IFDIR)
                        return -ENOTDIR;
                r = fcntl(res.fd, F_DUPFD_CLOEXEC, 0);
                return r < 0 ? -errno : r;
        }
        if (res.type == S_IFLNK)
                return -ELOOP; /* O_NOFOLLOW on a symlink */
        if (res.trailing_slash && res.type != S_IFDIR)
                return -ENOTDIR;
        /* Reopen the very object the walk found (the magic link is ours). */
        snprintf(self, sizeof(self), "/proc/self/fd/%d", res.fd);
        return open_as(sup, oc, AT_FDCWD, self, oc->flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW), 0);
}

/* ---- the fast way ------------------------------------------------------------------------ */

/* Whether the fast way may try: not O_PATH, and not starting on /proc or /dev. */
static bool fast_candidate(struct supervisor *sup, const struct open_call *oc)
{
        /* Without Landlock the kernel is no wall for hidden paths: always the view; nor
         * beneath a copy-on-write mount with a hidden path in it, whose overlay Landlock
         * grants whole (sup.h, cow_hides). Where a cow mount is merged by us, no open that
         * changes anything: our Landlock domain may write the session's upper, which a
         * symlink could lead the kernel's walk into before the check of what it found. Nor
         * where the view alone hides a path Landlock lets the sandbox write (sup.h). */
        if ((fs_cow_any(sup) || sup->view_only_in_writable) && writes(oc->flags))
                return false;
        return sup->layers.landlock_abi && !sup->cow_hides && !(oc->flags & O_PATH) &&
               !fs_starts_special(sup, oc->path, oc->base) && fs_cow_fast_ok(sup, oc->path);
}

/* ---- the handler ------------------------------------------------------------------------- */

/*
 * A new file for an openat2 with the program's own RESOLVE_* rules, which have the fast way
 * only (the view's walk does not keep them), where a hidden name may lie in a writable place
 * (sup.h): its directory found as the kernel finds it, the name asked of the view there, and
 * made from that directory. A dangling symlink at the name is refused: where it leads is
 * not judged. Returns the fd or -errno.
 */
static int create_judged(struct supervisor *sup, const struct open_call *oc, int base,
                         uint64_t resolve)
{
        const char *slash = strrchr(oc->path, '/');
        char dir[PATH_MAX];
        struct stat st;
        int parent, r;

        if (!slash) {
                snprintf(dir, sizeof(dir), ".");
        } else if (slash[1] == '\0') {
                return open_as(sup, oc, base, oc->path, oc->flags, resolve); /* EISDIR */
        } else {
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - oc->path + 1), oc->path);
        }
        parent = open_as(sup, oc, base, dir, O_PATH | O_DIRECTORY, resolve);
        if (parent < 0)
                return parent;
        slash = slash ? slash + 1 : oc->path;
        if (!(oc->flags & O_NOFOLLOW) && fstatat(parent, slash, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
                r = -EACCES;
        else if (fs_view_hides_name(sup, parent, slash) || fs_view_over_hidden(sup, parent, slash))
                r = -EACCES;
        else
                r = open_as(sup, oc, parent, slash, oc->flags, resolve);
        close(parent);
        return r;
}

static int do_open(struct supervisor *sup, struct open_call *oc, struct stat *st)
{
        unsigned ptn;
        bool fast = fast_candidate(sup, oc);
        int fd = -EXDEV, r;

        if (fast) {
                uint64_t resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | oc->resolve;
                int base = oc->base == AT_FDCWD ? fs_abs_base(sup, &resolve) : oc->base;

                /* A hidden path not made yet may lie where the sandbox writes (sup.h): the
                 * fast way only opens what exists, and a new file is made the slow way, in
                 * the view, which refuses such a path before anything is made. */
                if (sup->hidden_in_writable && (oc->flags & O_CREAT)) {
                        fd = oc->flags & O_EXCL ? -ENOENT
                                                : open_as(sup, oc, base, oc->path,
                                                          oc->flags & ~O_CREAT, resolve);
                        if (fd == -ENOENT)
                                fd = oc->resolve ? create_judged(sup, oc, base, resolve) : -EXDEV;
                } else {
                        fd = open_as(sup, oc, base, oc->path, oc->flags, resolve);
                }
                if ((fd == -ENOENT || fd == -ENOTDIR) && !oc->resolve &&
                    fs_cow_missed(sup, base, oc->path, resolve))
                        fd = -EXDEV;
        }
        /*
         * openat2's own RESOLVE_* rules bind the kernel's walk, which the view's walk does not
         * keep: such a call has the fast way only, and its answer is final — a path that
         * crosses a mount or starts on /proc or /dev is EXDEV, a hidden file EACCES.
         */
        /* A symlink led into a merged copy-on-write mount: the merge says what is there. */
        if (fast && fd >= 0 && fs_cow_found(sup, fd)) {
                close(fd);
                fd = -EXDEV;
        }
        if (!oc->resolve && (fd == -EXDEV || fd == -ELOOP || fd == -EACCES || fd == -EAGAIN)) {
                fd = open_slow(sup, oc);
                fast = false;
        }
        if (fd < 0)
                return fd;
        st->st_mode = S_IFDIR; /* what fs_view_shows assumes if the fstat below fails */
        r = fs_check_result(sup, fd, oc->proc_view, st);
        if (fast && !fs_view_shows(sup, fd, st)) {
                /* Landlock lets every directory be listed: a hidden one is the view's to
                 * refuse (a second review listed ~/.ssh by its plain path). Nor does it
                 * know of a hidden file made after the start in a directory it grants whole
                 * (a third read ~/.config/gh/hosts.yml, written by `gh auth login` during
                 * the run): the view judges every result of the fast way, before any other
                 * answer (a hidden object is ENOENT, whatever else it is). */
                close(fd);
                return -ENOENT;
        }
        /* A new pty master, however reached (/dev/ptmx, or an O_PATH fd of it reopened): its
         * slave is the sandbox's, and the master is held until the run ends. */
        if (r == 0 && S_ISCHR(st->st_mode) && st->st_rdev == makedev(5, 2) &&
            ioctl(fd, TIOCGPTN, &ptn) == 0)
                r = fs_hold_pty(sup, fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/*
 * openat2's struct open_how, copied once and checked as the kernel checks it: a size below
 * the first version is EINVAL, bytes past ours must be zero (E2BIG), unknown flags or
 * resolve bits EINVAL, a mode without O_CREAT or O_TMPFILE EINVAL. O_PATH is ENOSYS: ADDFD
 * cannot install an O_PATH file, and callers fall back to openat, which the kernel serves.
 * Returns 0 or -errno.
 */
static int read_how(struct supervisor *sup, struct open_call *oc, uint64_t addr, uint64_t size)
{
        const uint64_t known = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
                               RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED;
        struct open_how how = {0};
        unsigned char extra[64];
        int r;

        (void)sup;
        if (size < OPEN_HOW_SIZE_VER0)
                return -EINVAL;
        r = tmem_read(oc->tid, addr, &how, size < sizeof(how) ? size : sizeof(how));
        if (r < 0)
                return r;
        for (uint64_t at = sizeof(how); at < size; at += sizeof(extra)) {
                size_t n = size - at < sizeof(extra) ? (size_t)(size - at) : sizeof(extra);

                if (size > 4096)
                        return -E2BIG; /* the kernel's limit: a page */
                r = tmem_read(oc->tid, addr + at, extra, n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++)
                        if (extra[i])
                                return -E2BIG;
        }
        if ((how.flags & ~(uint64_t)OPEN_FLAGS) || (how.resolve & ~known) ||
            (how.mode & ~(uint64_t)07777))
                return -EINVAL;
        if (how.mode && !creates((int)how.flags))
                return -EINVAL;
        if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
                return -EINVAL;
        if (how.flags & O_PATH)
                return -ENOSYS;
        if (how.mode & (S_ISUID | S_ISGID))
                return -EPERM; /* as open and openat are answered in BPF */
        oc->flags = (int)how.flags;
        oc->mode = (mode_t)how.mode;
        oc->resolve = how.resolve;
        return 0;
}

/* open, openat, creat, openat2 */
int fs_open(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct open_call oc = {.tid = (pid_t)call->req->pid, .dirfd = AT_FDCWD, .base = -1};
        struct stat st; /* what was opened, when it was */
        unsigned path_arg = 0;
        uint64_t addr;
        ssize_t n;
        int r, fd;

        switch ((int)(call->row - syscall_table)) {
        case SC_open:
                addr = a[0], oc.flags = (int)a[1], oc.mode = (mode_t)a[2];
                break;
        case SC_openat:
                oc.dirfd = (int)a[0], addr = a[1], oc.flags = (int)a[2], oc.mode = (mode_t)a[3];
                path_arg = 1;
                break;
        case SC_creat:
                addr = a[0], oc.flags = O_CREAT | O_WRONLY | O_TRUNC, oc.mode = (mode_t)a[1];
                break;
        case SC_openat2:
                oc.dirfd = (int)a[0], addr = a[1];
                path_arg = 1;
                r = read_how(sup, &oc, a[2], a[3]);
                if (r < 0) {
                        call_fail(call, -r);
                        return 0;
                }
                break;
        default:
                call_fail(call, ENOSYS);
                return 0;
        }
        oc.flags &= OPEN_FLAGS;
        oc.mode &= 07777;
        n = tmem_read_string(oc.tid, addr, oc.path, sizeof(oc.path));
        r = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
        if (r == 0)
                r = fs_take_base(sup, call, oc.dirfd, oc.path, &oc.base);
        if (r < 0) {
                call_fail(call, -r);
                return 0;
        }
        trace_call_path(call, path_arg, oc.path);
        /* A copy-on-write file opened to change: what the host has there, for apply (cow.h),
         * taken before the open copies it up, so that a host change during the copy shows
         * as a conflict rather than as the baseline (an outside review lost one so). Not
         * for O_CREAT | O_EXCL, which changes nothing that exists. */
        if (sup->cow.n && !fs_cow_any(sup) &&
            ((oc.flags & O_ACCMODE) != O_RDONLY || (oc.flags & O_TRUNC)) &&
            (oc.flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL)) {
                int pre = fs_look_find(sup, oc.tid, oc.base, oc.path,
                                       (oc.flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0);

                if (pre >= 0) {
                        cow_note_fd(sup, pre);
                        /* A file of an owner or group the user namespace lacks: our copy
                         * first, which the open below then finds. */
                        (void)cow_own_copy(sup, pre, COW_OWN_WRITABLE);
                        close(pre);
                }
        }
        fd = do_open(sup, &oc, &st);
        fd = dns_view_open(sup, oc.path, oc.flags, fd, &st); /* resolv.conf: supervisor/dns.h */
        fd = fs_procnet_view(sup, oc.flags, fd, &st);        /* /proc/net without a namespace */
        fd = fs_mountinfo_view(sup, oc.flags, fd, &st);      /* HOST of --ro HOST:SANDBOX */
        if (oc.base >= 0)
                close(oc.base);
        /* A copy-on-write file opened to change: what the host has there, for apply. */
        if (fd >= 0 && ((oc.flags & O_ACCMODE) != O_RDONLY || (oc.flags & O_TRUNC)))
                cow_note_fd(sup, fd);
        if (fd < 0)
                call_fail(call, -fd);
        else {
                r = call_return_fd(sup, call, fd, oc.flags & O_CLOEXEC);
                if (r < 0)
                        call_fail(call, -r);
                close(fd);
        }
        return 0;
}

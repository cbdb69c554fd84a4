/*
 * The calls that look at a name without opening it — stat, lstat, newfstatat, statx, access,
 * faccessat, faccessat2, readlink, readlinkat — answered in the view, so that a hidden path,
 * a process outside the tree in /proc or a device outside /dev's list does not exist for
 * them either (ENOENT), however it is named. Landlock does not judge these calls at all
 * (measured: it has no right for stat, access or readlink), so the view is their only wall.
 *
 * As for open (fs_open.c): the path is copied ONCE, the base (dirfd or cwd) taken, ID_VALID
 * checked; the supervisor then finds the object itself, O_PATH, as the program (its fsuid,
 * no capabilities: search rights are the program's), and answers from that object: fstat or
 * statx of it, faccessat2 on it, readlinkat of it. The result is written into the caller's
 * buffer. Nothing is answered CONTINUE.
 *
 * Finding the object, the fast way: a path without a ".." component, resolved with
 * openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV), walks exactly the names it spells, on one
 * file system, so its sandbox path is the base's joined with it, lexically, and the view
 * judges that path (vfs_view_find: hidden entries and their subtrees, paths outside every
 * mount). Anything else — a symlink on the way, a "..", a crossing, a start on /proc or
 * /dev — is resolved in the view, component by component (vfs_resolve), as the slow open is.
 *
 * The fd forms (newfstatat and statx with AT_EMPTY_PATH and an empty path, which is how
 * glibc's fstat is made) answer from our copy of the caller's fd: what it holds is its own.
 *
 * Not covered: an O_PATH open stays in the kernel (ADDFD cannot install O_PATH files), and
 * fstat of such an fd tells what stat would; it gives no content (every reopen is judged).
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/notify.h"
#include "supervisor/places.h"
#include "supervisor/sockmaker.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/trace_decode.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/special.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

enum look_op { LK_STAT, LK_STATX, LK_ACCESS, LK_READLINK };

struct look_call {
        enum look_op op;
        pid_t tid;
        int dirfd;
        unsigned flags; /* AT_* of the call */
        bool follow;
        int base; /* our copy of the dirfd or cwd; AT_FDCWD for an absolute path */
        char path[PATH_MAX];
        /* what readlink of a /proc view name gives, when the view makes it up ("self") */
        char made_link[64];
        bool special; /* the walk went through /proc or /dev (find_special) */
};

/*
 * The directories a walk without symlinks enters, in order, taken lexically (with no symlink
 * on the way, ".." is the lexical parent): each must be one the view shows, since the walk
 * passing through a hidden one would tell that it exists ("~/.ssh/../x"). `start` is the
 * canonical sandbox path of the base ("/" for an absolute path). Writes the object's
 * canonical path to out. Returns false when the view must decide (the slow way).
 */
static bool walk_shown(const struct vfs_view *v, const char *start, const char *path, char *out,
                       size_t size)
{
        size_t len = strcmp(start, "/") == 0 ? 0 : strlen(start);
        const char *p = path;

        if (len >= size)
                return false;
        memcpy(out, start, len);
        out[len] = '\0';
        while (*p) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);

                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        char *slash = strrchr(out, '/');

                        len = slash ? (size_t)(slash - out) : 0;
                        out[len] = '\0';
                } else if (n && !(n == 1 && p[0] == '.')) {
                        if (len + 1 + n >= size)
                                return false;
                        out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                        out[len] = '\0';
                        if (vfs_view_hidden(v, out))
                                return false;
                }
                p = *end ? end + 1 : end;
        }
        if (!len)
                snprintf(out, size, "/");
        return true;
}

/* openat2 O_PATH as the program (its search rights). Returns the fd or -errno. */
static int find_as(struct supervisor *sup, const struct look_call *lc, int dirfd, const char *path,
                   bool follow, uint64_t resolve)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
                               .resolve = resolve};
        struct fs_as as;
        int fd, r;

        r = fs_as_enter(sup, lc->tid, false, &as);
        if (r < 0)
                return r;
        fd = sys_openat2(dirfd, path, &how);
        r = fd < 0 ? -errno : fd;
        fs_as_leave(&as);
        return r;
}

static bool has_dotdot(const char *path)
{
        for (const char *p = path; (p = strstr(p, "..")); p += 2)
                if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
                        return true;
        return false;
}

/* The object's mount: ENOENT outside every mount, -EXDEV where the view must answer. */
static int judge_mount(struct supervisor *sup, const char *path)
{
        const struct vfs_mount *m = vfs_view_mount_of(&sup->view, path);

        if (!m || m->mode == VFS_HIDDEN)
                return vfs_view_above_mount(&sup->view, path) ? -EXDEV : -ENOENT;
        return m->mode == VFS_DEV || m->mode == VFS_PROC ? -EXDEV : 0;
}

/*
 * What the lexical path leaves out: "d/g/.." is ENOTDIR natively when g is a file, ENOENT
 * when it is missing. Each directory a ".." leaves (the lexical path just before a run of
 * "..") must be one, reached as the program, without symlinks; anything else is the slow
 * way's to answer (it walks for real). walk_shown has judged every name on the way.
 */
static bool dotdot_parents_ok(struct supervisor *sup, const struct look_call *lc, const char *start)
{
        char lex[PATH_MAX];
        size_t len = strcmp(start, "/") == 0 ? 0 : strlen(start);
        bool named = false; /* the last component was a name, not yet checked */

        if (len >= sizeof(lex))
                return false;
        memcpy(lex, start, len);
        lex[len] = '\0';
        for (const char *p = lc->path; *p;) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);

                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (named) {
                                uint64_t resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
                                                   RESOLVE_NO_MAGICLINKS;
                                /* the base first: it adds RESOLVE_IN_ROOT (see below) */
                                int base = fs_abs_base(sup, &resolve);
                                int fd = find_as(sup, lc, base, len ? lex : "/", true, resolve);
                                struct stat st;
                                bool dir = fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);

                                if (fd >= 0)
                                        close(fd);
                                if (!dir)
                                        return false;
                                named = false;
                        }
                        char *slash = strrchr(lex, '/');
                        len = slash ? (size_t)(slash - lex) : 0;
                        lex[len] = '\0';
                } else if (n && !(n == 1 && p[0] == '.')) {
                        if (len + 1 + n >= sizeof(lex))
                                return false;
                        lex[len++] = '/';
                        memcpy(lex + len, p, n);
                        len += n;
                        lex[len] = '\0';
                        named = true;
                }
                p = *end ? end + 1 : end;
        }
        return true;
}

/*
 * The fast way of a path with "..": the base's path is taken first, the path made lexical
 * from it (walk_shown: every directory on the way one the view shows), and that absolute
 * path walked from the root, without symlinks, so that what is judged is what is walked. A
 * walk of "base/../.." by the kernel would follow the base's real parents at the time of the
 * walk: a thread renaming them between that walk and the reading of the base's path made
 * the lexical judgment name another place than the one reached (an outside review stat'ed
 * a hidden file so). Against a concurrent rename the answer is the tree's at the walk, seen
 * from where the base was a moment before: a valid order of the two calls.
 */
static int find_fast_dotdot(struct supervisor *sup, struct look_call *lc)
{
        uint64_t resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
        char start[PATH_MAX], path[PATH_MAX];
        const struct vfs_mount *m;
        int fd, base, r = 0;

        if (lc->path[0] == '/') {
                snprintf(start, sizeof(start), "/");
        } else {
                struct stat st;

                /* A dirfd that is no directory: ENOTDIR, the slow way's to say. */
                if (fstat(lc->base, &st) < 0 || !S_ISDIR(st.st_mode))
                        return -EXDEV;
                r = fs_base_path(sup, lc->base, start, sizeof(start));
                if (r < 0)
                        return -EXDEV;
                /* The base itself, with its ancestors: a cwd that chdir (the kernel's) took
                 * into a hidden directory. */
                m = vfs_view_find(&sup->view, start);
                if (!m || m->mode == VFS_HIDDEN)
                        return -EXDEV;
        }
        if (!walk_shown(&sup->view, start, lc->path, path, sizeof(path)) ||
            !dotdot_parents_ok(sup, lc, start))
                return -EXDEV;
        /* The base first, in a statement of its own: it adds RESOLVE_IN_ROOT to `resolve`,
         * and the order in which a call's arguments are evaluated is unspecified (gcc took
         * `resolve` first: the lexical path was walked from our root, the host's, and a
         * `../name` from the private /tmp found the host's /tmp/name). */
        base = fs_abs_base(sup, &resolve);
        fd = find_as(sup, lc, base, path, lc->follow, resolve);
        if (fd == -ELOOP || fd == -EACCES || fd == -ENOTDIR || fd == -EXDEV)
                return -EXDEV;
        if (fd < 0)
                return fd; /* ENOENT, ENAMETOOLONG...: the kernel's answer, on shown ground */
        r = judge_mount(sup, path);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/*
 * The fast way. Returns the O_PATH fd, -EXDEV when only the view can decide, or the
 * kernel's -errno for this walk (ENOENT, ENOTDIR, EACCES of a search right, ...).
 */
static int find_fast(struct supervisor *sup, struct look_call *lc)
{
        char start[PATH_MAX], path[PATH_MAX];
        const struct vfs_mount *m;
        int fd, r = 0;

        if (fs_starts_special(sup, lc->path, lc->base) || !fs_cow_fast_ok(sup, lc->path))
                return -EXDEV;
        if (has_dotdot(lc->path))
                return find_fast_dotdot(sup, lc);
        {
                uint64_t resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
                int base = lc->base == AT_FDCWD ? fs_abs_base(sup, &resolve) : lc->base;

                fd = find_as(sup, lc, base, lc->path, lc->follow, resolve);
        }
        /* A symlink on the way: the view follows it. ENOENT, EACCES and ENOTDIR: the view
         * may have hidden what the walk stumbled on (ENOTDIR would say ~/.ssh/id_rsa exists,
         * ENOENT that ~/.ssh/x does not while ~/.ssh/.. leads on) — unless every directory
         * the walk entered is one the view shows. */
        if (fd == -ELOOP)
                return -EXDEV;
        if (lc->path[0] == '/')
                snprintf(start, sizeof(start), "/");
        else
                r = fs_base_path(sup, lc->base, start, sizeof(start));
        /* The base itself, with its ancestors: a cwd that chdir (the kernel's) took into a
         * hidden directory. */
        if (r == 0 && lc->path[0] != '/') {
                m = vfs_view_find(&sup->view, start);
                if (!m || m->mode == VFS_HIDDEN)
                        r = -EXDEV;
        }
        if (r == 0 && !walk_shown(&sup->view, start, lc->path, path, sizeof(path)))
                r = -EXDEV;
        if (fd < 0) {
                if (r < 0 || fd == -EACCES || fd == -ENOTDIR)
                        return -EXDEV;
                return fd; /* ENOENT, ENAMETOOLONG...: the kernel's answer, on shown ground */
        }
        if (r == 0) /* walk_shown checked every directory on the way, and the base's
                     * ancestors were checked above: what is left is which mount the object
                     * is on. */
                r = judge_mount(sup, path);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* A name of the /proc or /dev view: the host object it shows, O_PATH. */
static int find_special(struct supervisor *sup, struct look_call *lc, const struct vfs_result *res)
{
        lc->special = true;
        struct vfs_special_ctx ctx;
        struct vfs_special sp;
        uint64_t resolve;
        int r = fs_special_ctx(sup, lc->tid, &ctx), fd, base;

        if (r < 0)
                return r;
        if (res->mount->mode == VFS_PROC) {
                /* "self" and "thread-self" are symlinks to the caller's numbers. */
                if (strcmp(res->rest, "self") == 0)
                        snprintf(lc->made_link, sizeof(lc->made_link), "%d", (int)ctx.tgid);
                else if (strcmp(res->rest, "thread-self") == 0)
                        snprintf(lc->made_link, sizeof(lc->made_link), "%d/task/%d", (int)ctx.tgid,
                                 (int)ctx.tid);
                /* lstat of the link itself: the one procfs inode every process sees there
                 * (ours is the same object, whoever opens it). */
                if (lc->made_link[0] && !lc->follow) {
                        fd = open(strcmp(res->rest, "self") == 0 ? "/proc/self"
                                                                 : "/proc/thread-self",
                                  O_PATH | O_NOFOLLOW | O_CLOEXEC);
                        return fd < 0 ? -errno : fd;
                }
                r = vfs_proc_map(res->rest, &ctx, &sp);
        } else {
                r = vfs_dev_map(res->rest, &ctx, &sp);
        }
        if (r < 0)
                return r;
        /* The host path is the view's own making: /proc/<the caller's number>/..., a /dev
         * name of the list, the sandbox's /dev/shm. A magic link is followed only as the last
         * component, where it leads to an object the caller holds (fstat of it would tell
         * the same); beneath one (/proc/self/root/..., /proc/self/fd/N/name) the walk would
         * leave the view (a second review stat'ed hidden files so): ELOOP, as for open. */
        if (fs_sysnet(sup, sp.host))
                return sockmaker_open_sysnet(&sup->netns, sp.host, O_PATH);
        if (sp.kind == VFS_SP_SHM) {
                /* Beneath the private /dev/shm as the sandbox sees it (fs_shm_root). */
                size_t n = strlen(sup->shm_dir);
                const char *rel = sp.host + n + (sp.host[n] == '/');
                int root = fs_shm_root(sup);

                if (root < 0)
                        return root;
                fd = find_as(sup, lc, root, *rel ? rel : ".", lc->follow,
                             RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
                close(root);
                return fd == -EXDEV ? -EACCES : fd;
        }
        /* In the sandbox's mount namespace, as fs_open.c's open_proc. */
        resolve = RESOLVE_NO_MAGICLINKS;
        base = fs_abs_base(sup, &resolve);
        fd = find_as(sup, lc, base, sp.host, lc->follow, resolve);
        if (fd == -ELOOP && sp.process && fs_magic_last(sp.host)) {
                char parent[PATH_MAX], *slash;
                int dfd;

                snprintf(parent, sizeof(parent), "%s", sp.host);
                slash = strrchr(parent, '/');
                *slash = '\0';
                dfd = find_as(sup, lc, base, parent, true, resolve);
                if (dfd < 0)
                        return dfd;
                fd = find_as(sup, lc, dfd, slash + 1, lc->follow, 0);
                close(dfd);
        }
        return fd;
}

/* The slow way: resolution in the view. */
static int find_slow(struct supervisor *sup, struct look_call *lc)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        char start[PATH_MAX];
        struct fs_as as;
        int r = fs_base_path(sup, lc->base, start, sizeof(start));

        if (r < 0)
                return r;
        r = fs_as_enter(sup, lc->tid, false, &as);
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, start, lc->path, lc->follow ? VFS_FOLLOW : 0, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r;
        switch (res.kind) {
        case VFS_HOST:
                r = res.fd;
                res.fd = -1;
                return r;
        case VFS_SPECIAL:
                return find_special(sup, lc, &res);
        case VFS_SYNTHETIC:
                /* A directory the view makes up above a mount point: show the host root's. */
                r = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                return r < 0 ? -errno : r;
        case VFS_ABSENT:
                break;
        }
        return -ENOENT;
}

static int look_find(struct supervisor *sup, struct look_call *lc)
{
        int fd;

        if (lc->path[0] == '\0') {
                if (!(lc->flags & AT_EMPTY_PATH))
                        return -ENOENT;
                /* The caller's own fd (or cwd): what it holds is its own to look at. */
                fd = lc->base >= 0 ? fcntl(lc->base, F_DUPFD_CLOEXEC, 0) : -1;
                return fd < 0 ? -EBADF : fd;
        }
        fd = find_fast(sup, lc);
        /* A merged copy-on-write mount: what its lower has may be hidden or replaced. */
        if (fd >= 0 && fs_cow_found(sup, fd)) {
                close(fd);
                fd = -EXDEV;
        }
        if (fd == -EXDEV)
                fd = find_slow(sup, lc);
        return fd;
}

int fs_look_find(struct supervisor *sup, pid_t tid, int base, const char *path, unsigned at_flags)
{
        struct look_call lc = {.tid = tid, .base = base, .flags = at_flags};

        if (snprintf(lc.path, sizeof(lc.path), "%s", path) >= (int)sizeof(lc.path))
                return -ENAMETOOLONG;
        lc.follow = !(at_flags & AT_SYMLINK_NOFOLLOW);
        return look_find(sup, &lc);
}

/* ---- the answers ------------------------------------------------------------------------ */

/* The stat family's answers show a link's identity where a copy-on-write mount changed it
 * (vfs/linkid.h). */
static long answer_stat(struct supervisor *sup, int fd, uint64_t buf, pid_t tid)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        fs_link_shown(sup, fd, st.st_mode, &st.st_dev, &st.st_ino);
        return tmem_write(tid, buf, &st, sizeof(st)) < 0 ? -EFAULT : 0;
}

static long answer_statx(struct supervisor *sup, int fd, unsigned flags, unsigned mask,
                         uint64_t buf, pid_t tid)
{
        struct statx stx;
        dev_t dev;
        ino_t ino;

        if (statx(fd, "", AT_EMPTY_PATH | (int)(flags & AT_STATX_SYNC_TYPE), mask, &stx) < 0)
                return -errno;
        dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), ino = stx.stx_ino;
        fs_link_shown(sup, fd, stx.stx_mode, &dev, &ino);
        stx.stx_dev_major = major(dev), stx.stx_dev_minor = minor(dev), stx.stx_ino = ino;
        return tmem_write(tid, buf, &stx, sizeof(stx)) < 0 ? -EFAULT : 0;
}

/*
 * access as the program: its fs ids, no capabilities, AT_EACCESS (the ids the program's
 * real ones are: no setuid program runs in the sandbox). W_OK beneath no writable place is
 * EROFS, as on the read-only mount the view shows (devices and ptys answer for themselves).
 */
bool fs_writable_place(const struct supervisor *sup, int fd)
{
        struct stat st;

        if (places_contain(&sup->places, fd) == 1)
                return true;
        if (fstat(fd, &st) < 0)
                return false;
        for (size_t i = 0; i < sup->places.n; i++) /* the place itself: /tmp */
                if (sup->places.v[i].kind == PLACE_TREE && sup->places.v[i].dev == st.st_dev &&
                    sup->places.v[i].ino == st.st_ino)
                        return true;
        return false;
}

static long answer_access(struct supervisor *sup, struct look_call *lc, int fd, int mode)
{
        struct fs_as as;
        struct stat st;
        long r;

        if (mode & ~(R_OK | W_OK | X_OK))
                return -EINVAL;
        /* The kernel says EROFS before it looks at the mode bits. A merged copy-on-write
         * mount is writable (its changes go to the upper), neither layer a place: the mode
         * bits of the object that wins, as the copy-up keeps them, decide (`test -w`, pip's
         * check of a venv's site-packages). */
        if ((mode & W_OK) && fstat(fd, &st) == 0 &&
            (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) &&
            !fs_writable_place(sup, fd) && !fs_cow_in_merged(sup, fd))
                return -EROFS;
        r = fs_as_enter(sup, lc->tid, false, &as);
        if (r < 0)
                return r;
        r = faccessat(fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0 ? -errno : 0;
        fs_as_leave(&as);
        return r;
}

static long answer_readlink(struct supervisor *sup, struct look_call *lc, int fd, uint64_t buf,
                            long size)
{
        char target[PATH_MAX];
        ssize_t n;

        if (size <= 0)
                return -EINVAL;
        if (lc->made_link[0]) {
                snprintf(target, sizeof(target), "%s", lc->made_link);
        } else {
                n = readlinkat(fd, "", target, sizeof(target) - 1);
                /* Ours is always "" on the object: for a name given, not a link is EINVAL. */
                if (n < 0)
                        return errno == ENOENT && lc->path[0] ? -EINVAL : -errno;
                target[n] = '\0';
                /* A /proc link names a host path: the sandbox's /dev/shm is the one place
                 * where that is not the sandbox path. */
                fs_sandbox_path(sup, target, sizeof(target));
        }
        n = (ssize_t)strlen(target);
        if (n > size)
                n = size;
        return tmem_write(lc->tid, buf, target, (size_t)n) < 0 ? -EFAULT : n;
}

/*
 * The last object a stat found where a mount is merged, for the xattr getters that follow it
 * (`ls -l`: statx, then lgetxattr and getxattr of the same name; the getters are notified only
 * there), so that they do not walk again. Kept only when the stat's handler ran alone (every
 * notification received before it had been handled, none after it received until it was done:
 * no name of the view changed while it walked, the sandbox changing names only through
 * notifications), and reused only by the caller's very next notification, itself alone, for the
 * same path from the same base, within MEMO_NS of the walk (a host process's change is seen
 * that much later at most). Not for a walk through /proc or /dev, whose magic links follow
 * the caller's fd table and cwd, which change without a notification, nor through "..".
 */
#define MEMO_NS 10000000ull /* 10 ms */

static struct {
        pthread_mutex_t lock;
        uint64_t seq;  /* of the call that found it, or of the last that reused it */
        uint64_t born; /* CLOCK_MONOTONIC ns at the walk's start */
        pid_t tid;
        bool follow, link;
        dev_t dev; /* the base's identity (base_id); 0 for an absolute path */
        ino_t ino;
        uint64_t mnt;
        char path[PATH_MAX];
        int fd; /* O_PATH of the object; -1: nothing kept */
} memo = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* The number of the last xattr getter seen: a stat keeps its object only while getters come
 * (`ls -l`), so that `find` and `git status`, which make none, pay nothing for the memo. */
static _Atomic uint64_t last_getter;
#define MEMO_GETTERS_NEAR 64

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether notification `seq` is the only one in hand: all before it handled, none after it
 * received. */
static bool handled_alone(struct supervisor *sup, uint64_t seq)
{
        return atomic_load(&sup->n.handled) == seq - 1 && atomic_load(&sup->n.notifications) == seq;
}

/* Whether the walk of `path` from `base` may find another object for the same key without a
 * notification: from a base on /proc or /dev, or through ".." (the parent of a mount's root
 * is not told by the base's identity). A walk that
 * went through /proc or /dev on the way (a symlink to /proc/self/fd/N, whose target dup2 and
 * chdir change) is told by find_special (look_call.special). */
static bool memo_unsafe(const struct supervisor *sup, int base, const char *path)
{
        struct stat st;

        if (strstr(path, ".."))
                return true;
        return base >= 0 && (fstat(base, &st) < 0 || st.st_dev == sup->proc_dev ||
                             st.st_dev == sup->dev_dev || st.st_dev == sup->devpts_dev);
}

/* The base's identity: its inode and the mount it is reached through (a directory bound at
 * two places may hold different mounts beneath each). */
static bool base_id(int base, dev_t *dev, ino_t *ino, uint64_t *mnt)
{
        struct statx stx;

        if (base < 0) {
                *dev = 0, *ino = 0, *mnt = 0;
                return true;
        }
        if (statx(base, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx) < 0 ||
            !(stx.stx_mask & STATX_MNT_ID))
                return false;
        *dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), *ino = stx.stx_ino;
        *mnt = stx.stx_mnt_id;
        return true;
}

static void memo_put(uint64_t seq, uint64_t born, const struct look_call *lc, int fd)
{
        struct stat st;
        uint64_t mnt;
        dev_t dev;
        ino_t ino;
        int keep;

        if (!lc->path[0] || !base_id(lc->base, &dev, &ino, &mnt) || fstat(fd, &st) < 0 ||
            (keep = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
                return;
        pthread_mutex_lock(&memo.lock);
        if (memo.fd >= 0)
                close(memo.fd);
        memo.seq = seq, memo.born = born, memo.tid = lc->tid, memo.follow = lc->follow;
        memo.link = S_ISLNK(st.st_mode), memo.dev = dev, memo.ino = ino, memo.mnt = mnt;
        memo.fd = keep;
        snprintf(memo.path, sizeof(memo.path), "%s", lc->path);
        pthread_mutex_unlock(&memo.lock);
}

void fs_look_memo_forget(void)
{
        pthread_mutex_lock(&memo.lock);
        if (memo.fd >= 0)
                close(memo.fd);
        memo.fd = -1;
        pthread_mutex_unlock(&memo.lock);
}

int fs_look_memo(struct supervisor *sup, uint64_t seq, pid_t tid, int base, const char *path,
                 bool follow)
{
        uint64_t mnt;
        dev_t dev;
        ino_t ino;
        int fd = -1;

        atomic_store(&last_getter, seq);
        if (!path[0] || !base_id(base, &dev, &ino, &mnt))
                return -1;
        pthread_mutex_lock(&memo.lock);
        /* A follow finds what a nofollow found when that was no symlink (lstat, then
         * getxattr); a nofollow after a follow may not (lgetxattr of a link after stat). */
        if (memo.fd >= 0 && memo.seq + 1 == seq && memo.tid == tid && memo.dev == dev &&
            memo.ino == ino && memo.mnt == mnt &&
            (memo.follow == follow || (!memo.follow && !memo.link)) &&
            strcmp(memo.path, path) == 0 && now_ns() - memo.born < MEMO_NS &&
            handled_alone(sup, seq)) {
                fd = fcntl(memo.fd, F_DUPFD_CLOEXEC, 3);
                memo.seq = seq;
        }
        pthread_mutex_unlock(&memo.lock);
        return fd;
}

/* stat, lstat, newfstatat, statx, access, faccessat, faccessat2, readlink, readlinkat */
int fs_look(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct look_call lc = {.tid = (pid_t)call->req->pid, .dirfd = AT_FDCWD, .base = -1};
        unsigned path_arg = 0;
        uint64_t addr, born;
        bool keep;
        long r;
        ssize_t n;
        int fd;

        switch ((int)(call->row - syscall_table)) {
        case SC_stat:
        case SC_lstat:
                lc.op = LK_STAT, addr = a[0];
                lc.flags = call->row - syscall_table == SC_lstat ? AT_SYMLINK_NOFOLLOW : 0;
                break;
        case SC_newfstatat:
                lc.op = LK_STAT, lc.dirfd = (int)a[0], addr = a[1], lc.flags = (unsigned)a[3];
                path_arg = 1;
                if (lc.flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)) {
                        call_fail(call, EINVAL);
                        return 0;
                }
                break;
        case SC_statx:
                lc.op = LK_STATX, lc.dirfd = (int)a[0], addr = a[1], lc.flags = (unsigned)a[2];
                path_arg = 1;
                if (lc.flags &
                    ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)) {
                        call_fail(call, EINVAL);
                        return 0;
                }
                break;
        case SC_access:
                lc.op = LK_ACCESS, addr = a[0];
                break;
        case SC_faccessat:
                lc.op = LK_ACCESS, lc.dirfd = (int)a[0], addr = a[1];
                path_arg = 1;
                break;
        case SC_faccessat2:
                lc.op = LK_ACCESS, lc.dirfd = (int)a[0], addr = a[1], lc.flags = (unsigned)a[3];
                path_arg = 1;
                if (lc.flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_EACCESS)) {
                        call_fail(call, EINVAL);
                        return 0;
                }
                break;
        case SC_readlink:
                lc.op = LK_READLINK, addr = a[0], lc.flags = AT_SYMLINK_NOFOLLOW;
                break;
        case SC_readlinkat:
                lc.op = LK_READLINK, lc.dirfd = (int)a[0], addr = a[1];
                lc.flags = AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH; /* "" names the dirfd's link */
                path_arg = 1;
                break;
        default:
                call_fail(call, ENOSYS);
                return 0;
        }
        lc.follow = !(lc.flags & AT_SYMLINK_NOFOLLOW);
        n = tmem_read_string(lc.tid, addr, lc.path, sizeof(lc.path));
        /* statx and newfstatat take a NULL path with AT_EMPTY_PATH (6.11) as "". */
        if (n == -EFAULT && addr == 0 && (lc.flags & AT_EMPTY_PATH) &&
            (lc.op == LK_STAT || lc.op == LK_STATX))
                n = 0, lc.path[0] = '\0';
        r = n < 0 ? (long)n : 0;
        if (r == 0)
                r = fs_take_base(sup, call, lc.dirfd, lc.path, &lc.base);
        if (r < 0) {
                call_fail(call, (int)-r);
                return 0;
        }
        trace_call_path(call, path_arg, lc.path);
        keep = sup->cow_merged && (lc.op == LK_STAT || lc.op == LK_STATX) &&
               call->seq - atomic_load(&last_getter) < MEMO_GETTERS_NEAR &&
               handled_alone(sup, call->seq) && !memo_unsafe(sup, lc.base, lc.path);
        born = keep ? now_ns() : 0;
        fd = look_find(sup, &lc);
        if (fd >= 0 && keep && !lc.special && handled_alone(sup, call->seq))
                memo_put(call->seq, born, &lc, fd);
        if (fd < 0) {
                r = fd;
        } else {
                switch (lc.op) {
                case LK_STAT:
                        r = answer_stat(sup, fd, path_arg ? a[2] : a[1], lc.tid);
                        break;
                case LK_STATX:
                        r = answer_statx(sup, fd, lc.flags, (unsigned)a[3], a[4], lc.tid);
                        break;
                case LK_ACCESS:
                        r = answer_access(sup, &lc, fd, (int)(path_arg ? a[2] : a[1]));
                        break;
                case LK_READLINK:
                        r = answer_readlink(sup, &lc, fd, path_arg ? a[2] : a[1],
                                            (long)(int)(path_arg ? a[3] : a[2]));
                        break;
                }
                close(fd);
        }
        if (lc.base >= 0)
                close(lc.base);
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
        return 0;
}

/*
 * The metadata calls: chmod, chown, utimes and the xattr setters, in their path, *at and fd
 * forms. Landlock does not cover them (measured on 6.18: all four succeed on a file Landlock
 * makes read-only), and a capability-less uid 0 may still chmod what it owns: `chmod u+s
 * /bin/bash` would hand every host user root. So they are allowed only strictly beneath a
 * writable place (cwd, /tmp, /var/tmp: supervisor/places.h), and refused elsewhere with
 * EPERM, the errno of "not the owner / not allowed" that programs already handle.
 *
 * Each call is emulated, never continued (DESIGN.md): its path, name, value and times are
 * copied ONCE from the caller's memory, ID_VALID is checked after the copies and after the
 * caller's fds were taken, the target is opened O_PATH from the copy, judged by the fd, and
 * the operation runs on that fd, with the program's rights (supervisor/creds.h).
 *
 * Concurrency: handlers may run on several notifier threads at once, without sup->lock.
 * Everything here lives on the stack; the only shared state (sup->places, sup->cfg) is
 * read-only after the spawn.
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/creds.h"
#include "supervisor/notify.h"
#include "supervisor/places.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/trace_decode.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/xattr.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

enum meta_op {
        META_CHMOD,
        META_CHOWN,
        META_UTIMES,
        META_SETXATTR,
        META_REMOVEXATTR,
        META_TRUNCATE
};
enum times_kind { TIMES_UTIMBUF, TIMES_TIMEVAL, TIMES_TIMESPEC };

/* One decoded call and the copies made of its memory. */
struct meta_call {
        enum meta_op op;
        int fd;          /* the caller's dirfd (AT_FDCWD) or, in an fd form, the fd */
        bool fd_form;    /* act on `fd` itself: fchmod, fchown, f*xattr, futimens */
        bool magic;      /* a path /proc/self/fd/N: the fd N, acted on as a path */
        uint64_t path;   /* address of the path; 0 = NULL */
        bool nofollow;   /* lchown, l*xattr, AT_SYMLINK_NOFOLLOW */
        bool empty_path; /* AT_EMPTY_PATH */
        mode_t mode;
        off_t length; /* truncate */
        uid_t uid;
        gid_t gid;
        uint64_t times; /* address of the times; 0 = now */
        enum times_kind times_kind;
        uint64_t name, value;
        size_t size;
        int xflags;
        /* the copies */
        char path_buf[PATH_MAX];
        char name_buf[XATTR_NAME_MAX + 1];
        struct timespec ts[2];
        void *value_buf;
};

static enum syscall_id id_of(const struct call *call)
{
        return (enum syscall_id)(call->row - syscall_table);
}

static int check_at_flags(struct meta_call *m, uint64_t flags, uint64_t allowed)
{
        if (flags & ~allowed)
                return -EINVAL;
        m->nofollow = flags & AT_SYMLINK_NOFOLLOW;
        m->empty_path = flags & AT_EMPTY_PATH;
        return 0;
}

/* ---- copying the caller's memory ------------------------------------------------------ */

static int copy_times(pid_t tid, struct meta_call *m)
{
        if (m->times_kind == TIMES_TIMESPEC)
                return tmem_read(tid, m->times, m->ts, sizeof(m->ts));
        if (m->times_kind == TIMES_UTIMBUF) {
                struct utimbuf {
                        long actime, modtime;
                } u;
                int r = tmem_read(tid, m->times, &u, sizeof(u));
                if (r < 0)
                        return r;
                m->ts[0] = (struct timespec){.tv_sec = u.actime};
                m->ts[1] = (struct timespec){.tv_sec = u.modtime};
                return 0;
        }
        struct timeval tv[2];
        int r = tmem_read(tid, m->times, tv, sizeof(tv));
        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                        return -EINVAL;
                m->ts[i] =
                        (struct timespec){.tv_sec = tv[i].tv_sec, .tv_nsec = tv[i].tv_usec * 1000};
        }
        return 0;
}

/* Every argument in memory, once. The caller checks ID_VALID afterwards. */
static int copy_args(pid_t tid, struct meta_call *m)
{
        ssize_t n;
        int r;

        if (!m->fd_form) {
                if (!m->path)
                        return -EFAULT;
                n = tmem_read_string(tid, m->path, m->path_buf, sizeof(m->path_buf));
                if (n < 0)
                        return (int)n;
                if (n == 0 && !m->empty_path)
                        return -ENOENT;
        }
        if (m->op == META_UTIMES && m->times && (r = copy_times(tid, m)) < 0)
                return r;
        if (m->op == META_SETXATTR || m->op == META_REMOVEXATTR) {
                n = tmem_read_string(tid, m->name, m->name_buf, sizeof(m->name_buf));
                if (n < 0)
                        return n == -ENAMETOOLONG ? -ERANGE : (int)n;
                if (n == 0)
                        return -ERANGE;
        }
        if (m->op == META_SETXATTR && m->size) {
                if (m->size > XATTR_SIZE_MAX)
                        return -E2BIG;
                m->value_buf = malloc(m->size);
                if (!m->value_buf)
                        return -ENOMEM;
                if ((r = tmem_read(tid, m->value, m->value_buf, m->size)) < 0)
                        return r;
        }
        return 0;
}

/* ---- the caller's fds and cwd --------------------------------------------------------- */

/* The directory a relative path starts from: the caller's dirfd, or its cwd. */
static int take_base(pid_t tid, const struct meta_call *m)
{
        if (m->fd != AT_FDCWD)
                return tfd_take(tid, m->fd);
        if (m->path_buf[0] == '/')
                return AT_FDCWD; /* our root is the sandbox's: it cannot chroot */
        return tfd_cwd(tid);
}

/* "/proc/self/fd/N" names the CALLER's fd N, which a resolution in the supervisor would take
 * for its own: glibc uses it (fchmodat with AT_SYMLINK_NOFOLLOW before fchmodat2). Treat it
 * as the fd form; every other magic link is refused by RESOLVE_NO_MAGICLINKS. */
static void magic_fd_path(struct meta_call *m)
{
        static const char *const prefixes[] = {"/proc/self/fd/", "/proc/thread-self/fd/",
                                               "/dev/fd/"};
        for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
                size_t n = strlen(prefixes[i]);
                char *end;
                long fd;

                if (strncmp(m->path_buf, prefixes[i], n) != 0 || !m->path_buf[n])
                        continue;
                fd = strtol(m->path_buf + n, &end, 10);
                if (*end || fd < 0 || fd > INT_MAX || m->path_buf[n] == '-')
                        continue;
                m->fd = (int)fd;
                m->fd_form = m->magic = true;
                return;
        }
}

/* ---- the operation -------------------------------------------------------------------- */

/* truncate(2) of our O_PATH fd: a write open through /proc (the permission check the
 * kernel's truncate makes), then ftruncate. Not a FIFO's open, which could wait. */
static int truncate_at(int fd, const char *proc, off_t length)
{
        struct stat st;
        int w, r;

        if (fstat(fd, &st) < 0)
                return -1;
        if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
                errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
                return -1;
        }
        w = open(proc, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (w < 0)
                return -1;
        r = ftruncate(w, length);
        if (r < 0) {
                int e = errno;

                close(w);
                errno = e;
                return -1;
        }
        close(w);
        return 0;
}

/* Runs with the program's rights. `fd` is the copy of the caller's fd (fd forms) or our O_PATH
 * fd of the target. Returns 0 or -errno. */
static long perform(const struct meta_call *m, int fd)
{
        const struct timespec *ts = m->times ? m->ts : NULL;
        char proc[32];
        long r;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        switch (m->op) {
        case META_CHMOD:
                if (m->fd_form)
                        return fchmod(fd, m->mode);
                r = syscall(SYS_fchmodat2, fd, "", m->mode, AT_EMPTY_PATH);
                if (r < 0 && errno == ENOSYS) /* before 6.6; never a symlink here */
                        r = chmod(proc, m->mode);
                return r;
        case META_CHOWN:
                if (m->fd_form)
                        return fchown(fd, m->uid, m->gid);
                return fchownat(fd, "", m->uid, m->gid, AT_EMPTY_PATH);
        case META_UTIMES:
                if (m->fd_form)
                        return syscall(SYS_utimensat, fd, NULL, ts, 0); /* futimens */
                r = utimensat(fd, "", ts, AT_EMPTY_PATH);
                if (r < 0 && errno == EINVAL) /* AT_EMPTY_PATH is 5.8+ */
                        r = utimensat(AT_FDCWD, proc, ts, 0);
                return r;
        case META_SETXATTR:
                if (m->fd_form)
                        return fsetxattr(fd, m->name_buf, m->value_buf, m->size, m->xflags);
                return setxattr(proc, m->name_buf, m->value_buf, m->size, m->xflags);
        case META_REMOVEXATTR:
                if (m->fd_form)
                        return fremovexattr(fd, m->name_buf);
                return removexattr(proc, m->name_buf);
        case META_TRUNCATE:
                return truncate_at(fd, proc, m->length);
        }
        errno = ENOSYS;
        return -1;
}

static bool is_directory(int fd)
{
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_symlink(int fd)
{
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISLNK(st.st_mode);
}

/* Open what the call acts on, found in the view with the program's rights (fs_look.c): a
 * hidden path does not exist, /tmp is the sandbox's own. */
static int open_target(struct supervisor *sup, pid_t tid, struct meta_call *m, int base)
{
        int fd;

        if (!m->path_buf[0]) { /* AT_EMPTY_PATH: the dirfd (or cwd) itself */
                fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
                return fd < 0 ? -errno : fd;
        }
        return fs_look_find(sup, tid, base, m->path_buf, m->nofollow ? AT_SYMLINK_NOFOLLOW : 0);
}

/* What the change needs of the file natively (cow_own_copy): chmod and explicit times are
 * the owner's; the rest (and times set to now) need write permission. */
static enum cow_own_need own_need(const struct meta_call *m)
{
        bool now = !m->times || (m->ts[0].tv_nsec == UTIME_NOW && m->ts[1].tv_nsec == UTIME_NOW);

        if (m->op == META_CHMOD || (m->op == META_UTIMES && !now))
                return COW_OWN_OWNER;
        return COW_OWN_WRITABLE;
}

static void meta_run(struct supervisor *sup, struct call *call, struct meta_call *m)
{
        pid_t tid = (pid_t)call->req->pid;
        _cleanup_close_ int base = -1, target = -1;
        const struct vfs_mount *cm = NULL;
        struct creds_saved saved;
        char cpath[PATH_MAX];
        long r;

        r = copy_args(tid, m);
        if (r == 0 && !m->fd_form && m->path && trace_mem_arg(call->req->data.nr, 0) >= 0)
                /* the path as this handler copied it once and decides on */
                trace_call_path(call, (unsigned)trace_mem_arg(call->req->data.nr, 0), m->path_buf);
        if (r == 0 && !m->fd_form)
                magic_fd_path(m);
        if (r == 0) {
                r = m->fd_form ? tfd_take(tid, m->fd) : take_base(tid, m);
                if (m->fd_form)
                        target = (int)r;
                else
                        base = (int)r;
                if (r == AT_FDCWD)
                        r = 0; /* an absolute path: no base to take */
        }
        /* The copies and the fds are the caller's only if it still waits for this answer. */
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0 && !m->fd_form) {
                r = open_target(sup, tid, m, base);
                target = (int)r;
        }
        if (r < 0) {
                call_fail(call, (int)-r);
                goto out;
        }
        /* On a merged copy-on-write mount: the upper's copy changes (a path to the lower's
         * object is copied up first); an fd the program holds of the lower's object stays
         * read-only, as elsewhere outside the writable places. */
        r = fs_cow_any(sup) ? fs_cow_where(sup, target, &cm, cpath) : 0;
        /* By an fd of the lower's object (opened for reading before any copy): the change
         * goes to the copy, as overlayfs copies up beneath an open file; the program's fd
         * still reads the lower's bytes, which the change did not touch. */
        if (r == 1 && m->fd_form && m->op != META_TRUNCATE)
                m->fd_form = false;
        if (r == 1 && !m->fd_form) {
                r = fs_cow_up(sup, tid, cm, cpath,
                              m->op == META_CHOWN ? COW_OWN_OWNER : own_need(m));
                if (r < 0) {
                        call_fail(call, (int)-r);
                        goto out;
                }
                close(target);
                target = (int)r;
                r = 2;
        }
        if (r == 2 && (m->op == META_SETXATTR || m->op == META_REMOVEXATTR) &&
            fs_cow_own_xattr(m->name_buf)) {
                call_fail(call, EPERM); /* overlayfs's own (fs_cow.h) */
                goto out;
        }
        r = r == 2 ? 1 : places_contain(&sup->places, target);
        if (r <= 0) {
                /* Outside (or not judgeable): the same answer; for truncate, Landlock's. */
                trace_call_rule(call, "outside the writable places");
                call_deny(sup, call, m->op == META_TRUNCATE ? EACCES : EPERM);
                goto out;
        }
        if (m->op == META_CHMOD && (m->mode & (S_ISUID | S_ISGID)) && !is_directory(target)) {
                /* A set-ID file in the workspace or /tmp would run as its owner for every
                 * host user who executes it. A set-group-ID directory is harmless. */
                trace_call_rule(call, "no set-user-ID or set-group-ID files");
                call_deny(sup, call, EPERM);
                goto out;
        }
        if (m->magic)
                m->fd_form = false; /* a path to the fd: fine on O_PATH fds too */
        if ((m->op == META_SETXATTR || m->op == META_REMOVEXATTR) && !m->fd_form &&
            is_symlink(target)) {
                /* Only trusted.* and security.* live on symlinks, and those need
                 * capabilities the program does not have. */
                call_fail(call, EPERM);
                goto out;
        }
        /* What the host has there, for apply (cow.h): before the change copies it up. A
         * file of an owner or group the user namespace lacks is copied by us first (the
         * kernel cannot); by path it is then looked up again. By fd the program holds the
         * old one, which stays EOVERFLOW. */
        cow_note_fd(sup, target);
        if (!m->fd_form && m->op != META_CHOWN && cow_own_copy(sup, target, own_need(m)) > 0) {
                close(target);
                target = open_target(sup, tid, m, base);
                if (target < 0) {
                        call_fail(call, -target);
                        goto out;
                }
        }
        if (sup->cow.n && (m->op == META_CHOWN || own_need(m) == COW_OWN_OWNER) &&
            cow_own_denies(target)) {
                trace_call_rule(call, "a copy of a file another user owns");
                call_fail(call, EPERM);
                goto out;
        }
        r = creds_enter(sup->cfg, &saved);
        if (r == 0) {
                r = perform(m, target) < 0 ? -errno : 0;
                creds_leave(&saved);
        }
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, 0);
out:
        free(m->value_buf);
}

/* ---- the handlers: decode the registers, then meta_run ------------------------------- */

/* chmod, fchmod, fchmodat, fchmodat2 */
int fs_meta_chmod(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_CHMOD, .fd = AT_FDCWD};
        int r = 0;

        switch ((int)id_of(call)) {
        case SC_chmod:
                m.path = a[0], m.mode = (mode_t)a[1];
                break;
        case SC_fchmod:
                m.fd = (int)a[0], m.fd_form = true, m.mode = (mode_t)a[1];
                break;
        case SC_fchmodat2:
                r = check_at_flags(&m, a[3], AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
                /* fall through */
        case SC_fchmodat:
                m.fd = (int)a[0], m.path = a[1], m.mode = (mode_t)a[2];
                break;
        default:
                r = -ENOSYS;
        }
        if (r < 0)
                call_fail(call, -r);
        else
                meta_run(sup, call, &m);
        return 0;
}

/* chown, lchown, fchown, fchownat */
int fs_meta_chown(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_CHOWN, .fd = AT_FDCWD};
        int r = 0;

        switch ((int)id_of(call)) {
        case SC_lchown:
                m.nofollow = true;
                /* fall through */
        case SC_chown:
                m.path = a[0], m.uid = (uid_t)a[1], m.gid = (gid_t)a[2];
                break;
        case SC_fchown:
                m.fd = (int)a[0], m.fd_form = true, m.uid = (uid_t)a[1], m.gid = (gid_t)a[2];
                break;
        case SC_fchownat:
                r = check_at_flags(&m, a[4], AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
                m.fd = (int)a[0], m.path = a[1], m.uid = (uid_t)a[2], m.gid = (gid_t)a[3];
                break;
        default:
                r = -ENOSYS;
        }
        if (r < 0)
                call_fail(call, -r);
        else
                meta_run(sup, call, &m);
        return 0;
}

/* utime, utimes, futimesat, utimensat (and futimens: utimensat with a NULL path) */
int fs_meta_utimes(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_UTIMES, .fd = AT_FDCWD};
        int r = 0;

        switch ((int)id_of(call)) {
        case SC_utime:
                m.path = a[0], m.times = a[1], m.times_kind = TIMES_UTIMBUF;
                break;
        case SC_utimes:
                m.path = a[0], m.times = a[1], m.times_kind = TIMES_TIMEVAL;
                break;
        case SC_futimesat:
                m.fd = (int)a[0], m.path = a[1], m.times = a[2], m.times_kind = TIMES_TIMEVAL;
                break;
        case SC_utimensat:
                r = check_at_flags(&m, a[3], AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
                m.fd = (int)a[0], m.path = a[1], m.times = a[2], m.times_kind = TIMES_TIMESPEC;
                if (r == 0 && !m.path && a[3])
                        r = -EINVAL; /* the kernel's futimens takes no flags */
                break;
        default:
                r = -ENOSYS;
        }
        /* A NULL path with a real dirfd acts on the dirfd (futimens); with AT_FDCWD: EFAULT. */
        if (r == 0 && !m.path && m.fd != AT_FDCWD && id_of(call) != SC_utime &&
            id_of(call) != SC_utimes)
                m.fd_form = true;
        if (r < 0)
                call_fail(call, -r);
        else
                meta_run(sup, call, &m);
        return 0;
}

struct xattr_args_v0 {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
};

/* setxattr, lsetxattr, fsetxattr, setxattrat */
int fs_meta_setxattr(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_SETXATTR, .fd = AT_FDCWD};
        struct xattr_args_v0 xa = {0};
        int r = 0;

        switch ((int)id_of(call)) {
        case SC_lsetxattr:
                m.nofollow = true;
                /* fall through */
        case SC_setxattr:
                m.path = a[0], m.name = a[1], m.value = a[2], m.size = (size_t)a[3];
                m.xflags = (int)a[4];
                break;
        case SC_fsetxattr:
                m.fd = (int)a[0], m.fd_form = true, m.name = a[1], m.value = a[2];
                m.size = (size_t)a[3], m.xflags = (int)a[4];
                break;
        case SC_setxattrat:
                r = check_at_flags(&m, a[2], AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
                m.fd = (int)a[0], m.path = a[1], m.name = a[3];
                /* The struct is an argument in memory too: copied once, with the rest
                 * before ID_VALID. Only its first version is known here. */
                if (r == 0 && a[5] != sizeof(xa))
                        r = a[5] < sizeof(xa) ? -EINVAL : -E2BIG;
                if (r == 0)
                        r = tmem_read((pid_t)call->req->pid, a[4], &xa, sizeof(xa));
                m.value = xa.value, m.size = xa.size, m.xflags = (int)xa.flags;
                break;
        default:
                r = -ENOSYS;
        }
        if (r == 0 && (m.xflags & ~(XATTR_CREATE | XATTR_REPLACE)))
                r = -EINVAL;
        if (r < 0)
                call_fail(call, -r);
        else
                meta_run(sup, call, &m);
        return 0;
}

/* removexattr, lremovexattr, fremovexattr, removexattrat */
int fs_meta_removexattr(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_REMOVEXATTR, .fd = AT_FDCWD};
        int r = 0;

        switch ((int)id_of(call)) {
        case SC_lremovexattr:
                m.nofollow = true;
                /* fall through */
        case SC_removexattr:
                m.path = a[0], m.name = a[1];
                break;
        case SC_fremovexattr:
                m.fd = (int)a[0], m.fd_form = true, m.name = a[1];
                break;
        case SC_removexattrat:
                r = check_at_flags(&m, a[2], AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
                m.fd = (int)a[0], m.path = a[1], m.name = a[3];
                break;
        default:
                r = -ENOSYS;
        }
        if (r < 0)
                call_fail(call, -r);
        else
                meta_run(sup, call, &m);
        return 0;
}

/* truncate: by path, so that a copy-on-write file gets its baseline like a write open (the
 * kernel's own truncate would copy it up unseen). ftruncate acts on an fd opened for writing,
 * which was judged and noted at its open, and stays in the kernel. */
int fs_meta_truncate(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct meta_call m = {.op = META_TRUNCATE, .fd = AT_FDCWD, .path = a[0]};

        m.length = (off_t)a[1];
        if (m.length < 0)
                call_fail(call, EINVAL);
        else
                meta_run(sup, call, &m);
        return 0;
}

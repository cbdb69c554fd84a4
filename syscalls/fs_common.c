#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/vfs/view.h"
#include "supervisor/notify.h"
#include "supervisor/tmem.h"
#include "supervisor/tfd.h"
#include "supervisor/util.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

ssize_t fs_read_text(const char *path, char *buf, size_t size)
{
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -1;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        return n;
}

long fs_proc_field(const char *path, const char *field, int base)
{
        char buf[1024], *p;

        if (fs_read_text(path, buf, sizeof(buf)) < 0)
                return -1;
        p = strstr(buf, field);
        return p ? strtol(p + strlen(field), NULL, base) : -1;
}

/* A field of /proc/TID/status ("\nUmask:"), in `base`; -1 if it cannot be read. */
long fs_status_field(pid_t tid, const char *field, int base)
{
        char path[48];

        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        return fs_proc_field(path, field, base);
}

/*
 * The last callers of this notifier thread (a few: a program's threads, git's lstat
 * workers, take turns on the notifier threads): each one's pidfd and /proc/TID directory,
 * kept between calls (pidfd_open and close cost more than the copy they serve; /proc/TID is
 * looked up once, not at every cwd). The least recently used gives way.
 *
 * This cannot mistake one task for another: both fds hold the struct pid of the task they
 * were opened for, never its number. A struct pid keeps its number for life (an exec by
 * another thread moves the leader's struct pid to that thread, number and all), and once no
 * task has it (reaped) pidfd_getfd says ESRCH and a look-up in the directory ENOENT, even if
 * the number names another task by then. So a kept fd reaches the task that holds number
 * `tid` now, as a fresh pidfd_open or open of /proc/TID would, or fails, and then the
 * handler opens afresh. The rights are checked at each use (pidfd_getfd's and the cwd
 * link's ptrace access check), and ID_VALID after the copy, as before, tells that the
 * caller is still that task.
 */
#define KEPT_CALLERS 8

struct kept_caller {
        pid_t tid;          /* 0: a free entry */
        int pidfd;          /* -1: not opened yet */
        int procdir;        /* O_PATH of /proc/TID; -1: not opened yet */
        unsigned long used; /* when it last served */
};

static __thread struct kept_caller callers[KEPT_CALLERS];
static __thread unsigned long callers_clock; /* 0: the entries are not set up yet */
/* Where this thread's working directory goes back to (dir_path); -1: not opened yet. */
static __thread int home = -1;

static void caller_forget(struct kept_caller *c)
{
        if (c->pidfd >= 0)
                close(c->pidfd);
        if (c->procdir >= 0)
                close(c->procdir);
        c->pidfd = c->procdir = -1;
}

/* The fds a thread keeps are closed when it ends (a run leaks none: loop.c counts them). */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void kept_close(void *unused)
{
        (void)unused;
        for (size_t i = 0; callers_clock && i < KEPT_CALLERS; i++)
                caller_forget(&callers[i]);
        if (home >= 0)
                close(home);
        home = -1;
}

static void kept_init(void)
{
        if (pthread_key_create(&kept_key, kept_close) != 0)
                abort(); /* out of keys: as out of memory */
}

/* Called after a thread opens an fd to keep: its end will close them. */
static void kept_register(void)
{
        pthread_once(&kept_once, kept_init);
        pthread_setspecific(kept_key, &home);
}

/* The entry of `tid`, made (in place of the least recently used) if there is none. */
static struct kept_caller *caller_of(pid_t tid)
{
        struct kept_caller *c = NULL;

        if (!callers_clock)
                for (size_t i = 0; i < KEPT_CALLERS; i++)
                        callers[i] = (struct kept_caller){.pidfd = -1, .procdir = -1};
        callers_clock++;
        for (size_t i = 0; i < KEPT_CALLERS; i++) {
                if (callers[i].tid == tid) {
                        callers[i].used = callers_clock;
                        return &callers[i];
                }
                if (!c || callers[i].used < c->used)
                        c = &callers[i];
        }
        caller_forget(c);
        c->tid = tid;
        c->used = callers_clock;
        return c;
}

int fs_caller_fd(pid_t tid, int fd)
{
        struct kept_caller *c = caller_of(tid);
        int copy;

        for (int fresh = c->pidfd < 0;; fresh = 1) {
                if (c->pidfd < 0) {
                        c->pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
                        if (c->pidfd < 0 && errno == EINVAL) /* before 6.9: leaders only */
                                c->pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
                        if (c->pidfd < 0)
                                return -ESRCH;
                        kept_register();
                }
                copy = (int)syscall(SYS_pidfd_getfd, c->pidfd, fd, 0);
                if (copy >= 0)
                        return copy;
                if (errno != ESRCH || fresh)
                        return -errno;
                caller_forget(c); /* the task kept is gone: the number may be another's now */
        }
}

int fs_caller_cwd(pid_t tid)
{
        struct kept_caller *c = caller_of(tid);
        char dir[32];
        int fd;

        for (int fresh = c->procdir < 0;; fresh = 1) {
                if (c->procdir < 0) {
                        snprintf(dir, sizeof(dir), "/proc/%d", (int)tid);
                        c->procdir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (c->procdir < 0)
                                return errno == ENOENT ? -ESRCH : -errno;
                        kept_register();
                }
                fd = openat(c->procdir, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        return fd;
                /* A reaped task's directory answers ESRCH (proc_pid_permission) or ENOENT:
                 * the number may be another task's by now (an outside review reused it). */
                if ((errno != ENOENT && errno != ESRCH) || fresh)
                        return errno == ENOENT ? -ESRCH : -errno;
                caller_forget(c);
        }
}

int fs_take_base(struct supervisor *sup, const struct call *call, int dirfd, const char *path,
                 int *base)
{
        pid_t tid = (pid_t)call->req->pid;
        int fd = AT_FDCWD;

        *base = -1;
        if (path[0] != '/') {
                fd = dirfd == AT_FDCWD ? fs_caller_cwd(tid) : fs_caller_fd(tid, dirfd);
                if (fd < 0)
                        return fd;
        }
        if (tmem_id_valid(sup->listener, call->req->id) < 0) {
                if (fd >= 0)
                        close(fd);
                return -ESRCH;
        }
        *base = fd;
        return 0;
}

/* The caller's umask; 022 if it cannot be read. */
mode_t fs_caller_umask(pid_t tid)
{
        long mask = fs_status_field(tid, "\nUmask:", 8);

        return mask < 0 ? 022 : (mode_t)mask & 0777;
}

static bool in_tree(void *arg, pid_t pid)
{
        struct supervisor *sup = arg;
        bool found;

        /* The procfs of the sandbox's own pid namespace holds its processes and its init,
         * nothing else: a number that names none is the kernel's ENOENT. */
        if (sup->pidns)
                return true;
        pthread_mutex_lock(&sup->lock);
        found = tracee_find_live(&sup->tree, pid) != NULL;
        pthread_mutex_unlock(&sup->lock);
        return found;
}

static bool pts_allowed(void *arg, unsigned n)
{
        struct supervisor *sup = arg;
        bool found = false;

        pthread_mutex_lock(&sup->pts_lock);
        for (size_t i = 0; i < sup->n_pts && !found; i++)
                found = sup->pts[i] == n;
        pthread_mutex_unlock(&sup->pts_lock);
        return found;
}

bool fs_host_iface(void *arg, const char *name)
{
        struct ifreq ifr = {0};
        int s, r;

        (void)arg;
        if (strlen(name) >= sizeof(ifr.ifr_name))
                return false; /* too long for any interface's name */
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return true;
        memcpy(ifr.ifr_name, name, strlen(name));
        r = ioctl(s, SIOCGIFINDEX, &ifr) == 0 ? 0 : errno;
        close(s);
        return r != ENODEV; /* what cannot be told is hidden */
}

void fs_open_allow_pts(struct supervisor *sup, unsigned n)
{
        if (pts_allowed(sup, n))
                return;
        pthread_mutex_lock(&sup->pts_lock);
        if (sup->n_pts == sup->cap_pts) {
                sup->cap_pts = sup->cap_pts ? 2 * sup->cap_pts : 8;
                sup->pts = xrealloc(sup->pts, sup->cap_pts * sizeof(*sup->pts));
        }
        sup->pts[sup->n_pts++] = n;
        pthread_mutex_unlock(&sup->pts_lock);
}

int fs_hold_pty(struct supervisor *sup, int master)
{
        unsigned n;
        int fd;

        if (ioctl(master, TIOCGPTN, &n) < 0)
                return -errno;
        pthread_mutex_lock(&sup->pts_lock);
        if (sup->n_held >= ARRAY_SIZE(sup->held_ptys)) {
                pthread_mutex_unlock(&sup->pts_lock);
                return -ENOSPC; /* what /dev/ptmx answers when no pty is left */
        }
        fd = fcntl(master, F_DUPFD_CLOEXEC, 3);
        if (fd >= 0)
                sup->held_ptys[sup->n_held++] = fd;
        pthread_mutex_unlock(&sup->pts_lock);
        if (fd < 0)
                return -errno;
        fs_open_allow_pts(sup, n);
        return 0;
}

/* The numbers of `tid` and of its process in the pid namespace it lives in: the last ones of
 * NSpid and NStgid in its status (the first are ours). Returns 0 or -ESRCH. */
static int ns_numbers(pid_t tid, pid_t *tgid, pid_t *nstid)
{
        char path[48], buf[4096], *p;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        if (fs_read_text(path, buf, sizeof(buf)) < 0)
                return -ESRCH;
        for (int i = 0; i < 2; i++) {
                pid_t *out = i ? nstid : tgid;
                char *end;

                p = strstr(buf, i ? "\nNSpid:" : "\nNStgid:");
                end = p ? strchr(p + 1, '\n') : NULL;
                if (!end)
                        return -ESRCH;
                *end = '\0';
                p = strrchr(p, '\t') ? strrchr(p, '\t') : strrchr(p, ' ');
                *out = p ? (pid_t)strtol(p + 1, NULL, 10) : 0;
                *end = '\n';
                if (*out <= 0)
                        return -ESRCH;
        }
        return 0;
}

int fs_special_ctx(struct supervisor *sup, pid_t tid, struct vfs_special_ctx *ctx)
{
        *ctx = (struct vfs_special_ctx){.tid = tid,
                                        .in_tree = in_tree,
                                        .pts_allowed = pts_allowed,
                                        .arg = sup,
                                        .shm = sup->shm_dir,
                                        .host_iface = sup->netns.chan >= 0 ? NULL : fs_host_iface};
        /* The sandbox's /proc is its pid namespace's (shim/pidns.h): "self" is the caller's
         * number there, as the kernel would resolve it for the caller. */
        if (sup->pidns)
                return ns_numbers(tid, &ctx->tgid, &ctx->tid);
        ctx->tgid = (pid_t)fs_status_field(tid, "\nTgid:", 10);
        return ctx->tgid > 0 ? 0 : -ESRCH;
}

bool fs_sysnet(const struct supervisor *sup, const char *host)
{
        return sup->netns.chan >= 0 && strncmp(host, "/proc/sys/net", 13) == 0 &&
               (host[13] == '\0' || host[13] == '/');
}

int fs_shm_root(const struct supervisor *sup)
{
        int fd = sup->shm_root >= 0 ? fcntl(sup->shm_root, F_DUPFD_CLOEXEC, 0)
                                    : open(sup->shm_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

bool fs_pts_allowed(struct supervisor *sup, unsigned n)
{
        return pts_allowed(sup, n);
}

void fs_sandbox_path(const struct supervisor *sup, char *path, size_t size)
{
        size_t n = sup->shm_dir ? strlen(sup->shm_dir) : 0;
        char rest[PATH_MAX];

        fs_cow_sandbox_path(sup, path, size); /* an upper directory's object */

        if (!n || strncmp(path, sup->shm_dir, n) != 0 || (path[n] && path[n] != '/'))
                return;
        /* "/dev/shm" is shorter than the scratch's path, so it fits; were it not to, the
         * path is left as it is rather than cut */
        if (snprintf(rest, sizeof(rest), "%s", path + n) >= (int)sizeof(rest) ||
            strlen(rest) + sizeof("/dev/shm") > size)
                return;
        if (snprintf(path, size, "/dev/shm%s", rest) >= (int)size)
                path[0] = '\0'; /* unreachable: checked above */
}

/*
 * The path of directory `base` by getcwd, through this thread's own working directory
 * (notify_own_fs): fchdir there, getcwd, and back. getcwd prints the path as readlink of
 * /proc/self/fd/N does (both are the kernel's prepend_path of the same object, at that
 * moment), without the look-up of four /proc names that costs most of the readlink; an
 * object beneath another root (the sandbox's mount namespace) is prefixed "(unreachable)",
 * which readlink leaves out. Returns 0 or -errno (ENOTDIR, EACCES for fchdir, ENOENT for a
 * removed directory, ERANGE): the caller then asks /proc.
 */
static int dir_path(int base, char *out, size_t size)
{
        static const char unreachable[] = "(unreachable)";
        static __thread bool off = false; /* going back failed once: ask /proc */
        long n;
        int r;

        if (!notify_own_fs || off)
                return -ENOSYS;
        if (home < 0) {
                home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (home < 0)
                        return -errno;
                kept_register();
        }
        if (fchdir(base) < 0)
                return -errno;
        n = syscall(SYS_getcwd, out, size);
        r = n < 0 ? -errno : 0;
        if (fchdir(home) < 0) {
                /* As the program (fs_as_enter), our own directory may be closed to it: this
                 * thread's working directory is used for nothing else (bind_at moves it and
                 * back), so it only stays where it is, and this thread stops moving it. */
                off = true;
                return -errno;
        }
        if (r == 0 && strncmp(out, unreachable, sizeof(unreachable) - 1) == 0)
                memmove(out, out + sizeof(unreachable) - 1,
                        strlen(out + sizeof(unreachable) - 1) + 1);
        return r == 0 && out[0] != '/' ? -ENOENT : r;
}

/*
 * procfs drops its dentry of a /proc/PID/net entry whenever the name is looked up again (the
 * entries depend on the looker's network namespace: their d_revalidate always says no), and
 * the kernel then prints the path of an fd the program holds there with " (deleted)": so did
 * a directory of /proc/net that grep -r walks, after its own stat of the name, and each open
 * relative to it failed with ENOENT. Such an object is alive: looked up again, the name
 * leads to the same inode (a proc_dir_entry keeps its number), and the suffix is dropped.
 * Anything else keeps it, and resolves to nothing. `path` is what readlink gave for `fd`.
 */
static void proc_undeleted(const struct supervisor *sup, int fd, char *path)
{
        static const char deleted[] = " (deleted)";
        size_t n = strlen(path), k = sizeof(deleted) - 1;
        struct stat st, again;

        if (n <= k || strcmp(path + n - k, deleted) != 0 || fstat(fd, &st) < 0 ||
            st.st_dev != sup->proc_dev)
                return;
        path[n - k] = '\0';
        /* The sandbox's own procfs (pid namespace) is mounted in its mount namespace only;
         * the path the kernel printed is canonical there (no symlink on the way). */
        if (fstatat(sup->pidns ? sup->places.root_fd : AT_FDCWD, sup->pidns ? path + 1 : path,
                    &again, AT_SYMLINK_NOFOLLOW) < 0 ||
            again.st_dev != st.st_dev || again.st_ino != st.st_ino ||
            (again.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
                path[n - k] = deleted[0];
}

/* fs_base_path, where `dir` says whether `base` may be a directory: only a directory's path
 * is asked of getcwd (a file's fchdir fails, a system call for nothing). */
static int base_path(const struct supervisor *sup, int base, bool dir, char *out, size_t size)
{
        char link[48];
        ssize_t n;

        if (base == AT_FDCWD) {
                snprintf(out, size, "/");
                return 0;
        }
        if (dir && dir_path(base, out, size) == 0) {
                fs_sandbox_path(sup, out, size);
                return 0;
        }
        snprintf(link, sizeof(link), "/proc/self/fd/%d", base);
        n = readlink(link, out, size - 1);
        if (n < 0)
                return -errno;
        out[n] = '\0';
        if (out[0] != '/')
                return -ENOENT; /* not a directory of the file system ("anon_inode:...") */
        proc_undeleted(sup, base, out);
        fs_sandbox_path(sup, out, size);
        return 0;
}

int fs_base_path(const struct supervisor *sup, int base, char *out, size_t size)
{
        return base_path(sup, base, true, out, size);
}

static bool lexically_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        while (path[0] == '/' && path[1] == '/')
                path++;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool fs_starts_special(const struct supervisor *sup, const char *path, int base)
{
        struct stat st;

        if (path[0] == '/')
                return lexically_under(path, "/proc") || lexically_under(path, "/dev");
        if (fstat(base, &st) < 0)
                return true;
        if (st.st_dev == sup->proc_dev || st.st_dev == sup->dev_dev)
                return true;
        for (size_t i = 0; i < sup->n_special_devs; i++)
                if (st.st_dev == sup->special_devs[i])
                        return true;
        return false;
}

bool fs_view_shows(const struct supervisor *sup, int fd, const struct stat *st)
{
        char path[PATH_MAX];

        return base_path(sup, fd, !st || S_ISDIR(st->st_mode), path, sizeof(path)) == 0 &&
               fs_view_shows_path(sup, path);
}

bool fs_view_shows_path(const struct supervisor *sup, const char *path)
{
        const struct vfs_mount *m = vfs_view_find(&sup->view, path);

        if (m)
                return m->mode != VFS_HIDDEN;
        return vfs_view_above_mount(&sup->view, path);
}

bool fs_magic_last(const char *host)
{
        const char *base = strrchr(host, '/');
        const char *dir = base;

        if (!base)
                return false;
        base++;
        while (dir > host && dir[-1] != '/')
                dir--;
        return strcmp(base, "exe") == 0 || strcmp(base, "cwd") == 0 || strcmp(base, "root") == 0 ||
               strncmp(dir, "fd/", 3) == 0 || strncmp(dir, "map_files/", 10) == 0 ||
               strncmp(dir, "ns/", 3) == 0;
}

int fs_check_result(struct supervisor *sup, int fd, bool proc_view, struct stat *out)
{
        struct stat own, *stp = out ? out : &own;
        struct statfs sfs;

        if (fstat(fd, stp) < 0)
                return -errno;
        if (S_ISCHR(stp->st_mode) || S_ISBLK(stp->st_mode)) {
                unsigned maj = major(stp->st_rdev), min = minor(stp->st_rdev);

                if (S_ISBLK(stp->st_mode))
                        return -EACCES;
                /* null, zero, full, random, urandom */
                if (maj == 1 && (min == 3 || min == 5 || min == 7 || min == 8 || min == 9))
                        return 0;
                /* ptmx: the host's (/dev/ptmx, /dev/pts/ptmx), not another devpts instance's,
                 * which would make a pty in a container's. */
                if (maj == 5 && min == 2)
                        return stp->st_dev == sup->dev_dev || stp->st_dev == sup->devpts_dev
                                       ? 0
                                       : -EACCES;
                /* /dev/tty is whoever opens it's terminal: here the supervisor's. */
                if (maj == 5 && min == 0)
                        return -ENXIO;
                /* A pty of the host's devpts (another instance numbers its own from 0 too). */
                if (maj >= 136 && maj <= 143 && stp->st_dev == sup->devpts_dev &&
                    fs_pts_allowed(sup, (maj - 136) * 256 + min))
                        return 0;
                return -EACCES;
        }
        /* Another mount of procfs (a chroot's /proc): its "self" is the supervisor, and its
         * numbers are not filtered. Only the sandbox's /proc view opens procfs, the host's.
         * procfs, like every file system without a device, has an anonymous device number
         * (major 0): a file on a block device's (the root ext4) needs no statfs. */
        if (major(stp->st_dev) == 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC &&
            (!proc_view || stp->st_dev != sup->proc_dev))
                return -EACCES;
        return 0;
}

int fs_as_enter(struct supervisor *sup, pid_t tid, bool creates, struct fs_as *as)
{
        mode_t mask = creates && notify_own_fs ? fs_caller_umask(tid) : 0;
        int r = creds_enter(sup->cfg, &as->saved);

        as->umask_set = false;
        if (r < 0)
                return r;
        if (creates && notify_own_fs) {
                as->old_umask = umask(mask);
                as->umask_set = true;
        }
        return 0;
}

void fs_as_leave(struct fs_as *as)
{
        if (as->umask_set)
                umask(as->old_umask);
        creds_leave(&as->saved);
}

mode_t fs_as_mode(pid_t tid, mode_t mode)
{
        return notify_own_fs ? mode : mode & ~fs_caller_umask(tid);
}

int fs_sealed_memfd(const char *name, const char *text, size_t n)
{
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0)
                return -errno;
        for (size_t at = 0; at < n;) {
                ssize_t w = write(fd, text + at, n - at);

                if (w <= 0) {
                        close(fd);
                        return -EIO;
                }
                at += (size_t)w;
        }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
            lseek(fd, 0, SEEK_SET) < 0) {
                int e = errno;

                close(fd);
                return -e;
        }
        return fd;
}

ssize_t fs_slurp(int fd, char **out)
{
        size_t cap = 1 << 16, n = 0;
        char *buf = xrealloc(NULL, cap);

        for (;;) {
                ssize_t r;

                if (n == cap) {
                        if (cap >= (64u << 20)) { /* a table that large: its head is enough */
                                break;
                        }
                        buf = xrealloc(buf, cap *= 2);
                }
                r = read(fd, buf + n, cap - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        int e = errno;

                        free(buf);
                        return -e;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        *out = buf;
        return (ssize_t)n;
}

bool fs_proc_file(const struct supervisor *sup, int fd, const struct stat *st, char *path)
{
        char link[48];
        ssize_t n;

        if (fd < 0 || st->st_dev != sup->proc_dev || !S_ISREG(st->st_mode))
                return false;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, PATH_MAX - 1);
        if (n <= 0)
                return false;
        path[n] = '\0';
        proc_undeleted(sup, fd, path);
        return true;
}

const char *fs_proc_task_rest(const char *path)
{
        const char *p = path;

        if (strncmp(p, "/proc/", 6) != 0 || p[6] < '0' || p[6] > '9')
                return NULL;
        for (p += 6; *p >= '0' && *p <= '9'; p++)
                ;
        if (strncmp(p, "/task/", 6) == 0 && p[6] >= '0' && p[6] <= '9')
                for (p += 6; *p >= '0' && *p <= '9'; p++)
                        ;
        return p;
}

/* ---- a hard link's identity in a copy-on-write mount --------------------------------------- */

void fs_link_before(struct supervisor *sup, int dirfd, const char *name, int flags,
                    struct fs_link_was *was)
{
        struct linkid_obj o;
        int r;

        was->known = false;
        if (sup->cow.n == 0)
                return;
        r = linkid_stat(dirfd, name, flags, &o);
        if ((r < 0 && r != -ENODATA) || o.nlink > 1)
                return; /* a name of a file with others: nothing to keep (linkid.h) */
        was->dev = o.dev, was->ino = o.ino;
        if (r == 0)
                linkid_shown(&sup->links, &o, &was->dev, &was->ino);
        was->known = true;
}

void fs_link_after(struct supervisor *sup, const struct fs_link_was *was, int dirfd,
                   const char *name)
{
        struct linkid_obj made;

        if (was->known && linkid_stat(dirfd, name, AT_SYMLINK_NOFOLLOW, &made) == 0)
                linkid_note(&sup->links, &made, was->dev, was->ino);
}

void fs_link_shown(struct supervisor *sup, int fd, mode_t mode, dev_t *dev, ino_t *ino)
{
        struct linkid_obj raw;

        if (atomic_load(&sup->links.n) == 0 || S_ISDIR(mode))
                return;
        if (linkid_stat(fd, "", AT_EMPTY_PATH, &raw) == 0 && raw.dev == *dev && raw.ino == *ino)
                linkid_shown(&sup->links, &raw, dev, ino);
}

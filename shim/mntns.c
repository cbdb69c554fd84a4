#include "shim/mntns.h"
#include "shim/netns.h"
#include "shim/ipcns.h"
#include "shim/pidns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* mkdir -p of an absolute path (in the new namespace: beneath a private directory). */
static int make_dirs(const char *path)
{
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char c = *s;

                        *s = '\0';
                        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *s = c;
                        if (!c)
                                return 0;
                }
        }
}

/* A mask (mntns.h): the target opened without following it, then covered through /proc. */
static int mask(const char *target)
{
        const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
        int fd = open(target, O_PATH | O_NOFOLLOW | O_CLOEXEC), r = 0;
        struct stat st;
        char at[64];

        /* Gone, or out of reach for this user: the sandbox, the same user, cannot reach it
         * either. */
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
        snprintf(at, sizeof(at), "/proc/self/fd/%d", fd);
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = mount("tmpfs", at, "tmpfs", ro, "size=4k,nr_inodes=2,mode=000") < 0 ? -errno
                                                                                        : 0;
        else if (!S_ISLNK(st.st_mode) && mount("/dev/null", at, NULL, MS_BIND, NULL) < 0)
                r = -errno;
        else if (!S_ISLNK(st.st_mode)) {
                /* Read-only: a remount of the new mount, which the old fd is not. */
                close(fd);
                fd = open(target, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || mount(NULL, at, NULL, MS_BIND | MS_REMOUNT | ro, NULL) < 0)
                        r = -errno;
        }
        if (fd >= 0)
                close(fd);
        return r;
}

/* A remap's target: a directory, or a file (remap.c checked which), not a symlink. */
static int open_no_symlinks(const char *path)
{
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

        return fd < 0 ? -errno : fd;
}

/*
 * A remapped mount (mntns.h): the source (by fd) bound at the target opened without
 * symlinks, then, read-only, every mount of the new tree made so. mount_setattr only adds
 * a flag, so the flags a user namespace locks (nosuid, nodev) are never in question; a
 * plain MS_REMOUNT would leave the mounts beneath writable.
 */
static int bind_remap(const char *from, const struct mnt_bind *b)
{
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
        char at[64];
        int fd = open_no_symlinks(b->target), r = 0;

        if (fd < 0)
                return fd;
        snprintf(at, sizeof(at), "/proc/self/fd/%d", fd);
        if (mount(from, at, NULL, MS_BIND | MS_REC, NULL) < 0)
                r = -errno;
        close(fd);
        if (r < 0 || !b->rdonly)
                return r;
        /* The new mount: the fd above is of the directory beneath it (mask() says why). */
        fd = open_no_symlinks(b->target);
        if (fd < 0)
                return fd;
        if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) <
            0)
                r = -errno;
        close(fd);
        return r;
}

/* The overlay, `volatile` where the kernel has it (5.10): without it where refused. */
static int mount_overlay(const char *target, char *opts)
{
        const size_t v = strlen(",volatile");
        size_t n = strlen(opts);

        if (mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) == 0)
                return 0;
        if (errno != EINVAL || n < v || strcmp(opts + n - v, ",volatile") != 0)
                return -errno;
        opts[n - v] = '\0';
        return mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) < 0 ? -errno : 0;
}

/* A file bind (mntns.h): the source by fd at the target, its symlinks followed, read-only. */
static int bind_file(const char *from, const char *target)
{
        if (mount(from, target, NULL, MS_BIND, NULL) < 0)
                return -errno;
        return mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                     NULL) < 0
                       ? -errno
                       : 0;
}

/* Whether `path` is the root of a mount (then mount_setattr may change that mount alone). */
static bool mount_root(const char *path)
{
        struct statx sx;

        return statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
               (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
               (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* Every mount nodev but /dev's and /dev/pts's own (mntns.h). mount_setattr adds the flag to
 * the whole tree at once; it is then cleared on those two, which a user namespace allows
 * where the host's mount did not have it (a flag the host set is locked, and /dev's devices
 * then never opened anyway). */
static int nodev_but_dev(void)
{
        struct mount_attr set = {.attr_set = MOUNT_ATTR_NODEV},
                          clr = {.attr_clr = MOUNT_ATTR_NODEV};
        static const char *const keep[] = {"/dev", "/dev/pts"};

        if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &set, sizeof(set)) < 0)
                return -errno;
        for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
                if (mount_root(keep[i]) &&
                    syscall(SYS_mount_setattr, AT_FDCWD, keep[i], 0, &clr, sizeof(clr)) < 0)
                        return -errno;
        return 0;
}

/* Whether the file `fd` is (dev, ino). */
static bool is(int fd, unsigned long long dev, unsigned long long ino)
{
        struct stat st;

        return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* The mounts, in the child. The sources are opened before any mount, since a bind over
 * /tmp hides the host paths beneath it that later binds take from — and after the unshare:
 * a bind's source must be a mount of the namespace it is made in. */

static int build(const struct mnt_bind *b, size_t n, const char **step)
{
        int src[MNT_BINDS_MAX], up[MNT_BINDS_MAX], wk[MNT_BINDS_MAX];
        char from[64], opts[256];
        int r = 0;

        if (n > MNT_BINDS_MAX) {
                *step = "too many private directories";
                return -E2BIG;
        }
        *step = "unshare(CLONE_NEWNS)";
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        /* Nothing done here may reach the host's namespace. */
        *step = "make every mount private";
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                up[i] = wk[i] = src[i] = -1;
                if (b[i].mask || b[i].nodev)
                        continue;
                *step = b[i].source;
                /* a remap's may be a file (remap.c) */
                src[i] = open(b[i].source,
                              O_PATH | O_CLOEXEC |
                                      (b[i].remap || b[i].file ? O_NOFOLLOW : O_DIRECTORY));
                if (src[i] < 0)
                        return -errno;
                *step = "a mount's host path: not the directory or file the view opened for "
                        "it (moved or replaced since)";
                if ((b[i].source_dev || b[i].source_ino) &&
                    !is(src[i], b[i].source_dev, b[i].source_ino))
                        return -EXDEV;
                if (b[i].overlay) {
                        *step = b[i].upper;
                        up[i] = open(b[i].upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (up[i] < 0)
                                return -errno;
                        *step = "the session's upper directory: not the one made for the run "
                                "(its store changed meanwhile)";
                        if (!is(up[i], b[i].upper_dev, b[i].upper_ino))
                                return -EXDEV;
                        *step = b[i].work;
                        wk[i] = open(b[i].work, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (wk[i] < 0)
                                return -errno;
                        *step = "the session's work directory: not the one made for the run "
                                "(its store changed meanwhile)";
                        if (!is(wk[i], b[i].work_dev, b[i].work_ino))
                                return -EXDEV;
                }
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                *step = b[i].target;
                if (b[i].nodev) {
                        *step = "nodev on every mount but /dev";
                        r = nodev_but_dev();
                        continue;
                }
                if (b[i].mask) {
                        r = mask(b[i].target);
                        if (r < 0 && b[i].optional)
                                r = 0; /* a third wall only: Landlock and the view hide it */
                        continue;
                }
                if (b[i].make_target)
                        r = make_dirs(b[i].target);
                snprintf(from, sizeof(from), "/proc/self/fd/%d", src[i]);
                if (b[i].file) {
                        r = bind_file(from, b[i].target);
                        continue;
                }
                if (b[i].overlay) {
                        /* The layers by fd: no escaping of ',' or ':' in their paths, and
                         * the very directories opened above. userxattr: the same format
                         * as root or not (user.overlay.*), which the review tools read. */
                        /* volatile: no sync of the upper, at copy-up (an fsync of every
                         * file) or at the end (a syncfs of the session store's file system,
                         * everyone's dirty pages included). A session lives through a crash
                         * of stockade, not of the machine (cow.c clears the marker). */
                        snprintf(opts, sizeof(opts),
                                 "lowerdir=%s,upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/"
                                 "%d,userxattr,volatile",
                                 from, up[i], wk[i]);
                        if (r == 0)
                                r = mount_overlay(b[i].target, opts);
                        continue;
                }
                if (r == 0 && b[i].remap)
                        r = bind_remap(from, &b[i]);
                else if (r == 0 && mount(from, b[i].target, NULL, MS_BIND | MS_REC, NULL) < 0)
                        r = -errno;
        }
        return r;
}

static int open_ns(pid_t pid, const char *name)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
        return open(path, O_RDONLY | O_CLOEXEC);
}

/* The target as the child sees it: resolved in its root, so in its mounts. A directory, but
 * for a remapped file (`file`). */
static int open_inside(pid_t pid, const char *target, bool file)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC | (file ? O_NOFOLLOW : O_DIRECTORY),
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        char path[64];
        int root, fd;

        snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        fd = (int)syscall(SYS_openat2, root, target, &how, sizeof(how));
        if (fd < 0)
                fd = -errno;
        close(root);
        return fd;
}

/* The pid namespace and its init (pidns.h); the init's pid in *init. */
static int make_pidns(pid_t parent, pid_t *init, const char **step)
{
        int sup = (int)syscall(SYS_pidfd_open, parent, 0);
        pid_t r;

        *step = "pid namespace: pidfd_open";
        if (sup < 0)
                return -errno;
        /* Our parent, still: it cannot have died and its number been reused before this
         * (we die with it). */
        if (getppid() != parent)
                _exit(1);
        r = pidns_make(sup, step);
        close(sup);
        if (r < 0)
                return (int)r;
        *init = r;
        return 0;
}

/* The rest of the child's work, once its user, IPC and network namespaces are made (`e` and
 * `s`: how that went): the mounts, the pid namespace, the answer on `out`, then wait to be
 * killed (the parent opens our namespaces and the targets through our root). */
static _Noreturn void build_and_wait(int e, const char *s, bool net, bool pid,
                                     const struct mnt_bind *binds, size_t n, pid_t parent, int out)
{
        char msg[256];
        pid_t init = -1;

        if (e == 0 && (n || pid))
                e = build(binds, n, &s);
        if (e == 0 && (n || pid) && net)
                netns_sysfs();
        if (e == 0 && pid)
                e = make_pidns(parent, &init, &s);
        memcpy(msg, &e, sizeof(e));
        memcpy(msg + sizeof(e), &init, sizeof(init));
        snprintf(msg + sizeof(e) + sizeof(init), sizeof(msg) - sizeof(e) - sizeof(init), "%s", s);
        if (write(out, msg, sizeof(msg)) != sizeof(msg) || e < 0)
                _exit(1);
        for (;;)
                pause();
}

/* Only SIGKILL ends the child: from the parent, or from the kernel when the parent dies
 * before ns_finish (an error on the way there). A ^C meanwhile is the supervisor's. Not
 * dumpable, as the supervisor is by the time of the spawn (loop.c). */
static void child_guard(pid_t parent)
{
        sigset_t all;

        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
        prctl(PR_SET_DUMPABLE, 0);
}

static _Noreturn void maker(bool userns, bool net, bool pid, const struct mnt_bind *binds, size_t n,
                            pid_t parent, int out)
{
        const char *s = "";
        int e;

        child_guard(parent);
        e = userns ? ipcns_enter(IPC_NS_USERNS, &s) : 0;
        if (e == 0 && net)
                e = netns_enter(&s);
        build_and_wait(e, s, net, pid, binds, n, parent, out);
}

/* What ns_start hands an early maker, in memory shared before the fork. */
struct ns_plan {
        bool pid;
        size_t n;
        struct mnt_bind binds[MNT_BINDS_MAX];
};

/* The early maker (ns_early): each answer on `out` as soon as it is known, then the plan. */
static _Noreturn void early_maker(enum ipc_isolation how, bool net, const struct ns_plan *plan,
                                  pid_t parent, int out, int cmd)
{
        struct ns_answer a = {0};
        const char *s = "";
        char go;

        child_guard(parent);
        a.r = ipcns_enter(how, &s);
        if (a.r < 0)
                snprintf(a.why, sizeof(a.why), "%s: %s", s, strerror(-a.r));
        if (write(out, &a, sizeof(a)) != sizeof(a) || a.r < 0)
                _exit(0);
        if (net) {
                a.r = netns_enter(&s);
                if (a.r < 0)
                        snprintf(a.why, sizeof(a.why), "%s: %s", s, strerror(-a.r));
                /* Half made, the network namespace is no use: the parent forks another maker
                 * without one. */
                if (write(out, &a, sizeof(a)) != sizeof(a) || a.r < 0)
                        _exit(0);
        }
        if (read(cmd, &go, 1) != 1)
                _exit(0); /* not needed after all (ns_abandon) */
        build_and_wait(0, "", net, plan->pid, plan->binds, plan->n, parent, out);
}

int ns_early(struct ns_maker *mk, enum ipc_isolation how, bool net, struct ns_answer *ipc)
{
        int out[2], cmd[2];
        pid_t self = getpid();

        *mk = (struct ns_maker){
                .pid = -1, .pipe = -1, .cmd = -1, .plan = NULL, .net = net, .net_read = false};
        *ipc = (struct ns_answer){.r = -ECHILD, .why = "the probe died"};
        mk->plan = mmap(NULL, sizeof(struct ns_plan), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (mk->plan == MAP_FAILED) {
                mk->plan = NULL;
                ipc->r = -errno;
                snprintf(ipc->why, sizeof(ipc->why), "mmap: %s", strerror(errno));
                return ipc->r;
        }
        out[1] = -1;
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(cmd, O_CLOEXEC) < 0) {
                ipc->r = -errno;
                snprintf(ipc->why, sizeof(ipc->why), "pipe: %s", strerror(errno));
                if (out[1] >= 0) {
                        close(out[0]);
                        close(out[1]);
                }
                ns_abandon(mk);
                return ipc->r;
        }
        mk->pid = fork();
        if (mk->pid == 0) {
                close(out[0]);
                close(cmd[1]);
                early_maker(how, net, mk->plan, self, out[1], cmd[0]);
        }
        ipc->r = mk->pid < 0 ? -errno : 0;
        close(out[1]);
        close(cmd[0]);
        mk->pipe = out[0];
        mk->cmd = cmd[1];
        if (ipc->r < 0) {
                snprintf(ipc->why, sizeof(ipc->why), "fork: %s", strerror(-ipc->r));
                ns_abandon(mk);
                return ipc->r;
        }
        if (read(mk->pipe, ipc, sizeof(*ipc)) != sizeof(*ipc))
                *ipc = (struct ns_answer){.r = -ECHILD, .why = "the probe died"};
        ipc->why[sizeof(ipc->why) - 1] = '\0';
        if (ipc->r < 0)
                ns_abandon(mk);
        return ipc->r;
}

int ns_early_net(struct ns_maker *mk, struct ns_answer *net)
{
        *net = (struct ns_answer){.r = -ECHILD, .why = "the probe died"};
        if (mk->pid <= 0 || !mk->plan || !mk->net)
                return net->r;
        if (read(mk->pipe, net, sizeof(*net)) != sizeof(*net))
                *net = (struct ns_answer){.r = -ECHILD, .why = "the probe died"};
        net->why[sizeof(net->why) - 1] = '\0';
        mk->net_read = true;
        if (net->r < 0)
                ns_abandon(mk);
        return net->r;
}

static void path_copy(char *to, const char *from)
{
        size_t n = strnlen(from, PATH_MAX - 1);

        memcpy(to, from, n);
        to[n] = '\0';
}

void mnt_bind_pin(struct mnt_bind *b, int fd)
{
        struct stat st;

        if (fd >= 0 && fstat(fd, &st) == 0) {
                b->source_dev = st.st_dev;
                b->source_ino = st.st_ino;
        }
}

void mnt_bind_copy(struct mnt_bind *to, const struct mnt_bind *from)
{
        memcpy(to, from, offsetof(struct mnt_bind, target));
        path_copy(to->target, from->target);
        path_copy(to->source, from->source);
        path_copy(to->upper, from->upper);
        path_copy(to->work, from->work);
}

int ns_start(struct ns_maker *mk, bool userns, bool net, bool pid, const struct mnt_bind *binds,
             size_t n, const char **step)
{
        int pipefd[2];
        pid_t self = getpid();

        *step = "too many private directories";
        if (n > MNT_BINDS_MAX) {
                ns_abandon(mk);
                return -E2BIG;
        }
        /* The early maker has made the namespaces `userns` and `net` stand for (the probe's
         * answers made them so): it now gets the binds. */
        /* ...provided its network namespace's answer was read (layers_probe_net): else the
         * pipe holds it before the build's, and what `net` says may not be what it made. */
        if (mk->pid > 0 && mk->plan && mk->net && !mk->net_read)
                ns_abandon(mk);
        if (mk->pid > 0 && mk->plan && !mk->building) {
                *step = "hand the mounts to the namespaces' maker";
                mk->plan->pid = pid;
                mk->plan->n = n;
                for (size_t i = 0; i < n; i++)
                        mnt_bind_copy(&mk->plan->binds[i], &binds[i]);
                if (write(mk->cmd, "b", 1) != 1) {
                        ns_abandon(mk);
                        return -EIO;
                }
                mk->building = true;
                return 0;
        }
        ns_abandon(mk);
        *step = "pipe";
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        mk->pid = fork();
        if (mk->pid == 0) {
                close(pipefd[0]);
                maker(userns, net, pid, binds, n, self, pipefd[1]);
        }
        close(pipefd[1]);
        if (mk->pid < 0) {
                close(pipefd[0]);
                *step = "fork";
                return -errno;
        }
        mk->pipe = pipefd[0];
        mk->building = true;
        return 0;
}

void ns_abandon(struct ns_maker *mk)
{
        int status;

        if (mk->pipe >= 0)
                close(mk->pipe);
        if (mk->cmd >= 0)
                close(mk->cmd);
        mk->pipe = mk->cmd = -1;
        if (mk->pid > 0) {
                kill(mk->pid, SIGKILL);
                while (waitpid(mk->pid, &status, 0) < 0 && errno == EINTR)
                        ;
        }
        mk->pid = -1;
        if (mk->plan)
                munmap(mk->plan, sizeof(*mk->plan));
        mk->plan = NULL;
        mk->building = false;
}

/* The pid namespace the child unshared (its children's) and the procfs its init mounted,
 * which must be a procfs other than ours. */
static int open_pidns(pid_t pid, struct ns_pid *pns, const char **step)
{
        struct stat ours, st;
        struct statfs sfs;

        *step = "pid namespace: open it";
        pns->ns = open_ns(pid, "pid_for_children");
        if (pns->ns < 0)
                return -errno;
        *step = "pid namespace: open its /proc";
        pns->proc = open_inside(pid, "/proc", false);
        if (pns->proc < 0)
                return pns->proc;
        if (fstatfs(pns->proc, &sfs) < 0 || fstat(pns->proc, &st) < 0 || stat("/proc", &ours) < 0)
                return -errno;
        return sfs.f_type == PROC_SUPER_MAGIC && st.st_dev != ours.st_dev ? 0 : -EXDEV;
}

static void close_pidns(struct ns_pid *pns)
{
        int status;

        if (pns->ns >= 0)
                close(pns->ns);
        if (pns->proc >= 0)
                close(pns->proc);
        /* Our child (CLONE_PARENT), not reaped: the number is surely it. */
        if (pns->init > 0) {
                kill(pns->init, SIGKILL);
                while (waitpid(pns->init, &status, 0) < 0 && errno == EINTR)
                        ;
        }
        *pns = (struct ns_pid){.init = -1, .ns = -1, .proc = -1};
}

int ns_finish(struct ns_maker *mk, bool userns, bool net, bool pid_ns, const struct mnt_bind *binds,
              size_t n, int fds[4], int *target_fds, int *root_fd, struct ns_pid *pns,
              const char **step)
{
        static char why[256 - sizeof(int) - sizeof(pid_t)];
        pid_t pid = mk->pid;
        bool mnt = n || pid_ns;
        char msg[256];
        int r = 0;

        fds[0] = fds[1] = fds[2] = fds[3] = *root_fd = -1;
        *pns = (struct ns_pid){.init = -1, .ns = -1, .proc = -1};
        for (size_t i = 0; i < n; i++)
                target_fds[i] = -1;
        if (read(mk->pipe, msg, sizeof(msg)) != sizeof(msg)) {
                r = -EIO;
                *step = "make the namespaces";
        } else {
                memcpy(&r, msg, sizeof(r));
                memcpy(&pns->init, msg + sizeof(r), sizeof(pns->init));
                snprintf(why, sizeof(why), "%s", msg + sizeof(r) + sizeof(pns->init));
                *step = why;
        }
        if (r == 0) {
                *step = "open the namespaces";
                if (userns &&
                    ((fds[0] = open_ns(pid, "user")) < 0 || (fds[1] = open_ns(pid, "ipc")) < 0))
                        r = -errno;
                if (r == 0 && mnt && (fds[2] = open_ns(pid, "mnt")) < 0)
                        r = -errno;
                if (r == 0 && net && (fds[3] = open_ns(pid, "net")) < 0)
                        r = -errno;
                for (size_t i = 0; i < n && r == 0; i++) {
                        if (binds[i].mask || binds[i].nodev || binds[i].file)
                                continue;
                        *step = binds[i].target;
                        target_fds[i] = open_inside(pid, binds[i].target, binds[i].remap);
                        if (target_fds[i] < 0)
                                r = target_fds[i];
                }
                if (r == 0 && mnt && (*root_fd = open_inside(pid, "/", false)) < 0)
                        r = *root_fd;
                if (r == 0 && pid_ns)
                        r = open_pidns(pid, pns, step);
        }
        ns_abandon(mk);
        if (r < 0) {
                for (int i = 0; i < 4; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                for (size_t i = 0; i < n; i++)
                        if (target_fds[i] >= 0)
                                close(target_fds[i]);
                if (*root_fd >= 0)
                        close(*root_fd);
                fds[0] = fds[1] = fds[2] = fds[3] = *root_fd = -1;
                close_pidns(pns);
        }
        return r;
}

int mntns_join(int mnt_fd, const char *cwd, const char **step)
{
        int r = 0;

        *step = "setns(CLONE_NEWNS)";
        if (setns(mnt_fd, CLONE_NEWNS) < 0)
                r = -errno;
        close(mnt_fd);
        if (r == 0) {
                *step = cwd;
                if (chdir(cwd) < 0)
                        r = -errno;
        }
        return r;
}

/*
 * A mount namespace of the sandbox's own, for the view's private directories: the default
 * view's /tmp and each --tmp PATH are, inside, a directory the supervisor made (removed at
 * the end of the run), bind-mounted over the host's. What the view shows beneath such a
 * directory as the host's own path (the current directory under /tmp, a --rw or --ro path
 * there) is bound back at the same place. Then the calls the kernel resolves itself (chdir,
 * exec, getcwd, an O_PATH open, a unix bind) see the same private directory as the calls the
 * supervisor emulates in the view.
 *
 * The namespace is made by a throwaway child before the supervisor enters its Landlock
 * domain (under which mount(2) is refused), inside the user namespace of the private IPC
 * namespace when stockade is not root; the shim joins it with setns.
 */
#ifndef STOCKADE_MNTNS_H
#define STOCKADE_MNTNS_H

#include "shim/ipcns.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The most mounts a namespace is made with. */
#define MNT_BINDS_MAX 192

/* One bind mount: the host directory `source` at `target` (a sandbox path). The flags come
 * first and the paths after, each used to its NUL only: mnt_bind_copy touches what is used,
 * not the 16 KiB of the whole (a page fault each 4 KiB: ~16 µs on some VMs). */
struct mnt_bind {
        bool make_target; /* create the target directory first (a bind-back inside a
                             private directory, whose content the supervisor made) */
        /* A remapped mount (--ro/--rw HOST:SANDBOX; a directory or a regular file): the
         * target is opened without following a symlink on the way (a host symlink swapped in
         * cannot move it), and with
         * `rdonly` the bind and every mount beneath it are made read-only
         * (mount_setattr, Linux 5.12), for the program and the supervisor alike. */
        bool remap, rdonly;
        /* Instead of a bind: an overlayfs at `target`, `source` its lower, with `upper` and
         * `work` directories (a copy-on-write mount, supervisor/cow.h), `userxattr`. */
        bool overlay;
        /* Instead of a bind: `target` (no source), a hidden path beneath a copy-on-write
         * mount, covered so that the kernel has nothing there to give whatever call reaches
         * it: a directory by an empty read-only tmpfs of mode 000, any other file but a
         * symlink by /dev/null bound read-only. Gone or a symlink: left as it is. */
        bool mask;
        bool optional; /* a mask whose failure does not fail the run (not beneath cow) */
        /* Instead of a bind of a directory: the regular file `source` bound read-only at
         * `target`, a file, following its symlinks (the view's resolv.conf under --fast's
         * kernel reads). */
        bool file;
        /* Instead of a bind (no source, no target): every mount of the namespace made
         * nodev, but /dev and /dev/pts themselves (--fast's kernel reads: a device node
         * anywhere else cannot be opened). Last, after every other mount. */
        bool nodev;
        /* An overlay's: what `upper` and `work` must be (st_dev, st_ino), checked on what
         * their paths open: the session store may be written by another run's program
         * (supervisor/cow.c). Before `target`: copied with the flags (mnt_bind_copy). */
        unsigned long long upper_dev, upper_ino, work_dev, work_ino;
        /* What `source` must be (st_dev, st_ino; unchecked while both are 0): the directory
         * or file the view opened for it (mnt_bind_pin), checked on what its path opens in
         * the maker, so that a source swapped meanwhile (renamed away, a symlink put at its
         * path by a program that may write its parent) is an error, not another tree bound
         * where the view thinks its own is. */
        unsigned long long source_dev, source_ino;
        char target[PATH_MAX];
        char source[PATH_MAX];
        char upper[PATH_MAX];
        char work[PATH_MAX];
};

/* b->source_dev and source_ino from the open `fd` of its source (a no-op for fd < 0). */
void mnt_bind_pin(struct mnt_bind *b, int fd);

/* *to = *from, the paths copied to their NUL. */
void mnt_bind_copy(struct mnt_bind *to, const struct mnt_bind *from);

/*
 * In a throwaway child: with `userns`, a user namespace mapping our ids to themselves and an
 * IPC namespace in it (ipcns.h); with `net`, a network namespace (netns.h); then a mount
 * namespace, every mount made private, and the binds in order; with `pid` (--fast), a pid
 * namespace and its init with a procfs at /proc (shim/pidns.h), which needs a mount
 * namespace even without binds. ns_start forks the child and returns at once (*mk holds it;
 * the caller goes on while the child works), ns_finish waits for its answer and keeps the
 * namespaces by fd: fds[0] user, fds[1] ipc (-1 without `userns`), fds[2] mnt (-1 without
 * binds or `pid`), fds[3] net (-1 without `net`); and for each bind, target_fds[i], an
 * O_PATH fd of its target as seen inside (through /proc/CHILD/root), so that the supervisor
 * resolves in the very directories the sandbox sees; and *root_fd, the namespace's root (-1
 * without a mount namespace); with `pid`, *pns. The child is then killed and reaped. Both
 * take the same arguments (the binds are read in the child from the copy the fork gave it).
 * The child ignores every signal but SIGKILL, and dies with us (PDEATHSIG) if ns_finish never
 * comes. Each returns 0 or -errno, with *step.
 */
struct ns_plan;
struct ns_maker {
        pid_t pid;
        int pipe;
        int cmd;              /* an early maker's "go" (ns_early), or -1 */
        struct ns_plan *plan; /* what ns_start hands an early maker, or NULL */
        bool net;             /* an early maker makes a network namespace */
        bool net_read;        /* ...and its answer has been read (ns_early_net) */
        bool building;        /* ns_start has been called: ns_finish's to wait for */
};
/* How making one namespace went: 0 or -errno, and the step that failed. */
struct ns_answer {
        int r;
        char why[156];
};
/* The sandbox's pid namespace, as ns_finish gives it (pid.init -1 and fds -1: none). */
struct ns_pid {
        pid_t init; /* its pid 1, our child (shim/pidns.h) */
        int ns;     /* the namespace, for the shim's setns */
        int proc;   /* O_PATH of the root of its procfs, mounted at /proc inside */
};
int ns_start(struct ns_maker *mk, bool userns, bool net, bool pid, const struct mnt_bind *binds,
             size_t n, const char **step);
int ns_finish(struct ns_maker *mk, bool userns, bool net, bool pid, const struct mnt_bind *binds,
              size_t n, int fds[4], int *target_fds, int *root_fd, struct ns_pid *pns,
              const char **step);
/* Kill and reap the child of ns_start or ns_early, if any (an error before ns_finish, or an
 * early maker not needed). */
void ns_abandon(struct ns_maker *mk);

/*
 * The maker forked early, as start-up's probe (supervisor/layers.c), which the filter and the
 * view wait for: it makes the IPC namespace `how` (IPC_NS_USERNS: with its user namespace and
 * the mapping; IPC_NS: a plain unshare, as root, which the shim makes again for itself) and
 * says how that went in *ipc (returned: 0 or -errno); with `net`, it then makes the network
 * namespace, whose answer ns_early_net reads later, while the view is computed. Alive and
 * answered, it waits for ns_start, which hands it the binds through memory shared before the
 * fork (one fork and one set of namespaces fewer than a probe and a maker: ~1 ms each on the
 * 2-core VM). A failed answer kills it (*mk is then empty, and ns_start forks a maker as
 * before). ns_start must then be given the namespaces the answers stand for: `userns` for
 * IPC_NS_USERNS, `net` only if ns_early_net said 0.
 */
int ns_early(struct ns_maker *mk, enum ipc_isolation how, bool net, struct ns_answer *ipc);
int ns_early_net(struct ns_maker *mk, struct ns_answer *net);

/* In the shim: join the mount namespace and go to `cwd` in it (setns resets the working
 * directory to the namespace's root). Returns 0 or -errno, with *step. */
int mntns_join(int mnt_fd, const char *cwd, const char **step);

#endif

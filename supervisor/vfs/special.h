/*
 * The sandbox's /proc and /dev: what a path beneath them shows, as a pure function of the
 * path and of a few facts the caller supplies (who is asking, which processes are the
 * sandbox's, which terminals are its). Nothing here opens anything.
 */
#ifndef STOCKADE_VFS_SPECIAL_H
#define STOCKADE_VFS_SPECIAL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct vfs_special_ctx {
        pid_t tgid; /* the caller's process ... */
        pid_t tid;  /* ... and thread: what "self" and "thread-self" name */
        /* Whether a process or thread of this number is the sandbox's, alive. */
        bool (*in_tree)(void *arg, pid_t pid);
        /* Whether /dev/pts/N is a terminal of the sandbox's (its own, or one it made). */
        bool (*pts_allowed)(void *arg, unsigned n);
        void *arg;
        /* The host directory behind the sandbox's /dev/shm (its own POSIX shared memory);
         * NULL: the host's /dev/shm. */
        const char *shm;
        /* Without a network namespace of its own, the sandbox's /proc/net and /proc/sys/net
         * are the host's, whose interfaces the view shows as lo alone: whether `name` is an
         * interface of the host other than lo (true when that cannot be told). NULL: the
         * sandbox has its own namespace, and those are its own. */
        bool (*host_iface)(void *arg, const char *name);
};

enum vfs_special_kind {
        VFS_SP_PROC, /* a host path beneath /proc: `host` ("/proc/1234/status") */
        VFS_SP_DEV,  /* a host path beneath /dev: `host` ("/dev/null") */
        VFS_SP_TTY,  /* /dev/tty: the caller's controlling terminal, not ours */
        VFS_SP_SHM,  /* beneath the sandbox's private /dev/shm: `host` is in ctx->shm */
};

struct vfs_special {
        enum vfs_special_kind kind;
        /* VFS_SP_PROC: the part of `host` below /proc/PID (""), for the links that only a
         * last component may follow: "fd/3", "exe", "cwd", "root", "ns/net", ... */
        bool process; /* the path is inside a process's directory */
        char host[PATH_MAX];
};

/*
 * Map `rest` — what follows /proc in a sandbox path, without the leading '/' ("" for /proc
 * itself) — onto the host's /proc: "self" and "thread-self" become the caller's numbers,
 * a number must be a process or thread of the sandbox's (ENOENT otherwise, as if it did not
 * exist), '.' and '..' are taken lexically and never climb above /proc. Everything else
 * (cpuinfo, meminfo, sys/...) is the host's. Returns 0 or -errno (ENOENT, ENAMETOOLONG).
 */
int vfs_proc_map(const char *rest, const struct vfs_special_ctx *ctx, struct vfs_special *out);

/*
 * Whether the host path `host` beneath /proc names a network interface that the view does
 * not show, or lies beneath one: where ctx->host_iface is set, NAME in
 * /proc/sys/net/X/conf/NAME and /proc/sys/net/X/neigh/NAME unless it is all, default or lo,
 * and in /proc/PID[/task/TID]/net/DIR/NAME (dev_snmp6/eth0, vlan/, bonding/) if it is an
 * interface of the host's other than lo. vfs_proc_map answers ENOENT for those.
 */
bool vfs_proc_net_hidden(const char *host, const struct vfs_special_ctx *ctx);
/* Whether a listing of the /proc directory `host` may hold names vfs_proc_net_hidden hides. */
bool vfs_proc_net_dir(const char *host);

/*
 * Map `rest` below /dev: null, zero, full, random, urandom, ptmx, pts/ptmx, shm (and beneath),
 * the sandbox's own terminals pts/N, tty (VFS_SP_TTY), and fd, fd/N, stdin, stdout, stderr
 * (through the /proc view of the caller). shm and beneath is ctx->shm (VFS_SP_SHM) when set.
 * Anything else does not exist (ENOENT).
 */
int vfs_dev_map(const char *rest, const struct vfs_special_ctx *ctx, struct vfs_special *out);

#endif

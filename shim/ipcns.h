/* The sandbox's private IPC namespace. SysV IPC objects (shm, sem, msg) belong to the IPC
 * namespace, not to a process: in the host's, a sandboxed program could attach to a host
 * process's segment. */
#ifndef STOCKADE_IPCNS_H
#define STOCKADE_IPCNS_H

#include <stddef.h>

/* How the sandbox is kept away from the host's SysV IPC objects. */
enum ipc_isolation {
        IPC_SHARED,    /* the host's namespace: the filter refuses SysV IPC (filter.h) */
        IPC_NS,        /* unshare(CLONE_NEWIPC), with the CAP_SYS_ADMIN we hold (root) */
        IPC_NS_USERNS, /* unshare(CLONE_NEWUSER | CLONE_NEWIPC), our uid and gid mapped to
                        * themselves: unprivileged, where the host allows user namespaces */
};

/* Move the calling process into a new IPC namespace as `how` says (IPC_SHARED: nothing).
 * Cannot be undone: only the shim and the probe's throwaway child call it. Returns 0, or
 * -errno with *step naming what failed. */
int ipcns_enter(enum ipc_isolation how, const char **step);

/*
 * IPC_NS_USERNS, made before the supervisor enters its Landlock domain (which grants no
 * write beneath /proc, where the uid and gid maps are): a throwaway child makes the user and
 * IPC namespaces and writes its maps, and fds[0] and fds[1] keep its user and IPC namespaces
 * once it is gone. Returns 0, or -errno with *step naming what failed.
 */
int ipcns_prepare(int fds[2], const char **step);
/* The shim joins the namespaces of ipcns_prepare (setns: user first, then IPC, whose owner
 * it is), and closes the fds. Returns 0, or -errno with *step naming what failed. */
int ipcns_join(int user_fd, int ipc_fd, const char **step);

/* "private IPC namespace", ... for `-v`. */
const char *ipcns_name(enum ipc_isolation how);

#endif

/* What runs in the child between fork() and execve(): it makes the process safe to hand to
 * the program, installs the filter and gives the listener to the supervisor. */
#ifndef STOCKADE_SHIM_H
#define STOCKADE_SHIM_H

#include "shim/ipcns.h"

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct limits;

struct shim_args {
        int sock;         /* socketpair end to the supervisor */
        pid_t supervisor; /* to detect that the parent died before PDEATHSIG */
        const struct limits *limits;
        const struct sock_fprog *prog;
        const char *path_var; /* the sandbox's PATH (NULL: the default) */
        char *const *argv;
        char *const *envp;
        int landlock_abi; /* enter a Landlock domain with this ABI; 0 = none */
        /* The Landlock domain to enter: a ruleset the supervisor built from its grants
         * (spawn.c), or -1. */
        int ruleset;
        enum ipc_isolation ipc; /* a private IPC namespace (the supervisor probed it) */
        int ns_user, ns_ipc;    /* IPC_NS_USERNS: the namespaces to join (ipcns_prepare) */
        int ns_mnt;             /* the mount namespace of the private directories, or -1
                                        (shim/mntns.h) */
        int ns_net;             /* the sandbox's network namespace (shim/netns.h), or -1 */
        int ns_pid;             /* --fast: its pid namespace (shim/pidns.h), or -1 */
        const char *cwd;        /* where to start, again, in that namespace */
        bool set_user;          /* become uid:gid (from root) */
        int tty_slave;          /* the sandbox's pty (tty.h), or -1; --tty never: its
                                        stdin pipe, or -1 */
        int tty_out;            /* --tty never: the pipe for its stdout and stderr */
        bool tty_pipes;         /* --tty never: pipes, no controlling terminal */
        const bool *tty_fds;    /* [3]: which of fds 0-2 become the slave (or pipe) */
        const int *pass_fds;    /* --pass-fd: fds that stay open */
        size_t n_pass_fds;
        uid_t uid;
        gid_t gid;
        uint64_t handoff_key; /* the 4th argument of the hand-off write (filter.h) */
};

/* At most this many --pass-fd. */
#define SHIM_MAX_PASS_FDS 64

/* Handoff message flags (the one byte that travels with the listener fd). */
enum {
        SHIM_WAIT_KILLABLE_RECV = 1 << 0,
        SHIM_IPC_NAMESPACE = 1 << 1, /* the sandbox has a private IPC namespace */
};

/* Never returns: execs the command or _exit()s with 125/126/127 after one line on stderr. */
_Noreturn void shim_run(const struct shim_args *a);

#endif

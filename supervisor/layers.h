/* Which protection layers this host offers, and which a run ended up using. */
#ifndef STOCKADE_LAYERS_H
#define STOCKADE_LAYERS_H

#include "shim/ipcns.h"
#include "shim/mntns.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct layers {
        bool user_notif;         /* SECCOMP_RET_USER_NOTIF */
        bool wait_killable_recv; /* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19) */
        bool sync_wake_up;       /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6) */
        bool ptrace;             /* PTRACE_SEIZE of the child worked */
        int landlock_abi;        /* 0 when absent */
        bool landlock_self;      /* the supervisor is inside the sandbox's rules (spawn.c) */
        bool user_namespaces;    /* an unprivileged process may unshare(CLONE_NEWUSER) */
        enum ipc_isolation ipc;  /* how the sandbox's SysV IPC is kept from the host's */
        bool mntns;              /* a mount namespace can be made (as root, or in the IPC
                                    namespace's user namespace): private /tmp, --tmp */
        bool netns;              /* a network namespace of the sandbox's own can be made (where
                                    the mount namespace can, and SO_NETNS_COOKIE tells where a
                                    socket lives: shim/netns.h); not with --net host */
        bool binder;             /* unix binds name the path as given (supervisor/binder.h) */
        char why_ptrace[128];    /* why ptrace is missing */
        char why_landlock[128];
        char why_userns[128];
        char why_ipc[512];   /* why there is no private IPC namespace */
        char why_netns[160]; /* why there is no network namespace */
        bool probe_net;      /* the network namespace's answer is still to be read */
};

/* Probe what can be known before the child exists: seccomp actions, Landlock, whether the
 * child can have a private IPC namespace (a fork tries it, since the filter that is built
 * before the fork depends on it: the namespaces' maker, kept in *keep where it succeeds,
 * shim/mntns.h) and, when `full`, user namespaces. With `net` (no --net host), the same child
 * then tries a network namespace: l->netns is known after layers_probe_net. The rest is
 * filled in by the spawn. */
void layers_probe(struct layers *l, bool full, bool net, struct ns_maker *keep);
/* The network namespace's answer (l->netns, why_netns); a maker whose network namespace
 * failed is killed (ns_abandon). Before l->netns is read; once. */
void layers_probe_net(struct layers *l, struct ns_maker *keep);
/* What to add to a message that a user namespace could not be had: where AppArmor restricts
 * them (Ubuntu 23.10+: the sysctl `path`, normally APPARMOR_USERNS_SYSCTL, reads 1), how to
 * give stockade its own (scripts/apparmor-userns.sh); else "". */
#define APPARMOR_USERNS_SYSCTL "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
const char *layers_userns_hint(const char *path);

/* True when STOCKADE_TEST_DISABLE names `layer` (tests simulate hosts without it). */
bool layers_test_disabled(const char *layer);
/* One line per layer: "  seccomp user notification: yes" or "no (why)". */
void layers_print(const struct layers *l, FILE *out);

#endif

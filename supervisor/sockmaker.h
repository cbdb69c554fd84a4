/*
 * The socket maker: a small process of the supervisor's in the sandbox's network namespace
 * (shim/netns.h), which makes sockets there and hands them over. A socket belongs to the
 * namespace of the process that made it, for good; bind, connect and listen then act in that
 * namespace whoever calls them. The supervisor, in the host's namespace, cannot join the
 * sandbox's (setns of a network namespace needs CAP_SYS_ADMIN over it, and an unprivileged
 * supervisor would have to join the user namespace first, which a threaded process cannot),
 * so it asks: its DNS server listens inside (supervisor/dns.h), and --publish connects
 * inside (supervisor/publish.h).
 *
 * The maker is our child, forked before the supervisor enters its Landlock domain and before
 * any thread: it joins the user namespace (when there is one) and the network namespace,
 * keeps nothing but its end of a socketpair, and answers each request (domain, type,
 * protocol) with an errno and, on success, the socket (SCM_RIGHTS). EOF ends it, and so
 * does our death (PDEATHSIG). The sandbox cannot reach it: it is outside the sandbox's
 * Landlock domain (ptrace and signals scoped), not dumpable, and its pid is not in the
 * sandbox's /proc view.
 *
 * Which namespace a socket is in is told by its netns cookie (SO_NETNS_COOKIE, 5.14), which
 * nobody can forge and no privilege guards: sockmaker_inside.
 */
#ifndef STOCKADE_SOCKMAKER_H
#define STOCKADE_SOCKMAKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sockmaker {
        int chan; /* our end, or -1 when there is no maker */
        pid_t pid;
        uint64_t cookie; /* the sandbox's network namespace */
        pthread_mutex_t lock;
        int diag; /* a NETLINK_SOCK_DIAG socket made inside (sockmaker_serves), or -1 */
        pthread_mutex_t diag_lock;
};

/* Fork the maker into the namespaces `user_fd` (-1: none, stockade is root), `net_fd` and
 * `mnt_fd` (-1: none), where it takes the command's ids (from root) and drops every
 * capability. The sandbox's mount namespace: a directory of /proc/sys/net it opens for the
 * program must lead, by `..`, into the sandbox's tree, never ours. Returns 0, or -errno with
 * *step naming what failed. */
int sockmaker_start(struct sockmaker *m, int user_fd, int net_fd, int mnt_fd, uid_t uid, gid_t gid,
                    const char **step);

/* A socket made inside, close-on-exec; its other flags as `type` says. Returns the fd or
 * -errno. Any thread. */
int sockmaker_socket(struct sockmaker *m, int domain, int type, int protocol);

/* `path` (/proc/sys/net or beneath it, no "..") opened by the maker, read-only and without
 * following a symlink, with `flags`' O_DIRECTORY, O_NONBLOCK and O_PATH: the sysctls of the
 * sandbox's network namespace, which a process there sees (the supervisor's own open would
 * show the host's interfaces). Returns the fd or -errno. */
int sockmaker_open_sysnet(struct sockmaker *m, const char *path, int flags);

/* Whether socket `fd` (ours) lives in the sandbox's network namespace. False without a maker
 * or when the kernel cannot tell. */
bool sockmaker_inside(const struct sockmaker *m, int fd);

/*
 * Whether a socket of the sandbox's network namespace would take what is sent to loopback
 * address `a` (IPv4 as ::ffff:a.b.c.d), port `port` (host order), with `protocol`
 * (IPPROTO_TCP: a listener; IPPROTO_UDP: a bound socket not connected elsewhere), as the
 * kernel finds it for an incoming packet (an exact sock_diag look-up: the address itself, a
 * wildcard, a dual-stack IPv6 socket, SO_REUSEPORT groups). 1 yes, 0 no, -errno when the
 * kernel cannot tell (no maker, no sock_diag). What it says can change the moment after:
 * callers decide so that either answer is safe (syscalls/net_common.c). Any thread.
 */
struct in6_addr;
int sockmaker_serves(struct sockmaker *m, int protocol, const struct in6_addr *a, uint16_t port);

/* Whether this kernel tells a socket's namespace (SO_NETNS_COOKIE). */
bool sockmaker_supported(void);

/* Tell the maker to end (it reads EOF) without closing our end, which a handler may still
 * be using (its request then fails): the teardown, which reaps the maker, need not find and
 * kill it. */
void sockmaker_end(struct sockmaker *m);
/* Close our end: the maker exits (reaped with the tree's teardown). */
void sockmaker_stop(struct sockmaker *m);

#endif

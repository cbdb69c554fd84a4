/*
 * What the network handlers share (syscalls/net_*.c): the program's socket taken into the
 * supervisor, the policy's verdict on a copied destination, unix socket destinations judged
 * against the hidden places, and calls performed with the program's rights.
 *
 * Every handler follows one line: take the socket (pidfd_getfd), copy what the call names in
 * memory ONCE, ID_VALID, decide on the copy, and perform the call on our copy of the socket
 * with our copy of the address. Nothing is ever answered CONTINUE after memory was read.
 */
#ifndef STOCKADE_SYSCALLS_NET_H
#define STOCKADE_SYSCALLS_NET_H

#include "supervisor/net/netpol.h"
#include "supervisor/notify.h"

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The program's socket, as the supervisor holds it. */
struct net_sock {
        int fd;         /* our copy (pidfd_getfd), or -1 */
        int domain;     /* SO_DOMAIN */
        int type;       /* SO_TYPE */
        int protocol;   /* SO_PROTOCOL */
        unsigned proto; /* NETPOL_TCP, NETPOL_UDP or NETPOL_OTHER */
};

/* Take fd `fd` of thread `tid` and learn what socket it is. Returns 0 or -errno (EBADF,
 * ENOTSOCK, ESRCH); s->fd is ours to close either way (-1 when not taken). */
int net_sock_take(pid_t tid, int fd, struct net_sock *s);

/* What net_judge_inet answers. */
enum {
        NET_ALLOWED = 0,
        NET_ANSWERED = 1, /* denied: the call has been answered (call_deny) */
        NET_VIA_HOST = 3, /* allowed out of the sandbox's network namespace: performed on a
                             socket of the host's (net_host_twin) put in the program's place */
};

/*
 * Judge the destination `addr` (len bytes, our copy) of `what` ("connect", "sendto", ...)
 * on an AF_INET/AF_INET6 socket. AF_UNSPEC is read as IPv4 when `unspec_is_v4` (sendto on
 * an IPv4 UDP socket takes it so); otherwise callers handle it before. Returns NET_ALLOWED,
 * NET_ANSWERED (denied with EACCES, said with -v, the rule in the trace), or -errno for an
 * address the kernel would refuse (EINVAL, EAFNOSUPPORT). In audit mode a denial is
 * reported and NET_ALLOWED returned: the caller performs the call on its copy.
 * `connection`: the call opens a connection (connect, MSG_FASTOPEN), counted against
 * --max-connections unless it goes to the sandbox's own loopback server.
 */
int net_judge_inet(struct supervisor *sup, struct call *call, const struct net_sock *s,
                   const void *addr, size_t len, const char *what, bool unspec_is_v4,
                   bool connection);

/*
 * A destination of 0.0.0.0 or :: (connect, sendto, sendmsg) rewritten, in our copy, to the
 * address the kernel would send to: for IPv4 the address the socket is bound to, 127.0.0.1
 * when it has none (ip_route_output_key_hash); for IPv6 ::1 (::ffff:127.0.0.1 on a socket
 * bound to an IPv4-mapped address). Before the judgement, so that what is judged is what the
 * call is performed with: a bind by another thread in between cannot move it. The port and
 * the rest stay. `unspec_is_v4`: an AF_UNSPEC name is an IPv4 one (a UDPv4 send).
 */
/* Close what a notifier thread keeps between calls (the last fdinfo file read): when it
 * ends. */
void net_thread_forget(void);

void net_any_to_reached(const struct net_sock *s, struct sockaddr_storage *addr, size_t len,
                        bool unspec_is_v4);

/*
 * With a network namespace of the sandbox's own (supervisor/sockmaker.h), a socket of the
 * sandbox's that is allowed out (NET_VIA_HOST) is replaced by a twin made in the host's
 * namespace: same domain, type and protocol, its file flags (O_NONBLOCK, O_ASYNC), and the
 * socket options the program changed (those of a table that act on the socket's protocol:
 * reuse, keepalive, linger, timeouts, TCP's and IP's usual ones, buffer sizes). Not carried:
 * a local address the program bound (the twin gets an ephemeral port of the host's), and what
 * another thread does on the old socket meanwhile. A datagram twin (UDP, ping) is born with
 * the socket filter that lets in only its peers, `dest` (len bytes, the call's destination)
 * the first (net_twin_new, supervisor/net/twin.h). net_host_twin returns the twin or -errno;
 * net_swap_to_host puts it at the call's fd number (ADDFD with SETFD, the caller's O_CLOEXEC
 * kept; the call's answer is then 0 unless the caller sets another) and makes it s->fd, the
 * old copy closed.
 */
int net_host_twin(struct supervisor *sup, const struct net_sock *s, const void *dest, size_t len);
int net_swap_to_host(struct supervisor *sup, struct call *call, struct net_sock *s, int twin);

/* The twins' filters (net_twin.c). net_twin_new: attach to datagram socket `fd` (a twin
 * being made for `s`) the filter letting in `dest` alone. net_twin_admit: an allowed send or
 * connect to `dest` on `s`, a socket of the host's namespace: if it carries a filter of ours
 * (a twin), `dest` is added to its peers before the call goes out; a socket without one (a
 * host socket handed in, --pass-fd) is left as it is. Both return 0 or -errno (the call then
 * fails: nothing is sent that could not be answered through the filter). */
int net_twin_new(int fd, const struct net_sock *s, const void *dest, size_t len);
int net_twin_admit(const struct net_sock *s, const void *dest, size_t len);

/* Whether fd `fd` of thread `tid` is close-on-exec (its fdinfo; the notifier thread keeps the
 * last one it opened, and reads it again when asked about the same thread and fd number). */
bool net_caller_cloexec(pid_t tid, int fd);

/* What net_dns_redirect answers besides NET_ANSWERED (a refusal, answered). */
enum {
        NET_DNS_NO = 0,      /* not the supervisor's nameserver: judge it as usual */
        NET_DNS_PERFORM = 2, /* the nameserver: the copy now names the server; perform it */
};
/*
 * A destination (our copy `sa`, *len bytes) of an AF_INET/AF_INET6 socket that is the
 * supervisor's nameserver (DNS_NS_ADDR:53, TCP or UDP) is rewritten to the supervisor's DNS
 * server (syscalls/net_dns.c); another port or protocol of that address is refused.
 */
int net_dns_redirect(struct supervisor *sup, struct call *call, const struct net_sock *s,
                     struct sockaddr_storage *sa, int *len);

/* Say a network verdict: -v for denials, -vv for every decision. */
void net_report(struct supervisor *sup, struct call *call, const char *what,
                const struct netpol_addr *a, unsigned proto, const struct netpol_verdict *v);

/* A unix destination, decided: `via` is what our copy of the socket is given instead of
 * the program's path ("/proc/self/fd/N" of the O_PATH fd judged), `target` that fd. */
struct net_unix_dest {
        int target; /* -1 when none */
        struct sockaddr_un via;
        socklen_t via_len;
};

/* The sandbox bound unix socket `sock` (our copy): a server of its own (net_unix_owner.c). */
void net_unix_remember(struct supervisor *sup, int sock);
/* Whether the listening socket bound to the socket file `target` (an O_PATH fd of it) is one
 * the sandbox bound: 1 (also when nothing listens there), -EACCES (a host's), or -errno. */
int net_unix_served_by_sandbox(struct supervisor *sup, int target);
/* Whether a datagram to the socket file `target` (an O_PATH fd of it) may go: 1 when the
 * socket bound there is one the sandbox bound, one the look-up does not find (none; or in
 * another network namespace: the sandbox's own, in its namespace, or a host's elsewhere, a
 * known gap), or one of the system's logging sockets (/dev/log, journald's); -EACCES for
 * another host's (sd_notify's, a daemon's); or -errno. */
int net_unix_dgram_ok(struct supervisor *sup, int target);
/* After a connect of the unix stream socket `sock`: whether its peer is a listener a live task
 * of the sandbox made listen (SO_PEERPIDFD, else SO_PEERCRED). 1 yes, 0 no, or -errno. */
int net_unix_peer_ours(struct supervisor *sup, int sock);

/* AF_UNIX address copy: 1 a pathname (copied into `path`, size >= sizeof(sun_path) + 1),
 * 0 abstract, -EINVAL as the kernel's unix_validate_addr. */
int net_unix_kind(const void *addr, int len, char *path);
/*
 * Judge a unix destination `path` (relative to `base`): opened O_PATH as the program, then
 * refused with EACCES when it lies in a hidden place (abstract names: EPERM, see
 * net_connect.c). Returns NET_ALLOWED with d filled, NET_ANSWERED, or -errno (ENOENT,
 * ELOOP, ...) for the caller to fail the call with.
 */
int net_unix_judge(struct supervisor *sup, struct call *call, int base, const char *path,
                   struct net_unix_dest *d);

/* Run `fn(sock, arg)` with the program's identity (creds_enter_identity): its uid/gid for
 * SO_PEERCRED and SCM_CREDENTIALS, no capabilities (a root supervisor must not lend the
 * sandbox CAP_NET_BIND_SERVICE or CAP_NET_ADMIN for a bind or a control message).
 * Returns fn's result (>= 0 or -errno). */
long net_as_program(struct supervisor *sup, long (*fn)(int sock, void *arg), int sock, void *arg);
/* Whether a connect or a send on socket `s` (with `controllen` bytes of control messages)
 * needs net_as_program. An IPv4/IPv6 connect or send without control messages checks no
 * capability and records no identity of the caller (a socket's owner is its creator's,
 * fixed at socket()), so it runs as is: each switch of credentials costs several system
 * calls (measured: most of the added cost of a sendto as root). Unix sockets record the
 * caller's ids (SO_PEERCRED), control messages carry privileged options (SO_MARK,
 * SO_PRIORITY), and bind checks CAP_NET_BIND_SERVICE: those switch. */
bool net_needs_identity(const struct net_sock *s, size_t controllen);

/* The netlink view (net_netlink.c). Whether `s` (taken by net_sock_take) is a view socket,
 * whose bind, connect and sends are answered by the functions below, from the copies the
 * callers made; each answers the call (the sends return what the call returns). */
struct nlsock_id;
bool net_nlview_is(struct supervisor *sup, const struct net_sock *s, struct nlsock_id *id);

/* getsockname of fd `fd` (ours): 1 with *nl filled if it is a view socket, 0 if not, or
 * -errno. */
struct sockaddr_nl;
int net_nlview_name(struct supervisor *sup, int fd, struct sockaddr_nl *nl);

/* The interface ioctls (SIOCGIFCONF, SIOCGIFADDR, ...; net_ifreq.c): whether `cmd` is one,
 * and its handler, which answers from the view (lo alone), as NETLINK_ROUTE does. */
bool net_ifreq_cmd(unsigned long cmd);
int net_ifreq(struct supervisor *sup, struct call *call);
/* bind(fd, addr, addrlen): reads the address itself. */
void net_nlview_bind(struct supervisor *sup, struct call *call, const struct nlsock_id *id);
void net_nlview_connect(struct supervisor *sup, struct call *call, const struct nlsock_id *id,
                        const void *addr, size_t len);
/* A request (data, len) to `name` (namelen bytes, 0: none): the count, or -errno. */
long net_nlview_send(struct supervisor *sup, struct call *call, const struct nlsock_id *id,
                     const void *name, size_t namelen, const void *data, size_t len, int flags);

#endif

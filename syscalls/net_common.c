/* What the network handlers share (syscalls/net.h). */
#include "syscalls/net.h"
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/creds.h"
#include "supervisor/dns.h"
#include "supervisor/places.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

int net_sock_take(pid_t tid, int fd, struct net_sock *s)
{
        socklen_t len = sizeof(int);

        s->fd = tfd_take(tid, fd);
        if (s->fd < 0)
                return s->fd;
        /* Our copy is the very socket we act on later: these cannot change under us (the
         * program may swap what its fd NUMBER names, not what our copy is). */
        if (getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &s->domain, &len) < 0)
                return -errno; /* ENOTSOCK */
        len = sizeof(int);
        if (getsockopt(s->fd, SOL_SOCKET, SO_TYPE, &s->type, &len) < 0)
                return -errno;
        len = sizeof(int);
        if (getsockopt(s->fd, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &len) < 0)
                s->protocol = 0;
        if (s->type == SOCK_STREAM && (s->protocol == IPPROTO_TCP || s->protocol == IPPROTO_MPTCP))
                s->proto = NETPOL_TCP;
        else if (s->type == SOCK_DGRAM && s->protocol == IPPROTO_UDP)
                s->proto = NETPOL_UDP;
        else
                s->proto = NETPOL_OTHER; /* ping sockets, SCTP, UDP-Lite */
        return 0;
}

static const char *proto_name(unsigned proto)
{
        return proto == NETPOL_TCP ? "tcp" : proto == NETPOL_UDP ? "udp" : "other";
}

void net_report(struct supervisor *sup, struct call *call, const char *what,
                const struct netpol_addr *a, unsigned proto, const struct netpol_verdict *v)
{
        char addr[64], why[256];

        trace_call_rule(call, netpol_verdict_rule(v));
        if (sup->cfg->verbose < 2 && (v->allow || !sup->cfg->verbose))
                return;
        netpol_addr_str(a, addr, sizeof(addr));
        netpol_verdict_str(v, why, sizeof(why));
        fprintf(stderr, "stockade: net: pid %d: %s %s (%s): %s%s\n", (int)call->req->pid, what,
                addr, proto_name(proto), why,
                !v->allow && sup->fopts.audit ? " (audit mode: allowed)" : "");
}

/* --max-connections: count one more, or refuse it. Attempts count (a refused or timed-out
 * connect too): the limit bounds what the sandbox may try, and counting only successes would
 * need the answer of a non-blocking connect, which comes later. */
static bool over_limit(struct supervisor *sup, struct call *call, const struct netpol_addr *a)
{
        uint64_t max = sup->cfg->limits.max_connections;
        char addr[64];

        if (!max || atomic_fetch_add(&sup->n.connections, 1) < max)
                return false;
        trace_call_limit(call, "max-connections", max);
        if (sup->cfg->verbose) {
                netpol_addr_str(a, addr, sizeof(addr));
                fprintf(stderr,
                        "stockade: net: pid %d: connect to %s: --max-connections (%llu) "
                        "reached\n",
                        (int)call->req->pid, addr, (unsigned long long)max);
        }
        return true;
}

/* The IPv4 address the socket is bound to (also as an IPv4-mapped IPv6 one: *mapped), or 0. */
static uint32_t bound_v4(const struct net_sock *s, bool *mapped)
{
        struct sockaddr_storage b;
        socklen_t bl = sizeof(b);
        uint32_t a = 0;

        *mapped = false;
        if (getsockname(s->fd, (struct sockaddr *)&b, &bl) < 0)
                return 0;
        if (b.ss_family == AF_INET) {
                a = ((struct sockaddr_in *)&b)->sin_addr.s_addr;
        } else if (b.ss_family == AF_INET6 &&
                   IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&b)->sin6_addr)) {
                *mapped = true;
                memcpy(&a, ((struct sockaddr_in6 *)&b)->sin6_addr.s6_addr + 12, 4);
        }
        return a;
}

void net_any_to_reached(const struct net_sock *s, struct sockaddr_storage *addr, size_t len,
                        bool unspec_is_v4)
{
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
        uint32_t loop = htonl(INADDR_LOOPBACK), bound;
        bool mapped;

        /* Only a wildcard destination costs the getsockname (sendto is a hot path). */
        if ((addr->ss_family == AF_INET || (addr->ss_family == AF_UNSPEC && unspec_is_v4)) &&
            len >= sizeof(in)) {
                memcpy(&in, addr, sizeof(in));
                if (in.sin_addr.s_addr != htonl(INADDR_ANY))
                        return;
                bound = bound_v4(s, &mapped);
                in.sin_family = AF_INET;
                in.sin_addr.s_addr = bound ? bound : loop;
                memcpy(addr, &in, sizeof(in));
        } else if (addr->ss_family == AF_INET6 && len >= 24) {
                memcpy(&in6, addr, len < sizeof(in6) ? len : sizeof(in6));
                if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) {
                        bound_v4(s, &mapped);
                        if (mapped) {
                                memset(&in6.sin6_addr, 0, 10);
                                memset(in6.sin6_addr.s6_addr + 10, 0xff, 2);
                                memcpy(in6.sin6_addr.s6_addr + 12, &loop, 4);
                        } else {
                                in6.sin6_addr = in6addr_loopback;
                        }
                } else if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr) &&
                           memcmp(in6.sin6_addr.s6_addr + 12, &(uint32_t){0}, 4) == 0) {
                        bound = bound_v4(s, &mapped);
                        memcpy(in6.sin6_addr.s6_addr + 12, bound ? &bound : &loop, 4);
                } else {
                        return;
                }
                memcpy(addr, &in6, len < sizeof(in6) ? len : sizeof(in6));
        }
}

/*
 * Whether a loopback destination `a` that an allow rule names (the host's service) is served
 * by the sandbox itself, in its namespace: a TCP listener, a bound UDP socket, on that address
 * (or a wildcard) and port. Natively there is one loopback, and a port there is either the
 * sandbox's server's or the host's, never both: with `--allow-net 127.0.0.1` the sandbox's
 * test suite still reaches the server it started. Decided on our copy of the address, from
 * the kernel's own look-up (sockmaker_serves), and performed on our copy of the socket like
 * any connect inside. Racing it is harmless: a server of the sandbox's that goes away before
 * the connect leaves a refused connect (nothing in the namespace listens), never the host;
 * one that comes after the look-up is missed and the host's service is reached, which the
 * rule allows, as natively a connect that came first would reach whoever held the port.
 * Another protocol (ping, SCTP) or a look-up that fails: the host's, as the rule says.
 */
static bool served_inside(struct supervisor *sup, const struct net_sock *s,
                          const struct netpol_addr *a)
{
        struct in6_addr in6;

        if (s->proto != NETPOL_TCP && s->proto != NETPOL_UDP)
                return false;
        memcpy(&in6, a->a, sizeof(in6));
        return sockmaker_serves(&sup->netns, s->proto == NETPOL_TCP ? IPPROTO_TCP : IPPROTO_UDP,
                                &in6, a->port) == 1;
}

int net_judge_inet(struct supervisor *sup, struct call *call, const struct net_sock *s,
                   const void *addr, size_t len, const char *what, bool unspec_is_v4,
                   bool connection)
{
        struct sockaddr_in v4;
        struct netpol_verdict v;
        struct netpol_addr a;
        struct netpol_names names;
        sa_family_t family = AF_UNSPEC;
        bool inside;
        int r;

        if (len >= sizeof(family))
                memcpy(&family, addr, sizeof(family));
        if (family == AF_UNSPEC && unspec_is_v4 && len >= sizeof(v4)) {
                /* udp_sendmsg reads an AF_UNSPEC destination as an IPv4 one. */
                memcpy(&v4, addr, sizeof(v4));
                v4.sin_family = AF_INET;
                addr = &v4;
        }
        r = netpol_addr_from(addr, len, &a);
        if (r < 0)
                return r;
        /* The names the supervisor's DNS handed this address out for: what name rules
         * match (an address never handed out matches only `*`, CIDR and address rules). */
        dns_names(sup, &a, &names);
        v = netpol_decide_named(&sup->cfg->net, &sup->net_own, s->proto, &a, &names);
        /* In the sandbox's network namespace, loopback is the sandbox's own: allowed, and
         * performed there, unless a rule names the address (then it means the host's, and
         * an allow goes out through a socket of the host's; a deny wins as always) and no
         * server of the sandbox's takes that address and port (served_inside). Any other
         * allowed destination goes out through the host's namespace too. */
        inside = sockmaker_inside(&sup->netns, s->fd);
        if (inside && netpol_classify(&a) == NETPOL_LOOPBACK && v.reason != NETPOL_BY_DENY &&
            (v.reason != NETPOL_BY_ALLOW || served_inside(sup, s, &a))) {
                v.allow = true;
                v.reason = NETPOL_BY_NETNS;
        }
        net_report(sup, call, what, &a, s->proto, &v);
        if (v.reason == NETPOL_BY_NETNS)
                return NET_ALLOWED;
        if (v.allow && !(connection && v.reason != NETPOL_BY_OWN && over_limit(sup, call, &a)))
                r = inside ? NET_VIA_HOST : NET_ALLOWED;
        else {
                /* EACCES, as Landlock answers a connect it refuses and as a broadcast without
                 * SO_BROADCAST fails: a policy refusal, not a server that is down
                 * (ECONNREFUSED would send clients into retries). */
                call_deny(sup, call, EACCES);
                /* Audit mode: call_deny reported and counted it and answered CONTINUE; the
                 * call is performed here instead, on our copy like an allowed one (its answer
                 * replaces the CONTINUE), so that nothing is re-read from the program's
                 * memory. */
                if (!sup->fopts.audit)
                        return NET_ANSWERED;
                r = inside && netpol_classify(&a) != NETPOL_LOOPBACK ? NET_VIA_HOST : NET_ALLOWED;
        }
        /* Out through a twin already (a socket of the host's namespace): its filter takes
         * this peer before the call sends to it, so that the answer gets in. */
        if (r == NET_ALLOWED && sup->netns.cookie && !inside) {
                int e = net_twin_admit(s, addr, len);

                if (e < 0)
                        return e;
        }
        return r;
}

/*
 * A socket option copied to the host's twin (net_host_twin) when it differs from the twin's
 * default, on the sockets whose behaviour it changes (`protos`: NETPOL_TCP, NETPOL_UDP). Each
 * is a getsockopt on every connect out of the namespace (~0.25 us each on the 2-core VM), so
 * those that change nothing on a protocol are not read there, and their getsockopt on the
 * twin reads the default: SO_BROADCAST and multicast only concern datagrams; keepalive,
 * linger, out-of-band data and SO_RCVLOWAT only streams (UDP's close and receive ignore
 * them). SO_PASSCRED (only unix and netlink sockets pass credentials) and
 * IP_BIND_ADDRESS_NO_PORT (only bind reads it, and a twin is never bound: net_bind.c) change
 * nothing on either and are not in the table.
 */
struct twin_opt {
        int level, name;
        unsigned protos;
};

#define TWIN_TCP  NETPOL_TCP
#define TWIN_UDP  NETPOL_UDP
#define TWIN_BOTH (NETPOL_TCP | NETPOL_UDP)

static const struct twin_opt twin_opts[] = {
        {SOL_SOCKET, SO_REUSEADDR, TWIN_BOTH},
        {SOL_SOCKET, SO_KEEPALIVE, TWIN_TCP},
        {SOL_SOCKET, SO_BROADCAST, TWIN_UDP},
        {SOL_SOCKET, SO_LINGER, TWIN_TCP},
        {SOL_SOCKET, SO_OOBINLINE, TWIN_TCP},
        {SOL_SOCKET, SO_RCVTIMEO_NEW, TWIN_BOTH},
        {SOL_SOCKET, SO_SNDTIMEO_NEW, TWIN_BOTH},
        {SOL_SOCKET, SO_PRIORITY, TWIN_BOTH},
        {SOL_SOCKET, SO_RCVLOWAT, TWIN_TCP},
        {SOL_SOCKET, SO_TIMESTAMP_NEW, TWIN_BOTH},
        {IPPROTO_TCP, TCP_NODELAY, TWIN_TCP},
        {IPPROTO_TCP, TCP_MAXSEG, TWIN_TCP},
        {IPPROTO_TCP, TCP_KEEPIDLE, TWIN_TCP},
        {IPPROTO_TCP, TCP_KEEPINTVL, TWIN_TCP},
        {IPPROTO_TCP, TCP_KEEPCNT, TWIN_TCP},
        {IPPROTO_TCP, TCP_SYNCNT, TWIN_TCP},
        {IPPROTO_TCP, TCP_USER_TIMEOUT, TWIN_TCP},
        {IPPROTO_TCP, TCP_NOTSENT_LOWAT, TWIN_TCP},
        {IPPROTO_TCP, TCP_FASTOPEN_CONNECT, TWIN_TCP},
        {IPPROTO_TCP, TCP_CONGESTION, TWIN_TCP},
        {IPPROTO_TCP, TCP_QUICKACK, TWIN_TCP},
        {IPPROTO_IP, IP_TOS, TWIN_BOTH},
        {IPPROTO_IP, IP_TTL, TWIN_BOTH},
        {IPPROTO_IP, IP_RECVERR, TWIN_BOTH},
        /* TCP too: the error queue's timestamps carry these control messages. */
        {IPPROTO_IP, IP_PKTINFO, TWIN_BOTH},
        {IPPROTO_IP, IP_RECVTOS, TWIN_BOTH},
        {IPPROTO_IP, IP_RECVTTL, TWIN_BOTH},
        {IPPROTO_IP, IP_MTU_DISCOVER, TWIN_BOTH},
        {IPPROTO_IP, IP_MULTICAST_TTL, TWIN_UDP},
        {IPPROTO_IP, IP_MULTICAST_LOOP, TWIN_UDP},
        /* The IPv6 ones on AF_INET6 sockets only. */
        {IPPROTO_IPV6, IPV6_V6ONLY, TWIN_BOTH},
        {IPPROTO_IPV6, IPV6_TCLASS, TWIN_BOTH},
        {IPPROTO_IPV6, IPV6_UNICAST_HOPS, TWIN_BOTH},
        {IPPROTO_IPV6, IPV6_RECVERR, TWIN_BOTH},
        /* TCP too: IPV6_2292PKTOPTIONS reads what these ask to keep. */
        {IPPROTO_IPV6, IPV6_RECVPKTINFO, TWIN_BOTH},
        {IPPROTO_IPV6, IPV6_MTU_DISCOVER, TWIN_BOTH},
        {IPPROTO_IPV6, IPV6_MULTICAST_HOPS, TWIN_UDP},
        {IPPROTO_IPV6, IPV6_MULTICAST_LOOP, TWIN_UDP},
};

/*
 * The fdinfo file of the last fd this notifier thread asked about, kept open: opening a /proc
 * file costs ~5 us on the 2-core VM, reading an open one again ~1.5 us, and a program that
 * connects in a loop asks about the same thread's same fd number each time. The file is the
 * fd NUMBER's of that very thread (each read looks the number up in the thread's fd table
 * again) and is bound to the thread, not to its tid: once the thread is gone a read fails,
 * and a tid reused meanwhile is opened afresh.
 */
static __thread int fdinfo_fd = -1;
static __thread pid_t fdinfo_tid;
static __thread int fdinfo_num;

void net_thread_forget(void)
{
        if (fdinfo_fd >= 0)
                close(fdinfo_fd);
        fdinfo_fd = -1;
}

/* The "flags:" of /proc/TID/fdinfo/FD (octal), or -1. */
static long fdinfo_flags(pid_t tid, int fd)
{
        char buf[256], *p;
        ssize_t n = -1;

        if (fdinfo_fd >= 0 && fdinfo_tid == tid && fdinfo_num == fd)
                n = pread(fdinfo_fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0) {
                if (fdinfo_fd >= 0)
                        close(fdinfo_fd);
                snprintf(buf, sizeof(buf), "/proc/%d/fdinfo/%d", (int)tid, fd);
                fdinfo_fd = open(buf, O_RDONLY | O_CLOEXEC);
                fdinfo_tid = tid;
                fdinfo_num = fd;
                n = fdinfo_fd < 0 ? -1 : pread(fdinfo_fd, buf, sizeof(buf) - 1, 0);
        }
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strstr(buf, "\nflags:");
        return p ? strtol(p + strlen("\nflags:"), NULL, 8) : -1;
}

bool net_caller_cloexec(pid_t tid, int fd)
{
        long flags = fdinfo_flags(tid, fd);

        return flags > 0 && (flags & O_CLOEXEC);
}

/* The buffer sizes of a socket the sandbox's namespace makes of this kind, before anything
 * set them: a size that differs was set by the program, and is copied (the namespace's
 * defaults need not be the host's: tcp_wmem is per namespace). */
static int inside_default(struct supervisor *sup, const struct net_sock *s, int name)
{
        static _Atomic int cache[2][2][2]; /* [v6][dgram][rcv], 0: not known yet */
        _Atomic int *c = &cache[s->domain == AF_INET6][s->type == SOCK_DGRAM][name == SO_RCVBUF];
        int v = atomic_load(c), fd;
        socklen_t n = sizeof(v);

        if (v)
                return v;
        fd = sockmaker_socket(&sup->netns, s->domain, s->type, s->protocol);
        if (fd < 0)
                return -1;
        if (getsockopt(fd, SOL_SOCKET, name, &v, &n) < 0)
                v = -1;
        close(fd);
        if (v > 0)
                atomic_store(c, v);
        return v;
}

#define N_TWIN_OPTS (sizeof(twin_opts) / sizeof(*twin_opts))

/* Whether option `o` applies to socket `s` (a getsockopt saved). */
static bool twin_opt_applies(const struct twin_opt *o, const struct net_sock *s)
{
        if (o->level == IPPROTO_IPV6 && s->domain != AF_INET6)
                return false;
        return (o->protos & s->proto) != 0;
}

/* The options of a fresh socket of the host's of s's kind, read once (they are the
 * namespace's defaults): each connect then reads only the program's socket. */
struct twin_defaults {
        bool known;
        bool ok[N_TWIN_OPTS];
        socklen_t len[N_TWIN_OPTS];
        char v[N_TWIN_OPTS][64];
};

static const struct twin_defaults *host_defaults(const struct net_sock *s, int fresh)
{
        static struct twin_defaults cache[2][2]; /* [v6][dgram] */
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        struct twin_defaults *d = &cache[s->domain == AF_INET6][s->type == SOCK_DGRAM];

        pthread_mutex_lock(&lock);
        if (!d->known) {
                for (size_t i = 0; i < N_TWIN_OPTS; i++) {
                        d->len[i] = sizeof(d->v[i]);
                        d->ok[i] = twin_opt_applies(&twin_opts[i], s) &&
                                   getsockopt(fresh, twin_opts[i].level, twin_opts[i].name, d->v[i],
                                              &d->len[i]) == 0;
                }
                d->known = true;
        }
        pthread_mutex_unlock(&lock);
        return d;
}

int net_host_twin(struct supervisor *sup, const struct net_sock *s, const void *dest, size_t len)
{
        int fd = socket(s->domain, s->type | SOCK_CLOEXEC, s->protocol), fl, r;
        const struct twin_defaults *d;

        if (fd < 0)
                return -errno;
        /* Before anything can reach it: a datagram twin hears its peers only. */
        r = net_twin_new(fd, s, dest, len);
        if (r < 0) {
                close(fd);
                return r;
        }
        fl = fcntl(s->fd, F_GETFL);
        if (fl >= 0 && (fl & (O_NONBLOCK | O_ASYNC)))
                fcntl(fd, F_SETFL, fl & (O_NONBLOCK | O_ASYNC));
        d = s->proto == NETPOL_OTHER ? NULL : host_defaults(s, fd);
        for (size_t i = 0; d && i < N_TWIN_OPTS; i++) {
                const struct twin_opt *o = &twin_opts[i];
                char have[64];
                socklen_t n = sizeof(have);

                if (!d->ok[i] || getsockopt(s->fd, o->level, o->name, have, &n) < 0 ||
                    (n == d->len[i] && memcmp(have, d->v[i], n) == 0))
                        continue;
                (void)setsockopt(fd, o->level, o->name, have, n);
        }
        for (int i = 0; i < 2; i++) {
                int name = i ? SO_RCVBUF : SO_SNDBUF, v;
                socklen_t n = sizeof(v);

                if (getsockopt(s->fd, SOL_SOCKET, name, &v, &n) == 0 &&
                    v != inside_default(sup, s, name)) {
                        v /= 2; /* the kernel doubles what it is given */
                        (void)setsockopt(fd, SOL_SOCKET, name, &v, sizeof(v));
                }
        }
        return fd;
}

int net_swap_to_host(struct supervisor *sup, struct call *call, struct net_sock *s, int twin)
{
        int fd = (int)call->req->data.args[0];
        int r = call_replace_fd(sup, call, twin, fd, net_caller_cloexec((pid_t)call->req->pid, fd));
        if (r < 0)
                return r;
        close(s->fd);
        s->fd = twin;
        return 0;
}

int net_unix_kind(const void *addr, int len, char *path)
{
        const struct sockaddr_un *sun = addr;
        size_t max;

        if (len > (int)sizeof(struct sockaddr_un) ||
            len <= (int)offsetof(struct sockaddr_un, sun_path))
                return -EINVAL;
        if (sun->sun_path[0] == '\0')
                return 0;
        /* The kernel ends the name at addrlen (or at the first NUL before it). */
        max = (size_t)len - offsetof(struct sockaddr_un, sun_path);
        memcpy(path, sun->sun_path, max);
        path[max] = '\0';
        return 1;
}

/* Open the socket file `path` names, as the program would reach it. Returns the O_PATH fd
 * or -errno (ENOENT, EACCES, ELOOP for a magic link such as /proc/self/cwd/...). Where a
 * copy-on-write mount is merged (fs_cow.h) the kernel's walk would find the lower alone, not
 * a socket the run bound (in the upper): the view finds it, as it does for stat. */
static int open_path(struct supervisor *sup, pid_t tid, int base, const char *path)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        struct creds_saved saved;
        uint64_t resolve = how.resolve;
        int fd, r;

        if (fs_cow_any(sup))
                return fs_look_find(sup, tid, base, path, 0);
        r = creds_enter(sup->cfg, &saved);
        if (r < 0)
                return r;
        if (base == AT_FDCWD) /* in the sandbox's mount namespace, if it has one */
                base = fs_abs_base(sup, &resolve);
        how.resolve = resolve;
        fd = sys_openat2(base, path, &how);
        r = fd < 0 ? -errno : fd;
        creds_leave(&saved);
        return r;
}

/* A socket the run bound on a merged copy-on-write mount lies in the session's upper, beneath
 * the state directory that the places hide from every other way in: the view's walk found it
 * (open_path), and its sandbox path is what the view must show. */
static bool in_merged_upper(const struct supervisor *sup, int fd)
{
        const struct vfs_mount *m;
        char path[PATH_MAX];

        return fs_cow_any(sup) && fs_cow_where(sup, fd, &m, path) == 2 &&
               fs_view_shows_path(sup, path);
}

int net_unix_judge(struct supervisor *sup, struct call *call, int base, const char *path,
                   struct net_unix_dest *d)
{
        int target = open_path(sup, (pid_t)call->req->pid, base, path), r;

        d->target = -1;
        if (target < 0)
                return target;
        r = places_hidden(&sup->places, target);
        if (r != 0 && in_merged_upper(sup, target))
                r = 0;
        if (r != 0) {
                /* Hidden (or not judgeable: the same answer). */
                close(target);
                trace_call_rule(call, "unix socket in a hidden place");
                call_deny(sup, call, EACCES);
                return NET_ANSWERED;
        }
        d->target = target;
        memset(&d->via, 0, sizeof(d->via));
        d->via.sun_family = AF_UNIX;
        snprintf(d->via.sun_path, sizeof(d->via.sun_path), "/proc/self/fd/%d", target);
        d->via_len =
                (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(d->via.sun_path) + 1);
        return NET_ALLOWED;
}

bool net_needs_identity(const struct net_sock *s, size_t controllen)
{
        return !(s->domain == AF_INET || s->domain == AF_INET6) || controllen > 0;
}

long net_as_program(struct supervisor *sup, long (*fn)(int sock, void *arg), int sock, void *arg)
{
        struct creds_saved saved;
        long r = creds_enter_identity(sup->cfg, &saved);

        if (r < 0)
                return r;
        r = fn(sock, arg);
        creds_leave(&saved);
        return r;
}

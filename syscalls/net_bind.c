/*
 * bind(2) (issue 8). For an AF_INET/AF_INET6 socket the address is copied once, judged, and
 * the supervisor binds its copy of the program's socket (pidfd_getfd) with that copy, with
 * the program's rights (no CAP_NET_BIND_SERVICE lent by a root supervisor). Then the port the
 * kernel gave (getsockname: an ephemeral port is known only now) is remembered when the
 * address covers loopback, so that the sandbox's own servers are reachable from inside under
 * the default policy (supervisor/net/netpol_own.c).
 *
 * What a bind may name:
 *   - a loopback address, or a wildcard (0.0.0.0, ::): allowed. A wildcard listens on the
 *     host's interfaces too: without a network namespace (issue 8 item 5) a server in the
 *     sandbox can be reached from outside. That is inbound, not a way out for the program,
 *     and refusing it would break most servers (python -m http.server binds ::).
 *   - another address of the host: only if an --allow-net rule (or --net host) covers it
 *     (EACCES otherwise): nothing else needs one, and a deny rule wins as always.
 *
 * Unix sockets: see bind_unix below (a pathname is made in the view, fs_path.c, and bound
 * with the path as given by the binder, supervisor/binder.h, where there is one). Other
 * families are answered CONTINUE without reading memory, decided by the family of the socket
 * the fd NAMED when we looked: a thread may swap another socket under that number before
 * the kernel runs the call, so a swapped-in inet socket is bound without our judgement. That
 * gains nothing: any local address binds as well through a wildcard, the kernel runs the
 * call with the program's (absent) capabilities, and an unremembered port only makes
 * connects to it refused (fail closed).
 */
#include "syscalls/net.h"
#include "supervisor/nlsock.h"
#include "supervisor/sockmaker.h"
#include "supervisor/sup.h"
#include "supervisor/tmem.h"
#include "syscalls/table.h"
#include "supervisor/util.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

struct bind_to {
        const struct sockaddr *sa;
        socklen_t len;
};

static long do_bind(int sock, void *arg)
{
        const struct bind_to *to = arg;

        return bind(sock, to->sa, to->len) < 0 ? -errno : 0;
}

/* Which loopback addresses a wildcard bind of this copy covers (NETPOL_ANY_*), 0 if none. */
static unsigned wildcard(const struct net_sock *s, const struct sockaddr_storage *ss, size_t len)
{
        int v6only = 0;
        socklen_t olen = sizeof(v6only);

        if (!netpol_sockaddr_is_any(ss, len))
                return 0;
        if (ss->ss_family == AF_INET)
                return NETPOL_ANY_V4;
        if (memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, &in6addr_any, 16) != 0)
                return NETPOL_ANY_V4; /* ::ffff:0.0.0.0 */
        if (getsockopt(s->fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &olen) < 0)
                v6only = 1;
        return NETPOL_ANY_V6 | (v6only ? 0 : NETPOL_ANY_V4);
}

/* Judge the copy. NET_ALLOWED, NET_ANSWERED or -errno. */
static int judge(struct supervisor *sup, struct call *call, const struct net_sock *s,
                 const struct sockaddr_storage *ss, size_t len)
{
        struct sockaddr_storage v4 = *ss;
        struct netpol_addr a;
        int r;

        if (ss->ss_family == AF_UNSPEC && s->domain == AF_INET)
                v4.ss_family = AF_INET; /* inet_bind takes AF_UNSPEC + INADDR_ANY as AF_INET */
        if (netpol_sockaddr_is_any(&v4, len))
                return NET_ALLOWED;
        r = netpol_addr_from(&v4, len, &a);
        if (r < 0)
                return r;
        if (netpol_classify(&a) == NETPOL_LOOPBACK)
                return NET_ALLOWED;
        return net_judge_inet(sup, call, s, &v4, len, "bind to", false, false);
}

/* Whether the port may be shared with a socket of someone else: SO_REUSEPORT (same uid),
 * or SO_REUSEADDR on UDP (two UDP sockets that both set it share a port; for TCP it does not
 * let a second socket bind a port that one listens on). The bind then proves nothing about
 * who serves the port: a host service that set the same option would be reachable. */
static bool shareable(const struct net_sock *s)
{
        int on = 0;
        socklen_t len = sizeof(on);

        if (getsockopt(s->fd, SOL_SOCKET, SO_REUSEPORT, &on, &len) < 0 || on)
                return true;
        len = sizeof(on);
        if (s->proto != NETPOL_TCP &&
            (getsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &on, &len) < 0 || on))
                return true;
        return false;
}

/* After a successful bind: remember the port if the sandbox may be its own client. */
static void remember(struct supervisor *sup, const struct net_sock *s,
                     const struct sockaddr_storage *ss, size_t len)
{
        struct sockaddr_storage got;
        socklen_t glen = sizeof(got);
        struct netpol_addr a;

        if (shareable(s))
                return; /* connects to it stay refused unless a rule allows them */
        if (getsockname(s->fd, (struct sockaddr *)&got, &glen) < 0 ||
            netpol_addr_from(&got, glen, &a) < 0)
                return;
        netpol_own_add(&sup->net_own, s->proto, &a, wildcard(s, ss, len));
}

/*
 * A unix socket: the address is copied once and the bind performed on our copy. A pathname
 * is made in the view like mknod (fs_unix_bind); an abstract name is the sandbox's own only
 * in its own network namespace (abstract names belong to the namespace of the socket), so
 * elsewhere it is refused with EPERM, as connecting to one is: a name bound in the host's
 * namespace could be one a host program connects to (an X display's, a D-Bus bus's), and
 * would receive what it sends. An autobind (the family alone) gets a name the kernel picks.
 * A bound socket is remembered as the sandbox's: its servers are reachable from inside
 * (net_unix_owner.c).
 */
static void bind_unix(struct supervisor *sup, struct call *call, struct net_sock *s, uint64_t uaddr,
                      int len)
{
        struct sockaddr_un a = {0};
        struct bind_to to = {.sa = (struct sockaddr *)&a, .len = (socklen_t)len};
        char path[sizeof(a.sun_path) + 1];
        int r = 0, kind = 0;

        if (len < (int)sizeof(sa_family_t) || len > (int)sizeof(a))
                r = -EINVAL;
        if (r == 0)
                r = tmem_read((pid_t)call->req->pid, uaddr, &a, (size_t)len);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r == 0 && a.sun_family != AF_UNIX)
                r = -EINVAL;
        if (r == 0 && len > (int)sizeof(sa_family_t)) {
                kind = net_unix_kind(&a, len, path);
                r = kind < 0 ? kind : 0;
        }
        if (r < 0) {
                call_fail(call, -r);
                return;
        }
        trace_call_mem(call, 1, &a, (size_t)len);
        if (len > (int)sizeof(sa_family_t) && kind == 0 && !sockmaker_inside(&sup->netns, s->fd)) {
                trace_call_rule(call, "abstract unix names are shared with the host");
                call_deny(sup, call, EPERM);
                if (!sup->fopts.audit)
                        return;
        }
        r = kind > 0 ? fs_unix_bind(sup, call, s->fd, path)
                     : (int)net_as_program(sup, do_bind, s->fd, &to);
        if (r == 0)
                net_unix_remember(sup, s->fd);
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
}

/* bind(fd, addr, addrlen) */
int net_bind(struct supervisor *sup, struct call *call)
{
        const __u64 *arg = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        int len = (int)arg[2];
        struct sockaddr_storage ss = {0};
        struct bind_to to = {.sa = (struct sockaddr *)&ss, .len = (socklen_t)len};
        struct net_sock s;
        struct nlsock_id id;
        bool inside;
        long r = net_sock_take(tid, (int)arg[0], &s);

        if (r >= 0 && net_nlview_is(sup, &s, &id)) {
                net_nlview_bind(sup, call, &id); /* a netlink view socket (net_netlink.c) */
                cleanup_closep(&s.fd);
                return 0;
        }
        if (r >= 0 && s.domain == AF_UNIX) {
                bind_unix(sup, call, &s, arg[1], len);
                cleanup_closep(&s.fd);
                return 0;
        }
        if (r >= 0 && s.domain != AF_INET && s.domain != AF_INET6) {
                /* Nothing was read: see above. */
                cleanup_closep(&s.fd);
                call_continue(call);
                return 0;
        }
        if (r >= 0 && (len < 0 || len > (int)sizeof(ss)))
                r = -EINVAL;
        if (r >= 0)
                r = tmem_read(tid, arg[1], &ss, (size_t)len);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        inside = r >= 0 && sockmaker_inside(&sup->netns, s.fd);
        if (r >= 0) {
                trace_call_mem(call, 1, &ss, (size_t)len);
                /* In the sandbox's own network namespace any address binds as the kernel
                 * lets it: there is nothing of the host's there (only lo). A socket of the
                 * host's there (a twin, net.h, disconnected) would serve in the host's. */
                if (sup->netns.cookie && !inside) {
                        trace_call_rule(call, "net: servers only in the sandbox's namespace");
                        call_deny(sup, call, EACCES);
                        r = sup->fopts.audit ? NET_ALLOWED : NET_ANSWERED;
                } else {
                        r = inside ? NET_ALLOWED : judge(sup, call, &s, &ss, (size_t)len);
                }
        }
        if (r == NET_ALLOWED) {
                r = net_as_program(sup, do_bind, s.fd, &to);
                if (r == 0 && !inside)
                        remember(sup, &s, &ss, (size_t)len);
        }
        if (r < 0)
                call_fail(call, (int)-r);
        else if (r == 0)
                call_return(call, 0);
        cleanup_closep(&s.fd);
        return 0;
}

/*
 * listen(fd, backlog). With a network namespace of the sandbox's own, an IPv4/IPv6 socket of
 * the host's namespace (a twin the supervisor put in the program's place, net.h, once
 * disconnected or after a failed connect) must not become a server there: listen would bind
 * it to an ephemeral port on every host interface. Refused with EACCES unless it listens
 * already (a socket passed in on purpose, listen called again).
 *
 * Every listen is then performed on our copy, unix ones included: answered CONTINUE, the
 * call would look the fd number up again, and another thread may have put a twin under it
 * meanwhile (an outside review won that race). A unix listener so made records the
 * supervisor's pid for its peers (SO_PEERCRED, SO_PEERPIDFD; the program's uid and gid,
 * net_as_program), which net_unix_peer_ours takes as the sandbox's: no host program can make
 * a listener show our pid. Without the namespace nothing can be swapped in that matters: the
 * kernel's (CONTINUE, nothing read from memory).
 */
static long do_listen(int sock, void *arg)
{
        return listen(sock, *(const int *)arg) < 0 ? -errno : 0;
}

int net_listen(struct supervisor *sup, struct call *call)
{
        const __u64 *arg = call->req->data.args;
        int backlog = (int)arg[1], on = 0;
        socklen_t len = sizeof(on);
        struct net_sock s;
        long r;

        if (!sup->netns.cookie) {
                call_continue(call);
                return 0;
        }
        r = net_sock_take((pid_t)call->req->pid, (int)arg[0], &s);
        if (r >= 0 && tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0 && (s.domain == AF_INET || s.domain == AF_INET6) &&
            !sockmaker_inside(&sup->netns, s.fd) &&
            !(getsockopt(s.fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on)) {
                trace_call_rule(call, "net: servers only in the sandbox's namespace");
                call_deny(sup, call, EACCES);
                if (!sup->fopts.audit) {
                        cleanup_closep(&s.fd);
                        return 0;
                }
        }
        if (r >= 0)
                r = s.domain == AF_UNIX ? net_as_program(sup, do_listen, s.fd, &backlog)
                                        : do_listen(s.fd, &backlog);
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, 0);
        cleanup_closep(&s.fd);
        return 0;
}

/*
 * NETLINK_ROUTE, answered by the supervisor (issue 8, item 6): the interfaces the sandbox
 * sees are a view with lo alone (supervisor/net/nlview.h), carried by a unix socketpair
 * (supervisor/nlsock.h says why one, and how answers reach the program).
 *
 *   - socket(AF_NETLINK, SOCK_RAW|SOCK_DGRAM [|SOCK_CLOEXEC|SOCK_NONBLOCK], NETLINK_ROUTE)
 *     is the one netlink socket the filter notifies (filter.c); every other protocol stays
 *     refused in the kernel, as before. The program gets its end of a new pair (ADDFD).
 *   - bind, connect, sendto, sendmsg, sendmmsg on such a socket (the handlers of
 *     net_bind.c, net_connect.c, net_send.c ask net_nlview_is first) are answered here from
 *     the copies those handlers make: nothing is continued, nothing re-read.
 *   - getsockname is notified for every socket, since the program's end would answer
 *     AF_UNIX: a view socket is answered with its struct sockaddr_nl (net_nlview_name; the
 *     handler is net_twin.c's, which also hides a twin's local address).
 *   - recv, recvmsg, read, write, send without an address, poll, close stay in the kernel on
 *     the program's end.
 * What the program can tell: SO_DOMAIN, SO_TYPE and SO_PROTOCOL say AF_UNIX, SOCK_SEQPACKET
 * and 0; SOL_NETLINK options fail with ENOPROTOOPT; no multicast event ever comes.
 */
#include "syscalls/net.h"
#include "supervisor/net/nlview.h"
#include "supervisor/nlsock.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <unistd.h>

#define NLVIEW_RULE "net: netlink route, a view answered by the supervisor (lo only)"

/* socket(AF_NETLINK, type, NETLINK_ROUTE), sent here by the filter. */
int net_socket(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        int type = (int)a[1], kind = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK), end, r;
        struct nlsock_id id;

        /* The filter lets nothing else come (and --trace-level all decides the rest before
         * calling a handler); checked again on the registers all the same. */
        if ((int)a[0] != AF_NETLINK || (int)a[2] != NETLINK_ROUTE ||
            (kind != SOCK_RAW && kind != SOCK_DGRAM)) {
                call_fail(call, EAFNOSUPPORT);
                return 0;
        }
        trace_call_rule(call, NLVIEW_RULE);
        end = nlsock_create(&sup->nl, type & SOCK_NONBLOCK, &id);
        if (end < 0) {
                call_fail(call, -end);
                return 0;
        }
        r = call_return_fd(sup, call, end, type & SOCK_CLOEXEC);
        close(end);
        if (r < 0) {
                nlsock_abandon(&sup->nl, &id);
                call_fail(call, -r);
                return 0;
        }
        nlsock_installed(&sup->nl, &id);
        return 0;
}

bool net_nlview_is(struct supervisor *sup, const struct net_sock *s, struct nlsock_id *id)
{
        return s->fd >= 0 && s->domain == AF_UNIX && s->type == SOCK_SEQPACKET &&
               nlsock_lookup(&sup->nl, s->fd, id);
}

static void answer(struct call *call, long r)
{
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
}

void net_nlview_bind(struct supervisor *sup, struct call *call, const struct nlsock_id *id)
{
        const __u64 *arg = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        int len = (int)arg[2];
        struct sockaddr_storage ss = {0};
        uint32_t pid = 0, groups = 0;
        int r = len < 0 || len > (int)sizeof(ss) ? -EINVAL : 0;

        if (r == 0)
                r = tmem_read(tid, arg[1], &ss, (size_t)len);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r == 0) {
                trace_call_mem(call, 1, &ss, (size_t)len);
                trace_call_rule(call, NLVIEW_RULE);
                r = nlview_bind_addr(&ss, (size_t)len, &pid, &groups);
        }
        if (r == 0)
                r = nlsock_bind(&sup->nl, id, tid, pid, groups);
        answer(call, r);
}

void net_nlview_connect(struct supervisor *sup, struct call *call, const struct nlsock_id *id,
                        const void *addr, size_t len)
{
        int r = nlview_dest(addr, len, true);

        trace_call_rule(call, NLVIEW_RULE);
        if (r == 0)
                r = nlsock_connect(&sup->nl, id, (pid_t)call->req->pid);
        answer(call, r < 0 ? r : 0);
}

long net_nlview_send(struct supervisor *sup, struct call *call, const struct nlsock_id *id,
                     const void *name, size_t namelen, const void *data, size_t len, int flags)
{
        int r = nlview_dest(name, namelen, false);

        trace_call_rule(call, NLVIEW_RULE);
        if (flags & MSG_OOB)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;
        if (len > NLVIEW_REQ_MAX)
                return -EMSGSIZE;
        r = nlsock_request(&sup->nl, id, (pid_t)call->req->pid, data, len);
        return r < 0 ? r : (long)len;
}

int net_nlview_name(struct supervisor *sup, int fd, struct sockaddr_nl *nl)
{
        struct nlsock_id id;
        int r;

        if (!nlsock_any(&sup->nl) || !nlsock_lookup(&sup->nl, fd, &id))
                return 0;
        r = nlsock_name(&sup->nl, &id, nl);
        return r < 0 ? r : 1;
}

/*
 * The program's DNS traffic, redirected to the supervisor's server (supervisor/dns.h says
 * why this transport: no port 53 without privileges, and resolvers check where answers come
 * from).
 *
 *   - net_dns_redirect: a connect or a send to DNS_NS_ADDR:53 on a TCP or UDP socket gets
 *     the server's address instead, in our copy of the address; the call is then performed
 *     on our copy of the socket like any allowed one (never CONTINUE). A UDP socket so
 *     redirected is remembered by its sockfs inode. Any other port or protocol to
 *     DNS_NS_ADDR is refused: the address is there for DNS only.
 *   - net_recvfrom: notified only when the DNS is on and the caller asks for the source
 *     (filter.c). On a socket that was never redirected the call goes on in the kernel
 *     (CONTINUE): nothing of the caller's memory was read to decide it, only its fd, and
 *     the worst a swapped fd can do is show the program the server's real address. On a
 *     redirected one the supervisor receives on its copy and writes the datagram and the
 *     source into the caller's memory, the server's address rewritten to DNS_NS_ADDR:53.
 *     A blocking socket holds this notifier thread while it waits (the pool starts
 *     another), polled in slices so that the wait ends with the caller; SO_RCVTIMEO is not
 *     honoured. glibc and c-ares use non-blocking sockets.
 *
 * recvmsg and recvmmsg are not rewritten: no resolver we know of reads DNS answers with
 * them (musl and Go's resolver use recvfrom or read), and notifying every recvmsg would cost
 * every program a round trip.
 */
#include "syscalls/net.h"
#include "supervisor/dns.h"
#include "supervisor/sup.h"
#include "supervisor/sockmaker.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sys/time.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECV_MAX 65536 /* a DNS message over UDP is at most 65535 bytes */

static void ns_addr(struct netpol_addr *a)
{
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(DNS_PORT)};

        inet_pton(AF_INET, DNS_NS_ADDR, &in.sin_addr);
        netpol_addr_from(&in, sizeof(in), a);
}

/* `to` (a sockaddr_in, IPv4) in the family of a socket of `domain`, into *sa. */
static int put_addr(int domain, const struct sockaddr_in *to, struct sockaddr_storage *sa)
{
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = to->sin_port};

        memset(sa, 0, sizeof(*sa));
        if (domain == AF_INET) {
                memcpy(sa, to, sizeof(*to));
                return sizeof(*to);
        }
        in6.sin6_addr.s6_addr[10] = in6.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&in6.sin6_addr.s6_addr[12], &to->sin_addr, 4);
        memcpy(sa, &in6, sizeof(in6));
        return sizeof(in6);
}

int net_dns_redirect(struct supervisor *sup, struct call *call, const struct net_sock *s,
                     struct sockaddr_storage *sa, int *len)
{
        struct netpol_addr a, ns;
        struct stat st;

        if (!sup->dns || (s->domain != AF_INET && s->domain != AF_INET6) ||
            netpol_addr_from(sa, (size_t)*len, &a) < 0)
                return NET_DNS_NO;
        ns_addr(&ns);
        if (memcmp(a.a, ns.a, 16) != 0)
                return NET_DNS_NO;
        /* With a network namespace of the sandbox's own the server listens there: a socket
         * of the host's (one the sandbox was handed, or a twin, net.h) would reach whoever
         * took that port on the host's loopback. */
        if (a.port != DNS_PORT || s->proto == NETPOL_OTHER ||
            (sup->netns.cookie && !sockmaker_inside(&sup->netns, s->fd))) {
                trace_call_rule(call, "net: the supervisor's nameserver is for DNS only");
                call_deny(sup, call, EACCES);
                /* Audit mode: reported, then performed on our copy as it is. */
                return sup->fopts.audit ? NET_DNS_PERFORM : NET_ANSWERED;
        }
        *len = put_addr(s->domain, dns_server_addr(sup->dns, s->proto == NETPOL_TCP), sa);
        if (s->proto == NETPOL_UDP && fstat(s->fd, &st) == 0)
                dns_client_add(sup->dns, (unsigned long)st.st_ino);
        trace_call_rule(call, "net: DNS, answered by the supervisor");
        return NET_DNS_PERFORM;
}

/* The server's address as a source becomes the nameserver's, port 53. */
static void fix_source(struct supervisor *sup, struct sockaddr_storage *from, socklen_t fromlen)
{
        const struct sockaddr_in *srv = dns_server_addr(sup->dns, false);
        struct sockaddr_in ns = *srv;
        struct netpol_addr a, s;

        if (netpol_addr_from(from, fromlen, &a) < 0 ||
            netpol_addr_from(srv, sizeof(*srv), &s) < 0 || memcmp(a.a, s.a, 16) != 0 ||
            a.port != s.port)
                return;
        ns.sin_port = htons(DNS_PORT); /* the server is bound on DNS_NS_ADDR itself */
        put_addr(from->ss_family, &ns, from);
}

/*
 * recvfrom on our copy, waiting as the caller would: a blocking socket is polled in slices,
 * and the wait ends when the caller is gone (killed, timed out), so that this thread is not
 * stuck in the kernel at the end of the run. Returns the length or -errno.
 */
/* At most this many blocking receives wait in notifier threads at once: the pool is finite,
 * and a program that parks every thread in a receive with nothing to come would freeze its
 * whole run (an outside review did, with 64 threads). Beyond it: EAGAIN, as on a socket whose
 * SO_RCVTIMEO ran out, which resolvers retry. */
#define RECV_WAITERS_MAX 8
static atomic_int recv_waiters;

static ssize_t recv_once(int sock, void *buf, size_t len, int flags, struct sockaddr_storage *from,
                         socklen_t *fromlen)
{
        socklen_t l = *fromlen;
        ssize_t n = recvfrom(sock, buf, len, flags | MSG_DONTWAIT, (struct sockaddr *)from, &l);

        if (n < 0)
                return -errno;
        *fromlen = l;
        return n;
}

static ssize_t recv_waiting(struct supervisor *sup, struct call *call, int sock, void *buf,
                            size_t len, int flags, struct sockaddr_storage *from,
                            socklen_t *fromlen)
{
        bool nonblocking = (flags & MSG_DONTWAIT) || (fcntl(sock, F_GETFL) & O_NONBLOCK);
        struct timeval tv = {0};
        socklen_t tvlen = sizeof(tv);
        long waited_ms = 0, limit_ms = -1;
        ssize_t n = recv_once(sock, buf, len, flags, from, fromlen);

        if (n != -EAGAIN || nonblocking)
                return n;
        /* SO_RCVTIMEO, as the kernel would keep it. */
        if (getsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, &tvlen) == 0 &&
            (tv.tv_sec || tv.tv_usec))
                limit_ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
        if (atomic_fetch_add(&recv_waiters, 1) >= RECV_WAITERS_MAX) {
                atomic_fetch_sub(&recv_waiters, 1);
                return -EAGAIN;
        }
        for (;;) {
                struct pollfd p = {.fd = sock, .events = POLLIN};
                int slice = limit_ms >= 0 && limit_ms - waited_ms < 250
                                    ? (int)(limit_ms - waited_ms)
                                    : 250;

                poll(&p, 1, slice > 0 ? slice : 0);
                waited_ms += slice > 0 ? slice : 0;
                n = recv_once(sock, buf, len, flags, from, fromlen);
                if (n != -EAGAIN)
                        break;
                if (tmem_id_valid(sup->listener, call->req->id) < 0) {
                        n = -ESRCH;
                        break;
                }
                if (limit_ms >= 0 && waited_ms >= limit_ms)
                        break; /* -EAGAIN: the timeout ran out */
        }
        atomic_fetch_sub(&recv_waiters, 1);
        return n;
}

struct recv_call {
        pid_t tid;
        uint64_t ubuf, uaddr, ulen;
        size_t len;
        int flags;
};

/* Receive on our copy, write the data and the (rewritten) source into the caller. */
static long recv_emulated(struct supervisor *sup, struct call *call, int sock,
                          const struct recv_call *rc)
{
        struct sockaddr_storage from = {0};
        socklen_t fromlen = sizeof(from);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t want = rc->len > RECV_MAX ? RECV_MAX : rc->len;
        int ulen, r;
        ssize_t n;

        r = tmem_read(rc->tid, rc->ulen, &ulen, sizeof(ulen));
        if (r < 0)
                return r;
        if (ulen < 0)
                return -EINVAL;
        buf = xcalloc(1, want ? want : 1);
        n = recv_waiting(sup, call, sock, buf, want, rc->flags, &from, &fromlen);
        if (n < 0)
                return n;
        fix_source(sup, &from, fromlen);
        /* The caller must still be the one that asked before we write into it. */
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                return -ESRCH;
        if (n > 0 &&
            (r = tmem_write(rc->tid, rc->ubuf, buf, (size_t)n < want ? (size_t)n : want)) < 0)
                return r;
        if ((r = tmem_write(rc->tid, rc->uaddr, &from,
                            (size_t)ulen < fromlen ? (size_t)ulen : fromlen)) < 0)
                return r;
        ulen = (int)fromlen;
        r = tmem_write(rc->tid, rc->ulen, &ulen, sizeof(ulen));
        return r < 0 ? r : n;
}

/* recvfrom(fd, buf, len, flags, src_addr, addrlen), src_addr not NULL (filter.c). */
int net_recvfrom(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct recv_call rc = {.tid = (pid_t)call->req->pid,
                               .ubuf = a[1],
                               .len = (size_t)a[2],
                               .flags = (int)a[3],
                               .uaddr = a[4],
                               .ulen = a[5]};
        int sock = sup->dns ? tfd_take(rc.tid, (int)a[0]) : -1;
        struct stat st;
        long r;

        if (sock < 0 || fstat(sock, &st) < 0 ||
            !dns_client_has(sup->dns, (unsigned long)st.st_ino)) {
                if (sock >= 0)
                        close(sock);
                call_continue(call); /* not a redirected socket: the kernel's call */
                return 0;
        }
        r = recv_emulated(sup, call, sock, &rc);
        close(sock);
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
        return 0;
}

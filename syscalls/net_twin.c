/*
 * The twins' two faces (issue 8; supervisor/net/twin.h says what a twin lets in and shows,
 * and why).
 *
 *   - Ingress: a datagram twin is born with a socket filter that lets in its first peer
 *     only (net_twin_new, from net_host_twin), and every later allowed send or connect on
 *     it adds its destination before it goes out (net_twin_admit, from net_judge_inet). The
 *     peers live in the filter itself, read back with SO_GET_FILTER: no table to keep in
 *     step with sockets that the program closes, dups and passes around. A socket of the
 *     host's namespace without a filter of ours was handed in (--pass-fd): not a twin, left
 *     as it is.
 *   - The filter stays ours: setsockopt of SO_ATTACH_FILTER, SO_DETACH_FILTER,
 *     SO_LOCK_FILTER, SO_ATTACH_BPF and the SO_*_REUSEPORT_* filters is notified whenever
 *     twins can exist (filter.c, W_TWINS) and answered here: EPERM on a socket of the host's
 *     namespace; on the sandbox's own sockets it is performed on our copy with the copied
 *     value (a filter program, a BPF fd taken from the caller), never continued: a thread
 *     could put a twin under the number between our look and the kernel's.
 *   - getsockname is notified for every socket (the netlink view needs it). Where twins can
 *     exist it is performed on our copy and the answer written into the caller's memory, a
 *     local address of the host's hidden (twin_local_name): continued, the kernel would look
 *     the fd number up again, and a dup2 from another thread swaps a twin in under it at
 *     will. Without a namespace the program's sockets are the host's: under a policy that
 *     lets something out the same is done for them. Elsewhere (a policy that lets nothing
 *     out, --net host) only a view socket is answered, and the rest goes on in the kernel. getpeername stays in the
 *     kernel: a twin's peer is the address the program gave.
 */
#include "syscalls/net.h"
#include "supervisor/net/twin.h"
#include "supervisor/nlsock.h"
#include "supervisor/sockmaker.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif
#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif

/* ---- ingress ------------------------------------------------------------------------------- */

/* A twin that receives datagrams: UDP, and ICMP ping sockets (their peers by address). */
static bool datagram(const struct net_sock *s)
{
        return (s->domain == AF_INET || s->domain == AF_INET6) && s->type == SOCK_DGRAM;
}

/* The peer of a send to `dest`: AF_UNSPEC on an IPv4 datagram socket is IPv4, as
 * udp_sendmsg reads it (and net_judge_inet judged it). */
static int peer_of(const struct net_sock *s, const void *dest, size_t len, struct twin_peer *p)
{
        struct sockaddr_in v4;
        sa_family_t family = AF_UNSPEC;

        if (len >= sizeof(family))
                memcpy(&family, dest, sizeof(family));
        if (family == AF_UNSPEC && s->domain == AF_INET && len >= sizeof(v4)) {
                memcpy(&v4, dest, sizeof(v4));
                v4.sin_family = AF_INET;
                dest = &v4;
        }
        if (twin_peer_from(dest, len, s->proto != NETPOL_UDP, p) < 0)
                return -EINVAL;
        /* Port 0 is no peer (a send there fails; a connect there hears nothing natively):
         * as a peer it would be "any port" of the address, which an outside attack used to
         * let in every port of it. Ping sockets have no ports (any_port above). */
        return s->proto == NETPOL_UDP && p->port == 0 ? -EINVAL : 0;
}

/* Attach the filter of the n peers of v; when optmem_max is too small for them all (ENOMEM;
 * the old filter stays charged until the new one is in), the first half of them, and so on
 * down to the first, which is the peer being added. */
static int attach(int fd, const struct twin_peer *v, size_t n)
{
        struct sock_filter prog[TWIN_PROG_MAX];
        struct sock_fprog fp = {.filter = prog};

        for (;;) {
                fp.len = (unsigned short)twin_filter_build(v, n, prog);
                if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) == 0)
                        return 0;
                if (errno != ENOMEM || n <= 1)
                        return -errno;
                n = (n + 1) / 2;
        }
}

int net_twin_new(int fd, const struct net_sock *s, const void *dest, size_t len)
{
        struct twin_peer p;

        if (!datagram(s))
                return 0; /* a stream hears its peer alone */
        /* A destination we cannot read as a peer: no peer at all, nothing gets in. */
        return attach(fd, &p, dest && peer_of(s, dest, len, &p) == 0 ? 1 : 0);
}

/* The peers of the filter on `fd`: how many, or -ENOENT when it carries none of ours. */
static int read_peers(int fd, struct twin_peer *v)
{
        struct sock_filter prog[TWIN_PROG_MAX];
        socklen_t n = TWIN_PROG_MAX; /* SO_GET_FILTER counts instructions */
        int r;

        if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, prog, &n) < 0 || n == 0)
                return -ENOENT; /* none, or another's longer than ours ever is */
        r = twin_filter_parse(prog, n, v);
        return r < 0 ? -ENOENT : r;
}

/* The read, add and attach of two threads sending to two new peers on one twin must not
 * interleave (the second would attach without the first's peer). Held for a getsockopt and
 * a setsockopt, nothing that blocks. */
static pthread_mutex_t admit_lock = PTHREAD_MUTEX_INITIALIZER;

int net_twin_admit(const struct net_sock *s, const void *dest, size_t len)
{
        struct twin_peer v[TWIN_PEERS_MAX], p;
        size_t n;
        int r;

        if (!datagram(s) || peer_of(s, dest, len, &p) < 0)
                return 0;
        r = read_peers(s->fd, v);
        if (r < 0)
                return 0; /* not a twin: a socket handed in */
        n = (size_t)r;
        if (twin_peer_add(v, &n, &p) == 0)
                return 0; /* a peer it has already: the usual case, no lock taken */
        pthread_mutex_lock(&admit_lock);
        r = read_peers(s->fd, v); /* again: another thread may have added one meanwhile */
        if (r >= 0) {
                n = (size_t)r;
                r = twin_peer_add(v, &n, &p) ? attach(s->fd, v, n) : 0;
        } else {
                r = 0;
        }
        pthread_mutex_unlock(&admit_lock);
        return r < 0 ? r : 0;
}

/* ---- the filter options -------------------------------------------------------------------- */

/* The value of a filter option, copied. */
struct filter_opt {
        int name;
        union {
                int i;
                struct sock_fprog prog;
        } v;
        socklen_t len;
        struct sock_filter *insns; /* ours, for the programs */
        int bpf;                   /* ours, for SO_ATTACH_BPF and SO_ATTACH_REUSEPORT_EBPF */
};

static bool is_prog(int name)
{
        return name == SO_ATTACH_FILTER || name == SO_ATTACH_REUSEPORT_CBPF;
}

/* Copy optval (optlen bytes at uval) as the kernel reads it: an int for every option (EINVAL
 * below that), a struct sock_fprog and its instructions for the programs, the program's fd
 * for the eBPF ones, taken from the caller. Returns 0 or -errno. */
static int read_opt(pid_t tid, uint64_t uval, int optlen, struct filter_opt *o)
{
        int r;

        if (optlen < (int)sizeof(int))
                return -EINVAL;
        if (!is_prog(o->name)) {
                r = tmem_read(tid, uval, &o->v.i, sizeof(o->v.i));
                o->len = sizeof(o->v.i);
                if (r == 0 && (o->name == SO_ATTACH_BPF || o->name == SO_ATTACH_REUSEPORT_EBPF)) {
                        o->bpf = tfd_take(tid, o->v.i);
                        r = o->bpf < 0 ? (o->bpf == -ESRCH ? -ESRCH : -EBADF) : 0;
                        o->v.i = o->bpf;
                }
                return r;
        }
        if (optlen != (int)sizeof(o->v.prog))
                return -EINVAL;
        r = tmem_read(tid, uval, &o->v.prog, sizeof(o->v.prog));
        if (r < 0)
                return r;
        if (o->v.prog.len == 0 || o->v.prog.len > BPF_MAXINSNS || !o->v.prog.filter)
                return -EINVAL;
        o->insns = xcalloc(o->v.prog.len, sizeof(*o->insns));
        r = tmem_read(tid, (uint64_t)(uintptr_t)o->v.prog.filter, o->insns,
                      o->v.prog.len * sizeof(*o->insns));
        o->v.prog.filter = o->insns;
        o->len = sizeof(o->v.prog);
        return r;
}

static long do_setsockopt(int sock, void *arg)
{
        const struct filter_opt *o = arg;

        return setsockopt(sock, SOL_SOCKET, o->name, &o->v, o->len) < 0 ? -errno : 0;
}

/* setsockopt(fd, SOL_SOCKET, a filter option, optval, optlen): the filter sends only these
 * here (W_TWINS). */
int net_setsockopt(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        struct filter_opt o = {.name = (int)a[2], .bpf = -1};
        struct net_sock s;
        long r = net_sock_take(tid, (int)a[0], &s);

        if (r >= 0 && (int)a[1] != SOL_SOCKET)
                r = -EINVAL; /* not one the filter sends here */
        if (r >= 0)
                r = read_opt(tid, a[3], (int)a[4], &o);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0 && !sockmaker_inside(&sup->netns, s.fd)) {
                /* A twin's filter is the supervisor's record of its peers, and its wall. */
                trace_call_rule(call, "net: a socket of the host's keeps the supervisor's filter");
                call_deny(sup, call, EPERM);
                r = sup->fopts.audit ? 0 : 1;
        }
        if (r == 0)
                r = net_as_program(sup, do_setsockopt, s.fd, &o);
        if (r < 0)
                call_fail(call, (int)-r);
        else if (r == 0)
                call_return(call, 0);
        free(o.insns);
        cleanup_closep(&o.bpf);
        cleanup_closep(&s.fd);
        return 0;
}

/* ---- getsockname --------------------------------------------------------------------------- */

/* Write getsockname's answer (klen bytes at ss) as the kernel does: as much as *addrlen
 * holds, then the full length into *addrlen. One process_vm_writev for both: getsockname is
 * frequent (Go, Node and Java ask after every connect), and each system call here is
 * ~0.3-1 us on the 2-core VM. */
static int write_name(struct supervisor *sup, struct call *call, const void *ss, int klen)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        int ulen, r = tmem_read(tid, a[2], &ulen, sizeof(ulen));
        size_t n;
        struct iovec local[2], remote[2];
        ssize_t done;

        if (r < 0)
                return r;
        if (ulen < 0)
                return -EINVAL;
        n = ulen < klen ? (size_t)ulen : (size_t)klen;
        /* The caller must still be the one that asked before we write into it. */
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                return -ESRCH;
        local[0] = (struct iovec){.iov_base = (void *)ss, .iov_len = n};
        remote[0] = (struct iovec){.iov_base = (void *)(uintptr_t)a[1], .iov_len = n};
        local[1] = (struct iovec){.iov_base = &klen, .iov_len = sizeof(klen)};
        remote[1] = (struct iovec){.iov_base = (void *)(uintptr_t)a[2], .iov_len = sizeof(klen)};
        /* In the kernel's order: the name, then the length; a fault stops there. */
        done = process_vm_writev(tid, local + (n == 0), 2 - (n == 0), remote + (n == 0),
                                 2 - (n == 0), 0);
        if (done == (ssize_t)(n + sizeof(klen)))
                return 0;
        if (done >= 0 || errno == EFAULT || (errno != EPERM && errno != ENOSYS))
                return done >= 0 ? -EFAULT : -errno;
        r = tmem_write(tid, a[1], ss, n); /* no process_vm_writev here: /proc/PID/mem */
        return r < 0 ? r : tmem_write(tid, a[2], &klen, sizeof(klen));
}

/* getsockname(fd, addr, addrlen) */
int net_getsockname(struct supervisor *sup, struct call *call)
{
        struct sockaddr_storage ss;
        struct sockaddr_nl nl;
        socklen_t len = sizeof(ss);
        int fd = -1, r;

        /* Nothing to hide, and no view socket: the kernel's (nothing read, nothing taken).
         * Without a namespace of its own the program's sockets are the host's: where the
         * policy lets something out, a UDP connect (which sends nothing) made getsockname
         * show the host's address (an outside attack); so there too. */
        bool host_sockets = sup->host_sockets; /* spawn.c */

        if (!host_sockets && !nlsock_any(&sup->nl)) {
                call_continue(call);
                return 0;
        }
        fd = tfd_take((pid_t)call->req->pid, (int)call->req->data.args[0]);
        r = fd < 0 ? fd : net_nlview_name(sup, fd, &nl);
        if (r == 1) {
                trace_call_rule(call, "net: netlink route, a view answered by the supervisor");
                r = write_name(sup, call, &nl, sizeof(nl));
        } else if (r == 0 && !host_sockets) {
                /* A decision on the fd alone: the worst a swap can do is show the program
                 * the name of another of its sockets. */
                close(fd);
                call_continue(call);
                return 0;
        } else if (r == 0) {
                r = getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ? -errno : 0;
                /* The sandbox's own sockets have loopback addresses alone (its namespace has
                 * lo only): whatever else shows is the host's. */
                if (r == 0 && twin_local_name(&ss, len))
                        trace_call_rule(call, "net: a twin's local address, the host's, hidden");
                if (r == 0)
                        r = write_name(sup, call, &ss, (int)len);
        }
        cleanup_closep(&fd);
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
        return 0;
}

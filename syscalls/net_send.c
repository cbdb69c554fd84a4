/*
 * sendto, sendmsg, sendmmsg (issue 8): emulated, so that a destination is judged on the
 * supervisor's copy and the kernel sends to that very copy.
 *
 * sendto without a destination (dest_addr NULL: a connected socket, TCP, a connected UDP
 * socket) never leaves the kernel: the filter decides it on the register (syscalls/filter.c),
 * and the peer was judged when the socket was connected. sendmsg and sendmmsg keep their
 * destination in memory (msg_name), so every one comes here, with or without one.
 *
 * One message: take the socket (pidfd_getfd), copy the msghdr, the name, the payload (every
 * iovec, gathered into one buffer) and the control messages ONCE, take the caller's cwd for
 * a relative unix path, ID_VALID; judge the name's copy; then sendmsg() on our copy of the
 * socket with our copies, with the program's rights (net_as_program: no capabilities for
 * SO_MARK or SO_PRIORITY control messages, its uid for SCM_CREDENTIALS). Rules by family:
 *   - AF_INET/AF_INET6 socket: the policy judges the name (net_judge_inet), EACCES when
 *     denied. An AF_UNSPEC name means "none" except on an IPv4 datagram socket, where the
 *     kernel reads it as an IPv4 address, and so do we. MSG_FASTOPEN is a connect: its name
 *     is judged like any other. A TCP socket's name is judged too, although the kernel
 *     ignores it without MSG_FASTOPEN (stricter than needed, never looser).
 *   - AF_UNIX socket: a pathname is judged as connect judges it (hidden places: EACCES) and
 *     the message goes to the inode judged ("/proc/self/fd/N"); an abstract name: EPERM.
 *     This closes the gap of the hidden *datagram* socket.
 *   - any other family with a name: EACCES (fail closed; the sandbox cannot make one).
 * Control messages: SCM_RIGHTS carries fd NUMBERS, which mean nothing in the supervisor:
 * each is taken from the caller (pidfd_getfd) and replaced by our copy, walking the messages
 * exactly as the kernel's __scm_send does, so that no number of ours can ever be sent.
 * SCM_CREDENTIALS must name the program's own uid and gid when stockade is root (the kernel
 * would accept our real uid 0); its pid becomes ours, as SO_PEERCRED already shows. Source
 * routes (IP_RETOPTS, IPV6_RTHDR) are refused with EPERM: the packet would go first to an
 * address nobody judged.
 *
 * The payload is copied: at most SEND_MAX bytes a message. A stream socket then sends a
 * prefix and returns a short count (programs loop on short writes); a datagram larger than
 * that fails with EMSGSIZE, as it would (the kernel's own limits are smaller). Since the
 * supervisor sends, EPIPE would raise SIGPIPE in stockade: it always adds MSG_NOSIGNAL and,
 * unless the program asked for it too, sends SIGPIPE to the calling thread itself.
 */
#include "syscalls/net.h"
#include "supervisor/sockmaker.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define SEND_MAX    (256 * 1024) /* payload bytes copied per message */
#define CONTROL_MAX (64 * 1024)  /* control bytes (the kernel's optmem_max is about this) */
#define FDS_MAX     1024         /* fds in the SCM_RIGHTS of one message */

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD (1UL << 0)
#endif

/* One message, copied. */
struct out_msg {
        struct sockaddr_storage name;
        int namelen; /* 0: none */
        char *data;
        size_t len;
        char *control;
        size_t controllen;
        int fds[FDS_MAX]; /* ours, taken for SCM_RIGHTS; closed after the send */
        size_t n_fds;
        int base; /* the caller's cwd, for a relative unix path; -1 */
        struct net_unix_dest dest;
};

static void msg_free(struct out_msg *m)
{
        free(m->data);
        free(m->control);
        for (size_t i = 0; i < m->n_fds; i++)
                close(m->fds[i]);
        cleanup_closep(&m->base);
        cleanup_closep(&m->dest.target);
        m->base = m->dest.target = -1;
        m->data = m->control = NULL;
        m->n_fds = 0;
}

/* Copy the payload of `iov` (n entries, already copied) into m->data. */
static int read_payload(pid_t tid, const struct net_sock *s, const struct iovec *iov, size_t n,
                        struct out_msg *m)
{
        size_t total = 0, got = 0;

        for (size_t i = 0; i < n; i++) {
                if ((ssize_t)iov[i].iov_len < 0 || total + iov[i].iov_len < total)
                        return -EINVAL;
                total += iov[i].iov_len;
        }
        if (total > SEND_MAX) {
                if (s->type != SOCK_STREAM)
                        return -EMSGSIZE;
                total = SEND_MAX; /* a short write */
        }
        m->data = total ? xcalloc(1, total) : NULL;
        for (size_t i = 0; i < n && got < total; i++) {
                size_t chunk = iov[i].iov_len < total - got ? iov[i].iov_len : total - got;
                int r = tmem_read(tid, (uint64_t)(uintptr_t)iov[i].iov_base, m->data + got, chunk);

                if (r < 0)
                        return r;
                got += chunk;
        }
        m->len = total;
        return 0;
}

/* SCM_CREDENTIALS: only the program's own ids; the pid becomes ours (see above). */
static int fix_creds(struct supervisor *sup, struct cmsghdr *c)
{
        struct ucred cred;

        if (c->cmsg_len != CMSG_LEN(sizeof(cred)))
                return 0; /* the kernel refuses it */
        memcpy(&cred, CMSG_DATA(c), sizeof(cred));
        if (geteuid() == 0 && sup->cfg->set_user &&
            (cred.uid != sup->cfg->uid || cred.gid != sup->cfg->gid))
                return -EPERM;
        cred.pid = getpid();
        memcpy(CMSG_DATA(c), &cred, sizeof(cred));
        return 0;
}

/* Replace the fd numbers of every SCM_RIGHTS by our copies. The walk is the kernel's
 * (for_each_cmsghdr + CMSG_OK): a message it would process, we process; at the first one it
 * would refuse, it refuses the whole call, and we stop. */
static int translate_control(struct supervisor *sup, pid_t tid, struct out_msg *m)
{
        char *end = m->control + m->controllen;
        struct cmsghdr *c = m->controllen >= sizeof(*c) ? (struct cmsghdr *)m->control : NULL;

        while (c) {
                size_t off = (size_t)((char *)c - m->control), n;

                if (c->cmsg_len < sizeof(*c) || c->cmsg_len > m->controllen - off)
                        return 0; /* !CMSG_OK: the kernel fails the call with EINVAL */
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        n = (c->cmsg_len - sizeof(*c)) / sizeof(int);
                        for (size_t i = 0; i < n; i++) {
                                int fd, copy;

                                memcpy(&fd, (char *)c + sizeof(*c) + i * sizeof(int), sizeof(fd));
                                if (m->n_fds == FDS_MAX)
                                        return -ETOOMANYREFS;
                                copy = tfd_take(tid, fd);
                                if (copy < 0)
                                        return copy == -ESRCH ? -ESRCH : -EBADF;
                                m->fds[m->n_fds++] = copy;
                                memcpy((char *)c + sizeof(*c) + i * sizeof(int), &copy,
                                       sizeof(copy));
                        }
                } else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RETOPTS) ||
                           (c->cmsg_level == IPPROTO_IPV6 &&
                            (c->cmsg_type == IPV6_RTHDR || c->cmsg_type == IPV6_2292RTHDR))) {
                        /* Source routing: the packet would go to the route's first address,
                         * not to the destination judged (see filter.c's setsockopt rules). */
                        return -EPERM;
                } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                        int r = fix_creds(sup, c);

                        if (r < 0)
                                return r;
                }
                c = (struct cmsghdr *)((char *)c + CMSG_ALIGN(c->cmsg_len));
                if ((char *)(c + 1) > end || (char *)(c + 1) < m->control)
                        c = NULL;
        }
        return 0;
}

/* The name (len bytes at uname), and the cwd for a relative unix path. */
static int read_name(pid_t tid, const struct net_sock *s, uint64_t uname, int len,
                     struct out_msg *m)
{
        char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
        int r;

        if (!uname || len == 0)
                return 0;
        if (len < 0 || len > (int)sizeof(m->name))
                return -EINVAL;
        r = tmem_read(tid, uname, &m->name, (size_t)len);
        if (r < 0)
                return r;
        m->namelen = len;
        if (s->domain == AF_UNIX && m->name.ss_family == AF_UNIX &&
            net_unix_kind(&m->name, len, path) > 0 && path[0] != '/') {
                m->base = tfd_cwd(tid);
                if (m->base < 0)
                        return m->base;
        }
        return 0;
}

/* sendmsg's struct at `umsg`: name, iovecs, payload, control. */
static int read_msghdr(struct supervisor *sup, pid_t tid, const struct net_sock *s, uint64_t umsg,
                       struct out_msg *m)
{
        _cleanup_free_ struct iovec *iov = NULL;
        struct msghdr h;
        int r = tmem_read(tid, umsg, &h, sizeof(h));

        if (r < 0)
                return r;
        if ((int)h.msg_namelen > (int)sizeof(m->name))
                h.msg_namelen = sizeof(m->name); /* the kernel truncates it too */
        r = read_name(tid, s, (uint64_t)(uintptr_t)h.msg_name, (int)h.msg_namelen, m);
        if (r < 0)
                return r;
        if (h.msg_iovlen > UIO_MAXIOV)
                return -EMSGSIZE;
        if (h.msg_iovlen) {
                iov = xcalloc(h.msg_iovlen, sizeof(*iov));
                r = tmem_read(tid, (uint64_t)(uintptr_t)h.msg_iov, iov,
                              h.msg_iovlen * sizeof(*iov));
                if (r < 0)
                        return r;
        }
        r = read_payload(tid, s, iov, h.msg_iovlen, m);
        if (r < 0)
                return r;
        if (h.msg_controllen > INT_MAX || h.msg_controllen > CONTROL_MAX)
                return -ENOBUFS;
        if (h.msg_controllen) {
                m->control = xcalloc(1, h.msg_controllen);
                m->controllen = h.msg_controllen;
                r = tmem_read(tid, (uint64_t)(uintptr_t)h.msg_control, m->control, m->controllen);
                if (r < 0)
                        return r;
        }
        return translate_control(sup, tid, m);
}

/* Judge the name of the copy. NET_ALLOWED (m->name may now be a unix `via`), NET_ANSWERED,
 * or -errno. */
static int judge(struct supervisor *sup, struct call *call, const struct net_sock *s,
                 struct out_msg *m, int flags, const char *what)
{
        char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
        int kind, r;

        if (m->namelen == 0)
                return NET_ALLOWED;
        if (s->domain == AF_INET || s->domain == AF_INET6) {
                bool v4dgram = s->domain == AF_INET && s->type == SOCK_DGRAM;

                if (m->name.ss_family == AF_UNSPEC && !v4dgram)
                        return NET_ALLOWED; /* no destination: the connected peer */
                net_any_to_reached(s, &m->name, (size_t)m->namelen, v4dgram);
                r = net_dns_redirect(sup, call, s, &m->name, &m->namelen);
                if (r != NET_DNS_NO)
                        return r == NET_DNS_PERFORM ? NET_ALLOWED : r;
                return net_judge_inet(sup, call, s, &m->name, (size_t)m->namelen, what, v4dgram,
                                      s->proto == NETPOL_TCP && (flags & MSG_FASTOPEN));
        }
        if (s->domain != AF_UNIX) {
                trace_call_rule(call, "net: socket family not under the policy");
                call_deny(sup, call, EACCES);
                return NET_ANSWERED;
        }
        if (m->name.ss_family != AF_UNIX)
                return NET_ALLOWED; /* the kernel refuses it (EINVAL) */
        kind = net_unix_kind(&m->name, m->namelen, path);
        if (kind < 0)
                return kind;
        if (kind == 0 && sockmaker_inside(&sup->netns, s->fd))
                return NET_ALLOWED; /* the sandbox's own namespace: its own names only */
        if (kind == 0) {
                trace_call_rule(call, "abstract unix sockets are closed");
                call_deny(sup, call, EPERM);
                return NET_ANSWERED;
        }
        r = net_unix_judge(sup, call, m->base < 0 ? AT_FDCWD : m->base, path, &m->dest);
        /* A host service's datagram socket (sd_notify's, a daemon's): only the system's
         * logging sockets and the sandbox's own (net_unix_dgram_ok), as for a connect. */
        if (r == NET_ALLOWED && s->type == SOCK_DGRAM && sup->cfg->net.mode != NETPOL_MODE_HOST) {
                int ok = net_unix_dgram_ok(sup, m->dest.target); /* closed by the caller */

                if (ok == -EACCES) {
                        trace_call_rule(call, "a unix datagram socket bound outside the sandbox");
                        call_deny(sup, call, EACCES);
                        return NET_ANSWERED;
                }
                if (ok < 0)
                        return ok;
        }
        if (r == NET_ALLOWED) {
                memcpy(&m->name, &m->dest.via, m->dest.via_len);
                m->namelen = (int)m->dest.via_len;
        }
        return r;
}

struct send_args {
        struct out_msg *m;
        int flags;
        /* A unix message from root's supervisor for another uid: the program's credentials,
         * put first (do_send); its own, if any, judged by fix_creds, come after. */
        const struct ucred *creds;
};

static long do_send(int sock, void *arg)
{
        const struct send_args *a = arg;
        struct iovec iov = {.iov_base = a->m->data, .iov_len = a->m->len};
        struct msghdr h = {.msg_name = a->m->namelen ? &a->m->name : NULL,
                           .msg_namelen = (socklen_t)a->m->namelen,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = a->m->controllen ? a->m->control : NULL,
                           .msg_controllen = a->m->controllen};
        _cleanup_free_ char *control = NULL;
        ssize_t n;

        /* The kernel stamps a unix message with its sender's *real* ids, which are root's
         * (creds.h): to a listener that asks (SO_PASSCRED: journald, syslog, sd_notify) the
         * message must say the program's, so they go with it, as the program could send
         * them itself (the kernel takes them from a sender whose effective ids they are).
         * First, before the program's control messages: the kernel reads them in order, so
         * no message of the program's can reach over ours (a length that ran past its own
         * buffer into ours hid them: a review), and credentials of its own, which fix_creds
         * judged, come later and win, as a second SCM_CREDENTIALS does. */
        if (a->creds) {
                size_t head = CMSG_SPACE(sizeof(*a->creds));
                struct cmsghdr *c;

                control = xcalloc(1, head + a->m->controllen);
                c = (struct cmsghdr *)control;
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_CREDENTIALS;
                c->cmsg_len = CMSG_LEN(sizeof(*a->creds));
                memcpy(CMSG_DATA(c), a->creds, sizeof(*a->creds));
                if (a->m->controllen)
                        memcpy(control + head, a->m->control, a->m->controllen);
                h.msg_control = control;
                h.msg_controllen = head + a->m->controllen;
        }
        /* MSG_ZEROCOPY would let the kernel read our buffer after we free it (a NIC's DMA):
         * whatever the heap puts there next would be sent. Copied, it is sent as given; the
         * program gets no completion notification (MSG_ERRQUEUE) for it. */
        n = sendmsg(sock, &h, (a->flags & ~MSG_ZEROCOPY) | MSG_NOSIGNAL);
        return n < 0 ? -errno : (long)n;
}

/* The kernel would have sent SIGPIPE to the caller: do it, to that thread. */
static void sigpipe_caller(struct supervisor *sup, struct call *call)
{
        _cleanup_close_ int pidfd =
                (int)syscall(SYS_pidfd_open, (pid_t)call->req->pid, PIDFD_THREAD);

        if (pidfd < 0 || tmem_id_valid(sup->listener, call->req->id) < 0)
                return; /* gone, or a kernel without thread pidfds: EPIPE alone */
        syscall(SYS_pidfd_send_signal, pidfd, SIGPIPE, NULL, PIDFD_SIGNAL_THREAD);
}

/* Judge and send one copied message. Returns the result for the call (bytes sent or
 * -errno), and *answered when the judgement answered it (a denial). */
static long send_one(struct supervisor *sup, struct call *call, struct net_sock *s,
                     struct out_msg *m, int flags, const char *what, bool *answered)
{
        struct ucred creds = {.pid = getpid(), .uid = sup->cfg->uid, .gid = sup->cfg->gid};
        struct send_args a = {.m = m, .flags = flags};
        struct nlsock_id id;
        long r;

        if (s->domain == AF_UNIX && sup->cfg->set_user && geteuid() == 0)
                a.creds = &creds;

        *answered = false;
        if (net_nlview_is(sup, s, &id)) /* a netlink view socket: answered, not sent */
                return net_nlview_send(sup, call, &id, &m->name, (size_t)m->namelen, m->data,
                                       m->len, flags);
        r = judge(sup, call, s, m, flags, what);
        *answered = r == NET_ANSWERED;
        if (r == NET_VIA_HOST) {
                /* Out of the sandbox's network namespace: from now on the program's socket
                 * is a twin of the host's (net.h), and this message and the next go from it. */
                int twin = net_host_twin(sup, s, &m->name, (size_t)m->namelen);

                r = twin < 0 ? twin : net_swap_to_host(sup, call, s, twin);
                if (r < 0) {
                        if (twin >= 0)
                                close(twin);
                        return r;
                }
        }
        if (r != NET_ALLOWED)
                return r < 0 ? r : 0;
        r = net_needs_identity(s, m->controllen) ? net_as_program(sup, do_send, s->fd, &a)
                                                 : do_send(s->fd, &a);
        if (r == -EPIPE && !(flags & MSG_NOSIGNAL))
                sigpipe_caller(sup, call);
        return r;
}

static void answer(struct call *call, long r)
{
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
}

/* sendto(fd, buf, len, flags, dest_addr, addrlen), dest_addr not NULL (filter.c). */
int net_sendto(struct supervisor *sup, struct call *call)
{
        const __u64 *arg = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        struct out_msg m = {.base = -1, .dest.target = -1};
        struct iovec iov = {.iov_base = (void *)(uintptr_t)arg[1], .iov_len = (size_t)arg[2]};
        struct net_sock s;
        bool answered = false;
        long r = net_sock_take(tid, (int)arg[0], &s);

        if (iov.iov_len > INT_MAX)
                iov.iov_len = INT_MAX; /* as the kernel clamps it */
        if (r >= 0)
                r = read_name(tid, &s, arg[4], (int)arg[5], &m);
        if (r >= 0)
                r = read_payload(tid, &s, &iov, 1, &m);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0) {
                trace_call_mem(call, 4, &m.name, (size_t)m.namelen);
                r = send_one(sup, call, &s, &m, (int)arg[3], "sendto", &answered);
        }
        if (!answered)
                answer(call, r);
        msg_free(&m);
        cleanup_closep(&s.fd);
        return 0;
}

/* sendmsg(fd, msg, flags) */
int net_sendmsg(struct supervisor *sup, struct call *call)
{
        const __u64 *arg = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        struct out_msg *m = xcalloc(1, sizeof(*m));
        struct net_sock s;
        bool answered = false;
        long r = net_sock_take(tid, (int)arg[0], &s);

        m->base = m->dest.target = -1;
        if (r >= 0)
                r = read_msghdr(sup, tid, &s, arg[1], m);
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0)
                r = send_one(sup, call, &s, m, (int)arg[2], "sendmsg to", &answered);
        if (!answered)
                answer(call, r);
        msg_free(m);
        free(m);
        cleanup_closep(&s.fd);
        return 0;
}

/* sendmmsg(fd, msgvec, vlen, flags): every message judged on its own copy, in order. As the
 * kernel: an error after the first message ends the call with the count sent so far; each
 * sent message's msg_len is written back. */
int net_sendmmsg(struct supervisor *sup, struct call *call)
{
        const __u64 *arg = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        unsigned vlen = (unsigned)arg[2] > UIO_MAXIOV ? UIO_MAXIOV : (unsigned)arg[2];
        struct out_msg *m = xcalloc(1, sizeof(*m));
        struct net_sock s;
        bool answered = false;
        long r = net_sock_take(tid, (int)arg[0], &s);
        unsigned sent = 0;

        for (; r >= 0 && sent < vlen && !answered; sent++) {
                uint64_t at = arg[1] + (uint64_t)sent * sizeof(struct mmsghdr);
                unsigned len;

                memset(m, 0, sizeof(*m));
                m->base = m->dest.target = -1;
                r = read_msghdr(sup, tid, &s, at, m);
                if (tmem_id_valid(sup->listener, call->req->id) < 0)
                        r = -ESRCH;
                if (r >= 0)
                        r = send_one(sup, call, &s, m, (int)arg[3], "sendmmsg to", &answered);
                msg_free(m);
                if (r < 0 || answered)
                        break;
                len = (unsigned)r;
                if (tmem_write(tid, at + offsetof(struct mmsghdr, msg_len), &len, sizeof(len)) <
                    0) {
                        sent++;
                        break;
                }
        }
        /* A denial of a later message: the earlier ones were sent; say how many, as for any
         * error after the first (the kernel loses that error too). */
        if (answered && sent > 0)
                answered = false;
        if (!answered)
                answer(call, sent > 0 ? (long)sent : r);
        free(m);
        cleanup_closep(&s.fd);
        return 0;
}

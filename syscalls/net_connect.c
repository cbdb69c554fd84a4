/*
 * connect(2), emulated (outside review R2). Landlock ABI <= 7 has no right for connecting to a
 * pathname unix socket, so the read wall that hides ~/.gnupg, ~/.ssh, /run/user/UID, --hide
 * ... (supervisor/grants.c) left gpg-agent, ssh-agent and the session bus (and through it
 * systemd-run --user: a way out) reachable. Passing the call through (CONTINUE) cannot fix
 * that: the address is in the program's memory and another thread can rewrite it between our
 * look and the kernel's (DESIGN.md). So the supervisor connects the program's own socket
 * itself, from the copy it decided on:
 *
 *   take the socket (pidfd_getfd), copy the sockaddr ONCE, take the cwd if the path is
 *   relative, ID_VALID, then by the copy's family:
 *   - AF_UNIX abstract ("\0name"): refused, EPERM. Connecting from the supervisor would lose
 *     the Landlock ABI 6 scoping (the supervisor is outside the sandbox's domain, so it
 *     reaches every abstract socket of the host), and abstract names are shared with the
 *     host. EPERM is what that scoping answers for a socket outside the domain, so programs
 *     already meet it. The price: abstract sockets inside the sandbox cannot be connected to
 *     either (a bind still works; a path socket does the same job).
 *   - AF_UNIX pathname: the path is opened O_PATH as the program (its fsuid/fsgid, no
 *     groups, no capabilities), relative to its cwd, symlinks followed as connect follows
 *     them, magic links refused (the supervisor's /proc/self is not the program's). If the
 *     socket lies in or beneath a hidden place (places_hidden: by inode, up the ancestry),
 *     EACCES, the errno a read of a hidden file gets from Landlock. Otherwise our copy of the
 *     socket is connected to "/proc/self/fd/N" of that O_PATH fd: connect follows the magic
 *     link to the very inode we checked, so a symlink or a directory swapped after the check
 *     changes nothing. The kernel still checks write permission on the socket inode with the
 *     program's rights.
 *   - AF_INET / AF_INET6 sockets (issue 8): the supervisor's nameserver is redirected to its
 *     DNS server (net_dns.c); any other copy is judged by the network policy
 *     (supervisor/net/netpol.h, net_judge_inet): a denial fails with EACCES; allowed, our
 *     copy of the socket is connected with the copied address, so the kernel connects to the
 *     very address judged. AF_UNSPEC is a disconnect and always allowed. A non-blocking
 *     socket stays non-blocking (our copy shares its file description): EINPROGRESS comes
 *     back to the program, which polls and reads SO_ERROR on its own fd as natively.
 *   - anything else (an AF_UNSPEC disconnect of a unix socket, a family the socket does not
 *     take): our copy is connected with the copied address; the kernel refuses what it
 *     would refuse natively.
 *
 * Every connect runs with the program's identity (creds_enter_identity), not only its
 * permissions: the listener of a unix socket reads the connecting thread's euid/egid with
 * SO_PEERCRED, and a root supervisor must not present nobody's connection to the system bus
 * as uid 0. The peer's pid is the supervisor's, which nothing can change.
 *
 * A blocking connect blocks this notifier thread until it completes (a TCP handshake, a full
 * listen backlog): that is fine, the pool starts another thread when every one is busy
 * (supervisor/notify.c), so only the caller waits, as it would natively. Unlike natively, a
 * non-fatal signal does not interrupt it (the caller waits killable only).
 *
 * Errors taking the fd or reading the memory fail the call with their errno; nothing here
 * ever answers CONTINUE. Concurrency: like every handler, no sup->lock, state on the stack;
 * sup->places and sup->cfg are read-only after the spawn.
 *
 * sendto/sendmsg/sendmmsg (net_send.c) and bind (net_bind.c) follow the same line.
 */
#include "syscalls/net.h"
#include "syscalls/fs_common.h"
#include "supervisor/creds.h"
#include "supervisor/sup.h"
#include "supervisor/net/netpol.h"
#include "supervisor/sockmaker.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The call, decoded, and the copy of its address. */
struct connect_call {
        int fd; /* the caller's socket, by its number */
        uint64_t uaddr;
        int len; /* addrlen, as the kernel takes it (an int) */
        struct sockaddr_storage addr;
        char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* AF_UNIX pathname */
};

struct connect_to {
        const struct sockaddr *sa;
        socklen_t len;
};

static long do_connect(int sock, void *arg)
{
        const struct connect_to *to = arg;

        return connect(sock, to->sa, to->len) < 0 ? -errno : 0;
}

/*
 * A unix stream or seqpacket connect whose listener the look-up could not vouch for: the
 * supervisor connects a socket of its own, made like the program's (its file flags and the
 * options a client sets), checks that the peer is a listener of the sandbox's, and only then
 * puts it in the program's place (ADDFD with SETFD). A host server thus gets a connection
 * that closes with no byte in it: nothing of the program's reaches it, even from another
 * thread writing to the fd meanwhile (the second review's race, when the program's own
 * socket was connected first). A client socket the program bound to a name first keeps the
 * old way (connect it, check, shut down), since a fresh one would lose the name.
 */
static long connect_fresh(struct supervisor *sup, struct call *call, const struct net_sock *s,
                          const struct connect_to *to)
{
        static const int opts[] = {SO_PASSCRED, SO_PASSSEC,  SO_SNDBUF,  SO_RCVBUF,
                                   SO_RCVTIMEO, SO_SNDTIMEO, SO_PRIORITY};
        int fd = socket(AF_UNIX, s->type | SOCK_CLOEXEC, 0), fl;
        pid_t tid = (pid_t)call->req->pid;
        long r;

        if (fd < 0)
                return -errno;
        fl = fcntl(s->fd, F_GETFL);
        if (fl >= 0)
                fcntl(fd, F_SETFL, fl & (O_NONBLOCK | O_ASYNC));
        for (size_t i = 0; i < sizeof(opts) / sizeof(*opts); i++) {
                char v[64];
                socklen_t n = sizeof(v);

                if (getsockopt(s->fd, SOL_SOCKET, opts[i], v, &n) == 0)
                        (void)setsockopt(fd, SOL_SOCKET, opts[i], v, n);
        }
        r = net_needs_identity(s, 0) ? net_as_program(sup, do_connect, fd, (void *)to)
                                     : do_connect(fd, (void *)to);
        if (r == 0 && net_unix_peer_ours(sup, fd) != 1)
                r = -EACCES;
        if (r == 0)
                r = call_replace_fd(sup, call, fd, (int)call->req->data.args[0],
                                    net_caller_cloexec(tid, (int)call->req->data.args[0]));
        close(fd);
        return r;
}

static bool named_client(int fd)
{
        struct sockaddr_un a;
        socklen_t n = sizeof(a);

        return getsockname(fd, (struct sockaddr *)&a, &n) == 0 && n > sizeof(sa_family_t);
}

/* Connect our copy of the program's socket, with its identity where that matters
 * (net_needs_identity), and answer. */
static void connect_answer(struct supervisor *sup, struct call *call, const struct net_sock *s,
                           const void *sa, socklen_t len)
{
        struct connect_to to = {.sa = sa, .len = len};
        long r;

        if (s->domain == AF_UNIX && sup->cfg->net.mode != NETPOL_MODE_HOST &&
            (s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET) && !named_client(s->fd)) {
                r = connect_fresh(sup, call, s, &to);
                if (r == -EACCES) {
                        trace_call_rule(call, "a unix socket served outside the sandbox");
                        call_deny(sup, call, EACCES);
                } else if (r < 0) {
                        call_fail(call, (int)-r);
                }
                return;
        }
        r = net_needs_identity(s, 0) ? net_as_program(sup, do_connect, s->fd, &to)
                                     : do_connect(s->fd, &to);

        /* A unix stream connection must have reached one of the sandbox's own listeners
         * (net_unix_owner.c): else it is shut down before the program can use it. */
        if (r == 0 && s->domain == AF_UNIX && sup->cfg->net.mode != NETPOL_MODE_HOST &&
            (s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET) &&
            net_unix_peer_ours(sup, s->fd) != 1) {
                shutdown(s->fd, SHUT_RDWR);
                trace_call_rule(call, "a unix socket served outside the sandbox");
                call_deny(sup, call, EACCES);
                return;
        }
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, 0);
}

/*
 * Who listens on the stream socket `d` leads to (net_unix_owner.c). A server of the host's —
 * tmux, screen, the X server, an editor's server, docker — would run what the sandbox sends
 * it outside the sandbox, with the user's rights (the third outside review typed commands
 * into the user's shell through tmux's socket in /tmp). Only the sandbox's own servers are
 * reachable, unless --net host lifts the network policy. Returns 0 when allowed, -EACCES
 * when not, or another -errno.
 */
static int listener_ok(struct supervisor *sup, const struct net_sock *s,
                       const struct net_unix_dest *d)
{
        int r;

        if (sup->cfg->net.mode == NETPOL_MODE_HOST)
                return 0;
        if (s->type == SOCK_DGRAM) /* its sends go to that socket, in the kernel */
                r = net_unix_dgram_ok(sup, d->target);
        else if (s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET)
                r = net_unix_served_by_sandbox(sup, d->target);
        else
                r = 1;
        return r > 0 ? 0 : r;
}

/* A pathname socket: judge the inode the path leads to and who listens there, then connect
 * to that inode. */
static void connect_path(struct supervisor *sup, struct call *call, struct connect_call *c,
                         const struct net_sock *s, int base)
{
        struct net_unix_dest d;
        int r = net_unix_judge(sup, call, base, c->path, &d);

        if (r < 0)
                call_fail(call, -r);
        if (r != NET_ALLOWED)
                return;
        r = listener_ok(sup, s, &d);
        if (r == -EACCES) {
                trace_call_rule(call, "a unix socket served outside the sandbox");
                call_deny(sup, call, EACCES);
        } else if (r < 0) {
                call_fail(call, -r);
        } else {
                connect_answer(sup, call, s, &d.via, d.via_len);
        }
        close(d.target);
}

/*
 * Out of the sandbox's network namespace (NET_VIA_HOST): a twin of the program's socket, made
 * in the host's namespace, takes the program's fd number and is then connected to the copy
 * (a non-blocking one answers EINPROGRESS: the program polls the twin and reads its SO_ERROR).
 *
 * Installed before the connect, not after: the install (ADDFD) wakes the caller with an
 * ordinary wake-up, and right after a connect that woke its peer that wake-up took ~20 us
 * (median) on the 2-core VM against ~7 us before it; a loopback connect loop ran ~10 us an
 * iteration faster (clock_gettime around each step, 5,000 connects, 2026-11-30). A connect
 * that fails puts the program's own socket back at the number (a second ADDFD, on that path
 * only), so a failed connect leaves the program's socket as it was. Meanwhile only another
 * thread of the program can see the twin: a socket of the host's, judged as one (connect,
 * send) and never serving (bind, listen) — what it becomes anyway. If such a thread connected
 * it in that window (our connect then fails with EISCONN or EALREADY), it stays. Like the
 * install, the restore takes the number whatever the program put there meanwhile.
 */
static void connect_via_host(struct supervisor *sup, struct call *call, struct net_sock *s,
                             const void *sa, socklen_t len)
{
        int num = (int)call->req->data.args[0], twin = net_host_twin(sup, s, sa, len), own;
        bool cloexec;
        long r;

        if (twin < 0) {
                call_fail(call, -twin);
                return;
        }
        cloexec = net_caller_cloexec((pid_t)call->req->pid, num);
        r = call_replace_fd(sup, call, twin, num, cloexec);
        if (r < 0) {
                close(twin);
                call_fail(call, (int)-r);
                return;
        }
        own = s->fd;
        s->fd = twin; /* closed by the caller, as the copy was */
        r = connect(twin, sa, len) < 0 ? -errno : 0;
        if (r < 0 && r != -EINPROGRESS && r != -EISCONN && r != -EALREADY)
                (void)call_replace_fd(sup, call, own, num, cloexec); /* ENOENT: it died */
        close(own);
        if (r < 0)
                call_fail(call, (int)-r);
}

/* Decide on the copy and act on it. `base` is the caller's cwd for a relative path. */
static void decide(struct supervisor *sup, struct call *call, struct connect_call *c,
                   struct net_sock *s, int base, int kind)
{
        struct nlsock_id id;
        int r;

        if (net_nlview_is(sup, s, &id)) { /* a netlink view socket (net_netlink.c) */
                net_nlview_connect(sup, call, &id, &c->addr, (size_t)c->len);
                return;
        }
        if (s->domain == AF_UNIX && c->addr.ss_family == AF_UNIX) {
                if (kind < 0) {
                        call_fail(call, -kind);
                        return;
                }
                if (kind == 0 && !sockmaker_inside(&sup->netns, s->fd)) {
                        trace_call_rule(call, "abstract unix sockets are closed");
                        call_deny(sup, call, EPERM);
                        return;
                }
                if (kind == 0) {
                        /* The socket is in the sandbox's own namespace, where only the
                         * sandbox binds names: connected as it is (a fresh socket of ours
                         * would look the name up in the host's). */
                        struct connect_to to = {.sa = (struct sockaddr *)&c->addr,
                                                .len = (socklen_t)c->len};
                        long e = net_as_program(sup, do_connect, s->fd, &to);

                        if (e < 0)
                                call_fail(call, (int)-e);
                        else
                                call_return(call, 0);
                        return;
                }
                connect_path(sup, call, c, s, base);
                return;
        }
        if ((s->domain == AF_INET || s->domain == AF_INET6) && c->addr.ss_family != AF_UNSPEC) {
                net_any_to_reached(s, &c->addr, (size_t)c->len, false);
                r = net_dns_redirect(sup, call, s, &c->addr, &c->len);
                if (r == NET_DNS_NO)
                        r = net_judge_inet(sup, call, s, &c->addr, (size_t)c->len, "connect to",
                                           false, true);
                else if (r == NET_DNS_PERFORM)
                        r = NET_ALLOWED;
                if (r < 0)
                        call_fail(call, -r);
                if (r == NET_VIA_HOST)
                        connect_via_host(sup, call, s, &c->addr, (socklen_t)c->len);
                if (r != NET_ALLOWED)
                        return;
        }
        /* No path is involved: the kernel only sees our copy of the address. */
        connect_answer(sup, call, s, &c->addr, (socklen_t)c->len);
}

/* connect(fd, addr, addrlen) */
int net_connect(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        struct connect_call c = {.fd = (int)a[0], .uaddr = a[1], .len = (int)a[2]};
        struct net_sock s;
        _cleanup_close_ int base = -1;
        int r, kind = -EINVAL;

        /* In the kernel's order: the fd (EBADF), the address (EINVAL, EFAULT), ENOTSOCK. */
        r = net_sock_take(tid, c.fd, &s);
        if (r == -ENOTSOCK)
                r = 0, s.domain = -1; /* reported after the address, as the kernel does */
        if (r >= 0 && (c.len < 0 || c.len > (int)sizeof(c.addr)))
                r = -EINVAL;
        if (r >= 0 && c.len > 0)
                r = tmem_read(tid, c.uaddr, &c.addr, (size_t)c.len);
        if (r >= 0 && s.domain == -1)
                r = -ENOTSOCK;
        if (r >= 0 && c.len < (int)sizeof(sa_family_t))
                r = -EINVAL;
        if (r >= 0 && s.domain == AF_UNIX && c.addr.ss_family == AF_UNIX &&
            (kind = net_unix_kind(&c.addr, c.len, c.path)) > 0 && c.path[0] != '/')
                r = base = tfd_cwd(tid);
        /* The socket, the copy and the cwd are the caller's only if it still waits for this
         * answer (its tid was not reused meanwhile). */
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r < 0) {
                call_fail(call, -r);
                cleanup_closep(&s.fd);
                return 0;
        }
        /* The address as decided on, for the trace (not re-read after the answer). */
        trace_call_mem(call, 1, &c.addr, (size_t)c.len);
        decide(sup, call, &c, &s, base < 0 ? AT_FDCWD : base, kind);
        cleanup_closep(&s.fd);
        return 0;
}

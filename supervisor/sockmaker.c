/* The socket maker (sockmaker.h). */
#include "supervisor/sockmaker.h"
#include "supervisor/creds.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

struct request {
        int domain, type, protocol; /* domain -1: an open of `path` (sockmaker_open_sysnet) */
        int flags;
        char path[256];
};

/* What the maker may open for the supervisor: /proc/sys/net and beneath, no "..". */
static bool sysnet_path(const char *p)
{
        if (strncmp(p, "/proc/sys/net", 13) != 0 || (p[13] != '\0' && p[13] != '/'))
                return false;
        for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2)
                if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
                        return false;
        return true;
}

static uint64_t cookie_of(int fd)
{
        uint64_t c = 0;
        socklen_t len = sizeof(c);

        if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) < 0 || len != sizeof(c))
                return 0;
        return c;
}

bool sockmaker_supported(void)
{
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        bool ok = fd >= 0 && cookie_of(fd) != 0;

        if (fd >= 0)
                close(fd);
        return ok;
}

/* Send the answer: `err` (0 or an errno) and, when 0, the socket. */
static void answer(int chan, int err, int fd)
{
        char control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
        struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
        struct cmsghdr *c;

        if (err == 0) {
                memset(control, 0, sizeof(control));
                h.msg_control = control;
                h.msg_controllen = sizeof(control);
                c = CMSG_FIRSTHDR(&h);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        (void)sendmsg(chan, &h, MSG_NOSIGNAL);
}

/* Add `a` (`family`, `alen` bytes) /`prefixlen` to lo (index 1 in a new namespace), by
 * netlink (RTM_NEWADDR, as `ip addr add` does, with lo's own label). Errors are ignored: an
 * address that is already there, or a kernel without IPv6, leaves the view showing what the
 * namespace lacks, nothing worse (the view is supervisor/net/nlview.c). System calls only. */
static void add_lo_addr(int nl, int family, const void *a, size_t alen, int prefixlen,
                        uint32_t flags)
{
        union {
                struct nlmsghdr h;
                char buf[NLMSG_SPACE(sizeof(struct ifaddrmsg)) + 3 * RTA_SPACE(16)];
        } q;
        struct ifaddrmsg ifa = {.ifa_family = (uint8_t)family,
                                .ifa_prefixlen = (uint8_t)prefixlen,
                                /* IPv4 takes the scope it is given (iproute2 gives a
                                 * loopback address host); IPv6 computes it. */
                                .ifa_scope = family == AF_INET ? RT_SCOPE_HOST : 0,
                                .ifa_index = 1};
        static const uint16_t types[] = {IFA_LOCAL, IFA_ADDRESS, IFA_FLAGS};
        char ack[256];
        size_t at = NLMSG_LENGTH(sizeof(ifa));

        memset(&q, 0, sizeof(q));
        q.h.nlmsg_type = RTM_NEWADDR;
        q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
        memcpy(q.buf + NLMSG_HDRLEN, &ifa, sizeof(ifa));
        at = NLMSG_ALIGN(at);
        for (size_t i = 0; i < 3; i++) {
                size_t n = i < 2 ? alen : sizeof(flags);
                struct rtattr ra = {.rta_len = (unsigned short)RTA_LENGTH(n), .rta_type = types[i]};

                memcpy(q.buf + at, &ra, sizeof(ra));
                memcpy(q.buf + at + sizeof(ra), i < 2 ? a : (const void *)&flags, n);
                at += RTA_ALIGN(ra.rta_len);
        }
        q.h.nlmsg_len = (uint32_t)at;
        if (send(nl, &q, at, 0) == (ssize_t)at)
                (void)recv(nl, ack, sizeof(ack), 0);
}

/* lo's addresses beside 127.0.0.1/8 and ::1/128: 127.0.0.2/8 and fe80::1/64, which the view
 * shows (nlview.c says why). While we hold the namespace's CAP_NET_ADMIN: before
 * creds_become. */
static void add_lo_addrs(void)
{
        static const uint8_t v4[4] = {127, 0, 0, 2}, v6[16] = {0xfe, 0x80, [15] = 1};
        int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

        if (nl < 0)
                return;
        add_lo_addr(nl, AF_INET, v4, sizeof(v4), 8, IFA_F_PERMANENT);
        add_lo_addr(nl, AF_INET6, v6, sizeof(v6), 64, IFA_F_PERMANENT | IFA_F_NODAD);
        close(nl);
}

/* The maker's life: system calls only (we forked a process that may have threads later;
 * nothing here takes a lock of libc's). */
static _Noreturn void serve(int chan)
{
        struct request q;

        for (;;) {
                ssize_t n = recv(chan, &q, sizeof(q), 0);
                int fd;

                if (n == 0 || (n < 0 && errno != EINTR))
                        _exit(0);
                if (n != sizeof(q))
                        continue;
                q.path[sizeof(q.path) - 1] = '\0';
                if (q.domain == -1 && !sysnet_path(q.path)) {
                        answer(chan, EPERM, -1);
                        continue;
                }
                /* The network namespace's sysctls: read-only, never following a link. */
                fd = q.domain == -1 ? open(q.path, (q.flags & (O_DIRECTORY | O_NONBLOCK | O_PATH)) |
                                                           O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                                    : socket(q.domain, q.type | SOCK_CLOEXEC, q.protocol);
                answer(chan, fd < 0 ? errno : 0, fd);
                if (fd >= 0)
                        close(fd);
        }
}

int sockmaker_start(struct sockmaker *m, int user_fd, int net_fd, int mnt_fd, uid_t uid, gid_t gid,
                    const char **step)
{
        int sv[2], fd;
        pid_t parent = getpid();

        m->chan = -1;
        m->cookie = 0;
        m->diag = -1;
        pthread_mutex_init(&m->lock, NULL);
        pthread_mutex_init(&m->diag_lock, NULL);
        *step = "socketpair for the socket maker";
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        m->pid = fork();
        if (m->pid == 0) {
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(1);
                prctl(PR_SET_DUMPABLE, 0);
                prctl(PR_SET_NAME, "stockade-net");
                if ((user_fd >= 0 && setns(user_fd, CLONE_NEWUSER) < 0) ||
                    setns(net_fd, CLONE_NEWNET) < 0 ||
                    (mnt_fd >= 0 && setns(mnt_fd, CLONE_NEWNS) < 0))
                        _exit(1);
                /* shim/netns.c brought lo up (its 127.0.0.1 and ::1 come first: an address
                 * added before would be lo's primary). */
                add_lo_addrs();
                /* The command's ids, no capability: it makes sockets and reads what the
                 * command may read (a root stockade's maker would read root's). */
                if (creds_become(uid, gid) < 0)
                        _exit(1);
                /* Nothing of the supervisor's but our end: fd 3. */
                if (dup2(sv[1], 3) < 0 || syscall(SYS_close_range, 4, ~0U, 0) < 0)
                        _exit(1);
                fd = open("/dev/null", O_RDWR);
                if (fd >= 0) {
                        dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
                        if (fd > 3)
                                close(fd);
                }
                serve(3);
        }
        close(sv[1]);
        if (m->pid < 0) {
                close(sv[0]);
                *step = "fork the socket maker";
                return -errno;
        }
        m->chan = sv[0];
        /* Which namespace is the sandbox's: that of a socket the maker made. */
        *step = "the socket maker's first socket";
        fd = sockmaker_socket(m, AF_UNIX, SOCK_DGRAM, 0);
        if (fd < 0)
                return fd;
        m->cookie = cookie_of(fd);
        close(fd);
        return m->cookie ? 0 : -EOPNOTSUPP;
}

/* Send request q, receive the answer: an fd or -errno. */
static int ask(struct sockmaker *m, const struct request *q)
{
        char control[CMSG_SPACE(sizeof(int))];
        int err = EIO, fd = -1;
        struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
        struct msghdr h = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = control,
                           .msg_controllen = sizeof(control)};
        struct cmsghdr *c;
        ssize_t n;

        if (m->chan < 0)
                return -ENOTSUP;
        pthread_mutex_lock(&m->lock);
        if (send(m->chan, q, sizeof(*q), MSG_NOSIGNAL) != sizeof(*q)) {
                pthread_mutex_unlock(&m->lock);
                return -EIO;
        }
        do
                n = recvmsg(m->chan, &h, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        pthread_mutex_unlock(&m->lock);
        if (n != sizeof(err))
                return -EIO;
        c = CMSG_FIRSTHDR(&h);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&fd, CMSG_DATA(c), sizeof(int));
        if (err != 0) {
                if (fd >= 0)
                        close(fd);
                return -err;
        }
        return fd >= 0 ? fd : -EIO;
}

int sockmaker_socket(struct sockmaker *m, int domain, int type, int protocol)
{
        struct request q = {.domain = domain, .type = type, .protocol = protocol};

        return ask(m, &q);
}

int sockmaker_open_sysnet(struct sockmaker *m, const char *path, int flags)
{
        struct request q = {.domain = -1, .flags = flags};

        if (!sysnet_path(path) || strlen(path) >= sizeof(q.path))
                return -EPERM;
        memcpy(q.path, path, strlen(path) + 1);
        return ask(m, &q);
}

/* The exact look-up (inet_diag_find_one_icsk, udp_dump_one) on `nl`: 1 found, 0 not
 * (ENOENT), -errno. The answer comes while the request is sent (netlink is synchronous), so
 * the receive never waits. */
static int diag_lookup(int nl, int protocol, const struct in6_addr *a, uint16_t port)
{
        struct {
                struct nlmsghdr h;
                struct inet_diag_req_v2 r;
        } q = {.h = {.nlmsg_len = sizeof(q),
                     .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                     .nlmsg_flags = NLM_F_REQUEST,
                     .nlmsg_seq = 1}};
        bool v4 = IN6_IS_ADDR_V4MAPPED(a);
        union {
                struct nlmsghdr h;
                char buf[8192];
        } ans;
        struct nlmsgerr e;
        ssize_t n;

        q.r.sdiag_family = v4 ? AF_INET : AF_INET6;
        q.r.sdiag_protocol = (uint8_t)protocol;
        q.r.idiag_states = ~0u;
        q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
        /* The socket's own side is `src` for TCP and `dst` for UDP ("swapped for historical
         * reasons", udp_diag.c); the other side stays 0:0, which no connected socket has. */
        if (protocol == IPPROTO_TCP) {
                q.r.id.idiag_sport = htons(port);
                memcpy(q.r.id.idiag_src, v4 ? a->s6_addr + 12 : a->s6_addr, v4 ? 4 : 16);
        } else {
                q.r.id.idiag_dport = htons(port);
                memcpy(q.r.id.idiag_dst, v4 ? a->s6_addr + 12 : a->s6_addr, v4 ? 4 : 16);
        }
        while (recv(nl, &ans, sizeof(ans), MSG_DONTWAIT) > 0)
                ; /* nothing is left over, unless an earlier answer came late */
        if (send(nl, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q))
                return -errno;
        n = recv(nl, &ans, sizeof(ans), MSG_DONTWAIT);
        if (n < (ssize_t)sizeof(struct nlmsghdr))
                return n < 0 ? -errno : -EIO;
        if (ans.h.nlmsg_type == SOCK_DIAG_BY_FAMILY)
                return 1;
        if (ans.h.nlmsg_type != NLMSG_ERROR || (size_t)n < NLMSG_LENGTH(sizeof(e)))
                return -EIO;
        memcpy(&e, NLMSG_DATA(&ans.h), sizeof(e));
        return e.error == -ENOENT ? 0 : e.error < 0 ? e.error : -EIO;
}

int sockmaker_serves(struct sockmaker *m, int protocol, const struct in6_addr *a, uint16_t port)
{
        int r;

        if (!m->cookie)
                return -ENOTSUP;
        pthread_mutex_lock(&m->diag_lock);
        /* Made by the maker, so that it looks into the sandbox's namespace; kept for the
         * run (one request at a time, under the lock: a look-up costs a few microseconds). */
        if (m->diag < 0)
                m->diag = sockmaker_socket(m, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
        r = m->diag < 0 ? m->diag : diag_lookup(m->diag, protocol, a, port);
        if (m->diag < 0)
                m->diag = -1;
        pthread_mutex_unlock(&m->diag_lock);
        return r;
}

bool sockmaker_inside(const struct sockmaker *m, int fd)
{
        return m->cookie != 0 && cookie_of(fd) == m->cookie;
}

void sockmaker_end(struct sockmaker *m)
{
        /* shutdown, not close: a handler may still hold the number; its request fails. */
        if (m->chan >= 0)
                shutdown(m->chan, SHUT_RDWR);
}

void sockmaker_stop(struct sockmaker *m)
{
        if (m->chan >= 0)
                close(m->chan);
        m->chan = -1;
        if (m->cookie && m->diag >= 0)
                close(m->diag);
        m->diag = -1;
}

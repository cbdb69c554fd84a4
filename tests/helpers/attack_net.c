/*
 * Runs inside the sandbox for tests/security/test_net.c and test_netns.c: one network
 * operation per
 * invocation, its outcome on stdout ("got:REPLY", "sent:N", "err:ENAME", "inprogress").
 * The test judges from outside by what its own loopback listeners received.
 *
 *   from SRC MODE ...       MODE (tcp, tcp-nb, udp, udp-msg) from a socket bound to SRC:0 first
 *   tcp ADDR PORT           blocking connect, read the reply
 *   tcp-nb ADDR PORT        non-blocking connect, poll, SO_ERROR, read the reply
 *   tcp-opts ADDR PORT      four times on the same fd number (close-on-exec the first two
 *                           times, non-blocking every second time): set socket options,
 *                           connect, and print the options, the fd flags and the reply as
 *                           the connected socket has them ("fd:cloexec=C nonblock=N",
 *                           "opts:NAME=VALUE ...", "got:REPLY"); the test compares with the
 *                           same run natively
 *   udp ADDR PORT           sendto
 *   udp-msg ADDR PORT       sendmsg with msg_name
 *   udp-mmsg ADDR P1 P2     sendmmsg of two datagrams, to P1 then P2
 *   udp-conn ADDR PORT      connect a UDP socket, then send (no destination)
 *   fastopen ADDR PORT      sendto(MSG_FASTOPEN) on a TCP socket
 *   race OK BAD N           N connects to 127.0.0.1:OK while a thread flips the port to BAD;
 *                           "race: ok=N refused=N(EACCES) other=N econnrefused=N"
 *   race-udp OK BAD N       the same with sendto
 *   unix-dgram PATH         sendto a unix datagram socket
 *   bind ADDR               bind a TCP socket to ADDR:0; "bound" or the error
 *   fdpass                  SCM_RIGHTS through sendmsg: a pipe's write end passed over a
 *                           socketpair and used; then every fd number 3-99 that is NOT open
 *                           here (but may be in the supervisor) must fail with EBADF:
 *                           "fdpass:ok leaks:0", or "leak:N:WHAT" for each fd received
 *   srcroute PORT           source routes: an IPv4 LSRR by setsockopt(IP_OPTIONS) and by a
 *                           sendmsg with IP_RETOPTS to 127.0.0.1:PORT (the kernel wants
 *                           CAP_NET_RAW for those), and an IPv6 segment routing header by
 *                           setsockopt(IPV6_RTHDR) (which it does not); "EPERM EPERM EPERM"
 *                           when all three are refused
 *   server ADDR [PORT]      bind ADDR:PORT (0: any), listen, connect to it from inside
 *                           (127.0.0.1 or ::1 per family), exchange a line; "inside:pong"
 *   serve ADDR PORT DIR     a server the test judges from outside: bind ADDR:PORT (0: any),
 *                           listen, write the port to DIR/ready; each client is sent
 *                           "SANDBOX\n" and its first line printed ("recv:LINE"); when
 *                           DIR/done appears (60 s at most), "served:N"
 *   reuse-serve ADDR PORT BIND DIR
 *                           connect to ADDR:PORT ("connected"; in a namespace, through the
 *                           host's twin socket), disconnect (connect AF_UNSPEC), bind BIND:0
 *                           ("-": no bind, listen picks a port) and serve as `serve` does
 *   abstract-connect NAME   connect to the abstract unix name @NAME (stream), read the reply
 *   abstract-dgram NAME     sendto the abstract unix name @NAME (datagram)
 *   abstract-serve NAME DIR as serve, on the abstract name @NAME
 *   abstract-pair NAME      bind and listen on @NAME; a forked child connects and reads the
 *                           parent's "pong": "got:pong"
 *   proc-net-tcp PATH PORT  listen on 127.0.0.1:0, then read PATH (/proc/net/tcp): whether
 *                           this listener and a listener on PORT are in it: "own:yes host:no"
 *
 * ADDR is any spelling inet_pton takes: an IPv6 one (::ffff:127.0.0.1, ::127.0.0.1, ::)
 * makes an AF_INET6 socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static socklen_t make_addr(const char *host, int port, struct sockaddr_storage *ss)
{
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

        memset(ss, 0, sizeof(*ss));
        if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                return sizeof(*in);
        }
        if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                return sizeof(*in6);
        }
        fprintf(stderr, "bad address %s\n", host);
        exit(2);
}

static int err(int e)
{
        printf("err:%s\n", e == EACCES         ? "EACCES"
                           : e == ECONNREFUSED ? "ECONNREFUSED"
                           : e == ENETUNREACH  ? "ENETUNREACH"
                           : e == EPERM        ? "EPERM"
                           : e == EINVAL       ? "EINVAL"
                           : e == ETIMEDOUT    ? "ETIMEDOUT"
                                               : strerror(e));
        return 0;
}

static void read_reply(int s)
{
        char buf[128];
        struct pollfd p = {.fd = s, .events = POLLIN};
        ssize_t n;

        poll(&p, 1, 10000);
        n = read(s, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0'; /* a line ("SANDBOX\n") is printed as one */
        printf("got:%s\n", buf);
}

/* `from SRC`: the sockets of tcp and udp are bound to SRC:0 before they are used. */
static const char *bind_src;

static void bind_from(int s)
{
        struct sockaddr_storage ss;
        socklen_t len;

        if (!bind_src)
                return;
        len = make_addr(bind_src, 0, &ss);
        if (bind(s, (struct sockaddr *)&ss, len) < 0) {
                printf("bind:");
                exit(err(errno) + 1);
        }
}

static int tcp(const char *host, int port, bool nonblocking)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, port, &ss);
        int s = socket(ss.ss_family, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);

        bind_from(s);
        if (connect(s, (struct sockaddr *)&ss, len) < 0) {
                struct pollfd p = {.fd = s, .events = POLLOUT};
                int e = 0;
                socklen_t elen = sizeof(e);

                if (!nonblocking || errno != EINPROGRESS)
                        return err(errno);
                printf("inprogress\n");
                if (poll(&p, 1, 10000) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
                        e = ETIMEDOUT;
                if (e)
                        return err(e);
        }
        read_reply(s);
        return 0;
}

/* The options tcp-opts sets (and reads back once connected), with the values it sets. */
static const struct {
        const char *name;
        int level, opt, v4, v6; /* v4 / v6: the value on that family's socket (-1: not set) */
} tcp_opts_set[] = {
        {"SO_KEEPALIVE", SOL_SOCKET, SO_KEEPALIVE, 1, 1},
        {"SO_OOBINLINE", SOL_SOCKET, SO_OOBINLINE, 1, 1},
        {"SO_PRIORITY", SOL_SOCKET, SO_PRIORITY, 3, 3},
        {"SO_REUSEADDR", SOL_SOCKET, SO_REUSEADDR, 1, 1},
        {"SO_RCVBUF", SOL_SOCKET, SO_RCVBUF, 50000, 50000},
        {"SO_SNDBUF", SOL_SOCKET, SO_SNDBUF, 40000, 40000},
        {"SO_RCVLOWAT", SOL_SOCKET, SO_RCVLOWAT, 7, 7},
        {"TCP_NODELAY", IPPROTO_TCP, TCP_NODELAY, 1, 1},
        {"TCP_MAXSEG", IPPROTO_TCP, TCP_MAXSEG, 1000, 1000},
        {"TCP_KEEPIDLE", IPPROTO_TCP, TCP_KEEPIDLE, 77, 77},
        {"TCP_KEEPINTVL", IPPROTO_TCP, TCP_KEEPINTVL, 11, 11},
        {"TCP_KEEPCNT", IPPROTO_TCP, TCP_KEEPCNT, 4, 4},
        {"TCP_SYNCNT", IPPROTO_TCP, TCP_SYNCNT, 3, 3},
        {"TCP_USER_TIMEOUT", IPPROTO_TCP, TCP_USER_TIMEOUT, 12345, 12345},
        {"TCP_NOTSENT_LOWAT", IPPROTO_TCP, TCP_NOTSENT_LOWAT, 16384, 16384},
        {"IP_TOS", IPPROTO_IP, IP_TOS, 0x10, -1},
        {"IP_TTL", IPPROTO_IP, IP_TTL, 33, -1},
        {"IP_RECVERR", IPPROTO_IP, IP_RECVERR, 1, -1},
        {"IPV6_TCLASS", IPPROTO_IPV6, IPV6_TCLASS, -1, 0x20},
        {"IPV6_UNICAST_HOPS", IPPROTO_IPV6, IPV6_UNICAST_HOPS, -1, 44},
        {"IPV6_RECVERR", IPPROTO_IPV6, IPV6_RECVERR, -1, 1},
};

static void tcp_opts_print(int s, bool v6)
{
        struct linger lg;
        struct timeval tv;
        socklen_t n;

        printf("opts:");
        for (size_t i = 0; i < sizeof(tcp_opts_set) / sizeof(*tcp_opts_set); i++) {
                int v = -1;

                n = sizeof(v);
                if ((v6 ? tcp_opts_set[i].v6 : tcp_opts_set[i].v4) < 0)
                        continue;
                if (getsockopt(s, tcp_opts_set[i].level, tcp_opts_set[i].opt, &v, &n) < 0)
                        v = -errno;
                printf("%s=%d ", tcp_opts_set[i].name, v);
        }
        n = sizeof(lg);
        if (getsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &n) == 0)
                printf("SO_LINGER=%d,%d ", lg.l_onoff, lg.l_linger);
        n = sizeof(tv);
        if (getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, &n) == 0)
                printf("SO_RCVTIMEO=%ld.%06ld ", (long)tv.tv_sec, (long)tv.tv_usec);
        n = sizeof(tv);
        if (getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, &n) == 0)
                printf("SO_SNDTIMEO=%ld.%06ld", (long)tv.tv_sec, (long)tv.tv_usec);
        printf("\n");
}

static int tcp_opts(const char *host, int port)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, port, &ss);
        bool v6 = ss.ss_family == AF_INET6;
        struct linger lg = {.l_onoff = 1, .l_linger = 5};
        struct timeval rcv = {.tv_sec = 3, .tv_usec = 250000}, snd = {.tv_sec = 4};
        int first = -1;

        /* Close-on-exec in the first two rounds only, so that for any number of threads
         * taking the supervisor's notifications in turn, one thread sees the same fd number
         * of the same thread with the flag, then without it. */
        for (int round = 0; round < 4; round++) {
                int s = socket(ss.ss_family,
                               SOCK_STREAM | (round < 2 ? SOCK_CLOEXEC : 0) |
                                       (round & 1 ? SOCK_NONBLOCK : 0),
                               0);

                for (size_t i = 0; i < sizeof(tcp_opts_set) / sizeof(*tcp_opts_set); i++) {
                        int v = v6 ? tcp_opts_set[i].v6 : tcp_opts_set[i].v4;

                        if (v >= 0 && setsockopt(s, tcp_opts_set[i].level, tcp_opts_set[i].opt, &v,
                                                 sizeof(v)) < 0)
                                printf("set %s: %s\n", tcp_opts_set[i].name, strerror(errno));
                }
                setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
                setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
                setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
                if (connect(s, (struct sockaddr *)&ss, len) < 0) {
                        struct pollfd p = {.fd = s, .events = POLLOUT};
                        int e = 0;
                        socklen_t elen = sizeof(e);

                        if (errno != EINPROGRESS)
                                return err(errno);
                        printf("inprogress\n");
                        if (poll(&p, 1, 10000) != 1 ||
                            getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
                                e = ETIMEDOUT;
                        if (e)
                                return err(e);
                }
                printf("fd:cloexec=%d nonblock=%d%s\n", (fcntl(s, F_GETFD) & FD_CLOEXEC) != 0,
                       (fcntl(s, F_GETFL) & O_NONBLOCK) != 0,
                       round && s != first ? " another-number" : "");
                first = s;
                tcp_opts_print(s, v6);
                read_reply(s);
                close(s);
        }
        return 0;
}

static int udp(const char *host, int port, int how, int port2)
{
        struct sockaddr_storage ss, ss2;
        socklen_t len = make_addr(host, port, &ss), len2 = make_addr(host, port2, &ss2);
        int s = socket(ss.ss_family, SOCK_DGRAM, 0);
        char data[] = "DATAGRAM";
        struct iovec iov = {.iov_base = data, .iov_len = sizeof(data) - 1};
        struct mmsghdr mm[2] = {
                {.msg_hdr =
                         {.msg_name = &ss, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1}},
                {.msg_hdr =
                         {.msg_name = &ss2, .msg_namelen = len2, .msg_iov = &iov, .msg_iovlen = 1}},
        };
        ssize_t n;

        bind_from(s);
        if (how == 3 && connect(s, (struct sockaddr *)&ss, len) < 0)
                return err(errno);
        if (how == 3)
                n = send(s, data, sizeof(data) - 1, 0);
        else if (how == 0)
                n = sendto(s, data, sizeof(data) - 1, 0, (struct sockaddr *)&ss, len);
        else if (how == 1)
                n = sendmsg(s, &mm[0].msg_hdr, 0);
        else
                n = sendmmsg(s, mm, 2, 0);
        if (n < 0)
                return err(errno);
        if (how == 2)
                printf("sent:%zd len:%u,%u\n", n, mm[0].msg_len, mm[1].msg_len);
        else
                printf("sent:%zd\n", n);
        return 0;
}

static int fastopen(const char *host, int port)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, port, &ss);
        int s = socket(ss.ss_family, SOCK_STREAM, 0);

        if (sendto(s, "FO", 2, MSG_FASTOPEN, (struct sockaddr *)&ss, len) < 0)
                return err(errno);
        read_reply(s);
        return 0;
}

static int unix_dgram(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int s = socket(AF_UNIX, SOCK_DGRAM, 0);
        ssize_t n;

        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        n = sendto(s, "DATAGRAM", 8, 0, (struct sockaddr *)&sa, sizeof(sa));
        if (n < 0)
                return err(errno);
        printf("sent:%zd\n", n);
        return 0;
}

static int bind_to(const char *host)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, 0, &ss);
        int s = socket(ss.ss_family, SOCK_STREAM, 0);

        if (bind(s, (struct sockaddr *)&ss, len) < 0)
                return err(errno);
        printf("bound\n");
        return 0;
}

/* Send fd numbers over `a` with SCM_RIGHTS; returns sendmsg's result (errno in *e). */
static ssize_t send_fds(int a, const int *fds, size_t n, int *e)
{
        char cbuf[CMSG_SPACE(sizeof(int) * 4)] = {0};
        struct iovec iov = {.iov_base = "F", .iov_len = 1};
        struct msghdr h = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = cbuf,
                           .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        ssize_t r;

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        r = sendmsg(a, &h, 0);
        *e = errno;
        return r;
}

/* Receive one message and the fd it carries (-1: none). */
static int recv_fd(int b)
{
        char cbuf[CMSG_SPACE(sizeof(int) * 4)], d;
        struct iovec iov = {.iov_base = &d, .iov_len = 1};
        struct msghdr h = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = cbuf,
                           .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c;
        int fd = -1;

        if (recvmsg(b, &h, MSG_DONTWAIT) < 0)
                return -1;
        for (c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        memcpy(&fd, CMSG_DATA(c), sizeof(fd));
        return fd;
}

static int fdpass(void)
{
        int sv[2], p[2], e, got, leaks = 0;
        char buf[16] = "";

        if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0 || pipe(p) < 0)
                return err(errno);
        if (send_fds(sv[0], &p[1], 1, &e) != 1)
                return err(e);
        got = recv_fd(sv[1]);
        if (got < 0 || write(got, "via", 3) != 3 || read(p[0], buf, sizeof(buf) - 1) != 3)
                return err(errno);
        for (int fd = 3; fd < 100; fd++) {
                char link[64], what[256] = "";
                ssize_t n;

                if (fcntl(fd, F_GETFD) >= 0)
                        continue; /* ours */
                if (send_fds(sv[0], &fd, 1, &e) < 0 && e == EBADF)
                        continue;
                got = recv_fd(sv[1]);
                snprintf(link, sizeof(link), "/proc/self/fd/%d", got);
                n = readlink(link, what, sizeof(what) - 1);
                what[n > 0 ? n : 0] = '\0';
                printf("leak:%d:%s\n", fd, got >= 0 ? what : "(sent, nothing received)");
                leaks++;
        }
        printf("fdpass:%s leaks:%d\n", strcmp(buf, "via") == 0 ? "ok" : buf, leaks);
        return 0;
}

static const char *outcome(int e, const char *ok)
{
        return e == EPERM ? "EPERM" : e ? strerror(e) : ok;
}

static int srcroute(int port)
{
        /* NOP, LSRR of one hop (127.0.0.1) */
        unsigned char opt[8] = {1, 0x83, 7, 4, 127, 0, 0, 1};
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        char cbuf[CMSG_SPACE(sizeof(opt))] = {0};
        struct iovec iov = {.iov_base = "SR", .iov_len = 2};
        struct msghdr h = {.msg_name = &sa,
                           .msg_namelen = sizeof(sa),
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = cbuf,
                           .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        int s = socket(AF_INET, SOCK_DGRAM, 0), e1 = 0, e2 = 0;

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (setsockopt(s, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) < 0)
                e1 = errno;
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_RETOPTS;
        c->cmsg_len = CMSG_LEN(sizeof(opt));
        memcpy(CMSG_DATA(c), opt, sizeof(opt));
        if (sendmsg(s, &h, 0) < 0)
                e2 = errno;
        /* An SRH (type 4) with one segment, fd00::1, then fd00::2. */
        unsigned char srh[40] = {17, 4, 4, 1, 1, [8] = 0xfd, [23] = 1, [24] = 0xfd, [39] = 2};
        int s6 = socket(AF_INET6, SOCK_DGRAM, 0), e3 = 0;

        if (setsockopt(s6, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof(srh)) < 0)
                e3 = errno;
        printf("%s %s %s\n", outcome(e1, "set"), outcome(e2, "sent"), outcome(e3, "set"));
        return 0;
}

/* ---- a thread rewriting the address right after the call ------------------------------- */

static struct sockaddr_in race_addr;
static atomic_bool race_stop;
static int race_ok, race_bad;

static void *flipper(void *arg)
{
        (void)arg;
        while (!atomic_load(&race_stop)) {
                /* volatile stores: each lands in memory, whenever the supervisor reads. */
                *(volatile uint16_t *)&race_addr.sin_port = htons((uint16_t)race_bad);
                *(volatile uint16_t *)&race_addr.sin_port = htons((uint16_t)race_ok);
        }
        return NULL;
}

static int race(int ok, int bad, int n, bool use_udp)
{
        pthread_t t;
        int got = 0, refused = 0, other = 0, connrefused = 0;

        race_ok = ok;
        race_bad = bad;
        race_addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)ok)};
        inet_pton(AF_INET, "127.0.0.1", &race_addr.sin_addr);
        pthread_create(&t, NULL, flipper, NULL);
        for (int i = 0; i < n; i++) {
                int s = socket(AF_INET, use_udp ? SOCK_DGRAM : SOCK_STREAM, 0), r;

                if (use_udp)
                        r = (int)sendto(s, "RACE", 4, 0, (struct sockaddr *)&race_addr,
                                        sizeof(race_addr));
                else
                        r = connect(s, (struct sockaddr *)&race_addr, sizeof(race_addr));
                if (r >= 0)
                        got++;
                else if (errno == EACCES)
                        refused++;
                else if (errno == ECONNREFUSED)
                        connrefused++;
                else
                        other++;
                close(s);
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        printf("race: ok=%d refused=%d other=%d econnrefused=%d\n", got, refused, other,
               connrefused);
        return 0;
}

/* ---- a server inside the sandbox, reached from inside --------------------------------------- */

static int server(const char *host, int bind_port)
{
        struct sockaddr_storage ss, got;
        socklen_t len = make_addr(host, bind_port, &ss), glen = sizeof(got);
        int l = socket(ss.ss_family, SOCK_STREAM, 0), c, a, port;
        const char *peer = ss.ss_family == AF_INET ? "127.0.0.1" : "::1";
        char buf[16] = "";

        if (bind(l, (struct sockaddr *)&ss, len) < 0 || listen(l, 4) < 0 ||
            getsockname(l, (struct sockaddr *)&got, &glen) < 0)
                return err(errno);
        port = ntohs(((struct sockaddr_in *)&got)->sin_port); /* same offset in sin6 */
        len = make_addr(peer, port, &ss);
        c = socket(ss.ss_family, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&ss, len) < 0)
                return err(errno);
        a = accept(l, NULL, NULL);
        if (a < 0 || write(a, "pong", 4) != 4 || read(c, buf, sizeof(buf) - 1) != 4)
                return err(errno);
        printf("inside:%s\n", buf);
        return 0;
}

/* ---- servers judged from outside (test_netns.c) --------------------------------------------- */

static socklen_t abstract_addr(const char *name, struct sockaddr_un *sa)
{
        size_t n = strnlen(name, sizeof(sa->sun_path) - 1);

        memset(sa, 0, sizeof(*sa));
        sa->sun_family = AF_UNIX;
        memcpy(sa->sun_path + 1, name, n); /* sun_path[0] = '\0': an abstract name */
        return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Tell the test where `l` listens (DIR/ready, complete when it appears), serve until DIR/done
 * appears, print what each client said and how many came. */
static int serve_until_done(int l, int port, const char *dir)
{
        char path[4096], tmp[4096];
        int served = 0;
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s/ready.tmp", dir);
        snprintf(path, sizeof(path), "%s/ready", dir);
        if (!(f = fopen(tmp, "w")) || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 ||
            rename(tmp, path) < 0)
                return err(errno);
        snprintf(path, sizeof(path), "%s/done", dir);
        for (int i = 0; i < 600 && access(path, F_OK) != 0; i++) {
                struct pollfd p = {.fd = l, .events = POLLIN};
                char line[128] = "";
                ssize_t n;
                int c;

                if (poll(&p, 1, 100) != 1 || (c = accept(l, NULL, NULL)) < 0)
                        continue;
                served++;
                p = (struct pollfd){.fd = c, .events = POLLIN};
                if (write(c, "SANDBOX\n", 8) == 8 && poll(&p, 1, 5000) == 1 &&
                    (n = read(c, line, sizeof(line) - 1)) > 0)
                        line[strcspn(line, "\n")] = '\0';
                printf("recv:%s\n", line);
                close(c);
        }
        printf("served:%d\n", served);
        return 0;
}

static int serve(const char *host, int port, const char *dir)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, port, &ss);
        int l = socket(ss.ss_family, SOCK_STREAM, 0);

        if (bind(l, (struct sockaddr *)&ss, len) < 0 || listen(l, 8) < 0 ||
            getsockname(l, (struct sockaddr *)&ss, &len) < 0)
                return err(errno);
        return serve_until_done(l, ntohs(((struct sockaddr_in *)&ss)->sin_port), dir);
}

static int reuse_serve(const char *host, int port, const char *bind_host, const char *dir)
{
        struct sockaddr_storage ss;
        socklen_t len = make_addr(host, port, &ss);
        struct sockaddr unspec = {.sa_family = AF_UNSPEC};
        int s = socket(ss.ss_family, SOCK_STREAM, 0);

        if (connect(s, (struct sockaddr *)&ss, len) < 0)
                return err(errno);
        printf("connected\n");
        if (connect(s, &unspec, sizeof(unspec)) < 0)
                return err(errno);
        if (strcmp(bind_host, "-") != 0) {
                len = make_addr(bind_host, 0, &ss);
                if (bind(s, (struct sockaddr *)&ss, len) < 0)
                        return err(errno);
        }
        len = sizeof(ss);
        if (listen(s, 8) < 0 || getsockname(s, (struct sockaddr *)&ss, &len) < 0)
                return err(errno);
        return serve_until_done(s, ntohs(((struct sockaddr_in *)&ss)->sin_port), dir);
}

static int abstract_serve(const char *name, const char *dir)
{
        struct sockaddr_un sa;
        socklen_t len = abstract_addr(name, &sa);
        int l = socket(AF_UNIX, SOCK_STREAM, 0);

        if (bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 8) < 0)
                return err(errno);
        return serve_until_done(l, 0, dir);
}

static int abstract_connect(const char *name, int type)
{
        struct sockaddr_un sa;
        socklen_t len = abstract_addr(name, &sa);
        int s = socket(AF_UNIX, type, 0);
        ssize_t n;

        if (type == SOCK_DGRAM) {
                if ((n = sendto(s, "DATAGRAM", 8, 0, (struct sockaddr *)&sa, len)) < 0)
                        return err(errno);
                printf("sent:%zd\n", n);
                return 0;
        }
        if (connect(s, (struct sockaddr *)&sa, len) < 0)
                return err(errno);
        read_reply(s);
        return 0;
}

/* Two processes of the sandbox meet at an abstract name. */
static int abstract_pair(const char *name)
{
        struct sockaddr_un sa;
        socklen_t len = abstract_addr(name, &sa);
        int l = socket(AF_UNIX, SOCK_STREAM, 0), a, status;
        struct pollfd p = {.fd = l, .events = POLLIN};
        pid_t pid;

        if (bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 4) < 0)
                return err(errno);
        pid = fork();
        if (pid < 0)
                return err(errno);
        if (pid == 0)
                _exit(abstract_connect(name, SOCK_STREAM));
        if (poll(&p, 1, 10000) == 1 && (a = accept(l, NULL, NULL)) >= 0)
                (void)!write(a, "pong", 4);
        waitpid(pid, &status, 0);
        return 0;
}

/* Which listening TCP ports a /proc/net/tcp file shows: this process's own listener and the
 * test's. */
static int proc_net_tcp(const char *path, int host_port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        int l = socket(AF_INET, SOCK_STREAM, 0);
        bool own = false, host = false;
        char line[512];
        FILE *f;

        if (bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0 ||
            getsockname(l, (struct sockaddr *)&sa, &len) < 0)
                return err(errno);
        /* Another namespace numbers its ports alone: ours may be PORT by chance (a CI run saw
         * "own:yes host:yes" so). Then take another, or "host" would be this listener. */
        if (ntohs(sa.sin_port) == host_port) {
                int again = proc_net_tcp(path, host_port);

                close(l);
                return again;
        }
        if (!(f = fopen(path, "r")))
                return err(errno);
        while (fgets(line, sizeof(line), f)) {
                unsigned port, st;

                /* "  0: 0100007F:1F90 00000000:0000 0A ..."; 0A is TCP_LISTEN */
                if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &port, &st) != 2 ||
                    st != 0x0A)
                        continue;
                own = own || port == ntohs(sa.sin_port);
                host = host || (int)port == host_port;
        }
        fclose(f);
        printf("own:%s host:%s\n", own ? "yes" : "no", host ? "yes" : "no");
        return 0;
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc > 3 && strcmp(argv[1], "from") == 0) {
                bind_src = argv[2];
                argv += 2;
                argc -= 2;
        }
        if (argc == 4 && strcmp(argv[1], "tcp") == 0)
                return tcp(argv[2], atoi(argv[3]), false);
        if (argc == 4 && strcmp(argv[1], "tcp-nb") == 0)
                return tcp(argv[2], atoi(argv[3]), true);
        if (argc == 4 && strcmp(argv[1], "tcp-opts") == 0)
                return tcp_opts(argv[2], atoi(argv[3]));
        if (argc == 4 && strcmp(argv[1], "udp") == 0)
                return udp(argv[2], atoi(argv[3]), 0, atoi(argv[3]));
        if (argc == 4 && strcmp(argv[1], "udp-msg") == 0)
                return udp(argv[2], atoi(argv[3]), 1, atoi(argv[3]));
        if (argc == 5 && strcmp(argv[1], "udp-mmsg") == 0)
                return udp(argv[2], atoi(argv[3]), 2, atoi(argv[4]));
        if (argc == 4 && strcmp(argv[1], "udp-conn") == 0)
                return udp(argv[2], atoi(argv[3]), 3, atoi(argv[3]));
        if (argc == 4 && strcmp(argv[1], "fastopen") == 0)
                return fastopen(argv[2], atoi(argv[3]));
        if (argc == 5 && strcmp(argv[1], "race") == 0)
                return race(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), false);
        if (argc == 5 && strcmp(argv[1], "race-udp") == 0)
                return race(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), true);
        if (argc == 3 && strcmp(argv[1], "bind") == 0)
                return bind_to(argv[2]);
        if (argc == 3 && strcmp(argv[1], "srcroute") == 0)
                return srcroute(atoi(argv[2]));
        if (argc == 2 && strcmp(argv[1], "fdpass") == 0)
                return fdpass();
        if (argc == 3 && strcmp(argv[1], "unix-dgram") == 0)
                return unix_dgram(argv[2]);
        if ((argc == 3 || argc == 4) && strcmp(argv[1], "server") == 0)
                return server(argv[2], argc == 4 ? atoi(argv[3]) : 0);
        if (argc == 5 && strcmp(argv[1], "serve") == 0)
                return serve(argv[2], atoi(argv[3]), argv[4]);
        if (argc == 6 && strcmp(argv[1], "reuse-serve") == 0)
                return reuse_serve(argv[2], atoi(argv[3]), argv[4], argv[5]);
        if (argc == 3 && strcmp(argv[1], "abstract-connect") == 0)
                return abstract_connect(argv[2], SOCK_STREAM);
        if (argc == 3 && strcmp(argv[1], "abstract-dgram") == 0)
                return abstract_connect(argv[2], SOCK_DGRAM);
        if (argc == 4 && strcmp(argv[1], "abstract-serve") == 0)
                return abstract_serve(argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], "abstract-pair") == 0)
                return abstract_pair(argv[2]);
        if (argc == 4 && strcmp(argv[1], "proc-net-tcp") == 0)
                return proc_net_tcp(argv[2], atoi(argv[3]));
        fprintf(stderr, "usage: see the comment at the top of attack_net.c\n");
        return 2;
}

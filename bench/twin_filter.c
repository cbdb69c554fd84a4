/*
 * twin_filter [REPS [N]] - what a twin's socket filter (supervisor/net/twin.h) costs, natively:
 * no sandbox, the very program stockade attaches, on loopback sockets.
 *
 *   per datagram   N x (sendto, recv) of one byte between two UDP sockets on 127.0.0.1 (::1
 *                  for the IPv6 rows), the receiver without a filter, then with the filter of
 *                  1 peer (the sender), and of 64 peers with the sender last (the most a
 *                  datagram from a peer costs: every other peer compared first)
 *   per send       what the supervisor adds to an allowed send on a twin to a known peer:
 *                  SO_GET_FILTER and the parse that proves the program ours (1 and 64 peers);
 *                  and adding a new peer: the program rebuilt and attached (SO_ATTACH_FILTER)
 *
 * The modes alternate within each repetition; the table gives medians of REPS (11) runs of
 * N (20000) iterations each. Uses loopback only.
 */
#include "supervisor/net/twin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
        fprintf(stderr, "twin_filter: %s: %s\n", what, strerror(errno));
        exit(1);
}

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct pair {
        int tx, rx;
        struct sockaddr_storage to;
        socklen_t len;
        struct twin_peer self; /* the sender, as a peer */
};

static struct pair pair_of(int family)
{
        struct pair p = {.len = family == AF_INET ? sizeof(struct sockaddr_in)
                                                  : sizeof(struct sockaddr_in6)};
        struct sockaddr_storage from = {.ss_family = (sa_family_t)family};
        socklen_t len = p.len;

        p.to.ss_family = (sa_family_t)family;
        if (family == AF_INET) {
                ((struct sockaddr_in *)&p.to)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                ((struct sockaddr_in *)&from)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else {
                ((struct sockaddr_in6 *)&p.to)->sin6_addr = in6addr_loopback;
                ((struct sockaddr_in6 *)&from)->sin6_addr = in6addr_loopback;
        }
        p.tx = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        p.rx = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (p.tx < 0 || p.rx < 0 || bind(p.rx, (struct sockaddr *)&p.to, p.len) < 0 ||
            getsockname(p.rx, (struct sockaddr *)&p.to, &len) < 0 ||
            bind(p.tx, (struct sockaddr *)&from, p.len) < 0 ||
            getsockname(p.tx, (struct sockaddr *)&from, &len) < 0 ||
            twin_peer_from(&from, len, false, &p.self) < 0)
                die("loopback sockets");
        return p;
}

/* The filter of `n` peers, the sender last; n == 0: none at all. */
static void attach(int fd, const struct twin_peer *self, size_t n)
{
        struct twin_peer v[TWIN_PEERS_MAX];
        struct sock_filter prog[TWIN_PROG_MAX];
        struct sock_fprog fp = {.filter = prog};
        size_t k = 0;

        if (n == 0) {
                (void)setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &k, sizeof(int));
                return;
        }
        twin_peer_add(v, &k, self);
        while (k < n) {
                struct twin_peer other = *self;

                other.port = (uint16_t)(self->port + 1 + k); /* same address, other ports */
                twin_peer_add(v, &k, &other);
        }
        fp.len = (unsigned short)twin_filter_build(v, k, prog);
        if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0)
                die("SO_ATTACH_FILTER");
}

static double per_datagram(const struct pair *p, long n)
{
        char buf[8];
        double t0 = now_ns();

        for (long i = 0; i < n; i++)
                if (sendto(p->tx, "x", 1, 0, (const struct sockaddr *)&p->to, p->len) != 1 ||
                    recv(p->rx, buf, sizeof(buf), 0) != 1)
                        die("sendto/recv");
        return (now_ns() - t0) / (double)n;
}

/* The supervisor's look at a twin before a send to a known peer (net_twin.c, read_peers). */
static double per_check(int fd, long n)
{
        struct sock_filter prog[TWIN_PROG_MAX];
        struct twin_peer v[TWIN_PEERS_MAX];
        double t0 = now_ns();

        for (long i = 0; i < n; i++) {
                socklen_t len = TWIN_PROG_MAX;

                if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, prog, &len) < 0 ||
                    twin_filter_parse(prog, len, v) < 1)
                        die("SO_GET_FILTER");
        }
        return (now_ns() - t0) / (double)n;
}

/* A new peer: the program built and attached again, with `n` peers. */
static double per_add(int fd, const struct twin_peer *self, size_t n, long iters)
{
        double t0 = now_ns();

        for (long i = 0; i < iters; i++)
                attach(fd, self, n);
        return (now_ns() - t0) / (double)iters;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

enum { ROWS = 10, REPS_MAX = 101 };

int main(int argc, char **argv)
{
        static const char *const names[ROWS] = {
                "IPv4 datagram, no filter",       "IPv4 datagram, 1 peer",
                "IPv4 datagram, 64 peers (last)", "IPv6 datagram, no filter",
                "IPv6 datagram, 1 peer",          "IPv6 datagram, 64 peers (last)",
                "check before a send, 1 peer",    "check before a send, 64 peers",
                "add a peer (attach), to 1",      "add a peer (attach), to 64",
        };
        static double t[ROWS][REPS_MAX];
        int reps = argc > 1 ? atoi(argv[1]) : 11;
        long n = argc > 2 ? atol(argv[2]) : 20000;
        struct pair v4 = pair_of(AF_INET), v6 = pair_of(AF_INET6);

        if (reps < 1 || reps > REPS_MAX || n < 1) {
                fprintf(stderr, "usage: twin_filter [REPS (1-%d) [N]]\n", REPS_MAX);
                return 2;
        }
        for (int r = 0; r < reps; r++) {
                const size_t peers[3] = {0, 1, TWIN_PEERS_MAX};

                for (int i = 0; i < 3; i++) {
                        attach(v4.rx, &v4.self, peers[i]);
                        t[i][r] = per_datagram(&v4, n);
                        attach(v6.rx, &v6.self, peers[i]);
                        t[3 + i][r] = per_datagram(&v6, n);
                }
                attach(v4.rx, &v4.self, 1);
                t[6][r] = per_check(v4.rx, n);
                attach(v4.rx, &v4.self, TWIN_PEERS_MAX);
                t[7][r] = per_check(v4.rx, n);
                t[8][r] = per_add(v4.rx, &v4.self, 1, n / 10);
                t[9][r] = per_add(v4.rx, &v4.self, TWIN_PEERS_MAX, n / 10);
                fprintf(stderr, "twin_filter: rep %d done\n", r + 1);
        }
        printf("| case | median | added |\n|---|---|---|\n");
        for (int i = 0; i < ROWS; i++) {
                double base;

                qsort(t[i], (size_t)reps, sizeof(double), cmp);
                base = i < 6 ? t[i / 3 * 3][reps / 2] : 0;
                if (i < 6 && i % 3)
                        printf("| %s | %.0f ns | %+.0f ns |\n", names[i], t[i][reps / 2],
                               t[i][reps / 2] - base);
                else
                        printf("| %s | %.0f ns | |\n", names[i], t[i][reps / 2]);
        }
        return 0;
}

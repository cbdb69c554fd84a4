/*
 * net_cost MODE ...  - the network policy's cost per call (bench/net.sh drives it).
 *
 *   net_cost serve                 listen on 127.0.0.1 (TCP and UDP, one port), print the
 *                                  port, accept and close connections, drain datagrams,
 *                                  until stdin closes. Runs natively: the "host service".
 *   net_cost connect PORT N        N x (socket, connect to 127.0.0.1:PORT, close)
 *   net_cost sendto PORT N         N x sendto(127.0.0.1:PORT) on one UDP socket: judged
 *   net_cost send PORT N           N x send() on a connected UDP socket: stays in the kernel
 *   net_cost getsockname PORT N    N x getsockname() of a TCP socket connected to PORT:
 *                                  notified for the netlink view; where twins can exist,
 *                                  performed by the supervisor (syscalls/net_twin.c)
 *   net_cost getsockname-local PORT N   the same on a UDP socket bound to 127.0.0.1:0 (no
 *                                  rule needed: with none, no twin can exist)
 *   net_cost udp-first PORT N      N x (socket, sendto 127.0.0.1:PORT, close): each send is a
 *                                  socket's first, which in a namespace makes its twin (and
 *                                  the twin's socket filter)
 *   net_cost udp-echo PORT N       N x (send "e", recv the echo) on a UDP socket connected to
 *                                  PORT: both in the kernel, but in a namespace the socket is
 *                                  a twin whose socket filter judges each answer
 *
 * The loops print "MODE ns_per_iter=<float>" and fail loudly if a call fails: a denied
 * call is much cheaper than an allowed one and would measure the wrong thing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
        fprintf(stderr, "net_cost: %s: %s\n", what, strerror(errno));
        exit(1);
}

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct sockaddr_in loopback(int port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sa;
}

static int serve(void)
{
        struct sockaddr_in sa = loopback(0);
        socklen_t len = sizeof(sa);
        int t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        char buf[2048];

        if (bind(t, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(t, 4096) < 0 ||
            getsockname(t, (struct sockaddr *)&sa, &len) < 0 ||
            bind(u, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("listen");
        printf("%d\n", ntohs(sa.sin_port));
        fflush(stdout);
        for (;;) {
                struct pollfd p[3] = {{.fd = t, .events = POLLIN},
                                      {.fd = u, .events = POLLIN},
                                      {.fd = 0, .events = POLLIN}};
                int c;

                if (poll(p, 3, -1) < 0)
                        continue;
                if (p[2].revents)
                        return 0; /* the driver is done */
                while ((c = accept(t, NULL, NULL)) >= 0)
                        close(c);
                for (;;) {
                        struct sockaddr_storage from;
                        socklen_t flen = sizeof(from);
                        ssize_t n =
                                recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);

                        if (n < 0)
                                break;
                        if (n == 1 && buf[0] == 'e') /* udp-echo */
                                (void)sendto(u, buf, 1, 0, (struct sockaddr *)&from, flen);
                }
        }
}

static void loop_connect(int port, long n)
{
        struct sockaddr_in sa = loopback(port);

        for (long i = 0; i < n; i++) {
                int s = socket(AF_INET, SOCK_STREAM, 0);

                if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                        die("connect");
                close(s);
        }
}

static void loop_sendto(int port, long n)
{
        struct sockaddr_in sa = loopback(port);
        int s = socket(AF_INET, SOCK_DGRAM, 0);

        for (long i = 0; i < n; i++)
                if (sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) != 1)
                        die("sendto");
}

static void loop_udp_first(int port, long n)
{
        struct sockaddr_in sa = loopback(port);

        for (long i = 0; i < n; i++) {
                int s = socket(AF_INET, SOCK_DGRAM, 0);

                if (s < 0 || sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) != 1)
                        die("sendto");
                close(s);
        }
}

static void loop_send(int port, long n)
{
        struct sockaddr_in sa = loopback(port);
        int s = socket(AF_INET, SOCK_DGRAM, 0);

        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("connect");
        for (long i = 0; i < n; i++)
                if (send(s, "x", 1, 0) != 1)
                        die("send");
}

static void loop_getsockname(int port, long n)
{
        struct sockaddr_in sa = loopback(port), got;
        int s = socket(AF_INET, SOCK_STREAM, 0);

        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("connect");
        for (long i = 0; i < n; i++) {
                socklen_t len = sizeof(got);

                if (getsockname(s, (struct sockaddr *)&got, &len) < 0 || got.sin_port == 0)
                        die("getsockname");
        }
}

static void loop_getsockname_local(int port, long n)
{
        struct sockaddr_in sa = loopback(0), got;
        int s = socket(AF_INET, SOCK_DGRAM, 0);

        (void)port;
        if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("bind");
        for (long i = 0; i < n; i++) {
                socklen_t len = sizeof(got);

                if (getsockname(s, (struct sockaddr *)&got, &len) < 0 || got.sin_port == 0)
                        die("getsockname");
        }
}

static void loop_udp_echo(int port, long n)
{
        struct sockaddr_in sa = loopback(port);
        int s = socket(AF_INET, SOCK_DGRAM, 0);
        char buf[8];

        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("connect");
        for (long i = 0; i < n; i++) {
                struct pollfd p = {.fd = s, .events = POLLIN};

                if (send(s, "e", 1, 0) != 1)
                        die("send");
                if (poll(&p, 1, 5000) != 1 || recv(s, buf, sizeof(buf), 0) != 1)
                        die("recv (the echo)");
        }
}

int main(int argc, char **argv)
{
        static const struct {
                const char *name;
                void (*loop)(int port, long n);
        } modes[] = {
                {"connect", loop_connect},         {"sendto", loop_sendto},
                {"udp-first", loop_udp_first},     {"send", loop_send},
                {"getsockname", loop_getsockname}, {"getsockname-local", loop_getsockname_local},
                {"udp-echo", loop_udp_echo}};
        double t0;

        if (argc == 2 && strcmp(argv[1], "serve") == 0)
                return serve();
        for (size_t i = 0; argc == 4 && i < sizeof(modes) / sizeof(modes[0]); i++) {
                long n = atol(argv[3]);

                if (strcmp(argv[1], modes[i].name) != 0 || n <= 0)
                        continue;
                t0 = now_ns();
                modes[i].loop(atoi(argv[2]), n);
                printf("%s ns_per_iter=%.1f\n", argv[1], (now_ns() - t0) / (double)n);
                return 0;
        }
        fprintf(stderr,
                "usage: net_cost serve | net_cost connect|sendto|udp-first|send|getsockname|"
                "getsockname-local|udp-echo PORT N\n");
        return 2;
}

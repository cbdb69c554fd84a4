/*
 * What a twin lets in and what it shows (issue 8; supervisor/net/twin.h), judged from
 * outside. With a network namespace of the sandbox's own, an allowed UDP send goes out on a
 * twin: a socket of the host's namespace bound to an ephemeral port of the host's.
 *
 *   ingress          the twin hears the peers it sent to and nobody else: a host socket on
 *                    another port of the same loopback address sends first, then the peers
 *                    answer and say END; the sandbox must print the answers alone. IPv4,
 *                    IPv4-mapped on an IPv6 socket, IPv6 (::1, where the host has it), a
 *                    twin born by connect and then disconnected, and one whose program tried
 *                    to take the filter off or replace it (EPERM each time; the sandbox's own
 *                    sockets keep their filters). The control: natively the same helper
 *                    prints the intruder's datagram.
 *   local_address    in a network namespace the test makes (192.0.2.1/24 and 2001:db8::1/64
 *                    on its lo: no address of this host is involved), a twin connected to
 *                    those addresses shows 0.0.0.0, ::ffff:0.0.0.0 or :: with its port, and
 *                    getsockname otherwise answers as the kernel does (short buffers, errors),
 *                    even while another thread swaps the fd number between the twin and a
 *                    unix socket. The control: natively the address shows.
 *
 *   failed_connect   a TCP connect through a twin that fails (a host port of the test's where
 *                    nothing listens, named by a rule) leaves the program's own socket at
 *                    its number, with its options: the same socket then reaches a listener
 *                    of the sandbox's own loopback, which a twin (a socket of the host's)
 *                    could not (EACCES). The supervisor installs the twin before connecting
 *                    it (syscalls/net_connect.c) and must put the socket back. The control:
 *                    natively the same helper prints the same lines.
 *
 * Without a network namespace for the sandbox the test exits 77 and says why; local_address
 * skips where this host has no `unshare` or `ip`, or refuses the namespace.
 */
#include "tests/helpers/runner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 120 };

static char work[96];
static bool have_v6;

/* ---- the host's sockets --------------------------------------------------------------------- */

/* A UDP socket on the loopback of `family`; its port in *port. */
static int host_udp(int family, int *port)
{
        struct sockaddr_storage ss = {.ss_family = (sa_family_t)family};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        socklen_t len = family == AF_INET ? sizeof(*in) : sizeof(*in6);
        int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (family == AF_INET)
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else
                in6->sin6_addr = in6addr_loopback;
        if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 ||
            getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                return -1;
        *port = ntohs(family == AF_INET ? in->sin_port : in6->sin6_port);
        return fd;
}

static void send_to(int fd, int family, int port, const char *what)
{
        struct sockaddr_in in = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
                                   .sin6_port = htons((uint16_t)port),
                                   .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        ssize_t n =
                family == AF_INET
                        ? sendto(fd, what, strlen(what), 0, (struct sockaddr *)&in, sizeof(in))
                        : sendto(fd, what, strlen(what), 0, (struct sockaddr *)&in6, sizeof(in6));

        assert_int_equal(n, (ssize_t)strlen(what));
}

/* How many "hello"s came to fd within a moment. */
static int hellos(int fd)
{
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char buf[64];
        int n = 0;

        while (poll(&p, 1, n ? 100 : 5000) == 1 && recv(fd, buf, sizeof(buf), 0) == 5)
                n++;
        return n;
}

/* ---- a run in the background ---------------------------------------------------------------- */

static struct bg {
        pthread_t thread;
        const char *argv[32];
        struct run_result r;
        atomic_bool finished;
} bg;

static void *bg_main(void *arg)
{
        (void)arg;
        if (runner_run((char *const *)bg.argv, NULL, TIMEOUT_S, &bg.r) < 0)
                bg.r.exit_code = -2;
        atomic_store(&bg.finished, true);
        return NULL;
}

/* Start argv; wait for the helper's $W/ready and return the port in it (-1 if the run ended
 * first). */
static int bg_start(const char *const argv[])
{
        char ready[160];
        size_t i = 0;

        snprintf(ready, sizeof(ready), "%s/ready", work);
        unlink(ready);
        memset(&bg, 0, sizeof(bg));
        for (; argv[i] && i < 31; i++)
                bg.argv[i] = argv[i];
        bg.argv[i] = NULL;
        assert_int_equal(pthread_create(&bg.thread, NULL, bg_main, NULL), 0);
        for (int t = 0; t < 6000 && !atomic_load(&bg.finished); t++) {
                FILE *f = fopen(ready, "r");
                int port;

                if (f) {
                        bool ok = fscanf(f, "%d", &port) == 1;

                        fclose(f);
                        if (ok) {
                                unlink(ready);
                                return port;
                        }
                }
                usleep(10000);
        }
        return -1;
}

static struct run_result *bg_finish(void)
{
        pthread_join(bg.thread, NULL);
        return &bg.r;
}

/* ---- ingress -------------------------------------------------------------------------------- */

/*
 * One exchange: the helper (`recv HOW ADDR`, in the sandbox unless `native`) sends to two
 * host peers, the intruder sends to its port, then the peers answer and the first says END.
 * Returns the helper's output (valid until the next exchange).
 */
static const char *exchange(const char *how, const char *addr, int family, bool native)
{
        int p1, p2, ip, fd1 = host_udp(family, &p1), fd2 = host_udp(family, &p2);
        int intruder = host_udp(family, &ip), twin;
        char rule[96], port1[16], port2[16];
        const char *stockade[] = {
                runner_stockade(), "run",  "-q", "--rw", work, "--allow-net", rule,  "--",
                ATTACK_TWIN,       "recv", how,  addr,   work, port1,         port2, NULL};
        const char *const *argv = native ? stockade + 8 : stockade;
        struct run_result *r;

        assert_true(fd1 >= 0 && fd2 >= 0 && intruder >= 0);
        snprintf(port1, sizeof(port1), "%d", p1);
        snprintf(port2, sizeof(port2), "%d", p2);
        snprintf(rule, sizeof(rule), family == AF_INET ? "udp/127.0.0.1:%d,%d" : "udp/[::1]:%d,%d",
                 p1, p2);
        if (strcmp(how, "zero") == 0) /* every port: port 0 may be sent to */
                snprintf(rule, sizeof(rule), "%s",
                         family == AF_INET ? "udp/127.0.0.1" : "udp/[::1]");
        runner_free(&bg.r);
        twin = bg_start(argv);
        if (twin < 0) {
                r = bg_finish();
                fail_msg("%s %s: the helper never got ready: exit %d\n%s\nstderr:\n%s", how, addr,
                         r->exit_code, r->out, r->err);
        }
        if (hellos(fd1) < 1 || hellos(fd2) < 1)
                fail_msg("%s %s: the peers did not hear the sandbox", how, addr);
        send_to(intruder, family, twin, "INTRUDER");
        usleep(50000);
        send_to(fd2, family, twin, "REPLY2");
        send_to(fd1, family, twin, "REPLY1");
        usleep(50000);
        send_to(fd1, family, twin, "END");
        r = bg_finish();
        close(fd1), close(fd2), close(intruder);
        return r->out;
}

static void expect_ingress(const char *how, const char *addr, int family, const char *want)
{
        const char *got = exchange(how, addr, family, false);

        if (strcmp(got, want) != 0)
                fail_msg("%s %s: want\n%sgot\n%sstderr:\n%s", how, addr, want, got, bg.r.err);
}

static void ingress(void **state)
{
        static const char *answers = "got:REPLY2\ngot:REPLY1\nend\n";
        char want[512];

        (void)state;
        /* The control: natively, an unconnected UDP socket hears anyone. */
        if (!strstr(exchange("send", "127.0.0.1", AF_INET, true), "got:INTRUDER"))
                fail_msg("control: natively the intruder was not heard:\n%s", bg.r.out);
        snprintf(want, sizeof(want), "sent:2\n%s", answers);
        expect_ingress("send", "127.0.0.1", AF_INET, want);
        expect_ingress("send", "::ffff:127.0.0.1", AF_INET, want);
        if (have_v6)
                expect_ingress("send", "::1", AF_INET6, want);
        /* Born connected (the kernel filters a connected socket), then disconnected. */
        expect_ingress("conn", "127.0.0.1", AF_INET, want);
        /* Port 0 is no peer: as one it let in every port of its address (an outside
         * attack, with a rule that names no port). */
        expect_ingress("zero", "127.0.0.1", AF_INET, want);
        /* The program cannot take the filter off a twin, nor put an open one on. */
        if (!strstr(exchange("meddle", "127.0.0.1", AF_INET, true), "got:INTRUDER"))
                fail_msg("control: natively the intruder was not heard:\n%s", bg.r.out);
        snprintf(want, sizeof(want),
                 "sent:2\nmeddle:detach=EPERM attach=EPERM lock=EPERM reuseport=EPERM "
                 "bpf=EPERM\ninside:attach=ok detach=ok\n%s",
                 answers);
        expect_ingress("meddle", "127.0.0.1", AF_INET, want);
        runner_free(&bg.r);
}

/* ---- the local address ----------------------------------------------------------------------- */

/* The script run in a network namespace of the test's: the addresses on lo, a TCP listener,
 * then each case natively and in the sandbox. Unprivileged, the capabilities of the user
 * namespace that owns it are dropped before anything runs ($DROP). */
static const char script[] =
        "ip link set lo up && ip addr add 192.0.2.1/24 dev lo && "
        "ip -6 addr add 2001:db8::1/64 dev lo nodad || { echo skip:ip; exit 0; }\n"
        "cd \"$W\" && exec $DROP sh -c '\n"
        "L=$(\"$H\" listen 192.0.2.1 7777) || exit 1\n"
        "for c in \"192.0.2.1 7777 tcp\" \"192.0.2.1 9 udp\" \"::ffff:192.0.2.1 9 udp\" "
        "\"2001:db8::1 9 udp\"; do\n"
        "  echo \"== $c\"; \"$H\" name $c\n"
        "  echo --; \"$S\" run -q $EXTRA --rw \"$W\" --allow-net 192.0.2.1 --allow-net 2001:db8::1 "
        "-- "
        "\"$H\" name $c\n"
        "done\n"
        "kill $L'\n";

/* The expected block of one case: native shows `addr`, the sandbox `shown`. */
static void block(char *out, size_t size, const char *c, const char *addr, const char *shown,
                  bool v6)
{
        const char *sem = v6 ? "short:len=28 family=10 zero:len=28 neg:EINVAL efault:EFAULT "
                               "ebadf:EBADF enotsock:ENOTSOCK\n"
                             : "short:len=16 family=2 zero:len=16 neg:EINVAL efault:EFAULT "
                               "ebadf:EBADF enotsock:ENOTSOCK\n";
        size_t n = strlen(out);

        snprintf(out + n, size - n,
                 "== %s\nlocal:%s port:yes\n%srace:leaked\n--\nlocal:%s port:yes\n%srace:none\n", c,
                 addr, sem, shown, sem);
}

/* `no_netns`: the same without a network namespace of the sandbox's (the test's namespace
 * is then the sandbox's too): its sockets are the host's, and a UDP connect, which sends
 * nothing, made getsockname show the host's address (an outside attack). */
static void local_address_run(bool no_netns)
{
        char env_h[256], env_s[256], env_w[160], env_home[168], want[2048] = "";
        const char *root[] = {"/usr/bin/unshare", "-n", "sh", "-c", script, NULL};
        const char *user[] = {"/usr/bin/unshare",
                              "-n",
                              "--user",
                              "--map-current-user",
                              "--keep-caps",
                              "sh",
                              "-c",
                              script,
                              NULL};
        char *envp[] = {env_h,
                        env_s,
                        env_w,
                        env_home,
                        NULL,
                        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                        no_netns ? "EXTRA=--allow-degraded" : "EXTRA=",
                        no_netns ? "STOCKADE_TEST_DISABLE=netns" : NULL,
                        NULL};
        struct run_result r;

        if (access("/usr/bin/unshare", X_OK) != 0 ||
            (access("/usr/sbin/ip", X_OK) != 0 && access("/usr/bin/ip", X_OK) != 0 &&
             access("/sbin/ip", X_OK) != 0)) {
                printf("skipped local_address: no unshare or ip (util-linux, iproute2) here\n");
                skip();
        }
        snprintf(env_h, sizeof(env_h), "H=%s", ATTACK_TWIN);
        snprintf(env_s, sizeof(env_s), "S=%s", runner_stockade());
        snprintf(env_w, sizeof(env_w), "W=%s", work);
        snprintf(env_home, sizeof(env_home), "HOME=%s", work);
        envp[4] = geteuid() == 0 ? "DROP=" : "DROP=setpriv --inh-caps=-all --ambient-caps=-all";
        assert_int_equal(
                runner_run((char *const *)(geteuid() == 0 ? root : user), envp, TIMEOUT_S, &r), 0);
        if (r.exit_code != 0 && strstr(r.err, "unshare")) {
                printf("skipped local_address: this host refuses the namespace: %s", r.err);
                runner_free(&r);
                skip();
        }
        if (strcmp(r.out, "skip:ip\n") == 0) {
                printf("skipped local_address: `ip` cannot set the namespace's addresses:\n%s",
                       r.err);
                runner_free(&r);
                skip();
        }
        block(want, sizeof(want), "192.0.2.1 7777 tcp", "192.0.2.1", "0.0.0.0", false);
        block(want, sizeof(want), "192.0.2.1 9 udp", "192.0.2.1", "0.0.0.0", false);
        block(want, sizeof(want), "::ffff:192.0.2.1 9 udp", "::ffff:192.0.2.1", "::ffff:0.0.0.0",
              true);
        block(want, sizeof(want), "2001:db8::1 9 udp", "2001:db8::1", "::", true);
        if (strcmp(r.out, want) != 0) {
                /* cmocka's message is short: the whole story on stderr. */
                fprintf(stderr, "want\n%sgot (exit %d)\n%sstderr:\n%s", want, r.exit_code, r.out,
                        r.err);
                fail_msg("the local addresses: see above");
        }
        runner_free(&r);
}

static void local_address(void **state)
{
        (void)state;
        local_address_run(false);
}

static void local_address_no_netns(void **state)
{
        (void)state;
        local_address_run(true);
}

/* ---- set-up ----------------------------------------------------------------------------------- */

/* The line of `stockade run -v` about the namespace ("yes", "no (why)"), or NULL. */
static char *netns_line(const char *err, char *out, size_t size)
{
        const char *line = strstr(err ? err : "", "network namespace");

        if (!line)
                return NULL;
        line += strlen("network namespace");
        line += strspn(line, " ");
        snprintf(out, size, "%.*s", (int)strcspn(line, "\n"), line);
        return out;
}

/* Whether this stockade gives the sandbox a network namespace here; 77 (and why) if not. */
static int available(void)
{
        const char *args[] = {"-v", "--", "/bin/true", NULL};
        struct run_result r;
        char line[256];
        int ret = 0;

        if (runner_stockade_run(args, TIMEOUT_S, &r) < 0 || r.exit_code != 0 ||
            !netns_line(r.err, line, sizeof(line))) {
                fprintf(stderr, "FAIL: stockade run -v -- /bin/true: exit %d\n%s", r.exit_code,
                        r.err);
                ret = 1;
        } else if (strncmp(line, "yes", 3) != 0) {
                printf("skipped: no network namespace for the sandbox here: `network namespace "
                       "%s`%s\n",
                       line,
                       getenv("STOCKADE_TEST_DISABLE") ? " (STOCKADE_TEST_DISABLE is set)" : "");
                ret = 77;
        }
        runner_free(&r);
        return ret;
}

static int setup(void **state)
{
        int port, fd;

        (void)state;
        snprintf(work, sizeof(work), "%s/twin-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp");
        assert_non_null(mkdtemp(work));
        /* The helper (nobody, when the test is root) writes its `ready` file here. */
        assert_int_equal(chmod(work, 0777), 0);
        fd = host_udp(AF_INET6, &port);
        have_v6 = fd >= 0;
        if (fd >= 0)
                close(fd);
        return 0;
}

static int teardown(void **state)
{
        char cmd[160];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
        return system(cmd) == 0 ? 0 : -1;
}

/* ---- a failed connect ---------------------------------------------------------------------- */

static void failed_connect(void **state)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        int closed = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char rule[64], port[16];
        const char *argv[] = {runner_stockade(), "run",   "-q", "--allow-net", rule, "--",
                              ATTACK_TWIN,       "retry", port, NULL};
        const char *want = "first:ECONNREFUSED\nsecond:ok\nkeepalive:1\n";
        struct run_result r;

        (void)state;
        /* Bound, not listening: a connect there is refused (a RST), on the host's loopback. */
        assert_true(closed >= 0);
        assert_int_equal(bind(closed, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(getsockname(closed, (struct sockaddr *)&sa, &len), 0);
        snprintf(port, sizeof(port), "%d", ntohs(sa.sin_port));
        snprintf(rule, sizeof(rule), "tcp/127.0.0.1:%s", port);
        assert_int_equal(runner_run((char *const *)argv + 6, NULL, TIMEOUT_S, &r), 0);
        if (strcmp(r.out, want) != 0)
                fail_msg("control: natively\n%s", r.out);
        runner_free(&r);
        assert_int_equal(runner_run((char *const *)argv, NULL, TIMEOUT_S, &r), 0);
        if (strcmp(r.out, want) != 0)
                fail_msg("in the sandbox: want\n%sgot\n%sstderr:\n%s", want, r.out, r.err);
        runner_free(&r);
        close(closed);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(ingress),
                cmocka_unit_test(local_address),
                cmocka_unit_test(local_address_no_netns),
                cmocka_unit_test(failed_connect),
        };
        int ret = available();

        if (ret)
                return ret;
        return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * The network policy (issue 8), judged from outside. This test serves on loopback only
 * (127.0.0.1, 127.0.0.2, ::1; never another address), natively, counting what each
 * listener receives:
 *   TCP 127.0.0.1:OK      replies ALLOWED   allowed by --allow-net tcp/127.0.0.1:OK
 *   TCP 127.0.0.1:BAD     replies SECRET    no rule: must receive nothing
 *   TCP 127.0.0.2:OK      replies SECRET    the allowed port on another address: nothing
 *   TCP [::1]:OK6         replies ALLOWED6  allowed by --allow-net [::1]:OK6
 *   TCP [::1]:BAD6        replies SECRET6   nothing
 *   UDP 127.0.0.1:UOK     counts datagrams  allowed by --allow-net udp/127.0.0.1:UOK
 *   UDP 127.0.0.1:UBAD    counts datagrams  nothing
 * The sandbox runs tests/helpers/attack_net.c, which connects and sends with every
 * spelling of these addresses (IPv4-mapped, IPv4-compatible, 0.0.0.0, ::), non-blocking,
 * with MSG_FASTOPEN, sendmsg, sendmmsg, and with a thread rewriting the address during the
 * call. A refusal must be EACCES AND the listener must have received nothing.
 *
 * Two modes (issue 8, item 5), learnt from `stockade run -v`: where the sandbox has a network
 * namespace of its own, a loopback destination that no rule names stays in that namespace,
 * where nothing listens: a TCP connect gets ECONNREFUSED and a datagram is sent to nobody.
 * Without one (STOCKADE_TEST_DISABLE=netns, hosts without user namespaces) the policy refuses
 * it with EACCES. Either way the host's listeners must receive nothing.
 */
#include "shim/landlock.h"
#include "tests/helpers/runner.h"

#include <arpa/inet.h>
#include <errno.h>
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 120 };

enum srv_id {
        S_OK,
        S_BAD,
        S_OTHER_ADDR,
        S_OK6,
        S_BAD6,
        S_UOK,
        S_UBAD,
        S_UOTHER_ADDR, /* the allowed UDP port on another loopback address */
        S_UNIX_OPEN,   /* a unix datagram socket in a directory the sandbox may reach */
        S_UNIX_HIDDEN, /* ... and one in a --hide directory */
        S__COUNT
};

struct srv {
        int fd;
        const char *reply; /* NULL: UDP */
        atomic_int got;    /* connections accepted / datagrams received */
        int port;
};

static struct srv srvs[S__COUNT];
static bool have_v6;
static bool netns; /* the sandbox has a network namespace of its own */
static char top[64], unix_open[160], unix_hidden[160], hidden_dir[96];
static pthread_t server;
static atomic_bool stop;

static void *serve(void *arg)
{
        (void)arg;
        while (!atomic_load(&stop)) {
                struct pollfd p[S__COUNT];

                for (int i = 0; i < S__COUNT; i++)
                        p[i] = (struct pollfd){.fd = srvs[i].fd, .events = POLLIN};
                if (poll(p, S__COUNT, 100) <= 0)
                        continue;
                for (int i = 0; i < S__COUNT; i++) {
                        char buf[256];
                        int c;

                        if (!(p[i].revents & POLLIN))
                                continue;
                        if (!srvs[i].reply) {
                                while (recv(srvs[i].fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
                                        atomic_fetch_add(&srvs[i].got, 1);
                                continue;
                        }
                        while ((c = accept4(srvs[i].fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                                atomic_fetch_add(&srvs[i].got, 1);
                                (void)!write(c, srvs[i].reply, strlen(srvs[i].reply));
                                close(c);
                        }
                }
        }
        return NULL;
}

/* A listener on `host`:port (0: any free port); returns the port, or -errno. */
static int listen_on(struct srv *s, const char *host, int port, int type, const char *reply)
{
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        socklen_t len;
        int one = 1;

        if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                len = sizeof(*in);
        } else {
                assert_int_equal(inet_pton(AF_INET6, host, &in6->sin6_addr), 1);
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                len = sizeof(*in6);
        }
        s->fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s->fd < 0)
                return -errno;
        setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(s->fd, (struct sockaddr *)&ss, len) < 0 ||
            (type == SOCK_STREAM && listen(s->fd, 512) < 0) ||
            getsockname(s->fd, (struct sockaddr *)&ss, &len) < 0) {
                int e = errno;
                close(s->fd);
                s->fd = -1;
                return -e;
        }
        s->reply = reply;
        s->port = ntohs(ss.ss_family == AF_INET ? in->sin_port : in6->sin6_port);
        return s->port;
}

static void listen_unix_dgram(struct srv *s, const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};

        s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        assert_true(s->fd >= 0);
        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        assert_int_equal(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(chmod(path, 0777), 0); /* only the walls keep the sandbox out */
}

static void make_unix_sockets(void)
{
        char open_dir[96];

        snprintf(top, sizeof(top), "/tmp/netpol-XXXXXX");
        assert_non_null(mkdtemp(top));
        assert_int_equal(chmod(top, 0755), 0);
        snprintf(open_dir, sizeof(open_dir), "%s/open", top);
        snprintf(hidden_dir, sizeof(hidden_dir), "%s/secret", top);
        assert_int_equal(mkdir(open_dir, 0755), 0);
        assert_int_equal(mkdir(hidden_dir, 0755), 0);
        snprintf(unix_open, sizeof(unix_open), "%s/s", open_dir);
        snprintf(unix_hidden, sizeof(unix_hidden), "%s/s", hidden_dir);
        listen_unix_dgram(&srvs[S_UNIX_OPEN], unix_open);
        listen_unix_dgram(&srvs[S_UNIX_HIDDEN], unix_hidden);
}

/* STOCKADE_TEST_DISABLE (a comma-separated list) names `layer`. */
static bool disabled(const char *layer)
{
        const char *v = getenv("STOCKADE_TEST_DISABLE");
        size_t n = strlen(layer);

        for (; v && *v; v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
                if (strncmp(v, layer, n) == 0 && (v[n] == ',' || v[n] == '\0'))
                        return true;
        }
        return false;
}

/* The mode, from `stockade run -v`'s layer line "network namespace  yes" (or "no (why)";
 * a stockade that prints no such line has none). STOCKADE_TEST_DISABLE=netns must turn
 * it off, else the variant that runs without it would test nothing new. */
static bool learn_netns(void)
{
        const char *args[] = {"-v", "--", "/bin/true", NULL};
        struct run_result r;
        bool yes = false;

        assert_int_equal(runner_stockade_run(args, TIMEOUT_S, &r), 0);
        if (r.exit_code != 0)
                fail_msg("stockade run -v -- /bin/true: exit %d: %s", r.exit_code, r.err);
        for (const char *line = r.err; line && *line; line = strchr(line, '\n')) {
                line += *line == '\n';
                if (strncmp(line, "stockade:", 9) != 0)
                        continue;
                line += 9 + strspn(line + 9, " ");
                if (strncmp(line, "network namespace", 17) == 0)
                        yes = strncmp(line + 17 + strspn(line + 17, " "), "yes", 3) == 0;
        }
        if (yes && disabled("netns"))
                fail_msg("STOCKADE_TEST_DISABLE=netns, yet -v says: network namespace yes\n%s",
                         r.err);
        runner_free(&r);
        fprintf(stderr, "note: %s\n",
                yes ? "the sandbox has a network namespace: a loopback destination without a "
                      "rule stays inside (ECONNREFUSED, or sent to nobody)"
                    : "no network namespace: a loopback destination without a rule is refused "
                      "(EACCES)");
        return yes;
}

static int setup(void **state)
{
        (void)state;
        netns = learn_netns();
        for (int i = 0; i < S__COUNT; i++)
                srvs[i].fd = -1;
        assert_true(listen_on(&srvs[S_OK], "127.0.0.1", 0, SOCK_STREAM, "ALLOWED") > 0);
        assert_true(listen_on(&srvs[S_BAD], "127.0.0.1", 0, SOCK_STREAM, "SECRET") > 0);
        /* The allowed port number on another loopback address. */
        assert_true(listen_on(&srvs[S_OTHER_ADDR], "127.0.0.2", srvs[S_OK].port, SOCK_STREAM,
                              "SECRET") > 0);
        have_v6 = listen_on(&srvs[S_OK6], "::1", 0, SOCK_STREAM, "ALLOWED6") > 0 &&
                  listen_on(&srvs[S_BAD6], "::1", 0, SOCK_STREAM, "SECRET6") > 0;
        if (!have_v6)
                fprintf(stderr, "note: no IPv6 loopback here: the IPv6 cases are skipped\n");
        assert_true(listen_on(&srvs[S_UOK], "127.0.0.1", 0, SOCK_DGRAM, NULL) > 0);
        assert_true(listen_on(&srvs[S_UBAD], "127.0.0.1", 0, SOCK_DGRAM, NULL) > 0);
        assert_true(listen_on(&srvs[S_UOTHER_ADDR], "127.0.0.2", srvs[S_UOK].port, SOCK_DGRAM,
                              NULL) > 0);
        make_unix_sockets();
        assert_int_equal(pthread_create(&server, NULL, serve, NULL), 0);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        atomic_store(&stop, true);
        pthread_join(server, NULL);
        for (int i = 0; i < S__COUNT; i++)
                if (srvs[i].fd >= 0)
                        close(srvs[i].fd);
        unlink(unix_open);
        unlink(unix_hidden);
        rmdir(hidden_dir);
        *strrchr(unix_open, '/') = '\0';
        rmdir(unix_open);
        rmdir(top);
        return 0;
}

static void reset(void)
{
        for (int i = 0; i < S__COUNT; i++)
                atomic_store(&srvs[i].got, 0);
}

/* Datagrams may still be in flight when the run ends: give the server a moment. */
static int settle(enum srv_id id, int want)
{
        for (int i = 0; i < 100 && atomic_load(&srvs[id].got) < want; i++)
                usleep(20000);
        usleep(100000); /* and a little more, for what must NOT arrive */
        return atomic_load(&srvs[id].got);
}

/* `script` with $A the helper and $OK $BAD $OK6 $BAD6 $UOK $UBAD the ports. */
static void expand(char *out, size_t size, const char *script)
{
        int n = snprintf(out, size,
                         "A='%s'; OK=%d; BAD=%d; OK6=%d; BAD6=%d; UOK=%d; UBAD=%d; "
                         "UNIX_OPEN='%s'; UNIX_HIDDEN='%s'; %s",
                         ATTACK_NET, srvs[S_OK].port, srvs[S_BAD].port, srvs[S_OK6].port,
                         srvs[S_BAD6].port, srvs[S_UOK].port, srvs[S_UBAD].port, unix_open,
                         unix_hidden, script);
        assert_true(n > 0 && (size_t)n < size);
}

/* stockade run OPTS + the rules of the header -- sh -c SCRIPT; `rules` false: no rule. */
static void run(const char *const extra[], bool rules, const char *script, struct run_result *r)
{
        char full[8192], ok[64], ok6[64], uok[64];
        const char *opts[32];
        size_t n = 0;

        snprintf(ok, sizeof(ok), "tcp/127.0.0.1:%d", srvs[S_OK].port);
        snprintf(ok6, sizeof(ok6), "tcp/[::1]:%d", srvs[S_OK6].port);
        snprintf(uok, sizeof(uok), "udp/127.0.0.1:%d", srvs[S_UOK].port);
        if (rules) {
                const char *v[] = {"--allow-net", ok, "--allow-net", uok};

                memcpy(opts, v, sizeof(v));
                n = 4;
                if (have_v6) {
                        opts[n++] = "--allow-net";
                        opts[n++] = ok6;
                }
        }
        for (; extra && *extra; extra++)
                opts[n++] = *extra;
        opts[n] = NULL;
        expand(full, sizeof(full), script);
        assert_int_equal(runner_stockade_sh("/tmp", opts, full, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

/* `got` is `want` line by line, where a line of `want` may offer alternatives separated by
 * '|' ("sent:8|err:ENETUNREACH"). */
static bool lines_match(const char *got, const char *want)
{
        while (*want) {
                const char *wend = strchr(want, '\n'), *gend = strchr(got, '\n'), *alt = want;
                bool ok = false;

                if (!wend || !gend)
                        return false;
                for (const char *bar; !ok && alt <= wend; alt = bar + 1) {
                        bar = memchr(alt, '|', (size_t)(wend - alt));
                        bar = bar ? bar : wend;
                        ok = bar - alt == gend - got && memcmp(alt, got, (size_t)(bar - alt)) == 0;
                }
                if (!ok)
                        return false;
                want = wend + 1;
                got = gend + 1;
        }
        return *got == '\0';
}

static void expect(struct run_result *r, const char *want)
{
        if (!lines_match(r->out, want))
                fail_msg("exit %d\nwant:\n%sgot:\n%s\nstderr:\n%s", r->exit_code, want, r->out,
                         r->err);
}

static void nothing_reached_secrets(void)
{
        int bad = atomic_load(&srvs[S_BAD].got), other = atomic_load(&srvs[S_OTHER_ADDR].got),
            bad6 = atomic_load(&srvs[S_BAD6].got), ubad = settle(S_UBAD, 0),
            uother = settle(S_UOTHER_ADDR, 0);

        if (bad || other || bad6 || ubad || uother)
                fail_msg("denied listeners received: tcp %d, other address %d, ipv6 %d, udp %d, "
                         "udp other address %d",
                         bad, other, bad6, ubad, uother);
}

/* No flag at all: the default policy refuses every way to reach a host's listener; in a
 * network namespace each of them stays inside, where nothing listens. */
static void default_denies(void **state)
{
        struct run_result r;

        (void)state;
        reset();
        run(NULL, false,
            "$A tcp 127.0.0.1 $BAD; $A tcp-nb 127.0.0.1 $BAD; $A tcp 0.0.0.0 $BAD; "
            "$A tcp ::ffff:127.0.0.1 $BAD; $A udp 127.0.0.1 $UBAD; "
            "$A udp-msg ::ffff:127.0.0.1 $UBAD; $A udp-mmsg 0.0.0.0 $UBAD $UBAD; "
            "$A fastopen 127.0.0.1 $BAD",
            &r);
        expect(&r, netns ? "err:ECONNREFUSED\ninprogress\nerr:ECONNREFUSED\nerr:ECONNREFUSED\n"
                           "err:ECONNREFUSED\nsent:8\nsent:8\nsent:2 len:8,8\nerr:ECONNREFUSED\n"
                         : "err:EACCES\nerr:EACCES\nerr:EACCES\nerr:EACCES\nerr:EACCES\n"
                           "err:EACCES\nerr:EACCES\nerr:EACCES\n");
        nothing_reached_secrets();
        runner_free(&r);
}

/* An allowed port connects and exchanges data; a denied port and a denied address are
 * refused with EACCES, blocking or not, and -v says why. In a network namespace they are
 * not refused: they reach the sandbox's own loopback, where nothing listens. */
static void tcp_allowed_and_denied(void **state)
{
        const char *v[] = {"-v", NULL};
        struct run_result r;

        (void)state;
        reset();
        run(v, true,
            "$A tcp 127.0.0.1 $OK; $A tcp 127.0.0.1 $BAD; $A tcp 127.0.0.2 $OK; "
            "$A tcp-nb 127.0.0.1 $OK; $A tcp-nb 127.0.0.1 $BAD",
            &r);
        expect(&r, netns ? "got:ALLOWED\nerr:ECONNREFUSED\nerr:ECONNREFUSED\ninprogress\n"
                           "got:ALLOWED\ninprogress\nerr:ECONNREFUSED\n"
                         : "got:ALLOWED\nerr:EACCES\nerr:EACCES\ninprogress\ngot:ALLOWED\n"
                           "err:EACCES\n");
        assert_int_equal(atomic_load(&srvs[S_OK].got), 2);
        nothing_reached_secrets();
        if (!netns &&
            (!strstr(r.err, "connect to 127.0.0.2:") || !strstr(r.err, "a loopback address")))
                fail_msg("-v does not say why: %s", r.err);
        runner_free(&r);
}

/* The other spellings of an address are judged as the address they reach. In a network
 * namespace, the IPv4-compatible ::127.0.0.1 may also meet the kernel's answer there (no
 * route: ENETUNREACH); either way it must not reach the host. */
static void spellings(void **state)
{
        struct run_result r;
        char want[512];

        (void)state;
        reset();
        run(NULL, true,
            "$A tcp ::ffff:127.0.0.1 $OK; $A tcp ::ffff:127.0.0.1 $BAD; $A tcp ::127.0.0.1 $BAD; "
            "$A tcp 0.0.0.0 $OK; $A tcp 0.0.0.0 $BAD; $A tcp ::ffff:0.0.0.0 $BAD; "
            "$A tcp-nb ::ffff:127.0.0.1 $BAD",
            &r);
        expect(&r, netns ? "got:ALLOWED\nerr:ECONNREFUSED\nerr:ECONNREFUSED|err:ENETUNREACH\n"
                           "got:ALLOWED\nerr:ECONNREFUSED\nerr:ECONNREFUSED\ninprogress\n"
                           "err:ECONNREFUSED\n"
                         : "got:ALLOWED\nerr:EACCES\nerr:EACCES\ngot:ALLOWED\nerr:EACCES\n"
                           "err:EACCES\nerr:EACCES\n");
        assert_int_equal(atomic_load(&srvs[S_OK].got), 2);
        nothing_reached_secrets();
        runner_free(&r);
        /* 0.0.0.0 from a socket bound to 127.0.0.2 goes to 127.0.0.2 (the kernel sends to the
         * bound address), which no rule allows: an outside review reached it there, without
         * a network namespace, with only 127.0.0.1:OK allowed. */
        run(NULL, true,
            "$A from 127.0.0.2 tcp 0.0.0.0 $OK; $A from 127.0.0.2 tcp-nb 0.0.0.0 $OK; "
            "$A from 127.0.0.2 udp 0.0.0.0 $UOK; $A from 127.0.0.2 udp-msg 0.0.0.0 $UOK; "
            "$A from ::ffff:127.0.0.2 udp ::ffff:0.0.0.0 $UOK; $A tcp 0.0.0.0 $OK",
            &r);
        expect(&r, netns ? "err:ECONNREFUSED\ninprogress\nerr:ECONNREFUSED\nsent:8\nsent:8\n"
                           "sent:8\ngot:ALLOWED\n"
                         : "err:EACCES\nerr:EACCES\nerr:EACCES\nerr:EACCES\nerr:EACCES\n"
                           "got:ALLOWED\n");
        nothing_reached_secrets();
        runner_free(&r);
        if (!have_v6)
                return;
        run(NULL, true, "$A tcp ::1 $OK6; $A tcp ::1 $BAD6; $A tcp :: $OK6; $A tcp :: $BAD6", &r);
        snprintf(want, sizeof(want), "got:ALLOWED6\n%s\ngot:ALLOWED6\n%s\n",
                 netns ? "err:ECONNREFUSED" : "err:EACCES",
                 netns ? "err:ECONNREFUSED" : "err:EACCES");
        expect(&r, want);
        assert_int_equal(atomic_load(&srvs[S_OK6].got), 2);
        nothing_reached_secrets();
        runner_free(&r);
}

/* UDP: sendto, sendmsg and sendmmsg with a destination; each datagram judged. In a network
 * namespace a datagram to a port no rule names is sent, into the sandbox's own loopback;
 * but a socket that sent to an allowed destination has become a socket of the host's
 * namespace (its "twin", README), where such a datagram would reach the host: the second
 * datagram of a sendmmsg after an allowed one is refused, and the call ends with one. */
static void udp(void **state)
{
        struct run_result r;

        (void)state;
        reset();
        run(NULL, true,
            "$A udp 127.0.0.1 $UOK; $A udp 127.0.0.1 $UBAD; $A udp-msg 127.0.0.1 $UOK; "
            "$A udp-msg 127.0.0.1 $UBAD; $A udp-mmsg 127.0.0.1 $UOK $UBAD; "
            "$A udp-mmsg 127.0.0.1 $UBAD $UOK; $A udp ::ffff:127.0.0.1 $UBAD; "
            "$A udp 0.0.0.0 $UBAD; $A udp ::127.0.0.1 $UBAD",
            &r);
        expect(&r, netns ? "sent:8\nsent:8\nsent:8\nsent:8\nsent:1 len:8,0\nsent:2 len:8,8\n"
                           "sent:8\nsent:8\nsent:8|err:ENETUNREACH\n"
                         : "sent:8\nerr:EACCES\nsent:8\nerr:EACCES\nsent:1 len:8,0\nerr:EACCES\n"
                           "err:EACCES\nerr:EACCES\nerr:EACCES\n");
        assert_int_equal(settle(S_UOK, netns ? 4 : 3), netns ? 4 : 3);
        nothing_reached_secrets();
        runner_free(&r);
}

/* MSG_FASTOPEN connects: its destination is judged like connect's. */
static void fastopen(void **state)
{
        struct run_result r;

        (void)state;
        reset();
        run(NULL, true, "$A fastopen 127.0.0.1 $BAD; $A fastopen ::ffff:127.0.0.1 $BAD", &r);
        expect(&r, netns ? "err:ECONNREFUSED\nerr:ECONNREFUSED\n" : "err:EACCES\nerr:EACCES\n");
        nothing_reached_secrets();
        runner_free(&r);
}

/* A thread rewrites the port between the allowed and the denied one while connect and
 * sendto run: what the supervisor copied is what the kernel uses. Natively (the control)
 * the same program reaches the denied listeners. A connect to the denied port is refused
 * (EACCES), or in a network namespace finds nothing listening there (ECONNREFUSED). */
static void rewritten_address(void **state)
{
        char script[256], native_cmd[4096];
        const char *native[] = {"/bin/sh", "-c", native_cmd, NULL};
        struct run_result r;
        int ok, refused, other, connrefused, control;

        (void)state;
        reset();
        expand(native_cmd, sizeof(native_cmd), "$A race $OK $BAD 300; $A race-udp $UOK $UBAD 300");
        assert_int_equal(runner_run((char *const *)native, NULL, TIMEOUT_S, &r), 0);
        control = atomic_load(&srvs[S_BAD].got) + settle(S_UBAD, 1);
        fprintf(stderr, "control, natively: %d connections/datagrams reached the denied ports\n",
                control);
        runner_free(&r);
        usleep(300000); /* let the server accept and drain what the control sent */

        reset();
        snprintf(script, sizeof(script), "$A race $OK $BAD 300; $A race-udp $UOK $UBAD 300");
        run(NULL, true, script, &r);
        if (sscanf(r.out, "race: ok=%d refused=%d other=%d econnrefused=%d", &ok, &refused, &other,
                   &connrefused) != 4 ||
            ok + (netns ? connrefused : refused) != 300)
                fail_msg("%s %s", r.out, r.err);
        nothing_reached_secrets();
        assert_int_equal(atomic_load(&srvs[S_OK].got), ok);
        runner_free(&r);
}

/* A server inside the sandbox is reached from inside under the default policy (no rule),
 * on an address, a wildcard and (where there is IPv6) a dual-stack wildcard. */
static void server_inside(void **state)
{
        struct run_result r;

        (void)state;
        run(NULL, false, "$A server 127.0.0.1; $A server 0.0.0.0", &r);
        expect(&r, "inside:pong\ninside:pong\n");
        runner_free(&r);
        if (!have_v6)
                return;
        run(NULL, false, "$A server ::1; $A server ::", &r);
        expect(&r, "inside:pong\ninside:pong\n");
        runner_free(&r);
}

/* A unix datagram socket in a hidden place is refused like a connect to it (EACCES), and
 * receives nothing; one elsewhere receives (unix sockets follow the filesystem's walls, not
 * the network policy: no --allow-net needed). */
static void unix_datagram(void **state)
{
        const char *v[] = {"--hide", hidden_dir, NULL};
        const char *host[] = {"--hide", hidden_dir, "--net", "host", NULL};
        const char *script = "$A unix-dgram \"$UNIX_HIDDEN\"; $A unix-dgram \"$UNIX_OPEN\"; "
                             "cd \"$(dirname \"$UNIX_HIDDEN\")\" 2>/dev/null && $A unix-dgram s || "
                             "echo err:EACCES";
        struct run_result r;

        (void)state;
        reset();
        /* The test's datagram socket is a host service's, out of reach (as a host's stream
         * server is: an outside review sent to one); the last: a relative name from inside the
         * hidden directory, refused; or the cd itself, where the directory is covered in the
         * mount namespace. */
        run(v, false, script, &r);
        expect(&r, "err:EACCES\nerr:EACCES\nerr:EACCES\n");
        assert_int_equal(settle(S_UNIX_OPEN, 0), 0);
        assert_int_equal(settle(S_UNIX_HIDDEN, 0), 0);
        runner_free(&r);
        /* --net host lifts the rule, not the hidden places. */
        reset();
        run(host, false, script, &r);
        expect(&r, "err:EACCES\nsent:8\nerr:EACCES\n");
        assert_int_equal(settle(S_UNIX_OPEN, 1), 1);
        assert_int_equal(settle(S_UNIX_HIDDEN, 0), 0);
        runner_free(&r);
}

/* bind: loopback and wildcard addresses are allowed; another address only by a rule. The
 * address tried is 192.0.2.1 (TEST-NET-1, on no interface here): natively EADDRNOTAVAIL,
 * refused by the policy before the kernel sees it, so that nothing is ever bound on a real
 * interface of this host even when the test fails. In a network namespace the bind is the
 * namespace's, which has lo alone: the kernel's EADDRNOTAVAIL, rule or not. */
static void bind_policy(void **state)
{
        const char *v[] = {"--allow-net", "192.0.2.1", NULL};
        struct run_result r;

        (void)state;
        run(NULL, false, "$A bind 127.0.0.1; $A bind 0.0.0.0; $A bind 192.0.2.1", &r);
        expect(&r, netns ? "bound\nbound\nerr:Cannot assign requested address\n"
                         : "bound\nbound\nerr:EACCES\n");
        runner_free(&r);
        run(v, false, "$A bind 192.0.2.1", &r);
        expect(&r, "err:Cannot assign requested address\n");
        runner_free(&r);
}

/* SCM_RIGHTS through the emulated sendmsg: the program's fds travel, and a number that is
 * not open in the program is EBADF — never one of the supervisor's own fds (its listener,
 * the trace file, pidfds of the tree). */
static void fd_passing(void **state)
{
        struct run_result r;

        (void)state;
        run(NULL, false, "$A fdpass", &r);
        expect(&r, "fdpass:ok leaks:0\n");
        runner_free(&r);
}

/* Source routes would send packets to an address the policy never judged. The kernel
 * already wants CAP_NET_RAW for IPv4's (refused here before it sees them anyway), not for an
 * IPv6 segment routing header, which unprivileged code sets natively. */
static void source_routes(void **state)
{
        struct run_result r;

        (void)state;
        reset();
        run(NULL, false, "$A srcroute $UOK", &r);
        expect(&r, "EPERM EPERM EPERM\n");
        runner_free(&r);
}

/* --net host: no restriction. */
static void net_host(void **state)
{
        const char *v[] = {"--net", "host", NULL};
        struct run_result r;

        (void)state;
        reset();
        run(v, false, "$A tcp 127.0.0.1 $BAD; $A udp 127.0.0.1 $UBAD", &r);
        expect(&r, "got:SECRET\nsent:8\n");
        assert_int_equal(atomic_load(&srvs[S_BAD].got), 1);
        assert_int_equal(settle(S_UBAD, 1), 1);
        runner_free(&r);
}

/* --max-connections: the third connect is refused and never reaches the listener; the
 * sandbox's own loopback server does not count. */
static void max_connections(void **state)
{
        const char *v[] = {"--max-connections", "2", NULL};
        struct run_result r;

        (void)state;
        reset();
        run(v, true,
            "$A tcp 127.0.0.1 $OK; $A tcp-nb 127.0.0.1 $OK; $A tcp 127.0.0.1 $OK; "
            "$A server 127.0.0.1",
            &r);
        expect(&r, "got:ALLOWED\ninprogress\ngot:ALLOWED\nerr:EACCES\ninside:pong\n");
        assert_int_equal(atomic_load(&srvs[S_OK].got), 2);
        runner_free(&r);
}

/* --publish runs in both modes; without a namespace it adds nothing (the loopback is shared),
 * and -v says so. Every line -v prints is one message of stockade's. */
static void publish_note(void **state)
{
        char port[16];
        const char *v[] = {"-v", "--publish", port, NULL};
        struct srv free_port = {.fd = -1};
        struct run_result r;

        (void)state;
        /* A TCP port free on the host: bind(0) picks one no TCP socket holds (a UDP pick
         * could be an outgoing connection's local port, busy under load). A port taken
         * between the pick and the run is picked again. */
        for (int tries = 0;; tries++) {
                assert_true(listen_on(&free_port, "127.0.0.1", 0, SOCK_STREAM, NULL) > 0);
                close(free_port.fd);
                snprintf(port, sizeof(port), "%d", free_port.port);
                run(v, false, "echo ran", &r);
                if (r.exit_code != 125 || !strstr(r.err, "Address already in use") || tries == 4)
                        break;
                runner_free(&r);
        }
        expect(&r, "ran\n");
        if (!strstr(r.err, "--publish") ||
            (!netns && !strstr(r.err, "no network namespace on this run")))
                fail_msg("-v does not mention --publish: %s", r.err);
        for (const char *line = r.err, *end; *line; line = end + 1) {
                const char *again = strstr(line + 1, "stockade:");

                end = strchr(line, '\n');
                if (!end)
                        fail_msg("-v's last line lacks its newline: `%s`", line);
                if (strncmp(line, "stockade:", 9) != 0 || (again && again < end))
                        fail_msg("-v: not one message of stockade's on a line: `%.*s`",
                                 (int)(end - line), line);
        }
        runner_free(&r);
}

/* A deny rule wins over an allow rule, and -v names it. */
static void deny_wins(void **state)
{
        char deny[64];
        const char *v[] = {"--allow-net", "127.0.0.0/8", "--deny-net", deny, "-v", NULL};
        struct run_result r;

        (void)state;
        reset();
        snprintf(deny, sizeof(deny), "127.0.0.1:%d", srvs[S_BAD].port);
        run(v, false, "$A tcp 127.0.0.1 $BAD; $A tcp 127.0.0.1 $OK", &r);
        expect(&r, "err:EACCES\ngot:ALLOWED\n");
        nothing_reached_secrets();
        if (!strstr(r.err, "denied by deny rule `127.0.0.1:"))
                fail_msg("-v does not name the rule: %s", r.err);
        runner_free(&r);
}

/* A malformed rule: one line naming it, exit 125, and nothing runs. */
static void malformed_rule(void **state)
{
        const char *v[] = {"--allow-net", "127.0.0.1:99999", NULL};
        struct run_result r;

        (void)state;
        run(v, false, "echo ran", &r);
        assert_int_equal(r.exit_code, 125);
        assert_string_equal(r.out, "");
        if (!strstr(r.err, "--allow-net `127.0.0.1:99999`: port 99999 is out of range") ||
            strchr(r.err, '\n') != r.err + strlen(r.err) - 1)
                fail_msg("%s", r.err);
        runner_free(&r);
}

/* In a child: a TCP connect to the allowed listener and a TCP bind, made by the process
 * itself, after entering the sandbox's Landlock ruleset or not. Returns "CB": C connect
 * refused with EACCES (c: succeeded), B bind refused (b: succeeded). */
static void landlock_probe(bool enter, char out[3])
{
        int pipefd[2], status;
        pid_t pid;

        assert_int_equal(pipe(pipefd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sockaddr_in sa = {.sin_family = AF_INET,
                                         .sin_port = htons((uint16_t)srvs[S_OK].port),
                                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                char res[2];
                int fd, c, b;

                if (enter) {
                        fd = landlock_ruleset_create(landlock_abi_version(), true);
                        if (fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                            landlock_restrict(fd) < 0)
                                _exit(1);
                }
                fd = socket(AF_INET, SOCK_STREAM, 0);
                c = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno == EACCES;
                fd = socket(AF_INET, SOCK_STREAM, 0);
                sa.sin_port = 0;
                b = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno == EACCES;
                res[0] = c ? 'C' : 'c';
                res[1] = b ? 'B' : 'b';
                _exit(write(pipefd[1], res, 2) == 2 ? 0 : 1);
        }
        close(pipefd[1]);
        assert_int_equal(read(pipefd[0], out, 2), 2);
        out[2] = '\0';
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The second wall: with Landlock ABI 4 the sandbox's ruleset refuses every TCP connect and
 * bind the program makes itself (the supervisor makes the allowed ones, outside it). */
static void landlock_wall(void **state)
{
        char before[3], after[3];

        (void)state;
        if (landlock_abi_version() < 4)
                skip(); /* no network rights in this kernel's Landlock */
        landlock_probe(false, before);
        landlock_probe(true, after);
        assert_string_equal(before, "cb");
        assert_string_equal(after, "CB");
}

int main(void)
{
        /* clang-format off */
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(default_denies),
                cmocka_unit_test(tcp_allowed_and_denied),
                cmocka_unit_test(spellings),
                cmocka_unit_test(udp),
                cmocka_unit_test(fastopen),
                cmocka_unit_test(rewritten_address),
                cmocka_unit_test(server_inside),
                cmocka_unit_test(net_host),
                cmocka_unit_test(bind_policy),
                cmocka_unit_test(fd_passing),
                cmocka_unit_test(source_routes),
                cmocka_unit_test(unix_datagram),
                cmocka_unit_test(deny_wins),
                cmocka_unit_test(publish_note),
                cmocka_unit_test(max_connections),
                cmocka_unit_test(malformed_rule),
                cmocka_unit_test(landlock_wall),
        };
        /* clang-format on */

        return cmocka_run_group_tests(tests, setup, teardown);
}

/* What a twin receives and shows (supervisor/net/twin.h), without a sandbox: the peers a
 * send reaches, the program built from them judged by the kernel itself on loopback sockets
 * (datagrams from a peer in, from any other address or port dropped, IPv4 on a dual-stack
 * socket too), the program read back, and the local address shown. */
#include "supervisor/net/twin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static struct twin_peer peer(const char *addr, int port)
{
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        struct twin_peer p;
        size_t len = sizeof(*in);

        if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
        } else {
                assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                len = sizeof(*in6);
        }
        assert_int_equal(twin_peer_from(&ss, len, port < 0, &p), 0);
        return p;
}

static bool same(const struct twin_peer *a, const struct twin_peer *b)
{
        return memcmp(a->a, b->a, 16) == 0 && a->port == b->port;
}

/* ---- the peers a destination gives ---------------------------------------------------------- */

static void peers_from(void **state)
{
        static const struct {
                const char *dest, *wire;
        } cases[] = {
                {"1.2.3.4", "1.2.3.4"},
                {"::ffff:1.2.3.4", "1.2.3.4"}, /* goes out as IPv4 */
                {"0.0.0.0", "127.0.0.1"},
                {"::ffff:0.0.0.0", "127.0.0.1"},
                {"::", "::1"},
                {"2001:db8::1", "2001:db8::1"},
                {"64:ff9b::102:304", "64:ff9b::102:304"}, /* NAT64: IPv6 on the wire */
                {"::1.2.3.4", "::1.2.3.4"},
        };
        struct sockaddr_in6 short6 = {.sin6_family = AF_INET6};
        struct sockaddr_un {
                sa_family_t f;
                char p[20];
        } un = {.f = AF_UNIX};
        struct twin_peer p, want;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                p = peer(cases[i].dest, 53);
                want = peer(cases[i].wire, 53);
                if (!same(&p, &want))
                        fail_msg("%s", cases[i].dest);
        }
        p = peer("1.2.3.4", -1); /* a ping socket's: any port */
        assert_int_equal(p.port, 0);
        assert_int_equal(twin_peer_from(&short6, 20, false, &p), -EINVAL);
        assert_int_equal(twin_peer_from(&un, sizeof(un), false, &p), -EAFNOSUPPORT);
}

static bool has(const struct twin_peer *v, size_t n, const struct twin_peer *p)
{
        for (size_t i = 0; i < n; i++)
                if (same(&v[i], p))
                        return true;
        return false;
}

/* Newest first; a peer sent to again changes nothing; past the limit the oldest of the new
 * peer's family goes, or of the other family when it has none. */
static void peers_added(void **state)
{
        struct twin_peer v[TWIN_PEERS_MAX], p, first4 = peer("10.0.0.1", 1),
                                               first6 = peer("2001:db8::1", 1);
        size_t n = 0;

        (void)state;
        assert_int_equal(twin_peer_add(v, &n, &first4), 1);
        assert_int_equal(twin_peer_add(v, &n, &first4), 0);
        assert_int_equal(twin_peer_add(v, &n, &first6), 1);
        assert_int_equal(n, 2);
        assert_true(same(&v[0], &first6));
        while (n < TWIN_PEERS_MAX) {
                p = peer("10.0.0.2", (int)n);
                assert_int_equal(twin_peer_add(v, &n, &p), 1);
        }
        /* Full: a new IPv6 peer pushes out the oldest IPv6 one, not the oldest of all. */
        p = peer("2001:db8::2", 9);
        assert_int_equal(twin_peer_add(v, &n, &p), 1);
        assert_int_equal(n, TWIN_PEERS_MAX);
        assert_true(same(&v[0], &p));
        assert_false(has(v, n, &first6));
        assert_true(has(v, n, &first4));
        /* A new IPv4 one pushes out the oldest IPv4 one. */
        p = peer("10.0.0.3", 7);
        assert_int_equal(twin_peer_add(v, &n, &p), 1);
        assert_false(has(v, n, &first4));
        /* Only IPv4 peers: a new IPv6 one pushes out the oldest of them. */
        n = 0;
        for (int i = 0; i < TWIN_PEERS_MAX; i++) {
                p = peer("10.0.0.4", i + 1);
                twin_peer_add(v, &n, &p);
        }
        p = peer("::1", 1);
        assert_int_equal(twin_peer_add(v, &n, &p), 1);
        assert_false(
                has(v, n,
                    &(struct twin_peer){.a = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 4}, .port = 1}));
        assert_int_equal(n, TWIN_PEERS_MAX);
}

/* ---- the program, read back ---------------------------------------------------------------- */

static void parse_round_trip(void **state)
{
        struct sock_filter prog[TWIN_PROG_MAX];
        struct twin_peer v[TWIN_PEERS_MAX] = {0}, got[TWIN_PEERS_MAX];
        size_t n = 0, len;

        (void)state;
        len = twin_filter_build(v, 0, prog);
        assert_int_equal(twin_filter_parse(prog, len, got), 0);
        for (int i = 0; n < TWIN_PEERS_MAX; i++) {
                char a[64];
                struct twin_peer p;

                snprintf(a, sizeof(a), i % 2 ? "10.0.%d.1" : "2001:db8::%x", i);
                p = peer(a, i % 3 ? 1000 + i : -1);
                twin_peer_add(v, &n, &p);
        }
        len = twin_filter_build(v, n, prog);
        assert_true(len <= TWIN_PROG_MAX);
        assert_int_equal(twin_filter_parse(prog, len, got), (int)n);
        /* IPv4 first, then IPv6, each in the order given. */
        for (int v4 = 1, k = 0; v4 >= 0; v4--)
                for (size_t i = 0; i < n; i++)
                        if ((v[i].a[10] == 0xff) == v4)
                                assert_true(same(&v[i], &got[k++]));
        /* Anything else is not ours: a jump or an opcode changed anywhere, the header's
         * constants, a cut, a program of someone else's. (A changed address or port is just
         * another peer.) */
        for (size_t i = 0; i < len; i++) {
                struct sock_filter keep = prog[i];

                prog[i].jf ^= 1;
                if (twin_filter_parse(prog, len, got) >= 0)
                        fail_msg("instruction %zu's jf changed, still parsed", i);
                prog[i] = keep;
                prog[i].code ^= BPF_X;
                if (twin_filter_parse(prog, len, got) >= 0)
                        fail_msg("instruction %zu's code changed, still parsed", i);
                prog[i] = keep;
        }
        for (size_t i = 0; i < 12; i++) {
                struct sock_filter keep = prog[i];

                prog[i].k ^= 0x100;
                if (twin_filter_parse(prog, len, got) >= 0)
                        fail_msg("header instruction %zu changed, still parsed", i);
                prog[i] = keep;
        }
        assert_int_equal(twin_filter_parse(prog, len - 1, got), -EINVAL);
        assert_int_equal(twin_filter_parse(prog, 3, got), -EINVAL);
        prog[0].k = 0; /* the same program without our mark */
        assert_int_equal(twin_filter_parse(prog, len, got), -EINVAL);
}

/* ---- the kernel judges it ------------------------------------------------------------------ */

static int udp_on(int family, const char *addr, int *port)
{
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        socklen_t len = family == AF_INET ? sizeof(*in) : sizeof(*in6);
        int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -1;
        ss.ss_family = (sa_family_t)family;
        if (family == AF_INET)
                inet_pton(AF_INET, addr, &in->sin_addr);
        else
                inet_pton(AF_INET6, addr, &in6->sin6_addr);
        if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
            getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
                close(fd);
                return -1;
        }
        *port = ntohs(family == AF_INET ? in->sin_port : in6->sin6_port);
        return fd;
}

/* Send one datagram from `from` to `to`'s port on `addr`; whether `to` received it. */
static bool delivered(int from, int to, int family, const char *addr, int port)
{
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        struct pollfd p = {.fd = to, .events = POLLIN};
        char buf[16];

        ss.ss_family = (sa_family_t)family;
        if (family == AF_INET) {
                inet_pton(AF_INET, addr, &in->sin_addr);
                in->sin_port = htons((uint16_t)port);
        } else {
                inet_pton(AF_INET6, addr, &in6->sin6_addr);
                in6->sin6_port = htons((uint16_t)port);
        }
        assert_int_equal(sendto(from, "x", 1, 0, (struct sockaddr *)&ss,
                                family == AF_INET ? sizeof(*in) : sizeof(*in6)),
                         1);
        return poll(&p, 1, 200) == 1 && recv(to, buf, sizeof(buf), MSG_DONTWAIT) == 1;
}

static void attach(int fd, const struct twin_peer *v, size_t n)
{
        struct sock_filter prog[TWIN_PROG_MAX];
        struct sock_fprog fp = {.filter = prog};

        fp.len = (unsigned short)twin_filter_build(v, n, prog);
        if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0)
                fail_msg("SO_ATTACH_FILTER: %s", strerror(errno));
}

/* IPv4: the peer's address and port get in, another port of the same address does not; a
 * dual-stack IPv6 socket that sent to ::ffff:127.0.0.1 hears that peer over IPv4. */
static void kernel_v4(void **state)
{
        int pport, oport, rport, r6port;
        int peer_fd = udp_on(AF_INET, "127.0.0.1", &pport);
        int other = udp_on(AF_INET, "127.0.0.1", &oport);
        int r = udp_on(AF_INET, "0.0.0.0", &rport), r6 = udp_on(AF_INET6, "::", &r6port);
        struct twin_peer v[2];

        (void)state;
        assert_true(peer_fd >= 0 && other >= 0 && r >= 0);
        /* The control: without the filter, anyone gets in. */
        assert_true(delivered(other, r, AF_INET, "127.0.0.1", rport));
        v[0] = peer("127.0.0.1", pport);
        v[1] = peer("2001:db8::1", pport);
        attach(r, v, 2);
        assert_true(delivered(peer_fd, r, AF_INET, "127.0.0.1", rport));
        assert_false(delivered(other, r, AF_INET, "127.0.0.1", rport));
        if (r6 >= 0) {
                v[0] = peer("::ffff:127.0.0.1", pport);
                attach(r6, v, 1);
                assert_true(delivered(peer_fd, r6, AF_INET, "127.0.0.1", r6port));
                assert_false(delivered(other, r6, AF_INET, "127.0.0.1", r6port));
                close(r6);
        }
        /* No peer at all: nothing gets in. */
        attach(r, v, 0);
        assert_false(delivered(peer_fd, r, AF_INET, "127.0.0.1", rport));
        close(peer_fd), close(other), close(r);
}

/* IPv6 (::1), when the host has it: the same; and a ping-style peer (any port) lets every
 * port of its address in. */
static void kernel_v6(void **state)
{
        int pport, oport, rport;
        int peer_fd = udp_on(AF_INET6, "::1", &pport), other = udp_on(AF_INET6, "::1", &oport);
        int r = udp_on(AF_INET6, "::", &rport), p4port;
        int peer4 = udp_on(AF_INET, "127.0.0.1", &p4port);
        struct twin_peer v[2];

        (void)state;
        if (peer_fd < 0 || other < 0 || r < 0)
                skip(); /* no IPv6 loopback here */
        v[0] = peer("::1", pport);
        attach(r, v, 1);
        assert_true(delivered(peer_fd, r, AF_INET6, "::1", rport));
        assert_false(delivered(other, r, AF_INET6, "::1", rport));
        /* IPv4 on the dual-stack socket: only as a peer of its own. */
        assert_false(delivered(peer4, r, AF_INET, "127.0.0.1", rport));
        v[1] = peer("127.0.0.1", p4port);
        attach(r, v, 2);
        assert_true(delivered(peer4, r, AF_INET, "127.0.0.1", rport));
        /* A ping socket's peer: every port of its address. */
        v[0] = peer("::1", -1);
        attach(r, v, 1);
        assert_true(delivered(other, r, AF_INET6, "::1", rport));
        close(peer_fd), close(other), close(r), close(peer4);
}

/* ---- the local address shown --------------------------------------------------------------- */

static void local_names(void **state)
{
        static const struct {
                const char *addr, *shown;
        } cases[] = {
                {"192.0.2.7", "0.0.0.0"},
                {"127.0.0.1", "127.0.0.1"},
                {"127.1.2.3", "127.1.2.3"},
                {"0.0.0.0", "0.0.0.0"},
                {"2001:db8::7", "::"},
                {"fe80::1", "::"},
                {"::1", "::1"},
                {"::", "::"},
                {"::ffff:192.0.2.7", "::ffff:0.0.0.0"},
                {"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                struct sockaddr_storage ss = {0};
                struct sockaddr_in *in = (struct sockaddr_in *)&ss;
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
                bool v4 = inet_pton(AF_INET, cases[i].addr, &in->sin_addr) == 1;
                char out[64];
                bool changed;

                if (v4) {
                        in->sin_family = AF_INET;
                        in->sin_port = htons(4242);
                } else {
                        inet_pton(AF_INET6, cases[i].addr, &in6->sin6_addr);
                        in6->sin6_family = AF_INET6;
                        in6->sin6_port = htons(4242);
                        in6->sin6_scope_id = 2;
                        in6->sin6_flowinfo = htonl(5);
                }
                changed = twin_local_name(&ss, v4 ? sizeof(*in) : sizeof(*in6));
                inet_ntop(ss.ss_family, v4 ? (void *)&in->sin_addr : (void *)&in6->sin6_addr, out,
                          sizeof(out));
                if (strcmp(out, cases[i].shown) != 0)
                        fail_msg("%s shown as %s", cases[i].addr, out);
                assert_int_equal(changed, strcmp(cases[i].addr, cases[i].shown) != 0);
                assert_int_equal(ntohs(v4 ? in->sin_port : in6->sin6_port), 4242);
                if (!v4 && changed)
                        assert_true(in6->sin6_scope_id == 0 && in6->sin6_flowinfo == 0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(peers_from),       cmocka_unit_test(peers_added),
                cmocka_unit_test(parse_round_trip), cmocka_unit_test(kernel_v4),
                cmocka_unit_test(kernel_v6),        cmocka_unit_test(local_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

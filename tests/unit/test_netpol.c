/* The network policy without a sandbox (supervisor/net/netpol.h): rule parsing, address
 * normalisation, special ranges, deny over allow, the sandbox's own loopback ports. */
#include "supervisor/net/netpol.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

/* ---- parsing ------------------------------------------------------------------------------ */

struct parse_case {
        const char *spec;
        const char *err; /* NULL: valid; else a piece of the message */
        enum netpol_kind kind;
        unsigned protos;
        size_t n_ports;
};

#define TU (NETPOL_TCP | NETPOL_UDP)

static const struct parse_case parse_cases[] = {
        {"pypi.org:443", NULL, NETPOL_NAME, TU, 1},
        {"PyPI.org.", NULL, NETPOL_NAME, NETPOL_ANY_PROTO, 0},
        {"*.example.com:80,443", NULL, NETPOL_NAME, TU, 2},
        {"tcp/1.2.3.4:443", NULL, NETPOL_CIDR, NETPOL_TCP, 1},
        {"udp/10.0.0.0/8:53", NULL, NETPOL_CIDR, NETPOL_UDP, 1},
        {"10.0.0.0/8", NULL, NETPOL_CIDR, NETPOL_ANY_PROTO, 0},
        {"*:443", NULL, NETPOL_ANY_HOST, TU, 1},
        {"*:8000-8100", NULL, NETPOL_ANY_HOST, TU, 1},
        {"*:80,8000-8100,443", NULL, NETPOL_ANY_HOST, TU, 3},
        {"*", NULL, NETPOL_ANY_HOST, NETPOL_ANY_PROTO, 0},
        {"[::1]:443", NULL, NETPOL_CIDR, TU, 1},
        {"[fc00::/7]:443", NULL, NETPOL_CIDR, TU, 1},
        {"::1", NULL, NETPOL_CIDR, NETPOL_ANY_PROTO, 0},
        {"fe80::/10", NULL, NETPOL_CIDR, NETPOL_ANY_PROTO, 0},
        {"127.0.0.1:*", NULL, NETPOL_CIDR, NETPOL_ANY_PROTO, 0},
        {"", "empty", 0, 0, 0},
        {"tcp/", "empty", 0, 0, 0},
        {":443", "host is empty", 0, 0, 0},
        {"*:", "port is missing", 0, 0, 0},
        {"*:0", "out of range", 0, 0, 0},
        {"*:65536", "out of range", 0, 0, 0},
        {"*:99999999999999999999", "out of range", 0, 0, 0},
        {"*:http", "not a port number", 0, 0, 0},
        {"*:443,", "port is missing", 0, 0, 0},
        {"*:9000-8000", "backwards", 0, 0, 0},
        {"*:80-", "port is missing", 0, 0, 0},
        {"1.2.3.400:80", "not an IPv4 address", 0, 0, 0},
        {"10.0.0.0/33", "prefix length", 0, 0, 0},
        {"10.0.0.0/", "prefix length", 0, 0, 0},
        {"10.1.0.0/8", "bits set beyond", 0, 0, 0},
        {"[::1", "without `]`", 0, 0, 0},
        {"[::1]443", "only `:PORTS`", 0, 0, 0},
        {"[1.2.3.4]:80", "IPv6", 0, 0, 0},
        {"[fc00::/200]:1", "prefix length", 0, 0, 0},
        {"[gggg::1]:1", "not an IPv6 address", 0, 0, 0},
        {"exa mple.com", "character", 0, 0, 0},
        {"a..b", "empty label", 0, 0, 0},
        {"sctp/1.2.3.4", "character", 0, 0, 0},
};

static void parse_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
                const struct parse_case *c = &parse_cases[i];
                struct netpol p = {0};
                char err[200] = "";
                int r = netpol_add_rule(&p, c->spec, false, err, sizeof(err));

                if (c->err) {
                        if (r != -EINVAL || !strstr(err, c->err))
                                fail_msg("`%s`: expected an error with `%s`, got %d `%s`", c->spec,
                                         c->err, r, err);
                        assert_int_equal(p.n, 0);
                } else {
                        if (r != 0)
                                fail_msg("`%s`: %s", c->spec, err);
                        assert_int_equal(p.n, 1);
                        assert_int_equal(p.rules[0].kind, c->kind);
                        assert_int_equal(p.rules[0].protos, c->protos);
                        assert_int_equal(p.rules[0].n_ports, c->n_ports);
                        assert_string_equal(p.rules[0].spec, c->spec);
                }
                netpol_free(&p);
        }
}

static void parse_details(void **state)
{
        struct netpol p = {0};
        char err[200];

        (void)state;
        assert_int_equal(netpol_add_rule(&p, "PyPI.Org.:443", false, err, sizeof(err)), 0);
        assert_string_equal(p.rules[0].name, "pypi.org");
        assert_int_equal(netpol_add_rule(&p, "*:80,8000-8100", true, err, sizeof(err)), 0);
        assert_true(p.rules[1].deny);
        assert_int_equal(p.rules[1].ports[1].lo, 8000);
        assert_int_equal(p.rules[1].ports[1].hi, 8100);
        assert_int_equal(netpol_add_rule(&p, "10.0.0.0/8", false, err, sizeof(err)), 0);
        assert_int_equal(p.rules[2].prefix, 96 + 8);
        assert_int_equal(netpol_add_parts(&p, false, "tcp", "::1", "443", err, sizeof(err)), 0);
        assert_string_equal(p.rules[3].spec, "tcp/[::1]:443");
        assert_int_equal(netpol_add_parts(&p, true, "udp", "10.0.0.0/8", NULL, err, sizeof(err)),
                         0);
        assert_string_equal(p.rules[4].spec, "udp/10.0.0.0/8");
        assert_int_equal(netpol_add_parts(&p, false, "icmp", "*", NULL, err, sizeof(err)), -EINVAL);
        netpol_free(&p);
}

/* ---- addresses --------------------------------------------------------------------------- */

static struct netpol_addr v4(const char *s, uint16_t port)
{
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(port)};
        struct netpol_addr a;

        assert_int_equal(inet_pton(AF_INET, s, &in.sin_addr), 1);
        assert_int_equal(netpol_addr_from(&in, sizeof(in), &a), 0);
        return a;
}

static struct netpol_addr v6(const char *s, uint16_t port)
{
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        struct netpol_addr a;

        assert_int_equal(inet_pton(AF_INET6, s, &in6.sin6_addr), 1);
        assert_int_equal(netpol_addr_from(&in6, sizeof(in6), &a), 0);
        return a;
}

struct norm_case {
        const char *in; /* an IPv6 spelling */
        const char *as; /* the IPv4 (or IPv6) address it is judged as */
        enum netpol_class cls;
};

static const struct norm_case norm_cases[] = {
        {"::ffff:127.0.0.1", "127.0.0.1", NETPOL_LOOPBACK},
        {"::127.0.0.1", "127.0.0.1", NETPOL_LOOPBACK},
        {"::ffff:10.1.2.3", "10.1.2.3", NETPOL_PRIVATE},
        {"::10.1.2.3", "10.1.2.3", NETPOL_PRIVATE},
        {"::ffff:169.254.169.254", "169.254.169.254", NETPOL_METADATA},
        {"::169.254.169.254", "169.254.169.254", NETPOL_METADATA},
        {"::", "::1", NETPOL_LOOPBACK},
        {"::ffff:0.0.0.0", "127.0.0.1", NETPOL_LOOPBACK},
        {"::1", "::1", NETPOL_LOOPBACK},
        {"::ffff:8.8.8.8", "8.8.8.8", NETPOL_PUBLIC},
        {"64:ff9b::169.254.169.254", "169.254.169.254", NETPOL_METADATA},
        {"64:ff9b::a01:203", "10.1.2.3", NETPOL_PRIVATE},
        {"64:ff9b::8.8.8.8", "8.8.8.8", NETPOL_PUBLIC},
        {"64:ff9b:1::a01:203", "64:ff9b:1::a01:203", NETPOL_PUBLIC},
        {"fd00:ec2::254", "fd00:ec2::254", NETPOL_METADATA},
        {"fd12::1", "fd12::1", NETPOL_PRIVATE},
        {"fe80::1", "fe80::1", NETPOL_LINKLOCAL},
        {"ff02::1", "ff02::1", NETPOL_MULTICAST},
        {"2001:db8::1", "2001:db8::1", NETPOL_PUBLIC},
};

static enum netpol_class classify(struct netpol_addr a)
{
        return netpol_classify(&a);
}

static void normalisation(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(norm_cases) / sizeof(norm_cases[0]); i++) {
                const struct norm_case *c = &norm_cases[i];
                struct netpol_addr got = v6(c->in, 80);
                struct netpol_addr want = strchr(c->as, ':') ? v6(c->as, 80) : v4(c->as, 80);

                if (memcmp(got.a, want.a, 16) != 0)
                        fail_msg("%s is not judged as %s", c->in, c->as);
                assert_int_equal(netpol_classify(&got), c->cls);
        }
        /* 0.0.0.0 reaches the local host. */
        struct netpol_addr any = v4("0.0.0.0", 80), lo = v4("127.0.0.1", 80);
        assert_memory_equal(any.a, lo.a, 16);
        assert_int_equal(classify(v4("172.31.255.255", 1)), NETPOL_PRIVATE);
        assert_int_equal(classify(v4("172.32.0.0", 1)), NETPOL_PUBLIC);
        assert_int_equal(classify(v4("100.127.0.1", 1)), NETPOL_PRIVATE);
        assert_int_equal(classify(v4("100.128.0.1", 1)), NETPOL_PUBLIC);
        assert_int_equal(classify(v4("192.168.1.1", 1)), NETPOL_PRIVATE);
        assert_int_equal(classify(v4("169.254.1.1", 1)), NETPOL_LINKLOCAL);
        assert_int_equal(classify(v4("255.255.255.255", 1)), NETPOL_MULTICAST);
        assert_int_equal(classify(v4("239.1.1.1", 1)), NETPOL_MULTICAST);
}

static void bad_sockaddrs(void **state)
{
        struct sockaddr_in in = {.sin_family = AF_INET};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        struct sockaddr_storage un = {.ss_family = AF_UNIX};
        struct netpol_addr a;

        (void)state;
        assert_int_equal(netpol_addr_from(&in, sizeof(in) - 1, &a), -EINVAL);
        assert_int_equal(netpol_addr_from(&in6, 23, &a), -EINVAL);
        assert_int_equal(netpol_addr_from(&in6, 24, &a), 0); /* RFC 2133: no scope id */
        assert_int_equal(netpol_addr_from(&un, sizeof(un), &a), -EAFNOSUPPORT);
        assert_int_equal(netpol_addr_from(&in, 1, &a), -EINVAL);
        assert_true(netpol_sockaddr_is_any(&in, sizeof(in)));
        assert_true(netpol_sockaddr_is_any(&in6, sizeof(in6)));
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_false(netpol_sockaddr_is_any(&in, sizeof(in)));
}

/* ---- decisions ------------------------------------------------------------------------------ */

struct decide_case {
        const char *rules; /* ';'-separated, "!" first = deny */
        unsigned proto;
        const char *addr;
        uint16_t port;
        bool allow;
        enum netpol_reason reason;
};

#define T NETPOL_TCP
#define U NETPOL_UDP

static const struct decide_case decide_cases[] = {
        /* default deny */
        {"", T, "8.8.8.8", 443, false, NETPOL_BY_DEFAULT},
        {"", T, "127.0.0.1", 80, false, NETPOL_BY_SPECIAL},
        /* *:PORTS: public only */
        {"*:443", T, "8.8.8.8", 443, true, NETPOL_BY_ALLOW},
        {"*:443", U, "8.8.8.8", 443, true, NETPOL_BY_ALLOW},
        {"*:443", T, "8.8.8.8", 80, false, NETPOL_BY_DEFAULT},
        {"*:443", T, "127.0.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "::1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "0.0.0.0", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "::", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "::ffff:127.0.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "::127.0.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "10.0.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "192.168.1.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "172.16.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "100.64.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "fc00::1", 443, false, NETPOL_BY_SPECIAL},
        {"*:443", T, "64:ff9b::10.0.0.1", 443, false, NETPOL_BY_SPECIAL},
        {"*:80", T, "169.254.169.254", 80, false, NETPOL_BY_SPECIAL},
        {"*:80", T, "fd00:ec2::254", 80, false, NETPOL_BY_SPECIAL},
        {"*:80", T, "fe80::1", 80, false, NETPOL_BY_SPECIAL},
        {"*", T, "8.8.8.8", 1, true, NETPOL_BY_ALLOW},
        {"*", T, "10.0.0.1", 1, false, NETPOL_BY_SPECIAL},
        {"0.0.0.0/0", T, "10.0.0.1", 1, false, NETPOL_BY_SPECIAL},
        {"0.0.0.0/0", T, "9.9.9.9", 1, true, NETPOL_BY_ALLOW},
        {"[::/0]:1", T, "::1", 1, false, NETPOL_BY_SPECIAL},
        /* protocols */
        {"tcp/*:443", U, "8.8.8.8", 443, false, NETPOL_BY_DEFAULT},
        {"udp/*:53", U, "8.8.8.8", 53, true, NETPOL_BY_ALLOW},
        {"udp/*:53", T, "8.8.8.8", 53, false, NETPOL_BY_DEFAULT},
        {"*:443", NETPOL_OTHER, "8.8.8.8", 0, false, NETPOL_BY_DEFAULT},
        {"8.8.8.8", NETPOL_OTHER, "8.8.8.8", 0, true, NETPOL_BY_ALLOW},
        /* a CIDR inside a special range names it */
        {"127.0.0.1:8080", T, "127.0.0.1", 8080, true, NETPOL_BY_ALLOW},
        {"127.0.0.1:8080", T, "0.0.0.0", 8080, true, NETPOL_BY_ALLOW},
        {"127.0.0.1:8080", T, "::ffff:127.0.0.1", 8080, true, NETPOL_BY_ALLOW},
        {"127.0.0.1:8080", T, "::127.0.0.1", 8080, true, NETPOL_BY_ALLOW},
        {"127.0.0.1:8080", T, "127.0.0.2", 8080, false, NETPOL_BY_SPECIAL},
        {"127.0.0.1:8080", T, "::1", 8080, false, NETPOL_BY_SPECIAL},
        {"[::1]:8080", T, "::", 8080, true, NETPOL_BY_ALLOW},
        {"127.0.0.0/8", T, "127.9.9.9", 22, true, NETPOL_BY_ALLOW},
        {"10.0.0.0/8:443", T, "10.1.2.3", 443, true, NETPOL_BY_ALLOW},
        {"10.0.0.0/8:443", T, "::ffff:10.1.2.3", 443, true, NETPOL_BY_ALLOW},
        {"8.0.0.0/7", T, "10.1.2.3", 443, false, NETPOL_BY_SPECIAL}, /* wider than 10/8 */
        {"169.254.0.0/16", T, "169.254.1.1", 80, true, NETPOL_BY_ALLOW},
        {"169.254.0.0/16", T, "169.254.169.254", 80, false, NETPOL_BY_SPECIAL},
        {"169.254.169.254:80", T, "169.254.169.254", 80, true, NETPOL_BY_ALLOW},
        {"169.254.169.254:80", T, "::ffff:169.254.169.254", 80, true, NETPOL_BY_ALLOW},
        {"fc00::/7", T, "fd12::1", 80, true, NETPOL_BY_ALLOW},
        {"fc00::/7", T, "fd00:ec2::254", 80, false, NETPOL_BY_SPECIAL},
        /* deny wins, whatever the order */
        {"*:443;!8.8.8.8", T, "8.8.8.8", 443, false, NETPOL_BY_DENY},
        {"!8.8.8.8;*:443", T, "8.8.8.8", 443, false, NETPOL_BY_DENY},
        {"*:443;!8.8.0.0/16:443", T, "8.8.4.4", 443, false, NETPOL_BY_DENY},
        {"*:443;!8.8.0.0/16:80", T, "8.8.4.4", 443, true, NETPOL_BY_ALLOW},
        {"127.0.0.0/8;!*:22", T, "127.0.0.1", 22, false, NETPOL_BY_DENY},
        {"*;!udp/*", U, "9.9.9.9", 53, false, NETPOL_BY_DENY},
        {"*;!udp/*", T, "9.9.9.9", 53, true, NETPOL_BY_ALLOW},
        /* name rules need DNS: they match nothing yet */
        {"dns.google:443", T, "8.8.8.8", 443, false, NETPOL_BY_DEFAULT},
};

static void load(struct netpol *p, const char *rules)
{
        char buf[256], err[200];

        snprintf(buf, sizeof(buf), "%s", rules);
        for (char *save = NULL, *r = strtok_r(buf, ";", &save); r; r = strtok_r(NULL, ";", &save))
                if (netpol_add_rule(p, r[0] == '!' ? r + 1 : r, r[0] == '!', err, sizeof(err)) < 0)
                        fail_msg("rule `%s`: %s", r, err);
}

static struct netpol_addr addr_of(const char *s, uint16_t port)
{
        return strchr(s, ':') ? v6(s, port) : v4(s, port);
}

static void decide_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
                const struct decide_case *c = &decide_cases[i];
                struct netpol p = {0};
                struct netpol_addr a = addr_of(c->addr, c->port);
                struct netpol_verdict v;
                char why[200];

                load(&p, c->rules);
                v = netpol_decide(&p, NULL, c->proto, &a);
                netpol_verdict_str(&v, why, sizeof(why));
                if (v.allow != c->allow || v.reason != c->reason)
                        fail_msg("rules `%s`, %s port %u: %s (want %s, reason %d)", c->rules,
                                 c->addr, c->port, why, c->allow ? "allow" : "deny", c->reason);
                netpol_free(&p);
        }
}

static void host_mode(void **state)
{
        struct netpol p = {.mode = NETPOL_MODE_HOST};
        struct netpol_addr a = v4("169.254.169.254", 80);

        (void)state;
        assert_true(netpol_decide(&p, NULL, T, &a).allow);
}

static struct netpol_verdict decide(struct netpol *p, struct netpol_own *own, unsigned proto,
                                    struct netpol_addr a)
{
        return netpol_decide(p, own, proto, &a);
}

static void own_ports(void **state)
{
        struct netpol p = {0};
        struct netpol_own own;
        struct netpol_addr lo = v4("127.0.0.1", 5000), lo2 = v4("127.0.0.2", 5000);
        struct netpol_addr pub = v4("8.8.8.8", 5000), six = v6("::1", 5000);
        struct netpol_addr any6 = v6("::", 6000);

        (void)state;
        netpol_own_init(&own);
        assert_false(netpol_decide(&p, &own, T, &lo).allow);
        netpol_own_add(&own, T, &lo, 0);
        netpol_own_add(&own, T, &lo, 0); /* twice: one entry */
        assert_int_equal(own.n, 1);
        netpol_own_add(&own, T, &pub, 0); /* not loopback: not kept */
        assert_int_equal(own.n, 1);
        assert_int_equal(netpol_decide(&p, &own, T, &lo).reason, NETPOL_BY_OWN);
        assert_true(decide(&p, &own, T, v4("0.0.0.0", 5000)).allow);
        assert_false(netpol_decide(&p, &own, U, &lo).allow);  /* other protocol */
        assert_false(netpol_decide(&p, &own, T, &lo2).allow); /* other address */
        assert_false(netpol_decide(&p, &own, T, &six).allow);
        assert_false(netpol_decide(&p, &own, T, &pub).allow);
        assert_false(decide(&p, &own, T, v4("127.0.0.1", 5001)).allow);
        /* a wildcard bind: every loopback address of its families */
        netpol_own_add(&own, T, &any6, NETPOL_ANY_V6);
        assert_true(decide(&p, &own, T, v6("::1", 6000)).allow);
        assert_false(decide(&p, &own, T, v4("127.0.0.1", 6000)).allow);
        netpol_own_add(&own, U, &any6, NETPOL_ANY_V4 | NETPOL_ANY_V6);
        assert_true(decide(&p, &own, U, v4("127.3.0.1", 6000)).allow);
        /* a deny rule still wins */
        load(&p, "!127.0.0.1:5000");
        assert_int_equal(netpol_decide(&p, &own, T, &lo).reason, NETPOL_BY_DENY);
        netpol_free(&p);
        netpol_own_free(&own);
}

/* --publish [HOST_PORT:]PORT: what parses, and each error. */
static void publish_specs(void **state)
{
        static const char *const bad[] = {"0",    "65536", "x",     "80:", ":80",
                                          "80:0", "-1",    "1:2:3", "",    "080080"};
        struct netpol p = {0};
        char err[128];

        (void)state;
        assert_int_equal(netpol_add_publish(&p, "8080", err, sizeof(err)), 0);
        assert_int_equal(netpol_add_publish(&p, "9000:3000", err, sizeof(err)), 0);
        assert_int_equal(p.n_publish, 2);
        assert_int_equal(p.publish[0].host, 8080);
        assert_int_equal(p.publish[0].sandbox, 8080);
        assert_int_equal(p.publish[1].host, 9000);
        assert_int_equal(p.publish[1].sandbox, 3000);
        assert_int_equal(netpol_add_publish(&p, "9000:4000", err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "host port 9000 is published already");
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
                if (netpol_add_publish(&p, bad[i], err, sizeof(err)) != -EINVAL)
                        fail_msg("`%s` was taken", bad[i]);
                assert_string_equal(err, "not [HOST_PORT:]PORT with ports 1-65535");
        }
        for (unsigned port = 1; p.n_publish < NETPOL_PUBLISH_MAX; port++) {
                char spec[16];

                snprintf(spec, sizeof(spec), "%u", port);
                assert_int_equal(netpol_add_publish(&p, spec, err, sizeof(err)), 0);
        }
        assert_int_equal(netpol_add_publish(&p, "100", err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "at most 16 published ports");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(parse_table),   cmocka_unit_test(parse_details),
                cmocka_unit_test(normalisation), cmocka_unit_test(bad_sockaddrs),
                cmocka_unit_test(decide_table),  cmocka_unit_test(host_mode),
                cmocka_unit_test(own_ports),     cmocka_unit_test(publish_specs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

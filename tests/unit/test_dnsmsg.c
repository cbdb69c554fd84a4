/*
 * The supervisor's DNS without a sandbox: queries parsed as a hostile program may send them
 * (supervisor/net/dnsmsg.c), answers built, and the names of the network policy
 * (supervisor/net/netpol_dns.c): which names are answered, static entries, and connects
 * judged by the names an address was handed out for.
 */
#include "supervisor/net/dnsmsg.h"
#include "supervisor/net/netpol.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netinet/in.h>
#include <resolv.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A query: header (id 0x1234, RD, one question) + `qname` (wire form, with its length) +
 * type A, class IN. */
static size_t make_query(uint8_t *out, const void *qname, size_t qlen)
{
        static const uint8_t hdr[12] = {0x12, 0x34, 0x01, 0x00, 0x00, 0x01};

        memcpy(out, hdr, 12);
        memcpy(out + 12, qname, qlen);
        memcpy(out + 12 + qlen, "\x00\x01\x00\x01", 4);
        return 16 + qlen;
}

static void parse_table(void **state)
{
        struct {
                const char *what;
                const uint8_t *bytes; /* NULL: built with make_query from qname */
                const char *qname;
                size_t len; /* of bytes or qname */
                int want;
                const char *lower;
        } cases[] = {
                {"empty", (const uint8_t *)"", NULL, 0, DNSMSG_DROP, NULL},
                {"truncated header", (const uint8_t *)"\x12\x34\x01\x00\x00", NULL, 5, DNSMSG_DROP,
                 NULL},
                {"a response", (const uint8_t *)"\x12\x34\x81\x00\x00\x01\x00\x00\x00\x00\x00\x00",
                 NULL, 12, DNSMSG_DROP, NULL},
                {"opcode STATUS",
                 (const uint8_t *)"\x12\x34\x10\x00\x00\x01\x00\x00\x00\x00\x00\x00", NULL, 12,
                 DNSMSG_NOTIMP, NULL},
                {"no question", (const uint8_t *)"\x12\x34\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                 NULL, 12, DNSMSG_FORMERR, NULL},
                {"two questions, one present", NULL, "\x03svc\x04test\x00", 10, DNSMSG_FORMERR,
                 NULL},
                {"header only, one question",
                 (const uint8_t *)"\x12\x34\x01\x00\x00\x01\x00\x00\x00"
                                  "\x00\x00\x00",
                 NULL, 12, DNSMSG_FORMERR, NULL},
                {"compression loop", NULL, "\xc0\x0c", 2, DNSMSG_FORMERR, NULL},
                {"forward pointer", NULL, "\xc0\x20", 2, DNSMSG_FORMERR, NULL},
                {"label past the end", NULL, "\x3fxyz", 4, DNSMSG_FORMERR, NULL},
                {"reserved label type", NULL, "\x83svc\x00", 5, DNSMSG_FORMERR, NULL},
                {"good", NULL, "\x03Svc\x04TEST\x00", 10, DNSMSG_NOERROR, "svc.test"},
                {"root", NULL, "\x00", 1, DNSMSG_NOERROR, ""},
                {"a dot inside a label", NULL, "\x03s.c\x04test\x00", 10, DNSMSG_NOERROR, ""},
                {"a NUL inside a label", NULL, "\x03s\000c\x04test\x00", 10, DNSMSG_NOERROR, ""},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint8_t buf[600];
                struct dnsmsg_query q;
                size_t len = cases[i].len;
                int r;

                if (cases[i].bytes)
                        memcpy(buf, cases[i].bytes, len);
                else
                        len = make_query(buf, cases[i].qname, len);
                if (strcmp(cases[i].what, "two questions, one present") == 0)
                        buf[5] = 2;
                r = dnsmsg_parse_query(buf, len, &q);
                if (r != cases[i].want)
                        fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].want);
                if (cases[i].lower && strcmp(q.lower, cases[i].lower) != 0)
                        fail_msg("%s: name `%s`, want `%s`", cases[i].what, q.lower,
                                 cases[i].lower);
                if (r >= 0 && q.id != 0x1234)
                        fail_msg("%s: id %#x", cases[i].what, q.id);
        }
}

/* Names past 255 bytes, truncated anywhere, and random bytes: never a crash, never an
 * answer code outside what the server sends. */
static void hostile_bytes(void **state)
{
        uint8_t name[400], buf[600];
        struct dnsmsg_query q;
        size_t n = 0, len;

        (void)state;
        for (int i = 0; i < 6; i++) {
                name[n++] = 60;
                memset(name + n, 'a', 60);
                n += 60;
        }
        name[n++] = 0;
        len = make_query(buf, name, n);
        assert_int_equal(dnsmsg_parse_query(buf, len, &q), DNSMSG_FORMERR);
        /* a good query cut at every length */
        len = make_query(buf, "\x03svc\x04test\x00", 10);
        for (size_t cut = 0; cut < len; cut++) {
                int r = dnsmsg_parse_query(buf, cut, &q);

                if (r != DNSMSG_DROP && r != DNSMSG_FORMERR)
                        fail_msg("cut at %zu: %d", cut, r);
        }
        srand(8);
        for (int i = 0; i < 200000; i++) {
                int r;

                len = (size_t)(rand() % 80);
                for (size_t j = 0; j < len; j++)
                        buf[j] = (uint8_t)rand();
                if (len > 5 && (i & 1)) {
                        buf[2] &= 0x07, buf[4] = 0, buf[5] = 1; /* a plausible header */
                }
                r = dnsmsg_parse_query(buf, len, &q);
                if (r != DNSMSG_DROP && r != DNSMSG_FORMERR && r != DNSMSG_NOTIMP &&
                    r != DNSMSG_NOERROR)
                        fail_msg("random %d: %d", i, r);
                if (r == DNSMSG_NOERROR && strlen(q.lower) >= NETPOL_NAME_LEN)
                        fail_msg("random %d: name too long", i);
        }
}

static struct netpol_addr addr_of(const char *s)
{
        struct sockaddr_in in = {.sin_family = AF_INET};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        struct netpol_addr a;

        if (inet_pton(AF_INET, s, &in.sin_addr) == 1)
                assert_int_equal(netpol_addr_from(&in, sizeof(in), &a), 0);
        else {
                assert_int_equal(inet_pton(AF_INET6, s, &in6.sin6_addr), 1);
                assert_int_equal(netpol_addr_from(&in6, sizeof(in6), &a), 0);
        }
        return a;
}

/* The answer, read back with libresolv: header, question, the records that suit it. */
static void build_answers(void **state)
{
        struct netpol_addr addrs[40];
        struct dnsmsg_query q;
        uint8_t in[64], out[4096];
        ns_msg m;
        ns_rr rr;
        int len;

        (void)state;
        addrs[0] = addr_of("127.0.0.1");
        addrs[1] = addr_of("::1");
        addrs[2] = addr_of("192.0.2.7");
        assert_int_equal(dnsmsg_parse_query(in, make_query(in, "\x03Svc\x04test\x00", 10), &q),
                         DNSMSG_NOERROR);
        len = dnsmsg_build_answer(&q, DNSMSG_NOERROR, addrs, 3, 30, out, DNSMSG_UDP_MAX);
        assert_true(len > 0);
        assert_int_equal(ns_initparse(out, len, &m), 0);
        assert_int_equal(ns_msg_id(m), 0x1234);
        assert_int_equal(ns_msg_getflag(m, ns_f_qr), 1);
        assert_int_equal(ns_msg_getflag(m, ns_f_rd), 1);
        assert_int_equal(ns_msg_getflag(m, ns_f_rcode), 0);
        assert_int_equal(ns_msg_count(m, ns_s_qd), 1);
        assert_int_equal(ns_msg_count(m, ns_s_an), 2); /* the two IPv4 ones */
        assert_int_equal(ns_parserr(&m, ns_s_qd, 0, &rr), 0);
        assert_string_equal(ns_rr_name(rr), "Svc.test"); /* the case as asked */
        assert_int_equal(ns_parserr(&m, ns_s_an, 1, &rr), 0);
        assert_int_equal(ns_rr_type(rr), ns_t_a);
        assert_int_equal(ns_rr_ttl(rr), 30);
        assert_memory_equal(ns_rr_rdata(rr), "\xc0\x00\x02\x07", 4);
        /* AAAA: the IPv6 one only */
        q.qtype = DNSMSG_T_AAAA;
        len = dnsmsg_build_answer(&q, DNSMSG_NOERROR, addrs, 3, 30, out, DNSMSG_UDP_MAX);
        assert_int_equal(ns_initparse(out, len, &m), 0);
        assert_int_equal(ns_msg_count(m, ns_s_an), 1);
        /* NXDOMAIN: no records whatever is given */
        len = dnsmsg_build_answer(&q, DNSMSG_NXDOMAIN, addrs, 3, 30, out, DNSMSG_UDP_MAX);
        assert_int_equal(ns_initparse(out, len, &m), 0);
        assert_int_equal(ns_msg_getflag(m, ns_f_rcode), DNSMSG_NXDOMAIN);
        assert_int_equal(ns_msg_count(m, ns_s_an), 0);
        /* 40 IPv4 addresses: as many as fit in 512 bytes, still a valid message */
        for (int i = 0; i < 40; i++)
                addrs[i] = addr_of("192.0.2.1");
        q.qtype = DNSMSG_T_A;
        len = dnsmsg_build_answer(&q, DNSMSG_NOERROR, addrs, 40, 30, out, DNSMSG_UDP_MAX);
        assert_true(len > 0 && len <= DNSMSG_UDP_MAX);
        assert_int_equal(ns_initparse(out, len, &m), 0);
        assert_int_equal(ns_msg_count(m, ns_s_an), (DNSMSG_UDP_MAX - 12 - 14) / 16);
        /* too small for the question */
        assert_int_equal(dnsmsg_build_answer(&q, DNSMSG_NOERROR, addrs, 1, 30, out, 20), -ENOSPC);
        /* FORMERR to an unparsed query: the id, no question */
        memset(&q, 0, sizeof(q));
        q.id = 0x4242;
        len = dnsmsg_build_answer(&q, DNSMSG_FORMERR, NULL, 0, 30, out, DNSMSG_UDP_MAX);
        assert_int_equal(len, 12);
        assert_int_equal(ns_initparse(out, len, &m), 0);
        assert_int_equal(ns_msg_getflag(m, ns_f_rcode), DNSMSG_FORMERR);
}

static void name_match(void **state)
{
        struct {
                const char *pattern, *name;
                bool want;
        } cases[] = {
                {"example.com", "example.com", true},
                {"example.com", "www.example.com", false},
                {"*.example.com", "www.example.com", true},
                {"*.example.com", "a.b.example.com", true},
                {"*.example.com", "example.com", false},
                {"*.example.com", "badexample.com", false},
                {"*.example.com", "wwwexample.com", false},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (netpol_name_match(cases[i].pattern, cases[i].name) != cases[i].want)
                        fail_msg("%s ~ %s: want %d", cases[i].pattern, cases[i].name,
                                 cases[i].want);
}

static void add(struct netpol *p, const char *spec, bool deny)
{
        char err[200];

        if (netpol_add_rule(p, spec, deny, err, sizeof(err)) < 0)
                fail_msg("%s: %s", spec, err);
}

/* Which names are answered, and how. */
static void dns_decide(void **state)
{
        struct netpol p = {0};
        struct netpol_addr got[4];
        char err[200];

        (void)state;
        add(&p, "pypi.org:443", false);
        add(&p, "*.example.com", false);
        add(&p, "bad.example.com", true);
        add(&p, "ports.example.com:80", true);
        assert_int_equal(netpol_add_static(&p, "svc.test=127.0.0.1", err, sizeof(err)), 0);
        assert_int_equal(netpol_add_static(&p, "SVC.test.=::1", err, sizeof(err)), 0);
        assert_int_equal(netpol_add_static(&p, "svc.test", err, sizeof(err)), -EINVAL);
        assert_int_equal(netpol_add_static(&p, "svc.test=300.1.1.1", err, sizeof(err)), -EINVAL);
        assert_int_equal(netpol_add_static(&p, "a..b=1.2.3.4", err, sizeof(err)), -EINVAL);
        assert_int_equal(netpol_dns_decide(&p, "pypi.org"), NETPOL_DNS_HOST);
        assert_int_equal(netpol_dns_decide(&p, "www.example.com"), NETPOL_DNS_HOST);
        assert_int_equal(netpol_dns_decide(&p, "ports.example.com"), NETPOL_DNS_HOST);
        assert_int_equal(netpol_dns_decide(&p, "bad.example.com"), NETPOL_DNS_REFUSE);
        assert_int_equal(netpol_dns_decide(&p, "example.com"), NETPOL_DNS_REFUSE);
        assert_int_equal(netpol_dns_decide(&p, "evil.org"), NETPOL_DNS_REFUSE);
        assert_int_equal(netpol_dns_decide(&p, "svc.test"), NETPOL_DNS_STATIC);
        assert_int_equal(netpol_dns_decide(&p, ""), NETPOL_DNS_REFUSE);
        assert_int_equal(netpol_dns_decide(&p, "PYPI.org"), NETPOL_DNS_REFUSE); /* not lower */
        assert_int_equal(netpol_static_lookup(&p, "svc.test", got, 4), 2);
        assert_memory_equal(got[1].a, addr_of("::1").a, 16);
        /* `*` or --net host: every name */
        add(&p, "*:443", false);
        assert_int_equal(netpol_dns_decide(&p, "evil.org"), NETPOL_DNS_HOST);
        assert_int_equal(netpol_dns_decide(&p, "bad.example.com"), NETPOL_DNS_REFUSE);
        netpol_free(&p);
        p.mode = NETPOL_MODE_HOST;
        assert_int_equal(netpol_dns_decide(&p, "anything.org"), NETPOL_DNS_HOST);
}

/* Connects judged by the names an address was handed out for. */
static void decide_by_handout(void **state)
{
        struct netpol p = {0};
        struct netpol_handout h;
        struct netpol_names names;
        struct netpol_addr a = addr_of("192.0.2.7"), lo = addr_of("127.0.0.1"),
                           other = addr_of("192.0.2.8");
        struct netpol_verdict v;

        (void)state;
        add(&p, "pypi.org:443", false);
        add(&p, "svc.test:8080", false);
        add(&p, "evil.org", true);
        netpol_handout_init(&h);
        a.port = 443;
        /* never handed out: the name rule does not match */
        netpol_handout_names(&h, &a, &names);
        v = netpol_decide_named(&p, NULL, NETPOL_TCP, &a, &names);
        assert_false(v.allow);
        netpol_handout_add(&h, &a, "pypi.org");
        assert_int_equal(netpol_handout_names(&h, &a, &names), 1);
        v = netpol_decide_named(&p, NULL, NETPOL_TCP, &a, &names);
        assert_true(v.allow);
        assert_string_equal(v.rule->spec, "pypi.org:443");
        a.port = 80; /* the rule's ports still count */
        assert_false(netpol_decide_named(&p, NULL, NETPOL_TCP, &a, &names).allow);
        other.port = 443;
        netpol_handout_names(&h, &other, &names);
        assert_false(netpol_decide_named(&p, NULL, NETPOL_TCP, &other, &names).allow);
        /* a loopback address handed out for a named rule (a static entry) opens */
        lo.port = 8080;
        netpol_handout_add(&h, &lo, "svc.test");
        netpol_handout_names(&h, &lo, &names);
        assert_true(netpol_decide_named(&p, NULL, NETPOL_TCP, &lo, &names).allow);
        /* the same address handed out for a denied name too: deny wins */
        a.port = 443;
        netpol_handout_add(&h, &a, "evil.org");
        netpol_handout_add(&h, &a, "pypi.org"); /* again: no second entry */
        assert_int_equal(netpol_handout_names(&h, &a, &names), 2);
        v = netpol_decide_named(&p, NULL, NETPOL_TCP, &a, &names);
        assert_false(v.allow);
        assert_int_equal(v.reason, NETPOL_BY_DENY);
        /* bounded: the oldest pairs are forgotten */
        for (int i = 0; i < NETPOL_HANDOUT_MAX; i++) {
                struct netpol_addr x = addr_of("198.51.100.1");

                x.a[14] = (uint8_t)(i >> 8), x.a[15] = (uint8_t)i;
                netpol_handout_add(&h, &x, "filler.test");
        }
        assert_int_equal(netpol_handout_names(&h, &lo, &names), 0);
        netpol_handout_free(&h);
        netpol_free(&p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(parse_table),   cmocka_unit_test(hostile_bytes),
                cmocka_unit_test(build_answers), cmocka_unit_test(name_match),
                cmocka_unit_test(dns_decide),    cmocka_unit_test(decide_by_handout),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

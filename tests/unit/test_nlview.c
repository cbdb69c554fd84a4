/*
 * The netlink view without a sandbox (supervisor/net/nlview.c): requests as glibc, Go and
 * iproute2 send them, answered for lo alone; requests that would change the host refused;
 * requests as a hostile program may send them (truncated headers, lengths that lie, a
 * thousand messages in one send, random bytes): never a crash, never a malformed answer.
 */
#include "supervisor/net/nlview.h"

#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define PORT 4242u
#define SEQ  77u
#define DUMP (NLM_F_REQUEST | NLM_F_DUMP)

/* A request: header + body (blen bytes), nlmsg_len = 16 + blen unless `len` says. */
static size_t make(uint8_t *out, uint16_t type, uint16_t flags, const void *body, size_t blen)
{
        struct nlmsghdr h = {.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + blen),
                             .nlmsg_type = type,
                             .nlmsg_flags = flags,
                             .nlmsg_seq = SEQ,
                             .nlmsg_pid = 0};

        memcpy(out, &h, sizeof(h));
        if (blen)
                memcpy(out + NLMSG_HDRLEN, body, blen);
        return NLMSG_HDRLEN + blen;
}

/* One answer, read back. */
struct msg {
        uint16_t type, flags;
        int error; /* NLMSG_ERROR's */
        uint32_t len;
        const uint8_t *body;
        size_t blen;
};

/* Walk the answers, checking what every one must hold; returns how many (<= max). */
static size_t parse(const struct nlview_buf *b, struct msg *m, size_t max)
{
        size_t off = 0, n = 0;

        while (off < b->len) {
                struct nlmsghdr h;

                assert_true(b->len - off >= NLMSG_HDRLEN);
                memcpy(&h, b->data + off, sizeof(h));
                assert_true(h.nlmsg_len >= NLMSG_HDRLEN && h.nlmsg_len <= b->len - off);
                assert_int_equal(h.nlmsg_pid, PORT);
                assert_int_equal(off % NLMSG_ALIGNTO, 0);
                if (n < max) {
                        m[n] = (struct msg){.type = h.nlmsg_type,
                                            .flags = h.nlmsg_flags,
                                            .len = h.nlmsg_len,
                                            .body = b->data + off + NLMSG_HDRLEN,
                                            .blen = h.nlmsg_len - NLMSG_HDRLEN};
                        if (h.nlmsg_type == NLMSG_ERROR) {
                                assert_true(m[n].blen >= sizeof(struct nlmsgerr));
                                memcpy(&m[n].error, m[n].body, sizeof(int));
                        }
                }
                n++;
                off += NLMSG_ALIGN(h.nlmsg_len);
        }
        assert_int_equal(off, b->len);
        return n;
}

static size_t answer(const uint8_t *req, size_t len, struct msg *m, size_t max,
                     struct nlview_buf *b)
{
        nlview_buf_free(b);
        nlview_answer(req, len, PORT, b);
        return parse(b, m, max);
}

/* The payload of attribute `type` in rtattrs `p` (n bytes); NULL if absent. */
static const uint8_t *attr(const uint8_t *p, size_t n, uint16_t type, size_t *len)
{
        while (n >= sizeof(struct rtattr)) {
                struct rtattr a;

                memcpy(&a, p, sizeof(a));
                assert_true(a.rta_len >= sizeof(a) && a.rta_len <= n);
                if (a.rta_type == type) {
                        *len = a.rta_len - sizeof(a);
                        return p + sizeof(a);
                }
                if (RTA_ALIGN(a.rta_len) >= n)
                        break;
                p += RTA_ALIGN(a.rta_len);
                n -= RTA_ALIGN(a.rta_len);
        }
        return NULL;
}

static void check_lo(const struct msg *m, uint16_t flags)
{
        struct ifinfomsg ifi;
        size_t len = 0;
        const uint8_t *a;
        uint32_t mtu;

        assert_int_equal(m->type, RTM_NEWLINK);
        assert_int_equal(m->flags, flags);
        memcpy(&ifi, m->body, sizeof(ifi));
        assert_int_equal(ifi.ifi_index, 1);
        assert_int_equal(ifi.ifi_type, ARPHRD_LOOPBACK);
        assert_int_equal(ifi.ifi_flags, IFF_UP | IFF_LOOPBACK | IFF_RUNNING | 0x10000);
        a = attr(m->body + sizeof(ifi), m->blen - sizeof(ifi), IFLA_IFNAME, &len);
        assert_non_null(a);
        assert_int_equal(len, 3);
        assert_memory_equal(a, "lo", 3);
        a = attr(m->body + sizeof(ifi), m->blen - sizeof(ifi), IFLA_MTU, &len);
        assert_non_null(a);
        memcpy(&mtu, a, sizeof(mtu));
        assert_int_equal(mtu, 65536);
        a = attr(m->body + sizeof(ifi), m->blen - sizeof(ifi), IFLA_ADDRESS, &len);
        assert_non_null(a);
        assert_int_equal(len, 6);
        assert_memory_equal(a, "\0\0\0\0\0\0", 6);
}

/* The view's addresses, in the kernel's order: 127.0.0.1/8, 127.0.0.2/8 (so that glibc's
 * AI_ADDRCONFIG sees IPv4 configured), fe80::1/64 (IPv6 likewise), ::1/128. */
enum { V4_ONE, V4_TWO, V6_LINK, V6_ONE };

static void check_addr(const struct msg *m, int which)
{
        static const uint8_t link6[16] = {0xfe, 0x80, [15] = 1};
        struct ifaddrmsg ifa;
        size_t len = 0;
        const uint8_t *a;

        assert_int_equal(m->type, RTM_NEWADDR);
        assert_int_equal(m->flags, NLM_F_MULTI);
        memcpy(&ifa, m->body, sizeof(ifa));
        assert_int_equal(ifa.ifa_family, which <= V4_TWO ? AF_INET : AF_INET6);
        assert_int_equal(ifa.ifa_index, 1);
        assert_int_equal(ifa.ifa_scope, which == V6_LINK ? RT_SCOPE_LINK : RT_SCOPE_HOST);
        a = attr(m->body + sizeof(ifa), m->blen - sizeof(ifa), IFA_ADDRESS, &len);
        assert_non_null(a);
        switch (which) {
        case V4_ONE:
        case V4_TWO:
                assert_int_equal(ifa.ifa_prefixlen, 8);
                assert_int_equal(len, 4);
                assert_memory_equal(a, which == V4_ONE ? "\x7f\0\0\x01" : "\x7f\0\0\x02", 4);
                break;
        case V6_LINK:
                assert_int_equal(ifa.ifa_prefixlen, 64);
                assert_int_equal(len, 16);
                assert_memory_equal(a, link6, 16);
                break;
        default:
                assert_int_equal(ifa.ifa_prefixlen, 128);
                assert_int_equal(len, 16);
                assert_memory_equal(a, &in6addr_loopback, 16);
        }
}

static void check_done(const struct msg *m)
{
        assert_int_equal(m->type, NLMSG_DONE);
        assert_int_equal(m->flags, NLM_F_MULTI);
        assert_int_equal(m->blen, sizeof(int)); /* iproute2 refuses a DONE without its int */
}

/* glibc's getifaddrs: a 20-byte RTM_GETLINK dump, then RTM_GETADDR. */
static void dumps(void **state)
{
        uint8_t req[64];
        struct nlview_buf b = {0};
        struct msg m[8];
        struct rtgenmsg g = {.rtgen_family = AF_UNSPEC};
        uint8_t body[4] = {AF_UNSPEC};
        struct nlmsghdr h;

        (void)state;
        assert_int_equal(answer(req, make(req, RTM_GETLINK, DUMP, body, 4), m, 8, &b), 2);
        check_lo(&m[0], NLM_F_MULTI);
        check_done(&m[1]);
        memcpy(&h, b.data, sizeof(h));
        assert_int_equal(h.nlmsg_seq, SEQ);
        /* Go's: 17 bytes, the rtgenmsg unpadded. */
        assert_int_equal(answer(req, make(req, RTM_GETADDR, DUMP, &g, 1), m, 8, &b), 5);
        check_addr(&m[0], V4_ONE);
        check_addr(&m[1], V4_TWO);
        check_addr(&m[2], V6_LINK);
        check_addr(&m[3], V6_ONE);
        check_done(&m[4]);
        body[0] = AF_INET;
        assert_int_equal(answer(req, make(req, RTM_GETADDR, DUMP, body, 4), m, 8, &b), 3);
        check_addr(&m[0], V4_ONE);
        check_addr(&m[1], V4_TWO);
        body[0] = AF_INET6;
        assert_int_equal(answer(req, make(req, RTM_GETADDR, DUMP, body, 4), m, 8, &b), 3);
        check_addr(&m[0], V6_LINK);
        check_addr(&m[1], V6_ONE);
        /* NLM_F_ROOT alone is a dump too, as the kernel tests the bits. */
        body[0] = AF_PACKET; /* another family: the dump of all */
        assert_int_equal(
                answer(req, make(req, RTM_GETADDR, NLM_F_REQUEST | NLM_F_ROOT, body, 4), m, 8, &b),
                5);
        assert_int_equal(answer(req, make(req, RTM_GETROUTE, DUMP, body, 4), m, 8, &b), 1);
        check_done(&m[0]);
        nlview_buf_free(&b);
}

/* A request answered with one message of `type` or an NLMSG_ERROR of `error`. */
struct one_case {
        const char *what;
        uint16_t type, flags;
        int index;        /* ifi_index of an ifinfomsg body; -1: a 4-byte rtgenmsg body */
        const char *name; /* IFLA_IFNAME, or NULL */
        int error;        /* 1: answered with a link and nothing else */
};

static size_t getlink_req(uint8_t *req, const struct one_case *c)
{
        uint8_t body[64] = {0};
        struct ifinfomsg ifi = {.ifi_index = c->index};
        size_t blen = sizeof(ifi);

        if (c->index < 0)
                return make(req, c->type, c->flags, body, 4);
        memcpy(body, &ifi, sizeof(ifi));
        if (c->name) {
                struct rtattr a = {.rta_len = (unsigned short)RTA_LENGTH(strlen(c->name) + 1),
                                   .rta_type = IFLA_IFNAME};
                memcpy(body + blen, &a, sizeof(a));
                memcpy(body + blen + sizeof(a), c->name, strlen(c->name) + 1);
                blen += RTA_ALIGN(a.rta_len);
        }
        return make(req, c->type, c->flags, body, blen);
}

static void single_requests(void **state)
{
        static const struct one_case cases[] = {
                {"getlink 1", RTM_GETLINK, NLM_F_REQUEST, 1, NULL, 1},
                {"getlink lo", RTM_GETLINK, NLM_F_REQUEST, 0, "lo", 1},
                {"getlink 4", RTM_GETLINK, NLM_F_REQUEST, 4, NULL, -ENODEV},
                {"getlink eth0", RTM_GETLINK, NLM_F_REQUEST, 0, "eth0", -ENODEV},
                {"getlink nothing", RTM_GETLINK, NLM_F_REQUEST, 0, NULL, -EINVAL},
                {"getlink a long name", RTM_GETLINK, NLM_F_REQUEST, 0, "0123456789abcdef", -EINVAL},
                {"getlink a short body", RTM_GETLINK, NLM_F_REQUEST, -1, NULL, -EINVAL},
                {"newaddr", RTM_NEWADDR, NLM_F_REQUEST | NLM_F_CREATE, 1, NULL, -EPERM},
                {"deladdr", RTM_DELADDR, NLM_F_REQUEST, 1, NULL, -EPERM},
                {"newlink", RTM_NEWLINK, NLM_F_REQUEST, 1, NULL, -EPERM},
                {"setlink", RTM_SETLINK, NLM_F_REQUEST, 1, NULL, -EPERM},
                {"newroute", RTM_NEWROUTE, NLM_F_REQUEST, 1, NULL, -EPERM},
                {"newneigh dump flags", RTM_NEWNEIGH, DUMP, 1, NULL, -EPERM},
                {"getaddr, not a dump", RTM_GETADDR, NLM_F_REQUEST, 1, NULL, -EOPNOTSUPP},
                {"getroute, not a dump", RTM_GETROUTE, NLM_F_REQUEST, 1, NULL, -EOPNOTSUPP},
                {"getneigh dump", RTM_GETNEIGH, DUMP, 1, NULL, -EOPNOTSUPP},
                {"past RTM_MAX", RTM_MAX + 1, NLM_F_REQUEST, 1, NULL, -EOPNOTSUPP},
                {"0xffff", 0xffff, NLM_F_REQUEST, 1, NULL, -EOPNOTSUPP},
        };
        struct nlview_buf b = {0};
        uint8_t req[128];
        struct msg m[4];

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                const struct one_case *c = &cases[i];
                size_t len = getlink_req(req, c), n = answer(req, len, m, 4, &b);

                if (c->error == 1) {
                        if (n != 1)
                                fail_msg("%s: %zu answers", c->what, n);
                        check_lo(&m[0], 0);
                        continue;
                }
                if (n != 1 || m[0].type != NLMSG_ERROR || m[0].error != c->error)
                        fail_msg("%s: %zu answers, type %d error %d", c->what, n, m[0].type,
                                 m[0].error);
                /* An error echoes the whole request (no NETLINK_CAP_ACK). */
                assert_int_equal(m[0].len, NLMSG_HDRLEN + sizeof(int) + len);
                assert_memory_equal(m[0].body + sizeof(int), req, len);
                assert_int_equal(m[0].flags, 0);
        }
        nlview_buf_free(&b);
}

/* NLM_F_ACK: after an answer, an NLMSG_ERROR of 0 with the header alone (NLM_F_CAPPED);
 * none after a dump (NLMSG_DONE ends it). Requests the kernel ignores get only the ACK. */
static void acks(void **state)
{
        struct one_case lo = {"", RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 1, NULL, 0};
        struct nlview_buf b = {0};
        uint8_t req[64], body[4] = {AF_UNSPEC};
        struct msg m[4];
        size_t len = getlink_req(req, &lo);

        (void)state;
        assert_int_equal(answer(req, len, m, 4, &b), 2);
        check_lo(&m[0], 0);
        assert_int_equal(m[1].type, NLMSG_ERROR);
        assert_int_equal(m[1].error, 0);
        assert_int_equal(m[1].flags, NLM_F_CAPPED);
        assert_int_equal(m[1].len, NLMSG_HDRLEN + sizeof(struct nlmsgerr));
        assert_int_equal(answer(req, make(req, RTM_GETLINK, DUMP | NLM_F_ACK, body, 4), m, 4, &b),
                         2);
        check_done(&m[1]);
        /* Not a request, a control type, a body shorter than a struct rtgenmsg. */
        assert_int_equal(answer(req, make(req, RTM_GETLINK, NLM_F_ACK, body, 4), m, 4, &b), 1);
        assert_int_equal(m[0].error, 0);
        assert_int_equal(answer(req, make(req, RTM_GETLINK, 0, body, 4), m, 4, &b), 0);
        assert_int_equal(
                answer(req, make(req, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, body, 4), m, 4, &b),
                1);
        assert_int_equal(m[0].error, 0);
        assert_int_equal(answer(req, make(req, RTM_NEWADDR, NLM_F_REQUEST, body, 0), m, 4, &b), 0);
        assert_int_equal(
                answer(req, make(req, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK, body, 0), m, 4, &b),
                1);
        assert_int_equal(m[0].error, 0);
        nlview_buf_free(&b);
}

/* What netlink_rcv_skb drops: a truncated header, nlmsg_len below the header or past the
 * end. What came before is answered; nothing after. */
static void malformed(void **state)
{
        struct nlview_buf b = {0};
        uint8_t req[256], body[4] = {AF_UNSPEC};
        struct msg m[8];
        size_t len;
        uint32_t lie;

        (void)state;
        len = make(req, RTM_GETLINK, DUMP, body, 4);
        assert_int_equal(answer(req, 10, m, 8, &b), 0);
        assert_int_equal(nlview_answer(req, 0, PORT, &b), 0);
        for (lie = 0; lie < NLMSG_HDRLEN; lie++) {
                memcpy(req, &lie, sizeof(lie));
                assert_int_equal(answer(req, len, m, 8, &b), 0);
        }
        lie = (uint32_t)len + 1;
        memcpy(req, &lie, sizeof(lie));
        assert_int_equal(answer(req, len, m, 8, &b), 0);
        lie = 0xffffffff;
        memcpy(req, &lie, sizeof(lie));
        assert_int_equal(answer(req, len, m, 8, &b), 0);
        /* A good request, then one that lies: the first answered. */
        len = make(req, RTM_GETLINK, DUMP, body, 4);
        len += make(req + len, RTM_GETADDR, DUMP, body, 4);
        lie = 0xfffffffd; /* NLMSG_ALIGN of it wraps in 32 bits */
        memcpy(req + 20, &lie, sizeof(lie));
        assert_int_equal(answer(req, len, m, 8, &b), 2);
        check_lo(&m[0], NLM_F_MULTI);
        /* Two good ones, and trailing bytes shorter than a header. */
        len = make(req, RTM_GETLINK, DUMP, body, 4);
        len += make(req + len, RTM_GETADDR, DUMP, body, 4);
        assert_int_equal(answer(req, len + 7, m, 8, &b), 7);
        check_lo(&m[0], NLM_F_MULTI);
        check_addr(&m[2], V4_ONE);
        nlview_buf_free(&b);
}

/* A request of NLVIEW_REQ_MAX bytes of 16-byte messages, each asking for an ACK (the most
 * answers per byte), and one of messages each echoed in an error. */
static void huge_counts(void **state)
{
        size_t count = NLVIEW_REQ_MAX / NLMSG_HDRLEN, len = 0, n, off = 0;
        uint8_t *req = calloc(1, NLVIEW_REQ_MAX), *zero = calloc(1, 8000);
        struct nlview_buf b = {0};
        struct msg m;

        (void)state;
        for (size_t i = 0; i < count; i++)
                len += make(req + len, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, NULL, 0);
        assert_int_equal(nlview_answer(req, len, PORT, &b), count);
        assert_int_equal(parse(&b, &m, 1), count);
        /* Datagrams of whole messages, none longer than asked. */
        for (size_t d; (d = nlview_datagram(&b, off, NLVIEW_DATAGRAM_MAX)) > 0; off += d)
                assert_true(d <= NLVIEW_DATAGRAM_MAX && d % NLMSG_ALIGNTO == 0);
        assert_int_equal(off, b.len);
        nlview_buf_free(&b);
        for (len = 0; len + 40 <= NLVIEW_REQ_MAX;)
                len += make(req + len, RTM_NEWADDR, NLM_F_REQUEST, zero, 24);
        n = nlview_answer(req, len, PORT, &b);
        assert_int_equal(parse(&b, &m, 1), n);
        assert_int_equal(m.error, -EPERM);
        /* One message longer than a datagram is a datagram of its own. */
        nlview_buf_free(&b);
        len = make(req, RTM_NEWADDR, NLM_F_REQUEST, zero, 8000);
        nlview_answer(req, len, PORT, &b);
        assert_int_equal(nlview_datagram(&b, 0, NLVIEW_DATAGRAM_MAX), b.len);
        assert_int_equal(nlview_datagram(&b, b.len, NLVIEW_DATAGRAM_MAX), 0);
        nlview_buf_free(&b);
        free(req);
        free(zero);
}

/* 100,000 random requests: random bytes, and random headers with lengths that fit or lie
 * around a few real request shapes. Never a crash (the sanitizer build watches the reads),
 * and every answer well formed (parse). */
static void fuzz(void **state)
{
        static const uint16_t types[] = {RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_NEWADDR,
                                         NLMSG_ERROR, RTM_MAX,     0xffff};
        struct nlview_buf b = {0};
        uint8_t req[600];
        struct msg m[32];
        unsigned seed = 1234, links = 0, errors = 0;

        (void)state;
        for (int i = 0; i < 100000; i++) {
                size_t len = (size_t)rand_r(&seed) % sizeof(req), off = 0;

                for (size_t j = 0; j < len; j++)
                        req[j] = (uint8_t)rand_r(&seed);
                while (i % 2 && off + NLMSG_HDRLEN <= len) {
                        struct nlmsghdr h;
                        uint32_t room = (uint32_t)(len - off);

                        memcpy(&h, req + off, sizeof(h));
                        h.nlmsg_type = types[(unsigned)rand_r(&seed) % 7];
                        h.nlmsg_len = rand_r(&seed) % 8 ? (uint32_t)rand_r(&seed) % (room + 1)
                                                        : h.nlmsg_len;
                        if (rand_r(&seed) % 2)
                                h.nlmsg_flags |= NLM_F_REQUEST;
                        memcpy(req + off, &h, sizeof(h));
                        off += NLMSG_ALIGN(h.nlmsg_len ? h.nlmsg_len : 16);
                }
                nlview_buf_free(&b);
                nlview_answer(req, len, PORT, &b);
                for (size_t k = 0, n = parse(&b, m, 32); k < n && k < 32; k++) {
                        links += m[k].type == RTM_NEWLINK;
                        errors += m[k].type == NLMSG_ERROR;
                }
                for (size_t d, at = 0; (d = nlview_datagram(&b, at, 512)) > 0; at += d)
                        assert_true(at + d <= b.len);
        }
        /* The shaped half reaches the handlers, not only the header checks. */
        assert_true(links > 100 && errors > 1000);
        nlview_buf_free(&b);
}

/* bind(2)'s address, a destination, connect's peer, getsockname. */
static void addresses(void **state)
{
        struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        struct sockaddr_nl got;
        uint32_t pid = 1, groups = 1;

        (void)state;
        assert_int_equal(nlview_bind_addr(&nl, sizeof(nl), &pid, &groups), 0);
        assert_int_equal(pid, 0);
        assert_int_equal(groups, 0);
        nl.nl_pid = 99;
        nl.nl_groups = RTMGRP_LINK;
        assert_int_equal(nlview_bind_addr(&nl, sizeof(nl), &pid, &groups), 0);
        assert_int_equal(pid, 99);
        assert_int_equal(groups, RTMGRP_LINK);
        assert_int_equal(nlview_bind_addr(&nl, sizeof(nl) - 1, &pid, &groups), -EINVAL);
        assert_int_equal(nlview_bind_addr(&un, sizeof(un), &pid, &groups), -EINVAL);

        assert_int_equal(nlview_dest(NULL, 0, false), 0);
        assert_int_equal(nlview_dest(&nl, sizeof(nl), false), -EPERM);
        nl.nl_pid = 0;
        assert_int_equal(nlview_dest(&nl, sizeof(nl), false), -EPERM); /* a group */
        nl.nl_groups = 0;
        assert_int_equal(nlview_dest(&nl, sizeof(nl), false), 0);
        assert_int_equal(nlview_dest(&nl, sizeof(nl), true), 0);
        assert_int_equal(nlview_dest(&nl, sizeof(nl) - 4, false), -EINVAL);
        assert_int_equal(nlview_dest(&nl, 1, true), -EINVAL);
        assert_int_equal(nlview_dest(&un, sizeof(un), false), -EINVAL);
        un.sun_family = AF_UNSPEC;
        assert_int_equal(nlview_dest(&un, 2, true), 1);
        assert_int_equal(nlview_dest(&un, 2, false), -EINVAL);

        got = nlview_sockname(7, 1);
        assert_int_equal(got.nl_family, AF_NETLINK);
        assert_int_equal(got.nl_pid, 7);
        assert_int_equal(got.nl_groups, 1);
}

/* The supervisor's end's name reads, as a sockaddr_nl, as the kernel's: nl_pid 0, 12 bytes. */
static void unix_names(void **state)
{
        struct sockaddr_un sun;
        struct sockaddr_nl nl;

        (void)state;
        for (uint64_t rnd = 0; rnd < 1000; rnd += 7) {
                for (int any = 0; any < 2; any++) {
                        assert_int_equal(nlview_unix_name(rnd * 0x9e3779b97f4a7c15ull, any, &sun),
                                         NLVIEW_UNIX_NAME_LEN);
                        assert_int_equal(sun.sun_family, AF_UNIX);
                        assert_int_equal(sun.sun_path[0], 0); /* abstract */
                        memcpy(&nl, &sun, sizeof(nl));
                        assert_int_equal(nl.nl_pid, 0);
                        if (any)
                                assert_int_not_equal(nl.nl_groups, 0);
                        else
                                assert_int_equal(nl.nl_groups, 0);
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(dumps),       cmocka_unit_test(single_requests),
                cmocka_unit_test(acks),        cmocka_unit_test(malformed),
                cmocka_unit_test(huge_counts), cmocka_unit_test(fuzz),
                cmocka_unit_test(addresses),   cmocka_unit_test(unix_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

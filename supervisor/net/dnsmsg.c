/* DNS messages: the query read with libresolv, the answer written (dnsmsg.h). */
#include "supervisor/net/dnsmsg.h"

#include <arpa/nameser.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define HEADER_LEN 12
#define QR         0x8000u
#define OPCODE(f)  (((f) >> 11) & 0xfu)
#define RD         0x0100u
#define RA         0x0080u

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
        put16(p, (uint16_t)(v >> 16));
        put16(p + 2, (uint16_t)v);
}

/* The name as the policy reads it: only letters, digits, '-', '_' and '.' (an escaped byte,
 * "\\." or "\\000", makes it no host name: left empty, which the policy refuses). */
static void lower_name(const char *name, char *out)
{
        size_t n = strlen(name);

        if (n && name[n - 1] == '.')
                n--;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)name[i];

                if (!isalnum(c) && c != '-' && c != '_' && c != '.') {
                        out[0] = '\0';
                        return;
                }
                out[i] = (char)tolower(c);
        }
        out[n] = '\0';
}

int dnsmsg_parse_query(const uint8_t *buf, size_t len, struct dnsmsg_query *q)
{
        ns_msg m;
        ns_rr rr;
        size_t n;

        memset(q, 0, sizeof(*q));
        if (len < HEADER_LEN)
                return DNSMSG_DROP;
        q->id = get16(buf);
        q->flags = get16(buf + 2);
        /* A response sent to the server is not answered: two servers could echo each other
         * forever. */
        if (q->flags & QR)
                return DNSMSG_DROP;
        if (OPCODE(q->flags) != 0)
                return DNSMSG_NOTIMP;
        if (get16(buf + 4) != 1)
                return DNSMSG_FORMERR;
        /* Bounds, section counts, compression pointers (each must point backwards into the
         * message, and a loop ends at the 255-byte limit): libresolv's. */
        if (ns_initparse(buf, (int)len, &m) < 0 || ns_parserr(&m, ns_s_qd, 0, &rr) < 0)
                return DNSMSG_FORMERR;
        n = strlen(ns_rr_name(rr));
        if (n >= sizeof(q->name))
                return DNSMSG_FORMERR;
        memcpy(q->name, ns_rr_name(rr), n + 1);
        lower_name(q->name, q->lower);
        q->qtype = ns_rr_type(rr);
        q->qclass = ns_rr_class(rr);
        return DNSMSG_NOERROR;
}

/* One record: a pointer to the question's name, then type, class, TTL and the address. */
static size_t put_record(uint8_t *p, uint16_t type, uint32_t ttl, const uint8_t *data, size_t dlen)
{
        put16(p, 0xc000 | HEADER_LEN);
        put16(p + 2, type);
        put16(p + 4, DNSMSG_C_IN);
        put32(p + 6, ttl);
        put16(p + 10, (uint16_t)dlen);
        memcpy(p + 12, data, dlen);
        return 12 + dlen;
}

int dnsmsg_build_answer(const struct dnsmsg_query *q, int rcode, const struct netpol_addr *addrs,
                        size_t n, uint32_t ttl, uint8_t *out, size_t outlen)
{
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        size_t at = HEADER_LEN;
        uint16_t count = 0;
        bool question = q->name[0] != '\0';
        int c;

        if (outlen < HEADER_LEN)
                return -ENOSPC;
        memset(out, 0, HEADER_LEN);
        put16(out, q->id);
        put16(out + 2,
              (uint16_t)(QR | (q->flags & (0xfu << 11)) | (q->flags & RD) | RA | (rcode & 0xf)));
        if (question) {
                /* The question as parsed (dn_comp reads the escapes ns_parserr wrote). */
                c = dn_comp(q->name, out + at, (int)(outlen - at), NULL, NULL);
                if (c < 0 || at + (size_t)c + 4 > outlen)
                        return -ENOSPC;
                at += (size_t)c;
                put16(out + at, q->qtype);
                put16(out + at + 2, q->qclass);
                at += 4;
                put16(out + 4, 1);
        }
        for (size_t i = 0; question && rcode == DNSMSG_NOERROR && i < n; i++) {
                bool v4 = memcmp(addrs[i].a, mapped, 12) == 0;

                if (q->qclass != DNSMSG_C_IN || !(q->qtype == (v4 ? DNSMSG_T_A : DNSMSG_T_AAAA)))
                        continue;
                if (at + 12 + (v4 ? 4 : 16) > outlen)
                        break; /* what fits: the client connects to one of them anyway */
                at += put_record(out + at, q->qtype, ttl, v4 ? addrs[i].a + 12 : addrs[i].a,
                                 v4 ? 4 : 16);
                count++;
        }
        put16(out + 6, count);
        return (int)at;
}

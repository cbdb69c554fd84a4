/*
 * DNS messages as the supervisor's DNS reads and writes them (supervisor/dns.c). Pure code,
 * unit-tested without a sandbox (tests/unit/test_dnsmsg.c).
 *
 * The queries come from the sandboxed program: nothing in them is trusted beyond its length.
 * They are parsed with glibc's libresolv (ns_initparse, ns_parserr), which walks every
 * section within the message's bounds and refuses compression loops and names longer than
 * 255 bytes; the answer is written here, from the parsed question, never by copying the
 * program's bytes.
 */
#ifndef STOCKADE_NET_DNSMSG_H
#define STOCKADE_NET_DNSMSG_H

#include "supervisor/net/netpol.h"

#include <stddef.h>
#include <stdint.h>

/* Response codes (RFC 1035, 4.1.1). */
enum {
        DNSMSG_NOERROR = 0,
        DNSMSG_FORMERR = 1,
        DNSMSG_SERVFAIL = 2,
        DNSMSG_NXDOMAIN = 3,
        DNSMSG_NOTIMP = 4,
        DNSMSG_REFUSED = 5,
};

#define DNSMSG_T_A    1
#define DNSMSG_T_AAAA 28
#define DNSMSG_C_IN   1

/* What dnsmsg_parse_query answers that is not a response code. */
#define DNSMSG_DROP (-1) /* not worth an answer: shorter than a header, or a response */

/* The largest answer over UDP without EDNS (RFC 1035, 4.2.1). */
#define DNSMSG_UDP_MAX 512

struct dnsmsg_query {
        uint16_t id;
        uint16_t flags;              /* the query's header flags (opcode, RD) */
        char name[NETPOL_NAME_LEN];  /* as asked, presentation form; "" when unparsed */
        char lower[NETPOL_NAME_LEN]; /* lower case, no trailing dot: what the policy reads */
        uint16_t qtype, qclass;
};

/*
 * Read a query of `len` bytes. Returns DNSMSG_NOERROR with q filled, a response code to
 * answer with (FORMERR: malformed; NOTIMP: not a standard query, or not one question;
 * q->id and q->flags are then set and the question is empty), or DNSMSG_DROP.
 */
int dnsmsg_parse_query(const uint8_t *buf, size_t len, struct dnsmsg_query *q);

/*
 * Write the answer to q into out (size outlen): `rcode`, and for NOERROR the addresses of
 * `addrs` that suit q->qtype (IPv4 for A, IPv6 for AAAA) as records with `ttl`, as many as
 * fit in outlen. Returns the length, or -ENOSPC when not even the header and question fit.
 */
int dnsmsg_build_answer(const struct dnsmsg_query *q, int rcode, const struct netpol_addr *addrs,
                        size_t n, uint32_t ttl, uint8_t *out, size_t outlen);

#endif

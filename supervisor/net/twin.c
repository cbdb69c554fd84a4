/* What a twin receives and what it shows (twin.h says why). */
#include "supervisor/net/twin.h"
#include "supervisor/net/netpol.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

/* The program's first instruction, a load that the next one overwrites: "stkd". */
#define TWIN_MAGIC 0x73746b64u
#define ACCEPT     0xffffffffu /* keep the whole datagram */

static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool is_v4(const uint8_t a[16])
{
        return memcmp(a, v4_mapped_prefix, 12) == 0;
}

int twin_peer_from(const void *sa, size_t len, bool any_port, struct twin_peer *out)
{
        static const uint8_t any[16];
        static const uint8_t loop4[4] = {127, 0, 0, 1};
        struct netpol_addr raw;
        int r = netpol_addr_raw(sa, len, &raw);

        if (r < 0)
                return r;
        memcpy(out->a, raw.a, sizeof(out->a));
        out->port = raw.port;
        /* The kernel sends to 0.0.0.0 and :: as to the loopback (ip_route_output_key_hash,
         * udpv6_sendmsg), and the answer comes from there. An IPv4-mapped address went out
         * as IPv4: the mapped form is how an IPv4 peer is kept. IPv4-compatible and NAT64
         * addresses go out as IPv6, and stay as they are (the policy judged them as IPv4). */
        if (memcmp(out->a, any, 16) == 0)
                out->a[15] = 1;
        else if (is_v4(out->a) && memcmp(out->a + 12, any, 4) == 0)
                memcpy(out->a + 12, loop4, 4);
        if (any_port)
                out->port = 0;
        return 0;
}

int twin_peer_add(struct twin_peer *v, size_t *n, const struct twin_peer *p)
{
        for (size_t i = 0; i < *n; i++)
                if (memcmp(v[i].a, p->a, 16) == 0 && v[i].port == p->port)
                        return 0;
        if (*n == TWIN_PEERS_MAX) {
                /* Forget the oldest of the same family; of the other when it has none. */
                size_t drop = *n - 1;

                for (size_t i = *n; i-- > 0;)
                        if (is_v4(v[i].a) == is_v4(p->a)) {
                                drop = i;
                                break;
                        }
                memmove(v + drop, v + drop + 1, (*n - drop - 1) * sizeof(*v));
                (*n)--;
        }
        memmove(v + 1, v, *n * sizeof(*v));
        v[0] = *p;
        (*n)++;
        return 1;
}

struct prog {
        struct sock_filter *f;
        size_t k;
};

static void emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
        p->f[p->k++] = (struct sock_filter){.code = code, .jt = jt, .jf = jf, .k = k};
}

/* The words of a's address to compare: 1 for IPv4, 4 for IPv6, in host order as the
 * loads give them. */
static size_t words(const uint8_t a[16], uint32_t w[4])
{
        size_t n = is_v4(a) ? 1 : 4;

        for (size_t i = 0; i < n; i++) {
                uint32_t be;

                memcpy(&be, a + 16 - 4 * (n - i), 4);
                w[i] = ntohl(be);
        }
        return n;
}

/* One peer: the address words against M[0..], the port against X; a miss jumps to the next
 * peer, a match accepts. Conditional jumps are 8 bits: each stays within its peer. */
static void emit_peer(struct prog *p, const struct twin_peer *peer)
{
        uint32_t w[4];
        size_t n = words(peer->a, w), len = 2 * n + (peer->port ? 2 : 0) + 1;

        for (size_t i = 0; i < n; i++) {
                emit(p, BPF_LD | BPF_MEM, 0, 0, (uint32_t)i);
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, (uint8_t)(len - 2 * i - 2), w[i]);
        }
        if (peer->port) {
                emit(p, BPF_MISC | BPF_TXA, 0, 0, 0);
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, peer->port);
        }
        emit(p, BPF_RET | BPF_K, 0, 0, ACCEPT);
}

/* A block of one family: load the source address into M[0..n) and the source port into X,
 * then the peers of that family, then drop. */
static void emit_block(struct prog *p, const struct twin_peer *v, size_t n, bool v4)
{
        size_t nw = v4 ? 1 : 4;
        uint32_t at = v4 ? 12 : 8; /* saddr in the IPv4 / IPv6 header */

        for (size_t i = 0; i < nw; i++) {
                emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_NET_OFF + at + 4 * i));
                emit(p, BPF_ST, 0, 0, (uint32_t)i);
        }
        emit(p, BPF_LD | BPF_H | BPF_ABS, 0, 0, 0); /* the UDP source port */
        emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
        for (size_t i = 0; i < n; i++)
                if (is_v4(v[i].a) == v4)
                        emit_peer(p, &v[i]);
        emit(p, BPF_RET | BPF_K, 0, 0, 0);
}

size_t twin_filter_build(const struct twin_peer *v, size_t n, struct sock_filter *out)
{
        struct prog p = {.f = out};
        size_t v4at, v6at;

        emit(&p, BPF_LD | BPF_IMM, 0, 0, TWIN_MAGIC);
        emit(&p, BPF_LD | BPF_B | BPF_ABS, 0, 0, (uint32_t)SKF_NET_OFF);
        emit(&p, BPF_ALU | BPF_AND | BPF_K, 0, 0, 0xf0);
        emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0x40);
        emit(&p, BPF_JMP | BPF_JA, 0, 0, 0); /* to the IPv4 block, below */
        emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0x60);
        emit(&p, BPF_JMP | BPF_JA, 0, 0, 0); /* to the IPv6 block */
        emit(&p, BPF_RET | BPF_K, 0, 0, 0);
        v4at = p.k;
        emit_block(&p, v, n, true);
        v6at = p.k;
        emit_block(&p, v, n, false);
        out[4].k = (uint32_t)(v4at - 5);
        out[6].k = (uint32_t)(v6at - 7);
        return p.k;
}

/* The peers of one block starting at `at` (past its loads), into v from *n. Returns the
 * index after the block, or 0 when it is not one of ours. */
static size_t parse_block(const struct sock_filter *f, size_t len, size_t at, bool v4,
                          struct twin_peer *v, size_t *n)
{
        size_t nw = v4 ? 1 : 4;

        while (at < len && f[at].code != (BPF_RET | BPF_K)) {
                struct twin_peer p = {0};

                if (*n == TWIN_PEERS_MAX || at + 2 * nw + 1 > len)
                        return 0;
                if (v4)
                        memcpy(p.a, v4_mapped_prefix, 12);
                for (size_t i = 0; i < nw; i++) {
                        uint32_t be = htonl(f[at + 2 * i + 1].k);

                        memcpy(p.a + 16 - 4 * (nw - i), &be, 4);
                }
                at += 2 * nw;
                if (f[at].code == (BPF_MISC | BPF_TXA)) {
                        if (at + 3 > len || f[at + 1].k == 0 || f[at + 1].k > 0xffff)
                                return 0;
                        p.port = (uint16_t)f[at + 1].k;
                        at += 2;
                }
                at++; /* the accept */
                v[(*n)++] = p;
        }
        return at < len ? at + 1 : 0;
}

int twin_filter_parse(const struct sock_filter *prog, size_t len, struct twin_peer *v)
{
        struct sock_filter again[TWIN_PROG_MAX];
        size_t n = 0, v4at, v6at;

        if (len < 8 || len > TWIN_PROG_MAX || prog[0].code != (BPF_LD | BPF_IMM) ||
            prog[0].k != TWIN_MAGIC)
                return -EINVAL;
        v4at = 5 + (size_t)prog[4].k;
        v6at = 7 + (size_t)prog[6].k;
        if (v4at + 4 > len || v6at + 10 > len ||
            parse_block(prog, len, v4at + 4, true, v, &n) != v6at ||
            !parse_block(prog, len, v6at + 10, false, v, &n))
                return -EINVAL;
        /* Ours only if the peers read give this very program back. */
        if (twin_filter_build(v, n, again) != len || memcmp(again, prog, len * sizeof(*prog)) != 0)
                return -EINVAL;
        return (int)n;
}

bool twin_local_name(struct sockaddr_storage *ss, socklen_t len)
{
        static const uint8_t any[16], loop6[16] = {[15] = 1};

        if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
                struct sockaddr_in *in = (struct sockaddr_in *)ss;
                uint32_t a = ntohl(in->sin_addr.s_addr);

                if (a == 0 || a >> 24 == 127)
                        return false;
                in->sin_addr.s_addr = 0;
                return true;
        }
        if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
                uint8_t *a = in6->sin6_addr.s6_addr;

                if (is_v4(a)) {
                        if (memcmp(a + 12, any, 4) == 0 || a[12] == 127)
                                return false;
                        memset(a + 12, 0, 4); /* ::ffff:0.0.0.0: still an IPv4 peer's */
                } else {
                        if (memcmp(a, any, 16) == 0 || memcmp(a, loop6, 16) == 0)
                                return false;
                        memset(a, 0, 16);
                }
                in6->sin6_flowinfo = 0;
                in6->sin6_scope_id = 0;
                return true;
        }
        return false;
}

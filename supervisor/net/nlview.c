/* NETLINK_ROUTE answered for a view with lo alone (nlview.h says what and why). */
#include "supervisor/net/nlview.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <string.h>

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000
#endif
#ifndef IFLA_ALT_IFNAME
#define IFLA_ALT_IFNAME 53
#endif

_Static_assert(sizeof(struct sockaddr_nl) == NLVIEW_UNIX_NAME_LEN, "sockaddr_nl is 12 bytes");
_Static_assert(offsetof(struct sockaddr_un, sun_path) == 2, "sun_path follows the family");

#define LO_INDEX 1
#define LO_NAME  "lo"
#define LO_FLAGS (IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP)
#define LO_MTU   65536
/* IF_OPER_UNKNOWN (linux/if.h, which clashes with net/if.h): what lo reports, having no
 * carrier to speak of. */
#define LO_OPERSTATE 0
/* Answers past this much are dropped, as a full receive queue drops them (the kernel then
 * says ENOBUFS): a request of NLVIEW_REQ_MAX bytes cannot come near it. */
#define OUT_MAX (4 * NLVIEW_REQ_MAX)

/* What a request asks, read from the program's copy. */
struct req {
        struct nlmsghdr h;
        const uint8_t *body; /* h.nlmsg_len - NLMSG_HDRLEN bytes */
        size_t blen;
        const uint8_t *whole; /* the message, header included (for an error's echo) */
};

/* A handler's answer, besides -errno: the request was answered and wants no ACK (a dump). */
#define DUMPED 1

void nlview_buf_free(struct nlview_buf *b)
{
        free(b->data);
        *b = (struct nlview_buf){0};
}

static void put(struct nlview_buf *b, const void *p, size_t n)
{
        if (b->cap - b->len < n) {
                b->cap = b->cap * 2 > b->len + n ? b->cap * 2 : b->len + n + 1024;
                b->data = xrealloc(b->data, b->cap);
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static void pad(struct nlview_buf *b)
{
        static const uint8_t zero[NLMSG_ALIGNTO];

        put(b, zero, NLMSG_ALIGN(b->len) - b->len);
}

/* A message header; returns where it starts, for end_msg. */
static size_t begin_msg(struct nlview_buf *b, uint16_t type, uint16_t flags, const struct req *r,
                        uint32_t port)
{
        struct nlmsghdr h = {.nlmsg_type = type,
                             .nlmsg_flags = flags,
                             .nlmsg_seq = r->h.nlmsg_seq,
                             .nlmsg_pid = port};
        size_t at = b->len;

        put(b, &h, sizeof(h));
        return at;
}

static void end_msg(struct nlview_buf *b, size_t at)
{
        uint32_t len = (uint32_t)(b->len - at);

        memcpy(b->data + at + offsetof(struct nlmsghdr, nlmsg_len), &len, sizeof(len));
        pad(b);
}

static void put_attr(struct nlview_buf *b, uint16_t type, const void *p, size_t n)
{
        struct rtattr a = {.rta_len = (unsigned short)RTA_LENGTH(n), .rta_type = type};

        put(b, &a, sizeof(a));
        put(b, p, n);
        pad(b);
}

static void put_u32(struct nlview_buf *b, uint16_t type, uint32_t v)
{
        put_attr(b, type, &v, sizeof(v));
}

static void put_u8(struct nlview_buf *b, uint16_t type, uint8_t v)
{
        put_attr(b, type, &v, sizeof(v));
}

/* lo, as the kernel describes it (rtnl_fill_ifinfo's attributes, in its order, less the
 * counters and the queue and offload details nobody reads). */
static void put_link(struct nlview_buf *b, uint16_t flags, const struct req *r, uint32_t port)
{
        size_t at = begin_msg(b, RTM_NEWLINK, flags, r, port);
        struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC,
                                .ifi_type = ARPHRD_LOOPBACK,
                                .ifi_index = LO_INDEX,
                                .ifi_flags = LO_FLAGS};
        static const uint8_t mac[6];

        put(b, &ifi, sizeof(ifi));
        put_attr(b, IFLA_IFNAME, LO_NAME, sizeof(LO_NAME));
        put_u32(b, IFLA_TXQLEN, 1000);
        put_u8(b, IFLA_OPERSTATE, LO_OPERSTATE);
        put_u8(b, IFLA_LINKMODE, 0);
        put_u32(b, IFLA_MTU, LO_MTU);
        put_u32(b, IFLA_GROUP, 0);
        put_u32(b, IFLA_PROMISCUITY, 0);
        put_u32(b, IFLA_NUM_TX_QUEUES, 1);
        put_u32(b, IFLA_NUM_RX_QUEUES, 1);
        put_u8(b, IFLA_CARRIER, 1);
        put_attr(b, IFLA_QDISC, "noqueue", sizeof("noqueue"));
        put_attr(b, IFLA_ADDRESS, mac, sizeof(mac));
        put_attr(b, IFLA_BROADCAST, mac, sizeof(mac));
        end_msg(b, at);
}

/*
 * The addresses on lo, in the order the kernel dumps them in a namespace where they were added
 * (IPv4 first; IPv6 by scope, link before host). 127.0.0.1/8 and ::1/128 are what every lo
 * has. 127.0.0.2/8 and fe80::1/64 are there for glibc's __check_pf (check_pf.c), which counts
 * an IPv4 family only for an address other than 127.0.0.1 and an IPv6 one only for one other
 * than ::1: with lo's two alone, getaddrinfo(AF_INET or AF_INET6, AI_ADDRCONFIG) answered
 * EAI_NONAME, even for localhost. Neither is a host's address, and neither is one a program
 * picks to serve the world on: 127.0.0.2 is loopback (reached and bound like 127.0.0.1, in
 * the sandbox's namespace and on the host's lo alike), fe80::1 link-local on lo (a program
 * that lists "its address" skips both, as it skips lo). In the sandbox's network namespace
 * the socket maker puts both on its lo (supervisor/sockmaker.c), so the view is what is there.
 */
struct view_addr {
        uint8_t family, prefixlen, scope;
        uint32_t flags;
        uint8_t a[16];
};

static const struct view_addr view_addrs[] = {
        {AF_INET, 8, RT_SCOPE_HOST, IFA_F_PERMANENT, {127, 0, 0, 1}},
        {AF_INET, 8, RT_SCOPE_HOST, IFA_F_PERMANENT | IFA_F_SECONDARY, {127, 0, 0, 2}},
        {AF_INET6, 64, RT_SCOPE_LINK, IFA_F_PERMANENT | IFA_F_NODAD, {0xfe, 0x80, [15] = 1}},
        {AF_INET6, 128, RT_SCOPE_HOST, IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE, {[15] = 1}},
};

/* One address of lo (inet_fill_ifaddr, inet6_fill_ifaddr). Lifetimes forever; the creation
 * times (hundredths of a second since the host booted) are 0. */
static void put_addr(struct nlview_buf *b, const struct view_addr *va, const struct req *r,
                     uint32_t port)
{
        size_t at = begin_msg(b, RTM_NEWADDR, NLM_F_MULTI, r, port);
        struct ifaddrmsg ifa = {.ifa_family = va->family,
                                .ifa_prefixlen = va->prefixlen,
                                .ifa_flags = (uint8_t)va->flags,
                                .ifa_scope = va->scope,
                                .ifa_index = LO_INDEX};
        struct ifa_cacheinfo ci = {.ifa_prefered = 0xffffffff, .ifa_valid = 0xffffffff};

        put(b, &ifa, sizeof(ifa));
        if (va->family == AF_INET) {
                put_attr(b, IFA_ADDRESS, va->a, 4);
                put_attr(b, IFA_LOCAL, va->a, 4);
                put_attr(b, IFA_LABEL, LO_NAME, sizeof(LO_NAME));
                put_u32(b, IFA_FLAGS, va->flags);
                put_attr(b, IFA_CACHEINFO, &ci, sizeof(ci));
        } else {
                put_attr(b, IFA_ADDRESS, va->a, 16);
                put_attr(b, IFA_CACHEINFO, &ci, sizeof(ci));
                put_u32(b, IFA_FLAGS, va->flags);
        }
        end_msg(b, at);
}

/* The end of a dump: NLMSG_DONE with its int (iproute2 refuses one without it). */
static void put_done(struct nlview_buf *b, const struct req *r, uint32_t port)
{
        size_t at = begin_msg(b, NLMSG_DONE, NLM_F_MULTI, r, port);
        int32_t status = 0;

        put(b, &status, sizeof(status));
        end_msg(b, at);
}

/* NLMSG_ERROR (an ACK when err is 0): the request echoed whole on an error, its header
 * only on an ACK (netlink_ack without NETLINK_CAP_ACK). */
static void put_error(struct nlview_buf *b, const struct req *r, uint32_t port, int err)
{
        size_t at = begin_msg(b, NLMSG_ERROR, err ? 0 : NLM_F_CAPPED, r, port);
        int32_t e = err;

        put(b, &e, sizeof(e));
        put(b, r->whole, err ? r->h.nlmsg_len : sizeof(r->h));
        end_msg(b, at);
}

/* The attribute `type` among those of `p` (n bytes), as nla_ok walks them; NULL if absent.
 * *len: its payload's length. */
static const uint8_t *find_attr(const uint8_t *p, size_t n, uint16_t type, size_t *len)
{
        while (n >= sizeof(struct rtattr)) {
                struct rtattr a;

                memcpy(&a, p, sizeof(a));
                if (a.rta_len < sizeof(a) || a.rta_len > n)
                        return NULL;
                if ((a.rta_type & NLA_TYPE_MASK) == type) {
                        *len = a.rta_len - sizeof(a);
                        return p + sizeof(a);
                }
                if (RTA_ALIGN(a.rta_len) >= n)
                        return NULL;
                n -= RTA_ALIGN(a.rta_len);
                p += RTA_ALIGN(a.rta_len);
        }
        return NULL;
}

/* Whether the name attribute `type` of an RTM_GETLINK names lo: 1, 0, or -EINVAL for a
 * name no interface can have (IFNAMSIZ with its NUL); -ENOENT when there is none. */
static int names_lo(const struct req *r, uint16_t type)
{
        size_t off = NLMSG_ALIGN(sizeof(struct ifinfomsg)), len = 0;
        const uint8_t *name =
                r->blen > off ? find_attr(r->body + off, r->blen - off, type, &len) : NULL;

        if (!name)
                return -ENOENT;
        while (len > 0 && name[len - 1] == '\0')
                len--;
        if (len >= IFNAMSIZ)
                return -EINVAL;
        return len == strlen(LO_NAME) && memcmp(name, LO_NAME, len) == 0;
}

/* RTM_GETLINK of one link (rtnl_getlink): by index, else by name. */
static int get_link(struct nlview_buf *b, const struct req *r, uint32_t port)
{
        struct ifinfomsg ifi;
        int found;

        if (r->blen < sizeof(ifi))
                return -EINVAL;
        memcpy(&ifi, r->body, sizeof(ifi));
        if (ifi.ifi_index > 0) {
                found = ifi.ifi_index == LO_INDEX;
        } else {
                found = names_lo(r, IFLA_IFNAME);
                if (found == -ENOENT)
                        found = names_lo(r, IFLA_ALT_IFNAME);
                if (found == -ENOENT)
                        return -EINVAL; /* neither an index nor a name */
                if (found < 0)
                        return found;
        }
        if (!found)
                return -ENODEV;
        put_link(b, 0, r, port);
        return 0;
}

/* A request of kind GET; `family` is its first byte (struct rtgenmsg and its successors). */
static int get(struct nlview_buf *b, const struct req *r, uint32_t port, int family)
{
        bool dump = r->h.nlmsg_flags & NLM_F_DUMP; /* either bit, as the kernel tests it */

        if (!dump)
                return r->h.nlmsg_type == RTM_GETLINK ? get_link(b, r, port) : -EOPNOTSUPP;
        switch (r->h.nlmsg_type) {
        case RTM_GETLINK:
                put_link(b, NLM_F_MULTI, r, port);
                break;
        case RTM_GETADDR:
                /* Another family falls back to the AF_UNSPEC dump of all, as in the kernel. */
                for (size_t i = 0; i < sizeof(view_addrs) / sizeof(*view_addrs); i++)
                        if ((family != AF_INET && family != AF_INET6) ||
                            view_addrs[i].family == family)
                                put_addr(b, &view_addrs[i], r, port);
                break;
        case RTM_GETROUTE:
                break; /* no route worth showing: the loopback ones tell nothing */
        default:
                return -EOPNOTSUPP;
        }
        put_done(b, r, port);
        return DUMPED;
}

/* One request (rtnetlink_rcv_msg): DUMPED, 0, or -errno for its NLMSG_ERROR. */
static int route(struct nlview_buf *b, const struct req *r, uint32_t port)
{
        int type = r->h.nlmsg_type;

        if (type > RTM_MAX)
                return -EOPNOTSUPP;
        if (r->blen < sizeof(struct rtgenmsg))
                return 0; /* the kernel says nothing either (an ACK if asked) */
        /* NEW, DEL and SET (type & 3 of 0, 1, 3) change the host: only CAP_NET_ADMIN in its
         * network namespace may, which the program never has. */
        if (((type - RTM_BASE) & 3) != 2)
                return -EPERM;
        return get(b, r, port, r->body[0]);
}

size_t nlview_answer(const void *req, size_t len, uint32_t port, struct nlview_buf *out)
{
        const uint8_t *p = req;
        size_t off = 0, n = 0, step;

        while (len - off >= NLMSG_HDRLEN && out->len < OUT_MAX) {
                struct req r = {.whole = p + off};
                int err = 0;

                memcpy(&r.h, p + off, sizeof(r.h));
                if (r.h.nlmsg_len < NLMSG_HDRLEN || r.h.nlmsg_len > len - off)
                        break; /* netlink_rcv_skb drops the rest */
                r.body = p + off + NLMSG_HDRLEN;
                r.blen = r.h.nlmsg_len - NLMSG_HDRLEN;
                n++;
                if ((r.h.nlmsg_flags & NLM_F_REQUEST) && r.h.nlmsg_type >= NLMSG_MIN_TYPE)
                        err = route(out, &r, port);
                if (err < 0 || (err == 0 && (r.h.nlmsg_flags & NLM_F_ACK)))
                        put_error(out, &r, port, err);
                /* In size_t: NLMSG_ALIGN of a u32 near its top wraps to 0. */
                step = ((size_t)r.h.nlmsg_len + NLMSG_ALIGNTO - 1) & ~(size_t)(NLMSG_ALIGNTO - 1);
                off += step < len - off ? step : len - off;
        }
        return n;
}

size_t nlview_datagram(const struct nlview_buf *b, size_t off, size_t max)
{
        size_t n = 0;

        while (off + n + NLMSG_HDRLEN <= b->len) {
                struct nlmsghdr h;
                size_t m;

                memcpy(&h, b->data + off + n, sizeof(h));
                m = ((size_t)h.nlmsg_len + NLMSG_ALIGNTO - 1) & ~(size_t)(NLMSG_ALIGNTO - 1);
                if (m < NLMSG_HDRLEN || m > b->len - off - n)
                        m = b->len - off - n; /* never in our answers; no loop if it were */
                if (n > 0 && n + m > max)
                        break;
                n += m;
        }
        return n;
}

int nlview_bind_addr(const void *addr, size_t len, uint32_t *pid, uint32_t *groups)
{
        struct sockaddr_nl nl;

        if (len < sizeof(nl))
                return -EINVAL;
        memcpy(&nl, addr, sizeof(nl));
        if (nl.nl_family != AF_NETLINK)
                return -EINVAL;
        *pid = nl.nl_pid;
        *groups = nl.nl_groups;
        return 0;
}

int nlview_dest(const void *addr, size_t len, bool connect)
{
        struct sockaddr_nl nl = {0};

        if (len == 0 && !connect)
                return 0;
        if (len < sizeof(sa_family_t))
                return -EINVAL;
        memcpy(&nl, addr, len < sizeof(nl) ? len : sizeof(nl));
        if (connect && nl.nl_family == AF_UNSPEC)
                return 1;
        if (nl.nl_family != AF_NETLINK || len < sizeof(nl))
                return -EINVAL;
        return nl.nl_pid || nl.nl_groups ? -EPERM : 0;
}

struct sockaddr_nl nlview_sockname(uint32_t port, uint32_t groups)
{
        return (struct sockaddr_nl){.nl_family = AF_NETLINK, .nl_pid = port, .nl_groups = groups};
}

socklen_t nlview_unix_name(uint64_t rnd, bool any_groups, struct sockaddr_un *sun)
{
        uint32_t groups = any_groups ? (uint32_t)(rnd >> 8) | 1 : 0;

        memset(sun, 0, sizeof(*sun));
        sun->sun_family = AF_UNIX;
        /* sun_path[0] = 0: abstract. [1] is nl_pad's second byte, [2..5] nl_pid (0: the
         * kernel), [6..9] nl_groups. */
        sun->sun_path[1] = (char)(rnd & 0xff);
        memcpy(&sun->sun_path[6], &groups, sizeof(groups));
        return NLVIEW_UNIX_NAME_LEN;
}

/* The network policy's rules and decision (netpol.h says what they mean). */
#include "supervisor/net/netpol.h"
#include "supervisor/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- addresses ----------------------------------------------------------------------------- */

static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static void map_v4(uint8_t out[16], const void *v4)
{
        memcpy(out, v4_mapped_prefix, 12);
        memcpy(out + 12, v4, 4);
}

/* IPv4-compatible ::a.b.c.d (deprecated, but a tunnel may still route it), :: and ::1
 * excepted. */
static bool v4_compatible(const uint8_t a[16])
{
        static const uint8_t zero[12];

        if (memcmp(a, zero, 12) != 0)
                return false;
        return a[12] | a[13] | a[14] || a[15] > 1;
}

/* The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): a NAT64 gateway on the host's
 * network forwards it to the embedded IPv4 address. */
static const uint8_t nat64_prefix[12] = {0, 0x64, 0xff, 0x9b};

/* The address the kernel reaches: IPv4 forms as ::ffff:a.b.c.d, 0.0.0.0 and :: as loopback. */
static void normalise(uint8_t a[16])
{
        static const uint8_t any[16], any4[4];
        static const uint8_t loop4[4] = {127, 0, 0, 1};

        if (v4_compatible(a) || memcmp(a, nat64_prefix, 12) == 0)
                memcpy(a, v4_mapped_prefix, 12);
        if (memcmp(a, any, 16) == 0)
                a[15] = 1; /* :: -> ::1 */
        else if (memcmp(a, v4_mapped_prefix, 12) == 0 && memcmp(a + 12, any4, 4) == 0)
                memcpy(a + 12, loop4, 4);
}

int netpol_addr_raw(const void *sa, size_t len, struct netpol_addr *out)
{
        sa_family_t family;

        if (len < sizeof(family))
                return -EINVAL;
        memcpy(&family, sa, sizeof(family));
        memset(out, 0, sizeof(*out));
        if (family == AF_INET) {
                struct sockaddr_in in;

                if (len < sizeof(in))
                        return -EINVAL;
                memcpy(&in, sa, sizeof(in));
                map_v4(out->a, &in.sin_addr);
                out->port = ntohs(in.sin_port);
        } else if (family == AF_INET6) {
                struct sockaddr_in6 in6;

                if (len < 24) /* SIN6_LEN_RFC2133: no scope id */
                        return -EINVAL;
                memset(&in6, 0, sizeof(in6));
                memcpy(&in6, sa, len < sizeof(in6) ? len : sizeof(in6));
                memcpy(out->a, &in6.sin6_addr, 16);
                out->port = ntohs(in6.sin6_port);
        } else {
                return -EAFNOSUPPORT;
        }
        return 0;
}

int netpol_addr_from(const void *sa, size_t len, struct netpol_addr *out)
{
        int r = netpol_addr_raw(sa, len, out);

        if (r == 0)
                normalise(out->a);
        return r;
}

bool netpol_addr_is_v4(const struct netpol_addr *a)
{
        return memcmp(a->a, v4_mapped_prefix, 12) == 0;
}

bool netpol_sockaddr_is_any(const void *sa, size_t len)
{
        static const uint8_t any[16];
        struct netpol_addr raw;
        sa_family_t family;

        if (len < sizeof(family))
                return false;
        memcpy(&family, sa, sizeof(family));
        if (family == AF_INET && len >= sizeof(struct sockaddr_in))
                return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
        if (family == AF_INET6 && len >= 24) {
                memcpy(raw.a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
                /* :: and ::ffff:0.0.0.0 (a dual-stack socket's IPv4 wildcard) */
                return memcmp(raw.a, any, 16) == 0 || (memcmp(raw.a, v4_mapped_prefix, 12) == 0 &&
                                                       memcmp(raw.a + 12, any, 4) == 0);
        }
        return false;
}

/* Whether the first `prefix` bits of a and net are equal. */
static bool in_prefix(const uint8_t a[16], const uint8_t net[16], unsigned prefix)
{
        unsigned bytes = prefix / 8, bits = prefix % 8;

        if (memcmp(a, net, bytes) != 0)
                return false;
        if (!bits)
                return true;
        return ((a[bytes] ^ net[bytes]) & (uint8_t)(0xff << (8 - bits))) == 0;
}

struct special {
        const char *text; /* the range, for messages */
        enum netpol_class cls;
        uint8_t net[16];
        unsigned prefix;
};

#define V4(a, b, c, d)                                                                             \
        {                                                                                          \
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d                               \
        }

/* Most specific first: the first range that holds an address is its class. */
static const struct special specials[] = {
        {"169.254.169.254", NETPOL_METADATA, V4(169, 254, 169, 254), 128},
        {"fd00:ec2::254",
         NETPOL_METADATA,
         {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54},
         128},
        {"127.0.0.0/8", NETPOL_LOOPBACK, V4(127, 0, 0, 0), 96 + 8},
        {"::1", NETPOL_LOOPBACK, {[15] = 1}, 128},
        {"10.0.0.0/8", NETPOL_PRIVATE, V4(10, 0, 0, 0), 96 + 8},
        {"172.16.0.0/12", NETPOL_PRIVATE, V4(172, 16, 0, 0), 96 + 12},
        {"192.168.0.0/16", NETPOL_PRIVATE, V4(192, 168, 0, 0), 96 + 16},
        {"100.64.0.0/10", NETPOL_PRIVATE, V4(100, 64, 0, 0), 96 + 10},
        {"fc00::/7", NETPOL_PRIVATE, {0xfc}, 7},
        {"169.254.0.0/16", NETPOL_LINKLOCAL, V4(169, 254, 0, 0), 96 + 16},
        {"fe80::/10", NETPOL_LINKLOCAL, {0xfe, 0x80}, 10},
        {"224.0.0.0/4", NETPOL_MULTICAST, V4(224, 0, 0, 0), 96 + 4},
        {"255.255.255.255", NETPOL_MULTICAST, V4(255, 255, 255, 255), 128},
        {"ff00::/8", NETPOL_MULTICAST, {0xff}, 8},
};

static const struct special *special_of(const uint8_t a[16])
{
        for (size_t i = 0; i < ARRAY_SIZE(specials); i++)
                if (in_prefix(a, specials[i].net, specials[i].prefix))
                        return &specials[i];
        return NULL;
}

bool netpol_lets_out(const struct netpol *p)
{
        for (size_t i = 0; i < p->n; i++)
                if (!p->rules[i].deny)
                        return true;
        return p->mode == NETPOL_MODE_HOST;
}

enum netpol_class netpol_classify(const struct netpol_addr *a)
{
        const struct special *s = special_of(a->a);

        return s ? s->cls : NETPOL_PUBLIC;
}

void netpol_addr_str(const struct netpol_addr *a, char *buf, size_t size)
{
        char host[INET6_ADDRSTRLEN];

        if (memcmp(a->a, v4_mapped_prefix, 12) == 0) {
                inet_ntop(AF_INET, a->a + 12, host, sizeof(host));
                snprintf(buf, size, "%s:%u", host, a->port);
        } else {
                inet_ntop(AF_INET6, a->a, host, sizeof(host));
                snprintf(buf, size, "[%s]:%u", host, a->port);
        }
}

/* ---- parsing --------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A port number 1-65535, all digits. */
static int parse_port(const char *s, size_t n, uint16_t *out, char *err, size_t errlen)
{
        unsigned long v = 0;

        if (n == 0)
                return fail(err, errlen, "a port is missing");
        for (size_t i = 0; i < n; i++) {
                if (!isdigit((unsigned char)s[i]))
                        return fail(err, errlen, "`%.*s` is not a port number", (int)n, s);
                if (v <= 65535)
                        v = v * 10 + (unsigned long)(s[i] - '0');
        }
        if (v < 1 || v > 65535)
                return fail(err, errlen, "port %.*s is out of range (1-65535)", (int)n, s);
        *out = (uint16_t)v;
        return 0;
}

/* "443", "80,443", "8000-8100", "*". */
static int parse_ports(struct netpol_rule *r, const char *s, char *err, size_t errlen)
{
        if (strcmp(s, "*") == 0)
                return 0;
        for (;;) {
                size_t n = strcspn(s, ","), dash = strcspn(s, "-");
                struct netpol_range range;

                if (dash < n) {
                        if (parse_port(s, dash, &range.lo, err, errlen) < 0 ||
                            parse_port(s + dash + 1, n - dash - 1, &range.hi, err, errlen) < 0)
                                return -EINVAL;
                        if (range.lo > range.hi)
                                return fail(err, errlen, "the port range %.*s is backwards", (int)n,
                                            s);
                } else if (parse_port(s, n, &range.lo, err, errlen) < 0) {
                        return -EINVAL;
                } else {
                        range.hi = range.lo;
                }
                r->ports = xrealloc(r->ports, (r->n_ports + 1) * sizeof(*r->ports));
                r->ports[r->n_ports++] = range;
                if (!s[n])
                        return 0;
                s += n + 1;
        }
}

/* An address or a CIDR, IPv4 or IPv6 (no brackets). 1 when it is one, 0 when it does not
 * look like one (a name), -EINVAL when it looks like one but is malformed. */
static int parse_cidr(struct netpol_rule *r, const char *s, char *err, size_t errlen)
{
        char host[INET6_ADDRSTRLEN + 1];
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);
        bool v6 = memchr(s, ':', n) != NULL;
        unsigned max = v6 ? 128 : 32, len = max;
        uint8_t raw[16];

        if (!v6 && strspn(s, "0123456789./") != strlen(s))
                return 0; /* letters: a name */
        if (n >= sizeof(host))
                return fail(err, errlen, "`%.*s` is not an IP address", (int)n, s);
        memcpy(host, s, n);
        host[n] = '\0';
        if (v6 ? inet_pton(AF_INET6, host, raw) != 1 : inet_pton(AF_INET, host, raw + 12) != 1)
                return fail(err, errlen, "`%s` is not an IP%s address", host, v6 ? "v6" : "v4");
        if (!v6)
                map_v4(raw, raw + 12);
        if (slash) {
                const char *p = slash + 1;
                unsigned long v = 0;

                if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 3 ||
                    (v = strtoul(p, NULL, 10)) > max)
                        return fail(err, errlen, "`/%s` is not a prefix length (0-%u)", p, max);
                len = (unsigned)v;
        }
        r->prefix = len + (v6 ? 0 : 96);
        memcpy(r->net, raw, 16);
        if (r->prefix == 128)
                normalise(r->net); /* one address: judged as destinations are */
        for (unsigned bit = r->prefix; bit < 128; bit++)
                if (r->net[bit / 8] & (0x80 >> (bit % 8)))
                        return fail(err, errlen,
                                    "`%s` has bits set beyond its prefix (the network is "
                                    "written with zeros there)",
                                    s);
        r->kind = NETPOL_CIDR;
        return 1;
}

/* A host name: letters, digits, '-' and '.', labels of 1-63, optionally "*." first. */
static int parse_name(struct netpol_rule *r, const char *s, char *err, size_t errlen)
{
        const char *p = strncmp(s, "*.", 2) == 0 ? s + 2 : s;
        size_t n = strlen(p);

        if (n && p[n - 1] == '.')
                n--;
        if (n == 0 || n > 253)
                return fail(err, errlen, "`%s` is not a host name", s);
        for (size_t i = 0, label = 0; i < n; i++) {
                char c = p[i];

                if (c == '.') {
                        if (label == 0)
                                return fail(err, errlen, "`%s` has an empty label", s);
                        label = 0;
                        continue;
                }
                if (!isalnum((unsigned char)c) && c != '-' && c != '_')
                        return fail(err, errlen, "`%s` is not a host name (character `%c`)", s, c);
                if (++label > 63)
                        return fail(err, errlen, "`%s` has a label longer than 63", s);
        }
        r->name = xrealloc(NULL, (size_t)(p - s) + n + 1);
        memcpy(r->name, s, (size_t)(p - s) + n);
        r->name[(size_t)(p - s) + n] = '\0';
        for (char *c = r->name; *c; c++)
                *c = (char)tolower((unsigned char)*c);
        r->kind = NETPOL_NAME;
        return 0;
}

static int parse_host(struct netpol_rule *r, const char *host, char *err, size_t errlen)
{
        int k;

        if (!*host)
                return fail(err, errlen, "the host is empty (`*` means any)");
        if (strcmp(host, "*") == 0) {
                r->kind = NETPOL_ANY_HOST;
                return 0;
        }
        k = parse_cidr(r, host, err, errlen);
        if (k != 0)
                return k < 0 ? k : 0;
        return parse_name(r, host, err, errlen);
}

/* Split "HOST:PORTS", "[V6]:PORTS", bare IPv6 (no ports). host gets a copy. */
static int split(const char *s, char *host, size_t hostlen, const char **ports, char *err,
                 size_t errlen)
{
        const char *colon = strrchr(s, ':');
        size_t n;

        *ports = NULL;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close)
                        return fail(err, errlen, "`[` without `]`");
                if (close[1] != '\0' && close[1] != ':')
                        return fail(err, errlen, "after `]` only `:PORTS` may follow");
                n = (size_t)(close - s - 1);
                if (!memchr(s + 1, ':', n))
                        return fail(err, errlen, "brackets are for IPv6 addresses");
                s++;
                *ports = close[1] ? close + 2 : NULL;
        } else if (colon && colon != strchr(s, ':')) {
                n = strlen(s); /* IPv6 without brackets: no ports */
        } else {
                n = colon ? (size_t)(colon - s) : strlen(s);
                *ports = colon ? colon + 1 : NULL;
        }
        if (n >= hostlen)
                return fail(err, errlen, "the host is too long");
        memcpy(host, s, n);
        host[n] = '\0';
        return 0;
}

static void rule_free(struct netpol_rule *r)
{
        free(r->spec);
        free(r->name);
        free(r->ports);
        memset(r, 0, sizeof(*r));
}

int netpol_add_rule(struct netpol *p, const char *spec, bool deny, char *err, size_t errlen)
{
        struct netpol_rule r = {.deny = deny, .protos = NETPOL_ANY_PROTO};
        const char *s = spec, *ports;
        char host[300];

        if (strncmp(s, "tcp/", 4) == 0 || strncmp(s, "udp/", 4) == 0) {
                r.protos = s[0] == 't' ? NETPOL_TCP : NETPOL_UDP;
                s += 4;
        }
        if (!*s)
                return fail(err, errlen,
                            "the rule is empty (HOST[:PORTS], CIDR[:PORTS] or "
                            "*:PORTS)");
        if (split(s, host, sizeof(host), &ports, err, errlen) < 0 ||
            parse_host(&r, host, err, errlen) < 0 ||
            (ports && parse_ports(&r, ports, err, errlen) < 0)) {
                rule_free(&r);
                return -EINVAL;
        }
        /* Ports only mean something to TCP and UDP: a rule with ports covers those two. */
        if (r.n_ports && r.protos == NETPOL_ANY_PROTO)
                r.protos = NETPOL_TCP | NETPOL_UDP;
        r.spec = xstrdup(spec);
        p->rules = xrealloc(p->rules, (p->n + 1) * sizeof(*p->rules));
        p->rules[p->n++] = r;
        return 0;
}

int netpol_add_parts(struct netpol *p, bool deny, const char *proto, const char *host,
                     const char *ports, char *err, size_t errlen)
{
        char spec[400];
        bool v6 = strchr(host, ':') != NULL;

        if (proto && strcmp(proto, "tcp") != 0 && strcmp(proto, "udp") != 0)
                return fail(err, errlen, "proto `%s` is not tcp or udp", proto);
        snprintf(spec, sizeof(spec), "%s%s%s%s%s%s%s", proto ? proto : "", proto ? "/" : "",
                 v6 && ports ? "[" : "", host, v6 && ports ? "]" : "", ports ? ":" : "",
                 ports ? ports : "");
        return netpol_add_rule(p, spec, deny, err, errlen);
}

void netpol_free(struct netpol *p)
{
        for (size_t i = 0; i < p->n; i++)
                rule_free(&p->rules[i]);
        free(p->rules);
        p->rules = NULL;
        p->n = 0;
        for (size_t i = 0; i < p->n_statics; i++)
                free(p->statics[i].name);
        free(p->statics);
        p->statics = NULL;
        p->n_statics = 0;
}

/* ---- the decision ------------------------------------------------------------------------ */

static bool port_in(const struct netpol_rule *r, uint16_t port)
{
        if (!r->n_ports)
                return true;
        for (size_t i = 0; i < r->n_ports; i++)
                if (port >= r->ports[i].lo && port <= r->ports[i].hi)
                        return true;
        return false;
}

/* Whether a name rule matches one of the names the address was handed out for. The DNS
 * records special addresses only where the user wrote them down (netpol.h), so a match
 * opens them. */
static bool covers_name(const struct netpol_rule *r, const struct netpol_names *names)
{
        for (size_t i = 0; names && i < names->n; i++)
                if (netpol_name_match(r->name, names->v[i]))
                        return true;
        return false;
}

/* Whether rule r covers the destination; `sp` is its special range or NULL. A deny rule
 * covers special addresses like any other; an allow rule only as netpol.h says. */
static bool covers(const struct netpol_rule *r, unsigned proto, const struct netpol_addr *a,
                   const struct special *sp, const struct netpol_names *names)
{
        if (!(r->protos & proto) || !port_in(r, a->port))
                return false;
        switch (r->kind) {
        case NETPOL_ANY_HOST:
                return r->deny || !sp;
        case NETPOL_CIDR:
                if (!in_prefix(a->a, r->net, r->prefix))
                        return false;
                /* The whole CIDR inside the address's special range: it names that range. */
                return r->deny || !sp ||
                       (r->prefix >= sp->prefix && in_prefix(r->net, sp->net, sp->prefix));
        case NETPOL_NAME:
                return covers_name(r, names);
        }
        return false;
}

struct netpol_verdict netpol_decide(const struct netpol *p, struct netpol_own *own, unsigned proto,
                                    const struct netpol_addr *a)
{
        return netpol_decide_named(p, own, proto, a, NULL);
}

struct netpol_verdict netpol_decide_named(const struct netpol *p, struct netpol_own *own,
                                          unsigned proto, const struct netpol_addr *a,
                                          const struct netpol_names *names)
{
        const struct special *sp = special_of(a->a);
        struct netpol_verdict v = {.cls = sp ? sp->cls : NETPOL_PUBLIC};

        if (p->mode == NETPOL_MODE_HOST) {
                v.allow = true;
                v.reason = NETPOL_BY_HOST_MODE;
                return v;
        }
        for (size_t i = 0; i < p->n; i++)
                if (p->rules[i].deny && covers(&p->rules[i], proto, a, sp, names)) {
                        v.reason = NETPOL_BY_DENY;
                        v.rule = &p->rules[i];
                        return v;
                }
        for (size_t i = 0; i < p->n; i++)
                if (!p->rules[i].deny && covers(&p->rules[i], proto, a, sp, names)) {
                        v.allow = true;
                        v.reason = NETPOL_BY_ALLOW;
                        v.rule = &p->rules[i];
                        return v;
                }
        if (v.cls == NETPOL_LOOPBACK && own && netpol_own_has(own, proto, a)) {
                v.allow = true;
                v.reason = NETPOL_BY_OWN;
                return v;
        }
        v.reason = sp ? NETPOL_BY_SPECIAL : NETPOL_BY_DEFAULT;
        return v;
}

static const char *class_name(enum netpol_class c)
{
        switch (c) {
        case NETPOL_PUBLIC:
                return "public";
        case NETPOL_LOOPBACK:
                return "loopback";
        case NETPOL_PRIVATE:
                return "private";
        case NETPOL_LINKLOCAL:
                return "link-local";
        case NETPOL_METADATA:
                return "cloud metadata";
        case NETPOL_MULTICAST:
                return "multicast/broadcast";
        }
        return "?";
}

void netpol_verdict_str(const struct netpol_verdict *v, char *buf, size_t size)
{
        switch (v->reason) {
        case NETPOL_BY_HOST_MODE:
                snprintf(buf, size, "allowed: --net host");
                return;
        case NETPOL_BY_ALLOW:
                snprintf(buf, size, "allowed by rule `%s`", v->rule->spec);
                return;
        case NETPOL_BY_OWN:
                snprintf(buf, size, "allowed: a loopback port the sandbox bound");
                return;
        case NETPOL_BY_NETNS:
                snprintf(buf, size, "allowed: the sandbox's own loopback (its network namespace)");
                return;
        case NETPOL_BY_DENY:
                snprintf(buf, size, "denied by deny rule `%s`", v->rule->spec);
                return;
        case NETPOL_BY_SPECIAL:
                snprintf(buf, size,
                         "denied: a %s address, closed unless an allow rule names its range "
                         "(--allow-net with an address or CIDR inside it)",
                         class_name(v->cls));
                return;
        case NETPOL_BY_DEFAULT:
                snprintf(buf, size, "denied: no --allow-net rule allows it (default deny)");
                return;
        }
}

const char *netpol_verdict_rule(const struct netpol_verdict *v)
{
        switch (v->reason) {
        case NETPOL_BY_HOST_MODE:
                return "net: --net host";
        case NETPOL_BY_ALLOW:
                return "net: allow rule";
        case NETPOL_BY_OWN:
                return "net: the sandbox's own loopback port";
        case NETPOL_BY_NETNS:
                return "net: the sandbox's own loopback (network namespace)";
        case NETPOL_BY_DENY:
                return "net: deny rule";
        case NETPOL_BY_SPECIAL:
                return "net: special range closed";
        case NETPOL_BY_DEFAULT:
                return "net: no rule allows it";
        }
        return "net";
}

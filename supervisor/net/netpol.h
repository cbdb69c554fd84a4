/*
 * The network policy (issue 8): rules, address normalisation, and the decision for one
 * destination. Pure code: no seccomp, no sockets of the program, so the unit tests need no
 * sandbox (tests/unit/test_netpol.c). The handlers (syscalls/net_*.c) copy the address, ask
 * netpol_decide, and perform the call themselves.
 *
 * A rule (`--allow-net SPEC`, or the policy file's network.allow / network.deny):
 *
 *   [tcp/|udp/] HOST[:PORTS]     HOST: a name (pypi.org, *.example.com), an IPv4 address,
 *   [tcp/|udp/] CIDR[:PORTS]           an IPv6 address in brackets when ports follow
 *   [tcp/|udp/] *:PORTS                ([::1]:443, [fc00::/7]:443), or `*` (any address)
 *   PORTS: 443 | 80,443 | 8000-8100 | 80,8000-8100 | * (all, the default)
 *
 * The decision, for a destination (protocol, address, port):
 *   1. --net host: allowed.
 *   2. a deny rule that matches: denied (deny wins over allow, whatever the order).
 *   3. an allow rule that matches: allowed. `*` matches public addresses only; a CIDR or an
 *      address matches a *special* address (loopback, private, link-local, metadata,
 *      multicast/broadcast) only if the whole CIDR lies inside that address's special range:
 *      10.0.0.0/8 or 10.1.2.3 open 10.1.2.3, 0.0.0.0/0 and *:443 do not; 169.254.0.0/16
 *      opens link-local but not the metadata address 169.254.169.254, which only a rule
 *      naming it opens.
 *   4. a loopback address and a port the sandbox itself bound (struct netpol_own): allowed,
 *      so that servers inside the sandbox are reachable from inside.
 *   5. denied.
 * Addresses are judged as the address they really reach: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d, which a NAT64 gateway forwards)
 * IPv6 as the IPv4 address, 0.0.0.0 as 127.0.0.1 and :: as ::1 (both reach the local host).
 *
 * Name rules match through the supervisor's DNS (netpol_dns.c, supervisor/dns.c): a
 * connect carries an address, and the address is judged by the names the supervisor handed
 * it out for (struct netpol_handout). An address never handed out matches only `*`, CIDR and
 * address rules. A name rule opens a special address (loopback, private...) only when the
 * user wrote that address down (--dns-static): an address the host's resolver returned in a
 * special range is not recorded, so that a name cannot be re-pointed at the cloud metadata
 * service or a host's loopback daemon (DNS rebinding).
 */
#ifndef STOCKADE_NET_NETPOL_H
#define STOCKADE_NET_NETPOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Protocols, as a bit set: what a rule covers, what a socket is. */
enum {
        NETPOL_TCP = 1u << 0,
        NETPOL_UDP = 1u << 1,
        /* ICMP (ping sockets), SCTP, UDP-Lite...: only rules with neither a protocol nor
         * ports cover them. */
        NETPOL_OTHER = 1u << 2,
};
#define NETPOL_ANY_PROTO (NETPOL_TCP | NETPOL_UDP | NETPOL_OTHER)

/* An address as judged: always in IPv6 form, IPv4 as ::ffff:a.b.c.d. Port in host order. */
struct netpol_addr {
        uint8_t a[16];
        uint16_t port;
};

/* The special ranges: closed unless a rule names them. */
enum netpol_class {
        NETPOL_PUBLIC,
        NETPOL_LOOPBACK,
        NETPOL_PRIVATE,
        NETPOL_LINKLOCAL,
        NETPOL_METADATA,
        NETPOL_MULTICAST, /* multicast and the IPv4 limited broadcast */
};

enum netpol_kind {
        NETPOL_ANY_HOST, /* `*` */
        NETPOL_CIDR,     /* an address is a CIDR of /32 or /128 */
        NETPOL_NAME,
};

struct netpol_range {
        uint16_t lo, hi;
};

struct netpol_rule {
        char *spec; /* as given, for messages */
        bool deny;
        unsigned protos;
        enum netpol_kind kind;
        uint8_t net[16]; /* NETPOL_CIDR: the network, IPv4 mapped */
        unsigned prefix; /* ... and its length in the 128-bit space (IPv4 /8 = 104) */
        char *name;      /* NETPOL_NAME: lower case, no trailing dot; may start with "*." */
        struct netpol_range *ports;
        size_t n_ports; /* 0: every port */
};

enum netpol_mode {
        NETPOL_MODE_NONE, /* --net none (the default): only what the rules allow */
        NETPOL_MODE_HOST, /* --net host: no restriction (the calls are still emulated) */
};

/* --dns-static NAME=IP, the policy file's network.dns.static: answered by the supervisor's
 * DNS without asking the host; a name may have several. */
struct netpol_static {
        char *name; /* lower case, no trailing dot */
        struct netpol_addr addr;
};

/* --publish [HOST_PORT:]PORT: the host's 127.0.0.1:host forwarded to the sandbox's
 * 127.0.0.1:sandbox (TCP; supervisor/publish.h). */
struct netpol_publish {
        uint16_t host, sandbox;
};

#define NETPOL_PUBLISH_MAX 16

struct netpol {
        enum netpol_mode mode;
        struct netpol_rule *rules;
        size_t n;
        struct netpol_static *statics;
        size_t n_statics;
        struct netpol_publish publish[NETPOL_PUBLISH_MAX];
        size_t n_publish;
};

/* Why a destination was allowed or denied. */
enum netpol_reason {
        NETPOL_BY_HOST_MODE, /* allowed: --net host */
        NETPOL_BY_ALLOW,     /* allowed by `rule` */
        NETPOL_BY_OWN,       /* allowed: a loopback port the sandbox bound */
        NETPOL_BY_NETNS,     /* allowed: loopback in the sandbox's own network namespace */
        NETPOL_BY_DENY,      /* denied by `rule` */
        NETPOL_BY_SPECIAL,   /* denied: a special range no rule names */
        NETPOL_BY_DEFAULT,   /* denied: no rule allows it */
};

struct netpol_verdict {
        bool allow;
        enum netpol_reason reason;
        enum netpol_class cls;          /* of the destination */
        const struct netpol_rule *rule; /* NETPOL_BY_ALLOW / NETPOL_BY_DENY */
};

/*
 * The ports the sandbox bound on loopback or on a wildcard address (which includes
 * loopback), by protocol: connects to them from inside are allowed (step 4). Shared by the
 * notifier threads: its own lock, held only to look up or append, never across a call.
 */
/* A wildcard bind: which loopback addresses it covers. */
enum {
        NETPOL_ANY_V4 = 1u << 0, /* 0.0.0.0, or :: on a dual-stack socket */
        NETPOL_ANY_V6 = 1u << 1, /* :: */
};

struct netpol_own_port {
        unsigned proto;
        unsigned any; /* NETPOL_ANY_*, or 0: bound to the address `a` only */
        uint8_t a[16];
        uint16_t port;
};

struct netpol_own {
        pthread_mutex_t lock;
        struct netpol_own_port *v;
        size_t n, cap;
};

/* Parse `spec` and add it as an allow (deny = false) or deny rule. Returns 0, or -EINVAL
 * with what is wrong in err (one phrase, without the spec: "port 70000 is out of range
 * (1-65535)"). The caller names the rule: "--allow-net `x`: ...". */
int netpol_add_rule(struct netpol *p, const char *spec, bool deny, char *err, size_t errlen);
/* The same from the policy file's parts: proto "tcp", "udp" or NULL; host a name, an
 * address or a CIDR (IPv6 without brackets), or "*"; ports NULL (all) or "443,8000-8100". */
int netpol_add_parts(struct netpol *p, bool deny, const char *proto, const char *host,
                     const char *ports, char *err, size_t errlen);
void netpol_free(struct netpol *p);

/* The destination of a sockaddr copy: AF_INET (len >= 16) or AF_INET6 (len >= 24), as the
 * kernel reaches it (see above). Returns 0, or -EAFNOSUPPORT / -EINVAL (too short). */
int netpol_addr_from(const void *sa, size_t len, struct netpol_addr *out);
/* The same as written: an IPv4 address as ::ffff:a.b.c.d, nothing else folded. */
int netpol_addr_raw(const void *sa, size_t len, struct netpol_addr *out);
/* The special range `a` lies in, most specific first (metadata before link-local). */
enum netpol_class netpol_classify(const struct netpol_addr *a);
/* Whether the sockaddr copy is a wildcard (0.0.0.0, ::, ::ffff:0.0.0.0) before
 * normalisation: a bind to every address. */
bool netpol_sockaddr_is_any(const void *sa, size_t len);
/* Whether `a` is an IPv4 address (in its mapped form). */
bool netpol_addr_is_v4(const struct netpol_addr *a);

/* Whether any destination can be allowed by a rule (an allow rule, or --net host). */
bool netpol_lets_out(const struct netpol *p);

/* Judge one destination reached with `proto` (NETPOL_TCP, NETPOL_UDP or NETPOL_OTHER). */
struct netpol_verdict netpol_decide(const struct netpol *p, struct netpol_own *own, unsigned proto,
                                    const struct netpol_addr *a);

/* The names an address was handed out for (netpol_handout_names). */
#define NETPOL_NAMES_MAX 8
#define NETPOL_NAME_LEN  254
struct netpol_names {
        size_t n;
        char v[NETPOL_NAMES_MAX][NETPOL_NAME_LEN];
};
/* netpol_decide, where the address was handed out for `names` (NULL or none: only `*`, CIDR
 * and address rules can match): a name rule matches when it matches one of them. */
struct netpol_verdict netpol_decide_named(const struct netpol *p, struct netpol_own *own,
                                          unsigned proto, const struct netpol_addr *a,
                                          const struct netpol_names *names);

/* ---- names (netpol_dns.c) ---- */

/* Whether rule name `pattern` ("example.com", "*.example.com") matches `name` (lower case,
 * no trailing dot). "*.example.com" matches the names beneath example.com, not itself. */
bool netpol_name_match(const char *pattern, const char *name);
/* Add `spec` "NAME=IP" (--dns-static), or its parts (the policy file). Returns 0 or -EINVAL
 * with what is wrong in err. */
int netpol_add_static(struct netpol *p, const char *spec, char *err, size_t errlen);
int netpol_add_static_parts(struct netpol *p, const char *name, const char *ip, char *err,
                            size_t errlen);

/* Add `spec` "[HOST_PORT:]PORT" (--publish, network.publish): ports 1-65535, each host port
 * once, at most NETPOL_PUBLISH_MAX. Returns 0 or -EINVAL with what is wrong in err. */
int netpol_add_publish(struct netpol *p, const char *spec, char *err, size_t errlen);

/* What the supervisor's DNS does with a query for `name` (lower case, no trailing dot). */
enum netpol_dns_answer {
        NETPOL_DNS_REFUSE, /* NXDOMAIN: no rule allows the name; nothing leaves for it */
        NETPOL_DNS_STATIC, /* from the --dns-static entries only */
        NETPOL_DNS_HOST,   /* ask the host's resolver */
};
/* --net host and a `*` allow rule resolve every name; otherwise a name rule that allows it
 * (with any ports), or a static entry. A deny rule for the name on every port and protocol
 * refuses it, static or not. */
enum netpol_dns_answer netpol_dns_decide(const struct netpol *p, const char *name);
/* The static addresses of `name`: up to `max` into out; returns how many there are. */
size_t netpol_static_lookup(const struct netpol *p, const char *name, struct netpol_addr *out,
                            size_t max);

/*
 * The addresses the supervisor's DNS handed out, and for which names: what a connect is
 * judged by. Shared by the DNS thread (which adds) and the notifier threads (which look up):
 * its own lock, held only for the copy. Bounded: past NETPOL_HANDOUT_MAX pairs the oldest is
 * forgotten (a connect to it then needs a CIDR rule, or a new look-up).
 */
#define NETPOL_HANDOUT_MAX 4096
struct netpol_handout_pair {
        uint8_t a[16];
        char *name;
};
struct netpol_handout {
        pthread_mutex_t lock;
        struct netpol_handout_pair *v; /* a ring of NETPOL_HANDOUT_MAX */
        size_t n, next;
};
void netpol_handout_init(struct netpol_handout *h);
void netpol_handout_free(struct netpol_handout *h);
/* Remember that `a` (port ignored) was handed out for `name`. */
void netpol_handout_add(struct netpol_handout *h, const struct netpol_addr *a, const char *name);
/* The names `a` was handed out for, copied into out. Returns out->n. */
size_t netpol_handout_names(struct netpol_handout *h, const struct netpol_addr *a,
                            struct netpol_names *out);

/* "1.2.3.4:443", "[::1]:80" (IPv4-mapped printed as IPv4). */
void netpol_addr_str(const struct netpol_addr *a, char *buf, size_t size);
/* One line for -v: "denied by rule `10.0.0.0/8`", "10.1.2.3 is private; closed unless a rule
 * names it", ... */
void netpol_verdict_str(const struct netpol_verdict *v, char *buf, size_t size);
/* A static string for the trace's rule field. */
const char *netpol_verdict_rule(const struct netpol_verdict *v);

void netpol_own_init(struct netpol_own *o);
void netpol_own_free(struct netpol_own *o);
/* Remember a port the sandbox bound: `bound` is the address after the bind (getsockname),
 * `any` the NETPOL_ANY_* a wildcard bind covers, 0 for one address. Only loopback and
 * wildcard binds are kept. */
void netpol_own_add(struct netpol_own *o, unsigned proto, const struct netpol_addr *bound,
                    unsigned any);
bool netpol_own_has(struct netpol_own *o, unsigned proto, const struct netpol_addr *a);

#endif

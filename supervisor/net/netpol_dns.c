/*
 * The network policy's names (netpol.h): which names the supervisor's DNS answers, the
 * static entries (--dns-static), and the memory of the addresses it handed out, by which a
 * connect is judged against name rules. Pure code, like netpol.c: the DNS server itself
 * (sockets, threads) is supervisor/dns.c.
 */
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

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

bool netpol_name_match(const char *pattern, const char *name)
{
        size_t np, nn;

        if (strncmp(pattern, "*.", 2) != 0)
                return strcmp(pattern, name) == 0;
        /* "*.example.com": "a.example.com", "a.b.example.com"; not "example.com" nor
         * "badexample.com". */
        np = strlen(pattern + 1); /* ".example.com" */
        nn = strlen(name);
        return nn > np && strcmp(name + nn - np, pattern + 1) == 0;
}

/* A host name as the DNS compares it: labels of letters, digits, '-' and '_', 1-63 long,
 * 253 in all; a trailing dot dropped; lower-cased into out (size NETPOL_NAME_LEN). */
static int canon_name(const char *s, char *out)
{
        size_t n = strlen(s), label = 0;

        if (n && s[n - 1] == '.')
                n--;
        if (n == 0 || n > 253)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (c == '.') {
                        if (label == 0)
                                return -EINVAL;
                        label = 0;
                } else if ((isalnum((unsigned char)c) || c == '-' || c == '_') && ++label <= 63) {
                        /* fine */
                } else {
                        return -EINVAL;
                }
                out[i] = (char)tolower((unsigned char)c);
        }
        if (label == 0)
                return -EINVAL;
        out[n] = '\0';
        return 0;
}

int netpol_add_static_parts(struct netpol *p, const char *name, const char *ip, char *err,
                            size_t errlen)
{
        char canon[NETPOL_NAME_LEN];
        struct netpol_static st = {0};
        struct sockaddr_in in = {.sin_family = AF_INET};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

        if (canon_name(name, canon) < 0)
                return fail(err, errlen, "`%s` is not a host name", name);
        if (inet_pton(AF_INET, ip, &in.sin_addr) == 1)
                netpol_addr_from(&in, sizeof(in), &st.addr);
        else if (inet_pton(AF_INET6, ip, &in6.sin6_addr) == 1)
                netpol_addr_from(&in6, sizeof(in6), &st.addr);
        else
                return fail(err, errlen, "`%s` is not an IPv4 or IPv6 address", ip);
        /* Judged as the address it reaches (0.0.0.0 is 127.0.0.1), like every destination. */
        st.name = xstrdup(canon);
        p->statics = xrealloc(p->statics, (p->n_statics + 1) * sizeof(*p->statics));
        p->statics[p->n_statics++] = st;
        return 0;
}

int netpol_add_static(struct netpol *p, const char *spec, char *err, size_t errlen)
{
        const char *eq = strchr(spec, '=');
        char name[300];

        if (!eq)
                return fail(err, errlen, "expected NAME=IP");
        if ((size_t)(eq - spec) >= sizeof(name))
                return fail(err, errlen, "the name is too long");
        memcpy(name, spec, (size_t)(eq - spec));
        name[eq - spec] = '\0';
        return netpol_add_static_parts(p, name, eq + 1, err, errlen);
}

size_t netpol_static_lookup(const struct netpol *p, const char *name, struct netpol_addr *out,
                            size_t max)
{
        size_t n = 0;

        for (size_t i = 0; i < p->n_statics; i++)
                if (strcmp(p->statics[i].name, name) == 0) {
                        if (n < max)
                                out[n] = p->statics[i].addr;
                        n++;
                }
        return n;
}

enum netpol_dns_answer netpol_dns_decide(const struct netpol *p, const char *name)
{
        char dummy[NETPOL_NAME_LEN];
        bool any = p->mode == NETPOL_MODE_HOST, allowed = false;

        if (canon_name(name, dummy) < 0 || strcmp(dummy, name) != 0)
                return NETPOL_DNS_REFUSE; /* not a host name as the rules spell them */
        for (size_t i = 0; i < p->n; i++) {
                const struct netpol_rule *r = &p->rules[i];

                if (r->kind == NETPOL_ANY_HOST && !r->deny)
                        any = true;
                if (r->kind != NETPOL_NAME || !netpol_name_match(r->name, name))
                        continue;
                /* A deny on some ports still lets the name resolve for the others. */
                if (r->deny && !r->n_ports && r->protos == NETPOL_ANY_PROTO)
                        return NETPOL_DNS_REFUSE;
                if (!r->deny)
                        allowed = true;
        }
        if (netpol_static_lookup(p, name, NULL, 0))
                return NETPOL_DNS_STATIC;
        return allowed || any ? NETPOL_DNS_HOST : NETPOL_DNS_REFUSE;
}

/* ---- the addresses handed out --------------------------------------------------------- */

void netpol_handout_init(struct netpol_handout *h)
{
        memset(h, 0, sizeof(*h));
        pthread_mutex_init(&h->lock, NULL);
        h->v = xcalloc(NETPOL_HANDOUT_MAX, sizeof(*h->v));
}

void netpol_handout_free(struct netpol_handout *h)
{
        for (size_t i = 0; h->v && i < h->n; i++)
                free(h->v[i].name);
        free(h->v);
        h->v = NULL;
        h->n = h->next = 0;
}

void netpol_handout_add(struct netpol_handout *h, const struct netpol_addr *a, const char *name)
{
        char *copy;

        if (strlen(name) >= NETPOL_NAME_LEN)
                return;
        pthread_mutex_lock(&h->lock);
        for (size_t i = 0; i < h->n; i++)
                if (memcmp(h->v[i].a, a->a, 16) == 0 && strcmp(h->v[i].name, name) == 0) {
                        pthread_mutex_unlock(&h->lock);
                        return;
                }
        pthread_mutex_unlock(&h->lock);
        /* Allocated outside the lock (notifier threads wait on it); a pair added twice by
         * two racing queries costs one slot. */
        copy = xstrdup(name);
        pthread_mutex_lock(&h->lock);
        if (h->n < NETPOL_HANDOUT_MAX)
                h->n++;
        else
                free(h->v[h->next].name); /* the oldest */
        memcpy(h->v[h->next].a, a->a, 16);
        h->v[h->next].name = copy;
        h->next = (h->next + 1) % NETPOL_HANDOUT_MAX;
        pthread_mutex_unlock(&h->lock);
}

size_t netpol_handout_names(struct netpol_handout *h, const struct netpol_addr *a,
                            struct netpol_names *out)
{
        out->n = 0;
        pthread_mutex_lock(&h->lock);
        for (size_t i = 0; i < h->n && out->n < NETPOL_NAMES_MAX; i++)
                if (memcmp(h->v[i].a, a->a, 16) == 0)
                        snprintf(out->v[out->n++], NETPOL_NAME_LEN, "%s", h->v[i].name);
        pthread_mutex_unlock(&h->lock);
        return out->n;
}

/*
 * The loopback ports the sandbox bound itself (netpol.h, step 4 of the decision). Servers
 * inside the sandbox must be reachable from inside under the default policy, while a host
 * service on another loopback port stays closed: the bind handler records each port the
 * sandbox bound on a loopback or wildcard address (after the bind, from getsockname, so an
 * ephemeral port is recorded as the number the kernel chose), and a connect to a loopback
 * address is allowed on those ports only.
 *
 * Kept for the whole run: a port the sandbox released and a host program bound afterwards
 * stays reachable (a narrow window that needs the host's cooperation; the network namespace
 * of issue 8 item 5 removes it). A port reached only by listen() without bind (an autobind)
 * is not recorded: its connects are refused. Nor is a port bound with SO_REUSEPORT, or with
 * SO_REUSEADDR on UDP: a host socket may share it (net_bind.c).
 */
#include "supervisor/net/netpol.h"
#include "supervisor/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void netpol_own_init(struct netpol_own *o)
{
        memset(o, 0, sizeof(*o));
        pthread_mutex_init(&o->lock, NULL);
}

void netpol_own_free(struct netpol_own *o)
{
        free(o->v);
        o->v = NULL;
        o->n = o->cap = 0;
        pthread_mutex_destroy(&o->lock);
}

void netpol_own_add(struct netpol_own *o, unsigned proto, const struct netpol_addr *bound,
                    unsigned any)
{
        struct netpol_own_port p;

        if (!any && netpol_classify(bound) != NETPOL_LOOPBACK)
                return;
        memset(&p, 0, sizeof(p)); /* padding too: entries are compared whole */
        p.proto = proto;
        p.any = any;
        p.port = bound->port;
        if (!any)
                memcpy(p.a, bound->a, sizeof(p.a));
        pthread_mutex_lock(&o->lock);
        for (size_t i = 0; i < o->n; i++)
                if (memcmp(&o->v[i], &p, sizeof(p)) == 0) {
                        pthread_mutex_unlock(&o->lock);
                        return;
                }
        if (o->n == o->cap) {
                o->cap = o->cap ? o->cap * 2 : 16;
                o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
        }
        o->v[o->n++] = p;
        pthread_mutex_unlock(&o->lock);
}

bool netpol_own_has(struct netpol_own *o, unsigned proto, const struct netpol_addr *a)
{
        unsigned fam = netpol_addr_is_v4(a) ? NETPOL_ANY_V4 : NETPOL_ANY_V6;
        bool found = false;

        pthread_mutex_lock(&o->lock);
        for (size_t i = 0; i < o->n && !found; i++)
                found = o->v[i].proto == proto && o->v[i].port == a->port &&
                        (o->v[i].any ? (o->v[i].any & fam) != 0
                                     : memcmp(o->v[i].a, a->a, sizeof(a->a)) == 0);
        pthread_mutex_unlock(&o->lock);
        return found;
}

/* A port number, 1-65535, in decimal: 0 or -1. */
static long port_of(const char *s, size_t len)
{
        long v = 0;

        if (len == 0 || len > 5)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v >= 1 && v <= 65535 ? v : -1;
}

int netpol_add_publish(struct netpol *p, const char *spec, char *err, size_t errlen)
{
        const char *colon = strchr(spec, ':');
        long host = port_of(spec, colon ? (size_t)(colon - spec) : strlen(spec));
        long inside = colon ? port_of(colon + 1, strlen(colon + 1)) : host;

        if (host < 0 || inside < 0) {
                snprintf(err, errlen, "not [HOST_PORT:]PORT with ports 1-65535");
                return -EINVAL;
        }
        for (size_t i = 0; i < p->n_publish; i++)
                if (p->publish[i].host == host) {
                        snprintf(err, errlen, "host port %ld is published already", host);
                        return -EINVAL;
                }
        if (p->n_publish >= NETPOL_PUBLISH_MAX) {
                snprintf(err, errlen, "at most %d published ports", NETPOL_PUBLISH_MAX);
                return -EINVAL;
        }
        p->publish[p->n_publish].host = (uint16_t)host;
        p->publish[p->n_publish++].sandbox = (uint16_t)inside;
        return 0;
}

/* --publish (publish.h). */
#include "supervisor/publish.h"
#include "supervisor/error.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PUBLISH_CONNS 64
#define RELAY_BUF     65536

struct publisher {
        struct supervisor *sup;
        int listen[NETPOL_PUBLISH_MAX];
        uint16_t inside[NETPOL_PUBLISH_MAX]; /* the sandbox's port for each */
        size_t n;
        int stop; /* eventfd: readable once everything is to end */
        pthread_t thread;
        bool started;
        atomic_int conns; /* relays running */
};

/* One direction of a relay. */
struct pipe_half {
        int from, to;
        char buf[RELAY_BUF];
        size_t len, off;
        bool eof; /* `from` is done and `to` was shut down for writing */
};

struct relay {
        struct publisher *p;
        int host, inside; /* the accepted connection; the sandbox's side */
        uint16_t port;
        struct pipe_half half[2];
};

/* Move what one side can give or take now. Returns 0, or -1 when the relay is over. */
static int step(struct pipe_half *h, short revents_from, short revents_to)
{
        ssize_t n;

        if (h->len == h->off && !h->eof && (revents_from & (POLLIN | POLLHUP | POLLERR))) {
                n = recv(h->from, h->buf, sizeof(h->buf), MSG_DONTWAIT);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                if (n == 0) {
                        h->eof = true;
                        shutdown(h->to, SHUT_WR);
                } else if (n > 0) {
                        h->len = (size_t)n;
                        h->off = 0;
                }
        }
        if (h->len > h->off && (revents_to & (POLLOUT | POLLERR | POLLHUP))) {
                n = send(h->to, h->buf + h->off, h->len - h->off, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                if (n > 0)
                        h->off += (size_t)n;
                if (h->off == h->len)
                        h->len = h->off = 0;
        }
        return 0;
}

static void *relay_run(void *arg)
{
        struct relay *r = arg;
        struct sockaddr_in to = {.sin_family = AF_INET,
                                 .sin_port = htons(r->port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct timeval limit = {.tv_sec = 5}; /* a full backlog would retry for minutes */

        setsockopt(r->inside, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
        if (connect(r->inside, (struct sockaddr *)&to, sizeof(to)) == 0) {
                r->half[0] = (struct pipe_half){.from = r->host, .to = r->inside};
                r->half[1] = (struct pipe_half){.from = r->inside, .to = r->host};
                while (!(r->half[0].eof && r->half[1].eof)) {
                        struct pollfd pf[3] = {{.fd = r->host},
                                               {.fd = r->inside},
                                               {.fd = r->p->stop, .events = POLLIN}};

                        for (int i = 0; i < 2; i++) {
                                struct pipe_half *h = &r->half[i];
                                struct pollfd *from = &pf[i], *dst = &pf[1 - i];

                                if (h->len == h->off && !h->eof)
                                        from->events |= POLLIN;
                                if (h->len > h->off)
                                        dst->events |= POLLOUT;
                        }
                        if (poll(pf, 3, -1) < 0 && errno != EINTR)
                                break;
                        if (pf[2].revents)
                                break;
                        if (step(&r->half[0], pf[0].revents, pf[1].revents) < 0 ||
                            step(&r->half[1], pf[1].revents, pf[0].revents) < 0)
                                break;
                }
        }
        close(r->host);
        close(r->inside);
        atomic_fetch_sub(&r->p->conns, 1);
        free(r);
        return NULL;
}

/* A connection accepted on listener `i`: relayed by a thread of its own. */
static void take(struct publisher *p, size_t i, int host)
{
        struct relay *r;
        pthread_attr_t attr;
        pthread_t t;
        int inside;

        if (atomic_load(&p->conns) >= PUBLISH_CONNS) {
                close(host);
                return;
        }
        inside = sockmaker_socket(&p->sup->netns, AF_INET, SOCK_STREAM, 0);
        if (inside < 0) {
                close(host);
                return;
        }
        r = xcalloc(1, sizeof(*r));
        r->p = p;
        r->host = host;
        r->inside = inside;
        r->port = p->inside[i];
        atomic_fetch_add(&p->conns, 1);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, relay_run, r) != 0) {
                atomic_fetch_sub(&p->conns, 1);
                close(host);
                close(inside);
                free(r);
        }
        pthread_attr_destroy(&attr);
}

static void *accept_run(void *arg)
{
        struct publisher *p = arg;
        struct pollfd pf[NETPOL_PUBLISH_MAX + 1];

        for (size_t i = 0; i < p->n; i++)
                pf[i] = (struct pollfd){.fd = p->listen[i], .events = POLLIN};
        pf[p->n] = (struct pollfd){.fd = p->stop, .events = POLLIN};
        for (;;) {
                if (poll(pf, p->n + 1, -1) < 0 && errno != EINTR)
                        return NULL;
                if (pf[p->n].revents)
                        return NULL;
                for (size_t i = 0; i < p->n; i++) {
                        int fd;

                        if (!(pf[i].revents & POLLIN))
                                continue;
                        fd = accept4(p->listen[i], NULL, NULL, SOCK_CLOEXEC);
                        if (fd >= 0)
                                take(p, i, fd);
                }
        }
}

int publish_open(struct supervisor *sup, struct error *err)
{
        const struct netpol *net = &sup->cfg->net;
        struct publisher *p;

        if (!net->n_publish)
                return 0;
        if (!sup->layers.netns) {
                if (sup->cfg->verbose)
                        fprintf(stderr, "stockade: note: --publish: no network namespace on this "
                                        "run, so the loopback is shared: the sandbox's servers "
                                        "are reachable there already\n");
                return 0;
        }
        p = xcalloc(1, sizeof(*p));
        p->sup = sup;
        p->stop = -1;
        sup->publish = p; /* publish_stop closes whatever follows opened */
        for (size_t i = 0; i < net->n_publish; i++) {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons(net->publish[i].host),
                                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

                if (fd < 0)
                        return make_error(err, errno, "--publish: socket");
                p->listen[p->n] = fd;
                p->inside[p->n++] = net->publish[i].sandbox;
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
                if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0)
                        return make_error(err, errno, "--publish %u:%u: the host's 127.0.0.1:%u",
                                          net->publish[i].host, net->publish[i].sandbox,
                                          net->publish[i].host);
        }
        p->stop = eventfd(0, EFD_CLOEXEC);
        if (p->stop < 0)
                return make_error(err, errno, "--publish: eventfd");
        return 0;
}

int publish_start(struct supervisor *sup, struct error *err)
{
        struct publisher *p = sup->publish;

        if (!p)
                return 0;
        if (pthread_create(&p->thread, NULL, accept_run, p) != 0)
                return make_error(err, EAGAIN, "--publish: start the accepting thread");
        p->started = true;
        if (sup->cfg->verbose)
                for (size_t i = 0; i < p->n; i++)
                        fprintf(stderr,
                                "stockade: --publish: the host's 127.0.0.1:%u -> the "
                                "sandbox's 127.0.0.1:%u\n",
                                sup->cfg->net.publish[i].host, p->inside[i]);
        return 0;
}

void publish_stop(struct supervisor *sup)
{
        struct publisher *p = sup->publish;
        uint64_t one = 1;

        if (!p)
                return;
        if (p->stop >= 0 && write(p->stop, &one, sizeof(one)) < 0)
                return; /* cannot tell the threads: leave it all (the process ends soon) */
        if (p->started)
                pthread_join(p->thread, NULL);
        /* The relays see the same event and end; they hold `p` until then. */
        while (atomic_load(&p->conns) > 0)
                usleep(1000);
        for (size_t i = 0; i < p->n; i++)
                close(p->listen[i]);
        if (p->stop >= 0)
                close(p->stop);
        free(p);
        sup->publish = NULL;
}

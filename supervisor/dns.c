/*
 * The DNS the supervisor answers: the server thread, the host look-ups on worker threads,
 * and the view's resolv.conf (dns.h says how the program's queries get here).
 *
 * Threads and lifetime: the server thread owns the sockets, the TCP connections and the
 * list of pending look-ups. A worker owns nothing but its job until it marks it done under
 * `mu`; a job the server gave up on (its deadline passed, or the run ended) is marked
 * abandoned and the worker frees it. Workers also hold a reference on the server, so that
 * one stuck in getaddrinfo at the end of the run does not find it freed (the last reference
 * frees it). Handlers (notifier threads) only read the addresses, the client set and the
 * handout, each under its own lock or constant after dns_start.
 */
#include "supervisor/dns.h"
#include "syscalls/fs_common.h"
#include "supervisor/trace.h"
#include "supervisor/net/dnsmsg.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOB_ADDRS   16
#define CLIENTS_MAX 256
#define TCP_BUF     (2 + 65535)

struct dns_job {
        struct dns_server *d; /* a reference of the worker's */
        struct dns_job *next; /* the server's pending list */
        struct dnsmsg_query q;
        int tcp; /* our dup of the TCP connection, or -1 (UDP: peer) */
        struct sockaddr_storage peer;
        socklen_t peerlen;
        uint64_t deadline; /* ms, CLOCK_MONOTONIC */
        /* Written by the worker, then `done`, under the server's mu. */
        bool done, abandoned;
        int rcode;
        struct netpol_addr addrs[JOB_ADDRS];
        size_t n;
};

struct dns_conn {
        int fd; /* -1: free slot */
        uint8_t *buf;
        size_t len;
        uint64_t idle_deadline;
};

struct dns_server {
        struct supervisor *sup; /* for the trace: each query is an event */
        const struct netpol *pol;
        int verbose;
        int udp, tcp, ev;
        struct sockaddr_in udp_addr, tcp_addr;
        pthread_t thread;
        bool started;
        atomic_bool stop;
        pthread_mutex_t mu; /* jobs' done/abandoned, refs, workers */
        int refs, workers;
        struct dns_job *pending;
        struct dns_conn conns[DNS_TCP_CONNS];
        uint64_t qps_second;
        unsigned qps;
        struct netpol_handout handout;
        pthread_mutex_t client_lock;
        unsigned long clients[CLIENTS_MAX];
        size_t n_clients, next_client;
        bool name_rules;  /* the policy has a name rule (dns_names) */
        bool have_resolv; /* the host's resolv.conf, by inode */
        dev_t resolv_dev;
        ino_t resolv_ino;
};

/* Close *fd and forget it (cleanup_closep leaves the number: a second close would hit
 * whatever fd another thread opened under it since). */
static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const char *type_name(uint16_t t, char *buf, size_t size)
{
        if (t == DNSMSG_T_A)
                return "A";
        if (t == DNSMSG_T_AAAA)
                return "AAAA";
        snprintf(buf, size, "type %u", t);
        return buf;
}

/* -vv: every query; -v: the refused ones; the trace: every one, with what was answered. */
static void say_answer(struct dns_server *d, bool refusal, const struct dnsmsg_query *q,
                       const char *what, const struct netpol_addr *addrs, size_t n)
{
        char t[16], text[JOB_ADDRS][64], *answers[JOB_ADDRS];

        if (d->verbose >= 2 || (refusal && d->verbose))
                fprintf(stderr, "stockade: dns: %s %s: %s\n", q->lower[0] ? q->lower : "(no name)",
                        type_name(q->qtype, t, sizeof(t)), what);
        size_t k = 0;

        n = n > JOB_ADDRS ? JOB_ADDRS : n;
        /* What the answer holds: the addresses of the type asked. */
        for (size_t i = 0; i < n; i++) {
                bool v4 = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)addrs[i].a);

                if (v4 != (q->qtype == DNSMSG_T_A) || (!v4 && q->qtype != DNSMSG_T_AAAA))
                        continue;
                if (!inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? addrs[i].a + 12 : addrs[i].a, text[k],
                               sizeof(text[k])))
                        continue;
                answers[k] = text[k];
                k++;
        }
        trace_dns(d->sup, q->lower, type_name(q->qtype, t, sizeof(t)), answers, k, refusal, what);
}

static void say(struct dns_server *d, bool refusal, const struct dnsmsg_query *q, const char *what)
{
        say_answer(d, refusal, q, what, NULL, 0);
}

static void unref(struct dns_server *d)
{
        bool last;

        pthread_mutex_lock(&d->mu);
        last = --d->refs == 0;
        pthread_mutex_unlock(&d->mu);
        if (!last)
                return;
        close_fd(&d->ev);
        netpol_handout_free(&d->handout);
        free(d);
}

/* ---- answers ------------------------------------------------------------------------------ */

static void reply(struct dns_server *d, const struct dnsmsg_query *q, int rcode,
                  const struct netpol_addr *addrs, size_t n, int tcp,
                  const struct sockaddr_storage *peer, socklen_t peerlen)
{
        uint8_t buf[2 + 4096];
        int len = dnsmsg_build_answer(q, rcode, addrs, n, DNS_TTL, buf + 2,
                                      tcp >= 0 ? sizeof(buf) - 2 : DNSMSG_UDP_MAX);

        if (len < 0)
                return;
        /* Never blocks: a client that does not read loses its answer, not our thread. */
        if (tcp >= 0) {
                buf[0] = (uint8_t)(len >> 8);
                buf[1] = (uint8_t)len;
                (void)!send(tcp, buf, (size_t)len + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
                (void)!sendto(d->udp, buf + 2, (size_t)len, MSG_DONTWAIT,
                              (const struct sockaddr *)peer, peerlen);
        }
}

/* Remember the addresses answered for the name: what name rules judge connects by. An
 * address from the host's resolver in a special range is not remembered (netpol.h). */
static void hand_out(struct dns_server *d, const struct dnsmsg_query *q,
                     const struct netpol_addr *addrs, size_t n, bool from_host)
{
        for (size_t i = 0; i < n; i++)
                if (!from_host || netpol_classify(&addrs[i]) == NETPOL_PUBLIC)
                        netpol_handout_add(&d->handout, &addrs[i], q->lower);
}

static void *resolve(void *arg);

/* An allowed name the host must resolve: a job for a worker. */
static void start_lookup(struct dns_server *d, const struct dnsmsg_query *q, int tcp,
                         const struct sockaddr_storage *peer, socklen_t peerlen)
{
        struct dns_job *j;
        pthread_attr_t attr;
        pthread_t t;
        bool full;

        pthread_mutex_lock(&d->mu);
        full = d->workers >= DNS_WORKERS;
        if (!full)
                d->workers++, d->refs++;
        pthread_mutex_unlock(&d->mu);
        if (full) {
                say(d, true, q, "SERVFAIL (too many look-ups at once)");
                reply(d, q, DNSMSG_SERVFAIL, NULL, 0, tcp, peer, peerlen);
                return;
        }
        j = xcalloc(1, sizeof(*j));
        j->d = d;
        j->q = *q;
        j->tcp = tcp >= 0 ? fcntl(tcp, F_DUPFD_CLOEXEC, 3) : -1;
        if (peer)
                j->peer = *peer;
        j->peerlen = peerlen;
        j->deadline = now_ms() + DNS_DEADLINE_MS;
        j->next = d->pending;
        d->pending = j;
        say(d, false, q, "asking the host's resolver");
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, resolve, j) != 0) {
                pthread_mutex_lock(&d->mu);
                j->done = true, j->rcode = DNSMSG_SERVFAIL;
                d->workers--, d->refs--;
                pthread_mutex_unlock(&d->mu);
        }
        pthread_attr_destroy(&attr);
}

/* Over DNS_QPS_MAX queries in this second. */
static bool over_rate(struct dns_server *d)
{
        uint64_t s = now_ms() / 1000;

        if (s != d->qps_second)
                d->qps_second = s, d->qps = 0;
        return ++d->qps > DNS_QPS_MAX;
}

/* One query from the program (`tcp` its connection, or -1 and `peer` for UDP). */
static void handle_query(struct dns_server *d, const uint8_t *buf, size_t len, int tcp,
                         const struct sockaddr_storage *peer, socklen_t peerlen)
{
        struct netpol_addr addrs[JOB_ADDRS];
        struct dnsmsg_query q;
        int r = dnsmsg_parse_query(buf, len, &q);
        size_t n;

        if (r == DNSMSG_DROP)
                return;
        if (r == DNSMSG_NOERROR && over_rate(d))
                r = DNSMSG_REFUSED;
        if (r != DNSMSG_NOERROR) {
                say(d, true, &q,
                    r == DNSMSG_REFUSED ? "REFUSED (rate)" : "malformed or unsupported");
                reply(d, &q, r, NULL, 0, tcp, peer, peerlen);
                return;
        }
        switch (q.qclass == DNSMSG_C_IN ? netpol_dns_decide(d->pol, q.lower) : NETPOL_DNS_REFUSE) {
        case NETPOL_DNS_REFUSE:
                say(d, true, &q, "NXDOMAIN (no rule allows the name; nothing asked)");
                reply(d, &q, DNSMSG_NXDOMAIN, NULL, 0, tcp, peer, peerlen);
                return;
        case NETPOL_DNS_STATIC:
                n = netpol_static_lookup(d->pol, q.lower, addrs, JOB_ADDRS);
                n = n > JOB_ADDRS ? JOB_ADDRS : n;
                hand_out(d, &q, addrs, n, false);
                say_answer(d, false, &q, "answered from --dns-static", addrs, n);
                reply(d, &q, DNSMSG_NOERROR, addrs, n, tcp, peer, peerlen);
                return;
        case NETPOL_DNS_HOST:
                if (q.qtype != DNSMSG_T_A && q.qtype != DNSMSG_T_AAAA) {
                        say(d, false, &q, "no data (only A and AAAA are looked up)");
                        reply(d, &q, DNSMSG_NOERROR, NULL, 0, tcp, peer, peerlen);
                        return;
                }
                start_lookup(d, &q, tcp, peer, peerlen);
                return;
        }
}

/* ---- the host's resolver, on a worker --------------------------------------------------- */

static void *resolve(void *arg)
{
        struct dns_job *j = arg;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
        struct dns_server *d;
        uint64_t one = 1;
        int r;

        hints.ai_family = j->q.qtype == DNSMSG_T_A ? AF_INET : AF_INET6;
        r = getaddrinfo(j->q.lower, NULL, &hints, &res);
        j->rcode = r == 0                                   ? DNSMSG_NOERROR
                   : r == EAI_NONAME                        ? DNSMSG_NXDOMAIN
                   : r == EAI_NODATA || r == EAI_ADDRFAMILY ? DNSMSG_NOERROR
                                                            : DNSMSG_SERVFAIL;
        for (struct addrinfo *ai = res; ai && j->n < JOB_ADDRS; ai = ai->ai_next) {
                struct netpol_addr a;
                bool dup = false;

                if (netpol_addr_from(ai->ai_addr, ai->ai_addrlen, &a) < 0)
                        continue;
                a.port = 0;
                for (size_t i = 0; i < j->n; i++)
                        dup |= memcmp(j->addrs[i].a, a.a, 16) == 0;
                if (!dup)
                        j->addrs[j->n++] = a;
        }
        if (res)
                freeaddrinfo(res);
        d = j->d;
        pthread_mutex_lock(&d->mu);
        j->done = true;
        d->workers--;
        if (j->abandoned)
                free(j);
        else
                (void)!write(d->ev, &one, sizeof(one));
        pthread_mutex_unlock(&d->mu);
        unref(d);
        return NULL;
}

/* ---- the server thread -------------------------------------------------------------------- */

static void job_close(struct dns_job *j)
{
        close_fd(&j->tcp);
}

/* Answer the finished look-ups and give up on the late ones (all of them: the end). A late
 * job is copied before it is marked abandoned: its worker may free it the moment after. */
static void settle_jobs(struct dns_server *d, bool all)
{
        uint64_t now = now_ms();

        for (struct dns_job **p = &d->pending, *j; (j = *p);) {
                struct dns_job *next = j->next, late_copy;
                bool done, late;

                pthread_mutex_lock(&d->mu);
                done = j->done;
                late = !done && (all || now >= j->deadline);
                if (late) {
                        /* Only what the worker never writes. */
                        late_copy.q = j->q;
                        late_copy.tcp = j->tcp;
                        late_copy.peer = j->peer;
                        late_copy.peerlen = j->peerlen;
                        j->tcp = -1;
                        j->abandoned = true;
                }
                pthread_mutex_unlock(&d->mu);
                if (!done && !late) {
                        p = &j->next;
                        continue;
                }
                *p = next;
                if (late) {
                        if (!all) {
                                say(d, true, &late_copy.q,
                                    "SERVFAIL (the host's resolver is too slow)");
                                reply(d, &late_copy.q, DNSMSG_SERVFAIL, NULL, 0, late_copy.tcp,
                                      &late_copy.peer, late_copy.peerlen);
                        }
                        job_close(&late_copy);
                        continue;
                }
                if (!all) {
                        if (j->rcode == DNSMSG_NOERROR)
                                hand_out(d, &j->q, j->addrs, j->n, true);
                        say_answer(d, j->rcode != DNSMSG_NOERROR, &j->q,
                                   j->rcode == DNSMSG_NOERROR    ? "answered by the host's resolver"
                                   : j->rcode == DNSMSG_NXDOMAIN ? "NXDOMAIN (the host's resolver)"
                                                                 : "SERVFAIL (the host's resolver)",
                                   j->addrs, j->rcode == DNSMSG_NOERROR ? j->n : 0);
                        reply(d, &j->q, j->rcode, j->addrs, j->n, j->tcp, &j->peer, j->peerlen);
                }
                job_close(j);
                free(j);
        }
}

static void conn_close(struct dns_conn *c)
{
        close_fd(&c->fd);
        free(c->buf);
        c->buf = NULL;
        c->len = 0;
}

static void on_udp(struct dns_server *d)
{
        uint8_t buf[4096];

        for (int i = 0; i < 64; i++) {
                struct sockaddr_storage peer;
                socklen_t plen = sizeof(peer);
                ssize_t n = recvfrom(d->udp, buf, sizeof(buf), MSG_DONTWAIT,
                                     (struct sockaddr *)&peer, &plen);

                if (n < 0)
                        return;
                handle_query(d, buf, (size_t)n, -1, &peer, plen);
        }
}

static void on_accept(struct dns_server *d)
{
        int fd = accept4(d->tcp, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        for (int i = 0; i < DNS_TCP_CONNS; i++)
                if (d->conns[i].fd < 0) {
                        d->conns[i].fd = fd;
                        d->conns[i].buf = xcalloc(1, TCP_BUF);
                        d->conns[i].len = 0;
                        d->conns[i].idle_deadline = now_ms() + 10000;
                        return;
                }
        close(fd); /* too many: the client retries */
}

/* TCP: each message is preceded by its length (RFC 1035, 4.2.2). */
static void on_conn(struct dns_server *d, struct dns_conn *c)
{
        ssize_t n = read(c->fd, c->buf + c->len, TCP_BUF - c->len);
        size_t at = 0;

        if (n <= 0) {
                if (n == 0 || (errno != EAGAIN && errno != EINTR))
                        conn_close(c);
                return;
        }
        c->len += (size_t)n;
        c->idle_deadline = now_ms() + 10000;
        while (c->len - at >= 2) {
                size_t m = (size_t)c->buf[at] << 8 | c->buf[at + 1];

                if (c->len - at - 2 < m)
                        break;
                handle_query(d, c->buf + at + 2, m, c->fd, NULL, 0);
                at += 2 + m;
        }
        memmove(c->buf, c->buf + at, c->len - at);
        c->len -= at;
}

static int poll_timeout(struct dns_server *d)
{
        uint64_t now = now_ms(), next = now + 1000;

        for (struct dns_job *j = d->pending; j; j = j->next)
                if (j->deadline < next)
                        next = j->deadline;
        return next > now ? (int)(next - now) : 0;
}

static void *serve(void *arg)
{
        struct dns_server *d = arg;

        while (!atomic_load(&d->stop)) {
                struct pollfd p[3 + DNS_TCP_CONNS];
                uint64_t v;

                p[0] = (struct pollfd){.fd = d->ev, .events = POLLIN};
                p[1] = (struct pollfd){.fd = d->udp, .events = POLLIN};
                p[2] = (struct pollfd){.fd = d->tcp, .events = POLLIN};
                for (int i = 0; i < DNS_TCP_CONNS; i++)
                        p[3 + i] = (struct pollfd){.fd = d->conns[i].fd, .events = POLLIN};
                if (poll(p, 3 + DNS_TCP_CONNS, poll_timeout(d)) < 0 && errno != EINTR)
                        break;
                if (p[0].revents & POLLIN)
                        (void)!read(d->ev, &v, sizeof(v));
                if (p[1].revents & POLLIN)
                        on_udp(d);
                if (p[2].revents & POLLIN)
                        on_accept(d);
                for (int i = 0; i < DNS_TCP_CONNS; i++) {
                        if (d->conns[i].fd >= 0 && p[3 + i].fd == d->conns[i].fd &&
                            p[3 + i].revents)
                                on_conn(d, &d->conns[i]);
                        if (d->conns[i].fd >= 0 && now_ms() > d->conns[i].idle_deadline)
                                conn_close(&d->conns[i]);
                }
                settle_jobs(d, false);
        }
        return NULL;
}

/* ---- start and stop ----------------------------------------------------------------------- */

bool dns_wanted(const struct netpol *p)
{
        return p->mode != NETPOL_MODE_HOST || p->n_statics > 0;
}

/* A socket of `type` on DNS_NS_ADDR, an ephemeral port: made here, in the host's network
 * namespace, or by the socket maker in the sandbox's (sockmaker.h), where the program's
 * sockets can reach it. */
static int open_server(struct supervisor *sup, int type, struct sockaddr_in *addr,
                       struct error *err)
{
        socklen_t len = sizeof(*addr);
        int fd = sup->netns.chan >= 0
                         ? sockmaker_socket(&sup->netns, AF_INET, type | SOCK_NONBLOCK, 0)
                         : socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        if (fd < 0)
                errno = -fd;
        memset(addr, 0, sizeof(*addr));
        addr->sin_family = AF_INET;
        inet_pton(AF_INET, DNS_NS_ADDR, &addr->sin_addr);
        if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
            (type == SOCK_STREAM && listen(fd, 64) < 0) ||
            getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
                int e = errno;

                if (fd >= 0)
                        close(fd);
                return make_error(err, e, "dns: open the supervisor's %s server on %s",
                                  type == SOCK_STREAM ? "TCP" : "UDP", DNS_NS_ADDR);
        }
        return fd;
}

int dns_open_inside(struct supervisor *sup, struct error *err)
{
        struct dns_server *d = sup->dns;
        int udp, tcp;

        if (!d || sup->netns.chan < 0)
                return 0;
        udp = open_server(sup, SOCK_DGRAM, &d->udp_addr, err);
        if (udp < 0)
                return -1;
        tcp = open_server(sup, SOCK_STREAM, &d->tcp_addr, err);
        if (tcp < 0) {
                close(udp);
                return -1;
        }
        close(d->udp);
        close(d->tcp);
        d->udp = udp;
        d->tcp = tcp;
        return 0;
}

int dns_start(struct supervisor *sup, struct error *err)
{
        struct dns_server *d;
        struct stat st;

        if (!dns_wanted(&sup->cfg->net))
                return 0;
        d = xcalloc(1, sizeof(*d));
        d->sup = sup;
        d->pol = &sup->cfg->net;
        d->verbose = sup->cfg->verbose;
        d->udp = d->tcp = d->ev = -1;
        d->refs = 1;
        for (int i = 0; i < DNS_TCP_CONNS; i++)
                d->conns[i].fd = -1;
        pthread_mutex_init(&d->mu, NULL);
        pthread_mutex_init(&d->client_lock, NULL);
        netpol_handout_init(&d->handout);
        for (size_t i = 0; i < d->pol->n; i++)
                d->name_rules |= d->pol->rules[i].kind == NETPOL_NAME;
        if (stat("/etc/resolv.conf", &st) == 0) {
                d->have_resolv = true;
                d->resolv_dev = st.st_dev;
                d->resolv_ino = st.st_ino;
        }
        sup->dns = d; /* dns_stop/dns_free clean up whatever follows fails */
        d->udp = open_server(sup, SOCK_DGRAM, &d->udp_addr, err);
        if (d->udp < 0)
                return -1;
        d->tcp = open_server(sup, SOCK_STREAM, &d->tcp_addr, err);
        if (d->tcp < 0)
                return -1;
        d->ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->ev < 0)
                return make_error(err, errno, "dns: eventfd");
        sup->fopts.dns = true;
        return 0;
}

int dns_serve(struct supervisor *sup, struct error *err)
{
        struct dns_server *d = sup->dns;

        if (!d)
                return 0;
        /* Queries that came before wait in the sockets' queues. */
        if (pthread_create(&d->thread, NULL, serve, d) != 0)
                return make_error(err, EAGAIN, "dns: start the server thread");
        d->started = true;
        return 0;
}

void dns_stop(struct supervisor *sup)
{
        struct dns_server *d = sup->dns;
        uint64_t one = 1;

        if (!d)
                return;
        if (d->started) {
                atomic_store(&d->stop, true);
                (void)!write(d->ev, &one, sizeof(one));
                pthread_join(d->thread, NULL);
                d->started = false;
        }
        settle_jobs(d, true);
        for (int i = 0; i < DNS_TCP_CONNS; i++)
                conn_close(&d->conns[i]);
        close_fd(&d->udp);
        close_fd(&d->tcp);
}

void dns_free(struct supervisor *sup)
{
        if (!sup->dns)
                return;
        dns_stop(sup);
        unref(sup->dns); /* a worker still in getaddrinfo frees it when it returns */
        sup->dns = NULL;
}

/* ---- what the handlers ask ---------------------------------------------------------------- */

const struct sockaddr_in *dns_server_addr(const struct dns_server *d, bool tcp)
{
        return tcp ? &d->tcp_addr : &d->udp_addr;
}

void dns_client_add(struct dns_server *d, unsigned long ino)
{
        if (dns_client_has(d, ino))
                return;
        pthread_mutex_lock(&d->client_lock);
        d->clients[d->next_client] = ino;
        d->next_client = (d->next_client + 1) % CLIENTS_MAX;
        if (d->n_clients < CLIENTS_MAX)
                d->n_clients++;
        pthread_mutex_unlock(&d->client_lock);
}

bool dns_client_has(struct dns_server *d, unsigned long ino)
{
        bool found = false;

        pthread_mutex_lock(&d->client_lock);
        for (size_t i = 0; i < d->n_clients && !found; i++)
                found = d->clients[i] == ino;
        pthread_mutex_unlock(&d->client_lock);
        return found;
}

void dns_names(struct supervisor *sup, const struct netpol_addr *a, struct netpol_names *out)
{
        out->n = 0;
        /* Without name rules nothing could match: every connect and send skips the look-up. */
        if (sup->dns && sup->dns->name_rules)
                netpol_handout_names(&sup->dns->handout, a, out);
}

const char dns_resolv_conf[] = "# stockade: DNS is answered by the supervisor (names the "
                               "network policy allows)\n"
                               "nameserver " DNS_NS_ADDR "\n";

/* The supervisor's resolv.conf, as a sealed memfd. */
static int resolv_memfd(void)
{
        return fs_sealed_memfd("resolv.conf", dns_resolv_conf, sizeof(dns_resolv_conf) - 1);
}

int dns_view_open(struct supervisor *sup, const char *path, int flags, int fd,
                  const struct stat *st)
{
        struct dns_server *d = sup->dns;
        bool ours;

        if (!d || (flags & O_ACCMODE) != O_RDONLY || (flags & (O_DIRECTORY | O_TMPFILE)))
                return fd;
        if (fd >= 0)
                ours = d->have_resolv && st->st_dev == d->resolv_dev && st->st_ino == d->resolv_ino;
        else
                ours = fd == -ENOENT && !d->have_resolv && strcmp(path, "/etc/resolv.conf") == 0;
        if (!ours)
                return fd;
        if (fd >= 0)
                close(fd);
        return resolv_memfd();
}

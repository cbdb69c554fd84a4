/* The sandbox's NETLINK_ROUTE sockets: socketpairs the supervisor answers on (nlsock.h). */
#include "supervisor/nlsock.h"
#include "supervisor/net/nlview.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

/* Datagrams read from one supervisor end per wake-up: a program that floods its socket
 * with writes shares the thread with the others. */
#define PENDING_MAX 64
/* The kernel's autobind takes the caller's tgid first, then counts down from -4096. */
#define ROVER_START ((uint32_t)-4096)

struct nlsock_entry {
        dev_t dev; /* the program's end */
        ino_t ino;
        int fd; /* the supervisor's end */
        uint32_t port, groups;
        bool watched; /* in the thread's epoll */
};

void nlsock_init(struct nlsocks *nl)
{
        memset(nl, 0, sizeof(*nl));
        pthread_mutex_init(&nl->lock, NULL);
        nl->epfd = nl->stopfd = -1;
        nl->rover = ROVER_START;
}

static struct nlsock_entry *find(struct nlsocks *nl, const struct nlsock_id *id)
{
        for (size_t i = 0; i < nl->n; i++)
                if (nl->v[i].dev == id->dev && nl->v[i].ino == id->ino)
                        return &nl->v[i];
        return NULL;
}

static struct nlsock_entry *find_fd(struct nlsocks *nl, int fd)
{
        for (size_t i = 0; i < nl->n; i++)
                if (nl->v[i].fd == fd)
                        return &nl->v[i];
        return NULL;
}

/* Forget `e` and close the supervisor's end (a unix socket's close does not block). */
static void drop(struct nlsocks *nl, struct nlsock_entry *e)
{
        if (e->watched)
                epoll_ctl(nl->epfd, EPOLL_CTL_DEL, e->fd, NULL);
        close(e->fd);
        *e = nl->v[--nl->n];
        atomic_store(&nl->live, nl->n);
}

static bool port_taken(const struct nlsocks *nl, uint32_t port)
{
        for (size_t i = 0; i < nl->n; i++)
                if (nl->v[i].port == port)
                        return true;
        return false;
}

/* netlink_autobind: the caller's id if free (the tid: the tgid would cost a read of /proc;
 * both are the program's own to know), else the next of the rover. */
static void autobind(struct nlsocks *nl, struct nlsock_entry *e, pid_t tid)
{
        uint32_t port = (uint32_t)tid;

        while (port == 0 || port_taken(nl, port))
                port = nl->rover--;
        e->port = port;
}

/* Bind the supervisor's end to a name that reads as the kernel's netlink address
 * (nlview_unix_name). Abstract names are the host's: one may be taken, by another view or
 * anyone; past the 256 with nl_groups 0, any nl_groups will do. */
static int bind_name(int fd)
{
        static atomic_ullong counter;

        for (int attempt = 0; attempt < 512; attempt++) {
                struct sockaddr_un sun;
                uint64_t rnd;
                socklen_t len;

                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull ^
                              (uint64_t)time(NULL);
                len = nlview_unix_name(rnd, attempt >= 256, &sun);
                if (bind(fd, (struct sockaddr *)&sun, len) == 0)
                        return 0;
                if (errno != EADDRINUSE)
                        return -errno;
        }
        return -EADDRINUSE;
}

/* Answer the request `req` on e's end: the datagrams go out whole or not at all; past the
 * first that does not fit (a program that does not read), the rest is dropped, as the
 * kernel drops what overflows a netlink socket. */
static void answer(struct nlsock_entry *e, const void *req, size_t len)
{
        struct nlview_buf b = {0};
        size_t off = 0, d;

        nlview_answer(req, len, e->port, &b);
        while ((d = nlview_datagram(&b, off, NLVIEW_DATAGRAM_MAX)) > 0) {
                if (send(e->fd, b.data + off, d, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                        break;
                off += d;
        }
        nlview_buf_free(&b);
}

/* What the program wrote on its end without the supervisor (write, send), in order. */
static void serve_pending(struct nlsocks *nl, struct nlsock_entry *e, pid_t tid)
{
        for (int i = 0; i < PENDING_MAX; i++) {
                ssize_t n = recv(e->fd, nl->buf, NLVIEW_REQ_MAX, MSG_DONTWAIT | MSG_TRUNC);

                /* 0: an empty datagram, or the program's end is gone (then POLLHUP drops it).
                 * Either way nothing to answer; what follows wakes the thread again. */
                if (n <= 0)
                        return;
                if (!e->port)
                        autobind(nl, e, tid); /* netlink_sendmsg binds first */
                /* Past the buffer: what was read is answered, the message cut short is not
                 * (its nlmsg_len is past the end). */
                answer(e, nl->buf, (size_t)n < NLVIEW_REQ_MAX ? (size_t)n : NLVIEW_REQ_MAX);
        }
}

/* Whether the program's end is gone (every copy closed): checked again on the fd itself,
 * not trusted from an epoll event that may be older than the fd's current owner. */
static bool hung_up(int fd)
{
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

        return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

static void on_event(struct nlsocks *nl, int fd, uint32_t events)
{
        struct nlsock_entry *e;

        pthread_mutex_lock(&nl->lock);
        e = find_fd(nl, fd);
        if (e && (events & EPOLLIN))
                serve_pending(nl, e, 0);
        if (e && (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)) && hung_up(fd)) {
                drop(nl, e);
        } else if (e && (events & EPOLLRDHUP)) {
                /* shutdown(SHUT_WR) of the program's end: it writes no more, and the EOF
                 * would stay readable (a level-triggered spin); only its close is left to
                 * wait for, which EPOLLHUP reports whatever the events asked. */
                struct epoll_event ev = {.events = 0, .data.fd = fd};

                epoll_ctl(nl->epfd, EPOLL_CTL_MOD, fd, &ev);
        }
        pthread_mutex_unlock(&nl->lock);
}

static void *serve(void *arg)
{
        struct nlsocks *nl = arg;
        struct epoll_event ev[16];

        for (;;) {
                int n = epoll_wait(nl->epfd, ev, 16, -1);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return NULL;
                for (int i = 0; i < n; i++) {
                        if (ev[i].data.fd == nl->stopfd)
                                return NULL;
                        on_event(nl, ev[i].data.fd, ev[i].events);
                }
        }
}

/* The thread, the first time (under the lock): from a notifier thread, so inside the
 * supervisor's Landlock domain like every thread that reads what the program sends. It
 * takes no signal: the main thread's signalfd has them. */
static int start(struct nlsocks *nl)
{
        struct epoll_event ev = {.events = EPOLLIN};
        sigset_t all, old;
        int r;

        if (nl->started)
                return 0;
        if (!nl->buf)
                nl->buf = xcalloc(1, NLVIEW_REQ_MAX);
        if (nl->epfd < 0)
                nl->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (nl->stopfd < 0)
                nl->stopfd = eventfd(0, EFD_CLOEXEC);
        if (nl->epfd < 0 || nl->stopfd < 0)
                return -errno;
        ev.data.fd = nl->stopfd;
        if (epoll_ctl(nl->epfd, EPOLL_CTL_ADD, nl->stopfd, &ev) < 0 && errno != EEXIST)
                return -errno;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&nl->thread, NULL, serve, nl);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        nl->started = r == 0;
        return r;
}

int nlsock_create(struct nlsocks *nl, bool nonblock, struct nlsock_id *id)
{
        int sv[2], r;
        struct stat st;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        r = bind_name(sv[0]);
        if (r == 0 && nonblock && fcntl(sv[1], F_SETFL, O_NONBLOCK) < 0)
                r = -errno;
        if (r == 0 && fstat(sv[1], &st) < 0)
                r = -errno;
        if (r == -EADDRINUSE)
                r = -ENOBUFS;
        pthread_mutex_lock(&nl->lock);
        if (r == 0 && nl->n >= NLSOCK_MAX)
                r = -ENOBUFS;
        if (r == 0)
                r = start(nl);
        if (r == 0) {
                if (nl->n == nl->cap) {
                        nl->cap = nl->cap ? 2 * nl->cap : 16;
                        nl->v = xrealloc(nl->v, nl->cap * sizeof(*nl->v));
                }
                nl->v[nl->n++] =
                        (struct nlsock_entry){.dev = st.st_dev, .ino = st.st_ino, .fd = sv[0]};
                atomic_store(&nl->live, nl->n);
                *id = (struct nlsock_id){.dev = st.st_dev, .ino = st.st_ino};
        }
        pthread_mutex_unlock(&nl->lock);
        if (r < 0) {
                close(sv[0]);
                close(sv[1]);
                return r;
        }
        return sv[1];
}

int nlsock_installed(struct nlsocks *nl, const struct nlsock_id *id)
{
        struct nlsock_entry *e;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
        int r = -EBADF;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (e) {
                ev.data.fd = e->fd;
                r = epoll_ctl(nl->epfd, EPOLL_CTL_ADD, e->fd, &ev) < 0 ? -errno : 0;
                e->watched = r == 0;
        }
        pthread_mutex_unlock(&nl->lock);
        return r;
}

void nlsock_abandon(struct nlsocks *nl, const struct nlsock_id *id)
{
        struct nlsock_entry *e;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (e)
                drop(nl, e);
        pthread_mutex_unlock(&nl->lock);
}

bool nlsock_any(struct nlsocks *nl)
{
        return atomic_load(&nl->live) > 0;
}

bool nlsock_lookup(struct nlsocks *nl, int fd, struct nlsock_id *id)
{
        struct stat st;
        bool found;

        if (!nlsock_any(nl) || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                return false;
        *id = (struct nlsock_id){.dev = st.st_dev, .ino = st.st_ino};
        pthread_mutex_lock(&nl->lock);
        found = find(nl, id) != NULL;
        pthread_mutex_unlock(&nl->lock);
        return found;
}

int nlsock_bind(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid, uint32_t pid,
                uint32_t groups)
{
        struct nlsock_entry *e;
        int r = 0;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (!e)
                r = -EBADF;
        else if (e->port && pid != e->port)
                r = -EINVAL; /* netlink_bind: bound already, to another port id */
        else if (!e->port && pid && port_taken(nl, pid))
                r = -EADDRINUSE;
        else if (!e->port && pid)
                e->port = pid;
        else if (!e->port)
                autobind(nl, e, tid);
        if (r == 0)
                e->groups = groups; /* subscribed; no event is ever sent */
        pthread_mutex_unlock(&nl->lock);
        return r;
}

int nlsock_connect(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid)
{
        struct nlsock_entry *e;
        int r = -EBADF;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (e && !e->port)
                autobind(nl, e, tid);
        if (e)
                r = 0;
        pthread_mutex_unlock(&nl->lock);
        return r;
}

int nlsock_name(struct nlsocks *nl, const struct nlsock_id *id, struct sockaddr_nl *out)
{
        struct nlsock_entry *e;
        int r = -EBADF;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (e) {
                *out = nlview_sockname(e->port, e->groups);
                r = 0;
        }
        pthread_mutex_unlock(&nl->lock);
        return r;
}

int nlsock_request(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid, const void *req,
                   size_t len)
{
        struct nlsock_entry *e;
        int r = -EBADF;

        pthread_mutex_lock(&nl->lock);
        e = find(nl, id);
        if (e) {
                if (!e->port)
                        autobind(nl, e, tid);
                serve_pending(nl, e, tid); /* what was written before, answered first */
                answer(e, req, len);
                r = 0;
        }
        pthread_mutex_unlock(&nl->lock);
        return r;
}

void nlsock_stop(struct nlsocks *nl)
{
        uint64_t one = 1;

        if (!nl->started)
                return;
        if (write(nl->stopfd, &one, sizeof(one)) == sizeof(one))
                pthread_join(nl->thread, NULL);
        nl->started = false;
}

void nlsock_free(struct nlsocks *nl)
{
        nlsock_stop(nl);
        while (nl->n)
                drop(nl, &nl->v[nl->n - 1]);
        free(nl->v);
        free(nl->buf);
        nl->v = NULL;
        nl->buf = NULL;
        nl->cap = 0;
        cleanup_closep(&nl->epfd);
        cleanup_closep(&nl->stopfd);
        nl->epfd = nl->stopfd = -1;
}

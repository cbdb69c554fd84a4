/*
 * The sandbox's NETLINK_ROUTE sockets (issue 8, item 6): each is one end of a unix
 * socketpair whose other end the supervisor keeps, and answers on with the view of
 * supervisor/net/nlview.h (lo alone).
 *
 * Why a socketpair, and which: SOCK_SEQPACKET keeps message boundaries as netlink does, and
 * its end sees POLLHUP once every copy of the program's end is closed, so the supervisor's
 * end is closed then too (a SOCK_DGRAM pair never tells). The program's end carries all the
 * fast calls in the kernel: recv, recvmsg, poll, close, fork, dup, SCM_RIGHTS. The
 * supervisor's end is bound to an abstract name (nlview_unix_name) that reads as the
 * kernel's netlink address, since recvmsg gives the program that name as every answer's
 * source and glibc and iproute2 check it.
 *
 * A view socket is known by the identity of the program's end (st_dev/st_ino of its sockfs
 * inode, the same in every copy: pidfd_getfd, fork, dup, SCM_RIGHTS), never by fd number or
 * pid. What comes to the supervisor's end:
 *   - sendto/sendmsg/sendmmsg (notified): answered by the handler from its copy of the
 *     request, before the call returns, as the kernel answers in sendmsg;
 *   - write, send, sendto without an address (the kernel's path, iproute2's way): read from
 *     the supervisor's end by a thread of this module, answered when they arrive.
 * Requests that came both ways are answered in order: a handler first answers what is
 * waiting on the supervisor's end.
 *
 * One mutex guards the table and every answer; it is held only around non-blocking calls
 * (MSG_DONTWAIT sends and receives, and the answering itself), never across a call that
 * can wait.
 */
#ifndef STOCKADE_NLSOCK_H
#define STOCKADE_NLSOCK_H

#include <linux/netlink.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Live view sockets at most; socket() fails with ENOBUFS beyond. */
#define NLSOCK_MAX 1024

struct nlsock_entry;

struct nlsocks {
        pthread_mutex_t lock;
        struct nlsock_entry *v;
        size_t n, cap;
        atomic_size_t live; /* n, read without the lock (getsockname's fast path) */
        uint32_t rover;     /* the next port id when the caller's tid is taken */
        int epfd, stopfd;   /* the thread's epoll and its stop eventfd; -1 before it starts */
        uint8_t *buf;       /* a request read from a supervisor's end (NLVIEW_REQ_MAX) */
        pthread_t thread;
        bool started;
};

/* What a handler knows of a view socket: its identity (valid while the lock is not held
 * only as a key to look it up again). */
struct nlsock_id {
        dev_t dev;
        ino_t ino;
};

void nlsock_init(struct nlsocks *nl);

/*
 * A new view socket: returns the program's end (ours to install, then to close) with
 * O_NONBLOCK if `nonblock`, or -errno (ENOBUFS past NLSOCK_MAX or when no name is free,
 * EMFILE...).
 * It is registered already: the program can use it the moment it is installed. Then
 * nlsock_installed, or nlsock_abandon if it could not be installed.
 */
int nlsock_create(struct nlsocks *nl, bool nonblock, struct nlsock_id *id);
/* The program has it: watch the supervisor's end (start the thread the first time). */
int nlsock_installed(struct nlsocks *nl, const struct nlsock_id *id);
/* It was never installed: forget it, close the supervisor's end. */
void nlsock_abandon(struct nlsocks *nl, const struct nlsock_id *id);

/* Whether `fd` (the supervisor's copy of a program's fd) is a view socket; fills *id. Cheap
 * when the program has none (no system call). */
bool nlsock_lookup(struct nlsocks *nl, int fd, struct nlsock_id *id);
/* Whether there may be any view socket: false means none (no lock taken). */
bool nlsock_any(struct nlsocks *nl);

/* bind(2) with port id `pid` (0: one is chosen) and groups: 0, -EINVAL (bound already to
 * another port id), -EADDRINUSE (a port id another view socket has). `tid`: the caller. */
int nlsock_bind(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid, uint32_t pid,
                uint32_t groups);
/* connect(2) to the kernel: binds it if it is not (as netlink_connect does). */
int nlsock_connect(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid);
/* getsockname(2)'s answer. Returns 0 or -EBADF (gone meanwhile). */
int nlsock_name(struct nlsocks *nl, const struct nlsock_id *id, struct sockaddr_nl *out);
/* A request sent (len bytes, the supervisor's copy): answered, binding the socket first if
 * it is not. Returns 0 or -errno. */
int nlsock_request(struct nlsocks *nl, const struct nlsock_id *id, pid_t tid, const void *req,
                   size_t len);

/* Stop the thread (after the notifiers: no handler uses the table any more). */
void nlsock_stop(struct nlsocks *nl);
/* Close every supervisor end and free the table (only when no handler is stuck). */
void nlsock_free(struct nlsocks *nl);

#endif

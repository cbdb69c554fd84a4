/*
 * Who serves a unix stream socket: the sandbox or the host. The listening socket bound to a
 * socket file is found with the kernel's socket diagnostics (NETLINK_SOCK_DIAG, the interface
 * of `ss -x`, open to every user): each listening unix socket with the device and inode of
 * the file it is bound to. It is the sandbox's if its own inode is one the sandbox bound
 * (net_bind.c remembers them). Nothing connects to the server to find out.
 *
 * That look-up can miss: the socket diagnostics list only the caller's network namespace (a
 * server in another one is not there), and the device they give is not the one stat gives on
 * btrfs or on an overlay whose layers lie on other file systems, nor is a listener there
 * between a server's bind and its listen. So a miss is not taken as permission: after the
 * supervisor's own connect, the connection's peer must be a listener that a task of the
 * sandbox made listen (net_unix_peer_ours), or the connection is shut down and refused (an
 * outside review reached tmux on btrfs, a server in another namespace, and a restarting one).
 */
#include "syscalls/net.h"
#include "syscalls/fs_common.h"
#include "supervisor/sockmaker.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define TCP_LISTEN_STATE 10 /* the state a listening unix socket reports */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

void net_unix_remember(struct supervisor *sup, int sock)
{
        struct stat st;

        if (fstat(sock, &st) < 0)
                return;
        pthread_mutex_lock(&sup->unix_lock);
        if (sup->n_unix_own == sup->cap_unix_own) {
                sup->cap_unix_own = sup->cap_unix_own ? 2 * sup->cap_unix_own : 16;
                sup->unix_own = xrealloc(sup->unix_own, sup->cap_unix_own * sizeof(ino_t));
        }
        sup->unix_own[sup->n_unix_own++] = st.st_ino;
        pthread_mutex_unlock(&sup->unix_lock);
}

static bool own_socket(struct supervisor *sup, ino_t ino)
{
        bool found = false;

        pthread_mutex_lock(&sup->unix_lock);
        for (size_t i = 0; i < sup->n_unix_own && !found; i++)
                found = sup->unix_own[i] == ino;
        pthread_mutex_unlock(&sup->unix_lock);
        return found;
}

/* The attribute UNIX_DIAG_VFS of one message, or NULL. */
static const struct unix_diag_vfs *vfs_of(const struct nlmsghdr *h)
{
        const struct unix_diag_msg *m = NLMSG_DATA(h);
        int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
        const struct nlattr *a = (const struct nlattr *)(m + 1);

        while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= (unsigned)len) {
                if (a->nla_type == UNIX_DIAG_VFS &&
                    a->nla_len >= NLA_HDRLEN + sizeof(struct unix_diag_vfs))
                        return (const struct unix_diag_vfs *)((const char *)a + NLA_HDRLEN);
                len -= NLA_ALIGN(a->nla_len);
                a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
        }
        return NULL;
}

/* One unix socket of a dump, bound to a file: false to go on, true to stop the dump. */
typedef bool diag_visit(const struct unix_diag_msg *m, const struct unix_diag_vfs *v, void *arg);

/* Every unix socket in the states `states` that is bound to a file, in the network
 * namespace of the diagnostics socket `fd`, to `visit` until it says stop. 0 or -errno. */
static int diag_dump(int fd, unsigned states, diag_visit *visit, void *arg)
{
        struct {
                struct nlmsghdr h;
                struct unix_diag_req r;
        } req = {.h = {.nlmsg_len = sizeof(req),
                       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
                 .r = {.sdiag_family = AF_UNIX,
                       .udiag_states = states,
                       .udiag_show = UDIAG_SHOW_VFS}};
        static __thread char buf[32768];

        if (send(fd, &req, sizeof(req), 0) < 0)
                return -errno;
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);

                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
                     h = NLMSG_NEXT(h, n)) {
                        const struct unix_diag_vfs *v;

                        if (h->nlmsg_type == NLMSG_DONE)
                                return 0;
                        if (h->nlmsg_type == NLMSG_ERROR)
                                return -EIO;
                        v = vfs_of(h);
                        if (v && visit(NLMSG_DATA(h), v, arg))
                                return 0;
                }
        }
}

/* Whether the bound file a dump gives is the one of `st`: the kernel's dev_t has its major
 * in the high 12 bits of 32. */
static bool vfs_is(const struct unix_diag_vfs *v, const struct stat *st)
{
        return v->udiag_vfs_ino == st->st_ino &&
               makedev(v->udiag_vfs_dev >> 20, v->udiag_vfs_dev & 0xfffff) == st->st_dev;
}

struct owner_look {
        struct supervisor *sup;
        const struct stat *st;
        bool dgram;
        /* exact: the verdict of the socket bound to the very file (device and inode), 0 while
         * none; foreign: another's socket on a file of that inode number elsewhere. */
        int exact;
        bool foreign;
};

static bool owner_visit(const struct unix_diag_msg *m, const struct unix_diag_vfs *v, void *arg)
{
        struct owner_look *o = arg;
        bool own;

        if (v->udiag_vfs_ino != o->st->st_ino || (o->dgram && m->udiag_type != SOCK_DGRAM))
                return false;
        own = own_socket(o->sup, m->udiag_ino);
        if (vfs_is(v, o->st)) {
                o->exact = own ? 1 : -EACCES;
                return true;
        }
        o->foreign |= !own;
        return false;
}

/* Who holds a socket bound to the socket file of `st`, of those the states `states` list:
 * 1 the sandbox (or nobody found), -EACCES another, or -errno. `dgram`: datagram sockets
 * only, and a host's found by its inode number alone refuses too (below). */
static int bound_by_sandbox(struct supervisor *sup, const struct stat *st, unsigned states,
                            bool dgram, bool *found)
{
        struct owner_look o = {.sup = sup, .st = st, .dgram = dgram};
        int fd, err;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0)
                return -errno;
        err = diag_dump(fd, states, owner_visit, &o);
        close(fd);
        if (found)
                *found = o.exact != 0 || o.foreign;
        if (err)
                return err;
        if (o.exact)
                return o.exact;
        /* A datagram socket found by its inode number alone, on a device other than stat's
         * (btrfs and overlays report another): a host's there is refused, lest a host server
         * on btrfs pass for nobody's (the sandbox's own sockets are its own whatever their
         * device). Never a sandbox socket found at the same number on another file system:
         * an outside review made one in /dev/shm to pass a host's for its own. */
        if (dgram && o.foreign)
                return -EACCES;
        /* Nothing bound there: the call itself will say so (ECONNREFUSED). */
        return 1;
}

int net_unix_served_by_sandbox(struct supervisor *sup, int target)
{
        struct stat st;

        if (fstat(target, &st) < 0)
                return -errno;
        return bound_by_sandbox(sup, &st, 1u << TCP_LISTEN_STATE, false, NULL);
}

/* The system's logging sockets, which a sandboxed program may write to as every program
 * does (syslog(3), sd_journal_print): judged by what they are now. */
static bool log_socket(const struct stat *st)
{
        static const char *const logs[] = {"/dev/log", "/run/systemd/journal/dev-log",
                                           "/run/systemd/journal/socket",
                                           "/run/systemd/journal/syslog"};
        struct stat l;

        for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++)
                if (stat(logs[i], &l) == 0 && S_ISSOCK(l.st_mode) && l.st_dev == st->st_dev &&
                    l.st_ino == st->st_ino)
                        return true;
        return false;
}

struct dgram_look {
        const struct stat *st;
        bool hit;
};

static bool dgram_visit(const struct unix_diag_msg *m, const struct unix_diag_vfs *v, void *arg)
{
        struct dgram_look *d = arg;

        d->hit = m->udiag_type == SOCK_DGRAM && vfs_is(v, d->st);
        return d->hit;
}

/* Whether a datagram socket in the sandbox's own network namespace is bound to the socket
 * file of `st` (device and inode): every socket there is the sandbox's. The namespace's
 * socket diagnostics, through a socket the maker makes there. A failed dump finds none. */
static bool inside_bound(struct supervisor *sup, const struct stat *st)
{
        struct dgram_look d = {.st = st};
        int fd, err;

        if (!sup->layers.netns)
                return false;
        fd = sockmaker_socket(&sup->netns, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
                              NETLINK_SOCK_DIAG);
        if (fd < 0)
                return false;
        err = diag_dump(fd, 1u << 7 | 1u << 1, dgram_visit, &d);
        close(fd);
        return err == 0 && d.hit;
}

/*
 * A socket file behind which no datagram socket was found in a namespace we can see: bound in
 * a third network namespace (a systemd unit's PrivateNetwork=, a container's socket directory
 * on the host), which a datagram reaches all the same (an outside review did), or by nobody
 * (a stale file). A datagram socket of ours connected to it tells them apart without a byte
 * sent or the server told: a connect only names the peer. A stale file gives ECONNREFUSED (a
 * stream socket there EPROTOTYPE), as the program's send would natively; one bound somewhere
 * is refused, EACCES.
 */
static int unseen_peer(int target)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

        if (s < 0)
                return -EACCES;
        snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d", target);
        r = connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : -EACCES;
        close(s);
        return r == -ECONNREFUSED || r == -EPROTOTYPE ? r : -EACCES;
}

int net_unix_dgram_ok(struct supervisor *sup, int target)
{
        struct stat st;
        bool found = false;
        int r;

        if (fstat(target, &st) < 0)
                return -errno;
        if (log_socket(&st))
                return 1;
        if (inside_bound(sup, &st))
                return 1; /* in the sandbox's own network namespace: its own */
        /* unbound or bound (7, TCP_CLOSE), or connected (1, TCP_ESTABLISHED) */
        r = bound_by_sandbox(sup, &st, 1u << 7 | 1u << 1, true, &found);
        /* Found nowhere: stream connects have a second look (net_unix_peer_ours); a datagram
         * has this one. */
        return r == 1 && !found ? unseen_peer(target) : r;
}

/* The number a pidfd designates (its fdinfo's "Pid:"), or -1 for a task that is gone. */
static pid_t pidfd_number(int pidfd)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        return (pid_t)fs_proc_field(path, "\nPid:", 10);
}

int net_unix_peer_ours(struct supervisor *sup, int sock)
{
        struct ucred cred;
        socklen_t len = sizeof(int);
        struct stat peer, ours;
        struct tracee *t;
        int pidfd = -1, r = 0;
        pid_t pid;

        /* The process that made the listener listen, pinned: a pidfd of it (6.5), so that a
         * number given again since cannot pass. Its pidfs inode names it (6.9). */
        if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0) {
                pid = pidfd_number(pidfd);
                if (pid <= 0 || fstat(pidfd, &peer) < 0) {
                        close(pidfd);
                        return 0; /* gone: not a live task of ours */
                }
                if (pid == getpid()) {
                        close(pidfd);
                        return 1; /* we made it listen, for the sandbox (net_listen) */
                }
                pthread_mutex_lock(&sup->lock);
                t = tracee_find_live(&sup->tree, pid);
                r = t &&
                    (t->pidfd < 0 || (fstat(t->pidfd, &ours) == 0 && ours.st_dev == peer.st_dev &&
                                      ours.st_ino == peer.st_ino));
                pthread_mutex_unlock(&sup->lock);
                close(pidfd);
                return r;
        }
        /* Older kernels: the number only. */
        len = sizeof(cred);
        if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        if (cred.pid == getpid())
                return 1; /* we made it listen, for the sandbox (net_listen) */
        pthread_mutex_lock(&sup->lock);
        r = cred.pid > 0 && tracee_find_live(&sup->tree, cred.pid) != NULL;
        pthread_mutex_unlock(&sup->lock);
        return r;
}

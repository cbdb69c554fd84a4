/*
 * connect(2), emulated (outside review R2). Landlock ABI <= 7 has no right for connecting to a
 * pathname unix socket, so the read wall that hides ~/.gnupg, ~/.ssh, /run/user/UID, --hide
 * ... (supervisor/grants.c) left gpg-agent, ssh-agent and the session bus (and through it
 * systemd-run --user: a way out) reachable. Passing the call through (CONTINUE) cannot fix
 * that: the address is in the program's memory and another thread can rewrite it between our
 * look and the kernel's (DESIGN.md). So the supervisor connects the program's own socket
 * itself, from the copy it decided on:
 *
 *   take the socket (pidfd_getfd), copy the sockaddr ONCE, take the cwd if the path is
 *   relative, ID_VALID, then by the copy's family:
 *   - AF_UNIX abstract ("\0name"): refused, EPERM. Connecting from the supervisor would lose
 *     the Landlock ABI 6 scoping (the supervisor is outside the sandbox's domain, so it
 *     reaches every abstract socket of the host), and abstract names are shared with the
 *     host. EPERM is what that scoping answers for a socket outside the domain, so programs
 *     already meet it. The price: abstract sockets inside the sandbox cannot be connected to
 *     either (a bind still works; a path socket does the same job).
 *   - AF_UNIX pathname: the path is opened O_PATH as the program (its fsuid/fsgid, no
 *     groups, no capabilities), relative to its cwd, symlinks followed as connect follows
 *     them, magic links refused (the supervisor's /proc/self is not the program's). If the
 *     socket lies in or beneath a hidden place (places_hidden: by inode, up the ancestry),
 *     EACCES, the errno a read of a hidden file gets from Landlock. Otherwise our copy of the
 *     socket is connected to "/proc/self/fd/N" of that O_PATH fd: connect follows the magic
 *     link to the very inode we checked, so a symlink or a directory swapped after the check
 *     changes nothing. The kernel still checks write permission on the socket inode with the
 *     program's rights.
 *   - anything else (AF_INET, AF_INET6, AF_UNSPEC, an AF_UNIX address on another family's
 *     socket, ...): our copy of the socket is connected with the copied address. The network
 *     policy (issue 8) will judge these; today all are allowed, as before.
 *
 * Every connect runs with the program's identity (creds_enter_identity), not only its
 * permissions: the listener of a unix socket reads the connecting thread's euid/egid with
 * SO_PEERCRED, and a root supervisor must not present nobody's connection to the system bus
 * as uid 0. The peer's pid is the supervisor's, which nothing can change.
 *
 * A blocking connect blocks this notifier thread until it completes (a TCP handshake, a full
 * listen backlog): that is fine, the pool starts another thread when every one is busy
 * (supervisor/notify.c), so only the caller waits, as it would natively. Unlike natively, a
 * non-fatal signal does not interrupt it (the caller waits killable only).
 *
 * Errors taking the fd or reading the memory fail the call with their errno; nothing here
 * ever answers CONTINUE. Concurrency: like every handler, no sup->lock, state on the stack;
 * sup->places and sup->cfg are read-only after the spawn.
 *
 * Left (documented in the README): sendto/sendmsg/sendmmsg with an AF_UNIX destination still
 * pass through, so a hidden *datagram* socket can still be written to.
 */
#include "supervisor/creds.h"
#include "supervisor/notify.h"
#include "supervisor/places.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* The call, decoded, and the copy of its address. */
struct connect_call {
        int fd; /* the caller's socket, by its number */
        uint64_t uaddr;
        int len; /* addrlen, as the kernel takes it (an int) */
        struct sockaddr_storage addr;
        int domain;                                                 /* of the socket (SO_DOMAIN) */
        char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* AF_UNIX pathname */
};

/* Connect our copy `sock` of the program's socket, with its identity. Returns 0 or -errno. */
static int connect_as_program(struct supervisor *sup, int sock, const struct sockaddr *sa,
                              socklen_t len)
{
        struct creds_saved saved;
        int r = creds_enter_identity(sup->cfg, &saved);

        if (r < 0)
                return r;
        r = connect(sock, sa, len) < 0 ? -errno : 0;
        creds_leave(&saved);
        return r;
}

/* What the copy is, for AF_UNIX: 1 a pathname (into c->path), 0 abstract, or -EINVAL as the
 * kernel's unix_validate_addr (too long, or no name: an unnamed address). */
static int unix_kind(struct connect_call *c)
{
        const struct sockaddr_un *sun = (const struct sockaddr_un *)&c->addr;
        size_t max;

        if (c->len > (int)sizeof(struct sockaddr_un) ||
            c->len <= (int)offsetof(struct sockaddr_un, sun_path))
                return -EINVAL;
        if (sun->sun_path[0] == '\0')
                return 0;
        /* The kernel ends the name at addrlen (or at the first NUL before it). */
        max = (size_t)c->len - offsetof(struct sockaddr_un, sun_path);
        memcpy(c->path, sun->sun_path, max);
        c->path[max] = '\0';
        return 1;
}

/* Open the socket file `path` names, as the program would reach it. Returns the O_PATH fd
 * or -errno (ENOENT, EACCES, ELOOP for a magic link such as /proc/self/cwd/...). */
static int open_path(struct supervisor *sup, int base, const char *path)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        struct creds_saved saved;
        int fd, r = creds_enter(sup->cfg, &saved);

        if (r < 0)
                return r;
        fd = (int)syscall(SYS_openat2, base, path, &how, sizeof(how));
        r = fd < 0 ? -errno : fd;
        creds_leave(&saved);
        return r;
}

/* A pathname socket: judge the inode the path leads to, then connect to that inode. */
static void connect_path(struct supervisor *sup, struct call *call, struct connect_call *c,
                         int sock, int base)
{
        _cleanup_close_ int target = open_path(sup, base, c->path);
        struct sockaddr_un via = {.sun_family = AF_UNIX};
        int r;

        if (target < 0) {
                call_fail(call, -target);
                return;
        }
        r = places_hidden(&sup->places, target);
        if (r != 0) {
                /* Hidden (or not judgeable: the same answer). */
                trace_call_rule(call, "unix socket in a hidden place");
                call_deny(sup, call, EACCES);
                return;
        }
        snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", target);
        r = connect_as_program(
                sup, sock, (struct sockaddr *)&via,
                (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(via.sun_path) + 1));
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
}

/* Decide on the copy and act on it. `base` is the caller's cwd for a relative path. */
static void decide(struct supervisor *sup, struct call *call, struct connect_call *c, int sock,
                   int base, int kind)
{
        int r;

        if (c->domain == AF_UNIX && c->addr.ss_family == AF_UNIX) {
                if (kind < 0) {
                        call_fail(call, -kind);
                        return;
                }
                if (kind == 0) {
                        trace_call_rule(call, "abstract unix sockets are closed");
                        call_deny(sup, call, EPERM);
                        return;
                }
                connect_path(sup, call, c, sock, base);
                return;
        }
        /* No path is involved: the kernel only sees our copy of the address. */
        r = connect_as_program(sup, sock, (struct sockaddr *)&c->addr, (socklen_t)c->len);
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
}

/* connect(fd, addr, addrlen) */
int net_connect(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        struct connect_call c = {.fd = (int)a[0], .uaddr = a[1], .len = (int)a[2]};
        _cleanup_close_ int sock = -1, base = -1;
        socklen_t dlen = sizeof(c.domain);
        int r, kind = -EINVAL;

        /* In the kernel's order: the fd (EBADF), the address (EINVAL, EFAULT), ENOTSOCK. */
        r = sock = tfd_take(tid, c.fd);
        if (r >= 0 && (c.len < 0 || c.len > (int)sizeof(c.addr)))
                r = -EINVAL;
        if (r >= 0 && c.len > 0)
                r = tmem_read(tid, c.uaddr, &c.addr, (size_t)c.len);
        if (r >= 0 && getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &c.domain, &dlen) < 0)
                r = -errno;
        if (r >= 0 && c.len < (int)sizeof(sa_family_t))
                r = -EINVAL;
        if (r >= 0 && c.domain == AF_UNIX && c.addr.ss_family == AF_UNIX &&
            (kind = unix_kind(&c)) > 0 && c.path[0] != '/')
                r = base = tfd_cwd(tid);
        /* The socket, the copy and the cwd are the caller's only if it still waits for this
         * answer (its tid was not reused meanwhile). */
        if (tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r < 0) {
                call_fail(call, -r);
                return 0;
        }
        /* The address as decided on, for the trace (not re-read after the answer). */
        trace_call_mem(call, 1, &c.addr, (size_t)c.len);
        decide(sup, call, &c, sock, base < 0 ? AT_FDCWD : base, kind);
        return 0;
}

/* The binder (binder.h). */
#include "supervisor/binder.h"
#include "shim/landlock.h"
#include "supervisor/creds.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

struct request {
        uint64_t dev, ino; /* the directory the view found */
        uint32_t umask;
        char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* NUL-terminated */
};

/* The directory part of `path` (which has a '/') as the kernel's walk takes it: up to the
 * last '/' before the last component, trailing slashes aside ("a/b//" -> "a/", "/s" -> "/"). */
static void dir_part(const char *path, char *dir, size_t size)
{
        size_t end = strlen(path);

        while (end > 1 && path[end - 1] == '/')
                end--;
        while (end > 0 && path[end - 1] != '/')
                end--;
        if (end == 0 || end >= size) {
                memcpy(dir, ".", 2);
                return;
        }
        memcpy(dir, path, end);
        dir[end] = '\0';
}

/* One request, in the binder: an errno or 0. */
static int bind_one(const struct request *q, int sock, int cwd)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        size_t n = strnlen(q->path, sizeof(q->path));
        char dir[sizeof(q->path)];
        struct stat st;

        if (n == 0 || n > sizeof(a.sun_path) || !strchr(q->path, '/'))
                return EINVAL;
        if (q->path[0] != '/' && (cwd < 0 || fchdir(cwd) < 0))
                return EXDEV;
        /* The walk the kernel is about to make, once before it: the view's directory, or
         * nothing is bound (the supervisor binds the last component in the view's). A swap
         * after this can only lead where our walls allow. */
        dir_part(q->path, dir, sizeof(dir));
        if (stat(dir, &st) < 0 || (uint64_t)st.st_dev != q->dev || (uint64_t)st.st_ino != q->ino)
                return EXDEV;
        umask((mode_t)q->umask & 0777);
        memcpy(a.sun_path, q->path, n);
        if (bind(sock, (struct sockaddr *)&a,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
                             (n < sizeof(a.sun_path)))) < 0)
                return errno;
        return 0;
}

/* Receive a request and its fds (the socket, and the working directory if sent). */
static ssize_t receive(int chan, struct request *q, int fds[2])
{
        char control[CMSG_SPACE(2 * sizeof(int))];
        struct iovec iov = {.iov_base = q, .iov_len = sizeof(*q)};
        struct msghdr h = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = control,
                           .msg_controllen = sizeof(control)};
        ssize_t n = recvmsg(chan, &h, MSG_CMSG_CLOEXEC);

        for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&h) : NULL; c; c = CMSG_NXTHDR(&h, c)) {
                size_t k;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (i < 2 && fds[i] < 0)
                                fds[i] = fd;
                        else
                                close(fd);
                }
        }
        return n;
}

/* The binder's life: system calls only (forked from a process that may have threads later;
 * nothing here takes a lock of libc's). */
static _Noreturn void serve(int chan)
{
        for (;;) {
                struct request q;
                int fds[2] = {-1, -1}, err;
                ssize_t n = receive(chan, &q, fds);

                if (n == 0 || (n < 0 && errno != EINTR))
                        _exit(0);
                err = n == (ssize_t)sizeof(q) && fds[0] >= 0 ? bind_one(&q, fds[0], fds[1])
                                                             : EINVAL;
                for (int i = 0; i < 2; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                /* Hold nothing of the program's between requests. */
                (void)!chdir("/");
                (void)send(chan, &err, sizeof(err), MSG_NOSIGNAL);
        }
}

static _Noreturn void child(int chan, pid_t parent, const struct binder_walls *w)
{
        int null, rules, c;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
        prctl(PR_SET_NAME, "stockade-bind");
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        rules = w->ruleset; /* the very ruleset the shim enters (spawn.c) */
        if (null < 0 || rules < 0)
                _exit(1);
        if ((w->user_fd >= 0 && setns(w->user_fd, CLONE_NEWUSER) < 0) ||
            (w->mnt_fd >= 0 && setns(w->mnt_fd, CLONE_NEWNS) < 0))
                _exit(1);
        /* The command's ids, no capability. A change of euid clears PDEATHSIG and makes
         * us dumpable again or not, as the kernel likes: set both after it. */
        if (creds_become(w->uid, w->gid) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
            getppid() != parent || prctl(PR_SET_DUMPABLE, 0) < 0)
                _exit(1);
        if (landlock_restrict(rules) < 0 || chdir("/") < 0)
                _exit(1);
        /* Nothing of the supervisor's but our end, as fd 3. */
        c = fcntl(chan, F_DUPFD, 10);
        if (c < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
            dup2(c, 3) < 0 || syscall(SYS_close_range, 4, ~0U, 0) < 0)
                _exit(1);
        serve(3);
}

int binder_start(struct binder *b, const struct binder_walls *w, const char **step)
{
        int sv[2], probe = 0;
        pid_t parent = getpid();

        b->chan = -1;
        pthread_mutex_init(&b->lock, NULL);
        *step = "socketpair for the binder";
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        b->pid = fork();
        if (b->pid == 0) {
                close(sv[0]);
                child(sv[1], parent, w);
        }
        close(sv[1]);
        if (b->pid < 0) {
                close(sv[0]);
                *step = "fork the binder";
                return -errno;
        }
        /* Whether it got through its set-up: it hangs up when it did not. */
        *step = "the binder's set-up";
        b->chan = sv[0];
        if (send(b->chan, &probe, sizeof(probe), MSG_NOSIGNAL) != sizeof(probe) ||
            recv(b->chan, &probe, sizeof(probe), 0) != sizeof(probe) || probe != EINVAL) {
                binder_stop(b);
                return -EIO;
        }
        return 0;
}

int binder_bind(struct binder *b, int sock, int cwd, const char *path, mode_t mask,
                const struct stat *dir)
{
        char control[CMSG_SPACE(2 * sizeof(int))];
        struct request q;
        int fds[2] = {sock, cwd}, nfds = cwd >= 0 ? 2 : 1, err = EIO;
        struct iovec iov = {.iov_base = &q, .iov_len = sizeof(q)};
        struct msghdr h = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = control,
                           .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int))};
        struct cmsghdr *c;
        size_t n = strlen(path);
        ssize_t got;

        if (b->chan < 0)
                return -ENOTSUP;
        if (n >= sizeof(q.path))
                return -EINVAL;
        memset(&q, 0, sizeof(q));
        q.dev = (uint64_t)dir->st_dev;
        q.ino = (uint64_t)dir->st_ino;
        q.umask = (uint32_t)(mask & 0777);
        memcpy(q.path, path, n);
        memset(control, 0, sizeof(control));
        c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
        pthread_mutex_lock(&b->lock);
        if (sendmsg(b->chan, &h, MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
                pthread_mutex_unlock(&b->lock);
                return -EIO;
        }
        do
                got = recv(b->chan, &err, sizeof(err), 0);
        while (got < 0 && errno == EINTR);
        pthread_mutex_unlock(&b->lock);
        if (got != sizeof(err))
                return -EIO;
        return -err;
}

void binder_end(struct binder *b)
{
        /* shutdown, not close: a handler may still hold the number; its request fails. */
        if (b->chan >= 0)
                shutdown(b->chan, SHUT_RDWR);
}

void binder_stop(struct binder *b)
{
        if (b->chan >= 0)
                close(b->chan);
        b->chan = -1;
}

/*
 * The copy-on-write session's janitor (cow.h): a process of its own, outside the supervisor's
 * Landlock domain, which writes the session's metadata at the start and, at the end, brings
 * it up to date or removes an unused session. All by the fds cow_setup opened (the store's
 * `sessions`, the session's directory, the lower trees), never by a path: in a store that
 * another run's program may write, `sessions` may be a symlink to elsewhere by the end (an
 * outside review), and nothing else would stop a process without Landlock from following it.
 */
#include "supervisor/cow.h"
#include "supervisor/cow_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/error.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/session.h"

/* Whether a mount of the session holds a change (cow_mount_changed). */
static bool session_changed(const struct cow_state *c)
{
        for (size_t i = 0; i < c->n; i++)
                if (cow_mount_changed(c, i))
                        return true;
        return false;
}

/* The session's lock, once stockade's helpers have let it go (up to 2 s). */
static bool lock_when_free(const struct cow_state *c)
{
        for (int i = 0; i < 200; i++) {
                int r = session_lock_at(c->dir_fd);

                if (r >= 0)
                        return true;
                if (r != -EWOULDBLOCK)
                        return false;
                nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        }
        return false;
}

/* One byte from stockade, and the fds that came with it (cow_janitor_tell): the overlays in
 * fds[*n], then the session's lock, which is the last, in *lock (-1 without); 0 at EOF. */
static char hear(int fd, int fds[SESSION_MOUNTS_MAX + 1], size_t *n, int *lock)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * (SESSION_MOUNTS_MAX + 1))];
        } u;
        char what = 0;
        struct iovec iov = {.iov_base = &what, .iov_len = 1};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u)};
        ssize_t r;

        *n = 0;
        *lock = -1;
        while ((r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
                ;
        for (struct cmsghdr *h = r == 1 ? CMSG_FIRSTHDR(&msg) : NULL; h; h = CMSG_NXTHDR(&msg, h)) {
                size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < k; i++) {
                        int one;

                        memcpy(&one, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
                        if (*n < SESSION_MOUNTS_MAX + 1)
                                fds[(*n)++] = one;
                        else
                                close(one);
                }
        }
        if (*n) /* the lock: always sent, last */
                *lock = fds[--*n];
        return r == 1 ? what : 0;
}

/* The overlays stockade handed over: the last references to them, whose close takes down each
 * overlay and every inode the run looked at in it (~7 ms after `find` over 5,000 files). */
static void let_go(int fds[SESSION_MOUNTS_MAX], size_t *n)
{
        while (*n)
                close(fds[--*n]);
}

/* The janitor's life: one byte, then the job, outside any Landlock domain. */
static _Noreturn void janitor(struct cow_state *c, int fd, const struct session_meta *first)
{
        int overlays[SESSION_MOUNTS_MAX + 1], lock = -1;
        struct session_meta meta;
        size_t n_overlays = 0;
        char what;
        int r;

        /* stockade may be dead already (SIGKILL while it started): the writes below must
         * not kill us before the session is put right. */
        signal(SIGPIPE, SIG_IGN);
        /* First the session's metadata (cow_setup made it): its fsync is ours, not the run's,
         * and the supervisor reads the outcome before the sandbox starts (cow_janitor_ready). */
        r = session_meta_write_at(c->dir_fd, first);
        (void)!write(fd, &r, sizeof(r));
        /* Told, it holds the session's lock too (a copy of stockade's): stockade may stop
         * waiting for us (SIGTERM, ^C: cow_finish) and exit, and no run may take the session
         * before we are done with it. Let go just before "d", which ends stockade's wait. */
        what = hear(fd, overlays, &n_overlays, &lock);
        /* 'c': whether the run changed anything (cow_finish), then 'r' or 'u' as that says. */
        if (what == 'c') {
                bool changed = session_changed(c);

                (void)!write(fd, changed ? "y" : "n", 1);
                what = !changed && !c->named && !c->existed ? 'r' : 'u';
        }
        /* Nothing said: stockade died (SIGKILL) and its tree with it (ptrace's EXITKILL). An
         * unnamed new session it left without a change goes, as at a clean end — unless a
         * run took it since (`--session NAME`: an outside review noted the window), which
         * then holds its lock. stockade's goes with the last of its helpers (they die with
         * it, PDEATHSIG), so a lock held for 2 s is another run's. Ours is kept to the end. */
        if (what == 0 && !c->named && !c->existed && !session_changed(c) && lock_when_free(c))
                what = 'r';
        if (what == 'r') {
                /* The name first (a rename: the run waits for this only), then the content,
                 * while stockade exits: a name starting with '.' is no session's (vfs/session.h),
                 * so `stockade sessions` lists none meanwhile. Waiting for the removal cost
                 * every run that changed nothing ~1 ms of its teardown. */
                char gone[SESSION_NAME_MAX + 8];

                if (snprintf(gone, sizeof(gone), ".gone-%s", c->name) < (int)sizeof(gone) &&
                    renameat(c->sessions_fd, c->name, c->sessions_fd, gone) == 0) {
                        char x;
                        ssize_t n;

                        if (lock >= 0)
                                close(lock);
                        (void)!write(fd, "d", 1);
                        /* No run can take the session by its name any more: its overlays go
                         * while stockade exits, and then what they held. Once stockade has
                         * closed its own (EOF: cow_finish shuts the socket after), so that
                         * ours are the last. */
                        while ((n = read(fd, &x, 1)) > 0 || (n < 0 && errno == EINTR))
                                ;
                        let_go(overlays, &n_overlays);
                        cow_remove_unused(c, gone);
                        _exit(0);
                }
                let_go(overlays, &n_overlays);
                cow_remove_unused(c, c->name);
        } else {
                /* A session kept is unlocked after "d": its overlays are gone by then, so that
                 * the next run's overlay of the same upper is the only one. */
                let_go(overlays, &n_overlays);
                if (what == 'u' && session_meta_read_at(c->dir_fd, &meta) == 0 && !meta.damaged) {
                        meta.updated = time(NULL);
                        session_meta_write_at(c->dir_fd, &meta);
                        session_meta_free(&meta);
                }
        }
        if (lock >= 0)
                close(lock);
        (void)!write(fd, "d", 1); /* done: the session may be unlocked */
        _exit(0);
}

/*
 * Not our child: the teardown kills and reaps every child of ours (loop.c). A grandchild in a
 * session of its own, made before we become a subreaper, so that ^C to the terminal's
 * process group does not reach it either; it answers on the socket when done.
 */
int cow_start_janitor(struct cow_state *c, const struct session_meta *meta, struct error *err)
{
        int sv[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return make_error(err, errno, "run: session `%s`: socketpair", c->name);
        pid = fork();
        if (pid < 0) {
                close(sv[0]);
                close(sv[1]);
                return make_error(err, errno, "run: session `%s`: fork", c->name);
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR), lower[SESSION_MOUNTS_MAX];
                /* The store's `sessions` and the session's directory, which every step of the
                 * janitor starts from: 4 and 5. */
                int sessions = fcntl(c->sessions_fd, F_DUPFD, 64),
                    dir = fcntl(c->dir_fd, F_DUPFD, 64);

                /* The lower trees by the fds cow_setup opened, never again by path: the
                 * sandbox may have renamed a workspace's parent and put another directory,
                 * or a symlink to one it cannot read, at its path (an outside review). Moved
                 * above what the dup2s below take, then to 6, 7, ... */
                for (size_t i = 0; i < c->n; i++)
                        lower[i] = c->m[i].lower_fd < 0 ? -1 : fcntl(c->m[i].lower_fd, F_DUPFD, 64);
                /* Nothing else of ours but the socket: a pipe's write end (the scratch
                 * cleaner's, a caller's stdout) held here would keep its reader waiting. */
                if (null < 0 || sessions < 0 || dir < 0 || dup2(sv[1], 3) < 0 ||
                    dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
                    (c->sessions_fd = dup2(sessions, 4)) < 0 || (c->dir_fd = dup2(dir, 5)) < 0)
                        _exit(1);
                for (size_t i = 0; i < c->n; i++)
                        c->m[i].lower_fd = lower[i] < 0 ? -1 : dup2(lower[i], 6 + (int)i);
                if (syscall(SYS_close_range, 6 + (unsigned)c->n, ~0U, 0) < 0)
                        _exit(1);
                setsid();
                /* It outlives the run (an unused session is removed after stockade exits):
                 * not in the directory the user ran it from, whose mount it would keep busy
                 * (umount: EBUSY). It uses no path of the store, only /proc's (fd_chmod). */
                if (chdir("/") < 0)
                        _exit(1);
                if (fork() == 0) {
                        prctl(PR_SET_NAME, "stockade-sess"); /* in ps: the session's end */
                        janitor(c, 3, meta);
                }
                _exit(0);
        }
        close(sv[1]);
        /* Not waited for here: it exits on its own while the walls are computed, and is
         * reaped before we become the subreaper (cow_janitor_settle). */
        c->janitor_parent = pid;
        c->janitor_fd = sv[0];
        return 0;
}

int cow_janitor_tell(struct cow_state *c, char what, const int *given, size_t n)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * (SESSION_MOUNTS_MAX + 1))];
        } u = {0};
        int fds[SESSION_MOUNTS_MAX + 1];
        struct iovec iov = {.iov_base = &what, .iov_len = 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t r;

        if (c->lock_fd < 0)
                return -1; /* held from the session's making on: cannot happen */
        if (n > SESSION_MOUNTS_MAX)
                n = SESSION_MOUNTS_MAX;
        memcpy(fds, given, sizeof(int) * n);
        fds[n++] = c->lock_fd; /* last, always (hear) */
        {
                msg.msg_control = u.buf;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                u.h.cmsg_level = SOL_SOCKET;
                u.h.cmsg_type = SCM_RIGHTS;
                u.h.cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(&u.h), fds, sizeof(int) * n);
        }
        if (what == 'c')
                cow_janitor_meta(c); /* its first answer comes first */
        while ((r = sendmsg(c->janitor_fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
                ;
        return r == 1 ? 0 : -1;
}

/*
 * read(2) of the janitor's socket. At the run's end (c->stop_fd, cow_finish) a signal that
 * asks stockade to stop (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ends the wait: -1 with EINTR, and
 * so every later call (c->stopped_by).
 */
static ssize_t janitor_read(struct cow_state *c, void *buf, size_t len)
{
        struct pollfd p[2] = {{.fd = c->janitor_fd, .events = POLLIN},
                              {.fd = c->stop_fd, .events = POLLIN}};
        struct signalfd_siginfo si;
        ssize_t n;

        for (;;) {
                if (c->stopped_by) {
                        errno = EINTR;
                        return -1;
                }
                if (c->stop_fd >= 0 && poll(p, 2, -1) < 0) {
                        if (errno != EINTR)
                                return -1;
                        continue;
                }
                if (c->stop_fd >= 0 && (p[1].revents & POLLIN) &&
                    read(c->stop_fd, &si, sizeof(si)) == sizeof(si)) {
                        c->stopped_by = (int)si.ssi_signo;
                        continue;
                }
                if (c->stop_fd >= 0 && !p[0].revents)
                        continue;
                n = read(c->janitor_fd, buf, len);
                if (n >= 0 || errno != EINTR)
                        return n;
        }
}

int cow_janitor_verdict(struct cow_state *c)
{
        char verdict = 0;

        return janitor_read(c, &verdict, 1) == 1 ? verdict == 'y' : -1;
}

void cow_janitor_done(struct cow_state *c)
{
        char done;

        cow_janitor_meta(c); /* its first answer, if not read yet */
        /* EOF: for a janitor not told anything; for one removing the session, that our
         * overlay fds are closed (overlays_close), so that its own are the last */
        shutdown(c->janitor_fd, SHUT_WR);
        janitor_read(c, &done, 1);
}

/* The janitor's first answer, once: how the metadata's write went (0 or -errno). */
int cow_janitor_meta(struct cow_state *c)
{
        ssize_t n;

        if (c->janitor_fd < 0 || c->meta_r != 1)
                return c->meta_r == 1 ? 0 : c->meta_r;
        n = janitor_read(c, &c->meta_r, sizeof(c->meta_r));
        if (n != sizeof(c->meta_r))
                c->meta_r = c->stopped_by ? -EINTR : -EIO; /* stopped, or the janitor died */
        return c->meta_r;
}

int cow_janitor_ready(struct supervisor *sup, struct error *err)
{
        struct cow_state *c = &sup->cow;
        int r;

        if (c->janitor_parent > 0)
                while (waitpid(c->janitor_parent, NULL, 0) < 0 && errno == EINTR)
                        ;
        c->janitor_parent = 0;
        r = cow_janitor_meta(c);
        return r < 0 ? make_error(err, -r, "run: session `%s`: write its metadata", c->name) : 0;
}

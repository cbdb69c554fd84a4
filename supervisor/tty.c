/*
 * The sandbox's pty and the relay (see tty.h for why). Everything here runs on the main
 * thread and never blocks: the master and our own opens of the user's terminal are
 * O_NONBLOCK, and each direction has a buffer; a full buffer stops reading from its source
 * until the destination has taken it (the sandbox then blocks in write, as on a slow
 * terminal).
 *
 * Job control. We read the user's terminal only while our process group is its foreground
 * group, and change its settings only then (tcsetattr from the background would stop us with
 * SIGTTOU). In the background a read of the sandbox's terminal simply waits until `fg`; what
 * the user types at the shell meanwhile is the shell's. A read or a TOSTOP write that the
 * kernel refuses to a background job stops us with SIGTTIN/SIGTTOU like any job (stockade
 * leaves both signals at their default action).
 */
#include "supervisor/tty.h"
#include "supervisor/signals.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { SRC_IN, SRC_OUT, SRC_MASTER, SRC_FG_TIMER, SRC_MOUT };

/* A description of our own for fd (never the one the user's shell shares with us: setting
 * O_NONBLOCK on that would break the shell). */
static int reopen(int fd, int flags)
{
        char path[64];
        struct stat a, b;
        int nfd;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        nfd = open(path, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (nfd < 0)
                return -errno;
        if (fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 || a.st_dev != b.st_dev ||
            a.st_ino != b.st_ino || a.st_rdev != b.st_rdev) {
                close(nfd);
                return -EIO; /* not the same object: do not guess */
        }
        return nfd;
}

static int open_pty(struct tty_relay *r, struct error *err)
{
        char name[128];

        r->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (r->master < 0)
                return make_error(err, errno, "open a pseudo-terminal for the sandbox (/dev/ptmx)");
        if (grantpt(r->master) < 0 || unlockpt(r->master) < 0 ||
            ptsname_r(r->master, name, sizeof(name)) != 0)
                return make_error(err, errno, "set up the sandbox's pseudo-terminal");
        r->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (r->slave < 0)
                return make_error(err, errno, "open the sandbox's pseudo-terminal `%s`", name);
        return 0;
}

/* --tty never: pipes for the fds that are terminals. */
static int open_pipes(struct tty_relay *r, struct error *err)
{
        int in[2], out[2];

        if (r->slave_fd[0]) {
                if (pipe2(in, O_CLOEXEC) < 0)
                        return make_error(err, errno, "--tty never: pipe for stdin");
                r->slave = in[0];
                r->master = in[1];
                fcntl(r->master, F_SETFL, O_NONBLOCK);
        }
        if (r->slave_fd[1] || r->slave_fd[2]) {
                if (pipe2(out, O_CLOEXEC) < 0)
                        return make_error(err, errno, "--tty never: pipe for the output");
                r->m_out = out[0];
                r->slave_out = out[1];
                fcntl(r->m_out, F_SETFL, O_NONBLOCK);
        }
        r->pipes = true;
        return 0;
}

static bool in_foreground(const struct tty_relay *r)
{
        return r->term >= 0 && tcgetpgrp(r->term) == getpgrp();
}

/* The sandbox's terminal starts with the user's settings and window size. Settings only
 * from the foreground: in the background they are the shell's of the moment (readline's
 * raw mode), and the pty's own defaults (cooked, echo) are better. */
static void copy_settings(struct tty_relay *r)
{
        struct termios t;
        struct winsize ws;

        if (r->term < 0 || r->pipes)
                return;
        if (in_foreground(r) && tcgetattr(r->term, &t) == 0)
                tcsetattr(r->slave, TCSANOW, &t);
        if (ioctl(r->term, TIOCGWINSZ, &ws) == 0)
                ioctl(r->master, TIOCSWINSZ, &ws);
}

int tty_open(struct tty_relay *r, enum tty_mode mode, bool quiet, struct error *err)
{
        int first = -1;

        memset(r, 0, sizeof(*r));
        r->master = r->slave = r->host_in = r->host_out = r->term = r->fg_timer = -1;
        r->m_out = r->slave_out = -1;
        for (int fd = 0; fd <= 2; fd++) {
                r->slave_fd[fd] = isatty(fd) || mode == TTY_ALWAYS;
                if (isatty(fd) && first < 0)
                        first = fd;
        }
        if (first < 0 && mode == TTY_AUTO)
                return 0;
        if (first >= 0) {
                r->term = reopen(first, O_RDWR);
                if (r->term < 0) {
                        if (mode == TTY_ALWAYS)
                                return make_error(err, -r->term,
                                                  "--tty always: reopen the "
                                                  "terminal of fd %d",
                                                  first);
                        /* Falling back to --tty never would hand the command this very
                         * terminal: it could read what the user types (third review). */
                        return make_error(err, -r->term,
                                          "cannot reopen the terminal of fd %d (another "
                                          "user's, or held exclusively): the command would "
                                          "get your terminal itself; run from a terminal of "
                                          "your own, or redirect stdin and stdout",
                                          first);
                }
                r->host_out = fcntl(r->term, F_DUPFD_CLOEXEC, 3);
                if (isatty(0))
                        r->host_in = fcntl(r->term, F_DUPFD_CLOEXEC, 3);
        }
        if (mode == TTY_NEVER) {
                if (open_pipes(r, err) < 0)
                        return -1;
                r->active = true;
                return 0;
        }
        /* --tty always without a terminal: the pty's ends are our stdin and stdout. */
        if (r->host_in < 0 && r->slave_fd[0] && !isatty(0))
                r->host_in = reopen(0, O_RDONLY);
        if (r->host_out < 0)
                r->host_out = reopen(1, O_WRONLY);
        if (r->host_out < 0)
                return make_error(err, -r->host_out, "--tty: reopen stdout");
        if (open_pty(r, err) < 0)
                return -1;
        r->m_out = r->master;
        copy_settings(r);
        r->active = true;
        return 0;
}

static void set_interest(struct supervisor *sup, int which, int fd, unsigned events)
{
        struct tty_relay *r = &sup->tty;
        struct epoll_event ev = {.events = events, .data.ptr = &sup->tty_src[which]};

        if (fd < 0 || r->registered[which] == events)
                return;
        /* Not registered at all when nothing is wanted: a hung-up fd reports EPOLLHUP
         * whatever the interest, and would spin the loop. */
        if (!events)
                epoll_ctl(sup->epfd, EPOLL_CTL_DEL, fd, NULL);
        else if (!r->registered[which])
                epoll_ctl(sup->epfd, EPOLL_CTL_ADD, fd, &ev);
        else
                epoll_ctl(sup->epfd, EPOLL_CTL_MOD, fd, &ev);
        r->registered[which] = events;
}

/* In the background, look every 200 ms whether we are in the foreground again: a shell's
 * `fg` of a job that is running (not stopped) sends no SIGCONT. */
static void watch_foreground(struct supervisor *sup, bool on)
{
        struct tty_relay *r = &sup->tty;
        struct itimerspec its = {0};

        if (r->fg_timer < 0 || r->fg_polling == on)
                return;
        if (on)
                its.it_value.tv_nsec = its.it_interval.tv_nsec = 200 * 1000000L;
        timerfd_settime(r->fg_timer, 0, &its, NULL);
        r->fg_polling = on;
}

/* What each fd should be watched for, from the state of the two buffers. */
static void update(struct supervisor *sup)
{
        struct tty_relay *r = &sup->tty;
        bool read_user = r->host_in >= 0 && !r->in.eof && r->in.len == 0;
        unsigned master = 0;

        /* The user's terminal: read it in the foreground only (see the top of the file). */
        if (read_user && r->term >= 0 && isatty(0))
                read_user = in_foreground(r);
        set_interest(sup, SRC_IN, r->host_in, read_user ? EPOLLIN : 0);
        set_interest(sup, SRC_OUT, r->host_out, r->out.len ? EPOLLOUT : 0);
        if (r->pipes) {
                set_interest(sup, SRC_MASTER, r->master, r->in.len ? EPOLLOUT : 0);
                set_interest(sup, SRC_MOUT, r->m_out, !r->out.len && !r->out.eof ? EPOLLIN : 0);
        } else {
                if (!r->out.len && !r->out.eof)
                        master |= EPOLLIN;
                if (r->in.len)
                        master |= EPOLLOUT;
                set_interest(sup, SRC_MASTER, r->master, master);
        }
        watch_foreground(sup, r->term >= 0 && isatty(0) && !r->in.eof && !read_user);
}

/* Move bytes from `from` into p, if it is empty; p->eof at the end of the source. */
static void fill(struct tty_pipe *p, int from)
{
        ssize_t n;

        if (p->len || p->eof)
                return;
        n = read(from, p->buf, sizeof(p->buf));
        if (n > 0) {
                p->off = 0;
                p->len = (size_t)n;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                p->eof = true; /* EOF, or EIO: the terminal hung up */
        }
}

static void drain(struct tty_pipe *p, int to)
{
        ssize_t n;

        if (!p->len)
                return;
        n = write(to, p->buf + p->off, p->len);
        if (n > 0) {
                p->off += (size_t)n;
                p->len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                p->len = 0; /* the destination is gone: drop what it cannot take */
        }
}

/* The input ended (--tty always with a pipe on stdin): an end-of-file for the reader. */
static void send_eof(struct tty_relay *r)
{
        struct termios t;
        char c = 4;

        if (r->term >= 0 || tcgetattr(r->slave, &t) < 0 || !(t.c_lflag & ICANON))
                return;
        c = (char)t.c_cc[VEOF];
        (void)!write(r->master, &c, 1);
}

static int on_tty(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct tty_relay *r = &sup->tty;
        int which = (int)(src - sup->tty_src);

        switch (which) {
        case SRC_IN:
                fill(&r->in, r->host_in);
                if (r->in.eof && r->host_in >= 0 && !isatty(0))
                        send_eof(r);
                break;
        case SRC_OUT:
                drain(&r->out, r->host_out);
                break;
        case SRC_FG_TIMER: {
                uint64_t n;

                if (read(r->fg_timer, &n, sizeof(n)) != sizeof(n))
                        return 0;
                /* The terminal hung up (its emulator closed it) and no SIGHUP reached us: the
                 * shell that would have passed one on is gone, or had disowned us. The
                 * kernel's own hangup would have told the job: do as it does — SIGHUP to
                 * the sandbox, no more input — rather than wait in the background forever. */
                if (r->term >= 0 && tcgetpgrp(r->term) < 0 && (errno == EIO || errno == ENXIO)) {
                        r->in.eof = true;
                        update(sup);
                        signals_on_signal(sup, SIGHUP);
                        return 0;
                }
                tty_resume(sup);
                return 0;
        }
        case SRC_MASTER:
                if (events & EPOLLOUT)
                        drain(&r->in, r->master);
                if (!r->pipes && (events & (EPOLLIN | EPOLLHUP)))
                        fill(&r->out, r->master);
                break;
        case SRC_MOUT:
                if (events & (EPOLLIN | EPOLLHUP))
                        fill(&r->out, r->m_out);
                break;
        default:
                break;
        }
        /* Write at once what was read: most of the time the destination takes it all. */
        drain(&r->in, r->master);
        drain(&r->out, r->host_out);
        /* Pipes: the user's EOF (^D) is the end of the sandbox's stdin, once it has it all. */
        if (r->pipes && r->in.eof && !r->in.len && r->master >= 0) {
                set_interest(sup, SRC_MASTER, r->master, 0);
                cleanup_closep(&r->master);
        }
        update(sup);
        return 0;
}

void tty_sync_winsize(struct tty_relay *r)
{
        struct winsize ws;

        if (r->active && r->term >= 0 && ioctl(r->term, TIOCGWINSZ, &ws) == 0)
                ioctl(r->master, TIOCSWINSZ, &ws);
}

void tty_restore(struct tty_relay *r)
{
        if (!r->raw)
                return;
        /* TCSADRAIN: what we wrote is shown before the settings change back. */
        tcsetattr(r->term, TCSADRAIN, &r->saved);
        r->raw = false;
}

void tty_resume(struct supervisor *sup)
{
        struct tty_relay *r = &sup->tty;
        struct termios raw;

        if (!r->active)
                return;
        if (r->pipes) {
                update(sup); /* no pty: nothing to size, and the terminal stays cooked */
                return;
        }
        tty_sync_winsize(r);
        /* Raw only when we read the user's keys (stdin is the terminal) and only in the
         * foreground; the sandbox's own line discipline does the rest. */
        if (r->term >= 0 && !r->raw && isatty(0) && in_foreground(r) &&
            tcgetattr(r->term, &r->saved) == 0) {
                raw = r->saved;
                cfmakeraw(&raw);
                if (tcsetattr(r->term, TCSADRAIN, &raw) == 0)
                        r->raw = true;
        }
        update(sup);
}

int tty_start(struct supervisor *sup)
{
        struct epoll_event ev = {.events = EPOLLIN};

        for (int i = 0; i < 5; i++)
                sup->tty_src[i] = (struct event_source){
                        .fd = -1, .name = "terminal relay", .on_ready = on_tty};
        if (!sup->tty.active)
                return 0;
        sup->tty_src[SRC_IN].fd = sup->tty.host_in;
        sup->tty_src[SRC_OUT].fd = sup->tty.host_out;
        sup->tty_src[SRC_MASTER].fd = sup->tty.master;
        sup->tty_src[SRC_MOUT].fd = sup->tty.pipes ? sup->tty.m_out : -1;
        sup->tty.fg_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        sup->tty_src[SRC_FG_TIMER].fd = sup->tty.fg_timer;
        ev.data.ptr = &sup->tty_src[SRC_FG_TIMER];
        if (sup->tty.fg_timer < 0 ||
            epoll_ctl(sup->epfd, EPOLL_CTL_ADD, sup->tty.fg_timer, &ev) < 0)
                return -errno;
        tty_resume(sup);
        return 0;
}

pid_t tty_foreground(const struct tty_relay *r)
{
        return r->active && !r->pipes ? tcgetpgrp(r->master) : -1;
}

/* Blocking, bounded: the tree is gone and what the pty holds is all that is left. */
static void flush_output(struct tty_relay *r)
{
        struct timespec start, now;

        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                struct pollfd p = {.fd = r->host_out, .events = POLLOUT};

                drain(&r->out, r->host_out);
                if (!r->out.len && r->m_out >= 0)
                        fill(&r->out, r->m_out);
                if (!r->out.len)
                        return; /* EAGAIN: the pty is empty */
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - start.tv_sec >= 2 || poll(&p, 1, 500) <= 0)
                        return; /* a terminal that takes nothing must not keep us */
        }
}

void tty_close(struct supervisor *sup)
{
        struct tty_relay *r = &sup->tty;

        if (r->active)
                flush_output(r);
        tty_restore(r);
        for (int i = 0; i < 3; i++)
                set_interest(sup, i, sup->tty_src[i].fd, 0);
        if (r->pipes) {
                set_interest(sup, SRC_MOUT, r->m_out, 0);
                cleanup_closep(&r->m_out);
                cleanup_closep(&r->slave_out);
        }
        r->m_out = -1;
        cleanup_closep(&r->master);
        cleanup_closep(&r->slave);
        cleanup_closep(&r->host_in);
        cleanup_closep(&r->host_out);
        cleanup_closep(&r->term);
        cleanup_closep(&r->fg_timer);
        r->master = r->slave = r->host_in = r->host_out = r->term = r->fg_timer = -1;
        r->active = false;
}

/*
 * Signals to stockade, passed on (signals.h). Security: every signal goes through a pidfd of
 * a task in the tree, or to a process group whose leader is in the tree, under sup->lock
 * (ptrace.c: a number in the tree designates the task we admitted until we reap it, and a
 * group id is its leader's number, which cannot be given to anyone else while the leader is
 * unreaped: so a group whose leader is in the tree is the sandbox's).
 */
#include "supervisor/scratch.h"
#include "supervisor/signals.h"
#include "supervisor/sup.h"
#include "supervisor/tty.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#ifndef PIDFD_SIGNAL_THREAD_GROUP
#define PIDFD_SIGNAL_THREAD_GROUP (1UL << 1)
#endif
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif

/* Passed on to the sandbox; SIGTSTP and SIGCONT are handled, SIGCHLD reaps. SIGTTIN and
 * SIGTTOU keep their default action: the kernel stops a background stockade with them. */
static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

void signals_mask(sigset_t *mask)
{
        sigemptyset(mask);
        sigaddset(mask, SIGCHLD);
        sigaddset(mask, SIGTSTP);
        sigaddset(mask, SIGCONT);
        for (size_t i = 0; i < ARRAY_SIZE(passed_on); i++)
                sigaddset(mask, passed_on[i]);
}

/* Is t a thread-group leader? Under the lock t->tid designates t (ptrace.c). */
static bool is_process(const struct tracee *t)
{
        int fd = (int)syscall(SYS_pidfd_open, t->tid, 0);

        if (fd < 0)
                return errno != EINVAL; /* EINVAL: a thread; anything else: assume a process */
        close(fd);
        return true;
}

static void signal_process(struct tracee *t, int sig)
{
        if (!is_process(t))
                return;
        /* t->pidfd may be a thread pidfd (PIDFD_THREAD): ask for the whole process. Before
         * 6.9 there is no such flag, and pidfds designate processes anyway. */
        if (t->pidfd >= 0 &&
            syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, PIDFD_SIGNAL_THREAD_GROUP) < 0 &&
            errno == EINVAL)
                syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
        else if (t->pidfd < 0)
                kill(t->tid, sig);
}

struct group_signal {
        pid_t pgid; /* 0: every process */
        int sig;
};

static void signal_one(struct tracee *t, void *arg)
{
        const struct group_signal *g = arg;

        if (!g->pgid || getpgid(t->tid) == g->pgid)
                signal_process(t, g->sig);
}

void signals_to_tree(struct supervisor *sup, int sig)
{
        struct group_signal g = {.sig = sig};

        pthread_mutex_lock(&sup->lock);
        tracee_foreach(&sup->tree, signal_one, &g);
        pthread_mutex_unlock(&sup->lock);
}

/* To the sandbox's foreground process group on its pty; without one, to the whole tree. */
static void to_foreground(struct supervisor *sup, int sig)
{
        pid_t pgid = tty_foreground(&sup->tty);
        struct group_signal g = {.pgid = pgid > 0 ? pgid : 0, .sig = sig};
        struct tracee *leader;

        pthread_mutex_lock(&sup->lock);
        leader = g.pgid ? tracee_find_live(&sup->tree, g.pgid) : NULL;
        if (leader && leader->pidfd >= 0 &&
            syscall(SYS_pidfd_send_signal, leader->pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP) ==
                    0)
                ; /* one atomic send, children being forked included */
        else if (leader)
                kill(-g.pgid, sig); /* the leader is in the tree: the group is the sandbox's */
        else
                tracee_foreach(&sup->tree, signal_one, &g); /* its members, one by one */
        pthread_mutex_unlock(&sup->lock);
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void arm_kill_after(struct supervisor *sup)
{
        uint64_t ms = sup->cfg->kill_after_ms;
        struct itimerspec its = {.it_value = {.tv_sec = (time_t)(ms / 1000),
                                              .tv_nsec = (long)(ms % 1000) * 1000000}};

        if (sup->kill_timer.fd >= 0 && ms && !sup->kill_armed) {
                timerfd_settime(sup->kill_timer.fd, 0, &its, NULL);
                sup->kill_armed = true;
        }
}

static int on_kill_timer(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        uint64_t expirations;

        if (read(src->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
                return 0;
        if (!sup->root_exited) {
                if (!sup->cfg->quiet)
                        fprintf(stderr, "stockade: the sandbox did not end within --kill-after "
                                        "of SIGTERM: killing it\n");
                sup_kill_tree(sup);
        }
        return 0;
}

int signals_open(struct supervisor *sup)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &sup->kill_timer};

        sup->kill_timer = (struct event_source){.name = "kill-after", .on_ready = on_kill_timer};
        sup->kill_timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (sup->kill_timer.fd < 0 ||
            epoll_ctl(sup->epfd, EPOLL_CTL_ADD, sup->kill_timer.fd, &ev) < 0)
                return -errno;
        return 0;
}

static void signal_tree(pid_t supervisor, const pid_t spare[WATCH_SPARE],
                        const struct inherited *inherited, int sig);

/* Bring the tree and the user's terminal back: SIGCONT to stockade, or the stop undone. */
static void resume(struct supervisor *sup)
{
        const pid_t none[WATCH_SPARE] = {0};

        tty_resume(sup);
        /* Also when the stop came from the sandbox's own terminal (^Z): continuing the job
         * continues all of it. */
        signals_to_tree(sup, SIGCONT);
        /* ...and every descendant the tree does not hold yet: a child forked while we were
         * stopped is not admitted before its first stop is reaped, but the watcher's walk
         * stopped it, and nothing else would continue it (a vfork child so stopped held its
         * parent, and the run hung until --timeout: test_signals helpers_run_after_a_stop). */
        if (sup->root_pidfd >= 0)
                signal_tree(getpid(), none, &sup->inherited, SIGCONT);
        sup->tree_stopped = false;
}

/* Stop stockade itself as a job stops, with the user's terminal as we found it. Returns when
 * we are continued (or at once, if the kernel discards the stop: an orphaned process group
 * ignores SIGTSTP, SIGTTIN and SIGTTOU). */
/* Whether --timeout is over (its one-shot timerfd has nothing left to run). */
static bool timeout_over(const struct supervisor *sup)
{
        struct itimerspec left;

        return sup->timer.fd >= 0 && timerfd_gettime(sup->timer.fd, &left) == 0 &&
               !left.it_value.tv_sec && !left.it_value.tv_nsec;
}

static void stop_self(struct supervisor *sup, int sig)
{
        sigset_t set;

        /* Not once --timeout is over: the tree is killed instead, stopped as it is (a stop of
         * ours would put the timer's event off again). */
        if (timeout_over(sup)) {
                sup_time_out(sup);
                return;
        }

        tty_restore(&sup->tty);
        sigemptyset(&set);
        sigaddset(&set, sig);
        kill(getpid(), sig);
        /* SIGTSTP is blocked for the signalfd: let this one through to its default action. */
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        if (sig == SIGTSTP)
                pthread_sigmask(SIG_BLOCK, &set, NULL);
        /* Continued by the watcher when --timeout was over: the tree dies stopped, before
         * resume's SIGCONT could let the program run on and exit before the timer's event. */
        if (timeout_over(sup))
                sup_time_out(sup);
        resume(sup);
}

/* Bit `sig` of a "SigIgn:"/"SigCgt:" line of /proc/PID/status. */
static bool status_bit(const char *status, const char *key, int sig)
{
        const char *p = strstr(status, key);
        unsigned long long mask;

        return p && sscanf(p + strlen(key), "%llx", &mask) == 1 && (mask >> (sig - 1)) & 1;
}

int signals_stop_signal(pid_t pid, int sig)
{
        char path[64], status[4096];

        if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
                return sig;
        /* Only the session leader's group: the one the sandbox's own job control does not
         * make (a shell inside puts each job in a group of its own, not orphaned). */
        if (getpgid(pid) != getsid(pid))
                return sig;
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        if (read_text(path, status, sizeof(status)) < 0)
                return sig;
        if (status_bit(status, "SigIgn:", sig) || status_bit(status, "SigCgt:", sig))
                return sig; /* the program's own business */
        return SIGSTOP;
}

void signals_root_stopped(struct supervisor *sup, int sig)
{
        if (!sup->tree_stopped)
                sup->suspend_sig = sig;
}

void signals_after_event(struct supervisor *sup)
{
        int sig = sup->suspend_sig;

        sup->suspend_sig = 0;
        if (sig && !sup->root_exited)
                stop_self(sup, sig);
}

void signals_on_signal(struct supervisor *sup, int sig)
{
        double now = now_s();

        if (sup->root_exited)
                return;
        if (sup->cfg->verbose > 1)
                fprintf(stderr, "stockade: %s: passed on to the sandbox\n", strsignal(sig));
        switch (sig) {
        case SIGTSTP:
                /* SIGSTOP, not SIGTSTP: a program that catches or ignores SIGTSTP must not
                 * keep running while the user believes the job stopped. */
                sup->tree_stopped = true;
                signals_to_tree(sup, SIGSTOP);
                stop_self(sup, SIGTSTP);
                return;
        case SIGCONT:
                resume(sup);
                return;
        case SIGWINCH:
                if (sup->tty.active) {
                        tty_sync_winsize(&sup->tty); /* the pty sends SIGWINCH itself */
                        return;
                }
                break;
        case SIGINT:
                if (sup->last_sigint && now - sup->last_sigint < 2.0) {
                        if (!sup->cfg->quiet)
                                fprintf(stderr, "stockade: second interrupt: killing the "
                                                "sandbox\n");
                        sup_kill_tree(sup);
                        return;
                }
                sup->last_sigint = now;
                break;
        case SIGTERM:
                arm_kill_after(sup);
                break;
        default:
                break;
        }
        to_foreground(sup, sig);
}

/*
 * SIGSTOP cannot be caught: when it stops stockade, nothing of ours runs to stop the tree.
 * A small watcher process does (the scratch cleaner, scratch.c, wherever there is one; else
 * one of its own): it looks every 100 ms whether stockade is stopped and, on
 * the transition, sends SIGSTOP to every process that descends from stockade (the sandbox's
 * tree: stockade is its subreaper, so an orphan's parent is stockade; a process that made a
 * session or a group of its own is reached too). SIGCONT is stockade's
 * own business again (signals_on_signal), but for a stop the watcher finds stale once it is
 * sent (signals_watch_tick). The watcher makes raw system calls only: no
 * allocation, no stdio (it was forked from a process with threads once, and may be again).
 */

/* /proc/PID/`file` read into buf (NUL-terminated); its length, or -1. */
static ssize_t proc_read(pid_t pid, const char *file, char *buf, size_t size)
{
        char path[48] = "/proc/", digits[16];
        int i = 6, nd = 0, fd;
        ssize_t n;

        for (pid_t v = pid; v; v /= 10)
                digits[nd++] = (char)('0' + v % 10);
        while (nd)
                path[i++] = digits[--nd];
        path[i++] = '/';
        for (const char *f = file; *f && i < (int)sizeof(path) - 1; f++)
                path[i++] = *f;
        path[i] = '\0';
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -1;
        buf[n] = '\0';
        return n;
}

/* The state letter of /proc/PID/stat, and (unless NULL) the parent and the start (clock
 * ticks after boot); 0 when unreadable. */
static char proc_state(pid_t pid, pid_t *parent, unsigned long long *start)
{
        char buf[512], *p;
        int field = 0;

        if (proc_read(pid, "stat", buf, sizeof(buf)) <= 0)
                return 0;
        p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return 0;
        /* ") S ppid pgrp ... num_threads itrealvalue starttime": the state is field 3 */
        for (char *q = p + 2; *q && parent; q++) {
                if (*q != ' ')
                        continue;
                if (++field == 1)
                        *parent = (pid_t)strtol(q + 1, NULL, 10);
                else if (field == 19) {
                        *start = strtoull(q + 1, NULL, 10);
                        break;
                }
        }
        return p[2];
}

/*
 * What one stop (stop_tree) learnt of each process: whether it descends from the supervisor.
 * Without it each process's whole chain of parents was read, and was cut at 64 generations: an
 * outside review's chain of 70 processes kept its deepest running while stockade was stopped.
 * Static (the watcher allocates nothing): a pass clears it.
 */
enum { MEMO_SLOTS = 16384, CHAIN_MAX = 4096 };

static struct {
        pid_t pid;
        signed char descends; /* 0 no, 1 yes */
} memo[MEMO_SLOTS];

static int memo_get(pid_t pid)
{
        for (unsigned i = (unsigned)pid % MEMO_SLOTS, k = 0; k < 64;
             i = (i + 1) % MEMO_SLOTS, k++) {
                if (memo[i].pid == pid)
                        return memo[i].descends;
                if (!memo[i].pid)
                        break;
        }
        return -1;
}

static void memo_put(pid_t pid, bool descends)
{
        for (unsigned i = (unsigned)pid % MEMO_SLOTS, k = 0; k < 64; i = (i + 1) % MEMO_SLOTS, k++)
                if (!memo[i].pid || memo[i].pid == pid) {
                        memo[i].pid = pid;
                        memo[i].descends = descends;
                        return;
                }
}

/* Whether `pid`'s parents lead to `ancestor` through a child of it that is not `inherited`.
 * Its own parent is read now, after the caller opened its pidfd; above it, what this pass
 * learnt already stands. */
static bool descends_from(pid_t pid, pid_t ancestor, const struct inherited *inherited)
{
        pid_t chain[CHAIN_MAX];
        int n = 0, known = -1;

        while (n < CHAIN_MAX && pid > 1) {
                pid_t parent = 0;
                unsigned long long start = 0;
                int m = n ? memo_get(pid) : -1;

                if (m >= 0) {
                        known = m;
                        break;
                }
                if (!proc_state(pid, &parent, &start)) {
                        known = 0;
                        break;
                }
                chain[n++] = pid;
                if (parent == ancestor) {
                        known = !inherited_is(inherited, pid, start);
                        break;
                }
                pid = parent;
        }
        for (int i = 0; i < n; i++)
                memo_put(chain[i], known == 1);
        return known == 1;
}

static bool spared(pid_t pid, const pid_t spare[WATCH_SPARE])
{
        for (int i = 0; i < WATCH_SPARE; i++)
                if (spare[i] > 0 && pid == spare[i])
                        return true;
        return false;
}

/* `sig` to each descendant of `supervisor` but us and `spare` (stockade's own helpers, the
 * pid namespace's init), each through a pidfd opened before its parents are read: a number
 * reused by a host process meanwhile names a process that does not descend from stockade, and
 * a pidfd of a process gone since reaches nobody. SIGSTOP twice: a child forked during the
 * first pass, whose parent was stopped after, is found by the second. */
static void signal_tree(pid_t supervisor, const pid_t spare[WATCH_SPARE],
                        const struct inherited *inherited, int sig)
{
        char buf[4096];
        pid_t self = (pid_t)syscall(SYS_getpid);

        for (int pass = 0; pass < (sig == SIGSTOP ? 2 : 1); pass++) {
                int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                long n;

                if (dir < 0)
                        return;
                memset(memo, 0, sizeof(memo));
                while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
                        for (long off = 0; off < n;) {
                                struct {
                                        unsigned long long ino;
                                        long long off;
                                        unsigned short reclen;
                                        unsigned char type;
                                        char name[];
                                } *d = (void *)(buf + off);
                                pid_t pid = (pid_t)strtol(d->name, NULL, 10);
                                int fd;

                                off += d->reclen;
                                if (pid <= 0 || pid == self || spared(pid, spare))
                                        continue;
                                fd = (int)syscall(SYS_pidfd_open, pid, 0);
                                if (fd < 0)
                                        continue;
                                if (descends_from(pid, supervisor, inherited))
                                        syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
                                close(fd);
                        }
                }
                close(dir);
        }
}

/* How often stockade's main thread (the one that continues the tree: resume) was switched
 * out, from /proc/PID/status: it grows whenever that thread ran. 0 when unreadable. */
static unsigned long long switches(pid_t pid)
{
        static const char *const keys[] = {"\nvoluntary_ctxt_switches:",
                                           "\nnonvoluntary_ctxt_switches:"};
        char buf[4096];
        unsigned long long sum = 0;

        if (proc_read(pid, "status", buf, sizeof(buf)) <= 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                const char *p = strstr(buf, keys[i]);

                if (p)
                        sum += strtoull(p + strlen(keys[i]), NULL, 10);
        }
        return sum;
}

/* switches() of stockade when this watcher last found the tree stopped with it. */
static unsigned long long stopped_at;

/*
 * A walk takes time (two of /proc: 100 ms and more with a few thousand processes on a loaded
 * host), and stockade may be continued during it: its SIGCONT to the tree (resume) then came
 * before some of our SIGSTOPs, and nothing continued those processes again: the tree stayed
 * stopped under a running stockade, and the run hung until --timeout (test_signals
 * continued_while_the_watcher_stops; helpers_run_after_a_stop timed out so once in CI).
 * So stockade is looked at again once the walk has sent its last SIGSTOP: still stopped
 * without having run since, its SIGCONT is yet to come and undoes ours; continued, the tree is
 * continued here as stockade did (resume continues every process; a stop of the sandbox's own
 * in the meantime is continued too, as a SIGCONT to stockade would have); stopped again after
 * having run, the walk is made again. Between two looks, stockade continued and stopped again
 * shows only as its main thread having run: the tree it may have continued is stopped anew.
 * Every SIGSTOP of ours is followed by a look that finds stockade stopped, or by a SIGCONT.
 */
/* CLOCK_MONOTONIC in ms. */
static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void signals_watch_tick(pid_t supervisor, const struct watch_orders *o, bool *stopped)
{
        const pid_t *spare = o->spare;

        /* --timeout is over: stockade, continued, continues the tree and kills it (stop_self
         * stops no more). */
        if (o->deadline_ms && now_ms() >= o->deadline_ms &&
            proc_state(supervisor, NULL, NULL) == 'T') {
                kill(supervisor, SIGCONT);
                *stopped = false;
                return;
        }
        for (int round = 0; round < 3; round++) {
                unsigned long long ran;

                if (proc_state(supervisor, NULL, NULL) != 'T') {
                        *stopped = false;
                        return;
                }
                /* After the state: a run between the two came before the walk, which stops
                 * what it continued. */
                ran = switches(supervisor);
                if (*stopped && ran == stopped_at)
                        return; /* stopped since our walk, and it has not run */
                signal_tree(supervisor, spare, &o->inherited, SIGSTOP);
                *stopped = false;
                if (proc_state(supervisor, NULL, NULL) != 'T') {
                        signal_tree(supervisor, spare, &o->inherited, SIGCONT);
                        return;
                }
                if (switches(supervisor) == ran) {
                        *stopped = true;
                        stopped_at = ran;
                        return;
                }
        }
        /* Stopped and continued over and over: the next look walks again (*stopped false). */
}

static _Noreturn void watch_stops(pid_t supervisor, const struct watch_orders *o)
{
        struct timespec tick = {.tv_nsec = 100 * 1000000L};
        bool stopped = false;

        /* A group of our own: job-control signals to stockade's job do not stop us. */
        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
                _exit(0);
        syscall(SYS_close_range, 3, ~0U, 0);
        for (;;) {
                if (!proc_state(supervisor, NULL, NULL))
                        _exit(0);
                signals_watch_tick(supervisor, o, &stopped);
                nanosleep(&tick, NULL);
        }
}

void signals_start_watcher(struct supervisor *sup)
{
        /* Spared: stockade's helpers, which the resumption (signals_to_tree) would not
         * continue (an outside review's ^Z and fg left the socket maker and the binder
         * stopped, and the next bind or connect hung), the scratch cleaner, and the pid
         * namespace's init, which nothing would continue either (spawn.c) while orphans
         * waited for it. */
        struct watch_orders o = {
                .spare = {sup->pid_ns.init, sup->cleaner, sup->netns.pid, sup->binder.pid},
                .inherited = sup->inherited};
        struct itimerspec left;
        pid_t self = getpid(), pid;

        if (sup->root_pidfd < 0)
                return;
        /* Armed already (loop.c, open_sources): where it ends. */
        if (sup->timer.fd >= 0 && timerfd_gettime(sup->timer.fd, &left) == 0)
                o.deadline_ms = now_ms() + (int64_t)left.it_value.tv_sec * 1000 +
                                left.it_value.tv_nsec / 1000000 + 1;
        /* The scratch cleaner watches, where there is one (scratch.h): a fork less. */
        if (scratch_watch(sup, &o) == 0)
                return;
        pid = fork();
        if (pid == 0)
                watch_stops(self, &o);
        sup->watcher = pid > 0 ? pid : -1;
}

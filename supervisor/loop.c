/*
 * The event loop: one epoll over a signalfd (ptrace stops, exits, forwarded signals) and a
 * timerfd (--timeout). Each fd is an event source whose on_ready callback sits in
 * epoll_event.data.ptr. The seccomp listener is served by the notifier thread (notify.c).
 */
#include "supervisor/loop.h"
#include "supervisor/notify.h"
#include "supervisor/procscan.h"
#include "supervisor/ptrace.h"
#include "supervisor/spawn.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void kill_one(struct tracee *t, void *arg)
{
        kill(t->tid, SIGKILL);
}

/* Without ptrace the tree is the sandbox's session (the shim's setsid), plus the orphans
 * that come back to us as the subreaper. */
static void kill_untracked(const struct proc_stat *st, void *arg)
{
        const struct supervisor *sup = arg;

        if (st->pid != getpid() && (st->session == sup->root || st->ppid == getpid()))
                kill(st->pid, SIGKILL);
}

void sup_kill_tree(struct supervisor *sup)
{
        pthread_mutex_lock(&sup->lock);
        sup->killing = true;
        tracee_foreach(&sup->tree, kill_one, NULL);
        if (!sup->layers.ptrace && sup->root > 0) {
                kill(-sup->root, SIGKILL);
                procscan_foreach(kill_untracked, sup);
        }
        pthread_mutex_unlock(&sup->lock);
}

static int on_timer(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        uint64_t expirations;

        if (read(src->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
                return 0;
        if (!sup->root_exited) {
                sup->timed_out = true;
                sup_kill_tree(sup);
        }
        return 0;
}

static int watch(struct supervisor *sup, struct event_source *src)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};

        return epoll_ctl(sup->epfd, EPOLL_CTL_ADD, src->fd, &ev) < 0 ? -errno : 0;
}

static int open_sources(struct supervisor *sup, struct error *err)
{
        sigset_t mask;

        sup->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (sup->epfd < 0)
                return make_error(err, errno, "epoll_create1");
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sup->sigchld = (struct event_source){.name = "signals", .on_ready = ptrace_on_signal};
        sup->sigchld.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sup->sigchld.fd < 0 || watch(sup, &sup->sigchld) < 0)
                return make_error(err, errno, "signalfd");

        sup->timer = (struct event_source){.fd = -1, .name = "timeout", .on_ready = on_timer};
        if (sup->cfg->limits.timeout_ms) {
                uint64_t ms = sup->cfg->limits.timeout_ms;
                struct itimerspec its = {.it_value = {.tv_sec = (time_t)(ms / 1000),
                                                      .tv_nsec = (long)(ms % 1000) * 1000000}};
                sup->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (sup->timer.fd < 0 || timerfd_settime(sup->timer.fd, 0, &its, NULL) < 0 ||
                    watch(sup, &sup->timer) < 0)
                        return make_error(err, errno, "timerfd for --timeout");
        }
        return 0;
}

/* The next ready source; ev.data.ptr is NULL when epoll_wait failed. */
static struct epoll_event loop_next_event(struct supervisor *sup)
{
        struct epoll_event ev = {0};
        int n;

        while ((n = epoll_wait(sup->epfd, &ev, 1, -1)) < 0 && errno == EINTR)
                ;
        if (n <= 0)
                ev.data.ptr = NULL;
        return ev;
}

static bool loop_dispatch(struct supervisor *sup, struct epoll_event ev, struct error *err)
{
        struct event_source *src = ev.data.ptr;
        int r;

        if (!src) {
                make_error(err, errno, "epoll_wait");
                return false;
        }
        r = src->on_ready(sup, src, ev.events);
        if (r < 0) {
                make_error(err, -r, "%s", src->name);
                sup_kill_tree(sup);
                return false;
        }
        return !sup->root_exited;
}

static void kill_child(const struct proc_stat *st, void *arg)
{
        if (st->ppid == getpid())
                kill(st->pid, SIGKILL);
}

/*
 * After the root's exit every task has been sent SIGKILL; reap until no child is left. Tasks
 * born in the meantime stop at birth and are killed in ptrace_handle_status. The loop never
 * blocks in waitpid: it waits for SIGCHLD through the signalfd, 100 ms at most, and kills
 * again, including any child of ours the tree does not know (an orphan that came back to us
 * as the subreaper), so that nothing can keep stockade from exiting.
 */
static void reap_all(struct supervisor *sup)
{
        struct epoll_event ev;
        int status;
        pid_t pid;

        sup_kill_tree(sup);
        for (;;) {
                while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
                        ptrace_handle_status(sup, pid, status);
                if (pid < 0 && errno == ECHILD)
                        break;
                if (epoll_wait(sup->epfd, &ev, 1, 100) > 0)
                        ((struct event_source *)ev.data.ptr)->on_ready(sup, ev.data.ptr, ev.events);
                sup_kill_tree(sup);
                procscan_foreach(kill_child, NULL);
        }
        notify_stop(sup);
}

static int exit_code(const struct supervisor *sup)
{
        if (sup->timed_out)
                return EXIT_TIMEDOUT;
        if (WIFEXITED(sup->root_status))
                return WEXITSTATUS(sup->root_status);
        if (WIFSIGNALED(sup->root_status))
                return 128 + WTERMSIG(sup->root_status);
        return EXIT_STOCKADE;
}

/* Refuse to start without a layer the run needs, unless --allow-degraded. */
static int check_layers(struct supervisor *sup, struct error *err)
{
        if (!sup->layers.user_notif)
                return make_error(err, 0,
                                  "this kernel has no seccomp user notification (5.0+ needed)");
        if (!sup->layers.landlock_abi) {
                if (!sup->cfg->allow_degraded)
                        return make_error(err, 0,
                                          "Landlock is not available (%s); without it the sandbox "
                                          "can read and write the memory of your other processes "
                                          "through /proc/PID/mem. --allow-degraded runs anyway",
                                          sup->layers.why_landlock);
                fprintf(stderr,
                        "stockade: warning: no Landlock (%s): other processes of this "
                        "user are not protected from /proc/PID/mem\n",
                        sup->layers.why_landlock);
        }
        if (sup->cfg->set_user && geteuid() != 0)
                return make_error(err, 0, "--user needs stockade to run as root");
        if (geteuid() == 0 && !sup->cfg->set_user)
                fprintf(stderr, "stockade: warning: running as root: the command has no "
                                "capabilities but owns root's files (see --user)\n");
        if (getenv("STOCKADE_TEST_DISABLE") && *getenv("STOCKADE_TEST_DISABLE")) {
                /* A test aid that can only take protection away: never silently. */
                if (!sup->cfg->allow_degraded)
                        return make_error(err, 0,
                                          "STOCKADE_TEST_DISABLE=%s is set, which removes "
                                          "protection layers; --allow-degraded runs anyway",
                                          getenv("STOCKADE_TEST_DISABLE"));
                fprintf(stderr, "stockade: warning: STOCKADE_TEST_DISABLE=%s\n",
                        getenv("STOCKADE_TEST_DISABLE"));
        }
        return 0;
}

static void sup_free(struct supervisor *sup)
{
        notify_stop(sup);
        cleanup_closep(&sup->listener);
        cleanup_closep(&sup->sigchld.fd);
        cleanup_closep(&sup->timer.fd);
        cleanup_closep(&sup->epfd);
        free(sup->req);
        free(sup->resp);
        tracee_tree_free(&sup->tree);
}

static void report(const struct supervisor *sup)
{
        if (sup->timed_out)
                fprintf(stderr, "stockade: timed out after %.3g s; the sandbox was killed\n",
                        (double)sup->cfg->limits.timeout_ms / 1000.0);
        if (!sup->cfg->verbose)
                return;
        fprintf(stderr,
                "stockade: done: %llu notifications, %llu tasks, %llu forks refused, "
                "%llu would-be denials\n",
                (unsigned long long)sup->n.notifications, (unsigned long long)sup->n.tasks_seen,
                (unsigned long long)sup->n.forks_refused, (unsigned long long)sup->n.would_deny);
}

int sup_run(const struct spawn_plan *plan, struct error *err)
{
        struct supervisor sup = {.cfg = plan->cfg, .epfd = -1};
        sigset_t mask;
        int code = -1;

        pthread_mutexattr_t attr;

        sup.listener = sup.sigchld.fd = sup.timer.fd = -1;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&sup.lock, &attr);
        pthread_mutexattr_destroy(&attr);
        layers_probe(&sup.layers, plan->cfg->verbose > 0);
        sup.fopts.audit = plan->cfg->mode == MODE_AUDIT;
        sup.fopts.count_procs = plan->cfg->limits.max_procs != 0;
        sup.fopts.signals_scoped = sup.layers.landlock_abi >= 6;
        sup.fopts.ipc_denied = sup.layers.ipc == IPC_SHARED;
        if (check_layers(&sup, err) < 0)
                return -1;
        /* The sandbox runs as our uid: without this it could open /proc/<us>/mem. */
        prctl(PR_SET_DUMPABLE, 0);

        /* Block the signals the signalfd reads before any child exists; the shim unblocks
         * them in the child. Orphans of the tree are re-parented to us, not to init. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
                make_error(err, errno, "become the child subreaper");
                goto out;
        }
        if (notify_init(&sup) < 0) {
                make_error(err, errno, "SECCOMP_GET_NOTIF_SIZES");
                goto out;
        }
        if (open_sources(&sup, err) < 0 || spawn_command(&sup, plan, err) < 0)
                goto out;
        if (plan->cfg->verbose)
                layers_print(&sup.layers, stderr);

        while (loop_dispatch(&sup, loop_next_event(&sup), err))
                ;
        reap_all(&sup);
        if (sup.notifier_error && !err->msg[0])
                make_error(err, -sup.notifier_error, "seccomp notification");
        if (!err->msg[0]) {
                code = exit_code(&sup);
                report(&sup);
        }
out:
        sup_free(&sup);
        return code;
}

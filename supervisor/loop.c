/*
 * The event loop: one epoll over a signalfd (ptrace stops, exits, forwarded signals) and a
 * timerfd (--timeout). Each fd is an event source whose on_ready callback sits in
 * epoll_event.data.ptr. The seccomp listener is served by the notifier threads (notify.c).
 */
#include "syscalls/fs_common.h"
#include "supervisor/loop.h"
#include "supervisor/publish.h"
#include "supervisor/dns.h"
#include "supervisor/env.h"
#include "supervisor/fastreads.h"
#include "supervisor/notify.h"
#include "supervisor/procscan.h"
#include "supervisor/ptrace.h"
#include "supervisor/signals.h"
#include "supervisor/scratch.h"
#include "supervisor/spawn.h"
#include "supervisor/sup.h"
#include "supervisor/trace.h"
#include "supervisor/util.h"
#include "supervisor/walls.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void kill_one(struct tracee *t, void *arg)
{
        tracee_signal(t, SIGKILL);
}

/* Without ptrace the tree is the sandbox's session (the shim's setsid), plus the orphans
 * that come back to us as the subreaper. Each is killed through a pidfd proven to designate
 * it, never by a number read from /proc a moment earlier. */
static void kill_untracked(const struct proc_stat *st, void *arg)
{
        const struct supervisor *sup = arg;
        int pidfd;

        if (st->pid == getpid() || st->pid == sup->cleaner)
                return; /* the scratch's cleaner is no task of the tree (scratch.c) */
        if (st->ppid == getpid()) {
                if (inherited_is(&sup->inherited, st->pid, st->start))
                        return; /* the user's, from before the exec */
                /* Our child: its number is ours until we reap it, and only we do. */
                kill(st->pid, SIGKILL);
                return;
        }
        pidfd = procscan_hold_in_session(st->pid, sup->root);
        if (pidfd >= 0) {
                syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                close(pidfd);
        }
}

void sup_kill_tree(struct supervisor *sup)
{
        pthread_mutex_lock(&sup->lock);
        sup->killing = true;
        tracee_foreach(&sup->tree, kill_one, NULL);
        /* The pid namespace's init (shim/pidns.h): its death kills whatever the namespace
         * still holds, a task not yet admitted included. From our namespace SIGKILL reaches
         * a pid 1; the pidfd reaches nobody once it is reaped. */
        if (sup->init_pidfd >= 0)
                syscall(SYS_pidfd_send_signal, sup->init_pidfd, SIGKILL, NULL, 0);
        if (!sup->layers.ptrace && sup->root > 0) {
                /* Until we reap the root its number, and so its group's, cannot be reused. */
                if (!sup->root_exited)
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
        sup_time_out(sup);
        return 0;
}

void sup_time_out(struct supervisor *sup)
{
        if (sup->root_exited || sup->timed_out)
                return;
        sup->timed_out = true;
        trace_limit(sup, sup->root, "timeout", sup->cfg->limits.timeout_ms);
        sup_kill_tree(sup);
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
        signals_mask(&mask);
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
        if (signals_open(sup) < 0)
                return make_error(err, errno, "timerfd for --kill-after");
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
        signals_after_event(sup);
        if (r < 0) {
                make_error(err, -r, "%s", src->name);
                sup_kill_tree(sup);
                return false;
        }
        return !sup->root_exited;
}

/* One look at /proc in the teardown: our children but those we inherited, each killed when
 * `kill` says (the tree's own kills have had their time) but the scratch's cleaner, which is
 * ours too and left to finish (scratch.c); `found` whether there was any. */
struct children_left {
        const struct supervisor *sup;
        pid_t self;
        bool kill, found;
};

static void child_left(const struct proc_stat *st, void *arg)
{
        struct children_left *c = arg;

        if (st->ppid != c->self || inherited_is(&c->sup->inherited, st->pid, st->start))
                return;
        c->found = true;
        /* Our child: its number is ours until we reap it, and only this thread reaps. */
        if (c->kill && st->pid != c->sup->cleaner)
                kill(st->pid, SIGKILL);
}

static long long monotonic_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * After the root's exit every task has been sent SIGKILL; reap until no child is left. Tasks
 * born in the meantime stop at birth and are killed in ptrace.c. The loop never blocks in
 * waitpid nor waits on a handler: it waits for SIGCHLD through the signalfd, 100 ms at most,
 * and kills again. Our helpers end by themselves (the socket maker and the cleaner at EOF,
 * the watcher killed here); any other child of ours the tree does not know (an orphan that
 * came back to us as the subreaper) is looked for in /proc, which costs a read of every
 * process's stat (about 1 ms on a quiet host): at each round when the tree is not tracked by
 * ptrace, and otherwise once the reaping has lasted 100 ms, so that nothing can keep
 * stockade from exiting.
 */
static void reap_all(struct supervisor *sup)
{
        long long start = monotonic_ms();
        struct epoll_event ev;

        sup_kill_tree(sup);
        /* The scratch's cleaner may be our child after all (stockade as PID 1 of a pid
         * namespace adopts orphans): let it do its work and end now, or we would wait for
         * it here while it waits for us. */
        scratch_release(sup);
        sockmaker_end(&sup->netns);
        binder_end(&sup->binder);
        /* Our child: its number is ours until we reap it (ptrace.c forgets it then). */
        if (sup->watcher > 0)
                kill(sup->watcher, SIGKILL);
        while (ptrace_reap(sup) != -ECHILD) {
                struct children_left c = {.sup = sup,
                                          .self = getpid(),
                                          .kill = !sup->layers.ptrace ||
                                                  monotonic_ms() - start >= 100};

                /* Children the user started before us are not waited for: when every child
                 * left is one of them, nothing of the sandbox is left. Each of its processes
                 * descends from a child of ours that is not inherited (we are the subreaper:
                 * an orphan comes to us, never to an inherited child), and that child stays,
                 * a zombie at least, until this thread reaps it, so the walk finds it. */
                if (c.kill || sup->inherited.n) {
                        procscan_foreach(child_left, &c);
                        if (sup->inherited.n && !c.found)
                                break;
                }
                if (epoll_wait(sup->epfd, &ev, 1, 100) > 0)
                        ((struct event_source *)ev.data.ptr)->on_ready(sup, ev.data.ptr, ev.events);
                sup_kill_tree(sup);
        }
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

/* Could uid:gid (no supplementary groups) write the directory `st` describes? ACLs aside:
 * this only decides whether to print a hint. */
static bool may_write(const struct stat *st, uid_t uid, gid_t gid)
{
        if (st->st_uid == uid)
                return (st->st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
        if (st->st_gid == gid)
                return (st->st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
        return (st->st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

/* Say who the command runs as: with -v always, and when stockade is root whenever the choice
 * matters (uid 0 keeps root's files; nobody may not write the current directory). */
static void check_user(const struct config *cfg)
{
        struct stat st;

        if (cfg->verbose)
                fprintf(stderr, "stockade: the command runs as uid %u gid %u%s\n",
                        (unsigned)(cfg->set_user ? cfg->uid : getuid()),
                        (unsigned)(cfg->set_user ? cfg->gid : getgid()),
                        cfg->default_user ? " (nobody: the default as root; see --user)" : "");
        if (geteuid() != 0)
                return;
        if (cfg->uid == 0)
                error_warn("warning: running as root: the command has no "
                           "capabilities but owns root's files (see --user)\n");
        if (cfg->default_user && stat(".", &st) == 0 && !may_write(&st, cfg->uid, cfg->gid))
                error_warn("note: the command runs as nobody, who cannot write "
                           "the current directory; --user root or --user $(stat -c %%u .) "
                           "to change\n");
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
                error_warn("warning: no Landlock (%s): other processes of this "
                           "user are not protected from /proc/PID/mem, and host files are not "
                           "write-protected (only chmod, chown, utimes and xattrs are checked)\n",
                           sup->layers.why_landlock);
        }
        /* Not even with --allow-degraded: the masks are what keeps a hidden path's metadata
         * from a stat the kernel answers (cow_masks.c), Landlock its content. */
        if (sup->cfg->fast && !sup->layers.mntns)
                return make_error(err, 0,
                                  "--fast needs a mount namespace of the sandbox's own, where "
                                  "hidden paths are covered, and this host gives none (see "
                                  "`stockade run -v`); run without --fast");
        if (sup->cfg->fast && !sup->layers.landlock_abi)
                return make_error(err, 0, "--fast needs Landlock, which this host lacks (%s)",
                                  sup->layers.why_landlock);
        /* Where the kernel refuses the pid namespace or its procfs, spawn.c says so. */
        if (sup->cfg->fast && !sup->pidns)
                return make_error(err, 0,
                                  "--fast needs a pid namespace of the sandbox's own, with its "
                                  "own /proc (disabled for a test); run without --fast");
        if (sup->cfg->fast && sup->cfg->verbose)
                fprintf(stderr, "stockade: --fast: stat, access, readlink and listings are the "
                                "kernel's, in the sandbox's mount namespace (not traced); so are "
                                "the calls that name a process, in its pid namespace\n");
        if (sup->cfg->set_user && geteuid() != 0)
                return make_error(err, 0, "--user needs stockade to run as root");
        check_user(sup->cfg);
        if (getenv("STOCKADE_TEST_DISABLE") && *getenv("STOCKADE_TEST_DISABLE")) {
                /* A test aid that can only take protection away: never silently. */
                if (!sup->cfg->allow_degraded)
                        return make_error(err, 0,
                                          "STOCKADE_TEST_DISABLE=%s is set, which removes "
                                          "protection layers; --allow-degraded runs anyway",
                                          getenv("STOCKADE_TEST_DISABLE"));
                error_warn("warning: STOCKADE_TEST_DISABLE=%s\n", getenv("STOCKADE_TEST_DISABLE"));
        }
        /* uid 0 without capabilities still writes root-owned files by their mode, sysctls
         * included (/proc/sys/kernel/core_pattern: a way out). Only Landlock stops that;
         * no degradation covers it (outside review F6). */
        if (!sup->layers.landlock_abi && geteuid() == 0 && sup->cfg->set_user && sup->cfg->uid == 0)
                return make_error(err, 0,
                                  "--user root needs Landlock, which this host lacks "
                                  "(%s): uid 0 could rewrite /proc/sys and every "
                                  "root-owned file",
                                  sup->layers.why_landlock);
        return 0;
}

/* Returns false when a notifier thread could not be stopped: `sup` must then outlive us.
 * `code` is what stockade exits with, for the trace's end. */
static bool sup_free(struct supervisor *sup, int code)
{
        bool stopped = notify_stop(sup);

        ns_abandon(&sup->ns_maker);   /* the run failed before spawn_command took them */
        cow_janitor_ready(sup, NULL); /* the same, before the subreaper */
        if (sup->watcher > 0) {       /* ... or before the loop: our child, not reaped */
                kill(sup->watcher, SIGKILL);
                while (waitpid(sup->watcher, NULL, 0) < 0 && errno == EINTR)
                        ;
                sup->watcher = -1;
        }
        cleanup_closep(&sup->own_ruleset); /* ... or before they were entered */
        cleanup_closep(&sup->shim_ruleset);
        sup->own_ruleset = sup->shim_ruleset = -1;

        publish_stop(sup); /* its threads and sockets: only the socket maker's fds are shared */
        dns_stop(sup);     /* its thread and sockets (it traces queries); what handlers read stays
                          until dns_free */
        nlsock_stop(&sup->nl); /* its thread; the sockets stay while a handler may use them */
        /* After the notifiers: nothing pushes events any more (a stuck one keeps the rings). */
        trace_finish(sup, code < 0 ? EXIT_STOCKADE : code);
        if (stopped) {
                trace_free(sup);
                fs_look_memo_forget(); /* no handler runs any more */
        }

        cleanup_closep(&sup->listener);
        cleanup_closep(&sup->sigchld.fd);
        cleanup_closep(&sup->timer.fd);
        cleanup_closep(&sup->kill_timer.fd);
        tty_close(sup);
        cleanup_closep(&sup->epfd);
        cleanup_closep(&sup->root_pidfd);
        /* The run failed before the loop's teardown: the pid namespace's init goes too
         * (else at our exit, by its PDEATHSIG). */
        if (sup->init_pidfd >= 0)
                syscall(SYS_pidfd_send_signal, sup->init_pidfd, SIGKILL, NULL, 0);
        cleanup_closep(&sup->init_pidfd);
        cleanup_closep(&sup->pid_ns.ns);   /* ... or before the fork */
        cleanup_closep(&sup->pid_ns.proc); /* the Landlock rules had it */
        pthread_mutex_lock(&sup->lock);
        tracee_tree_free(&sup->tree);
        pthread_mutex_unlock(&sup->lock);
        places_free(&sup->places);
        grants_free(&sup->grants);
        if (stopped) {
                notify_free(sup);
                /* Before the view: the janitor takes over the overlays' fds (the last
                 * references, whose close waits for each overlay's end). */
                cow_finish(sup);
                vfs_view_free(&sup->view); /* a stuck handler may still resolve in it */
                fs_exec_free(sup);
                if (sup->places.root_fd > 0) /* the mount namespace's root (spawn.c) */
                        close(sup->places.root_fd);
                sup->places.root_fd = 0;
                scratch_remove(sup);
                free(sup->cwd);
                sup->cwd = NULL;
                free(sup->pts);
                free(sup->unix_own);
                linkid_fini(&sup->links); /* a stuck handler may still look */
                for (size_t i = 0; i < sup->n_held; i++)
                        close(sup->held_ptys[i]);
                netpol_own_free(&sup->net_own); /* a stuck notifier may still use it */
                dns_free(sup);
                nlsock_free(&sup->nl);
                sockmaker_stop(&sup->netns); /* the maker reads EOF and ends */
                binder_stop(&sup->binder);   /* the same */
        }
        return stopped;
}

static void report(const struct supervisor *sup)
{
        if (sup->timed_out)
                fprintf(stderr, "stockade: timed out after %.3g s; the sandbox was killed\n",
                        (double)sup->cfg->limits.timeout_ms / 1000.0);
        if (sup->init_died)
                fprintf(stderr, "stockade: the sandbox's pid 1 (stockade-init) was killed from "
                                "outside; the kernel killed its pid namespace with it\n");
        /* The point of audit mode: said even without -v, but -q silences it. */
        if (sup->fopts.audit && (!sup->cfg->quiet || sup->cfg->verbose))
                audit_report(sup, stderr);
        if (!sup->cfg->verbose)
                return;
        fprintf(stderr,
                "stockade: done: %llu notifications, %llu tasks, %llu forks refused, "
                "%llu would-be denials, %u notifier threads\n",
                (unsigned long long)sup->n.notifications, (unsigned long long)sup->n.tasks_seen,
                (unsigned long long)sup->n.forks_refused, (unsigned long long)sup->n.would_deny,
                atomic_load(&sup->n_notifiers));
        if (sup->cfg->verbose >= 2) {
                double held, free;
                int c = notify_pin_choice(&held, &free);

                if (c)
                        fprintf(stderr,
                                "stockade: fd installs %s the caller on our CPU (median %.1f us "
                                "held, %.1f us not)\n",
                                c > 0 ? "hold" : "do not hold", held, free);
        }
}

/* How many fds this process has open: a run must leave as many as it found. */
static int count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int n = 0;

        if (!d)
                return -1;
        while ((e = readdir(d)))
                n += e->d_name[0] != '.';
        closedir(d);
        return n - 1; /* the directory's own fd */
}

/* Every task holds a pidfd (tracee.h): let the tree grow to --max-procs without running out
 * of fds. The command gets the original limit back in the child (spawn.c). */
static void raise_nofile(struct supervisor *sup)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &sup->nofile) < 0)
                return;
        rl = sup->nofile;
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
}

static void init_lock(pthread_mutex_t *lock)
{
        pthread_mutexattr_t attr;

        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(lock, &attr);
        pthread_mutexattr_destroy(&attr);
}

/* The signals the signalfd reads, blocked before any child exists (the shim unblocks them). */
static void block_signals(void)
{
        sigset_t mask;

        signals_mask(&mask);
        sigprocmask(SIG_BLOCK, &mask, NULL);
}

static void free_envp(char ***p)
{
        env_free(*p);
}

static int supervise(struct supervisor *sup, const struct spawn_plan *plan, struct error *err)
{
        __attribute__((cleanup(free_envp))) char **envp = NULL;
        struct spawn_plan run = *plan;

        /* The pty first: the walls grant the sandbox its own terminal, not the user's. */
        if (check_layers(sup, err) < 0 ||
            tty_open(&sup->tty, plan->cfg->tty, plan->cfg->quiet, err) < 0)
                return -1;
        phases_mark(&sup->phases, "checks");
        if (walls_setup(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "walls");
        layers_probe_net(&sup->layers, &sup->ns_maker);
        if (fastreads_setup(sup, err) < 0 || spawn_start_namespaces(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "namespaces started");
        if (walls_grants(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "grants");
        if (spawn_build_rulesets(sup, err) < 0 || trace_open(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "rulesets");
        /* The sandbox runs as our uid: without this it could open /proc/<us>/mem. */
        prctl(PR_SET_DUMPABLE, 0);
        block_signals();
        raise_nofile(sup);
        /* Orphans of the tree are re-parented to us, not to init; the copy-on-write janitor,
         * an orphan by design, must be init's before. */
        if (cow_janitor_ready(sup, err) < 0)
                return -1;
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return make_error(err, errno, "become the child subreaper");
        if (notify_init(sup) < 0)
                return make_error(err, errno, "SECCOMP_GET_NOTIF_SIZES");
        /* The DNS's sockets before the spawn: the filter notifies recvfrom only when it
         * runs (sup->fopts.dns). Its thread after: inside the supervisor's Landlock domain,
         * since it reads what the program sends. */
        if (dns_start(sup, err) < 0 || publish_open(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "janitor, dns");
        /* The command's environment, with the tool caches the view needs (walls_env). */
        envp = walls_env(sup, plan->envp);
        if (envp)
                run.envp = envp;
        if (open_sources(sup, err) < 0 || spawn_command(sup, &run, err) < 0)
                return -1;
        phases_mark(&sup->phases, "seize");
        if (dns_serve(sup, err) < 0 || publish_start(sup, err) < 0)
                return -1;
        trace_start(sup, run.envp);
        tty_start(sup);
        if (plan->cfg->verbose)
                layers_print(&sup->layers, stderr);
        phases_mark(&sup->phases, "go");

        while (loop_dispatch(sup, loop_next_event(sup), err))
                ;
        reap_all(sup);
        phases_mark(&sup->phases, "command");
        tty_close(sup); /* the last output, and the user's terminal as we found it */
        if (sup->notifier_error && !err->msg[0])
                return make_error(err, -sup->notifier_error, "seccomp notification");
        if (err->msg[0])
                return -1;
        report(sup);
        return exit_code(sup);
}

/*
 * Whether /proc is our pid namespace's: stockade names processes by number in it (a child's
 * namespaces, the tree's tasks, its inherited children). In a pid namespace of its own whose
 * /proc is still the host's (`unshare -fp` without --mount-proc) each number named a host
 * process instead: the sandbox joined the network namespace of one (an outside review found
 * the host's lo given the view's 127.0.0.2 and fe80::1) and host processes were taken for our
 * children. /proc/self/status's NSpid lists our number in /proc's namespace and in each
 * below it, down to ours: one number, and ours, only in /proc of our own namespace (the
 * number alone could agree: a second review made the same number in both with clone3's
 * set_tid).
 */
static int check_proc(struct error *err)
{
        char line[256];
        const char *why = NULL;
        int fields = 0;
        long first = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return make_error(err, errno,
                                  "run: /proc is not mounted, or not readable: stockade needs it");
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "NSpid:", 6) == 0) {
                        char *p = line + 6, *end;

                        for (long v; (v = strtol(p, &end, 10)), end != p; p = end)
                                if (fields++ == 0)
                                        first = v;
                        break;
                }
        fclose(f);
        if (fields == 0)
                why = "/proc/self/status has no NSpid (a kernel before 4.1, or not a procfs)";
        else if (fields > 1 || first != getpid())
                why = "/proc is another pid namespace's";
        if (why)
                return make_error(err, 0,
                                  "run: %s: stockade names processes by number there; mount a "
                                  "/proc of this namespace's (`unshare --pid --fork --mount-proc`)",
                                  why);
        return 0;
}

int sup_run(const struct spawn_plan *plan, struct error *err)
{
        struct supervisor *sup;
        int fds = count_fds(), code, inherited;

        if (check_proc(err) < 0)
                return -1;
        /* On the heap: if a notifier thread cannot be stopped, it keeps using `sup` until
         * the process exits, so `sup` is then never freed. */
        sup = xcalloc(1, sizeof(*sup));

        sup->cfg = plan->cfg;
        sup->epfd = sup->listener = sup->sigchld.fd = sup->timer.fd = sup->root_pidfd = -1;
        sup->kill_timer.fd = -1;
        sup->watcher = -1;
        sup->ns_fds[0] = sup->ns_fds[1] = sup->ns_fds[2] = sup->ns_fds[3] = -1;
        sup->ns_maker.pid = sup->ns_maker.pipe = sup->ns_maker.cmd = -1;
        sup->pid_ns = (struct ns_pid){.init = -1, .ns = -1, .proc = -1};
        sup->init_pidfd = -1;
        /* --fast: a pid namespace of the sandbox's own (shim/pidns.h). */
        sup->pidns = plan->cfg->fast && !layers_test_disabled("pidns");
        sup->own_ruleset = sup->shim_ruleset = -1;
        sup->netns.chan = -1;
        sup->binder.chan = -1;
        sup->shm_root = -1;
        sup->cleaner_fd = -1;
        sup->tty = (struct tty_relay){.master = -1,
                                      .slave = -1,
                                      .host_in = -1,
                                      .host_out = -1,
                                      .term = -1,
                                      .fg_timer = -1};
        init_lock(&sup->lock);
        pthread_mutex_init(&sup->pts_lock, NULL);
        pthread_mutex_init(&sup->unix_lock, NULL);
        linkid_init(&sup->links);
        audit_init(&sup->audit);
        netpol_own_init(&sup->net_own);
        nlsock_init(&sup->nl);
        /* Before we fork anything: every child we have now came with the exec. */
        inherited = inherited_record(&sup->inherited);
        if (inherited > INHERITED_MAX)
                error_warn("warning: %d processes started before stockade are its children; "
                           "the first %d are spared, the others stopped and killed with the "
                           "sandbox\n",
                           inherited, INHERITED_MAX);
        /* --net host: the host's network, as it says. */
        phases_mark(&sup->phases, "options");
        layers_probe(&sup->layers, plan->cfg->verbose > 0, plan->cfg->net.mode != NETPOL_MODE_HOST,
                     &sup->ns_maker);
        phases_mark(&sup->phases, "probe");
        sup->fopts.audit = plan->cfg->mode == MODE_AUDIT;
        sup->fopts.count_procs = plan->cfg->limits.max_procs != 0;
        sup->fopts.signals_scoped = sup->layers.landlock_abi >= 6;
        sup->fopts.ipc_denied = sup->layers.ipc == IPC_SHARED;
        sup->fopts.net_policy = plan->cfg->net.mode != NETPOL_MODE_HOST;
        sup->fopts.trace_all = plan->cfg->trace_path && plan->cfg->trace_level == TRACE_LEVEL_ALL;
        sup->fopts.kernel_looks = plan->cfg->fast;
        sup->fopts.pidns = sup->pidns;
        if (getrandom(&sup->fopts.handoff_key, sizeof(sup->fopts.handoff_key), 0) < 0)
                sup->fopts.handoff_key =
                        (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);

        code = supervise(sup, plan, err);
        if (!sup_free(sup, code)) {
                fprintf(stderr, "stockade: warning: a handler is stuck in the kernel; exiting "
                                "without it\n");
                return code;
        }
        phases_mark(&sup->phases, "teardown");
        if (plan->cfg->verbose >= 2)
                fprintf(stderr, "stockade: phases (ms): %s; %.2f in all\n", sup->phases.text,
                        phases_now());
        if (plan->cfg->verbose && fds >= 0 && code >= 0) {
                int left = count_fds() - fds;
                if (left)
                        fprintf(stderr, "stockade: warning: %d fds leaked by the run\n", left);
                else
                        fprintf(stderr, "stockade: no fd leaked\n");
        }
        free(sup);
        return code;
}

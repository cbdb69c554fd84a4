/*
 * Every task of the tree is a tracee: the root is seized before it execs the command, and
 * TRACEFORK/VFORK/CLONE attach each new task before it runs. EXITKILL kills the tree if the
 * supervisor dies. The supervisor is also the child subreaper, so orphans come back to it
 * and are reaped here: no zombie is left behind.
 *
 * Identity. A number is not a task. A child can die at birth and be reported (and handed to
 * its real parent, and reaped, and its number reused by a host process) before its parent's
 * FORK event reaches us; an event's number alone must therefore never enter the tree. A task
 * enters it only through admit(): we open a pidfd for the number, then ask the kernel with
 * waitid(P_PIDFD, WNOWAIT) whether the task behind *that pidfd* is our child or tracee. A
 * reused number gives ECHILD and stays out. From then on the pidfd is the task's identity,
 * and only the main thread reaps, under sup->lock, removing the task in the same critical
 * section: a number in the tree always designates the task we admitted.
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/ptrace.h"
#include "supervisor/procscan.h"
#include "supervisor/trace.h"
#include "supervisor/signals.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9: a pidfd for any task, not only thread-group leaders */
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Is the task behind `pidfd` (or, without thread pidfds, `tid`) our child or tracee? Either
 * alive or exited but not yet reaped by us; in both cases its number stays ours until the
 * main thread reaps it. */
static bool ours(int pidfd, pid_t tid)
{
        siginfo_t si;
        int r;

        memset(&si, 0, sizeof(si));
        if (pidfd >= 0)
                r = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si,
                           WEXITED | WNOHANG | WNOWAIT | __WALL);
        else
                r = waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL);
        return r == 0;
}

/*
 * Add `tid` to the tree if it provably is ours now; NULL otherwise. Main thread, under
 * sup->lock. A task of ours that we cannot hold (no fd left for its pidfd) is killed: it
 * would otherwise run outside the tree's accounting.
 */
static struct tracee *admit(struct supervisor *sup, pid_t tid)
{
        struct tracee *t = tracee_find(&sup->tree, tid);
        int pidfd;

        if (t)
                return t;
        pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
        if (pidfd < 0 && errno == EINVAL)
                /* Before 6.9 only leaders have pidfds; a tid is then held by the reaping
                 * rule alone (only we reap, under the lock). */
                pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
        if (pidfd < 0 && errno != EINVAL) {
                if (errno != ESRCH && ours(-1, tid))
                        syscall(SYS_tkill, tid, SIGKILL); /* EMFILE and the like: fail closed */
                return NULL;
        }
        if (!ours(pidfd, tid)) {
                if (pidfd >= 0)
                        close(pidfd);
                return NULL;
        }
        sup->n.tasks_seen++;
        t = tracee_add(&sup->tree, tid, pidfd);
        if (pidfd < 0)
                t->tgid = procscan_tgid(tid); /* forgotten with its leader (task_exited) */
        return t;
}

int ptrace_seize_root(struct supervisor *sup, pid_t pid)
{
        struct tracee *t;

        /* Where a mount is merged, some calls stop for the tracer (fs_cow_traced), and some of
         * those again at their exit (PTRACE_SYSCALL), told apart by TRACESYSGOOD. */
        if (ptrace(PTRACE_SEIZE, pid, 0,
                   STOCKADE_PTRACE_OPTIONS |
                           (sup->cow_merged ? PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD : 0)) <
            0)
                return -errno;
        pthread_mutex_lock(&sup->lock);
        t = admit(sup, pid);
        if (t)
                t->attached = true; /* a seized task has no initial stop */
        pthread_mutex_unlock(&sup->lock);
        return t ? 0 : -ESRCH;
}

static bool is_stop_signal(int sig)
{
        return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_new_task(struct supervisor *sup, struct tracee *parent, pid_t pid, int event)
{
        unsigned long msg = 0;
        struct tracee *child;

        /* Before admit: adding may grow the table and move `parent`. */
        tracee_settle_clone(&sup->tree, parent);
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) < 0 || !msg)
                return;
        /* The child may already be dead and reaped (a death at birth is reported before
         * its parent's event): admit() then refuses its number. */
        child = admit(sup, (pid_t)msg);
        if (child)
                trace_proc_new(sup, pid, (pid_t)msg,
                               event == PTRACE_EVENT_FORK    ? TRACE_FORK
                               : event == PTRACE_EVENT_VFORK ? TRACE_VFORK
                                                             : TRACE_CLONE);
        if (child && sup->killing)
                tracee_signal(child, SIGKILL);
}

/*
 * The new image is in place. A task that exec'd a file it may run but not read (mode 0111)
 * is no longer dumpable, and an unprivileged supervisor can no longer read its memory or
 * take its fds (pidfd_getfd, /proc/PID/mem): every decision about it would be blind. It must
 * not run on; it is killed, with one line that says why.
 */
static bool inspectable(pid_t pid)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ESRCH; /* died: nothing to inspect */
        close(fd);
        return true;
}

/* A non-leader thread that execs takes over the leader's tid; its old tid is gone (the
 * kernel released it without a wait status). */
static void on_exec(struct supervisor *sup, struct tracee *t, pid_t pid)
{
        unsigned long former = 0;

        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) == 0 && former && (pid_t)former != pid) {
                struct tracee *f = tracee_find(&sup->tree, (pid_t)former);
                struct exec_judged judged = f ? f->exec : (struct exec_judged){0};

                tracee_remove(&sup->tree, (pid_t)former);
                t = tracee_find(&sup->tree, pid);
                if (t)
                        t->exec = judged; /* the thread that exec'd was judged, not the leader */
        }
        if (t)
                trace_proc_exec(sup, pid);
        if (t && !inspectable(pid)) {
                fprintf(stderr,
                        "stockade: killed pid %d: it executed a file it may run but not read, "
                        "which hides it from the supervisor\n",
                        (int)pid);
                trace_proc_killed(sup, pid, "executed a file it may run but not read");
                tracee_signal(t, SIGKILL);
        } else if (t && !fs_exec_verify(sup, t, pid)) {
                fprintf(stderr,
                        "stockade: killed pid %d: it runs a file other than the one its exec "
                        "was judged on (swapped since?)\n",
                        (int)pid);
                trace_proc_killed(sup, pid, "runs a file other than the one judged");
                tracee_signal(t, SIGKILL);
        }
        if (t)
                t->exec.valid = false; /* each exec is judged anew */
}

static void task_exited(struct supervisor *sup, pid_t pid, int status)
{
        /* One the user started before us, reaped: the number may be another's from now on. */
        if (sup->inherited.n)
                inherited_forget(&sup->inherited, pid);
        if (pid == sup->watcher) {
                sup->watcher = -1; /* reaped: the number is no longer ours */
                return;
        }
        if (tracee_find(&sup->tree, pid)) {
                trace_proc_exit(sup, pid, status);
                trace_bt_forget(sup, pid);
        }
        tracee_remove(&sup->tree, pid);
        /* Before 6.9 threads have no pidfd: a thread whose old tid vanished in an exec has
         * no exit of its own; it goes with its group's leader. */
        tracee_remove_group(&sup->tree, pid);
        if (pid == sup->root && !sup->root_exited) {
                struct proc_stat init;

                sup->root_exited = true;
                sup->root_status = status;
                /* The pid namespace's init exiting before we killed it (from outside: the
                 * sandbox cannot signal it): the kernel kills the namespace, the command
                 * with it, and init finishes exiting only once we have reaped the command.
                 * Our child, not reaped: its number is surely it. */
                sup->init_died = !sup->killing && sup->init_pidfd >= 0 &&
                                 procscan_read(sup->pid_ns.init, &init) == 0 &&
                                 ((init.flags & 0x4) || init.state == 'Z'); /* PF_EXITING */
                /* The command is done: nothing it started may outlive it. */
                sup_kill_tree(sup);
        }
}

/* Tasks stopped for a backtrace (trace.h), handed to the unwinder by ptrace_reap without
 * the lock. */
static struct {
        pid_t tid;
        uint64_t id;
} deferred[16];
static size_t n_deferred;

static void defer_backtrace(pid_t tid, uint64_t id)
{
        if (n_deferred < sizeof(deferred) / sizeof(deferred[0]))
                deferred[n_deferred++] = (typeof(deferred[0])){tid, id};
        else
                ptrace(PTRACE_CONT, tid, 0, 0);
}

/* Tasks stopped at PTRACE_EVENT_SECCOMP, and at the exit of a call whose result is checked
 * (exit_check), handled by ptrace_reap without the lock. */
static pid_t *seccomp_stops;
static size_t n_seccomp, cap_seccomp;
static struct exit_stop {
        pid_t tid;
        struct exit_check check;
} * exit_stops;
static size_t n_exit, cap_exit;

/* A traced call's exit (PTRACE_SYSCALL after fs_cow_traced): the path the kernel walked was
 * ours, but memory the task shares can be rewritten before the kernel reads it. What it
 * reached instead is the caller's whole cwd or fd table, which other processes may share
 * (CLONE_FS, CLONE_FILES): the run ends. */
static void exit_checked(struct supervisor *sup, pid_t tid, const struct exit_check *c)
{
        if (fs_cow_exit_ok(sup, tid, c))
                return;
        fprintf(stderr,
                "stockade: killed the run: pid %d's %s reached another object than the one "
                "judged (its path was rewritten in memory as the kernel read it)\n",
                (int)tid, c->cwd ? "chdir" : "O_PATH open");
        trace_proc_killed(sup, tid, "a traced path rewritten in memory");
        sup_kill_tree(sup);
}

static void handle_status(struct supervisor *sup, pid_t pid, int status)
{
        struct tracee *t;
        int sig, inject = 0;
        uint64_t bt;

        if (WIFEXITED(status) || WIFSIGNALED(status)) {
                task_exited(sup, pid, status);
                return;
        }
        if (!WIFSTOPPED(status))
                return;
        /* A new task's first stop can come before its parent's event. It is stopped and
         * unreaped, so the number is ours; admit() checks anyway. */
        t = admit(sup, pid);
        if (!t || sup->killing) {
                if (t)
                        tracee_signal(t, SIGKILL);
                else
                        syscall(SYS_tkill, pid, SIGKILL); /* a stopped tracee of ours */
                ptrace(PTRACE_CONT, pid, 0, 0);
                return;
        }
        sig = WSTOPSIG(status);
        switch (status >> 16) {
        case PTRACE_EVENT_FORK:
        case PTRACE_EVENT_VFORK:
        case PTRACE_EVENT_CLONE:
                on_new_task(sup, t, pid, status >> 16);
                break;
        case PTRACE_EVENT_EXEC:
                on_exec(sup, t, pid);
                break;
        case PTRACE_EVENT_SECCOMP:
                /* chdir or exec on a merged cow mount: resolved without the lock (an exec's
                 * judgement takes it), the task left in its stop until then */
                if (n_seccomp == cap_seccomp) {
                        cap_seccomp = cap_seccomp ? 2 * cap_seccomp : 64;
                        seccomp_stops = xrealloc(seccomp_stops, cap_seccomp * sizeof(pid_t));
                }
                seccomp_stops[n_seccomp++] = pid;
                return;
        case PTRACE_EVENT_STOP:
                if (t->attached && (bt = trace_bt_stop(sup, pid, sig)) != 0) {
                        /* Stopped for a backtrace: unwound after the lock is released. */
                        defer_backtrace(pid, bt);
                        return;
                }
                if (t->attached && is_stop_signal(sig)) {
                        /* Group-stop: stay stopped until SIGCONT, as without a tracer. */
                        ptrace(PTRACE_LISTEN, pid, 0, 0);
                        /* The command itself stopped (^Z on its terminal): so does the job
                         * the user's shell sees. */
                        if (pid == sup->root && sig != SIGSTOP)
                                signals_root_stopped(sup, sig);
                        return;
                }
                t->attached = true; /* a new task's first stop */
                break;
        case 0:
                if (sig == (SIGTRAP | 0x80)) { /* syscall-exit-stop (TRACESYSGOOD) */
                        if (t->check.armed) {
                                if (n_exit == cap_exit) {
                                        cap_exit = cap_exit ? 2 * cap_exit : 16;
                                        exit_stops = xrealloc(exit_stops,
                                                              cap_exit * sizeof(*exit_stops));
                                }
                                exit_stops[n_exit++] = (struct exit_stop){pid, t->check};
                                t->check.armed = false;
                                return;
                        }
                        break;
                }
                inject = signals_stop_signal(pid, sig); /* signal-delivery-stop */
                if (inject != sig && pid == sup->root)
                        signals_root_stopped(sup, sig); /* ^Z: the job stops */
                t->attached = true;
                break;
        default:
                break;
        }
        ptrace(PTRACE_CONT, pid, 0, inject);
}

int ptrace_reap(struct supervisor *sup)
{
        int status, err;
        pid_t pid;

        /* Reaping and forgetting are one step under the lock: no other thread can find a
         * number in the tree that the kernel already gave back. */
        pthread_mutex_lock(&sup->lock);
        while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
                handle_status(sup, pid, status);
        err = pid < 0 ? errno : 0;
        pthread_mutex_unlock(&sup->lock);
        /* The task is in its ptrace stop and only we can resume it: no number reuse here. The
         * unwinder thread takes it from there (trace_bt.c), and this thread goes on. */
        for (size_t i = 0; i < n_deferred; i++)
                if (!trace_bt_stopped(sup, deferred[i].tid, deferred[i].id))
                        ptrace(PTRACE_CONT, deferred[i].tid, 0, 0);
        n_deferred = 0;
        /* Stopped in their seccomp stop, which only we end: no number reuse either. */
        for (size_t i = 0; i < n_seccomp; i++) {
                struct exit_check c;
                struct tracee *t;

                fs_cow_traced(sup, seccomp_stops[i], &c);
                if (c.armed) {
                        pthread_mutex_lock(&sup->lock);
                        t = tracee_find(&sup->tree, seccomp_stops[i]);
                        if (t)
                                t->check = c;
                        else /* unchecked: not run (a stopped tracee of ours, in the tree) */
                                syscall(SYS_tkill, seccomp_stops[i], SIGKILL);
                        pthread_mutex_unlock(&sup->lock);
                }
                ptrace(c.armed ? PTRACE_SYSCALL : PTRACE_CONT, seccomp_stops[i], 0, 0);
        }
        n_seccomp = 0;
        for (size_t i = 0; i < n_exit; i++) {
                exit_checked(sup, exit_stops[i].tid, &exit_stops[i].check);
                ptrace(PTRACE_CONT, exit_stops[i].tid, 0, 0);
        }
        n_exit = 0;
        return -err;
}

int ptrace_on_signal(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct signalfd_siginfo si;

        while (read(src->fd, &si, sizeof(si)) == sizeof(si))
                if (si.ssi_signo != SIGCHLD)
                        signals_on_signal(sup, (int)si.ssi_signo);
        /* SIGCHLD coalesces: reap until nothing is pending. */
        ptrace_reap(sup);
        return 0;
}

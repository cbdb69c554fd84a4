/*
 * Every task of the tree is a tracee: the root is seized before it execs the command, and
 * TRACEFORK/VFORK/CLONE attach each new task before it runs. EXITKILL kills the tree if the
 * supervisor dies. The supervisor is also the child subreaper, so orphans come back to it
 * and are reaped here: no zombie is left behind.
 */
#include "supervisor/ptrace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int ptrace_seize_root(struct supervisor *sup, pid_t pid)
{
        struct tracee *t;

        if (ptrace(PTRACE_SEIZE, pid, 0, STOCKADE_PTRACE_OPTIONS) < 0)
                return -errno;
        pthread_mutex_lock(&sup->lock);
        t = tracee_add(&sup->tree, pid);
        t->attached = true; /* a seized task has no initial stop */
        sup->n.tasks_seen++;
        pthread_mutex_unlock(&sup->lock);
        return 0;
}

static bool is_stop_signal(int sig)
{
        return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_new_task(struct supervisor *sup, struct tracee *parent, pid_t pid)
{
        unsigned long msg = 0;

        /* Before tracee_add: it may grow the table and move `parent`. */
        tracee_settle_clone(&sup->tree, parent);
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && msg) {
                if (!tracee_find(&sup->tree, (pid_t)msg))
                        sup->n.tasks_seen++;
                tracee_add(&sup->tree, (pid_t)msg);
                if (sup->killing)
                        kill((pid_t)msg, SIGKILL);
        }
}

/* A non-leader thread that execs takes over the leader's tid; its old tid is gone. */
static void on_exec(struct supervisor *sup, pid_t pid)
{
        unsigned long former = 0;

        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) == 0 && former && (pid_t)former != pid)
                tracee_remove(&sup->tree, (pid_t)former);
}

static void on_exit(struct supervisor *sup, pid_t pid, int status)
{
        tracee_remove(&sup->tree, pid);
        if (pid == sup->root && !sup->root_exited) {
                sup->root_exited = true;
                sup->root_status = status;
                /* The command is done: nothing it started may outlive it. */
                sup_kill_tree(sup);
        }
}

static void handle_status(struct supervisor *sup, pid_t pid, int status);

void ptrace_handle_status(struct supervisor *sup, pid_t pid, int status)
{
        pthread_mutex_lock(&sup->lock);
        handle_status(sup, pid, status);
        pthread_mutex_unlock(&sup->lock);
}

static void handle_status(struct supervisor *sup, pid_t pid, int status)
{
        struct tracee *t;
        int sig, inject = 0;

        if (WIFEXITED(status) || WIFSIGNALED(status)) {
                on_exit(sup, pid, status);
                return;
        }
        if (!WIFSTOPPED(status))
                return;
        t = tracee_find(&sup->tree, pid);
        if (!t) {
                t = tracee_add(&sup->tree, pid);
                sup->n.tasks_seen++;
        }
        if (sup->killing) {
                kill(pid, SIGKILL);
                ptrace(PTRACE_CONT, pid, 0, 0);
                return;
        }
        sig = WSTOPSIG(status);
        switch (status >> 16) {
        case PTRACE_EVENT_FORK:
        case PTRACE_EVENT_VFORK:
        case PTRACE_EVENT_CLONE:
                on_new_task(sup, t, pid);
                break;
        case PTRACE_EVENT_EXEC:
                on_exec(sup, pid);
                break;
        case PTRACE_EVENT_STOP:
                if (t->attached && is_stop_signal(sig)) {
                        /* Group-stop: stay stopped until SIGCONT, as without a tracer. */
                        ptrace(PTRACE_LISTEN, pid, 0, 0);
                        return;
                }
                t->attached = true; /* a new task's first stop */
                break;
        case 0:
                inject = sig; /* signal-delivery-stop: deliver it */
                t->attached = true;
                break;
        default:
                break;
        }
        ptrace(PTRACE_CONT, pid, 0, inject);
}

static void forward(struct supervisor *sup, int sig)
{
        static int received[NSIG];

        /* The first one goes to the command (it is in its own session, so the terminal's
         * ^C reaches only us); a second of the same kind ends the whole tree. */
        if (received[sig]++ == 0 && !sup->root_exited) {
                kill(sup->root, sig);
                return;
        }
        if (sup->cfg->verbose)
                fprintf(stderr, "stockade: second %s: killing the sandbox\n", strsignal(sig));
        sup_kill_tree(sup);
}

int ptrace_on_signal(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct signalfd_siginfo si;
        int status;
        pid_t pid;

        while (read(src->fd, &si, sizeof(si)) == sizeof(si))
                if (si.ssi_signo != SIGCHLD)
                        forward(sup, (int)si.ssi_signo);
        /* SIGCHLD coalesces: reap until nothing is pending. */
        while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
                ptrace_handle_status(sup, pid, status);
        return 0;
}

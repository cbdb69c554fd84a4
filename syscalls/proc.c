/*
 * Process family: calls that name another process, and fork accounting.
 *
 * The sandbox sees and touches only its own tree. A call that names a pid outside it gets
 * ESRCH, as if the process did not exist. The decision reads only registers, so answering
 * CONTINUE cannot be raced by another thread rewriting memory. Handlers run without the
 * tree's lock (notify.h) and take it around their look-ups only.
 *
 * What remains is pid reuse. A number in the tree designates the task we admitted (ptrace.c:
 * admission by pidfd, reaping and forgetting in one critical section), and the supervisor is
 * the tracer and the subreaper of the whole tree, so an exited task's number stays taken
 * until the main thread reaps it. For calls answered CONTINUE, the kernel acts on the number
 * after our answer: reuse by an outside process would need the target reaped in that window
 * and the whole pid space to wrap around in it. Where Landlock scopes signals (ABI 6) the
 * kernel judges the signal itself as well.
 */
#include "syscalls/net.h"
#include "supervisor/notify.h"
#include "supervisor/creds.h"
#include "supervisor/tmem.h"
#include "supervisor/tfd.h"
#include "supervisor/procscan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef IOPRIO_WHO_PROCESS
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP    2
#endif

static bool pid_in_tree(struct supervisor *sup, int64_t pid)
{
        if (pid <= 0 || pid > INT32_MAX)
                return false;
        /* Without ptrace (--allow-degraded) the tree is the sandbox's session. */
        if (!sup->layers.ptrace)
                return getsid((pid_t)pid) == sup->root;
        return tracee_find_live(&sup->tree, (pid_t)pid) != NULL;
}

/* pid 0 means "the caller" for most of these calls. */
static bool self_or_tree(struct supervisor *sup, int64_t pid)
{
        return pid == 0 || pid_in_tree(sup, pid);
}

struct group_search {
        pid_t pgid;
        bool found;
};

static void match_group(struct tracee *t, void *arg)
{
        struct group_search *g = arg;

        /* A number whose task is gone may be a host process's by now: skip it. */
        if (!g->found && tracee_alive(t) && getpgid(t->tid) == g->pgid)
                g->found = true;
}

/* A process group is the sandbox's when one of its tasks belongs to it. Groups live inside a
 * session, and the sandbox has a session of its own (the shim calls setsid). */
static bool group_in_tree(struct supervisor *sup, int64_t pgid)
{
        struct group_search g = {.pgid = (pid_t)pgid};

        if (pgid <= 0 || pgid > INT32_MAX)
                return false;
        if (!sup->layers.ptrace)
                return getsid((pid_t)pgid) == sup->root;
        tracee_foreach(&sup->tree, match_group, &g);
        return g.found;
}

/* kill(2): >0 one process, 0 own group, -1 every process we may signal, < -1 a group. */
static bool kill_target_ok(struct supervisor *sup, int64_t pid)
{
        pid = (int32_t)pid; /* pid_t argument: the upper half is ignored by the kernel */
        if (pid == 0)
                return true;
        if (pid == -1)
                return false; /* would reach every process of the user */
        return pid > 0 ? pid_in_tree(sup, pid) : group_in_tree(sup, -pid);
}

/* setpriority/getpriority and ioprio_set/get: (which, who). */
static bool which_who_ok(struct supervisor *sup, int64_t which, int64_t who, int process, int group)
{
        who = (int32_t)who;
        if (which == process)
                return self_or_tree(sup, who);
        if (which == group)
                return who == 0 || group_in_tree(sup, who);
        return false; /* PRIO_USER / IOPRIO_WHO_USER: every process of a user */
}

static bool target_ok(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        int64_t a0 = (int32_t)a[0], a1 = (int32_t)a[1];
        bool ok;

        switch ((int)(call->row - syscall_table)) { /* int: -Wswitch-enum would list every row */
        case SC_kill:
                ok = kill_target_ok(sup, a0);
                break;
        case SC_tkill:
                ok = pid_in_tree(sup, a0);
                break;
        case SC_tgkill:
        case SC_rt_tgsigqueueinfo:
                ok = pid_in_tree(sup, a0) && pid_in_tree(sup, a1);
                break;
        case SC_kcmp:
                ok = self_or_tree(sup, a0) && self_or_tree(sup, a1);
                break;
        case SC_setpriority:
        case SC_getpriority:
                ok = which_who_ok(sup, a0, a1, PRIO_PROCESS, PRIO_PGRP);
                break;
        case SC_ioprio_set:
        case SC_ioprio_get:
                ok = which_who_ok(sup, a0, a1, IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP);
                break;
        case SC_pidfd_open:
                /* pid <= 0 designates no process: the kernel answers EINVAL, as programs
                 * (Python's test_posix) expect, not the ESRCH of a process outside. */
                ok = a0 <= 0 || pid_in_tree(sup, a0);
                break;
        case SC_pidfd_getfd:
        case SC_process_madvise:
        case SC_process_mrelease:
                /* The kernel checks ptrace access for these, and the Landlock domain
                 * denies it across the sandbox's boundary. */
                ok = true;
                break;
        default:
                /* The first argument is a pid, 0 meaning the caller. */
                ok = self_or_tree(sup, a0);
                break;
        }
        return ok;
}

int proc_target(struct supervisor *sup, struct call *call)
{
        int64_t a0 = (int32_t)call->req->data.args[0];
        bool ok;

        pthread_mutex_lock(&sup->lock);
        ok = target_ok(sup, call);
        pthread_mutex_unlock(&sup->lock);
        if (ok) {
                call_continue(call);
                return 0;
        }
        trace_call_rule(call, "a process outside the sandbox's tree");
        call_deny(sup, call, a0 == -1 && call->row == &syscall_table[SC_kill] ? EPERM : ESRCH);
        return 0;
}

/* setsid: harmless with ptrace. Without it (--allow-degraded) the tree is the sandbox's
 * session, and a new session would leave it. */
int proc_setsid(struct supervisor *sup, struct call *call)
{
        if (sup->layers.ptrace)
                call_continue(call);
        else
                call_deny(sup, call, EPERM);
        return 0;
}

/* The process an fd of ours designates: a /proc/PID directory or a pidfd ("Pid:" in its
 * fdinfo), both of which pidfd_send_signal accepts. -1 for anything else. */
static pid_t fd_process(int fd)
{
        char path[64], target[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof(target) - 1);
        if (n > 6) {
                target[n] = '\0';
                if (strncmp(target, "/proc/", 6) == 0 &&
                    strspn(target + 6, "0123456789") == strlen(target + 6))
                        return (pid_t)strtol(target + 6, NULL, 10);
        }
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        return procscan_field(path, "Pid");
}

#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD       (1UL << 0)
#define PIDFD_SIGNAL_THREAD_GROUP (1UL << 1)
#endif

/* A copy of the caller's fd `fd`, taken with pidfd_getfd; -errno when it cannot be had (the
 * caller died, or we may not take its fds: then the handler must refuse, never guess). */
static int take_fd(struct supervisor *sup, struct call *call, int fd)
{
        /* The calling thread's fd (PIDFD_THREAD): a thread may have an fd table of its own,
         * and the leader's fd of the same number is another file (outside review 3). */
        int copy = tfd_take((pid_t)call->req->pid, fd);

        /* The caller is blocked in this call: if its notification is still valid, its tid was
         * not recycled before we took the fd. */
        if (copy >= 0 && tmem_id_valid(sup->listener, call->req->id) < 0) {
                close(copy);
                return -ESRCH;
        }
        return copy;
}

/* A SIGIO owner as F_GETOWN_EX reports it: is it nobody, or a task or group of the sandbox?
 * Under sup->lock. */
static bool sigio_owner_ok(struct supervisor *sup, const struct f_owner_ex *owner)
{
        if (owner->pid == 0)
                return true;
        switch (owner->type) {
        case F_OWNER_TID:
        case F_OWNER_PID:
                return pid_in_tree(sup, owner->pid);
        case F_OWNER_PGRP:
                return group_in_tree(sup, owner->pid);
        default:
                return false;
        }
}

/* fcntl(fd, F_SETOWN, owner), notified only where Landlock cannot scope signals (with the
 * scope, Landlock records that the sandbox set this owner and refuses it the signal): SIGIO,
 * or the F_SETSIG signal, will go to `owner`, a pid (> 0) or a group (< 0). */
static void fcntl_setown(struct supervisor *sup, struct call *call)
{
        int64_t arg = (int32_t)call->req->data.args[2];
        struct f_owner_ex owner = {.type = arg < 0 ? F_OWNER_PGRP : F_OWNER_PID,
                                   .pid = (pid_t)(arg < 0 ? -arg : arg)};
        bool ok;

        pthread_mutex_lock(&sup->lock);
        ok = arg != INT32_MIN && sigio_owner_ok(sup, &owner);
        pthread_mutex_unlock(&sup->lock);
        if (ok)
                call_continue(call); /* registers only */
        else {
                trace_call_rule(call, "SIGIO owner outside the sandbox's tree");
                call_deny(sup, call, EPERM);
        }
}

/* Does this call turn SIGIO on (O_ASYNC, FIOASYNC) rather than choose its signal? */
static bool turns_async_on(const struct call *call)
{
        return call->row == &syscall_table[SC_ioctl] || (int)call->req->data.args[1] == F_SETFL;
}

/*
 * The SIGIO family (review R4), notified whatever the Landlock ABI:
 *   fcntl(fd, F_SETSIG, sig), fcntl(fd, F_SETFL, flags with O_ASYNC), ioctl(fd, FIOASYNC, &on)
 * and, without the signal scope, fcntl(fd, F_SETOWN, owner).
 *
 * The signal these arm goes to the owner of the file DESCRIPTION, which is shared: a pipe or
 * socket the sandbox got as stdin from a host process, which made itself the owner. Landlock
 * judges the task that set the owner, here the host, so it lets SIGKILL through. We take a
 * copy of the caller's fd, read the owner with F_GETOWN_EX (numbers in our pid namespace),
 * and run the call ourselves on that copy only if there is none or it is a task or group of
 * the tree. (FIOASYNC's int is not judged: turning SIGIO off
 * on a host-owned description is refused too; the int is copied once and passed on).
 *
 * A terminal chooses an owner itself when SIGIO is turned on and it has none: its
 * foreground process group, which we cannot read for a terminal that is not ours. Landlock's
 * scope records the sandbox as the setter of that owner; without the scope we refuse.
 *
 * What stays open: the owner may change between our look-up and the kernel's call, and a
 * host process that makes itself the owner later gets the signal the sandbox chose. Both
 * are the host's own doing on a description it shares with the sandbox.
 */
/* Run the SIGIO call on our copy of the description (the very file we judged), as the
 * program: O_NOATIME among F_SETFL's flags is an owner's right. Returns 0 or -errno. */
static int sigio_perform(struct supervisor *sup, struct call *call, int fd, int on)
{
        const __u64 *a = call->req->data.args;
        struct creds_saved saved;
        int r = creds_enter(sup->cfg, &saved);

        if (r < 0)
                return r;
        if (call->row == &syscall_table[SC_ioctl])
                r = ioctl(fd, FIOASYNC, &on);
        else
                r = fcntl(fd, (int)a[1], (int)a[2]);
        r = r < 0 ? -errno : 0;
        creds_leave(&saved);
        return r;
}

int proc_sigio(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct f_owner_ex owner = {0};
        bool tty, ok;
        int fd, on = 0, r = 0;

        if (call->row == &syscall_table[SC_fcntl] && (int)a[1] == F_SETOWN) {
                fcntl_setown(sup, call);
                return 0;
        }
        /* The ioctl row's other notified commands: the interface ones (net_ifreq.c). */
        if (call->row == &syscall_table[SC_ioctl] && net_ifreq_cmd((unsigned)a[1]))
                return net_ifreq(sup, call);
        /* FIOASYNC's int, copied once before the ID_VALID check of take_fd. */
        if (call->row == &syscall_table[SC_ioctl])
                r = tmem_read((pid_t)call->req->pid, a[2], &on, sizeof(on));
        fd = r < 0 ? r : take_fd(sup, call, (int)a[0]);
        if (fd < 0) {
                call_fail(call, -fd); /* EBADF for a bad fd, EFAULT, as the kernel would say */
                return 0;
        }
        ok = fcntl(fd, F_GETOWN_EX, &owner) == 0;
        tty = ok && owner.pid == 0 && turns_async_on(call) && !sup->fopts.signals_scoped &&
              isatty(fd);
        pthread_mutex_lock(&sup->lock);
        ok = ok && !tty && sigio_owner_ok(sup, &owner);
        pthread_mutex_unlock(&sup->lock);
        /* Emulated, never CONTINUE: the kernel would look the fd number up again, and another
         * thread may have put another file there since (dup2), or the caller's fd table may
         * not be the one a leader-wide look-up sees. */
        if (ok)
                r = sigio_perform(sup, call, fd, on);
        close(fd); /* after the lock: it may be the last reference of a lingering socket */
        if (ok) {
                if (r < 0)
                        call_fail(call, -r);
                else
                        call_return(call, 0);
                return 0;
        }
        trace_call_rule(call, tty ? "SIGIO on a terminal whose owner we cannot judge"
                                  : "SIGIO owner outside the sandbox's tree");
        call_deny(sup, call, EPERM);
        return 0;
}

/*
 * pidfd_send_signal(fd, sig, info, flags), notified only where Landlock cannot scope signals
 * (ABI < 6; with it the kernel judges the call). The fd may be a /proc/PID directory that no
 * pidfd_open preceded, so the decision needs the fd itself: we take a copy out of the caller,
 * read which number it designates, and send through our copy while holding the tree's lock.
 * Under the lock a number in the tree is the task we admitted, and a live process has a
 * number no other live process has; an fd whose process has died designates no one (the
 * kernel answers ESRCH) even if the number has been reused since. So the signal reaches a
 * task of the tree or nobody. Flags we do not know (PIDFD_SIGNAL_PROCESS_GROUP among them)
 * are refused; a caller-built siginfo is refused rather than forged. Our copy is closed after
 * the lock is released: it may be the last reference to a lingering socket.
 */
int proc_pidfd_signal(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        unsigned flags = (unsigned)a[3];
        pid_t target;
        int fd, r;

        if (a[2] || (flags & ~(PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP))) {
                call_deny(sup, call, a[2] ? EPERM : EINVAL);
                return 0;
        }
        fd = take_fd(sup, call, (int)a[0]);
        if (fd < 0) {
                call_fail(call, -fd);
                return 0;
        }
        target = fd_process(fd);
        pthread_mutex_lock(&sup->lock);
        if (target < 0)
                r = -EBADF;
        else if (!pid_in_tree(sup, target) && !sup->fopts.audit)
                r = -ESRCH;
        else
                r = syscall(SYS_pidfd_send_signal, fd, (int)a[1], NULL, flags) < 0 ? -errno : 0;
        pthread_mutex_unlock(&sup->lock);
        close(fd);
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
        return 0;
}

/* fork, vfork and clone are notified only under --max-procs: count, then let the kernel do
 * it. The caller must be in the tree: a task enters it only at its ptrace events, never from
 * here (ptrace.c), and one we do not know is refused. */
int proc_clone(struct supervisor *sup, struct call *call)
{
        uint64_t max = sup->cfg->limits.max_procs;
        struct tracee *t;
        bool ok;

        if (!sup->layers.ptrace) {
                /* No fork event settles a pending fork: count the session in /proc, where a
                 * finished fork's child already is (forks in flight at once may overshoot). */
                ok = !max || (uint64_t)procscan_session_tasks(sup->root) < max;
        } else {
                pthread_mutex_lock(&sup->lock);
                t = tracee_find(&sup->tree, (pid_t)call->req->pid);
                ok = t && (!max || sup->tree.live + sup->tree.pending < max);
                if (ok && !t->pending_clone) {
                        t->pending_clone = true;
                        sup->tree.pending++;
                }
                pthread_mutex_unlock(&sup->lock);
        }
        if (!ok) {
                sup->n.forks_refused++;
                trace_call_rule(call, "max-procs");
                trace_call_limit(call, "max-procs", max);
                call_fail(call, EAGAIN);
                return 0;
        }
        call_continue(call);
        return 0;
}

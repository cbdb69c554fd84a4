/*
 * The hot path. One notification is a straight line:
 *   receive -> look up the row -> (audit check) -> handler -> respond.
 * It runs on several threads, each blocked in NOTIF_RECV (see sup.h for why), without the
 * tree's lock: a handler that blocks stalls its own caller only. Nothing here allocates or
 * reads /proc; the buffers are sized once at start.
 */
#include "supervisor/notify.h"
#include "syscalls/net.h"
#include "supervisor/creds.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

/* The signal that interrupts a notifier thread (glibc keeps SIGRTMIN's first few). */
#define NOTIFY_WAKE (SIGRTMIN + 1)

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

void call_continue(struct call *call)
{
        call->resp->val = 0;
        call->resp->error = 0;
        call->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
}

void call_return(struct call *call, int64_t val)
{
        call->resp->val = val;
        call->resp->error = 0;
        call->resp->flags = 0;
}

void call_fail(struct call *call, int errnum)
{
        call->resp->val = 0;
        call->resp->error = -errnum;
        call->resp->flags = 0;
}

__thread bool notify_own_fs;

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

/*
 * ADDFD wakes the caller to install the fd with an ordinary wake-up, not the synchronous one
 * the answer gets: the kernel puts the caller on an idle CPU rather than behind the
 * notifier thread that is about to wait for it, and then wakes that thread on the CPU the
 * caller left. On a VM where an idle CPU is a halted one, waking it costs tens of
 * microseconds: open+fstat+close took 55-60 us an iteration on session 10's 2-core VM, 27 us
 * with everything on one CPU. So for the install, the caller and this thread may be held on
 * the CPU they share (the synchronous wake-up that brought the notification put us on the
 * caller's): the caller runs there as soon as we wait, we run there as soon as it has
 * installed. Measured there: 33-36 us. Both masks are put back before the answer, and the
 * caller is blocked in its system call all the while: it runs no code of its own with the
 * narrow mask. We narrow only to a CPU its mask holds and put back what we read; a mask
 * another thread of the program gives it within those microseconds is lost (as between two
 * threads setting it at once). The caller is named by its tid: the notification is checked
 * alive just before, and a tid taken over by another process in the microseconds after would
 * only be narrowed and given back its own mask. Where a mask cannot be read or set nothing is
 * held, and the install is only slower.
 *
 * Whether the hold pays depends on the machine: its five affinity calls cost ~7 us where a
 * system call costs ~1 us, and on session 15's VM, whose idle CPUs wake cheaply, the
 * iteration was 66-72 us held against 58-65 us not (59-70 against 85-92 with a build running
 * beside: the shared CPU was a busy one). So each run measures: its first installs alternate
 * held and not, and once PIN_TRIALS of each are timed, the faster median is kept.
 */
struct pin {
        cpu_set_t caller;
        pid_t tid;
        bool held;
};

enum { PIN_TRIALS = 15 };

static struct {
        pthread_mutex_t lock;
        _Atomic int choice; /* 0 still measuring, 1 hold, -1 do not */
        unsigned n[2];      /* [held] samples taken */
        double us[2][PIN_TRIALS];
        unsigned turn;
} pinning = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread cpu_set_t own_mask;
static __thread bool own_mask_read;

static double now_us(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Whether to hold this install: the choice, or while measuring, every other one. */
static bool pin_wanted(void)
{
        int c = atomic_load(&pinning.choice);
        bool held;

        if (c)
                return c > 0;
        pthread_mutex_lock(&pinning.lock);
        held = pinning.turn++ & 1;
        pthread_mutex_unlock(&pinning.lock);
        return held;
}

/* One install's time, held or not; the choice once both have PIN_TRIALS. */
static void pin_sample(bool held, double us)
{
        pthread_mutex_lock(&pinning.lock);
        if (!atomic_load(&pinning.choice) && pinning.n[held] < PIN_TRIALS)
                pinning.us[held][pinning.n[held]++] = us;
        if (!atomic_load(&pinning.choice) && pinning.n[0] == PIN_TRIALS &&
            pinning.n[1] == PIN_TRIALS) {
                qsort(pinning.us[0], PIN_TRIALS, sizeof(double), by_value);
                qsort(pinning.us[1], PIN_TRIALS, sizeof(double), by_value);
                atomic_store(&pinning.choice,
                             pinning.us[1][PIN_TRIALS / 2] < pinning.us[0][PIN_TRIALS / 2] ? 1
                                                                                           : -1);
        }
        pthread_mutex_unlock(&pinning.lock);
}

int notify_pin_choice(double *held_us, double *free_us)
{
        int c = atomic_load(&pinning.choice);

        if (c) {
                *held_us = pinning.us[1][PIN_TRIALS / 2];
                *free_us = pinning.us[0][PIN_TRIALS / 2];
        }
        return c;
}

static void pin_hold(struct supervisor *sup, struct call *call, struct pin *p)
{
        pid_t tid = (pid_t)call->req->pid;
        cpu_set_t one;
        int cpu = sched_getcpu();

        p->held = false;
        p->tid = tid;
        if (!own_mask_read) {
                if (sched_getaffinity(0, sizeof(own_mask), &own_mask) < 0)
                        return;
                own_mask_read = true;
        }
        if (cpu < 0 || !CPU_ISSET(cpu, &own_mask) ||
            tmem_id_valid(sup->listener, call->req->id) < 0 ||
            sched_getaffinity(tid, sizeof(p->caller), &p->caller) < 0 ||
            !CPU_ISSET(cpu, &p->caller))
                return;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(tid, sizeof(one), &one) < 0)
                return;
        if (sched_setaffinity(0, sizeof(one), &one) < 0) {
                sched_setaffinity(tid, sizeof(p->caller), &p->caller);
                return;
        }
        p->held = true;
}

static void pin_release(struct pin *p)
{
        int e = errno;

        if (!p->held)
                return;
        sched_setaffinity(0, sizeof(own_mask), &own_mask);
        sched_setaffinity(p->tid, sizeof(p->caller), &p->caller); /* ESRCH: it died */
        errno = e;
}

/* SECCOMP_IOCTL_NOTIF_ADDFD, with the caller held on our CPU where that pays (above). */
static int addfd(struct supervisor *sup, struct call *call, struct seccomp_notif_addfd *a)
{
        bool want = pin_wanted(), measuring = !atomic_load(&pinning.choice);
        double t0 = measuring ? now_us() : 0;
        struct pin p = {.held = false};
        int r;

        if (want)
                pin_hold(sup, call, &p);
        r = ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ADDFD, a);
        pin_release(&p);
        if (measuring && r >= 0 && want == p.held)
                pin_sample(p.held, now_us() - t0);
        return r;
}

int call_return_fd(struct supervisor *sup, struct call *call, int fd, bool cloexec)
{
        struct seccomp_notif_addfd addfd_req = {
                .id = call->req->id, .srcfd = (__u32)fd, .newfd_flags = cloexec ? O_CLOEXEC : 0};
        int r;

        /*
         * Where the kernel has WAIT_KILLABLE_RECV and SYNC_WAKE_UP, the fd is installed first
         * (above) and the answer sent after, synchronously: nothing but a fatal signal ends
         * the caller's wait between the two, so no signal can restart the call after the
         * install and leave a stray fd in the program. ADDFD_FLAG_SEND, which answers with
         * the install, would let the caller return to its program on the CPU it was woken
         * on, while we are woken elsewhere: 64-127 us an iteration on the 2-core VM.
         * Elsewhere FLAG_SEND is the safe way.
         */
        if (!sup->layers.wait_killable_recv || !sup->layers.sync_wake_up) {
                addfd_req.flags = SECCOMP_ADDFD_FLAG_SEND;
                r = ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd_req);
                if (r >= 0) {
                        call_return(call, r); /* for the trace: the kernel has the answer */
                        call->sent = true;
                        return 0;
                }
                if (errno != EINVAL)
                        return -errno;
                addfd_req.flags = 0; /* before 5.14 */
        }
        r = addfd(sup, call, &addfd_req);
        if (r < 0)
                return -errno;
        call_return(call, r);
        return 0;
}

#ifndef SECCOMP_ADDFD_FLAG_SETFD
#define SECCOMP_ADDFD_FLAG_SETFD (1UL << 0)
#endif

int call_replace_fd(struct supervisor *sup, struct call *call, int fd, int target, bool cloexec)
{
        struct seccomp_notif_addfd addfd_req = {.id = call->req->id,
                                                .flags = SECCOMP_ADDFD_FLAG_SETFD,
                                                .srcfd = (__u32)fd,
                                                .newfd = (__u32)target,
                                                .newfd_flags = cloexec ? O_CLOEXEC : 0};

        /*
         * Not ADDFD_FLAG_SEND: the call's answer is 0, not the fd number. And not held on our
         * CPU (addfd): the callers are the network's (a connect, a UDP socket's first send out
         * of the namespace; syscalls/net_*.c), which have just woken a peer from this thread,
         * and there the hold's affinity calls (~7-10 us on the 2-core VM) cost more than the
         * wake-ups they save: a connect loop through a host twin took 72 us an iteration
         * without, 80-83 us with (interleaved runs of bench/net.sh's connect loop).
         */
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd_req) < 0)
                return -errno;
        call_return(call, 0);
        return 0;
}

bool notify_set_sync_wake_up(int listener)
{
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) ==
               0;
}

int notify_init(struct supervisor *sup)
{
        struct seccomp_notif_sizes sizes;

        if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
                return -errno;
        /* The kernel's structs may be larger than ours; never smaller. */
        sup->req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
                                ? sizes.seccomp_notif
                                : sizeof(struct seccomp_notif);
        sup->resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                                 ? sizes.seccomp_notif_resp
                                 : sizeof(struct seccomp_notif_resp);
        pthread_mutex_init(&sup->grow, NULL);
        return 0;
}

void notify_free(struct supervisor *sup)
{
        for (size_t i = 0; i < ARRAY_SIZE(sup->notifiers); i++) {
                free(sup->notifiers[i].req);
                free(sup->notifiers[i].resp);
                free(sup->notifiers[i].tc);
                sup->notifiers[i].tc = NULL;
                sup->notifiers[i].req = NULL;
                sup->notifiers[i].resp = NULL;
        }
}

/* Counted by kind; printed once per kind with -v, every time with -vv (audit.c). */
static void report_would_deny(struct supervisor *sup, struct call *call, uint32_t action)
{
        sup->n.would_deny++;
        audit_note(sup, call, action);
}

void call_deny(struct supervisor *sup, struct call *call, int errnum)
{
        if (!sup->fopts.audit) {
                if (call->tc)
                        call->tc->denied = true;
                call_fail(call, errnum);
                return;
        }
        if (call->tc)
                call->tc->would_deny = true;
        report_would_deny(sup, call, SECCOMP_RET_ERRNO | (uint32_t)errnum);
        call_continue(call); /* handlers deny on registers or on their own copies */
}

/* Audit mode: a call that enforce mode would deny arrives here as a notification. */
static bool audit_intercept(struct supervisor *sup, struct call *call)
{
        struct filter_opts enforce = sup->fopts;
        uint32_t action;

        enforce.audit = false;
        enforce.trace_all = false;
        action = filter_decide(&enforce, &call->req->data);
        if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF ||
            (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)
                return false;
        report_would_deny(sup, call, action);
        if (call->tc) {
                call->tc->would_deny = true;
                call->tc->rule = "filter";
        }
        call_continue(call); /* registers only: nothing was read from the program's memory */
        return true;
}

/*
 * --trace-level all: the filter notifies what it would have decided in the kernel. Decide it
 * the same way here, from the registers only, so that answering CONTINUE reads nothing of
 * the program's memory (DESIGN.md). Returns true when the call was answered.
 */
static bool kernel_decided(struct supervisor *sup, struct call *call)
{
        struct filter_opts real = sup->fopts;
        uint32_t action;

        real.trace_all = false;
        action = filter_decide(&real, &call->req->data);
        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_ALLOW:
                call_continue(call);
                if (call->tc)
                        call->tc->rule = "kernel";
                return true;
        case SECCOMP_RET_ERRNO:
                call_fail(call, (int)(action & SECCOMP_RET_DATA));
                if (call->tc) {
                        call->tc->denied = true;
                        call->tc->rule = "filter";
                }
                return true;
        default:
                return false; /* notified anyway: the handler decides */
        }
}

static void dispatch(struct supervisor *sup, struct call *call)
{
        call->resp->id = call->req->id;
        call->row = syscall_lookup(call->req->data.arch, call->req->data.nr);
        if (sup->fopts.count_procs) {
                /* A task that asks again has finished the fork it was approved for. */
                pthread_mutex_lock(&sup->lock);
                tracee_settle_clone(&sup->tree, tracee_find(&sup->tree, (pid_t)call->req->pid));
                pthread_mutex_unlock(&sup->lock);
        }

        if (sup->fopts.trace_all && kernel_decided(sup, call))
                return;
        if (sup->fopts.audit && audit_intercept(sup, call))
                return;
        if (!call->row || !call->row->handler) {
                /* We never asked for this one: fail closed. */
                if (call->tc)
                        call->tc->denied = true;
                call_fail(call, ENOSYS);
                return;
        }
        call->row->handler(sup, call);
}

static int start_notifier(struct supervisor *sup);

/* The sandbox is gone: no task uses the filter. Its notifier threads then end rather than
 * spin on ENOENT while the main thread reaps (measured: 700 failed receives and 2 busy CPUs
 * for a /bin/true, its teardown several ms slower). */
static bool listener_hung_up(int listener)
{
        struct pollfd p = {.fd = listener, .events = POLLIN};

        return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* One notification. Returns 0, 1 when the sandbox is gone, or -errno for a failure that
 * ends the run. */
static int notify_one(struct notifier *nt)
{
        struct supervisor *sup = nt->sup;
        struct call call = {.req = nt->req, .resp = nt->resp, .tc = sup->trace ? nt->tc : NULL};
        int r = 0;

        memset(nt->req, 0, sup->req_size);
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_RECV, nt->req) < 0) {
                /* EINTR: woken to stop, or any signal; ENOENT: the task died between the
                 * wake-up and the receive — or no task uses the filter any more, and then
                 * the kernel answers ENOENT at once, forever: the listener hangs up. */
                if (errno == ENOENT && listener_hung_up(sup->listener))
                        return 1;
                return errno == ENOENT || errno == EINTR ? 0 : -errno;
        }
        /* Every thread busy (this one included): the next call would wait for one of them,
         * which may be blocked for good. Start another first. At least as many busy as
         * counted, not exactly: a thread just started takes calls before its starter has
         * counted it, and an exact test then missed it for good (an outside tester froze the
         * sandbox with 30 threads blocked in connect). start_notifier looks again. */
        if (atomic_fetch_add(&sup->busy, 1) + 1 >= atomic_load(&sup->n_notifiers))
                start_notifier(sup); /* at the cap, or out of memory: go on with what we have */
        memset(nt->resp, 0, sup->resp_size);
        call.seq = ++sup->n.notifications;
        if (call.tc)
                trace_call_begin(call.tc);
        dispatch(sup, &call);
        atomic_fetch_add(&sup->n.handled, 1);
        if (call.tc) {
                trace_call_answering(sup, &call);
                if (trace_wants_backtrace(sup, &call))
                        trace_bt_request(sup, &call); /* before the answer: see trace.c */
        }
        /* Free before the answer: the caller's next call can arrive the moment it is sent,
         * and must not find this thread still counted busy (the pool would grow for
         * nothing, and more threads mean wake-ups across CPUs). */
        atomic_fetch_sub(&sup->busy, 1);
        if (!call.sent && ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_SEND, nt->resp) < 0 &&
            errno != ENOENT)
                r = -errno;
        else if (call.tc)
                trace_call_end(sup, (unsigned)(nt - sup->notifiers), &call);
        return r;
}

static void *notifier_main(void *arg)
{
        struct notifier *nt = arg;
        struct supervisor *sup = nt->sup;
        sigset_t wake;
        int r = 0;

        /* NOTIFY_WAKE is how notify_stop() interrupts a blocked NOTIF_RECV (or a blocked
         * close). Not SIGUSR1: that one is the user's, passed on to the sandbox. */
        sigemptyset(&wake);
        sigaddset(&wake, NOTIFY_WAKE);
        pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
        /* A umask and a working directory of this thread's own: files it creates for the
         * program take the program's umask (fs_open.c), without touching other threads. */
        notify_own_fs = unshare(CLONE_FS) == 0;
        creds_thread_init(sup->cfg);
        while (!atomic_load(&sup->stopping) && r == 0)
                r = notify_one(nt);
        tfd_forget();
        net_thread_forget();
        if (r == 1)
                return NULL; /* nothing left to answer */
        if (r < 0 && !atomic_load(&sup->stopping)) {
                sup->notifier_error = r;
                sup_kill_tree(sup); /* fail closed: nobody answers the sandbox any more */
        }
        return NULL;
}

static void on_wake(int sig)
{
}

/* Start one more notifier thread, unless at the cap or (`when_busy`) some thread is free again
 * (two callers that saw all busy start one, not two). Returns 0 or -errno. */
static int start_one(struct supervisor *sup, bool when_busy)
{
        struct notifier *nt;
        unsigned n;
        int r = 0;

        pthread_mutex_lock(&sup->grow);
        n = atomic_load(&sup->n_notifiers);
        if (n >= ARRAY_SIZE(sup->notifiers) || atomic_load(&sup->stopping) ||
            (when_busy && atomic_load(&sup->busy) < n)) {
                pthread_mutex_unlock(&sup->grow);
                return -EAGAIN;
        }
        nt = &sup->notifiers[n];
        nt->sup = sup;
        if (!nt->req) {
                nt->req = xcalloc(1, sup->req_size);
                nt->resp = xcalloc(1, sup->resp_size);
                nt->tc = xcalloc(1, sizeof(struct trace_call));
        }
        r = -pthread_create(&nt->thread, NULL, notifier_main, nt);
        if (r == 0) {
                nt->started = true;
                atomic_store(&sup->n_notifiers, n + 1);
        }
        pthread_mutex_unlock(&sup->grow);
        return r;
}

static int start_notifier(struct supervisor *sup)
{
        return start_one(sup, true);
}

int notify_start(struct supervisor *sup)
{
        /* No SA_RESTART: the ioctl must return EINTR. */
        struct sigaction sa = {.sa_handler = on_wake};
        int r;

        sigemptyset(&sa.sa_mask);
        if (sigaction(NOTIFY_WAKE, &sa, NULL) < 0)
                return -errno;
        for (int i = 0; i < STOCKADE_NOTIFIERS; i++) {
                r = start_one(sup, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void deadline_after(struct timespec *ts, long ms)
{
        clock_gettime(CLOCK_REALTIME, ts);
        ts->tv_sec += ms / 1000;
        ts->tv_nsec += (ms % 1000) * 1000000;
        if (ts->tv_nsec >= 1000000000) {
                ts->tv_sec++;
                ts->tv_nsec -= 1000000000;
        }
}

bool notify_stop(struct supervisor *sup)
{
        struct timespec ts, end;
        bool all = true;

        /* Under `grow`: no thread starts once we look at the count. */
        pthread_mutex_lock(&sup->grow);
        atomic_store(&sup->stopping, true);
        pthread_mutex_unlock(&sup->grow);
        deadline_after(&end, 2000);
        for (size_t i = 0; i < atomic_load(&sup->n_notifiers); i++) {
                struct notifier *nt = &sup->notifiers[i];

                /* The signal may land just before the thread blocks again: repeat. */
                while (nt->started) {
                        pthread_kill(nt->thread, NOTIFY_WAKE);
                        deadline_after(&ts, 10);
                        if (pthread_timedjoin_np(nt->thread, NULL, &ts) == 0)
                                nt->started = false;
                        else if (ts.tv_sec > end.tv_sec ||
                                 (ts.tv_sec == end.tv_sec && ts.tv_nsec >= end.tv_nsec))
                                break;
                }
                all = all && !nt->started;
        }
        return all;
}

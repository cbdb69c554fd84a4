/*
 * The hot path. One notification is a straight line:
 *   receive -> look up the row -> (audit check) -> handler -> respond.
 * It runs on a thread of its own, blocked in NOTIF_RECV (see sup.h for why). Nothing here
 * allocates or reads /proc; the buffers are sized once at start.
 */
#include "supervisor/notify.h"
#include "supervisor/util.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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
        sup->req_size =
                sizes.seccomp_notif > sizeof(*sup->req) ? sizes.seccomp_notif : sizeof(*sup->req);
        sup->resp_size = sizes.seccomp_notif_resp > sizeof(*sup->resp) ? sizes.seccomp_notif_resp
                                                                       : sizeof(*sup->resp);
        sup->req = xcalloc(1, sup->req_size);
        sup->resp = xcalloc(1, sup->resp_size);
        return 0;
}

static void report_would_deny(struct supervisor *sup, struct call *call, uint32_t action)
{
        char buf[48];
        const struct seccomp_data *d = &call->req->data;

        sup->n.would_deny++;
        if (sup->cfg->verbose)
                fprintf(stderr,
                        "stockade: audit: pid %u would be denied %s(%#llx, %#llx, %#llx): %s\n",
                        call->req->pid, call->row ? call->row->name : "?",
                        (unsigned long long)d->args[0], (unsigned long long)d->args[1],
                        (unsigned long long)d->args[2],
                        filter_action_name(action, buf, sizeof(buf)));
}

void call_deny(struct supervisor *sup, struct call *call, int errnum)
{
        if (!sup->fopts.audit) {
                call_fail(call, errnum);
                return;
        }
        report_would_deny(sup, call, SECCOMP_RET_ERRNO | (uint32_t)errnum);
        call_continue(call); /* handlers deny on registers or on their own copies */
}

/* Audit mode: a call that enforce mode would deny arrives here as a notification. */
static bool audit_intercept(struct supervisor *sup, struct call *call)
{
        struct filter_opts enforce = sup->fopts;
        uint32_t action;

        enforce.audit = false;
        action = filter_decide(&enforce, &call->req->data);
        if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF ||
            (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)
                return false;
        report_would_deny(sup, call, action);
        call_continue(call); /* registers only: nothing was read from the program's memory */
        return true;
}

static void dispatch(struct supervisor *sup, struct call *call)
{
        call->resp->id = call->req->id;
        call->row = syscall_lookup(call->req->data.arch, call->req->data.nr);
        call->t = tracee_find(&sup->tree, (pid_t)call->req->pid);
        /* A task that asks again has finished the fork it was approved for. */
        tracee_settle_clone(&sup->tree, call->t);

        if (sup->fopts.audit && audit_intercept(sup, call))
                return;
        if (!call->row || !call->row->handler) {
                /* We never asked for this one: fail closed. */
                call_fail(call, ENOSYS);
                return;
        }
        call->row->handler(sup, call);
}

/* One notification, under the lock. Returns 0 or -errno for a failure that ends the run. */
static int notify_one(struct supervisor *sup)
{
        struct call call = {.req = sup->req, .resp = sup->resp};

        memset(sup->req, 0, sup->req_size);
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_RECV, sup->req) < 0)
                /* EINTR: woken to stop, or any signal; ENOENT: the task died between the
                 * wake-up and the receive. */
                return errno == ENOENT || errno == EINTR ? 0 : -errno;
        memset(sup->resp, 0, sup->resp_size);
        pthread_mutex_lock(&sup->lock);
        sup->n.notifications++;
        dispatch(sup, &call);
        pthread_mutex_unlock(&sup->lock);
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_SEND, sup->resp) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static void *notifier_main(void *arg)
{
        struct supervisor *sup = arg;
        sigset_t wake;
        int r = 0;

        /* SIGUSR1 is how notify_stop() interrupts a blocked NOTIF_RECV. */
        sigemptyset(&wake);
        sigaddset(&wake, SIGUSR1);
        pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
        while (!atomic_load(&sup->stopping) && r == 0)
                r = notify_one(sup);
        if (r < 0 && !atomic_load(&sup->stopping)) {
                sup->notifier_error = r;
                pthread_mutex_lock(&sup->lock);
                sup_kill_tree(sup); /* fail closed: nobody answers the sandbox any more */
                pthread_mutex_unlock(&sup->lock);
        }
        return NULL;
}

static void on_wake(int sig)
{
}

int notify_start(struct supervisor *sup)
{
        /* No SA_RESTART: the ioctl must return EINTR. */
        struct sigaction sa = {.sa_handler = on_wake};
        int r;

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) < 0)
                return -errno;
        r = pthread_create(&sup->notifier, NULL, notifier_main, sup);
        if (r)
                return -r;
        sup->notifier_started = true;
        return 0;
}

void notify_stop(struct supervisor *sup)
{
        struct timespec ts;

        if (!sup->notifier_started)
                return;
        atomic_store(&sup->stopping, true);
        /* The signal may land just before the thread blocks again: repeat until it ends. */
        do {
                pthread_kill(sup->notifier, SIGUSR1);
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 10 * 1000 * 1000;
                if (ts.tv_nsec >= 1000000000) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000;
                }
        } while (pthread_timedjoin_np(sup->notifier, NULL, &ts) == ETIMEDOUT);
        sup->notifier_started = false;
}

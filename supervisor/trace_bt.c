/*
 * User-space backtraces of denied calls (--backtrace denied, the default), in three steps:
 *
 * 1. Ask (a notifier, trace_bt_request): before answering the call, the notifier asks the main
 *    thread — the tracer, the only thread ptrace answers — to PTRACE_INTERRUPT the caller, so
 *    that it stops as the call returns, with the registers of the call site.
 * 2. Stop (the main thread, trace_bt_stopped): at that stop it takes the registers, opens
 *    /proc/TID (O_PATH) and hands the job to the unwinder thread. It does not wait: the task
 *    stays stopped, and the loop goes on (the timeout, other tasks, signals).
 * 3. Unwind (the unwinder thread, trace_unwind.c): reads the task's memory and maps through
 *    that directory, and opens a mapped file only if it provably is the mapped one, with the
 *    program's rights. When it
 *    is done, the main thread records the backtrace and resumes the task. If it is not done
 *    within BT_DEADLINE_MS, the main thread resumes the task anyway and records a backtrace
 *    that says it gave up; the unwinder's late result is thrown away.
 *
 * Why a thread of its own rather than the main thread (as before, outside review R3): the
 * unwinder reads what a hostile program controls — its memory, the files it mapped — and
 * however careful the opens, a read can still block (a file on a hung network filesystem).
 * A blocked unwinder must cost backtraces, never the timeout nor the teardown. A stuck
 * unwinder is left behind at the end (trace_bt_finish), with its memory and fds.
 */
#include "supervisor/trace_int.h"
#include "supervisor/creds.h"
#include "supervisor/notify.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* ---- the unwinder thread ---------------------------------------------------------------- */

#define BT_JOBS        8
#define BT_DEADLINE_MS 500

enum bt_state {
        BT_FREE,
        BT_QUEUED,    /* handed over; the task is stopped */
        BT_RUNNING,   /* the unwinder works on it; only it touches the job */
        BT_DONE,      /* to record, then resume the task (main thread) */
        BT_ABANDONED, /* the task was resumed or died while it ran: the unwinder frees it */
};

/* Allocated apart from struct trace, and never freed while its thread may still run. */
struct bt_worker {
        pthread_mutex_t mu;
        pthread_cond_t work;
        bool stop, ready;
        bool files; /* the thread took the program's rights: it may open mapped files */
        pthread_t thread;
        int done_fd; /* eventfd, written by the thread, read by the main thread */
        struct bt_slot {
                enum bt_state state;
                uint64_t deadline; /* CLOCK_MONOTONIC ns */
                struct bt_job job;
        } slots[BT_JOBS];
};

static void *unwinder_main(void *arg)
{
        struct bt_worker *w = arg;
        uint64_t one = 1;

        for (;;) {
                struct bt_slot *s = NULL;

                pthread_mutex_lock(&w->mu);
                while (!w->stop && !s) {
                        for (int i = 0; i < BT_JOBS; i++)
                                if (w->slots[i].state == BT_QUEUED &&
                                    (!s || w->slots[i].deadline < s->deadline))
                                        s = &w->slots[i];
                        if (!s && !w->stop)
                                pthread_cond_wait(&w->work, &w->mu);
                }
                if (!s) {
                        pthread_mutex_unlock(&w->mu);
                        return NULL;
                }
                s->state = BT_RUNNING;
                pthread_mutex_unlock(&w->mu);

                trace_unwind(&s->job);
                close(s->job.proc_fd);

                pthread_mutex_lock(&w->mu);
                s->state = s->state == BT_ABANDONED ? BT_FREE : BT_DONE;
                pthread_mutex_unlock(&w->mu);
                (void)!write(w->done_fd, &one, sizeof(one));
        }
}

/* The unwinder has the program's rights for good (creds.c: fs ids, groups, no effective
 * capabilities): a file it opens is one the program could open. If that cannot be arranged,
 * it opens no file at all (frames without names). */
static void *unwinder_start(void *arg)
{
        struct bt_worker *w = ((void **)arg)[0];
        const struct config *cfg = ((void **)arg)[1];
        struct creds_saved saved;
        bool files = creds_enter(cfg, &saved) == 0;

        pthread_mutex_lock(&w->mu);
        w->files = files;
        w->ready = true;
        pthread_cond_broadcast(&w->work);
        pthread_mutex_unlock(&w->mu);
        free(arg);
        return unwinder_main(w);
}

/* ---- the main thread: hand over, record, resume ------------------------------------------ */

static void record(struct trace *t, const struct bt_job *job, const char *error)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Backtrace bt = STOCKADE__TRACE__BACKTRACE__INIT;
        Stockade__Trace__Frame frames[BT_FRAMES], *pf[BT_FRAMES];

        bt.id = job->id;
        bt.tid = (uint32_t)job->tid;
        bt.frames = pf;
        for (unsigned i = 0; !error && i < job->n_frames && i < BT_FRAMES; i++) {
                stockade__trace__frame__init(&frames[i]);
                frames[i].ip = job->frames[i].ip;
                if (job->frames[i].function[0]) {
                        frames[i].function = (char *)job->frames[i].function;
                        frames[i].offset = job->frames[i].offset;
                }
                frames[i].object = (char *)job->frames[i].object;
                pf[bt.n_frames++] = &frames[i];
        }
        bt.truncated = !error && job->truncated;
        bt.error = (char *)(error ? error : job->error);
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_BACKTRACE;
        rec.backtrace = &bt;
        trace_push_record(t, TRACE_MAIN, &rec, 0, 0);
}

/* Arm the deadline timer for the earliest job still out. Under w->mu. */
static void arm(struct trace *t)
{
        struct itimerspec its = {0};
        uint64_t first = 0;

        for (int i = 0; i < BT_JOBS; i++) {
                const struct bt_slot *s = &t->unwinder->slots[i];

                if ((s->state == BT_QUEUED || s->state == BT_RUNNING) &&
                    (!first || s->deadline < first))
                        first = s->deadline;
        }
        its.it_value.tv_sec = (time_t)(first / 1000000000u);
        its.it_value.tv_nsec = (long)(first % 1000000000u);
        timerfd_settime(t->bt_late_src.fd, TFD_TIMER_ABSTIME, &its, NULL); /* 0: disarm */
}

bool trace_bt_stopped(struct supervisor *sup, pid_t tid, uint64_t id)
{
        struct trace *t = sup->trace;
        struct bt_worker *w = t ? t->unwinder : NULL;
        struct bt_job job = {.tid = tid, .id = id, .proc_fd = -1};
        struct bt_slot *s = NULL;
        char path[64];

        if (!w)
                return false;
        if (ptrace(PTRACE_GETREGS, tid, 0, &job.regs) < 0)
                return false; /* gone (killed while stopped) */
        /* Only the directory: opening mem or maps waits for the task's exec_update_lock, which
         * a sibling in execve may hold as long as it likes. The unwinder opens them. */
        snprintf(path, sizeof(path), "/proc/%d", (int)tid);
        job.proc_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        pthread_mutex_lock(&w->mu);
        for (int i = 0; i < BT_JOBS && !s; i++)
                if (w->slots[i].state == BT_FREE)
                        s = &w->slots[i];
        if (!s || job.proc_fd < 0) {
                pthread_mutex_unlock(&w->mu);
                record(t, &job, s ? "cannot read the task" : "no backtrace: the unwinder is busy");
                if (job.proc_fd >= 0)
                        close(job.proc_fd);
                return false;
        }
        job.files = w->files;
        s->job = job;
        s->deadline = trace_now() + BT_DEADLINE_MS * 1000000ull;
        s->state = BT_QUEUED;
        arm(t);
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->mu);
        return true;
}

static int on_done(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct trace *t = sup->trace;
        struct bt_worker *w = t->unwinder;
        uint64_t n;

        (void)!read(src->fd, &n, sizeof(n));
        pthread_mutex_lock(&w->mu);
        for (int i = 0; i < BT_JOBS; i++)
                if (w->slots[i].state == BT_DONE) {
                        record(t, &w->slots[i].job, NULL);
                        /* Still stopped: trace_bt_forget frees the job of a task that died. */
                        ptrace(PTRACE_CONT, w->slots[i].job.tid, 0, 0);
                        w->slots[i].state = BT_FREE;
                }
        arm(t);
        pthread_mutex_unlock(&w->mu);
        return 0;
}

/* The deadline of a job: the task goes on without its backtrace. */
static int on_late(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct trace *t = sup->trace;
        struct bt_worker *w = t->unwinder;
        uint64_t n, now = trace_now();
        char why[64];

        (void)!read(src->fd, &n, sizeof(n));
        snprintf(why, sizeof(why), "gave up: unwinding took over %d ms", BT_DEADLINE_MS);
        pthread_mutex_lock(&w->mu);
        for (int i = 0; i < BT_JOBS; i++) {
                struct bt_slot *s = &w->slots[i];

                if ((s->state != BT_QUEUED && s->state != BT_RUNNING) || s->deadline > now)
                        continue;
                record(t, &s->job, why);
                ptrace(PTRACE_CONT, s->job.tid, 0, 0);
                if (s->state == BT_QUEUED) {
                        close(s->job.proc_fd);
                        s->state = BT_FREE;
                } else {
                        s->state = BT_ABANDONED; /* the unwinder frees it when it returns */
                }
        }
        arm(t);
        pthread_mutex_unlock(&w->mu);
        return 0;
}

static void forget_jobs(struct bt_worker *w, pid_t tid)
{
        pthread_mutex_lock(&w->mu);
        for (int i = 0; i < BT_JOBS; i++) {
                struct bt_slot *s = &w->slots[i];

                if (s->job.tid != tid || s->state == BT_FREE || s->state == BT_ABANDONED)
                        continue;
                if (s->state == BT_QUEUED) {
                        close(s->job.proc_fd);
                }
                s->state = s->state == BT_RUNNING ? BT_ABANDONED : BT_FREE;
        }
        pthread_mutex_unlock(&w->mu);
}

static void watch(struct supervisor *sup, struct event_source *src)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};

        if (src->fd >= 0)
                epoll_ctl(sup->epfd, EPOLL_CTL_ADD, src->fd, &ev);
}

void trace_bt_start(struct supervisor *sup)
{
        struct trace *t = sup->trace;
        struct bt_worker *w;
        void **arg;

        t->bt_src =
                (struct event_source){.name = "trace backtraces", .on_ready = trace_bt_on_ready};
        t->bt_src.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        watch(sup, &t->bt_src);
        if (sup->cfg->trace_backtrace == TRACE_BT_NEVER || !sup->layers.ptrace)
                return;
        w = xcalloc(1, sizeof(*w));
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->work, NULL);
        w->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        t->bt_done_src = (struct event_source){
                .fd = w->done_fd, .name = "trace unwinder", .on_ready = on_done};
        t->bt_late_src =
                (struct event_source){.name = "trace unwinder deadline", .on_ready = on_late};
        t->bt_late_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        arg = xcalloc(2, sizeof(*arg));
        arg[0] = w;
        arg[1] = (void *)sup->cfg;
        if (w->done_fd < 0 || t->bt_late_src.fd < 0 ||
            pthread_create(&w->thread, NULL, unwinder_start, arg) != 0) {
                fprintf(stderr, "stockade: warning: no unwinder thread: no backtraces\n");
                cleanup_closep(&w->done_fd);
                cleanup_closep(&t->bt_late_src.fd);
                t->bt_done_src.fd = -1;
                free(arg);
                free(w);
                return;
        }
        pthread_mutex_lock(&w->mu);
        while (!w->ready)
                pthread_cond_wait(&w->work, &w->mu); /* its rights are settled: a few syscalls */
        pthread_mutex_unlock(&w->mu);
        t->unwinder = w;
        watch(sup, &t->bt_done_src);
        watch(sup, &t->bt_late_src);
}

bool trace_bt_finish(struct trace *t)
{
        struct bt_worker *w = t->unwinder;
        struct timespec ts;

        /* Not t->bt_src: a notifier that could not be stopped may still ask (trace_free). */
        if (!w)
                return true;
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->mu);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        t->unwinder = NULL;
        cleanup_closep(&t->bt_late_src.fd);
        t->bt_done_src.fd = -1;
        if (pthread_timedjoin_np(w->thread, NULL, &ts) != 0) {
                /* Blocked in a read of the program's: it keeps its worker and its fds (it
                 * still writes done_fd), and ends with the process. */
                pthread_detach(w->thread);
                return false;
        }
        close(w->done_fd);
        for (int i = 0; i < BT_JOBS; i++)
                if (w->slots[i].state == BT_QUEUED) {
                        close(w->slots[i].job.proc_fd);
                }
        free(w);
        return true;
}

/* ---- backtraces: ask the main thread to stop the caller as it returns ------------------- */

bool trace_wants_backtrace(struct supervisor *sup, const struct call *call)
{
        /* Without WAIT_KILLABLE_RECV (before 5.19) the interrupt would break the caller's
         * wait: the call restarts, is denied again, asks again... No backtraces there. */
        if (!sup->trace || !sup->layers.ptrace || !sup->layers.wait_killable_recv ||
            sup->cfg->trace_backtrace == TRACE_BT_NEVER)
                return false;
        if (sup->cfg->trace_backtrace == TRACE_BT_ALL)
                return true;
        return call->tc->denied || !call->row;
}

/*
 * The caller waits in the kernel for our answer, killable only (WAIT_KILLABLE_RECV): a
 * PTRACE_INTERRUPT now takes effect as it returns to user space after the answer, with the
 * registers of the call site. So the main thread (the tracer) interrupts it first, then we
 * answer; trace_bt_stop() unwinds at the stop. 200 ms at most: the main thread may be busy.
 */
void trace_bt_request(struct supervisor *sup, struct call *call)
{
        struct trace *t = sup->trace;
        uint64_t one = 1, id = atomic_fetch_add(&t->bt_seq, 1) + 1;
        struct timespec ts;
        int slot = -1;

        if (t->bt_src.fd < 0)
                return;
        pthread_mutex_lock(&t->bt_mu);
        for (int i = 0; i < TRACE_BT_QUEUE && slot < 0; i++)
                if (t->bt[i].state == 0)
                        slot = i;
        if (slot < 0) {
                pthread_mutex_unlock(&t->bt_mu);
                return;
        }
        t->bt[slot].tid = (pid_t)call->req->pid;
        t->bt[slot].id = id;
        t->bt[slot].state = 1;
        (void)!write(t->bt_src.fd, &one, sizeof(one));
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        while (t->bt[slot].state == 1 && t->bt[slot].id == id)
                if (pthread_cond_timedwait(&t->bt_done, &t->bt_mu, &ts) != 0)
                        break;
        if (t->bt[slot].id == id && t->bt[slot].state == 2)
                call->tc->bt_id = id;
        else if (t->bt[slot].id == id && t->bt[slot].state == 1)
                t->bt[slot].state = 0; /* too late: never mind */
        pthread_mutex_unlock(&t->bt_mu);
}

int trace_bt_on_ready(struct supervisor *sup, struct event_source *src, uint32_t events)
{
        struct trace *t = sup->trace;
        uint64_t n;

        (void)!read(src->fd, &n, sizeof(n));
        pthread_mutex_lock(&t->bt_mu);
        for (int i = 0; i < TRACE_BT_QUEUE; i++)
                if (t->bt[i].state == 1)
                        t->bt[i].state = ptrace(PTRACE_INTERRUPT, t->bt[i].tid, 0, 0) == 0 ? 2 : 0;
        pthread_cond_broadcast(&t->bt_done);
        pthread_mutex_unlock(&t->bt_mu);
        return 0;
}

uint64_t trace_bt_stop(struct supervisor *sup, pid_t tid, int sig)
{
        struct trace *t = sup->trace;
        uint64_t id = 0;

        if (!t || sig != SIGTRAP)
                return 0;
        pthread_mutex_lock(&t->bt_mu);
        for (int i = 0; i < TRACE_BT_QUEUE; i++)
                if (t->bt[i].state == 2 && t->bt[i].tid == tid) {
                        id = t->bt[i].id;
                        t->bt[i].state = 0;
                        break;
                }
        pthread_mutex_unlock(&t->bt_mu);
        return id;
}

void trace_bt_forget(struct supervisor *sup, pid_t tid)
{
        struct trace *t = sup->trace;

        if (!t)
                return;
        pthread_mutex_lock(&t->bt_mu);
        for (int i = 0; i < TRACE_BT_QUEUE; i++)
                if (t->bt[i].state == 2 && t->bt[i].tid == tid)
                        t->bt[i].state = 0; /* it died before its stop */
        pthread_mutex_unlock(&t->bt_mu);
        if (t->unwinder)
                forget_jobs(t->unwinder, tid); /* or while it was stopped for one */
}

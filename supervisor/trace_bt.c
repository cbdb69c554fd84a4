/*
 * The user-space backtrace of a thread stopped by ptrace (trace_bt_stop), with libunwind.
 *
 * The memory read belongs to a hostile program: it can make its stack a loop, point frames
 * anywhere, or make unwinding read a lot. So the walk stops after BT_FRAMES frames and
 * after BT_BYTES bytes read from the task (every read goes through capped_access_mem), and
 * names come from the ELF files the task has mapped (libunwind reads their symbol tables,
 * files the program could read anyway). It runs on the main thread, the tracer, while the
 * task is in its ptrace stop. The notifier asks for it (trace_bt_request) before answering a
 * call; the main thread interrupts the task so that it stops as the call returns.
 *
 * Off by default (--backtrace never): libunwind opens the mapped files by the path in
 * /proc/PID/maps, which the program controls — a FIFO there blocks the main thread, a
 * symlink makes the supervisor open a file of the program's choosing (outside review R3).
 * Feeding it from /proc/PID/map_files, opened O_NONBLOCK with the program's ids, is left.
 */
#include "supervisor/trace_int.h"
#include "supervisor/notify.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

#define BT_FRAMES 32
#define BT_BYTES  (64u << 10)
#define MAPS_MAX  (256u << 10)

struct capped {
        void *upt;
        size_t bytes;
        bool hit;
};

/* The walk in progress. libunwind hands the accessors either our argument or, from inside
 * _UPT_find_proc_info, the UPT handle itself, so they use this instead: backtraces are
 * taken on the main thread only, one at a time. */
static struct capped *current;

static int capped_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need,
                                 void *arg)
{
        return _UPT_find_proc_info(as, ip, pi, need, current->upt);
}

static void capped_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
        _UPT_put_unwind_info(as, pi, current->upt);
}

static int capped_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
        return _UPT_get_dyn_info_list_addr(as, dil, current->upt);
}

static int capped_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                             void *arg)
{
        struct capped *c = current;

        if (write)
                return -UNW_EINVAL; /* never write into the task */
        c->bytes += sizeof(*val);
        if (c->bytes > BT_BYTES) {
                c->hit = true;
                return -UNW_EINVAL;
        }
        return _UPT_access_mem(as, addr, val, 0, c->upt);
}

static int capped_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                             void *arg)
{
        if (write)
                return -UNW_EINVAL;
        return _UPT_access_reg(as, reg, val, 0, current->upt);
}

static int capped_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                               void *arg)
{
        if (write)
                return -UNW_EINVAL;
        return _UPT_access_fpreg(as, reg, val, 0, current->upt);
}

static int capped_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
        return -UNW_EINVAL;
}

static int capped_get_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf, size_t len,
                                unw_word_t *off, void *arg)
{
        return _UPT_get_proc_name(as, ip, buf, len, off, current->upt);
}

static unw_accessors_t capped_accessors = {
        .find_proc_info = capped_find_proc_info,
        .put_unwind_info = capped_put_unwind_info,
        .get_dyn_info_list_addr = capped_get_dyn_info_list_addr,
        .access_mem = capped_access_mem,
        .access_reg = capped_access_reg,
        .access_fpreg = capped_access_fpreg,
        .resume = capped_resume,
        .get_proc_name = capped_get_proc_name,
};

/* The file mapped at ip, from /proc/TID/maps (read once per backtrace, capped). */
static const char *object_of(const char *maps, uint64_t ip, char *out, size_t size)
{
        for (const char *l = maps; l && *l;) {
                const char *nl = strchr(l, '\n');
                unsigned long long lo, hi;
                int name = 0;

                if (sscanf(l, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &name) >= 2 && ip >= lo &&
                    ip < hi) {
                        size_t n = nl ? (size_t)(nl - l) : strlen(l);
                        if (name <= 0 || (size_t)name >= n)
                                return "";
                        snprintf(out, size, "%.*s", (int)(n - (size_t)name), l + name);
                        return out;
                }
                l = nl ? nl + 1 : NULL;
        }
        return "";
}

static char *read_maps(pid_t tid)
{
        char path[64];
        char *buf = xcalloc(1, MAPS_MAX + 1);
        size_t len = 0;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int)tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return buf;
        while (len < MAPS_MAX && (n = read(fd, buf + len, MAPS_MAX - len)) > 0)
                len += (size_t)n;
        close(fd);
        return buf;
}

void trace_bt_take(struct trace *t, pid_t tid, uint64_t id)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Backtrace bt = STOCKADE__TRACE__BACKTRACE__INIT;
        Stockade__Trace__Frame frames[BT_FRAMES], *pf[BT_FRAMES];
        char names[BT_FRAMES][128], objs[BT_FRAMES][256];
        struct capped c = {0};
        char why[128];
        _cleanup_free_ char *maps = NULL;
        unw_addr_space_t as;
        unw_cursor_t cur;
        int r;

        bt.id = id;
        bt.tid = (uint32_t)tid;
        bt.frames = pf;
        as = unw_create_addr_space(&capped_accessors, 0);
        c.upt = as ? _UPT_create(tid) : NULL;
        current = &c;
        if (!c.upt || (r = unw_init_remote(&cur, as, &c)) < 0) {
                bt.error = "cannot start unwinding";
                goto out;
        }
        maps = read_maps(tid);
        do {
                Stockade__Trace__Frame *f = &frames[bt.n_frames];
                unw_word_t ip = 0, off = 0;

                stockade__trace__frame__init(f);
                if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
                        break;
                f->ip = ip;
                names[bt.n_frames][0] = 0;
                if (unw_get_proc_name(&cur, names[bt.n_frames], sizeof(names[0]), &off) == 0) {
                        f->function = names[bt.n_frames];
                        f->offset = off;
                }
                f->object = (char *)object_of(maps, ip, objs[bt.n_frames], sizeof(objs[0]));
                pf[bt.n_frames] = f;
                bt.n_frames++;
                if (bt.n_frames == BT_FRAMES) {
                        bt.truncated = true;
                        break;
                }
        } while ((r = unw_step(&cur)) > 0);
        if (c.hit) {
                bt.truncated = true;
                bt.error = "stopped: too much memory read";
        } else if (r < 0) {
                snprintf(why, sizeof(why), "stopped: %s", unw_strerror(r));
                bt.error = why;
        }
out:
        if (c.upt)
                _UPT_destroy(c.upt);
        if (as)
                unw_destroy_addr_space(as);
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_BACKTRACE;
        rec.backtrace = &bt;
        trace_push_record(t, TRACE_MAIN, &rec, 0, 0);
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
}

void trace_bt_unwind(struct supervisor *sup, pid_t tid, uint64_t id)
{
        if (sup->trace)
                trace_bt_take(sup->trace, tid, id);
}

/* Internals shared by trace.c (rings, writer), trace_record.c (session, process events,
 * end) and trace_bt.c (backtraces). Nothing outside supervisor/trace*.c includes this. */
#ifndef STOCKADE_TRACE_INT_H
#define STOCKADE_TRACE_INT_H

#include "proto/trace_file.h"
#include "supervisor/sup.h"
#include "supervisor/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/user.h>

#define TRACE_RING_SIZE (1u << 20) /* bytes per producer; a power of two */
/* A ring per notifier the pool may grow to, then the main thread's. Rings are calloc'ed
 * (mapped, untouched) and cost memory only once a thread writes into them. */
#define TRACE_PRODUCERS (STOCKADE_NOTIFIERS_MAX + 2)
#define TRACE_MAIN      STOCKADE_NOTIFIERS_MAX
#define TRACE_DNS       (STOCKADE_NOTIFIERS_MAX + 1) /* the DNS server's thread (dns.c) */
#define TRACE_BT_QUEUE  16

enum raw_type {
        RAW_PAD = 1,  /* skip to the end of the ring */
        RAW_CALL = 2, /* struct raw_call */
        RAW_BYTES = 3 /* struct raw_bytes: a packed Record */
};

struct raw_head {
        uint32_t len; /* whole record, 8-aligned */
        uint32_t type;
};

struct raw_call {
        struct raw_head h;
        uint32_t tid;
        int32_t nr;
        uint64_t t0, dur;
        uint64_t args[6];
        int64_t val;
        int32_t err;
        uint8_t verdict;
        bool has_result, would_deny, unknown;
        const char *rule, *limit;
        uint64_t limit_value;
        uint64_t bt_id;
        int16_t mem_arg[2];
        int16_t mem_len[2];
        bool mem_truncated[2];
        char mem[]; /* mem_len[0] bytes (when > 0), then mem_len[1] bytes (when > 0) */
};

struct raw_bytes {
        struct raw_head h;
        uint64_t t; /* CLOCK_MONOTONIC when it happened: the writer merges the rings by it */
        uint32_t tid, tgid; /* learnt by the writer: tid belongs to tgid (0: nothing) */
        uint32_t len;
        uint8_t data[];
};

/* One producer's ring: single producer, single consumer (the writer). */
struct trace_ring {
        _Alignas(64) atomic_uint_fast64_t head; /* producer */
        _Alignas(64) atomic_uint_fast64_t tail; /* writer */
        _Alignas(64) atomic_uint_fast64_t dropped;
        uint8_t *buf;
};

struct trace_count {
        uint64_t n, ns;
};

struct trace {
        int fd;
        bool socket;
        char *path; /* the file, for the end (mode); NULL for a socket */
        uint64_t mono0, unix0;
        struct trace_out out;
        struct trace_ring rings[TRACE_PRODUCERS];
        atomic_bool writer_stop;
        bool started; /* the session record is written */
        bool writer_started;
        bool out_dead; /* the reader went away: everything is dropped */
        bool warned;
        pthread_t writer;
        pthread_mutex_t mu;
        pthread_cond_t kick;
        bool kicked;
        /* tid -> tgid, a cache: the main thread learns, the writer looks up */
        _Atomic uint64_t tgid[1 << 16];
        /* written by the writer only */
        uint64_t events;
        atomic_uint_fast64_t writer_cpu_ns; /* CPU time of the writer thread (bench/) */
        struct trace_count (*counts)[6];    /* [nr][verdict] */
        /* backtraces */
        atomic_uint_fast64_t bt_seq;
        pthread_mutex_t bt_mu;
        pthread_cond_t bt_done;
        struct {
                pid_t tid;
                uint64_t id;
                int state; /* 0 free, 1 asked, 2 interrupted (waiting for the stop) */
        } bt[TRACE_BT_QUEUE];
        struct event_source bt_src;      /* eventfd: a notifier asks the main thread */
        struct bt_worker *unwinder;      /* trace_bt.c; NULL without backtraces */
        struct event_source bt_done_src; /* eventfd: the unwinder finished a job */
        struct event_source bt_late_src; /* timerfd: a job's deadline */
};

/* One backtrace to take: what the main thread hands the unwinder thread (trace_bt.c), and
 * what comes back. */
#define BT_FRAMES 32
struct bt_frame {
        uint64_t ip, offset;
        char function[128]; /* "" when unknown */
        char object[256];
};

struct bt_job {
        pid_t tid;
        uint64_t id;
        struct user_regs_struct regs; /* at the stop */
        int proc_fd; /* /proc/TID, O_PATH, opened at the stop: the task, not its number */
        bool files;  /* may open mapped files (the thread has the program's
                                       * rights) */
        struct bt_frame frames[BT_FRAMES];
        unsigned n_frames;
        bool truncated;
        char error[128];
};

uint64_t trace_now(void);
/* Push a packed Record from `producer` (the main thread: TRACE_MAIN). */
void trace_push_bytes(struct trace *t, unsigned producer, const uint8_t *p, size_t n, pid_t tid,
                      pid_t tgid);
/* Pack and push. */
void trace_push_record(struct trace *t, unsigned producer, const Stockade__Trace__Record *r,
                       pid_t tid, pid_t tgid);
/* The thread group of tid (cache, then /proc), 0 when unknown. */
pid_t trace_tgid(struct trace *t, pid_t tid);
void trace_learn_tgid(struct trace *t, pid_t tid, pid_t tgid);

/* trace_record.c */
void trace_write_session(struct supervisor *sup, char *const *envp);
void trace_write_end(struct supervisor *sup, int code);
/* trace_unwind.c: unwind job->tid, which stays stopped meanwhile, into job->frames. Reads
 * only through job's fds and registers (no ptrace: any thread may call it); the names of
 * functions from the mapped files, if job->files. Capped; may block in a read (a hung
 * filesystem), which is why trace_bt.c runs it on a thread of its own, with a deadline. */
void trace_unwind(struct bt_job *job);
/* trace_bt.c: start the unwinder thread and its event sources (trace_start), and stop it
 * (trace_finish: false if it is stuck and must be left alone, with its memory and fds). */
void trace_bt_start(struct supervisor *sup);
bool trace_bt_finish(struct trace *t);

/* The main thread's event source for backtrace requests (trace_bt.c): interrupts the tasks
 * whose denied call asked for one. */
int trace_bt_on_ready(struct supervisor *sup, struct event_source *src, uint32_t events);

#endif

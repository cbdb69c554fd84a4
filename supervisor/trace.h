/*
 * Recording the trace (docs/trace-format.md): every decision of the supervisor, the process
 * events of the tree, the session's start and end.
 *
 * The hot path (notify.c) never allocates, encodes, compresses or writes. Each producer (a
 * notifier thread, the main thread) owns a ring of raw records; the writer thread drains
 * the rings, decodes the arguments, packs protobuf, feeds zstd and writes, and flushes at
 * least every 100 ms. A producer that finds its ring full waits for the writer (the sandbox
 * slows down), or with --trace-drop drops the record and counts it.
 */
#ifndef STOCKADE_TRACE_H
#define STOCKADE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;
struct call;
struct error;
struct config;

enum trace_level {
        TRACE_LEVEL_SECURITY, /* every call the supervisor handles, and process events */
        TRACE_LEVEL_ALL,      /* every system call: the kernel-allowed ones are notified too */
};

enum trace_bt {
        TRACE_BT_DENIED, /* a backtrace for each denied call (the default) */
        TRACE_BT_ALL,    /* for every call the supervisor handles (slow) */
        TRACE_BT_NEVER,
};

/* Bytes of a path or sockaddr kept for the trace. */
#define TRACE_MEM_MAX 256

/* The event of one notification while it is being decided: lives in the notifier, filled by
 * notify.c and by handlers (trace_call_*), pushed after the answer. */
struct trace_call {
        uint64_t t0;
        const char *rule;  /* static string: what decided */
        const char *limit; /* static string: a limit was hit (max-procs ...) */
        uint64_t limit_value;
        bool denied;     /* call_deny() refused it */
        bool would_deny; /* call_deny() in audit mode */
        uint64_t bt_id;
        /* Copies of the call's memory arguments (paths, a sockaddr): two, for the calls with
         * two paths (rename, link, symlink's target and name). */
        struct trace_mem {
                int arg; /* the argument this holds, -1 for none */
                int len; /* its length, or -errno of the copy */
                bool truncated;
                char bytes[TRACE_MEM_MAX];
        } mem[2];
};

/* Open the trace named by cfg->trace_path (a file, or unix:PATH), refusing a file inside
 * the sandbox's writable places. Before the fork; nothing is written yet. Returns 0 (also
 * when no trace was asked for) or -1 with *err set. */
int trace_open(struct supervisor *sup, struct error *err);
/* After the spawn: write the session record and start the writer thread. */
void trace_start(struct supervisor *sup, char *const *envp);
/* After the tree is gone and the notifiers stopped: the end record, then close. `code` is
 * what stockade exits with. */
void trace_finish(struct supervisor *sup, int code);
/* Free what is left (after trace_finish, or when the run failed before trace_start). */
void trace_free(struct supervisor *sup);

/* ---- the notification path (notifier threads) ------------------------------------------ */

void trace_call_begin(struct trace_call *tc);
/* Just before the answer is sent (copies what will not survive it, the path of an exec). */
void trace_call_answering(struct supervisor *sup, struct call *call);
/* Push the event of a call that has been answered. `producer` is the notifier's index. */
void trace_call_end(struct supervisor *sup, unsigned producer, struct call *call);
/* Before the answer: should this call carry a backtrace? Then ask the main thread to stop
 * the caller as it returns (trace_bt_request). */
bool trace_wants_backtrace(struct supervisor *sup, const struct call *call);
void trace_bt_request(struct supervisor *sup, struct call *call);

/* For handlers: the path (or other memory argument `arg`) they decided on, as the sandbox
 * names it; the rule that decided; a limit that was hit. No-ops when not tracing. */
void trace_call_path(struct call *call, unsigned arg, const char *path);
/* The same for memory that is not a string (a sockaddr): `len` bytes, as copied. */
void trace_call_mem(struct call *call, unsigned arg, const void *mem, size_t len);
void trace_call_rule(struct call *call, const char *rule);
void trace_call_limit(struct call *call, const char *limit, uint64_t value);

/* ---- the main thread (ptrace.c, loop.c) ------------------------------------------------- */

enum trace_proc_kind { TRACE_FORK, TRACE_VFORK, TRACE_CLONE };
void trace_proc_new(struct supervisor *sup, pid_t parent, pid_t child, enum trace_proc_kind k);
void trace_proc_exec(struct supervisor *sup, pid_t pid);
void trace_proc_exit(struct supervisor *sup, pid_t tid, int status);
void trace_proc_killed(struct supervisor *sup, pid_t tid, const char *reason);
/* A query the supervisor's DNS server answered (dns.c, on its own thread): the name, the
 * type (A, AAAA), the addresses answered (as text), and why. */
void trace_dns(struct supervisor *sup, const char *name, const char *type, char **answers,
               size_t n_answers, bool refused, const char *rule);
void trace_limit(struct supervisor *sup, pid_t tid, const char *limit, uint64_t value);
/* A ptrace stop of `tid` (signal `sig`): the id of the backtrace we asked for, or 0 when the
 * stop is not ours. Under sup->lock; cheap. */
uint64_t trace_bt_stop(struct supervisor *sup, pid_t tid, int sig);
/* `tid` is in the stop we asked for: hand backtrace `id` to the unwinder thread. True: it
 * stays stopped, and trace_bt.c resumes it once unwound or at the deadline; false: no
 * backtrace (recorded why), the caller resumes it. Main thread, without sup->lock. */
bool trace_bt_stopped(struct supervisor *sup, pid_t tid, uint64_t id);
/* `tid` exited: forget a backtrace it will never stop for, or whose unwinding is pending. */
void trace_bt_forget(struct supervisor *sup, pid_t tid);

/* Exposed for tests and bench/: push `n` synthetic call events through producer 0 as fast
 * as possible (the writer must be running). */
void trace_bench_push(struct supervisor *sup, uint64_t n);
/* CPU time the writer thread has used so far. */
uint64_t trace_writer_cpu_ns(struct supervisor *sup);

#endif

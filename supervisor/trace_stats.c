/*
 * `stockade trace stats` (counts, supervisor time, the most denied calls, the process tree)
 * and `stockade trace export` (jsonl, Chrome/Perfetto trace-event JSON).
 */
#include "supervisor/trace_cli_int.h"
#include "supervisor/trace_json.h"
#include "supervisor/util.h"
#include "syscalls/table.h"

#include <inttypes.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVERDICTS   6
#define DENIED_KEYS 4096
#define PROCS_MAX   65536

struct denied {
        char *call;
        uint64_t n;
};

struct proc {
        uint32_t pid, parent;
        char *path;
        int threads;
        bool ended, exited;
        int code, signal;
};

struct stats {
        uint64_t n[SYSCALL_NR_LIMIT][NVERDICTS], ns[SYSCALL_NR_LIMIT][NVERDICTS];
        uint64_t events, total_ns, would_deny;
        struct denied *denied;
        size_t n_denied;
        struct proc *procs;
        size_t n_procs;
        bool have_end;
        int exit_code;
        uint64_t dropped, limits;
        uint32_t root;
};

static struct proc *proc_get(struct stats *s, uint32_t pid)
{
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i].pid == pid)
                        return &s->procs[i];
        if (s->n_procs == PROCS_MAX)
                return NULL;
        s->procs = xrealloc(s->procs, (s->n_procs + 1) * sizeof(*s->procs));
        s->procs[s->n_procs] = (struct proc){.pid = pid};
        return &s->procs[s->n_procs++];
}

static void count_denied(struct stats *s, const Stockade__Trace__Event *e)
{
        char call[512];
        size_t n = (size_t)snprintf(call, sizeof(call), "%s(", e->syscall);

        for (size_t i = 0; i < e->n_args && n < sizeof(call); i++)
                n += (size_t)snprintf(call + n, sizeof(call) - n, "%s%s", i ? ", " : "",
                                      e->args[i]);
        if (n < sizeof(call))
                snprintf(call + n, sizeof(call) - n, ") = %s", strerrorname_np(e->error) ?: "?");
        for (size_t i = 0; i < s->n_denied; i++)
                if (strcmp(s->denied[i].call, call) == 0) {
                        s->denied[i].n++;
                        return;
                }
        if (s->n_denied == DENIED_KEYS)
                return;
        s->denied = xrealloc(s->denied, (s->n_denied + 1) * sizeof(*s->denied));
        s->denied[s->n_denied++] = (struct denied){xstrdup(call), 1};
}

static void stats_one(struct reader *r, const Record *rec, void *arg)
{
        struct stats *s = arg;

        switch ((int)rec->kind_case) {
        case STOCKADE__TRACE__RECORD__KIND_EVENT: {
                const Stockade__Trace__Event *e = rec->event;
                unsigned v = e->verdict < NVERDICTS ? e->verdict : 0;
                if (e->nr < SYSCALL_NR_LIMIT) {
                        s->n[e->nr][v]++;
                        s->ns[e->nr][v] += e->duration_ns;
                }
                s->events++;
                s->total_ns += e->duration_ns;
                s->would_deny += e->would_deny;
                if (trace_event_refused(e))
                        count_denied(s, e);
                break;
        }
        case STOCKADE__TRACE__RECORD__KIND_PROCESS: {
                const Stockade__Trace__Process *p = rec->process;
                struct proc *pr;
                if (p->kind == STOCKADE__TRACE__PROCESS__KIND__FORK ||
                    p->kind == STOCKADE__TRACE__PROCESS__KIND__VFORK) {
                        if ((pr = proc_get(s, p->child)))
                                pr->parent = p->pid;
                } else if (p->kind == STOCKADE__TRACE__PROCESS__KIND__CLONE) {
                        if ((pr = proc_get(s, p->pid)))
                                pr->threads++;
                } else if (p->kind == STOCKADE__TRACE__PROCESS__KIND__EXEC) {
                        if (!s->root)
                                s->root = p->pid;
                        if ((pr = proc_get(s, p->pid))) {
                                free(pr->path);
                                pr->path = xstrdup(p->path);
                        }
                } else if (p->kind == STOCKADE__TRACE__PROCESS__KIND__EXIT && p->pid == p->tid) {
                        if ((pr = proc_get(s, p->pid))) {
                                pr->ended = true;
                                pr->exited = p->exited;
                                pr->code = p->exit_code;
                                pr->signal = p->signal;
                        }
                }
                break;
        }
        case STOCKADE__TRACE__RECORD__KIND_LIMIT:
                s->limits++;
                break;
        case STOCKADE__TRACE__RECORD__KIND_END:
                s->have_end = true;
                s->exit_code = rec->end->exit_code;
                s->dropped = rec->end->events_dropped;
                break;
        default:
                break;
        }
}

static int by_count(const void *a, const void *b)
{
        const struct denied *x = a, *y = b;

        if (x->n != y->n)
                return x->n < y->n ? 1 : -1;
        return strcmp(x->call, y->call);
}

static void print_tree(const struct stats *s, uint32_t pid, int depth)
{
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct proc *p = &s->procs[i];
                if (p->pid != pid)
                        continue;
                printf("  %*s%u %s", depth * 2, "", p->pid,
                       p->path ? trace_printable(p->path) : "(no exec)");
                if (p->threads)
                        printf(", %d thread%s", p->threads, p->threads > 1 ? "s" : "");
                if (p->ended && p->exited)
                        printf(", exit %d", p->code);
                else if (p->ended)
                        printf(", killed by SIG%s", sigabbrev_np(p->signal) ?: "?");
                putchar('\n');
        }
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i].parent == pid && s->procs[i].pid != pid && depth < 64)
                        print_tree(s, s->procs[i].pid, depth + 1);
}

int trace_stats(struct reader *r)
{
        struct stats *s = xcalloc(1, sizeof(*s));
        int code = trace_each_record(r, stats_one, s);

        printf("%-20s %-9s %9s %12s %10s\n", "syscall", "verdict", "calls", "supervisor",
               "per call");
        for (int nr = 0; nr < SYSCALL_NR_LIMIT; nr++)
                for (int v = 0; v < NVERDICTS; v++) {
                        const struct syscall_row *row;
                        if (!s->n[nr][v])
                                continue;
                        row = syscall_lookup(AUDIT_ARCH_X86_64, nr);
                        printf("%-20s %-9s %9" PRIu64 " %10.3fms %8.2fus\n", row ? row->name : "?",
                               trace_verdict_name((Stockade__Trace__Verdict)v), s->n[nr][v],
                               (double)s->ns[nr][v] / 1e6,
                               (double)s->ns[nr][v] / 1e3 / (double)s->n[nr][v]);
                }
        printf("%-20s %-9s %9" PRIu64 " %10.3fms\n", "total", "", s->events,
               (double)s->total_ns / 1e6);
        if (s->n_denied) {
                qsort(s->denied, s->n_denied, sizeof(*s->denied), by_count);
                printf("\ntop denied calls%s:\n", s->would_deny ? " (audit: would be denied)" : "");
                for (size_t i = 0; i < s->n_denied && i < 10; i++)
                        printf("  %6" PRIu64 "  %s\n", s->denied[i].n,
                               trace_printable(s->denied[i].call));
        }
        if (s->limits)
                printf("\nlimits reached: %" PRIu64 "\n", s->limits);
        if (s->n_procs) {
                printf("\nprocess tree:\n");
                print_tree(s, s->root ? s->root : s->procs[0].pid, 0);
        }
        if (s->have_end)
                printf("\nexit %d, %" PRIu64 " events dropped\n", s->exit_code, s->dropped);
        for (size_t i = 0; i < s->n_denied; i++)
                free(s->denied[i].call);
        for (size_t i = 0; i < s->n_procs; i++)
                free(s->procs[i].path);
        free(s->denied);
        free(s->procs);
        free(s);
        return code;
}

/* ---- export ------------------------------------------------------------------------------ */

static const char *kind_name(Stockade__Trace__Record__KindCase k)
{
        switch (k) {
        case STOCKADE__TRACE__RECORD__KIND_SESSION:
                return "session";
        case STOCKADE__TRACE__RECORD__KIND_EVENT:
                return "event";
        case STOCKADE__TRACE__RECORD__KIND_PROCESS:
                return "process";
        case STOCKADE__TRACE__RECORD__KIND_DNS:
                return "dns";
        case STOCKADE__TRACE__RECORD__KIND_CONNECT:
                return "connect";
        case STOCKADE__TRACE__RECORD__KIND_LIMIT:
                return "limit";
        case STOCKADE__TRACE__RECORD__KIND_BACKTRACE:
                return "backtrace";
        case STOCKADE__TRACE__RECORD__KIND_END:
                return "end";
        case STOCKADE__TRACE__RECORD__KIND__NOT_SET:
        case _STOCKADE__TRACE__RECORD__KIND__CASE_IS_INT_SIZE:
                break;
        }
        return NULL;
}

/* The oneof's message (every member is a message). */
static const ProtobufCMessage *inner(const Record *rec)
{
        return rec->kind_case == STOCKADE__TRACE__RECORD__KIND__NOT_SET
                       ? NULL
                       : (const ProtobufCMessage *)rec->session; /* a union: same pointer */
}

static void jsonl_one(struct reader *r, const Record *rec, void *arg)
{
        const char *k = kind_name(rec->kind_case);

        if (!k)
                return; /* unknown kind: skipped */
        printf("{\"type\":\"%s\"", k);
        json_message_fields(stdout, inner(rec), false);
        fputs("}\n", stdout);
}

struct chrome {
        bool first;
        uint32_t named[4096]; /* tids already given a thread_name (a cache) */
};

static void chrome_sep(struct chrome *c)
{
        fputs(c->first ? "\n" : ",\n", stdout);
        c->first = false;
}

static void chrome_thread(struct chrome *c, uint32_t pid, uint32_t tid)
{
        if (c->named[tid % 4096] == tid)
                return;
        c->named[tid % 4096] = tid;
        chrome_sep(c);
        printf("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
               "\"args\":{\"name\":\"tid %u\"}}",
               pid, tid, tid);
}

static void chrome_one(struct reader *r, const Record *rec, void *arg)
{
        struct chrome *c = arg;

        if (rec->kind_case == STOCKADE__TRACE__RECORD__KIND_EVENT) {
                const Stockade__Trace__Event *e = rec->event;
                uint32_t pid = e->pid ? e->pid : e->tid;
                chrome_thread(c, pid, e->tid);
                chrome_sep(c);
                printf("{\"ph\":\"X\",\"name\":");
                json_string(stdout, e->syscall);
                printf(",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,\"tid\":%u,\"args\":",
                       trace_verdict_name(e->verdict), (double)e->time_ns / 1e3,
                       (double)e->duration_ns / 1e3, pid, e->tid);
                json_message(stdout, &e->base);
                putchar('}');
        } else if (rec->kind_case == STOCKADE__TRACE__RECORD__KIND_PROCESS) {
                const Stockade__Trace__Process *p = rec->process;
                uint32_t pid = p->pid ? p->pid : p->tid;
                if (p->kind == STOCKADE__TRACE__PROCESS__KIND__EXEC) {
                        chrome_sep(c);
                        printf("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":%u,"
                               "\"args\":{\"name\":",
                               pid, p->tid);
                        json_string(stdout, p->path);
                        printf("}}");
                }
                chrome_sep(c);
                printf("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"ts\":%.3f,\"pid\":%u,"
                       "\"tid\":%u,\"args\":",
                       protobuf_c_enum_descriptor_get_value(
                               &stockade__trace__process__kind__descriptor, p->kind)
                               ? protobuf_c_enum_descriptor_get_value(
                                         &stockade__trace__process__kind__descriptor, p->kind)
                                         ->name
                               : "process",
                       (double)p->time_ns / 1e3, pid, p->tid);
                json_message(stdout, &p->base);
                putchar('}');
        } else if (rec->kind_case == STOCKADE__TRACE__RECORD__KIND_LIMIT) {
                const Stockade__Trace__Limit *l = rec->limit;
                chrome_sep(c);
                printf("{\"ph\":\"i\",\"s\":\"g\",\"name\":\"limit\",\"ts\":%.3f,\"pid\":%u,"
                       "\"tid\":%u,\"args\":",
                       (double)l->time_ns / 1e3, l->pid ? l->pid : l->tid, l->tid);
                json_message(stdout, &l->base);
                putchar('}');
        }
}

int trace_export(struct reader *r, const char *format)
{
        struct chrome *c;
        int code;

        if (strcmp(format, "jsonl") == 0)
                return trace_each_record(r, jsonl_one, NULL);
        c = xcalloc(1, sizeof(*c));
        c->first = true;
        printf("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        code = trace_each_record(r, chrome_one, c);
        printf("\n]}\n");
        free(c);
        return code;
}

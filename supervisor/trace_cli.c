/*
 * `stockade trace show|stats|export`: read a trace (proto/trace_file.h) and print it.
 *
 * A damaged trace is still read as far as it goes: every readable record is shown, then one
 * line on stderr says what is wrong (not a trace, a newer version, truncated, corrupted),
 * and the exit status is 1.
 */
#include "supervisor/trace_cli.h"
#include "supervisor/trace_cli_int.h"
#include "proto/trace_file.h"
#include "supervisor/trace.h"
#include "supervisor/trace_json.h"
#include "supervisor/util.h"
#include "syscalls/table.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_DAMAGED 1

static const char usage[] =
        "Usage: stockade trace show [--only denied|net|exec|files] [--pid N] [--follow] FILE\n"
        "       stockade trace stats FILE\n"
        "       stockade trace export --format jsonl|chrome FILE\n"
        "\n"
        "Read a trace recorded with `stockade run --trace FILE`.\n"
        "  show    one line per event, like strace: time (s since the start), thread, call,\n"
        "          arguments, result, verdict, rule, time spent in the supervisor\n"
        "          --only denied|net|exec|files   only those events (denied: the refusals,\n"
        "                                          EACCES/EPERM/EROFS failures, refused DNS\n"
        "                                          and connects, limits)\n"
        "          --pid N                        only process (or thread) N\n"
        "          --follow                       keep reading as the trace grows (tail -f)\n"
        "  stats   counts per system call and verdict, supervisor time, the most denied\n"
        "          calls, the process tree\n"
        "  export  --format jsonl: one JSON object per record (for jq)\n"
        "          --format chrome: Chrome/Perfetto trace-event JSON (ui.perfetto.dev)\n"
        "\n"
        "Exit status: 0, 1 when the trace is damaged (what could be read is still shown, and\n"
        "one line says what is wrong), 125 for a bad command line.\n"
        "\n"
        "Examples:\n"
        "  stockade trace show --only denied run.trace\n"
        "  stockade trace export --format jsonl run.trace | jq 'select(.verdict==\"DENIED\")'\n"
        "  stockade trace export --format chrome run.trace > run.json   # open in Perfetto\n";

/* ---- run's options ---------------------------------------------------------------------- */

int trace_cli_option(struct config *cfg, const char *name, const char *arg, struct error *err)
{
        if (strcmp(name, "trace") == 0) {
                if (!*arg || strcmp(arg, "unix:") == 0)
                        return make_error(err, 0, "run: --trace: empty path");
                cfg->trace_path = arg;
        } else if (strcmp(name, "trace-level") == 0) {
                if (strcmp(arg, "security") == 0)
                        cfg->trace_level = TRACE_LEVEL_SECURITY;
                else if (strcmp(arg, "all") == 0)
                        cfg->trace_level = TRACE_LEVEL_ALL;
                else
                        return make_error(
                                err, 0, "run: --trace-level: `%s`; expected security or all", arg);
        } else if (strcmp(name, "backtrace") == 0) {
                if (strcmp(arg, "denied") == 0)
                        cfg->trace_backtrace = TRACE_BT_DENIED;
                else if (strcmp(arg, "all") == 0)
                        cfg->trace_backtrace = TRACE_BT_ALL;
                else if (strcmp(arg, "never") == 0)
                        cfg->trace_backtrace = TRACE_BT_NEVER;
                else
                        return make_error(err, 0,
                                          "run: --backtrace: `%s`; expected denied, all or never",
                                          arg);
        } else if (strcmp(name, "trace-drop") == 0) {
                cfg->trace_drop = true;
        } else if (strcmp(name, "trace-env") == 0) {
                cfg->trace_env = true;
        }
        return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
        interrupted = 1;
}

/* FILE, "-" (stdin) or unix:PATH: listen there and read the first run that connects
 * (`stockade run --trace unix:PATH`), which works for any user while the run goes on. */

/*
 * A trace still mode 0200 (trace.c: while it is recorded) that no stockade holds locked any
 * more: its recorder was killed before the end gave the owner read access back. Given it now
 * (0600), with a note. Returns true when it was.
 */
static bool unlock_killed(const char *path)
{
        int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        bool done = false;

        if (fd < 0)
                return false;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            (st.st_mode & 07777) == 0200 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
                done = fchmod(fd, 0600) == 0;
                if (done)
                        fprintf(stderr,
                                "stockade: trace `%s`: its run ended without finishing it "
                                "(stockade "
                                "killed?): made readable to you; what it holds is shown, then "
                                "where "
                                "it was cut\n",
                                path);
        }
        close(fd);
        return done;
}

static int open_trace(struct reader *r, const char *path)
{
        r->path = path;
        if (strncmp(path, "unix:", 5) == 0) {
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (strlen(path + 5) >= sizeof(sa.sun_path)) {
                        fprintf(stderr, "stockade: trace `%s`: path too long\n", path);
                        return -1;
                }
                strcpy(sa.sun_path, path + 5);
                if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0) {
                        fprintf(stderr, "stockade: trace `%s`: cannot listen: %s\n", path,
                                strerror(errno));
                        return -1;
                }
                r->fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                close(l);
                unlink(path + 5);
                if (r->fd < 0) {
                        fprintf(stderr, "stockade: trace `%s`: accept: %s\n", path,
                                strerror(errno));
                        return -1;
                }
                r->follow = false; /* a socket blocks until data or the end */
                trace_in_init(&r->in, r->fd);
                return 0;
        }
        r->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0 && errno == EACCES) {
                if (unlock_killed(path))
                        r->fd = open(path, O_RDONLY | O_CLOEXEC);
                else
                        errno = EACCES;
        }
        if (r->fd < 0) {
                fprintf(stderr, "stockade: trace `%s`: %s%s\n", path, strerror(errno),
                        errno == EACCES ? " (a trace being recorded is mode 0200 until the run "
                                          "ends; follow it as root, or record to unix:PATH)"
                                        : "");
                return -1;
        }
        trace_in_init(&r->in, r->fd);
        return 0;
}

static void close_trace(struct reader *r)
{
        trace_in_free(&r->in);
        if (r->fd > STDIN_FILENO)
                close(r->fd);
}

/* Call fn for every record. Returns the exit code: 0, or EXIT_DAMAGED after one line. */
static int each_record(struct reader *r, void (*fn)(struct reader *r, const Record *rec, void *arg),
                       void *arg)
{
        bool ended = false;

        for (;;) {
                Record *rec;
                enum trace_status st = trace_in_next(&r->in, &rec, r->follow && !ended);

                if (st == TRACE_OK) {
                        ended = rec->kind_case == STOCKADE__TRACE__RECORD__KIND_END;
                        fn(r, rec, arg);
                        stockade__trace__record__free_unpacked(rec, NULL);
                        continue;
                }
                if (st == TRACE_AGAIN) {
                        struct timespec ts = {0, 100000000};
                        fflush(stdout);
                        if (interrupted)
                                return 0;
                        nanosleep(&ts, NULL);
                        continue;
                }
                if (st == TRACE_END) {
                        if (!ended && r->in.records) {
                                fprintf(stderr,
                                        "stockade: trace `%s`: no end record: the run "
                                        "was cut short (%llu records read)\n",
                                        r->path, (unsigned long long)r->in.records);
                                return EXIT_DAMAGED;
                        }
                        return 0;
                }
                fflush(stdout);
                fprintf(stderr, "stockade: trace `%s`: %s\n", r->path, r->in.why);
                return EXIT_DAMAGED;
        }
}

/* ---- show ------------------------------------------------------------------------------- */

const char *trace_verdict_name(Stockade__Trace__Verdict v)
{
        switch (v) {
        case STOCKADE__TRACE__VERDICT__ALLOWED:
                return "allowed";
        case STOCKADE__TRACE__VERDICT__EMULATED:
                return "emulated";
        case STOCKADE__TRACE__VERDICT__DENIED:
                return "denied";
        case STOCKADE__TRACE__VERDICT__ASKED:
                return "asked";
        case STOCKADE__TRACE__VERDICT__KILLED:
                return "killed";
        case STOCKADE__TRACE__VERDICT__VERDICT_UNSPECIFIED:
        case _STOCKADE__TRACE__VERDICT_IS_INT_SIZE:
                break;
        }
        return "?";
}

static unsigned row_flags(uint32_t nr)
{
        const struct syscall_row *row = syscall_lookup(AUDIT_ARCH_X86_64, (int)nr);

        return row ? row->flags : 0;
}

bool trace_event_refused(const Stockade__Trace__Event *e)
{
        if (e->verdict == STOCKADE__TRACE__VERDICT__DENIED || e->would_deny)
                return true;
        return e->verdict == STOCKADE__TRACE__VERDICT__EMULATED && e->has_result &&
               (e->error == EACCES || e->error == EPERM || e->error == EROFS);
}

static bool event_matches(const struct reader *r, const Stockade__Trace__Event *e)
{
        if (r->pid && e->pid != r->pid && e->tid != r->pid)
                return false;
        switch (r->only) {
        case ONLY_ALL:
                return true;
        case ONLY_DENIED:
                return trace_event_refused(e);
        case ONLY_NET:
                return row_flags(e->nr) & SF_NET;
        case ONLY_EXEC:
                return strncmp(e->syscall, "execve", 6) == 0;
        case ONLY_FILES:
                return row_flags(e->nr) & (SF_PATH | SF_FD);
        }
        return true;
}

/*
 * A string of the trace as it may be shown on a terminal: much of it comes from the sandboxed
 * program (exec paths, argv, symbol and file names of a backtrace, unix socket names), which
 * could carry escape sequences for the user's terminal, or a newline that forges a line.
 * Control bytes (C0, DEL, and C1 as UTF-8 encodes it) are shown as \xHH; the rest, UTF-8
 * included, as it is. The result lives until the eighth call after.
 */
const char *trace_printable(const char *s)
{
        static char bufs[8][4 * 4096 + 1];
        static unsigned next;
        char *out = bufs[next++ % 8], *o = out;
        const unsigned char *p = (const unsigned char *)(s ? s : "");

        for (; *p && o < out + sizeof(bufs[0]) - 5; p++) {
                if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
                        unsigned c = *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f ? *++p : *p;

                        o += sprintf(o, "\\x%02x", c);
                } else {
                        *o++ = (char)*p;
                }
        }
        *o = '\0';
        return out;
}
#define P(s) trace_printable(s)

static void print_time(uint64_t ns)
{
        printf("%4llu.%06llu ", (unsigned long long)(ns / 1000000000ull),
               (unsigned long long)(ns / 1000 % 1000000));
}

static void show_event(struct reader *r, const Stockade__Trace__Event *e)
{
        if (!event_matches(r, e))
                return;
        print_time(e->time_ns);
        printf("%-6u %s(", e->tid, e->syscall);
        for (size_t i = 0; i < e->n_args; i++)
                printf("%s%s", i ? ", " : "", P(e->args[i]));
        if (!e->has_result)
                printf(") = ?");
        else if (e->error)
                printf(") = -1 %s (%s)", strerrorname_np(e->error) ?: "E?", strerror(e->error));
        else
                printf(") = %" PRId64, e->result);
        printf(" <%s%s%s%s %.1fus>", trace_verdict_name(e->verdict),
               e->would_deny ? ", would deny" : "", e->rule[0] ? ": " : "", P(e->rule),
               (double)e->duration_ns / 1000.0);
        if (e->backtrace_id) {
                printf(" [backtrace %" PRIu64 "]", e->backtrace_id);
                if (r->n_shown_bt < ARRAY_SIZE(r->shown_bt))
                        r->shown_bt[r->n_shown_bt++] = e->backtrace_id;
        }
        putchar('\n');
}

static void show_process(struct reader *r, const Stockade__Trace__Process *p)
{
        if (r->pid && p->pid != r->pid && p->tid != r->pid && p->child != r->pid)
                return;
        if (r->only != ONLY_ALL &&
            !(r->only == ONLY_EXEC && p->kind == STOCKADE__TRACE__PROCESS__KIND__EXEC))
                return;
        print_time(p->time_ns);
        printf("%-6u ", p->tid);
        switch (p->kind) {
        case STOCKADE__TRACE__PROCESS__KIND__FORK:
        case STOCKADE__TRACE__PROCESS__KIND__VFORK:
        case STOCKADE__TRACE__PROCESS__KIND__CLONE:
                printf("+++ %s -> %u +++\n",
                       p->kind == STOCKADE__TRACE__PROCESS__KIND__FORK    ? "fork"
                       : p->kind == STOCKADE__TRACE__PROCESS__KIND__VFORK ? "vfork"
                                                                          : "clone",
                       p->child);
                break;
        case STOCKADE__TRACE__PROCESS__KIND__EXEC:
                printf("+++ exec %s [", P(p->path));
                for (size_t i = 0; i < p->n_argv; i++) {
                        if (i)
                                fputs(", ", stdout);
                        json_string(stdout, p->argv[i]);
                }
                printf("%s] +++\n", p->argv_truncated ? ", ..." : "");
                break;
        case STOCKADE__TRACE__PROCESS__KIND__EXIT:
                if (p->exited)
                        printf("+++ exited with %d +++\n", p->exit_code);
                else
                        printf("+++ killed by SIG%s%s +++\n", sigabbrev_np(p->signal) ?: "?",
                               p->core ? " (core dumped)" : "");
                break;
        case STOCKADE__TRACE__PROCESS__KIND__KILL:
                printf("+++ killed by stockade: %s +++\n", P(p->reason));
                break;
        case STOCKADE__TRACE__PROCESS__KIND__KIND_UNSPECIFIED:
        case _STOCKADE__TRACE__PROCESS__KIND_IS_INT_SIZE:
                printf("+++ ? +++\n");
                break;
        }
}

static void show_backtrace(struct reader *r, const Stockade__Trace__Backtrace *b)
{
        bool wanted = r->only == ONLY_ALL && !r->pid;

        for (size_t i = 0; i < r->n_shown_bt && !wanted; i++)
                wanted = r->shown_bt[i] == b->id;
        if (!wanted)
                return;
        printf("  backtrace %" PRIu64 " of %u%s%s%s:\n", b->id, b->tid, b->error[0] ? " (" : "",
               P(b->error), b->error[0] ? ")" : "");
        for (size_t i = 0; i < b->n_frames; i++) {
                const Stockade__Trace__Frame *f = b->frames[i];
                const char *obj = strrchr(f->object, '/');
                printf("    #%-2zu %#" PRIx64 " %s", i, f->ip,
                       f->function[0] ? P(f->function) : "??");
                if (f->function[0])
                        printf("+%#" PRIx64, f->offset);
                printf(" (%s)\n", P(obj ? obj + 1 : f->object[0] ? f->object : "?"));
        }
        if (b->truncated)
                printf("    ... (capped)\n");
}

/* "# network: none, allow *:443, deny 10.0.0.0/8" (traces from before issue 8: nothing). */
static void show_network(const Stockade__Trace__Policy *p)
{
        if (!p || !p->net || !*p->net)
                return;
        printf("# network: %s", p->net);
        for (size_t i = 0; i < p->n_net_allow; i++)
                printf("%s %s", i ? "," : ", allow", p->net_allow[i]);
        for (size_t i = 0; i < p->n_net_deny; i++)
                printf("%s %s", i ? "," : ", deny", p->net_deny[i]);
        if (p->limits && p->limits->max_connections)
                printf(", max %llu connections", (unsigned long long)p->limits->max_connections);
        putchar('\n');
}

static void show_one(struct reader *r, const Record *rec, void *arg)
{
        switch (rec->kind_case) {
        case STOCKADE__TRACE__RECORD__KIND_SESSION: {
                const Stockade__Trace__Session *s = rec->session;
                if (r->only != ONLY_ALL || r->pid)
                        return;
                printf("# stockade %s, level %s, backtraces %s, %s\n# command:", s->version,
                       s->level, s->backtrace, s->kernel);
                for (size_t i = 0; i < s->n_argv; i++) {
                        putchar(' ');
                        json_string(stdout, s->argv[i]);
                }
                printf("\n# cwd: %s\n", P(s->cwd));
                show_network(s->policy);
                if (s->policy && s->policy->fast)
                        printf("# --fast: stat, access, readlink%s listings%s were the "
                               "kernel's%s\n",
                               s->policy->fast_reads ? "," : " and",
                               s->policy->fast_reads ? " and opens for reading" : "",
                               s->level && strcmp(s->level, "all") == 0 ? " (recorded as allowed)"
                                                                        : " and are not recorded");
                break;
        }
        case STOCKADE__TRACE__RECORD__KIND_EVENT:
                show_event(r, rec->event);
                break;
        case STOCKADE__TRACE__RECORD__KIND_PROCESS:
                show_process(r, rec->process);
                break;
        case STOCKADE__TRACE__RECORD__KIND_BACKTRACE:
                show_backtrace(r, rec->backtrace);
                break;
        case STOCKADE__TRACE__RECORD__KIND_LIMIT:
                if (r->only != ONLY_ALL && r->only != ONLY_DENIED)
                        return;
                print_time(rec->limit->time_ns);
                printf("%-6u !!! limit %s (%" PRIu64 ") reached !!!\n", rec->limit->tid,
                       P(rec->limit->limit), rec->limit->value);
                break;
        case STOCKADE__TRACE__RECORD__KIND_DNS:
                /* a query the supervisor answered for a task, or (pid 0) for none it knew */
                if ((r->only != ONLY_ALL && r->only != ONLY_NET &&
                     !(r->only == ONLY_DENIED &&
                       rec->dns->verdict == STOCKADE__TRACE__VERDICT__DENIED)) ||
                    (r->pid && rec->dns->pid != r->pid && rec->dns->tid != r->pid))
                        return;
                print_time(rec->dns->time_ns);
                printf("%-6u dns %s %s <%s>\n", rec->dns->tid, P(rec->dns->qtype),
                       P(rec->dns->name), trace_verdict_name(rec->dns->verdict));
                break;
        case STOCKADE__TRACE__RECORD__KIND_CONNECT:
                if ((r->only != ONLY_ALL && r->only != ONLY_NET &&
                     !(r->only == ONLY_DENIED &&
                       rec->connect->verdict == STOCKADE__TRACE__VERDICT__DENIED)) ||
                    (r->pid && rec->connect->pid != r->pid && rec->connect->tid != r->pid))
                        return;
                print_time(rec->connect->time_ns);
                printf("%-6u connect %s %s <%s>\n", rec->connect->tid, P(rec->connect->protocol),
                       P(rec->connect->address), trace_verdict_name(rec->connect->verdict));
                break;
        case STOCKADE__TRACE__RECORD__KIND_END: {
                const Stockade__Trace__End *e = rec->end;
                if (r->only != ONLY_ALL || r->pid)
                        return;
                printf("# end: exit %d%s, %" PRIu64 " events, %" PRIu64 " dropped\n", e->exit_code,
                       e->timed_out ? " (timed out)" : "", e->events, e->events_dropped);
                break;
        }
        case STOCKADE__TRACE__RECORD__KIND__NOT_SET:
        case _STOCKADE__TRACE__RECORD__KIND__CASE_IS_INT_SIZE:
                break; /* a kind this version does not know: skipped */
        }
}

static int parse_only(const char *s, enum only *out)
{
        static const char *const names[] = {[ONLY_DENIED] = "denied",
                                            [ONLY_NET] = "net",
                                            [ONLY_EXEC] = "exec",
                                            [ONLY_FILES] = "files"};

        for (size_t i = 1; i < ARRAY_SIZE(names); i++)
                if (strcmp(s, names[i]) == 0) {
                        *out = (enum only)i;
                        return 0;
                }
        return -1;
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "stockade: trace: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (see stockade help trace)\n");
        return EXIT_STOCKADE;
}

int trace_cli_main(int argc, char **argv)
{
        static const struct option longs[] = {
                {"only", required_argument, NULL, 'o'}, {"pid", required_argument, NULL, 'p'},
                {"follow", no_argument, NULL, 'f'},     {"format", required_argument, NULL, 'F'},
                {"help", no_argument, NULL, 'h'},       {0},
        };
        struct reader r = {.fd = -1};
        const char *cmd, *format = NULL;
        int c, code;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                fputs(usage, argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_STOCKADE : 0;
        }
        cmd = argv[1];
        if (strcmp(cmd, "show") && strcmp(cmd, "stats") && strcmp(cmd, "export"))
                return bad_usage("unknown command `%s`; expected show, stats or export", cmd);
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc - 1, argv + 1, "+h", longs, NULL)) != -1) {
                char *end;
                switch (c) {
                case 'o':
                        if (parse_only(optarg, &r.only) < 0)
                                return bad_usage("--only `%s`: expected denied, net, exec or files",
                                                 optarg);
                        break;
                case 'p':
                        r.pid = strtol(optarg, &end, 10);
                        if (*end || r.pid <= 0)
                                return bad_usage("--pid `%s`: expected a process number", optarg);
                        break;
                case 'f':
                        r.follow = true;
                        break;
                case 'F':
                        format = optarg;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return 0;
                default:
                        return bad_usage("%s: unknown option or missing value", argv[optind]);
                }
        }
        if (optind + 1 != argc - 1)
                return bad_usage("%s: expected one trace file", cmd);
        if (strcmp(cmd, "show") && (r.only || r.pid || r.follow))
                return bad_usage("%s: --only, --pid and --follow are options of show", cmd);
        if (strcmp(cmd, "export") == 0 &&
            (!format || (strcmp(format, "jsonl") && strcmp(format, "chrome"))))
                return bad_usage("export: --format `%s`: expected jsonl or chrome",
                                 format ? format : "");
        if (open_trace(&r, argv[optind + 1]) < 0)
                return EXIT_DAMAGED;
        if (r.follow) {
                struct sigaction sa = {.sa_handler = on_int};
                sigaction(SIGINT, &sa, NULL);
        }
        if (strcmp(cmd, "show") == 0)
                code = each_record(&r, show_one, NULL);
        else if (strcmp(cmd, "stats") == 0)
                code = trace_stats(&r);
        else
                code = trace_export(&r, format);
        fflush(stdout);
        close_trace(&r);
        return code;
}

int trace_each_record(struct reader *r, void (*fn)(struct reader *r, const Record *rec, void *arg),
                      void *arg)
{
        return each_record(r, fn, arg);
}

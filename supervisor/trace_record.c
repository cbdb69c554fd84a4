/*
 * The records that are not system calls: the session's start and end (written by the main
 * thread directly, before the writer starts and after it stopped) and the process events
 * of ptrace.c (packed on the main thread, pushed through its ring).
 */
#include "supervisor/trace_int.h"
#include "supervisor/util.h"
#include "syscalls/table.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARGV_MAX 4096 /* bytes of an exec's argv kept */

static const char *ipc_name(enum ipc_isolation ipc)
{
        switch (ipc) {
        case IPC_NS:
                return "namespace";
        case IPC_NS_USERNS:
                return "user namespace";
        case IPC_SHARED:
                return "denied";
        }
        return "";
}

static void fill_policy(const struct supervisor *sup, Stockade__Trace__Policy *p,
                        Stockade__Trace__Limits *l, char **env_ops, char **writable,
                        char **net_rules)
{
        const struct config *cfg = sup->cfg;

        p->mode = cfg->mode == MODE_AUDIT ? "audit" : "enforce";
        l->timeout_ms = cfg->limits.timeout_ms;
        l->cpu_s = cfg->limits.cpu_s;
        l->memory = cfg->limits.memory;
        l->max_procs = cfg->limits.max_procs;
        l->max_files = cfg->limits.max_files;
        l->max_file_size = cfg->limits.max_file_size;
        l->max_connections = cfg->limits.max_connections;
        p->limits = l;
        p->set_user = cfg->set_user;
        p->uid = cfg->uid;
        p->gid = cfg->gid;
        p->clear_env = cfg->clear_env;
        p->allow_degraded = cfg->allow_degraded;
        p->fast = cfg->fast;
        p->fast_reads = sup->fast_reads;
        for (size_t i = 0; i < cfg->n_env_ops; i++) {
                /* --env NAME=VALUE: the name only, the value may be a secret */
                env_ops[i] = strndup(cfg->env_ops[i].arg, strcspn(cfg->env_ops[i].arg, "="));
        }
        p->n_env_ops = cfg->n_env_ops;
        p->env_ops = env_ops;
        for (size_t i = 0; i < sup->places.n; i++)
                writable[p->n_writable++] = sup->places.v[i].path;
        p->writable = writable;
        p->net = cfg->net.mode == NETPOL_MODE_HOST ? "host" : "none";
        p->net_allow = net_rules; /* the allow rules, then the deny rules, in their order */
        for (size_t i = 0; i < cfg->net.n; i++)
                if (!cfg->net.rules[i].deny)
                        net_rules[p->n_net_allow++] = cfg->net.rules[i].spec;
        p->net_deny = net_rules + p->n_net_allow;
        for (size_t i = 0; i < cfg->net.n; i++)
                if (cfg->net.rules[i].deny)
                        p->net_deny[p->n_net_deny++] = cfg->net.rules[i].spec;
}

void trace_write_session(struct supervisor *sup, char *const *envp)
{
        struct trace *t = sup->trace;
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Session s = STOCKADE__TRACE__SESSION__INIT;
        Stockade__Trace__Policy pol = STOCKADE__TRACE__POLICY__INIT;
        Stockade__Trace__Limits lim = STOCKADE__TRACE__LIMITS__INIT;
        Stockade__Trace__Layers lay = STOCKADE__TRACE__LAYERS__INIT;
        size_t nenv = 0, nargv = 0;
        char cwd[4096] = "", kernel[600];
        struct utsname u;
        struct timespec ts;

        while (envp && envp[nenv])
                nenv++;
        while (sup->cfg->argv[nargv])
                nargv++;
        Stockade__Trace__EnvVar *vars = xcalloc(nenv + 1, sizeof(*vars));
        Stockade__Trace__EnvVar **pvars = xcalloc(nenv + 1, sizeof(*pvars));
        char **names = xcalloc(nenv + 1, sizeof(*names));
        char **env_ops = xcalloc(sup->cfg->n_env_ops + 1, sizeof(char *));
        char **net_rules = xcalloc(sup->cfg->net.n + 1, sizeof(char *));
        char *writable[PLACES_MAX];

        for (size_t i = 0; i < nenv; i++) {
                const char *eq = strchr(envp[i], '=');
                stockade__trace__env_var__init(&vars[i]);
                names[i] = strndup(envp[i], eq ? (size_t)(eq - envp[i]) : strlen(envp[i]));
                vars[i].name = names[i];
                if (sup->cfg->trace_env && eq) {
                        vars[i].value = (char *)eq + 1;
                        vars[i].has_value = true;
                }
                pvars[i] = &vars[i];
        }
        s.version = STOCKADE_VERSION;
        s.n_argv = nargv;
        s.argv = sup->cfg->argv;
        if (!getcwd(cwd, sizeof(cwd)))
                cwd[0] = 0;
        s.cwd = cwd;
        s.n_env = nenv;
        s.env = pvars;
        fill_policy(sup, &pol, &lim, env_ops, writable, net_rules);
        s.policy = &pol;
        if (uname(&u) == 0) {
                snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.version);
                s.kernel = kernel;
                s.machine = u.machine;
        }
        lay.seccomp_notify = sup->layers.user_notif;
        lay.sync_wake_up = sup->layers.sync_wake_up;
        lay.wait_killable_recv = sup->layers.wait_killable_recv;
        lay.ptrace = sup->layers.ptrace;
        lay.landlock_abi = (uint32_t)sup->layers.landlock_abi;
        lay.ipc = (char *)ipc_name(sup->layers.ipc);
        s.layers = &lay;
        clock_gettime(CLOCK_REALTIME, &ts);
        s.start_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec -
                          (trace_now() - t->mono0);
        s.start_mono_ns = t->mono0;
        s.level = sup->cfg->trace_level == TRACE_LEVEL_ALL ? "all" : "security";
        s.backtrace = sup->cfg->trace_backtrace == TRACE_BT_ALL     ? "all"
                      : sup->cfg->trace_backtrace == TRACE_BT_NEVER ? "never"
                                                                    : "denied";
        s.supervisor_pid = (uint32_t)getpid();
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_SESSION;
        rec.session = &s;
        trace_out_record(&t->out, &rec);
        trace_out_flush(&t->out);

        for (size_t i = 0; i < nenv; i++)
                free(names[i]);
        for (size_t i = 0; i < sup->cfg->n_env_ops; i++)
                free(env_ops[i]);
        free(vars);
        free(pvars);
        free(names);
        free(env_ops);
        free(net_rules);
}

uint64_t trace_dropped(const struct trace *t);

void trace_write_end(struct supervisor *sup, int code)
{
        struct trace *t = sup->trace;
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__End e = STOCKADE__TRACE__END__INIT;
        size_t n = 0, k = 0;
        struct rusage ru;

        e.time_ns = trace_now() - t->mono0;
        e.exit_code = code;
        if (sup->root_exited && WIFEXITED(sup->root_status)) {
                e.exited = true;
        } else if (sup->root_exited && WIFSIGNALED(sup->root_status)) {
                e.signal = WTERMSIG(sup->root_status);
        }
        e.timed_out = sup->timed_out;
        if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
                e.user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
                e.system_us =
                        (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
                e.max_rss_kb = (uint64_t)ru.ru_maxrss;
        }
        e.notifications = sup->n.notifications;
        e.tasks = sup->n.tasks_seen;
        e.forks_refused = sup->n.forks_refused;
        e.would_deny = sup->n.would_deny;
        e.events = t->events;
        e.events_dropped = trace_dropped(t);
        for (int nr = 0; nr < SYSCALL_NR_LIMIT; nr++)
                for (int v = 0; v < 6; v++)
                        n += t->counts[nr][v].n != 0;
        Stockade__Trace__SyscallCount *c = xcalloc(n + 1, sizeof(*c));
        Stockade__Trace__SyscallCount **pc = xcalloc(n + 1, sizeof(*pc));
        for (int nr = 0; nr < SYSCALL_NR_LIMIT; nr++)
                for (int v = 0; v < 6; v++) {
                        const struct syscall_row *row;
                        if (!t->counts[nr][v].n)
                                continue;
                        row = syscall_lookup(AUDIT_ARCH_X86_64, nr);
                        stockade__trace__syscall_count__init(&c[k]);
                        c[k].nr = (uint32_t)nr;
                        c[k].syscall = row ? (char *)row->name : "?";
                        c[k].verdict = (Stockade__Trace__Verdict)v;
                        c[k].count = t->counts[nr][v].n;
                        c[k].time_ns = t->counts[nr][v].ns;
                        pc[k] = &c[k];
                        k++;
                }
        e.n_counts = k;
        e.counts = pc;
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_END;
        rec.end = &e;
        trace_out_record(&t->out, &rec);
        free(c);
        free(pc);
}

/* ---- process events ---------------------------------------------------------------------- */

static void push_process(struct supervisor *sup, Stockade__Trace__Process *p)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;

        p->time_ns = trace_now() - sup->trace->mono0;
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_PROCESS;
        rec.process = p;
        trace_push_record(sup->trace, TRACE_MAIN, &rec, (pid_t)p->tid, (pid_t)p->pid);
}

void trace_proc_new(struct supervisor *sup, pid_t parent, pid_t child, enum trace_proc_kind k)
{
        Stockade__Trace__Process p = STOCKADE__TRACE__PROCESS__INIT;
        struct trace *t = sup->trace;
        pid_t ptgid, ctgid;

        if (!t)
                return;
        ptgid = trace_tgid(t, parent);
        /* A clone is a thread of the parent's group, or a new process: ask. */
        ctgid = k == TRACE_CLONE ? trace_tgid(t, child) : child;
        if (!ctgid)
                ctgid = child;
        trace_learn_tgid(t, child, ctgid);
        p.kind = k == TRACE_FORK    ? STOCKADE__TRACE__PROCESS__KIND__FORK
                 : k == TRACE_VFORK ? STOCKADE__TRACE__PROCESS__KIND__VFORK
                                    : STOCKADE__TRACE__PROCESS__KIND__CLONE;
        p.pid = (uint32_t)ptgid;
        p.tid = (uint32_t)parent;
        p.child = (uint32_t)child;
        push_process(sup, &p);
}

/* /proc/PID/cmdline: NUL-separated, capped; the program may have rewritten it already (as
 * ps would show it). */
static size_t read_argv(pid_t pid, char *buf, size_t size, char **argv, size_t max, bool *trunc)
{
        char path[64];
        ssize_t n;
        size_t argc = 0;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return 0;
        *trunc = (size_t)n == size - 1;
        buf[n] = 0;
        for (char *p = buf; p < buf + n && argc < max; p += strlen(p) + 1)
                argv[argc++] = p;
        return argc;
}

void trace_proc_exec(struct supervisor *sup, pid_t pid)
{
        Stockade__Trace__Process p = STOCKADE__TRACE__PROCESS__INIT;
        char exe[4096], path[64], buf[ARGV_MAX], *argv[256];
        bool trunc = false;
        ssize_t n;

        if (!sup->trace)
                return;
        trace_learn_tgid(sup->trace, pid, pid);
        snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
        n = readlink(path, exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = 0;
        p.kind = STOCKADE__TRACE__PROCESS__KIND__EXEC;
        p.pid = p.tid = (uint32_t)pid;
        p.path = exe;
        p.n_argv = read_argv(pid, buf, sizeof(buf), argv, 256, &trunc);
        p.argv = argv;
        p.argv_truncated = trunc;
        push_process(sup, &p);
}

void trace_proc_exit(struct supervisor *sup, pid_t tid, int status)
{
        Stockade__Trace__Process p = STOCKADE__TRACE__PROCESS__INIT;

        if (!sup->trace)
                return;
        p.kind = STOCKADE__TRACE__PROCESS__KIND__EXIT;
        p.tid = (uint32_t)tid;
        p.pid = (uint32_t)trace_tgid(sup->trace, tid);
        if (WIFEXITED(status)) {
                p.exited = true;
                p.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
                p.signal = WTERMSIG(status);
                p.core = WCOREDUMP(status);
        }
        push_process(sup, &p);
}

void trace_proc_killed(struct supervisor *sup, pid_t tid, const char *reason)
{
        Stockade__Trace__Process p = STOCKADE__TRACE__PROCESS__INIT;

        if (!sup->trace)
                return;
        p.kind = STOCKADE__TRACE__PROCESS__KIND__KILL;
        p.tid = (uint32_t)tid;
        p.pid = (uint32_t)trace_tgid(sup->trace, tid);
        p.reason = (char *)reason;
        push_process(sup, &p);
}

void trace_dns(struct supervisor *sup, const char *name, const char *type, char **answers,
               size_t n_answers, bool refused, const char *rule)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Dns d = STOCKADE__TRACE__DNS__INIT;

        if (!sup->trace)
                return;
        d.time_ns = trace_now() - sup->trace->mono0;
        d.name = (char *)name;
        d.qtype = (char *)type;
        d.n_answers = n_answers;
        d.answers = answers;
        d.verdict = refused ? STOCKADE__TRACE__VERDICT__DENIED : STOCKADE__TRACE__VERDICT__ALLOWED;
        d.rule = (char *)rule;
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_DNS;
        rec.dns = &d;
        trace_push_record(sup->trace, TRACE_DNS, &rec, 0, 0);
}

void trace_limit(struct supervisor *sup, pid_t tid, const char *limit, uint64_t value)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Limit l = STOCKADE__TRACE__LIMIT__INIT;

        if (!sup->trace)
                return;
        l.time_ns = trace_now() - sup->trace->mono0;
        l.tid = (uint32_t)tid;
        l.pid = (uint32_t)trace_tgid(sup->trace, tid);
        l.limit = (char *)limit;
        l.value = value;
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_LIMIT;
        rec.limit = &l;
        trace_push_record(sup->trace, TRACE_MAIN, &rec, 0, 0);
}

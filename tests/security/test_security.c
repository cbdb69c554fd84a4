/*
 * Security tests: DESIGN.md's "Rules that keep it secure", each attack performed for real by
 * tests/helpers/probe.c under `stockade run`.
 *
 * A test checks the refusal (the probe exits with the errno it got, so the exact errno is
 * asserted) and, where it can be seen, the effect from outside the sandbox: a victim process
 * started natively must still be alive, untraced, with its memory intact.
 *
 * Two extra runs make a result mean something:
 *   - audit mode (`--mode audit -v`) must report the call as one that would be denied, on its
 *     line of -v and in the summary at exit: the table itself refuses it, not merely the kernel (the sandbox holds no capabilities, so
 *     many attacks would fail without any filter). Only for calls harmless when they run;
 *   - a native control run shows whether the attack works on this host at all. It is
 *     printed, never asserted: hosts differ.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum {
        TIMEOUT_S = 30, /* watchdog of every stockade run */
        KILLED_BY_SIGSYS = 128 + SIGSYS,
        ANY_REFUSAL = -1,         /* the errno is not specified; the effect check decides */
        ANY_RESULT = -2,          /* only the effect on the victim counts */
        PROBE_SETUP_FAILED = 123, /* probe.c: the attack could not even be prepared */
        MAX_ARGS = 8,
};

/* ---- running the probe ----------------------------------------------------------------- */

/* stockade run OPTS... -- PROBE ARGS... */
static void run_sandboxed_at(const char *probe, const char *const *opts, const char *const *args,
                             struct run_result *r)
{
        const char *v[2 * MAX_ARGS + 3];
        size_t n = 0;

        for (; opts && *opts; opts++)
                v[n++] = *opts;
        v[n++] = "--";
        v[n++] = probe;
        for (; *args; args++)
                v[n++] = *args;
        v[n] = NULL;
        assert_int_equal(runner_stockade_run(v, TIMEOUT_S, r), 0);
}

static void run_sandboxed(const char *const *opts, const char *const *args, struct run_result *r)
{
        run_sandboxed_at(runner_probe(), opts, args, r);
}

static void run_native(const char *probe, const char *const *args, struct run_result *r)
{
        const char *v[MAX_ARGS + 2];
        size_t n = 0;

        v[n++] = probe;
        for (; *args; args++)
                v[n++] = *args;
        v[n] = NULL;
        assert_int_equal(runner_run((char *const *)v, NULL, TIMEOUT_S, r), 0);
}

static const char *code_name(int code)
{
        if (code == -1)
                return "watchdog fired";
        if (code == 0)
                return "ok";
        if (code > 128)
                return sigabbrev_np(code - 128) ?: "signal";
        return strerrorname_np(code) ?: "?";
}

/* Show what the sandboxed program said before an assertion fails. */
static void show(const char *what, const struct run_result *r)
{
        print_message("  %s: exit %d (%s)\n  stdout: %s  stderr: %s", what, r->exit_code,
                      code_name(r->exit_code), r->out_len ? r->out : "(none)\n",
                      r->err_len ? r->err : "(none)\n");
}

static void expect_code(const char *what, const struct run_result *r, int code)
{
        if (r->exit_code == code)
                return;
        if (code == ANY_RESULT && r->exit_code >= 0 && r->exit_code < PROBE_SETUP_FAILED)
                return;
        if (code == ANY_REFUSAL && r->exit_code > 0 && r->exit_code < PROBE_SETUP_FAILED)
                return;
        show(what, r);
        if (r->exit_code == PROBE_SETUP_FAILED)
                fail_msg("%s: the probe could not prepare the attack", what);
        if (code == ANY_REFUSAL)
                fail_msg("%s: the attack was not refused (exit %d)", what, r->exit_code);
        assert_int_equal(r->exit_code, code);
}

static void expect_output(const struct run_result *r, const char *needle)
{
        if (!strstr(r->out, needle)) {
                show("sandboxed", r);
                fail_msg("stdout lacks \"%s\"", needle);
        }
}

/* A control that succeeds proves the attack real here; one that fails is only noted. */
static void note_control(const char *name, const struct run_result *r, const char *effect)
{
        print_message("  control: native `probe %s` exits %d (%s)%s%s: %s\n", name, r->exit_code,
                      code_name(r->exit_code), effect ? ", " : "", effect ? effect : "",
                      r->exit_code == 0 ? "the attack is real on this host"
                                        : "the host refuses it even without stockade");
}

/* ---- simple denials: the exit code is the whole story ---------------------------------- */

enum audit_check {
        AUDIT_NONE,     /* not run in audit mode: running the call would do harm */
        AUDIT_REPORTS,  /* audit mode lets it run and reports "NAME(... would" and "x NAME(" */
        AUDIT_ENFORCED, /* integrity or a silent fallback: refused in audit mode too, same code */
};

struct denial {
        const char *name;        /* the test's name */
        const char *args[4];     /* the probe's arguments */
        int code;                /* stockade's exit code: the errno, or 128+signal */
        enum audit_check audit;  /* AUDIT_NONE unless given */
        const char *audit_sc[3]; /* the syscalls that AUDIT_REPORTS names */
        const char *control;     /* probe mode for the native control, or NULL */
        int absent;              /* the control's exit code when this host lacks the attack */
};

/* AUDIT(...): the syscalls audit mode must name. */
#define AUDIT(...) .audit = AUDIT_REPORTS, .audit_sc = {__VA_ARGS__}

static const struct denial denials[] = {
        {.name = "mount", .args = {"mount"}, .code = EPERM, .control = "mount"},
        {.name = "chroot", .args = {"chroot"}, .code = EPERM, AUDIT("chroot"), .control = "chroot"},
        {.name = "unshare_user",
         .args = {"unshare_user"},
         .code = EPERM,
         AUDIT("unshare"),
         .control = "unshare_user"},
        {.name = "setns", .args = {"setns"}, .code = EPERM, AUDIT("setns"), .control = "setns"},
        {.name = "clone_newuser",
         .args = {"clone_newuser"},
         .code = EPERM,
         AUDIT("clone"),
         .control = "clone_newuser"},
        /* ENOSYS in audit mode too, and not reported: libc's fallback to clone is silent
         * (and audited there). Its flags are in memory, where no one has judged them. */
        {.name = "clone3_newuser",
         .args = {"clone3_newuser"},
         .code = ENOSYS,
         .audit = AUDIT_ENFORCED,
         .control = "clone3_newuser"},
        /* An untraced child would escape the tree: teardown, --max-procs, EXITKILL. */
        {.name = "clone_untraced",
         .args = {"clone_untraced"},
         .code = EPERM,
         AUDIT("clone"),
         .control = "clone_untraced"},
        {.name = "ptrace_traceme",
         .args = {"ptrace_traceme"},
         .code = EPERM,
         .control = "ptrace_traceme"},
        {.name = "bpf", .args = {"bpf"}, .code = EPERM, AUDIT("bpf"), .control = "bpf"},
        {.name = "keyctl",
         .args = {"keyctl"},
         .code = EPERM,
         AUDIT("add_key", "keyctl"),
         .control = "keyctl"},
        {.name = "open_by_handle_at",
         .args = {"open_by_handle_at"},
         .code = EPERM,
         AUDIT("name_to_handle_at", "open_by_handle_at"),
         .control = "open_by_handle_at"},
        {.name = "io_uring_setup",
         .args = {"io_uring_setup"},
         .code = ENOSYS,
         AUDIT("io_uring_setup"),
         .control = "io_uring_setup"},
        {.name = "userfaultfd",
         .args = {"userfaultfd"},
         .code = EPERM,
         AUDIT("userfaultfd"),
         .control = "userfaultfd"},
        {.name = "perf_event_open",
         .args = {"perf_event_open"},
         .code = EPERM,
         AUDIT("perf_event_open"),
         .control = "perf_event_open"},
        {.name = "personality",
         .args = {"personality"},
         .code = EPERM,
         AUDIT("personality"),
         .control = "personality"},
        {.name = "seccomp_listener",
         .args = {"seccomp_listener"},
         .code = EPERM,
         .audit = AUDIT_ENFORCED,
         .control = "seccomp_listener"},
        /* The control never touches the user's terminal: it injects into a pty of its own. */
        {.name = "tiocsti", .args = {"tiocsti"}, .code = EPERM, .control = "tiocsti_pty"},
        {.name = "socket_raw",
         .args = {"socket_raw"},
         .code = EPERM,
         AUDIT("socket"),
         .control = "socket_raw"},
        /* SOCK_RAW is refused before the family is looked at: EPERM, not EAFNOSUPPORT. */
        {.name = "socket_netlink",
         .args = {"socket_netlink"},
         .code = EPERM,
         AUDIT("socket"),
         .control = "socket_netlink"},
        {.name = "socket_netlink_dgram",
         .args = {"socket_netlink_dgram"},
         .code = EAFNOSUPPORT,
         AUDIT("socket"),
         .control = "socket_netlink_dgram"},
        {.name = "socket_packet",
         .args = {"socket_packet"},
         .code = EPERM,
         AUDIT("socket"),
         .control = "socket_packet"},
        {.name = "socket_packet_dgram",
         .args = {"socket_packet_dgram"},
         .code = EAFNOSUPPORT,
         AUDIT("socket"),
         .control = "socket_packet_dgram"},
        /* /proc/PPID/mem of the supervisor, opened for writing. The errno is not specified. */
        {.name = "supervisor_proc_mem",
         .args = {"parent_mem_open"},
         .code = ANY_REFUSAL,
         .control = "parent_mem_open"},
        /* pidfd_open of a pid <= 0 names no process: the kernel's EINVAL (Python's
         * test_posix checks it), not the ESRCH of a process outside the tree. */
        {.name = "pidfd_open_no_process", .args = {"pidfd_kill", "-1", "0"}, .code = EINVAL},
        /* Numbers without a row: between the two ranges, and far beyond the last. The kernel
         * answers ENOSYS for these too, so this checks only that the call fails closed
         * without killing the program; the filter's own verdict for them is checked in
         * tests/unit/test_filter.c (simulator and a real forked child). */
        {.name = "unknown_syscall_400", .args = {"unknown", "400"}, .code = ENOSYS},
        {.name = "unknown_syscall_9999", .args = {"unknown", "9999"}, .code = ENOSYS},
        /* Other ABIs are killed, in audit mode too: a notification for them would be judged
         * against the x86_64 table. */
        {.name = "x32_abi",
         .args = {"x32"},
         .code = KILLED_BY_SIGSYS,
         .audit = AUDIT_ENFORCED,
         .control = "x32"},
        /* Without IA32 emulation, int 0x80 is no syscall: the control dies of SIGSEGV. */
        {.name = "int80_abi",
         .args = {"int80"},
         .code = KILLED_BY_SIGSYS,
         .audit = AUDIT_ENFORCED,
         .control = "int80",
         .absent = 128 + SIGSEGV},
};

static const char *const audit_opts[] = {"--mode", "audit", "-v", NULL};

static void check_audit(const struct denial *d)
{
        struct run_result r;
        char needle[96];

        run_sandboxed(audit_opts, d->args, &r);
        if (d->audit == AUDIT_ENFORCED)
                expect_code("audit mode", &r, d->code);
        for (size_t i = 0; d->audit == AUDIT_REPORTS && d->audit_sc[i]; i++) {
                /* `probe[PID] (PATH): NAME(args) would ...` (-v), `N x NAME(...): E...` (exit) */
                for (int summary = 0; summary < 2; summary++) {
                        snprintf(needle, sizeof(needle), summary ? " x %s(" : "): %s(",
                                 d->audit_sc[i]);
                        if (!strstr(r.err, needle)) {
                                show("audit mode", &r);
                                fail_msg("audit mode does not report \"%s\"", needle);
                        }
                }
        }
        runner_free(&r);
}

/* The native control first: it tells whether the attack exists on this host at all. */
static void test_denial(void **state)
{
        const struct denial *d = *state;
        struct run_result r;

        if (d->control) {
                const char *args[] = {d->control, NULL};
                run_native(runner_probe(), args, &r);
                note_control(d->control, &r, NULL);
                if (d->absent && r.exit_code == d->absent) {
                        print_message("  skipped: this host has no such attack\n");
                        runner_free(&r);
                        skip();
                }
                runner_free(&r);
        }
        run_sandboxed(NULL, d->args, &r);
        expect_code("sandboxed", &r, d->code);
        runner_free(&r);
        if (d->audit != AUDIT_NONE)
                check_audit(d);
}

/* ---- attacks on a process outside the sandbox ------------------------------------------ */

/* `probe victim`, started natively: it prints "PID ADDR", holds "INTACT" at ADDR, and prints
 * what is there when its stdin closes. It leads its own process group. */
struct victim {
        pid_t pid; /* 0: none */
        int in, out;
        char pid_s[16], neg_pid_s[16], addr_s[32];
};

/* The running test's victim, which the teardown reaps even after a failed assertion. */
static struct victim current;

/* One line, byte by byte (nothing of a later line is consumed); false on timeout or EOF. */
static bool read_line(int fd, char *buf, size_t len, int timeout_ms)
{
        size_t n = 0;

        while (n + 1 < len) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, timeout_ms) <= 0 || read(fd, buf + n, 1) != 1)
                        break;
                if (buf[n++] == '\n')
                        break;
        }
        buf[n] = '\0';
        return n > 0 && buf[n - 1] == '\n';
}

/* fork+exec argv in a process group of its own, with pipes on its stdin and stdout. */
static pid_t spawn_piped(char *const argv[], int *in, int *out)
{
        int to[2], from[2];
        pid_t pid;

        assert_int_equal(pipe2(to, O_CLOEXEC), 0);
        assert_int_equal(pipe2(from, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                setpgid(0, 0);
                dup2(to[0], STDIN_FILENO);
                dup2(from[1], STDOUT_FILENO);
                execv(argv[0], runner_workspace_rw(argv));
                _exit(121);
        }
        close(to[0]);
        close(from[1]);
        *in = to[1];
        *out = from[0];
        return pid;
}

static void victim_start(struct victim *v)
{
        char *argv[] = {(char *)runner_probe(), "victim", NULL};
        char line[128];
        unsigned long addr;
        int pid;

        v->pid = spawn_piped(argv, &v->in, &v->out);
        if (!read_line(v->out, line, sizeof(line), 10000) ||
            sscanf(line, "%d %lx", &pid, &addr) != 2 || pid != v->pid)
                fail_msg("the victim did not start: \"%s\"", line);
        snprintf(v->pid_s, sizeof(v->pid_s), "%d", pid);
        snprintf(v->neg_pid_s, sizeof(v->neg_pid_s), "-%d", pid);
        snprintf(v->addr_s, sizeof(v->addr_s), "%#lx", addr);
}

/* Close its stdin and reap it: the line it answers with is what its buffer holds now, and
 * a victim that does not answer is described by how it died. */
static void victim_finish(struct victim *v, char *buf, size_t len)
{
        int status = 0;

        close(v->in);
        if (!read_line(v->out, buf, len, 10000))
                kill(v->pid, SIGKILL);
        waitpid(v->pid, &status, 0);
        close(v->out);
        v->pid = 0;
        buf[strcspn(buf, "\n")] = '\0';
        if (!buf[0] && WIFSIGNALED(status))
                snprintf(buf, len, "(killed by SIG%s)", sigabbrev_np(WTERMSIG(status)) ?: "?");
        else if (!buf[0])
                snprintf(buf, len, "(exited %d)", WEXITSTATUS(status));
}

static int victim_teardown(void **state)
{
        if (current.pid) {
                kill(current.pid, SIGKILL);
                waitpid(current.pid, NULL, 0);
                close(current.in);
                close(current.out);
                current.pid = 0;
        }
        return 0;
}

/* TracerPid from /proc/PID/status, -1 if it cannot be read. */
static int tracer_pid(pid_t pid)
{
        char path[64], line[256];
        int tracer = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "TracerPid: %d", &tracer) == 1)
                        break;
        fclose(f);
        return tracer;
}

struct victim_attack {
        const char *name;
        const char *args[5]; /* "$PID", "-$PID" and "$ADDR" stand for the victim's */
        int code;            /* an errno, or ANY_REFUSAL */
};

static const struct victim_attack victim_attacks[] = {
        /* With ADDR, a successful attach also writes "PWNED" there. */
        {"ptrace_attach", {"ptrace_attach", "$PID", "$ADDR"}, EPERM},
        {"process_vm_writev", {"process_vm_writev", "$PID", "$ADDR"}, EPERM},
        {"proc_pid_mem_write", {"proc_mem_write", "$PID", "$ADDR"}, ANY_REFUSAL},
        {"kill", {"kill", "$PID", "9"}, ESRCH},
        {"kill_process_group", {"kill", "-$PID", "9"}, ESRCH},
        /* Signal 0: were it let through, a real signal would reach every process we own. */
        {"kill_every_process", {"kill", "-1", "0"}, EPERM},
        {"tkill", {"tkill", "$PID", "9"}, ESRCH},
        {"pidfd_open_send_signal", {"pidfd_kill", "$PID", "9"}, ESRCH},
        /* pidfd_send_signal also takes an fd of /proc/PID, which no pidfd_open precedes. */
        {"procfd_send_signal", {"procfd_kill", "$PID", "9"}, ANY_REFUSAL},
        {"prlimit", {"prlimit", "$PID"}, ESRCH},
        /* SIGIO with F_SETSIG SIGKILL: refused at F_SETOWN by the supervisor, or the signal
         * is stopped by Landlock's scope (ABI 6) and the probe exits 0: the victim decides. */
        {"fsetown_kill", {"fsetown_kill", "$PID"}, ANY_RESULT},
};

static void expand(const char *const tmpl[], const struct victim *v, const char *out[])
{
        size_t i;

        for (i = 0; tmpl[i]; i++) {
                if (strcmp(tmpl[i], "$PID") == 0)
                        out[i] = v->pid_s;
                else if (strcmp(tmpl[i], "-$PID") == 0)
                        out[i] = v->neg_pid_s;
                else if (strcmp(tmpl[i], "$ADDR") == 0)
                        out[i] = v->addr_s;
                else
                        out[i] = tmpl[i];
        }
        out[i] = NULL;
}

/* What an attack did to the victim, NULL if nothing: it must still be untraced, alive (not
 * even a zombie) and its buffer intact. Finishes the victim. */
static const char *victim_harm(struct victim *v, char *buf, size_t len)
{
        siginfo_t si = {0};
        int tracer = tracer_pid(v->pid);
        bool running = waitid(P_PID, (id_t)v->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                       si.si_pid == 0;

        victim_finish(v, buf, len);
        if (tracer != 0)
                return "it is traced (or its status unreadable)";
        if (!running || strcmp(buf, "INTACT") != 0)
                return buf;
        return NULL;
}

/* The same attack run natively against a victim of its own; says what became of it. */
static void control_victim_attack(const struct victim_attack *a)
{
        const char *args[ARRAY_SIZE(a->args)], *harm;
        struct run_result r;
        char buf[128], effect[192];

        victim_start(&current);
        expand(a->args, &current, args);
        run_native(runner_probe(), args, &r);
        harm = victim_harm(&current, buf, sizeof(buf));
        snprintf(effect, sizeof(effect), "the victim: %s", harm ? harm : "unharmed");
        note_control(a->args[0], &r, effect);
        runner_free(&r);
}

/* The effect first: a wrong errno matters less than a victim that was hit. */
static void test_victim_attack(void **state)
{
        const struct victim_attack *a = *state;
        const char *args[ARRAY_SIZE(a->args)], *harm;
        struct run_result r;
        char buf[128];

        victim_start(&current);
        expand(a->args, &current, args);
        run_sandboxed(NULL, args, &r);
        harm = victim_harm(&current, buf, sizeof(buf));
        if (harm) {
                show("sandboxed", &r);
                fail_msg("the attack reached the process outside the sandbox: %s", harm);
        }
        expect_code("sandboxed", &r, a->code);
        runner_free(&r);
        control_victim_attack(a);
}

/* ---- what the program is handed -------------------------------------------------------- */

/* An fd the caller leaks into stockade (no O_CLOEXEC) must not reach the program either. */
static void test_no_fd_inherited(void **state)
{
        const char *args[] = {"fds", NULL};
        struct run_result r;
        int fd = open("/dev/null", O_RDONLY);

        assert_true(fd >= 0);
        assert_int_equal(dup2(fd, 42), 42);
        close(fd);
        run_sandboxed(NULL, args, &r);
        if (r.exit_code != 0 || strcmp(r.out, "fds: 0 1 2\n") != 0) {
                show("sandboxed", &r);
                fail_msg("the program holds fds beyond stdin, stdout and stderr");
        }
        runner_free(&r);
        run_native(runner_probe(), args, &r);
        print_message("  control: natively the probe holds %s", r.out);
        runner_free(&r);
        close(42);
}

static void test_capabilities_dropped(void **state)
{
        static const char *const want[] = {
                " CapInh=0000000000000000",
                " CapPrm=0000000000000000",
                " CapEff=0000000000000000",
                " CapAmb=0000000000000000",
                " NoNewPrivs=1",
                " Seccomp=2",
        };
        const char *args[] = {"caps", NULL};
        struct run_result r;

        run_sandboxed(NULL, args, &r);
        expect_code("sandboxed", &r, 0);
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                expect_output(&r, want[i]);
        /* Only a holder of CAP_SETPCAP can shrink the bounding set. */
        if (geteuid() == 0)
                expect_output(&r, " CapBnd=0000000000000000");
        else
                print_message("  not root: the bounding set is not checked\n");
        runner_free(&r);
}

/* A session of its own: no controlling terminal to push keystrokes into. */
static void test_new_session(void **state)
{
        const char *args[] = {"session", NULL};
        struct run_result r;

        run_sandboxed(NULL, args, &r);
        expect_code("sandboxed", &r, 0);
        expect_output(&r, "leader=1");
        expect_output(&r, "devtty=ENXIO");
        runner_free(&r);
}

/* PR_SET_DUMPABLE 0 would lock the supervisor out of /proc/PID; it must have no effect. */
static void test_stays_dumpable(void **state)
{
        const char *args[] = {"nondumpable", NULL};
        struct run_result r;

        run_sandboxed(NULL, args, &r);
        expect_code("sandboxed", &r, 0);
        expect_output(&r, "dumpable=1");
        runner_free(&r);
}

/* ---- setuid binaries ------------------------------------------------------------------- */

static char suid_dir[64]; /* the test's temporary directory, for the teardown */

static int suid_teardown(void **state)
{
        char path[96];

        if (suid_dir[0]) {
                snprintf(path, sizeof(path), "%s/probe", suid_dir);
                unlink(path);
                rmdir(suid_dir);
                suid_dir[0] = '\0';
        }
        return 0;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
        int in = open(from, O_RDONLY | O_CLOEXEC), out;
        char buf[65536];
        ssize_t n;

        assert_true(in >= 0);
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        assert_true(out >= 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                assert_int_equal(write(out, buf, (size_t)n), n);
        assert_int_equal(n, 0);
        close(in);
        close(out);
}

/* A copy of the probe, setuid to nobody (65534), in a directory anyone can search. */
static void make_setuid_probe(char *path, size_t len)
{
        strcpy(suid_dir, "/var/tmp/stockade-suid-XXXXXX");
        assert_non_null(mkdtemp(suid_dir));
        assert_int_equal(chmod(suid_dir, 0755), 0);
        snprintf(path, len, "%s/probe", suid_dir);
        copy_file(runner_probe(), path, 0755);
        assert_int_equal(chown(path, 65534, 65534), 0);
        assert_int_equal(chmod(path, 04755), 0); /* after chown, which clears the bit */
}

/* NO_NEW_PRIVS: executing a setuid binary changes no id. Root is needed to make one that
 * belongs to another user; the euid must stay 0 where natively it becomes 65534. */
static void test_setuid_bit_gains_nothing(void **state)
{
        const char *args[] = {"setuid_check", NULL};
        struct run_result r;
        char path[96];

        if (geteuid() != 0) {
                print_message("  skipped: only root can create a setuid binary of another user\n");
                skip();
        }
        make_setuid_probe(path, sizeof(path));
        /* uid 0 explicitly: the default as root (nobody) would be the setuid owner already. */
        run_sandboxed_at(path, (const char *[]){"--user", "root", NULL}, args, &r);
        expect_code("sandboxed", &r, 0);
        expect_output(&r, "setuid_check: euid 0 uid 0\n");
        runner_free(&r);
        run_native(path, args, &r);
        print_message("  control: natively %s%s", r.out,
                      strstr(r.out, "euid 65534") ? "" : "  (the setuid bit does nothing here)\n");
        runner_free(&r);
}

/* ---- fail closed ----------------------------------------------------------------------- */

/* Dead or a zombie (nobody may reap a process reparented to a container's init). */
static bool process_gone(pid_t pid)
{
        char st = runner_proc_state(pid);

        return !st || st == 'Z' || st == 'X';
}

static bool cmdline_has(pid_t pid, const char *needle)
{
        char path[64], buf[4096];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
                buf[i] = buf[i] ? buf[i] : ' ';
        buf[n > 0 ? n : 0] = '\0';
        return strstr(buf, needle) != NULL;
}

/* SIGKILL the supervisor: the sandboxed program (blocked reading our pipe) must die too. */
static void test_supervisor_death_kills_sandbox(void **state)
{
        bool degraded = getenv("STOCKADE_TEST_ALLOW_DEGRADED") != NULL;
        char *argv[] = {(char *)runner_stockade(),
                        "run",
                        degraded ? "--allow-degraded" : "--",
                        degraded ? "--" : (char *)runner_probe(),
                        degraded ? (char *)runner_probe() : "victim",
                        degraded ? "victim" : NULL,
                        NULL};
        char line[128] = "";
        int in, out, pid = 0;
        pid_t sup = spawn_piped(argv, &in, &out);
        bool started = read_line(out, line, sizeof(line), 10000) && sscanf(line, "%d", &pid) == 1;
        bool found = started && cmdline_has(pid, "victim");
        bool gone = false;

        kill(sup, SIGKILL);
        waitpid(sup, NULL, 0);
        for (int i = 0; found && !gone && i < 250; i++) {
                gone = process_gone(pid);
                if (!gone)
                        usleep(20000);
        }
        if (found && !gone)
                kill(pid, SIGKILL);
        close(in); /* only now: EOF on its stdin would end it anyway */
        close(out);
        if (!found)
                fail_msg("the sandboxed victim did not start, or is not pid %d: \"%s\"", pid, line);
        if (!gone)
                fail_msg("the sandboxed program outlived its supervisor by 5 s");
}

/* ---- the run --------------------------------------------------------------------------- */

int main(void)
{
        static const struct CMUnitTest fixed[] = {
                cmocka_unit_test(test_no_fd_inherited),
                cmocka_unit_test(test_capabilities_dropped),
                cmocka_unit_test(test_new_session),
                cmocka_unit_test(test_stays_dumpable),
                cmocka_unit_test_teardown(test_setuid_bit_gains_nothing, suid_teardown),
                cmocka_unit_test(test_supervisor_death_kills_sandbox),
        };
        struct CMUnitTest
                tests[ARRAY_SIZE(denials) + ARRAY_SIZE(victim_attacks) + ARRAY_SIZE(fixed)];
        size_t n = 0;

        /* One named test per row of the tables. */
        for (size_t i = 0; i < ARRAY_SIZE(denials); i++)
                tests[n++] = (struct CMUnitTest){.name = denials[i].name,
                                                 .test_func = test_denial,
                                                 .initial_state = (void *)&denials[i]};
        for (size_t i = 0; i < ARRAY_SIZE(victim_attacks); i++)
                tests[n++] = (struct CMUnitTest){.name = victim_attacks[i].name,
                                                 .test_func = test_victim_attack,
                                                 .teardown_func = victim_teardown,
                                                 .initial_state = (void *)&victim_attacks[i]};
        memcpy(&tests[n], fixed, sizeof(fixed));
        n += ARRAY_SIZE(fixed);
        return _cmocka_run_group_tests("test_security", tests, n, NULL, NULL);
}

/*
 * --fast runs the sandbox in a pid namespace of its own, with its own procfs at /proc
 * (shim/pidns.h, README "Fast mode"). Judged from outside: a host process whose number we
 * know is nowhere to be seen or reached inside; the sandbox's own processes are, under the
 * namespace's numbers; signals from stockade still reach the command (it is not pid 1), exit
 * codes pass through, and nothing the sandbox started outlives the run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TIMEOUT_S = 60 };

static char workdir[PATH_MAX];

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

        (void)state;
        snprintf(workdir, sizeof(workdir), "%s/stockade-pidns.XXXXXX", tmp);
        if (!mkdtemp(workdir) || chmod(workdir, 0777) < 0 || chdir(workdir) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        return runner_shell("rm -rf '%s'", workdir);
}

/* stockade run --fast [opt] -- sh -c SCRIPT, from the work directory. */
static void run_fast(const char *opt, const char *script, struct run_result *r)
{
        const char *opts[] = {"--fast", opt, NULL};

        assert_int_equal(runner_stockade_sh(workdir, opts, script, TIMEOUT_S, r), 0);
}

/* A host process of ours, `sleep 60`: its number is known. */
static pid_t start_host_sleep(void)
{
        pid_t pid = fork();

        if (pid == 0) {
                execl("/bin/sleep", "sleep", "60", (char *)NULL);
                _exit(127);
        }
        assert_true(pid > 0);
        return pid;
}

static void stop(pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

/* A host process (ours, same uid as stockade) is absent from every way of finding it: the
 * listing, stat, kill -0, its cmdline. The sandbox's shell is there, under its number in the
 * namespace, which /proc/self/status tells. */
static void host_process_absent(void **state)
{
        char script[2048];
        struct run_result r;
        pid_t host = start_host_sleep();

        (void)state;
        snprintf(script, sizeof(script),
                 "ls /proc | grep -qx %d && echo SEEN-LISTED; "
                 "stat /proc/%d >/dev/null 2>&1 && echo SEEN-STAT; "
                 "kill -0 %d 2>/dev/null && echo SEEN-KILL; "
                 "cat /proc/%d/cmdline 2>/dev/null | tr '\\0' ' ' | grep -q sleep && "
                 "echo SEEN-CMDLINE; "
                 "ls /proc | grep -qx $$ && echo SHELL-LISTED; "
                 "echo shell=$$; grep '^Pid:' /proc/$$/status; "
                 "sed -n 's/^Pid:[[:space:]]*/self=/p' /proc/self/status; "
                 "sed -n 's/^Pid:[[:space:]]*/thread=/p' /proc/thread-self/status; "
                 "echo finished",
                 (int)host, (int)host, (int)host, (int)host);
        run_fast(NULL, script, &r);
        stop(host);
        if (r.exit_code != 0 || strstr(r.out, "SEEN-") || !strstr(r.out, "SHELL-LISTED") ||
            !strstr(r.out, "finished"))
                fail_msg("host pid %d, exit %d:\n%s%s", (int)host, r.exit_code, r.out, r.err);
        {
                const char *s = strstr(r.out, "shell="), *p = strstr(r.out, "Pid:"),
                           *self = strstr(r.out, "self="), *thread = strstr(r.out, "thread=");
                long shell = s ? atol(s + 6) : -1;

                /* The shell's number is the namespace's (small: the command is pid 2), the
                 * same in its own /proc entry; "self" is the reading process (sed), not the
                 * shell, but also the namespace's. */
                if (shell < 2 || shell > 64 || !p || atol(p + 4) != shell || !self ||
                    atol(self + 5) < 2 || atol(self + 5) > 64 || !thread || atol(thread + 7) < 2 ||
                    atol(thread + 7) > 64)
                        fail_msg("not the namespace's numbers:\n%s%s", r.out, r.err);
        }
        runner_free(&r);
}

/* The supervisor's opens of /proc work inside: a magic link through /proc/self/fd, the
 * executable through /proc/self/exe, a sibling's cmdline; a sibling can be signalled. */
static void own_processes_reachable(void **state)
{
        struct run_result r;

        (void)state;
        run_fast(NULL,
                 "echo through-fd | cat /proc/self/fd/0; "
                 "head -c 4 /proc/self/exe | tail -c 3; echo; "
                 "readlink /proc/self/exe; "
                 "sleep 30 & s=$!; tr '\\0' ' ' < /proc/$s/cmdline; echo; "
                 "kill $s; wait $s; echo status=$?",
                 &r);
        if (r.exit_code != 0 || !strstr(r.out, "through-fd") || !strstr(r.out, "ELF") ||
            !strstr(r.out, "/readlink") || !strstr(r.out, "sleep 30") ||
            !strstr(r.out, "status=143"))
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* A program that asks its own number gets the namespace's. */
static void python_getpid(void **state)
{
        struct run_result r;

        (void)state;
        if (access("/usr/bin/python3", X_OK) != 0)
                skip();
        run_fast(NULL, "/usr/bin/python3 -c 'import os; print(\"pid\", os.getpid())'", &r);
        if (r.exit_code != 0 || !strstr(r.out, "pid ") || atol(strstr(r.out, "pid ") + 4) < 2 ||
            atol(strstr(r.out, "pid ") + 4) > 64)
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* Exit codes and signal deaths pass through; --timeout's SIGTERM reaches the command. */
static void exit_status_and_timeout(void **state)
{
        struct run_result r;
        struct timespec t0, t1;

        (void)state;
        run_fast(NULL, "exit 42", &r);
        assert_int_equal(r.exit_code, 42);
        runner_free(&r);
        run_fast(NULL, "kill -SEGV $$", &r);
        assert_int_equal(r.exit_code, 128 + SIGSEGV);
        runner_free(&r);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(runner_stockade_sh(workdir,
                                            (const char *[]){"--fast", "--timeout", "1", NULL},
                                            "sleep 10", TIMEOUT_S, &r),
                         0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r.exit_code != 124 || t1.tv_sec - t0.tv_sec > 5)
                fail_msg("--timeout 1: exit %d after %ld s:\n%s", r.exit_code,
                         (long)(t1.tv_sec - t0.tv_sec), r.err);
        runner_free(&r);
}

/* stockade run --fast -- sh -c SCRIPT in the background; once it printed READY, SIGTERM to
 * stockade. Returns its wait status (-1: it did not end), its output in buf. */
static int run_and_term(const char *script, char *buf, size_t size)
{
        char out[PATH_MAX + 16];
        int status = 0, fd;
        ssize_t n = 0;
        pid_t pid;

        snprintf(out, sizeof(out), "%s/out", workdir);
        buf[0] = '\0';
        pid = fork();
        if (pid == 0) {
                const char *argv[] = {
                        runner_stockade(), "run", "--fast", "--", "sh", "-c", script, NULL};
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

                dup2(in, 0);
                dup2(o, 1);
                dup2(o, 2);
                execv(argv[0], runner_workspace_rw((char *const *)argv));
                _exit(121);
        }
        for (int i = 0; i < 1000 && !strstr(buf, "READY"); i++) {
                usleep(20000);
                fd = open(out, O_RDONLY | O_CLOEXEC);
                n = fd < 0 ? 0 : read(fd, buf, size - 1);
                buf[n > 0 ? n : 0] = '\0';
                if (fd >= 0)
                        close(fd);
        }
        usleep(200000); /* READY is printed before the loop or the exec */
        kill(pid, SIGTERM);
        for (int i = 0; i < 250 && waitpid(pid, &status, WNOHANG) == 0; i++)
                usleep(20000);
        if (waitpid(pid, &status, WNOHANG) == 0) {
                stop(pid);
                status = -1;
        }
        fd = open(out, O_RDONLY | O_CLOEXEC);
        n = fd < 0 ? 0 : read(fd, buf, size - 1);
        buf[n > 0 ? n : 0] = '\0';
        if (fd >= 0)
                close(fd);
        return status;
}

/* SIGTERM to stockade reaches the command: one that traps it runs its trap, one without a
 * handler dies of it (as pid 1 of the namespace it would have been dropped, and the run
 * would have gone on). */
static void sigterm_reaches_the_command(void **state)
{
        char buf[4096];
        int status;

        (void)state;
        status = run_and_term("trap 'echo GOT-TERM; exit 7' TERM; echo READY; "
                              "while :; do sleep 0.1; done",
                              buf, sizeof(buf));
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 7 ||
            !strstr(buf, "GOT-TERM"))
                fail_msg("trapped: status %#x:\n%s", status, buf);
        status = run_and_term("echo READY; exec sleep 30", buf, sizeof(buf));
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 128 + SIGTERM)
                fail_msg("untrapped: status %#x:\n%s", status, buf);
}

/* What the sandbox leaves running, a background child and an orphan (adopted by the
 * namespace's init), is gone once stockade exits; an orphan that exits meanwhile is reaped
 * (no zombie inside). Found from outside by a token in their command lines. */
static void nothing_outlives_the_run(void **state)
{
        char token[64], script[1024];
        struct run_result r;

        (void)state;
        snprintf(token, sizeof(token), "pidns-left-%d", (int)getpid());
        snprintf(script, sizeof(script),
                 "sh -c 'sleep 100; :' %s-bg & "
                 "(sh -c 'sleep 100; :' %s-orphan &); "
                 "(sleep 0.2 &); sleep 1; "
                 "grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null | wc -l | "
                 "sed 's/^/zombies=/'; echo started",
                 token, token);
        run_fast(NULL, script, &r);
        if (r.exit_code != 0 || !strstr(r.out, "started") || !strstr(r.out, "zombies=0"))
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
        for (int i = 0; i < 50 && runner_process_alive(token); i++)
                usleep(100000);
        if (runner_process_alive(token)) {
                runner_shell("pkill -KILL -f '%s'", token);
                fail_msg("a process the sandbox started outlived stockade");
        }
}

/* Where the pid namespace cannot be had, --fast is refused in one line, whatever
 * --allow-degraded says. */
static void refused_without_it(void **state)
{
        struct run_result r;

        (void)state;
        setenv("STOCKADE_TEST_DISABLE", "pidns", 1);
        run_fast("--allow-degraded", "echo RAN", &r);
        unsetenv("STOCKADE_TEST_DISABLE");
        if (r.exit_code != 125 || strstr(r.out, "RAN") ||
            !strstr(r.err, "--fast needs a pid namespace"))
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* The host's addresses on lo (IPv4 and IPv6), as `ip` lists them: what a run must not change. */
static char *lo_addresses(void)
{
        struct run_result r;
        char *argv[] = {"/bin/sh", "-c", "ip -o addr show dev lo 2>&1 | awk '{print $3, $4}'",
                        NULL};
        char *out;

        assert_int_equal(runner_run(argv, NULL, 20, &r), 0);
        out = strdup(r.out);
        runner_free(&r);
        return out;
}

/* A run that had to refuse: exit 125 naming the foreign /proc, no marker made by its command,
 * the host's lo as `before` had it. Frees r and before. */
static void judge_refused(struct run_result *r, char *before)
{
        char *after = lo_addresses();
        bool marker = access("marker", F_OK) == 0;

        if (r->exit_code != 125 || !strstr(r->err, "/proc is another pid namespace's") || marker ||
            strcmp(before, after) != 0)
                fail_msg("exit %d, marker %s, lo before:\n%safter:\n%s%s%s", r->exit_code,
                         marker ? "made" : "absent", before, after, r->out, r->err);
        runner_free(r);
        free(before);
        free(after);
}

/* stockade started in a pid namespace of its own whose /proc is still the host's (`unshare
 * -fp` without --mount-proc): every number it read in /proc named a host process. An outside
 * review found the host's lo given the view's addresses (the sandbox joined the network
 * namespace of whatever host process had its socket maker's number) and host processes taken
 * for inherited children. It refuses to start, and touches nothing. */
static void refused_with_another_namespaces_proc(void **state)
{
        struct run_result r;
        char *before = lo_addresses();
        /* --rw .: a marker the command made would be on the host, not in a session */
        char *argv[] = {"/usr/bin/unshare",
                        geteuid() == 0 ? "-fp" : "-Urfp",
                        (char *)runner_stockade(),
                        "run",
                        "-q",
                        "--rw",
                        ".",
                        "--",
                        "sh",
                        "-c",
                        "echo ran > marker",
                        NULL};

        (void)state;
        if (runner_run((char *[]){argv[0], argv[1], "/bin/true", NULL}, NULL, 20, &r) < 0 ||
            r.exit_code != 0) {
                printf("skip: `unshare %s` fails here (exit %d): %s\n", argv[1], r.exit_code,
                       r.err ? r.err : "");
                runner_free(&r);
                free(before);
                skip(); /* no pid namespace for us here */
        }
        runner_free(&r);
        assert_int_equal(runner_run(argv, NULL, TIMEOUT_S, &r), 0);
        judge_refused(&r, before);
}

/* The same with one number for stockade in both namespaces (clone3's set_tid, as root: a
 * second review's way past a check of /proc/self's number alone). The previous check let it
 * through, and the sandbox joined the namespaces of host kernel threads. */
static void refused_with_one_number_in_both(void **state)
{
        struct run_result r;
        char *before;
        char *argv[] = {
                SAMEPID, (char *)runner_stockade(), "run", "-q", "--rw", ".", "--", "/bin/sh",
                "-c",    "echo ran > marker",       NULL};

        (void)state;
        if (geteuid() != 0) {
                printf("skip: set_tid in our own pid namespace needs root\n");
                skip();
        }
        before = lo_addresses();
        assert_int_equal(runner_run(argv, NULL, TIMEOUT_S, &r), 0);
        if (r.exit_code == 77) {
                printf("skip: %s", r.err);
                runner_free(&r);
                free(before);
                skip();
        }
        judge_refused(&r, before);
}

/* Whether --fast runs here at all (a mount namespace, Landlock, the pid namespace). */
static bool fast_possible(void)
{
        struct run_result r;
        bool ok;

        if (setup(NULL) < 0)
                return false;
        ok = runner_stockade_sh(workdir, (const char *[]){"--fast", NULL}, "echo OK", TIMEOUT_S,
                                &r) == 0 &&
             r.exit_code == 0 && strstr(r.out, "OK");
        if (!ok)
                printf("skip: --fast does not run here: %s", r.err ? r.err : "");
        runner_free(&r);
        teardown(NULL);
        return ok;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(host_process_absent),
                cmocka_unit_test(own_processes_reachable),
                cmocka_unit_test(python_getpid),
                cmocka_unit_test(exit_status_and_timeout),
                cmocka_unit_test(sigterm_reaches_the_command),
                cmocka_unit_test(nothing_outlives_the_run),
                cmocka_unit_test(refused_without_it),
                cmocka_unit_test(refused_with_another_namespaces_proc),
                cmocka_unit_test(refused_with_one_number_in_both),
        };

        if (!fast_possible())
                return 77;
        return cmocka_run_group_tests(tests, setup, teardown);
}

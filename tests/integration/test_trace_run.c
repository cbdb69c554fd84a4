/* `stockade run --trace` on real programs, checked from outside with `stockade trace`: what
 * a run records (backtraces: test_trace_backtrace.c), that the sandbox cannot open the trace,
 * the paths refused before anything runs, --trace-level all, streaming to a socket, a
 * supervisor killed mid-run, --follow. Traces live in a directory under /dev/shm: outside
 * the places the sandbox may write (cwd, /tmp, /var/tmp), and writable by any user. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG 60

static char dir[64];

static int setup(void **state)
{
        snprintf(dir, sizeof(dir), "/dev/shm/stockade-trace-XXXXXX");
        if (!mkdtemp(dir)) {
                fprintf(stderr, "skipped: no /dev/shm to keep traces out of the sandbox: %s\n",
                        strerror(errno));
                exit(77);
        }
        chmod(dir, 0755); /* as root, the command (nobody) may look, and must still fail */
        return 0;
}

static int teardown(void **state)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static char *path_of(const char *name)
{
        static char buf[4][128];
        static int i;
        char *p = buf[i++ % 4];

        snprintf(p, 128, "%s/%s", dir, name);
        return p;
}

static struct run_result run(const char *const args[])
{
        struct run_result r;

        assert_int_equal(runner_stockade_run(args, WATCHDOG, &r), 0);
        if (r.exit_code == -1)
                fail_msg("watchdog fired: stockade hung. stderr: %s", r.err);
        return r;
}

/* stockade trace ARGS... */
static struct run_result trace_cmd(const char *a, const char *b, const char *c, const char *d)
{
        char *argv[] = {(char *)runner_stockade(),
                        "trace",
                        (char *)a,
                        (char *)b,
                        (char *)c,
                        (char *)d,
                        NULL};
        struct run_result r;

        assert_int_equal(runner_run(argv, NULL, WATCHDOG, &r), 0);
        return r;
}

static void records_a_run(void **state)
{
        const char *t = path_of("py.trace");
        struct run_result r = run((const char *[]){"--trace", t, "--", "python3", "-c",
                                                   "import json; print(json.dumps([1]))", NULL});
        struct stat st;

        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "[1]\n");
        runner_free(&r);
        assert_int_equal(stat(t, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600); /* readable by its owner once the run ended */

        r = trace_cmd("show", t, NULL, NULL);
        if (r.exit_code != 0)
                fail_msg("show: %s", r.err);
        assert_non_null(strstr(r.out, "# command: \"python3\" \"-c\""));
        assert_non_null(strstr(r.out, "+++ exec "));
        assert_non_null(strstr(r.out, "openat(AT_FDCWD, \""));
        assert_non_null(strstr(r.out, "+++ exited with 0 +++"));
        assert_non_null(strstr(r.out, "# end: exit 0"));
        runner_free(&r);

        r = trace_cmd("stats", t, NULL, NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "openat"));
        assert_non_null(strstr(r.out, "process tree:"));
        runner_free(&r);

        r = trace_cmd("export", "--format", "jsonl", t);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "{\"type\":\"session\""));
        assert_non_null(strstr(r.out, "{\"type\":\"end\""));
        runner_free(&r);
}

/* The calls with two paths show both, and the *at forms their AT_FDCWD: an outside tester's
 * trace showed renames, links and symlinks as addresses, so "who made this file" (written
 * beside, then renamed: Go, git, cmake, editors) had no answer. */
static void records_both_paths(void **state)
{
        const char *t = path_of("paths.trace");
        static const char *const want[] = {
                "rename(\"x1\", \"x2\") = 0",
                "symlink(\"x2\", \"x3\") = 0",
                "link(\"x2\", \"x4\") = 0",
                "utimensat(AT_FDCWD, \"x2\", ",
                "renameat2(AT_FDCWD, \"x2\", AT_FDCWD, \"x5\", ",
                "mkdir(\"nope/x\", 0777) = -1 ENOENT",
        };
        const char *opts[] = {"--trace", t, NULL};
        char ws[] = "/var/tmp/stockade-paths.XXXXXX";
        struct run_result r;

        assert_non_null(mkdtemp(ws));
        assert_int_equal(chmod(ws, 0755), 0);
        if (geteuid() == 0) /* the command runs as nobody */
                assert_int_equal(chown(ws, 65534, 65534), 0);
        assert_int_equal(
                runner_stockade_sh(
                        ws, opts,
                        "python3 -c \"import os\nopen('x1','w').close(); os.rename('x1','x2')\n"
                        "os.symlink('x2','x3'); os.link('x2','x4'); os.utime('x2',(1,1))\n"
                        "try: os.mkdir('nope/x')\nexcept OSError: pass\" && mv x2 x5 && "
                        "rm x3 x4 x5 && ! (echo x >/etc/stockade-refused) 2>/dev/null",
                        WATCHDOG, &r),
                0);
        rmdir(ws);
        if (r.exit_code != 0)
                fail_msg("exit %d: %s", r.exit_code, r.err);
        runner_free(&r);
        r = trace_cmd("show", t, NULL, NULL);
        for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
                if (!strstr(r.out, want[i]))
                        fail_msg("no `%s` in:\n%s", want[i], r.out);
        runner_free(&r);
        /* a write the walls refused is among the refusals (the tester's "what did the sandbox
         * refuse?" found neither it nor a refused name lookup) */
        r = trace_cmd("show", "--only", "denied", t);
        if (!strstr(r.out, "\"/etc/stockade-refused\"") || strstr(r.out, "\"x5\""))
                fail_msg("--only denied:\n%s", r.out);
        runner_free(&r);
}

/* Every way to reach the trace from inside, by path; prints what succeeded. */
static const char try_trace[] =
        "import os, sys, errno\n"
        "t = sys.argv[1]\n"
        "bad = []\n"
        "paths = [t, t.replace('/', '//'), os.path.dirname(t) + '/./' + os.path.basename(t),\n"
        "         os.path.dirname(t) + '/../' + os.path.basename(os.path.dirname(t)) + '/' +\n"
        "         os.path.basename(t)]\n"
        "try:\n"
        "    os.symlink(t, '/tmp/stockade-trace-link-%d' % os.getpid()); "
        "paths.append('/tmp/stockade-trace-link-%d' % os.getpid())\n"
        "except OSError: pass\n"
        "sup = os.getppid()\n"
        "for n in range(64):\n"
        "    paths.append('/proc/%d/fd/%d' % (sup, n))\n"
        "for p in paths:\n"
        "    for fl in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_APPEND,\n"
        "               os.O_WRONLY | os.O_TRUNC):\n"
        "        try:\n"
        "            fd = os.open(p, fl)\n"
        "        except OSError:\n"
        "            continue\n"
        "        if os.path.samestat(os.fstat(fd), os.stat(t)): bad.append('open %s %#x' % (p, "
        "fl))\n"
        "        os.close(fd)\n"
        "for what, f in (('chmod', lambda: os.chmod(t, 0o644)), ('truncate', lambda: "
        "os.truncate(t, 0)),\n"
        "                ('rename', lambda: os.rename(t, t + '.x')), ('unlink', lambda: "
        "os.unlink(t)),\n"
        "                ('link', lambda: os.link(t, '/tmp/stockade-trace-hl-%d' % "
        "os.getpid()))):\n"
        "    try:\n"
        "        f(); bad.append(what)\n"
        "    except OSError: pass\n"
        "if os.path.lexists(t): bad.append('stat')\n"
        "try:\n"
        "    if os.path.basename(t) in os.listdir(os.path.dirname(t)): bad.append('listed')\n"
        "except OSError: pass\n"
        "print('BAD' if bad else 'OK', bad)\n";

static void sandbox_cannot_open_the_trace(void **state)
{
        const char *t = path_of("secret.trace");
        struct run_result r =
                run((const char *[]){"--trace", t, "--", "python3", "-c", try_trace, t, NULL});

        if (r.exit_code != 0 || strncmp(r.out, "OK", 2) != 0)
                fail_msg("exit %d, out: %s err: %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        r = trace_cmd("show", t, NULL, NULL);
        if (r.exit_code != 0)
                fail_msg("the trace was damaged: %s", r.err);
        runner_free(&r);
}

/* The program names what the trace shows (an exec path): `stockade trace show` and `stats`
 * must not pass its escape sequences to the user's terminal, nor let a newline forge a line
 * (outside review of the traces). */
static void show_escapes_program_strings(void **state)
{
        const char *t = path_of("esc.trace");
        struct run_result r =
                run((const char *[]){"--trace", t, "--", "python3", "-c",
                                     "import os, shutil, subprocess\n"
                                     "n = '/tmp/esc\\x1b]0;PWNED\\x07\\x1b[2J\\n   0.000001 1      "
                                     "+++ exited with 0 +++'\n"
                                     "shutil.copy('/bin/true', n); os.chmod(n, 0o755)\n"
                                     "subprocess.run([n]); os.unlink(n)",
                                     NULL});

        assert_int_equal(r.exit_code, 0);
        runner_free(&r);
        for (int i = 0; i < 2; i++) {
                r = trace_cmd(i ? "stats" : "show", t, NULL, NULL);
                if (r.exit_code != 0 || strchr(r.out, '\x1b') || strchr(r.out, '\x07') ||
                    strstr(r.out, "\n   0.000001 1      +++ exited"))
                        fail_msg("`trace %s` passed the program's bytes on: %s",
                                 i ? "stats" : "show", r.out);
                if (!i && !strstr(r.out, "esc\\x1b]0;PWNED\\x07"))
                        fail_msg("the exec is not shown, escaped: %s", r.out);
                runner_free(&r);
        }
}

static void refused_before_anything_runs(void **state)
{
        char marker[64], cwdtrace[] = "stockade-test.trace";
        /* (/tmp is the sandbox's own where it can have one: a trace may go to the host's.) */
        const char *bad[] = {cwdtrace, "/var/tmp/stockade-test.trace", "/nonexistent-dir/x.trace",
                             "unix:/nonexistent-dir/s.sock"};
        struct stat st;

        snprintf(marker, sizeof(marker), "/var/tmp/stockade-trace-ran-%d", (int)getpid());
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct run_result r =
                        run((const char *[]){"--trace", bad[i], "--", "touch", marker, NULL});
                if (r.exit_code != 125)
                        fail_msg("--trace %s: exit %d (%s)", bad[i], r.exit_code, r.err);
                assert_non_null(strstr(r.err, "--trace"));
                assert_int_not_equal(stat(marker, &st), 0); /* nothing ran */
                runner_free(&r);
        }
        assert_int_not_equal(stat(cwdtrace, &st), 0); /* nor was it created */
        assert_int_not_equal(stat(bad[1], &st), 0);
}

static void level_all_records_kernel_calls(void **state)
{
        const char *t = path_of("all.trace");
        struct run_result r = run(
                (const char *[]){"--trace", t, "--trace-level", "all", "--", "/bin/true", NULL});

        assert_int_equal(r.exit_code, 0);
        runner_free(&r);
        r = trace_cmd("show", t, NULL, NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "<allowed: kernel"));
        assert_non_null(strstr(r.out, "exit_group("));
        runner_free(&r);
}

static void streams_to_a_socket(void **state)
{
        const char *sock = path_of("s.sock"), *copy = path_of("copy.trace");
        char uri[160];
        pid_t reader;
        int status;

        /* `stockade trace export unix:PATH` listens and reads the run that connects. */
        snprintf(uri, sizeof(uri), "unix:%s", sock);
        reader = fork();
        if (reader == 0) {
                int fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                dup2(fd, 1);
                execl(runner_stockade(), "stockade", "trace", "export", "--format", "jsonl", uri,
                      (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 200 && access(sock, F_OK) != 0; i++)
                usleep(10000);
        struct run_result r = run((const char *[]){"--trace", uri, "--", "/bin/true", NULL});
        assert_int_equal(r.exit_code, 0);
        runner_free(&r);
        assert_int_equal(waitpid(reader, &status, 0), reader);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        FILE *f = fopen(copy, "r");
        char line[4096];
        bool session = false, end = false;
        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                session |= strstr(line, "{\"type\":\"session\"") == line;
                end |= strstr(line, "{\"type\":\"end\"") == line;
        }
        fclose(f);
        assert_true(session && end);
}

static mode_t mode_of(const char *path)
{
        struct stat st;

        assert_int_equal(stat(path, &st), 0);
        return st.st_mode & 07777;
}

static void supervisor_killed_mid_run(void **state)
{
        const char *t = path_of("killed.trace");
        pid_t pid = fork();
        struct run_result r;
        int status;

        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                execl(runner_stockade(), "stockade", "run", "--trace", t, "--", "sh", "-c",
                      "ls / >/dev/null; exec sleep 30", (char *)NULL);
                _exit(127);
        }
        usleep(700 * 1000);   /* past a flush (100 ms) */
        if (geteuid() != 0) { /* being recorded: 0200, and left so (root reads it anyway) */
                r = trace_cmd("show", t, NULL, NULL);
                if (r.exit_code != 1 || !strstr(r.err, "mode 0200 until the run ends"))
                        fail_msg("a live trace: exit %d: %s", r.exit_code, r.err);
                runner_free(&r);
                assert_int_equal(mode_of(t), 0200);
        }
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        /* Still 0200: the run never ended. Its reader finds no recorder holding it, and makes
         * it readable to its owner (an outside tester had to chmod by hand). */
        r = trace_cmd("show", t, NULL, NULL);
        if (geteuid() != 0 && (!strstr(r.err, "made readable") || mode_of(t) != 0600))
                fail_msg("mode %o: %s", mode_of(t), r.err);
        assert_int_equal(r.exit_code, 1);
        assert_non_null(strstr(r.out, "# command: \"sh\""));
        assert_non_null(strstr(r.out, "+++ exec "));
        if (!strstr(r.err, "truncated") && !strstr(r.err, "cut short"))
                fail_msg("no warning: %s", r.err);
        runner_free(&r);
}

static void follow_a_growing_trace(void **state)
{
        const char *t = path_of("follow.trace");
        pid_t runner, follower;
        int pipefd[2], status;
        char out[65536];
        size_t n = 0;
        ssize_t k;

        if (geteuid() != 0) {
                /* The trace is 0200 while it is written: only root can follow the file
                 * (others follow unix:PATH, see streams_to_a_socket). */
                print_message("follow of a file: root only\n");
                return;
        }
        runner = fork();
        if (runner == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 1);
                dup2(null, 2);
                execl(runner_stockade(), "stockade", "run", "--trace", t, "--", "sh", "-c",
                      "sleep 0.5; ls / >/dev/null; sleep 0.5", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 200 && access(t, F_OK) != 0; i++)
                usleep(10000);
        assert_int_equal(pipe(pipefd), 0);
        follower = fork();
        if (follower == 0) {
                dup2(pipefd[1], 1);
                close(pipefd[0]);
                execl(runner_stockade(), "stockade", "trace", "show", "--follow", t, (char *)NULL);
                _exit(127);
        }
        close(pipefd[1]);
        while (n < sizeof(out) - 1 && (k = read(pipefd[0], out + n, sizeof(out) - 1 - n)) > 0)
                n += (size_t)k; /* ends when the follower sees the end record */
        out[n] = 0;
        close(pipefd[0]);
        assert_int_equal(waitpid(runner, &status, 0), runner);
        assert_int_equal(waitpid(follower, &status, 0), follower);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_non_null(strstr(out, "+++ exec "));
        assert_non_null(strstr(out, "# end: exit 0"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(records_a_run),
                cmocka_unit_test(records_both_paths),
                cmocka_unit_test(sandbox_cannot_open_the_trace),
                cmocka_unit_test(show_escapes_program_strings),
                cmocka_unit_test(refused_before_anything_runs),
                cmocka_unit_test(level_all_records_kernel_calls),
                cmocka_unit_test(streams_to_a_socket),
                cmocka_unit_test(supervisor_killed_mid_run),
                cmocka_unit_test(follow_a_growing_trace),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

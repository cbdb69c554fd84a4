/*
 * `stockade run --policy FILE` for real, judged from outside: a path the file hides cannot be
 * read, a limit the file sets stops the run, a bad file runs nothing, and what
 * `stockade policy show` prints runs as the same policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG 60

static char dir[] = "/var/tmp/test_policy_run.XXXXXX";

static void write_file(const char *name, const char *text, char *path, size_t size)
{
        FILE *f;

        snprintf(path, size, "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        assert_int_equal(chmod(path, 0644), 0);
}

static struct run_result run(char *const argv[])
{
        struct run_result r;

        assert_int_equal(runner_run(argv, NULL, WATCHDOG, &r), 0);
        if (r.exit_code == -1)
                fail_msg("watchdog fired: stockade hung. stderr: %s", r.err);
        return r;
}

/* stockade run [-q] --policy POLICY [FLAG VALUE] -- /bin/sh -c SCRIPT */
static struct run_result run_policy(const char *policy, const char *flag, const char *value,
                                    const char *script, bool quiet)
{
        char *argv[12];
        int n = 0;

        argv[n++] = (char *)runner_stockade();
        argv[n++] = "run";
        if (quiet)
                argv[n++] = "-q";
        argv[n++] = "--policy";
        argv[n++] = (char *)policy;
        if (flag) {
                argv[n++] = (char *)flag;
                argv[n++] = (char *)value;
        }
        argv[n++] = "--";
        argv[n++] = "/bin/sh";
        argv[n++] = "-c";
        argv[n++] = (char *)script;
        argv[n] = NULL;
        return run(argv);
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A secret the user could read, hidden by the file: the command runs, the secret does not
 * reach it. The same command without the policy reads it, so the file is what hides it. */
static void hidden_from_file(void **state)
{
        char secret[256], policy[256], text[512], script[600];
        struct run_result r;

        write_file("secret", "TOPSECRET-42\n", secret, sizeof(secret));
        snprintf(text, sizeof(text), "version: 1\nfilesystem:\n  - { path: %s, access: hidden }\n",
                 secret);
        write_file("p.yaml", text, policy, sizeof(policy));
        snprintf(script, sizeof(script), "cat %s; echo ran", secret);

        r = run_policy(policy, NULL, NULL, script, true);
        if (!strstr(r.out, "ran"))
                fail_msg("the command did not run (exit %d): %s", r.exit_code, r.err);
        if (strstr(r.out, "TOPSECRET"))
                fail_msg("the hidden file was read: %s", r.out);
        runner_free(&r);

        char *without[] = {
                (char *)runner_stockade(), "run", "-q", "--", "/bin/sh", "-c", script, NULL};
        r = run(without);
        if (!strstr(r.out, "TOPSECRET"))
                fail_msg("control run without the policy could not read the file (exit %d): %s",
                         r.exit_code, r.err);
        runner_free(&r);
}

/* limits.timeout from the file kills the tree: exit 124, well before the command ends. */
static void limit_from_file(void **state)
{
        char policy[256];
        struct run_result r;
        double t0;

        write_file("limit.yaml", "version: 1\nlimits: { timeout: 1s }\n", policy, sizeof(policy));
        t0 = now();
        r = run_policy(policy, NULL, NULL, "exec sleep 30", true);
        if (r.exit_code != 124)
                fail_msg("exit %d, want 124 (timeout): %s", r.exit_code, r.err);
        if (now() - t0 > 20)
                fail_msg("the timeout took %.1f s", now() - t0);
        runner_free(&r);

        /* A flag overrides the file: --timeout 0 (none) lets the command end by itself. */
        r = run_policy(policy, "--timeout", "0", "exec sleep 2", true);
        if (r.exit_code != 0)
                fail_msg("with --timeout 0: exit %d, want 0: %s", r.exit_code, r.err);
        runner_free(&r);
}

/* A bad file: one line naming file, line and column, exit 125, and the command never ran. */
static void bad_file_runs_nothing(void **state)
{
        static const struct {
                const char *text;
                const char *where;  /* after "FILE" */
                const char *before; /* what comes before "FILE" (after "stockade: ") */
        } cases[] = {
                {"version: 1\nlimits: { timeout: 10x }\n", ":2:20: limits.timeout:", ""},
                {"version: 1\nlimts: {}\n", ":2:1: unknown key `limts` (did you mean `limits`?)",
                 ""},
                {"version: 1\nexec: { allow: [usr/bin/*] }\n",
                 ":2:17: exec.allow: usr/bin/*: a pattern must be an absolute path", ""},
                {"version: 1\nlimits: { timeout: 10\n", ":3:1: YAML syntax:", ""},
                /* found when the run starts, still before anything runs */
                {"version: 1\nfilesystem:\n  - { path: /nonexistent-policy-test, access: ro }\n",
                 ":3:13: filesystem `/nonexistent-policy-test`: host path", "run: "},
        };
        char marker[256], policy[256], script[600];

        /* A directory the command can write in (/tmp is writable in the sandbox, and the
         * mode lets nobody in, whom a root stockade runs the command as). */
        snprintf(marker, sizeof(marker), "%s/out", dir);
        assert_int_equal(mkdir(marker, 0777), 0);
        assert_int_equal(chmod(marker, 0777), 0);
        snprintf(marker, sizeof(marker), "%s/out/marker", dir);
        snprintf(script, sizeof(script), "touch %s", marker);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char want[512];
                struct run_result r;

                write_file("bad.yaml", cases[i].text, policy, sizeof(policy));
                r = run_policy(policy, NULL, NULL, script, true);
                snprintf(want, sizeof(want), "stockade: %s%s%s", cases[i].before, policy,
                         cases[i].where);
                if (r.exit_code != 125)
                        fail_msg("case %zu: exit %d, want 125", i, r.exit_code);
                if (strncmp(r.err, want, strlen(want)) != 0)
                        fail_msg("case %zu: stderr \"%s\", want it to start with \"%s\"", i, r.err,
                                 want);
                if (strchr(r.err, '\n') != r.err + r.err_len - 1)
                        fail_msg("case %zu: more than one line: %s", i, r.err);
                if (access(marker, F_OK) == 0)
                        fail_msg("case %zu: the command ran", i);
                runner_free(&r);
        }
        /* The control: with a good file the same command leaves the marker. */
        write_file("bad.yaml", "version: 1\n", policy, sizeof(policy));
        struct run_result r = run_policy(policy, NULL, NULL, script, true);
        if (r.exit_code != 0 || access(marker, F_OK) != 0)
                fail_msg("control: exit %d, marker %s: %s", r.exit_code,
                         access(marker, F_OK) == 0 ? "made" : "missing", r.err);
        runner_free(&r);
}

/* policy show prints file + flags; that output, given back to run, is the same policy. */
static void show_runs_back(void **state)
{
        char policy[256], shown[256];
        struct run_result r;
        double t0;

        write_file("base.yaml", "version: 1\nlimits: { timeout: 10m, memory: 2G }\n", policy,
                   sizeof(policy));
        char *show[] = {(char *)runner_stockade(),
                        "policy",
                        "show",
                        "--policy",
                        policy,
                        "--timeout",
                        "1s",
                        NULL};
        r = run(show);
        if (r.exit_code != 0)
                fail_msg("policy show: exit %d: %s", r.exit_code, r.err);
        if (!strstr(r.out, "  timeout: 1s\n") || !strstr(r.out, "  memory: 2G\n"))
                fail_msg("policy show printed:\n%s", r.out);
        write_file("shown.yaml", r.out, shown, sizeof(shown));
        runner_free(&r);

        t0 = now();
        r = run_policy(shown, NULL, NULL, "exec sleep 30", true);
        if (r.exit_code != 124 || now() - t0 > 20)
                fail_msg("shown policy: exit %d after %.1f s, want 124 soon: %s", r.exit_code,
                         now() - t0, r.err);
        runner_free(&r);
}

static int setup(void **state)
{
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        static const char *const names[] = {"secret",     "p.yaml",    "limit.yaml", "bad.yaml",
                                            "out/marker", "base.yaml", "shown.yaml"};
        char p[300];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
                unlink(p);
        }
        snprintf(p, sizeof(p), "%s/out", dir);
        rmdir(p);
        rmdir(dir);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(hidden_from_file),
                cmocka_unit_test(limit_from_file),
                cmocka_unit_test(bad_file_runs_nothing),
                cmocka_unit_test(show_runs_back),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

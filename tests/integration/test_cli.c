/* The everyday CLI (issue 10): --pass-fd with make's jobserver, --user's identity,
 * --workdir, -q, and the corrections that refuse a value instead of misreading it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/cli.h"
#include "tests/helpers/runner.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char workdir[64];

static int setup(void **state)
{
        strcpy(workdir, "/tmp/stockade-cli.XXXXXX");
        if (!mkdtemp(workdir) || chmod(workdir, 0777) < 0 || chdir(workdir) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
        return system(cmd) == 0 ? 0 : -1;
}

static struct run_result run(const char *const args[])
{
        struct run_result r;

        assert_int_equal(runner_stockade_run(args, 60, &r), 0);
        if (r.exit_code == -1)
                fail_msg("watchdog fired: %s", r.err);
        return r;
}

static void write_file(const char *name, const char *text)
{
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

/* `+stockade run --pass-fd R --pass-fd W -- $(MAKE)`: the sub-make inside joins the
 * jobserver; without --pass-fd it says the jobserver is unavailable. */
static void make_jobserver(void **state)
{
        char stockade[600];
        struct run_result r;

        if (access("/usr/bin/make", X_OK) != 0) {
                print_message("skip: no make\n");
                skip();
        }
        write_file("sub.mk", "all: a b\na b:\n\t@echo job $@\n");
        write_file("Makefile",
                   "FDS = $$(echo \"$$MAKEFLAGS\" | sed -n "
                   "'s/.*--jobserver-auth=\\([0-9]*\\),\\([0-9]*\\).*/--pass-fd \\1 --pass-fd "
                   "\\2/p')\n"
                   "with:\n\t+@$(STOCKADE) run -q $(FDS) -- $(MAKE) --no-print-directory -f "
                   "sub.mk\n"
                   "without:\n\t+@$(STOCKADE) run -q -- $(MAKE) --no-print-directory -f sub.mk\n");
        snprintf(stockade, sizeof(stockade), "STOCKADE=%s", runner_stockade());

        char *without[] = {"/usr/bin/make", "-j2", stockade, "without", NULL};
        assert_int_equal(runner_run(without, NULL, 60, &r), 0);
        assert_int_equal(r.exit_code, 0);
        if (!strstr(r.err, "jobserver unavailable")) {
                runner_free(&r);
                print_message("skip: this make's jobserver is not passed as fds\n");
                skip();
        }
        runner_free(&r);

        char *with[] = {"/usr/bin/make", "-j2", stockade, "with", NULL};
        assert_int_equal(runner_run(with, NULL, 60, &r), 0);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "job a"));
        assert_non_null(strstr(r.out, "job b"));
        if (strstr(r.err, "jobserver"))
                fail_msg("the jobserver did not reach the sub-make: %s", r.err);
        runner_free(&r);
}

/* Only the fds passed on purpose: another inherited fd stays closed inside. */
static void pass_fd_only_that_one(void **state)
{
        int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
        char fd_a[16], script[128];
        struct run_result r;

        assert_true(a > 2 && b > 2);
        snprintf(fd_a, sizeof(fd_a), "%d", a);
        snprintf(script, sizeof(script),
                 "test -e /proc/self/fd/%d && echo A; test -e "
                 "/proc/self/fd/%d && echo B; true",
                 a, b);
        r = run((const char *[]){"--pass-fd", fd_a, "--", "sh", "-c", script, NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "A\n");
        runner_free(&r);
        close(a);
        close(b);
}

static void user_identity(void **state)
{
        struct run_result r;

        if (geteuid() != 0) {
                print_message("skip: --user needs root\n");
                skip();
        }
        r = run((const char *[]){"-q", "--user", "nobody", "--", "sh", "-c",
                                 "echo $HOME:$USER:$LOGNAME", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, ":nobody:nobody"));
        assert_null(strstr(r.out, "/root"));
        runner_free(&r);
        /* --env still decides last. */
        r = run((const char *[]){"-q", "--user", "nobody", "--env", "HOME=/tmp", "--", "sh", "-c",
                                 "echo $HOME", NULL});
        assert_string_equal(r.out, "/tmp\n");
        runner_free(&r);
}

static void workdir_is_where_it_starts(void **state)
{
        struct run_result r;

        assert_int_equal(mkdir("sub", 0777), 0);
        chmod("sub", 0777);
        /* --rw .: the workdir is the default view's cow workspace otherwise (test_cow) */
        r = run((const char *[]){"-q", "--workdir", "sub", "--rw", ".", "--", "sh", "-c",
                                 "pwd; touch made", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "/sub\n"));
        assert_int_equal(access("sub/made", F_OK), 0); /* the workspace is writable */
        runner_free(&r);
        r = run((const char *[]){"--workdir", "no-such-dir", "--", "true", NULL});
        assert_int_equal(r.exit_code, 125);
        assert_non_null(strstr(r.err, "--workdir `no-such-dir`"));
        runner_free(&r);
}

/* Each correction: refused with exit 125 and one line naming the option. */
static void corrections(void **state)
{
        static const struct {
                const char *args[6];
                const char *msg;
        } cases[] = {
                {{"--cpu", "1.5", "--", "true"}, "--cpu: `1.5` is not a whole number of seconds"},
                {{"--max-files", "3", "--", "true"}, "--max-files: 3 is too low"},
                {{"--env", "--", "--", "true"}, "--env: `--` is not a variable name"},
                {{"--env", "A B", "--", "true"}, "--env: `A B` is not a variable name"},
                {{"--pass-fd", "987", "--", "true"}, "--pass-fd 987: fd 987 is not open"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct run_result r = run(cases[i].args);

                assert_int_equal(r.exit_code, 125);
                if (!strstr(r.err, cases[i].msg))
                        fail_msg("case %zu: %s", i, r.err);
                runner_free(&r);
        }
        /* --cpu takes a duration now: 2m is 120 s of CPU. */
        struct run_result r =
                run((const char *[]){"--cpu", "2m", "--", "sh", "-c", "ulimit -t", NULL});
        assert_string_equal(r.out, "120\n");
        runner_free(&r);
}

/* -q silences stockade's warnings (here: the cwd / is not made writable). */
static void quiet(void **state)
{
        struct run_result r;

        r = run((const char *[]){"--workdir", "/", "--", "true", NULL});
        assert_non_null(strstr(r.err, "warning"));
        runner_free(&r);
        r = run((const char *[]){"-q", "--workdir", "/", "--", "true", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.err, "");
        runner_free(&r);
}

static char *slurp(const char *path)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = fopen(path, "r");

        if (!f)
                fail_msg("cannot read %s", path);
        assert_true(getdelim(&text, &len, '\0', f) > 0);
        fclose(f);
        return text;
}

/* Help, README, the man page and the completions name the same options. */
static void help_and_readme_agree(void **state)
{
        char *readme = slurp(STOCKADE_SOURCE_DIR "/README.md");
        char *man = slurp(STOCKADE_BUILD_DIR "/stockade.1");
        char *bash = slurp(STOCKADE_BUILD_DIR "/stockade.bash");
        char *zsh = slurp(STOCKADE_BUILD_DIR "/_stockade");
        const char *name;

        for (size_t i = 0; (name = cli_run_option(i, NULL)); i++) {
                char flag[64], troff[64];

                snprintf(flag, sizeof(flag), "`--%s", name);
                if (!strstr(readme, flag))
                        fail_msg("README.md does not document --%s", name);
                /* troff escapes every dash: \fB\-\-max\-files\fR */
                strcpy(troff, "\\fB\\-\\-");
                for (const char *p = name; *p; p++)
                        strncat(troff, *p == '-' ? "\\-" : (char[]){*p, 0},
                                sizeof(troff) - strlen(troff) - 1);
                strncat(troff, "\\fR", sizeof(troff) - strlen(troff) - 1);
                if (!strstr(man, troff))
                        fail_msg("stockade.1 does not document --%s", name);
                if (!strstr(bash, flag + 1) || !strstr(zsh, flag + 1))
                        fail_msg("a completion lacks --%s", name);
        }
        free(readme);
        free(man);
        free(bash);
        free(zsh);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(make_jobserver),
                cmocka_unit_test(pass_fd_only_that_one),
                cmocka_unit_test(user_identity),
                cmocka_unit_test(workdir_is_where_it_starts),
                cmocka_unit_test(corrections),
                cmocka_unit_test(quiet),
                cmocka_unit_test(help_and_readme_agree),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

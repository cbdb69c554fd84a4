/* Option value parsers and the run option table: input, expected output, expected errno. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/cli.h"
#include "supervisor/options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void sizes(void **state)
{
        static const struct {
                const char *in;
                int ret;
                uint64_t out;
        } cases[] = {
                {"0", 0, 0},
                {"4096", 0, 4096},
                {"1K", 0, 1024},
                {"1k", 0, 1024},
                {"2M", 0, 2u << 20},
                {"3G", 0, 3ull << 30},
                {"1T", 0, 1ull << 40},
                {"5MiB", 0, 5u << 20},
                {"7KB", 0, 7u << 10},
                {"", -EINVAL, 0},
                {"G", -EINVAL, 0},
                {"-1", -EINVAL, 0},
                {"1X", -EINVAL, 0},
                {"1MM", -EINVAL, 0},
                {"1.5G", -EINVAL, 0},
                {" 1", -EINVAL, 0},
                {"99999999999999999999", -ERANGE, 0},
                {"17179869184G", -ERANGE, 0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t v = 0;
                int r = parse_size(cases[i].in, &v);
                if (r != cases[i].ret || (r == 0 && v != cases[i].out))
                        fail_msg("parse_size(\"%s\") = %d, %llu", cases[i].in, r,
                                 (unsigned long long)v);
        }
}

static void durations(void **state)
{
        static const struct {
                const char *in;
                int ret;
                uint64_t ms;
        } cases[] = {
                {"30", 0, 30000},   {"30s", 0, 30000},  {"500ms", 0, 500},  {"1.5m", 0, 90000},
                {"2h", 0, 7200000}, {"0.25", 0, 250},   {"10M", 0, 600000}, {"", -EINVAL, 0},
                {"s", -EINVAL, 0},  {"-5", -EINVAL, 0}, {"5d", -EINVAL, 0}, {"1e400", -ERANGE, 0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t v = 0;
                int r = parse_duration_ms(cases[i].in, &v);
                if (r != cases[i].ret || (r == 0 && v != cases[i].ms))
                        fail_msg("parse_duration_ms(\"%s\") = %d, %llu", cases[i].in, r,
                                 (unsigned long long)v);
        }
}

static int parse(struct config *cfg, struct error *err, const char *const *args)
{
        static char *argv[32]; /* cfg->argv points into it after return */
        int argc = 0;

        for (; args[argc]; argc++)
                argv[argc] = (char *)args[argc];
        argv[argc] = NULL;
        memset(err, 0, sizeof(*err));
        return cli_parse_run(argc, argv, cfg, err);
}

static void users(void **state)
{
        uid_t uid;
        gid_t gid;

        assert_int_equal(parse_user("65534", &uid, &gid), 0);
        assert_int_equal(uid, 65534);
        assert_int_equal(parse_user("1234:4321", &uid, &gid), 0);
        assert_int_equal(uid, 1234);
        assert_int_equal(gid, 4321);
        assert_int_equal(parse_user("4242", &uid, &gid), 0);
        assert_int_equal(gid, 4242); /* no passwd entry: the group is the uid's number */
        assert_int_equal(parse_user("nobody", &uid, &gid), 0);
        assert_int_equal(uid, 65534);
        assert_int_equal(parse_user("root:0", &uid, &gid), 0);
        assert_int_equal(uid, 0);
        assert_int_equal(parse_user("", &uid, &gid), -EINVAL);
        assert_int_equal(parse_user(":5", &uid, &gid), -EINVAL);
        assert_int_equal(parse_user("x-no-such-user", &uid, &gid), -ENOENT);
        assert_int_equal(parse_user("nobody:x-no-such-group", &uid, &gid), -ENOENT);
}

static void run_options(void **state)
{
        struct config cfg;
        struct error err;
        char passed[16];
        int fd = dup(2); /* an inherited fd to pass on */

        snprintf(passed, sizeof(passed), "%d", fd);
        const char *ok[] = {
                "run",    "--timeout",    "1.5m",   "--memory",    "2G",   "--max-procs",
                "8",      "--cpu",        "2000ms", "--max-files", "64",   "--max-file-size",
                "1M",     "--env",        "A=1",    "--env",       "B",    "--clear-env",
                "--mode", "audit",        "-v",     "-v",          "-q",   "--tty",
                "never",  "--kill-after", "3",      "--workdir",   "/tmp", "--pass-fd",
                passed,   "--",           "prog",   "--timeout",   "x",    NULL};

        assert_int_equal(parse(&cfg, &err, ok), 0);
        assert_int_equal(cfg.limits.timeout_ms, 90000);
        assert_int_equal(cfg.limits.memory, 2ull << 30);
        assert_int_equal(cfg.limits.max_procs, 8);
        assert_int_equal(cfg.limits.cpu_s, 2);
        assert_int_equal(cfg.limits.max_files, 64);
        assert_int_equal(cfg.limits.max_file_size, 1 << 20);
        assert_int_equal(cfg.n_env_ops, 2);
        assert_true(cfg.clear_env);
        assert_int_equal(cfg.mode, MODE_AUDIT);
        assert_int_equal(cfg.verbose, 2);
        assert_true(cfg.quiet);
        assert_int_equal(cfg.tty, TTY_NEVER);
        assert_int_equal(cfg.kill_after_ms, 3000);
        assert_string_equal(cfg.workdir, "/tmp");
        assert_int_equal(cfg.n_pass_fds, 1);
        assert_int_equal(cfg.pass_fds[0], fd);
        close(fd);
        /* Everything after the command belongs to the command. */
        assert_string_equal(cfg.argv[0], "prog");
        assert_string_equal(cfg.argv[1], "--timeout");
        cli_config_free(&cfg);

        const char *no_dash[] = {"run", "ls", "-l", NULL};
        assert_int_equal(parse(&cfg, &err, no_dash), 0);
        assert_string_equal(cfg.argv[1], "-l");
        assert_int_equal(cfg.limits.max_procs, DEFAULT_MAX_PROCS);
        assert_int_equal(cfg.kill_after_ms, DEFAULT_KILL_AFTER_MS);
        assert_int_equal(cfg.tty, TTY_AUTO);
        /* Without --user, a root stockade runs the command as nobody. */
        assert_int_equal(cfg.default_user, geteuid() == 0);
        assert_int_equal(cfg.set_user, geteuid() == 0);
        if (geteuid() == 0)
                assert_int_equal(cfg.uid, DEFAULT_UID);
        cli_config_free(&cfg);

        /* --user root is the explicit choice of uid 0 (without capabilities). */
        const char *as_root[] = {"run", "--user", "root", "--", "x", NULL};
        assert_int_equal(parse(&cfg, &err, as_root), 0);
        assert_true(cfg.set_user);
        assert_false(cfg.default_user);
        assert_int_equal(cfg.uid, 0);
        assert_int_equal(cfg.gid, 0);
        cli_config_free(&cfg);
}

static void run_option_errors(void **state)
{
        static const struct {
                const char *args[6];
                const char *msg; /* must appear in the one-line error */
        } cases[] = {
                {{"run", "--timeout", "abc", "--", "x"}, "--timeout: `abc` is not valid"},
                {{"run", "--memory", "12Q", "--", "x"}, "--memory: `12Q` is not valid"},
                {{"run", "--max-procs", "-3", "--", "x"}, "--max-procs: `-3`"},
                {{"run", "--mode", "strict", "--", "x"}, "--mode: `strict` is not a mode"},
                {{"run", "--bogus", "--", "x"}, "unknown option `--bogus`"},
                {{"run", "--timeout"}, "option `--timeout` needs a value"},
                {{"run", "--env", "=x", "--", "x"}, "--env: `=x` has no variable name"},
                {{"run", "-v"}, "no command given"},
                {{"run", "--user", "12x", "--", "x"}, "--user: `12x` is not USER[:GROUP]"},
                {{"run", "--user", "no-such-user-q", "--", "x"}, "not a known user"},
                {{"run", "--user", "nobody:", "--", "x"}, "--user: `nobody:` is not"},
                /* Issue 10: refuse what would be rounded or would break stockade itself. */
                {{"run", "--cpu", "1.5", "--", "x"},
                 "--cpu: `1.5` is not a whole number of seconds"},
                {{"run", "--cpu", "500ms", "--", "x"}, "--cpu: `500ms` is not a whole number"},
                {{"run", "--max-files", "3", "--", "x"}, "--max-files: 3 is too low"},
                {{"run", "--env", "--", "--", "x"}, "--env: `--` is not a variable name"},
                {{"run", "--env", "A B=1", "--", "x"}, "--env: `A B` is not a variable name"},
                {{"run", "--env", "1A", "--", "x"}, "--env: `1A` is not a variable name"},
                {{"run", "--tty", "yes", "--", "x"}, "--tty: `yes` is not auto, always or never"},
                {{"run", "--pass-fd", "1", "--", "x"}, "fds 0, 1 and 2 are always passed"},
                {{"run", "--pass-fd", "999", "--", "x"}, "--pass-fd 999: fd 999 is not open"},
                {{"run", "--kill-after", "soon", "--", "x"}, "--kill-after: `soon` is not valid"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct config cfg;
                struct error err;

                assert_int_equal(parse(&cfg, &err, cases[i].args), -1);
                if (!strstr(err.msg, cases[i].msg))
                        fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg, cases[i].msg);
                assert_null(strchr(err.msg, '\n'));
                cli_config_free(&cfg);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(sizes),
                cmocka_unit_test(durations),
                cmocka_unit_test(users),
                cmocka_unit_test(run_options),
                cmocka_unit_test(run_option_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

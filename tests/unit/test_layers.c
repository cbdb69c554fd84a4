/*
 * The hint for hosts where AppArmor restricts user namespaces (supervisor/layers.h,
 * layers_userns_hint): given where the sysctl reads 1, and only there; and
 * scripts/apparmor-userns.sh, which it names: the profile it prints grants `userns` to the
 * binary's real path, and it refuses what it cannot do with one line and a non-zero exit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/layers.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char T[PATH_MAX];

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/layerstest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(T) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        return runner_shell("rm -rf '%s'", T);
}

static const char *hint_for(const char *content)
{
        char path[PATH_MAX + 16];
        FILE *f;

        snprintf(path, sizeof(path), "%s/sysctl", T);
        if (!content) {
                unlink(path);
                return layers_userns_hint(path);
        }
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
        return layers_userns_hint(path);
}

static void hint_only_where_restricted(void **state)
{
        (void)state;
        assert_non_null(strstr(hint_for("1\n"), "scripts/apparmor-userns.sh"));
        assert_string_equal(hint_for("0\n"), "");
        assert_string_equal(hint_for(""), "");
        assert_string_equal(hint_for(NULL), "");
}

/* The script's output into T/out; its exit status. */
static int script(const char *args)
{
        char cmd[3 * PATH_MAX];
        int status;

        snprintf(cmd, sizeof(cmd), "'%s/scripts/apparmor-userns.sh' %s > '%s/out' 2>&1",
                 STOCKADE_SOURCE_DIR, args, T);
        status = system(cmd);
        assert_true(status != -1 && WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void out_has(const char *want)
{
        char path[PATH_MAX + 16], buf[4096] = "";
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/out", T);
        f = fopen(path, "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        if (!strstr(buf, want))
                fail_msg("no `%s` in:\n%s", want, buf);
}

static void script_prints_the_profile(void **state)
{
        char args[PATH_MAX + 64], want[PATH_MAX + 64], real[PATH_MAX];

        (void)state;
        assert_non_null(realpath(STOCKADE_BIN, real));
        snprintf(args, sizeof(args), "--print '%s'", STOCKADE_BIN);
        assert_int_equal(script(args), 0);
        snprintf(want, sizeof(want), "profile stockade %s flags=(unconfined) {", real);
        out_has(want);
        out_has("\n  userns,\n");
        out_has("abi <abi/4.0>,");
}

static void script_refuses_with_a_reason(void **state)
{
        char args[PATH_MAX + 64];

        (void)state;
        assert_int_equal(script("--print /nonexistent/stockade"), 2);
        out_has("is not an executable stockade");
        assert_int_equal(script("--bogus"), 2);
        out_has("usage:");
        /* Not --print: on a host without AppArmor's restriction it says no profile is
         * needed (exit 1); where it restricts and we are not root, that root is needed. */
        snprintf(args, sizeof(args), "'%s'", STOCKADE_BIN);
        if (layers_userns_hint(APPARMOR_USERNS_SYSCTL)[0] == '\0') {
                assert_int_equal(script(args), 1);
                out_has("no profile is needed");
        } else if (geteuid() != 0) {
                assert_int_equal(script(args), 1);
                out_has("needs root");
        } else {
                print_message("AppArmor restricts here and we are root: not loading a profile "
                              "from a test\n");
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(hint_only_where_restricted),
                cmocka_unit_test(script_prints_the_profile),
                cmocka_unit_test(script_refuses_with_a_reason),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

/* Audit mode's report (issue 10, item 5), read from stockade's stderr: the summary at exit
 * with a count per kind even without -v, one line per kind (not per call) with -v, every
 * call with -vv, nothing with -q, and no report of libc's silent clone3 -> clone fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCHDOG 60

/* unshare(CLONE_NEWUSER) 3 times, a netlink socket twice, PTRACE_TRACEME 4 times: 9 calls
 * enforce mode would deny, of 3 kinds. Built into `script` (stdout of the probes dropped). */
static void denials_script(char *script, size_t size)
{
        const char *p = runner_probe();

        snprintf(script, size,
                 "for i in 1 2 3; do %s unshare_user; done; "
                 "for i in 1 2; do %s socket_netlink; done; "
                 "for i in 1 2 3 4; do %s ptrace_traceme; done; true",
                 p, p, p);
}

/* `stockade run --mode audit [flag] -- sh -c SCRIPT` with the denials above. */
static struct run_result run_audit(const char *flag)
{
        char script[4096];
        const char *args[10];
        struct run_result r;
        size_t n = 0;

        denials_script(script, sizeof(script));
        args[n++] = "--mode";
        args[n++] = "audit";
        if (flag)
                args[n++] = flag;
        args[n++] = "--";
        args[n++] = "sh";
        args[n++] = "-c";
        args[n++] = script;
        args[n] = NULL;
        assert_int_equal(runner_stockade_run(args, WATCHDOG, &r), 0);
        if (r.exit_code != 0)
                fail_msg("exit %d; stderr: %s", r.exit_code, r.err);
        return r;
}

/* How many times `needle` occurs in `s`. */
static int occurrences(const char *s, const char *needle)
{
        int n = 0;

        for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static void expect(const struct run_result *r, const char *needle, int times)
{
        int n = occurrences(r->err, needle);

        if (n != times)
                fail_msg("`%s` %d times, want %d; stderr:\n%s", needle, n, times, r->err);
}

static void summary_without_v(void **state)
{
        struct run_result r = run_audit(NULL);

        expect(&r, "stockade: audit: 9 calls would have been denied, 3 kinds:\n", 1);
        expect(&r, "stockade: audit:        3 x unshare(CLONE_NEWUSER): EPERM\n", 1);
        expect(&r,
               "stockade: audit:        2 x socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG): "
               "EPERM\n",
               1);
        expect(&r, "stockade: audit:        4 x ptrace(PTRACE_TRACEME, ...): EPERM\n", 1);
        /* Grouped by call: ptrace, socket, unshare in that order. */
        assert_true(strstr(r.err, "x ptrace(") < strstr(r.err, "x socket("));
        assert_true(strstr(r.err, "x socket(") < strstr(r.err, "x unshare("));
        /* Without -v, no line per kind. */
        expect(&r, "would fail", 0);
        runner_free(&r);
}

static void verbose_once_per_kind(void **state)
{
        struct run_result r = run_audit("-v");
        char who[4200];

        expect(&r, "unshare(CLONE_NEWUSER) would fail with EPERM\n", 1);
        expect(&r, "socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG) would fail with EPERM\n", 1);
        expect(&r, "ptrace(PTRACE_TRACEME, 0, NULL, NULL) would fail with EPERM\n", 1);
        /* Each with the process's name and executable. */
        snprintf(who, sizeof(who), "] (%s): ", runner_probe());
        expect(&r, "stockade: audit: probe[", 3);
        expect(&r, who, 3);
        /* The summary still comes at the end. */
        expect(&r, "stockade: audit: 9 calls would have been denied, 3 kinds:\n", 1);
        assert_true(strstr(r.err, "would fail") < strstr(r.err, "9 calls would"));
        runner_free(&r);
}

static void very_verbose_every_call(void **state)
{
        struct run_result r = run_audit("-vv");

        /* The first with the process's name, the other two with the pid. */
        expect(&r, "unshare(CLONE_NEWUSER) would fail with EPERM\n", 3);
        expect(&r, "ptrace(PTRACE_TRACEME, 0, NULL, NULL) would fail with EPERM\n", 4);
        expect(&r, "stockade: audit: probe[", 3);
        runner_free(&r);
}

static void quiet_says_nothing(void **state)
{
        struct run_result r = run_audit("-q");

        expect(&r, "audit", 0);
        runner_free(&r);
}

/* glibc's pthread_create tries clone3 first; ENOSYS sends it to clone, silently. That is
 * what enforce mode does, and audit mode must neither report nor count it. */
static void clone3_fallback_not_reported(void **state)
{
        static const char threads_py[] = "import threading\n"
                                         "out = []\n"
                                         "ts = [threading.Thread(target=out.append, args=(i,)) "
                                         "for i in range(4)]\n"
                                         "[t.start() for t in ts]; [t.join() for t in ts]\n"
                                         "print(sorted(out))";
        struct run_result r;

        assert_int_equal(runner_stockade_run((const char *[]){"--mode", "audit", "-vv", "--",
                                                              "python3", "-c", threads_py, NULL},
                                             WATCHDOG, &r),
                         0);
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "[0, 1, 2, 3]\n");
        expect(&r, "clone", 0);
        expect(&r, "stockade: audit: no call would have been denied\n", 1);
        expect(&r, " 0 would-be denials", 1);
        runner_free(&r);
}

/* Enforce mode denies and says nothing of audits. */
static void enforce_has_no_summary(void **state)
{
        char script[4096];
        struct run_result r;

        denials_script(script, sizeof(script));
        assert_int_equal(
                runner_stockade_run((const char *[]){"--", "sh", "-c", script, NULL}, WATCHDOG, &r),
                0);
        assert_int_equal(r.exit_code, 0);
        expect(&r, "audit", 0);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(summary_without_v),
                cmocka_unit_test(verbose_once_per_kind),
                cmocka_unit_test(very_verbose_every_call),
                cmocka_unit_test(quiet_says_nothing),
                cmocka_unit_test(clone3_fallback_not_reported),
                cmocka_unit_test(enforce_has_no_summary),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

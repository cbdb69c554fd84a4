/*
 * Stress: the supervisor under 300 threads that loop on notified calls while four forkers
 * fork and reap at the rate --max-procs allows (refused forks retry), for about 3 s; then
 * the command exits 42 with all of that still running. Judged from outside:
 *   - the command's exit status is passed through;
 *   - no task of the tree is left (found by a unique marker in their argv);
 *   - no fd of the supervisor leaked (`stockade -v` says "stockade: no fd leaked").
 * 300 threads keep all 64 notifier threads busy. More only slow the start: each new thread
 * waits for the supervisor's ptrace thread, which shares two cores with every runnable
 * caller (1,000 threads took 5 s to start here and over 40 s on a slower CI machine).
 */
#include "tests/helpers/runner.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *attack_tree(void)
{
        const char *env = getenv("STOCKADE_ATTACK_TREE");
        return env ? env : STOCKADE_ATTACK_TREE;
}

static void show(const struct run_result *r)
{
        print_message("  exit %d\n  stdout: %s  stderr: %s", r->exit_code,
                      r->out_len ? r->out : "(none)\n", r->err_len ? r->err : "(none)\n");
}

static void test_threads_and_forks_at_the_limit(void **state)
{
        char marker[64];
        const char *args[] = {"-v",     "--max-procs", "320", "--",   attack_tree(),
                              "stress", "3",           "300", marker, NULL};
        struct run_result r;
        const char *line;

        snprintf(marker, sizeof(marker), "stockade-stress-%d-%ld", (int)getpid(), (long)time(NULL));
        assert_int_equal(runner_stockade_run(args, 100, &r), 0);
        line = strstr(r.out, "stress: ");
        print_message("  %.*s\n", line ? (int)strcspn(line, "\n") : 4, line ? line : "none");
        if (r.exit_code != 42 || !strstr(r.err, "stockade: no fd leaked\n"))
                show(&r);
        assert_int_equal(r.exit_code, 42);
        assert_non_null(line); /* the attack ran to its end */
        assert_null(strstr(r.err, "fds leaked by the run"));
        assert_non_null(strstr(r.err, "stockade: no fd leaked\n"));
        if (runner_process_alive(marker))
                fail_msg("a task of the sandbox outlived stockade");
        runner_free(&r);
}

int main(void)
{
        static const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_threads_and_forks_at_the_limit),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

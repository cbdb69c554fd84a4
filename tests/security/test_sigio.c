/*
 * SIGIO to a host process through a shared file description (outside review R4).
 *
 * A host process hands the sandbox one end of a socketpair as stdin after making itself the
 * owner of that description (F_SETOWN). Inside, F_SETSIG SIGKILL, or turning O_ASYNC on
 * (F_SETFL, FIOASYNC), would make the kernel send SIGKILL or SIGIO (default action:
 * terminate) to the host at the next I/O event. Landlock's signal scope does not stop it:
 * it judges the task that set the owner, the host.
 *
 * tests/helpers/sigio_host.c plays the host (and the sandboxed attacker): it runs the
 * attack, writes to the socket once the sandbox is gone, and reports whether it is alive
 * and how many SIGIOs it got. Judged from here, outside both. The same attacks run natively
 * first, to show they do kill the host; and inside the sandbox, SIGIO on a socketpair of the
 * sandbox's own must keep working.
 *
 * Two ctest entries: test_sigio (Landlock with the signal scope, where the host has it) and
 * test_sigio_unscoped (STOCKADE_TEST_DISABLE=landlock-scopes: the supervisor alone).
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

enum { TIMEOUT_S = 30 };

struct outcome {
        bool alive;     /* the host printed its report */
        int status;     /* the host's exit code, or 128 + the signal that killed it */
        int cmd, sigio; /* the attacker's exit code (an errno), the SIGIOs the host got */
        char err[512];
};

/* Run `sigio_host host SETUP` around `sigio_host sb ATTACK [@HOST@]`, under stockade or not. */
static struct outcome attack(const char *setup, const char *what, bool sandboxed)
{
        bool degraded = getenv("STOCKADE_TEST_ALLOW_DEGRADED") != NULL;
        const char *argv[16];
        struct run_result r;
        struct outcome o = {0};
        size_t n = 0;

        argv[n++] = SIGIO_HOST;
        argv[n++] = "host";
        argv[n++] = setup;
        if (sandboxed) {
                argv[n++] = runner_stockade();
                argv[n++] = "run";
                argv[n++] = "--tty";
                argv[n++] = "never";
                if (degraded)
                        argv[n++] = "--allow-degraded";
                argv[n++] = "--";
        }
        argv[n++] = SIGIO_HOST;
        argv[n++] = "sb";
        argv[n++] = what;
        argv[n++] = "@HOST@";
        argv[n] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, TIMEOUT_S, &r), 0);
        o.status = r.exit_code;
        o.alive = sscanf(r.out, "cmd=%d sigio=%d", &o.cmd, &o.sigio) == 2 && r.exit_code == 0;
        snprintf(o.err, sizeof(o.err), "%s", r.err);
        runner_free(&r);
        return o;
}

/* `want_errno` < 0: any (the attack may be refused at another step). */
static void expect_safe(const char *setup, const char *what, int host_sigio, int want_errno)
{
        struct outcome o = attack(setup, what, true);

        if (!o.alive)
                fail_msg("%s/%s: the host died (status %d%s) under stockade; stderr: %s", setup,
                         what, o.status, o.status == 128 + SIGKILL ? ", SIGKILL" : "", o.err);
        if (o.sigio != host_sigio)
                fail_msg("%s/%s: the host got %d SIGIO under stockade, expected %d", setup, what,
                         o.sigio, host_sigio);
        if (want_errno >= 0 && o.cmd != want_errno)
                fail_msg("%s/%s: the sandboxed call got errno %d, expected %d; stderr: %s", setup,
                         what, o.cmd, want_errno, o.err);
}

/* The controls: natively, each attack reaches the host. */
static void test_native_attacks_reach_host(void **state)
{
        struct outcome o = attack("async", "setsig", false);

        if (o.alive || o.status != 128 + SIGKILL)
                fail_msg("native F_SETSIG: the host survived (status %d)", o.status);
        o = attack("owner", "setfl", false);
        assert_true(o.alive);
        assert_int_equal(o.cmd, 0);
        assert_int_equal(o.sigio, 1);
        o = attack("owner", "fioasync", false);
        assert_true(o.alive);
        assert_int_equal(o.cmd, 0);
        assert_int_equal(o.sigio, 1);
        o = attack("none", "setown", false);
        if (o.alive || o.status != 128 + SIGKILL)
                fail_msg("native F_SETOWN + F_SETSIG: the host survived (status %d)", o.status);
}

/* The reviewer's repro: the host owns the description and asked for SIGIO (which it still
 * gets, once); the sandbox makes that signal SIGKILL. */
static void test_setsig_kill(void **state)
{
        expect_safe("async", "setsig", 1, EPERM);
}

/* The host owns the description, SIGIO off: the sandbox turns it on. */
static void test_setfl_async(void **state)
{
        expect_safe("owner", "setfl", 0, EPERM);
}

static void test_fioasync(void **state)
{
        expect_safe("owner", "fioasync", 0, EPERM);
}

/* A thread with an fd table of its own (third outside review): its fd 0 is the host's, the
 * leader's a pipe. Judged on the leader's table, the calls ran, and the host was SIGKILLed. */
static void test_thread_own_fd_table(void **state)
{
        expect_safe("async", "thread", 1, EPERM);
}

/* No owner: the sandbox names the host as owner itself, then arms SIGKILL and SIGIO. With
 * Landlock's scope F_SETOWN runs (Landlock will refuse the signal) and arming is refused;
 * without it F_SETOWN is refused, and arming a description with no owner is harmless. */
static void test_setown_host(void **state)
{
        expect_safe("none", "setown", 0, -1);
}

/* The sandbox's own socketpair, owned by a task or a group of the sandbox, or by nobody:
 * F_SETSIG, O_ASYNC and FIOASYNC work and the signal arrives. */
static void test_own_sigio_works(void **state)
{
        const char *args[] = {"--tty", "never", "--", SIGIO_HOST, "sb", "own", NULL};
        const char *degraded[] = {"--tty", "never", "--allow-degraded", "--", SIGIO_HOST, "sb",
                                  "own",   NULL};
        struct run_result r;

        assert_int_equal(
                runner_stockade_run(getenv("STOCKADE_TEST_ALLOW_DEGRADED") ? degraded : args,
                                    TIMEOUT_S, &r),
                0);
        if (r.exit_code != 0)
                fail_msg("SIGIO on the sandbox's own socketpair: exit %d; stderr: %s", r.exit_code,
                         r.err);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_native_attacks_reach_host),
                cmocka_unit_test(test_setsig_kill),
                cmocka_unit_test(test_setfl_async),
                cmocka_unit_test(test_fioasync),
                cmocka_unit_test(test_thread_own_fd_table),
                cmocka_unit_test(test_setown_host),
                cmocka_unit_test(test_own_sigio_works),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

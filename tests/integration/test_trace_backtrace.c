/* Backtraces of denied calls (issue 9, item 5), checked from outside with `stockade trace`:
 * the default records them, three named functions in order; and the attacks on the unwinder
 * of outside review R3 — the program removes a file it runs from and puts a FIFO or a
 * symlink where /proc/PID/maps still names it — neither wedge stockade (--timeout still ends
 * the run) nor make it open a file the program cannot read. The attack tests pass
 * --backtrace denied themselves, so that they judge any build (STOCKADE_BIN=...): the one
 * before this file wedged on the FIFO and opened the symlink's target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG 30

static char dir[64];  /* the traces and the secret: out of the sandbox's sight */
static char play[64]; /* where the program plants: in its /tmp */

static int setup(void **state)
{
        snprintf(dir, sizeof(dir), "/dev/shm/stockade-bt-XXXXXX");
        snprintf(play, sizeof(play), "/var/tmp/stockade-bt-XXXXXX");
        if (!mkdtemp(dir) || !mkdtemp(play)) {
                fprintf(stderr, "skipped: no /dev/shm or /tmp to work in: %s\n", strerror(errno));
                exit(77);
        }
        chmod(dir, 0755);  /* as root, the command (nobody) may look, and must still fail */
        chmod(play, 0777); /* ... and plant here */
        return 0;
}

static int teardown(void **state)
{
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, play);
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

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct run_result run(const char *const args[])
{
        struct run_result r;

        assert_int_equal(runner_stockade_run(args, WATCHDOG, &r), 0);
        if (r.exit_code == -1)
                fail_msg("watchdog fired: stockade hung. stderr: %s", r.err);
        return r;
}

/* stockade trace show --only denied FILE */
static struct run_result show_denied(const char *t)
{
        char *argv[] = {
                (char *)runner_stockade(), "trace", "show", "--only", "denied", (char *)t, NULL};
        struct run_result r;

        assert_int_equal(runner_run(argv, NULL, WATCHDOG, &r), 0);
        if (r.exit_code != 0)
                fail_msg("trace show: %s", r.err);
        return r;
}

/* No --backtrace: a denied call three named functions deep carries its backtrace. */
static void denied_call_has_backtrace_by_default(void **state)
{
        const char *t = path_of("bt.trace");
        struct run_result r = run((const char *[]){"--trace", t, "--", BT_DEEP, NULL});
        const char *a, *b, *c;

        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "3\n"); /* ESRCH */
        runner_free(&r);
        r = show_denied(t);
        assert_non_null(strstr(r.out, "kill(1, 0) = -1 ESRCH"));
        assert_non_null(strstr(r.out, "[backtrace 1]"));
        a = strstr(r.out, "bt_innermost+");
        b = strstr(r.out, "bt_middle+");
        c = strstr(r.out, "bt_outer+");
        if (!a || !b || !c || !(a < b && b < c))
                fail_msg("the three frames are not there in order:\n%s", r.out);
        assert_non_null(strstr(r.out, "(bt_deep)"));
        assert_non_null(strstr(r.out, "kill+")); /* libc's frame, named from its .dynsym */
        runner_free(&r);
}

/*
 * A FIFO where maps names the file the program runs from: an unwinder that opens it (as
 * libunwind-ptrace did, on the main thread) blocks for good, and --timeout with it. The run
 * must end by its timeout, on time, and the denied call still has a backtrace.
 */
static void fifo_at_mapped_path_does_not_wedge(void **state)
{
        const char *t = path_of("fifo.trace");
        double t0 = now();
        struct run_result r =
                run((const char *[]){"--timeout", "2", "--backtrace", "denied", "--trace", t, "--",
                                     BT_SWAP, "fifo", play, "wait", NULL});
        double took = now() - t0;

        if (r.exit_code != 124 || took > 10)
                fail_msg("exit %d after %.1f s (want 124, the timeout, in ~2 s); out: %s err: %s",
                         r.exit_code, took, r.out, r.err);
        assert_string_equal(r.out, "3\n"); /* planted, and the call was denied */
        runner_free(&r);
        r = show_denied(t);
        assert_non_null(strstr(r.out, "kill(1, 0) = -1 ESRCH"));
        assert_non_null(strstr(r.out, "backtrace 1 of"));
        assert_non_null(strstr(r.out, "kill+"));
        runner_free(&r);
}

/*
 * A symlink where maps names the file the program runs from, to a file the program cannot
 * read: it lies in the host's /dev/shm, and the sandbox's /dev/shm is its own (as root, it
 * is also root's 0600, the command being nobody). Not a --hide path: the supervisor runs under
 * the same Landlock rules, which would keep even the old unwinder out. Following the symlink
 * would have the supervisor open that file; inotify tells whether anyone did.
 */
static void symlink_at_mapped_path_is_not_followed(void **state)
{
        const char *t = path_of("symlink.trace"), *secret = path_of("secret");
        char cmd[512], ev[4096];
        struct run_result r;
        ssize_t n;
        int in;

        /* An ELF file, so that an unwinder that opens it also parses it. */
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0600 '%s'", BT_DEEP, secret, secret);
        assert_int_equal(system(cmd), 0);
        in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        assert_true(in >= 0);
        assert_true(inotify_add_watch(in, secret, IN_OPEN | IN_ACCESS) >= 0);
        r = run((const char *[]){"--backtrace", "denied", "--trace", t, "--", BT_SWAP, "symlink",
                                 play, secret, NULL});
        if (r.exit_code != 0 || strcmp(r.out, "target unreadable\n3\n") != 0)
                fail_msg("exit %d, out: %s err: %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        n = read(in, ev, sizeof(ev));
        if (n > 0)
                fail_msg("the symlink's target, which the program cannot read, was opened");
        assert_int_equal(errno, EAGAIN);
        close(in);
        r = show_denied(t);
        assert_non_null(strstr(r.out, "backtrace 1 of"));
        assert_non_null(strstr(r.out, "kill+"));
        runner_free(&r);
}

/* Hostile memory (bt_swap scribble): a garbage ELF header where the unwinder looks for the
 * unwind tables, a frame chain that loops. The run ends normally and the backtrace is there,
 * bounded: 32 frames at most, or stopped early. */
static void hostile_memory_is_bounded(void **state)
{
        const char *t = path_of("scribble.trace");
        double t0 = now();
        struct run_result r = run((const char *[]){"--backtrace", "denied", "--trace", t, "--",
                                                   BT_SWAP, "scribble", NULL});
        const char *bt, *p;
        int frames = 0;

        if (r.exit_code != 0 || strcmp(r.out, "3\n") != 0 || now() - t0 > 10)
                fail_msg("exit %d after %.1f s, out: %s err: %s", r.exit_code, now() - t0, r.out,
                         r.err);
        runner_free(&r);
        r = show_denied(t);
        bt = strstr(r.out, "backtrace 1 of");
        if (!bt)
                fail_msg("no backtrace:\n%s", r.out);
        for (p = bt; (p = strstr(p, "\n    #")) != NULL; p++)
                frames++;
        if (frames < 1 || frames > 32)
                fail_msg("%d frames:\n%s", frames, r.out);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(denied_call_has_backtrace_by_default),
                cmocka_unit_test(fifo_at_mapped_path_does_not_wedge),
                cmocka_unit_test(symlink_at_mapped_path_is_not_followed),
                cmocka_unit_test(hostile_memory_is_bounded),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

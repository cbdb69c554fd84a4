/*
 * Stress: the supervisor under 300 threads that loop on notified calls while four forkers
 * fork and reap at the rate --max-procs allows (refused forks retry), for about 3 s; then
 * the command exits 42 with all of that still running. Judged from outside:
 *   - the command's exit status is passed through;
 *   - no task of the tree is left (found by a unique marker in their argv);
 *   - no fd of the supervisor leaked (`stockade -v` says "stockade: no fd leaked").
 * 300 threads keep the notifier pool growing (to about 50 threads on the 2-core VM: one more
 * starts only while every one is inside a call; the cap is 256). More only slow the start: each new thread
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
#include <sys/stat.h>
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

/*
 * Many handlers blocked at once, each in a call of its own that may take any time (the open of
 * a FIFO with no writer, as a connect to a host server with a full backlog): the program's
 * other threads must still be served. An outside tester froze the whole sandbox with 30-60
 * threads blocked in connect: a new notifier thread could take a call before it was counted,
 * and the pool then stopped growing. 100 blocked opens, then a file written and read by the
 * main thread, then the FIFO opened for writing to let them all go.
 */
static const char blocked_handlers[] =
        "import os, sys, threading, time\n"
        "os.mkfifo('fifo')\n"
        "n = int(sys.argv[1])\n"
        "started = threading.Semaphore(0)\n"
        "def reader():\n"
        "    started.release()\n"
        "    os.close(os.open('fifo', os.O_RDONLY))\n"
        "ts = [threading.Thread(target=reader) for _ in range(n)]\n"
        "for t in ts: t.start()\n"
        "for _ in range(n): started.acquire()\n"
        "time.sleep(1)\n"
        "t0 = time.time()\n"
        "with open('file', 'w') as f: f.write('x')\n"
        "with open('file') as f: f.read()\n"
        "os.stat('/etc/hostname')\n"
        "print('served in %.1f s' % (time.time() - t0), flush=True)\n"
        "w = os.open('fifo', os.O_WRONLY)\n"
        "for t in ts: t.join()\n"
        "os.close(w)\n"
        "print('done', flush=True)\n";

static void test_blocked_handlers_leave_others_served(void **state)
{
        char dir[] = "/var/tmp/stockade-blocked.XXXXXX", script[256], path[64];
        /* The program is sh's $0: no quoting of its own. */
        const char *args[] = {"--timeout", "40",   "--rw",           dir, "--", "/bin/sh",
                              "-c",        script, blocked_handlers, NULL};
        struct run_result r;

        (void)state;
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0777), 0); /* as root the command runs as nobody */
        snprintf(script, sizeof(script), "cd '%s' && exec python3 -c \"$0\" 100", dir);
        assert_int_equal(runner_stockade_run(args, 60, &r), 0);
        if (r.exit_code != 0 || !strstr(r.out, "done\n"))
                show(&r);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "served in "));
        assert_non_null(strstr(r.out, "done\n"));
        runner_free(&r);
        snprintf(path, sizeof(path), "%s/fifo", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/file", dir);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        static const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_threads_and_forks_at_the_limit),
                cmocka_unit_test(test_blocked_handlers_leave_others_served),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

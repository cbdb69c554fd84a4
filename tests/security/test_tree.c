/*
 * Security tests of the supervisor's process tree: the three holes of the outside review that
 * commit 04f251a closed, each attack performed for real by tests/helpers/attack_tree.c under
 * `stockade run` and judged from outside the sandbox.
 *
 *   1. pid reuse: a child that died at birth must not stay in the tree, or the sandbox can
 *      signal (and the teardown kills) the host process that gets its number next. Staged
 *      deterministically by tests/helpers/pidreuse.c in a pid namespace of its own: every
 *      freed number gets a victim, and every victim must survive the run.
 *   2. a wedged supervisor: a last close of a lingering TCP socket, taken from the program by
 *      pidfd_send_signal's emulation, must not keep --timeout or SIGTERM from ending the run.
 *   3. an unreadable executable (mode 0111) hides the task from an unprivileged supervisor:
 *      the task must be killed before its first instruction.
 *
 * Every attack here failed on the code before the fix (901bfea); the report of the commit
 * that added this file says how. Set STOCKADE_BIN to run them against another build.
 */
#include "tests/helpers/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum {
        SKIPPED = 77,
        NOBODY = 65534,
        GHOSTS = 4000,        /* children that die at birth, per run (see test_dead_child_...) */
        GHOST_RUNS = 2,       /* runs per configuration */
        LINGER_TIMEOUT_S = 5, /* --timeout of the wedge runs */
        LINGER_RUNS = 3,
        KILLED = 128 + SIGKILL,
};

static const char *attack_tree(void)
{
        const char *env = getenv("STOCKADE_ATTACK_TREE");
        return env ? env : STOCKADE_ATTACK_TREE;
}

static const char *pidreuse(void)
{
        const char *env = getenv("STOCKADE_PIDREUSE");
        return env ? env : STOCKADE_PIDREUSE;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show(const char *what, const struct run_result *r)
{
        print_message("  %s: exit %d\n  stdout: %s  stderr: %s", what, r->exit_code,
                      r->out_len ? r->out : "(none)\n", r->err_len ? r->err : "(none)\n");
}

/* Landlock's signal scope judges pidfd_send_signal in the kernel; without it (as on hosts
 * with Landlock ABI < 6) the supervisor emulates it. STOCKADE_TEST_DISABLE simulates that. */
static void set_unscoped(bool unscoped)
{
        if (unscoped)
                setenv("STOCKADE_TEST_DISABLE", "landlock-scopes", 1);
        else
                unsetenv("STOCKADE_TEST_DISABLE");
}

/* As root, the command should run as uid 0 like the victims: `--user root` where this
 * stockade accepts it (once root runs as nobody by default), nothing before that. */
static const char *root_user_option(void)
{
        static const char *opt;
        static bool known;
        char *argv[] = {(char *)runner_stockade(), "help", "run", NULL};
        struct run_result r;

        if (known)
                return opt;
        known = true;
        if (geteuid() != 0)
                return NULL;
        assert_int_equal(runner_run(argv, NULL, 10, &r), 0);
        if (strstr(r.out, "`--user root`") || strstr(r.err, "`--user root`"))
                opt = "--user=root";
        runner_free(&r);
        return opt;
}

/* ---- 1. a dead child's number stays out of the tree ------------------------------------ */

/* pidreuse: GHOSTS children die at birth, a victim takes each number, the sandbox tries to
 * kill every one of them and exits; every victim must be alive after the run. */
static void ghost_runs_of(bool unscoped, const char *attack, int ghosts, int runs)
{
        char n[16];
        const char *argv[8];
        size_t k = 0;

        setenv("PIDREUSE_ATTACK", attack, 1);
        snprintf(n, sizeof(n), "%d", ghosts);
        argv[k++] = pidreuse();
        argv[k++] = runner_stockade();
        argv[k++] = attack_tree();
        argv[k++] = n;
        if (root_user_option())
                argv[k++] = root_user_option();
        if (unscoped)
                argv[k++] = "--allow-degraded";
        argv[k] = NULL;
        set_unscoped(unscoped);
        for (int i = 0; i < runs; i++) {
                struct run_result r;
                const char *tally;

                assert_int_equal(runner_run((char *const *)argv, NULL, 120, &r), 0);
                if (r.exit_code == SKIPPED) {
                        print_message("  %s", r.err);
                        runner_free(&r);
                        set_unscoped(false);
                        skip();
                }
                tally = strstr(r.out, "victims: ");
                print_message("  run %d: %.*s\n", i + 1, tally ? (int)strcspn(tally, "\n") : 4,
                              tally ? tally : "none");
                if (r.exit_code != 0) {
                        show("pidreuse", &r);
                        set_unscoped(false);
                        fail_msg("a host process that took the number of a sandboxed task "
                                 "(%s) was hit, or the run failed",
                                 attack);
                }
                assert_non_null(tally);
                assert_non_null(strstr(tally, ", 0 killed"));
                runner_free(&r);
        }
        set_unscoped(false);
        unsetenv("PIDREUSE_ATTACK");
}

static void ghost_runs(bool unscoped)
{
        ghost_runs_of(unscoped, "ghosts", GHOSTS, GHOST_RUNS);
}

/*
 * The outside review's F1: a non-leader thread execs and the exec fails past its point of
 * no return. The kernel frees the thread's old tid with no wait status and no EXEC event;
 * a host process takes the number; the sandbox then calls prlimit, setpriority and kill on
 * it. Every victim must be alive with no CPU limit.
 */
static void test_exec_ghost_number_not_kept(void **state)
{
        ghost_runs_of(false, "execghosts", 30, 1);
}

static void test_exec_ghost_number_not_kept_unscoped(void **state)
{
        ghost_runs_of(true, "execghosts", 30, 1);
}

static void test_dead_child_number_not_kept(void **state)
{
        ghost_runs(false);
}

/* Without the kernel's signal scope, pidfd_send_signal and kill are judged by the tree. */
static void test_dead_child_number_not_kept_unscoped(void **state)
{
        ghost_runs(true);
}

/*
 * A notifier thread keeps, for its last callers, their pidfd and /proc/TID directory
 * (syscalls/fs_common.c). A task that takes a dead task's number must be resolved from its
 * own working directory: neither the dead one's (a kept fd holds the struct pid, not the
 * number) nor an error (a reaped task's /proc/TID answers ESRCH, which must reopen; an
 * outside review found every cwd-relative call failing with ESRCH after such a reuse).
 */
static void test_reused_number_own_cwd(void **state)
{
        char dir[] = "/var/tmp/test_cwdreuse.XXXXXX", cmd[256], here[4096];
        const char *argv[8];
        struct run_result r;
        size_t k = 0;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd),
                 "mkdir %s/A %s/B && truncate -s 111 %s/A/f && truncate -s 222 %s/B/f && "
                 "chmod -R a+rwX %s",
                 dir, dir, dir, dir, dir);
        assert_int_equal(system(cmd), 0);
        setenv("PIDREUSE_ATTACK", "cwdreuse", 1);
        setenv("PIDREUSE_STEER", "1", 1);
        argv[k++] = pidreuse();
        argv[k++] = runner_stockade();
        argv[k++] = attack_tree();
        argv[k++] = "1";
        argv[k++] = "--rw";
        argv[k++] = dir;
        if (root_user_option())
                argv[k++] = root_user_option();
        argv[k] = NULL;
        assert_non_null(getcwd(here, sizeof(here)));
        assert_int_equal(chdir(dir), 0);
        assert_int_equal(runner_run((char *const *)argv, NULL, 120, &r), 0);
        assert_int_equal(chdir(here), 0);
        unsetenv("PIDREUSE_ATTACK");
        unsetenv("PIDREUSE_STEER");
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
        if (r.exit_code == SKIPPED) {
                print_message("  %s", r.err);
                runner_free(&r);
                skip();
        }
        if (!strstr(r.out, "attack: B reused=1 "))
                print_message("  note: the number was not reused (another fork took it)\n");
        if (r.exit_code != 0 || !strstr(r.out, "stat=ok size=222\n")) {
                show("pidreuse", &r);
                fail_msg("a task with a dead task's number was not resolved from its own cwd");
        }
        runner_free(&r);
}

/* ---- 2. a lingering close does not wedge the supervisor -------------------------------- */

static char *linger_argv[] = {
        NULL, "run", "--allow-degraded", "--kill-after", "1", "--timeout", "5",
        "--", NULL,  "linger",           "30",           NULL};

static char **linger_command(const char *timeout)
{
        linger_argv[0] = (char *)runner_stockade();
        linger_argv[6] = (char *)timeout;
        linger_argv[8] = (char *)attack_tree();
        return linger_argv;
}

/* Diagnostics only (root can read another process's wchan): how many of stockade's threads
 * wait in a close (sk_stream_wait_close sleeps in wait_woken). */
static int threads_in_close(pid_t pid)
{
        char path[320], wchan[64];
        struct dirent *e;
        DIR *d;
        int n = 0;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        d = opendir(path);
        while (d && (e = readdir(d))) {
                int fd;
                ssize_t len;

                snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid, e->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                len = read(fd, wchan, sizeof(wchan) - 1);
                close(fd);
                wchan[len > 0 ? len : 0] = '\0';
                n += strcmp(wchan, "wait_woken") == 0;
        }
        if (d)
                closedir(d);
        return n;
}

/* --timeout 5 must end the run within 6 s, every time, whatever the program holds open. */
static void test_lingering_close_timeout(void **state)
{
        set_unscoped(true);
        for (int i = 0; i < LINGER_RUNS; i++) {
                struct run_result r;
                double start = now_s(), took;

                assert_int_equal(runner_run(linger_command("5"), NULL, 20, &r), 0);
                took = now_s() - start;
                print_message("  run %d: exit %d after %.2f s\n", i + 1, r.exit_code, took);
                if (r.exit_code == -1) {
                        show("stockade", &r);
                        set_unscoped(false);
                        fail_msg("--timeout %d did nothing: the test's watchdog killed stockade "
                                 "after 20 s (wedged in a lingering close?)",
                                 LINGER_TIMEOUT_S);
                }
                if (r.exit_code != 124 || took > LINGER_TIMEOUT_S + 1.0)
                        show("stockade", &r);
                assert_int_equal(r.exit_code, 124);
                assert_true(took <= LINGER_TIMEOUT_S + 1.0);
                runner_free(&r);
        }
        set_unscoped(false);
}

static bool wait_until(pid_t pid, int *status, double deadline)
{
        while (now_s() < deadline) {
                if (waitpid(pid, status, WNOHANG) == pid)
                        return true;
                usleep(10000);
        }
        return false;
}

/* SIGTERM during the wedge: it is passed on to the command (which ignores it) and, after
 * --kill-after (1 s here), the tree is killed. Both need the supervisor's main thread. */
static void test_lingering_close_sigterm(void **state)
{
        char **argv = linger_command("0"); /* no timeout */
        int status = 0, blocked;
        bool ended;
        double first;
        pid_t pid;

        set_unscoped(true);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

                dup2(devnull, 0);
                dup2(devnull, 1);
                execv(argv[0], runner_workspace_rw(argv));
                _exit(121);
        }
        set_unscoped(false);
        usleep(2000 * 1000); /* the first wedge comes within half a second */
        blocked = threads_in_close(pid);
        if (geteuid() == 0)
                print_message("  stockade threads blocked in a close: %d\n", blocked);
        first = now_s();
        kill(pid, SIGTERM);
        ended = wait_until(pid, &status, first + 6.0);
        if (!ended) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                fail_msg("stockade ignored SIGTERM and --kill-after 1 for 6 s (wedged in a "
                         "lingering close?)");
        }
        print_message("  ended %.2f s after the first SIGTERM, %s %d\n", now_s() - first,
                      WIFEXITED(status) ? "exit" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), KILLED); /* --kill-after killed the tree */
        assert_true(now_s() - first < 3.0);
}

/* ---- 3. an executable the task may run but not read ------------------------------------ */

static char hidden_dir[64]; /* the test's temporary directory, for the teardown */

static void copy_file(const char *from, const char *to, mode_t mode)
{
        int in = open(from, O_RDONLY | O_CLOEXEC), out;
        char buf[65536];
        ssize_t n;

        assert_true(in >= 0);
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
        assert_true(out >= 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                assert_int_equal(write(out, buf, (size_t)n), n);
        assert_int_equal(n, 0);
        close(in);
        close(out);
        assert_int_equal(chmod(to, mode), 0);
}

static void in_dir(char *path, size_t len, const char *name)
{
        snprintf(path, len, "%s/%s", hidden_dir, name);
}

static int hidden_teardown(void **state)
{
        static const char *const names[] = {"hidden", "stockade", "attack_tree", "payload-ran"};
        char path[128];

        if (!hidden_dir[0])
                return 0;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                in_dir(path, sizeof(path), names[i]);
                unlink(path);
        }
        rmdir(hidden_dir);
        hidden_dir[0] = '\0';
        return 0;
}

/* As root, stockade itself runs as nobody (only an unprivileged supervisor is blinded), with
 * copies of stockade and the attack in a directory nobody can reach and write. */
static const char *setpriv(void)
{
        static const char *const paths[] = {"/usr/bin/setpriv", "/bin/setpriv"};

        for (size_t i = 0; i < 2; i++)
                if (access(paths[i], X_OK) == 0)
                        return paths[i];
        return NULL;
}

static void hidden_setup(void)
{
        char path[128];

        if (geteuid() == 0 && !setpriv()) {
                print_message("  skipped: as root this needs setpriv(1) to run stockade "
                              "unprivileged (a root supervisor can read any task)\n");
                skip();
        }
        strcpy(hidden_dir, "/var/tmp/stockade-0111-XXXXXX");
        assert_non_null(mkdtemp(hidden_dir));
        assert_int_equal(chmod(hidden_dir, 0755), 0);
        in_dir(path, sizeof(path), "stockade");
        copy_file(runner_stockade(), path, 0755);
        in_dir(path, sizeof(path), "attack_tree");
        copy_file(attack_tree(), path, 0755);
        if (geteuid() == 0)
                assert_int_equal(chown(hidden_dir, NOBODY, NOBODY), 0);
}

/* stockade run -- CMD...; as root through setpriv as nobody. */
static void run_hidden(const char *const cmd[], struct run_result *r)
{
        const char *argv[16];
        char sup[128];
        size_t n = 0;

        in_dir(sup, sizeof(sup), "stockade");
        if (geteuid() == 0) {
                argv[n++] = setpriv();
                argv[n++] = "--reuid=65534";
                argv[n++] = "--regid=65534";
                argv[n++] = "--clear-groups";
        }
        argv[n++] = sup;
        argv[n++] = "run";
        argv[n++] = "--rw"; /* as runner_workspace_rw: no session for nobody's HOME */
        argv[n++] = ".";
        argv[n++] = "--";
        for (; *cmd; cmd++)
                argv[n++] = *cmd;
        argv[n] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 30, r), 0);
}

static bool payload_ran(void)
{
        char path[128];

        in_dir(path, sizeof(path), "payload-ran");
        return access(path, F_OK) == 0;
}

/* Mode 0111, owned by `owner`: run directly as the command, and exec'd by a tracee. */
static void expect_hidden_killed(uid_t owner)
{
        char bin[128], runner[128];
        const char *direct[] = {bin, "payload", hidden_dir, NULL};
        const char *nested[] = {runner, "exec", bin, hidden_dir, NULL};
        const char *const *cmds[] = {direct, nested};
        struct run_result r;

        in_dir(bin, sizeof(bin), "hidden");
        in_dir(runner, sizeof(runner), "attack_tree");
        unlink(bin);
        copy_file(attack_tree(), bin, 0755);
        if (owner != geteuid())
                assert_int_equal(chown(bin, owner, owner), 0);
        assert_int_equal(chmod(bin, 0111), 0); /* after chown, and for the owner too */
        for (size_t i = 0; i < 2; i++) {
                run_hidden(cmds[i], &r);
                print_message("  %s, owner %u: exit %d\n", i ? "exec'd by a tracee" : "the command",
                              (unsigned)owner, r.exit_code);
                if (payload_ran() || r.exit_code != KILLED ||
                    !strstr(r.err, "executed a file it may run but not read"))
                        show("stockade", &r);
                if (payload_ran())
                        fail_msg("a task that exec'd a 0111 file ran its payload unseen");
                assert_int_equal(r.exit_code, KILLED);
                assert_non_null(strstr(r.err, "it executed a file it may run but not read, "
                                              "which hides it from the supervisor"));
                runner_free(&r);
        }
}

static void test_unreadable_exec_killed(void **state)
{
        hidden_setup();
        expect_hidden_killed(geteuid() == 0 ? NOBODY : geteuid()); /* the sandbox's own */
        if (geteuid() == 0)
                expect_hidden_killed(0); /* another uid's */
}

/* The control: the same program, readable, runs its payload. */
static void test_readable_exec_runs(void **state)
{
        char bin[128];
        const char *direct[] = {bin, "payload", hidden_dir, NULL};
        struct run_result r;

        hidden_setup();
        in_dir(bin, sizeof(bin), "hidden");
        copy_file(attack_tree(), bin, 0755);
        run_hidden(direct, &r);
        if (r.exit_code != 0 || !payload_ran())
                show("stockade", &r);
        assert_int_equal(r.exit_code, 0);
        assert_true(payload_ran());
        runner_free(&r);
}

int main(void)
{
        static const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dead_child_number_not_kept),
                cmocka_unit_test(test_dead_child_number_not_kept_unscoped),
                cmocka_unit_test(test_exec_ghost_number_not_kept),
                cmocka_unit_test(test_exec_ghost_number_not_kept_unscoped),
                cmocka_unit_test(test_reused_number_own_cwd),
                cmocka_unit_test(test_lingering_close_timeout),
                cmocka_unit_test(test_lingering_close_sigterm),
                cmocka_unit_test_teardown(test_unreadable_exec_killed, hidden_teardown),
                cmocka_unit_test_teardown(test_readable_exec_runs, hidden_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

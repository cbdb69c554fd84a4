/*
 * The sandbox's /proc and /dev (supervisor/vfs/special.c, syscalls/fs_open.c), judged from
 * outside: a host process whose command line holds a secret, and a host terminal whose
 * master the test reads. Each attack first runs natively, as the same uid, to show that it
 * does reach the secret or the terminal there: the checks can fail.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 60 };

static char dir[PATH_MAX], secret[64];
static pid_t host_pid = -1;

/* A host process (the test's child, outside any sandbox) with the secret in its argv. */
static int setup(void **state)
{
        (void)state;
        snprintf(secret, sizeof(secret), "hostsecret%d%ld", (int)getpid(), (long)time(NULL));
        host_pid = fork();
        if (host_pid == 0) {
                /* A group of its own, to be killed whole; no fd of ctest's kept open. */
                int null = open("/dev/null", O_RDWR);

                setpgid(0, 0);
                dup2(null, 0), dup2(null, 1), dup2(null, 2);
                /* "; exit": sh must not exec sleep in its own place (the argv would go). */
                execl("/bin/sh", "sh", "-c", "sleep 120; exit 0", secret, (char *)NULL);
                _exit(127);
        }
        assert_non_null(getcwd(dir, sizeof(dir) - 32));
        strcat(dir, "/procdev-XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0777), 0); /* the sandbox runs as nobody under root */
        usleep(100000);                        /* the exec is done */
        return 0;
}

static int teardown(void **state)
{
        char cmd[PATH_MAX + 16];

        (void)state;
        if (host_pid > 0) {
                kill(-host_pid, SIGKILL);
                waitpid(host_pid, NULL, 0);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* `script` natively (sh -c, as the sandbox's uid) and under stockade; both outputs. */
static void both(const char *script, struct run_result *native, struct run_result *sandboxed)
{
        char *argv[] = {"/usr/bin/setpriv", "--reuid=65534",
                        "--regid=65534",    "--clear-groups",
                        "/bin/sh",          "-c",
                        (char *)script,     NULL};
        char *const *v = geteuid() == 0 ? argv : argv + 4;
        char saved[PATH_MAX];

        assert_non_null(getcwd(saved, sizeof(saved)));
        assert_int_equal(chdir(dir), 0);
        assert_int_equal(runner_run(v, NULL, TIMEOUT_S, native), 0);
        assert_int_equal(chdir(saved), 0);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, sandboxed), 0);
}

/* Every way to name /proc/PID of a process outside the tree finds nothing; the sandbox's own
 * processes are there. */
static void test_host_process_not_in_proc(void **state)
{
        char script[4096];
        struct run_result native, r;
        int p = (int)host_pid;

        (void)state;
        snprintf(script, sizeof(script),
                 "(cat /proc/%d/cmdline; echo; cat /proc/%d/status | head -1\n"
                 "cat /proc//%d/./cmdline; cat /proc/self/../%d/cmdline\n"
                 "cat /proc/%d/task/%d/cmdline\n"
                 "(cd /proc && cat %d/cmdline); (cd /proc/%d 2>/dev/null && cat cmdline)\n"
                 "ln -sf /proc/%d/cmdline link && cat link\n"
                 "ln -sf /proc/%d link2 && cat link2/cmdline\n"
                 "cat /proc/self/root/proc/%d/cmdline\n"
                 "exec 3</proc && cat /dev/fd/3/%d/cmdline) | tr '\\0' ' '\n"
                 "printf 'own: %%s %%s\\n' \"$(tr '\\0' ' ' < /proc/$$/cmdline)\" "
                 "\"$(head -1 /proc/self/status)\"\n",
                 p, p, p, p, p, p, p, p, p, p, p, p);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the host process's argv was not readable: %s %s", native.out,
                         native.err);
        if (strstr(r.out, secret) || strstr(r.err, secret))
                fail_msg("the sandbox read a host process's argv:\n%s\n%s", r.out, r.err);
        if (!strstr(r.out, "own: /bin/sh -c") || !strstr(r.out, "Name:"))
                fail_msg("the sandbox's own /proc is missing:\n%s\n%s", r.out, r.err);
        assert_non_null(strstr(r.err, "No such file or directory"));
        runner_free(&native);
        runner_free(&r);
}

/* A thread flips a path between the sandbox's own /proc/self/cmdline and the host process's
 * while others open it: the host process's argv never comes back. */
static void test_path_flip_race(void **state)
{
        char script[512];
        struct run_result native, r;

        (void)state;
        snprintf(script, sizeof(script), "exec %s flip /proc/self/cmdline /proc/%d/cmdline 2",
                 runner_probe(), (int)host_pid);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the flip did not read the argv: %s %s", native.out, native.err);
        if (strstr(r.out, secret))
                fail_msg("the race read a host process's argv: %s", r.out);
        if (!strstr(r.out, "flip: "))
                fail_msg("the attack did not run: %s %s", r.out, r.err);
        print_message("  %s", r.out);
        runner_free(&native);
        runner_free(&r);
}

/* A host terminal (another pty of the same user: a shell's, say) cannot be opened, so
 * nothing the sandbox writes reaches it; /dev/null and friends work; other devices are not
 * there. */
static void test_host_terminal_and_devices(void **state)
{
        char script[1024], buf[256];
        struct run_result native, r;
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
        const char *slave;
        ssize_t n;

        (void)state;
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = ptsname(master);
        assert_non_null(slave);
        assert_int_equal(chmod(slave, 0666), 0); /* natively anyone may write it */
        snprintf(script, sizeof(script),
                 "echo INJECTED > %s; echo INJECTED > /dev/pts/../pts/%s\n"
                 "head -c 3 /dev/zero | wc -c; echo x > /dev/null && echo null-ok\n"
                 "head -c 4 /dev/urandom | wc -c; cat /dev/mem\n",
                 slave, slave + strlen("/dev/pts/"));
        both(script, &native, &r);
        usleep(100000);
        n = read(master, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        if (!strstr(buf, "INJECTED"))
                fail_msg("natively the write did not reach the terminal: %s", native.err);
        /* Drain the native write, run the sandbox again, and look once more. */
        while (read(master, buf, sizeof(buf)) > 0)
                ;
        runner_free(&r);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, &r), 0);
        usleep(100000);
        n = read(master, buf, sizeof(buf) - 1);
        if (n > 0)
                fail_msg("the sandbox wrote to a host terminal: %.*s", (int)n, buf);
        if (!strstr(r.out, "null-ok") || !strstr(r.out, "3\n") || !strstr(r.out, "4\n"))
                fail_msg("the sandbox's devices do not work:\n%s\n%s", r.out, r.err);
        if (!strstr(r.err, "/dev/mem: No such"))
                fail_msg("host devices are visible:\n%s\n%s", r.out, r.err);
        close(master);
        runner_free(&native);
        runner_free(&r);
}

/* POSIX shared memory is the sandbox's own: a host segment in /dev/shm is neither readable
 * nor removable, what the sandbox makes there never reaches the host's /dev/shm, and
 * shm_open/sem_open work (Python's multiprocessing locks). */
static void test_dev_shm_private(void **state)
{
        char host[64], made[64], script[1024], buf[128];
        struct run_result native, r;
        struct stat st;
        FILE *f;

        (void)state;
        snprintf(host, sizeof(host), "/dev/shm/stockade-host-%d", (int)getpid());
        snprintf(made, sizeof(made), "/dev/shm/stockade-made-%d", (int)getpid());
        if (stat("/dev/shm", &st) < 0) {
                print_message("  no /dev/shm on this host\n");
                skip();
        }
        f = fopen(host, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", secret);
        fclose(f);
        assert_int_equal(chmod(host, 0666), 0);
        snprintf(script, sizeof(script),
                 "cat %s; ls /dev/shm; rm -f %s; echo mine > %s && cat %s\n"
                 "python3 -c 'import multiprocessing as m; m.Lock(); print(\"lock-ok\")'\n",
                 host, host, made, made);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the host segment was not readable: %s", native.err);
        /* The native run removed it and made the other: put things back as they were. */
        unlink(made);
        f = fopen(host, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", secret);
        fclose(f);
        runner_free(&r);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, &r), 0);
        if (strstr(r.out, secret) || strstr(r.out, "stockade-host-"))
                fail_msg("the sandbox saw the host's /dev/shm:\n%s", r.out);
        if (!strstr(r.out, "mine\n") || !strstr(r.out, "lock-ok"))
                fail_msg("the sandbox's own /dev/shm does not work:\n%s\n%s", r.out, r.err);
        f = fopen(host, "r");
        if (!f)
                fail_msg("the sandbox removed a host segment");
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_non_null(strstr(buf, secret));
        if (stat(made, &st) == 0)
                fail_msg("what the sandbox made in /dev/shm reached the host's");
        unlink(host);
        runner_free(&native);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_host_process_not_in_proc),
                cmocka_unit_test(test_path_flip_race),
                cmocka_unit_test(test_host_terminal_and_devices),
                cmocka_unit_test(test_dev_shm_private),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

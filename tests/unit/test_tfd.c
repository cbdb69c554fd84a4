/*
 * tfd_take (supervisor/tfd.h) keeps the pidfd of the last thread it took from: it must answer
 * exactly as a fresh pidfd would.
 *
 *   two_tasks      two children hold different files at the same fd number; takes from
 *                  one, the other, the first again, twice in a row, give each its own file
 *                  (a pidfd kept for the wrong task would give the other's)
 *   gone           a child that died and was reaped: ESRCH
 *   reused_tid     in a pid namespace of the test's own (where one can be made), a child
 *                  dies and a new one is made to take its pid number (ns_last_pid): the
 *                  take gives the new one's file, not ESRCH from the dead one's kept pidfd;
 *                  skipped, saying why, where no such namespace can be made
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/tfd.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NUM = 100 }; /* the fd number the children hold their file at */

struct child {
        pid_t pid;
};

/* The children alive, killed by the group's teardown should a test fail before its end(). */
static pid_t kids[8];

/* A child holding `path` at fd NUM until killed (end). */
static struct child hold(const char *path)
{
        struct child c = {.pid = -1};
        int ready[2];
        char b;

        if (pipe2(ready, O_CLOEXEC) < 0)
                return c;
        c.pid = fork();
        if (c.pid == 0) {
                int fd = open(path, O_RDONLY);

                if (fd < 0 || dup2(fd, NUM) < 0)
                        _exit(1);
                /* Not the test's stdout: a reader of it waits for its end. */
                fd = open("/dev/null", O_WRONLY);
                dup2(fd, 1), dup2(fd, 2);
                alarm(60);
                (void)!write(ready[1], "r", 1);
                for (;;)
                        pause();
        }
        close(ready[1]);
        if (read(ready[0], &b, 1) != 1)
                c.pid = -1;
        close(ready[0]);
        for (size_t i = 0; c.pid > 0 && i < sizeof(kids) / sizeof(*kids); i++)
                if (kids[i] <= 0) {
                        kids[i] = c.pid;
                        break;
                }
        return c;
}

static void end(struct child *c)
{
        int st;

        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
        for (size_t i = 0; i < sizeof(kids) / sizeof(*kids); i++)
                if (kids[i] == c->pid)
                        kids[i] = 0;
}

/* The inode of the file that taking fd NUM of `pid` gives, or -errno. */
static long long taken(pid_t pid)
{
        struct stat st;
        int fd = tfd_take(pid, NUM);
        long long r;

        if (fd < 0)
                return fd;
        r = fstat(fd, &st) < 0 ? -errno : (long long)st.st_ino;
        close(fd);
        return r;
}

static char file_a[64], file_b[64];
static long long ino_a, ino_b;

static long long make(char *path, size_t size, const char *name)
{
        struct stat st;
        int fd;

        snprintf(path, size, "%s/tfd-%s-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp", name,
                 (int)getpid());
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -1;
        close(fd);
        return (long long)st.st_ino;
}

static int setup(void **state)
{
        (void)state;
        ino_a = make(file_a, sizeof(file_a), "a");
        ino_b = make(file_b, sizeof(file_b), "b");
        return ino_a > 0 && ino_b > 0 ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(kids) / sizeof(*kids); i++)
                if (kids[i] > 0)
                        kill(kids[i], SIGKILL);
        unlink(file_a);
        unlink(file_b);
        return 0;
}

static void two_tasks(void **state)
{
        struct child a = hold(file_a), b = hold(file_b);

        (void)state;
        assert_true(a.pid > 0 && b.pid > 0);
        assert_int_equal(taken(a.pid), ino_a);
        assert_int_equal(taken(a.pid), ino_a);
        assert_int_equal(taken(b.pid), ino_b);
        assert_int_equal(taken(a.pid), ino_a);
        assert_int_equal(taken(b.pid), ino_b);
        assert_int_equal(taken(b.pid), ino_b);
        end(&a);
        end(&b);
}

static void gone(void **state)
{
        struct child a = hold(file_a);

        (void)state;
        assert_true(a.pid > 0);
        assert_int_equal(taken(a.pid), ino_a); /* kept */
        end(&a);
        assert_int_equal(taken(a.pid), -ESRCH);
}

/* In the pid namespace (this process is its pid 1): 0 when the take gave the new child's
 * file, 77 when ns_last_pid cannot be set, else a failure code. */
static int reused_inside(void)
{
        struct child a = hold(file_a), b;
        pid_t first = a.pid;
        char last[16];
        int fd, n;

        if (a.pid <= 0 || taken(a.pid) != ino_a)
                return 2;
        end(&a); /* the kept pidfd now names a dead task */
        fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
        n = snprintf(last, sizeof(last), "%d", (int)first - 1);
        if (fd < 0 || write(fd, last, (size_t)n) != n)
                return 77;
        close(fd);
        b = hold(file_b);
        if (b.pid != first)
                return b.pid > 0 ? (end(&b), 77) : 3;
        n = taken(b.pid) == ino_b ? 0 : 4;
        end(&b);
        return n;
}

static void reused_tid(void **state)
{
        pid_t pid;
        int st;

        (void)state;
        /* A pid namespace needs CAP_SYS_ADMIN: root has it, others get it in a user
         * namespace of their own (and its ns_last_pid is theirs to set). */
        if (unshare(CLONE_NEWPID) < 0 && (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)) {
                printf("skipped: no pid namespace here (%s)\n", strerror(errno));
                return;
        }
        pid = fork();
        if (pid == 0)
                _exit(reused_inside());
        assert_true(pid > 0);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) == 77) {
                printf("skipped: ns_last_pid cannot be set in the test's pid namespace\n");
                return;
        }
        assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(two_tasks), cmocka_unit_test(gone),
                cmocka_unit_test(reused_tid), /* last: it leaves this process unshared */
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

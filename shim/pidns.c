/*
 * The sandbox's pid namespace (pidns.h). Both children are made with a raw clone(2) and no
 * new stack, which behaves as fork() does (the child goes on with a copy of this stack), but
 * takes CLONE_PARENT, which fork() cannot: the new task is the supervisor's child, so its
 * number stays the supervisor's to reap, PDEATHSIG follows the supervisor, and its exit
 * status (the command's) reaches the supervisor. Neither child calls anything of glibc's that
 * relies on the thread's cached tid.
 */
#include "shim/pidns.h"
#include "supervisor/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define INIT_NAME "stockade-init"

/* fork(), but the new task is our parent's child (pidns.h). */
static pid_t clone_sibling(void)
{
        return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
}

/* Whether the process behind the pidfd has exited (a pidfd polls readable then, whatever
 * pid namespace the poller is in). */
static bool exited(int pidfd)
{
        struct pollfd p = {.fd = pidfd, .events = POLLIN};

        return poll(&p, 1, 0) != 0;
}

/*
 * Anyone in the namespace may read I's command line (procfs checks no right for it): it is
 * stockade's, with host paths (--ro HOST:SANDBOX) the view keeps from the sandbox. So is its
 * environment's memory, which procfs guards (I is not dumpable), wiped all the same. Both
 * areas are this process's own stack; their bounds are fields 48 to 51 of its stat.
 */
static void scrub_args(void)
{
        unsigned long v[4] = {0};
        char buf[2048], *p;
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        p = strrchr(buf, ')'); /* comm may hold anything */
        for (int field = 2; p && field < 48; field++)
                p = strchr(p + 1, ' ');
        if (!p || sscanf(p, " %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4 || v[1] <= v[0] ||
            v[3] < v[2])
                return;
        memset((void *)(uintptr_t)v[0], 0, v[1] - v[0]);
        memset((void *)(uintptr_t)v[2], 0, v[3] - v[2]);
        if (v[1] - v[0] > sizeof(INIT_NAME))
                memcpy((void *)(uintptr_t)v[0], INIT_NAME, sizeof(INIT_NAME));
        prctl(PR_SET_NAME, INIT_NAME);
}

/* Every capability, over whichever user namespace: I needed CAP_SYS_ADMIN for the mount
 * only, and never execs (the bounding set does not matter). */
static void drop_capabilities(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {0};

        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        if (syscall(SYS_capset, &h, d) < 0)
                _exit(1); /* fail closed: the run is refused (the mount was reported) */
}

/*
 * I: pid 1 of the namespace. Signals stay blocked (the namespaces child blocked them all):
 * from inside, pid 1 drops every signal it has no handler for, SIGKILL included; from the
 * supervisor's namespace SIGKILL reaches it, and its death kills the namespace. Not
 * dumpable, outside the sandbox's Landlock domain, without capabilities or fds: nothing in
 * the sandbox can trace it, read its memory or take anything from it. It reaps the orphans
 * the namespace gives it (a traced one only once the supervisor has seen its exit).
 */
static _Noreturn void init_run(int report, int supervisor)
{
        sigset_t chld;
        int r = 0;

        /* From the supervisor, a task of an ancestor namespace, PDEATHSIG's SIGKILL is
         * forced on pid 1. Armed before checking that it is not already dead. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || exited(supervisor))
                _exit(1);
        prctl(PR_SET_DUMPABLE, 0);
        /* A procfs is of the pid namespace of the task that mounts it. */
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                r = -errno;
        if (write(report, &r, sizeof(r)) != sizeof(r) || r < 0)
                _exit(1);
        scrub_args();
        drop_capabilities();
        (void)!chdir("/");
        syscall(SYS_close_range, 0, ~0U, 0);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        for (;;) {
                while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
                        ;
                sigwaitinfo(&chld, NULL); /* SIGCHLD is blocked: kept pending until here */
        }
}

pid_t pidns_make(int supervisor, const char **step)
{
        int pipefd[2], r = 0;
        pid_t init;

        *step = "pid namespace: unshare(CLONE_NEWPID)";
        if (unshare(CLONE_NEWPID) < 0)
                return -errno;
        *step = "pid namespace: pipe";
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        init = clone_sibling();
        if (init == 0) {
                close(pipefd[0]);
                init_run(pipefd[1], supervisor);
        }
        if (init < 0)
                r = -errno;
        close(pipefd[1]);
        *step = init < 0 ? "pid namespace: clone" : "pid namespace: mount proc on /proc";
        if (init > 0 && read(pipefd[0], &r, sizeof(r)) != sizeof(r))
                r = -EIO;
        close(pipefd[0]);
        return r < 0 ? r : init;
}

int pidns_split(int fd, int sock, const char **step)
{
        int gate[2], r = 0;
        char go = 0;
        pid_t c;

        *step = "setns(CLONE_NEWPID)";
        if (setns(fd, CLONE_NEWPID) < 0)
                r = -errno;
        close(fd);
        if (r < 0)
                return r;
        *step = "pipe";
        if (pipe2(gate, O_CLOEXEC) < 0)
                return -errno;
        *step = "clone";
        c = clone_sibling();
        if (c < 0) {
                r = -errno;
                close(gate[0]);
                close(gate[1]);
                return r;
        }
        if (c == 0) {
                /* S's message must be the first on the socket: the supervisor reads C's
                 * number, then the listener from C. */
                close(gate[1]);
                if (read(gate[0], &go, 1) != 1 || go != 'p')
                        _exit(EXIT_STOCKADE);
                close(gate[0]);
                return 0;
        }
        /* S: our number for C is the supervisor's (we are in its namespace). */
        close(gate[0]);
        if (write(sock, &c, sizeof(c)) != sizeof(c))
                _exit(EXIT_STOCKADE); /* C reads EOF and exits too */
        (void)!write(gate[1], "p", 1);
        _exit(0);
}

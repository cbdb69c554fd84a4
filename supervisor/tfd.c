#include "supervisor/tfd.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/*
 * The pidfd of the last thread this supervisor thread took an fd from, kept open: a program
 * makes its calls from the same thread again and again, and pidfd_open + close cost ~1.4 us of
 * the ~3.7 us a take cost on the 2-core VM. A pidfd names the very task, not its number: once
 * that thread is gone pidfd_getfd fails with ESRCH, and the number (reused meanwhile or not)
 * is opened afresh, so a stale pidfd never reaches another task's fds. No other live task can
 * carry the same tid, so the kept one answers exactly as a fresh one would.
 */
static __thread int kept_pidfd = -1;
static __thread pid_t kept_tid;

static int pidfd_of(pid_t tid)
{
        int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

        if (pidfd < 0 && errno == EINVAL)
                pidfd = (int)syscall(SYS_pidfd_open, tid, 0); /* before 6.9: leaders only */
        return pidfd;
}

int tfd_take(pid_t tid, int fd)
{
        int copy;

        if (kept_pidfd >= 0 && kept_tid == tid) {
                copy = (int)syscall(SYS_pidfd_getfd, kept_pidfd, fd, 0);
                if (copy >= 0 || errno != ESRCH)
                        return copy < 0 ? -errno : copy;
        }
        tfd_forget();
        kept_pidfd = pidfd_of(tid);
        if (kept_pidfd < 0)
                return -ESRCH;
        kept_tid = tid;
        copy = (int)syscall(SYS_pidfd_getfd, kept_pidfd, fd, 0);
        return copy < 0 ? -errno : copy;
}

void tfd_forget(void)
{
        if (kept_pidfd >= 0)
                close(kept_pidfd);
        kept_pidfd = -1;
}

int tfd_cwd(pid_t tid)
{
        char cwd[48];
        int fd;

        snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)tid);
        fd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : fd;
}

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

int tfd_take(pid_t tid, int fd)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
        int copy;

        if (pidfd < 0 && errno == EINVAL)
                pidfd = (int)syscall(SYS_pidfd_open, tid, 0); /* before 6.9: leaders only */
        if (pidfd < 0)
                return -ESRCH;
        copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        return copy < 0 ? -errno : copy;
}

int tfd_cwd(pid_t tid)
{
        char cwd[48];
        int fd;

        snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)tid);
        fd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : fd;
}

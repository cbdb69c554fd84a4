/*
 * A private IPC namespace for the sandbox: SysV shm, sem and msg objects are found by id or
 * key in the namespace (shmctl(i, SHM_STAT) enumerates them), so in the host's namespace a
 * sandboxed program could attach to and overwrite another process's IPC_PRIVATE segment.
 * In a new namespace it sees only what its own tree creates, and everything goes with the
 * namespace when the tree's last process exits.
 *
 * Root (CAP_SYS_ADMIN) unshares CLONE_NEWIPC alone. Anyone else needs a user namespace to
 * own the new IPC namespace: CLONE_NEWUSER | CLONE_NEWIPC, then the one mapping an
 * unprivileged process may write, its own uid and gid to themselves, so that the program
 * keeps its identity and the files it creates belong to the user. Ids outside the mapping
 * (root, other users) then read as the overflow id 65534 inside the sandbox (stat, ps).
 *
 * POSIX shared memory (/dev/shm) is a tmpfs path, not part of the IPC namespace: it is the
 * virtual filesystem's to make private. POSIX message queues are scoped by the namespace but
 * stay denied by the table (nobody needed them).
 */
#include "shim/ipcns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *text)
{
        size_t len = strlen(text);
        int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, text, len);
        if (n < 0)
                r = -errno;
        else if ((size_t)n != len)
                r = -EIO;
        close(fd);
        return r;
}

/* The one mapping an unprivileged process may write for itself: its own effective ids. A
 * gid_map needs setgroups() off for good first (else dropping a group could lift a
 * negative ACL); the sandbox cannot call setgroups() successfully anyway. */
static int map_own_ids(uid_t uid, gid_t gid, const char **step)
{
        char map[64];
        int r;

        *step = "write /proc/self/setgroups";
        r = write_file("/proc/self/setgroups", "deny");
        if (r < 0)
                return r;
        *step = "write /proc/self/uid_map";
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        r = write_file("/proc/self/uid_map", map);
        if (r < 0)
                return r;
        *step = "write /proc/self/gid_map";
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        r = write_file("/proc/self/gid_map", map);
        if (r < 0)
                return r;
        /* Fail closed: an unmapped uid would make every file the program creates fail. */
        *step = "check the mapped uid and gid";
        return geteuid() == uid && getegid() == gid ? 0 : -EPERM;
}

int ipcns_enter(enum ipc_isolation how, const char **step)
{
        uid_t uid = geteuid();
        gid_t gid = getegid();

        switch (how) {
        case IPC_SHARED:
                return 0;
        case IPC_NS:
                *step = "unshare(CLONE_NEWIPC)";
                return unshare(CLONE_NEWIPC) < 0 ? -errno : 0;
        case IPC_NS_USERNS:
                /* The maps in /proc/self belong to us only while we are dumpable (a uid
                 * change such as --user's clears it). */
                *step = "set dumpable";
                if (prctl(PR_SET_DUMPABLE, 1) < 0)
                        return -errno;
                /* Some hosts let unshare() succeed and then refuse the mapping (Ubuntu's
                 * AppArmor userns restriction): only a probe of every step can tell. */
                *step = "unshare(CLONE_NEWUSER | CLONE_NEWIPC)";
                if (unshare(CLONE_NEWUSER | CLONE_NEWIPC) < 0)
                        return -errno;
                return map_own_ids(uid, gid, step);
        }
        *step = "unknown IPC isolation";
        return -EINVAL;
}

int ipcns_prepare(int fds[2], const char **step)
{
        char path[64];
        int pipefd[2], r = 0, status;
        pid_t pid;

        fds[0] = fds[1] = -1;
        *step = "pipe";
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid == 0) {
                const char *s = "";
                int e = ipcns_enter(IPC_NS_USERNS, &s);

                close(pipefd[0]);
                /* The error, then wait to be killed (the parent opens our namespaces). */
                if (write(pipefd[1], &e, sizeof(e)) != sizeof(e) || e < 0)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(pipefd[1]);
        if (pid < 0) {
                close(pipefd[0]);
                *step = "fork";
                return -errno;
        }
        *step = "make the user and IPC namespaces";
        if (read(pipefd[0], &r, sizeof(r)) != sizeof(r))
                r = -EIO;
        close(pipefd[0]);
        if (r == 0) {
                *step = "open the namespaces";
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                fds[0] = open(path, O_RDONLY | O_CLOEXEC);
                snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
                fds[1] = open(path, O_RDONLY | O_CLOEXEC);
                if (fds[0] < 0 || fds[1] < 0)
                        r = -errno;
        }
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (r < 0) {
                if (fds[0] >= 0)
                        close(fds[0]);
                if (fds[1] >= 0)
                        close(fds[1]);
                fds[0] = fds[1] = -1;
        }
        return r;
}

int ipcns_join(int user_fd, int ipc_fd, const char **step)
{
        int r = 0;

        *step = "setns(CLONE_NEWUSER)";
        if (setns(user_fd, CLONE_NEWUSER) < 0)
                r = -errno;
        if (r == 0) {
                *step = "setns(CLONE_NEWIPC)";
                if (setns(ipc_fd, CLONE_NEWIPC) < 0)
                        r = -errno;
        }
        close(user_fd);
        close(ipc_fd);
        return r;
}

const char *ipcns_name(enum ipc_isolation how)
{
        switch (how) {
        case IPC_SHARED:
                return "denied";
        case IPC_NS:
                return "private IPC namespace";
        case IPC_NS_USERNS:
                return "private IPC namespace (in a user namespace)";
        }
        return "?";
}

#include "tests/helpers/ptyrun.h"
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pty_spawn(struct pty_session *s, char *const argv[], int stdout_fd, int rows, int cols)
{
        struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};

        memset(s, 0, sizeof(*s));
        s->seen = calloc(1, 1);
        if (openpty(&s->master, &s->slave, NULL, NULL, &ws) < 0)
                return -errno;
        fcntl(s->master, F_SETFD, FD_CLOEXEC);
        fcntl(s->slave, F_SETFD, FD_CLOEXEC);
        s->pid = fork();
        if (s->pid < 0)
                return -errno;
        if (s->pid == 0) {
                setsid();
                ioctl(s->slave, TIOCSCTTY, 0);
                dup2(s->slave, 0);
                dup2(stdout_fd >= 0 ? stdout_fd : s->slave, 1);
                dup2(s->slave, 2);
                execvp(argv[0], runner_workspace_rw(argv));
                _exit(121);
        }
        return 0;
}

/* One read of whatever is there within `ms`; false at the end of the output. */
static bool read_some(struct pty_session *s, int ms)
{
        struct pollfd p = {.fd = s->master, .events = POLLIN};
        char buf[4096];
        ssize_t n;

        if (poll(&p, 1, ms) <= 0)
                return true;
        n = read(s->master, buf, sizeof(buf));
        if (n <= 0)
                return false; /* EIO: every slave fd is closed */
        s->seen = realloc(s->seen, s->len + (size_t)n + 1);
        memcpy(s->seen + s->len, buf, (size_t)n);
        s->len += (size_t)n;
        s->seen[s->len] = '\0';
        return true;
}

int pty_expect(struct pty_session *s, const char *needle, int timeout_s)
{
        double end = now_s() + timeout_s;

        for (;;) {
                char *hit = strstr(s->seen + s->consumed, needle);

                if (hit) {
                        s->consumed = (size_t)(hit - s->seen) + strlen(needle);
                        return 0;
                }
                if (now_s() > end || !read_some(s, 100))
                        return -1;
        }
}

void pty_send(struct pty_session *s, const char *keys)
{
        (void)!write(s->master, keys, strlen(keys));
}

void pty_drain(struct pty_session *s, int ms)
{
        double end = now_s() + ms / 1000.0;

        while (now_s() < end && read_some(s, 50))
                ;
}

int pty_wait(struct pty_session *s, int timeout_s)
{
        double end = now_s() + timeout_s;
        int status;

        while (now_s() < end) {
                pid_t r = waitpid(s->pid, &status, WNOHANG);

                if (r == s->pid) {
                        s->pid = 0;
                        pty_drain(s, 100);
                        return status;
                }
                read_some(s, 50);
        }
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
        s->pid = 0;
        return -1;
}

void pty_close(struct pty_session *s)
{
        if (s->pid > 0) {
                kill(s->pid, SIGKILL);
                waitpid(s->pid, NULL, 0);
        }
        close(s->master);
        close(s->slave);
        free(s->seen);
        memset(s, 0, sizeof(*s));
}

bool pty_stopped(pid_t pid)
{
        return runner_proc_state(pid) == 'T';
}

/*
 * Both sides of the SIGIO attack of review R4 (tests/security/test_sigio.c).
 *
 *   sigio_host host SETUP CMD...
 *     The host: makes a socketpair, prepares its end sv[0] as SETUP says, runs CMD (usually
 *     `stockade run --tty never -- sigio_host sb ATTACK`) with sv[0] as stdin, and once CMD
 *     has exited writes to sv[1], an I/O event on sv[0] that signals its owner. An argument
 *     "@HOST@" in CMD is replaced by the host's pid. If it is still alive then, it prints
 *     "cmd=N sigio=M" (CMD's exit code, the SIGIOs it received) and exits 0. SIGKILL cannot
 *     be handled: a host killed by it is what the caller sees.
 *       SETUP  async  F_SETOWN to itself + O_ASYNC: the host asked for SIGIO (counted)
 *              owner  F_SETOWN to itself, SIGIO off
 *              none   nothing
 *
 *   sigio_host sb ATTACK [HOSTPID]
 *     The sandboxed side, on fd 0. Exits with the errno of the attack (0: it worked).
 *       setsig    fcntl(0, F_SETSIG, SIGKILL)
 *       setfl     fcntl(0, F_SETFL, flags | O_ASYNC)
 *       fioasync  ioctl(0, FIOASYNC, &1)
 *       setown    F_SETOWN to HOSTPID (its errno ignored: with Landlock's scope the kernel
 *                 allows it and refuses the signal later), then F_SETSIG SIGKILL and O_ASYNC;
 *                 exits with the first errno of those two
 *       thread    the same as setsig + setfl, from a thread with an fd table of its own
 *                 (clone without CLONE_FILES) whose fd 0 is still the host's, while the
 *                 leader's fd 0 is a harmless pipe: the supervisor must judge the caller's
 *                 fd, not the leader's (third outside review); exits with F_SETSIG's errno
 *       own       the control: SIGIO on the sandbox's OWN socketpair must still work, with
 *                 the owner a task, or a group, of the sandbox, or no owner; exits 0 or the
 *                 number of the first check that failed (100 + n)
 */
#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t n_sigio, n_usr1;

static void on_sigio(int sig)
{
        (void)sig;
        n_sigio++;
}

static void on_usr1(int sig)
{
        (void)sig;
        n_usr1++;
}

static void sleep_ms(long ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int handle(int sig, void (*fn)(int))
{
        struct sigaction sa = {.sa_handler = fn, .sa_flags = SA_RESTART};

        sigemptyset(&sa.sa_mask);
        return sigaction(sig, &sa, NULL);
}

static int setup(int fd, const char *how)
{
        if (strcmp(how, "none") == 0)
                return 0;
        if (fcntl(fd, F_SETOWN, getpid()) < 0)
                return -1;
        if (strcmp(how, "owner") == 0)
                return 0;
        if (strcmp(how, "async") == 0)
                return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
        errno = EINVAL;
        return -1;
}

static int host(char *how, char **cmd)
{
        char self[16];
        int sv[2], status;
        pid_t pid;

        snprintf(self, sizeof(self), "%d", (int)getpid());
        for (char **a = cmd; *a; a++)
                if (strcmp(*a, "@HOST@") == 0)
                        *a = self;
        if (handle(SIGIO, on_sigio) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
            setup(sv[0], how) < 0) {
                perror("sigio_host: setup");
                return 2;
        }
        pid = fork();
        if (pid < 0)
                return 2;
        if (pid == 0) {
                dup2(sv[0], 0);
                close(sv[0]);
                close(sv[1]);
                signal(SIGIO, SIG_DFL);
                execvp(cmd[0], cmd);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return 2;
        /* The I/O event: data on sv[0]. The kernel signals sv[0]'s owner during this write. */
        if (write(sv[1], "x", 1) != 1)
                return 2;
        sleep_ms(200);
        printf("cmd=%d sigio=%d\n",
               WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), (int)n_sigio);
        return 0;
}

/* The control: a socketpair of the sandbox's own, armed `how`, gets its signal on a write. */
static int own_pair(int check, int owner, int sig, int use_ioctl)
{
        int sv[2], on = 1, r = 0;
        sig_atomic_t before = sig == SIGUSR1 ? n_usr1 : n_sigio;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return check;
        if ((owner && fcntl(sv[0], F_SETOWN, owner) < 0) ||
            (sig != SIGIO && fcntl(sv[0], F_SETSIG, sig) < 0) ||
            (use_ioctl ? ioctl(sv[0], FIOASYNC, &on)
                       : fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_ASYNC)) < 0) {
                fprintf(stderr, "sigio_host: check %d: %s\n", check, strerror(errno));
                r = check;
        } else if (owner && write(sv[1], "x", 1) == 1) {
                for (int i = 0; i < 100 && (sig == SIGUSR1 ? n_usr1 : n_sigio) == before; i++)
                        sleep_ms(10);
                if ((sig == SIGUSR1 ? n_usr1 : n_sigio) == before) {
                        fprintf(stderr, "sigio_host: check %d: no signal\n", check);
                        r = check;
                }
        }
        close(sv[0]);
        close(sv[1]);
        return r;
}

static int own(void)
{
        int r;

        if (handle(SIGIO, on_sigio) < 0 || handle(SIGUSR1, on_usr1) < 0)
                return 100;
        if ((r = own_pair(101, getpid(), SIGUSR1, 0)) || /* F_SETSIG + O_ASYNC, owner: us */
            (r = own_pair(102, getpid(), SIGIO, 1)) ||   /* FIOASYNC, default SIGIO */
            (r = own_pair(103, -getpgrp(), SIGIO, 0)) || /* our process group */
            (r = own_pair(104, 0, SIGUSR1, 0)) ||        /* no owner: allowed, no signal */
            (r = own_pair(105, 0, SIGIO, 1)))
                return r;
        return 0;
}

static volatile int thread_go, thread_done, thread_errno;

static int own_table_thread(void *arg)
{
        while (!thread_go)
                ;
        thread_errno = fcntl(0, F_SETSIG, SIGKILL) < 0 ? errno : 0;
        if (fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_ASYNC) < 0 && !thread_errno)
                thread_errno = errno;
        __atomic_store_n(&thread_done, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_exit, 0); /* this thread only */
        return 0;
}

static int own_table(void)
{
        static char stack[64 * 1024];
        int p[2];

        if (pipe(p) < 0 || clone(own_table_thread, stack + sizeof(stack),
                                 CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, NULL) < 0)
                return 121;
        if (dup2(p[0], 0) < 0) /* the leader's fd 0 only */
                return 121;
        __atomic_store_n(&thread_go, 1, __ATOMIC_SEQ_CST);
        while (!__atomic_load_n(&thread_done, __ATOMIC_SEQ_CST))
                ;
        return thread_errno;
}

static int sb(const char *attack, const char *hostpid)
{
        int on = 1, r;

        if (strcmp(attack, "setsig") == 0)
                r = fcntl(0, F_SETSIG, SIGKILL);
        else if (strcmp(attack, "setfl") == 0)
                r = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_ASYNC);
        else if (strcmp(attack, "fioasync") == 0)
                r = ioctl(0, FIOASYNC, &on);
        else if (strcmp(attack, "setown") == 0 && hostpid) {
                (void)fcntl(0, F_SETOWN, atoi(hostpid));
                r = fcntl(0, F_SETSIG, SIGKILL);
                int e = r < 0 ? errno : 0;
                if (fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_ASYNC) < 0 && !e)
                        e = errno;
                return e;
        } else if (strcmp(attack, "thread") == 0)
                return own_table();
        else if (strcmp(attack, "own") == 0)
                return own();
        else
                return 120;
        return r < 0 ? errno : 0;
}

int main(int argc, char **argv)
{
        if (argc >= 4 && strcmp(argv[1], "host") == 0)
                return host(argv[2], argv + 3);
        if (argc >= 3 && strcmp(argv[1], "sb") == 0)
                return sb(argv[2], argc > 3 ? argv[3] : NULL);
        fprintf(stderr, "usage: sigio_host host async|owner|none CMD... | sb ATTACK [HOSTPID]\n");
        return 120;
}

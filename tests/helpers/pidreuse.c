/*
 * pidreuse STOCKADE ATTACK N [STOCKADE-OPTION...]
 *
 * Deterministic pid reuse, judged from outside the sandbox. In a pid namespace of our own
 * (and a user namespace when we are not root), our pid 1:
 *   1. runs `STOCKADE run OPTIONS -- ATTACK ghosts N`; the attack forks N
 *      children that die at birth, prints their numbers and READY, and waits;
 *   2. for each number p, writes p-1 to /proc/sys/kernel/ns_last_pid and forks a victim
 *      that pauses; victims that did not land exactly on p are dropped (p was not free);
 *   3. says GO: the attack tries to kill every p (pidfd_open + pidfd_send_signal, kill)
 *      and exits, and stockade tears its tree down;
 *   4. checks that every victim is still alive.
 * A supervisor that kept a dead child's number in its tree lets the sandbox signal the
 * victim that took it, or kills that victim itself at teardown.
 *
 * Prints "victims: PLACED placed, KILLED killed" and exits 0 only if none was killed and
 * stockade exited 0; 1 if a victim died or stockade failed; 3 if the run could not be set
 * up; 77 (with the reason) if this host cannot give us the namespaces.
 *
 * With PIDREUSE_STEER set, no victim is placed: the first number is written to
 * ns_last_pid so that the sandbox's next fork takes it, and the attack's lines and stockade's
 * status are printed (exit 0 if stockade exited 0).
 *
 * Pid 1 never execs, so it keeps the capabilities of its user namespace: it may write
 * ns_last_pid itself. Stockade, exec'd as a non-root uid, has none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { EXIT_KILLED = 1, EXIT_SETUP = 3, EXIT_SKIP = 77, MAX_PIDS = 4096, MAX_ARGS = 32 };

static void fail(int code, const char *what)
{
        fprintf(stderr, "pidreuse: %s: %s\n", what, strerror(errno));
        exit(code);
}

static int write_file(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = write(fd, text, strlen(text));
        close(fd);
        return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Our own pid namespace (and, unprivileged, a user namespace mapping our ids to themselves). */
static void enter_namespaces(void)
{
        uid_t uid = getuid();
        gid_t gid = getgid();
        char map[64];

        if (uid == 0) {
                if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
                        fail(EXIT_SKIP, "skipped: cannot create a pid namespace");
                return;
        }
        if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) < 0)
                fail(EXIT_SKIP, "skipped: cannot create a user and pid namespace (unprivileged "
                                "user namespaces forbidden here?)");
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        if (write_file("/proc/self/setgroups", "deny") < 0 ||
            write_file("/proc/self/uid_map", map) < 0)
                fail(EXIT_SKIP, "skipped: cannot map our uid in the user namespace");
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        if (write_file("/proc/self/gid_map", map) < 0)
                fail(EXIT_SKIP, "skipped: cannot map our gid in the user namespace");
}

/* Read one line from fd within timeout_ms; false on EOF or timeout. */
static bool read_line(int fd, char *buf, size_t len, int timeout_ms)
{
        size_t n = 0;

        while (n + 1 < len) {
                struct pollfd p = {.fd = fd, .events = POLLIN};

                if (poll(&p, 1, timeout_ms) <= 0 || read(fd, buf + n, 1) != 1)
                        break;
                if (buf[n++] == '\n')
                        break;
        }
        buf[n] = '\0';
        return n > 0 && buf[n - 1] == '\n';
}

static pid_t start_stockade(char **argv, int *in, int *out)
{
        int to[2], from[2];
        pid_t pid;

        if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
                fail(EXIT_SETUP, "pipe");
        pid = fork();
        if (pid < 0)
                fail(EXIT_SETUP, "fork");
        if (pid == 0) {
                dup2(to[0], STDIN_FILENO);
                dup2(from[1], STDOUT_FILENO);
                execv(argv[0], argv);
                _exit(121);
        }
        close(to[0]);
        close(from[1]);
        *in = to[1];
        *out = from[0];
        return pid;
}

/* A process that waits to be killed, forked so that it gets number `want` if that is free. */
/* Whether victim `pid` still has no CPU time limit (a prlimit from the sandbox sets one). */
static bool cpu_unlimited(pid_t pid)
{
        char path[64], line[256];
        bool unlimited = true;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return true;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "Max cpu time", 12) == 0)
                        unlimited = strstr(line, "unlimited") != NULL;
        fclose(f);
        return unlimited;
}

static pid_t place_victim(pid_t want)
{
        char last[32];
        pid_t v;

        snprintf(last, sizeof(last), "%d", (int)want - 1);
        if (write_file("/proc/sys/kernel/ns_last_pid", last) < 0)
                fail(EXIT_SETUP, "write /proc/sys/kernel/ns_last_pid");
        v = fork();
        if (v < 0)
                fail(EXIT_SETUP, "fork a victim");
        if (v == 0) {
                for (;;)
                        pause();
        }
        if (v != want) {
                kill(v, SIGKILL);
                waitpid(v, NULL, 0);
                return 0;
        }
        return v;
}

/* Pid 1 of the namespace: the whole experiment. */
static int init_main(int argc, char **argv)
{
        static pid_t victims[MAX_PIDS];
        char *sargv[MAX_ARGS + 8], line[256];
        int n = 0, placed = 0, killed = 0, in, out, status = 0, ghosts = atoi(argv[3]);
        pid_t sup, pids[MAX_PIDS];
        bool ready = false, steer = getenv("PIDREUSE_STEER") != NULL;

        /* Stockade reads /proc/PID/...: it must see this namespace's numbers. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                fail(EXIT_SKIP, "skipped: cannot make / private in our mount namespace");
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                fail(EXIT_SKIP, "skipped: cannot mount a proc of our pid namespace");

        sargv[n++] = argv[1];
        sargv[n++] = "run";
        for (int i = 4; i < argc && n < MAX_ARGS; i++)
                sargv[n++] = argv[i];
        sargv[n++] = "--";
        sargv[n++] = argv[2];
        /* ghosts (children that die at birth) or execghosts (old tids of failed execs) */
        sargv[n++] = getenv("PIDREUSE_ATTACK") ? getenv("PIDREUSE_ATTACK") : "ghosts";
        sargv[n++] = argv[3];
        sargv[n] = NULL;
        sup = start_stockade(sargv, &in, &out);

        signal(SIGPIPE, SIG_IGN); /* a stockade that died early is reported, not fatal */
        n = 0;
        while (read_line(out, line, sizeof(line), 30000)) {
                if (strcmp(line, "READY\n") == 0) {
                        ready = true;
                        break;
                }
                if (n < MAX_PIDS && n < ghosts)
                        pids[n++] = (pid_t)atoi(line);
        }
        if (!ready) {
                fprintf(stderr, "pidreuse: the attack did not get ready (last line \"%s\")\n",
                        line);
                kill(sup, SIGKILL);
                waitpid(sup, NULL, 0);
                return EXIT_SETUP;
        }
        /* PIDREUSE_STEER: no victim; the sandbox's own next fork is to get the first number
         * (a task of its own in place of one it had: the supervisor's kept per-task fds). */
        if (steer && n > 0) {
                char last[32];

                snprintf(last, sizeof(last), "%d", (int)pids[0] - 1);
                if (write_file("/proc/sys/kernel/ns_last_pid", last) < 0)
                        fail(EXIT_SETUP, "write /proc/sys/kernel/ns_last_pid");
        }
        for (int i = 0; !steer && i < n; i++)
                if (pids[i] > 1 && (victims[placed] = place_victim(pids[i])) > 0)
                        placed++;

        if (write(in, "GO\n", 3) != 3)
                fail(EXIT_SETUP, "tell the attack to go");
        while (read_line(out, line, sizeof(line), 30000))
                printf("attack: %s", line);
        close(in);
        close(out);
        waitpid(sup, &status, 0);

        for (int i = 0; i < placed; i++) {
                int vs;

                if (waitpid(victims[i], &vs, WNOHANG) == victims[i]) {
                        killed++;
                        printf("victim %d died (%s)\n", (int)victims[i],
                               WIFSIGNALED(vs) ? strsignal(WTERMSIG(vs)) : "exited");
                } else {
                        if (!cpu_unlimited(victims[i])) {
                                killed++; /* the sandbox set its CPU limit: as good as dead */
                                printf("victim %d got a CPU limit\n", (int)victims[i]);
                        }
                        kill(victims[i], SIGKILL);
                }
        }
        printf("stockade: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        printf("victims: %d placed, %d killed (of %d numbers)\n", placed, killed, n);
        fflush(stdout);
        if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return EXIT_KILLED;
        return placed > 0 || steer ? 0 : EXIT_SETUP;
}

int main(int argc, char **argv)
{
        pid_t init;
        int status;

        if (argc < 4 || atoi(argv[3]) <= 0 || atoi(argv[3]) > MAX_PIDS) {
                fprintf(stderr, "usage: pidreuse STOCKADE ATTACK N [STOCKADE-OPTION...]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        enter_namespaces();
        init = fork();
        if (init < 0)
                fail(EXIT_SETUP, "fork pid 1");
        if (init == 0) {
                /* If we die, the namespace dies: pid 1 ends and every process in it. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                exit(init_main(argc, argv));
        }
        if (waitpid(init, &status, 0) < 0)
                fail(EXIT_SETUP, "waitpid");
        if (WIFSIGNALED(status)) {
                fprintf(stderr, "pidreuse: pid 1 was killed by %s\n", strsignal(WTERMSIG(status)));
                return EXIT_SETUP;
        }
        return WEXITSTATUS(status);
}

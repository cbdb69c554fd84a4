/*
 * Attacks on the supervisor's process tree, run inside `stockade run` by
 * tests/security/test_tree.c and tests/integration/test_stress.c. Each mode is one attack; the
 * verdict is always judged from outside the sandbox (a victim that must still live, a run
 * that must end in time, a file that must not exist), never from what this program says.
 *
 *   ghosts N [FORKERS]
 *                     FORKERS processes (4) that ignore SIGCHLD fork N children in all that
 *                     die at birth; print their pids and READY, wait for a line on stdin,
 *                     then try to kill each pid (pidfd_open + pidfd_send_signal, and kill) and
 *                     exit 0. Each number is by then free on the host, or taken by a victim
 *                     the harness (pidreuse.c) put there.
 *   cwdreuse          child A stats A/f by a relative name and dies; its pid and READY are
 *                     printed; after a line on stdin child B (given A's number by pidreuse
 *                     PIDREUSE_STEER) stats B/f the same way and prints what it found.
 *   linger SECONDS    for SECONDS, rounds of: a TCP socket with SO_LINGER {1, 3600}, unsent
 *                     data and a peer that never reads, on which two threads call
 *                     pidfd_send_signal while the round's process closes it, dies of SIGKILL
 *                     or exits. A supervisor that closes its copy of the fd last blocks in
 *                     that close for an hour. SIGTERM is ignored: only stockade's second
 *                     SIGTERM (which kills the tree) may end the run early.
 *   payload DIR       create DIR/payload-ran and exit 0 (the 0111 test runs a copy of this
 *                     program with that mode: the file must never appear)
 *   exec PATH DIR     execute PATH payload DIR (a tracee's own exec of an unreadable file)
 *   stress SECONDS THREADS MARKER
 *                     THREADS threads loop on notified calls while four forkers fork children
 *                     (EAGAIN: reap and retry); some children stay alive. After SECONDS,
 *                     exit 42 with all of it still running. MARKER is only there for the
 *                     test to find leftovers by their argv.
 *
 * Exit codes: 0 (or 42 for stress) when the attack ran, 2 for bad usage, 3 when it could
 * not be prepared.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_USAGE = 2, EXIT_SETUP = 3, STRESS_EXIT = 42, MAX_GHOSTS = 4096 };

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void setup_failed(const char *what)
{
        fprintf(stderr, "attack_tree: %s: %s\n", what, strerror(errno));
        exit(EXIT_SETUP);
}

/* ---- ghosts: children that die at birth ------------------------------------------------ */

/* One forker: n children that _exit at once, their numbers written to `out`. */
static void fork_ghosts(int n, FILE *out)
{
        static pid_t pids[MAX_GHOSTS];

        /* Auto-reap: once the tracer has collected a child's exit, its number is free at once.
         * That is what lets a number the supervisor still holds be reused by the host. */
        signal(SIGCHLD, SIG_IGN);
        for (int i = 0; i < n; i++) {
                pids[i] = fork();
                if (pids[i] < 0)
                        setup_failed("fork");
                if (pids[i] == 0)
                        _exit(0);
        }
        /* One write a line: four forkers share the pipe, and a buffered stream flushes
         * 4 KiB at a time, cutting lines that another forker's chunk then splits: "12" of one
         * and "34\n" of another read as 1234 (the harness then wrote it to ns_last_pid:
         * EINVAL), and a chunk that began with the "\n" of a cut line read as 0, which the
         * attack passed to kill(): its own process group died (stockade: exit 137). Both
         * failed CI runs of test_tree. A line is far below PIPE_BUF. */
        setvbuf(out, NULL, _IOLBF, 0);
        for (int i = 0; i < n; i++)
                fprintf(out, "%d\n", (int)pids[i]);
        fflush(out);
}

static int ghosts(int n, int forkers)
{
        static pid_t pids[MAX_GHOSTS];
        char line[16];
        int pidfd_killed = 0, kill_killed = 0, got = 0, p[2];
        FILE *list;

        if (n <= 0 || n > MAX_GHOSTS || forkers <= 0 || forkers > 64)
                return EXIT_USAGE;
        /* The numbers come back through a pipe (MAX_GHOSTS lines fit in its buffer). */
        if (pipe(p) < 0 || !(list = fdopen(p[0], "r")))
                setup_failed("pipe");
        /* The forkers are grandchildren of stockade, not children: a tracer's wait looks at
         * its own children first, but at its other tracees newest first, so a forker's new
         * child is seen before the forker's FORK event. Several forkers at once keep the
         * tracer busy between the two, which gives the children time to die. */
        for (int f = 0; f < forkers; f++) {
                pid_t pid = fork();

                if (pid < 0)
                        setup_failed("fork a forker");
                if (pid == 0) {
                        FILE *out = fdopen(p[1], "w");

                        if (!out)
                                _exit(EXIT_SETUP);
                        fork_ghosts(n / forkers + (f < n % forkers), out);
                        _exit(0);
                }
        }
        close(p[1]);
        while (wait(NULL) > 0)
                ;
        while (got < n && fgets(line, sizeof(line), list))
                pids[got++] = (pid_t)atoi(line);
        for (int i = 0; i < got; i++)
                printf("%d\n", (int)pids[i]);
        printf("READY\n");
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return EXIT_SETUP;
        for (int i = 0; i < got; i++) {
                int pidfd;

                if (pids[i] <= 1)
                        continue; /* never kill(0), our own group, nor kill(-1) */
                pidfd = (int)syscall(SYS_pidfd_open, pids[i], 0);

                if (pidfd >= 0) {
                        if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
                                pidfd_killed++;
                        close(pidfd);
                }
                if (kill(pids[i], SIGKILL) == 0)
                        kill_killed++;
        }
        printf("signalled: %d by pidfd, %d by kill\n", pidfd_killed, kill_killed);
        return 0;
}

/* ---- cwdreuse: a new task with an old task's number ---------------------------------- */

/* Child A stats "f" relative to its cwd A (sixteen times: each notifier thread keeps it) and
 * dies; its number is printed with READY; after GO (pidreuse PIDREUSE_STEER gives the next
 * fork that number), child B stats "f" relative to its cwd B and prints what it found: B's
 * own file (size), never A's, never an error. */
static int cwdreuse(void)
{
        char line[16];
        struct stat st;
        pid_t a = fork(), b;

        if (a < 0)
                setup_failed("fork A");
        if (a == 0) {
                if (chdir("A") < 0)
                        _exit(EXIT_SETUP);
                for (int i = 0; i < 16; i++)
                        (void)!stat("f", &st);
                _exit(0);
        }
        waitpid(a, NULL, 0);
        printf("%d\nREADY\n", (int)a);
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return EXIT_SETUP;
        b = fork();
        if (b < 0)
                setup_failed("fork B");
        if (b == 0) {
                int r = chdir("B") < 0 ? -1 : stat("f", &st);

                printf("B reused=%d stat=%s size=%lld\n", getpid() == a,
                       r < 0 ? strerror(errno) : "ok", r < 0 ? -1LL : (long long)st.st_size);
                fflush(stdout);
                _exit(0);
        }
        waitpid(b, NULL, 0);
        return 0;
}

/* ---- execghosts: old tids freed by an exec that fails ---------------------------------- */

static int ghost_pipe[2];

static char bigbss[4096];

/* A non-leader thread execs, under an address-space limit, a file whose .bss does not fit
 * (tests/helpers/bigbss.c, next to us): the kernel has already freed the thread's old tid
 * when the exec fails past its point of no return (SIGSEGV), and no ptrace event or wait
 * status ever names that tid again. */
static void *exec_and_fail(void *arg)
{
        pid_t tid = (pid_t)syscall(SYS_gettid);
        struct rlimit rl = {.rlim_cur = 64 << 20, .rlim_max = 64 << 20};

        if (write(ghost_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
                _exit(EXIT_SETUP);
        setrlimit(RLIMIT_AS, &rl);
        usleep(50 * 1000); /* let the supervisor admit this thread into its tree first */
        execl(bigbss, "bigbss", (char *)NULL);
        _exit(EXIT_SETUP); /* the exec failed before the point of no return: no ghost */
}

static int execghosts(int n)
{
        static pid_t pids[MAX_GHOSTS];
        int got = 0, prlimited = 0, killed = 0;
        char line[16];

        ssize_t len = readlink("/proc/self/exe", bigbss, sizeof(bigbss) - 8);

        if (n <= 0 || n > MAX_GHOSTS || len <= 0 || pipe(ghost_pipe) < 0)
                return EXIT_USAGE;
        bigbss[len] = '\0';
        strcpy(strrchr(bigbss, '/') + 1, "bigbss");
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                pthread_t t;

                if (pid < 0)
                        setup_failed("fork");
                if (pid == 0) {
                        if (pthread_create(&t, NULL, exec_and_fail, NULL) != 0)
                                _exit(EXIT_SETUP);
                        pause();
                        _exit(0);
                }
                int status = 0;

                if (read(ghost_pipe[0], &pids[got], sizeof(pids[got])) == sizeof(pids[got]))
                        got++;
                waitpid(pid, &status, 0);
                /* SIGSEGV: the exec failed past its point of no return, as it must. */
                if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
                        fprintf(stderr, "attack_tree: the exec did not fail as planned (%#x)\n",
                                status);
        }
        for (int i = 0; i < got; i++)
                printf("%d\n", (int)pids[i]);
        printf("READY\n");
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return EXIT_SETUP;
        for (int i = 0; i < got; i++) {
                struct rlimit cpu = {.rlim_cur = 1, .rlim_max = 1};
                int pidfd = (int)syscall(SYS_pidfd_open, pids[i], 0);

                if (syscall(SYS_prlimit64, pids[i], RLIMIT_CPU, &cpu, NULL) == 0)
                        prlimited++;

                setpriority(PRIO_PROCESS, (id_t)pids[i], 19);
                if (pidfd >= 0) {
                        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                        close(pidfd);
                }
                if (kill(pids[i], SIGKILL) == 0)
                        killed++;
        }
        printf("reached: %d by prlimit, %d by kill\n", prlimited, killed);
        return 0;
}

/* ---- linger: a last close that blocks for an hour -------------------------------------- */

static struct sockaddr_in peer_addr;

/* A loopback listener that never accepts: connections complete in its backlog, and their
 * tiny receive buffers fill and are never drained. It outlives every round, so that no RST
 * ever ends a lingering close. */
static int never_reading_listener(void)
{
        int small = 1024, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        socklen_t len = sizeof(peer_addr);

        if (fd < 0)
                setup_failed("socket");
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)); /* inherited on accept */
        peer_addr = (struct sockaddr_in){.sin_family = AF_INET,
                                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(fd, (struct sockaddr *)&peer_addr, sizeof(peer_addr)) < 0 ||
            listen(fd, SOMAXCONN) < 0 || getsockname(fd, (struct sockaddr *)&peer_addr, &len) < 0)
                setup_failed("listen on loopback");
        return fd;
}

/* A connected socket whose close would block: SO_LINGER one hour, send buffer full. */
static int lingering_socket(void)
{
        struct linger lg = {.l_onoff = 1, .l_linger = 3600};
        int small = 1024, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char buf[4096];

        if (fd < 0)
                setup_failed("socket");
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
        if (connect(fd, (struct sockaddr *)&peer_addr, sizeof(peer_addr)) < 0)
                setup_failed("connect to the listener");
        if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
                setup_failed("SO_LINGER");
        fcntl(fd, F_SETFL, O_NONBLOCK);
        memset(buf, 'x', sizeof(buf));
        while (write(fd, buf, sizeof(buf)) > 0)
                ;
        if (errno != EAGAIN)
                setup_failed("fill the send buffer");
        return fd;
}

static atomic_int round_fd = -1;

/* Keep the supervisor busy holding copies of the socket: a copy taken just before our
 * own reference goes away is the last one. */
static void *signal_socket(void *arg)
{
        for (;;)
                syscall(SYS_pidfd_send_signal, atomic_load(&round_fd), 0, NULL, 0);
        return NULL;
}

/* A close of our own may be the last one and linger: it runs on a thread, which the exit
 * of the process then kills. */
static void *close_socket(void *arg)
{
        close(atomic_load(&round_fd));
        return NULL;
}

static void linger_round(unsigned round)
{
        pthread_t th;

        atomic_store(&round_fd, lingering_socket());
        for (int i = 0; i < 2; i++)
                if (pthread_create(&th, NULL, signal_socket, NULL) != 0)
                        _exit(EXIT_SETUP);
        usleep(200 + (round * 97) % 800); /* let the calls run, at a varying phase */
        switch (round % 3) {
        case 0: /* another thread closes it, and the process exits a moment later */
                if (pthread_create(&th, NULL, close_socket, NULL) != 0)
                        _exit(EXIT_SETUP);
                usleep(500);
                _exit(0);
        case 1: /* the process dies (an exiting task never lingers in close) */
                kill(getpid(), SIGKILL);
                _exit(0);
        default: /* the process exits with the fd open */
                _exit(0);
        }
}

static int linger(double seconds)
{
        double end = now_s() + seconds;
        unsigned rounds = 0;

        signal(SIGTERM, SIG_IGN);
        never_reading_listener();
        while (now_s() < end && rounds < 3000) { /* the listener's backlog holds them all */
                pid_t pid = fork();

                if (pid < 0) {
                        if (errno == EAGAIN) {
                                usleep(1000);
                                continue;
                        }
                        setup_failed("fork");
                }
                if (pid == 0)
                        linger_round(rounds);
                waitpid(pid, NULL, 0);
                rounds++;
        }
        printf("linger: %u rounds\n", rounds);
        return 0;
}

/* ---- payload / exec: the 0111 binary --------------------------------------------------- */

static int payload(const char *dir)
{
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/payload-ran", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                setup_failed("create the payload's file");
        close(fd);
        printf("payload ran\n");
        return 0;
}

static int exec_payload(const char *path, const char *dir)
{
        execl(path, path, "payload", dir, (char *)NULL);
        setup_failed("execl");
        return EXIT_SETUP;
}

/* ---- stress: many threads on notified calls, forks at the limit ------------------------ */

enum { STRESS_FORKERS = 4, STRESS_KEPT = 4 /* per forker */ };

static atomic_ullong stress_calls;

static void *stress_caller(void *arg)
{
        for (;;) {
                /* Both are notified: a path call and a call that names a process. */
                faccessat(AT_FDCWD, "/", F_OK, 0);
                kill(getpid(), 0);
                atomic_fetch_add_explicit(&stress_calls, 2, memory_order_relaxed);
        }
        return NULL;
}

struct fork_counts {
        atomic_ullong forks, refused;
};

/* Fork until killed: children live 0.2 to 1 s, a few forever (the teardown must kill
 * them); a fork refused at --max-procs (EAGAIN) is retried after reaping. */
static void stress_forker(struct fork_counts *c, unsigned seed)
{
        unsigned kept = 0;

        for (unsigned i = seed;; i += 7) {
                pid_t pid = fork();

                if (pid < 0 && errno == EAGAIN) {
                        atomic_fetch_add(&c->refused, 1);
                        while (waitpid(-1, NULL, WNOHANG) > 0)
                                ;
                        sched_yield();
                        continue;
                }
                if (pid < 0)
                        _exit(EXIT_SETUP);
                if (pid == 0) {
                        if (i % 50 == 0 && kept < STRESS_KEPT)
                                for (;;)
                                        pause();
                        usleep(200000 + (i * 7919) % 800000);
                        _exit(0);
                }
                kept += i % 50 == 0 && kept < STRESS_KEPT;
                atomic_fetch_add(&c->forks, 1);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
        }
}

/* Forkers and THREADS callers run for SECONDS; then the command exits 42 in the middle of it
 * all, and the supervisor must tear down a tree that is still forking and calling. */
static int stress(double seconds, int threads)
{
        struct fork_counts *c =
                mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        pthread_attr_t attr;
        pthread_t th;
        int go[2], started = 0;
        double end;

        if (c == MAP_FAILED || pipe(go) < 0)
                setup_failed("mmap or pipe");
        for (int f = 0; f < STRESS_FORKERS; f++) {
                pid_t pid = fork(); /* before the threads: a forker has one thread */
                char b;

                if (pid < 0)
                        setup_failed("fork a forker");
                if (pid == 0) {
                        close(go[1]);
                        if (read(go[0], &b, 1) < 0) /* EOF: the threads are all running */
                                _exit(EXIT_SETUP);
                        stress_forker(c, (unsigned)f);
                }
        }
        close(go[0]);
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        for (; started < threads; started++)
                if (pthread_create(&th, &attr, stress_caller, NULL) != 0)
                        setup_failed("pthread_create");
        close(go[1]);
        end = now_s() + seconds;
        while (now_s() < end)
                usleep(10000);
        printf("stress: %d threads, %llu notified calls, %llu forks, %llu refused\n", started,
               (unsigned long long)atomic_load(&stress_calls),
               (unsigned long long)atomic_load(&c->forks),
               (unsigned long long)atomic_load(&c->refused));
        fflush(stdout);
        exit(STRESS_EXIT); /* every thread and forker still running */
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc >= 2 && strcmp(argv[1], "cwdreuse") == 0)
                return cwdreuse();
        if (argc == 3 && strcmp(argv[1], "execghosts") == 0)
                return execghosts(atoi(argv[2]));
        if ((argc == 3 || argc == 4) && strcmp(argv[1], "ghosts") == 0)
                return ghosts(atoi(argv[2]), argc == 4 ? atoi(argv[3]) : 4);
        if (argc == 3 && strcmp(argv[1], "linger") == 0)
                return linger(atof(argv[2]));
        if (argc == 3 && strcmp(argv[1], "payload") == 0)
                return payload(argv[2]);
        if (argc == 4 && strcmp(argv[1], "exec") == 0)
                return exec_payload(argv[2], argv[3]);
        if (argc == 5 && strcmp(argv[1], "stress") == 0)
                return stress(atof(argv[2]), atoi(argv[3]));
        fprintf(stderr, "usage: attack_tree ghosts N | linger SECONDS | payload DIR | "
                        "exec PATH DIR | stress SECONDS THREADS MARKER\n");
        return EXIT_USAGE;
}

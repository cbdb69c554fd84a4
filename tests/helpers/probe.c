/*
 * probe: performs one named attack (or plain system call) for real and exits with the errno
 * it got, 0 when the call succeeded, after one line on stdout that says what happened.
 *
 *     probe NAME [ARGS...]        probe help   lists the names
 *
 * The security tests run it inside `stockade run` and check the exit code and the effect
 * from outside. It links nothing but libc, on purpose: run natively it is the control that
 * shows an attack works on this host, so it must not depend on the code under test.
 *
 * Exit codes: an errno (clamped to 120, so that it never collides with a shell's or
 * stockade's own 124..127), 122 for bad usage, 123 when the preparation of an attack failed
 * (that is not the attack being refused, and must not look like it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <arpa/inet.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

enum {
        EXIT_MAX_ERRNO = 120,
        EXIT_USAGE = 122,
        EXIT_SETUP = 123,
};

static const char *mode_name; /* the NAME argument, for every line printed */

static const char *errname(int err)
{
        const char *s = strerrorname_np(err);

        return s ? s : "E?";
}

/* The one line about the attack: its name, then what came of it. */
static int report(const char *what, int err)
{
        if (err)
                printf("%s: %s%s%s\n", mode_name, what, *what ? ": " : "", errname(err));
        else
                printf("%s: %s%sok\n", mode_name, what, *what ? ": " : "");
        fflush(stdout);
        return err > EXIT_MAX_ERRNO ? EXIT_MAX_ERRNO : err;
}

/* For `ret = call(...)`: 0 on success, else errno, reported. Call it before errno changes. */
static int outcome(const char *what, long ret)
{
        return report(what, ret < 0 ? errno : 0);
}

_Noreturn static void setup_failed(const char *what)
{
        printf("%s: setup failed: %s: %s\n", mode_name, what, errname(errno));
        fflush(stdout);
        exit(EXIT_SETUP);
}

static long number(const char *s)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 0);
        if (errno || end == s || *end) {
                fprintf(stderr, "probe: not a number: %s\n", s);
                exit(EXIT_USAGE);
        }
        return v;
}

static uintptr_t address(const char *s)
{
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 0);
        if (errno || end == s || *end) {
                fprintf(stderr, "probe: not an address: %s\n", s);
                exit(EXIT_USAGE);
        }
        return (uintptr_t)v;
}

/* What an attacker writes into another process: six bytes including the NUL. */
static const char pwned[] = "PWNED";

/* ---- targets outside the sandbox ------------------------------------------------------- */

static char victim_buf[64] = "INTACT";

/*
 * A root victim gives up its capabilities first: the kernel refuses a capability-less
 * process access to a process holding more capabilities, and that check must not be what
 * stops the attack, or the test proves nothing about the sandbox when it runs as root.
 */
static void drop_own_capabilities(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {{0}};

        (void)syscall(SYS_capset, &h, d);
}

static int do_victim(char **argv)
{
        char sink[256];
        ssize_t n;

        drop_own_capabilities();
        printf("%d %#lx\n", (int)getpid(), (unsigned long)(uintptr_t)victim_buf);
        fflush(stdout);
        /* EINTR: an attach stops us, and a stop can interrupt the read. */
        while ((n = read(STDIN_FILENO, sink, sizeof(sink))) > 0 || (n < 0 && errno == EINTR))
                ;
        /* The buffer may have been written behind the compiler's back. */
        __asm__ volatile("" ::: "memory");
        printf("%s\n", victim_buf);
        return 0;
}

/* ---- other processes ------------------------------------------------------------------- */

/* Optionally (ADDR given) proves the attach is worth something by writing through it. */
static int poke(pid_t pid, uintptr_t addr)
{
        long word;

        if (waitpid(pid, NULL, __WALL) < 0)
                return errno;
        errno = 0;
        word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
        if (errno)
                return errno;
        memcpy(&word, pwned, sizeof(pwned));
        if (ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)word) < 0)
                return errno;
        return 0;
}

/* The attach is the attack: once it succeeded, the exit code is 0 whatever the poke got. */
static int do_ptrace_attach(char **argv)
{
        pid_t pid = (pid_t)number(argv[0]);
        int err;

        if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
                return outcome("PTRACE_ATTACH", -1);
        err = argv[1] ? poke(pid, address(argv[1])) : 0;
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        printf("%s: PTRACE_ATTACH: ok%s%s\n", mode_name, argv[1] ? ", POKEDATA: " : "",
               argv[1] ? (err ? errname(err) : "ok") : "");
        return 0;
}

static int do_ptrace_traceme(char **argv)
{
        return outcome("PTRACE_TRACEME", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static int do_process_vm_writev(char **argv)
{
        pid_t pid = (pid_t)number(argv[0]);
        struct iovec local = {.iov_base = (void *)pwned, .iov_len = sizeof(pwned)};
        struct iovec remote = {.iov_base = (void *)address(argv[1]), .iov_len = sizeof(pwned)};

        return outcome("", process_vm_writev(pid, &local, 1, &remote, 1, 0));
}

/* The same write through the file system instead of a syscall of its own. */
static int do_proc_mem_write(char **argv)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)number(argv[0]));
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return outcome("open", -1);
        return outcome("pwrite", pwrite(fd, pwned, sizeof(pwned), (off_t)address(argv[1])));
}

/* The supervisor is our parent: its memory is the sandbox's whole policy. Opening it for
 * writing is the attack; nothing is written, so that a hole does not crash the run. */
static int do_parent_mem_open(char **argv)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)getppid());
        return outcome("open", open(path, O_RDWR | O_CLOEXEC));
}

static int do_kill(char **argv)
{
        return outcome("", kill((pid_t)number(argv[0]), (int)number(argv[1])));
}

static int do_tkill(char **argv)
{
        return outcome("", syscall(SYS_tkill, (pid_t)number(argv[0]), (int)number(argv[1])));
}

static int do_pidfd_kill(char **argv)
{
        long fd = syscall(SYS_pidfd_open, (pid_t)number(argv[0]), 0);

        if (fd < 0)
                return outcome("pidfd_open", -1);
        return outcome("pidfd_send_signal",
                       syscall(SYS_pidfd_send_signal, fd, (int)number(argv[1]), NULL, 0));
}

/* pidfd_send_signal also takes an fd of a /proc/PID directory, which open() hands out. */
static int do_procfd_kill(char **argv)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d", (int)number(argv[0]));
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return outcome("open", -1);
        return outcome("pidfd_send_signal",
                       syscall(SYS_pidfd_send_signal, fd, (int)number(argv[1]), NULL, 0));
}

static int do_prlimit(char **argv)
{
        struct rlimit rl;

        return outcome("", prlimit((pid_t)number(argv[0]), RLIMIT_NOFILE, NULL, &rl));
}

/* ---- host administration and namespaces ------------------------------------------------ */

static int do_mount(char **argv)
{
        char dir[] = "/tmp/probe-mount-XXXXXX";
        int err;

        if (!mkdtemp(dir))
                setup_failed("mkdtemp");
        err = mount("probe", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") < 0 ? errno
                                                                                             : 0;
        if (!err)
                umount2(dir, MNT_DETACH);
        rmdir(dir);
        return report("tmpfs", err);
}

static int do_chroot(char **argv)
{
        return outcome("", chroot("/"));
}

static int do_unshare_user(char **argv)
{
        return outcome("", unshare(CLONE_NEWUSER));
}

static int do_setns(char **argv)
{
        int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                setup_failed("open /proc/self/ns/uts");
        return outcome("", setns(fd, CLONE_NEWUTS));
}

/* The raw syscall: no stack given, so the child returns here like after fork(). */
static int clone_with(unsigned long flags, const char *what)
{
        long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
        int err = pid < 0 ? errno : 0;

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return report(what, err);
}

static int do_clone_newuser(char **argv)
{
        return clone_with(CLONE_NEWUSER, "CLONE_NEWUSER");
}

/* CLONE_UNTRACED: a child the tracer would not be attached to, outside the tree. */
static int do_clone_untraced(char **argv)
{
        return clone_with(CLONE_UNTRACED, "CLONE_UNTRACED");
}

/* SIGIO to an owner of our choosing: F_SETOWN on a pipe, F_SETSIG SIGKILL, O_ASYNC, then a
 * write makes the kernel signal the owner. Reports the first refused step. */
static int do_fsetown_kill(char **argv)
{
        int p[2];

        if (pipe(p) < 0)
                setup_failed("pipe");
        if (fcntl(p[0], F_SETOWN, (pid_t)number(argv[0])) < 0)
                return outcome("F_SETOWN", -1);
        if (fcntl(p[0], F_SETSIG, SIGKILL) < 0)
                return outcome("F_SETSIG", -1);
        if (fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) < 0)
                return outcome("O_ASYNC", -1);
        if (write(p[1], "x", 1) != 1)
                return outcome("write", -1);
        usleep(100 * 1000); /* let the signal land before the victim is checked */
        return report("SIGIO armed", 0);
}

/* clone3 keeps its flags in memory, out of the filter's reach. */
static int do_clone3_newuser(char **argv)
{
        struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        long pid = syscall(SYS_clone3, &ca, sizeof(ca));
        int err = pid < 0 ? errno : 0;

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return report("CLONE_NEWUSER", err);
}

/* ---- kernel interfaces that bypass a syscall filter ------------------------------------ */

static int do_io_uring_setup(char **argv)
{
        struct io_uring_params p = {0};

        return outcome("", syscall(SYS_io_uring_setup, 4, &p));
}

/* The smallest program there is: r0 = 0; exit. */
static int do_bpf(char **argv)
{
        struct bpf_insn insns[] = {
                {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
                {.code = BPF_JMP | BPF_EXIT},
        };
        union bpf_attr attr;

        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
        attr.insns = (uintptr_t)insns;
        attr.insn_cnt = 2;
        attr.license = (uintptr_t) "GPL";
        return outcome("BPF_PROG_LOAD", syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)));
}

/* The session keyring is shared with the user's other processes. A key that got in is
 * invalidated with keyctl() so that a native control run leaves nothing behind. */
static int do_keyctl(char **argv)
{
        long id = syscall(SYS_add_key, "user", "stockade-probe", "x", 1, KEY_SPEC_SESSION_KEYRING);

        if (id < 0)
                return outcome("add_key", -1);
        return outcome("add_key+KEYCTL_INVALIDATE", syscall(SYS_keyctl, KEYCTL_INVALIDATE, id));
}

/* Handles skip every path check: with one, any file of the file system can be opened. */
static int do_open_by_handle_at(char **argv)
{
        const char *path = argv[0] ? argv[0] : "/";
        struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
        int mount_id, mount_fd;

        if (!fh)
                setup_failed("calloc");
        fh->handle_bytes = MAX_HANDLE_SZ;
        if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0) < 0)
                return outcome("name_to_handle_at", -1);
        mount_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (mount_fd < 0)
                setup_failed("open the mount");
        return outcome("open_by_handle_at", open_by_handle_at(mount_fd, fh, O_RDONLY));
}

static int do_userfaultfd(char **argv)
{
        return outcome("", syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}

/* A software counter on ourselves: allowed to anyone at perf_event_paranoid <= 2. */
static int do_perf_event_open(char **argv)
{
        struct perf_event_attr pa = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(pa),
                .config = PERF_COUNT_SW_TASK_CLOCK,
                .exclude_kernel = 1,
                .exclude_hv = 1,
        };

        return outcome("", syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0));
}

/* A filter of our own with a listener would take notifications away from the supervisor. */
static int do_seccomp_listener(char **argv)
{
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                setup_failed("PR_SET_NO_NEW_PRIVS");
        return outcome("NEW_LISTENER", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                               SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

/* Read-implies-exec and friends weaken the program's own memory protection. */
static int do_personality(char **argv)
{
        return outcome("READ_IMPLIES_EXEC", personality(READ_IMPLIES_EXEC));
}

/* A non-dumpable process locks its tracer out of /proc/PID; the sandbox must keep it
 * dumpable. Success of the prctl is expected; the line says whether it took effect. */
static int do_nondumpable(char **argv)
{
        long r = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        int err = r < 0 ? errno : 0;

        printf("%s: PR_SET_DUMPABLE: %s, dumpable=%d\n", mode_name, err ? errname(err) : "ok",
               prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
        fflush(stdout);
        return err;
}

/* A number the table does not know (there is no row, and perhaps no kernel call either). */
static int do_unknown(char **argv)
{
        return outcome("", syscall(number(argv[0]), 0, 0, 0, 0, 0, 0));
}

/* ---- other ABIs: the filter must kill the process, so these should never return -------- */

static int abi_outcome(const char *what, long ret)
{
        if (ret < 0 && ret > -4096)
                return report(what, (int)-ret);
        printf("%s: %s: ok (pid %ld)\n", mode_name, what, ret);
        fflush(stdout);
        return 0;
}

/* getpid (39) with the x32 bit: x32 numbers share the x86_64 arch value in seccomp_data. */
static int do_x32(char **argv)
{
        long ret;

        __asm__ volatile("syscall" : "=a"(ret) : "0"(0x40000000L | 39) : "rcx", "r11", "memory");
        return abi_outcome("x32 getpid", ret);
}

/* getpid of the i386 ABI (20); the kernel zeroes r8-r11 on the way back. */
static int do_int80(char **argv)
{
        long ret;

        __asm__ volatile("int $0x80" : "=a"(ret) : "0"(20L) : "r8", "r9", "r10", "r11", "memory");
        return abi_outcome("int 0x80 getpid", ret);
}

/* ---- terminals ------------------------------------------------------------------------- */

/*
 * A new pseudo-terminal. The slave is opened without O_NOCTTY: a session leader without a
 * controlling terminal (what the sandbox makes of the program) acquires it, and TIOCSTI into
 * one's own controlling terminal needs no capability, so only a filter can refuse it.
 */
static int open_pty_slave(void)
{
        int master = posix_openpt(O_RDWR | O_NOCTTY);
        const char *name;
        int slave;

        if (master < 0)
                setup_failed("posix_openpt");
        if (grantpt(master) < 0 || unlockpt(master) < 0 || !(name = ptsname(master)))
                setup_failed("grantpt/unlockpt/ptsname");
        /* Through the master, as openpty(3) does: the sandbox may not open /dev/pts/N by
         * its path (that is every terminal of the user). */
        slave = ioctl(master, TIOCGPTPEER, O_RDWR);
        if (slave < 0)
                slave = open(name, O_RDWR);
        if (slave < 0)
                setup_failed("open the pty slave");
        return slave; /* the master stays open until exit: the slave needs it */
}

static int inject(int fd, const char *what)
{
        return outcome(what, ioctl(fd, TIOCSTI, "x"));
}

/* The user's terminal if there is one (the real attack), else a pty of our own. */
static int do_tiocsti(char **argv)
{
        int fd;

        if (isatty(STDIN_FILENO))
                return inject(STDIN_FILENO, "stdin");
        fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
        if (fd >= 0)
                return inject(fd, "/dev/tty");
        return inject(open_pty_slave(), "pty");
}

/* Never the user's terminal: a new session, then a pty of our own. For control runs. */
static int do_tiocsti_pty(char **argv)
{
        setsid(); /* fails harmlessly in a session leader */
        return inject(open_pty_slave(), "pty");
}

/* ---- sockets --------------------------------------------------------------------------- */

static int do_socket_raw(char **argv)
{
        return outcome("AF_INET SOCK_RAW", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
}

static int do_socket_netlink(char **argv)
{
        /* Not NETLINK_ROUTE, which is a view the supervisor answers (net_netlink.c). */
        return outcome("AF_NETLINK SOCK_RAW",
                       socket(AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */));
}

static int do_socket_netlink_dgram(char **argv)
{
        return outcome("AF_NETLINK SOCK_DGRAM",
                       socket(AF_NETLINK, SOCK_DGRAM, 4 /* NETLINK_SOCK_DIAG */));
}

static int do_socket_packet(char **argv)
{
        return outcome("AF_PACKET SOCK_RAW", socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
}

static int do_socket_packet_dgram(char **argv)
{
        return outcome("AF_PACKET SOCK_DGRAM", socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)));
}

/* ---- what the program was handed ------------------------------------------------------- */

static int do_setuid_check(char **argv)
{
        printf("%s: euid %u uid %u\n", mode_name, (unsigned)geteuid(), (unsigned)getuid());
        return 0;
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

/* Our open fds, in order, without the one that reads the directory. */
static int do_fds(char **argv)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int fds[1024];
        size_t n = 0;

        if (!d)
                setup_failed("opendir /proc/self/fd");
        while ((e = readdir(d)) && n < sizeof(fds) / sizeof(fds[0]))
                if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
                        fds[n++] = atoi(e->d_name);
        closedir(d);
        qsort(fds, n, sizeof(fds[0]), cmp_int);
        printf("%s:", mode_name);
        for (size_t i = 0; i < n; i++)
                printf(" %d", fds[i]);
        printf("\n");
        return 0;
}

/* The credential lines of /proc/self/status on one line: "caps: CapInh=... NoNewPrivs=1". */
static int do_caps(char **argv)
{
        static const char *const keys[] = {"CapInh", "CapPrm",     "CapEff", "CapBnd",
                                           "CapAmb", "NoNewPrivs", "Seccomp"};
        FILE *f = fopen("/proc/self/status", "re");
        char line[256], value[128];

        if (!f)
                setup_failed("open /proc/self/status");
        printf("%s:", mode_name);
        while (fgets(line, sizeof(line), f))
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        size_t k = strlen(keys[i]);
                        if (strncmp(line, keys[i], k) == 0 && line[k] == ':' &&
                            sscanf(line + k + 1, "%127s", value) == 1)
                                printf(" %s=%s", keys[i], value);
                }
        printf("\n");
        fclose(f);
        return 0;
}

static int do_session(char **argv)
{
        int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        int err = fd < 0 ? errno : 0;

        printf("%s: leader=%d devtty=%s\n", mode_name, getsid(0) == getpid(),
               err ? errname(err) : "ok");
        return 0;
}

/* ---- a path flipped under the supervisor's feet ----------------------------------------- */

static char flip_buf[PATH_MAX];
static const char *flip_paths[2];
static volatile int flip_stop;

static void *flipper(void *arg)
{
        (void)arg;
        for (unsigned i = 0; !flip_stop; i++)
                strcpy(flip_buf, flip_paths[i & 1]);
        return NULL;
}

/* Read what fd holds (its NULs made spaces: a cmdline) into buf, NUL-terminated. */
static size_t slurp_fd(int fd, char *buf, size_t size)
{
        ssize_t n = read(fd, buf, size - 1);
        size_t len = n > 0 ? (size_t)n : 0;

        for (size_t i = 0; i < len; i++)
                buf[i] = buf[i] ? buf[i] : ' ';
        buf[len] = '\0';
        return len;
}

/* flip A B SECONDS: one thread rewrites a path buffer between A and B while this one opens
 * it and reads what it got; every content other than A's is printed (five at most). */
static int do_flip(char **argv)
{
        char first[4096], got[4096];
        unsigned long opens = 0, others = 0;
        pthread_t th;
        time_t end = time(NULL) + atoi(argv[2]);
        int fd = open(argv[0], O_RDONLY);

        if (fd < 0)
                setup_failed("open A");
        slurp_fd(fd, first, sizeof(first));
        close(fd);
        flip_paths[0] = argv[0];
        flip_paths[1] = argv[1];
        strcpy(flip_buf, argv[0]);
        if (pthread_create(&th, NULL, flipper, NULL) != 0)
                setup_failed("pthread_create");
        while (time(NULL) < end) {
                fd = open(flip_buf, O_RDONLY);
                if (fd < 0)
                        continue;
                opens++;
                slurp_fd(fd, got, sizeof(got));
                close(fd);
                if (strcmp(got, first) != 0 && others++ < 5)
                        printf("other content: %s\n", got);
        }
        flip_stop = 1;
        pthread_join(th, NULL);
        printf("%s: %lu opens, %lu of another content\n", mode_name, opens, others);
        return 0;
}

/* ---- the table of modes ---------------------------------------------------------------- */

struct mode {
        const char *name;
        const char *args; /* for the usage text */
        int nargs;        /* required; more are optional */
        int (*run)(char **argv);
};

static const struct mode modes[] = {
        {"victim", "", 0, do_victim},
        {"ptrace_attach", "PID [ADDR]", 1, do_ptrace_attach},
        {"ptrace_traceme", "", 0, do_ptrace_traceme},
        {"process_vm_writev", "PID ADDR", 2, do_process_vm_writev},
        {"proc_mem_write", "PID ADDR", 2, do_proc_mem_write},
        {"parent_mem_open", "", 0, do_parent_mem_open},
        {"kill", "PID SIG", 2, do_kill},
        {"tkill", "TID SIG", 2, do_tkill},
        {"pidfd_kill", "PID SIG", 2, do_pidfd_kill},
        {"procfd_kill", "PID SIG", 2, do_procfd_kill},
        {"prlimit", "PID", 1, do_prlimit},
        {"mount", "", 0, do_mount},
        {"chroot", "", 0, do_chroot},
        {"unshare_user", "", 0, do_unshare_user},
        {"setns", "", 0, do_setns},
        {"clone_newuser", "", 0, do_clone_newuser},
        {"clone3_newuser", "", 0, do_clone3_newuser},
        {"clone_untraced", "", 0, do_clone_untraced},
        {"fsetown_kill", "PID", 1, do_fsetown_kill},
        {"io_uring_setup", "", 0, do_io_uring_setup},
        {"bpf", "", 0, do_bpf},
        {"keyctl", "", 0, do_keyctl},
        {"open_by_handle_at", "[PATH]", 0, do_open_by_handle_at},
        {"userfaultfd", "", 0, do_userfaultfd},
        {"perf_event_open", "", 0, do_perf_event_open},
        {"seccomp_listener", "", 0, do_seccomp_listener},
        {"personality", "", 0, do_personality},
        {"nondumpable", "", 0, do_nondumpable},
        {"unknown", "NR", 1, do_unknown},
        {"x32", "", 0, do_x32},
        {"int80", "", 0, do_int80},
        {"tiocsti", "", 0, do_tiocsti},
        {"tiocsti_pty", "", 0, do_tiocsti_pty},
        {"socket_raw", "", 0, do_socket_raw},
        {"socket_netlink", "", 0, do_socket_netlink},
        {"socket_netlink_dgram", "", 0, do_socket_netlink_dgram},
        {"socket_packet", "", 0, do_socket_packet},
        {"socket_packet_dgram", "", 0, do_socket_packet_dgram},
        {"setuid_check", "", 0, do_setuid_check},
        {"fds", "", 0, do_fds},
        {"caps", "", 0, do_caps},
        {"flip", "A B SECONDS", 3, do_flip},
        {"session", "", 0, do_session},
};

static int usage(FILE *to, int code)
{
        fprintf(to, "Usage: probe NAME [ARGS...]\n"
                    "Performs one attack or syscall; exits with its errno (0: it worked).\n\n");
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                fprintf(to, "  %s%s%s\n", modes[i].name, *modes[i].args ? " " : "", modes[i].args);
        return code;
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return usage(stderr, EXIT_USAGE);
        if (strcmp(argv[1], "help") == 0)
                return usage(stdout, 0);
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
                if (strcmp(argv[1], modes[i].name) != 0)
                        continue;
                if (argc - 2 < modes[i].nargs)
                        return usage(stderr, EXIT_USAGE);
                mode_name = modes[i].name;
                return modes[i].run(argv + 2);
        }
        fprintf(stderr, "probe: unknown name: %s\n", argv[1]);
        return usage(stderr, EXIT_USAGE);
}

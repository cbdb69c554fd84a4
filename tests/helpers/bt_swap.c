/*
 * An attack on the unwinder (outside review R3). A backtrace names each frame's function
 * from the file mapped there, and the path of that file in /proc/PID/maps is the program's to
 * choose: this helper copies itself to DIR, runs the copy, removes it and puts something else
 * where the path in maps now points — "DIR/x (deleted)" and "DIR/x" — then makes a denied
 * call (kill(1, 0): ESRCH) from a frame inside the removed copy. (x is x-fifo or x-symlink.)
 *
 *   bt_swap fifo DIR [wait]         a FIFO: an unwinder that opens it blocks for good
 *   bt_swap symlink DIR TARGET      a symlink to TARGET, a file the program cannot read
 *
 * With `wait` it then sleeps until killed (the run must end by --timeout). It prints the
 * errno of the denied call, or a line that says which step failed (exit 2). `bt_swap
 * scribble`: see scribble() below.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail(const char *what)
{
        printf("bt_swap: %s: %s\n", what, strerror(errno));
        return 2;
}

static int copy_self(const char *to)
{
        char buf[65536];
        ssize_t n;
        int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);

        if (in < 0 || out < 0)
                return -1;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t)n) != n)
                        return -1;
        close(in);
        return close(out) < 0 || n < 0 ? -1 : 0;
}

/* What the unwinder will look for: the path in maps, with and without " (deleted)". */
static int plant(const char *mode, const char *self, const char *target)
{
        char deleted[4096];

        snprintf(deleted, sizeof(deleted), "%s (deleted)", self);
        if (strcmp(mode, "fifo") == 0)
                return mkfifo(deleted, 0666) < 0 || mkfifo(self, 0666) < 0 ? -1 : 0;
        return symlink(target, deleted) < 0 || symlink(target, self) < 0 ? -1 : 0;
}

__attribute__((noinline)) static int swap_denied_call(void)
{
        int r = kill(1, 0);

        __asm__ volatile("" ::: "memory"); /* no tail call: this frame stays in the copy */
        return r < 0 ? errno : 0;
}

/*
 * `bt_swap scribble`: hostile memory instead of hostile files. The ELF header of the
 * executable, which the unwinder reads from the task to find the unwind tables, is made
 * garbage (program headers far away, 65535 of them), and the denied call is made with a
 * frame pointer that points to itself, a frame chain without end.
 */
extern const char __executable_start[];

static int scribble(void)
{
        Elf64_Ehdr *eh = (Elf64_Ehdr *)(uintptr_t)__executable_start;
        uintptr_t page = (uintptr_t)eh & ~(uintptr_t)4095;
        uintptr_t fake[2];
        long r;

        if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) < 0)
                return fail("mprotect the ELF header");
        eh->e_phoff = 0x7ffffffff000;
        eh->e_phnum = 0xffff;
        eh->e_shoff = ~0ull;
        fake[0] = (uintptr_t)fake; /* the saved frame pointer: this very frame */
        fake[1] = (uintptr_t)fake; /* the return address: nonsense */
        /* Built with -mno-red-zone: the push cannot clobber a local. */
        __asm__ volatile("push %%rbp\n\tmov %[f], %%rbp\n\tsyscall\n\tpop %%rbp"
                         : "=a"(r)
                         : "a"((long)SYS_kill), "D"(1L), "S"(0L), [f] "r"(fake)
                         : "rcx", "r11", "memory");
        printf("%ld\n", r < 0 ? -r : 0);
        return 0;
}

int main(int argc, char **argv)
{
        const char *mode = argc > 2 ? argv[1] : "";
        const char *extra = argc > 3 ? argv[3] : "";
        char self[4096];
        int r;

        if (argc == 2 && strcmp(argv[1], "scribble") == 0)
                return scribble();
        if (strcmp(mode, "fifo") != 0 && strcmp(mode, "symlink") != 0) {
                fprintf(stderr, "usage: bt_swap fifo DIR [wait] | symlink DIR TARGET | "
                                "scribble\n");
                return 2;
        }
        if (argc < 5 || strcmp(argv[argc - 1], "stage2") != 0) {
                /* Stage 1: run a copy of ourselves from DIR. */
                snprintf(self, sizeof(self), "%s/x-%s", argv[2], mode);
                if (copy_self(self) < 0)
                        return fail("copy");
                execl(self, self, mode, argv[2], argc > 3 ? extra : "-", "stage2", (char *)NULL);
                return fail("exec the copy");
        }
        /* Stage 2: the copy runs; take its name away and plant. */
        snprintf(self, sizeof(self), "%s/x-%s", argv[2], mode);
        if (unlink(self) < 0)
                return fail("unlink the copy");
        /* The premise of the symlink attack: the target is out of the program's reach. (An
         * open, not access(): Landlock judges opens only.) */
        if (strcmp(mode, "symlink") == 0) {
                int fd = open(extra, O_RDONLY | O_CLOEXEC);

                printf("target %s\n", fd >= 0 ? "READABLE" : "unreadable");
                if (fd >= 0)
                        close(fd);
        }
        if (plant(mode, self, extra) < 0)
                return fail("plant");
        r = swap_denied_call();
        printf("%d\n", r);
        fflush(stdout);
        if (strcmp(extra, "wait") == 0)
                for (;;)
                        pause();
        return 0;
}

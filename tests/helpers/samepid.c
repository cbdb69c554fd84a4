/*
 * samepid CMD [ARGS...]: run CMD as a process of a new pid namespace whose /proc is still the
 * host's, with the same number in both namespaces (clone3's set_tid), so that /proc/self
 * names it although every other number in /proc is the host's (test_pidns: stockade must
 * refuse to start there). Root only (set_tid in our own namespace needs CAP_SYS_ADMIN).
 * Exits with CMD's status; 77 when the kernel refuses (no clone3 set_tid, no free number).
 */
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A number no process holds, well above the last one given out. */
static pid_t free_number(void)
{
        FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
        long max = 32768, last = 0;
        char path[64];
        struct stat st;

        if (f) {
                if (fscanf(f, "%ld", &max) != 1)
                        max = 32768;
                fclose(f);
        }
        f = fopen("/proc/sys/kernel/ns_last_pid", "re");
        if (f) {
                if (fscanf(f, "%ld", &last) != 1)
                        last = 0;
                fclose(f);
        }
        for (long p = last + 2000, k = 0; k < max; k++, p++) {
                if (p >= max)
                        p = 300;
                snprintf(path, sizeof(path), "/proc/%ld", p);
                if (stat(path, &st) < 0)
                        return (pid_t)p;
        }
        return -1;
}

int main(int argc, char **argv)
{
        struct clone_args ca;
        pid_t init, child, tids[2];
        int status;

        if (argc < 2) {
                fprintf(stderr, "usage: samepid CMD [ARGS...]\n");
                return 2;
        }
        tids[0] = tids[1] = free_number();
        if (tids[0] < 0 || unshare(CLONE_NEWPID) < 0) {
                perror("samepid: unshare(CLONE_NEWPID)");
                return 77;
        }
        init = fork(); /* the namespace's pid 1, which only waits */
        if (init == 0) {
                pause();
                _exit(0);
        }
        memset(&ca, 0, sizeof(ca));
        ca.exit_signal = SIGCHLD;
        ca.set_tid = (unsigned long)tids;
        ca.set_tid_size = 2;
        child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
        if (child == 0) {
                execv(argv[1], argv + 1);
                perror(argv[1]);
                _exit(127);
        }
        if (child < 0) {
                perror("samepid: clone3 with set_tid");
                kill(init, SIGKILL);
                return 77;
        }
        waitpid(child, &status, 0);
        kill(init, SIGKILL);
        waitpid(init, NULL, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

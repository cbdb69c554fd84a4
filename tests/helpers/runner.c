#include "tests/helpers/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *runner_stockade(void)
{
        const char *env = getenv("STOCKADE_BIN");
        return env ? env : STOCKADE_BIN;
}

const char *runner_probe(void)
{
        const char *env = getenv("STOCKADE_PROBE");
        return env ? env : STOCKADE_PROBE;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
        *buf = realloc(*buf, *len + n + 1);
        if (!*buf)
                abort();
        memcpy(*buf + *len, data, n);
        *len += n;
        (*buf)[*len] = '\0';
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Where the child runs, absolute (a relative `.` would follow --workdir); NULL at / (the
 * default view never makes it writable) or when unknown. */
static char *here(void)
{
        char *cwd = getcwd(NULL, 0);

        if (cwd && strcmp(cwd, "/") == 0) {
                free(cwd);
                return NULL;
        }
        return cwd;
}

char **runner_workspace_rw(char *const argv[])
{
        size_t n = 0;
        char **v, *cwd = here();

        while (argv[n])
                n++;
        v = calloc(n + 3, sizeof(*v));
        if (!v)
                abort();
        for (size_t i = 0, j = 0; i <= n; i++) {
                v[j++] = argv[i];
                if (i == 1 && n > 1 && strcmp(argv[1], "run") == 0 &&
                    strcmp(argv[0], runner_stockade()) == 0 && cwd) {
                        v[j++] = "--rw";
                        v[j++] = cwd;
                }
        }
        for (size_t i = 0; v[i]; i++)
                if (strcmp(v[i], "--cow") == 0 || strcmp(v[i], "--") == 0) {
                        if (strcmp(v[i], "--cow") == 0) /* the test asks for cow: as given */
                                memcpy(v, argv, (n + 1) * sizeof(*v));
                        break;
                }
        return v;
}

int runner_run(char *const argv[], char *const envp[], int timeout_s, struct run_result *r)
{
        int out[2], err[2];
        pid_t pid;
        double deadline = now_s() + timeout_s;
        bool killed = false;

        memset(r, 0, sizeof(*r));
        append(&r->out, &r->out_len, "", 0);
        append(&r->err, &r->err_len, "", 0);
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
                dup2(devnull, 0);
                dup2(out[1], 1);
                dup2(err[1], 2);
                char **v = runner_workspace_rw(argv);

                if (envp)
                        execve(v[0], v, envp);
                else
                        execv(v[0], v);
                _exit(121);
        }
        close(out[1]);
        close(err[1]);
        struct pollfd p[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
        int open_fds = 2;
        while (open_fds > 0) {
                int ms = (int)((deadline - now_s()) * 1000);
                if (ms <= 0 && !killed) {
                        kill(pid, SIGKILL);
                        killed = true;
                        ms = 2000;
                } else if (ms <= 0) {
                        break;
                }
                if (poll(p, 2, ms) <= 0)
                        continue;
                for (int i = 0; i < 2; i++) {
                        char buf[4096];
                        ssize_t n;
                        if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                                continue;
                        n = read(p[i].fd, buf, sizeof(buf));
                        if (n <= 0) {
                                close(p[i].fd);
                                p[i].fd = -1;
                                open_fds--;
                        } else if (i == 0) {
                                append(&r->out, &r->out_len, buf, (size_t)n);
                        } else {
                                append(&r->err, &r->err_len, buf, (size_t)n);
                        }
                }
        }
        for (int i = 0; i < 2; i++)
                if (p[i].fd >= 0)
                        close(p[i].fd);
        if (!killed && now_s() > deadline) {
                kill(pid, SIGKILL);
                killed = true;
        }
        waitpid(pid, &r->status, 0);
        if (killed)
                r->exit_code = -1;
        else if (WIFEXITED(r->status))
                r->exit_code = WEXITSTATUS(r->status);
        else
                r->exit_code = 128 + WTERMSIG(r->status);
        return 0;
}

int runner_stockade_run(const char *const args[], int timeout_s, struct run_result *r)
{
        const char *argv[128];
        size_t n = 0;

        argv[n++] = runner_stockade();
        argv[n++] = "run";
        /* Test runs that simulate a missing layer (STOCKADE_TEST_DISABLE) must say so. */
        if (getenv("STOCKADE_TEST_ALLOW_DEGRADED"))
                argv[n++] = "--allow-degraded";
        for (size_t i = 0; args[i] && n < 127; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        return runner_run((char *const *)argv, NULL, timeout_s, r);
}

int runner_stockade_sh(const char *dir, const char *const opts[], const char *script, int timeout_s,
                       struct run_result *r)
{
        const char *v[64];
        char here[4096];
        size_t n = 0;
        int ret;

        for (; opts && *opts && n < 59; opts++)
                v[n++] = *opts;
        v[n++] = "--";
        v[n++] = "/bin/sh";
        v[n++] = "-c";
        v[n++] = script;
        v[n] = NULL;
        if (!getcwd(here, sizeof(here)) || chdir(dir) < 0)
                return -errno;
        ret = runner_stockade_run(v, timeout_s, r);
        if (chdir(here) < 0)
                return -errno;
        return ret;
}

int runner_native_sh(const char *dir, uid_t uid, const char *script, int timeout_s,
                     struct run_result *r)
{
        char id[32], here[4096];
        const char *as_uid[] = {"/usr/bin/setpriv", "--reuid", id,   "--regid", id,
                                "--clear-groups",   "/bin/sh", "-c", script,    NULL};
        const char *plain[] = {"/bin/sh", "-c", script, NULL};
        int ret;

        snprintf(id, sizeof(id), "%u", (unsigned)uid);
        if (!getcwd(here, sizeof(here)) || (dir && chdir(dir) < 0))
                return -errno;
        ret = runner_run((char *const *)(geteuid() == 0 ? as_uid : plain), NULL, timeout_s, r);
        if (chdir(here) < 0)
                return -errno;
        return ret;
}

void runner_free(struct run_result *r)
{
        free(r->out);
        free(r->err);
        memset(r, 0, sizeof(*r));
}

int runner_shell(const char *fmt, ...)
{
        char cmd[4 * PATH_MAX];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(cmd)) {
                fprintf(stderr, "runner_shell: command too long: %.80s...\n", cmd);
                return -1;
        }
        if (system(cmd) != 0) {
                fprintf(stderr, "`%s` failed\n", cmd);
                return -1;
        }
        return 0;
}

int runner_process_alive(const char *needle)
{
        DIR *d = opendir("/proc");
        struct dirent *e;
        int found = 0;

        if (!d)
                return 0;
        while (!found && (e = readdir(d))) {
                char path[300], buf[4096];
                ssize_t n;
                int fd;

                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == '\0')
                                buf[i] = ' ';
                buf[n] = '\0';
                if (strstr(buf, needle))
                        found = 1;
        }
        closedir(d);
        return found;
}

static char *merged_saved_tmpdir;

int runner_merged_setup(void **state)
{
        (void)state;
        merged_saved_tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        unsetenv("TMPDIR");
        setenv("STOCKADE_TEST_DISABLE", "userns,ipcns", 1);
        setenv("STOCKADE_TEST_ALLOW_DEGRADED", "1", 1);
        return 0;
}

int runner_merged_teardown(void **state)
{
        (void)state;
        unsetenv("STOCKADE_TEST_DISABLE");
        unsetenv("STOCKADE_TEST_ALLOW_DEGRADED");
        if (merged_saved_tmpdir)
                setenv("TMPDIR", merged_saved_tmpdir, 1);
        free(merged_saved_tmpdir);
        merged_saved_tmpdir = NULL;
        return 0;
}

char runner_proc_state(pid_t pid)
{
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        p = strrchr(buf, ')'); /* the command name may hold anything */
        return p && p[1] == ' ' ? p[2] : 0;
}

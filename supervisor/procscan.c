#include "supervisor/procscan.h"

#include "supervisor/inherited.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int procscan_read(pid_t pid, struct proc_stat *st)
{
        char path[64], buf[1024], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        /* comm may hold spaces and parentheses: the fields start after the last ')'. */
        p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
         * cutime cstime priority nice num_threads itrealvalue starttime */
        if (sscanf(p + 2,
                   "%c %d %d %d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld %*d %llu",
                   &st->state, &st->ppid, &st->pgrp, &st->session, &st->flags, &st->threads,
                   &st->start) != 7)
                return -EIO;
        st->pid = pid;
        return 0;
}

int procscan_foreach(void (*fn)(const struct proc_stat *st, void *arg), void *arg)
{
        DIR *d = opendir("/proc");
        struct dirent *e;

        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                struct proc_stat st;

                if (!isdigit((unsigned char)e->d_name[0]))
                        continue;
                if (procscan_read((pid_t)atoi(e->d_name), &st) == 0)
                        fn(&st, arg);
        }
        closedir(d);
        return 0;
}

pid_t procscan_field(const char *path, const char *key)
{
        char line[128];
        size_t n = strlen(key);
        pid_t v = -1;
        FILE *f = fopen(path, "re");

        if (!f)
                return -1;
        while (v < 0 && fgets(line, sizeof(line), f))
                if (strncmp(line, key, n) == 0 && line[n] == ':')
                        v = (pid_t)strtol(line + n + 1, NULL, 10);
        fclose(f);
        return v;
}

pid_t procscan_tgid(pid_t tid)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        return procscan_field(path, "Tgid");
}

int procscan_hold_in_session(pid_t pid, pid_t sid)
{
        struct proc_stat st;
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

        if (pidfd < 0)
                return -1;
        if (procscan_read(pid, &st) < 0 || st.session != sid ||
            syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
                close(pidfd);
                return -1;
        }
        return pidfd;
}

struct session_count {
        pid_t sid;
        long tasks;
};

static void count_one(const struct proc_stat *st, void *arg)
{
        struct session_count *c = arg;

        if (st->session == c->sid && st->state != 'Z')
                c->tasks += st->threads;
}

long procscan_session_tasks(pid_t sid)
{
        struct session_count c = {.sid = sid};

        procscan_foreach(count_one, &c);
        return c.tasks;
}

struct children {
        struct inherited *s;
        pid_t self;
        int found;
};

static void note_child(const struct proc_stat *st, void *arg)
{
        struct children *c = arg;

        if (st->ppid != c->self)
                return;
        if (c->s->n < INHERITED_MAX) {
                c->s->v[c->s->n].pid = st->pid;
                c->s->v[c->s->n++].start = st->start;
        }
        c->found++;
}

int inherited_record(struct inherited *s)
{
        struct children c = {.s = s, .self = getpid()};
        siginfo_t si;

        s->n = 0;
        /* The common case, without a look at /proc: no child at all (ECHILD). Before exec
         * our children may have been any thread's; exec made them the one thread's. */
        if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT | __WALL) < 0)
                return 0;
        procscan_foreach(note_child, &c);
        return c.found;
}

void inherited_forget(struct inherited *s, pid_t pid)
{
        for (int i = 0; i < s->n; i++)
                if (s->v[i].pid == pid) {
                        s->v[i] = s->v[--s->n];
                        return;
                }
}

/*
 * Children stockade inherits through exec (`sleep 100 & exec stockade run ...`): the user's
 * processes, not the sandbox's. Recorded before stockade forks anything; each kept as its
 * number and its start (/proc/PID/stat's 22nd field, clock ticks since boot), so that a number
 * given back and used again names another process. They are not stopped, continued or killed
 * with the tree, and the run's end does not wait for them (docs/architecture.md).
 */
#ifndef STOCKADE_INHERITED_H
#define STOCKADE_INHERITED_H

#include <stdbool.h>
#include <sys/types.h>

/* Past this many, the others are taken for the sandbox's, as stockade did before (it says so). */
enum { INHERITED_MAX = 32 };

struct inherited {
        int n;
        struct {
                pid_t pid;
                unsigned long long start;
        } v[INHERITED_MAX];
};

/* Whether the process `pid`, started at `start`, is one of `s`. Async-signal-safe: the stop
 * watcher, a child forked by a threaded process, asks it. */
static inline bool inherited_is(const struct inherited *s, pid_t pid, unsigned long long start)
{
        for (int i = 0; i < s->n; i++)
                if (s->v[i].pid == pid && s->v[i].start == start)
                        return true;
        return false;
}

/* Our children now, into `s`. Returns how many there were (more than INHERITED_MAX: the rest
 * were left out), 0 without any. */
int inherited_record(struct inherited *s);
/* `pid` reaped: its number may name another process from now on. */
void inherited_forget(struct inherited *s, pid_t pid);

#endif

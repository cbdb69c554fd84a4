/* /proc scanning, for the degraded mode without ptrace: there the tree is not tracked by
 * events, so membership and counts come from the sandbox's session (the shim's setsid). */
#ifndef STOCKADE_PROCSCAN_H
#define STOCKADE_PROCSCAN_H

#include <sys/types.h>

struct proc_stat {
        pid_t pid, ppid, pgrp, session;
        long threads;
        unsigned long long start; /* clock ticks after boot: with pid, the process's identity */
        unsigned flags;           /* the kernel's PF_* (PF_EXITING 0x4) */
        char state;               /* 'Z' for a zombie */
};

/* Call fn for every process in /proc whose stat could be read. Returns 0 or -errno. */
int procscan_foreach(void (*fn)(const struct proc_stat *st, void *arg), void *arg);
/* Read /proc/PID/stat. Returns 0 or -errno. */
int procscan_read(pid_t pid, struct proc_stat *st);
/* A pidfd for process `pid` if it belongs to session `sid`, else -1. The pidfd is opened
 * first, the session read by number, then the pidfd is checked to still designate a process
 * that has not been reaped: the number cannot have changed hands in between. */
int procscan_hold_in_session(pid_t pid, pid_t sid);
/* The number after "key:" in a /proc file of "Key:\tvalue" lines (status, fdinfo); -1 when
 * absent or unreadable. */
pid_t procscan_field(const char *path, const char *key);
/* The thread group of task `tid` (/proc/TID/status Tgid); -1 when unknown. */
pid_t procscan_tgid(pid_t tid);
/* Tasks (threads) of every live (not zombie) process in session `sid`. */
long procscan_session_tasks(pid_t sid);

#endif

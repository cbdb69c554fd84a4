/* ptrace: the tree's fork/clone/exec events and exits, read from a signalfd. */
#ifndef STOCKADE_PTRACE_H
#define STOCKADE_PTRACE_H

#include "supervisor/sup.h"

/* The options every tracee gets: EXITKILL, and fork/vfork/clone/exec events. */
#define STOCKADE_PTRACE_OPTIONS                                                                    \
        (PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |      \
         PTRACE_O_TRACEEXEC)

/* Seize the root process. Returns 0 or -errno. */
int ptrace_seize_root(struct supervisor *sup, pid_t pid);
/* Reap every pending wait status: ptrace stops are resumed, new tasks admitted, exits leave
 * the tree. Never blocks. Returns 0, or -ECHILD when no child is left. */
int ptrace_reap(struct supervisor *sup);
/* The signalfd's on_ready: SIGCHLD reaps and resumes; SIGINT/TERM/HUP/QUIT are forwarded. */
int ptrace_on_signal(struct supervisor *sup, struct event_source *src, uint32_t events);

#endif

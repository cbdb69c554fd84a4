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
/* Handle one wait status of `pid`: ptrace stops are resumed, exits leave the tree. */
void ptrace_handle_status(struct supervisor *sup, pid_t pid, int status);
/* The signalfd's on_ready: SIGCHLD reaps and resumes; SIGINT/TERM/HUP/QUIT are forwarded. */
int ptrace_on_signal(struct supervisor *sup, struct event_source *src, uint32_t events);

#endif

/*
 * Signals sent to stockade, passed on to the sandbox as they would reach a foreground job:
 * to the sandbox's foreground process group (on its own pty) or, without one, to every
 * process of the tree. Stop and continue follow the job: SIGTSTP stops the whole tree and
 * then stockade; a sandbox stopped from its own terminal (^Z) stops stockade too, so that
 * the user's shell gets its terminal back; SIGCONT resumes both.
 */
#ifndef STOCKADE_SIGNALS_H
#define STOCKADE_SIGNALS_H

#include "supervisor/inherited.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;
struct event_source;

/* The signals the main thread reads from its signalfd (blocked in every thread). */
void signals_mask(sigset_t *mask);
/* One signal read from the signalfd (not SIGCHLD). */
void signals_on_signal(struct supervisor *sup, int sig);
/* The sandbox's root stopped in a group-stop with `sig` (main thread, under sup->lock):
 * remember to stop stockade too once the event is handled. */
void signals_root_stopped(struct supervisor *sup, int sig);
/*
 * The signal to deliver for `sig`, which task `pid` (a tracee, main thread) is about to
 * receive. The sandbox's first process group has no parent in its session (stockade is in
 * another): the kernel calls it orphaned and discards SIGTSTP, SIGTTIN and SIGTTOU whose
 * action is the default, so ^Z on the sandbox's terminal would do nothing. For that group
 * such a stop becomes SIGSTOP, which is what the default action would have done.
 */
int signals_stop_signal(pid_t pid, int sig);
/* After each event: act on what signals_root_stopped() noted. */
void signals_after_event(struct supervisor *sup);
/* Send `sig` to every process of the tree, through the pidfds (takes sup->lock). */
void signals_to_tree(struct supervisor *sup, int sig);
/* Fork the watcher that stops the tree when stockade is stopped by SIGSTOP (in the spawn,
 * once the root exists and the supervisor is in its Landlock domain, before any thread). */
void signals_start_watcher(struct supervisor *sup);
/* One look of the watcher (signals.c): if `supervisor` has just been stopped, or has run since
 * the last look found it stopped, SIGSTOP to every process descending from it but us and
 * `spare` (stockade's helpers and the pid namespace's init; -1 or 0: none); found continued
 * once that walk is done (its own SIGCONT to the tree may have come before some of ours), the
 * tree is continued again. *stopped keeps the state between looks. Raw system calls only (a
 * forked child calls it). */
enum { WATCH_SPARE = 4 };
/* What the watcher is told once (signals_start_watcher; one write to the scratch cleaner's
 * pipe, under PIPE_BUF): the processes its stop spares, the children stockade inherited (they
 * and what descends from them are spared too), and where --timeout ends (CLOCK_MONOTONIC, ms;
 * 0: none). Past that end a stopped stockade is continued, at each look: a program that stops
 * itself (SIGTSTP) stops stockade with it, as a job, and stockade's timer cannot fire while
 * it is stopped. */
struct watch_orders {
        pid_t spare[WATCH_SPARE];
        int64_t deadline_ms;
        struct inherited inherited;
};
void signals_watch_tick(pid_t supervisor, const struct watch_orders *o, bool *stopped);
/* The --kill-after timer (armed by a SIGTERM). */
int signals_open(struct supervisor *sup);

#endif

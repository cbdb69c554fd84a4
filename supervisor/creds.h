/*
 * The program's rights on the calling thread. DESIGN.md: "the supervisor acts with the
 * program's rights, never its own". A handler that performs a filesystem operation for the
 * program wraps it in creds_enter()/creds_leave(): on this thread only, fsuid/fsgid become
 * the program's, the supplementary groups its (none), and the effective capabilities none.
 * Raw syscalls on purpose: glibc's setgroups/setfsuid wrappers broadcast to every thread of
 * the process (the other notifier threads, the main thread), the raw syscalls do not.
 * When stockade is not root and holds no capability, the program has our credentials and
 * nothing is switched.
 */
#ifndef STOCKADE_CREDS_H
#define STOCKADE_CREDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct config;

struct creds_saved {
        const struct config *cfg;
        bool switched;
        bool fs_only;  /* only the capabilities were dropped (creds_thread_init) */
        bool identity; /* the effective uid and gid were switched too ... */
        uid_t euid;    /* ... from these */
        gid_t egid;
        uint32_t effective[2]; /* the capability sets to restore */
};

/* For a thread that performs calls for the program (a notifier): keep the program's fs ids
 * and no supplementary groups from now on, so that each creds_enter only drops the effective
 * capabilities (measured: 14 syscalls a call as root otherwise). The thread's own real and
 * effective ids stay ours. Returns 0 (also when there is nothing to switch) or -errno, and
 * then the thread switches call by call as before. */
int creds_thread_init(const struct config *cfg);
/* Take the program's rights. Returns 0 or -errno (nothing switched then). */
int creds_enter(const struct config *cfg, struct creds_saved *s);
/* creds_enter, and also the program's effective uid and gid (this thread only; the real and
 * saved ids stay ours, so creds_leave can come back). For calls whose effect records who made
 * them, not only what they may do: a unix socket connection carries the connecting thread's
 * euid/egid to the listener (SO_PEERCRED), which a service such as the system bus takes for
 * the client's identity: a root supervisor must never connect as uid 0 for nobody. A message
 * sent on a unix socket carries its sender's *real* ids (SCM_CREDENTIALS), which stay ours:
 * the sender attaches the program's (net_send.c). Not the real ids switched instead: a host
 * process of the program's uid could then signal the thread, and so stop or kill stockade. */
int creds_enter_identity(const struct config *cfg, struct creds_saved *s);
/* Give them back. Aborts if that fails: a supervisor thread with the wrong rights must not
 * go on (the sandbox dies with us). */
void creds_leave(struct creds_saved *s);

/* For a helper process forked for good (the socket maker, the binder), not a thread: become
 * `uid`/`gid` with no supplementary groups when we are root (else our ids are the command's
 * already), set NO_NEW_PRIVS and drop every capability. Raw syscalls only (the caller may be
 * the child of a process with threads). Returns 0 or -1 with errno set. */
int creds_become(uid_t uid, gid_t gid);

#endif

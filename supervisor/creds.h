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

struct config;

struct creds_saved {
        bool switched;
        uint32_t effective[2]; /* the capability sets to restore */
};

/* Take the program's rights. Returns 0 or -errno (nothing switched then). */
int creds_enter(const struct config *cfg, struct creds_saved *s);
/* Give them back. Aborts if that fails: a supervisor thread with the wrong rights must not
 * go on (the sandbox dies with us). */
void creds_leave(struct creds_saved *s);

#endif

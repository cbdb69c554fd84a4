/* One seccomp notification: receive, decide, respond. */
#ifndef STOCKADE_NOTIFY_H
#define STOCKADE_NOTIFY_H

#include "supervisor/sup.h"
#include "supervisor/trace.h"
#include "syscalls/table.h"

/* One notification. Handlers run on one of several notifier threads, WITHOUT sup->lock:
 * whatever they read of the tree they look up under the lock themselves, and they never
 * block while holding it. */
struct call {
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        const struct syscall_row *row; /* NULL for numbers the table does not know */
        struct trace_call *tc;         /* the event being recorded; NULL when not tracing */
        bool sent;                     /* answered already (call_return_fd) */
        uint64_t seq;                  /* the notification's number, in order of receipt */
};

/* Let the kernel run the call as the program made it. Only for calls whose decision did not
 * read the program's memory (DESIGN.md: never CONTINUE after inspecting memory). */
void call_continue(struct call *call);
/* Answer the call with `val` without running it. */
void call_return(struct call *call, int64_t val);
/* Answer the call with -errnum without running it. */
void call_fail(struct call *call, int errnum);

/* This notifier thread has a umask and cwd of its own (unshare(CLONE_FS) worked). */
extern __thread bool notify_own_fs;

/* Answer the call with a copy of our fd `fd`, installed in the caller (ADDFD, with
 * O_CLOEXEC if `cloexec`) atomically with the answer where the kernel can (ADDFD_FLAG_SEND,
 * 5.14). Returns 0, or -errno when nothing was installed (the call is then still to be
 * answered: EMFILE at the caller's limit). */
int call_return_fd(struct supervisor *sup, struct call *call, int fd, bool cloexec);
/* Put a copy of our fd `fd` in the caller at its fd number `target`, replacing what is there
 * (ADDFD with SETFD, as dup2), and answer 0. Returns 0 or -errno (nothing replaced). */
int call_replace_fd(struct supervisor *sup, struct call *call, int fd, int target, bool cloexec);

/* A policy denial: call_fail(errnum) in enforce mode; in audit mode it is reported (-v)
 * and the call runs. */
void call_deny(struct supervisor *sup, struct call *call, int errnum);

/* Start the notifier threads on sup->listener. Returns 0 or -errno. */
int notify_start(struct supervisor *sup);
/* Stop and join them (the tree is gone by then), waiting 2 s at most: a thread stuck in a
 * blocking call must not keep stockade alive. Returns false if one did not end; its buffers
 * and `sup` must then stay allocated until the process exits. */
bool notify_stop(struct supervisor *sup);
/* Ask for SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP on the listener; true when the kernel has it. */
bool notify_set_sync_wake_up(int listener);
/* Whether an fd's install holds the caller on our CPU (notify.c, addfd): 1 yes, -1 no, 0 not
 * decided yet (fewer than 15 installs of each kind measured); the medians when decided. */
int notify_pin_choice(double *held_us, double *free_us);
/* Allocate each thread's receive/response buffers at the kernel's sizes. Returns 0 or -errno. */
int notify_init(struct supervisor *sup);
/* Free them (only after notify_stop returned true). */
void notify_free(struct supervisor *sup);

#endif

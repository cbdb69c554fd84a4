/* One seccomp notification: receive, decide, respond. */
#ifndef STOCKADE_NOTIFY_H
#define STOCKADE_NOTIFY_H

#include "supervisor/sup.h"
#include "syscalls/table.h"

struct call {
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        const struct syscall_row *row; /* NULL for numbers the table does not know */
        struct tracee *t;              /* the calling task, NULL if not (yet) in the tree */
};

/* Let the kernel run the call as the program made it. Only for calls whose decision did not
 * read the program's memory (DESIGN.md: never CONTINUE after inspecting memory). */
void call_continue(struct call *call);
/* Answer the call with `val` without running it. */
void call_return(struct call *call, int64_t val);
/* Answer the call with -errnum without running it. */
void call_fail(struct call *call, int errnum);

/* A policy denial: call_fail(errnum) in enforce mode; in audit mode it is reported (-v)
 * and the call runs. */
void call_deny(struct supervisor *sup, struct call *call, int errnum);

/* Start the notifier thread on sup->listener. Returns 0 or -errno. */
int notify_start(struct supervisor *sup);
/* Stop and join it (the tree is gone by then). */
void notify_stop(struct supervisor *sup);
/* Ask for SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP on the listener; true when the kernel has it. */
bool notify_set_sync_wake_up(int listener);
/* Allocate the receive/response buffers at the kernel's sizes. Returns 0 or -errno. */
int notify_init(struct supervisor *sup);

#endif

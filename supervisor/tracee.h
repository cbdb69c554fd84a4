/* The process tree: every task (process or thread) of the sandbox, keyed by tid. */
#ifndef STOCKADE_TRACEE_H
#define STOCKADE_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tracee {
        pid_t tid;
        bool live;          /* slot in use */
        bool gone;          /* tombstone: keeps probe chains intact */
        bool attached;      /* we have seen its first ptrace stop */
        bool pending_clone; /* a fork/clone it asked for is approved but not yet seen */
};

struct tracee_tree {
        struct tracee *slots;
        size_t cap, live, tombstones;
        size_t pending; /* approved forks not yet seen as ptrace events */
};

/* The task `tid`, or NULL. */
struct tracee *tracee_find(struct tracee_tree *tree, pid_t tid);
/* The task `tid`, added if new. Adding may move every task: pointers from earlier
 * tracee_find/tracee_add calls are invalid afterwards. */
struct tracee *tracee_add(struct tracee_tree *tree, pid_t tid);
/* Forget `tid` (it exited). */
void tracee_remove(struct tracee_tree *tree, pid_t tid);
/* Clear t's pending fork, if it has one. */
void tracee_settle_clone(struct tracee_tree *tree, struct tracee *t);
/* Call fn for each live task. */
void tracee_foreach(struct tracee_tree *tree, void (*fn)(struct tracee *t, void *arg), void *arg);
void tracee_tree_free(struct tracee_tree *tree);

#endif

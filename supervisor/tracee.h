/*
 * The process tree: every task (process or thread) of the sandbox, keyed by tid.
 *
 * A task's identity is not its number. A task enters the tree only while it provably is
 * our tracee (tracee_admit in ptrace.c), and it holds a pidfd from then on: every signal the
 * supervisor sends, the teardown's SIGKILL included, goes through that pidfd, which keeps
 * designating the same task even if its number is later reused by a host process.
 */
#ifndef STOCKADE_TRACEE_H
#define STOCKADE_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* What an exec of this task was judged to run (syscalls/fs_exec.c): the file, then the
 * interpreters its "#!" lines name. Checked at PTRACE_EVENT_EXEC. */
#define EXEC_JUDGED_MAX 5
struct exec_judged {
        bool valid;
        unsigned n;
        dev_t dev[EXEC_JUDGED_MAX];
        ino_t ino[EXEC_JUDGED_MAX];
        /* A script: where its name is in the interpreter's argv (1, or 2 after the "#!"
         * line's argument); 0 for a binary. */
        unsigned script_argi;
        /* The script's name as the supervisor wrote it for the interpreter (a script run
         * from a merged copy-on-write mount, fs_cow.c): FNV-1a of it, 0 for none. */
        uint64_t script_name;
};

/* What a call that the kernel performs on a path the tracer rewrote must have reached
 * (fs_cow_traced): checked at the call's exit (ptrace.c), since another thread can rewrite
 * the path in memory before the kernel reads it. */
struct exit_check {
        bool armed;
        bool cwd; /* the working directory (chdir); else the fd the call returned */
        dev_t dev;
        ino_t ino;
};

struct tracee {
        pid_t tid;
        int pidfd;               /* PIDFD_THREAD pidfd of this task; -1 when the kernel has none */
        pid_t tgid;              /* its thread group, kept only when pidfd is -1 (see ptrace.c) */
        bool live;               /* slot in use */
        bool gone;               /* tombstone: keeps probe chains intact */
        bool attached;           /* we have seen its first ptrace stop */
        bool pending_clone;      /* a fork/clone it asked for is approved but not yet seen */
        struct exec_judged exec; /* its last exec, as judged */
        struct exit_check check; /* armed: stopped at its call's exit (PTRACE_SYSCALL) */
};

struct tracee_tree {
        struct tracee *slots;
        size_t cap, live, tombstones;
        size_t pending; /* approved forks not yet seen as ptrace events */
};

/* The task `tid`, or NULL. */
struct tracee *tracee_find(struct tracee_tree *tree, pid_t tid);
/*
 * The task `tid` if it is still alive (or a zombie we have not reaped), else NULL. A number
 * can leave the kernel without a wait status — the old tid of a non-leader thread that
 * execs, even when the exec then fails — and be given to a host process: only the pidfd
 * knows. Every decision that lets the sandbox act on a number asks this, under the lock.
 */
struct tracee *tracee_find_live(struct tracee_tree *tree, pid_t tid);
/* Whether t's pidfd still designates a task (true when there is no pidfd). */
bool tracee_alive(const struct tracee *t);
/* Forget every task of thread group `tgid` kept without a pidfd (its leader was reaped). */
void tracee_remove_group(struct tracee_tree *tree, pid_t tgid);
/* Add `tid`, which holds `pidfd` (ownership passes to the tree; -1 for none). If `tid` is
 * already there it is returned unchanged and `pidfd` is closed. Adding may move every task:
 * pointers from earlier tracee_find/tracee_add calls are invalid afterwards. */
struct tracee *tracee_add(struct tracee_tree *tree, pid_t tid, int pidfd);
/* Forget `tid` (it exited and was reaped) and close its pidfd. */
void tracee_remove(struct tracee_tree *tree, pid_t tid);
/* Clear t's pending fork, if it has one. */
void tracee_settle_clone(struct tracee_tree *tree, struct tracee *t);
/* Send `sig` to t through its pidfd (by tid only where the kernel has no thread pidfds).
 * Returns 0 or -errno. */
int tracee_signal(const struct tracee *t, int sig);
/* Call fn for each live task. */
void tracee_foreach(struct tracee_tree *tree, void (*fn)(struct tracee *t, void *arg), void *arg);
/* Close every pidfd and free the table. */
void tracee_tree_free(struct tracee_tree *tree);

#endif

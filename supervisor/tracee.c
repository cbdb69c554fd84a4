/* Open addressing keyed by tid with linear probing; tombstones are swept on growth. */
#include "supervisor/tracee.h"
#include "supervisor/util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t slot_of(pid_t tid, size_t cap)
{
        return ((size_t)tid * 2654435761u) & (cap - 1);
}

struct tracee *tracee_find(struct tracee_tree *tree, pid_t tid)
{
        if (!tree->cap)
                return NULL;
        for (size_t i = slot_of(tid, tree->cap);; i = (i + 1) & (tree->cap - 1)) {
                struct tracee *t = &tree->slots[i];
                if (t->live && t->tid == tid)
                        return t;
                if (!t->live && !t->gone)
                        return NULL;
        }
}

static void grow(struct tracee_tree *tree)
{
        struct tracee *old = tree->slots;
        size_t old_cap = tree->cap;

        tree->cap = old_cap ? old_cap * 2 : 64;
        while ((tree->live + 1) * 2 > tree->cap)
                tree->cap *= 2;
        tree->slots = xcalloc(tree->cap, sizeof(*tree->slots));
        tree->tombstones = 0;
        for (size_t i = 0; i < old_cap; i++) {
                if (!old[i].live)
                        continue;
                size_t j = slot_of(old[i].tid, tree->cap);
                while (tree->slots[j].live)
                        j = (j + 1) & (tree->cap - 1);
                tree->slots[j] = old[i];
        }
        free(old);
}

struct tracee *tracee_add(struct tracee_tree *tree, pid_t tid, int pidfd)
{
        struct tracee *t = tracee_find(tree, tid);

        if (t) {
                if (pidfd >= 0 && pidfd != t->pidfd)
                        close(pidfd);
                return t;
        }
        if ((tree->live + tree->tombstones + 1) * 2 > tree->cap)
                grow(tree);
        size_t i = slot_of(tid, tree->cap);
        while (tree->slots[i].live)
                i = (i + 1) & (tree->cap - 1);
        if (tree->slots[i].gone)
                tree->tombstones--;
        tree->slots[i] = (struct tracee){.tid = tid, .pidfd = pidfd, .live = true};
        tree->live++;
        return &tree->slots[i];
}

void tracee_settle_clone(struct tracee_tree *tree, struct tracee *t)
{
        if (t && t->pending_clone) {
                t->pending_clone = false;
                tree->pending--;
        }
}

void tracee_remove(struct tracee_tree *tree, pid_t tid)
{
        struct tracee *t = tracee_find(tree, tid);

        if (!t)
                return;
        tracee_settle_clone(tree, t);
        if (t->pidfd >= 0)
                close(t->pidfd);
        *t = (struct tracee){.pidfd = -1, .gone = true};
        tree->live--;
        tree->tombstones++;
}

bool tracee_alive(const struct tracee *t)
{
        if (t->pidfd < 0)
                return true;
        return syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

struct tracee *tracee_find_live(struct tracee_tree *tree, pid_t tid)
{
        struct tracee *t = tracee_find(tree, tid);

        return t && tracee_alive(t) ? t : NULL;
}

void tracee_remove_group(struct tracee_tree *tree, pid_t tgid)
{
        for (size_t i = 0; i < tree->cap; i++) {
                struct tracee *t = &tree->slots[i];
                if (t->live && t->pidfd < 0 && t->tgid == tgid && t->tid != tgid)
                        tracee_remove(tree, t->tid);
        }
}

int tracee_signal(const struct tracee *t, int sig)
{
        long r;

        if (t->pidfd >= 0)
                r = syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
        else /* no PIDFD_THREAD (before 6.9): the tid is ours until we reap it (ptrace.c) */
                r = syscall(SYS_tkill, t->tid, sig);
        return r < 0 ? -errno : 0;
}

void tracee_foreach(struct tracee_tree *tree, void (*fn)(struct tracee *t, void *arg), void *arg)
{
        for (size_t i = 0; i < tree->cap; i++)
                if (tree->slots[i].live)
                        fn(&tree->slots[i], arg);
}

void tracee_tree_free(struct tracee_tree *tree)
{
        for (size_t i = 0; i < tree->cap; i++)
                if (tree->slots[i].live && tree->slots[i].pidfd >= 0)
                        close(tree->slots[i].pidfd);
        free(tree->slots);
        memset(tree, 0, sizeof(*tree));
}

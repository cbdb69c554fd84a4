/*
 * The copy-on-write mounts of a run (`--cow`, the default view's current directory): each
 * is an overlayfs in the sandbox's mount namespace (shim/mntns.c), its lower the host tree,
 * its upper and work directories in the run's session (supervisor/vfs/session.h). The
 * kernel merges, lists and copies up; the supervisor only writes the journal: after each
 * change it performs beneath a cow mount, what the lower object is (cow_note_*), so that
 * `stockade apply` can tell a host file that changed since.
 */
#ifndef STOCKADE_COW_H
#define STOCKADE_COW_H

#include <limits.h>
#include <pthread.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "supervisor/vfs/session.h"

struct supervisor;
struct error;
struct vfs_view;

struct cow_mount {
        char sandbox[PATH_MAX];
        char host[PATH_MAX];
        char upper[PATH_MAX], work[PATH_MAX];
        int lower_fd;   /* O_PATH of the host tree, in the host's namespace */
        int journal_fd; /* O_APPEND */
        /* The upper directory, O_PATH, opened beneath the session's directory's fd without
         * following a symlink; it and the work directory by identity too, which the
         * namespace maker checks on what it opens by path (upper, work): in a store another
         * run's program may write, either path can lead elsewhere by then (an outside
         * review). */
        int upper_fd;
        unsigned long long upper_dev, upper_ino, work_dev, work_ino;
        /* The relative paths already in the journal (or known absent from the lower): an
         * open-addressing set of strings, under `lock`. */
        char **noted;
        size_t n_noted, cap_noted;
};

struct cow_state {
        size_t n; /* 0: no cow mount in this run */
        struct cow_mount m[SESSION_MOUNTS_MAX];
        size_t view_index[SESSION_MOUNTS_MAX]; /* m[i]'s mount in the view */
        char state[PATH_MAX];                  /* the state directory (hidden in the view) */
        char dir[PATH_MAX];                    /* the session's directory */
        char name[SESSION_NAME_MAX + 1];
        /* STATE/sessions and the session's directory (O_PATH), opened without following a
         * symlink when the session is made: the run's end (the janitor, which has no Landlock
         * and outlives us) acts on them by these, never by a path of a store that another
         * run's program may write by then. -1 until open_session. */
        int sessions_fd, dir_fd;
        /* The view, for the remapped mounts beneath a cow mount (remap.c): what lies in
         * them is theirs, not the session's. */
        const struct vfs_view *view;
        bool named;   /* --session: kept even when nothing changed */
        bool existed; /* continued from an earlier run */
        int lock_fd;
        pthread_mutex_t lock;
        /* The janitor: a child made before the Landlock domain (under which the session,
         * hidden, cannot be changed), waiting on `janitor_fd` for the end: 'u' brings the
         * metadata up to date, 'r' removes an unused session; EOF (we died) keeps it. */
        int janitor_fd;
        pid_t janitor_parent; /* the child that forks it, until reaped (cow_janitor_ready) */
        int meta_r;           /* its first answer: the metadata written (0, -errno; 1: unread) */
        /* At the end (cow_finish): a signalfd of the signals that ask stockade to stop, which
         * end every wait for the janitor (it holds the session's lock from then on, and
         * finishes alone), and the one that came (0: none). */
        int stop_fd;
        int stopped_by;
};

/*
 * Before the view is opened: the state directory, hidden in `view` (when any mount of it is
 * cow). Returns 0 or -1 with *err set.
 */
int cow_hide_state(struct supervisor *sup, struct vfs_view *view, struct error *err);

/*
 * After the view is built: make or continue the session for the view's cow mounts, lock it,
 * open the journals and the lower trees, and add the overlay mounts to the namespace's
 * binds. Returns 0 or -1 with *err set (nothing is left behind on error for a new session).
 */
int cow_setup(struct supervisor *sup, struct error *err);

/* After cow_setup (cow_masks.c), where a mount namespace is made: a mask in the binds for
 * each hidden path (beneath a cow mount, or holding nothing the view shows), and
 * sup->cow_hides where one can lie beneath a cow mount. Under --fast every mask is required,
 * and a hidden path none can cover fails the run: returns 0 or -1 with *err set. */
int masks_add(struct supervisor *sup, struct error *err);

/* After a change the supervisor performed: note what the lower has at the object `fd`
 * designates (any fd of it, in the sandbox's namespace), or at `dirfd`/`name` (a name
 * removed or replaced). Errors are not the call's: a missing baseline makes apply refuse. */
void cow_note_fd(struct supervisor *sup, int fd);
void cow_note_at(struct supervisor *sup, int dirfd, const char *name);
/* The same by sandbox path (a merged mount's object, before the supervisor copies it up). */
void cow_note_path(struct supervisor *sup, const char *path);
/* The same for `name` and everything the lower has beneath it: a directory moved by copying
 * (treemove.h), whose lower objects all leave the merged view. */
void cow_note_tree_at(struct supervisor *sup, int dirfd, const char *name);

/* `path` (a sandbox path) lies beneath a cow mount's root. */
bool cow_covers(struct supervisor *sup, const char *path);

/*
 * Before a change to the object `fd` designates (any fd of it, in the sandbox's namespace):
 * a regular file of a cow mount owned by a uid or gid the sandbox's user namespace does not
 * map, which overlayfs cannot copy up (EOVERFLOW), is copied by the supervisor as the
 * program and put in its place, owned by the user (cow_owncopy.c) — only when the change is
 * one the program may make natively: `need` says what the change needs of the file (write
 * permission, or being its owner), so that the copy never grants what the file denies.
 * Returns 1 when it was (the caller must look the name up again: `fd` is the old file), 0
 * when nothing was needed or allowed, or -errno (the change then fails as it would have).
 */
enum cow_own_need { COW_OWN_WRITABLE, COW_OWN_OWNER };
int cow_own_copy(struct supervisor *sup, int fd, enum cow_own_need need);
/* `fd` is such a copy of a file another user owned: what only its owner may do (chmod,
 * chown, explicit times) is refused, as it was on the original (EPERM). */
bool cow_own_denies(int fd);
/* Before the overlay is mounted, in a user namespace, when the lower's root (`lower_fd`) is
 * the user's in another group: its directories that are so too are made in `upper`
 * beforehand, as they are (cow_owncopy.c), which overlayfs could not copy up (EOVERFLOW). */
void cow_own_dirs(struct supervisor *sup, int lower_fd, int upper_fd);

/* Reap the child that forked the janitor (cow_setup does not wait for it): before we become
 * the child subreaper, so that the janitor is not our child then but init's (the teardown
 * kills every child of ours). And the janitor's word on the session's metadata, which it
 * writes (and syncs) while we compute the rest: before the sandbox starts. Returns 0 or -1
 * with *err set. Again at the end of a run that failed before (err NULL: nothing said). */
int cow_janitor_ready(struct supervisor *sup, struct error *err);

/* At the end of the run: the session's metadata brought up to date, a line on stderr when it
 * holds changes, and an unnamed session that holds none removed. */
void cow_finish(struct supervisor *sup);

#endif

/*
 * Writing a cow mount's changes (cowdiff.h) onto its host tree, and removing them from the
 * session afterwards. Pure file code, like cowdiff.
 *
 * Every host step starts from an fd of the host root and walks with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (cowdiff_open): a symlink on the host, or one the
 * program left in the upper, where a directory is expected stops the walk (ELOOP) instead
 * of leading a write out of the tree. Symlinks are made as symlinks, never followed.
 *
 * The order, so that an interrupted apply leaves every file either old or new and a second
 * apply finishes the job:
 *   0. a host directory apply must make or remove names in, that the user may not write but
 *      owns (read-only on the host, made writable in the run, or filled with its write bit
 *      lent: `chmod u+w d; touch d/f; chmod u-w d`), is lent its owner's write bit;
 *   1. parents first: directories made (the upper's mode, with the owner's write and search
 *      bits, without the group's and others' write bits until 4), files and symlinks
 *      written beside (a temporary name in the same directory), fsync'd and renamed into
 *      place, renames performed;
 *   2. deepest first: deletions;
 *   3. a directory replaced by a file or a symlink (its content is gone after 2): the new
 *      object is made beside and exchanged with the directory (RENAME_EXCHANGE); then the
 *      lent directories get their own modes back;
 *   4. deepest first: the directories' modes and times (a read-only directory last).
 * What is already as the upper has it is recognised as done (cowapply_check), not as a
 * conflict: after a crash, `stockade apply` again writes what is left. A directory whose
 * mode differs from the one expected only as 0 and 1 leave it meanwhile (the owner's write
 * and search bits added, the group's and others' write bits not yet given) counts as that
 * directory: the crash's leftover, which phase 4 or the next lend puts right.
 * Root lends nothing (it writes anyway) and gains nothing: the same objects, owners and modes.
 */
#ifndef STOCKADE_VFS_COWAPPLY_H
#define STOCKADE_VFS_COWAPPLY_H

#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/journal.h"

#include <stdbool.h>
#include <stddef.h>

/* What apply does with one entry of the diff. */
enum cow_sel {
        SEL_NO = 0,      /* not asked for: stays in the session */
        SEL_YES = 1,     /* applied (a COW_SAME entry: only removed from the session) */
        SEL_SPECIAL = 2, /* asked for, but makes a FIFO, socket or device: never applied */
};

/* One cow mount being applied. */
struct cow_apply {
        int upper_fd; /* the upper directory, O_RDONLY | O_DIRECTORY */
        int host_fd;  /* the host root, O_RDONLY | O_DIRECTORY */
        const struct journal *journal;
        const struct cow_diff *diff;
        unsigned char *sel; /* enum cow_sel, one per diff entry */
        bool root_times;    /* everything applied: the root directory's times too */
        /* Where each directory lent its owner's write bit is written down before the lend
         * (in the session), for cowapply_unlend_left; NULL: nowhere (a test's apply). */
        const char *lent_path;
};

/* A host path apply refuses to touch, and why. */
struct cow_conflict {
        char *path; /* relative to the mount root */
        const char *why;
};

struct cow_conflicts {
        struct cow_conflict *v;
        size_t n, cap;
};

/*
 * Mark in a->sel the entries at or beneath one of `paths` (relative to the mount root, valid
 * per cowdiff_path_ok; "" is the whole mount), an R when either of its names is, and the new
 * directories (A, or T to a directory) their parents need. *matched[k] is set when paths[k]
 * selected something.
 */
void cowapply_select(struct cow_apply *a, const char *const *paths, size_t n_paths, bool *matched);

/*
 * Compare each selected change with the host as it is now and its baseline in the journal.
 * A change is fine when the host already has what the upper has (applied before), or still
 * has the baseline (or nothing, for a path the journal does not know and the host does not
 * have). Otherwise one conflict per path: changed since, removed since, present without a
 * baseline, a symlink where a directory is expected. Returns 0 (see out->n) or -errno.
 */
int cowapply_check(const struct cow_apply *a, struct cow_conflicts *out);

void cowapply_conflicts_free(struct cow_conflicts *cs);

/*
 * Whether apply, as it runs, can make every selected change: each host directory it must
 * search, make or remove names in, or set the mode and times of. One problem per directory
 * it cannot (path relative to the mount, "" for the root): read-only to the user and not
 * theirs to lend a write bit to, not searchable, not theirs to set the mode of, on a
 * read-only file system. A directory the user owns and may lend a write bit to is fine (the
 * write lends it). Looks only: nothing on the host changes. Returns 0 (see out->n) or -errno.
 */
int cowapply_access(const struct cow_apply *a, struct cow_conflicts *out);

/*
 * Before cowapply_access: the write bits an earlier apply lent and, killed, never gave back
 * (written down at a->lent_path) are given back, where the directory is still the one lent
 * and still has the lent mode (one changed since is left as the user made it). Then the
 * record goes. Returns 0 or -errno (*failed, malloc'd, names the directory).
 */
int cowapply_unlend_left(const struct cow_apply *a, char **failed);

/*
 * Write the selected changes onto the host (see the order above). Mode and times come from
 * the upper; as root, a new object takes the owner of what it replaces, else of its
 * directory. A file whose mode or times change and that is another user's (without root)
 * or has other names is written beside and renamed over. On failure the lent directories
 * get their modes back and *failed (malloc'd) names the path. Returns 0 or -errno.
 */
int cowapply_write(const struct cow_apply *a, char **failed);

/*
 * After a successful write: the journal loses the records of the selected paths that no
 * pending change needs (the file at journal_path is rewritten beside, fsync'd and renamed),
 * then the upper loses the selected entries and whiteouts. An opaque directory above a
 * removed entry first becomes a plain one with a whiteout per hidden host name, so that the
 * merged view stays what it was. Returns 0 or -errno (*failed names the path).
 */
int cowapply_prune(const struct cow_apply *a, const char *journal_path, char **failed);

#endif

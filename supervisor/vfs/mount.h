/*
 * One entry of the mount table: a sandbox path, the host path it shows, and a mode.
 * The spec parser for the --ro/--rw/--tmp/--hide flag values lives here too.
 */
#ifndef STOCKADE_VFS_MOUNT_H
#define STOCKADE_VFS_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

struct error;

enum vfs_mode {
        VFS_RO,     /* the host tree, read-only */
        VFS_RW,     /* the host tree, writable */
        VFS_TMP,    /* private scratch: a host directory the supervisor creates */
        VFS_HIDDEN, /* ENOENT, as if absent; wins over every other mount */
        VFS_COW,    /* copy-on-write over the host tree (accepted here, refused by the run) */
        VFS_DEV,    /* the sandbox's /dev: a view of its own, not resolved here */
        VFS_PROC,   /* the sandbox's /proc: a view of its own, not resolved here */
};

struct vfs_mount {
        char *sandbox; /* canonical sandbox path (or, hidden only, a pattern) */
        char *host;    /* canonical host path; NULL for hidden (but an alias), dev, proc (and
                              tmp until the run picks its directory) */
        enum vfs_mode mode;
        bool pattern;   /* hidden only: `sandbox` holds fnmatch(3) patterns per component */
        char *except;   /* hidden only: a path the entry never hides, nor its ancestors */
        bool view_only; /* hidden only: not carved out of Landlock's reads (grants.c) nor
                         * masked (cow_masks.c): it holds no secret, and the split around it
                         * and the mount cost every start more than they protect; the view
                         * alone hides it */
        bool nofollow;  /* hidden only: the object at `sandbox` while no symlink is on the way
                         * to it, else none (a listed session store, cow_stores.c: another
                         * program may put one there, to have its target hidden) */
        bool alias;     /* hidden only: the name, beneath a remapped mount's sandbox path,
                         * of a hidden host object (walls.c, alias_hidden); `host` holds the
                         * host path (or pattern) it names. The object is carved out of
                         * Landlock and the places by its own entry; this one is for the view
                         * and the masks only */
        char *origin;   /* where the entry comes from, for messages: "--ro /srv/x:/data" */
        int host_fd;    /* O_PATH of the host root once the view is open; -1 before */
        /* A copy-on-write mount that the supervisor merges itself, where no mount namespace
         * holds an overlay (supervisor/cow.c): `upper_fd` is the O_PATH of the session's
         * upper directory, over `host_fd`, the lower (vfs/resolve.h). */
        bool emulated;
        int upper_fd;
        /* Set by vfs_view_add (0 before): strlen(sandbox) and its number of components, so
         * that a look-up passes over an entry of another length (a pattern: another depth)
         * without comparing; and a pattern's literal head (its components before the first
         * that holds a wildcard, with the '/' after them), which a path it hides must start
         * with: compared before any fnmatch. */
        size_t len, depth, literal;
};

/* "ro", "rw", "tmp", "hidden", "cow", "dev", "proc". */
const char *vfs_mount_mode_name(enum vfs_mode mode);

/*
 * Parse the value of a mount flag into *m (which the caller frees with vfs_mount_free):
 *   --ro / --rw / --cow  HOST[:SANDBOX]   SANDBOX defaults to HOST
 *   --tmp                SANDBOX          (the whole value; its host directory comes later)
 *   --hide               PATH             a pattern if it holds any of * ? [ \
 * A relative path is taken against `cwd`, "~" and "~/..." against `home`; both must then be
 * absolute. The result is normalised lexically ('//', '.', '..', trailing '/'), but for a '..'
 * whose part before exists: that part is resolved as the kernel would (realpath); the host
 * path is not otherwise looked at (vfs_view_open does that, naming the flag if missing).
 * Returns 0, or -1 with a one-line message in *err naming the flag and what is wrong.
 */
/* The absolute `path` (in place, size bytes) with the part up to its last '..' resolved as the
 * kernel resolves it, where that part exists (a '..' after a symlink is the parent of where
 * the link leads); unchanged without a '..', or where the part does not exist. */
void vfs_path_physical_dotdot(char *path, size_t size);

int vfs_mount_parse(struct vfs_mount *m, const char *spec, enum vfs_mode mode, const char *cwd,
                    const char *home, struct error *err);
/* The same with every '..' lexical (no file system looked at): what the user's words name if
 * no symlink lies before a '..'. walls.c protects that too for --hide and a plain --ro, so that
 * a symlink before the '..' can only add to what they protect. */
int vfs_mount_parse_lexical(struct vfs_mount *m, const char *spec, enum vfs_mode mode,
                            const char *cwd, const char *home, struct error *err);

/*
 * Fill *m from parts that are already trusted (the default view): paths are normalised,
 * `host` may be NULL. Returns 0 or -errno (-EINVAL for a relative path).
 */
int vfs_mount_init(struct vfs_mount *m, enum vfs_mode mode, const char *sandbox, const char *host,
                   const char *origin);
/* The same for a path that names itself, never a pattern, whatever it holds: a HOME such as
 * `/home/a[1]` composed into `~/.ssh`, a real path, the session store (an outside review read
 * ~/.ssh under such a HOME: as a pattern, the entry matched `/home/a1/.ssh` instead). */
int vfs_mount_init_literal(struct vfs_mount *m, enum vfs_mode mode, const char *sandbox,
                           const char *host, const char *origin);

/*
 * True if hidden entry `m` hides the canonical sandbox path `path` itself (not counting
 * ancestors: the walk checks each one on its way down). A pattern matches a path with as
 * many components, each by fnmatch(3) without FNM_PERIOD, so '*' also covers dot files.
 */
bool vfs_mount_hides(const struct vfs_mount *m, const char *path);
/* Whether pattern entry `m` may hide a child of the canonical directory `dir`: all its
 * components but the last match dir's. */
bool vfs_mount_pattern_in(const struct vfs_mount *m, const char *dir);

/* Free the strings of *m and close its host fd; *m can be reused after. */
void vfs_mount_free(struct vfs_mount *m);

#endif

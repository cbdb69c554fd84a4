/*
 * The Landlock grants: which host paths the sandbox may read, execute and write, computed by
 * the supervisor before the fork and turned into Landlock rules by the shim.
 *
 * Landlock can only grant (a rule covers a file or a whole directory hierarchy), never carve
 * out. A hidden path (a credential store of the default view, `--hide PATH`) is therefore
 * kept out by granting its siblings rather than its parent: every directory on the way from
 * a granted root down to a hidden path is split into its children, each granted whole unless
 * it is hidden or leads to one. Reads start from `/`; writes from each writable place (cwd,
 * /tmp, /var/tmp), split the same way, so that a workspace that contains a hidden path cannot
 * write into it either. Listing directories (READ_DIR) is granted everywhere: the names in a
 * hidden directory show, its files' contents do not (the virtual filesystem will hide names).
 */
#ifndef STOCKADE_GRANTS_H
#define STOCKADE_GRANTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vfs_view;
struct places;
struct error;

struct grant {
        char *path;      /* host path, absolute */
        dev_t dev;       /* what lstat said when the supervisor looked: the shim skips a */
        ino_t ino;       /* path that is no longer that file (a grant refused is safe) */
        uint64_t access; /* LANDLOCK_ACCESS_FS_* */
};

struct grants {
        struct grant *v;
        size_t n, cap;
};

/*
 * Fill *g for Landlock ABI `abi` from the hidden entries of `hidden` (VFS_HIDDEN mounts,
 * patterns and exceptions included) and the writable places. Directories the supervisor
 * cannot list are not split: nothing beneath them is granted (fail closed). Returns 0 or -1
 * with *err set.
 */
int grants_compute(struct grants *g, const struct vfs_view *hidden, const struct places *places,
                   int abi, struct error *err);
void grants_free(struct grants *g);

/* The read rights a grant of `/` carries (READ_FILE, EXECUTE); READ_DIR goes with any grant
 * of a directory. */
uint64_t grants_read_access(void);

/* Whether some hidden entry of `v` that exists on the host lies strictly beneath `path`. */
int grants_hidden_beneath(const struct vfs_view *v, const char *path);
/* Whether some hidden entry of `v`, there or not, lies strictly beneath `path`. */
int grants_hidden_named_beneath(const struct vfs_view *v, const char *path);

#endif

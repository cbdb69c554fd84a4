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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct vfs_view;
struct places;
struct error;

/* Which Landlock domain a grant goes to: the supervisor's, which the sandbox's nests in
 * (spawn.c), or the sandbox's; both, but for --fast's kernel reads (/dev). */
enum grant_for {
        GRANT_BOTH,
        GRANT_SUPERVISOR,
        GRANT_SANDBOX,
};

struct grant {
        char *path;      /* host path, absolute */
        dev_t dev;       /* what lstat said when the supervisor looked: the shim skips a */
        ino_t ino;       /* path that is no longer that file (a grant refused is safe) */
        uint64_t access; /* LANDLOCK_ACCESS_FS_* */
        enum grant_for who;
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
 *
 * `kernel_reads` (--fast, where opens for reading are the kernel's: walls.c): Landlock is
 * then the one wall that judges a read, so the reads are stricter. A hidden path that does
 * not exist at the start (or a pattern) has its nearest existing ancestor split, so that
 * what is made there during the run has no rule (nor has anything else made directly in
 * that directory, nor in /: both split); and /dev is read whole by the supervisor only, the
 * sandbox reading just its device files (not ptmx, not /dev/pts) and the private /dev/shm.
 */
int grants_compute(struct grants *g, const struct vfs_view *hidden, const struct places *places,
                   int abi, bool kernel_reads, struct error *err);
/* Why Landlock cannot judge the sandbox's reads alone (--fast's kernel reads: fastreads.h):
 * the path of a hidden entry that lies where a tree is granted whole (a copy-on-write mount,
 * a remapped mount; or beneath a remap's host path), where only its
 * mask keeps it and a rename on the host over the mask's mount point detaches the mask; or
 * that is absent or a pattern in a writable place, where a split would leave what the
 * sandbox creates unreadable to it. NULL when none; *why says which. */
const char *grants_reads_unsafe(const struct vfs_view *hidden, const struct places *places,
                                const char **why);
/* This mount namespace's mounts, read once (/proc/self/mountinfo), for grants_aliases. */
struct grants_mnts;
struct grants_mnts *grants_mnts_read(void);
void grants_mnts_free(struct grants_mnts *t);
/* Each other name of the existing canonical host path `real` through bind mounts (the same
 * file system mounted elsewhere, from at or above its place in it: what the grants carve out
 * too), passed to fn. */
void grants_aliases(const struct grants_mnts *t, const char *real,
                    void (*fn)(const char *alias, void *ctx), void *ctx);
/* One grant more (a file the run made for the sandbox to read). */
void grants_add(struct grants *g, const char *path, const struct stat *st, uint64_t access,
                enum grant_for who);
void grants_free(struct grants *g);

/* The read rights a grant of `/` carries (READ_FILE, EXECUTE); READ_DIR goes with any grant
 * of a directory. */
uint64_t grants_read_access(void);

/* Whether some hidden entry of `v` that exists on the host lies strictly beneath `path`. */
int grants_hidden_beneath(const struct vfs_view *v, const char *path);
/* Whether some hidden entry of `v`, there or not, lies strictly beneath `path`: 2 where one
 * of them is view_only (mount.h), 1 where only others do, 0 where none does. */
int grants_hidden_named_beneath(const struct vfs_view *v, const char *path);

#endif

/*
 * The view: what the sandboxed program sees of the file system, as a table of mounts.
 * A path outside every mount does not exist; the longest mount prefix wins; a hidden entry
 * wins over everything. Pure data plus the host roots' fds: nothing here knows seccomp.
 */
#ifndef STOCKADE_VFS_VIEW_H
#define STOCKADE_VFS_VIEW_H

#include "supervisor/vfs/mount.h"

#include <stdbool.h>
#include <stddef.h>

struct error;

struct vfs_view {
        struct vfs_mount *mounts;
        size_t n_mounts;
        /* Indexed by vfs_view_add (indices into mounts): the hidden entries, the exact ones
         * sorted by path (then by index) and the patterns in table order; the other
         * mounts in table order. */
        size_t *exact, n_exact;
        size_t *patterns, n_patterns;
        size_t *visible, n_visible;
};

/*
 * Add *m to the view, taking its strings (*m is emptied). A mount at the sandbox path of an
 * earlier one (hidden entries aside) replaces it, so flags given after the defaults win.
 */
void vfs_view_add(struct vfs_view *v, struct vfs_mount *m);

/*
 * The entry that governs the canonical sandbox path `path`: a hidden entry if one hides the
 * path or an ancestor, else the mount with the longest prefix, else NULL (the path is then
 * absent, unless it is a directory the view makes up above a mount point).
 */
const struct vfs_mount *vfs_view_find(const struct vfs_view *v, const char *path);

/* The mount (not hidden) with the longest prefix of `path`, or NULL; for a caller that has
 * checked the hidden entries on the way itself. */
const struct vfs_mount *vfs_view_mount_of(const struct vfs_view *v, const char *path);

/* Whether mount `m` shows a host tree at another sandbox path (`--ro HOST:SANDBOX`). */
bool vfs_mount_remapped(const struct vfs_mount *m);

/* The host path that the canonical sandbox path `path` shows, through the mount with the
 * longest prefix if it is remapped (its host path plus the rest), else `path` itself (hidden
 * entries are not looked at). A pattern's components after the mount's path are kept as
 * they are. False if it does not fit in `size`. */
bool vfs_view_host_path(const struct vfs_view *v, const char *path, char *out, size_t size);

/* The hidden entry that hides `path` or one of its ancestors, or NULL. */
const struct vfs_mount *vfs_view_hidden_above(const struct vfs_view *v, const char *path);

/* The hidden entry that hides `path` itself (its ancestors are not looked at), or NULL. */
const struct vfs_mount *vfs_view_hidden(const struct vfs_view *v, const char *path);

/* The mount (not hidden) whose mount point is exactly `path`, or NULL. */
const struct vfs_mount *vfs_view_mount_at(const struct vfs_view *v, const char *path);

/* True if `path` is a strict ancestor of a mount point: it is a directory in the view. */
bool vfs_view_above_mount(const struct vfs_view *v, const char *path);

/*
 * Make the view usable before anything runs: refuse what the run cannot do yet (cow),
 * create the host directories of tmp mounts (under `scratch` for those without one), open
 * each host root O_PATH. A missing host path is an error naming the flag it came from.
 * Returns 0, or -1 with *err set.
 */
int vfs_view_open(struct vfs_view *v, const char *scratch, struct error *err);

/* Free every entry and close the host roots. */
void vfs_view_free(struct vfs_view *v);

static inline void cleanup_vfs_viewp(struct vfs_view *v)
{
        vfs_view_free(v);
}
#define _cleanup_vfs_view_ __attribute__((cleanup(cleanup_vfs_viewp)))

#endif

/*
 * Resolution of a path in the view: component by component from the sandbox root, one host
 * name at a time, symlinks read on the host and followed inside the view.
 */
#ifndef STOCKADE_VFS_RESOLVE_H
#define STOCKADE_VFS_RESOLVE_H

#include "supervisor/vfs/view.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

enum {
        VFS_FOLLOW = 1u << 0,     /* follow a symlink in the last component */
        VFS_EMPTY_PATH = 1u << 1, /* "" names `start` itself, unfollowed (AT_EMPTY_PATH) */
        VFS_CREATE = 1u << 2,     /* the last component may be absent: also return its parent
                                     and name (open O_CREAT, mkdir, rename targets, ...) */
};

enum vfs_kind {
        VFS_HOST,      /* fd is an O_PATH of the host object */
        VFS_SYNTHETIC, /* a directory the view makes up above a mount point: no host object */
        VFS_SPECIAL,   /* on a dev or proc mount: `rest` is left for that view to resolve */
        VFS_ABSENT,    /* VFS_CREATE only: the last component does not exist (yet) */
};

struct vfs_result {
        enum vfs_kind kind;
        int fd;                        /* VFS_HOST: O_PATH|O_CLOEXEC of the object; else -1 */
        mode_t type;                   /* S_IFMT bits of the object; 0 unless HOST/SYNTHETIC */
        const struct vfs_mount *mount; /* the mount the object is on (the special mount for
                                          VFS_SPECIAL); NULL above every mount */
        bool mount_point;              /* the object is the root of `mount` */
        bool trailing_slash;           /* the path (after symlinks) ended in '/' */
        char path[PATH_MAX];           /* canonical sandbox path: never a host path */
        char rest[PATH_MAX];           /* VFS_SPECIAL: what follows the mount point, no
                                          leading '/' ("" for the mount point itself) */
        /* VFS_CREATE, when the last component is a name (not ".", ".." or "/"): */
        int parent_fd;                        /* O_PATH of the parent; -1 if synthetic */
        const struct vfs_mount *parent_mount; /* the mount the parent is on */
        char name[NAME_MAX + 1];              /* the last component; "" when there is none */
        /* On a copy-on-write mount the supervisor merges (mount.h, `emulated`): whether the
         * object (`fd`) and its parent (`parent_fd`) are the upper layer's, and the parent's
         * directory in the lower, O_PATH, when it has one that the upper does not hide
         * (VFS_CREATE only; else -1). Everything else is as for any mount: `path` is the
         * sandbox path, whichever layer holds the object. */
        bool upper, parent_upper;
        int parent_lower_fd;
};

/* A result that holds nothing yet (safe to release). */
#define VFS_RESULT_INIT                                                                            \
        {                                                                                          \
                .fd = -1, .parent_fd = -1, .parent_lower_fd = -1                                   \
        }

/*
 * Resolve `path` in view `v` into *out (released with vfs_result_release, also on error).
 * A relative path starts at `start`, the absolute sandbox path of the caller's cwd or of
 * the directory its dirfd names; an absolute one (and an absolute symlink target) starts at
 * the sandbox root. Hidden paths and paths outside every mount are ENOENT; '..' is taken on
 * the sandbox path and stops at "/". With VFS_CREATE a missing last component is VFS_ABSENT
 * (its parent must exist), a hidden one EACCES (it must not be made on the host).
 * Returns 0 or -errno as the kernel would give it: ENOENT, ENOTDIR, ELOOP (more than 40
 * symlinks), ENAMETOOLONG (a component over NAME_MAX, a path or a sandbox path over
 * PATH_MAX), EACCES from the host, EINVAL for unknown flags or a relative `start`.
 */
int vfs_resolve(const struct vfs_view *v, const char *start, const char *path, unsigned flags,
                struct vfs_result *out);

/* Close the fds of *r; safe on a result that vfs_resolve failed to fill. */
void vfs_result_release(struct vfs_result *r);

static inline void cleanup_vfs_resultp(struct vfs_result *r)
{
        vfs_result_release(r);
}
#define _cleanup_vfs_result_ __attribute__((cleanup(cleanup_vfs_resultp)))

#endif

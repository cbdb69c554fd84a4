/*
 * Copy-on-write mounts the supervisor merges itself, where no mount namespace can hold an
 * overlay (supervisor/cow.c, `emulate`; docs/plans/cow-without-mntns.md). The view's walk
 * finds names in both layers (vfs/resolve.h); the calls that change a name or an object
 * come here first: the upper is made to hold what the change needs (copy-up, vfs/cowup.h),
 * and the change is then the program's own call on the upper, as the program. Removing a
 * name the lower has leaves a whiteout. The lower is never written: both Landlock domains
 * hold it read-only, and only the supervisor's may write the upper.
 */
#ifndef STOCKADE_FS_COW_H
#define STOCKADE_FS_COW_H

#include "supervisor/cow.h"
#include "supervisor/tracee.h"
#include "supervisor/vfs/resolve.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;

/* A name on a merged mount, as the view's walk found it (VFS_CREATE). */
struct fs_cow_name {
        const struct vfs_mount *mount; /* NULL: not on a merged mount */
        char path[PATH_MAX];           /* the name's sandbox path (the lower's host path) */
        int lower;                     /* the parent's directory in the lower, or -1 */
        bool parent_upper;             /* the parent fd the walk gave is the upper's */
        bool exists;                   /* the merged view has the name */
        bool upper;                    /* ... and it is the upper's */
};

/* Whether `path` is `dir` or lies beneath it (lexically). */
bool fs_cow_path_under(const char *path, const char *dir);
/* Whether any mount of the run is merged by the supervisor. */
bool fs_cow_any(const struct supervisor *sup);
/* The name `res` found, moved into *cn (its parent_lower_fd is taken); cn->mount NULL when it
 * is not on a merged mount. */
void fs_cow_name_take(struct vfs_result *res, struct fs_cow_name *cn);
void fs_cow_name_release(struct fs_cow_name *cn);

/* Whether the kernel's own walk (a handler's fast way) may look for `path` from `base`: not
 * where the merge decides what a name is. A relative path is taken the view's way whenever a
 * mount is merged (the working directory is one, most often). */
bool fs_cow_fast_ok(const struct supervisor *sup, const char *path);
/* Whether `fd`, found by the kernel's walk, lies in a merged mount (either layer): the view's
 * walk must find it again (a symlink led there). */
bool fs_cow_found(const struct supervisor *sup, int fd);

/* Whether a fast way's ENOENT or ENOTDIR for the absolute `path` (from `base`, with the
 * walk's `resolve` rules) may be the lower's alone: the deepest directory of it the kernel
 * finds lies in a merged mount (a symlink outside led in: what the run made there is in the
 * upper). The view's walk must answer then. */
bool fs_cow_missed(const struct supervisor *sup, int base, const char *path, uint64_t resolve);
/* Where the object `fd` lies: 0 on no merged mount, 1 in a lower, 2 in an upper; with its
 * mount and its sandbox path (into path[PATH_MAX]). */
int fs_cow_where(const struct supervisor *sup, int fd, const struct vfs_mount **m, char *path);
/* Whether `fd` lies in a merged copy-on-write mount, either layer: writable by the program (its
 * changes go to the upper), though neither layer is a writable place. */
bool fs_cow_in_merged(const struct supervisor *sup, int fd);
/* In place: a host path in an upper directory becomes its sandbox path (fs_sandbox_path). */
void fs_cow_sandbox_path(const struct supervisor *sup, char *path, size_t size);

/* The directory at sandbox path `path` of merged mount `m` made in the upper if it is not
 * there yet (cowup_dir: its mode, times and owner as the lower's, so that the session shows
 * no change), noted for apply first. Returns an O_PATH fd of the upper's, or -errno. */
int fs_cow_dir_up(struct supervisor *sup, const struct vfs_mount *m, const char *path);
/*
 * Before a change to the lower object at sandbox path `path` of merged mount `m`: the
 * program must be allowed to make it natively (`need`: write permission, or being the
 * owner), then what the host has is noted for apply and the object copied up. Returns an
 * O_PATH fd of the upper's copy, or -errno.
 */
int fs_cow_up(struct supervisor *sup, pid_t tid, const struct vfs_mount *m, const char *path,
              enum cow_own_need need);

/* Before making `name` (no slashes) where *cn says: the program must be allowed to write
 * the lower parent; the parent is copied up (*parent becomes the upper's) and a whiteout at
 * the name removed (*whiteout then true: a directory made there must be opaque). -EEXIST
 * for a name the lower has. Returns 0 or -errno. */
int fs_cow_make_ready(struct supervisor *sup, pid_t tid, struct fs_cow_name *cn, int *parent,
                      const char *name, bool *whiteout);
/* A directory just made over a whiteout hides what the lower has there. */
void fs_cow_made_dir(int parent, const char *name, bool whiteout);

/* unlink or rmdir (`dir`) of `last` (a trailing '/' allowed) in *parent, on a merged mount
 * (*parent may be replaced by the upper's directory, the old fd closed). Returns 0 or
 * -errno. */
int fs_cow_remove(struct supervisor *sup, pid_t tid, struct fs_cow_name *cn, int *parent,
                  const char *last, bool dir);
/* rename(2) of a name on a merged mount to another of the same mount: a file (or a directory
 * made in the run) moves within the upper; a directory the lower has is EXDEV, as overlayfs
 * without redirect_dir answers (mv and its kin then copy). Returns 0 or -errno. */
int fs_cow_rename(struct supervisor *sup, pid_t tid, struct fs_cow_name *a, int *pa, const char *la,
                  struct fs_cow_name *b, int *pb, const char *lb, unsigned flags);
/* link(2) within a merged mount: the source copied up first. Returns 0 or -errno. */
int fs_cow_link(struct supervisor *sup, pid_t tid, struct fs_cow_name *a, int pa, const char *la,
                struct fs_cow_name *b, int *pb, const char *lb);

/* The layers of the directory at canonical sandbox path `path`, for its listing: the upper's
 * directory and the lower's (the latter -1 under an opaque directory or where the lower has
 * none), each O_PATH or -1. Returns 1 with them set, 0 when `path` is on no merged mount,
 * -ENOENT when the merge has no directory there. */
int fs_cow_layers(const struct supervisor *sup, const char *path, int *upper, int *lower);

/* Whether `name` is one of overlayfs's own xattrs (user.overlay.*), which the merge keeps
 * from the program: not listed, not read, not set. */
bool fs_cow_own_xattr(const char *name);

/* A task of the tree stopped at PTRACE_EVENT_SECCOMP (chdir, execve, execveat, O_PATH opens,
 * statfs and inotify_add_watch where a mount is merged: filter.c): its path argument resolved
 * in the view and pointed at the host path of what was found, or the call performed here
 * (statfs, inotify_add_watch) or skipped with the view's error. `check` is armed when the
 * kernel's result must be checked at the call's exit (chdir, O_PATH: exit_check). The task
 * stays stopped; the caller resumes it. Not under the tree's lock (it resolves paths). */
void fs_cow_traced(struct supervisor *sup, pid_t pid, struct exit_check *check);
/* At the exit of a call fs_cow_traced armed `c` for (PTRACE_SYSCALL, task `tid` stopped):
 * whether what the call reached is what was judged, or another object the view shows (a
 * sibling thread's chdir between). False: the run must end. Not under the tree's lock. */
bool fs_cow_exit_ok(struct supervisor *sup, pid_t tid, const struct exit_check *c);

#endif

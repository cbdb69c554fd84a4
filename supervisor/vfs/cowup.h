/*
 * Copy-up for a copy-on-write mount that the supervisor emulates itself (no mount namespace,
 * so no overlayfs: docs/plans/cow-without-mntns.md). The session's upper directory lies over
 * the host's lower directory in overlayfs's own on-disk format with `userxattr`, so that
 * `stockade diff` and `apply` (cowdiff.h, cowapply.h) read it unchanged: a whiteout is a
 * character device 0:0, and a directory of the upper with `user.overlay.opaque` = "y" hides
 * everything the lower holds beneath its path. The supervisor is the upper's only writer;
 * before it performs a program's change there, these primitives make the upper hold what the
 * change needs: the parent directories, the object as the lower has it.
 *
 * Pure file code on directory fds: both trees are walked one component at a time with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), so a symlink in
 * either tree is never followed, whoever planted it. Anything new is made under a temporary
 * name (".stockade-cowup.PID.N") in its upper parent, given its mode, owner, times and
 * user.* xattrs there, and only then renamed into place with RENAME_NOREPLACE: a name of the
 * upper never holds half an object, a crash leaves at most a temporary that cowup_sweep
 * removes, and when two threads copy the same object up at once the first rename wins and
 * the other discards its copy. As overlayfs does, a copy-up leaves the upper parent's times
 * as they were (the merged view did not change): the caller's own change then moves them.
 *
 * The supervisor may run as an ordinary user: an upper directory then belongs to it with
 * the lower's mode, which may deny its owner writing (a 0555 project directory whose files
 * are writable). Where a change of such a directory is refused with EACCES, the directory is
 * given u+wx for that one change and its mode put back, under a lock, as overlayfs's
 * copy-up does with the mounter's credentials.
 */
#ifndef STOCKADE_VFS_COWUP_H
#define STOCKADE_VFS_COWUP_H

#include <stdbool.h>
#include <sys/stat.h>

/* The prefix of the temporary names (cowup_sweep removes what a crash left). */
#define COWUP_TMP_PREFIX ".stockade-cowup."
/* Whether `name` is one of the copy-up's temporaries: no name of the merged view, never the
 * program's to see, make or rename to (vfs/resolve.c, vfs/cowdir.c, syscalls/fs_cow.c). */
bool cowup_is_tmp(const char *name);

/* Whether st is a whiteout: a character device 0:0. */
bool cowup_is_whiteout(const struct stat *st);

/* Make the whiteout `name` in the directory `dirfd` (mknodat S_IFCHR, mode 0, 0:0: allowed
 * without CAP_MKNOD since Linux 5.8). Returns 0 or -errno (-EEXIST if the name is taken). */
int cowup_whiteout(int dirfd, const char *name);

/* Set `user.overlay.opaque` = "y" on the directory `fd`, which may be O_PATH (the xattr calls
 * go through /proc/self/fd/N, as f*xattr refuse O_PATH fds). Returns 0 or -errno (-ENOTDIR
 * for anything but a directory). */
int cowup_set_opaque(int fd);

/* Whether the directory `fd` (O_PATH too) is opaque; false when that cannot be read. */
bool cowup_is_opaque(int fd);

/*
 * The same for a directory whose fstat the caller holds (`st`, taken before this call), with
 * an answer remembered per (device, inode, ctime): the view's walk asks it of every upper
 * directory on every path beneath a merged mount. Only a directory whose ctime lies a few
 * seconds back is remembered: setting or removing the mark, by anyone, moves the ctime to
 * now, so the key no longer matches (the racy-git rule: a change within the clock's tick of
 * the ctime read would keep it). The supervisor's own marks (cowup_set_opaque) forget every
 * answer as well. Shared by the notifier threads, under a lock held for no file system call.
 */
bool cowup_is_opaque_stat(int fd, const struct stat *st);

/*
 * Make sure the directory `rel` of the merged view exists in the upper, with every parent,
 * and return an O_PATH | O_CLOEXEC fd of it, or -errno. `upper` and `lower` are
 * fds (O_PATH is enough) of the two roots; `rel` is relative, without "." or ".." or empty
 * components ("": the root itself; else -EINVAL). A component the upper already has as a
 * directory is used as it is; one it lacks is made like the lower's directory at that path:
 * all 07777 mode bits, atime and mtime, user.* xattrs, and the owner as far as we may give it
 * (all of it as root; as a user, the group when we are a member of it). Errors: -ENOENT when
 * the merged view has no such directory (a whiteout on the way, a name neither tree has, a
 * lower name hidden by an opaque upper directory), -ENOTDIR when a component is something
 * else, a symlink included (never followed), in whichever tree the merged view takes it from;
 * a path is looked up before anything is made, so an error leaves the upper as it was.
 */
/* The directory `rel` of the merged view, found as cowup_dir finds it but made nowhere: the
 * upper's (O_PATH, -1 when the upper has none there) and the lower's (-1 when it has none or
 * the upper hides it: an opaque directory, a whiteout or an upper directory over a file).
 * Returns 0, or -errno (ENOENT, ENOTDIR) with both -1. */
int cowup_layers(int upper, int lower, const char *rel, int *u, int *l);
int cowup_dir(int upper, int lower, const char *rel);

/*
 * Copy the object at `rel` (a path as for cowup_dir, not "") of the lower into the upper at
 * the same path, its parents by cowup_dir first, and return an O_PATH | O_NOFOLLOW |
 * O_CLOEXEC fd of the upper's object, or -errno. If the upper has it already (not a
 * whiteout), that is returned as it is and nothing is copied. Copied: a regular file's
 * content (holes kept, made durable with fsync before the rename, as overlayfs does), a
 * symlink's target, a FIFO, a socket, a directory (cowup_dir); each with its times, owner as
 * for cowup_dir, user.* xattrs (files and directories: the kernel allows no others), and its
 * mode: all 07777 bits as root, who gives the copy the lower's owner too; as a user, without
 * the set-user-ID and set-group-ID bits: the copy is ours, not the lower owner's, so such a
 * bit would grant our ids where the lower's granted theirs (overlayfs in a user namespace
 * cannot keep them either, and cow_owncopy.c drops them for the same reason). A
 * device node as root only (-EPERM otherwise); a lower character device 0:0 never (-EPERM:
 * in the upper it would read as a whiteout). Errors: -ENOENT when the merged view has no such
 * object, the copy's own errors (-ENOSPC, -EDQUOT, -EACCES for a lower file we cannot read)
 * with nothing left at the name and the temporary removed.
 */
int cowup_object(int upper, int lower, const char *rel);

/*
 * Remove what a crash left: every name beginning with COWUP_TMP_PREFIX anywhere in the upper
 * `upper` (a temporary directory is always empty: it is renamed into place before anything
 * is made in it), never following a symlink, no deeper than 128 directories. For a session's
 * start, while nothing else copies up. Returns how many were removed, or -errno when the
 * upper itself cannot be listed (a directory beneath that cannot be is passed over).
 */
int cowup_sweep(int upper);

/*
 * Whether the directory `rel` of the merged view is empty, as rmdir(2) and rename(2) over a
 * directory must know: every entry of the upper's directory is a whiteout (or it has none),
 * and, unless that directory is opaque, every entry of the lower's directory at `rel` is
 * whited out in the upper. Temporaries of a copy-up in progress are not entries of the merged
 * view. Nothing is made. Returns 1 (empty), 0 (not empty), or -errno (-ENOENT, -ENOTDIR as
 * for cowup_dir).
 */
int cowup_merged_empty(int upper, int lower, const char *rel);

#endif

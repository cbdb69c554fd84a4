/*
 * Moving a directory by copying it (a copy-on-write mount's overlayfs answers rename(2) of a
 * directory the host tree has with EXDEV: mounted with `userxattr`, it cannot redirect).
 * `git mv dir`, Python's os.rename, Node's fs.rename and Rust's fs::rename do not fall back
 * to copying as mv does, so the supervisor does it for them (syscalls/fs_path.c): the tree
 * is copied beside the target under a temporary name, renamed into place (a directory made
 * in the run renames), then the source is removed.
 *
 * Pure file code on directory fds, run with the caller's credentials (the program's): it
 * never follows a symlink, and never leaves half a move behind that it could have avoided —
 * everything that could stop the removal of the source (a directory the caller cannot
 * write, a device node it could not make) is found before the first byte is copied.
 */
#ifndef STOCKADE_VFS_TREEMOVE_H
#define STOCKADE_VFS_TREEMOVE_H

#include <dirent.h>

#include <stdbool.h>

/*
 * Move the directory `sname` in `sdir` to `dname` in `ddir` (both fds of directories on one
 * file system), as rename(2) would: `dname` absent, or an empty directory (replaced); with
 * `noreplace` (RENAME_NOREPLACE) it must be absent (EEXIST). Copied: content (copy_file_range),
 * modes, times, symlinks as symlinks, FIFOs and sockets, hard links inside the tree, user.*
 * xattrs (best effort). Returns 0, or -errno with nothing changed but for a failure while
 * removing the source once the copy is in place (then the target is complete and what is
 * left of the source is named by the error). -EXDEV when the tree holds something the
 * caller could not recreate or remove (a device node, a directory it cannot write), or that
 * lies deeper than 128 directories (the copy recurses on a notifier thread's stack).
 */
int treemove(int sdir, const char *sname, int ddir, const char *dname, int noreplace);

/* The content of the regular file `from` onto the empty `to`, holes kept (SEEK_DATA,
 * SEEK_HOLE: a sparse disk image is copied as what it holds): copy_file_range, else pread
 * and pwrite. For the apply of a session and the own copies of cow_owncopy.c too. Returns 0
 * or -errno. */
int vfs_copy_bytes(int from, int to);
/* The user.* extended attributes of `from` onto `to`, as far as they go (best effort), but
 * overlayfs's own (user.overlay.*). */
void vfs_copy_user_xattrs(int from, int to);

/* The directory `name` in `parent` (".": parent itself) as a stream, not followed if a
 * symlink; NULL with *err (-errno). */
DIR *vfs_dir_at(int parent, const char *name, int *err);

/*
 * Remove `name` in `parent` and everything beneath, never following a symlink (a name
 * already gone is no error). With `open_up`, a directory without rwx for us is given it
 * first (overlayfs's work/work is mode 000: `stockade discard`). Returns 0 or -errno.
 */
int vfs_remove_tree(int parent, const char *name, bool open_up);

#endif

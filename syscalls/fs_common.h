/* What the emulated path calls share (fs_open.c, fs_path.c): the caller's facts, the base of
 * a relative path, the special views, acting as the program. */
#ifndef STOCKADE_FS_COMMON_H
#define STOCKADE_FS_COMMON_H

#include "supervisor/creds.h"
#include "supervisor/sup.h"
#include "supervisor/vfs/special.h"

#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;

/* The start of a small text file (a /proc one) into buf[0..size), NUL-terminated: its
 * length, or -1 if it cannot be opened or holds nothing. */
ssize_t fs_read_text(const char *path, char *buf, size_t size);
/* A field of a /proc file ("\nPid:" of /proc/self/fdinfo/N), in `base`; -1 if it cannot be
 * read (a field on the first line is not found: they all follow another). */
long fs_proc_field(const char *path, const char *field, int base);
/* A field of /proc/TID/status ("\nUmask:"), in `base`; -1 if it cannot be read. */
long fs_status_field(pid_t tid, const char *field, int base);
/* The base of `path`, a copy the handler made of the caller's argument: AT_FDCWD when it is
 * absolute, else our copy of the caller's dirfd (or cwd for AT_FDCWD). Then ID_VALID: the
 * copies are the caller's only while it waits for this answer. Returns 0 with *base set, or
 * -errno (-ESRCH: gone) with *base -1. The caller closes a *base >= 0. */
struct call;
int fs_take_base(struct supervisor *sup, const struct call *call, int dirfd, const char *path,
                 int *base);
/* tfd_take and tfd_cwd (tfd.h) for the file-system handlers, with the caller's pidfd and
 * /proc/TID directory kept by this notifier thread from one call to the next (why that
 * cannot race: fs_common.c). The same answers: a copy of fd `fd` of thread `tid`, or its
 * working directory O_PATH; -ESRCH when the thread is gone. */
int fs_caller_fd(pid_t tid, int fd);
int fs_caller_cwd(pid_t tid);
/* The caller's umask; 022 if it cannot be read. */
mode_t fs_caller_umask(pid_t tid);
/* vfs_special_ctx's host_iface: whether `name` is a network interface of the supervisor's
 * namespace, the host's (lo too; true when that cannot be told). `arg` is unused. */
bool fs_host_iface(void *arg, const char *name);
/* The facts the /proc and /dev views need about caller `tid`. Returns 0 or -ESRCH. */
int fs_special_ctx(struct supervisor *sup, pid_t tid, struct vfs_special_ctx *ctx);
/* A pty master the sandbox opened through /dev/ptmx: its slave becomes the sandbox's to
 * open by name, and the supervisor keeps a copy of the master until the run ends, so that
 * the number cannot pass to a host pty meanwhile. Returns 0, -ENOTTY for no pty master, or
 * -ENOSPC when the sandbox holds too many. */
int fs_hold_pty(struct supervisor *sup, int master);
/* Whether /dev/pts/N is a terminal of the sandbox's. */
/* Whether the /proc path `host` is /proc/sys/net or beneath, with a network namespace of the
 * sandbox's own: then the socket maker opens it there (sockmaker_open_sysnet). */
bool fs_sysnet(const struct supervisor *sup, const char *host);
/* The sandbox's private /dev/shm, O_PATH, ours to close (sup->shm_root), or -errno. */
int fs_shm_root(const struct supervisor *sup);
bool fs_pts_allowed(struct supervisor *sup, unsigned n);
/* The sandbox path of `base` (our copy of the caller's dirfd or cwd; AT_FDCWD: "/"). The view
 * is the identity, so it is the host path the fd names. Returns 0 or -errno. */
int fs_base_path(const struct supervisor *sup, int base, char *out, size_t size);
/* A host path in the sandbox's private /dev/shm becomes the sandbox path (/dev/shm/...):
 * the one place where the view is not the identity. In place. */
void fs_sandbox_path(const struct supervisor *sup, char *path, size_t size);
/* Whether `path` from `base` may start on /proc or /dev, where only the view may resolve it:
 * an absolute path under them (lexically), or a base on their file systems. */
bool fs_starts_special(const struct supervisor *sup, const char *path, int base);

/* Whether the view shows the directory or file `fd` is, under the path the kernel gives for
 * it: not hidden, nor beneath a hidden entry, nor outside every mount. For what Landlock does
 * not refuse by itself: listing a directory (READ_DIR is granted everywhere). `st`, when
 * given, is fd's fstat (a file's path is then not asked of getcwd), else NULL. */
bool fs_view_shows(const struct supervisor *sup, int fd, const struct stat *st);
/* The same for a sandbox path the caller has just taken from the object (fs_base_path). */
bool fs_view_shows_path(const struct supervisor *sup, const char *path);

/* A file the supervisor makes for the program to read (resolv.conf, the /proc/net view): a
 * memfd `name` holding text[0..n), sealed against any change, at offset 0. Returns the fd
 * (O_CLOEXEC) or -errno. */
int fs_sealed_memfd(const char *name, const char *text, size_t n);
/* Whether `fd` (an open's result, its fstat `st`) is a regular file of our procfs; then
 * its path as the kernel prints it, into path[PATH_MAX]. */
bool fs_proc_file(const struct supervisor *sup, int fd, const struct stat *st, char *path);
/* What follows /proc/PID or /proc/PID/task/TID in a host path (from its '/'), or NULL. */
const char *fs_proc_task_rest(const char *path);
/* All of fd (a procfs file: its size says nothing; at most 64 MiB), malloc'd into *out.
 * Returns its length or -errno. */
ssize_t fs_slurp(int fd, char **out);
/* An open's result `fd` (its fstat `st`, the call's `flags`): /proc/PID/mountinfo where the
 * view has remapped mounts is replaced by a sealed memfd in which each remapped mount's root
 * is its mount point, so that HOST is not named (fs_mountinfo.c). Returns an fd or -errno. */
int fs_mountinfo_view(const struct supervisor *sup, int flags, int fd, const struct stat *st);

/* An open's result `fd` (its fstat `st`, the call's `flags`): a file of /proc/PID/net where
 * the sandbox has no network namespace is replaced by a sealed memfd of what the view shows
 * of it (fs_procnet.c); anything else is returned as it is. Returns an fd or -errno. */
int fs_procnet_view(const struct supervisor *sup, int flags, int fd, const struct stat *st);

/* The magic links of a process directory (/proc/PID/{exe,cwd,root}, fd/N, map_files/...,
 * ns/...), which only a last component may follow: `host` is a host path under /proc. */
bool fs_magic_last(const char *host);

/* Where an absolute path starts for the fast ways: the sandbox's root when it has a mount
 * namespace of its own (its private /tmp is not ours), and then *resolve gets
 * RESOLVE_IN_ROOT; else AT_FDCWD (our root is the sandbox's). */
static inline int fs_abs_base(const struct supervisor *sup, uint64_t *resolve)
{
        if (sup->places.root_fd > 0) {
                *resolve |= RESOLVE_IN_ROOT;
                return sup->places.root_fd;
        }
        return AT_FDCWD;
}

/* Judge what an open gave, whatever path led there (a reopen through /proc/self/fd/N, a
 * symlink, another mount): a device must be one of the sandbox's (/dev's list, its own
 * ptys), procfs only through the /proc view (`proc_view`). Returns 0 or -errno. */
int fs_check_result(struct supervisor *sup, int fd, bool proc_view, struct stat *out);

/* The view hides `last` in the directory `dir` (an fd in the sandbox's namespace), a name
 * that need not exist (fs_path.c); true when that cannot be told. */
bool fs_view_hides_name(const struct supervisor *sup, int dir, const char *last);
/* Whether a hidden path, made or not, lies beneath `last` in `dir` where the sandbox may
 * write (sup->hidden_in_writable): a new file there would keep it from being made (the
 * session store's ~/.local/state). Unsure: true. */
bool fs_view_over_hidden(const struct supervisor *sup, int dir, const char *last);

/* Whether the view shows the object `*fd` (ours; what a magic link led to) under the path it
 * has, as thread `tid` (fs_open.c): 0 (*fd may become the upper's copy of a lower object the
 * view now shows as that copy), or -EACCES and the like. Nothing on procfs passes. */
int fs_view_admits(struct supervisor *sup, pid_t tid, int *fd);

/* The object the stat of notification seq - 1 found, when that was thread `tid`'s for the
 * same `path` from the same `base`, made and reused with no other notification in hand
 * (fs_look.c's memo, kept where a mount is merged): an O_PATH fd of it, or -1 (then walk). */
int fs_look_memo(struct supervisor *sup, uint64_t seq, pid_t tid, int base, const char *path,
                 bool follow);
/* Close what the memo keeps (the run is over: no handler runs). */
void fs_look_memo_forget(void);

/* Find `path` in the view as the program would (fs_look.c): from `base` (our copy of its
 * dirfd or cwd; AT_FDCWD for an absolute path), AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH as
 * for fstatat. Returns an O_PATH fd of the object, or -errno (ENOENT for what the view does
 * not show). */
int fs_look_find(struct supervisor *sup, pid_t tid, int base, const char *path, unsigned at_flags);
/* Whether the object `fd` is in, or is, a writable place (places.h). */
bool fs_writable_place(const struct supervisor *sup, int fd);

/* The exec policy (fs_exec.c): resolve --allow-exec before the fork (an error names a path
 * that does not exist), free it at the end. */
struct error;
int fs_exec_prepare(struct supervisor *sup, struct error *err);
void fs_exec_free(struct supervisor *sup);
/* At PTRACE_EVENT_EXEC of `pid` (tracee t, holding what its exec was judged to run): true if
 * the process runs the file judged or one of its interpreters. Under the lock. */
struct tracee;
bool fs_exec_verify(struct supervisor *sup, struct tracee *t, pid_t pid);
/* Judge an exec of `path` from `base` by thread `tid` (as fs_exec does: the view, the exec
 * policy, the record for fs_exec_verify). Returns 0, with the object's O_PATH fd in *object
 * when `object` is not NULL (ours to close), or -errno. */
int fs_exec_judge(struct supervisor *sup, pid_t tid, int base, const char *path, unsigned flags,
                  int *object);
/* A script's name as the supervisor wrote it into the interpreter's argv (fs_cow.c), kept with
 * the judged exec of `tid` for fs_exec_verify; and the hash it is kept as. */
void fs_exec_script_named(struct supervisor *sup, pid_t tid, const char *name);
uint64_t fs_exec_name_hash(const char *name);
/* The interpreter a "#!" line names, found in the view as the kernel looks for it: a relative
 * name from tid's working directory. O_PATH fd, or -errno. */
int fs_exec_find_interp(struct supervisor *sup, pid_t tid, const char *interp);
/* The "#!" line of the file `fd`, read as the program: its interpreter (a path, relative to the
 * working directory if not absolute; "" for none) and its argument ("" for none), as the
 * kernel would take them. */
void fs_exec_shebang(struct supervisor *sup, pid_t tid, int fd, char *out, size_t size, char *arg,
                     size_t arg_size);

/* A hard link's identity in a copy-on-write mount (supervisor/vfs/linkid.h). Before a link:
 * the identity its source (dirfd, name, statx flags) shows the program; after it, the new name
 * made there is remembered to show that identity. Nothing without a cow mount. */
struct fs_link_was {
        bool known;
        dev_t dev;
        ino_t ino;
};
void fs_link_before(struct supervisor *sup, int dirfd, const char *name, int flags,
                    struct fs_link_was *was);
void fs_link_after(struct supervisor *sup, const struct fs_link_was *was, int dirfd,
                   const char *name);
/* The identity the stat family shows for the object `fd`, whose kernel's is *dev, *ino. */
void fs_link_shown(struct supervisor *sup, int fd, mode_t mode, dev_t *dev, ino_t *ino);

/* Acting as the program: its fsuid/fsgid, no capabilities and, for a call that creates,
 * its umask (on a notifier thread with an fs_struct of its own). */
struct fs_as {
        struct creds_saved saved;
        mode_t old_umask;
        bool umask_set;
};
int fs_as_enter(struct supervisor *sup, pid_t tid, bool creates, struct fs_as *as);
void fs_as_leave(struct fs_as *as);
/* For a create without an fs_struct of our own: the mode with the caller's umask applied. */
mode_t fs_as_mode(pid_t tid, mode_t mode);

#endif

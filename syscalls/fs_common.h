/* What the emulated path calls share (fs_open.c, fs_path.c): the caller's facts, the base of
 * a relative path, the special views, acting as the program. */
#ifndef STOCKADE_FS_COMMON_H
#define STOCKADE_FS_COMMON_H

#include "supervisor/creds.h"
#include "supervisor/vfs/special.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct supervisor;

/* A field of /proc/TID/status ("\nUmask:"), in `base`; -1 if it cannot be read. */
long fs_status_field(pid_t tid, const char *field, int base);
/* The caller's umask; 022 if it cannot be read. */
mode_t fs_caller_umask(pid_t tid);
/* The facts the /proc and /dev views need about caller `tid`. Returns 0 or -ESRCH. */
int fs_special_ctx(struct supervisor *sup, pid_t tid, struct vfs_special_ctx *ctx);
/* A pty master the sandbox opened through /dev/ptmx: its slave becomes the sandbox's to
 * open by name, and the supervisor keeps a copy of the master until the run ends, so that
 * the number cannot pass to a host pty meanwhile. Returns 0, -ENOTTY for no pty master, or
 * -ENOSPC when the sandbox holds too many. */
int fs_hold_pty(struct supervisor *sup, int master);
/* Whether /dev/pts/N is a terminal of the sandbox's. */
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

/* Judge what an open gave, whatever path led there (a reopen through /proc/self/fd/N, a
 * symlink, another mount): a device must be one of the sandbox's (/dev's list, its own
 * ptys), procfs only through the /proc view (`proc_view`). Returns 0 or -errno. */
int fs_check_result(struct supervisor *sup, int fd, bool proc_view);

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

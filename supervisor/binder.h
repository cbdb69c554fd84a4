/*
 * The binder: a small process of the supervisor's that performs a unix socket's pathname
 * bind(2) standing where the program stands, so that the bind can be made with the path as
 * the program gave it. The kernel keeps that string as the socket's name (getsockname, the
 * source a datagram peer sees, `ss -x`); the supervisor's own bind (syscalls/fs_path.c,
 * bind_at) can only give the last component, from the directory the view found.
 *
 * Why not the supervisor itself (commit 36f6db7, reverted): between the view's check and the
 * kernel's walk of the path a thread of the program can swap a directory for a symlink, and
 * the supervisor's walk happens in the host's mount namespace under its own Landlock rules,
 * which allow writing the host tree behind a copy-on-write overlay: a socket file landed in
 * the user's project. The binder's walk has the program's walls instead:
 *   - the sandbox's mount namespace (when there is one): the overlay, the private /tmp, the
 *     masks over hidden paths; the binder's root is that namespace's root and, for a relative
 *     path, its working directory is the caller's (an fd of it, passed in);
 *   - a Landlock domain made from the very ruleset the shim applies (the same grants and
 *     overlay rules, built the same way: before the namespaces are joined, with our rights);
 *     a domain of its own, so /proc/PID/root of any other process (the program's, a host
 *     shell's) is out of its reach;
 *   - the command's uid and gid, no capability, NO_NEW_PRIVS, no fd but its channel.
 * So a swap can only make the bind land where the program's own kernel walls let it make a
 * socket file. The view's checks stay in front (fs_path.c): a hidden or read-only place is
 * refused as before, with the same errno, and the binder is asked only afterwards.
 *
 * Each request carries the path (copied once by the supervisor, never read again from the
 * program), the caller's umask and the device and inode of the directory the view found;
 * SCM_RIGHTS carries our copy of the program's socket and, for a relative path, the caller's
 * working directory. The binder walks the directory part as the kernel will and answers
 * EXDEV, binding nothing, if that is not the view's directory (a remapped mount without a
 * namespace, a place the view shows otherwise than the kernel): the supervisor then binds the
 * last component as before. Otherwise it binds and answers the errno.
 *
 * Started only with Landlock (without it the view is the only wall for hidden and read-only
 * places, and a swap would pass it): forked before the supervisor enters its own domain and
 * before any thread. It is not dumpable, and PDEATHSIG and EOF on its channel end it.
 */
#ifndef STOCKADE_BINDER_H
#define STOCKADE_BINDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct grants;

struct binder {
        int chan; /* our end, or -1: no binder, binds name the last component */
        pid_t pid;
        pthread_mutex_t lock;
};

/* Where the binder stands: the program's namespaces and walls. */
struct binder_walls {
        int user_fd; /* the user namespace to join first, or -1 */
        int mnt_fd;  /* the sandbox's mount namespace, or -1 (the host's, as the program) */
        int ruleset; /* the sandbox's own Landlock ruleset, complete (spawn.c): entered too */
        uid_t uid;
        gid_t gid;
};

/* Fork the binder. Returns 0, or -errno with *step naming what failed (b->chan is -1). */
int binder_start(struct binder *b, const struct binder_walls *w, const char **step);

/* bind(2) of `sock` to `path` (NUL-terminated, with a '/'), relative to `cwd` (an fd of the
 * caller's working directory; -1 for an absolute path), with `mask` as umask, where the
 * directory part must lead to `dir`. Returns 0 or the bind's -errno; -EXDEV when the
 * directory part leads elsewhere (nothing bound); -ENOTSUP without a binder; -EIO when it is
 * gone. Any thread. */
int binder_bind(struct binder *b, int sock, int cwd, const char *path, mode_t mask,
                const struct stat *dir);

/* Tell the binder to end (it reads EOF) without closing our end, which a handler may still
 * be using (its bind then fails with EIO): the teardown reaps it at once instead of finding
 * it in /proc after 100 ms (every run's end waited that long). */
void binder_end(struct binder *b);
/* Close our end: the binder exits (reaped with the tree's teardown). */
void binder_stop(struct binder *b);

#endif

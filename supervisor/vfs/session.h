/*
 * Copy-on-write sessions (`--cow`): where a run's changes to a cow mount are kept until the
 * user reviews, applies or discards them. Pure file code: no seccomp, no sandbox.
 *
 * The store, outside every view:
 *
 *   STATE/sessions/NAME/           STATE: --state-dir, else $XDG_STATE_HOME/stockade,
 *                                  else $HOME/.local/state/stockade
 *     session                      the metadata (below), written beside and renamed
 *     lock                         a running stockade holds flock(LOCK_EX) on it
 *     N/upper                      cow mount N's changes: an overlayfs upper directory
 *     N/work                       overlayfs's work directory (nothing of ours)
 *     N/journal                    mount N's baselines, appended (journal.h)
 *
 * The upper directory is overlayfs's, always mounted with `userxattr`: a whiteout is a
 * character device 0/0; a directory that hides what the lower has is opaque, with the xattr
 * `user.overlay.opaque` = "y"; everything else in it is the new content.
 *
 * The metadata file `session`, one key a line, values escaped (journal.h):
 *
 *   stockade-session 1
 *   created SECONDS
 *   updated SECONDS
 *   command ARG ARG ...
 *   mount N SANDBOX HOST DEV:INO      DEV:INO: the host directory's identity when the
 *                                    session was made; apply and diff refuse another
 *   end
 *
 * A file without the first line or the last, or cut before a line's '\n', is damaged: the lines read so
 * far are kept and `damaged` says so.
 */
#ifndef STOCKADE_VFS_SESSION_H
#define STOCKADE_VFS_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <time.h>

#define SESSION_NAME_MAX   64
#define SESSION_MOUNTS_MAX 16

struct session_mount {
        char sandbox[PATH_MAX]; /* where the program sees it */
        char host[PATH_MAX];    /* the lower tree on the host, where apply writes */
        /* Its identity: a path the sandbox could rename and replace (its parent writable)
         * must not lead apply somewhere else. 0:0 when the file does not say (damaged). */
        unsigned long long dev, ino;
};

struct session_meta {
        time_t created, updated;
        char *command; /* escaped argv, space-separated (malloc'd, may be NULL) */
        struct session_mount mounts[SESSION_MOUNTS_MAX]; /* the first n_mounts are set */
        size_t n_mounts;
        bool damaged;
};

/* Empty: no command, no mount (the mounts' storage is left as it is). */
void session_meta_init(struct session_meta *m);

/*
 * The state directory: `dir` if given, else $XDG_STATE_HOME/stockade, else
 * $HOME/.local/state/stockade. Writes it to out (PATH_MAX). Returns 0 or -errno (-ENOENT when
 * neither variable says where).
 */
int session_state_dir(const char *dir, char *out);

/*
 * Whether the default store `state` (session_state_dir's, `dir` not given: with `dir` there is
 * nothing to judge) could hold what another user put there: a directory of it or on its way
 * up to HOME (not HOME itself) or up to XDG_STATE_HOME, where it exists, that belongs to
 * another user than us or root, or that every user may write (a sandboxed run could chmod
 * one so, and another user then rename it away and put a forged session in its place).
 * Returns 0, or -EPERM with the directory in bad[PATH_MAX].
 */
int session_store_loose(const char *dir, const char *state, char *bad);
#define SESSION_LOOSE_HINT                                                                         \
        "belongs to another user or is writable by every user: a session there may not be yours "  \
        "(chmod o-w it, or give --state-dir)"

/* A session name: 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
bool session_name_ok(const char *name);

/* A fresh name: YYYYMMDD-HHMMSS-XXXX (XXXX random hex). */
void session_make_name(char out[SESSION_NAME_MAX + 1]);

/* STATE/sessions/NAME into out (PATH_MAX); -ENAMETOOLONG. */
int session_path(const char *state, const char *name, char *out);

/*
 * Lock the session directory `dir` (creating `lock`): returns the lock fd (O_CLOEXEC), or
 * -EWOULDBLOCK when a live run holds it, or -errno.
 */
int session_lock(const char *dir);
/* The same by an fd of the session's directory (`lock` made in it, never through a symlink). */
int session_lock_at(int dirfd);

/* A file of a session opened for reading: a regular file only, never through a symlink,
 * never waiting (a FIFO put there): the fd or FILE, or -errno / NULL with errno (EINVAL: not
 * a regular file). */
int session_open_regular(const char *path);
/* The same for `name` in `dirfd`. */
int session_open_regular_at(int dirfd, const char *name);
FILE *session_fopen_regular(const char *path);
/* `name` in `dirfd` opened to append, made if missing: a regular file only, never through a
 * symlink, never waiting (a FIFO put there: EINVAL, not a hang). The fd, or -errno. */
int session_append_regular_at(int dirfd, const char *name);
/* `name` in `dirfd` made anew for writing (what was there removed first, then O_EXCL): never
 * an existing file, FIFO or link of someone else's. The fd, or -errno. */
int session_create_new_at(int dirfd, const char *name);
/* Read `dir/session`. Returns 0 (check meta->damaged), -ENOENT, or -errno. */
int session_meta_read(const char *dir, struct session_meta *meta);
/* The same by an fd of the session's directory (O_PATH will do): what acts on a session long
 * after it found it (the janitor) resolves no path of the store again. */
int session_meta_read_at(int dirfd, struct session_meta *meta);

/* Write `dir/session` whole, beside then renamed. Returns 0 or -errno. */
int session_meta_write(const char *dir, const struct session_meta *meta);
/* The same by an fd of the session's directory: `.session.new` written and synced in it, then
 * renamed over `session` within it (renameat). */
int session_meta_write_at(int dirfd, const struct session_meta *meta);

void session_meta_free(struct session_meta *meta);

/*
 * A session that never began: stockade was stopped (SIGKILL, a crash of the machine) after it
 * made the session's directory and before its metadata was written, which happens before
 * the sandbox starts. It has no `session` file, and holds only what a start makes: `lock`,
 * per mount an upper of directories only (the team directories made before the mount), an
 * empty journal and overlayfs's work directory. Anything else (a `session` file deleted by
 * hand beside changes) makes it damaged, not unborn. `dirfd`: the session's directory.
 */
bool session_unborn(int dirfd);
/* Remove everything of an unborn session but its lock (held by the caller, who starts it
 * afresh). Returns 0 or -errno. */
int session_clear_unborn(int dirfd);
/* Remove the unborn sessions of the store STATE that are at least min_age seconds old (a
 * younger one may be a run between its mkdir and its lock) and not locked, and what a
 * janitor renamed away (`.gone-NAME`) and left, as old. */
void session_sweep_unborn(const char *state, time_t min_age);
#define SESSION_UNBORN_AGE 10 /* seconds */

#endif

/* Between cow.c, cow_note.c and cow_janitor.c: the session's directory layout, the set of
 * noted paths and the janitor. */
#ifndef STOCKADE_COW_INT_H
#define STOCKADE_COW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct supervisor;
struct vfs_view;

struct cow_mount;
struct cow_state;
struct session_meta;
struct error;

/* dir/name into out (PATH_MAX); false when too long. */
bool cow_join(char *out, const char *dir, const char *name);
/* chmod of an O_PATH fd (through /proc: fchmod refuses O_PATH). */
void cow_fd_chmod(int fd, mode_t mode);
/* overlayfs's volatile marker beneath the work directory `work` in `parent` (an fd), removed,
 * by fd and never following a symlink; the work directory's own work/ left mode 000. */
void cow_clear_volatile(int parent, const char *work);

/*
 * Whether the run changed anything beneath mount i of `c`, whose lower tree is its lower_fd
 * (O_PATH): its upper, reached from the session's directory by c->dir_fd, differs from the
 * lower (vfs/cowdiff.h). An upper of copies equal to the lower (a file opened for writing and
 * not written; a copy made for an inotify watch, merged) is no change, nor a journal record
 * without one. What cannot be read counts as a change: the session is kept.
 */
bool cow_mount_changed(const struct cow_state *c, size_t i);
/* Remove what a new session made and did not use: its directories, an upper of copies equal
 * to the lower, and the files we made, by c->dir_fd; then the directory, `name` in
 * c->sessions_fd (the session's name, or the janitor's `.gone-NAME`). No path is resolved. */
void cow_remove_unused(struct cow_state *c, const char *name);
/* Fork the janitor (a grandchild: c->janitor_parent, reaped by cow_janitor_ready), which
 * first writes `meta` as the session's metadata. Returns 0 or -1 with *err set. */
int cow_start_janitor(struct cow_state *c, const struct session_meta *meta, struct error *err);
/* The janitor's first answer, read once: how the metadata's write went (0 or -errno). */
int cow_janitor_meta(struct cow_state *c);
/*
 * Tell the janitor `what`, handing it `fds`, the overlays' roots in the sandbox's mount
 * namespace: 'r' remove the unused session, 'u' bring its metadata up to date, 'c' compare
 * the session with the host (cow_mount_changed, outside our Landlock domain), answer
 * (cow_janitor_verdict), then 'r' if nothing changed in a new unnamed session, else 'u'. It
 * closes the fds before it answers "d" for a session kept, and after it for one removed,
 * whose overlays then go while stockade exits. Close ours as soon as this returns, before
 * waiting for any answer: the last close waits for the overlay's end. Returns 0, or -1 when
 * the janitor is gone (the fds are then only ours).
 */
int cow_janitor_tell(struct cow_state *c, char what, const int *fds, size_t n);
/* The janitor's answer to 'c': 1 the run changed something, 0 not, -1 no answer (died, or
 * stockade was asked to stop meanwhile: c->stopped_by). */
int cow_janitor_verdict(struct cow_state *c);
/* The end: the janitor's first answer if not read yet, then EOF to it and its "d" (it has
 * let the session go), or a stop signal (c->stopped_by). */
void cow_janitor_done(struct cow_state *c);

/* The session stores used with --state-dir (cow_stores.c), listed in the default store's
 * directory as `stores`: cow_stores_remember adds the real path `canon` (0, or -1 with *why
 * where it cannot: no default store of one's own, no HOME); cow_stores_hide hides in `view` each
 * listed store that exists, but `own`, where `writable` says the run could write it
 * (1: view and walls, 2: the view alone, as /var/tmp's). */
int cow_stores_remember(const char *canon, const char **why);
void cow_stores_hide(struct supervisor *sup, struct vfs_view *view, const char *own,
                     int (*writable)(const struct supervisor *, const struct vfs_view *,
                                     const char *));

/* The set of paths of mount `m` already noted for apply (cow_note.c): add `rel`; free all. */
void cow_noted_put(struct cow_mount *m, const char *rel);
void cow_noted_free(struct cow_mount *m);

#endif

/* Whose a session store is (session_owner.c): the session commands and stockade run judge a
 * store by every directory and symlink on its path before they use it. */
#ifndef STOCKADE_SESSION_OWNER_H
#define STOCKADE_SESSION_OWNER_H

#include "supervisor/error.h"

#include <limits.h>
#include <sys/types.h>

/* Whose a store or session is, as root: uid 0 until a directory or symlink of another
 * user's is met, `where`. */
struct sess_owner {
        uid_t uid;
        char where[PATH_MAX * 2];
};

/* The store `state`, opened O_PATH, walked from / with each directory and symlink on the way
 * claimed (session_owner.c). Messages begin "CMD: session NAME" (NAME NULL: "CMD: the
 * session store"; NAME "": CMD alone). Returns the fd, or -1 with *err set (errnum: why). */
int store_open(const char *state, struct sess_owner *o, const char *cmd, const char *name,
               struct error *err);
/* The same walk as far as `state` exists: 0 (*o: whose), or -1 with *err set. */
int store_judge(const char *state, struct sess_owner *o, const char *cmd, struct error *err);
/* The same walk, making what is missing (0700) beneath what was judged, one name at a time:
 * 0 (*o: whose), or -1 with *err set. */
int store_make(const char *state, struct sess_owner *o, const char *cmd, struct error *err);
/* The object `fd` (shown as `shown`) counts for *o: -1 with *err set when it is a second
 * user's (not as root: when it is neither root's nor the caller's). */
int owner_claim(struct sess_owner *o, int fd, const char *shown, const char *cmd, const char *name,
                struct error *err);
/* The store to use: session_state_dir's, except that root does not take a default one (from
 * HOME or XDG_STATE_HOME) that another user has a hand in, and uses its own home's instead,
 * with a note. 0, or -errno. */
int store_default(const char *dir_opt, char *out);
/* The default store store_default(NULL, out) picks, without a word (cow_stores.c). */
int store_default_quiet(char *out);
/* For stockade run, which makes and uses its session by path: the store, its `sessions` and
 * the session's directory (`fd`, shown as `shown`) must be the caller's, and writable by no
 * one else (its group: root's or the caller's). 0, or -1 with *err set. */
int owner_private(int fd, const char *shown, const char *cmd, struct error *err);
/* As root, with *o another user's: become that user (ids and groups), and say so. Returns 0,
 * or -1 with *err set. */
int owner_become(const struct sess_owner *o, const char *cmd, const char *name, struct error *err);

#endif

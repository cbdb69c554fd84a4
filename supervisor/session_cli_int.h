/* What the session commands (session_cli.c, session_apply.c, session_patch.c) share: one
 * session opened from the store, its cow mounts with their diffs. */
#ifndef STOCKADE_SESSION_CLI_INT_H
#define STOCKADE_SESSION_CLI_INT_H

#include "supervisor/error.h"
#include "supervisor/session_owner.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/session.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct sess_mount {
        const struct session_mount *m; /* sandbox and host paths, in sess.meta */
        /* SESSION/N, opened beneath the session's fd without following a symlink (dir_fd),
         * and named as /proc/self/fd/M: its journal and lent are reached through it, so that
         * `N` swapped for a symlink after the load leads nowhere else. */
        char dir[32];
        char prefix[PATH_MAX];         /* what the output puts before a path: "" or SANDBOX/ */
        int dir_fd, upper_fd, host_fd; /* -1 when missing */
        struct journal journal;
        struct cow_diff diff;
        bool loaded;       /* diff computed */
        char problem[512]; /* what is wrong with this mount, "" when nothing */
};

struct sess {
        const char *name;
        char state[PATH_MAX];
        char dir[PATH_MAX]; /* STATE/sessions/NAME, as shown */
        /* The store, its `sessions` and the session's directory, each opened once beneath the
         * one before (sess_find): whose they are is judged on these, and all that follows is
         * done beneath `at`, the session's directory as /proc/self/fd/N, so that what a path
         * names later (a directory on the way renamed, a symlink swapped) changes nothing. */
        int state_fd, sessions_fd, dir_fd;
        char at[32];
        struct sess_owner owner; /* as root: whose the store and the session are */
        struct session_meta meta;
        char problem[256]; /* what is wrong with the session file, "" when nothing */
        bool unborn;       /* never began (session_unborn): problem says so */
        struct sess_mount mounts[SESSION_MOUNTS_MAX];
        size_t n; /* mounts, sorted by sandbox path */
};

/* Find session `name` in the store (`state_opt` or the default) and open its directories.
 * Returns 0, or -1 with *err set when the name is not valid or there is no such session. */
int sess_find(struct sess *s, const char *state_opt, const char *name, struct error *err);
/* As root, a session of another user's (sess_find judged it: a directory or symlink on the
 * way to the store, the store, its `sessions` or the session's directory is theirs) is that
 * user's to diff, apply or discard: stockade becomes that user (ids and groups), so that what
 * the session says is done with that user's rights, and what apply writes is theirs.
 * Returns 0, or -1 with *err set. */
int sess_as_owner(const struct sess *s, const char *cmd, struct error *err);
/* Lock the session against a live run: the lock fd, or -1 with *err set (in use, or why not). */
int sess_lock(const struct sess *s, struct error *err);

/* After sess_lock, before sess_load: the write bits an apply killed half-way left lent on the
 * host's directories (cowapply.h), given back, so that the diff sees the host's own modes.
 * Returns 0 or -1 with *err set. */
int sess_unlend(const struct sess *s, const char *cmd, struct error *err);

/* Read the session file, open the mounts (upper, host, journal) and compute their diffs.
 * Problems are noted in s->problem and each mount's; the rest is loaded as far as it goes. */
void sess_load(struct sess *s);

/* sess_find, sess_as_owner (for `cmd`), then sess_load. */
int sess_open(struct sess *s, const char *state_opt, const char *name, const char *cmd,
              struct error *err);
void sess_close(struct sess *s);

/* Print each problem of s as one line on stderr ("stockade: session NAME is damaged: ...");
 * returns how many. */
int sess_report(const struct sess *s);

/* The changes as a JSON array. */
void sess_print_json(FILE *out, const struct sess *s);

/* The changes as a patch in git's format (text hunks from diff(1)); out must have an fd.
 * Returns 0 or -1 with *err set. */
int sess_print_patch(FILE *out, const struct sess *s, struct error *err);

/* Parse the common options: --state-dir DIR and the command's flags (`flags`: NULL-ended
 * long names without value); positionals are gathered in pos. Returns 0, 1 for --help, -1
 * with *err. */
struct sess_args {
        const char *state;
        const char *pos[256];
        size_t n_pos;
        bool flag[4];
};
int sess_parse_args(int argc, char **argv, const char *const *flags, struct sess_args *a,
                    struct error *err);

/* An argument of the session's command for people: as is, or in C quotes when it holds a
 * space, a quote, a backslash, '$', '`' or a control byte. */
void sess_quote_arg(FILE *out, const char *s);

#endif

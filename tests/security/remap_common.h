/*
 * What test_remap and test_remap_refuse share: a tree under the build directory with a fake
 * HOME and a workspace, `stockade run` from it, the failures of a test collected in a report,
 * and snapshots of host directories. Include after <cmocka.h>.
 */
#ifndef STOCKADE_TEST_REMAP_COMMON_H
#define STOCKADE_TEST_REMAP_COMMON_H

#include "tests/helpers/runner.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { TIMEOUT_S = 60 };

/* In the name of every source directory: no output of the program may hold it. */
#define SRC_MARK "hostsideQZ"
#define PY       "/usr/bin/python3"

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

/* The tree (made by remap_setup): top, its workspace (where runs start: writable, runner.h
 * adds --rw), the fake HOME (.ssh/id_rsa holds TOKEN-SSH-3hq9; also .ssh/inner, proj,
 * notes.txt; $top/otherhome is empty), a directory for markers. */
extern char top[PATH_MAX], ws[PATH_MAX + 16], home[PATH_MAX + 16], marks[PATH_MAX + 16];
/* A directory outside every place the default view makes writable (the build tree is usually
 * in /var/tmp, which is), in /run/lock; "" where none can be made. */
extern char land[64];
extern char states[PATH_MAX + 16]; /* session stores: ours, beside top (XDG_STATE_HOME) */
extern uid_t sbx_uid;              /* the uid the sandbox gets: nobody when we are root */
extern bool have_ns;               /* a mount namespace can be made (else remaps are refused) */
extern bool xattr_ok;              /* user xattrs work in the tree */

/* The failures of the test so far; check_report() fails it with them. */
extern char report[1 << 17];
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void check_report(void);

/* `@X` in `in` replaced by the value of key X (keys: a NULL-terminated list of "Xvalue"). */
void expand(char *out, size_t len, const char *in, const char *const *keys);
/* The output of a host command, malloc'ed. */
char *capture(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A host directory's names, types, modes, owners, sizes, times, link counts, symlink targets,
 * content and xattrs, malloc'ed; same_snapshot() notes what changed. */
char *snapshot(const char *dir);
void same_snapshot(const char *dir, const char *before, const char *what);
/* 1 if a line of `out` starts with `prefix` and ends there or goes on with ':'. */
bool has_line(const char *out, const char *prefix);

/* stockade run -q OPTS -- sh -c SCRIPT (stderr into stdout), from `dir` or the workspace. */
void run_from(const char *dir, const char *const *opts, const char *script, struct run_result *r);
void run(const char *const *opts, const char *script, struct run_result *r);
/* The script natively, as sbx_uid. */
void run_native(const char *script, struct run_result *r);
/* The run ran (exit 0); else noted (ran_ok) or the test fails (expect_ran). */
bool ran_ok(const struct run_result *r, const char *what);
void expect_ran(const struct run_result *r);
/* Skips the test without a mount namespace. */
void need_ns(void);
void chown_tree(const char *dir);

/* STOCKADE_TEST_DISABLE=layers with --allow-degraded, until restore_env(). */
void disable(const char *layers);
void restore_env(void);

/* cmocka: the group's set-up and tear-down, and each test's set-up (reset_env). */
int remap_setup(void **state);
int remap_teardown(void **state);
int reset_env(void **state);

#endif

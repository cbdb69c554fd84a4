/*
 * What test_hidden and test_fast share: a fake HOME under the current directory holding
 * secrets the sandbox's uid could read by their mode (.ssh/id_rsa "SECRET-SSH", .aws, .netrc,
 * .config/gcloud and git credentials, ...; notes.txt and .config/app.conf are visible), its
 * workspace `work` (home/project, writable: runner.h adds --rw), and `extra` beside it.
 * Include after <cmocka.h>.
 */
#ifndef STOCKADE_TEST_HIDDEN_COMMON_H
#define STOCKADE_TEST_HIDDEN_COMMON_H

#include "tests/helpers/runner.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { TIMEOUT_S = 60 };

extern char top[PATH_MAX], home[PATH_MAX + 16], work[PATH_MAX + 16], extra[PATH_MAX + 16];
extern uid_t sbx_uid; /* the sandbox's uid: nobody when we are root */
extern bool fast;     /* every run_script* adds --fast */

/* A file `rel` in `dir` with `content`, mode 0644; a directory, mode 0755. */
void put(const char *dir, const char *rel, const char *content);
void mkdirs(const char *dir, const char *rel);
/* The tree, made in the current directory and HOME pointed at it; removed. */
int hidden_setup(void **state);
int hidden_teardown(void **state);
/* stockade run [--fast] OPTS -- sh -c SCRIPT, from `dir` (or the workspace), HOME passed. */
void run_script_in(const char *dir, const char *const *opts, const char *script,
                   struct run_result *r);
void run_script(const char *const *opts, const char *script, struct run_result *r);
/* The same script natively, as the sandbox's uid, from the workspace: the control. */
void run_native(const char *script, struct run_result *r);
/* The host makes `file` (SECRET-LATER, mode 0644; its directories too, mode 0755) 0.5 s
 * from now and removes it 1.5 s
 * later; `script` gets a python3 program for the sandbox that holds it O_PATH as soon as it
 * appears ("held"), then reads it through /proc/self/fd/N and by name while it lives and
 * after it is gone: a line "live ..." and "deleted ..." each, the content or "refused". The
 * sandbox names it `seen` (NULL: `file`). */
void made_later(const char *file, const char *seen, char *script, size_t size);
/* Whether `stockade run --fast` runs here (it needs a mount namespace); prints why not. */
bool hidden_fast_possible(void);

#endif

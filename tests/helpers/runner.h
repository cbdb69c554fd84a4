/* Test helper: run a command (usually `stockade run ...`) with captured output. */
#ifndef STOCKADE_TEST_RUNNER_H
#define STOCKADE_TEST_RUNNER_H

#include <stddef.h>
#include <sys/types.h>

struct run_result {
        int status;      /* wait status */
        int exit_code;   /* WEXITSTATUS, or 128+signal, or -1 if the watchdog fired */
        char *out, *err; /* NUL-terminated captured stdout and stderr (malloc'ed) */
        size_t out_len, err_len;
};

/* Path of the built stockade binary and the probe helper (set by CMake). */
const char *runner_stockade(void);
const char *runner_probe(void);

/* Run argv (NULL-terminated) with envp (NULL = inherit), stdin from /dev/null, killing it
 * after timeout_s seconds. Returns 0 or -errno. */
int runner_run(char *const argv[], char *const envp[], int timeout_s, struct run_result *r);
/* Convenience: stockade run [opts...] -- cmd... with a single NULL-terminated vector in
 * which the string "--" separates stockade options from the command. */
int runner_stockade_run(const char *const args[], int timeout_s, struct run_result *r);
/* stockade run OPTS... -- /bin/sh -c SCRIPT, started from `dir` (opts NULL-terminated, may be
 * NULL); the caller's working directory is restored. Returns 0 or -errno. */
int runner_stockade_sh(const char *dir, const char *const opts[], const char *script, int timeout_s,
                       struct run_result *r);
/* /bin/sh -c SCRIPT natively, from `dir` (NULL: here), as `uid` (and its gid, no groups)
 * when we are root, else as ourselves: a test's control run, as the sandbox's uid. The
 * caller's working directory is restored. Returns 0 or -errno. */
int runner_native_sh(const char *dir, uid_t uid, const char *script, int timeout_s,
                     struct run_result *r);
void runner_free(struct run_result *r);

/*
 * The suite judges writes from outside the sandbox, on the host: `stockade run` started by
 * these helpers gets `--rw CWD` first (a test's own flags for the same path, given later, win),
 * so the workspace is the host's rather than copy-on-write (the default view's, tested by
 * test_cow_run). A run whose arguments name --cow is left as given. Returns a new argv (leaked:
 * for a child about to exec).
 */
char **runner_workspace_rw(char *const argv[]);

/* system() of the command `fmt` formats (no sandbox: setting a test up, judging the host).
 * Returns 0, or -1 after printing the command that failed (or was too long) on stderr. */
int runner_shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 1 if any live process's cmdline contains `needle` (used to check nothing outlived a run). */
int runner_process_alive(const char *needle);

/* A cmocka setup and teardown pair: the run without a mount namespace (a host without user
 * namespaces: stockade merges the copy-on-write workspace, /tmp is the host's), forced with
 * STOCKADE_TEST_DISABLE=userns,ipcns, and TMPDIR unset meanwhile (ctest's /var/tmp would be a
 * writable place of the view, and the base of the run's private directories). The teardown
 * gives all of it back, also after a failed check. */
int runner_merged_setup(void **state);
int runner_merged_teardown(void **state);

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 't', 'Z'...); 0 when unreadable. */
char runner_proc_state(pid_t pid);

#endif

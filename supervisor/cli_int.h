/* What cli.c (the options of `stockade run` and their parsing) shares with cli_doc.c (the man
 * page and the shell completions, generated from the same table). */
#ifndef STOCKADE_CLI_INT_H
#define STOCKADE_CLI_INT_H

#include <stddef.h>

enum {
        OPT_TIMEOUT = 256,
        OPT_CPU,
        OPT_MEMORY,
        OPT_MAX_PROCS,
        OPT_MAX_FILES,
        OPT_MAX_FILE_SIZE,
        OPT_ENV,
        OPT_CLEAR_ENV,
        OPT_MODE,
        OPT_ALLOW_DEGRADED,
        OPT_FAST,
        OPT_USER,
        OPT_HIDE,
        OPT_RO,
        OPT_RW,
        OPT_TMP,
        OPT_COW,
        OPT_SESSION,
        OPT_STATE_DIR,
        OPT_TRACE,
        OPT_TRACE_LEVEL,
        OPT_BACKTRACE,
        OPT_TRACE_DROP,
        OPT_TRACE_ENV,
        OPT_TTY,
        OPT_KILL_AFTER,
        OPT_WORKDIR,
        OPT_PASS_FD,
        OPT_POLICY,
        OPT_NET,
        OPT_ALLOW_NET,
        OPT_ALLOW_EXEC,
        OPT_NO_EXEC_WRITABLE,
        OPT_DNS_STATIC,
        OPT_DENY_NET,
        OPT_PUBLISH,
        OPT_MAX_CONNECTIONS,
};

enum value_kind {
        V_NONE,
        V_DURATION,
        V_SIZE,
        V_COUNT,
        V_STRING,
};

struct opt_def {
        const char *name;
        int key; /* getopt value; a letter for options with a short form */
        enum value_kind kind;
        const char *metavar;
        const char *help;
};

/* The options of `stockade run`, in the order of the help. */
extern const struct opt_def cli_run_opts[];
extern const size_t cli_n_run_opts;

#endif

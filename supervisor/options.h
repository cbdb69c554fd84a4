/* The run configuration and the parsers of option values. */
#ifndef STOCKADE_OPTIONS_H
#define STOCKADE_OPTIONS_H

#include "supervisor/net/netpol.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum mode {
        MODE_ENFORCE,
        MODE_AUDIT,
};

/* --tty: give the sandbox a pseudo-terminal of its own (tty.c). */
enum tty_mode {
        TTY_AUTO,   /* when one of fds 0-2 is a terminal (the default) */
        TTY_ALWAYS, /* also without a terminal: fds 0-2 all become the pty */
        TTY_NEVER,  /* the sandbox gets fds 0-2 as they are, and no controlling terminal */
};

/* 0 means "not set" for every limit. */
struct limits {
        uint64_t timeout_ms;    /* wall clock for the whole tree */
        uint64_t cpu_s;         /* RLIMIT_CPU, per process */
        uint64_t memory;        /* RLIMIT_AS, per process */
        uint64_t max_procs;     /* tasks (processes and threads) alive in the tree */
        uint64_t max_files;     /* RLIMIT_NOFILE */
        uint64_t max_file_size; /* RLIMIT_FSIZE */
        /* outbound connections (connect, MSG_FASTOPEN) to addresses outside the sandbox */
        uint64_t max_connections;
};

/* One --env or --clear-env step, applied in order. */
struct env_op {
        const char *arg; /* "NAME" (pass through) or "NAME=VALUE" (set) */
};

/* One mount flag, parsed when the run starts (supervisor/vfs/mount.h). */
struct mount_opt {
        const char *flag;   /* "ro", "rw", "tmp", "cow", "hide" */
        const char *spec;   /* its value, as given */
        const char *origin; /* for messages, a policy file's "FILE:LINE:COL: filesystem `PATH`";
                               NULL: the flag and its value */
};

struct config {
        enum mode mode;
        int verbose; /* -v: layers and the end summary; -vv: every decision */
        bool quiet;  /* -q: no warnings of stockade's own */
        enum tty_mode tty;
        uint64_t kill_after_ms; /* SIGTERM to stockade, then SIGKILL after this (0: never) */
        const char *workdir;    /* where the command starts (NULL: the current directory) */
        int *pass_fds;          /* --pass-fd: inherited fds that stay open in the sandbox */
        size_t n_pass_fds;
        bool allow_degraded;
        bool fast; /* --fast: the kernel answers stat, access, readlink and listings */
        bool clear_env;
        struct env_op *env_ops;
        size_t n_env_ops;
        struct limits limits;
        bool set_user;     /* run the sandbox as uid:gid (root only): --user, or the default */
        bool default_user; /* root without --user: nobody (DEFAULT_UID), not uid 0 */
        uid_t uid;
        gid_t gid;
        const char **exec_allow; /* --allow-exec: what may run (none: any visible file) */
        size_t n_exec_allow;
        bool exec_no_writable;    /* --no-exec-writable: nothing runs from a writable place */
        struct mount_opt *mounts; /* --ro, --rw, --tmp, --cow, --hide, in the order given */
        size_t n_mounts;
        const char *session;   /* --session NAME: the cow session to make or continue */
        const char *state_dir; /* --state-dir DIR: where sessions live */
        char **argv;           /* the command, NULL-terminated */
        /* --trace and friends (supervisor/trace.h) */
        const char *trace_path; /* a file, or unix:PATH; NULL: no trace */
        int trace_level;        /* enum trace_level */
        int trace_backtrace;    /* enum trace_bt */
        bool trace_drop;        /* drop events rather than slow the sandbox down */
        bool trace_env;         /* record the environment's values, not only its names */
        char **owned;           /* strings the config owns (a policy file's values) */
        size_t n_owned;
        /* --net, --allow-net, --deny-net (supervisor/net/netpol.h); the policy file's
         * network section adds its rules with netpol_add_rule. Zero: deny everything. */
        struct netpol net;
};

/* Who the command runs as when stockade is root and --user is not given: nobody. uid 0
 * without capabilities still reads root-only files and talks to root daemons over unix
 * sockets that trust uid 0 (systemd's /run/systemd/private). `--user root` keeps uid 0. */
#define DEFAULT_UID 65534
#define DEFAULT_GID 65534

/* The default --kill-after: how long a program has to end after a SIGTERM to stockade. */
#define DEFAULT_KILL_AFTER_MS 10000

/* The lowest --max-files the sandbox can start with: fds 0-2 and the seccomp listener. */
#define MIN_MAX_FILES 4

/* The default --max-procs: enough for a parallel build, far below what hurts the host. */
#define DEFAULT_MAX_PROCS 4096

/* "123", "4K", "2M", "1G", "1T" (binary multiples, case-insensitive, optional "B").
 * Returns 0 or -EINVAL / -ERANGE. */
int parse_size(const char *s, uint64_t *out);
/* "30", "30s", "1.5m", "2h", "500ms" -> milliseconds. Returns 0 or -EINVAL / -ERANGE. */
int parse_duration_ms(const char *s, uint64_t *out);
/* A plain non-negative integer. Returns 0 or -EINVAL / -ERANGE. */
int parse_count(const char *s, uint64_t *out);
/* "NAME", "UID", "NAME:GROUP" or "UID:GID"; without a group, the user's primary group (or
 * the uid's number). Returns 0, -ENOENT for an unknown name or -EINVAL. */
int parse_user(const char *s, uid_t *uid, gid_t *gid);
/* Whether `name` is a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool valid_env_name(const char *name, size_t len);

#endif

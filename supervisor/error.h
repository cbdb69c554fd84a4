/* The error object of lifecycle code (config, spawn, trace file): a message built where the
 * failure happened, printed once by main. Leaf code
 * returns -errno instead. */
#ifndef STOCKADE_ERROR_H
#define STOCKADE_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

/* Exit codes shared with env(1), timeout(1) and the shells. */
enum {
        EXIT_STOCKADE = 125, /* stockade's own error */
        EXIT_NOEXEC = 126,   /* command found but not executable */
        EXIT_NOTFOUND = 127, /* command not found */
        EXIT_TIMEDOUT = 124, /* --timeout expired */
};

struct error {
        int errnum;    /* errno at the failure, 0 when none applies */
        int exit_code; /* what main exits with; EXIT_STOCKADE unless set */
        bool printed;  /* the line was already printed (by the shim, in the child) */
        char msg[1024];
};

/* Fill *err (if it is empty) and return -1 so callers can `return make_error(...)`. */
int make_error(struct error *err, int errnum, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* -q: error_warn() prints nothing. */
extern bool stockade_quiet;
/* A warning or note of stockade's own: "stockade: " + the message, unless -q. */
void error_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "stockade: message[: strerror]" on one line. */
void error_print(const struct error *err);

#endif

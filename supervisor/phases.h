/*
 * Where a run's time goes before and after the command (stockade run -vv): a mark at the end
 * of each phase of start-up and teardown, printed as one line at the end of the run. For
 * people measuring what the sandbox costs, and for us (docs/plans/startup.md).
 */
#ifndef STOCKADE_PHASES_H
#define STOCKADE_PHASES_H

#include <stddef.h>

struct phases {
        double last;    /* ms since the process started, at the previous mark */
        char text[640]; /* "name 1.23, name 0.45, ..." */
        size_t len;
};

/* The phase that ends now, named `name`, takes the time since the previous mark. */
void phases_mark(struct phases *p, const char *name);

/* Milliseconds since stockade's process was loaded (its first constructor). */
double phases_now(void);

#endif

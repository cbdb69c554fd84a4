/* The supervisor's lifetime: spawn the command, run the event loop, reap the tree. */
#ifndef STOCKADE_LOOP_H
#define STOCKADE_LOOP_H

#include "supervisor/error.h"
#include "supervisor/options.h"

#include <linux/filter.h>

struct spawn_plan {
        const struct config *cfg;
        const char *path_var; /* the sandbox's PATH, where the shim looks CMD up */
        char *const *envp;    /* the sandbox's environment */
};

/* Run the command under supervision. Returns the exit code stockade should exit with (the
 * command's, 128+N for a signal, 124 on timeout), or -1 with *err set. */
int sup_run(const struct spawn_plan *plan, struct error *err);

#endif

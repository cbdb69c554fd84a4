/* `stockade trace show|stats|export` and the --trace* options of `stockade run`. */
#ifndef STOCKADE_TRACE_CLI_H
#define STOCKADE_TRACE_CLI_H

#include "supervisor/error.h"
#include "supervisor/options.h"

/* `stockade trace ...` (argv[0] is "trace"). Returns the exit code. */
int trace_cli_main(int argc, char **argv);
/* One of run's --trace, --trace-level, --backtrace, --trace-drop, --trace-env. Returns 0 or
 * -1 with *err set. */
int trace_cli_option(struct config *cfg, const char *name, const char *arg, struct error *err);

#endif

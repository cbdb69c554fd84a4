/* Command line: subcommands, the option table, help texts. */
#ifndef STOCKADE_CLI_H
#define STOCKADE_CLI_H

#include "supervisor/error.h"
#include "supervisor/options.h"

#include <stddef.h>
#include <stdio.h>

/* Parse `stockade run` arguments (argv[0] is "run") into *cfg. Returns 0, 1 when help was
 * printed, or -1 with *err set. cfg->argv points into argv. */
int cli_parse_run(int argc, char **argv, struct config *cfg, struct error *err);
/* The same for `stockade policy show`: the flags without a command (argv[0] names the
 * command in messages). */
int cli_parse_flags(int argc, char **argv, struct config *cfg, struct error *err);
/* Apply one `stockade run` option by its long name, as if it were given on the command line
 * (value NULL for an option without one): the policy file's keys go through here. Returns 0,
 * or -1 with *err "run: --NAME: what is wrong". */
int cli_apply_option(struct config *cfg, const char *name, const char *value, struct error *err);
/* Free what cli_parse_run allocated. */
void cli_config_free(struct config *cfg);
/* The i-th option of `stockade run` (its long name), or NULL past the last; *help gets its
 * help text when not NULL. For tests and the generated docs. */
const char *cli_run_option(size_t i, const char **help);
/* The man page, stockade.1, from the option table (troff). */
void cli_print_man(FILE *out);
/* Completion for "bash" or "zsh" from the option table. Returns 0 or -EINVAL. */
int cli_print_completion(FILE *out, const char *shell);
/* The whole program: returns the exit code. */
int cli_main(int argc, char **argv);

#endif

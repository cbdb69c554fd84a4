/*
 * The policy file (docs/policy.md): YAML, read with libyaml into the same struct config that
 * the flags of `stockade run` fill, and printed back by `stockade policy show`.
 */
#ifndef STOCKADE_POLICY_POLICY_H
#define STOCKADE_POLICY_POLICY_H

#include "supervisor/error.h"
#include "supervisor/options.h"

#include <stdio.h>

/*
 * Read the policy file `path` into *cfg, which holds the defaults (cli_parse_run's): every
 * key sets what its flag would set, so flags applied afterwards override it. Strings the
 * config keeps are owned by cfg (cfg->owned, freed by cli_config_free). Returns 0, or -1 with
 * one line in *err: "FILE:LINE:COLUMN: key: what is wrong" (1-based), or "FILE: ..." when the
 * file cannot be read at all. Nothing but *cfg is touched.
 */
int policy_load(struct config *cfg, const char *path, struct error *err);

/*
 * Print *cfg as a policy file (version 1) that policy_load reads back into the same policy:
 * every key with its effective value, relative paths made absolute against the directory the
 * command would start in. Returns 0 or -1 with *err set.
 */
int policy_show(FILE *out, const struct config *cfg, struct error *err);

/* `stockade policy show [--policy FILE] [run flags]`: argv[0] is "policy". Returns the exit
 * code. */
int policy_cli_main(int argc, char **argv);

#endif

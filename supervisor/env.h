/* The sandbox's environment: the host's minus credentials, adjusted by --env/--clear-env. */
#ifndef STOCKADE_ENV_H
#define STOCKADE_ENV_H

#include <stdbool.h>
#include <stdio.h>

struct config;

/* True when a variable called `name` looks like it carries a credential. */
bool env_is_secret(const char *name);
/* Build the environment for the command from `host` (NULL-terminated) and the config.
 * Returns a malloc'ed NULL-terminated array of malloc'ed strings; env_free() frees it. */
char **env_build(char *const *host, const struct config *cfg);
void env_free(char **env);
/* -v: one line naming the host variables env_build() leaves out as credentials. */
void env_report_removed(char *const *host, const struct config *cfg, FILE *out);
/* The value of `name` in env, or NULL. */
const char *env_get(char *const *env, const char *name);

/*
 * env with the package managers' cache variables (XDG_CACHE_HOME, npm_config_cache,
 * GOMODCACHE) pointed into the directory `base` (the private /tmp, or a directory of the
 * run's: walls_env) where env leaves them unset and `writable` says the command could not
 * write their default place beneath HOME. Returns a new array (for env_free), or NULL when
 * nothing is added. With `verbose`, one line says what was set.
 */
char **env_with_caches(char *const *env, const char *base,
                       bool (*writable)(const char *path, void *ctx), void *ctx, FILE *verbose);

/* A copy of env with `name` set to `value` (for env_free). */
char **env_with(char *const *env, const char *name, const char *value);

#endif

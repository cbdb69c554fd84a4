/*
 * Credentials are dropped by name: a variable whose name matches one of the patterns below
 * (case-insensitively) does not reach the sandbox unless --env names it. The list errs on
 * the side of dropping: a build that needs FOO_KEY can say --env FOO_KEY. `*AUTH*` is broad
 * (OAUTH_*, *_AUTH_TOKEN, BASIC_AUTH, AUTH_HEADER ...); the names it would catch that are
 * not secrets are listed in not_secret[]: GIT_AUTHOR_* and the like (a name and an
 * e-mail address; *AUTHORIZATION* stays a secret), and the X11/ICE authority *file names* XAUTHORITY and ICEAUTHORITY
 * (the file holds the cookie; the variable only says where, and X clients need it).
 *
 * With --user (and for the default user of a root stockade), HOME, USER, LOGNAME and SHELL
 * follow that user as `runuser -u` sets them, from the password database; --env still
 * overrides them, and --clear-env leaves them out like everything else.
 */
#include "supervisor/env.h"
#include "supervisor/options.h"
#include "supervisor/util.h"

#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

static const char *const secret_patterns[] = {
        "*_TOKEN",
        "*_TOKENS",
        "*_TOKEN_*",
        "*SECRET*",
        "*_KEY",
        "*_KEYS",
        "*_KEY_*",
        "*APIKEY*",
        "*PASSWORD*",
        "*PASSWD*",
        "*_PASS",
        "*_PWD",
        "*_CREDENTIALS",
        "*_CREDENTIAL",
        "*_CREDS",
        "*_AUTH",
        "*_PAT",
        "*COOKIE*",
        "*AUTH*",
        "*JWT*",
        "*CONNECTION_STRING*",
        "DATABASE_URL",
        "*_DATABASE_URL",
        "*_DSN",
        /* Cloud providers whose variables carry identities, not only keys. */
        "AWS_*",
        "AZURE_*",
        "ARM_CLIENT_*",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_API_*",
        "CLOUDSDK_AUTH_*",
        "VAULT_*",
        "DOCKER_AUTH_CONFIG",
        "NPM_CONFIG__AUTH*",
        /* Handles that grant a credential's use without its bytes. */
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "KRB5CCNAME",
};

/* Names the patterns catch that carry no secret. */
static const char *const not_secret[] = {
        "*_AUTHOR_*", /* GIT_AUTHOR_NAME, _EMAIL, _DATE; not *_AUTHORIZATION */
        "AUTHOR",     "*_AUTHOR", "XAUTHORITY", "ICEAUTHORITY", "XAUTHLOCALHOSTNAME",
};

bool env_is_secret(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(not_secret); i++)
                if (fnmatch(not_secret[i], name, FNM_CASEFOLD) == 0)
                        return false;
        for (size_t i = 0; i < ARRAY_SIZE(secret_patterns); i++)
                if (fnmatch(secret_patterns[i], name, FNM_CASEFOLD) == 0)
                        return true;
        return false;
}

static size_t name_len(const char *entry)
{
        const char *eq = strchr(entry, '=');
        return eq ? (size_t)(eq - entry) : strlen(entry);
}

struct env_vec {
        char **v;
        size_t n, cap;
};

static void vec_remove(struct env_vec *e, const char *name, size_t len)
{
        for (size_t i = 0; i < e->n;) {
                if (name_len(e->v[i]) == len && strncmp(e->v[i], name, len) == 0) {
                        free(e->v[i]);
                        e->v[i] = e->v[--e->n];
                } else {
                        i++;
                }
        }
}

static void vec_set(struct env_vec *e, const char *entry)
{
        vec_remove(e, entry, name_len(entry));
        if (e->n + 2 > e->cap) {
                e->cap = e->cap ? 2 * e->cap : 64;
                e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
        }
        e->v[e->n++] = xstrdup(entry);
        e->v[e->n] = NULL;
}

static const char *host_lookup(char *const *host, const char *name, size_t len)
{
        for (; host && *host; host++)
                if (name_len(*host) == len && strncmp(*host, name, len) == 0 && (*host)[len] == '=')
                        return *host;
        return NULL;
}

static void set_var(struct env_vec *e, const char *name, const char *value)
{
        _cleanup_free_ char *entry = NULL;

        if (asprintf(&entry, "%s=%s", name, value) < 0)
                abort();
        vec_set(e, entry);
}

/* HOME, USER, LOGNAME and SHELL of the user the command runs as, like runuser. */
static void set_identity(struct env_vec *e, const struct config *cfg)
{
        struct passwd *pw = getpwuid(cfg->uid);
        char num[16];

        if (!pw) {
                snprintf(num, sizeof(num), "%u", (unsigned)cfg->uid);
                set_var(e, "HOME", "/");
                set_var(e, "USER", num);
                set_var(e, "LOGNAME", num);
                set_var(e, "SHELL", "/bin/sh");
                return;
        }
        set_var(e, "HOME", pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/");
        set_var(e, "USER", pw->pw_name);
        set_var(e, "LOGNAME", pw->pw_name);
        set_var(e, "SHELL", pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
}

/* A --env NAME (without a value) names it: the user passes it on purpose. */
static bool passed_on_purpose(const struct config *cfg, const char *name, size_t len)
{
        for (size_t i = 0; i < cfg->n_env_ops; i++)
                if (strlen(cfg->env_ops[i].arg) == len &&
                    strncmp(cfg->env_ops[i].arg, name, len) == 0)
                        return true;
        return false;
}

void env_report_removed(char *const *host, const struct config *cfg, FILE *out)
{
        size_t n = 0;

        if (cfg->clear_env)
                return;
        for (char *const *p = host; p && *p; p++) {
                size_t len = name_len(*p);

                if (!strchr(*p, '=') || !env_is_secret(strndupa(*p, len)) ||
                    passed_on_purpose(cfg, *p, len))
                        continue;
                fprintf(out, "%s%.*s", n++ ? ", " : "stockade: environment: removed ", (int)len,
                        *p);
        }
        if (n)
                fprintf(out, " (credentials; --env NAME passes one on)\n");
}

char **env_build(char *const *host, const struct config *cfg)
{
        struct env_vec e = {0};

        e.cap = 64;
        e.v = xcalloc(e.cap, sizeof(*e.v));
        if (!cfg->clear_env) {
                for (char *const *p = host; p && *p; p++)
                        if (strchr(*p, '=') && !env_is_secret(strndupa(*p, name_len(*p))))
                                vec_set(&e, *p);
                if (cfg->set_user)
                        set_identity(&e, cfg);
                if (cfg->workdir && host_lookup(host, "PWD", 3)) {
                        char cwd[PATH_MAX];

                        if (getcwd(cwd, sizeof(cwd)))
                                set_var(&e, "PWD", cwd);
                }
        }
        for (size_t i = 0; i < cfg->n_env_ops; i++) {
                const char *arg = cfg->env_ops[i].arg;
                if (strchr(arg, '=')) {
                        vec_set(&e, arg);
                } else {
                        const char *h = host_lookup(host, arg, strlen(arg));
                        if (h)
                                vec_set(&e, h);
                }
        }
        e.v[e.n] = NULL;
        return e.v;
}

void env_free(char **env)
{
        for (char **p = env; p && *p; p++)
                free(*p);
        free(env);
}

const char *env_get(char *const *env, const char *name)
{
        size_t len = strlen(name);

        for (; env && *env; env++)
                if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
                        return *env + len + 1;
        return NULL;
}

/*
 * Package managers' caches. In the default view your home is read-only, so npm and go stop
 * with EACCES on their caches there (and the others run without one). Each cache below whose
 * variable the command's environment leaves unset, and whose default place (beneath HOME) the
 * view does not let the command write, is pointed into `base`, the run's private /tmp or a
 * directory of the run's: empty at each run, gone at its end, nothing of the host's cache read
 * or written. `skip_if` names a variable that moves the default elsewhere (GOPATH for the
 * module cache): set, the user has chosen, and nothing is added.
 */
static const struct tool_cache {
        const char *var, *skip_if, *in_home, *in_base;
} tool_caches[] = {
        {"XDG_CACHE_HOME", NULL, ".cache", ".cache"}, /* pip, go build, uv, yarn, ... */
        {"npm_config_cache", "NPM_CONFIG_CACHE", ".npm", ".npm"},
        {"GOMODCACHE", "GOPATH", "go/pkg/mod", "go/pkg/mod"},
};

char **env_with_caches(char *const *env, const char *base,
                       bool (*writable)(const char *path, void *ctx), void *ctx, FILE *verbose)
{
        const char *home = env_get(env, "HOME");
        struct env_vec e = {0};
        size_t added = 0;

        for (const struct tool_cache *c = tool_caches; c < tool_caches + ARRAY_SIZE(tool_caches);
             c++) {
                char path[PATH_MAX];

                if (env_get(env, c->var) || (c->skip_if && env_get(env, c->skip_if)))
                        continue;
                if (home && home[0] == '/' &&
                    snprintf(path, sizeof(path), "%s/%s", home, c->in_home) < (int)sizeof(path) &&
                    writable(path, ctx))
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", base, c->in_base) >= (int)sizeof(path))
                        continue;
                if (!e.v)
                        for (char *const *p = env; p && *p; p++)
                                vec_set(&e, *p);
                set_var(&e, c->var, path);
                if (verbose)
                        fprintf(verbose, "%s%s=%s",
                                added ? ", " : "stockade: environment: ", c->var, path);
                added++;
        }
        if (verbose && added)
                fprintf(verbose,
                        strcmp(base, "/tmp") == 0
                                ? " (tool caches in the private /tmp: your home's are read-only "
                                  "here; set the variable to choose another)\n"
                                : " (tool caches in a directory of this run's, removed at its "
                                  "end: your home's are read-only here; set the variable to "
                                  "choose another)\n");
        return e.v;
}

char **env_with(char *const *env, const char *name, const char *value)
{
        struct env_vec e = {0};

        for (char *const *p = env; p && *p; p++)
                vec_set(&e, *p);
        set_var(&e, name, value);
        return e.v;
}

/*
 * The schema of a policy file: which keys exist, and for each the `stockade run` flag it
 * stands for. A value is applied through that flag's own code (cli_apply_option), so a key
 * and its flag accept the same values and mean the same thing; only the message is moved
 * behind the file's line and column. docs/policy.md documents every key.
 */
#include "supervisor/cli.h"
#include "supervisor/net/netpol.h"
#include "supervisor/policy/net.h"
#include "supervisor/policy/parse.h"
#include "supervisor/util.h"
#include "supervisor/vfs/mount.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The reason in a flag's message: "run: --cpu: `1.5` is not ..." -> "`1.5` is not ...". */
static const char *flag_reason(const char *msg, const char *flag)
{
        size_t n = strlen(flag);

        if (strncmp(msg, "run: --", 7) == 0 && strncmp(msg + 7, flag, n) == 0) {
                msg += 7 + n;
                msg += strspn(msg, ": ");
        }
        return msg;
}

/* Apply `value` (NULL for a flag without one) as `flag` would be applied. */
static int via_flag(struct pctx *c, yaml_node_t *n, const char *flag, const char *value,
                    const char *what)
{
        struct error e = {0};

        if (cli_apply_option(c->cfg, flag, value ? policy_own(c, value) : NULL, &e) == 0)
                return 0;
        return policy_error(c, n, "%s: %s", what, flag_reason(e.msg, flag));
}

static int key_flag(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        const char *s;

        if (policy_scalar(c, v, what, &s) < 0)
                return -1;
        return via_flag(c, v, k->flag, s, what);
}

/* true: as if the flag were given; false: as if it were not (the default). */
static int key_switch(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        bool on;

        if (policy_bool(c, v, what, &on) < 0)
                return -1;
        return on ? via_flag(c, v, k->flag, NULL, what) : 0;
}

static int key_each(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (policy_sequence(c, v, what) < 0)
                return -1;
        policy_each (v, i) {
                if (key_flag(c, k, policy_node(c, *i), what) < 0)
                        return -1;
        }
        return 0;
}

static int key_section(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        return policy_walk(c, v, k->sub, what);
}

/* Checked before the walk (parse.c), so that a newer file is refused as such. */
static int key_version(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        return 0;
}

/* -v counts: 0, 1 (-v) or 2 (-vv). */
static int key_verbose(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        const char *s;
        uint64_t n;

        if (policy_scalar(c, v, what, &s) < 0)
                return -1;
        if (parse_count(s, &n) < 0 || n > 2)
                return policy_error(c, v, "%s: `%s` is not 0, 1 or 2 (-v, -vv)", what, s);
        c->cfg->verbose = (int)n;
        return 0;
}

/* ---- filesystem ------------------------------------------------------------------------- */

struct fs_entry {
        const char *path, *source, *access;
        yaml_node_t *path_node, *source_node, *access_node;
};

static int fs_string(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        struct fs_entry *e = c->entry;
        const char *s;

        if (policy_scalar(c, v, what, &s) < 0)
                return -1;
        if (!*s && strcmp(k->name, "access") != 0) /* an empty access: fs_add names the choices */
                return policy_error(c, v, "%s: empty path", what);
        if (strcmp(k->name, "path") == 0)
                e->path = s, e->path_node = v;
        else if (strcmp(k->name, "source") == 0)
                e->source = s, e->source_node = v;
        else
                e->access = s, e->access_node = v;
        return 0;
}

static const struct pkey fs_keys[] = {
        {"path", fs_string, NULL, NULL},
        {"access", fs_string, NULL, NULL},
        {"source", fs_string, NULL, NULL},
};
static const struct ptable fs_table = {fs_keys, ARRAY_SIZE(fs_keys)};

static const struct {
        const char *access, *flag;
        enum vfs_mode mode;
} fs_modes[] = {
        {"ro", "ro", VFS_RO},    {"rw", "rw", VFS_RW},    {"hidden", "hide", VFS_HIDDEN},
        {"tmp", "tmp", VFS_TMP}, {"cow", "cow", VFS_COW},
};

/* The mount flag's own checks (~user, hiding /, PATH_MAX), now, with the line and column;
 * the host path is looked at when the run starts, as for the flag. */
static int fs_check_path(struct pctx *c, const struct fs_entry *e, enum vfs_mode mode,
                         const char *flag)
{
        struct vfs_mount m;
        struct error err = {0};
        char prefix[300];

        if (vfs_mount_parse(&m, e->path, mode, "/", c->home, &err) == 0) {
                vfs_mount_free(&m);
                return 0;
        }
        snprintf(prefix, sizeof(prefix), "--%s `%.200s%s`: ", flag, e->path,
                 strlen(e->path) > 200 ? "..." : "");
        return policy_error(c, e->path_node, "filesystem.path: %s",
                            strncmp(err.msg, prefix, strlen(prefix)) == 0 ? err.msg + strlen(prefix)
                                                                          : err.msg);
}

/* `source`, when given: the flag's HOST:SANDBOX (a ':' in it is refused like one in path). */
static int fs_spec(struct pctx *c, const struct fs_entry *e, const char **spec)
{
        char *s;

        *spec = e->path;
        if (!e->source || strcmp(e->source, e->path) == 0)
                return 0;
        if (strchr(e->source, ':'))
                return policy_error(c, e->source_node,
                                    "filesystem.source: a `:` in a path is not supported yet");
        if (!e->source[0])
                return policy_error(c, e->source_node, "filesystem.source: empty path");
        s = xcalloc(1, strlen(e->source) + strlen(e->path) + 2);
        sprintf(s, "%s:%s", e->source, e->path);
        *spec = policy_own(c, s);
        free(s);
        return 0;
}

/* A file's entries come first, so a flag for the same path, given after, wins (view.c). */
static int fs_add(struct pctx *c, const struct fs_entry *e, yaml_node_t *item)
{
        char origin[PATH_MAX + 300];
        const char *spec;
        size_t i;

        if (!e->path)
                return policy_error(c, item, "filesystem: an entry needs `path`");
        if (!e->access)
                return policy_error(c, item,
                                    "filesystem: an entry needs `access` (ro, rw, "
                                    "hidden, tmp or cow)");
        for (i = 0; i < ARRAY_SIZE(fs_modes) && strcmp(fs_modes[i].access, e->access); i++)
                ;
        if (i == ARRAY_SIZE(fs_modes))
                return policy_error(c, e->access_node,
                                    "filesystem.access: `%s` is not ro, rw, hidden, tmp or cow",
                                    e->access);
        if (e->source && (fs_modes[i].mode == VFS_HIDDEN || fs_modes[i].mode == VFS_TMP))
                return policy_error(c, e->source_node,
                                    "filesystem.source: an entry with access %s has no source",
                                    e->access);
        if (strchr(e->path, ':') && fs_modes[i].mode != VFS_HIDDEN && fs_modes[i].mode != VFS_TMP)
                return policy_error(c, e->path_node,
                                    "filesystem.path: a `:` in a path is not supported yet");
        if (fs_check_path(c, e, fs_modes[i].mode, fs_modes[i].flag) < 0)
                return -1;
        if (fs_spec(c, e, &spec) < 0)
                return -1;
        for (size_t j = 0; j < c->cfg->n_mounts; j++)
                if (strcmp(c->cfg->mounts[j].spec, spec) == 0)
                        return policy_error(c, e->path_node,
                                            "filesystem.path: `%s` has an entry already", e->path);
        if (via_flag(c, e->path_node, fs_modes[i].flag, spec, "filesystem.path") < 0)
                return -1;
        /* A missing host path is found when the run starts: say where the entry is. */
        snprintf(origin, sizeof(origin), "%s:%zu:%zu: filesystem `%.200s`", c->file,
                 e->path_node->start_mark.line + 1, e->path_node->start_mark.column + 1, e->path);
        c->cfg->mounts[c->cfg->n_mounts - 1].origin = policy_own(c, origin);
        return 0;
}

static int key_filesystem(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (policy_sequence(c, v, what) < 0)
                return -1;
        policy_each (v, i) {
                yaml_node_t *item = policy_node(c, *i);
                struct fs_entry e = {0};

                c->entry = &e;
                if (policy_walk(c, item, &fs_table, what) < 0 || fs_add(c, &e, item) < 0)
                        return -1;
        }
        return 0;
}

/* ---- env -------------------------------------------------------------------------------- */

/* One name, one entry: `pass` and `set` of the same name would depend on the host. */
static int env_add(struct pctx *c, yaml_node_t *n, const char *name, const char *value,
                   const char *what)
{
        size_t len = strlen(name);
        char *op;
        int r;

        if (!valid_env_name(name, len))
                return policy_error(c, n,
                                    "%s: `%s` is not a variable name (letters, digits and _, not "
                                    "starting with a digit)",
                                    what, name);
        for (size_t i = 0; i < c->cfg->n_env_ops; i++) {
                const char *a = c->cfg->env_ops[i].arg;
                if (strncmp(a, name, len) == 0 && (a[len] == '=' || !a[len]))
                        return policy_error(c, n, "%s: `%s` is named twice in env", what, name);
        }
        if (!value)
                return via_flag(c, n, "env", name, what);
        if (asprintf(&op, "%s=%s", name, value) < 0)
                abort();
        r = via_flag(c, n, "env", op, what);
        free(op);
        return r;
}

static int env_pass(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (policy_sequence(c, v, what) < 0)
                return -1;
        policy_each (v, i) {
                yaml_node_t *n = policy_node(c, *i);
                const char *name;

                if (policy_scalar(c, n, what, &name) < 0 || env_add(c, n, name, NULL, what) < 0)
                        return -1;
        }
        return 0;
}

/* `set` is a mapping of names, which are not keys of the schema: walked here. */
static int env_set(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (v->type != YAML_MAPPING_NODE)
                return policy_walk(c, v, NULL, what); /* the walk's own message */
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
             p++) {
                yaml_node_t *kn = policy_node(c, p->key), *vn = policy_node(c, p->value);
                const char *name, *value;

                if (policy_scalar(c, kn, what, &name) < 0 ||
                    policy_scalar(c, vn, what, &value) < 0 || env_add(c, kn, name, value, what) < 0)
                        return -1;
        }
        return 0;
}

static const struct pkey env_keys[] = {
        {"clear", key_switch, "clear-env", NULL},
        {"pass", env_pass, "env", NULL},
        {"set", env_set, "env", NULL},
};

/* A list of non-empty strings. */
static int strings(struct pctx *c, yaml_node_t *v, const char *what)
{
        if (policy_sequence(c, v, what) < 0)
                return -1;
        policy_each (v, i) {
                yaml_node_t *n = policy_node(c, *i);
                const char *s;

                if (policy_scalar(c, n, what, &s) < 0)
                        return -1;
                if (!*s)
                        return policy_error(c, n, "%s: an empty string", what);
        }
        return 0;
}

static const struct pkey exec_keys[] = {
        {"allow", key_each, "allow-exec", NULL},
        {"no_writable", key_switch, "no-exec-writable", NULL},
};
static const struct ptable exec_table = {exec_keys, ARRAY_SIZE(exec_keys)};

static int key_exec(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        return policy_walk(c, v, &exec_table, what);
}

/* Each rule goes to the network policy (net.h), which says what is wrong with it. */
static int net_rules(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (strings(c, v, what) < 0)
                return -1;
        policy_each (v, i) {
                yaml_node_t *n = policy_node(c, *i);
                char msg[512];

                if (policy_net_rule(c->cfg, (const char *)n->data.scalar.value,
                                    strcmp(k->name, "deny") == 0, msg, sizeof(msg)) < 0)
                        return policy_error(c, n, "%s: %s", what, msg);
        }
        return 0;
}

static int net_default(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        const char *s;

        if (policy_scalar(c, v, what, &s) < 0)
                return -1;
        if (strcmp(s, "deny") != 0 && strcmp(s, "allow") != 0)
                return policy_error(c, v, "%s: `%s` is not deny or allow", what, s);
        /* allow: no restriction, as --net host; deny: the rules only, as --net none. */
        c->cfg->net.mode = strcmp(s, "allow") == 0 ? NETPOL_MODE_HOST : NETPOL_MODE_NONE;
        return 0;
}

/* One address of a static name (net.h). */
static int dns_address(struct pctx *c, const char *name, yaml_node_t *v, const char *what)
{
        const char *ip;
        char msg[512];

        if (policy_scalar(c, v, what, &ip) < 0)
                return -1;
        if (policy_dns_static(c->cfg, name, ip, msg, sizeof(msg)) < 0)
                return policy_error(c, v, "%s: %s", what, msg);
        return 0;
}

/* name: address (or a list of them), for both levels: the names are the user's, not keys
 * of the schema. */
static int dns_static(struct pctx *c, const struct pkey *k, yaml_node_t *v, const char *what)
{
        if (v->type != YAML_MAPPING_NODE)
                return policy_walk(c, v, NULL, what);
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
             p++) {
                yaml_node_t *val = policy_node(c, p->value);
                const char *name;

                if (policy_scalar(c, policy_node(c, p->key), what, &name) < 0)
                        return -1;
                if (val->type != YAML_SEQUENCE_NODE)
                        return dns_address(c, name, val, what);
                /* name: [addr, addr]: several addresses */
                policy_each (val, i) {
                        if (dns_address(c, name, policy_node(c, *i), what) < 0)
                                return -1;
                }
        }
        return 0;
}

static const struct pkey dns_keys[] = {
        {"static", dns_static, NULL, NULL},
};
static const struct ptable dns_table = {dns_keys, ARRAY_SIZE(dns_keys)};

static const struct pkey net_keys[] = {
        {"default", net_default, NULL, NULL},   {"allow", net_rules, NULL, NULL},
        {"deny", net_rules, NULL, NULL},        {"dns", key_section, NULL, &dns_table},
        {"publish", key_each, "publish", NULL},
};

/* ---- the tables ------------------------------------------------------------------------- */

static const struct pkey limits_keys[] = {
        {"timeout", key_flag, "timeout", NULL},
        {"kill_after", key_flag, "kill-after", NULL},
        {"cpu", key_flag, "cpu", NULL},
        {"memory", key_flag, "memory", NULL},
        {"max_procs", key_flag, "max-procs", NULL},
        {"max_files", key_flag, "max-files", NULL},
        {"max_file_size", key_flag, "max-file-size", NULL},
        {"max_connections", key_flag, "max-connections", NULL},
};

static const struct pkey trace_keys[] = {
        {"file", key_flag, "trace", NULL},          {"level", key_flag, "trace-level", NULL},
        {"backtrace", key_flag, "backtrace", NULL}, {"drop", key_switch, "trace-drop", NULL},
        {"env", key_switch, "trace-env", NULL},
};

static const struct ptable limits_table = {limits_keys, ARRAY_SIZE(limits_keys)},
                           env_table = {env_keys, ARRAY_SIZE(env_keys)},
                           trace_table = {trace_keys, ARRAY_SIZE(trace_keys)},
                           net_table = {net_keys, ARRAY_SIZE(net_keys)};

static const struct pkey top_keys[] = {
        {"version", key_version, NULL, NULL},
        {"filesystem", key_filesystem, NULL, NULL},
        {"exec", key_exec, NULL, NULL},
        {"network", key_section, NULL, &net_table},
        {"limits", key_section, NULL, &limits_table},
        {"env", key_section, NULL, &env_table},
        {"trace", key_section, NULL, &trace_table},
        {"user", key_flag, "user", NULL},
        {"workdir", key_flag, "workdir", NULL},
        {"tty", key_flag, "tty", NULL},
        {"mode", key_flag, "mode", NULL},
        {"allow_degraded", key_switch, "allow-degraded", NULL},
        {"fast", key_switch, "fast", NULL},
        {"pass_fds", key_each, "pass-fd", NULL},
        {"verbose", key_verbose, NULL, NULL},
        {"quiet", key_switch, "quiet", NULL},
};

const struct ptable policy_top = {top_keys, ARRAY_SIZE(top_keys)};

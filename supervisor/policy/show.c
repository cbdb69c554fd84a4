/*
 * `stockade policy show`: the effective policy (file + flags) printed as a policy file,
 * written with libyaml's emitter so that every value is quoted as YAML needs and reads back
 * as the same text. Every key is printed, defaults included, so the output is the whole
 * policy a run would get.
 */
#include "supervisor/cli.h"
#include "supervisor/net/netpol.h"
#include "supervisor/policy/policy.h"
#include "supervisor/trace.h"
#include "supervisor/util.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/walls.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

struct emit {
        yaml_emitter_t e;
        bool failed;
};

static void emit(struct emit *m, yaml_event_t *ev)
{
        if (m->failed)
                yaml_event_delete(ev);
        else if (!yaml_emitter_emit(&m->e, ev)) /* takes the event, also on failure */
                m->failed = true;
}

static void text(struct emit *m, const char *s, yaml_scalar_style_t style)
{
        yaml_event_t ev;

        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                     style);
        emit(m, &ev);
}

static void start(struct emit *m, bool mapping, bool flow)
{
        yaml_event_t ev;

        if (mapping)
                yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                    flow ? YAML_FLOW_MAPPING_STYLE
                                                         : YAML_BLOCK_MAPPING_STYLE);
        else
                yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                     flow ? YAML_FLOW_SEQUENCE_STYLE
                                                          : YAML_BLOCK_SEQUENCE_STYLE);
        emit(m, &ev);
}

static void end(struct emit *m, bool mapping)
{
        yaml_event_t ev;

        if (mapping)
                yaml_mapping_end_event_initialize(&ev);
        else
                yaml_sequence_end_event_initialize(&ev);
        emit(m, &ev);
}

static void pair(struct emit *m, const char *key, const char *value)
{
        text(m, key, YAML_PLAIN_SCALAR_STYLE);
        text(m, value, YAML_ANY_SCALAR_STYLE);
}

static void pair_bool(struct emit *m, const char *key, bool v)
{
        pair(m, key, v ? "true" : "false");
}

static void pair_u64(struct emit *m, const char *key, uint64_t v)
{
        char buf[32];

        snprintf(buf, sizeof(buf), "%" PRIu64, v);
        pair(m, key, buf);
}

/* The largest unit that divides v exactly, so that reading it back gives v. */
static void pair_unit(struct emit *m, const char *key, uint64_t v, const uint64_t *mul,
                      const char *const *suffix, size_t n)
{
        char buf[32];
        size_t i = 0;

        while (v && i + 1 < n && v % mul[i + 1] == 0)
                i++;
        snprintf(buf, sizeof(buf), "%" PRIu64 "%s", v / mul[i], v ? suffix[i] : "");
        pair(m, key, buf);
}

static void pair_ms(struct emit *m, const char *key, uint64_t ms)
{
        static const uint64_t mul[] = {1, 1000, 60000, 3600000};
        static const char *const suffix[] = {"ms", "s", "m", "h"};

        pair_unit(m, key, ms, mul, suffix, ARRAY_SIZE(mul));
}

static void pair_size(struct emit *m, const char *key, uint64_t v)
{
        static const uint64_t mul[] = {1, 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40};
        static const char *const suffix[] = {"", "K", "M", "G", "T"};

        pair_unit(m, key, v, mul, suffix, ARRAY_SIZE(mul));
}

/* The directory the command starts in, where relative paths are taken: --workdir (itself
 * relative to the current directory) or the current directory. */
static int start_dir(char out[PATH_MAX], const struct config *cfg, struct error *err)
{
        char cwd[PATH_MAX], joined[2 * PATH_MAX + 2];

        if (!getcwd(cwd, sizeof(cwd)))
                return make_error(err, errno, "policy show: the current directory");
        if (!cfg->workdir)
                return vfs_path_normalize(out, PATH_MAX, cwd) < 0 ? -1 : 0;
        snprintf(joined, sizeof(joined), "%s/%s", cfg->workdir[0] == '/' ? "" : cwd, cfg->workdir);
        if (vfs_path_normalize(out, PATH_MAX, joined) < 0)
                return make_error(err, 0, "policy show: workdir `%s` is too long", cfg->workdir);
        return 0;
}

static enum vfs_mode flag_mode(const char *flag)
{
        static const char *const flags[] = {[VFS_RO] = "ro",
                                            [VFS_RW] = "rw",
                                            [VFS_TMP] = "tmp",
                                            [VFS_HIDDEN] = "hide",
                                            [VFS_COW] = "cow"};

        for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
                if (flags[i] && strcmp(flags[i], flag) == 0)
                        return (enum vfs_mode)i;
        return VFS_HIDDEN;
}

static int show_filesystem(struct emit *m, const struct config *cfg, const char *base,
                           struct error *err)
{
        if (!cfg->n_mounts)
                return 0;
        text(m, "filesystem", YAML_PLAIN_SCALAR_STYLE);
        start(m, false, false);
        for (size_t i = 0; i < cfg->n_mounts; i++) {
                struct vfs_mount v;

                if (vfs_mount_parse(&v, cfg->mounts[i].spec, flag_mode(cfg->mounts[i].flag), base,
                                    walls_user_home(), err) < 0)
                        return -1;
                start(m, true, true);
                pair(m, "path", v.sandbox);
                if (v.host && strcmp(v.host, v.sandbox) != 0)
                        pair(m, "source", v.host);
                pair(m, "access", vfs_mount_mode_name(v.mode));
                end(m, true);
                vfs_mount_free(&v);
        }
        end(m, false);
        return 0;
}

static void show_limits(struct emit *m, const struct limits *l, uint64_t kill_after_ms)
{
        text(m, "limits", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        pair_ms(m, "timeout", l->timeout_ms);
        pair_ms(m, "kill_after", kill_after_ms);
        pair_ms(m, "cpu", l->cpu_s * 1000);
        pair_size(m, "memory", l->memory);
        pair_u64(m, "max_procs", l->max_procs);
        pair_u64(m, "max_files", l->max_files);
        pair_size(m, "max_file_size", l->max_file_size);
        pair_u64(m, "max_connections", l->max_connections);
        end(m, true);
}

/* One address of a static name, as written (IPv4 without its mapped prefix). */
static void static_addr(struct emit *m, const struct netpol_addr *a)
{
        char buf[INET6_ADDRSTRLEN];

        if (netpol_addr_is_v4(a))
                inet_ntop(AF_INET, a->a + 12, buf, sizeof(buf));
        else
                inet_ntop(AF_INET6, a->a, buf, sizeof(buf));
        text(m, buf, YAML_PLAIN_SCALAR_STYLE);
}

/* network.dns.static: each name once, with the list of its addresses. */
static void show_dns(struct emit *m, const struct netpol *net)
{
        text(m, "dns", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        text(m, "static", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        for (size_t i = 0; i < net->n_statics; i++) {
                bool seen = false;

                for (size_t j = 0; j < i; j++)
                        seen |= strcmp(net->statics[j].name, net->statics[i].name) == 0;
                if (seen)
                        continue;
                text(m, net->statics[i].name, YAML_PLAIN_SCALAR_STYLE);
                start(m, false, true);
                for (size_t j = i; j < net->n_statics; j++)
                        if (strcmp(net->statics[j].name, net->statics[i].name) == 0)
                                static_addr(m, &net->statics[j].addr);
                end(m, false);
        }
        end(m, true);
        end(m, true);
}

static void show_network(struct emit *m, const struct netpol *net)
{
        text(m, "network", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        pair(m, "default", net->mode == NETPOL_MODE_HOST ? "allow" : "deny");
        for (int deny = 0; deny <= 1; deny++) {
                text(m, deny ? "deny" : "allow", YAML_PLAIN_SCALAR_STYLE);
                start(m, false, true);
                for (size_t i = 0; i < net->n; i++)
                        if (net->rules[i].deny == (bool)deny)
                                text(m, net->rules[i].spec, YAML_ANY_SCALAR_STYLE);
                end(m, false);
        }
        if (net->n_statics)
                show_dns(m, net);
        if (net->n_publish) {
                text(m, "publish", YAML_PLAIN_SCALAR_STYLE);
                start(m, false, true);
                for (size_t i = 0; i < net->n_publish; i++) {
                        char spec[16];

                        snprintf(spec, sizeof(spec), "%u:%u", net->publish[i].host,
                                 net->publish[i].sandbox);
                        text(m, spec, YAML_SINGLE_QUOTED_SCALAR_STYLE);
                }
                end(m, false);
        }
        end(m, true);
}

/* The op that decides NAME: the last one naming it (env.c applies them in order). */
static const char *env_last(const struct config *cfg, size_t i)
{
        const char *a = cfg->env_ops[i].arg;
        size_t len = strcspn(a, "=");

        for (size_t j = i + 1; j < cfg->n_env_ops; j++) {
                const char *b = cfg->env_ops[j].arg;
                if (strncmp(a, b, len) == 0 && (b[len] == '=' || !b[len]))
                        return NULL; /* a later op decides */
        }
        return a;
}

static void show_env(struct emit *m, const struct config *cfg)
{
        text(m, "env", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        pair_bool(m, "clear", cfg->clear_env);
        text(m, "pass", YAML_PLAIN_SCALAR_STYLE);
        start(m, false, true);
        for (size_t i = 0; i < cfg->n_env_ops; i++)
                if (env_last(cfg, i) && !strchr(cfg->env_ops[i].arg, '='))
                        text(m, cfg->env_ops[i].arg, YAML_ANY_SCALAR_STYLE);
        end(m, false);
        text(m, "set", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        for (size_t i = 0; i < cfg->n_env_ops; i++) {
                const char *a = env_last(cfg, i), *eq = a ? strchr(a, '=') : NULL;
                if (!eq)
                        continue;
                text(m, strndupa(a, (size_t)(eq - a)), YAML_PLAIN_SCALAR_STYLE);
                /* quoted: an empty value or "null" must not read back as YAML's null */
                text(m, eq + 1, YAML_SINGLE_QUOTED_SCALAR_STYLE);
        }
        end(m, true);
        end(m, true);
}

static void show_exec(struct emit *m, const struct config *cfg)
{
        text(m, "exec", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        if (cfg->n_exec_allow) {
                text(m, "allow", YAML_PLAIN_SCALAR_STYLE);
                start(m, false, false);
                for (size_t i = 0; i < cfg->n_exec_allow; i++)
                        text(m, cfg->exec_allow[i], YAML_PLAIN_SCALAR_STYLE);
                end(m, false);
        }
        pair_bool(m, "no_writable", cfg->exec_no_writable);
        end(m, true);
}

/* A relative trace file is opened from the directory the command starts in. */
static void show_trace(struct emit *m, const struct config *cfg, const char *base)
{
        static const char *const levels[] = {
                [TRACE_LEVEL_SECURITY] = "security", [TRACE_LEVEL_ALL] = "all"};
        static const char *const bts[] = {
                [TRACE_BT_DENIED] = "denied", [TRACE_BT_ALL] = "all", [TRACE_BT_NEVER] = "never"};

        text(m, "trace", YAML_PLAIN_SCALAR_STYLE);
        start(m, true, false);
        if (cfg->trace_path) {
                bool unix_sock = strncmp(cfg->trace_path, "unix:", 5) == 0;
                const char *p = cfg->trace_path + (unix_sock ? 5 : 0);
                char joined[2 * PATH_MAX + 8], abs[PATH_MAX + 8];

                snprintf(joined, sizeof(joined), "%s/%s", p[0] == '/' ? "" : base, p);
                strcpy(abs, unix_sock ? "unix:" : "");
                if (vfs_path_normalize(abs + strlen(abs), PATH_MAX, joined) < 0)
                        snprintf(abs, sizeof(abs), "%s", cfg->trace_path);
                pair(m, "file", abs);
        }
        pair(m, "level", levels[cfg->trace_level == TRACE_LEVEL_ALL]);
        pair(m, "backtrace",
             (unsigned)cfg->trace_backtrace < ARRAY_SIZE(bts) ? bts[cfg->trace_backtrace]
                                                              : "never");
        pair_bool(m, "drop", cfg->trace_drop);
        pair_bool(m, "env", cfg->trace_env);
        end(m, true);
}

static void show_process(struct emit *m, const struct config *cfg, const char *base)
{
        static const char *const ttys[] = {
                [TTY_AUTO] = "auto", [TTY_ALWAYS] = "always", [TTY_NEVER] = "never"};
        char buf[64];

        if (cfg->set_user && !cfg->default_user) {
                snprintf(buf, sizeof(buf), "%u:%u", (unsigned)cfg->uid, (unsigned)cfg->gid);
                pair(m, "user", buf);
        }
        if (cfg->workdir)
                pair(m, "workdir", base);
        pair(m, "tty", ttys[cfg->tty]);
        pair(m, "mode", cfg->mode == MODE_AUDIT ? "audit" : "enforce");
        pair_bool(m, "allow_degraded", cfg->allow_degraded);
        pair_bool(m, "fast", cfg->fast);
        if (cfg->n_pass_fds) {
                text(m, "pass_fds", YAML_PLAIN_SCALAR_STYLE);
                start(m, false, true);
                for (size_t i = 0; i < cfg->n_pass_fds; i++) {
                        snprintf(buf, sizeof(buf), "%d", cfg->pass_fds[i]);
                        text(m, buf, YAML_PLAIN_SCALAR_STYLE);
                }
                end(m, false);
        }
        pair_u64(m, "verbose", (uint64_t)cfg->verbose);
        pair_bool(m, "quiet", cfg->quiet);
}

int policy_show(FILE *out, const struct config *cfg, struct error *err)
{
        struct emit m = {0};
        yaml_event_t ev;
        char base[PATH_MAX];
        int r = 0;

        if (start_dir(base, cfg, err) < 0)
                return -1;
        yaml_emitter_initialize(&m.e);
        yaml_emitter_set_output_file(&m.e, out);
        yaml_emitter_set_unicode(&m.e, 1);
        yaml_emitter_set_width(&m.e, 100);
        yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
        emit(&m, &ev);
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
        emit(&m, &ev);
        start(&m, true, false);
        pair(&m, "version", "1");
        r = show_filesystem(&m, cfg, base, err);
        show_network(&m, &cfg->net);
        show_limits(&m, &cfg->limits, cfg->kill_after_ms);
        show_env(&m, cfg);
        show_exec(&m, cfg);
        show_trace(&m, cfg, base);
        show_process(&m, cfg, base);
        end(&m, true);
        yaml_document_end_event_initialize(&ev, 1);
        emit(&m, &ev);
        yaml_stream_end_event_initialize(&ev);
        emit(&m, &ev);
        yaml_emitter_flush(&m.e);
        if (m.failed && r == 0)
                r = make_error(err, 0, "policy show: %s",
                               m.e.problem ? m.e.problem : "cannot write the policy");
        yaml_emitter_delete(&m.e);
        return r;
}

static const char usage_policy[] =
        "Usage: stockade policy show [--policy FILE] [OPTIONS]\n"
        "\n"
        "Print the policy that `stockade run` would get from the policy file and the flags\n"
        "(the flags override the file), as a policy file: every key with its effective value,\n"
        "relative paths made absolute. `stockade run --policy` reads it back as the same\n"
        "policy. OPTIONS are those of `stockade run` (stockade help run); no command is run.\n"
        "The keys: docs/policy.md.\n"
        "\n"
        "Examples:\n"
        "  stockade policy show --policy agent.yaml\n"
        "  stockade policy show --policy agent.yaml --timeout 1m > effective.yaml\n"
        "  stockade policy show --hide ~/work/.env --memory 2G\n";

int policy_cli_main(int argc, char **argv)
{
        struct error err = {0};
        struct config cfg;
        char **args;
        int r;

        if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
            strcmp(argv[1], "help") == 0) {
                fputs(usage_policy, argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_STOCKADE : 0;
        }
        if (strcmp(argv[1], "show") != 0) {
                fprintf(stderr,
                        "stockade: policy: unknown command `%s` (see stockade help "
                        "policy)\n",
                        argv[1]);
                return EXIT_STOCKADE;
        }
        for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        fputs(usage_policy, stdout);
                        return 0;
                }
        args = xcalloc((size_t)argc, sizeof(*args));
        args[0] = "policy show";
        memcpy(args + 1, argv + 2, (size_t)(argc - 2) * sizeof(*args));
        r = cli_parse_flags(argc - 1, args, &cfg, &err);
        if (r == 0)
                r = policy_show(stdout, &cfg, &err);
        if (r < 0)
                error_print(&err);
        cli_config_free(&cfg);
        free(args);
        return r < 0 ? EXIT_STOCKADE : 0;
}

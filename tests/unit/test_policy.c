/*
 * The policy file (supervisor/policy/): every key and the field it sets, every error with its
 * exact line and column, flags overriding the file, and `policy show` read back as the same
 * policy. Table-driven: input text, expected config or expected one-line message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/cli.h"
#include "supervisor/options.h"
#include "supervisor/net/netpol.h"
#include "supervisor/policy/net.h"
#include "supervisor/policy/policy.h"
#include "supervisor/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test_policy.XXXXXX";
static char path[64];

static void write_text(const char *file, const char *text)
{
        FILE *f = fopen(file, "w");

        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* stockade run --policy FILE [flags...] -- true, with FILE holding `text`. */
static int load(struct config *cfg, struct error *err, const char *text, const char *const *flags)
{
        static char *argv[32];
        int argc = 0;

        write_text(path, text);
        argv[argc++] = "run";
        argv[argc++] = "--policy";
        argv[argc++] = path;
        for (; flags && *flags; flags++)
                argv[argc++] = (char *)*flags;
        argv[argc++] = "--";
        argv[argc++] = "true";
        argv[argc] = NULL;
        memset(err, 0, sizeof(*err));
        return cli_parse_run(argc, argv, cfg, err);
}

static const char *mount_spec(const struct config *cfg, const char *flag, size_t nth)
{
        for (size_t i = 0; i < cfg->n_mounts; i++)
                if (strcmp(cfg->mounts[i].flag, flag) == 0 && nth-- == 0)
                        return cfg->mounts[i].spec;
        return NULL;
}

static void every_key(void **state)
{
        struct config cfg;
        struct error err;
        char text[2048];
        int fd = dup(2); /* an inherited fd to pass on */

        snprintf(text, sizeof(text),
                 "version: 1\n"
                 "filesystem:\n"
                 "  - { path: /, access: ro }\n"
                 "  - { path: /srv/data, source: /srv/data, access: rw }\n"
                 "  - { path: ~/.ssh, access: hidden }\n"
                 "  - { path: 'keys/*.key', access: hidden }\n"
                 "  - { path: /data, source: /srv/q3, access: ro }\n"
                 "limits:\n"
                 "  timeout: 10m\n"
                 "  kill_after: 3s\n"
                 "  cpu: 5m\n"
                 "  memory: 2G\n"
                 "  max_procs: 256\n"
                 "  max_files: 1024\n"
                 "  max_file_size: 1G\n"
                 "env: { clear: true, pass: [PATH, HOME], set: { CI: \"1\", EMPTY: '' } }\n"
                 "trace: { file: /var/tmp/../log/run.trace, level: all, backtrace: denied,\n"
                 "         drop: true, env: true }\n"
                 "user: 65534:65534\n"
                 "workdir: /tmp\n"
                 "tty: never\n"
                 "mode: audit\n"
                 "allow_degraded: true\n"
                 "fast: true\n"
                 "pass_fds: [%d]\n"
                 "verbose: 2\n"
                 "quiet: true\n",
                 fd);
        assert_int_equal(load(&cfg, &err, text, NULL), 0);
        assert_int_equal(cfg.n_mounts, 5);
        assert_string_equal(mount_spec(&cfg, "ro", 0), "/");
        assert_string_equal(mount_spec(&cfg, "ro", 1), "/srv/q3:/data");
        assert_string_equal(mount_spec(&cfg, "rw", 0), "/srv/data");
        assert_string_equal(mount_spec(&cfg, "hide", 0), "~/.ssh");
        assert_string_equal(mount_spec(&cfg, "hide", 1), "keys/*.key");
        assert_int_equal(cfg.limits.timeout_ms, 600000);
        assert_int_equal(cfg.kill_after_ms, 3000);
        assert_int_equal(cfg.limits.cpu_s, 300);
        assert_int_equal(cfg.limits.memory, 2ull << 30);
        assert_int_equal(cfg.limits.max_procs, 256);
        assert_int_equal(cfg.limits.max_files, 1024);
        assert_int_equal(cfg.limits.max_file_size, 1ull << 30);
        assert_true(cfg.clear_env);
        assert_int_equal(cfg.n_env_ops, 4);
        assert_string_equal(cfg.env_ops[0].arg, "PATH");
        assert_string_equal(cfg.env_ops[1].arg, "HOME");
        assert_string_equal(cfg.env_ops[2].arg, "CI=1");
        assert_string_equal(cfg.env_ops[3].arg, "EMPTY=");
        assert_string_equal(cfg.trace_path, "/var/tmp/../log/run.trace");
        assert_int_equal(cfg.trace_level, TRACE_LEVEL_ALL);
        assert_int_equal(cfg.trace_backtrace, TRACE_BT_DENIED);
        assert_true(cfg.trace_drop);
        assert_true(cfg.trace_env);
        assert_true(cfg.set_user);
        assert_false(cfg.default_user);
        assert_int_equal(cfg.uid, 65534);
        assert_int_equal(cfg.gid, 65534);
        assert_string_equal(cfg.workdir, "/tmp");
        assert_int_equal(cfg.tty, TTY_NEVER);
        assert_int_equal(cfg.mode, MODE_AUDIT);
        assert_true(cfg.allow_degraded);
        assert_true(cfg.fast);
        assert_int_equal(cfg.n_pass_fds, 1);
        assert_int_equal(cfg.pass_fds[0], fd);
        assert_int_equal(cfg.verbose, 2);
        assert_true(cfg.quiet);
        cli_config_free(&cfg);
        close(fd);

        /* Block style, comments, quoted numbers, false switches: the same reading. */
        assert_int_equal(load(&cfg, &err,
                              "# a policy\nversion: \"1\"\nlimits:\n  max_procs: '64'  # tasks\n"
                              "env:\n  clear: false\ntrace:\n  drop: false\n",
                              NULL),
                         0);
        assert_int_equal(cfg.limits.max_procs, 64);
        assert_false(cfg.clear_env);
        assert_false(cfg.trace_drop);
        cli_config_free(&cfg);
}

/* The file sets what no flag changes; flags override the rest. */
static void flags_override(void **state)
{
        static const char text[] = "version: 1\n"
                                   "filesystem: [{path: /srv, access: ro}, {path: /x, access: "
                                   "hidden}]\n"
                                   "limits: {timeout: 10m, memory: 1G}\n"
                                   "env: {set: {CI: '1', KEEP: yes}}\n"
                                   "mode: audit\n"
                                   "tty: never\n";
        const char *flags[] = {"--timeout", "1m",     "--env",   "CI=2", "--rw",
                               "/srv",      "--mode", "enforce", NULL};
        struct config cfg;
        struct error err;

        assert_int_equal(load(&cfg, &err, text, flags), 0);
        assert_int_equal(cfg.limits.timeout_ms, 60000);  /* the flag's */
        assert_int_equal(cfg.limits.memory, 1ull << 30); /* the file's */
        assert_int_equal(cfg.mode, MODE_ENFORCE);        /* the flag's */
        assert_int_equal(cfg.tty, TTY_NEVER);            /* the file's */
        /* Repeatable: the file's first, the flags' after, so a flag's wins where both name
         * the same variable or path (env.c and the view apply them in order). */
        assert_int_equal(cfg.n_env_ops, 3);
        assert_string_equal(cfg.env_ops[0].arg, "CI=1");
        assert_string_equal(cfg.env_ops[1].arg, "KEEP=yes");
        assert_string_equal(cfg.env_ops[2].arg, "CI=2");
        assert_int_equal(cfg.n_mounts, 3);
        assert_string_equal(cfg.mounts[0].flag, "ro");
        assert_string_equal(cfg.mounts[1].flag, "hide");
        assert_string_equal(cfg.mounts[2].flag, "rw");
        assert_string_equal(cfg.mounts[2].spec, "/srv");
        cli_config_free(&cfg);

        /* --policy may stand anywhere among the flags: the flags still win. */
        const char *after[] = {"run", "--timeout", "5s", "--policy", path, "--", "true", NULL};
        write_text(path, text);
        memset(&err, 0, sizeof(err));
        assert_int_equal(cli_parse_run(7, (char **)after, &cfg, &err), 0);
        assert_int_equal(cfg.limits.timeout_ms, 5000);
        cli_config_free(&cfg);
}

static void errors(void **state)
{
        static const struct {
                const char *text;
                const char *msg; /* after "FILE:" */
        } cases[] = {
                /* the document */
                {"limits: {}\n", "1:1: no `version: 1` (the first line of a policy file)"},
                {"version: 2\n",
                 "1:10: version: `2` is not a version this stockade reads (only 1)"},
                {"version:\n", "1:9: version: no value given"},
                {"- version\n", "1:1: expected a mapping (key: value) at the top, not a list"},
                {"version: 1\n---\nversion: 1\n",
                 "2:1: a second YAML document: a policy file holds one"},
                {"version: 1\nx: &a 1\n",
                 "2:4: anchor `&a`: anchors and aliases are not supported; "
                 "write the value out"},
                {"version: 1\nlimits: {timeout: 10\n",
                 "3:1: YAML syntax: did not find expected ',' or '}' (while parsing a flow mapping "
                 "at "
                 "line 2)"},
                {"version: 1\n\tlimits: {}\n", "2:1: YAML syntax: found a tab character that "
                                               "violates indentation (while scanning a "
                                               "plain scalar at line 1)"},
                {"version: 1\nmode: \xff\n", "2:7: YAML syntax: invalid leading UTF-8 octet"},
                {"version: 1\nmode: \"a\x01\"\n",
                 "2:9: YAML syntax: control characters are not allowed"},
                {"version: 1\nlimits: [\n", "3:1: YAML syntax: did not find expected node content "
                                            "(while parsing a flow node at line 3)"},
                /* keys */
                {"version: 1\nlimit: {}\n", "2:1: unknown key `limit` (did you mean `limits`?)"},
                {"version: 1\nfrobnicate: 1\n", "2:1: unknown key `frobnicate`"},
                {"version: 1\nlimits: {timeout: 1, timeot: 2}\n",
                 "2:22: limits: unknown key `timeot` (did you mean `timeout`?)"},
                {"version: 1\nlimits:\n  memory: 2G\n  memory: 3G\n",
                 "4:3: limits: `memory` given twice (first at line 3)"},
                {"version: 1\nmode: audit\nmode: enforce\n",
                 "3:1: `mode` given twice (first at line 2)"},
                {"version: 1\n[a]: 1\n", "2:1: a key must be a name, not a list"},
                /* types */
                {"version: 1\nlimits: 5\n",
                 "2:9: limits: expected a mapping (key: value), not a value"},
                {"version: 1\nlimits: {timeout: [1]}\n",
                 "2:19: limits.timeout: expected a value, not a list"},
                {"version: 1\nfilesystem: {path: /x}\n",
                 "2:13: filesystem: expected a list, not a mapping"},
                {"version: 1\nenv: {pass: PATH}\n", "2:13: env.pass: expected a list, not a value"},
                {"version: 1\nenv: {set: [A]}\n",
                 "2:12: env.set: expected a mapping (key: value), not a list"},
                {"version: 1\nallow_degraded: yes\n",
                 "2:17: allow_degraded: `yes` is not true or false"},
                {"version: 1\nfast: 1\n", "2:7: fast: `1` is not true or false"},
                {"version: 1\nquiet: ~\n", "2:8: quiet: no value given"},
                {"version: 1\nverbose: 3\n", "2:10: verbose: `3` is not 0, 1 or 2 (-v, -vv)"},
                /* values, through the flags' own parsers */
                {"version: 1\nlimits: {timeout: 10x}\n",
                 "2:19: limits.timeout: `10x` is not valid; expected a duration such as 30, 500ms, "
                 "1.5m or 2h"},
                {"version: 1\nlimits: {cpu: 1.5}\n",
                 "2:15: limits.cpu: `1.5` is not a whole number of seconds (the CPU limit counts "
                 "seconds)"},
                {"version: 1\nlimits: {memory: 2Q}\n", "2:18: limits.memory: `2Q` is not valid; "
                                                       "expected a size such as 4096, 512K, 2M or "
                                                       "1G"},
                {"version: 1\nlimits: {max_procs: -1}\n",
                 "2:21: limits.max_procs: `-1` is not valid; expected a whole number"},
                {"version: 1\nlimits: {max_files: 2}\n",
                 "2:21: limits.max_files: 2 is too low for the sandbox to start (stdin, stdout, "
                 "stderr and stockade's hand-off need 4)"},
                {"version: 1\nlimits: {kill_after: soon}\n",
                 "2:22: limits.kill_after: `soon` is not valid; expected a duration such as 30, "
                 "500ms, 1.5m or 2h"},
                {"version: 1\nlimits: {max_file_size: 1.5G}\n",
                 "2:25: limits.max_file_size: `1.5G` is not valid; expected a size such as 4096, "
                 "512K, 2M or 1G"},
                {"version: 1\nmode: strict\n",
                 "2:7: mode: `strict` is not a mode; expected enforce or audit"},
                {"version: 1\ntty: yes\n", "2:6: tty: `yes` is not auto, always or never"},
                {"version: 1\nuser: x-no-such-user\n",
                 "2:7: user: `x-no-such-user` is not a known user or group"},
                {"version: 1\nworkdir: ''\n", "2:10: workdir: empty directory name"},
                {"version: 1\npass_fds: [1]\n",
                 "2:12: pass_fds: 1: fds 0, 1 and 2 are always passed"},
                {"version: 1\npass_fds: [999]\n", "2:12: pass_fds: 999: fd 999 is not open"},
                {"version: 1\ntrace: {level: everything}\n",
                 "2:16: trace.level: `everything`; expected security or all"},
                {"version: 1\ntrace: {backtrace: some}\n",
                 "2:20: trace.backtrace: `some`; expected denied, all or never"},
                {"version: 1\ntrace: {file: ''}\n", "2:15: trace.file: empty path"},
                /* env */
                {"version: 1\nenv: {pass: [1A]}\n",
                 "2:14: env.pass: `1A` is not a variable name (letters, digits and _, not starting "
                 "with a digit)"},
                {"version: 1\nenv: {set: {A=B: 1}}\n",
                 "2:13: env.set: `A=B` is not a variable name (letters, digits and _, not starting "
                 "with a digit)"},
                {"version: 1\nenv: {set: {A: }}\n", "2:16: env.set: no value given"},
                {"version: 1\nenv: {pass: [A], set: {A: 1}}\n",
                 "2:24: env.set: `A` is named twice in env"},
                {"version: 1\nenv: {pass: [A, A]}\n", "2:17: env.pass: `A` is named twice in env"},
                {"version: 1\nenv: {set: {A: \"a\\0b\"}}\n",
                 "2:16: env.set: the value holds a NUL byte"},
                /* filesystem */
                {"version: 1\nfilesystem:\n  - {access: ro}\n",
                 "3:5: filesystem: an entry needs `path`"},
                {"version: 1\nfilesystem:\n  - {path: /x}\n",
                 "3:5: filesystem: an entry needs `access` (ro, rw, hidden, tmp or cow)"},
                {"version: 1\nfilesystem:\n  - {path: /x, access: rx}\n",
                 "3:24: filesystem.access: `rx` is not ro, rw, hidden, tmp or cow"},
                {"version: 1\nfilesystem:\n  - {path: /x, acess: ro}\n",
                 "3:16: filesystem: unknown key `acess` (did you mean `access`?)"},
                {"version: 1\nfilesystem:\n  - {path: '', access: ro}\n",
                 "3:12: filesystem.path: empty path"},
                {"version: 1\nfilesystem:\n  - {path: /x, access: ''}\n",
                 "3:24: filesystem.access: `` is not ro, rw, hidden, tmp or cow"},
                {"version: 1\nfilesystem:\n  - {path: /x, source: '', access: ro}\n",
                 "3:24: filesystem.source: empty path"},
                {"version: 1\nfilesystem:\n  - {path: ~bob/x, access: hidden}\n",
                 "3:12: filesystem.path: only ~ and ~/ are expanded, not ~user"},
                {"version: 1\nfilesystem:\n  - {path: /, access: hidden}\n",
                 "3:12: filesystem.path: hiding / would leave nothing to run"},
                {"version: 1\nfilesystem:\n  - {path: /a:b, access: ro}\n",
                 "3:12: filesystem.path: a `:` in a path is not supported yet"},
                {"version: 1\nfilesystem:\n  - {path: /x, source: /y, access: hidden}\n",
                 "3:24: filesystem.source: an entry with access hidden has no source"},
                {"version: 1\nfilesystem:\n  - {path: /x, access: ro}\n  - {path: /x, access: "
                 "rw}\n",
                 "4:12: filesystem.path: `/x` has an entry already"},
                {"version: 1\nfilesystem:\n  - /x\n",
                 "3:5: filesystem: expected a mapping (key: value), not a value"},
                {"version: 1\nfilesystem:\n  - {path: /data, source: '/srv:q3', access: ro}\n",
                 "3:27: filesystem.source: a `:` in a path is not supported yet"},
                {"version: 1\nexec: {allow: [/usr/bin/*], deny: []}\n",
                 "2:29: exec: unknown key `deny`"},
                {"version: 1\nexec: {allow: ['']}\n", "2:16: exec.allow: an empty path"},
                {"version: 1\nnetwork: {publish: ['80:x']}\n",
                 "2:21: network.publish: `80:x`: not [HOST_PORT:]PORT with ports 1-65535"},
                {"version: 1\nnetwork: {default: maybe}\n",
                 "2:20: network.default: `maybe` is not deny or allow"},
                {"version: 1\nnetwork: {allow: ['*:99999']}\n",
                 "2:19: network.allow: port 99999 is out of range (1-65535)"},
                {"version: 1\nnetwork: {deny: [10.0.0.0/33]}\n",
                 "2:18: network.deny: `/33` is not a prefix length (0-32)"},
                {"version: 1\nnetwork: {allow: [{host: pypi.org}]}\n",
                 "2:19: network.allow: expected a value, not a mapping"},
                {"version: 1\nnetwork: {dns: {static: {svc.internal: 127.0.0.300}}}\n",
                 "2:40: network.dns.static: `127.0.0.300` is not an IPv4 or IPv6 address"},
                {"version: 1\nnetwork: {dns: {static: {'bad name': 127.0.0.1}}}\n",
                 "2:38: network.dns.static: `bad name` is not a host name"},
                {"version: 1\nnetwork: {dns: {dynamic: 1}}\n",
                 "2:17: network.dns: unknown key `dynamic`"},
                {"version: 1\nlimits: {max_connections: lots}\n",
                 "2:27: limits.max_connections: `lots` is not valid; expected a whole number"},
                /* a real mistake is reported before a "not yet" met earlier in the file */
                {"version: 1\nexec: {allow: [/bin/*]}\nmode: strict\n",
                 "3:7: mode: `strict` is not a mode; expected enforce or audit"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct config cfg;
                struct error err;
                char want[1200];

                snprintf(want, sizeof(want), "%s:%s", path, cases[i].msg);
                if (load(&cfg, &err, cases[i].text, NULL) != -1)
                        fail_msg("case %zu (%s): accepted", i, cases[i].text);
                if (strcmp(err.msg, want) != 0)
                        fail_msg("case %zu:\n got \"%s\"\nwant \"%s\"", i, err.msg, want);
                cli_config_free(&cfg);
        }
}

static void file_errors(void **state)
{
        struct config cfg;
        struct error err;
        char want[256], sub[80];
        const char *missing[] = {"run", "--policy", "/nonexistent/p.yaml", "--", "true", NULL};
        const char *twice[] = {"run", "--policy", path, "--policy", path, "--", "true", NULL};

        assert_int_equal(cli_parse_run(5, (char **)missing, &cfg, &err), -1);
        assert_string_equal(err.msg, "/nonexistent/p.yaml: cannot read the policy file");
        assert_int_equal(err.errnum, ENOENT);
        cli_config_free(&cfg);

        snprintf(sub, sizeof(sub), "%s/d", dir);
        assert_int_equal(mkdir(sub, 0700), 0);
        const char *is_dir[] = {"run", "--policy", sub, "--", "true", NULL};
        memset(&err, 0, sizeof(err));
        assert_int_equal(cli_parse_run(5, (char **)is_dir, &cfg, &err), -1);
        snprintf(want, sizeof(want), "%s: is a directory, not a policy file", sub);
        assert_string_equal(err.msg, want);
        cli_config_free(&cfg);
        rmdir(sub);

        assert_int_equal(load(&cfg, &err, "", NULL), -1);
        snprintf(want, sizeof(want), "%s: empty policy file (it needs at least `version: 1`)",
                 path);
        assert_string_equal(err.msg, want);
        cli_config_free(&cfg);
        assert_int_equal(load(&cfg, &err, "# only a comment\n", NULL), -1);
        assert_string_equal(err.msg, want);
        cli_config_free(&cfg);

        write_text(path, "version: 1\n");
        memset(&err, 0, sizeof(err));
        assert_int_equal(cli_parse_run(7, (char **)twice, &cfg, &err), -1);
        assert_string_equal(err.msg, "run: --policy given twice (one file per run)");
        cli_config_free(&cfg);
}

/* policy show's output, in a malloc'ed string. */
static char *show(const struct config *cfg)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct error err = {0};

        assert_non_null(f);
        if (policy_show(f, cfg, &err) < 0)
                fail_msg("policy_show: %s", err.msg);
        fclose(f);
        return buf;
}

static void assert_same_policy(const struct config *a, const struct config *b)
{
        assert_memory_equal(&a->limits, &b->limits, sizeof(a->limits));
        assert_int_equal(a->kill_after_ms, b->kill_after_ms);
        assert_int_equal(a->mode, b->mode);
        assert_int_equal(a->tty, b->tty);
        assert_int_equal(a->clear_env, b->clear_env);
        assert_int_equal(a->allow_degraded, b->allow_degraded);
        assert_int_equal(a->fast, b->fast);
        assert_int_equal(a->set_user, b->set_user);
        assert_int_equal(a->uid, b->uid);
        assert_int_equal(a->gid, b->gid);
        assert_int_equal(a->trace_level, b->trace_level);
        assert_int_equal(a->trace_backtrace, b->trace_backtrace);
        assert_int_equal(a->trace_drop, b->trace_drop);
        assert_int_equal(a->trace_env, b->trace_env);
        assert_int_equal(a->verbose, b->verbose);
        assert_int_equal(a->quiet, b->quiet);
        assert_int_equal(a->n_mounts, b->n_mounts);
        for (size_t i = 0; i < a->n_mounts; i++)
                assert_string_equal(a->mounts[i].flag, b->mounts[i].flag);
}

/* show(file + flags) read back gives the same policy, and shows the same text again. */
static void round_trip(void **state)
{
        static const struct {
                const char *text;
                const char *flags[8];
        } cases[] = {
                {"version: 1\n", {NULL}},
                {"version: 1\n"
                 "filesystem:\n  - {path: /, access: ro}\n  - {path: sub/dir, access: rw}\n"
                 "  - {path: ~/.ssh, access: hidden}\n  - {path: '/k/*.key', access: hidden}\n"
                 "limits: {timeout: 1500ms, cpu: 2m, memory: 3M, max_procs: 0, max_files: 64,\n"
                 "         max_file_size: 1025, kill_after: 0}\n"
                 "env: {clear: true, pass: [PATH], set: {EMPTY: '', N: 'null', Q: \"it's: #1\",\n"
                 "      T: 'true', NL: \"a\\nb\"}}\n"
                 "trace: {file: t/run.trace, level: all, backtrace: all, drop: true, env: true}\n"
                 "user: 1234:4321\nworkdir: /tmp\ntty: always\nmode: audit\n"
                 "allow_degraded: true\nfast: true\nverbose: 1\nquiet: true\n",
                 {NULL}},
                {"version: 1\nlimits: {timeout: 10m}\nenv: {set: {CI: '1'}}\n",
                 {"--timeout", "2h", "--env", "CI=2", "--env", "HOME", "--hide", "/opt/x"}},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *flags[9] = {0};
                struct config a, b;
                struct error err;
                char *first, *second;

                memcpy(flags, cases[i].flags, sizeof(cases[i].flags));
                if (load(&a, &err, cases[i].text, flags) != 0)
                        fail_msg("case %zu: %s", i, err.msg);
                first = show(&a);
                if (load(&b, &err, first, NULL) != 0)
                        fail_msg("case %zu: show's output refused: %s\n%s", i, err.msg, first);
                second = show(&b);
                if (strcmp(first, second) != 0)
                        fail_msg("case %zu: shown twice differently:\n%s---\n%s", i, first, second);
                assert_same_policy(&a, &b);
                cli_config_free(&a);
                cli_config_free(&b);
                free(first);
                free(second);
        }
}

/* What show prints: absolute paths (against the workdir), the flags' values, every key. */
static void show_text(void **state)
{
        const char *flags[] = {"--timeout", "90s", "--env", "CI=2", "--memory", "1536M", NULL};
        struct config cfg;
        struct error err;
        char *out;

        assert_int_equal(
                load(&cfg, &err,
                     "version: 1\nworkdir: /srv/w\nfilesystem: [{path: a/../b, access: ro}]\n"
                     "env: {set: {CI: '1'}}\n",
                     flags),
                0);
        out = show(&cfg);
        assert_non_null(strstr(out, "version: 1\n"));
        assert_non_null(strstr(out, "- {path: /srv/w/b, access: ro}\n"));
        assert_non_null(strstr(out, "  timeout: 90s\n"));
        assert_non_null(strstr(out, "  memory: 1536M\n"));
        assert_non_null(strstr(out, "  kill_after: 10s\n"));
        assert_non_null(strstr(out, "  max_procs: 4096\n"));
        assert_non_null(strstr(out, "    CI: '2'\n"));
        assert_null(strstr(out, "CI: '1'"));
        assert_non_null(strstr(out, "workdir: /srv/w\n"));
        assert_non_null(strstr(out, "mode: enforce\n"));
        free(out);
        cli_config_free(&cfg);
}

/* Until the network policy provides it, the hook refuses every rule. */
static void net_hook(void **state)
{
        struct config cfg = {0};
        char msg[128];

        /* Each rule string goes to the network policy, which keeps it or says what is wrong. */
        assert_int_equal(policy_net_rule(&cfg, "pypi.org:443", false, msg, sizeof(msg)), 0);
        assert_int_equal(policy_net_rule(&cfg, "10.0.0.0/8", true, msg, sizeof(msg)), 0);
        assert_int_equal(cfg.net.n, 2);
        assert_true(cfg.net.rules[1].deny);
        assert_int_equal(policy_net_rule(&cfg, "*:0", false, msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "port"));
        netpol_free(&cfg.net);
}

static int setup(void **state)
{
        if (!mkdtemp(dir))
                return -1;
        snprintf(path, sizeof(path), "%s/p.yaml", dir);
        return 0;
}

static int teardown(void **state)
{
        unlink(path);
        rmdir(dir);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(every_key),  cmocka_unit_test(flags_override),
                cmocka_unit_test(errors),     cmocka_unit_test(file_errors),
                cmocka_unit_test(round_trip), cmocka_unit_test(show_text),
                cmocka_unit_test(net_hook),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

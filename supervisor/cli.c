#include "supervisor/cli.h"
#include "supervisor/cli_int.h"
#include "supervisor/vfs/session.h"
#include "supervisor/env.h"
#include "supervisor/loop.h"
#include "supervisor/policy/policy.h"
#include "supervisor/session_cli.h"
#include "supervisor/spawn.h"
#include "supervisor/trace.h"
#include "supervisor/trace_cli.h"
#include "supervisor/util.h"
#include "shim/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static const char usage_main[] =
        "Usage: stockade COMMAND [OPTIONS]\n"
        "\n"
        "Run untrusted code under a user-space syscall supervisor.\n"
        "\n"
        "Commands:\n"
        "  run [OPTIONS] -- CMD [ARGS...]   run CMD in the sandbox\n"
        "  policy show [OPTIONS]            print the policy a run would get (file + flags)\n"
        "  trace show|stats|export FILE     read a trace (stockade help trace)\n"
        "  diff NAME [--json|--patch]       what a --cow session changed\n"
        "  apply NAME [PATH...] [--force]   write a session's changes onto the host\n"
        "  discard NAME                     throw a session away\n"
        "  sessions                         list the sessions\n"
        "  help [COMMAND]                   show help for stockade or a command\n"
        "  version                          print the version (also --version)\n"
        "\n"
        "Examples:\n"
        "  stockade run -- python3 task.py\n"
        "  stockade run --timeout 10m --memory 2G -- make test\n"
        "  stockade help run\n";

static const char usage_run[] =
        "Usage: stockade run [OPTIONS] [--] CMD [ARGS...]\n"
        "\n"
        "Run CMD under the supervisor. stockade exits with CMD's status (128+N if a signal\n"
        "killed it), 124 on --timeout, 125 for its own errors, 126 if CMD is not\n"
        "executable and 127 if it is not found.\n"
        "\n"
        "Options:\n"
        "%s"
        "\n"
        "Sizes take K, M, G or T (powers of 1024); durations take ms, s, m or h (default s).\n"
        "A limit of 0 means none. --cpu, --memory, --max-files and --max-file-size are per\n"
        "process (rlimits); --max-procs and --timeout cover the whole tree.\n"
        "\n"
        "Examples:\n"
        "  stockade run -- python3 -c 'print(1)'\n"
        "  stockade run --timeout 30 --max-procs 64 -- ./build.sh\n"
        "  stockade run --clear-env --env PATH --env CI=1 -- make test\n"
        "  stockade run --mode audit -v -- ./agent-task.sh    # report, deny nothing\n"
        "  stockade run --policy agent.yaml --timeout 1m -- ./task.sh\n"
        "  stockade run --allow-net '*:443' --allow-net 127.0.0.1:8080 -- ./fetch.sh\n";

const struct opt_def cli_run_opts[] = {
        {"policy", OPT_POLICY, V_STRING, "FILE",
         "read the policy from FILE (YAML, see docs/policy.md); the flags given with it "
         "override it"},
        {"timeout", OPT_TIMEOUT, V_DURATION, "DURATION",
         "kill the whole tree after this wall-clock time; exit 124"},
        {"kill-after", OPT_KILL_AFTER, V_DURATION, "DURATION",
         "after a SIGTERM to stockade, kill the tree if it has not ended (default 10s, 0 = "
         "never)"},
        {"cpu", OPT_CPU, V_DURATION, "DURATION",
         "CPU time per process, whole seconds (30, 2m; SIGXCPU, a second later SIGKILL)"},
        {"memory", OPT_MEMORY, V_SIZE, "BYTES", "address space per process"},
        {"max-procs", OPT_MAX_PROCS, V_COUNT, "N",
         "tasks (processes + threads) alive at once; beyond it fork fails with EAGAIN "
         "(default 4096, 0 = none)"},
        {"max-files", OPT_MAX_FILES, V_COUNT, "N", "open files per process"},
        {"max-file-size", OPT_MAX_FILE_SIZE, V_SIZE, "BYTES", "largest file a process may write"},
        {"env", OPT_ENV, V_STRING, "NAME[=VALUE]",
         "pass NAME through from the host (even a credential), or set it"},
        {"clear-env", OPT_CLEAR_ENV, V_NONE, NULL,
         "start from an empty environment (then --env adds)"},
        {"workdir", OPT_WORKDIR, V_STRING, "DIR",
         "start the command in DIR (default: the current directory), which is then the "
         "writable workspace"},
        {"tty", OPT_TTY, V_STRING, "auto|always|never",
         "give the sandbox a terminal of its own, relayed to yours: auto (default) when "
         "stdin or stdout is a terminal; never: no terminal inside at all, the fds 0-2 that "
         "are terminals become pipes that stockade relays (your terminal is never handed "
         "over)"},
        {"pass-fd", OPT_PASS_FD, V_COUNT, "N",
         "keep inherited fd N open in the sandbox (repeatable; make's jobserver: "
         "`+stockade run --pass-fd 3 --pass-fd 4 -- $(MAKE)`)"},
        {"user", OPT_USER, V_STRING, "USER[:GROUP]",
         "run the command as this user (stockade must be root); without it a root "
         "stockade runs the command as nobody (65534); `--user root` keeps uid 0, with no "
         "capabilities"},
        {"rw", OPT_RW, V_STRING, "PATH[:SANDBOX]",
         "let the command write beneath PATH too (repeatable); with SANDBOX, the directory "
         "PATH is shown at SANDBOX, an existing directory, instead (needs a mount namespace)"},
        {"ro", OPT_RO, V_STRING, "PATH[:SANDBOX]",
         "make PATH read-only, even inside a writable place such as the current directory "
         "(repeatable); with SANDBOX, the directory PATH is shown read-only at SANDBOX"},
        {"hide", OPT_HIDE, V_STRING, "PATH",
         "make PATH unreadable in the sandbox, on top of the default credential paths "
         "(repeatable; `~` is your home)"},
        {"tmp", OPT_TMP, V_STRING, "PATH",
         "a private, empty directory at PATH (an existing directory; `--tmp /tmp` gives the "
         "sandbox a /tmp of its own), removed at the end; needs a mount namespace (root, or "
         "user namespaces)"},
        {"cow", OPT_COW, V_STRING, "PATH[:SANDBOX]",
         "a copy-on-write view of PATH (at SANDBOX if given): the sandbox's changes land in a "
         "session, PATH stays as it is until `stockade apply` (repeatable; the default for the "
         "current directory; without a mount namespace stockade merges the layers itself, and "
         "SANDBOX needs one)"},
        {"session", OPT_SESSION, V_STRING, "NAME",
         "keep the copy-on-write changes in session NAME (made, or continued if it exists); "
         "without it a name is made and printed when the run changed anything"},
        {"state-dir", OPT_STATE_DIR, V_STRING, "DIR",
         "where sessions are kept (default $XDG_STATE_HOME/stockade, else "
         "~/.local/state/stockade)"},
        {"allow-exec", OPT_ALLOW_EXEC, V_STRING, "PATH",
         "run only the file PATH, any file beneath the directory PATH, or any file whose real "
         "path matches the pattern PATH (/usr/bin/*) (repeatable); without it any file the "
         "sandbox sees and may execute runs"},
        {"no-exec-writable", OPT_NO_EXEC_WRITABLE, V_NONE, NULL,
         "refuse to run files from the places the sandbox can write (the workspace, /tmp); "
         "see docs/policy.md for what this cannot stop"},
        {"mode", OPT_MODE, V_STRING, "enforce|audit",
         "audit: deny nothing; at exit, count what would have been denied, by kind (-v: "
         "each kind once as it happens, with the process and the decoded arguments)"},
        {"net", OPT_NET, V_STRING, "none|host",
         "none (default): only what --allow-net allows; host: no network restriction"},
        {"allow-net", OPT_ALLOW_NET, V_STRING, "SPEC",
         "allow connections to [tcp/|udp/]HOST[:PORTS], CIDR[:PORTS] or *:PORTS (PORTS: 443, "
         "80,443, 8000-8100; IPv6 in brackets: [::1]:443; repeatable). Loopback, private, "
         "link-local and metadata addresses open only to a rule inside their range; a host "
         "name (pypi.org, *.example.com) is resolved by the supervisor's DNS and matches the "
         "addresses it answered for that name; a denied connect fails with EACCES, -v says "
         "why"},
        {"dns-static", OPT_DNS_STATIC, V_STRING, "NAME=IP",
         "the supervisor's DNS answers NAME with IP without asking the host (repeatable: "
         "several addresses); a name rule for NAME then opens IP even if it is loopback or "
         "private"},
        {"publish", OPT_PUBLISH, V_STRING, "[HOST_PORT:]PORT",
         "forward the host's 127.0.0.1:HOST_PORT (default PORT) to the sandbox's "
         "127.0.0.1:PORT, TCP (repeatable); without a network namespace the loopback is "
         "shared and the sandbox's servers are reachable there anyway"},
        {"deny-net", OPT_DENY_NET, V_STRING, "SPEC",
         "deny what SPEC covers even where --allow-net allows it (repeatable)"},
        {"max-connections", OPT_MAX_CONNECTIONS, V_COUNT, "N",
         "outbound connections (connect, MSG_FASTOPEN) the whole run may open, the "
         "sandbox's own loopback servers aside; beyond it connect fails with EACCES "
         "(default 0: no limit)"},
        {"allow-degraded", OPT_ALLOW_DEGRADED, V_NONE, NULL,
         "run even if a protection layer is missing on this host"},
        {"fast", OPT_FAST, V_NONE, NULL,
         "leave stat, access, readlink, directory listings and opens for reading to the "
         "kernel, in the sandbox's mount namespace (hidden paths are covered there, Landlock "
         "refuses their content): near-native for compilers, interpreters and tools that look "
         "at many files, but the trace does not see those calls and names the view would hide "
         "can be listed (README \"Fast mode\"); the sandbox gets a pid namespace and a /proc "
         "of its own; needs a mount namespace"},
        {"trace", OPT_TRACE, V_STRING, "FILE|unix:PATH",
         "record every decision in FILE (outside the places the sandbox can write), or stream "
         "it to a listening unix socket; read it with `stockade trace`"},
        {"trace-level", OPT_TRACE_LEVEL, V_STRING, "security|all",
         "security (default): the calls the supervisor handles and process events; all: every "
         "system call (slower: each becomes a round trip)"},
        {"backtrace", OPT_BACKTRACE, V_STRING, "never|denied|all",
         "with --trace, record the user-space backtrace of no call, of denied calls (default) "
         "or of every handled call (slow): functions with offsets and their files, 32 frames "
         "at most; a backtrace that takes over 500 ms is given up and says so"},
        {"trace-drop", OPT_TRACE_DROP, V_NONE, NULL,
         "when the trace cannot keep up, drop events (counted) rather than slow the sandbox"},
        {"trace-env", OPT_TRACE_ENV, V_NONE, NULL,
         "record the environment's values in the trace, not only the names"},
        {"verbose", 'v', V_NONE, NULL,
         "-v: the layers and a summary at the end, each kind of audit denial once; -vv: "
         "every decision, and where the run's time went (start-up's phases)"},
        {"quiet", 'q', V_NONE, NULL,
         "no warnings of stockade's own, nor audit mode's summary at exit"},
        {"help", 'h', V_NONE, NULL, "show this help"},
};
const size_t cli_n_run_opts = ARRAY_SIZE(cli_run_opts);

const char *cli_run_option(size_t i, const char **help)
{
        if (i >= cli_n_run_opts)
                return NULL;
        if (help)
                *help = cli_run_opts[i].help;
        return cli_run_opts[i].name;
}

static void print_run_usage(FILE *out)
{
        char opts[8192];
        size_t n = 0;

        for (size_t i = 0; i < cli_n_run_opts; i++) {
                const struct opt_def *o = &cli_run_opts[i];
                char left[64];

                if (o->key < 256)
                        snprintf(left, sizeof(left), "-%c, --%s", o->key, o->name);
                else
                        snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->metavar ? " " : "",
                                 o->metavar ? o->metavar : "");
                n += (size_t)snprintf(opts + n, sizeof(opts) - n, "  %-28s %s\n", left, o->help);
        }
        fprintf(out, usage_run, opts);
}

static int bad_value(const struct opt_def *o, const char *arg, int r, struct error *err)
{
        static const char *const expect[] = {
                [V_DURATION] = "a duration such as 30, 500ms, 1.5m or 2h",
                [V_SIZE] = "a size such as 4096, 512K, 2M or 1G",
                [V_COUNT] = "a whole number",
        };
        return make_error(err, 0, "run: --%s: `%s` is %s; expected %s", o->name, arg,
                          r == -ERANGE ? "out of range" : "not valid", expect[o->kind]);
}

static int add_pass_fd(struct config *cfg, const struct opt_def *o, const char *arg,
                       struct error *err)
{
        uint64_t v;
        int r = parse_count(arg, &v);

        if (r < 0 || v > INT32_MAX)
                return bad_value(o, arg, r < 0 ? r : -ERANGE, err);
        if (v <= 2)
                return make_error(err, 0, "run: --pass-fd %s: fds 0, 1 and 2 are always passed",
                                  arg);
        if (fcntl((int)v, F_GETFD) < 0)
                return make_error(err, 0, "run: --pass-fd %s: fd %s is not open", arg, arg);
        /* The command would hold the terminal itself: read what is typed, change settings.
         * It has a terminal of its own (--tty). */
        if (isatty((int)v))
                return make_error(err, 0,
                                  "run: --pass-fd %s: fd %s is a terminal, which the command "
                                  "could read what you type from; it gets a terminal of its "
                                  "own (--tty)",
                                  arg, arg);
        if (cfg->n_pass_fds >= SHIM_MAX_PASS_FDS)
                return make_error(err, 0, "run: --pass-fd: at most %d", SHIM_MAX_PASS_FDS);
        cfg->pass_fds = xrealloc(cfg->pass_fds, (cfg->n_pass_fds + 1) * sizeof(*cfg->pass_fds));
        cfg->pass_fds[cfg->n_pass_fds++] = (int)v;
        return 0;
}

static int net_option(struct config *cfg, const struct opt_def *o, const char *arg,
                      struct error *err)
{
        char why[200];

        if (o->key == OPT_NET) {
                if (strcmp(arg, "none") == 0)
                        cfg->net.mode = NETPOL_MODE_NONE;
                else if (strcmp(arg, "host") == 0)
                        cfg->net.mode = NETPOL_MODE_HOST;
                else
                        return make_error(err, 0, "run: --net: `%s` is not none or host", arg);
                return 0;
        }
        if (o->key == OPT_PUBLISH) {
                if (netpol_add_publish(&cfg->net, arg, why, sizeof(why)) < 0)
                        return make_error(err, 0, "run: --publish `%s`: %s", arg, why);
                return 0;
        }
        if (o->key == OPT_DNS_STATIC) {
                if (netpol_add_static(&cfg->net, arg, why, sizeof(why)) < 0)
                        return make_error(err, 0, "run: --dns-static `%s`: %s", arg, why);
                return 0;
        }
        if (netpol_add_rule(&cfg->net, arg, o->key == OPT_DENY_NET, why, sizeof(why)) < 0)
                return make_error(err, 0, "run: --%s `%s`: %s", o->name, arg, why);
        return 0;
}

static int apply_value(struct config *cfg, const struct opt_def *o, const char *arg,
                       struct error *err)
{
        uint64_t v = 0, *dst = NULL;
        int r = 0;

        switch (o->key) {
        case OPT_TIMEOUT:
                dst = &cfg->limits.timeout_ms;
                break;
        case OPT_CPU:
                dst = &cfg->limits.cpu_s;
                break;
        case OPT_MEMORY:
                dst = &cfg->limits.memory;
                break;
        case OPT_MAX_PROCS:
                dst = &cfg->limits.max_procs;
                break;
        case OPT_MAX_FILES:
                dst = &cfg->limits.max_files;
                break;
        case OPT_MAX_FILE_SIZE:
                dst = &cfg->limits.max_file_size;
                break;
        case OPT_MAX_CONNECTIONS:
                dst = &cfg->limits.max_connections;
                break;
        case OPT_ENV:
                if (!*arg || *arg == '=')
                        return make_error(err, 0, "run: --env: `%s` has no variable name", arg);
                if (!valid_env_name(arg, strcspn(arg, "=")))
                        return make_error(err, 0,
                                          "run: --env: `%.*s` is not a variable name (letters, "
                                          "digits and _, not starting with a digit)",
                                          (int)strcspn(arg, "="), arg);
                cfg->env_ops = xrealloc(cfg->env_ops, (cfg->n_env_ops + 1) * sizeof(*cfg->env_ops));
                cfg->env_ops[cfg->n_env_ops++].arg = arg;
                return 0;
        case OPT_HIDE:
        case OPT_RO:
        case OPT_RW:
        case OPT_TMP:
        case OPT_COW:
                if (!*arg)
                        return make_error(err, 0, "run: --%s: the path is empty", o->name);
                cfg->mounts = xrealloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof(*cfg->mounts));
                cfg->mounts[cfg->n_mounts++] = (struct mount_opt){.flag = o->name, .spec = arg};
                return 0;
        case OPT_MODE:
                if (strcmp(arg, "enforce") == 0)
                        cfg->mode = MODE_ENFORCE;
                else if (strcmp(arg, "audit") == 0)
                        cfg->mode = MODE_AUDIT;
                else
                        return make_error(err, 0,
                                          "run: --mode: `%s` is not a mode; expected enforce "
                                          "or audit",
                                          arg);
                return 0;
        case OPT_USER:
                r = parse_user(arg, &cfg->uid, &cfg->gid);
                if (r < 0)
                        return make_error(err, 0, "run: --user: `%s` is %s", arg,
                                          r == -ENOENT ? "not a known user or group"
                                                       : "not USER[:GROUP] or UID[:GID]");
                cfg->set_user = true; /* root too: uid 0, no groups, no capabilities */
                return 0;
        case OPT_TTY:
                if (strcmp(arg, "auto") == 0)
                        cfg->tty = TTY_AUTO;
                else if (strcmp(arg, "always") == 0)
                        cfg->tty = TTY_ALWAYS;
                else if (strcmp(arg, "never") == 0)
                        cfg->tty = TTY_NEVER;
                else
                        return make_error(err, 0, "run: --tty: `%s` is not auto, always or never",
                                          arg);
                return 0;
        case OPT_WORKDIR:
                if (!*arg)
                        return make_error(err, 0, "run: --workdir: empty directory name");
                cfg->workdir = arg;
                return 0;
        case OPT_PASS_FD:
                return add_pass_fd(cfg, o, arg, err);
        case OPT_POLICY:
                return 0; /* read before the other flags: load_policy() */
        case OPT_NET:
        case OPT_ALLOW_NET:
        case OPT_DENY_NET:
        case OPT_DNS_STATIC:
        case OPT_PUBLISH:
                return net_option(cfg, o, arg, err);
        case OPT_ALLOW_EXEC:
                if (!*arg)
                        return make_error(err, 0, "run: --allow-exec: an empty path");
                if (strpbrk(arg, "*?[") && arg[0] != '/')
                        return make_error(err, 0,
                                          "run: --allow-exec: %s: a pattern must be an absolute "
                                          "path",
                                          arg);
                cfg->exec_allow = xrealloc(cfg->exec_allow,
                                           (cfg->n_exec_allow + 1) * sizeof(*cfg->exec_allow));
                cfg->exec_allow[cfg->n_exec_allow++] = arg;
                return 0;
        case OPT_NO_EXEC_WRITABLE:
                cfg->exec_no_writable = true;
                return 0;
        case OPT_SESSION:
                if (!session_name_ok(arg))
                        return make_error(err, 0,
                                          "run: --session: `%s` is not a session name (1-64 of "
                                          "letters, digits, '.', '_', '-', not starting with "
                                          "'.' or '-')",
                                          arg);
                cfg->session = arg;
                return 0;
        case OPT_STATE_DIR:
                if (arg[0] != '/')
                        return make_error(err, 0, "run: --state-dir: `%s` is not an absolute path",
                                          arg);
                cfg->state_dir = arg;
                return 0;
        case OPT_KILL_AFTER:
                dst = &cfg->kill_after_ms;
                break;
        case 'q':
                cfg->quiet = true;
                return 0;
        case OPT_CLEAR_ENV:
                cfg->clear_env = true;
                return 0;
        case OPT_TRACE:
        case OPT_TRACE_LEVEL:
        case OPT_BACKTRACE:
        case OPT_TRACE_DROP:
        case OPT_TRACE_ENV:
                return trace_cli_option(cfg, o->name, arg, err);
        case OPT_ALLOW_DEGRADED:
                cfg->allow_degraded = true;
                return 0;
        case OPT_FAST:
                cfg->fast = true;
                return 0;
        case 'v':
                cfg->verbose++;
                return 0;
        default:
                return make_error(err, 0, "run: --%s: not handled", o->name);
        }
        switch (o->kind) {
        case V_DURATION:
                r = parse_duration_ms(arg, &v);
                if (r == 0 && o->key == OPT_CPU) {
                        /* RLIMIT_CPU counts whole seconds: say so rather than round. */
                        if (v % 1000)
                                return make_error(err, 0,
                                                  "run: --cpu: `%s` is not a whole number of "
                                                  "seconds (the CPU limit counts seconds)",
                                                  arg);
                        v /= 1000;
                }
                break;
        case V_SIZE:
                r = parse_size(arg, &v);
                break;
        case V_COUNT:
                r = parse_count(arg, &v);
                break;
        case V_NONE:
        case V_STRING:
                break;
        }
        if (r < 0)
                return bad_value(o, arg, r, err);
        if (o->key == OPT_MAX_FILES && v && v < MIN_MAX_FILES)
                return make_error(err, 0,
                                  "run: --max-files: %llu is too low for the sandbox to start "
                                  "(stdin, stdout, stderr and stockade's hand-off need %d)",
                                  (unsigned long long)v, MIN_MAX_FILES);
        *dst = v;
        return 0;
}

int cli_apply_option(struct config *cfg, const char *name, const char *value, struct error *err)
{
        for (size_t i = 0; i < cli_n_run_opts; i++)
                if (strcmp(cli_run_opts[i].name, name) == 0 && cli_run_opts[i].key != 'h')
                        return apply_value(cfg, &cli_run_opts[i], value, err);
        return make_error(err, 0, "run: --%s: no such option", name);
}

/* The policy file first, wherever --policy stands among the flags: the flags override it. */
static int load_policy(int argc, char **argv, const char *shorts, const struct option *longs,
                       struct config *cfg, struct error *err)
{
        const char *path = NULL;

        optind = 0;
        opterr = 0;
        for (int c; (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;) {
                if (c != OPT_POLICY)
                        continue; /* and mistakes: the second pass reports them */
                if (path)
                        return make_error(err, 0, "run: --policy given twice (one file per run)");
                path = optarg;
        }
        return path ? policy_load(cfg, path, err) : 0;
}

static int parse_run(int argc, char **argv, struct config *cfg, struct error *err, bool command)
{
        struct option longs[ARRAY_SIZE(cli_run_opts) + 1];
        char shorts[] = "+:vqh";

        memset(cfg, 0, sizeof(*cfg));
        cfg->limits.max_procs = DEFAULT_MAX_PROCS;
        /* Safe by default since the unwinder runs on a thread of its own, with a deadline, and
         * opens a mapped file only if it is the mapped one (trace_bt.c, trace_unwind.c). */
        cfg->trace_backtrace = TRACE_BT_DENIED;
        cfg->kill_after_ms = DEFAULT_KILL_AFTER_MS;
        for (size_t i = 0; i < cli_n_run_opts; i++)
                longs[i] = (struct option){cli_run_opts[i].name,
                                           cli_run_opts[i].kind == V_NONE ? no_argument
                                                                          : required_argument,
                                           NULL, cli_run_opts[i].key};
        memset(&longs[cli_n_run_opts], 0, sizeof(longs[0]));
        if (load_policy(argc, argv, shorts, longs, cfg, err) < 0)
                return -1;

        optind = 0; /* full reset: cli_parse_run may be called more than once (tests) */
        opterr = 0;
        for (;;) {
                int idx = -1, c = getopt_long(argc, argv, shorts, longs, &idx);
                const struct opt_def *o = NULL;

                if (c == -1)
                        break;
                if (c == '?')
                        return make_error(err, 0, "%s: unknown option `%s` (see stockade help run)",
                                          argv[0], argv[optind - 1]);
                if (c == ':')
                        return make_error(err, 0, "%s: option `%s` needs a value", argv[0],
                                          argv[optind - 1]);
                if (c == 'h') {
                        print_run_usage(stdout);
                        return 1;
                }
                for (size_t i = 0; i < cli_n_run_opts; i++)
                        if (cli_run_opts[i].key == c)
                                o = &cli_run_opts[i];
                if (apply_value(cfg, o, optarg, err) < 0)
                        return -1;
        }
        if (command && optind >= argc)
                return make_error(err, 0, "run: no command given (stockade run -- CMD [ARGS...])");
        if (!command && optind < argc)
                return make_error(err, 0, "%s: `%s`: no command is run here", argv[0],
                                  argv[optind]);
        cfg->argv = &argv[optind];
        if (!cfg->set_user && geteuid() == 0) {
                cfg->set_user = cfg->default_user = true;
                cfg->uid = DEFAULT_UID;
                cfg->gid = DEFAULT_GID;
        }
        return 0;
}

int cli_parse_run(int argc, char **argv, struct config *cfg, struct error *err)
{
        return parse_run(argc, argv, cfg, err, true);
}

int cli_parse_flags(int argc, char **argv, struct config *cfg, struct error *err)
{
        return parse_run(argc, argv, cfg, err, false);
}

void cli_config_free(struct config *cfg)
{
        free(cfg->env_ops);
        cfg->env_ops = NULL;
        free(cfg->mounts);
        cfg->mounts = NULL;
        free(cfg->pass_fds);
        cfg->pass_fds = NULL;
        free(cfg->exec_allow);
        cfg->exec_allow = NULL;
        for (size_t i = 0; i < cfg->n_owned; i++)
                free(cfg->owned[i]);
        free(cfg->owned);
        cfg->owned = NULL;
        cfg->n_owned = 0;
        netpol_free(&cfg->net);
}

static int cmd_run(int argc, char **argv)
{
        struct error err = {0};
        struct config cfg;
        char **envp = NULL;
        int r, code;

        r = cli_parse_run(argc, argv, &cfg, &err);
        if (r != 0) {
                if (r < 0)
                        error_print(&err);
                cli_config_free(&cfg);
                return r > 0 ? 0 : EXIT_STOCKADE;
        }
        stockade_quiet = cfg.quiet;
        if (cfg.workdir && chdir(cfg.workdir) < 0) {
                make_error(&err, errno, "run: --workdir `%s`", cfg.workdir);
                error_print(&err);
                cli_config_free(&cfg);
                return EXIT_STOCKADE;
        }
        envp = env_build(environ, &cfg);
        if (cfg.verbose)
                env_report_removed(environ, &cfg, stderr);
        struct spawn_plan plan = {.cfg = &cfg, .path_var = env_get(envp, "PATH"), .envp = envp};
        code = sup_run(&plan, &err);
        if (code < 0) {
                error_print(&err);
                code = err.exit_code ? err.exit_code : EXIT_STOCKADE;
        }
        env_free(envp);
        cli_config_free(&cfg);
        return code;
}

static int cmd_help(int argc, char **argv)
{
        if (argc > 1 && strcmp(argv[1], "run") == 0) {
                print_run_usage(stdout);
                return 0;
        }
        if (argc > 1 && strcmp(argv[1], "trace") == 0) {
                char *hv[] = {"trace", "--help", NULL};
                return trace_cli_main(2, hv);
        }
        if (argc > 1 && strcmp(argv[1], "policy") == 0) {
                char *hv[] = {"policy", "--help", NULL};
                return policy_cli_main(2, hv);
        }
        static const struct {
                const char *name;
                int (*fn)(int argc, char **argv);
        } sessions[] = {{"diff", session_cli_diff},
                        {"apply", session_cli_apply},
                        {"discard", session_cli_discard},
                        {"sessions", session_cli_sessions}};
        for (size_t i = 0; argc > 1 && i < ARRAY_SIZE(sessions); i++)
                if (strcmp(argv[1], sessions[i].name) == 0) {
                        char *hv[] = {argv[1], "--help", NULL};
                        return sessions[i].fn(2, hv);
                }
        if (argc > 1 && strcmp(argv[1], "help") != 0 && strcmp(argv[1], "version") != 0) {
                fprintf(stderr, "stockade: help: unknown command `%s`\n", argv[1]);
                return EXIT_STOCKADE;
        }
        fputs(usage_main, stdout);
        return 0;
}

static int cmd_version(int argc, char **argv)
{
        if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
                puts("Usage: stockade version\n\nPrint the version.\n\nExample:\n  stockade "
                     "version");
                return 0;
        }
        printf("stockade %s\n", STOCKADE_VERSION);
        return 0;
}

int cli_main(int argc, char **argv)
{
        static const struct {
                const char *name;
                int (*fn)(int argc, char **argv);
        } cmds[] = {
                {"run", cmd_run},
                {"trace", trace_cli_main},
                {"help", cmd_help},
                {"policy", policy_cli_main},
                {"--help", cmd_help},
                {"-h", cmd_help},
                {"version", cmd_version},
                {"--version", cmd_version},
                {"diff", session_cli_diff},
                {"apply", session_cli_apply},
                {"discard", session_cli_discard},
                {"sessions", session_cli_sessions},
        };

        if (argc < 2) {
                fputs(usage_main, stderr);
                return EXIT_STOCKADE;
        }
        for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
                if (strcmp(argv[1], cmds[i].name) == 0) {
                        /* help COMMAND and COMMAND --help show the same text */
                        if (cmds[i].fn == cmd_help && argc > 2) {
                                char *hv[] = {argv[1], argv[2], NULL};
                                return cmd_help(2, hv);
                        }
                        return cmds[i].fn(argc - 1, argv + 1);
                }
        fprintf(stderr, "stockade: unknown command `%s` (see stockade help)\n", argv[1]);
        return EXIT_STOCKADE;
}

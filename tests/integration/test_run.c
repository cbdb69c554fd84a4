/* Real programs under `stockade run`, checked from the outside: exit codes, output, what
 * outlives the run, what reaches the environment, the limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG 60

/* Leftover checks look for a command line on the whole machine: tag each marker with our
 * pid, so that another suite running at the same time cannot be mistaken for ours. Every '@'
 * of `s` becomes the tag; the result lives until eight more calls. */
static const char *tagged(const char *s)
{
        static char bufs[8][256];
        static unsigned next;
        char *out = bufs[next++ % 8], *w = out;

        for (; *s && w < out + sizeof(bufs[0]) - 8; s++)
                if (*s == '@')
                        w += sprintf(w, "%05d", (int)(getpid() % 100000));
                else
                        *w++ = *s;
        *w = '\0';
        return out;
}

static struct run_result run(const char *const args[])
{
        struct run_result r;

        assert_int_equal(runner_stockade_run(args, WATCHDOG, &r), 0);
        if (r.exit_code == -1)
                fail_msg("watchdog fired: stockade hung. stderr: %s", r.err);
        return r;
}

static int run_code(const char *const args[])
{
        struct run_result r = run(args);
        int code = r.exit_code;

        runner_free(&r);
        return code;
}

/* Forks sleeping children until a fork is refused; argv[1] is a marker that shows in every
 * child's command line, so that the test can look for survivors. */
static const char fork_until_refused[] = "import os, sys, time\n"
                                         "for i in range(64):\n"
                                         "    try:\n"
                                         "        if os.fork() == 0:\n"
                                         "            time.sleep(60); os._exit(0)\n"
                                         "    except OSError as e:\n"
                                         "        print('refused', e.errno, 'after', i)\n"
                                         "        sys.exit(0)\n"
                                         "print('never refused')";

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void true_and_exit_codes(void **state)
{
        assert_int_equal(run_code((const char *[]){"--", "/bin/true", NULL}), 0);
        assert_int_equal(run_code((const char *[]){"--", "/bin/false", NULL}), 1);
        assert_int_equal(run_code((const char *[]){"--", "sh", "-c", "exit 3", NULL}), 3);
        /* Killed by a signal: 128+N, like the shells. */
        assert_int_equal(run_code((const char *[]){"--", "sh", "-c", "kill -TERM $$", NULL}),
                         128 + 15);
        assert_int_equal(run_code((const char *[]){"--", "sh", "-c", "kill -KILL $$", NULL}),
                         128 + 9);
}

static void python_runs(void **state)
{
        struct run_result r = run((const char *[]){
                "--", "python3", "-c",
                "import json, email, http.client, sqlite3, subprocess\n"
                "print(json.dumps({'a': 6 * 7}))\n"
                "print(subprocess.run(['echo', 'child'], capture_output=True).stdout.decode())",
                NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "{\"a\": 42}"));
        assert_non_null(strstr(r.out, "child"));
        runner_free(&r);
}

static void threads(void **state)
{
        struct run_result r = run((const char *[]){
                "--", "python3", "-c",
                "import threading, os\n"
                "out = []\n"
                "def work(i):\n"
                "    out.append(len(os.listdir('/')) and i)\n"
                "ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]\n"
                "[t.start() for t in ts]; [t.join() for t in ts]\n"
                "print(sorted(out) == list(range(16)))",
                NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "True\n");
        runner_free(&r);
}

/*
 * The supervisor holds a caller on one CPU while it installs an opened fd (notify.c, pin):
 * the program's own CPU mask must be what it set, after every open, whatever it set.
 */
static void affinity_kept(void **state)
{
        struct run_result r;

        (void)state;
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                skip(); /* one CPU: a narrowed mask would equal the whole one */
        r = run((const char *[]){
                "--", "python3", "-c",
                "import os\n"
                "cpus = sorted(os.sched_getaffinity(0))\n"
                "bad = []\n"
                "for m in [set(cpus)] + [{c} for c in cpus] + [set(cpus[1:])]:\n"
                "    os.sched_setaffinity(0, m)\n"
                "    for i in range(300):\n"
                "        open('/etc/passwd').close()\n"
                "        if os.sched_getaffinity(0) != m:\n"
                "            bad.append((sorted(m), i, sorted(os.sched_getaffinity(0))))\n"
                "            break\n"
                "print(bad or 'kept')",
                NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "kept\n");
        runner_free(&r);
}

/*
 * A lookup the supervisor scopes to the sandbox's root (openat2 RESOLVE_IN_ROOT) fails with
 * EAGAIN when any rename on the system races one of its ".." steps: `go build` saw opens
 * through /usr/lib/go-1.19/src -> ../../share/... fail so, while it renamed files into its
 * cache. The supervisor retries; the program never sees EAGAIN from open or stat.
 */
static void scoped_lookups_retried(void **state)
{
        char target[PATH_MAX];
        ssize_t n = readlink("/usr/bin/py3versions", target, sizeof(target) - 1);
        struct run_result r;

        (void)state;
        if (n < 3 || strncmp(target, "../", 3) != 0)
                skip(); /* no symlink with ".." on the way here (Debian's python3 has one) */
        r = run((const char *[]){
                "--", "python3", "-c",
                "import os, threading, errno\n"
                "stop = False\n"
                "def churn(i):\n"
                "    a, b = '/tmp/r%d.a' % i, '/tmp/r%d.b' % i\n"
                "    open(a, 'w').close()\n"
                "    while not stop:\n"
                "        os.rename(a, b); os.rename(b, a)\n"
                "ts = [threading.Thread(target=churn, args=(i,)) for i in range(2)]\n"
                "[t.start() for t in ts]\n"
                "bad = {}\n"
                "for i in range(10000):\n"
                "    try:\n"
                "        os.close(os.open('/usr/bin/py3versions', os.O_RDONLY))\n"
                "        os.stat('/usr/bin/py3versions')\n"
                "    except OSError as e:\n"
                "        k = errno.errorcode[e.errno]\n"
                "        bad[k] = bad.get(k, 0) + 1\n"
                "stop = True\n"
                "[t.join() for t in ts]\n"
                "print(bad or 'none')",
                NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "none\n");
        runner_free(&r);
}

static void missing_and_not_executable(void **state)
{
        char dir[] = "/var/tmp/stockade-test-XXXXXX", file[64];
        struct run_result r;
        int fd;

        r = run((const char *[]){"--", "no-such-command-xyz", NULL});
        assert_int_equal(r.exit_code, 127);
        assert_non_null(strstr(r.err, "command not found"));
        runner_free(&r);

        assert_non_null(mkdtemp(dir));
        chmod(dir, 0755); /* as root, the command runs as nobody by default */
        snprintf(file, sizeof(file), "%s/script", dir);
        fd = open(file, O_CREAT | O_WRONLY, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
        close(fd);
        r = run((const char *[]){"--", file, NULL});
        assert_int_equal(r.exit_code, 126);
        assert_non_null(strstr(r.err, "Permission denied"));
        runner_free(&r);
        /* A directory is not executable either. */
        assert_int_equal(run_code((const char *[]){"--", dir, NULL}), 126);
        /* A script whose interpreter is missing: found, cannot run. */
        fd = open(file, O_WRONLY | O_TRUNC);
        assert_int_equal(write(fd, "#!/nonexistent/sh\n", 18), 18);
        close(fd);
        chmod(file, 0755);
        assert_int_equal(run_code((const char *[]){"--", file, NULL}), 127);
        unlink(file);
        rmdir(dir);
}

static void environment(void **state)
{
        struct run_result r;

        setenv("GITHUB_TOKEN", "ghp_secret_value", 1);
        setenv("STOCKADE_TEST_PLAIN", "plain_value", 1);
        r = run((const char *[]){"--", "/usr/bin/env", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_null(strstr(r.out, "ghp_secret_value"));
        assert_non_null(strstr(r.out, "STOCKADE_TEST_PLAIN=plain_value"));
        runner_free(&r);

        r = run((const char *[]){"--env", "GITHUB_TOKEN", "--", "/usr/bin/env", NULL});
        assert_non_null(strstr(r.out, "GITHUB_TOKEN=ghp_secret_value"));
        runner_free(&r);

        r = run((const char *[]){"--clear-env", "--env", "FOO=bar", "--", "/usr/bin/env", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.out, "FOO=bar\n");
        runner_free(&r);
        unsetenv("GITHUB_TOKEN");
}

/* The caches' directory the run printed as "XDG|npm|GOMOD" (`out`), checked for `base`: the
 * private /tmp ("/tmp"), or a directory of the run's beneath the host's /tmp, the same for all
 * three (NULL: none expected, "||"). Returns that directory (static), "" for none. */
static const char *caches_dir(const char *out, const char *base)
{
        static char dir[PATH_MAX];
        char expect[3 * PATH_MAX + 64];
        const char *bar;

        if (!base) {
                assert_string_equal(out, "||\n");
                return "";
        }
        if (strcmp(base, "/tmp") == 0) {
                snprintf(dir, sizeof(dir), "/tmp");
        } else {
                /* /tmp/stockade-tmp-XXXXXX/cache */
                bar = strstr(out, "/.cache|");
                assert_non_null(bar);
                assert_true((size_t)(bar - out) < sizeof(dir));
                memcpy(dir, out, (size_t)(bar - out));
                dir[bar - out] = '\0';
                assert_int_equal(strncmp(dir, base, strlen(base)), 0);
                assert_string_equal(dir + strlen(dir) - strlen("/cache"), "/cache");
        }
        snprintf(expect, sizeof(expect), "%s/.cache|%s/.npm|%s/go/pkg/mod\n", dir, dir, dir);
        assert_int_equal(strncmp(out, expect, strlen(expect)), 0);
        return dir;
}

/* Package managers' caches: pointed into the private /tmp where the home's are read-only, or,
 * without a mount namespace (`merged`: the layer disabled, as on hosts without user
 * namespaces), into a directory of the run's, 0700 and the command's, removed at the end;
 * left alone where the user chose one or the home's place is writable; nothing on the host. */
static void check_caches(bool merged)
{
        static const char show[] = "echo \"$XDG_CACHE_HOME|$npm_config_cache|$GOMODCACHE\"";
        char script[1024], home[] = "/var/tmp/test_caches.XXXXXX", host_file[128];
        const char *base, *dir;
        struct run_result r;
        struct stat st;

        r = run((const char *[]){"-v", "--", "/bin/true", NULL});
        if (merged)
                assert_non_null(strstr(r.err, "private directories (--tmp)  no"));
        base = strstr(r.err, "private directories (--tmp)  yes") ? "/tmp" : "/tmp/stockade-tmp-";
        runner_free(&r);

        snprintf(host_file, sizeof(host_file), "/tmp/.npm/stockade-test-%d", (int)getpid());
        snprintf(script, sizeof(script),
                 "%s && mkdir -p \"$npm_config_cache\" && echo made >\"$npm_config_cache/"
                 "stockade-test-%d\" && cat \"$npm_config_cache/stockade-test-%d\" && "
                 "stat -c '%%a %%u' \"${npm_config_cache%%/.npm}\"",
                 show, (int)getpid(), (int)getpid());
        unsetenv("XDG_CACHE_HOME");
        unsetenv("npm_config_cache");
        unsetenv("NPM_CONFIG_CACHE");
        unsetenv("GOMODCACHE");
        unsetenv("GOPATH");
        /* A home the run cannot write (the test's cwd, given --rw, may be the real one). */
        r = run((const char *[]){"--env", "HOME=/nonexistent", "--", "/bin/sh", "-c", script,
                                 NULL});
        assert_int_equal(r.exit_code, 0);
        dir = caches_dir(r.out, base);
        assert_non_null(strstr(r.out, "\nmade\n"));
        assert_int_equal(access(host_file, F_OK), -1);
        if (strcmp(base, "/tmp") != 0) {
                /* The command's own (nobody's, when root runs it), no one else's to enter; and
                 * gone with the run. */
                char mode[32];

                snprintf(mode, sizeof(mode), "\n700 %u\n", geteuid() == 0 ? 65534u : geteuid());
                assert_non_null(strstr(r.out, mode));
                assert_int_equal(stat(dir, &st), -1);
                assert_int_equal(errno, ENOENT);
        }
        runner_free(&r);

        /* The user's own choice stays, and GOPATH moves the module cache itself. */
        setenv("XDG_CACHE_HOME", "/elsewhere", 1);
        setenv("GOPATH", "/gp", 1);
        r = run((const char *[]){"--env", "HOME=/nonexistent", "--", "/bin/sh", "-c", show, NULL});
        assert_true(strncmp(r.out, "/elsewhere|", strlen("/elsewhere|")) == 0);
        assert_non_null(strstr(r.out, "/.npm|\n"));
        runner_free(&r);
        unsetenv("XDG_CACHE_HOME");
        unsetenv("GOPATH");

        r = run((const char *[]){"--clear-env", "--", "/bin/sh", "-c", show, NULL});
        assert_string_equal(r.out, "||\n");
        runner_free(&r);

        /* A home the run may write keeps its caches where they are. */
        assert_non_null(mkdtemp(home));
        snprintf(script, sizeof(script), "HOME=%s", home);
        r = run((const char *[]){"--env", script, "--rw", home, "--", "/bin/sh", "-c", show, NULL});
        assert_string_equal(r.out, "||\n");
        runner_free(&r);
        rmdir(home);
}

static void tool_caches(void **state)
{
        (void)state;
        check_caches(false);
}

/* A workspace in /tmp: /tmp is then the host's, mount namespace or not, and the caches go in a
 * directory of the run's (an outside tester's `go build` and `npm install` in /tmp/proj
 * stopped on the read-only home's). */
static void tool_caches_workspace_in_tmp(void **state)
{
        static const char show[] =
                "echo \"$XDG_CACHE_HOME|$npm_config_cache|$GOMODCACHE\" && mkdir -p "
                "\"$GOMODCACHE\" && echo made >\"$npm_config_cache\" && cat \"$npm_config_cache\"";
        char ws[] = "/tmp/stockade-cws.XXXXXX", base[PATH_MAX];
        const char *tmp = getenv("TMPDIR");
        const char *opts[] = {"--cow", ".", "--env", "HOME=/nonexistent", NULL};
        const char *dir;
        struct run_result r;
        struct stat st;

        (void)state;
        unsetenv("XDG_CACHE_HOME");
        unsetenv("npm_config_cache");
        unsetenv("NPM_CONFIG_CACHE");
        unsetenv("GOMODCACHE");
        unsetenv("GOPATH");
        assert_non_null(mkdtemp(ws));
        assert_int_equal(chmod(ws, 0755), 0);
        if (geteuid() == 0)
                assert_int_equal(chown(ws, 65534, 65534), 0);
        assert_int_equal(runner_stockade_sh(ws, opts, show, WATCHDOG, &r), 0);
        if (r.exit_code != 0 || !strstr(r.out, "\nmade\n"))
                fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.out, r.err);
        snprintf(base, sizeof(base), "%s/stockade-tmp-", tmp && tmp[0] == '/' ? tmp : "/tmp");
        dir = caches_dir(r.out, base); /* beneath $TMPDIR, where the private ones would be */
        runner_free(&r);
        assert_int_equal(stat(dir, &st), -1); /* gone with the run */
        assert_int_equal(runner_shell("rm -rf '%s'", ws), 0);
}

/* Without a mount namespace a workspace in /tmp is read-only to the kernel, and Landlock's rule
 * for /tmp is split around it: nothing new could be made directly in /tmp, where mktemp, gcc
 * and go make their temporary files (an outside tester's gcc stopped so). TMPDIR then points to
 * a directory of the run's, and a note says why. */
static void tmpdir_workspace_in_tmp_merged(void **state)
{
        char ws[] = "/tmp/stockade-mws.XXXXXX", tmp[PATH_MAX];
        const char *cow[] = {"--cow", ".", NULL}; /* the default view's, as given */
        struct run_result r;
        const char *nl;

        (void)state;
        r = run((const char *[]){"-v", "--", "/bin/true", NULL});
        if (!strstr(r.err, "private directories (--tmp)  no")) {
                runner_free(&r); /* as root, a mount namespace is made all the same */
                print_message("  (a mount namespace here: /tmp is the run's own)\n");
                skip();
        }
        runner_free(&r);
        assert_non_null(mkdtemp(ws));
        assert_int_equal(chmod(ws, 0755), 0);
        if (geteuid() == 0)
                assert_int_equal(chown(ws, 65534, 65534), 0);
        assert_int_equal(runner_stockade_sh(ws, cow, "mktemp && echo \"$TMPDIR\"", WATCHDOG, &r),
                         0);
        nl = strchr(r.out, '\n');
        if (r.exit_code != 0 || !nl || strncmp(r.out, "/tmp/stockade-tmp-", 18) != 0 ||
            !strstr(r.err, "holds the copy-on-write workspace"))
                fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.out, r.err);
        /* the file mktemp made lies in that TMPDIR, which is gone with the run */
        snprintf(tmp, sizeof(tmp), "%.*s", (int)strcspn(nl + 1, "\n"), nl + 1);
        assert_int_equal(strncmp(r.out, tmp, strlen(tmp)), 0);
        assert_int_equal(access(tmp, F_OK), -1);
        runner_free(&r);
        assert_int_equal(runner_shell("rm -rf '%s'", ws), 0);
}

/* Without a mount namespace /tmp is the host's: `npm install` stopped with EACCES on the
 * read-only ~/.npm there, since no cache was given (runner_merged_setup: the directory is made
 * beneath $TMPDIR, else /tmp). */
static int merged_teardown(void **state)
{
        unsetenv("XDG_CACHE_HOME");
        unsetenv("GOPATH");
        return runner_merged_teardown(state);
}

static void tool_caches_merged(void **state)
{
        (void)state;
        check_caches(true);
}

static void timeout_kills_tree(void **state)
{
        double t0 = now_s();
        struct run_result r = run((const char *[]){"--timeout", "1", "--", "sh", "-c",
                                                   tagged("sleep 31.@1 & sleep 31.@2"), NULL});
        double took = now_s() - t0;

        assert_int_equal(r.exit_code, 124);
        assert_non_null(strstr(r.err, "timed out"));
        assert_true(took < 10);
        assert_false(runner_process_alive(tagged("sleep 31.@")));
        runner_free(&r);
}

static void nothing_outlives_the_root(void **state)
{
        /* The background child would live 31 s; the root exits at once. */
        assert_int_equal(
                run_code((const char *[]){"--", "sh", "-c",
                                          tagged("sleep 31.@8 & sleep 31.@9 & exit 0"), NULL}),
                0);
        assert_false(runner_process_alive(tagged("sleep 31.@")));
}

static void max_procs_refuses_forks(void **state)
{
        struct run_result r =
                run((const char *[]){"--max-procs", "8", "--", "python3", "-c", fork_until_refused,
                                     tagged("marker-maxprocs-@"), NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "refused 11 after 7"));
        assert_false(runner_process_alive(tagged("marker-maxprocs-@")));
        runner_free(&r);
}

static void fork_bomb_is_contained(void **state)
{
        double t0 = now_s();
        struct run_result r =
                run((const char *[]){"--max-procs", "40", "--timeout", "3", "--", "python3", "-c",
                                     tagged("import os  # marker-forkbomb-@\n"
                                            "while True:\n"
                                            "    try: os.fork()\n"
                                            "    except OSError: pass"),
                                     NULL});

        assert_int_equal(r.exit_code, 124);
        assert_true(now_s() - t0 < 30);
        assert_false(runner_process_alive(tagged("marker-forkbomb-@")));
        runner_free(&r);
}

static void rlimits(void **state)
{
        char dir[] = "/var/tmp/stockade-test-XXXXXX", cmd[256];
        struct stat st;

        /* --max-file-size: the write beyond it fails (SIGXFSZ) and the file stays small. */
        assert_non_null(mkdtemp(dir));
        chmod(dir, 0777); /* as root, the command runs as nobody by default */
        snprintf(cmd, sizeof(cmd), "head -c 3M /dev/zero > %s/big", dir);
        assert_int_equal(
                run_code((const char *[]){"--max-file-size", "1M", "--", "sh", "-c", cmd, NULL}),
                128 + 25);
        snprintf(cmd, sizeof(cmd), "%s/big", dir);
        assert_int_equal(stat(cmd, &st), 0);
        assert_true(st.st_size <= 1 << 20);
        unlink(cmd);
        rmdir(dir);

        /* --memory: a 1 GiB allocation fails. */
        struct run_result r = run((const char *[]){
                "--memory", "256M", "--", "python3", "-c",
                "try:\n    b = bytearray(1 << 30)\nexcept MemoryError:\n    print('refused')",
                NULL});
        assert_string_equal(r.out, "refused\n");
        runner_free(&r);

        /* --max-files: the 17th descriptor is refused. */
        r = run((const char *[]){"--max-files", "16", "--", "python3", "-c",
                                 "import os\nfds = []\ntry:\n"
                                 "    for i in range(64): fds.append(os.open('/', os.O_RDONLY))\n"
                                 "except OSError as e: print(e.errno)",
                                 NULL});
        assert_string_equal(r.out, "24\n"); /* EMFILE */
        runner_free(&r);

        /* --cpu: a busy loop is stopped by SIGXCPU after about a second of CPU. */
        double t0 = now_s();
        assert_int_equal(run_code((const char *[]){"--cpu", "1", "--", "sh", "-c",
                                                   "while :; do :; done", NULL}),
                         128 + 24);
        assert_true(now_s() - t0 < 20);
}

static void cli(void **state)
{
        const char *version[] = {runner_stockade(), "--version", NULL};
        const char *help[] = {runner_stockade(), "help", "run", NULL};
        const char *run_help[] = {runner_stockade(), "run", "--help", NULL};
        const char *bad[] = {runner_stockade(), "run", "--max-procs", "lots", "--", "true", NULL};
        const char *unknown[] = {runner_stockade(), "frobnicate", NULL};
        struct run_result r;

        assert_int_equal(runner_run((char *const *)version, NULL, 10, &r), 0);
        assert_int_equal(r.exit_code, 0);
        assert_true(strncmp(r.out, "stockade ", 9) == 0);
        runner_free(&r);

        assert_int_equal(runner_run((char *const *)help, NULL, 10, &r), 0);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "Examples:"));
        assert_non_null(strstr(r.out, "--max-procs"));
        runner_free(&r);

        assert_int_equal(runner_run((char *const *)run_help, NULL, 10, &r), 0);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "Usage: stockade run"));
        runner_free(&r);

        assert_int_equal(runner_run((char *const *)bad, NULL, 10, &r), 0);
        assert_int_equal(r.exit_code, 125);
        assert_string_equal(r.err, "stockade: run: --max-procs: `lots` is not valid; expected a "
                                   "whole number\n");
        runner_free(&r);

        assert_int_equal(runner_run((char *const *)unknown, NULL, 10, &r), 0);
        assert_int_equal(r.exit_code, 125);
        assert_non_null(strstr(r.err, "unknown command `frobnicate`"));
        runner_free(&r);
}

static void verbose_reports_layers(void **state)
{
        struct run_result r = run((const char *[]){"-v", "--", "/bin/true", NULL});

        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.err, "seccomp user notification    yes"));
        assert_non_null(strstr(r.err, "ptrace (tree, EXITKILL)      yes"));
        assert_non_null(strstr(r.err, "SYNC_WAKE_UP"));
        assert_non_null(strstr(r.err, "Landlock"));
        runner_free(&r);
}

static void audit_mode_reports(void **state)
{
        /* unshare is denied in enforce mode; audit lets it through and says so. */
        static const char unshare_py[] = "import ctypes\n"
                                         "libc = ctypes.CDLL(None, use_errno=True)\n"
                                         "r = libc.unshare(0)\n"
                                         "print(r, ctypes.get_errno() if r else 0)";
        struct run_result r = run(
                (const char *[]){"--mode", "audit", "-v", "--", "python3", "-c", unshare_py, NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.err, "unshare(0) would fail with EPERM"));
        assert_string_equal(r.out, "0 0\n"); /* allowed: unshare(0) is a no-op */
        runner_free(&r);

        r = run((const char *[]){"--", "python3", "-c", unshare_py, NULL});
        assert_string_equal(r.out, "-1 1\n"); /* EPERM in enforce mode */
        runner_free(&r);
}

/* Start `stockade run -- argv...` in the background, output discarded. */
static pid_t start_stockade(const char *const args[])
{
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                const char *argv[16] = {runner_stockade(), "run", "--"};
                int null = open("/dev/null", O_RDWR);
                size_t n = 3;

                for (size_t i = 0; args[i] && n < 15; i++)
                        argv[n++] = args[i];
                argv[n] = NULL;
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                execv(argv[0], runner_workspace_rw((char *const *)argv));
                _exit(121);
        }
        return pid;
}

/* Exit code of `pid` within `seconds`, else -1 (and it is killed). */
static int wait_code(pid_t pid, double seconds)
{
        double deadline = now_s() + seconds;
        int status;

        while (now_s() < deadline) {
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                usleep(10000);
        }
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
}

/* The sandbox has its own session, so ^C reaches only stockade: it forwards the first
 * SIGINT to the command, and a second one ends the whole tree. */
static void signals_are_forwarded(void **state)
{
        pid_t pid = start_stockade((const char *[]){"sleep", tagged("31.@1"), NULL});

        usleep(500000);
        kill(pid, SIGINT);
        assert_int_equal(wait_code(pid, 10), 128 + SIGINT);
        assert_false(runner_process_alive(tagged("sleep 31.@1")));

        pid = start_stockade(
                (const char *[]){"sh", "-c", tagged("trap '' INT; sleep 31.@2"), NULL});
        usleep(500000);
        kill(pid, SIGINT);
        usleep(300000);
        assert_int_equal(waitpid(pid, NULL, WNOHANG), 0); /* ignored by the command */
        kill(pid, SIGINT);
        assert_int_equal(wait_code(pid, 10), 128 + SIGKILL);
        assert_false(runner_process_alive(tagged("sleep 31.@2")));
}

/* --user: a root stockade runs the command as another user, without capabilities. */
static void run_as_user(void **state)
{
        char dir[] = "/var/tmp/stockade-test-XXXXXX", file[64], cmd[160];
        struct run_result r;
        int fd;

        if (geteuid() != 0) {
                r = run((const char *[]){"--user", "65534", "--", "/bin/true", NULL});
                assert_int_equal(r.exit_code, 125);
                assert_non_null(strstr(r.err, "--user needs stockade to run as root"));
                runner_free(&r);
                return;
        }
        /* A root-owned secret: uid 0 without capabilities may read it, uid 65534 may not. */
        assert_non_null(mkdtemp(dir));
        chmod(dir, 0755);
        snprintf(file, sizeof(file), "%s/secret", dir);
        fd = open(file, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "s3cret\n", 7), 7);
        close(fd);
        snprintf(cmd, sizeof(cmd), "id -u; id -g; id -G; cat %s; grep CapBnd /proc/self/status",
                 file);
        r = run((const char *[]){"--user", "65534:65534", "--", "sh", "-c", cmd, NULL});
        assert_string_equal(r.out, "65534\n65534\n65534\nCapBnd:\t0000000000000000\n");
        assert_non_null(strstr(r.err, "Permission denied"));
        runner_free(&r);
        /* The default as root is nobody too. */
        r = run((const char *[]){"--", "sh", "-c", cmd, NULL});
        assert_string_equal(r.out, "65534\n65534\n65534\nCapBnd:\t0000000000000000\n");
        runner_free(&r);
        /* Control: with --user root, the same file is readable, with a warning. */
        r = run((const char *[]){"--user", "root", "--", "cat", file, NULL});
        assert_string_equal(r.out, "s3cret\n");
        assert_non_null(strstr(r.err, "running as root"));
        runner_free(&r);
        unlink(file);
        rmdir(dir);
}

/* Hosts without a layer: stockade refuses, unless --allow-degraded. */
static void missing_layers_refuse(void **state)
{
        static const struct {
                const char *layer, *message;
        } cases[] = {
                {"landlock", "Landlock is not available"},
                {"ptrace", "STOCKADE_TEST_DISABLE=ptrace is set"},
                {"landlock-scopes", "STOCKADE_TEST_DISABLE=landlock-scopes is set"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct run_result r;

                setenv("STOCKADE_TEST_DISABLE", cases[i].layer, 1);
                r = run((const char *[]){"--", "/bin/echo", "ran", NULL});
                assert_int_equal(r.exit_code, 125);
                assert_string_equal(r.out, ""); /* the command never ran */
                if (!strstr(r.err, cases[i].message) || !strstr(r.err, "--allow-degraded"))
                        fail_msg("%s: %s", cases[i].layer, r.err);
                runner_free(&r);

                r = run((const char *[]){"--allow-degraded", "--", "/bin/echo", "ran", NULL});
                assert_int_equal(r.exit_code, 0);
                assert_string_equal(r.out, "ran\n");
                assert_non_null(strstr(r.err, "warning"));
                runner_free(&r);
        }
        unsetenv("STOCKADE_TEST_DISABLE");
}

/* Without ptrace the tree is tracked through the sandbox's session in /proc: the same
 * promises must hold (exit codes, nothing outlives the root, --max-procs, other processes). */
static void degraded_without_ptrace(void **state)
{
        struct run_result r;

        setenv("STOCKADE_TEST_DISABLE", "ptrace", 1);
        assert_int_equal(
                run_code((const char *[]){"--allow-degraded", "--", "sh", "-c", "exit 7", NULL}),
                7);
        assert_int_equal(
                run_code((const char *[]){"--allow-degraded", "--", "sh", "-c",
                                          tagged("sleep 31.@1 & sleep 31.@2 & exit 0"), NULL}),
                0);
        assert_false(runner_process_alive(tagged("sleep 31.@")));

        r = run((const char *[]){"--allow-degraded", "--max-procs", "8", "--", "python3", "-c",
                                 fork_until_refused, tagged("marker-degraded-@"), NULL});
        assert_non_null(strstr(r.out, "refused 11"));
        assert_false(runner_process_alive(tagged("marker-degraded-@")));
        runner_free(&r);

        /* Our own pid is outside the sandbox: kill must not reach it. */
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "kill -0 %d && echo reached || echo refused", (int)getpid());
        r = run((const char *[]){"--allow-degraded", "--", "sh", "-c", cmd, NULL});
        assert_non_null(strstr(r.out, "refused"));
        runner_free(&r);

        assert_int_equal(
                run_code((const char *[]){"--allow-degraded", "--timeout", "1", "--", "sh", "-c",
                                          tagged("sleep 31.@3 & sleep 31.@4"), NULL}),
                124);
        assert_false(runner_process_alive(tagged("sleep 31.@")));
        unsetenv("STOCKADE_TEST_DISABLE");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(true_and_exit_codes),
                cmocka_unit_test(python_runs),
                cmocka_unit_test(threads),
                cmocka_unit_test(affinity_kept),
                cmocka_unit_test(scoped_lookups_retried),
                cmocka_unit_test(missing_and_not_executable),
                cmocka_unit_test(environment),
                cmocka_unit_test(tool_caches),
                cmocka_unit_test_setup_teardown(tool_caches_merged, runner_merged_setup,
                                                merged_teardown),
                cmocka_unit_test(tool_caches_workspace_in_tmp),
                cmocka_unit_test_setup_teardown(tmpdir_workspace_in_tmp_merged, runner_merged_setup,
                                                merged_teardown),
                cmocka_unit_test(timeout_kills_tree),
                cmocka_unit_test(nothing_outlives_the_root),
                cmocka_unit_test(max_procs_refuses_forks),
                cmocka_unit_test(fork_bomb_is_contained),
                cmocka_unit_test(rlimits),
                cmocka_unit_test(cli),
                cmocka_unit_test(verbose_reports_layers),
                cmocka_unit_test(audit_mode_reports),
                cmocka_unit_test(signals_are_forwarded),
                cmocka_unit_test(run_as_user),
                cmocka_unit_test(missing_layers_refuse),
                cmocka_unit_test(degraded_without_ptrace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * What test_hidden and test_fast share (hidden_common.h): the fake HOME with its secrets, and
 * `stockade run` from its workspace, under --fast when `fast` is set.
 */
#include "tests/security/hidden_common.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

char top[PATH_MAX], home[PATH_MAX + 16], work[PATH_MAX + 16], extra[PATH_MAX + 16];
uid_t sbx_uid;
bool fast;

void put(const char *dir, const char *rel, const char *content)
{
        char path[PATH_MAX * 2];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
        assert_int_equal(chmod(path, 0644), 0);
}

void mkdirs(const char *dir, const char *rel)
{
        char path[PATH_MAX * 2];

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        assert_int_equal(mkdir(path, 0755), 0);
}

int hidden_setup(void **state)
{
        char cmd[PATH_MAX * 2];

        sbx_uid = geteuid() == 0 ? 65534 : geteuid();
        assert_non_null(getcwd(top, sizeof(top) - 32));
        strcat(top, "/hidden-XXXXXX");
        assert_non_null(mkdtemp(top));
        assert_int_equal(chmod(top, 0755), 0);
        snprintf(home, sizeof(home), "%s/home", top);
        snprintf(work, sizeof(work), "%s/home/project", top);
        snprintf(extra, sizeof(extra), "%s/extra", top);
        assert_int_equal(mkdir(home, 0755), 0);
        mkdirs(home, ".ssh");
        mkdirs(home, ".aws");
        mkdirs(home, ".config");
        mkdirs(home, ".config/gcloud");
        mkdirs(home, "project");
        assert_int_equal(mkdir(extra, 0755), 0);
        put(home, ".ssh/id_rsa", "SECRET-SSH\n");
        put(home, ".ssh/authorized_keys", "KEYS\n");
        put(home, ".aws/credentials", "SECRET-AWS\n");
        put(home, ".config/gcloud/token", "SECRET-GCLOUD\n");
        put(home, ".netrc", "SECRET-NETRC\n");
        /* An agent's own account, git's XDG store, a model hub token (added to the defaults
         * later than the rest: found by `grep -r SECRET ~` on builds before). */
        mkdirs(home, ".claude");
        mkdirs(home, ".codex");
        mkdirs(home, ".config/git");
        mkdirs(home, ".cache");
        mkdirs(home, ".cache/huggingface");
        put(home, ".claude/.credentials.json", "SECRET-CLAUDE\n");
        put(home, ".claude/settings.json", "visible-settings\n");
        put(home, ".codex/auth.json", "SECRET-CODEX\n");
        put(home, ".config/git/credentials", "SECRET-GITXDG\n");
        put(home, ".cache/huggingface/token", "SECRET-HF\n");
        put(home, "notes.txt", "visible-notes\n");
        put(home, ".config/app.conf", "visible-conf\n");
        put(extra, "private.key", "SECRET-EXTRA\n");
        put(extra, "public.txt", "visible-public\n");
        /* HOME belongs to the sandbox's uid (nobody when we are root): its mode alone would
         * let the sandbox write ~/.ssh. */
        snprintf(cmd, sizeof(cmd), "chown -R %u '%s'", (unsigned)sbx_uid, home);
        assert_int_equal(system(cmd), 0);
        setenv("HOME", home, 1);
        /* The sessions of the default view's copy-on-write workspace: not in that HOME, which
         * as root is another user's (stockade refuses a store there: session_owner.c), but in
         * this test's directory, which is ours. */
        snprintf(cmd, sizeof(cmd), "%s/state", top);
        assert_int_equal(mkdir(cmd, 0700), 0);
        setenv("XDG_STATE_HOME", cmd, 1);
        return 0;
}

/* A test that mounts in the tree (as root: a bind of HOME, a procfs, devtmpfs) and fails
 * before its own umount would leave the mount on the host: detached here, deepest first. */
static void detach_mounts(void)
{
        char line[3 * PATH_MAX], point[PATH_MAX], *points[64];
        size_t n = 0, len = strlen(top);
        FILE *f = fopen("/proc/self/mountinfo", "re");

        while (f && n < 64 && fgets(line, sizeof(line), f))
                if (sscanf(line, "%*u %*u %*u:%*u %*s %4095s", point) == 1 &&
                    strncmp(point, top, len) == 0 && point[len] == '/')
                        points[n++] = strdup(point);
        if (f)
                fclose(f);
        while (n > 0) {
                umount2(points[--n], MNT_DETACH);
                free(points[n]);
        }
}

int hidden_teardown(void **state)
{
        char cmd[PATH_MAX + 32];

        (void)state;
        if (geteuid() == 0)
                detach_mounts();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        return system(cmd) == 0 ? 0 : -1;
}

/* stockade run OPTS -- sh -c SCRIPT, from `dir`. As root the command runs as nobody, whose
 * HOME would be /nonexistent: keep ours (the fake one), which the default view's hidden paths
 * are computed from. */
void run_script_in(const char *dir, const char *const *opts, const char *script,
                   struct run_result *r)
{
        const char *v[16] = {"--env", "HOME", "--fast"};
        size_t n = fast ? 3 : 2;

        for (; opts && *opts && n < 15; opts++)
                v[n++] = *opts;
        v[n] = NULL;
        assert_int_equal(runner_stockade_sh(dir, v, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

void run_script(const char *const *opts, const char *script, struct run_result *r)
{
        run_script_in(work, opts, script, r);
}

/* The same script natively, as the sandbox's uid: the control. */
void run_native(const char *script, struct run_result *r)
{
        assert_int_equal(runner_native_sh(work, sbx_uid, script, TIMEOUT_S, r), 0);
}

/* --fast needs a mount namespace: without one this variant has nothing to run. */
bool hidden_fast_possible(void)
{
        const char *v[] = {"--env", "HOME", "--fast", NULL};
        struct run_result r;
        bool ok;

        hidden_setup(NULL);
        assert_int_equal(runner_stockade_sh(top, v, "true", TIMEOUT_S, &r), 0);
        ok = r.exit_code == 0;
        if (!ok)
                printf("skipped: --fast cannot run here: %s", r.err);
        runner_free(&r);
        hidden_teardown(NULL);
        return ok;
}

void made_later(const char *file, const char *seen, char *script, size_t size)
{
        snprintf(script, size,
                 "(sleep 0.5; mkdir -p \"$(dirname '%s')\"; echo SECRET-LATER > '%s'; "
                 "chmod a+r '%s'; sleep 1.5; rm '%s') &",
                 file, file, file, file);
        assert_int_equal(system(script), 0);
        snprintf(script, size,
                 "/usr/bin/python3 - <<'EOF'\n"
                 "import os, time\n"
                 "for i in range(100):\n"
                 "    try: fd = os.open('%s', os.O_PATH); break\n"
                 "    except OSError: time.sleep(0.05)\n"
                 "else: raise SystemExit('never held')\n"
                 "print('held')\n"
                 "for when in ('live', 'deleted'):\n"
                 "    for p in ('/proc/self/fd/%%d' %% fd, '%s'):\n"
                 "        try: print(when, open(p).read())\n"
                 "        except OSError: print(when, 'refused')\n"
                 "    time.sleep(1.6)\n"
                 "EOF\n",
                 seen ? seen : file, seen ? seen : file);
}

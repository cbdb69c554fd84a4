/* What test_remap and test_remap_refuse share (remap_common.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/security/remap_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char top[PATH_MAX], ws[PATH_MAX + 16], home[PATH_MAX + 16], marks[PATH_MAX + 16];
char land[64];
char states[PATH_MAX + 16];
uid_t sbx_uid;
bool have_ns, xattr_ok;
static char saved_home[PATH_MAX];
/* The suite's own STOCKADE_TEST_DISABLE and STOCKADE_TEST_ALLOW_DEGRADED (NULL: unset). */
static const char *given_disable, *given_degraded;

/* `@X` in `in` replaced by the value of key X (keys: a NULL-terminated list of "Xvalue"). */
void expand(char *out, size_t len, const char *in, const char *const *keys)
{
        size_t n = 0;

        for (; *in && n + 1 < len; in++) {
                const char *val = NULL;

                if (in[0] == '@')
                        for (const char *const *k = keys; *k && !val; k++)
                                if ((*k)[0] == in[1])
                                        val = *k + 1;
                if (!val) {
                        out[n++] = *in;
                        continue;
                }
                n += (size_t)snprintf(out + n, len - n, "%s", val);
                if (n >= len)
                        fail_msg("expand: %s too long", in);
                in++;
        }
        out[n] = '\0';
}

/* What a test found wrong so far: the checks of a table add to it, so that one run names every
 * failing case rather than the first; check_report() fails the test with it. */
char report[1 << 17];

void note(const char *fmt, ...)
{
        size_t n = strlen(report);
        va_list ap;

        if (n + 4 >= sizeof(report))
                return;
        strcpy(report + n, "\n- ");
        va_start(ap, fmt);
        vsnprintf(report + n + 3, sizeof(report) - n - 3, fmt, ap);
        va_end(ap);
        for (n = strlen(report); n > 0 && report[n - 1] == '\n'; n--)
                report[n - 1] = '\0';
}

void check_report(void)
{
        if (*report) {
                /* not through cmocka, which cuts a message short */
                printf("%s\n", report);
                fflush(stdout);
                fail_msg("the failures above");
        }
}

/* The output of a host command (popen), malloc'ed. */
char *capture(const char *fmt, ...)
{
        char cmd[4 * PATH_MAX], buf[4096], *out = NULL;
        size_t len = 0, n;
        va_list ap;
        FILE *p;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        p = popen(cmd, "r");
        assert_non_null(p);
        out = calloc(1, 1);
        while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
                out = realloc(out, len + n + 1);
                assert_non_null(out);
                memcpy(out + len, buf, n);
                len += n;
                out[len] = '\0';
        }
        pclose(p);
        return out;
}

/* Everything a change could touch: names, types, modes, owners, sizes, mtimes, ctimes (a
 * chown to oneself or a setxattr moves it), link counts, symlink targets, content, xattrs. */
char *snapshot(const char *dir)
{
        return capture("cd '%s' && find . -printf '%%p %%y %%m %%u:%%g %%s %%T@ %%C@ %%n %%l\\n' | "
                       "LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r "
                       "sha256sum && " PY " -c 'import os\n"
                       "for r, ds, fs in sorted(os.walk(\".\")):\n"
                       "    for n in sorted(fs):\n"
                       "        p = os.path.join(r, n)\n"
                       "        print(p, sorted(os.listxattr(p, follow_symlinks=False)))'",
                       dir);
}

/* The lines of `a` that `b` lacks, each after `mark`, into `out`. */
static void lines_missing(const char *a, const char *b, const char *mark, char *out, size_t len)
{
        for (const char *p = a; *p;) {
                const char *end = strchrnul(p, '\n');
                size_t n = (size_t)(end - p), used = strlen(out);
                bool found = false;

                for (const char *q = b; *q && !found;) {
                        const char *qend = strchrnul(q, '\n');

                        found = (size_t)(qend - q) == n && strncmp(p, q, n) == 0;
                        q = *qend ? qend + 1 : qend;
                }
                if (!found && used + n + 8 < len)
                        snprintf(out + used, len - used, "\n    %s %.*s", mark, (int)n, p);
                p = *end ? end + 1 : end;
        }
}

void same_snapshot(const char *dir, const char *before, const char *what)
{
        char *after = snapshot(dir), diff[4096] = "";

        if (strcmp(before, after) != 0) {
                lines_missing(before, after, "-", diff, sizeof(diff));
                lines_missing(after, before, "+", diff, sizeof(diff));
                note("%s: %s changed on the host:%s", what, dir, diff);
        }
        free(after);
}

/* 1 if a line of `out` starts with `prefix` and ends there or goes on with ':'. */
bool has_line(const char *out, const char *prefix)
{
        size_t n = strlen(prefix);

        for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, prefix, n) == 0 && (p[n] == '\n' || p[n] == ':' || p[n] == '\0'))
                        return true;
        return false;
}

static uid_t native_uid(void)
{
        return geteuid() == 0 ? 65534 : geteuid();
}

/* stockade run -q OPTS -- sh -c SCRIPT from `dir` (runner.h adds --rw DIR unless OPTS name
 * --cow). The script's stderr goes to its stdout, so that what the program printed is one
 * string. */
void run_from(const char *dir, const char *const *opts, const char *script, struct run_result *r)
{
        const char *v[48] = {"-q"};
        char *s;
        size_t n = 1;

        for (; opts && *opts; opts++) {
                assert_true(n < 47);
                v[n++] = *opts;
        }
        v[n] = NULL;
        assert_true(asprintf(&s, "exec 2>&1; %s", script) > 0);
        assert_int_equal(runner_stockade_sh(dir, v, s, TIMEOUT_S, r), 0);
        free(s);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

void run(const char *const *opts, const char *script, struct run_result *r)
{
        run_from(ws, opts, script, r);
}

/* The script natively, as the uid the sandbox gets (nobody when we are root). */
void run_native(const char *script, struct run_result *r)
{
        assert_int_equal(runner_native_sh(NULL, sbx_uid, script, TIMEOUT_S, r), 0);
}

void need_ns(void)
{
        if (!have_ns) {
                print_message("  skipped: no mount namespace can be made here\n");
                skip();
        }
}

bool ran_ok(const struct run_result *r, const char *what)
{
        if (r->exit_code == 0)
                return true;
        note("%s: the run did not run (exit %d): %s%s", what, r->exit_code, r->out, r->err);
        return false;
}

void expect_ran(const struct run_result *r)
{
        if (!ran_ok(r, "run"))
                check_report();
}

void chown_tree(const char *dir)
{
        sh("chown -R %u '%s'", (unsigned)sbx_uid, dir);
}

int remap_setup(void **state)
{
        char probe[PATH_MAX + 32];
        struct run_result r;

        (void)state;
        sbx_uid = native_uid();
        if (getenv("STOCKADE_TEST_DISABLE"))
                given_disable = strdup(getenv("STOCKADE_TEST_DISABLE"));
        if (getenv("STOCKADE_TEST_ALLOW_DEGRADED"))
                given_degraded = strdup(getenv("STOCKADE_TEST_ALLOW_DEGRADED"));
        /* Under the build directory: the sandbox's /tmp is its own. */
        assert_non_null(getcwd(top, sizeof(top) - 32));
        strcat(top, "/remap-XXXXXX");
        assert_non_null(mkdtemp(top));
        assert_int_equal(chmod(top, 0755), 0);
        snprintf(ws, sizeof(ws), "%s/ws", top);
        snprintf(home, sizeof(home), "%s/home", top);
        snprintf(marks, sizeof(marks), "%s/marks", top);
        /* A fake HOME, which the default view's hidden paths are computed from. */
        sh("mkdir -p '%s' '%s' '%s/.ssh/inner' '%s/proj' '%s/../otherhome' && "
           "printf 'TOKEN-SSH-3hq9\\n' > '%s/.ssh/id_rsa' && printf 'Host x\\n' > "
           "'%s/.ssh/config' && printf 'home-notes\\n' > '%s/notes.txt' && chmod 644 "
           "'%s/.ssh/id_rsa' && printf 'WS-SIB\\n' > '%s/sib'",
           ws, marks, home, home, home, home, home, home, home, ws);
        chown_tree(top);
        /* Session stores beside the tree, not in it: as root the tree is the sandbox user's,
         * and stockade refuses a store another user has a hand in (session_owner.c). */
        snprintf(states, sizeof(states), "%s.state", top);
        assert_int_equal(mkdir(states, 0700), 0);
        setenv("XDG_STATE_HOME", states, 1);
        if (!getenv("HOME") || strlen(getenv("HOME")) >= sizeof(saved_home))
                saved_home[0] = '\0';
        else
                strcpy(saved_home, getenv("HOME"));
        setenv("HOME", home, 1);
        snprintf(probe, sizeof(probe), "%s/xattr-probe", top);
        sh(": > '%s'", probe);
        xattr_ok = runner_shell(PY " -c 'import os, sys; os.setxattr(sys.argv[1], \"user.k\", "
                                   "b\"v\")' '%s' 2>/dev/null",
                                probe) == 0;
        if (!xattr_ok)
                print_message("  (no user xattrs on this file system: setxattr not tried)\n");
        unlink(probe);
        strcpy(land, "/run/lock/stockade-remap-XXXXXX");
        if (!mkdtemp(land)) {
                print_message("  (no writable /run/lock: no target in read-only land)\n");
                land[0] = '\0';
        } else {
                assert_int_equal(chmod(land, 0755), 0);
                chown_tree(land);
        }
        run((const char *[]){"--tmp", marks, NULL}, "true", &r);
        have_ns = r.exit_code == 0;
        if (!have_ns)
                print_message("  (no mount namespace here: %s)\n", r.err);
        runner_free(&r);
        return 0;
}

int remap_teardown(void **state)
{
        (void)state;
        if (*saved_home)
                setenv("HOME", saved_home, 1);
        if (*land && runner_shell("rm -rf '%s'", land) != 0)
                return -1;
        if (*states && runner_shell("rm -rf '%s'", states) != 0)
                return -1;
        return runner_shell("rm -rf '%s'", top) == 0 ? 0 : -1;
}

static void setenv_or_unset(const char *name, const char *value)
{
        if (value)
                setenv(name, value, 1);
        else
                unsetenv(name);
}

/* What a test may have changed in the environment (a failed one too). */
void restore_env(void)
{
        setenv_or_unset("STOCKADE_TEST_DISABLE", given_disable);
        setenv_or_unset("STOCKADE_TEST_ALLOW_DEGRADED", given_degraded);
        setenv("HOME", home, 1);
}

/* Before each test. */
int reset_env(void **state)
{
        (void)state;
        report[0] = '\0';
        restore_env();
        return 0;
}

void disable(const char *layers)
{
        setenv("STOCKADE_TEST_DISABLE", layers, 1);
        setenv("STOCKADE_TEST_ALLOW_DEGRADED", "1", 1);
}

/*
 * The mount flags the kernel enforces today (supervisor/walls.c): --ro carves a read-only
 * place out of a writable one, --rw adds one, and the flags the emulation will need (--tmp,
 * --cow, a different sandbox path) are refused before anything runs. Judged from outside:
 * the files on the host, after the run.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 60 };

static char top[PATH_MAX], ws[PATH_MAX + 16], extra[64];

static char *slurp(const char *path)
{
        static char buf[256];
        FILE *f = fopen(path, "r");
        size_t n;

        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static int setup(void **state)
{
        char cmd[PATH_MAX * 8];

        assert_non_null(getcwd(top, sizeof(top) - 32));
        strcat(top, "/view-XXXXXX");
        assert_non_null(mkdtemp(top));
        snprintf(ws, sizeof(ws), "%s/ws", top);
        /* Outside every default writable place (the build tree may be under /tmp). */
        /* Not /dev/shm either: the sandbox has a private one. */
        strcpy(extra, "/run/lock/stockade-view-XXXXXX");
        if (!mkdtemp(extra)) {
                print_message("skipped: no writable /run/lock for a directory outside the "
                              "writable places\n");
                exit(77);
        }
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s/protected' '%s/open' && echo orig > '%s/protected/f' && "
                 "chmod 755 '%s' '%s' && chown -R %u '%s' '%s'",
                 ws, ws, ws, top, extra, geteuid() == 0 ? 65534u : (unsigned)geteuid(), top, extra);
        assert_int_equal(system(cmd), 0);
        return 0;
}

static int teardown(void **state)
{
        char cmd[3 * PATH_MAX];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", top, extra);
        return system(cmd) == 0 ? 0 : -1;
}

static void run(const char *const *opts, const char *script, struct run_result *r)
{
        assert_int_equal(runner_stockade_sh(ws, opts, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

static void path_of(char *out, size_t len, const char *dir, const char *name)
{
        snprintf(out, len, "%s/%s", dir, name);
}

/* --ro ./protected inside the writable workspace: nothing in it changes, by any call. */
static void ro_carves_out(void **state)
{
        char p[PATH_MAX * 2];
        struct stat before, after;
        struct run_result r;

        path_of(p, sizeof(p), ws, "protected/f");
        assert_int_equal(stat(p, &before), 0);
        run((const char *[]){"--ro", "protected", NULL},
            "echo x > protected/f; echo y >> protected/f; true > protected/f; echo n > "
            "protected/new; "
            "rm -f protected/f; mv protected/f moved; chmod 4777 protected/f; "
            "touch -d 2001-01-01 protected/f; mkdir protected/d; ln -s x protected/l; "
            "mv open protected/; echo ok > open/inside && echo wrote-open",
            &r);
        if (!strstr(r.out, "wrote-open"))
                fail_msg("the rest of the workspace is not writable: %s %s", r.out, r.err);
        runner_free(&r);
        assert_string_equal(slurp(p), "orig\n");
        assert_int_equal(stat(p, &after), 0);
        assert_int_equal(before.st_mode, after.st_mode);
        assert_int_equal(before.st_mtime, after.st_mtime);
        path_of(p, sizeof(p), ws, "protected");
        {
                char cmd[PATH_MAX * 3];
                snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s')\" = f", p);
                assert_int_equal(system(cmd), 0); /* nothing created, moved in or removed */
        }
}

/* --ro through a symlink (outside review R1): the real directory is what is carved out. */
static void ro_through_symlink(void **state)
{
        char p[PATH_MAX * 2], cmd[PATH_MAX * 3];
        struct run_result r;

        snprintf(cmd, sizeof(cmd), "cd '%s' && ln -sfn protected link", ws);
        assert_int_equal(system(cmd), 0);
        run((const char *[]){"--ro", "link", NULL}, "echo x > protected/f; echo y > link/f", &r);
        runner_free(&r);
        path_of(p, sizeof(p), ws, "protected/f");
        assert_string_equal(slurp(p), "orig\n");
}

/* A hidden pattern inside the workspace: its matches keep their mode (outside review R5). */
static void hidden_pattern_keeps_mode(void **state)
{
        char p[PATH_MAX * 2], cmd[PATH_MAX * 3];
        struct run_result r;
        struct stat st;

        snprintf(cmd, sizeof(cmd),
                 "cd '%s' && mkdir -p keys && echo k > keys/a.key && "
                 "chmod 600 keys/a.key && chown -R %u keys",
                 ws, geteuid() == 0 ? 65534u : (unsigned)geteuid());
        assert_int_equal(system(cmd), 0);
        run((const char *[]){"--hide", "keys/*.key", NULL},
            "cat keys/a.key; chmod 0644 keys/a.key; touch -d 2001-01-01 keys/a.key", &r);
        if (strstr(r.out, "k\n"))
                fail_msg("read a hidden file: %s", r.out);
        runner_free(&r);
        path_of(p, sizeof(p), ws, "keys/a.key");
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_true(st.st_mtime > 1000000000 + 100000000);
}

/* --ro . : the workspace itself becomes read-only. */
static void ro_workspace(void **state)
{
        char p[PATH_MAX * 2];
        struct run_result r;

        run((const char *[]){"--ro", ".", NULL}, "echo z > made; echo q > open/made; echo ran", &r);
        if (!strstr(r.out, "ran"))
                fail_msg("--ro . did not run: exit %d %s", r.exit_code, r.err);
        runner_free(&r);
        path_of(p, sizeof(p), ws, "made");
        assert_int_equal(access(p, F_OK), -1);
        path_of(p, sizeof(p), ws, "open/made");
        assert_int_equal(access(p, F_OK), -1);
}

/* --rw DIR outside the workspace: writable; without the flag it is not. */
static void rw_adds_a_place(void **state)
{
        char script[PATH_MAX * 2], p[PATH_MAX * 2];
        struct run_result r;

        snprintf(script, sizeof(script), "echo e > '%s/e'", extra);
        run(NULL, script, &r);
        runner_free(&r);
        path_of(p, sizeof(p), extra, "e");
        assert_int_equal(access(p, F_OK), -1);
        run((const char *[]){"--rw", extra, NULL}, script, &r);
        if (r.exit_code != 0)
                fail_msg("--rw: exit %d %s", r.exit_code, r.err);
        runner_free(&r);
        assert_string_equal(slurp(p), "e\n");
}

/* What the kernel cannot enforce yet is refused, naming the flag, with nothing run. */
static void refused_flags(void **state)
{
        static const char *const bad[][3] = {
                {"--tmp", "/scratch", "--tmp /scratch"},
                {"--ro", "/usr:/opt/usr", "--ro /usr:/opt/usr"},
                {"--rw", "/nonexistent-stockade", "--rw /nonexistent-stockade"},
                {"--ro", "", "--ro"},
        };
        char p[PATH_MAX * 2];

        path_of(p, sizeof(p), ws, "ran");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct run_result r;

                run((const char *[]){bad[i][0], bad[i][1], NULL}, "echo > ran", &r);
                if (r.exit_code != 125 || !strstr(r.err, bad[i][2]))
                        fail_msg("%s %s: exit %d, stderr %s", bad[i][0], bad[i][1], r.exit_code,
                                 r.err);
                runner_free(&r);
                assert_int_equal(access(p, F_OK), -1);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(ro_carves_out),
                cmocka_unit_test(ro_through_symlink),
                cmocka_unit_test(hidden_pattern_keeps_mode),
                cmocka_unit_test(ro_workspace),
                cmocka_unit_test(rw_adds_a_place),
                cmocka_unit_test(refused_flags),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

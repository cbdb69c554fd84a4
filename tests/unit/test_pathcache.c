/*
 * The start-up's memo (supervisor/pathcache.h): pc_realpath, pc_stat and pc_lstat answer as
 * realpath(3), stat(2) and lstat(2) do — the same path or the same errno — on a tree of
 * awkward symlinks (relative and absolute, chains, loops, dangling, through "..", a file
 * used as a directory, trailing slashes), with the memo on and warm; and a path made after
 * the memo saw it missing is found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/pathcache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char T[PATH_MAX];

#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/pathcache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(T))
                return -1;
        /* T itself may lie behind a symlink (/tmp on some hosts): compare canonical answers. */
        return runner_shell("cd '%s' && mkdir -p a/b/c d && touch a/b/f d/g && "
                            "ln -s a/b rel && ln -s '%s/d' abs && ln -s rel chain && "
                            "ln -s ../d a/up && ln -s loop1 loop2 && ln -s loop2 loop1 && "
                            "ln -s nowhere dangling && ln -s a/b/f tofile && "
                            "ln -s ../../d/g a/b/c/deep && ln -s / root && ln -s . dot && "
                            "ln -s chain/c/../../up twisty && "
                            /* a target of 4,094 bytes: with what follows it, the walk is
                             * longer than PATH_MAX, the answer is not (an outside review) */
                            "ln -s \"$(printf './%%.0s' $(seq 2045))a/b\" longlink",
                            T, T);
}

static int teardown(void **state)
{
        (void)state;
        pathcache_end();
        sh("rm -rf '%s'", T);
        return 0;
}

static const char *const names[] = {
        "",          "/",        "a",          "a/b",       "a/b/",       "a/b/f",
        "a/b/f/",    "a/b/f/x",  "a/./b/../b", "a/..",      "a/../..",    "rel",
        "rel/",      "rel/f",    "rel/c/..",   "abs",       "abs/g",      "chain/c",
        "chain/f/",  "a/up/g",   "loop1",      "loop2/x",   "dangling",   "dangling/",
        "tofile",    "tofile/",  "a/b/c/deep", "root",      "root/proc",  "dot/dot/a",
        "twisty",    "twisty/g", "missing",    "missing/x", "a//b///f",   "rel/../a/b",
        "a/up/../a", "../",      "chain/../d", "longlink",  "longlink/f", "longlink/c/deep",
};

/* One path, three ways, against libc. */
static void same(const char *path)
{
        char want[PATH_MAX], got[PATH_MAX];
        struct stat ws, gs;
        char *w, *g;
        int we, ge, wr, gr;

        errno = 0;
        w = realpath(path, want);
        we = errno;
        errno = 0;
        g = pc_realpath(path, got);
        ge = errno;
        if (!w != !g || (w && strcmp(want, got) != 0) || (!w && we != ge))
                fail_msg("realpath(%s): libc %s (%s), memo %s (%s)", path, w ? want : "-",
                         w ? "" : strerror(we), g ? got : "-", g ? "" : strerror(ge));
        errno = 0;
        wr = stat(path, &ws);
        we = errno;
        errno = 0;
        gr = pc_stat(path, &gs);
        ge = errno;
        if (wr != gr ||
            (wr == 0 &&
             (ws.st_ino != gs.st_ino || ws.st_dev != gs.st_dev || ws.st_mode != gs.st_mode)) ||
            (wr < 0 && we != ge))
                fail_msg("stat(%s): libc %d (%s), memo %d (%s)", path, wr, strerror(we), gr,
                         strerror(ge));
        errno = 0;
        wr = lstat(path, &ws);
        we = errno;
        errno = 0;
        gr = pc_lstat(path, &gs);
        ge = errno;
        if (wr != gr || (wr == 0 && (ws.st_ino != gs.st_ino || ws.st_mode != gs.st_mode)) ||
            (wr < 0 && we != ge))
                fail_msg("lstat(%s): libc %d (%s), memo %d (%s)", path, wr, strerror(we), gr,
                         strerror(ge));
}

static void each(void)
{
        char path[2 * PATH_MAX];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", T, names[i]);
                same(path);
        }
}

static void as_libc(void **state)
{
        (void)state;
        pathcache_begin();
        each(); /* cold */
        each(); /* warm: every answer from the memo where it has one */
        pathcache_end();
        each(); /* off: libc itself */
}

/* A path made after the memo saw it missing is found once the memo is told (as cow.c does
 * after making the session store), and outside a window at once. */
static void made_later_found(void **state)
{
        char path[PATH_MAX + 16], real[PATH_MAX];
        struct stat st;

        (void)state;
        snprintf(path, sizeof(path), "%s/later", T);
        pathcache_begin();
        assert_int_equal(pc_lstat(path, &st), -1);
        assert_int_equal(errno, ENOENT);
        assert_null(pc_realpath(path, real));
        sh("mkdir '%s/later'", T);
        assert_int_equal(pc_lstat(path, &st), -1); /* the memo's snapshot */
        pathcache_forget();
        assert_int_equal(pc_lstat(path, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_non_null(pc_realpath(path, real));
        pathcache_end();
        sh("rmdir '%s/later'", T);
        pathcache_begin();
        assert_int_equal(pc_stat(path, &st), -1);
        pathcache_end();
        sh("mkdir '%s/later'", T);
        assert_int_equal(pc_stat(path, &st), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(as_libc),
                cmocka_unit_test(made_later_found),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

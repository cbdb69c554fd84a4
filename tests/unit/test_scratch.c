/*
 * The scratch cleaner's own walk (supervisor/scratch.h, scratch_clean_tree), on plain
 * directories under $TMPDIR: it empties a tree the sandbox may have made awkward (directories
 * it cannot list or write, symlinks, FIFOs, a hard link to a file outside) and touches
 * nothing outside it; a tree too deep for it is refused, for the shell's way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/scratch.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char T[PATH_MAX];

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/scratchtest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(T) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        sh("chmod -R u+rwx '%s' && rm -rf '%s'", T, T);
        return 0;
}

/* Entries in T/name (0 when empty), -1 when it is gone. */
static int entries(const char *name)
{
        char cmd[2 * PATH_MAX + 64];
        int n = -1;
        FILE *p;

        snprintf(cmd, sizeof(cmd), "ls -A '%s/%s' 2>/dev/null | wc -l; test -d '%s/%s' || echo x",
                 T, name, T, name);
        p = popen(cmd, "r");
        assert_non_null(p);
        if (fscanf(p, "%d", &n) != 1)
                n = -1;
        if (fgetc(p) == '\n' && fgetc(p) == 'x')
                n = -1;
        pclose(p);
        return n;
}

static int open_dir(const char *name)
{
        char path[2 * PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", T, name);
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

static mode_t mode_of(const char *name)
{
        char path[2 * PATH_MAX];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", T, name);
        assert_int_equal(lstat(path, &st), 0);
        return st.st_mode & 07777;
}

/* What a program leaves in its /tmp: emptied, and nothing outside changes mode or content. */
static void awkward_tree_emptied(void **state)
{
        int fd;

        (void)state;
        sh("cd '%s' && mkdir -p out/keep s/locked/in s/ro/sub s/plain && "
           "echo K > out/keep/k && echo F > out/file && chmod 400 out/file && chmod 500 out/keep "
           "&& "
           "echo a > s/locked/in/a && echo b > s/ro/b && echo c > s/ro/sub/c && "
           "touch s/plain/.hidden s/plain/x && ln -s ../out/keep s/link && "
           "ln -s /nonexistent s/dangling && mkfifo s/fifo && ln out/file s/hard && "
           "chmod 000 s/locked && chmod 500 s/ro s/ro/sub && chmod 1777 s/plain",
           T);
        fd = open_dir("s");
        assert_int_equal(scratch_clean_tree(fd), 0);
        close(fd);
        assert_int_equal(entries("s"), 0);
        /* The directory itself stays: the cleaner removes it by path, after a check. */
        assert_int_equal(entries("out/keep"), 1);
        assert_int_equal(mode_of("out/keep"), 0500);
        assert_int_equal(mode_of("out/file"), 0400); /* `chmod -R u+rwx` made it 0700 */
        sh("grep -qx K '%s/out/keep/k' && grep -qx F '%s/out/file'", T, T);
}

/* An empty directory is done at once; a tree deeper than the walk goes is refused (the shell
 * takes it from there), and what lies outside is still untouched. */
static void empty_and_too_deep(void **state)
{
        char deep[PATH_MAX];
        int fd;

        (void)state;
        sh("mkdir -p '%s/empty' '%s/deepout' && echo D > '%s/deepout/d'", T, T, T);
        fd = open_dir("empty");
        assert_int_equal(scratch_clean_tree(fd), 0);
        close(fd);
        assert_int_equal(entries("empty"), 0);

        snprintf(deep, sizeof(deep), "deep");
        for (int i = 0; i < 100; i++)
                strcat(deep, "/d");
        sh("cd '%s' && mkdir -p '%s' && ln -s ../../deepout deep/d/out", T, deep);
        fd = open_dir("deep");
        assert_int_equal(scratch_clean_tree(fd), -1);
        close(fd);
        assert_true(entries("deep") >= 1);
        assert_int_equal(entries("deepout"), 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(awkward_tree_emptied),
                cmocka_unit_test(empty_and_too_deep),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

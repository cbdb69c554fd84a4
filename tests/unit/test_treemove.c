/*
 * Moving a directory by copying it (supervisor/vfs/treemove.h), on plain directories under
 * $TMPDIR: what arrives is what left (content, modes, times, symlinks, FIFOs, hard links,
 * user.* xattrs), rename(2)'s rules for the target, and nothing changed when the tree holds
 * something the caller could not recreate or remove.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/vfs/treemove.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static char T[PATH_MAX];
static int root_fd = -1;

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

/* A listing of the tree at T/name: type, mode, size, mtime, link target, content hash. */
static char *listing(const char *name)
{
        char cmd[2 * PATH_MAX], *buf = NULL;
        size_t cap = 0, len = 0;
        FILE *p;
        int c;

        snprintf(cmd, sizeof(cmd),
                 "cd '%s/%s' && find . -printf '%%p %%y %%m %%s %%T@ %%l\\n' | LC_ALL=C sort && "
                 "find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum",
                 T, name);
        p = popen(cmd, "r");
        assert_non_null(p);
        while ((c = fgetc(p)) != EOF) {
                if (len + 1 >= cap)
                        buf = realloc(buf, cap = cap ? cap * 2 : 4096);
                buf[len++] = (char)c;
        }
        assert_int_equal(pclose(p), 0);
        if (!buf)
                buf = calloc(1, 1);
        buf[len] = '\0';
        return buf;
}

static bool exists(const char *name)
{
        char p[2 * PATH_MAX];

        snprintf(p, sizeof(p), "%s/%s", T, name);
        return access(p, F_OK) == 0 || errno != ENOENT;
}

/* A source tree with one of everything. */
static void make_src(const char *name)
{
        char p[2 * PATH_MAX];

        sh("cd '%s' && mkdir -p %s/sub/deep %s/empty && printf 'hello\\n' >%s/a.txt && "
           "head -c 200000 /dev/urandom >%s/sub/blob && ln %s/a.txt %s/sub/hard && "
           "ln -s ../a.txt %s/sub/rel && ln -s /nonexistent %s/dangling && mkfifo %s/fifo && "
           "printf x >%s/sub/deep/x && chmod 751 %s/sub && chmod 600 %s/sub/blob && "
           "chmod 1777 %s/empty && find %s -exec touch -h -d @1600000000 {} +",
           T, name, name, name, name, name, name, name, name, name, name, name, name, name, name);
        snprintf(p, sizeof(p), "%s/%s/a.txt", T, name);
        if (setxattr(p, "user.tag", "kept", 4, 0) < 0 && errno != ENOTSUP)
                fail_msg("setxattr: %s", strerror(errno));
}

static void move_all(void **state)
{
        char *before, *after, p[2 * PATH_MAX], v[8] = "";
        struct stat a, h;

        (void)state;
        make_src("src1");
        before = listing("src1");
        assert_int_equal(treemove(root_fd, "src1", root_fd, "dst1", 0), 0);
        assert_false(exists("src1"));
        after = listing("dst1");
        assert_string_equal(before, after);
        snprintf(p, sizeof(p), "%s/dst1/a.txt", T);
        assert_int_equal(stat(p, &a), 0);
        snprintf(p, sizeof(p), "%s/dst1/sub/hard", T);
        assert_int_equal(stat(p, &h), 0);
        assert_true(a.st_ino == h.st_ino); /* still one file */
        snprintf(p, sizeof(p), "%s/dst1/a.txt", T);
        if (getxattr(p, "user.tag", v, sizeof(v) - 1) >= 0)
                assert_string_equal(v, "kept");
        free(before);
        free(after);
}

/* rename(2)'s rules: an empty directory is replaced, anything else is not. */
static void target_rules(void **state)
{
        char *before;

        (void)state;
        make_src("src2");
        sh("cd '%s' && mkdir -p full/x emptyd && touch file", T);
        before = listing("src2");
        assert_int_equal(treemove(root_fd, "src2", root_fd, "full", 0), -ENOTEMPTY);
        assert_int_equal(treemove(root_fd, "src2", root_fd, "file", 0), -ENOTDIR);
        assert_int_equal(treemove(root_fd, "src2", root_fd, "emptyd", RENAME_NOREPLACE), -EEXIST);
        assert_string_equal(listing("src2"), before); /* untouched each time */
        assert_int_equal(treemove(root_fd, "src2", root_fd, "emptyd", 0), 0);
        assert_false(exists("src2"));
        assert_string_equal(listing("emptyd"), before);
        free(before);
}

/* What could not be recreated or removed: EXDEV, and nothing moved or left beside. */
static void refused_untouched(void **state)
{
        char *before;
        int r;

        (void)state;
        make_src("src3");
        sh("chmod 555 '%s/src3/sub/deep'", T); /* could not be emptied */
        before = listing("src3");
        /* judged by the mode bits alone, as for a program without capabilities, root too */
        r = treemove(root_fd, "src3", root_fd, "dst3", 0);
        assert_int_equal(r, -EXDEV);
        assert_string_equal(listing("src3"), before);
        assert_false(exists("dst3"));
        sh("test -z \"$(ls -A '%s' | grep stockade-move)\"", T);
        free(before);
        /* deeper than the copy goes (it recurses on a notifier thread's stack) */
        sh("cd '%s' && mkdir deep && cd deep && for i in $(seq 1 140); do mkdir d && cd d; done",
           T);
        assert_int_equal(treemove(root_fd, "deep", root_fd, "deep2", 0), -EXDEV);
        assert_true(exists("deep") && !exists("deep2"));
        make_src("src4");
        {
                char p[2 * PATH_MAX];

                snprintf(p, sizeof(p), "%s/src4/dev", T);
                if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) {
                        before = listing("src4");
                        assert_int_equal(treemove(root_fd, "src4", root_fd, "dst4", 0), -EXDEV);
                        assert_string_equal(listing("src4"), before);
                        assert_false(exists("dst4"));
                        free(before);
                }
        }
}

static int setup(void **state)
{
        const char *t = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/treemove-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(T))
                return -1;
        root_fd = open(T, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        (void)state;
        close(root_fd);
        sh("chmod -R u+rwx '%s'; rm -rf '%s'", T, T);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(move_all),
                cmocka_unit_test(target_rules),
                cmocka_unit_test(refused_untouched),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

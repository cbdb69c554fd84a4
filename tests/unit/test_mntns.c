/*
 * The namespace maker's binds (shim/mntns.h): a bind's source is checked against the
 * directory the view opened for it (mnt_bind_pin). A source swapped between the view's open
 * and the maker's (renamed away, another directory or a symlink put at its path by a program
 * that may write its parent) fails the namespace with EXDEV instead of being bound where the
 * view thinks its own tree is. Needs a mount namespace: as root, or in a user namespace of
 * our own; skips (77) where neither can be made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "shim/mntns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char T[PATH_MAX / 2];
static bool userns; /* the maker needs a user namespace of its own (not root) */

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/mntnstest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(T))
                return -1;
        return runner_shell("mkdir '%s/a' '%s/b' '%s/target' && echo A >'%s/a/file' && "
                            "echo B >'%s/b/file'",
                            T, T, T, T, T);
}

static int teardown(void **state)
{
        (void)state;
        return runner_shell("rm -rf '%s'", T);
}

/* The maker binds `source` at `target`, pinned to what `pinned` opens (NULL: not pinned).
 * Returns ns_finish's result; on success *content is the first line of file inside. */
static int bind_once(const char *source, const char *pinned, char *content, size_t size,
                     const char **step)
{
        struct mnt_bind *b = calloc(1, sizeof(*b));
        struct ns_maker mk = {.pid = -1, .pipe = -1, .cmd = -1};
        struct ns_pid pns;
        int fds[4], target_fd = -1, root_fd = -1, r;

        assert_non_null(b);
        snprintf(b->source, sizeof(b->source), "%s/%s", T, source);
        snprintf(b->target, sizeof(b->target), "%s/target", T);
        if (pinned) {
                char path[PATH_MAX + 8];
                int fd;

                snprintf(path, sizeof(path), "%s/%s", T, pinned);
                fd = open(path, O_PATH | O_CLOEXEC);
                assert_true(fd >= 0);
                mnt_bind_pin(b, fd);
                close(fd);
        }
        r = ns_start(&mk, userns, false, false, b, 1, step);
        if (r == 0)
                r = ns_finish(&mk, userns, false, false, b, 1, fds, &target_fd, &root_fd, &pns,
                              step);
        if (r == 0) {
                int fd = openat(target_fd, "file", O_RDONLY | O_CLOEXEC);
                ssize_t n;

                assert_true(fd >= 0);
                n = read(fd, content, size - 1);
                assert_true(n > 0);
                content[n] = '\0';
                content[strcspn(content, "\n")] = '\0';
                close(fd);
                close(target_fd);
                close(root_fd);
                for (int i = 0; i < 4; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
        }
        free(b);
        return r;
}

/* The source the view opened is bound: its file is seen at the target. */
static void pinned_source_bound(void **state)
{
        char content[64];
        const char *step = NULL;

        (void)state;
        assert_int_equal(bind_once("a", "a", content, sizeof(content), &step), 0);
        assert_string_equal(content, "A");
}

/* Another directory at the source's path when the maker opens it: EXDEV, nothing bound. */
static void swapped_source_refused(void **state)
{
        char content[64];
        const char *step = NULL;

        (void)state;
        assert_int_equal(bind_once("a", "b", content, sizeof(content), &step), -EXDEV);
        assert_non_null(strstr(step, "moved or replaced since"));
}

/* A symlink put at the source's path, to another directory: refused the same way. */
static void symlinked_source_refused(void **state)
{
        char content[64];
        const char *step = NULL;

        (void)state;
        assert_int_equal(runner_shell("ln -sfn '%s/b' '%s/link'", T, T), 0);
        assert_int_equal(bind_once("link", "a", content, sizeof(content), &step), -EXDEV);
}

/* Unpinned (both 0), the path is bound as it is: what the check adds is the pin alone. */
static void unpinned_source_bound_as_found(void **state)
{
        char content[64];
        const char *step = NULL;

        (void)state;
        assert_int_equal(runner_shell("ln -sfn '%s/b' '%s/link'", T, T), 0);
        assert_int_equal(bind_once("link", NULL, content, sizeof(content), &step), 0);
        assert_string_equal(content, "B");
}

/* Whether a mount namespace can be made here, and whether it needs a user namespace. */
static int can_make_mntns(void)
{
        pid_t pid;
        int status;

        for (int with_userns = 0; with_userns < 2; with_userns++) {
                pid = fork();
                if (pid < 0)
                        return -1;
                if (pid == 0)
                        _exit(unshare(CLONE_NEWNS | (with_userns ? CLONE_NEWUSER : 0)) == 0 ? 0
                                                                                            : 1);
                if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                    WEXITSTATUS(status) == 0) {
                        userns = with_userns;
                        return 0;
                }
        }
        return -1;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(pinned_source_bound),
                cmocka_unit_test(swapped_source_refused),
                cmocka_unit_test(symlinked_source_refused),
                cmocka_unit_test(unpinned_source_bound_as_found),
        };

        if (can_make_mntns() < 0) {
                printf("test_mntns: skipped: no mount namespace can be made here (neither as "
                       "root nor in a user namespace)\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, setup, teardown);
}

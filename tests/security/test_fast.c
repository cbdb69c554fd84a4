/*
 * --fast (README "Fast mode"): the kernel answers stat, access, readlink and listings in the
 * sandbox's mount namespace. What it tells of a hidden path must be its mask's, and --fast
 * must be refused where no mask can stand. (test_hidden --fast runs every content attack of
 * test_hidden again under --fast.) Judged from outside, against the real objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/security/hidden_common.h"

/* --fast: what the kernel tells of a hidden path is the mask's, never the object's: its
 * inode and times, its entries' names (a masked name itself still lists, as the mount point
 * it is). Judged by the real values, read from outside. */
static void fast_metadata_is_the_masks(void **state)
{
        char path[PATH_MAX + 64], dir_id[64], key_id[64], file_id[64], script[PATH_MAX * 2];
        struct run_result r;
        struct stat st;

        (void)state;
        snprintf(path, sizeof(path), "%s/.ssh", home);
        assert_int_equal(stat(path, &st), 0);
        snprintf(dir_id, sizeof(dir_id), "<%lu %lld>", (unsigned long)st.st_ino,
                 (long long)st.st_mtime);
        snprintf(path, sizeof(path), "%s/.ssh/id_rsa", home);
        assert_int_equal(stat(path, &st), 0);
        snprintf(key_id, sizeof(key_id), "<%lu %lld>", (unsigned long)st.st_ino,
                 (long long)st.st_mtime);
        snprintf(path, sizeof(path), "%s/.config/git/credentials", home);
        assert_int_equal(stat(path, &st), 0);
        snprintf(file_id, sizeof(file_id), "<%lu %lld>", (unsigned long)st.st_ino,
                 (long long)st.st_mtime);
        snprintf(script, sizeof(script),
                 "for p in ~/.ssh ~/.ssh/id_rsa ~/.aws/credentials ~/.config/git/credentials; "
                 "do "
                 "  stat -c '<%%i %%Y>' \"$p\" 2>/dev/null; stat -L -c '<%%i %%Y>' \"$p\" "
                 "2>/dev/null; readlink \"$p\"; done; ls -la ~/.ssh ~/.aws 2>&1; "
                 "find ~ -name 'id_rsa*' -o -name credentials -o -name authorized_keys; "
                 "test -r ~/.ssh/id_rsa && echo readable; echo finished");
        run_script(NULL, script, &r);
        if (strstr(r.out, dir_id) || strstr(r.out, key_id) || strstr(r.out, file_id) ||
            strstr(r.out, "id_rsa") || strstr(r.out, "aws/credentials") ||
            strstr(r.out, "authorized_keys") || strstr(r.out, "readable") ||
            !strstr(r.out, "finished"))
                fail_msg("--fast told a hidden path's metadata (real %s, %s, %s):\n%s%s", dir_id,
                         key_id, file_id, r.out, r.err);
        runner_free(&r);
}

/* --fast is refused, whatever --allow-degraded says, where no mount namespace covers the
 * hidden paths; and so is a hidden path that no mask can cover. */
static void fast_refusals(void **state)
{
        char hid[PATH_MAX + 64], pub[PATH_MAX + 64], cmd[3 * PATH_MAX];
        const char *nested[] = {"--rw", extra, "--hide", hid, "--rw", pub, NULL};
        struct run_result r;

        (void)state;
        setenv("STOCKADE_TEST_DISABLE", "mntns", 1);
        run_script((const char *[]){"--allow-degraded", NULL}, "echo RAN", &r);
        unsetenv("STOCKADE_TEST_DISABLE");
        if (r.exit_code != 125 || strstr(r.out, "RAN") ||
            !strstr(r.err, "--fast needs a mount namespace"))
                fail_msg("--fast without a mount namespace: exit %d:\n%s%s", r.exit_code, r.out,
                         r.err);
        runner_free(&r);
        snprintf(hid, sizeof(hid), "%s/hid", extra);
        snprintf(pub, sizeof(pub), "%s/hid/pub", extra);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && echo SECRET-NESTED > '%s/secret'", pub, hid);
        assert_int_equal(system(cmd), 0);
        run_script(nested, "ls -la ..; cat ../secret; echo RAN", &r);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", hid);
        assert_int_equal(system(cmd), 0);
        if (r.exit_code != 125 || strstr(r.out, "RAN") || !strstr(r.err, "hid` holds a path"))
                fail_msg("--fast with an uncoverable hidden path: exit %d:\n%s%s", r.exit_code,
                         r.out, r.err);
        runner_free(&r);
}

/* The calls --fast leaves to the kernel never reach the supervisor: the trace of a run that
 * stats, lists and reads links holds none of them, and says why; without --fast the same run
 * records them (the control). */
static void fast_calls_not_notified(void **state)
{
        char trace[PATH_MAX + 32], dir[PATH_MAX + 16], cmd[3 * PATH_MAX];
        /* The trace must lie where the sandbox cannot write: the build tree may be in /tmp
         * or /var/tmp, which it can (stockade refuses a trace there), so a read-only carve-out
         * of the test's own. */
        const char *opts[] = {"--ro", dir, "--trace", trace, NULL};
        const char *script =
                "stat -c %s ~/notes.txt; ls -la ~ >/dev/null; readlink /proc/self/exe; "
                "test -r ~/notes.txt && echo readable";
        struct run_result r;

        (void)state;
        snprintf(dir, sizeof(dir), "%s/traces", top);
        assert_int_equal(mkdir(dir, 0755), 0);
        for (int with = 1; with >= 0; with--) {
                fast = with;
                snprintf(trace, sizeof(trace), "%s/run%d.trace", dir, with);
                run_script(opts, script, &r);
                if (r.exit_code != 0 || !strstr(r.out, "readable"))
                        fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
                runner_free(&r);
                snprintf(cmd, sizeof(cmd), "'%s' trace show '%s'", runner_stockade(), trace);
                assert_int_equal(runner_run((char *const[]){"/bin/sh", "-c", cmd, NULL}, NULL,
                                            TIMEOUT_S, &r),
                                 0);
                if (with && (!strstr(r.out, "# --fast:") || strstr(r.out, "statx(") ||
                             strstr(r.out, "newfstatat(AT_FDCWD") || strstr(r.out, "getdents") ||
                             strstr(r.out, "readlink(") || strstr(r.out, "access(")))
                        fail_msg("--fast: a look reached the supervisor:\n%s", r.out);
                if (!with && (strstr(r.out, "# --fast:") || !strstr(r.out, "readlink(")))
                        fail_msg("the control recorded no look:\n%s", r.out);
                runner_free(&r);
        }
        fast = true;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(fast_metadata_is_the_masks),
                cmocka_unit_test(fast_refusals),
                cmocka_unit_test(fast_calls_not_notified),
        };

        fast = true;
        if (!hidden_fast_possible())
                return 77;
        return cmocka_run_group_tests(tests, hidden_setup, hidden_teardown);
}

/*
 * --fast (README "Fast mode"): the kernel answers stat, access, readlink and listings in the
 * sandbox's mount namespace, and opens for reading (supervisor/fastreads.h). What it tells of
 * a hidden path must be its mask's, what it reads must be what the view shows, and --fast
 * must be refused where no mask can stand. (test_hidden --fast runs every content attack of
 * test_hidden again under --fast.) Judged from outside, against the real objects.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/security/hidden_common.h"

/*
 * The runs that test the kernel's reads keep /var/tmp read-only: the test's tree (and its fake
 * HOME, with hidden paths that do not exist) lies there when the build does (tests/run.sh puts
 * a build in /tmp there), and a hidden path absent in a place the sandbox writes turns the
 * kernel's reads off for the run (fast_reads_on).
 */
#define RO_VAR_TMP "--ro", "/var/tmp"
static const char *const ro_var_tmp[] = {RO_VAR_TMP, NULL};

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
        const char *opts[] = {"--ro", dir, "--trace", trace, RO_VAR_TMP, NULL};
        const char *script =
                "stat -c %s ~/notes.txt; ls -la ~ >/dev/null; readlink /proc/self/exe; "
                "test -r ~/notes.txt && echo readable; cat ~/notes.txt >/dev/null";
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
                             strstr(r.out, "readlink(") || strstr(r.out, "access(") ||
                             strstr(r.out, "notes.txt\", O_RDONLY")))
                        fail_msg("--fast: a look or a read reached the supervisor:\n%s", r.out);
                if (!with && (strstr(r.out, "# --fast:") || !strstr(r.out, "readlink(") ||
                              !strstr(r.out, "notes.txt\", O_RDONLY")))
                        fail_msg("the control recorded no look or read:\n%s", r.out);
                runner_free(&r);
        }
        fast = true;
}

/* The opens for reading are the kernel's in the run the other tests make (-v says so); and a
 * hidden path not there at the start, in a place the sandbox writes, turns them back to the
 * view (where a Landlock split would leave the sandbox's own files unreadable to it). */
static void fast_reads_on(void **state)
{
        char pattern[PATH_MAX + 32];
        const char *on[] = {"-v", RO_VAR_TMP, NULL}, *off[] = {"-v", "--hide", pattern, NULL};
        struct run_result r;

        (void)state;
        run_script(on, "cat ~/notes.txt", &r);
        if (r.exit_code != 0 || !strstr(r.err, "opens for reading are the kernel's too"))
                fail_msg("--fast: kernel reads are off: exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
        snprintf(pattern, sizeof(pattern), "%s/*.tok", work);
        run_script(off, "echo made > new.txt && cat new.txt", &r);
        if (r.exit_code != 0 || !strstr(r.out, "made") ||
            !strstr(r.err, "opens for reading stay the view's (the hidden path"))
                fail_msg("--fast with a pattern hidden in the workspace: exit %d:\n%s%s",
                         r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* made_later(file, seen) run with `opts`: neither read may give the content, live or
 * deleted. The run's result is left in *r. */
static void later_refused(const char *const *opts, const char *file, const char *seen,
                          const char *what, struct run_result *r)
{
        char cmd[4 * PATH_MAX + 160];

        made_later(file, seen, cmd, sizeof(cmd));
        run_script(opts, cmd, r);
        if (strstr(r->out, "SECRET") || !strstr(r->out, "held\nlive refused\nlive refused\n"))
                fail_msg("--fast read %s:\n%s%s", what, r->out, r->err);
}

/* A hidden file the host makes after the start, in a place the sandbox only reads (so no mask
 * covers it): neither an open by name nor the reopen of an O_PATH fd held on it reads it,
 * live or deleted — Landlock alone judges those opens now, and the directory is split around
 * the pattern. Judged by the output; the content is readable natively (the control). */
static void fast_reads_made_later(void **state)
{
        char cmd[4 * PATH_MAX + 160], pattern[PATH_MAX + 48], dir[PATH_MAX + 32],
                file[PATH_MAX + 48];
        const char *opts[] = {"--hide", pattern, RO_VAR_TMP, NULL};
        struct run_result r;

        (void)state;
        /* In a directory of its own, which nothing else splits. */
        snprintf(dir, sizeof(dir), "%s/.tokens", home);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(pattern, sizeof(pattern), "%s/*.tok", dir);
        snprintf(file, sizeof(file), "%s/late.tok", dir);
        later_refused(opts, file, NULL, "a hidden file made later", &r);
        runner_free(&r);
        snprintf(cmd, sizeof(cmd), "echo SECRET-LATER > '%s/late.tok' && chmod a+r '%s/late.tok'",
                 dir, dir);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "cat '%s/late.tok'", dir);
        run_native(cmd, &r);
        snprintf(cmd, sizeof(cmd), "%s/late.tok", dir);
        unlink(cmd);
        rmdir(dir);
        if (!strstr(r.out, "SECRET-LATER"))
                fail_msg("the control could not read the file: %s", r.err);
        runner_free(&r);
}

/* Two more shapes of a hidden path made during the run, each read by name and by an O_PATH fd
 * reopened (an outside review read both under --fast): a pattern with a wildcard in a middle
 * component that matched nothing at the start (envs/ANY/token, envs/prod there), and a
 * remapped directory (--ro HOST:SANDBOX) holding a hidden path that is not there yet, read
 * through SANDBOX — where the kernel's reads must give way to the view's (-v says so). */
static void fast_reads_made_later_shapes(void **state)
{
        char cmd[4 * PATH_MAX + 160], dir[PATH_MAX + 32], pattern[PATH_MAX + 48],
                file[PATH_MAX + 48], remap[2 * PATH_MAX + 64], target[PATH_MAX + 32];
        const char *wild[] = {"--hide", pattern, RO_VAR_TMP, NULL},
                   *wild_v[] = {"-v", "--hide", pattern, RO_VAR_TMP, NULL},
                   *remapped[] = {"-v", "--hide", file, "--ro", remap, RO_VAR_TMP, NULL};
        struct run_result r;

        (void)state;
        snprintf(dir, sizeof(dir), "%s/envs", home);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(dir, sizeof(dir), "%s/envs/prod", home);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(pattern, sizeof(pattern), "%s/envs/*/token", home);
        snprintf(file, sizeof(file), "%s/token", dir);
        later_refused(wild, file, NULL, "a file a mid-pattern hides", &r);
        runner_free(&r);
        /* --ro HOME/cfg:EXTRA/cfg, HOME/cfg/cred hidden and made during the run */
        snprintf(dir, sizeof(dir), "%s/cfg", home);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(target, sizeof(target), "%s/cfg", extra);
        assert_int_equal(mkdir(target, 0755), 0);
        snprintf(remap, sizeof(remap), "%s:%s", dir, target);
        snprintf(file, sizeof(file), "%s/cred", dir);
        snprintf(pattern, sizeof(pattern), "%s/cred", target);
        later_refused(remapped, file, pattern, "a hidden file through a remap", &r);
        if (!strstr(r.err, "opens for reading stay the view's"))
                fail_msg("--fast: the reads stayed the kernel's with a remap:\n%s", r.err);
        runner_free(&r);
        /* a pattern whose wildcard lies above the workspace (HOME/ANY/x.env), which matches
         * there: the reads give way to the view (an outside review read a .env the host
         * wrote into the workspace during the run) */
        snprintf(pattern, sizeof(pattern), "%s/*/x.env", home);
        snprintf(file, sizeof(file), "%s/x.env", work);
        later_refused(wild_v, file, NULL, "a workspace file a pattern above it hides", &r);
        if (!strstr(r.err, "opens for reading stay the view's"))
                fail_msg("--fast: the reads stayed the kernel's with a pattern over the "
                         "workspace:\n%s",
                         r.err);
        runner_free(&r);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/envs' '%s' '%s'", home, dir, target);
        assert_int_equal(system(cmd), 0);
}

/* A pty of the host's that this test holds (both ends), mode 0666, with a line typed into
 * it; the master, its slave in *slave and its name in *pts. */
static int host_pty(int *slave, const char **pts)
{
        int master = posix_openpt(O_RDWR | O_NOCTTY);

        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        *pts = ptsname(master);
        assert_non_null(*pts);
        *slave = open(*pts, O_RDWR | O_NOCTTY);
        assert_true(*slave >= 0);
        assert_int_equal(chmod(*pts, 0666), 0);
        assert_int_equal(write(master, "SECRET-TTY\n", 11), 11);
        return master;
}

/* The control: the typed line is still there, read natively by name; the pty closed. */
static void host_pty_control(int master, int slave, const char *pts)
{
        char cmd[PATH_MAX + 64];
        struct run_result r;

        snprintf(cmd, sizeof(cmd), "timeout 3 head -n 1 '%s'", pts);
        run_native(cmd, &r);
        close(slave);
        close(master);
        if (!strstr(r.out, "SECRET-TTY"))
                fail_msg("the control did not read the terminal: %s", r.err);
        runner_free(&r);
}

/* Another terminal of the host (a pty this test holds, typed into, mode 0666) cannot be read
 * under --fast by its name in /dev/pts: Landlock grants the sandbox only its own devices.
 * Nor is a new pty made by a read-only open of ptmx (the view hands those out). The typed
 * line is read natively afterwards (the control: it was there). */
static void fast_reads_other_terminal(void **state)
{
        char script[3 * PATH_MAX];
        const char *pts;
        struct run_result r;
        int master, slave;

        (void)state;
        master = host_pty(&slave, &pts);
        snprintf(script, sizeof(script),
                 "timeout 3 head -n 1 '%s'; timeout 3 head -c 0 /dev/ptmx && echo ptmx; "
                 "echo finished",
                 pts);
        run_script(ro_var_tmp, script, &r);
        if (strstr(r.out, "SECRET-TTY") || strstr(r.out, "ptmx") || !strstr(r.out, "finished"))
                fail_msg("--fast read another terminal:\n%s%s", r.out, r.err);
        runner_free(&r);
        host_pty_control(master, slave, pts);
}

/* A second name of /dev in a directory the walk splits (as root: devtmpfs mounted in HOME,
 * as a chroot's /dev would be) gives Landlock no rule on /dev's inode for the sandbox: the
 * host's terminal stays unreadable by its /dev name and through the other name (an outside
 * review read it by /dev/pts/N so). The typed line is read natively afterwards. */
static void fast_reads_dev_alias(void **state)
{
        char alias[PATH_MAX + 32], script[3 * PATH_MAX];
        const char *pts;
        struct run_result r;
        int master, slave;

        (void)state;
        if (geteuid() != 0)
                skip(); /* mounting devtmpfs needs root */
        snprintf(alias, sizeof(alias), "%s/devalias", home);
        assert_int_equal(mkdir(alias, 0755), 0);
        assert_int_equal(mount("devtmpfs", alias, "devtmpfs", MS_NOSUID, NULL), 0);
        master = host_pty(&slave, &pts);
        snprintf(script, sizeof(script),
                 "timeout 3 head -n 1 '%s'; timeout 3 head -n 1 '%s/%s'; echo finished", pts, alias,
                 pts + 5);
        run_script(ro_var_tmp, script, &r);
        assert_int_equal(umount(alias), 0);
        rmdir(alias);
        if (strstr(r.out, "SECRET-TTY") || !strstr(r.out, "finished"))
                fail_msg("--fast read a terminal through a second /dev:\n%s%s", r.out, r.err);
        runner_free(&r);
        host_pty_control(master, slave, pts);
}

/* A device node outside /dev (as root: made for the test, of /dev/zero, mode 0666) does not
 * open under --fast: every mount but /dev's is nodev. It opens natively (the control). */
static void fast_reads_device_elsewhere(void **state)
{
        char node[PATH_MAX + 32], script[PATH_MAX + 128];
        struct run_result r;

        (void)state;
        if (geteuid() != 0)
                skip(); /* mknod needs root */
        snprintf(node, sizeof(node), "%s/zero", extra);
        assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 5)), 0);
        assert_int_equal(chmod(node, 0666), 0);
        snprintf(script, sizeof(script), "head -c 1 '%s' >/dev/null && echo opened; echo finished",
                 node);
        run_script(ro_var_tmp, script, &r);
        if (strstr(r.out, "opened") || !strstr(r.out, "finished"))
                fail_msg("--fast opened a device node outside /dev:\n%s%s", r.out, r.err);
        runner_free(&r);
        run_native(script, &r);
        unlink(node);
        if (!strstr(r.out, "opened"))
                fail_msg("the control did not open the node: %s", r.err);
        runner_free(&r);
}

/* Another procfs on the host (a chroot's /proc, as root: mounted for the test) shows the
 * host's processes; under --fast it is covered. Judged by host pid 1's command line, read
 * natively through the same mount (the control). */
static void fast_reads_procfs_elsewhere(void **state)
{
        char dir[PATH_MAX + 32], script[3 * PATH_MAX], line[4096] = "";
        struct run_result r;
        FILE *f;
        size_t n;

        (void)state;
        if (geteuid() != 0)
                skip(); /* mounting a procfs needs root */
        snprintf(dir, sizeof(dir), "%s/oproc", extra);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(mount("proc", dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), 0);
        snprintf(script, sizeof(script), "%s/1/cmdline", dir);
        f = fopen(script, "re");
        n = f ? fread(line, 1, sizeof(line) - 1, f) : 0;
        if (f)
                fclose(f);
        line[n] = '\0'; /* the first argument: the control */
        snprintf(script, sizeof(script), "cat '%s/1/cmdline'; ls '%s' | head -3; echo finished",
                 dir, dir);
        run_script(ro_var_tmp, script, &r);
        assert_int_equal(umount(dir), 0);
        rmdir(dir);
        if (!line[0])
                fail_msg("the control read no command line of pid 1");
        if (strstr(r.out, line) || !strstr(r.out, "finished"))
                fail_msg("--fast read the host's procfs (pid 1 is `%s`):\n%s%s", line, r.out,
                         r.err);
        runner_free(&r);
}

/* The view's resolv.conf is what a read under --fast finds: the supervisor's nameserver. */
static void fast_reads_resolv(void **state)
{
        struct run_result r;

        (void)state;
        run_script(ro_var_tmp, "cat /etc/resolv.conf", &r);
        if (r.exit_code != 0 || !strstr(r.out, "DNS is answered by the supervisor"))
                fail_msg("--fast: /etc/resolv.conf is not the view's:\n%s%s", r.out, r.err);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(fast_metadata_is_the_masks),
                cmocka_unit_test(fast_refusals),
                cmocka_unit_test(fast_calls_not_notified),
                cmocka_unit_test(fast_reads_on),
                cmocka_unit_test(fast_reads_made_later),
                cmocka_unit_test(fast_reads_made_later_shapes),
                cmocka_unit_test(fast_reads_other_terminal),
                cmocka_unit_test(fast_reads_device_elsewhere),
                cmocka_unit_test(fast_reads_dev_alias),
                cmocka_unit_test(fast_reads_procfs_elsewhere),
                cmocka_unit_test(fast_reads_resolv),
        };

        fast = true;
        if (!hidden_fast_possible())
                return 77;
        return cmocka_run_group_tests(tests, hidden_setup, hidden_teardown);
}

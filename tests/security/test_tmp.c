/*
 * --tmp PATH: a private directory at PATH (shim/mntns.h), judged from outside. With
 * `--tmp /tmp` the sandbox's /tmp is empty but for the way to its working directory, the
 * host's files there are not visible, what the sandbox writes there never reaches the host's
 * /tmp and is gone at the end; and everything a program does with /tmp works — the calls the
 * kernel resolves (chdir, exec, getcwd, a unix bind) and those the supervisor emulates (open,
 * rename across directories, connect) meet the same directory.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 60 };

static char top[PATH_MAX], work[PATH_MAX + 16], hostfile[PATH_MAX], scratch_parent[PATH_MAX + 16];
static bool have_ns;

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static void run(const char *const *opts, const char *script, struct run_result *r)
{
        const char *v[16] = {"-q"};
        size_t n = 1;

        for (; opts && *opts && n < 15; opts++)
                v[n++] = *opts;
        v[n] = NULL;
        assert_int_equal(runner_stockade_sh(work, v, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

/* The private directories of the runs: under $TMPDIR, which is this test's own directory, so
 * that the runs of other programs on the host (another suite, say) are not counted. */
static size_t count_scratch(void)
{
        char pat[2 * PATH_MAX];
        glob_t g;
        size_t n;

        snprintf(pat, sizeof(pat), "%s/stockade-tmp-*", scratch_parent);
        if (glob(pat, 0, NULL, &g) != 0)
                return 0;
        n = g.gl_pathc;
        globfree(&g);
        return n;
}

static char state_home[PATH_MAX + 8];

static int setup(void **state)
{
        uid_t uid = geteuid() == 0 ? 65534 : geteuid();
        struct run_result r;

        (void)state;
        /* Not in /tmp: a working directory there keeps the host's /tmp (workspace_in_tmp). */
        snprintf(top, sizeof(top), "/var/tmp/tmptest-XXXXXX");
        if (!mkdtemp(top))
                return -1;
        chmod(top, 0755);
        snprintf(work, sizeof(work), "%s/work", top);
        snprintf(scratch_parent, sizeof(scratch_parent), "%s/runs", top);
        if (mkdir(scratch_parent, 0755) < 0)
                return -1;
        setenv("TMPDIR", scratch_parent, 1);
        /* The default view is copy-on-write: its sessions in this test's directory, not in
         * the store of whoever runs the suite (they were left in root's, one pair a pass). */
        snprintf(state_home, sizeof(state_home), "%s/state", top);
        if (mkdir(state_home, 0700) < 0)
                return -1;
        setenv("XDG_STATE_HOME", state_home, 1);
        sh("mkdir -p '%s/scratch' && echo KEEP > '%s/scratch/kept' && chown -R %u '%s'", work, work,
           (unsigned)uid, work);
        snprintf(hostfile, sizeof(hostfile), "/tmp/stockade-hostfile-%d", (int)getpid());
        sh("echo HOST-SECRET > '%s' && chmod 644 '%s'", hostfile, hostfile);
        run((const char *[]){"--tmp", "/tmp", NULL}, "true", &r);
        have_ns = r.exit_code == 0;
        if (!have_ns)
                print_message("  (no private directories here: %s)\n", r.err);
        runner_free(&r);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        unlink(hostfile);
        sh("rm -rf '%s'", top);
        return 0;
}

static void need_ns(void)
{
        if (!have_ns) {
                print_message("  skipped: no mount namespace can be made here\n");
                skip();
        }
}

static void tmp_is_private(void **state)
{
        char script[6 * PATH_MAX], marker[PATH_MAX];
        struct run_result r;
        size_t before = count_scratch();

        (void)state;
        need_ns();
        snprintf(marker, sizeof(marker), "/tmp/stockade-private-%d", (int)getpid());
        snprintf(script, sizeof(script),
                 "cat %s 2>/dev/null && echo saw-host-file; ls -A /tmp | grep -c stockade-hostfile;"
                 "echo PRIVATE > %s && cat %s; cd /tmp && pwd; mkdir -p a b && echo f > a/f && "
                 "mv a/f b/f && cat b/f; printf '#!/bin/sh\\necho script-ran\\n' > s.sh && "
                 "chmod +x s.sh && ./s.sh && /tmp/s.sh; "
                 "TMPDIR=/tmp /usr/bin/python3 -c 'import socket, tempfile, os\n"
                 "s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/u.sock\"); s.listen()\n"
                 "c = socket.socket(socket.AF_UNIX); c.connect(\"u.sock\"); print(\"unix-ok\")\n"
                 "with tempfile.NamedTemporaryFile() as t: print(\"tempfile\", "
                 "os.path.dirname(t.name))\n"
                 "os.chdir(\"/tmp/b\"); print(\"cwd\", os.getcwd())'; "
                 "cd '%s' && echo in-work > w.txt",
                 hostfile, marker, marker, work);
        run((const char *[]){"--tmp", "/tmp", NULL}, script, &r);
        if (strstr(r.out, "saw-host-file") || strncmp(r.out, "0\n", 2) != 0 ||
            !strstr(r.out, "PRIVATE") || !strstr(r.out, "/tmp\n") || !strstr(r.out, "f\n") ||
            !strstr(r.out, "script-ran\nscript-ran") || !strstr(r.out, "unix-ok") ||
            !strstr(r.out, "tempfile /tmp") || !strstr(r.out, "cwd /tmp/b"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        /* From outside: nothing reached the host's /tmp, the working directory was the real
         * one, and the private directory is gone. */
        if (access(marker, F_OK) == 0)
                fail_msg("%s reached the host's /tmp", marker);
        sh("grep -q in-work '%s/w.txt'", work);
        if (count_scratch() > before)
                fail_msg("the private /tmp was left behind");
}

/* Paths with ".." from a directory of the private /tmp: what they name is the private
 * directory's, never the host's /tmp. The fast way of such a path walked it from the
 * supervisor's root (a call's arguments evaluated in an order that left RESOLVE_IN_ROOT out):
 * `../name` found the host's /tmp/name (its size, its type), and a name of the private /tmp
 * was ENOENT. */
static void dotdot_stays_private(void **state)
{
        char script[2 * PATH_MAX];
        const char *base = strrchr(hostfile, '/') + 1;
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(script, sizeof(script),
                 "mkdir -p /tmp/q/b && echo in > /tmp/q/f && cd /tmp/q/b && "
                 "stat -c 'f=%%s' ../f && stat -c 'q=%%F' ../../q && cat ../f; "
                 "stat -c saw-host ../../%s ../../../tmp/%s; ls -A ../.. | grep -c %s; echo end",
                 base, base, base);
        run((const char *[]){"--tmp", "/tmp", NULL}, script, &r);
        if (!strstr(r.out, "f=3\nq=directory\nin\n") || strstr(r.out, "saw-host") ||
            !strstr(r.out, "0\nend"))
                fail_msg("exit %d:\n%s\n%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* The mount tables name no scratch directory of the host's (its path under $TMPDIR, the
 * private /dev/shm's): each private bind reads as bound from itself, by every table and
 * spelling. /proc/mounts is the caller's own table (the link self/mounts), not the
 * supervisor's, which is the host's (an outside review read it so). */
static void mount_tables_name_no_scratch(void **state)
{
        struct run_result r;

        (void)state;
        need_ns();
        run(NULL,
            "cat /proc/self/mountinfo /proc/self/mounts /proc/self/mountstats "
            "/proc/thread-self/mountinfo /proc/$$/task/$$/mountinfo; "
            "grep -c ' /tmp /tmp ' /proc/self/mountinfo; "
            "cmp -s /proc/mounts /proc/self/mounts && echo same-mounts; echo end",
            &r);
        if (strstr(r.out, scratch_parent) || strstr(r.out, "stockade-tmp-") ||
            strstr(r.out, "/stockade-") || !strstr(r.out, "\n1\nsame-mounts\nend") ||
            r.exit_code != 0)
                fail_msg("exit %d:\n%s\n%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* A directory the supervisor opens for the program in the /proc or /dev view (exec 3</dev)
 * is the sandbox's mount namespace's: from it `..` leads to the sandbox's root, never into
 * stockade's tree, where the workspace is the host's copy and /tmp the host's (an outside
 * review wrote the copy-on-write workspace's host copy and read the host's /tmp so), with
 * or without --fast. Judged from outside: the host file unchanged, no host content shown. */
static void special_dirs_stay_inside(void **state)
{
        static const char *const dirs[] = {"/dev",     "/proc",    "/proc/self", "/proc/sys/net",
                                           "/dev/pts", "/dev/shm", "/proc/sys",  "/proc/1/.."};
        char script[16 * PATH_MAX], *w = script, victim[PATH_MAX + 32], buf[64] = "";
        const char *base = strrchr(hostfile, '/') + 1;
        struct run_result r;
        int fd;

        (void)state;
        need_ns();
        snprintf(victim, sizeof(victim), "%s/victim", work);
        sh("echo ORIGINAL > '%s' && chmod 666 '%s'", victim, victim);
        for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
                w += snprintf(w, sizeof(script) - (size_t)(w - script),
                              "(exec 3<%s && cd -P /proc/self/fd/3 && for i in 1 2 3 4 5 6; do "
                              "cd -P ..; done; cat tmp/%s; echo PWNED >> .%s; "
                              "cat /proc/self/fd/3/../../../../tmp/%s) 2>/dev/null; ",
                              dirs[i], base, victim, base);
        snprintf(w, sizeof(script) - (size_t)(w - script), "echo finished");
        for (int fast = 0; fast < 2; fast++) {
                run((const char *[]){"--cow", work, fast ? "--fast" : "-q", NULL}, script, &r);
                fd = open(victim, O_RDONLY);
                assert_true(fd >= 0);
                assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
                close(fd);
                if (strcmp(buf, "ORIGINAL\n") != 0 || strstr(r.out, "HOST-SECRET") ||
                    !strstr(r.out, "finished"))
                        fail_msg("%s: the host's tree through a special directory (victim: %s):\n"
                                 "%s\n%s",
                                 fast ? "--fast" : "default", buf, r.out, r.err);
                runner_free(&r);
        }
        unlink(victim);
}

/* --tmp on another directory: its content is not there, and nothing written reaches it. */
static void tmp_elsewhere(void **state)
{
        char dir[PATH_MAX + 32], script[PATH_MAX * 4];
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/scratch", work);
        snprintf(script, sizeof(script), "ls -A '%s' | wc -l; echo NEW > '%s/new' && cat '%s/new'",
                 dir, dir, dir);
        run((const char *[]){"--tmp", dir, NULL}, script, &r);
        if (strncmp(r.out, "0\n", 2) != 0 || !strstr(r.out, "NEW"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        sh("test -f '%s/kept' && ! test -e '%s/new'", dir, dir);
}

/* A directory that does not exist cannot be mounted over: one line, exit 125. */
static void tmp_missing_refused(void **state)
{
        struct run_result r;

        (void)state;
        need_ns();
        run((const char *[]){"--tmp", "/nonexistent-stockade-tmp", NULL}, "echo ran", &r);
        if (r.exit_code != 125 || strstr(r.out, "ran") ||
            !strstr(r.err, "/nonexistent-stockade-tmp"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/*
 * A working directory in /tmp: the default /tmp stays the host's for that run (a private one
 * would have to bind the directory back, and Landlock would then judge the files there
 * through the private directory's rules: a hidden file and a read-only path beneath the
 * directory were reachable so). Judged from outside: the secret is not printed, the read-only
 * directory is unchanged. And --tmp over a host path the view shows is refused.
 */
static void workspace_in_tmp(void **state)
{
        char dir[] = "/tmp/stockade-tmpws-XXXXXX", hid[64], ro[64], script[2 * PATH_MAX];
        const char *argv[16];
        struct run_result r;
        size_t n = 0;

        (void)state;
        assert_non_null(mkdtemp(dir));
        sh("chmod 777 '%s' && mkdir '%s/sub' && chmod 777 '%s/sub' && echo SECRET-TMPWS > "
           "'%s/key' && chmod 666 '%s/key'",
           dir, dir, dir, dir, dir);
        snprintf(hid, sizeof(hid), "%s/key", dir);
        snprintf(ro, sizeof(ro), "%s/sub", dir);
        snprintf(script, sizeof(script),
                 "cat key; cat %s; echo x > sub/f && echo wrote-ro; cat %s >/dev/null && echo "
                 "host-tmp-shared",
                 hid, hostfile);
        argv[n++] = "-q", argv[n++] = "--hide", argv[n++] = hid, argv[n++] = "--ro";
        argv[n++] = ro, argv[n] = NULL;
        assert_int_equal(runner_stockade_sh(dir, argv, script, TIMEOUT_S, &r), 0);
        if (strstr(r.out, "SECRET-TMPWS") || strstr(r.out, "wrote-ro") ||
            !strstr(r.out, "host-tmp-shared"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        sh("test ! -e '%s/sub/f' && rm -rf '%s'", dir, dir);
        if (!have_ns)
                return;
        /* An explicit --tmp over a path the view shows from the host: refused. */
        {
                char over[PATH_MAX + 32], beneath[PATH_MAX + 48];

                snprintf(over, sizeof(over), "%s/scratch", work);
                snprintf(beneath, sizeof(beneath), "%s/scratch", work);
                sh("mkdir -p '%s/deeper'", over);
                snprintf(beneath, sizeof(beneath), "%s/scratch/deeper", work);
                run((const char *[]){"--tmp", over, "--rw", beneath, NULL}, "echo ran", &r);
                if (r.exit_code != 125 || strstr(r.out, "ran") || !strstr(r.err, "beneath it"))
                        fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
                runner_free(&r);
        }
}

/*
 * The cleaner removes the scratch by fd, never by a path the sandbox could have replaced: with
 * $TMPDIR in a place the sandbox may write (--rw; one in the workspace is passed over for /tmp),
 * the sandbox moves its scratch away and puts a symlink to a read-only host directory in its
 * place (an outside review had root's `chmod -R` make such a
 * tree writable). Judged from outside: the victim keeps its modes and content.
 */
static void cleaner_not_redirected(void **state)
{
        char victim[PATH_MAX + 32], script[4 * PATH_MAX], tmpdir[PATH_MAX + 32];
        const char *argv[8];
        struct run_result r;
        struct stat st;
        size_t n = 0;

        (void)state;
        need_ns();
        snprintf(victim, sizeof(victim), "%s/victim", top);
        snprintf(tmpdir, sizeof(tmpdir), "%s/tmpdir", top);
        sh("mkdir -p '%s' '%s' && echo V > '%s/v' && chmod 400 '%s/v' && chmod 500 '%s' && "
           "chmod 777 '%s'",
           victim, tmpdir, victim, victim, victim, tmpdir);
        snprintf(script, sizeof(script),
                 "d=$(ls -d '%s'/stockade-tmp-* | head -1); mv \"$d\" '%s/moved' && "
                 "ln -s '%s' \"$d\" && echo swapped",
                 tmpdir, tmpdir, victim);
        setenv("TMPDIR", tmpdir, 1);
        argv[n++] = "-q";
        argv[n++] = "--rw", argv[n++] = tmpdir;
        if (geteuid() == 0)
                argv[n++] = "--user", argv[n++] = "root";
        argv[n] = NULL;
        assert_int_equal(runner_stockade_sh(work, argv, script, TIMEOUT_S, &r), 0);
        setenv("TMPDIR", scratch_parent, 1);
        if (!strstr(r.out, "swapped"))
                fail_msg("the swap did not happen (the test proves nothing): %s %s", r.out, r.err);
        runner_free(&r);
        assert_int_equal(stat(victim, &st), 0);
        if ((st.st_mode & 0777) != 0500)
                fail_msg("the victim directory's mode became %o", (unsigned)(st.st_mode & 0777));
        snprintf(script, sizeof(script), "%s/v", victim);
        assert_int_equal(stat(script, &st), 0);
        if ((st.st_mode & 0777) != 0400)
                fail_msg("the victim file's mode became %o", (unsigned)(st.st_mode & 0777));
        sh("chmod 700 '%s' && rm -rf '%s' '%s'", victim, victim, tmpdir);
}

/*
 * Whatever the sandbox leaves in its /tmp goes at the end: directories it made unlistable or
 * read-only, a symlink to a host directory (followed by nothing: its target stays), and a tree
 * deeper than the cleaner's own walk goes (the shell's way finishes it).
 */
static void cleaner_removes_what_is_left(void **state)
{
        char victim[PATH_MAX + 32], script[4 * PATH_MAX];
        struct run_result r;
        size_t before = count_scratch();
        struct stat st;

        (void)state;
        need_ns();
        snprintf(victim, sizeof(victim), "%s/victim2", top);
        sh("mkdir -p '%s' && echo V > '%s/v' && chmod 777 '%s'", victim, victim, victim);
        snprintf(script, sizeof(script),
                 "cd /tmp && mkdir -p locked/in ro/sub && echo a > locked/in/a && "
                 "echo b > ro/sub/b && ln -s '%s' link && mkfifo fifo && "
                 "chmod 000 locked && chmod 500 ro/sub ro && "
                 "d=deep; for i in $(seq 90); do d=$d/d; done; mkdir -p $d && echo z > $d/z && "
                 "chmod 500 deep/d/d && echo left",
                 victim);
        run((const char *[]){"--tmp", "/tmp", NULL}, script, &r);
        if (!strstr(r.out, "left"))
                fail_msg("the sandbox did not leave its files: %s %s", r.out, r.err);
        runner_free(&r);
        if (count_scratch() > before)
                fail_msg("a run left its private /tmp behind");
        assert_int_equal(stat(victim, &st), 0);
        if ((st.st_mode & 0777) != 0777)
                fail_msg("the symlinked host directory's mode became %o",
                         (unsigned)(st.st_mode & 0777));
        sh("grep -qx V '%s/v' && rm -rf '%s'", victim, victim);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(tmp_is_private),
                cmocka_unit_test(dotdot_stays_private),
                cmocka_unit_test(mount_tables_name_no_scratch),
                cmocka_unit_test(special_dirs_stay_inside),
                cmocka_unit_test(tmp_elsewhere),
                cmocka_unit_test(tmp_missing_refused),
                cmocka_unit_test(workspace_in_tmp),
                cmocka_unit_test(cleaner_not_redirected),
                cmocka_unit_test(cleaner_removes_what_is_left),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

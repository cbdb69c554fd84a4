/*
 * The read wall (supervisor/grants.c): the default view's credential paths and --hide are
 * unreadable in the sandbox, by every path we can think of, judged from outside: the secret
 * never appears in what the sandbox printed, nor in any file it could write.
 *
 * `test_hidden --fast` runs every attack again under --fast, where stat, access, readlink
 * and listings are the kernel's (README "Fast mode"): contents stay out of reach the same,
 * metadata is covered by the masks, and what --fast does show (a mask's name in a listing,
 * a name made after the start) is said where a check differs.
 *
 * Each test builds a fake HOME (HOME is what the default view reads) holding secrets that the
 * sandbox's uid could read by their mode, and first shows natively, as that uid, that the
 * same commands do print them: the check can fail.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <stdbool.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/security/hidden_common.h"

/* Every file of the workspace, concatenated: what the sandbox could have copied out. */
static char *workspace_content(void)
{
        char cmd[3 * PATH_MAX];
        static char buf[65536];
        size_t n;
        FILE *p;

        /* Regular files only: a symlink left in the workspace is not a copy. */
        snprintf(cmd, sizeof(cmd), "find '%s' -type f -exec cat {} + 2>/dev/null", work);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(buf, 1, sizeof(buf) - 1, p);
        buf[n] = '\0';
        pclose(p);
        return buf;
}

/* Ways to read ~/.ssh/id_rsa and friends; each prints what it gets. */
static const char *const reads[] = {
        "cat ~/.ssh/id_rsa",
        "cat ~/.aws/credentials ~/.config/gcloud/token ~/.netrc",
        "cat \"$HOME/project/../.ssh/id_rsa\"",
        "cat ../.ssh/./id_rsa",
        "cat /proc/self/root$HOME/.ssh/id_rsa",
        "cat /proc/self/cwd/../.ssh/id_rsa",
        "ln -s ~/.ssh/id_rsa link && cat link",
        "ln -s ~/.ssh sshdir && cat sshdir/id_rsa",
        "ln ~/.ssh/id_rsa hard; cat hard",
        "cp ~/.ssh/id_rsa copy; cat copy",
        "cd ~/.ssh && cat id_rsa",
        "exec 3<~/.ssh/id_rsa && cat <&3",
        "python3 -c 'import os; print(open(os.path.expanduser(\"~/.ssh/id_rsa\")).read())'",
        "grep -r SECRET ~ 2>/dev/null",
        "tar cf - ~/.ssh 2>/dev/null | tar xOf - 2>/dev/null",
};

static void clean_workspace(void)
{
        char cmd[PATH_MAX + 64];

        snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf link sshdir hard copy", work);
        assert_int_equal(system(cmd), 0);
}

static void credentials_unreadable(void **state)
{
        for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
                struct run_result r;

                run_native(reads[i], &r);
                if (!strstr(r.out, "SECRET-"))
                        print_message("  (control) natively `%s` printed no secret: %s %s\n",
                                      reads[i], r.out, r.err);
                runner_free(&r);
                clean_workspace();
                run_script(NULL, reads[i], &r);
                if (strstr(r.out, "SECRET-") || strstr(r.err, "SECRET-"))
                        fail_msg("`%s` read a secret: %s %s", reads[i], r.out, r.err);
                if (strstr(workspace_content(), "SECRET-"))
                        fail_msg("`%s` copied a secret into the workspace", reads[i]);
                runner_free(&r);
                clean_workspace();
        }
}

/* The control for the whole test: natively the first read does print the secret. */
static void control_reads_secret(void **state)
{
        struct run_result r;

        run_native("cat ~/.ssh/id_rsa", &r);
        if (!strstr(r.out, "SECRET-SSH"))
                fail_msg("natively the secret is not readable, so the test proves nothing: %s",
                         r.err);
        runner_free(&r);
}

/* What is not hidden still reads and lists; the hidden names are not listed, and do not
 * exist for stat, access or readlink either. */
static void the_rest_reads(void **state)
{
        struct run_result r;

        run_script(NULL,
                   "cat ~/notes.txt ~/.config/app.conf && ls -a ~ ~/.config && "
                   "python3 -c 'import json, email; print(\"py-ok\")' && "
                   "for p in ~/.ssh ~/.ssh/id_rsa ~/.aws/credentials; do "
                   "  stat \"$p\" >/dev/null 2>&1 && echo \"stat-leak $p\"; "
                   "  test -e \"$p\" && echo \"access-leak $p\"; "
                   "  ls -d \"$p\" >/dev/null 2>&1 && echo \"ls-leak $p\"; "
                   "done; ls -a ~/.ssh || echo ssh-absent",
                   &r);
        if (r.exit_code != 0 || !strstr(r.out, "visible-notes") || !strstr(r.out, "visible-conf") ||
            !strstr(r.out, "notes.txt") || !strstr(r.out, "app.conf") || !strstr(r.out, "py-ok") ||
            !strstr(r.out, "ssh-absent"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        /* --fast: the masks over ~/.ssh and ~/.aws exist for the kernel (their names list and
         * stat), what lies beneath them does not */
        if ((!fast && (strstr(r.out, ".ssh") || strstr(r.out, ".aws") || strstr(r.out, "leak"))) ||
            strstr(r.out, "id_rsa") || strstr(r.out, "credentials"))
                fail_msg("a hidden name shows: %s", r.out);
        runner_free(&r);
}

/* The workspace is inside HOME here: it is writable, ~/.ssh next to it is not. */
static void no_write_into_hidden(void **state)
{
        char keys[PATH_MAX * 2], buf[64] = "";
        struct run_result r;
        int fd;

        snprintf(keys, sizeof(keys), "%s/.ssh/authorized_keys", home);
        run_script(NULL,
                   "echo ok > mine && cat mine; echo PWNED >> ~/.ssh/authorized_keys; "
                   "echo PWNED > ~/.ssh/new_key; mv mine ~/.ssh/; true",
                   &r);
        if (!strstr(r.out, "ok"))
                fail_msg("the workspace is not writable: %s %s", r.out, r.err);
        runner_free(&r);
        fd = open(keys, O_RDONLY);
        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, "KEYS\n");
        snprintf(keys, sizeof(keys), "%s/.ssh/new_key", home);
        assert_int_equal(access(keys, F_OK), -1);
        snprintf(keys, sizeof(keys), "%s/.ssh/mine", home);
        assert_int_equal(access(keys, F_OK), -1);
}

/* Started from HOME itself: the workspace contains ~/.ssh. The write grant is split around
 * it: ~/.ssh stays unwritable, a subdirectory without hidden paths is writable. */
static void workspace_containing_hidden(void **state)
{
        char keys[PATH_MAX * 2], buf[64] = "", made[PATH_MAX * 2];
        struct run_result r;
        int fd;

        run_script_in(home, NULL,
                      "echo PWNED >> .ssh/authorized_keys; echo PWNED > .ssh/new_key; "
                      "rm -f .ssh/authorized_keys; cat .ssh/id_rsa; echo made > project/made",
                      &r);
        if (strstr(r.out, "SECRET-"))
                fail_msg("read a secret: %s", r.out);
        runner_free(&r);
        snprintf(keys, sizeof(keys), "%s/.ssh/authorized_keys", home);
        fd = open(keys, O_RDONLY);
        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, "KEYS\n");
        snprintf(keys, sizeof(keys), "%s/.ssh/new_key", home);
        assert_int_equal(access(keys, F_OK), -1);
        snprintf(made, sizeof(made), "%s/project/made", home);
        assert_int_equal(access(made, F_OK), 0);
        unlink(made);
}

/* --hide PATH adds to the default list; relative paths and ~ work. */
static void hide_flag(void **state)
{
        char opt[PATH_MAX + 64];
        struct run_result r;

        snprintf(opt, sizeof(opt), "%s/private.key", extra);
        run_script((const char *[]){"--hide", opt, NULL},
                   "cd ../../extra && cat private.key; cat public.txt", &r);
        if (strstr(r.out, "SECRET-EXTRA") || !strstr(r.out, "visible-public"))
                fail_msg("--hide: %s %s", r.out, r.err);
        runner_free(&r);
        run_script((const char *[]){"--hide", "~/notes.txt", NULL}, "cat ~/notes.txt", &r);
        if (strstr(r.out, "visible-notes"))
                fail_msg("--hide ~/notes.txt: %s", r.out);
        runner_free(&r);
        run_script((const char *[]){"--hide", "", NULL}, "true", &r);
        if (r.exit_code != 125 || !strstr(r.err, "--hide"))
                fail_msg("--hide '': exit %d, %s", r.exit_code, r.err);
        runner_free(&r);
}

/*
 * Symlinks on the way (outside review R1): a HOME that is a symlink (Silverblue's /home ->
 * /var/home), a credential directory that is a symlink into a dotfiles tree (stow), and
 * --hide / --ro of a symlink. Landlock rules belong to inodes: the carve-outs are made by the
 * real paths, so the secret is out of reach by either name.
 */
static void symlinked_paths(void **state)
{
        char cmd[PATH_MAX * 4], linkhome[PATH_MAX + 32], script[PATH_MAX * 6];
        struct run_result r;

        snprintf(
                cmd, sizeof(cmd),
                "cd '%s' && mkdir -p realhome/.ssh realhome/proj dotfiles/aws && "
                "echo SECRET-REALHOME > realhome/.ssh/id_rsa && ln -s realhome linkhome && "
                "echo SECRET-DOTFILES > dotfiles/aws/credentials && "
                "ln -s ../dotfiles/aws realhome/.aws && mkdir -p realhome/proj/sec && "
                "echo SECRET-LINKED > realhome/proj/sec/env && ln -s sec/env realhome/proj/.env && "
                "chmod -R a+rX . && chown -R %u realhome dotfiles",
                top, geteuid() == 0 ? 65534u : (unsigned)geteuid());
        assert_int_equal(system(cmd), 0);
        snprintf(linkhome, sizeof(linkhome), "%s/linkhome", top);
        setenv("HOME", linkhome, 1);
        snprintf(script, sizeof(script),
                 "cat '%s/.ssh/id_rsa' '%s/realhome/.ssh/id_rsa' '%s/.aws/credentials' "
                 "'%s/dotfiles/aws/credentials'; cat .env; echo PWNED >> ../.ssh/id_rsa",
                 linkhome, top, linkhome, top);
        snprintf(cmd, sizeof(cmd), "%s/proj", linkhome);
        run_script_in(cmd, (const char *[]){"--hide", ".env", NULL}, script, &r);
        setenv("HOME", home, 1);
        if (strstr(r.out, "SECRET-") || strstr(r.err, "SECRET-"))
                fail_msg("a secret behind a symlink was read: %s %s", r.out, r.err);
        runner_free(&r);
        snprintf(cmd, sizeof(cmd), "grep -q PWNED '%s/realhome/.ssh/id_rsa'", top);
        assert_int_not_equal(system(cmd), 0);
}

/*
 * A bind-mounted alias of a directory holding a secret (outside review R1): inside a mount
 * namespace of the test's own, the home is mounted again elsewhere; the secret must stay out
 * of reach by the original path and by the alias.
 */
static void bind_mounted_alias(void **state)
{
        static char cmd[PATH_MAX * 16];
        struct run_result r;
        /* mount(8) wants uid 0, and in a user namespace where we would be root stockade cannot
         * set up its uid (setgroups is denied there): the bind mounts need real root. */
        const char *ns = "unshare -m --propagation private";
        const char *argv[] = {"/bin/sh", "-c", cmd, NULL};

        if (geteuid() != 0) {
                print_message("  skipped: bind mounts need root (the root run covers this)\n");
                skip();
        }
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/elsewhere/alias' '%s/alias2'", top, top);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s true 2>/dev/null", ns);
        if (system(cmd) != 0) {
                print_message("  skipped: no mount namespace here (%s)\n", ns);
                skip();
        }
        snprintf(cmd, sizeof(cmd),
                 "%s sh -c \"mount --bind '%s' '%s/elsewhere/alias' && mount --bind '%s' "
                 "'%s/alias2' && cd '%s' && '%s' run --env HOME %s -- sh -c 'cat %s/.ssh/id_rsa "
                 "%s/elsewhere/alias/.ssh/id_rsa %s/alias2/.ssh/id_rsa; echo ran'\"",
                 ns, home, top, home, top, work, runner_stockade(), fast ? "--fast" : "", home, top,
                 top);
        assert_int_equal(runner_run((char *const *)argv, NULL, TIMEOUT_S, &r), 0);
        if (!strstr(r.out, "ran"))
                fail_msg("did not run: %s %s", r.out, r.err);
        if (strstr(r.out, "SECRET-") || strstr(r.err, "SECRET-"))
                fail_msg("a secret was read through a bind-mounted alias: %s %s", r.out, r.err);
        runner_free(&r);
}

/* As root with --user root: uid 0 reads /etc/shadow by its mode natively; not here. */
static void shadow_unreadable_as_root(void **state)
{
        struct run_result r;

        if (geteuid() != 0) {
                print_message("  skipped: only uid 0 may read /etc/shadow by its mode\n");
                skip();
        }
        if (access("/etc/shadow", R_OK) < 0) {
                print_message("  skipped: no readable /etc/shadow here\n");
                skip();
        }
        run_script((const char *[]){"--user", "root", NULL}, "cat /etc/shadow && echo READ-SHADOW",
                   &r);
        if (strstr(r.out, "READ-SHADOW") || strstr(r.out, "root:"))
                fail_msg("/etc/shadow was read: %s", r.out);
        runner_free(&r);
}

/* Masks: a --hide pattern for a directory's entries covers those entries, not the directory
 * and its parent (glob's "." and "..": an outside review lost its workspace so); and other
 * users' homes, a pattern with an exception (yours), are covered too (as root: the test
 * makes one in /home). */
static void masks_and_patterns(void **state)
{
        char sub[PATH_MAX + 64], victim[64], cmd[3 * PATH_MAX + 512], pattern[PATH_MAX + 128];
        const char *opts[] = {"--hide", pattern, NULL};
        struct run_result r;

        (void)state;
        snprintf(sub, sizeof(sub), "%s/sub", work);
        snprintf(pattern, sizeof(pattern), "%s/*", sub);
        mkdirs(work, "sub");
        put(sub, "a.key", "SECRET-SUB\n");
        put(work, "main.c", "visible-main\n");
        snprintf(victim, sizeof(victim), "/home/stockade-victim-%d", (int)getpid());
        if (geteuid() == 0) {
                snprintf(cmd, sizeof(cmd),
                         "mkdir -p %s && echo SECRET-VICTIM > %s/plan && chmod 755 %s && "
                         "chmod 644 %s/plan && chown -R 65533 %s",
                         victim, victim, victim, victim, victim);
                assert_int_equal(system(cmd), 0);
        }
        snprintf(cmd, sizeof(cmd),
                 "cat main.c; ls . | grep -c main.c; cat sub/a.key; "
                 "cd %s 2>/dev/null && echo entered-victim; echo finished",
                 victim);
        run_script(opts, cmd, &r);
        if (geteuid() == 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf %s", victim);
                assert_int_equal(system(cmd), 0);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s/main.c'", sub, work);
        assert_int_equal(system(cmd), 0);
        if (!strstr(r.out, "visible-main\n1\n") || strstr(r.out, "SECRET") ||
            strstr(r.out, "entered-victim") || !strstr(r.out, "finished"))
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* A --hide path that does not exist at the start cannot be made either (an outside review
 * made one with mkdir, and the file it then created beneath it reached the host while the
 * program was told ENOENT). Judged from outside: nothing at the hidden names. */
static void hidden_absent_not_made(void **state)
{
        char opt[PATH_MAX + 64], dir[PATH_MAX + 64], script[4 * PATH_MAX + 512];
        char deep[PATH_MAX + 64], viadir[PATH_MAX + 64], spelt[PATH_MAX + 64], real[PATH_MAX + 64];
        const char *opts[] = {"--rw",   extra,  "--hide", opt,   "--hide", deep,
                              "--hide", viadir, "--hide", spelt, NULL};
        struct run_result r;
        struct stat st;

        (void)state;
        snprintf(dir, sizeof(dir), "%s/later", extra);
        memcpy(opt, dir, sizeof(opt));
        snprintf(deep, sizeof(deep), "%s/later2/secret", extra);
        /* hd/s1 through a symlink to hd: the path as written names no hidden entry (a
         * second review made an empty file there, 0666, refused only after the fact). */
        snprintf(viadir, sizeof(viadir), "%s/hd", extra);
        assert_int_equal(mkdir(viadir, 0777), 0);
        assert_int_equal(chmod(viadir, 0777), 0);
        snprintf(viadir, sizeof(viadir), "%s/hd/s1", extra);
        /* hd2/s2 hidden as spelt through a symlink to hd2 (a third review made it as hd2/s2
         * and read it back by the hidden name). */
        snprintf(real, sizeof(real), "%s/hd2", extra);
        assert_int_equal(mkdir(real, 0777), 0);
        assert_int_equal(chmod(real, 0777), 0);
        snprintf(spelt, sizeof(spelt), "%s/hd2link", extra);
        assert_int_equal(symlink("hd2", spelt), 0);
        snprintf(spelt, sizeof(spelt), "%s/hd2link/s2", extra);
        snprintf(real, sizeof(real), "%s/hd2/s2", extra);
        assert_int_equal(chmod(extra, 0777), 0);
        /* later2/secret by renaming a directory that holds it into place (a second review
         * planted ~/.cache/huggingface/token so), plainly and by exchange. */
        snprintf(script, sizeof(script),
                 "mkdir '%s'; echo x > '%s/t'; cd '%s' && mkdir later; ln -s /etc later; "
                 "mkfifo later; echo x > later; echo x >> ./later; "
                 "mkdir x && echo planted > x/secret && mv x later2; "
                 "mkdir y later2 && echo planted > y/secret && python3 -c \"import ctypes; "
                 "print(ctypes.CDLL(None).renameat2(-100, b'y', -100, b'later2', 2))\"; "
                 "ln -s hd lnk; echo x > lnk/s1; echo x > lnk/../hd/s1; echo x > hd2/s2; "
                 /* openat2 with RESOLVE_BENEATH, which has the fast way only */
                 "python3 -c \"import ctypes, os, struct; "
                 "h = ctypes.create_string_buffer(struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, "
                 "0o644, 8)); ctypes.CDLL(None).syscall(437, -100, b'later', h, 24); "
                 "ctypes.CDLL(None).syscall(437, -100, b'hd/s1', h, 24)\"; "
                 "mkdir visible && echo made",
                 dir, dir, extra);
        run_script(opts, script, &r);
        if (lstat(dir, &st) == 0)
                fail_msg("a hidden name that did not exist was made: %s", r.err);
        if (lstat(deep, &st) == 0)
                fail_msg("a hidden path was made by a rename: %s %s", r.out, r.err);
        if (lstat(viadir, &st) == 0)
                fail_msg("a hidden file was made through a symlink: %s %s", r.out, r.err);
        if (lstat(real, &st) == 0)
                fail_msg("a path hidden through a symlink was made: %s %s", r.out, r.err);
        if (!strstr(r.out, "made"))
                fail_msg("the control (mkdir beside it) failed: %s %s", r.out, r.err);
        runner_free(&r);
        assert_int_equal(chdir(extra), 0);
        assert_int_equal(system("rm -rf visible later2 x y hd lnk hd2 hd2link"), 0);
        assert_int_equal(chdir(top), 0);
        assert_int_equal(chmod(extra, 0755), 0);
}

/* Patterns are matched at every look-up, not only against what matched at the start: a
 * name that comes to match (made by the host during the run, or by the sandbox by any call)
 * is neither read nor made. Judged from outside: nothing at the matching names, no secret
 * in the output, the control beside them made. */
static void hidden_patterns_later(void **state)
{
        char p1[PATH_MAX + 128], p2[PATH_MAX + 128], pk[PATH_MAX + 64], cmd[12 * PATH_MAX];
        const char *opts[] = {"--rw", extra, "--hide", p1, "--hide", p2, NULL};
        static const char *const made[] = {"a/id", "new.key", "n/id", "m.key", "s.key", "x.key"};
        struct run_result r;
        struct stat st;

        (void)state;
        snprintf(pk, sizeof(pk), "%s/pk", extra);
        snprintf(p1, sizeof(p1), "%s/*/id", pk);
        snprintf(p2, sizeof(p2), "%s/*.key", pk);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s/a' '%s/b' '%s/../free' && echo old > '%s/b/id' && "
                 "chmod -R a+rwX '%s' '%s/../free' && chmod a+rwx '%s' && (sleep 0.5; echo "
                 "SECRET-LATER > '%s/host.key'; "
                 "echo SECRET-LATER > '%s/a/id'; chmod a+r '%s/host.key' '%s/a/id') &",
                 pk, pk, pk, pk, pk, pk, extra, pk, pk, pk, pk);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd),
                 "cd '%s' && echo x > pk/a/id; echo x > pk/new.key; mkdir pk/n; "
                 "echo x > pk/n/id; echo x > free/w1 && mv free/w1 pk/m.key; ln -s /etc/hostname "
                 "pk/s.key; echo x > free/w2 && ln free/w2 pk/x.key; "
                 "python3 -c \"import ctypes, os, struct; "
                 "h = ctypes.create_string_buffer(struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, "
                 "0o644, 8)); ctypes.CDLL(None).syscall(437, -100, b'pk/new.key', h, 24)\"; "
                 "sleep 1.5; cat pk/host.key pk/a/id pk/b/id; python3 -c \"import os; "
                 "[print(open(p).read()) for p in ('pk/host.key', 'pk/a/id') "
                 "if os.path.exists(p)]\"; ls pk pk/a; echo ok > free/control && echo finished",
                 extra);
        run_script(opts, cmd, &r);
        for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++) {
                snprintf(cmd, sizeof(cmd), "%s/%s", pk, made[i]);
                if (strcmp(made[i], "a/id") != 0 && lstat(cmd, &st) == 0)
                        fail_msg("a name matching a pattern was made: %s\n%s%s", made[i], r.out,
                                 r.err);
        }
        /* --fast lists what the host made after the start (its masks were made before) */
        if (strstr(r.out, "SECRET") || strstr(r.out, "old") ||
            (!fast && strstr(r.out, "host.key")) || !strstr(r.out, "finished"))
                fail_msg("a name matching a pattern was read or listed:\n%s%s", r.out, r.err);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s/free' '%s/w1' '%s/w2'", pk, extra, extra,
                 extra);
        assert_int_equal(system(cmd), 0);
        runner_free(&r);
}

/* A stat through ".." is judged on the path it walks: a thread swapping the base's ancestors
 * between the walk and the reading of the base's path made an outside review's stats of
 * "../../../hid/secret.txt" reach the hidden file (its planted size told). hid is not
 * masked (a --rw lies beneath it), so only the view stands there. */
static void dotdot_race_judged(void **state)
{
        char hid[PATH_MAX + 64], pub[PATH_MAX + 64], cmd[16 * PATH_MAX];
        const char *opts[] = {"--rw", extra, "--hide", hid, "--rw", pub, NULL};
        struct run_result r;

        (void)state;
        if (fast)
                skip(); /* hid cannot be masked: --fast refuses it (fast_refusals) */
        snprintf(hid, sizeof(hid), "%s/hid", extra);
        snprintf(pub, sizeof(pub), "%s/hid/pub", extra);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s' '%s/race/a/b' '%s/race/z' && truncate -s 4242 '%s/secret.txt' && "
                 "truncate -s 4343 '%s/shown.txt' && chmod -R a+rwX '%s' '%s/race' '%s/shown.txt'",
                 pub, extra, extra, hid, extra, hid, extra, extra);
        assert_int_equal(system(cmd), 0);
        /* The control first: a shown file through the same raced ".." is found, so that the
         * hidden one's ENOENT is the view's, not a walk that reaches nothing. */
        snprintf(cmd, sizeof(cmd),
                 "%s dotdot_race '%s/race' ../../../shown.txt 4343; "
                 "%s dotdot_race '%s/race' ../../../hid/secret.txt 4242",
                 ATTACK_FS, extra, ATTACK_FS, extra);
        run_script(opts, cmd, &r);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s/race' '%s/shown.txt'", hid, extra, extra);
        assert_int_equal(system(cmd), 0);
        {
                const char *c = strstr(r.out, "leaks="), *h = c ? strstr(c + 1, "leaks=") : NULL;
                unsigned long shown = 0, leaks = 1;

                if (!h || sscanf(c, "leaks=%lu", &shown) != 1 ||
                    sscanf(h, "leaks=%lu", &leaks) != 1 || shown == 0)
                        fail_msg("the control found no shown file through '..':\n%s%s", r.out,
                                 r.err);
                if (leaks != 0)
                        fail_msg("a hidden file's metadata through a raced '..':\n%s%s", r.out,
                                 r.err);
        }
        runner_free(&r);
}

/* A HOME whose name holds `[`, `*`, `?` or `\` keeps its credentials hidden: composed into
 * the defaults, it made each of them a pattern that matched another path (an outside review
 * read ~/.ssh/id_rsa under HOME=.../hb[1]). */
static void home_with_glob_characters(void **state)
{
        char hb[PATH_MAX + 64], cmd[8 * PATH_MAX], *saved = getenv("HOME");
        struct run_result r;

        (void)state;
        saved = saved ? strdup(saved) : NULL;
        snprintf(hb, sizeof(hb), "%s/hb[1]", top);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s/.ssh' && echo SECRET-BRACKET > '%s/.ssh/id_rsa' && "
                 "chmod -R a+rX '%s'",
                 hb, hb, hb);
        assert_int_equal(system(cmd), 0);
        setenv("HOME", hb, 1);
        snprintf(cmd, sizeof(cmd), "cat '%s/.ssh/id_rsa'; ls -a '%s'; echo finished", hb, hb);
        run_script(NULL, cmd, &r);
        if (saved)
                setenv("HOME", saved, 1);
        free(saved);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", hb);
        assert_int_equal(system(cmd), 0);
        if (strstr(r.out, "SECRET") || (!fast && strstr(r.out, ".ssh")) ||
            !strstr(r.out, "finished"))
                fail_msg("credentials under a HOME with glob characters:\n%s%s", r.out, r.err);
        runner_free(&r);
}

/* The calls the kernel resolves itself — chdir, an O_PATH open and its fstat, getxattr,
 * inotify — find nothing of a hidden path where a mount namespace can be made: it is covered
 * there (supervisor/cow_masks.c). Judged from outside by the real inode, size and xattr. */
static void kernel_side_calls(void **state)
{
        static const char script[] =
                "python3 - <<'EOF'\n"
                "import ctypes, os\n"
                "H = os.environ['HOME']\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "def t(name, f):\n"
                "    try: print(name + ':' + str(f()))\n"
                "    except OSError: print(name + ':err')\n"
                "def opath(p):\n"
                "    s = os.fstat(os.open(p, os.O_PATH))\n"
                "    return '%d/%d' % (s.st_ino, s.st_size)\n"
                "t('chdir', lambda: os.chdir(H + '/.ssh') or 'ok')\n"
                "t('opath-netrc', lambda: opath(H + '/.netrc'))\n"
                "t('opath-key', lambda: opath(H + '/.ssh/id_rsa'))\n"
                "t('xattr', lambda: os.getxattr(H + '/.netrc', 'user.stockade').decode())\n"
                "fd = libc.inotify_init1(0)\n"
                "t('inotify', lambda: libc.inotify_add_watch(fd, (H + '/.ssh').encode(), 0xfff))\n"
                "EOF\n";
        const char *v[] = {"-v", NULL};
        char path[PATH_MAX + 32], netrc[64], key[64];
        bool xattr;
        struct stat st;
        struct run_result r;

        (void)state;
        run_script(v, "true", &r);
        if (!strstr(r.err, "private directories (--tmp)  yes")) {
                print_message("  skipped: no mount namespace on this host: %s\n", r.err);
                runner_free(&r);
                skip();
        }
        runner_free(&r);
        snprintf(path, sizeof(path), "%s/.netrc", home);
        assert_int_equal(stat(path, &st), 0);
        snprintf(netrc, sizeof(netrc), "opath-netrc:%lu/%lld\n", (unsigned long)st.st_ino,
                 (long long)st.st_size);
        xattr = setxattr(path, "user.stockade", "XATTR-SECRET", 12, 0) == 0;
        snprintf(path, sizeof(path), "%s/.ssh/id_rsa", home);
        assert_int_equal(stat(path, &st), 0);
        snprintf(key, sizeof(key), "opath-key:%lu/%lld\n", (unsigned long)st.st_ino,
                 (long long)st.st_size);
        run_script(NULL, script, &r);
        if (!strstr(r.out, "chdir:err\n") || strstr(r.out, netrc) || strstr(r.out, key) ||
            strstr(r.out, "XATTR-SECRET") || !strstr(r.out, "inotify:-1\n") ||
            !strstr(r.out, "opath-netrc:"))
                fail_msg("a hidden path showed through a kernel-side call (xattr set: %d):\n%s%s",
                         xattr, r.out, r.err);
        runner_free(&r);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(control_reads_secret),
                cmocka_unit_test(credentials_unreadable),
                cmocka_unit_test(the_rest_reads),
                cmocka_unit_test(no_write_into_hidden),
                cmocka_unit_test(workspace_containing_hidden),
                cmocka_unit_test(hide_flag),
                cmocka_unit_test(symlinked_paths),
                cmocka_unit_test(bind_mounted_alias),
                cmocka_unit_test(shadow_unreadable_as_root),
                cmocka_unit_test(kernel_side_calls),
                cmocka_unit_test(hidden_absent_not_made),
                cmocka_unit_test(hidden_patterns_later),
                cmocka_unit_test(dotdot_race_judged),
                cmocka_unit_test(home_with_glob_characters),
                cmocka_unit_test(masks_and_patterns),
        };

        fast = argc > 1 && strcmp(argv[1], "--fast") == 0;
        if (fast && !hidden_fast_possible())
                return 77;
        return cmocka_run_group_tests(tests, hidden_setup, hidden_teardown);
}

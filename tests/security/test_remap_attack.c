/*
 * Remapped mounts: what an outside attack on the first version found, judged from outside.
 *
 * - a --ro source's metadata (mode, times, xattrs) changed through a writable path given
 *   after it on the command line (`--ro P/A:T --rw P:T2`, and the plain `--ro P/A --rw P`):
 *   the carve-out was made only if its writable place came first;
 * - `--hide T/lnk`, with SRC/lnk a symlink, left what the link points to visible (listing,
 *   stat): the real paths of hidden entries were found before the remap translated them.
 *
 * The refusals it found (HOST /, /proc, /dev, /sys; a target in another remap's hidden path;
 * one host tree read-only and writable) are cases of test_remap_refuse. Exits 77 where no
 * mount namespace can be made.
 */
#include <errno.h>
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

/* chmod, utime and setxattr of NAME/f, each printing `NAME-op ok` or `NAME-op ERR`. */
#define META_PY                                                                                    \
        PY " -c 'import os, sys\n"                                                                 \
           "for p in sys.argv[1:]:\n"                                                              \
           "    for op, f in ((\"chmod\", lambda: os.chmod(p + \"/f\", 0o600)),\n"                 \
           "                  (\"utime\", lambda: os.utime(p + \"/f\", (7, 7))),\n"                \
           "                  (\"xattr\", lambda: os.setxattr(p + \"/f\", \"user.pwn\", "          \
           "b\"1\"))):\n"                                                                          \
           "        try: f(); print(p, op, \"ok\")\n"                                              \
           "        except OSError as e: print(p, op, e.strerror)'"

static void ro_source_metadata_kept(void **state)
{
        char dir[PATH_MAX + 32], p[PATH_MAX + 64], a[PATH_MAX + 80], t[PATH_MAX + 32];
        char t2[PATH_MAX + 32], ro[3 * PATH_MAX], rw[3 * PATH_MAX], script[4 * PATH_MAX];
        char *before;
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/carve", top);
        snprintf(p, sizeof(p), "%s/" SRC_MARK "-P", dir);
        snprintf(a, sizeof(a), "%s/A", p);
        snprintf(t, sizeof(t), "%s/t-carve", ws);
        snprintf(t2, sizeof(t2), "%s/t-carve2", ws);
        sh("mkdir -p '%s' '%s' '%s' && printf keep > '%s/f' && touch -d 2020-01-01 '%s/f'", a, t,
           t2, a, a);
        chown_tree(dir);
        chown_tree(t);
        chown_tree(t2);
        snprintf(ro, sizeof(ro), "%s:%s", a, t);
        snprintf(rw, sizeof(rw), "%s:%s", p, t2);

        /* The control: the same calls on a file of the writable tree succeed. */
        sh("mkdir -p '%s/B' && printf x > '%s/B/f'", p, p);
        chown_tree(dir);
        snprintf(script, sizeof(script), META_PY " '%s/B'", t2);
        run((const char *[]){"--ro", ro, "--rw", rw, NULL}, script, &r);
        expect_ran(&r);
        if (!strstr(r.out, "chmod ok") || !strstr(r.out, "utime ok"))
                note("(control) the writable tree's file could not be changed:\n%s", r.out);
        runner_free(&r);

        before = snapshot(a);
        /* Through the remapped writable parent, after the --ro source on the command line. */
        snprintf(script, sizeof(script), META_PY " '%s/A' '%s'", t2, t);
        run((const char *[]){"--ro", ro, "--rw", rw, NULL}, script, &r);
        expect_ran(&r);
        if (strstr(r.out, " ok"))
                note("--ro %s --rw %s: a change was allowed:\n%s", ro, rw, r.out);
        runner_free(&r);
        same_snapshot(a, before, "--ro A:T --rw P:T2");

        /* The same without remaps: --ro P/A --rw P. */
        snprintf(script, sizeof(script), META_PY " '%s'", a);
        run((const char *[]){"--ro", a, "--rw", p, NULL}, script, &r);
        expect_ran(&r);
        if (strstr(r.out, " ok"))
                note("--ro %s --rw %s: a change was allowed:\n%s", a, p, r.out);
        runner_free(&r);
        same_snapshot(a, before, "--ro P/A --rw P");
        free(before);
        check_report();
}

static void hidden_symlink_target_hidden(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], tgt[PATH_MAX + 32], spec[3 * PATH_MAX];
        char hide[PATH_MAX + 48], script[4 * PATH_MAX];
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/hlink", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-l", dir);
        snprintf(tgt, sizeof(tgt), "%s/t-hlink", ws);
        sh("mkdir -p '%s' '%s' && printf 'TOKEN-LINK-5p1\\n' > '%s/realsecret' && ln -sfn "
           "realsecret '%s/lnk'",
           src, tgt, src, src);
        chown_tree(dir);
        chown_tree(tgt);
        snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
        snprintf(hide, sizeof(hide), "%s/lnk", tgt);
        snprintf(script, sizeof(script),
                 "T='%s'; ls -A \"$T\" | sed 's/^/lst:/'; cat \"$T/realsecret\"; stat -c "
                 "'size=%%s' \"$T/realsecret\"; echo end",
                 tgt);

        run((const char *[]){"--ro", spec, NULL}, script, &r);
        expect_ran(&r);
        if (!strstr(r.out, "TOKEN-LINK-5p1") || !has_line(r.out, "lst:realsecret"))
                note("(control) without --hide the file is not there:\n%s", r.out);
        runner_free(&r);

        run((const char *[]){"--ro", spec, "--hide", hide, NULL}, script, &r);
        expect_ran(&r);
        if (!has_line(r.out, "end"))
                note("the script did not get to its end");
        if (strstr(r.out, "TOKEN-") || has_line(r.out, "lst:realsecret") ||
            has_line(r.out, "size=15") || has_line(r.out, "lst:lnk"))
                note("--hide %s left the link or its target visible:\n%s", hide, r.out);
        runner_free(&r);
        check_report();
}

/* Not from the attack: a --ro remap in the copy-on-write working directory (`--ro
 * ~/datasets:./data`, the default view's cwd; the runner makes it --rw unless --cow is
 * given), bound over the overlay's directory. Its files cannot change;
 * the session holds the working directory's changes and nothing of the remap. */
static void ro_in_cow_workspace(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], cw[PATH_MAX + 48], spec[3 * PATH_MAX];
        char st[PATH_MAX + 48], script[4 * PATH_MAX], *before, *diff, spec2[3 * PATH_MAX];
        char out[PATH_MAX + 48];
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/rocow", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-c", dir);
        snprintf(cw, sizeof(cw), "%s/cw", dir);
        snprintf(st, sizeof(st), "%s/rocow", states); /* beside the tree, ours */
        snprintf(out, sizeof(out), "%s/outsrc", dir);
        sh("mkdir -p '%s/sub' '%s/data' '%s/nest/out' '%s' '%s' && printf 'SRC-f\\n' > '%s/f' && "
           "printf "
           "'mine\\n' > '%s/p.txt' && printf 'old\\n' > '%s/o'",
           src, cw, cw, st, out, src, cw, out);
        chown_tree(dir);
        snprintf(spec, sizeof(spec), "%s:./data", src);
        /* and a --rw one beside it, whose writes go to its source, not to the session */
        snprintf(spec2, sizeof(spec2), "%s:./nest/out", out);
        snprintf(script, sizeof(script), "%s",
                 "echo \"f=$(cat data/f)\"; echo x > data/f; touch data/new; mkdir data/d; "
                 "rm data/f; chmod 600 data/f; echo changed > p.txt; "
                 "(cd data/sub && echo \"pwd=$(pwd -P)\"); echo new > nest/out/o; "
                 "echo n2 > nest/out/n2; "
                 "mv ../cw ../cw-moved || echo cw-stays; rmdir data || echo data-stays; "
                 /* a directory holding a mount point, moved: overlayfs answers EXDEV and the
                  * supervisor moves by copying; its removal of the source went into the mount
                  * (the --rw source's files) and let the mount point go */
                 "python3 -c 'import os; os.rename(\"nest\", \"nest2\")' 2>/dev/null || "
                 "echo nest-stays; "
                 "echo end");
        before = snapshot(src);
        run_from(cw,
                 (const char *[]){"--state-dir", st, "--session", "rc", "--rw", dir, "--cow", cw,
                                  "--ro", spec, "--rw", spec2, NULL},
                 script, &r);
        expect_ran(&r);
        if (!has_line(r.out, "f=SRC-f") || !has_line(r.out, "end"))
                note("the remap is not there:\n%s", r.out);
        if (!has_line(r.out, "cw-stays") || !has_line(r.out, "data-stays") ||
            !has_line(r.out, "nest-stays"))
                note("the workspace or the remap's target was moved or removed:\n%s", r.out);
        if (!strstr(r.out, "pwd=") || !strstr(r.out, "/cw/data/sub"))
                note("pwd is not the sandbox path:\n%s", r.out);
        runner_free(&r);
        same_snapshot(src, before, "--ro SRC:./data in the cow workspace");
        free(before);
        diff = capture("cd '%s' && '%s' diff --state-dir '%s' rc 2>&1", cw, runner_stockade(), st);
        if (strcmp(diff, "M p.txt\n") != 0)
                note("the session is not the working directory's change alone:\n%s", diff);
        free(diff);
        diff = capture("cat '%s/o' '%s/n2'", out, out);
        if (strcmp(diff, "new\nn2\n") != 0)
                note("the --rw remap's writes are not in its source: %s", diff);
        free(diff);
        diff = capture("cat '%s/p.txt'", cw);
        if (strcmp(diff, "mine\n") != 0)
                note("the workspace changed on the host: %s", diff);
        free(diff);
        check_report();
}

/* Found while adding file sources: the supervisor, in another mount namespace, could
 * remove or rename a target (the kernel lets a mount point go there): `mv T T2` of a --rw
 * remap moved the host's directory. Now EBUSY, as natively; a link of a target is EXDEV. A
 * file source (`--ro FILE:PATH`) is shown at an existing file and read-only with --ro. */
static void targets_stay_and_files(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], t[PATH_MAX + 48], tf[PATH_MAX + 48];
        char tr[PATH_MAX + 48], specs[3][3 * PATH_MAX], script[8 * PATH_MAX], *host;
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/stay", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-st", dir);
        snprintf(t, sizeof(t), "%s/land/td", dir);
        snprintf(tf, sizeof(tf), "%s/land/tf.conf", dir);
        snprintf(tr, sizeof(tr), "%s/land/tr.conf", dir);
        sh("mkdir -p '%s/d' '%s' && printf 'cfg=1\\n' > '%s/ro.conf' && printf 'rw=1\\n' > "
           "'%s/rw.conf' && printf 'host-tf\\n' > '%s' && printf 'host-tr\\n' > '%s'",
           src, t, src, src, tf, tr);
        chown_tree(dir);
        snprintf(specs[0], sizeof(specs[0]), "%s/d:%s", src, t);
        snprintf(specs[1], sizeof(specs[1]), "%s/ro.conf:%s", src, tf);
        snprintf(specs[2], sizeof(specs[2]), "%s/rw.conf:%s", src, tr);
        snprintf(script, sizeof(script),
                 "L='%s/land'; echo \"tf=$(cat $L/tf.conf)\"; echo x > $L/tf.conf || echo "
                 "tf-ro; echo rw=2 > $L/tr.conf && echo tr-rw; " PY " -c 'import errno, os, sys\n"
                 "L = sys.argv[1]\n"
                 "for name, f in ((\"mv-d\", lambda: os.rename(L + \"/td\", L + \"/td2\")),\n"
                 "                (\"rmdir-d\", lambda: os.rmdir(L + \"/td\")),\n"
                 "                (\"rm-f\", lambda: os.unlink(L + \"/tr.conf\")),\n"
                 "                (\"mv-f\", lambda: os.rename(L + \"/tr.conf\", L + \"/x\")),\n"
                 "                (\"over-f\", lambda: os.rename(L + \"/mine\", L + "
                 "\"/tf.conf\")),\n"
                 "                (\"ln-f\", lambda: os.link(L + \"/tf.conf\", L + \"/ln\")),\n"
                 /* out of the bind and back: the parent is found the slow way */
                 "                (\"mv-up\", lambda: os.rename(L + \"/td/../td\", L + "
                 "\"/td3\")),\n"
                 "                (\"rmdir-up\", lambda: os.rmdir(L + \"/td/../td\"))):\n"
                 "    try: f(); print(\"escaped\", name)\n"
                 "    except OSError as e: print(name, errno.errorcode[e.errno])' \"$L\"",
                 dir);
        run_from(ws,
                 (const char *[]){"--rw", dir, "--rw", specs[0], "--ro", specs[1], "--rw", specs[2],
                                  NULL},
                 script, &r);
        expect_ran(&r);
        if (!has_line(r.out, "tf=cfg=1") || !has_line(r.out, "tf-ro") || !has_line(r.out, "tr-rw"))
                note("the file remaps are not what they should be:\n%s", r.out);
        if (strstr(r.out, "escaped") || !has_line(r.out, "mv-d EBUSY") ||
            !has_line(r.out, "mv-up EBUSY") || !has_line(r.out, "rmdir-up EBUSY") ||
            !has_line(r.out, "rm-f EBUSY") || !has_line(r.out, "ln-f EXDEV"))
                note("a target was moved, removed or linked:\n%s", r.out);
        runner_free(&r);
        host = capture("cat '%s' '%s' '%s/rw.conf'; ls '%s/land'", tf, tr, src, dir);
        if (strcmp(host, "host-tf\nhost-tr\nrw=2\ntd\ntf.conf\ntr.conf\n") != 0)
                note("the host changed where it should not:\n%s", host);
        free(host);
        check_report();
}

/* From the second attack: the ".." entry of a listing of SANDBOX gave the inode of HOST's
 * parent, which a walk of the visible tree then found. It is SANDBOX's parent's now. */
static void dotdot_entry_is_sandbox_parent(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], t[PATH_MAX + 48], spec[3 * PATH_MAX];
        char script[4 * PATH_MAX], want[64], path[PATH_MAX + 64];
        struct run_result r;
        struct stat st;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/dotdot", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-dd/src", dir);
        snprintf(t, sizeof(t), "%s/land/t", dir);
        sh("mkdir -p '%s/inner' '%s'", src, t);
        chown_tree(dir);
        snprintf(spec, sizeof(spec), "%s:%s", src, t);
        /* getdents64 by hand (os.scandir leaves "." and ".." out); no quotes in the
         * python: its strings come as arguments */
        snprintf(script, sizeof(script),
                 PY " -c 'import ctypes, os, struct, sys\n"
                    "t, fmt, up = sys.argv[1], sys.argv[2], sys.argv[3].encode()\n"
                    "d = os.open(t, os.O_RDONLY | os.O_DIRECTORY)\n"
                    "b = ctypes.create_string_buffer(8192)\n"
                    "n = ctypes.CDLL(None).syscall(217, d, b, 8192); o = 0\n"
                    "while o < n:\n"
                    "    ino, _, rl, _ = struct.unpack_from(fmt, b.raw, o)\n"
                    "    name = b.raw[o + 19:o + rl].split(bytes(1))[0]; o += rl\n"
                    "    if name == up: print(str(name, encoding=sys.argv[4]) + str(ino))' "
                    "'%s' QqHB .. ascii",
                 t);
        run((const char *[]){"--ro", spec, NULL}, script, &r);
        expect_ran(&r);
        snprintf(path, sizeof(path), "%s/land", dir); /* the target's parent */
        assert_int_equal(stat(path, &st), 0);
        snprintf(want, sizeof(want), "..%lu", (unsigned long)st.st_ino);
        if (!has_line(r.out, want))
                note("the listing's \"..\" is not the sandbox parent (%s):\n%s", want, r.out);
        snprintf(path, sizeof(path), "%s/" SRC_MARK "-dd", dir); /* the source's */
        assert_int_equal(stat(path, &st), 0);
        snprintf(want, sizeof(want), "..%lu", (unsigned long)st.st_ino);
        if (has_line(r.out, want))
                note("the listing's \"..\" is the source's parent:\n%s", r.out);
        runner_free(&r);
        check_report();
}

/* A target in a private directory (`--ro ~/data:/tmp/data` with the default view's private
 * /tmp) is made there, in the namespace only: the host's /tmp gets nothing, the /tmp stays
 * private, the source is read-only there and its hidden paths stay hidden (Landlock grants
 * a private directory whole: the view and the masks are the walls there). */
static void target_in_private_tmp(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], spec[3 * PATH_MAX], script[2048], *host;
        char name[64];
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/privtmp", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-pt", dir);
        snprintf(name, sizeof(name), "stockade-remap-%d", (int)getpid());
        sh("mkdir -p '%s/.ssh' '%s/sub' && printf 'TOKEN-PT-9c2\\n' > '%s/.ssh/id_rsa' && "
           "printf 'pt\\n' > '%s/f'",
           src, src, src, src);
        chown_tree(dir);
        snprintf(spec, sizeof(spec), "%s:/tmp/%s/deep", src, name);
        snprintf(script, sizeof(script),
                 "T=/tmp/%s/deep; echo \"f=$(cat $T/f)\"; echo x > $T/f || echo ro; "
                 "cat $T/.ssh/id_rsa; ls -a $T | sed 's/^/lst:/'; (cd $T/.ssh && echo in-ssh); "
                 "echo mine > /tmp/mine && echo \"tmp=$(cat /tmp/mine)\"; echo end",
                 name);
        /* HOME is the source: ~/.ssh is hidden by default */
        setenv("HOME", src, 1);
        run((const char *[]){"--ro", spec, NULL}, script, &r);
        expect_ran(&r);
        if (!has_line(r.out, "f=pt") || !has_line(r.out, "ro") || !has_line(r.out, "tmp=mine") ||
            !has_line(r.out, "end"))
                note("the remap in the private /tmp is not what it should be:\n%s", r.out);
        if (strstr(r.out, "TOKEN-") || has_line(r.out, "lst:.ssh") || has_line(r.out, "in-ssh"))
                note("a hidden path beneath the source showed:\n%s", r.out);
        runner_free(&r);
        host = capture("ls -d '/tmp/%s' /tmp/mine 2>&1 | grep -v 'No such' || true", name);
        if (host[0])
                note("the host's /tmp got something: %s", host);
        free(host);
        check_report();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(ro_source_metadata_kept, reset_env),
                cmocka_unit_test_setup(hidden_symlink_target_hidden, reset_env),
                cmocka_unit_test_setup(ro_in_cow_workspace, reset_env),
                cmocka_unit_test_setup(targets_stay_and_files, reset_env),
                cmocka_unit_test_setup(dotdot_entry_is_sandbox_parent, reset_env),
                cmocka_unit_test_setup(target_in_private_tmp, reset_env),
        };

        int failed = cmocka_run_group_tests(tests, remap_setup, remap_teardown);

        if (failed == 0 && !have_ns) {
                printf("skipped: no mount namespace can be made here\n");
                return 77;
        }
        return failed;
}

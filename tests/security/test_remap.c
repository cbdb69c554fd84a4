/*
 * Remapped mounts, `--ro|--rw HOST:SANDBOX` (docs/plans/remapped-mounts.md, phase 1: a host
 * directory bound over an existing directory of the view, in the sandbox's mount namespace),
 * judged from outside: the host files after the run, and what reached the program's output.
 *
 * - a --ro remap is read-only wherever its target lies (in the writable workspace, in a --rw
 *   directory, in read-only land, in a split directory, without Landlock, as uid 0), and the
 *   host directory under the target is left alone; the same operations succeed natively and
 *   through a --rw remap, which lands them in the source (the checks can fail);
 * - nested remaps, in either order on the command line;
 * - hidden paths beneath a source stay hidden at the target, by every name;
 * - the program sees sandbox paths only (getcwd, /proc/self/{cwd,fd,exe}, realpath): the
 *   sources' names hold a marker that must never reach its output;
 * - `..` and symlinks resolve in the view, and nothing moves across the bind's edge.
 *
 * What phase 1 refuses: test_remap_refuse.c; `--cow HOST:SANDBOX`: test_remap_cow.sh. Exits
 * 77 where no mount namespace can be made.
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

/* ---- sources, targets and the operations tried on them ----------------------------------- */

/* One file per operation, so that one run tries them all. */
#define SRC_FILES "f w a rmme mvme lnme chm tim tr own xa"

static void make_src(const char *dir)
{
        sh("mkdir -p '%s/sub' '%s/emptydir' && cd '%s' && for n in " SRC_FILES "; do "
           "printf 'SRC-%%s\\n' $n > $n; chmod 644 $n; done && printf 'SRC-G\\n' > sub/g && "
           "chmod 755 sub emptydir && touch -d @1500000000 * sub/g",
           dir, dir, dir);
        chown_tree(dir);
}

/* A host directory that the remap covers: its own content must stay its own. */
static void make_target(const char *dir)
{
        sh("mkdir -p '%s' && printf 'T-OWN\\n' > '%s/t-own' && touch -d @1400000000 '%s/t-own'",
           dir, dir, dir);
        chown_tree(dir);
}

/* Each operation, and what it leaves in the source when it works (checked on the host, from
 * inside SRC). */
static const struct op {
        const char *name, *cmd, *effect;
} ops[] = {
        {"write", "printf X > \"$T/w\"", "[ \"$(cat w)\" = X ]"},
        {"append", "printf X >> \"$T/a\"", "[ \"$(cat a)\" = \"$(printf 'SRC-a\\nX')\" ]"},
        {"create", ": > \"$T/new\"", "test -f new"},
        {"touch-new", "touch \"$T/new2\"", "test -f new2"},
        {"rm", "rm \"$T/rmme\"", "test ! -e rmme"},
        {"mv", "mv \"$T/mvme\" \"$T/moved\"", "test ! -e mvme && [ \"$(cat moved)\" = SRC-mvme ]"},
        {"ln", "ln \"$T/lnme\" \"$T/linked\"", "test linked -ef lnme"},
        {"symlink", "ln -s f \"$T/sym\"", "[ \"$(readlink sym)\" = f ]"},
        {"mkdir", "mkdir \"$T/d\"", "test -d d"},
        {"rmdir", "rmdir \"$T/emptydir\"", "test ! -e emptydir"},
        {"mkfifo", "mkfifo \"$T/fifo\"", "test -p fifo"},
        {"chmod", "chmod 600 \"$T/chm\"", "[ \"$(stat -c %a chm)\" = 600 ]"},
        {"utimes", "touch -d @1000000000 \"$T/tim\"", "[ \"$(stat -c %Y tim)\" = 1000000000 ]"},
        {"truncate", "truncate -s0 \"$T/tr\"", "[ \"$(stat -c %s tr)\" = 0 ]"},
        /* to oneself: the group becomes the program's (as root the tree's group is root's) */
        {"chown", "chown \"$(id -u):$(id -g)\" \"$T/own\"",
         "[ \"$(stat -c %g own)\" = \"$(stat -c %g new)\" ]"},
        {"setxattr",
         PY " -c 'import os, sys; os.setxattr(sys.argv[1], \"user.k\", b\"v\")' \"$T/xa\"",
         PY " -c 'import os, sys; sys.exit(os.getxattr(\"xa\", \"user.k\") != b\"v\")'"},
};

static bool op_wanted(const struct op *o)
{
        return xattr_ok || strcmp(o->name, "setxattr") != 0;
}

/* `T='target'; ` and one line per operation: `op NAME ok` or `op NAME no: error`. */
static char *ops_script(const char *target)
{
        size_t len = 256 + strlen(target);
        char *s, *p;

        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
                len += 96 + 2 * strlen(ops[i].name) + strlen(ops[i].cmd);
        s = p = malloc(len);
        assert_non_null(s);
        p += sprintf(p, "T='%s'; ", target);
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
                if (op_wanted(&ops[i]))
                        p += sprintf(p,
                                     "if e=$( (%s) 2>&1); then echo 'op %s ok'; else "
                                     "echo \"op %s no: $e\"; fi; ",
                                     ops[i].cmd, ops[i].name, ops[i].name);
        return s;
}

/* Every operation's line says `want`; the others are named. */
static void expect_ops(const char *out, const char *want, const char *what)
{
        char bad[4096] = "", line[128];

        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
                const char *p;

                if (!op_wanted(&ops[i]))
                        continue;
                snprintf(line, sizeof(line), "op %s %s", ops[i].name, want);
                if (has_line(out, line))
                        continue;
                /* the operation's own line (with its error, when it failed) */
                snprintf(line, sizeof(line), "op %s ", ops[i].name);
                p = strstr(out, line);
                snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "\n    %.*s",
                         p ? (int)(strchrnul(p, '\n') - p) : 0, p ? p : "");
        }
        if (*bad)
                note("%s: not `%s`:%s", what, want, bad);
}

/* On the host: every operation's effect is in the source `src`. */
static void expect_effects(const char *src, const char *what)
{
        char bad[1024] = "";

        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
                if (op_wanted(&ops[i]) && runner_shell("cd '%s' && %s", src, ops[i].effect) != 0)
                        snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s", ops[i].name);
        if (*bad)
                note("%s: not in %s on the host:%s", what, src, bad);
}

/* ---- 0. the control: every operation works natively ------------------------------------- */

/* The same operations, natively as the sandbox's uid, on a source like the others: each can
 * succeed, so a failure in the sandbox is the sandbox's. */
static void ops_work_natively(void **state)
{
        char src[PATH_MAX + 32], *script;
        struct run_result r;

        (void)state;
        snprintf(src, sizeof(src), "%s/native/" SRC_MARK "-src", top);
        make_src(src);
        script = ops_script(src);
        run_native(script, &r);
        free(script);
        expect_ops(r.out, "ok", "natively");
        runner_free(&r);
        expect_effects(src, "natively");
        check_report();
}

/* ---- 1. --ro HOST:SANDBOX is read-only wherever SANDBOX lies ---------------------------- */

static const struct placement {
        const char *what;
        const char *target;   /* @D: this case's directory, @W: the workspace, @L: land */
        const char *opts[6];  /* more options, same keys */
        const char *disabled; /* STOCKADE_TEST_DISABLE for this case */
        bool root_only;
} placements[] = {
        /* The regression of plan §2.1: Landlock's write rule on the workspace reaches a bind
         * mounted in it. */
        {"in the writable workspace", "@W/t-ws", {NULL}, NULL, false},
        {"in a --rw directory", "@D/rwplace/t", {"--rw", "@D/rwplace", NULL}, NULL, false},
        {"beneath a --ro directory", "@D/roplace/t", {"--ro", "@D/roplace", NULL}, NULL, false},
        {"in read-only land (not a writable place)", "@L/t", {NULL}, NULL, false},
        {"in a split directory",
         "@D/split/a/t",
         {"--rw", "@D/split", "--ro", "@D/split/a/ro", NULL},
         NULL,
         false},
        /* The mount is the wall, not Landlock (plan §5.1). */
        {"in the workspace, without Landlock", "@W/t-nolandlock", {NULL}, "landlock", false},
        /* Running as uid 0 lends nothing: a read-only mount holds for root too. */
        {"in the workspace, as uid 0", "@W/t-root", {"--user", "root", NULL}, NULL, true},
};

static void ro_one(size_t i)
{
        const struct placement *pl = &placements[i];
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], tgt[PATH_MAX + 64], spec[3 * PATH_MAX];
        char opt[6][2 * PATH_MAX], *script, *body, *src_before, *tgt_before;
        const char *opts[10];
        const char *keys[4] = {NULL, NULL, NULL, NULL};
        char dkey[PATH_MAX + 40], wkey[PATH_MAX + 24], lkey[sizeof(land) + 1];
        struct run_result r;
        size_t n = 0;

        snprintf(dir, sizeof(dir), "%s/ro%zu", top, i);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-src", dir);
        snprintf(dkey, sizeof(dkey), "D%s", dir);
        snprintf(wkey, sizeof(wkey), "W%s", ws);
        snprintf(lkey, sizeof(lkey), "L%s", land);
        keys[0] = dkey, keys[1] = wkey, keys[2] = lkey;
        expand(tgt, sizeof(tgt), pl->target, keys);
        make_src(src);
        make_target(tgt);
        sh("mkdir -p '%s/split/a/ro' '%s/rwplace' '%s/roplace'", dir, dir, dir);
        chown_tree(dir);
        /* uid 0 without capabilities: its own files are the ones it could change */
        if (pl->root_only)
                sh("chown -R 0 '%s' '%s'", src, tgt);
        src_before = snapshot(src);
        tgt_before = snapshot(tgt);
        snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
        for (size_t k = 0; pl->opts[k]; k++) {
                expand(opt[k], sizeof(opt[k]), pl->opts[k], keys);
                opts[n++] = opt[k];
        }
        opts[n++] = "--ro", opts[n++] = spec, opts[n] = NULL;
        if (pl->disabled)
                disable(pl->disabled);
        body = ops_script(tgt);
        /* The source at its own path: read-only too (plan §1, PLACE_RO by the host's inode),
         * also where its place is writable by default (a build tree in /var/tmp). Not
         * without Landlock, where a --ro path's only wall is a mount (`stockade run` warns
         * that --ro paths can be written). */
        assert_true(asprintf(&script,
                             "echo \"cat=$(cat '%s/f')\"; ls -A '%s' | sed 's/^/ls:/'; "
                             "test -e '%s/t-own' && echo saw-t-own; %s (printf X > '%s/f') "
                             "2>/dev/null && echo wrote-src-path; %s",
                             tgt, tgt, tgt, pl->disabled ? "false &&" : "", src, body) > 0);
        run(opts, script, &r);
        free(body);
        free(script);
        restore_env();
        if (ran_ok(&r, pl->what)) {
                if (!has_line(r.out, "cat=SRC-f") || !has_line(r.out, "ls:mvme") ||
                    has_line(r.out, "ls:t-own") || strstr(r.out, "saw-t-own"))
                        note("%s: the target does not show the source: %s", pl->what, r.out);
                if (strstr(r.out, "wrote-src-path"))
                        note("%s: the source was writable at its own path", pl->what);
                expect_ops(r.out, "no", pl->what);
        }
        runner_free(&r);
        same_snapshot(src, src_before, pl->what);
        same_snapshot(tgt, tgt_before, pl->what);
        free(src_before);
        free(tgt_before);
}

static void ro_is_read_only(void **state)
{
        (void)state;
        need_ns();
        for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
                if (placements[i].root_only && geteuid() != 0) {
                        print_message("  (%s: only as root)\n", placements[i].what);
                        continue;
                }
                if (strstr(placements[i].target, "@L") && !*land) {
                        print_message("  (%s: no such place here)\n", placements[i].what);
                        continue;
                }
                ro_one(i);
        }
        check_report();
}

/* ---- 2. --rw HOST:SANDBOX writes the source, and only it -------------------------------- */

static void rw_writes_source(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], parent[PATH_MAX + 64], tgt[PATH_MAX + 80];
        char spec[3 * PATH_MAX], *script, *body, *tgt_before;
        const char *opts[5] = {"--rw", spec, NULL, NULL, NULL};
        struct run_result r;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/rw", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-src", dir);
        /* In read-only land, so that the remap is the only writable place there; where there
         * is none, beneath a --ro directory. */
        if (*land) {
                snprintf(parent, sizeof(parent), "%s/rw", land);
        } else {
                snprintf(parent, sizeof(parent), "%s/roplace", dir);
                opts[2] = "--ro", opts[3] = parent;
        }
        snprintf(tgt, sizeof(tgt), "%s/t", parent);
        make_src(src);
        make_target(tgt);
        chown_tree(dir);
        chown_tree(parent);
        tgt_before = snapshot(tgt);
        snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
        body = ops_script(tgt);
        assert_true(asprintf(&script,
                             "%s if (printf x > '%s/beside') 2>/dev/null; then echo "
                             "wrote-beside; fi; if (printf x > '%s/../beside2') 2>/dev/null; "
                             "then echo wrote-dotdot; fi",
                             body, parent, tgt) > 0);
        run(opts, script, &r);
        free(body);
        free(script);
        expect_ran(&r);
        expect_ops(r.out, "ok", "--rw remap");
        if (strstr(r.out, "wrote-"))
                note("a write beside the --rw target worked: %s", r.out);
        runner_free(&r);
        expect_effects(src, "--rw remap");
        same_snapshot(tgt, tgt_before, "--rw remap (the host target)");
        free(tgt_before);
        if (runner_shell("test ! -e '%s/beside' && test ! -e '%s/beside2'", parent, parent) != 0)
                note("a file beside the --rw target is on the host");
        check_report();
}

/* --ro A:X --rw B:X/y (X/y is A's y): X/y writable, X not; in either order. */
static void rw_nested_in_ro(void **state)
{
        static const char *const orders[][4] = {
                {"--ro", "@A:@X", "--rw", "@B:@X/y"},
                {"--rw", "@B:@X/y", "--ro", "@A:@X"},
        };

        (void)state;
        need_ns();
        for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
                char dir[PATH_MAX + 32], a[PATH_MAX + 64], b[PATH_MAX + 64], x[PATH_MAX + 64];
                char ka[PATH_MAX + 72], kb[PATH_MAX + 72], kx[PATH_MAX + 72];
                char opt[4][3 * PATH_MAX], script[8 * PATH_MAX], *a_before, *x_before;
                const char *keys[4];
                struct run_result r;

                snprintf(dir, sizeof(dir), "%s/nest%zu", top, i);
                snprintf(a, sizeof(a), "%s/" SRC_MARK "-a", dir);
                snprintf(b, sizeof(b), "%s/" SRC_MARK "-b", dir);
                snprintf(x, sizeof(x), "%s/land/x", dir);
                sh("mkdir -p '%s/y' '%s' && printf A-FILE > '%s/a-file' && printf A-Y > "
                   "'%s/y/a-y' && printf B-FILE > '%s/b-file'",
                   a, b, a, a, b);
                make_target(x);
                chown_tree(dir);
                a_before = snapshot(a);
                x_before = snapshot(x);
                snprintf(ka, sizeof(ka), "A%s", a);
                snprintf(kb, sizeof(kb), "B%s", b);
                snprintf(kx, sizeof(kx), "X%s", x);
                keys[0] = ka, keys[1] = kb, keys[2] = kx, keys[3] = NULL;
                for (size_t k = 0; k < 4; k++)
                        expand(opt[k], sizeof(opt[k]), orders[i][k], keys);
                snprintf(script, sizeof(script),
                         "X='%s'; echo \"a=$(cat \"$X/a-file\")\"; echo \"b=$(cat "
                         "\"$X/y/b-file\")\"; ls -A \"$X/y\" | sed 's/^/lsy:/'; "
                         "(printf N > \"$X/y/new\") 2>/dev/null && echo y-writable; "
                         "mkdir \"$X/y/dir\" 2>/dev/null && echo y-mkdir; "
                         "(printf N > \"$X/new\") 2>/dev/null && echo x-writable; "
                         "(printf N >> \"$X/a-file\") 2>/dev/null && echo a-file-writable; "
                         "mkdir \"$X/dir\" 2>/dev/null && echo x-mkdir; true",
                         x);
                run((const char *[]){opt[0], opt[1], opt[2], opt[3], NULL}, script, &r);
                if (ran_ok(&r, orders[i][0])) {
                        if (!has_line(r.out, "a=A-FILE") || !has_line(r.out, "b=B-FILE") ||
                            !has_line(r.out, "lsy:b-file") || has_line(r.out, "lsy:a-y") ||
                            !has_line(r.out, "y-writable") || !has_line(r.out, "y-mkdir") ||
                            strstr(r.out, "x-writable") || strstr(r.out, "a-file-writable") ||
                            strstr(r.out, "x-mkdir"))
                                note("%s %s %s %s: %s", opt[0], opt[1], opt[2], opt[3], r.out);
                        if (runner_shell("[ \"$(cat '%s/new')\" = N ] && test -d '%s/dir'", b, b) !=
                            0)
                                note("%s first: the writes in X/y are not in B", orders[i][0]);
                }
                runner_free(&r);
                same_snapshot(a, a_before, "the --ro source under a --rw remap");
                same_snapshot(x, x_before, "the host directory under nested remaps");
                free(a_before);
                free(x_before);
        }
        check_report();
}

/* ---- 3. hidden paths beneath a source ---------------------------------------------------- */

/* Ways to reach ~/.ssh/id_rsa through the target $H (the fake HOME remapped); each prints
 * what it gets. */
static const char *const hidden_reads[] = {
        "cat \"$H/.ssh/id_rsa\"",
        "ls -A \"$H/.ssh\"",
        "cd \"$H/.ssh\" && ls -A && cat id_rsa",
        "cat \"$H/proj/../.ssh/id_rsa\"",
        "cd \"$H\" && cat .ssh/id_rsa",
        "cat /proc/self/cwd/h/.ssh/id_rsa",
        "ln -s \"$H/.ssh\" sshlink && cat sshlink/id_rsa",
        "ln -s \"$H/.ssh/id_rsa\" keylink && cat keylink",
        "cp \"$H/.ssh/id_rsa\" copy; cat copy",
        "grep -r TOKEN \"$H\"",
        "tar cf - -C \"$H\" . 2>/dev/null | tar xOf - 2>/dev/null",
        "exec 3<\"$H/.ssh/id_rsa\" && cat <&3",
        /* O_PATH is left to the kernel: only the mask in the namespace answers it. */
        PY " -c 'import os, sys\n"
           "for p in (sys.argv[1] + \"/.ssh/id_rsa\", sys.argv[1] + \"/.ssh\"):\n"
           "    try: fd = os.open(p, os.O_PATH)\n"
           "    except OSError as e: print(\"opath\", e.strerror); continue\n"
           "    print(\"ino=%d\" % os.fstat(fd).st_ino)\n"
           "    for q in (\"/proc/self/fd/%d\" % fd, \"/proc/self/fd/%d/id_rsa\" % fd):\n"
           "        try: print(open(q).read())\n"
           "        except OSError as e: print(\"reopen\", e.strerror)\n"
           "    try: print(os.listdir(\"/proc/self/fd/%d\" % fd))\n"
           "    except OSError as e: print(\"list\", e.strerror)\n"
           "d = os.open(sys.argv[1], os.O_PATH | os.O_DIRECTORY)\n"
           "try: print(open(os.open(\".ssh/id_rsa\", os.O_RDONLY, dir_fd=d)).read())\n"
           "except OSError as e: print(\"dirfd\", e.strerror)' \"$H\"",
};

static char *hidden_script(const char *h)
{
        size_t len = 512 + strlen(h);
        char *s, *p;

        for (size_t i = 0; i < sizeof(hidden_reads) / sizeof(hidden_reads[0]); i++)
                len += 64 + strlen(hidden_reads[i]);
        s = p = malloc(len);
        assert_non_null(s);
        p += sprintf(p,
                     "H='%s'; W=$(pwd); echo \"notes=$(cat \"$H/notes.txt\")\"; "
                     "ls -A \"$H\" | sed 's/^/lsh:/'; ",
                     h);
        for (size_t i = 0; i < sizeof(hidden_reads) / sizeof(hidden_reads[0]); i++)
                p += sprintf(p, "echo '== %zu'; (%s); cd \"$W\"; ", i, hidden_reads[i]);
        return s;
}

static void hidden_beneath_source(void **state)
{
        char tgt[PATH_MAX + 32], spec[3 * PATH_MAX], other[PATH_MAX + 32], ino[2][64],
                p[PATH_MAX + 32];
        char *script;
        struct run_result r;
        struct stat st;

        (void)state;
        need_ns();
        snprintf(tgt, sizeof(tgt), "%s/h", ws);
        make_target(tgt);
        snprintf(spec, sizeof(spec), "%s:%s", home, tgt);
        snprintf(p, sizeof(p), "%s/.ssh/id_rsa", home);
        assert_int_equal(stat(p, &st), 0);
        snprintf(ino[0], sizeof(ino[0]), "ino=%lu", (unsigned long)st.st_ino);
        snprintf(p, sizeof(p), "%s/.ssh", home);
        assert_int_equal(stat(p, &st), 0);
        snprintf(ino[1], sizeof(ino[1]), "ino=%lu", (unsigned long)st.st_ino);
        script = hidden_script(tgt);

        /* The control: with another HOME nothing hides the fake one's .ssh, and the same
         * script prints the token through the target. */
        snprintf(other, sizeof(other), "%s/otherhome", top);
        setenv("HOME", other, 1);
        run((const char *[]){"--ro", spec, NULL}, script, &r);
        restore_env();
        sh("cd '%s' && rm -f sshlink keylink copy", ws);
        expect_ran(&r);
        if (!strstr(r.out, "TOKEN-SSH-3hq9"))
                note("(control) with the .ssh not hidden, no read printed the token:\n%s", r.out);
        runner_free(&r);

        run((const char *[]){"--ro", spec, NULL}, script, &r);
        free(script);
        sh("cd '%s' && rm -f sshlink keylink copy", ws);
        expect_ran(&r);
        if (!has_line(r.out, "notes=home-notes"))
                note("the remapped home is not there");
        if (strstr(r.out, "TOKEN-"))
                note("a hidden file beneath the source was read at the target");
        if (has_line(r.out, "lsh:.ssh"))
                note("the target's listing shows the hidden .ssh");
        if (has_line(r.out, ino[0]) || has_line(r.out, ino[1]))
                note("an O_PATH open reached the hidden file or directory");
        snprintf(p, sizeof(p), "== %zu", sizeof(hidden_reads) / sizeof(hidden_reads[0]) - 1);
        if (!has_line(r.out, p))
                note("the script did not get to its end");
        if (*report)
                note("what the program printed:\n%s", r.out);
        runner_free(&r);
        check_report();
}

/* --hide TARGET/secret also hides SOURCE/secret, which the program reaches at its host path
 * (the source stays visible through the read-only /; plan §1a). */
static void hide_at_target_covers_source(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], tgt[PATH_MAX + 64], spec[3 * PATH_MAX];
        char hide[PATH_MAX + 80], ino[64], p[PATH_MAX + 80], script[8 * PATH_MAX];
        struct run_result r;
        struct stat st;

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/hide", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-s", dir);
        snprintf(tgt, sizeof(tgt), "%s/t-hide", ws);
        sh("mkdir -p '%s' && printf 'TOKEN-HIDE-8w2\\n' > '%s/secret' && printf 'pub\\n' > "
           "'%s/public'",
           src, src, src);
        make_target(tgt);
        chown_tree(dir);
        snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
        snprintf(hide, sizeof(hide), "%s/secret", tgt);
        snprintf(p, sizeof(p), "%s/secret", src);
        assert_int_equal(stat(p, &st), 0);
        snprintf(ino, sizeof(ino), "ino=%lu", (unsigned long)st.st_ino);
        snprintf(script, sizeof(script),
                 "T='%s' S='%s'; echo \"pub=$(cat \"$T/public\")\"; cat \"$T/secret\"; "
                 "cat \"$S/secret\"; (cd \"$S\" && cat secret); grep -r TOKEN \"$S\" \"$T\"; "
                 "ls -A \"$T\" | sed 's/^/lst:/'; " PY " -c 'import os, sys\n"
                 "for p in (sys.argv[1], sys.argv[2]):\n"
                 "    try: fd = os.open(p + \"/secret\", os.O_PATH)\n"
                 "    except OSError as e: print(\"opath\", e.strerror); continue\n"
                 "    print(\"ino=%%d\" %% os.fstat(fd).st_ino)\n"
                 "    try: print(open(\"/proc/self/fd/%%d\" %% fd).read())\n"
                 "    except OSError as e: print(\"reopen\", e.strerror)' \"$T\" \"$S\"; "
                 "echo end",
                 tgt, src);

        /* The control: without --hide both names print it. */
        run((const char *[]){"--ro", spec, NULL}, script, &r);
        expect_ran(&r);
        if (!strstr(r.out, "TOKEN-HIDE-8w2"))
                note("(control) without --hide the secret was not read:\n%s", r.out);
        runner_free(&r);

        run((const char *[]){"--ro", spec, "--hide", hide, NULL}, script, &r);
        expect_ran(&r);
        if (!has_line(r.out, "pub=pub") || !has_line(r.out, "end"))
                note("the remap is not there");
        if (strstr(r.out, "TOKEN-") || has_line(r.out, ino) || has_line(r.out, "lst:secret"))
                note("--hide %s did not hide the source's file by every name", hide);
        if (*report)
                note("what the program printed:\n%s", r.out);
        runner_free(&r);
        check_report();
}

/* ---- 4. the program sees sandbox paths only ---------------------------------------------- */

static void names_are_sandbox_paths(void **state)
{
        char dir[PATH_MAX + 32], src[PATH_MAX + 64], tgt[PATH_MAX + 32], spec[3 * PATH_MAX];
        char script[8 * PATH_MAX], want[PATH_MAX + 64];
        struct run_result r;
        /* label, path below the target */
        static const char *const expect[][2] = {
                {"pwd", "/sub"},  {"binpwd", "/sub"}, {"cwdlink", "/sub"}, {"pycwd", "/sub"},
                {"fdlink", "/f"}, {"exe", "/bin/rl"}, {"realpath", "/f"},  {"readlinkf", "/f"},
                {"pyreal", "/f"}, {"pyfd", "/f"},     {"pydirfd", "/sub"},
        };

        (void)state;
        need_ns();
        snprintf(dir, sizeof(dir), "%s/names", top);
        snprintf(src, sizeof(src), "%s/" SRC_MARK "-n", dir);
        snprintf(tgt, sizeof(tgt), "%s/tn", ws);
        make_src(src);
        sh("mkdir -p '%s/bin' && cp \"$(command -v readlink)\" '%s/bin/rl'", src, src);
        make_target(tgt);
        chown_tree(dir);
        snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
        snprintf(script, sizeof(script),
                 "T='%s'; cd \"$T/sub\" && echo \"pwd=$(pwd -P)\" && echo \"binpwd=$(/bin/pwd "
                 "-P)\" && echo \"cwdlink=$(readlink /proc/self/cwd)\" && " PY
                 " -c 'import os; print(\"pycwd=\" + os.getcwd()); "
                 "print(\"pydirfd=\" + os.readlink(\"/proc/self/fd/%%d\" %% os.open(\".\", "
                 "os.O_RDONLY)))'; "
                 "exec 3<\"$T/f\"; echo \"fdlink=$(readlink /proc/self/fd/3)\"; exec 3<&-; "
                 "echo \"exe=$(\"$T/bin/rl\" /proc/self/exe)\"; "
                 "echo \"realpath=$(realpath \"$T/f\")\"; "
                 "echo \"readlinkf=$(readlink -f \"$T/sub/../f\")\"; " PY
                 " -c 'import os, sys; print(\"pyreal=\" + os.path.realpath(sys.argv[1])); "
                 "print(\"pyfd=\" + os.readlink(\"/proc/%%d/fd/%%d\" %% (os.getpid(), "
                 "os.open(sys.argv[1], os.O_RDONLY))))' \"$T/f\"; "
                 "ls -l /proc/self/cwd /proc/self/fd/; "
                 /* the host path nowhere: not in the mount tables, not at its own place */
                 "cat /proc/self/mountinfo /proc/self/mounts /proc/self/mountstats; "
                 "findmnt -n -o SOURCE,FSROOT \"$T\"; ls -a '%s'; ls -d '%s' 2>/dev/null && echo "
                 "SHOWN; true",
                 tgt, dir, src);
        run((const char *[]){"--ro", spec, NULL}, script, &r);
        expect_ran(&r);
        for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
                snprintf(want, sizeof(want), "%s=%s%s", expect[i][0], tgt, expect[i][1]);
                if (!has_line(r.out, want))
                        note("no `%s`", want);
        }
        /* (stockade's own stderr may name it: that is the user's, not the program's) */
        if (strstr(r.out, SRC_MARK) || strstr(r.out, "SHOWN"))
                note("the source's host path reached the program");
        if (!strstr(r.out, "/proc/self/cwd"))
                note("the script did not get to its end");
        if (*report)
                note("what the program printed:\n%s", r.out);
        runner_free(&r);
        check_report();
}

/* ---- 5. no way out of the target --------------------------------------------------------- */

/* Moves and links across the bind's edge, in both directions; each prints `escaped NAME` or
 * `NAME ERRNO`. */
#define CROSSING_PY                                                                                \
        PY " -c 'import errno, os, sys\n"                                                          \
           "t, w = sys.argv[1], sys.argv[2]\n"                                                     \
           "for name, f, a, b in ((\"rename-out\", os.rename, t + \"/f\", w + \"/moved\"),\n"      \
           "                      (\"link-out\", os.link, t + \"/f\", w + \"/linked\"),\n"         \
           "                      (\"rename-dir-out\", os.rename, t + \"/sub\", w + "              \
           "\"/movedsub\"),\n"                                                                     \
           "                      (\"rename-in\", os.rename, w + \"/mine\", t + \"/mine\"),\n"     \
           "                      (\"link-in\", os.link, w + \"/mine\", t + \"/mine2\")):\n"       \
           "    try: f(a, b); print(\"escaped\", name)\n"                                          \
           "    except OSError as e: print(name, errno.errorcode[e.errno])' \"$T\" \"$W\""

static void escapes(void **state)
{
        static const char *const crossings[] = {"rename-out", "link-out", "rename-dir-out",
                                                "rename-in", "link-in"};
        static const char *const flags[] = {"--ro", "--rw"};

        (void)state;
        need_ns();
        for (size_t i = 0; i < 2; i++) {
                char dir[PATH_MAX + 32], src[PATH_MAX + 64], tgt[PATH_MAX + 32];
                char spec[3 * PATH_MAX], script[8 * PATH_MAX], want[PATH_MAX + 64], *src_before;
                struct run_result r;

                snprintf(dir, sizeof(dir), "%s/esc%zu", top, i);
                snprintf(src, sizeof(src), "%s/" SRC_MARK "-e", dir);
                snprintf(tgt, sizeof(tgt), "%s/te%zu", ws, i);
                make_src(src);
                make_target(tgt);
                /* Host T's own f and the source's parent's sib: what a host-side resolution
                 * would show instead of the view's. */
                sh("printf 'T-OWN-F\\n' > '%s/f' && printf 'SRC-PARENT-SIB\\n' > '%s/sib' && "
                   "ln -s ../sib '%s/rel' && ln -s '%s/f' '%s/abs' && printf MINE > '%s/mine'",
                   tgt, dir, src, tgt, src, ws);
                chown_tree(dir);
                chown_tree(tgt);
                sh("chown %u '%s/mine'", (unsigned)sbx_uid, ws);
                src_before = snapshot(src);
                snprintf(spec, sizeof(spec), "%s:%s", src, tgt);
                snprintf(script, sizeof(script),
                         "T='%s' W='%s'; ls -A \"$T/..\" | sed 's/^/up:/'; "
                         "echo \"dotdot=$(cat \"$T/../sib\")\"; "
                         "cd \"$T/sub\" && echo \"subup=$(cat ../../sib)\" && cd ../.. && echo "
                         "\"updir=$(pwd -P)\"; cd \"$W\"; "
                         "echo \"rel=$(cat \"$T/rel\")\"; echo \"abs=$(cat \"$T/abs\")\"; "
                         "echo \"f=$(cat \"$T/f\")\"; " CROSSING_PY,
                         tgt, ws);
                run((const char *[]){flags[i], spec, NULL}, script, &r);
                if (!ran_ok(&r, flags[i])) {
                        runner_free(&r);
                        free(src_before);
                        continue;
                }
                snprintf(want, sizeof(want), "up:te%zu", i);
                if (!has_line(r.out, want) || !has_line(r.out, "up:sib") ||
                    strstr(r.out, "up:" SRC_MARK) || !has_line(r.out, "dotdot=WS-SIB") ||
                    !has_line(r.out, "subup=WS-SIB") || !has_line(r.out, "rel=WS-SIB") ||
                    !has_line(r.out, "abs=SRC-f") || !has_line(r.out, "f=SRC-f") ||
                    strstr(r.out, "SRC-PARENT-SIB") || strstr(r.out, "T-OWN-F"))
                        note("%s: .. or a symlink resolved outside the view: %s", flags[i], r.out);
                snprintf(want, sizeof(want), "updir=%s", ws);
                if (!has_line(r.out, want))
                        note("%s: no `%s`: %s", flags[i], want, r.out);
                for (size_t k = 0; k < sizeof(crossings) / sizeof(crossings[0]); k++) {
                        /* A bind is another mount: the kernel's EXDEV. Through a read-only
                         * one, any failure will do. */
                        snprintf(want, sizeof(want), "%s EXDEV", crossings[k]);
                        if (i == 1 && !has_line(r.out, want))
                                note("%s: no `%s`: %s", flags[i], want, r.out);
                        snprintf(want, sizeof(want), "escaped %s", crossings[k]);
                        if (has_line(r.out, want))
                                note("%s: %s", flags[i], want);
                }
                runner_free(&r);
                if (runner_shell("cd '%s' && test ! -e moved && test ! -e linked && test ! -e "
                                 "movedsub && [ \"$(cat mine)\" = MINE ]",
                                 ws) != 0)
                        note("%s: something crossed the target's edge on the host", flags[i]);
                sh("cd '%s' && rm -rf mine moved linked movedsub", ws);
                same_snapshot(src, src_before, flags[i]);
                free(src_before);
        }
        check_report();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(ops_work_natively, reset_env),
                cmocka_unit_test_setup(ro_is_read_only, reset_env),
                cmocka_unit_test_setup(rw_writes_source, reset_env),
                cmocka_unit_test_setup(rw_nested_in_ro, reset_env),
                cmocka_unit_test_setup(hidden_beneath_source, reset_env),
                cmocka_unit_test_setup(hide_at_target_covers_source, reset_env),
                cmocka_unit_test_setup(names_are_sandbox_paths, reset_env),
                cmocka_unit_test_setup(escapes, reset_env),
        };
        int failed = cmocka_run_group_tests(tests, remap_setup, remap_teardown);

        if (failed == 0 && !have_ns) {
                printf("skipped: no mount namespace can be made here\n");
                return 77;
        }
        return failed;
}

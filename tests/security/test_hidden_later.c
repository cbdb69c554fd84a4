/*
 * Hidden paths that appear, or are reached by another name, during the run (README "What the
 * default policy does today", credentials; test_hidden has the rest): a file the host makes
 * at a hidden name or pattern, read by name and through an O_PATH fd reopened, live and
 * deleted; the targets of hidden symlinks and of patterns whose directories go through one;
 * HOME under a second name (a bind made on the host, as root). Judged from outside, by the
 * output: no secret's bytes. Run again under --fast (test_hidden_later_fast).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/security/hidden_common.h"

/* A hidden path made only after the start, beneath a directory Landlock grants whole (no
 * hidden path lay there when its rules were made): `cargo login` writing
 * ~/.cargo/credentials.toml during a run. The view judges every open, so it stays absent
 * (an outside review read such a file with a plain cat). */
static void hidden_made_later(void **state)
{
        char cmd[4 * PATH_MAX + 160];
        struct run_result r;

        (void)state;
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.cargo' && chown %u '%s/.cargo'", home,
                 (unsigned)sbx_uid, home);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd),
                 "(sleep 0.5; echo SECRET-CARGO > '%s/.cargo/credentials.toml' && "
                 "chmod a+r '%s/.cargo/credentials.toml') &",
                 home, home);
        assert_int_equal(system(cmd), 0);
        run_script(NULL,
                   "sleep 2; cat ~/.cargo/credentials.toml; cat ../.cargo/credentials.toml; "
                   "echo finished",
                   &r);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/.cargo'", home);
        assert_int_equal(system(cmd), 0);
        if (strstr(r.out, "SECRET-CARGO") || !strstr(r.out, "finished"))
                fail_msg("a hidden file made after the start was read:\n%s%s", r.out, r.err);
        runner_free(&r);
}

/* A hidden file made after the start (no mask over it), held O_PATH by the program (such an
 * open is the kernel's), then deleted by the host: a reopen through /proc/self/fd/N finds
 * no name left, and the name it had is judged (a second outside review noticed the reopen
 * was let through then). Judged by the output. */
static void hidden_deleted_stays_hidden(void **state)
{
        char cmd[4 * PATH_MAX + 160], pattern[PATH_MAX + 32], file[PATH_MAX + 32];
        const char *opts[] = {"--rw", extra, "--hide", pattern, NULL};
        struct run_result r;

        (void)state;
        snprintf(pattern, sizeof(pattern), "%s/*.tok", extra);
        snprintf(file, sizeof(file), "%s/late.tok", extra);
        made_later(file, NULL, cmd, sizeof(cmd));
        run_script(opts, cmd, &r);
        if (strstr(r.out, "SECRET") ||
            !strstr(r.out, "held\nlive refused\nlive refused\ndeleted refused\ndeleted refused"))
                fail_msg("a deleted hidden file was reopened:\n%s%s", r.out, r.err);
        runner_free(&r);
}

/* made_later(file), run with `opts` twice: read by its own name, then by `other`; neither
 * gives the content, live or deleted. */
static void later_by_both(const char *const *opts, const char *file, const char *other,
                          const char *what)
{
        char cmd[4 * PATH_MAX + 160];
        struct run_result r;

        for (int by_other = 0; by_other <= 1; by_other++) {
                made_later(file, by_other ? other : file, cmd, sizeof(cmd));
                run_script(opts, cmd, &r);
                if (strstr(r.out, "SECRET") || !strstr(r.out, "held\nlive refused\nlive refused\n"))
                        fail_msg("%s was read (by %s):\n%s%s", what, by_other ? other : file, r.out,
                                 r.err);
                runner_free(&r);
                sleep(1); /* the host's removal of the file */
        }
}

/* A hidden path that is a dangling symlink at the start (a dotfiles manager's ~/.netrc ->
 * dotfiles/netrc, its target not made yet): the target the host writes during the run is
 * hidden too, by the link's name and by its own (an outside review read it by both, with and
 * without --fast). Judged by the output. */
static void hidden_dangling_link(void **state)
{
        char link[PATH_MAX + 32], dir[PATH_MAX + 32], file[PATH_MAX + 48];
        const char *opts[] = {"--hide", link, NULL};

        (void)state;
        snprintf(dir, sizeof(dir), "%s/dotfiles", home);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(link, sizeof(link), "%s/.tokenlink", home);
        assert_int_equal(symlink("dotfiles/tok", link), 0);
        snprintf(file, sizeof(file), "%s/tok", dir);
        later_by_both(opts, file, link, "the target of a hidden dangling link");
        unlink(link);
        rmdir(dir);
}

/* A hidden pattern whose literal head goes through a symlink, dangling at the start
 * (~/dotcfg -> dotfiles/cfg, --hide ~/dotcfg/gh/ANY.yml): a match the host makes during the
 * run, directories and all, is hidden by both names (an outside review read it by its real
 * name in both modes, and by the hidden one without --fast). Judged by the output. */
static void hidden_pattern_through_link(void **state)
{
        char cmd[4 * PATH_MAX + 160], link[PATH_MAX + 32], pattern[PATH_MAX + 48],
                file[PATH_MAX + 64], seen[PATH_MAX + 64];
        const char *opts[] = {"--hide", pattern, NULL};

        (void)state;
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/dotfiles'", home);
        assert_int_equal(system(cmd), 0);
        snprintf(link, sizeof(link), "%s/dotcfg", home);
        assert_int_equal(symlink("dotfiles/cfg", link), 0);
        snprintf(pattern, sizeof(pattern), "%s/gh/*.yml", link);
        snprintf(file, sizeof(file), "%s/dotfiles/cfg/gh/hosts.yml", home);
        snprintf(seen, sizeof(seen), "%s/gh/hosts.yml", link);
        later_by_both(opts, file, seen, "a match of a pattern through a symlink");
        unlink(link);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/dotfiles'", home);
        assert_int_equal(system(cmd), 0);
}

/* A hidden pattern whose wildcard lies above a symlinked directory (~/cfg/ANY/token,
 * ~/cfg/a -> ../real/a): a match the host makes during the run is hidden by both names (an
 * outside review read it by both, with and without --fast). */
static void hidden_pattern_over_link(void **state)
{
        char cmd[2 * PATH_MAX + 64], link[PATH_MAX + 32], pattern[PATH_MAX + 48],
                file[PATH_MAX + 64], seen[PATH_MAX + 64];
        const char *opts[] = {"--hide", pattern, NULL};

        (void)state;
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/real/a' '%s/cfg'", home, home);
        assert_int_equal(system(cmd), 0);
        snprintf(link, sizeof(link), "%s/cfg/a", home);
        assert_int_equal(symlink("../real/a", link), 0);
        snprintf(pattern, sizeof(pattern), "%s/cfg/*/token", home);
        snprintf(file, sizeof(file), "%s/real/a/token", home);
        snprintf(seen, sizeof(seen), "%s/token", link);
        later_by_both(opts, file, seen, "a match of a pattern over a symlinked directory");
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/real' '%s/cfg'", home, home);
        assert_int_equal(system(cmd), 0);
}

/* HOME under a second name, a bind made on the host (as root, for the test): the hidden paths
 * stay hidden under it, those made during the run too, whether the run starts in it (the
 * copy-on-write overlay's lower is then HOME by that name), reads through it, or remaps it
 * (--ro ALIAS:SANDBOX). Three outside reviews read ~/.aws, ~/.ssh and files made during the
 * run so, with and without --fast. The secret is read natively through the bind (the
 * control), and the bind must not stay busy once stockade is gone (the janitor kept it so,
 * from the user's directory). */
static void hidden_through_alias(void **state)
{
        char alias[PATH_MAX + 32], cmd[4 * PATH_MAX + 160], mnt[PATH_MAX + 32],
                remap[2 * PATH_MAX + 64], file[PATH_MAX + 64], seen[PATH_MAX + 64];
        const char *cow[] = {"--cow", alias, NULL}, *ro[] = {"--ro", remap, NULL};
        struct run_result r;
        bool busy;

        (void)state;
        if (geteuid() != 0)
                skip(); /* a bind mount on the host needs root */
        snprintf(alias, sizeof(alias), "%s/alias", top);
        assert_int_equal(mkdir(alias, 0755), 0);
        assert_int_equal(mount(home, alias, NULL, MS_BIND, NULL), 0);
        run_script_in(alias, cow, "cat .aws/credentials .ssh/id_rsa .netrc; echo finished", &r);
        if (strstr(r.out, "SECRET") || !strstr(r.out, "finished"))
                fail_msg("a hidden file was read through a bind of HOME:\n%s%s", r.out, r.err);
        runner_free(&r);
        /* made during the run: ~/.pgpass from the workspace entered through the bind, and
         * ~/.cargo/credentials.toml by the bind's name from the usual workspace */
        /* (looked up once, after it is made: an overlay keeps a name it found missing) */
        snprintf(cmd, sizeof(cmd), "(sleep 0.5; echo SECRET-LATER > '%s/.pgpass') &", home);
        assert_int_equal(system(cmd), 0);
        run_script_in(alias, cow, "sleep 2; cat .pgpass; echo finished", &r);
        snprintf(file, sizeof(file), "%s/.pgpass", home);
        unlink(file);
        if (strstr(r.out, "SECRET") || !strstr(r.out, "finished"))
                fail_msg("a hidden file made during the run was read in the bind:\n%s%s", r.out,
                         r.err);
        runner_free(&r);
        snprintf(file, sizeof(file), "%s/.cargo/credentials.toml", home);
        snprintf(seen, sizeof(seen), "%s/.cargo/credentials.toml", alias);
        made_later(file, seen, cmd, sizeof(cmd));
        run_script(NULL, cmd, &r);
        if (strstr(r.out, "SECRET") || !strstr(r.out, "held\nlive refused\nlive refused\n"))
                fail_msg("a hidden file made during the run was read by the bind's name:\n%s%s",
                         r.out, r.err);
        runner_free(&r);
        sleep(1);
        /* --ro ALIAS:EXTRA/mnt */
        snprintf(mnt, sizeof(mnt), "%s/mnt", extra);
        assert_int_equal(mkdir(mnt, 0755), 0);
        snprintf(remap, sizeof(remap), "%s:%s", alias, mnt);
        snprintf(cmd, sizeof(cmd), "cat '%s/.ssh/id_rsa' '%s/.aws/credentials'; echo finished", mnt,
                 mnt);
        run_script(ro, cmd, &r);
        rmdir(mnt);
        if (strstr(r.out, "SECRET") || !strstr(r.out, "finished"))
                fail_msg("a hidden file was read through a remapped bind of HOME:\n%s%s", r.out,
                         r.err);
        runner_free(&r);
        snprintf(cmd, sizeof(cmd), "cat '%s/.aws/credentials'", alias);
        run_native(cmd, &r);
        busy = umount(alias) < 0;
        if (busy)
                umount2(alias, MNT_DETACH);
        rmdir(alias);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/.cargo'", home);
        assert_int_equal(system(cmd), 0);
        if (!strstr(r.out, "SECRET-AWS"))
                fail_msg("the control did not read the file: %s", r.err);
        if (busy)
                fail_msg("the directory stockade ran from was still busy after it exited");
        runner_free(&r);
}

/* What the host file `dir`/`rel` holds (its first line). */
static void first_line(const char *dir, const char *rel, char *buf, int size)
{
        char path[2 * PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, size, f));
        fclose(f);
}

/* A path given with a '..' after a symlink (~/lnkdir -> EXTRA/deep): `--hide
 * ~/lnkdir/../secret.txt` hides what the kernel opens by that name, EXTRA/secret.txt, and
 * `--ro EXTRA/lnk/../data` (EXTRA/lnk -> EXTRA/sub/deep) keeps EXTRA/sub/data read-only (an
 * outside review read the one and wrote the other: both had been taken lexically). And the
 * lexical readings, ~/secret.txt and EXTRA/data, stay protected too (a second review: a
 * symlink the repository ships must not move a flag away from what the user meant). Judged
 * from outside: no secret in the output, the host files as they were. */
static void spelt_with_dotdot(void **state)
{
        char link[PATH_MAX + 32], target[PATH_MAX + 32],
                hide[] = "~/lnkdir/../secret.txt", ro[PATH_MAX + 48], script[4 * PATH_MAX], buf[64];
        const char *hide_opts[] = {"--hide", hide, NULL},
                   *ro_opts[] = {"--rw", extra, "--ro", ro, NULL};
        struct run_result r;

        (void)state;
        mkdirs(extra, "deep");
        mkdirs(extra, "sub");
        mkdirs(extra, "sub/deep");
        mkdirs(extra, "sub/data");
        mkdirs(extra, "data");
        put(extra, "secret.txt", "SECRET-DOTDOT\n");
        put(home, "secret.txt", "SECRET-LEXICAL\n");
        put(extra, "sub/data/f", "orig\n");
        put(extra, "data/f", "orig\n");
        snprintf(link, sizeof(link), "%s/lnkdir", home);
        snprintf(target, sizeof(target), "%s/deep", extra);
        assert_int_equal(symlink(target, link), 0);
        snprintf(script, sizeof(script),
                 "cat ~/lnkdir/../secret.txt; cat '%s/secret.txt'; cat ~/secret.txt; "
                 "echo finished",
                 extra);
        run_script(hide_opts, script, &r);
        unlink(link);
        if (strstr(r.out, "SECRET-") || !strstr(r.out, "finished"))
                fail_msg("a hidden path spelt with '..' after a link was read:\n%s%s", r.out,
                         r.err);
        runner_free(&r);
        snprintf(link, sizeof(link), "%s/lnk", extra);
        snprintf(target, sizeof(target), "%s/sub/deep", extra);
        assert_int_equal(symlink(target, link), 0);
        snprintf(ro, sizeof(ro), "%s/lnk/../data", extra);
        snprintf(script, sizeof(script),
                 "echo PWNED >> '%s/sub/data/f'; echo PWNED >> '%s/data/f'; echo finished", extra,
                 extra);
        run_script(ro_opts, script, &r);
        runner_free(&r);
        unlink(link);
        first_line(extra, "sub/data/f", buf, sizeof(buf));
        if (strcmp(buf, "orig\n") != 0)
                fail_msg("a --ro path spelt with '..' after a link was written: %s", buf);
        first_line(extra, "data/f", buf, sizeof(buf));
        if (strcmp(buf, "orig\n") != 0)
                fail_msg("the lexical reading of a --ro path with '..' was written: %s", buf);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(hidden_made_later),
                cmocka_unit_test(hidden_deleted_stays_hidden),
                cmocka_unit_test(hidden_dangling_link),
                cmocka_unit_test(hidden_pattern_through_link),
                cmocka_unit_test(hidden_pattern_over_link),
                cmocka_unit_test(hidden_through_alias),
                cmocka_unit_test(spelt_with_dotdot),
        };

        fast = argc > 1 && strcmp(argv[1], "--fast") == 0;
        if (fast && !hidden_fast_possible())
                return 77;
        return cmocka_run_group_tests(tests, hidden_setup, hidden_teardown);
}

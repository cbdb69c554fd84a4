/*
 * The review of a cow mount without a sandbox (supervisor/vfs/cowdiff.h, cowapply.h): trees
 * built under $TMPDIR as overlayfs leaves them (whiteouts are 0/0 character devices, opaque
 * directories carry user.overlay.opaque), their diff, and apply's check, writes and pruning,
 * attacks included (a symlink planted in the upper, one on the host in place of a directory).
 *
 *   T/N/lower   the host tree of case N      T/N/upper   its upper
 *   T/outside   what no write may reach
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/util.h"
#include "supervisor/vfs/cowapply.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The case tables leave the fields a case does not need to zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static char T[PATH_MAX];
static int case_no;

/* ---- fixture ----------------------------------------------------------------------------- */

/* One object of a tree: f file (arg: content), d directory, l symlink (arg: target; "T/"
 * makes it absolute under the fixture), w whiteout, o opaque directory. */
struct op {
        char kind;
        const char *path;
        const char *arg;
        mode_t mode; /* 0: 0644 for files, 0755 for directories */
};

static void put(const char *root, const struct op *o)
{
        char p[PATH_MAX * 2], t[PATH_MAX * 2];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", root, o->path);
        switch (o->kind) {
        case 'f':
                fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, o->arg, strlen(o->arg)), (ssize_t)strlen(o->arg));
                close(fd);
                assert_int_equal(chmod(p, o->mode ? o->mode : 0644), 0);
                break;
        case 'd':
        case 'o':
                assert_int_equal(mkdir(p, 0700), 0);
                assert_int_equal(chmod(p, o->mode ? o->mode : 0755), 0);
                if (o->kind == 'o')
                        assert_int_equal(setxattr(p, "user.overlay.opaque", "y", 1, 0), 0);
                break;
        case 'l':
                if (strncmp(o->arg, "T/", 2) == 0)
                        snprintf(t, sizeof(t), "%s/%s", T, o->arg + 2);
                else
                        snprintf(t, sizeof(t), "%s", o->arg);
                assert_int_equal(symlink(t, p), 0);
                break;
        case 'w':
                assert_int_equal(mknod(p, S_IFCHR | 0, makedev(0, 0)), 0);
                break;
        default:
                fail_msg("bad op %c", o->kind);
        }
}

struct tree {
        char lower[PATH_MAX], upper[PATH_MAX];
        int lower_fd, upper_fd;
};

static void tree_make(struct tree *t, const struct op *lower, const struct op *upper)
{
        assert_true(snprintf(t->lower, sizeof(t->lower), "%s/%d", T, ++case_no) < 200);
        assert_int_equal(mkdir(t->lower, 0755), 0);
        assert_true(snprintf(t->upper, sizeof(t->upper), "%s/upper", t->lower) < 250);
        strcat(t->lower, "/lower");
        assert_int_equal(mkdir(t->lower, 0755), 0);
        assert_int_equal(mkdir(t->upper, 0755), 0);
        for (; lower && lower->kind; lower++)
                put(t->lower, lower);
        for (; upper && upper->kind; upper++)
                put(t->upper, upper);
        /* One time for all, as copy-up keeps a file's: else equal files would differ by when
         * the fixture made them (M path (times)). */
        char cmd[PATH_MAX * 3];
        snprintf(cmd, sizeof(cmd), "find '%s' '%s' -exec touch -h -d @1600000000 {} +", t->lower,
                 t->upper);
        assert_int_equal(system(cmd), 0);
        t->lower_fd = open(t->lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        t->upper_fd = open(t->upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(t->lower_fd >= 0 && t->upper_fd >= 0);
}

static void tree_close(struct tree *t)
{
        close(t->lower_fd);
        close(t->upper_fd);
}

/* The diff as `stockade diff` prints it. */
static char *render(const struct cow_diff *d)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        for (size_t i = 0; i < d->n; i++)
                cowdiff_print(f, &d->v[i], "");
        fclose(f);
        return buf;
}

static char *diff_of(const struct tree *t)
{
        struct cow_diff d;
        char *s;

        assert_int_equal(cowdiff_compute(t->upper_fd, t->lower_fd, &d), 0);
        s = render(&d);
        cowdiff_free(&d);
        return s;
}

static char *slurp(const char *root, const char *rel)
{
        char p[PATH_MAX * 2], *buf = xcalloc(1, 4096);
        int fd;
        ssize_t n;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                free(buf);
                return NULL;
        }
        n = read(fd, buf, 4095);
        close(fd);
        assert_true(n >= 0);
        return buf;
}

static bool exists(const char *root, const char *rel)
{
        char p[PATH_MAX * 2];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        return lstat(p, &st) == 0;
}

/* ---- the diff ---------------------------------------------------------------------------- */

#include "cow_diff_cases.h"

static void diff_classification(void **state)
{
        for (size_t i = 0; i < ARRAY_SIZE(diff_cases); i++) {
                const struct diff_case *c = &diff_cases[i];
                struct tree t;
                _cleanup_free_ char *got = NULL;

                tree_make(&t, c->lower, c->upper);
                got = diff_of(&t);
                if (strcmp(got, c->expect) != 0)
                        fail_msg("%s:\n got:\n%s\n expected:\n%s", c->name, got, c->expect);
                /* The run's end asks only whether there is a change (cow_finish). */
                if (cowdiff_any(t.upper_fd, t.lower_fd) != (c->expect[0] != '\0'))
                        fail_msg("%s: cowdiff_any says %s", c->name,
                                 c->expect[0] ? "no change" : "a change");
                tree_close(&t);
        }
}

/* A file of `size` bytes at root/rel, a hole but for `byte` at `at` (no byte when 0). */
static void sparse(const char *root, const char *rel, off_t size, off_t at, char byte)
{
        char p[PATH_MAX * 2];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, size), 0);
        if (byte)
                assert_int_equal(pwrite(fd, &byte, 1, at), 1);
        close(fd);
}

/* Sparse files compared by their data (the run made a terabyte of holes: reading them would
 * outlast the test's timeout, as it kept `stockade diff` and `apply` busy): the same sparse
 * file on both sides is no change; one byte far in changed is M; a file sparse on one side
 * and written out in full on the other, with the same bytes, is no change; a sparse file
 * moved is R (hashed, then compared). */
static void sparse_files_by_data(void **state)
{
        const off_t tib = (off_t)1 << 40, mib = (off_t)1 << 20;
        struct tree t;
        _cleanup_free_ char *got = NULL;
        char p[PATH_MAX * 2], cmd[PATH_MAX * 3];
        static char zeros[1 << 20];
        int fd;

        (void)state;
        tree_make(&t, NULL, NULL);
        sparse(t.lower, "same", tib, tib / 2, 'x');
        sparse(t.upper, "same", tib, tib / 2, 'x');
        sparse(t.lower, "changed", tib, tib / 2, 'x');
        sparse(t.upper, "changed", tib, tib / 2 + 1, 'x');
        sparse(t.lower, "dense", 8 * mib, 5 * mib, 'z');
        snprintf(p, sizeof(p), "%s/dense", t.upper);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        for (int i = 0; i < 8; i++)
                assert_int_equal(write(fd, zeros, sizeof(zeros)), (ssize_t)sizeof(zeros));
        assert_int_equal(pwrite(fd, "z", 1, 5 * mib), 1);
        close(fd);
        sparse(t.lower, "old", tib, tib / 3, 'r');
        sparse(t.upper, "new", tib, tib / 3, 'r');
        snprintf(p, sizeof(p), "%s/old", t.upper);
        assert_int_equal(mknod(p, S_IFCHR | 0, makedev(0, 0)), 0); /* a whiteout */
        snprintf(cmd, sizeof(cmd), "find '%s' '%s' -exec touch -h -d @1600000000 {} +", t.lower,
                 t.upper);
        assert_int_equal(system(cmd), 0);
        got = diff_of(&t);
        assert_string_equal(got, "M changed\nR old -> new\n");
        tree_close(&t);
}

/* No lower at all (a host directory gone): everything is new. */
static void diff_without_lower(void **state)
{
        struct op up[] = {{'d', "n"}, {'f', "n/f", "1"}, {'w', "w"}, {0}};
        struct tree t;
        struct cow_diff d;
        _cleanup_free_ char *s = NULL;

        tree_make(&t, NULL, up);
        assert_int_equal(cowdiff_compute(t.upper_fd, -1, &d), 0);
        s = render(&d);
        assert_string_equal(s, "A n/\nA n/f\n");
        assert_int_equal(cowdiff_count(&d), 2);
        cowdiff_free(&d);
        tree_close(&t);
}

static void paths_and_quoting(void **state)
{
        static const char *const ok[] = {"a", "a/b", "a.b/..c", ".x"};
        static const char *const bad[] = {"", "/a", "a/", "a//b", ".", "..", "a/../b", "a/."};

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                assert_true(cowdiff_path_ok(ok[i]));
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                if (cowdiff_path_ok(bad[i]))
                        fail_msg("`%s` accepted", bad[i]);
}

/* ---- apply ------------------------------------------------------------------------------- */

/* The journal as the run would have written it: the lower's objects at `paths`, now. */
static void baseline_v(const struct tree *t, const char *const *paths, int version,
                       struct journal *j);

static void baseline(const struct tree *t, const char *const *paths, struct journal *j)
{
        baseline_v(t, paths, JOURNAL_HASH_CURRENT, j);
}

/* The baselines of `paths` as a journal holds them, their hash of `version`. */
static void baseline_v(const struct tree *t, const char *const *paths, int version,
                       struct journal *j)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        for (; paths && *paths; paths++) {
                int fd = cowdiff_open(t->lower_fd, *paths, O_PATH | O_NOFOLLOW);
                struct journal_rec r;
                char *line;

                assert_true(fd >= 0);
                assert_int_equal(journal_describe_v(fd, *paths, version, &r), 0);
                line = journal_format(&r);
                fputs(line, f);
                free(line);
                journal_rec_free(&r);
                close(fd);
        }
        fclose(f);
        assert_int_equal(journal_parse(j, buf ? buf : "", len), 0);
        free(buf);
}

struct applying {
        struct cow_diff d;
        struct journal j;
        struct cow_apply a;
        struct cow_conflicts cs;
};

/* Diff, select `paths` (NULL: all), check, with the journal j (taken over). */
static void prepare_with(struct applying *ap, const struct tree *t, struct journal *j,
                         const char *const *paths)
{
        static const char *const all[] = {"", NULL};
        bool matched[8] = {false};
        size_t n = 0;

        memset(ap, 0, sizeof(*ap));
        ap->j = *j;
        memset(j, 0, sizeof(*j));
        assert_int_equal(cowdiff_compute(t->upper_fd, t->lower_fd, &ap->d), 0);
        ap->a = (struct cow_apply){t->upper_fd, t->lower_fd, &ap->j, &ap->d,
                                   xcalloc(ap->d.n + 1, 1)};
        paths = paths ? paths : all;
        while (paths[n])
                n++;
        cowapply_select(&ap->a, paths, n, matched);
        for (size_t k = 0; k < n && paths != all; k++)
                if (!matched[k])
                        fail_msg("`%s` selected nothing", paths[k]);
        assert_int_equal(cowapply_check(&ap->a, &ap->cs), 0);
}

/* The same with the baselines of `jpaths` taken now. */
static void prepare(struct applying *ap, const struct tree *t, const char *const *jpaths,
                    const char *const *paths)
{
        struct journal j;

        baseline(t, jpaths, &j);
        prepare_with(ap, t, &j, paths);
}

static void recheck(struct applying *ap)
{
        cowapply_conflicts_free(&ap->cs);
        assert_int_equal(cowapply_check(&ap->a, &ap->cs), 0);
}

static void finish(struct applying *ap)
{
        cowapply_conflicts_free(&ap->cs);
        cowdiff_free(&ap->d);
        journal_free(&ap->j);
        free(ap->a.sel);
}

/* Write and prune (the journal file in the case's directory). */
static void write_prune(struct applying *ap, const struct tree *t)
{
        char jpath[PATH_MAX + 16];
        char *failed = NULL;

        snprintf(jpath, sizeof(jpath), "%s/../journal", t->upper);
        if (cowapply_write(&ap->a, &failed) < 0)
                fail_msg("write: %s: %s", failed, strerror(errno));
        int r = cowapply_prune(&ap->a, jpath, &failed);

        if (r < 0)
                fail_msg("prune: %s: %s", failed, strerror(-r));
}

static void assert_conflict(const struct cow_conflicts *cs, const char *path, const char *why)
{
        for (size_t i = 0; i < cs->n; i++)
                if (strcmp(cs->v[i].path, path) == 0 && strstr(cs->v[i].why, why))
                        return;
        fail_msg("no conflict `%s` on %s (%zu conflicts)", why, path, cs->n);
}

static const struct op base_lower[] = {{'f', "mod", "old\n"},
                                       {'f', "keep", "same\n"},
                                       {'f', "exe", "#!/bin/sh\n"},
                                       {'f', "gone", "bye\n"},
                                       {'d', "dd"},
                                       {'f', "dd/x", "1"},
                                       {'f', "src", "moved\n"},
                                       {'d', "op"},
                                       {'f', "op/one", "1"},
                                       {0}};
static const struct op base_upper[] = {{'f', "mod", "new\n"},
                                       {'f', "keep", "same\n"},
                                       {'f', "exe", "#!/bin/sh\n", 0755},
                                       {'w', "gone"},
                                       {'w', "dd"},
                                       {'w', "src"},
                                       {'f', "dst", "moved\n"},
                                       {'o', "op"},
                                       {'f', "op/two", "2"},
                                       {'d', "nd"},
                                       {'f', "nd/f", "n"},
                                       {'l', "evil", "T/outside"},
                                       {0}};
static const char *const base_journal[] = {"mod",  "keep", "exe", "gone",   "dd",
                                           "dd/x", "src",  "op",  "op/one", NULL};

/* Everything applied: the host is the merged view, the session is empty, the symlink the
 * program left is a symlink on the host and nothing outside changed. */
static void apply_everything(void **state)
{
        struct tree t;
        struct applying ap;
        _cleanup_free_ char *mod = NULL, *dst = NULL, *after = NULL, *journal = NULL;
        char link[PATH_MAX], target[PATH_MAX * 2];
        struct stat st;
        ssize_t n;

        tree_make(&t, base_lower, base_upper);
        prepare(&ap, &t, base_journal, NULL);
        assert_int_equal(ap.cs.n, 0);
        write_prune(&ap, &t);
        mod = slurp(t.lower, "mod");
        dst = slurp(t.lower, "dst");
        assert_string_equal(mod, "new\n");
        assert_string_equal(dst, "moved\n");
        assert_false(exists(t.lower, "gone") || exists(t.lower, "dd") || exists(t.lower, "src"));
        assert_false(exists(t.lower, "op/one"));
        assert_true(exists(t.lower, "op/two") && exists(t.lower, "nd/f"));
        snprintf(target, sizeof(target), "%s/evil", t.lower);
        assert_int_equal(lstat(target, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(target, link, sizeof(link) - 1);
        assert_true(n > 0);
        link[n] = '\0';
        snprintf(target, sizeof(target), "%s/outside", T);
        assert_string_equal(link, target);
        snprintf(target, sizeof(target), "%s/exe", t.lower);
        assert_int_equal(stat(target, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_false(exists(T, "outside/x") || exists(T, "outside/dst"));
        after = diff_of(&t);
        assert_string_equal(after, "");
        finish(&ap);
        /* nothing left in the upper, nothing in the journal */
        assert_false(exists(t.upper, "mod") || exists(t.upper, "gone") || exists(t.upper, "op"));
        assert_false(exists(t.upper, "keep"));
        journal = slurp(t.upper, "../journal");
        assert_non_null(journal);
        assert_string_equal(journal, "");
        tree_close(&t);
}

/* A session of an older stockade holds version 1 of the hash: apply computes that version
 * for the host's files, so an unchanged host has no conflict, and a content change that
 * keeps size and mtime is still seen. */
static void older_session_baselines(void **state)
{
        struct tree t;
        struct applying ap;
        struct journal j;
        char path[PATH_MAX + 16];
        struct stat st;
        struct timespec times[2];
        FILE *f;

        (void)state;
        tree_make(&t, base_lower, base_upper);
        baseline_v(&t, base_journal, 1, &j);
        for (size_t i = 0; i < j.n; i++)
                assert_int_equal(j.v[i].hashv, 1);
        prepare_with(&ap, &t, &j, NULL);
        assert_int_equal(ap.cs.n, 0);
        finish(&ap);
        baseline_v(&t, base_journal, 1, &j);
        snprintf(path, sizeof(path), "%s/mod", t.lower);
        assert_int_equal(stat(path, &st), 0);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("OLD\n", f); /* same size */
        fclose(f);
        times[0] = st.st_atim;
        times[1] = st.st_mtim;
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
        prepare_with(&ap, &t, &j, NULL);
        assert_conflict(&ap.cs, "mod", "changed on the host since the run changed it");
        finish(&ap);
        tree_close(&t);
}

/* A host file changed since the copy-up, one without a baseline, one removed: each named,
 * and a new file the host now has with the same content is no conflict. */
static void apply_conflicts(void **state)
{
        static const char *const jpaths[] = {"mod", "gone", NULL};
        struct op lower[] = {{'f', "mod", "old\n"}, {'f', "nobase", "x"}, {'f', "gone", "g"}, {0}};
        struct op upper[] = {{'f', "mod", "new\n"}, {'f', "nobase", "y"}, {'w', "gone"},
                             {'f', "same", "s"},    {'f', "other", "o"},  {0}};
        char p[PATH_MAX * 2];
        struct tree t;
        struct applying ap;
        int fd;

        tree_make(&t, lower, upper);
        prepare(&ap, &t, jpaths, NULL);
        assert_int_equal(ap.cs.n, 1);
        assert_conflict(&ap.cs, "nobase", "no baseline");

        /* the host moves on after the run */
        snprintf(p, sizeof(p), "%s/mod", t.lower);
        fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_int_equal(write(fd, "host\n", 5), 5);
        close(fd);
        recheck(&ap);
        assert_int_equal(ap.cs.n, 2);
        assert_conflict(&ap.cs, "mod", "changed on the host");

        /* new names the host took meanwhile: the same content is done, another a conflict */
        put(t.lower, &(struct op){'f', "same", "s"});
        put(t.lower, &(struct op){'f', "other", "different"});
        recheck(&ap);
        assert_int_equal(ap.cs.n, 3);
        assert_conflict(&ap.cs, "other", "no baseline");

        /* the journal's file removed from the host since */
        assert_int_equal(unlink(p), 0);
        recheck(&ap);
        assert_conflict(&ap.cs, "mod", "removed from the host");
        finish(&ap);
        tree_close(&t);
}

/* A symlink on the host where the upper has a directory: the check names it; forced, the
 * write is stopped by the walk, and once diffed as a type change the link is replaced by a
 * directory. Nothing outside is written. */
static void host_symlink_in_place_of_dir(void **state)
{
        static const char *const jpaths[] = {"sub/f", NULL};
        struct op lower[] = {{'d', "sub"}, {'f', "sub/f", "old"}, {0}};
        struct op upper[] = {{'d', "sub"}, {'f', "sub/f", "new"}, {0}};
        char p[PATH_MAX * 2], out[PATH_MAX * 2];
        struct tree t;
        struct applying ap;
        struct journal j2;
        char *failed = NULL;
        _cleanup_free_ char *o = NULL, *o2 = NULL, *f = NULL;
        struct stat st;

        tree_make(&t, lower, upper);
        baseline(&t, jpaths, &j2);
        prepare(&ap, &t, jpaths, NULL);
        assert_int_equal(ap.cs.n, 0);
        /* after the diff, the host swaps sub for a link to a directory with the same file */
        snprintf(p, sizeof(p), "%s/sub/f", t.lower);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof(p), "%s/sub", t.lower);
        assert_int_equal(rmdir(p), 0);
        snprintf(out, sizeof(out), "%s/outside", T);
        assert_int_equal(symlink(out, p), 0);
        put(T, &(struct op){'f', "outside/f", "old"});
        recheck(&ap);
        assert_conflict(&ap.cs, "sub/f", "where a directory is expected");
        assert_true(cowapply_write(&ap.a, &failed) < 0); /* as --force would */
        assert_string_equal(failed, "sub/f");
        free(failed);
        o = slurp(T, "outside/f");
        assert_string_equal(o, "old");
        finish(&ap);

        /* diffed now: a type change; forced, sub becomes a directory of the host's own */
        prepare_with(&ap, &t, &j2, NULL);
        assert_conflict(&ap.cs, "sub", "no baseline");
        write_prune(&ap, &t);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        f = slurp(t.lower, "sub/f");
        assert_string_equal(f, "new");
        o2 = slurp(T, "outside/f");
        assert_string_equal(o2, "old");
        finish(&ap);
        tree_close(&t);
        strcat(out, "/f");
        assert_int_equal(unlink(out), 0);
}

/* A newline in a name, applied and pruned. */
static void newline_name(void **state)
{
        struct op upper[] = {{'f', "a\nb", "x"}, {0}};
        struct tree t;
        struct applying ap;
        _cleanup_free_ char *s = NULL;

        tree_make(&t, NULL, upper);
        prepare(&ap, &t, NULL, NULL);
        assert_int_equal(ap.cs.n, 0);
        write_prune(&ap, &t);
        s = slurp(t.lower, "a\nb");
        assert_string_equal(s, "x");
        assert_false(exists(t.upper, "a\nb"));
        finish(&ap);
        tree_close(&t);
}

/* PATHs: only what lies there (and the new directories it needs); an opaque directory keeps
 * hiding what is still pending once entries of it left the session. */
static void apply_some_paths(void **state)
{
        static const char *const jpaths[] = {"op/one", "op/two", "mod", NULL};
        static const char *const sel[] = {"nd/deep/f", "op/three", NULL};
        struct op lower[] = {
                {'d', "op"}, {'f', "op/one", "1"}, {'f', "op/two", "2"}, {'f', "mod", "m"}, {0}};
        struct op upper[] = {{'o', "op"},
                             {'f', "op/two", "22"},
                             {'f', "op/three", "3"},
                             {'d', "nd"},
                             {'d', "nd/deep"},
                             {'f', "nd/deep/f", "f"},
                             {'f', "nd/other", "o"},
                             {'f', "mod", "M"},
                             {0}};
        struct tree t;
        struct applying ap;
        _cleanup_free_ char *left = NULL;

        tree_make(&t, lower, upper);
        prepare(&ap, &t, jpaths, sel);
        assert_int_equal(ap.cs.n, 0);
        write_prune(&ap, &t);
        assert_true(exists(t.lower, "nd/deep/f") && exists(t.lower, "op/three"));
        assert_false(exists(t.lower, "nd/other"));
        left = diff_of(&t);
        assert_string_equal(left, "M mod\nA nd/other\nD op/one\nM op/two\n");
        finish(&ap);
        tree_close(&t);
}

/* An apply cut short (the writes done, the session not pruned) is finished by the next,
 * and what it already wrote is no conflict. */
static void apply_again_after_a_cut(void **state)
{
        struct tree t;
        struct applying ap;
        struct journal j2;
        char *failed = NULL;
        _cleanup_free_ char *after = NULL;

        tree_make(&t, base_lower, base_upper);
        baseline(&t, base_journal, &j2);
        prepare(&ap, &t, base_journal, NULL);
        assert_int_equal(ap.cs.n, 0);
        assert_int_equal(cowapply_write(&ap.a, &failed), 0);
        finish(&ap); /* "crash": no prune */
        prepare_with(&ap, &t, &j2, NULL);
        assert_int_equal(ap.cs.n, 0);
        assert_int_equal(cowdiff_count(&ap.d), 0);
        write_prune(&ap, &t);
        assert_false(exists(t.upper, "mod") || exists(t.upper, "gone"));
        after = diff_of(&t);
        assert_string_equal(after, "");
        finish(&ap);
        tree_close(&t);
}

/* Type changes: a directory exchanged for a file once emptied, a file for a directory, a
 * file for a symlink; the host ends as the merged view and the session empty. */
static void type_changes_applied(void **state)
{
        static const char *const jpaths[] = {"f2d", "d2f", "d2f/x", "f2l", NULL};
        struct op lower[] = {
                {'f', "f2d", "f"}, {'d', "d2f"}, {'f', "d2f/x", "x"}, {'f', "f2l", "l"}, {0}};
        struct op upper[] = {{'o', "f2d"},
                             {'f', "f2d/in", "in"},
                             {'f', "d2f", "now"},
                             {'l', "f2l", "target"},
                             {0}};
        struct tree t;
        struct applying ap;
        _cleanup_free_ char *in = NULL, *now = NULL, *after = NULL;

        tree_make(&t, lower, upper);
        prepare(&ap, &t, jpaths, NULL);
        assert_int_equal(ap.cs.n, 0);
        write_prune(&ap, &t);
        in = slurp(t.lower, "f2d/in");
        now = slurp(t.lower, "d2f");
        assert_string_equal(in, "in");
        assert_string_equal(now, "now");
        assert_null(slurp(t.lower, "f2l")); /* O_NOFOLLOW: a symlink now */
        after = diff_of(&t);
        assert_string_equal(after, "");
        assert_false(exists(t.upper, "f2d") || exists(t.upper, "d2f") || exists(t.upper, "f2l"));
        finish(&ap);
        tree_close(&t);
}

/* A rename forced over a source the host changed after the diff: the new name gets the
 * upper's bytes, not the host's, and the old name goes. */
static void forced_rename_takes_the_upper_bytes(void **state)
{
        static const char *const jpaths[] = {"src", NULL};
        struct op lower[] = {{'f', "src", "moved\n"}, {0}};
        struct op upper[] = {{'w', "src"}, {'f', "dst", "moved\n"}, {0}};
        struct tree t;
        struct applying ap;
        _cleanup_free_ char *dst = NULL;

        tree_make(&t, lower, upper);
        prepare(&ap, &t, jpaths, NULL);
        assert_int_equal(ap.d.n, 1);
        assert_int_equal(ap.d.v[0].op, COW_REN);
        put(t.lower, &(struct op){'f', "src", "edited\n"});
        recheck(&ap);
        assert_conflict(&ap.cs, "src", "changed on the host");
        write_prune(&ap, &t);
        dst = slurp(t.lower, "dst");
        assert_string_equal(dst, "moved\n");
        assert_false(exists(t.lower, "src"));
        finish(&ap);
        tree_close(&t);
}

/* No set-ID bit reaches the host from the upper unless the host's file had it already. */
static void setid_bits_only_where_they_were(void **state)
{
        static const char *const jpaths[] = {"was", NULL};
        struct op lower[] = {{'f', "was", "x", 04755}, {0}};
        struct op upper[] = {{'f', "was", "y", 04755}, {'f', "new", "n", 06755}, {0}};
        char p[PATH_MAX * 2];
        struct tree t;
        struct applying ap;
        struct stat st;

        tree_make(&t, lower, upper);
        prepare(&ap, &t, jpaths, NULL);
        assert_int_equal(ap.cs.n, 0);
        write_prune(&ap, &t);
        snprintf(p, sizeof(p), "%s/new", t.lower);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        snprintf(p, sizeof(p), "%s/was", t.lower);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 04755);
        finish(&ap);
        tree_close(&t);
}

/* ---- main -------------------------------------------------------------------------------- */

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");
        char probe[PATH_MAX + 16];

        snprintf(T, sizeof(T), "%s/stockade-cow.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
        if (!mkdtemp(T))
                return -1;
        snprintf(probe, sizeof(probe), "%s/outside", T);
        if (mkdir(probe, 0755) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        char cmd[PATH_MAX + 32];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
        return system(cmd) == 0 ? 0 : -1;
}

/* Whiteouts and user xattrs where the trees are built, or exit 77 with the reason. */
static void need_overlay_bits(void)
{
        char p[PATH_MAX + 16];

        snprintf(p, sizeof(p), "%s/probe", T);
        if (mknod(p, S_IFCHR | 0, makedev(0, 0)) < 0) {
                printf("skip: cannot make a whiteout (mknod 0/0) in %s: %s\n", T, strerror(errno));
                teardown(NULL);
                exit(77);
        }
        unlink(p);
        if (setxattr(T, "user.overlay.opaque", "y", 1, 0) < 0) {
                printf("skip: no user xattrs in %s (%s): set TMPDIR elsewhere\n", T,
                       strerror(errno));
                teardown(NULL);
                exit(77);
        }
        removexattr(T, "user.overlay.opaque");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(diff_classification),
                cmocka_unit_test(diff_without_lower),
                cmocka_unit_test(sparse_files_by_data),
                cmocka_unit_test(paths_and_quoting),
                cmocka_unit_test(apply_everything),
                cmocka_unit_test(older_session_baselines),
                cmocka_unit_test(apply_conflicts),
                cmocka_unit_test(host_symlink_in_place_of_dir),
                cmocka_unit_test(newline_name),
                cmocka_unit_test(apply_some_paths),
                cmocka_unit_test(apply_again_after_a_cut),
                cmocka_unit_test(type_changes_applied),
                cmocka_unit_test(forced_rename_takes_the_upper_bytes),
                cmocka_unit_test(setid_bits_only_where_they_were),
        };
        int r;

        if (setup(NULL) < 0) {
                perror("test_cow: temporary directory");
                return 1;
        }
        need_overlay_bits();
        r = cmocka_run_group_tests(tests, NULL, NULL);
        teardown(NULL);
        return r;
}

/*
 * `stockade diff|apply|discard|sessions` on sessions built by hand in the on-disk format
 * (session.h, journal.h), judged from outside: the output, the host tree afterwards, what is
 * left in the session, the messages and exit codes for missing, locked and damaged sessions.
 *
 *   W/state       the session store (--state-dir)
 *   W/host        mount 0's lower tree      W/host2   mount 1's (the two-mount session)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/session.h"
#include "tests/helpers/runner.h"

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

static char W[256], STATE[300]; /* short: every path built from W fits PATH_MAX */

/* ---- building ---------------------------------------------------------------------------- */

static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *at(const char *fmt, ...)
{
        static char bufs[8][PATH_MAX * 2];
        static int k;
        char *b = bufs[k++ % 8];
        int n = snprintf(b, PATH_MAX, "%s/", W);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(b + n, PATH_MAX * 2 - (size_t)n, fmt, ap);
        va_end(ap);
        return b;
}

static void wfile(const char *path, const char *content, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
        close(fd);
        assert_int_equal(chmod(path, mode), 0);
}

static void wdir(const char *path)
{
        assert_int_equal(mkdir(path, 0755), 0);
}

static void whiteout(const char *path)
{
        assert_int_equal(mknod(path, S_IFCHR | 0, makedev(0, 0)), 0);
}

static char *slurp(const char *path)
{
        char *buf = xcalloc(1, 65536);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0) {
                free(buf);
                return NULL;
        }
        assert_true(read(fd, buf, 65535) >= 0);
        close(fd);
        return buf;
}

static bool exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

/* A session: its file (2 mounts when host2), N/upper and N/work for each. */
static void session(const char *name, bool host2, time_t updated, const char *command)
{
        struct session_meta m = {.created = updated - 10, .updated = updated};
        char dir[PATH_MAX];

        m.command = (char *)command;
        snprintf(m.mounts[0].sandbox, PATH_MAX, "/work");
        snprintf(m.mounts[0].host, PATH_MAX, "%s/host", W);
        m.n_mounts = 1;
        if (host2) {
                snprintf(m.mounts[1].sandbox, PATH_MAX, "/data");
                snprintf(m.mounts[1].host, PATH_MAX, "%s/host2", W);
                m.n_mounts = 2;
        }
        for (size_t i = 0; i < m.n_mounts; i++) { /* the identity the run records */
                struct stat st;

                if (stat(m.mounts[i].host, &st) == 0)
                        m.mounts[i].dev = st.st_dev, m.mounts[i].ino = st.st_ino;
        }
        assert_int_equal(session_path(STATE, name, dir), 0);
        mkdir(at("state/sessions"), 0700);
        wdir(dir);
        assert_int_equal(session_meta_write(dir, &m), 0);
        for (size_t i = 0; i < m.n_mounts; i++) {
                wdir(at("state/sessions/%s/%zu", name, i));
                wdir(at("state/sessions/%s/%zu/upper", name, i));
                wdir(at("state/sessions/%s/%zu/work", name, i));
        }
}

/* Baselines of mount `n`'s host objects as the run records them. */
static void journal(const char *name, int n, const char *host, const char *const *paths)
{
        int root = open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int jfd = open(at("state/sessions/%s/%d/journal", name, n),
                       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

        assert_true(root >= 0 && jfd >= 0);
        for (; *paths; paths++) {
                int fd = cowdiff_open(root, *paths, O_PATH | O_NOFOLLOW);
                struct journal_rec r;

                assert_true(fd >= 0);
                assert_int_equal(journal_describe(fd, *paths, &r), 0);
                assert_int_equal(journal_append(jfd, &r), 0);
                journal_rec_free(&r);
                close(fd);
        }
        close(root);
        close(jfd);
}

/* The usual session "s": a host tree and the changes of a run over it. */
static const char *const s_journal[] = {"mod", "exe", "gone", "dd", "dd/x", "src", NULL};

/* The times of `from` given to `to`. */
static void same_times(const char *from, const char *to)
{
        struct stat st;

        assert_int_equal(stat(from, &st), 0);
        assert_int_equal(utimensat(AT_FDCWD, to, (struct timespec[]){st.st_atim, st.st_mtim}, 0),
                         0);
}

static void make_s(void)
{
        wdir(at("host"));
        wfile(at("host/mod"), "one\ntwo\nthree\n", 0644);
        wfile(at("host/keep"), "keep\n", 0644);
        wfile(at("host/exe"), "#!/bin/sh\n", 0644);
        wfile(at("host/gone"), "bye\n", 0644);
        wdir(at("host/dd"));
        wfile(at("host/dd/x"), "x\n", 0644);
        wfile(at("host/src"), "moved content\n", 0644);
        session("s", false, 1700000000, "sh -c make%20all");
        wfile(at("state/sessions/s/0/upper/mod"), "one\n2\nthree\n", 0644);
        wfile(at("state/sessions/s/0/upper/keep"), "keep\n", 0644);       /* copied up, same */
        same_times(at("host/keep"), at("state/sessions/s/0/upper/keep")); /* as copy-up keeps */
        wfile(at("state/sessions/s/0/upper/exe"), "#!/bin/sh\n", 0755);
        whiteout(at("state/sessions/s/0/upper/gone"));
        whiteout(at("state/sessions/s/0/upper/dd"));
        whiteout(at("state/sessions/s/0/upper/src"));
        wfile(at("state/sessions/s/0/upper/dst"), "moved content\n", 0644);
        wdir(at("state/sessions/s/0/upper/new"));
        wfile(at("state/sessions/s/0/upper/new/f"), "fresh\n", 0644);
        wfile(at("state/sessions/s/0/upper/a\nb"), "odd name\n", 0644);
        assert_int_equal(symlink("../../etc/passwd", at("state/sessions/s/0/upper/ln")), 0);
        journal("s", 0, at("host"), s_journal);
}

/* sorted by path; an R by its new one */
static const char s_diff[] = "A \"a\\nb\"\n"
                             "D dd/\n"
                             "D dd/x\n"
                             "R src -> dst\n"
                             "M exe (mode 644 -> 755)\n"
                             "D gone\n"
                             "A ln (symlink to ../../etc/passwd)\n"
                             "M mod\n"
                             "A new/\n"
                             "A new/f\n";

/* ---- running ----------------------------------------------------------------------------- */

/* stockade ARGS... --state-dir STATE (args NULL-terminated). */
static struct run_result stockade(const char *a0, ...)
{
        const char *argv[32] = {runner_stockade()};
        struct run_result r;
        size_t n = 1;
        va_list ap;

        va_start(ap, a0);
        for (const char *a = a0; a; a = va_arg(ap, const char *))
                argv[n++] = a;
        va_end(ap);
        argv[n++] = "--state-dir";
        argv[n++] = STATE;
        argv[n] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 60, &r), 0);
        return r;
}

static void expect(struct run_result *r, int code, const char *out, const char *err_has)
{
        if (r->exit_code != code || (out && strcmp(r->out, out) != 0) ||
            (err_has && !strstr(r->err, err_has)))
                fail_msg("exit %d (expected %d)\nstdout:\n%s\nstderr:\n%s", r->exit_code, code,
                         r->out, r->err);
        runner_free(r);
}

/* ---- diff -------------------------------------------------------------------------------- */

static void diff_text_and_json(void **state)
{
        struct run_result r;

        make_s();
        r = stockade("diff", "s", NULL);
        expect(&r, 0, s_diff, NULL);
        r = stockade("diff", "s", "--json", NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "{\"op\": \"R\", \"path\": \"dst\", \"old_path\": \"src\""));
        assert_non_null(strstr(r.out, "{\"op\": \"A\", \"path\": \"a\\nb\", \"type\": \"file\""));
        assert_non_null(strstr(r.out, "\"mode_from\": \"644\", \"mode_to\": \"755\""));
        assert_non_null(strstr(r.out, "\"mount\": \"/work\"}"));
        assert_int_equal(r.out[0], '[');
        runner_free(&r);
        r = stockade("diff", "s", "--json", "--patch", NULL);
        expect(&r, 125, "", "not both");
}

/* git apply takes the patch on a copy of the host and makes the merged tree of it. */
static void diff_patch_through_git(void **state)
{
        char *argv[12];
        struct run_result r, g;
        _cleanup_free_ char *mod = NULL, *odd = NULL, *f = NULL;
        char link[PATH_MAX], cmd[PATH_MAX * 3];
        ssize_t n;
        FILE *p;

        if (access("/usr/bin/git", X_OK) != 0)
                skip();
        make_s();
        r = stockade("diff", "s", "--patch", NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "diff --git a/src b/dst\nsimilarity index 100%\n"));
        assert_non_null(
                strstr(r.out, "diff --git a/exe b/exe\nold mode 100644\nnew mode 100755\n"));
        assert_non_null(
                strstr(r.out, "diff --git \"a/a\\nb\" \"b/a\\nb\"\nnew file mode 100644\n"));
        assert_non_null(strstr(r.out, "-two\n+2\n"));
        p = fopen(at("patch"), "we");
        fputs(r.out, p);
        fclose(p);
        runner_free(&r);
        snprintf(cmd, sizeof(cmd), "cp -a '%s/host' '%s/copy'", W, W);
        assert_int_equal(system(cmd), 0);
        argv[0] = "/usr/bin/git";
        argv[1] = "-C";
        argv[2] = (char *)at("copy");
        argv[3] = "apply";
        argv[4] = "--check";
        argv[5] = (char *)at("patch");
        argv[6] = NULL;
        assert_int_equal(runner_run(argv, NULL, 60, &g), 0);
        if (g.exit_code != 0)
                fail_msg("git apply --check: %s", g.err);
        runner_free(&g);
        argv[4] = argv[5];
        argv[5] = NULL;
        assert_int_equal(runner_run(argv, NULL, 60, &g), 0);
        assert_int_equal(g.exit_code, 0);
        runner_free(&g);
        mod = slurp(at("copy/mod"));
        odd = slurp(at("copy/a\nb"));
        f = slurp(at("copy/new/f"));
        assert_string_equal(mod, "one\n2\nthree\n");
        assert_string_equal(odd, "odd name\n");
        assert_string_equal(f, "fresh\n");
        assert_false(exists(at("copy/src")) || exists(at("copy/gone")) || exists(at("copy/dd")));
        assert_true(exists(at("copy/dst")) && access(at("copy/exe"), X_OK) == 0);
        n = readlink(at("copy/ln"), link, sizeof(link) - 1);
        assert_true(n > 0);
        link[n] = '\0';
        assert_string_equal(link, "../../etc/passwd");
}

static void diff_patch_names_binary(void **state)
{
        struct run_result r;

        make_s();
        wfile(at("state/sessions/s/0/upper/bin"), "a\001b", 0644);
        assert_int_equal(truncate(at("state/sessions/s/0/upper/bin"), 64), 0); /* NULs */
        r = stockade("diff", "s", "--patch", NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "Binary files /dev/null and b/bin differ\n"));
        runner_free(&r);
}

/* ---- apply ------------------------------------------------------------------------------- */

static void apply_all(void **state)
{
        struct run_result r;
        _cleanup_free_ char *mod = NULL, *dst = NULL;
        char link[PATH_MAX];
        ssize_t n;

        make_s();
        r = stockade("apply", "s", NULL);
        expect(&r, 0, NULL, NULL);
        mod = slurp(at("host/mod"));
        dst = slurp(at("host/dst"));
        assert_string_equal(mod, "one\n2\nthree\n");
        assert_string_equal(dst, "moved content\n");
        assert_false(exists(at("host/gone")) || exists(at("host/dd")) || exists(at("host/src")));
        assert_true(exists(at("host/new/f")) && exists(at("host/a\nb")));
        assert_int_equal(access(at("host/exe"), X_OK), 0);
        n = readlink(at("host/ln"), link, sizeof(link) - 1);
        assert_true(n > 0);
        link[n] = '\0';
        assert_string_equal(link, "../../etc/passwd");
        r = stockade("diff", "s", NULL);
        expect(&r, 0, "", NULL);
        assert_false(exists(at("state/sessions/s/0/upper/mod")));
        r = stockade("apply", "s", NULL);
        expect(&r, 0, "nothing to apply in session s\n", NULL);
}

static void apply_paths(void **state)
{
        struct run_result r;
        _cleanup_free_ char *mod = NULL;

        make_s();
        r = stockade("apply", "s", "new/f", "/work/mod", NULL);
        expect(&r, 0, NULL, NULL);
        assert_true(exists(at("host/new/f")));
        mod = slurp(at("host/mod"));
        assert_string_equal(mod, "one\n2\nthree\n");
        assert_true(exists(at("host/gone")));
        r = stockade("diff", "s", NULL);
        expect(&r, 0,
               "A \"a\\nb\"\nD dd/\nD dd/x\nR src -> dst\nM exe (mode 644 -> 755)\nD gone\n"
               "A ln (symlink to ../../etc/passwd)\n",
               NULL);
        r = stockade("apply", "s", "nothing/here", NULL);
        expect(&r, 125, NULL, "nothing/here: no change there");
        r = stockade("apply", "s", "../etc", NULL);
        expect(&r, 125, NULL, "not a plain path");
        r = stockade("apply", "s", "/elsewhere/x", NULL);
        expect(&r, 125, NULL, "not in a cow mount");
}

/* The host changed since the run: each file named, nothing written; --force writes. */
static void apply_conflict_then_force(void **state)
{
        struct run_result r;
        _cleanup_free_ char *mod = NULL, *gone = NULL;

        make_s();
        wfile(at("host/mod"), "edited on the host\n", 0644);
        wfile(at("host/gone"), "edited too\n", 0644);
        wfile(at("host/dst"), "taken\n", 0644);
        r = stockade("apply", "s", NULL);
        assert_int_equal(r.exit_code, 125);
        assert_non_null(strstr(r.err, "conflict: mod: changed on the host"));
        assert_non_null(strstr(r.err, "conflict: gone: changed on the host"));
        assert_non_null(strstr(r.err, "conflict: dst: on the host, but the journal has no "
                                      "baseline"));
        assert_non_null(strstr(r.err, "nothing applied, 3 conflicts"));
        runner_free(&r);
        assert_false(exists(at("host/new")));
        mod = slurp(at("host/mod"));
        assert_string_equal(mod, "edited on the host\n");
        r = stockade("apply", "s", "--force", NULL);
        expect(&r, 0, NULL, NULL);
        free(mod);
        mod = slurp(at("host/mod"));
        assert_string_equal(mod, "one\n2\nthree\n");
        assert_false(exists(at("host/gone")));
        gone = slurp(at("host/dst"));
        assert_string_equal(gone, "moved content\n");
}

/* Two mounts: paths are the sandbox's; a relative PATH is ambiguous. */
static void two_mounts(void **state)
{
        struct run_result r;

        wdir(at("host"));
        wdir(at("host2"));
        session("two", true, 1700000000, "true");
        wfile(at("state/sessions/two/0/upper/a"), "a", 0644);
        wfile(at("state/sessions/two/1/upper/b"), "b", 0644);
        r = stockade("diff", "two", NULL);
        expect(&r, 0, "A /data/b\nA /work/a\n", NULL);
        r = stockade("apply", "two", "b", NULL);
        expect(&r, 125, NULL, "2 cow mounts");
        r = stockade("apply", "two", "/data/b", NULL);
        expect(&r, 0, NULL, NULL);
        assert_true(exists(at("host2/b")) && !exists(at("host/a")));
        r = stockade("diff", "two", "--patch", NULL);
        assert_non_null(strstr(r.out, "diff --git a/work/a b/work/a\n"));
        runner_free(&r);
}

/* ---- discard, sessions, what goes wrong -------------------------------------------------- */

static void discard(void **state)
{
        struct run_result r;

        make_s();
        wdir(at("state/sessions/s/0/work/work"));
        whiteout(at("state/sessions/s/0/work/work/#3f1"));
        assert_int_equal(chmod(at("state/sessions/s/0/work/work"), 0), 0);
        r = stockade("discard", "s", NULL);
        expect(&r, 0, "", NULL);
        assert_false(exists(at("state/sessions/s")));
        assert_true(exists(at("host/mod")));
        r = stockade("discard", "s", NULL);
        expect(&r, 125, "", "session s: no such session");
}

static void listing_and_damage(void **state)
{
        struct run_result r;
        int fd;

        make_s();
        session("newer", false, 1800000000, "python3 task.py");
        wfile(at("state/sessions/newer/0/upper/n"), "12345", 0644);
        session("cut", false, 1750000000, "x");
        fd = open(at("state/sessions/cut/session"), O_WRONLY | O_CLOEXEC);
        assert_int_equal(ftruncate(fd, lseek(fd, 0, SEEK_END) - 4), 0); /* "end\n" gone */
        close(fd);
        wdir(at("state/sessions/nofile")); /* with content: damaged, not a start cut short */
        wdir(at("state/sessions/nofile/0"));
        wdir(at("state/sessions/nofile/0/upper"));
        wfile(at("state/sessions/nofile/0/upper/x"), "x", 0644);
        session("noupper", false, 1600000000, "y");
        assert_int_equal(rmdir(at("state/sessions/noupper/0/upper")), 0);

        r = stockade("sessions", NULL);
        assert_int_equal(r.exit_code, 0);
        /* oldest first; the damaged ones say what is wrong */
        const char *nf = strncmp(r.out, "nofile ", 7) == 0 ? r.out : NULL,
                   *nu = strstr(r.out, "\nnoupper "), *s = strstr(r.out, "\ns "),
                   *c = strstr(r.out, "\ncut "), *nw = strstr(r.out, "\nnewer ");
        if (!nf || !nu || !s || !c || !nw || !(nf < nu && nu < s && s < c && c < nw))
                fail_msg("listing:\n%s", r.out);
        assert_non_null(strstr(nf, "damaged: its `session` file is missing"));
        assert_non_null(strstr(nu, "its upper directory is missing"));
        assert_non_null(strstr(s, "10 changes"));
        assert_non_null(strstr(s, "sh -c \"make all\""));
        assert_non_null(strstr(c, "damaged: its `session` file is cut short"));
        assert_non_null(strstr(nw, " 1 change "));
        assert_non_null(strstr(nw, " 5B  python3 task.py\n"));
        runner_free(&r);

        r = stockade("diff", "nofile", NULL);
        expect(&r, 125, "", "session nofile is damaged: its `session` file is missing");
        r = stockade("diff", "noupper", NULL);
        expect(&r, 125, "", "session noupper is damaged: mount 0 (/work): its upper directory");
        r = stockade("diff", "cut", NULL);
        expect(&r, 125, "", "session cut is damaged: its `session` file is cut short");
        r = stockade("apply", "cut", NULL);
        expect(&r, 125, "", "nothing applied");
        r = stockade("diff", "absent", NULL);
        expect(&r, 125, "", "session absent: no such session in");
        r = stockade("diff", "../x", NULL);
        expect(&r, 125, "", "not a session name");
        r = stockade("discard", "nofile", NULL);
        expect(&r, 0, "", NULL);
        r = stockade("discard", "cut", NULL);
        expect(&r, 0, "", NULL);
        assert_false(exists(at("state/sessions/nofile")) || exists(at("state/sessions/cut")));
}

static void locked_session(void **state)
{
        struct run_result r;
        int lock;

        make_s();
        lock = session_lock(at("state/sessions/s"));
        assert_true(lock >= 0);
        r = stockade("apply", "s", NULL);
        expect(&r, 125, "", "session s is in use by a running stockade");
        r = stockade("discard", "s", NULL);
        expect(&r, 125, "", "session s is in use by a running stockade");
        r = stockade("diff", "s", NULL); /* reading is fine */
        expect(&r, 0, s_diff, NULL);
        close(lock);
        assert_true(exists(at("host/gone")));
}

/* ---- main -------------------------------------------------------------------------------- */

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        snprintf(W, sizeof(W), "%s/stockade-review.XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
        if (!mkdtemp(W))
                return -1;
        snprintf(STATE, sizeof(STATE), "%s/state", W);
        return mkdir(STATE, 0700);
}

static int teardown(void **state)
{
        char cmd[700];

        snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", W, W);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(diff_text_and_json, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_through_git, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_names_binary, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_all, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_conflict_then_force, setup, teardown),
                cmocka_unit_test_setup_teardown(two_mounts, setup, teardown),
                cmocka_unit_test_setup_teardown(discard, setup, teardown),
                cmocka_unit_test_setup_teardown(listing_and_damage, setup, teardown),
                cmocka_unit_test_setup_teardown(locked_session, setup, teardown),
        };
        char probe[PATH_MAX + 16];

        /* whiteouts must be possible here (a kernel that allows mknod 0/0 unprivileged) */
        if (setup(NULL) < 0)
                return 1;
        snprintf(probe, sizeof(probe), "%s/wh", W);
        if (mknod(probe, S_IFCHR | 0, makedev(0, 0)) < 0) {
                printf("skip: cannot make a whiteout in %s: %s\n", W, strerror(errno));
                teardown(NULL);
                return 77;
        }
        teardown(NULL);
        return cmocka_run_group_tests(tests, NULL, NULL);
}

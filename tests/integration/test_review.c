/*
 * `stockade diff|apply|discard|sessions` on sessions built by hand in the on-disk format
 * (session.h, journal.h), judged from outside: the output, the host tree afterwards, what is
 * left in the session, the messages and exit codes for missing, locked and damaged sessions.
 *
 *   W/state       the session store (--state-dir)
 *   W/host        mount 0's lower tree      W/host2   mount 1's (the two-mount session)
 *
 * What only an unprivileged user meets (a read-only directory, another user's) is tested as
 * uid 65534 when the suite runs as root (as_user), since root's DAC override writes anyway.
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static char W[256], STATE[300]; /* short: every path built from W fits PATH_MAX */
static bool user_run;           /* stockade runs as uid 65534 (as_user) */

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

static void p_write(const char *path, const char *text)
{
        FILE *p = fopen(path, "we");

        assert_non_null(p);
        fputs(text, p);
        fclose(p);
}

static bool exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

static mode_t mode_of(const char *path)
{
        struct stat st;

        assert_int_equal(lstat(path, &st), 0);
        return st.st_mode & 07777;
}

/* A binary file: a NUL in its first bytes (git's test), `tag` to tell them apart. */
static void wbin(const char *path, const char *tag)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "\177ELF\0\0", 6), 6);
        assert_int_equal(write(fd, tag, strlen(tag)), (ssize_t)strlen(tag));
        close(fd);
}

/* A session: its file (mount 0 at `host`, /work; mount 1 at W/host2, /data, when host2),
 * N/upper and N/work for each. */
static void session_at(const char *name, const char *host, bool host2, time_t updated,
                       const char *command)
{
        struct session_meta m = {.created = updated - 10, .updated = updated};
        char dir[PATH_MAX];

        m.command = (char *)command;
        snprintf(m.mounts[0].sandbox, PATH_MAX, "/work");
        snprintf(m.mounts[0].host, PATH_MAX, "%s", host);
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
        mkdir(at("state/sessions"), 0700); /* STATE's own, when STATE is W/state */
        wdir(dir);
        assert_int_equal(session_meta_write(dir, &m), 0);
        for (size_t i = 0; i < m.n_mounts; i++) {
                static const char *const sub[] = {"", "/upper", "/work"};
                char p[PATH_MAX + 32];

                for (size_t k = 0; k < ARRAY_SIZE(sub); k++) {
                        snprintf(p, sizeof(p), "%s/%zu%s", dir, i, sub[k]);
                        wdir(p);
                }
        }
}

static void session(const char *name, bool host2, time_t updated, const char *command)
{
        session_at(name, at("host"), host2, updated, command);
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

/* PRE... stockade ARGS... --state-dir STATE (pre NULL or NULL-terminated), as uid 65534
 * after as_user. */
static struct run_result stockade_v(const char *const *pre, const char *a0, va_list ap)
{
        static const char *const setpriv[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                              "--clear-groups", NULL};
        const char *argv[48];
        struct run_result r;
        size_t n = 0;

        for (const char *const *p = setpriv; user_run && *p; p++)
                argv[n++] = *p;
        for (; pre && *pre; pre++)
                argv[n++] = *pre;
        argv[n++] = runner_stockade();
        for (const char *a = a0; a; a = va_arg(ap, const char *))
                argv[n++] = a;
        argv[n++] = "--state-dir";
        argv[n++] = STATE;
        argv[n] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 60, &r), 0);
        return r;
}

/* stockade ARGS... --state-dir STATE (args NULL-terminated). */
static struct run_result stockade(const char *a0, ...)
{
        struct run_result r;
        va_list ap;

        va_start(ap, a0);
        r = stockade_v(NULL, a0, ap);
        va_end(ap);
        return r;
}

/* stockade run [--user root, as root] --state-dir STATE [--session NAME] --cow WS -- CMD...
 * (CMD NULL-terminated; `session` NULL: none). */
static struct run_result cow_run(const char *state, const char *session, const char *ws,
                                 const char *c0, ...)
{
        const char *argv[32];
        struct run_result r;
        size_t n = 0;
        va_list ap;

        argv[n++] = runner_stockade();
        argv[n++] = "run";
        if (geteuid() == 0)
                argv[n++] = "--user", argv[n++] = "root";
        argv[n++] = "--state-dir", argv[n++] = state;
        if (session)
                argv[n++] = "--session", argv[n++] = session;
        argv[n++] = "--cow", argv[n++] = ws, argv[n++] = "--";
        va_start(ap, c0);
        for (const char *a = c0; a && n < 31; a = va_arg(ap, const char *))
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 60, &r), 0);
        return r;
}

static struct run_result stockade_under(const char *const *pre, const char *a0, ...)
{
        struct run_result r;
        va_list ap;

        va_start(ap, a0);
        r = stockade_v(pre, a0, ap);
        va_end(ap);
        return r;
}

/* From here on, stockade runs as uid 65534 when the suite runs as root, and W is its. */
static void as_user(void)
{
        if (geteuid() != 0)
                return;
        if (access("/usr/bin/setpriv", X_OK) != 0) {
                print_message("  (no setpriv: stockade runs as root here, which writes anyway)\n");
                return;
        }
        assert_int_equal(runner_shell("chown -R 65534:65534 '%s'", W), 0);
        user_run = true;
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

/* What lies in a .git directory (or is a `.git` file) is a repository's own store: left out
 * of the patch, counted on stderr, and git apply takes the rest (an outside tester's first
 * commit in a run made git apply refuse the whole patch: "invalid path '.git/...'"). */
static void diff_patch_leaves_out_git(void **state)
{
        char *argv[] = {"/usr/bin/git", "-C", NULL, "apply", "--check", NULL, NULL};
        struct run_result r, g;
        FILE *p;

        if (access("/usr/bin/git", X_OK) != 0)
                skip();
        make_s();
        wdir(at("host/.git"));
        wfile(at("host/.git/HEAD"), "ref: refs/heads/main\n", 0644);
        wdir(at("state/sessions/s/0/upper/.git"));
        wfile(at("state/sessions/s/0/upper/.git/HEAD"), "ref: refs/heads/other\n", 0644);
        wfile(at("state/sessions/s/0/upper/.git/COMMIT_EDITMSG"), "two\n", 0644);
        wfile(at("state/sessions/s/0/upper/new/.git"), "gitdir: ../.git/modules/new\n", 0644);
        wfile(at("state/sessions/s/0/upper/.gitignore"), "*.o\n", 0644); /* not the store */
        /* renamed into .git and out of it: the side outside is still a change */
        wfile(at("host/stash"), "stashed away\n", 0644);
        whiteout(at("state/sessions/s/0/upper/stash"));
        wfile(at("state/sessions/s/0/upper/.git/stash"), "stashed away\n", 0644);
        wfile(at("host/.git/description"), "a repository\n", 0644);
        whiteout(at("state/sessions/s/0/upper/.git/description"));
        wfile(at("state/sessions/s/0/upper/description"), "a repository\n", 0644);
        r = stockade("diff", "s", NULL);
        if (!strstr(r.out, "R stash -> .git/stash\n") ||
            !strstr(r.out, "R .git/description -> description\n"))
                fail_msg("the renames are not proven:\n%s", r.out);
        runner_free(&r);
        r = stockade("diff", "s", "--patch", NULL);
        assert_int_equal(r.exit_code, 0);
        if (strstr(r.out, ".git/") || strstr(r.out, "new/.git") ||
            !strstr(r.out, "b/.gitignore\nnew file mode") ||
            !strstr(r.out, "diff --git a/stash b/stash\ndeleted file mode 100644\n") ||
            !strstr(r.out, "diff --git a/description b/description\nnew file mode 100644\n") ||
            !strstr(r.err, "5 changes inside .git are not in the patch") ||
            !strstr(r.err, ": .git (4), new/.git (1);"))
                fail_msg("stdout:\n%s\nstderr:\n%s", r.out, r.err);
        p = fopen(at("patch"), "we");
        fputs(r.out, p);
        fclose(p);
        runner_free(&r);
        assert_int_equal(runner_shell("cp -a '%s/host' '%s/copy'", W, W), 0);
        argv[2] = (char *)at("copy");
        argv[5] = (char *)at("patch");
        assert_int_equal(runner_run(argv, NULL, 60, &g), 0);
        if (g.exit_code != 0)
                fail_msg("git apply --check: %s", g.err);
        runner_free(&g);
}

/* /proc/PID/fd/N's target, "" when it cannot be read. */
static void fd_target(pid_t pid, int n, char *buf, size_t len)
{
        char link[64];
        ssize_t k;

        snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, n);
        k = readlink(link, buf, len - 1);
        buf[k > 0 ? k : 0] = '\0';
}

/* The pid of a child of `parent` named `comm`, or 0. */
static pid_t child_named(pid_t parent, const char *comm)
{
        DIR *d = opendir("/proc");
        pid_t found = 0;

        for (struct dirent *de; d && !found && (de = readdir(d));) {
                char path[300], line[256];
                bool named = false;
                FILE *f;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
                if (!(f = fopen(path, "re")))
                        continue;
                while (fgets(line, sizeof(line), f)) {
                        if (strncmp(line, "Name:\t", 6) == 0)
                                named = strncmp(line + 6, comm, strlen(comm)) == 0;
                        if (strncmp(line, "PPid:\t", 6) == 0 && named && atoi(line + 6) == parent)
                                found = atoi(de->d_name);
                }
                fclose(f);
        }
        if (d)
                closedir(d);
        return found;
}

/*
 * The diff program --patch runs holds nothing of stockade's but the two files and its pipe:
 * run for another user's session it is that user's process, which they may trace (an outside
 * attack took root's stdout and terminal from it). Watched from outside while it works on a
 * large change: its stdout and stderr are not stockade's, and its environment not the
 * caller's.
 */
static void diff_patch_child_holds_nothing(void **state)
{
        char out_s[PATH_MAX], out_c[PATH_MAX], err_s[PATH_MAX], err_c[PATH_MAX], buf[65536];
        FILE *a, *b;
        pid_t pid, child = 0;
        int st, fd, out[2];

        make_s();
        a = fopen(at("host/big"), "we");
        b = fopen(at("state/sessions/s/0/upper/big"), "we");
        assert_true(a && b);
        for (int i = 0; i < 200000; i++) {
                fprintf(a, "%d\n", i);
                fprintf(b, i % 3 ? "%d\n" : "y%d\n", i);
        }
        fclose(a);
        fclose(b);
        /* stockade's stdout a pipe not read until the look: the patch, far larger than the
         * pipes, holds stockade and its diff child (whichever writes it) at work meanwhile */
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        assert_int_equal(setenv("STOCKADE_TEST_MARKER", "callers-own", 1), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                fd = open(at("patch.err"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (fd < 0 || dup2(out[1], 1) < 0 || dup2(fd, 2) < 0)
                        _exit(99);
                execl(runner_stockade(), "stockade", "diff", "--patch", "s", "--state-dir", STATE,
                      (char *)NULL);
                _exit(98);
        }
        close(out[1]);
        unsetenv("STOCKADE_TEST_MARKER");
        /* the child for `big`, held by the full pipe (those for the small files come and go) */
        out_c[0] = '\0';
        for (int i = 0; i < 3000 && !out_c[0]; i++) {
                child = child_named(pid, "diff");
                if (child) {
                        usleep(100000);
                        fd_target(child, 1, out_c, sizeof(out_c));
                }
                if (!out_c[0])
                        usleep(2000);
        }
        if (out_c[0]) {
                char env[PATH_MAX];
                ssize_t n = 0;

                fd_target(pid, 1, out_s, sizeof(out_s));
                fd_target(pid, 2, err_s, sizeof(err_s));
                fd_target(child, 2, err_c, sizeof(err_c));
                snprintf(env, sizeof(env), "/proc/%d/environ", (int)child);
                fd = open(env, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        n = read(fd, env, sizeof(env) - 1);
                        close(fd);
                }
                env[n > 0 ? n : 0] = '\0';
                for (ssize_t k = 0; k + 1 < n; k++)
                        if (!env[k])
                                env[k] = ' ';
                if (out_c[0] && (strcmp(out_s, out_c) == 0 || strcmp(err_s, err_c) == 0 ||
                                 strstr(env, "callers-own")))
                        fail_msg("the diff child holds stockade's: stdout %s / %s, stderr %s / "
                                 "%s, environment %s",
                                 out_s, out_c, err_s, err_c, env);
        }
        while (read(out[0], buf, sizeof(buf)) > 0)
                ;
        close(out[0]);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (!child || !out_c[0])
                fail_msg("the diff child was not seen at work (child %d, its stdout `%s`)",
                         (int)child, child ? out_c : "");
}

static void diff_patch_names_binary(void **state)
{
        struct run_result r;

        make_s();
        wfile(at("state/sessions/s/0/upper/bin"), "a\001b", 0644);
        assert_int_equal(truncate(at("state/sessions/s/0/upper/bin"), 64), 0); /* NULs */
        r = stockade("diff", "s", "--patch", NULL);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "\nBinary files /dev/null and b/bin differ (not in this "
                                      "patch; stockade apply writes it)\n"));
        assert_null(strstr(r.out, "a/bin b/bin"));
        assert_non_null(strstr(r.err, "1 binary file is not in the patch"));
        assert_non_null(strstr(r.err, "stockade apply s PATH..."));
        runner_free(&r);
}

/* A tool run in `dir` (NULL-terminated arguments); its exit code, its stderr on failure. */
static int tool(const char *dir, const char *a0, ...)
{
        const char *argv[16] = {a0};
        struct run_result g;
        size_t n = 1;
        char cwd[PATH_MAX];
        va_list ap;
        int code;

        va_start(ap, a0);
        while ((argv[n] = va_arg(ap, const char *)))
                n++;
        va_end(ap);
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_int_equal(chdir(dir), 0);
        assert_int_equal(runner_run((char *const *)argv, NULL, 60, &g), 0);
        assert_int_equal(chdir(cwd), 0);
        code = g.exit_code;
        if (code != 0)
                print_message("%s: exit %d: %s%s\n", a0, code, g.out, g.err);
        runner_free(&g);
        return code;
}

/*
 * Binary changes of every kind (M, A, D, T, one right after a change with no hunk, which
 * git reads a "Binary files ... differ" line after as that change's body): git apply (and
 * --check) and patch -p1 take the patch, write the text changes, leave the binary files
 * as they are; each binary file is named, and stderr counts them.
 */
static void diff_patch_binary_through_git(void **state)
{
        struct run_result r;
        _cleanup_free_ char *mod = NULL, *f = NULL, *b1 = NULL;
        const char *patch_bin = "/usr/bin/patch";
        char cmd[PATH_MAX * 3];

        if (access("/usr/bin/git", X_OK) != 0)
                skip();
        make_s();
        wbin(at("host/bin1"), "one");
        wbin(at("host/bin2"), "two");
        wbin(at("host/bin3"), "three");
        wbin(at("state/sessions/s/0/upper/bin1"), "ONE");                          /* M */
        whiteout(at("state/sessions/s/0/upper/bin2"));                             /* D */
        assert_int_equal(symlink("bin1", at("state/sessions/s/0/upper/bin3")), 0); /* T */
        wbin(at("state/sessions/s/0/upper/exf"), "new"); /* A, after M exe (mode) */
        r = stockade("diff", "s", "--patch", NULL);
        assert_int_equal(r.exit_code, 0);
        p_write(at("patch"), r.out);
        snprintf(cmd, sizeof(cmd), "cp -a '%s/host' '%s/copy' && cp -a '%s/host' '%s/copy2'", W, W,
                 W, W);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(tool(at("copy"), "/usr/bin/git", "apply", "--check", at("patch"), NULL),
                         0);
        assert_int_equal(tool(at("copy"), "/usr/bin/git", "apply", at("patch"), NULL), 0);
        assert_non_null(strstr(r.out, "\nBinary files a/bin1 and b/bin1 differ (not in"));
        assert_non_null(strstr(r.out, "\nBinary files a/bin2 and /dev/null differ (not in"));
        assert_non_null(strstr(r.out, "\nBinary files a/bin3 and b/bin3 differ (not in"));
        assert_non_null(strstr(r.out, "new mode 100755\nBinary files /dev/null and b/exf differ "
                                      "(not in this patch; stockade apply writes it)\n"));
        assert_null(strstr(r.out, "diff --git a/bin"));
        assert_non_null(strstr(r.err, "4 binary files are not in the patch"));
        assert_non_null(strstr(r.out, "-two\n+2\n"));
        runner_free(&r);
        mod = slurp(at("copy/mod"));
        f = slurp(at("copy/new/f"));
        b1 = slurp(at("copy/bin1"));
        assert_string_equal(mod, "one\n2\nthree\n");
        assert_string_equal(f, "fresh\n");
        assert_memory_equal(b1, "\177ELF\0\0one", 9); /* the host's: not in the patch */
        assert_true(exists(at("copy/bin2")) && !exists(at("copy/exf")));
        assert_int_equal(mode_of(at("copy/exe")), 0755);
        if (access(patch_bin, X_OK) == 0) {
                free(mod);
                assert_int_equal(tool(at("copy2"), patch_bin, "-p1", "-s", "-i", at("patch"), NULL),
                                 0);
                mod = slurp(at("copy2/mod"));
                assert_string_equal(mod, "one\n2\nthree\n");
                assert_true(exists(at("copy2/bin2")) && !exists(at("copy2/exf")));
        }
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

/*
 * Session "ro": read-only host directories (555) the run wrote in, as a run does it:
 *   rod    made writable (755), then filled: rod/x, rod/d/
 *   d      `chmod u+w d; touch d/f; chmod u-w d`: stays 555, holds f
 *   k      the same with a removal (k/h) and a file kept (k/m)
 *   ro2/in nested: ro2/in/z, both directories 555 again afterwards
 *   mv1 -> mv2  a rename between two read-only directories
 *   nd/sub/f    new directories the run made read-only (555)
 *   new    a new file beside them
 */
static const char *const ro_dirs[] = {"rod", "d", "k", "ro2/in", "ro2", "mv1", "mv2", NULL};

static void make_ro(void)
{
        static const char *const jr[] = {"rod",    "d",   "k",        "k/h", "ro2",
                                         "ro2/in", "mv1", "mv1/file", "mv2", NULL};
        const char *const u[] = {"rod",    "rod/d", "d",   "k",  "ro2",
                                 "ro2/in", "mv1",   "mv2", "nd", "nd/sub"};

        wdir(at("host"));
        for (const char *const *d = ro_dirs; *d; d++)
                assert_int_equal(runner_shell("mkdir -p '%s/host/%s'", W, *d), 0);
        wfile(at("host/k/h"), "h\n", 0644);
        wfile(at("host/k/m"), "m\n", 0644);
        wfile(at("host/mv1/file"), "moving\n", 0644);
        for (const char *const *d = ro_dirs; *d; d++)
                assert_int_equal(chmod(at("host/%s", *d), 0555), 0);
        session("ro", false, 1700000000, "sh");
        journal("ro", 0, at("host"), jr);
        for (size_t i = 0; i < ARRAY_SIZE(u); i++)
                wdir(at("state/sessions/ro/0/upper/%s", u[i]));
        wfile(at("state/sessions/ro/0/upper/new"), "n\n", 0644);
        wfile(at("state/sessions/ro/0/upper/rod/x"), "x\n", 0644);
        wfile(at("state/sessions/ro/0/upper/d/f"), "f\n", 0644);
        whiteout(at("state/sessions/ro/0/upper/k/h"));
        wfile(at("state/sessions/ro/0/upper/ro2/in/z"), "z\n", 0644);
        whiteout(at("state/sessions/ro/0/upper/mv1/file"));
        wfile(at("state/sessions/ro/0/upper/mv2/file"), "moving\n", 0644);
        wfile(at("state/sessions/ro/0/upper/nd/sub/f"), "deep\n", 0644);
        for (size_t i = 2; i < ARRAY_SIZE(u); i++) /* all but rod and rod/d: 555 again */
                assert_int_equal(chmod(at("state/sessions/ro/0/upper/%s", u[i]), 0555), 0);
}

/* The host as the native run leaves it, and "ro" empty. */
static void ro_applied(void)
{
        static const char *const files[] = {"new",      "rod/x",    "d/f",     "k/m",
                                            "ro2/in/z", "mv2/file", "nd/sub/f"};
        struct run_result r;

        assert_int_equal(mode_of(at("host/rod")), 0755);
        assert_int_equal(mode_of(at("host/rod/d")), 0755);
        for (const char *const *d = ro_dirs + 1; *d; d++)
                if (mode_of(at("host/%s", *d)) != 0555)
                        fail_msg("%s: mode %o", *d, mode_of(at("host/%s", *d)));
        assert_int_equal(mode_of(at("host/nd")), 0555);
        assert_int_equal(mode_of(at("host/nd/sub")), 0555);
        for (size_t i = 0; i < ARRAY_SIZE(files); i++)
                if (!exists(at("host/%s", files[i])))
                        fail_msg("%s: missing", files[i]);
        assert_false(exists(at("host/k/h")) || exists(at("host/mv1/file")));
        r = stockade("diff", "ro", NULL);
        expect(&r, 0, "", NULL);
}

/* Read-only host directories the run wrote in: apply makes the host what the run made. */
static void apply_readonly_dirs(void **state)
{
        struct run_result r;

        make_ro();
        as_user();
        r = stockade("apply", "ro", NULL);
        assert_non_null(strstr(r.out, "applied 11 changes to "));
        expect(&r, 0, NULL, NULL);
        ro_applied();
}

/*
 * The host as an apply killed half-way leaves it (cowapply.h): d and k lent their write bit
 * (755), d/f written, k/h removed, nd made with the mode it has until the end (755: the
 * session's 555 and the owner's write bit). The next apply finishes, no conflict.
 */
static void apply_readonly_after_crash(void **state)
{
        struct run_result r;

        make_ro();
        assert_int_equal(chmod(at("host/d"), 0755), 0);
        assert_int_equal(chmod(at("host/k"), 0755), 0);
        wfile(at("host/d/f"), "f\n", 0644);
        same_times(at("state/sessions/ro/0/upper/d/f"), at("host/d/f")); /* as apply writes */
        assert_int_equal(unlink(at("host/k/h")), 0);
        assert_int_equal(mkdir(at("host/nd"), 0755), 0);
        assert_int_equal(chmod(at("host/nd"), 0755), 0); /* whatever the umask */
        as_user();
        r = stockade("apply", "ro", NULL);
        expect(&r, 0, NULL, NULL);
        ro_applied();
}

/* `strace -f -qq -o /dev/null -e inject=renameat:SPEC` before stockade, or NULL to skip (no
 * strace, or no ptrace here). */
static const char *const *under_strace_of(const char *call, const char *spec)
{
        static char inject[64];
        static const char *pre[] = {"/usr/bin/strace", "-f", "-qq",  "-o",
                                    "/dev/null",       "-e", inject, NULL};
        struct run_result r;

        snprintf(inject, sizeof(inject), "inject=%s:%s", call, spec);
        if (access(pre[0], X_OK) != 0)
                return NULL;
        r = stockade_under(pre, "help", NULL); /* ptrace allowed? (no rename in it) */
        runner_free(&r);
        return r.exit_code == 0 ? pre : NULL;
}

static const char *const *under_strace(const char *spec)
{
        return under_strace_of("renameat", spec);
}

/*
 * A write that fails half-way (EIO at the fourth rename into place: d/f, mv2/file and
 * nd/sub/f went, `new` did not): the lent directories get their modes back at once, the
 * rest stays; apply again finishes.
 */
static void apply_readonly_interrupted(void **state)
{
        const char *const *strace;
        struct run_result r;

        make_ro();
        as_user();
        if (!(strace = under_strace("error=EIO:when=4")))
                skip();
        r = stockade_under(strace, "apply", "ro", NULL);
        expect(&r, 125, "", "writing new in");
        assert_true(exists(at("host/d/f")) && exists(at("host/mv2/file"))); /* partly applied */
        assert_false(exists(at("host/new")) || exists(at("host/mv1/file")));
        for (const char *const *d = ro_dirs; *d; d++) /* lent, and given back; rod's 755 last */
                if (mode_of(at("host/%s", *d)) != 0555)
                        fail_msg("%s: mode %o", *d, mode_of(at("host/%s", *d)));
        r = stockade("apply", "ro", NULL);
        expect(&r, 0, NULL, NULL);
        ro_applied();
}

/* The same apply killed there (SIGKILL: nothing given back, the directories still lent):
 * apply again finishes, no conflict. */
static void apply_readonly_killed(void **state)
{
        const char *const *strace;
        struct run_result r;

        make_ro();
        as_user();
        if (!(strace = under_strace("signal=SIGKILL:when=4")))
                skip();
        r = stockade_under(strace, "apply", "ro", NULL);
        assert_int_equal(r.exit_code, 128 + 9);
        runner_free(&r);
        assert_true(exists(at("host/d/f")) && !exists(at("host/new")));
        assert_int_equal(mode_of(at("host/d")), 0755); /* lent */
        r = stockade("apply", "ro", NULL);
        expect(&r, 0, NULL, NULL);
        ro_applied();
}

/*
 * The mount root read-only and the user's, a name to add in it: apply lends the root its write
 * bit. Killed there, the root is left lent; the root's mode is no entry of the diff, so only
 * the record of the lend, written before it, lets the next apply (or a discard) give the
 * mode back (an outside review found the root left 755 for good).
 */
static void root_lent_and_killed(void)
{
        const char *const *strace;
        struct run_result r;

        wdir(at("host"));
        wfile(at("host/f"), "old\n", 0644);
        session("rt", false, 1700000000, "sh");
        wfile(at("state/sessions/rt/0/upper/new"), "new\n", 0644);
        assert_int_equal(chmod(at("host"), 0555), 0);
        as_user();
        if (!(strace = under_strace("signal=SIGKILL:when=1")))
                skip();
        if (geteuid() == 0 && !user_run)
                skip(); /* root lends nothing */
        r = stockade_under(strace, "apply", "rt", NULL);
        assert_int_equal(r.exit_code, 128 + 9);
        runner_free(&r);
        assert_int_equal(mode_of(at("host")), 0755); /* lent, and killed */
        assert_false(exists(at("host/new")));
}

static void apply_readonly_root_killed(void **state)
{
        struct run_result r;

        root_lent_and_killed();
        r = stockade("apply", "rt", NULL);
        expect(&r, 0, NULL, NULL);
        assert_int_equal(mode_of(at("host")), 0555);
        assert_true(exists(at("host/new")));
        assert_false(exists(at("state/sessions/rt/0/lent")));
        r = stockade("diff", "rt", NULL);
        expect(&r, 0, "", NULL);
}

static void discard_after_killed_apply(void **state)
{
        struct run_result r;

        root_lent_and_killed();
        r = stockade("discard", "rt", NULL);
        expect(&r, 0, "", NULL);
        assert_int_equal(mode_of(at("host")), 0555);
        assert_false(exists(at("host/new")) || exists(at("state/sessions/rt")));
}

/*
 * As root, a session in a store another user owns is applied as that user: the session's
 * files are theirs to write, and a mount line pointed at a directory of root's must not
 * make root write there (an outside review planted a file so).
 */
static void apply_as_the_owner(void **state)
{
        struct run_result r;

        if (geteuid() != 0)
                skip();
        assert_int_equal(chmod(W, 0755), 0); /* the user reaches its store */
        wdir(at("rootdir"));
        session_at("ev", at("rootdir"), false, 1700000000, "sh");
        wfile(at("state/sessions/ev/0/upper/planted"), "p\n", 0644);
        assert_int_equal(runner_shell("chown -R 65534:65534 '%s/state'", W), 0);
        r = stockade("apply", "ev", NULL); /* as root */
        if (r.exit_code != 125 || !strstr(r.err, "belongs to uid 65534") ||
            !strstr(r.err, "working as that user") || !strstr(r.err, "cannot write in"))
                fail_msg("exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        assert_false(exists(at("rootdir/planted")));
        /* a directory of the user's: written, and the user's */
        wdir(at("mine"));
        assert_int_equal(chown(at("mine"), 65534, 65534), 0);
        session_at("ok", at("mine"), false, 1700000000, "sh");
        wfile(at("state/sessions/ok/0/upper/f"), "f\n", 0644);
        assert_int_equal(runner_shell("chown -R 65534:65534 '%s/state'", W), 0);
        r = stockade("apply", "ok", NULL);
        expect(&r, 0, NULL, NULL);
        {
                struct stat st;

                assert_int_equal(lstat(at("mine/f"), &st), 0);
                assert_int_equal(st.st_uid, 65534);
                /* the journal apply rewrote is the user's too */
                if (lstat(at("state/sessions/ok/0/journal"), &st) == 0)
                        assert_int_equal(st.st_uid, 65534);
        }
        r = stockade("discard", "ok", NULL);
        expect(&r, 0, "", "working as that user");
}

/*
 * As root, with a store whose path runs through a directory of the user's: the user swaps a
 * symlink there from a store of root's to their own while apply runs, between the look at
 * whose the store is and the reading of the session. Their session, read then, would have
 * root write where they chose (an outside attack did so, racing `~/.local`). strace holds
 * apply at its lock, after the look, while the test swaps: what apply reads must be the
 * store it judged, and a store reached through the user's directory is the user's.
 */
static void apply_root_store_swapped(void **state)
{
        const char *const *strace;
        char saved[sizeof(STATE)];
        struct run_result r;
        pid_t pid;
        int st;

        if (geteuid() != 0)
                skip();
        if (!(strace = under_strace_of("flock", "delay_enter=2000000")))
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        snprintf(saved, sizeof(saved), "%s", STATE);
        wdir(at("rootdir"));
        wdir(at("rootok"));
        /* root's own store, whose session writes a harmless file into root's directory */
        wdir(at("rootstore"));
        snprintf(STATE, sizeof(STATE), "%s", at("rootstore/st"));
        wdir(STATE);
        wdir(at("rootstore/st/sessions"));
        session_at("ev", at("rootok"), false, 1700000000, "sh");
        wfile(at("rootstore/st/sessions/ev/0/upper/harmless"), "h\n", 0644);
        /* the user's, whose session would plant a file in root's directory */
        wdir(at("u"));
        wdir(at("u/store"));
        snprintf(STATE, sizeof(STATE), "%s", at("u/store/st"));
        wdir(STATE);
        wdir(at("u/store/st/sessions"));
        session_at("ev", at("rootdir"), false, 1700000000, "sh");
        wfile(at("u/store/st/sessions/ev/0/upper/planted"), "p\n", 0644);
        assert_int_equal(symlink(at("rootstore"), at("u/s")), 0);
        assert_int_equal(symlink(at("u/store"), at("u/s2")), 0);
        assert_int_equal(runner_shell("chown -hR 65534:65534 '%s'", at("u")), 0);
        snprintf(STATE, sizeof(STATE), "%s", at("u/s/st")); /* like ~/.local/state/stockade */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) { /* the user, once apply looked and waits at its lock */
                usleep(700000);
                _exit(rename(at("u/s2"), at("u/s")) == 0 ? 0 : 1);
        }
        r = stockade_under(strace, "apply", "ev", NULL); /* as root */
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        snprintf(STATE, sizeof(STATE), "%s", saved);
        if (exists(at("rootdir/planted")))
                fail_msg("root wrote the swapped-in session: exit %d\n%s", r.exit_code, r.err);
        /* a path through the user's directory: the user's session, whatever it leads to */
        if (!strstr(r.err, "belongs to uid 65534") || exists(at("rootok/harmless")))
                fail_msg("not worked as the user: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
}

/*
 * As root, diff and sessions of another user's store work as that user too: a session whose
 * mount line names a directory only root may read must not have root print its files (an
 * outside attack read them so with `diff --patch`).
 */
static void diff_as_the_owner(void **state)
{
        struct run_result r;

        if (geteuid() != 0)
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("rootsecret"));
        wfile(at("rootsecret/key"), "root's secret\n", 0600);
        assert_int_equal(chmod(at("rootsecret"), 0700), 0);
        session_at("rev", at("rootsecret"), false, 1700000000, "sh");
        whiteout(at("state/sessions/rev/0/upper/key"));
        assert_int_equal(runner_shell("chown -R 65534:65534 '%s/state'", W), 0);
        r = stockade("diff", "--patch", "rev", NULL); /* as root */
        if (strstr(r.out, "root's secret") || !strstr(r.err, "working as that user"))
                fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.out, r.err);
        assert_int_equal(r.exit_code, 125);
        runner_free(&r);
        r = stockade("sessions", NULL);
        expect(&r, 0, NULL, "the session store belongs to uid 65534");
}

/*
 * A store another user has a hand in is refused where working as its owner cannot help:
 * root's run would make and write its session there (a user could lead those writes
 * elsewhere), and a user's apply would write what that other user put in it with the
 * caller's rights.
 */
static void store_of_another_refused(void **state)
{
        char saved[sizeof(STATE)];
        struct run_result r;

        if (geteuid() != 0)
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("u"));
        assert_int_equal(chown(at("u"), 65534, 65534), 0);
        r = cow_run(at("u/st"), NULL, at("ws"), "touch", at("ws/f"), NULL);
        if (r.exit_code != 125 || !strstr(r.err, "is another user's") || exists(at("u/st")))
                fail_msg("root's run in a user's store: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        /* a store in a directory of a third user's (65533), applied by 65534 */
        snprintf(saved, sizeof(saved), "%s", STATE);
        wdir(at("host"));
        wdir(at("o"));
        snprintf(STATE, sizeof(STATE), "%s", at("o/st"));
        wdir(STATE);
        wdir(at("o/st/sessions"));
        session_at("x", at("host"), false, 1700000000, "sh");
        wfile(at("o/st/sessions/x/0/upper/planted"), "p\n", 0644);
        as_user();
        if (!user_run)
                skip();
        assert_int_equal(chown(at("o"), 65533, 65533), 0);
        r = stockade("apply", "x", NULL);
        snprintf(STATE, sizeof(STATE), "%s", saved);
        if (r.exit_code != 125 || !strstr(r.err, "belongs to uid 65533, who could change") ||
            exists(at("host/planted")))
                fail_msg("65534's apply of a store 65533 holds: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
}

/*
 * As root, what root cannot tell the rights of is refused or left unread: a store in a
 * directory of root's that everyone may write (not sticky), a session of a uid with no user
 * entry (whose groups are unknown: the directory's group was taken, root's), and, in root's
 * own store, a session directory of another user's, which `sessions` names without reading.
 */
static void root_refuses_what_it_cannot_tell(void **state)
{
        char saved[sizeof(STATE)];
        struct run_result r;

        if (geteuid() != 0)
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        snprintf(saved, sizeof(saved), "%s", STATE);
        wdir(at("host"));
        wdir(at("pub"));
        assert_int_equal(chmod(at("pub"), 0777), 0);
        snprintf(STATE, sizeof(STATE), "%s", at("pub/st"));
        wdir(STATE);
        wdir(at("pub/st/sessions"));
        session_at("w", at("host"), false, 1700000000, "sh");
        wfile(at("pub/st/sessions/w/0/upper/planted"), "p\n", 0644);
        r = stockade("apply", "w", NULL);
        snprintf(STATE, sizeof(STATE), "%s", saved);
        if (r.exit_code != 125 || !strstr(r.err, "writable by everyone") ||
            exists(at("host/planted")))
                fail_msg("a store beneath a directory everyone writes: exit %d\n%s", r.exit_code,
                         r.err);
        runner_free(&r);
        /* no user entry: nothing done */
        session("nouser", false, 1700000000, "sh");
        wfile(at("state/sessions/nouser/0/upper/planted"), "p\n", 0644);
        if (getpwuid(4242))
                skip();
        assert_int_equal(runner_shell("chown -R 4242:0 '%s/state/sessions/nouser'", W), 0);
        r = stockade("apply", "nouser", NULL);
        if (r.exit_code != 125 || !strstr(r.err, "no user entry") || exists(at("host/planted")))
                fail_msg("a session of a uid without an entry: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        /* in root's store, a session of 65534's: named, not read */
        session("theirs", false, 1700000000, "secret-command");
        assert_int_equal(runner_shell("chown -R 65534:65534 '%s/state/sessions/theirs'", W), 0);
        r = stockade("sessions", NULL);
        if (r.exit_code != 0 || !strstr(r.out, "uid 65534's session") ||
            strstr(r.out, "secret-command"))
                fail_msg("sessions: exit %d\n%s\n%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/*
 * stockade run takes a store, its `sessions` and a continued session only when they are the
 * caller's and writable by nobody else: in a store others may write, another user could put
 * a session of theirs under the name the caller continues, and the caller's run would run
 * their files (an outside attack ran a planted build script as root so).
 */
static void run_refuses_a_shared_store(void **state)
{
        struct run_result r;

        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("pub"));
        assert_int_equal(chmod(at("pub"), 01777), 0);
        wdir(at("pub/sessions"));
        assert_int_equal(chmod(at("pub/sessions"), 01777), 0);
        /* the planted session: its upper holds the script the run would then find */
        wdir(at("pub/sessions/x"));
        wdir(at("pub/sessions/x/0"));
        wdir(at("pub/sessions/x/0/upper"));
        wfile(at("pub/sessions/x/0/upper/build.sh"), "touch \"$1\"\n", 0755);
        if (geteuid() == 0)
                assert_int_equal(runner_shell("chown -R 65534:65534 '%s/pub/sessions/x'", W), 0);
        r = cow_run(at("pub"), "x", at("ws"), "sh", at("ws/build.sh"), at("ran"), NULL);
        if (r.exit_code != 125 || !strstr(r.err, "writable by everyone") || exists(at("ran")))
                fail_msg("a run in a store everyone writes: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
}

/*
 * A directory on the store's path that a group may write (not root's, not the caller's
 * private one) is refused, whoever owns it: its members could swap the store under the run
 * (an outside attack did, through a group-writable ~/.local/state with umask 002).
 */
static void group_writable_path_refused(void **state)
{
        struct run_result r;

        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("g"));
        if (geteuid() == 0)
                assert_int_equal(chown(at("g"), 0, 100), 0);
        assert_int_equal(chmod(at("g"), 0775), 0);
        r = cow_run(at("g/st"), NULL, at("ws"), "true", NULL);
        if (r.exit_code != 125 || !strstr(r.err, "writable by its group") || exists(at("g/st")))
                fail_msg("a store beneath a group-writable directory: exit %d\n%s", r.exit_code,
                         r.err);
        runner_free(&r);
}

/*
 * Root with a HOME of another user's (a CI container run as root with the runner's home, or
 * sudo -E): the default store there is not one root may use, and a plain run must still work:
 * root keeps the session in its own home's store, and diff and discard find it there.
 */
static void root_default_store_in_a_users_home(void **state)
{
        extern char **environ;
        char home[PATH_MAX + 16], name[64], kept[PATH_MAX + 128], *envp[256];
        const char *argv[12];
        struct passwd *pw = getpwuid(0);
        struct run_result r;
        size_t n = 0;

        if (geteuid() != 0 || !pw)
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("u"));
        assert_int_equal(chown(at("u"), 65534, 65534), 0);
        snprintf(home, sizeof(home), "HOME=%s", at("u"));
        for (char **e = environ; *e && n < 254; e++)
                if (strncmp(*e, "HOME=", 5) != 0 && strncmp(*e, "XDG_STATE_HOME=", 15) != 0)
                        envp[n++] = *e;
        envp[n++] = home;
        envp[n] = NULL;
        snprintf(name, sizeof(name), "review-fallback-%d", (int)getpid());
        snprintf(kept, sizeof(kept), "%s/.local/state/stockade/sessions/%s", pw->pw_dir, name);
        argv[0] = runner_stockade(), argv[1] = "run", argv[2] = "--user", argv[3] = "root";
        argv[4] = "--session", argv[5] = name, argv[6] = "--cow", argv[7] = at("ws");
        argv[8] = "--", argv[9] = "touch", argv[10] = at("ws/f"), argv[11] = NULL;
        assert_int_equal(runner_run((char *const *)argv, envp, 60, &r), 0);
        if (r.exit_code != 0 || !strstr(r.err, "root keeps its sessions in") || !exists(kept) ||
            exists(at("u/.local")))
                fail_msg("root's run with a HOME of 65534's: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        argv[1] = "diff", argv[2] = name, argv[3] = NULL;
        assert_int_equal(runner_run((char *const *)argv, envp, 60, &r), 0);
        if (r.exit_code != 0 || !strstr(r.out, "ws/f\n"))
                fail_msg("diff: exit %d\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
        argv[1] = "discard";
        assert_int_equal(runner_run((char *const *)argv, envp, 60, &r), 0);
        assert_int_equal(r.exit_code, 0);
        runner_free(&r);
        assert_false(exists(kept));
}

/* A continued session whose mount directory became a symlink (to another tree) is refused:
 * the run would work in that tree (an outside attack ran its planted script so). */
static void continued_session_with_a_symlink(void **state)
{
        struct run_result r;

        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("elsewhere"));
        r = cow_run(STATE, "c", at("ws"), "true", NULL);
        expect(&r, 0, NULL, NULL);
        assert_int_equal(
                runner_shell("mv '%s/sessions/c/0' '%s/elsewhere/0' && ln -s '%s/elsewhere/0' "
                             "'%s/sessions/c/0'",
                             STATE, W, W, STATE),
                0);
        r = cow_run(STATE, "c", at("ws"), "true", NULL);
        expect(&r, 125, NULL, "is a symlink: not a session this run made");
}

/* As root, a trace in a directory another user has a hand in is refused: their symlink there
 * would lead root's truncating open to a file of root's (an outside attack did so). */
static void root_trace_in_a_users_directory(void **state)
{
        const char *argv[12];
        struct run_result r;

        if (geteuid() != 0)
                skip();
        assert_int_equal(chmod(W, 0755), 0);
        wdir(at("ws"));
        wdir(at("u"));
        wdir(at("rootonly"));
        assert_int_equal(chmod(at("rootonly"), 0700), 0);
        wfile(at("rootonly/run.trace"), "root's\n", 0644);
        assert_int_equal(symlink(at("rootonly"), at("u/traces")), 0);
        assert_int_equal(runner_shell("chown -hR 65534:65534 '%s'", at("u")), 0);
        argv[0] = runner_stockade(), argv[1] = "run", argv[2] = "--user", argv[3] = "root";
        argv[4] = "--trace", argv[5] = at("u/traces/run.trace"), argv[6] = "--rw";
        argv[7] = at("ws"), argv[8] = "--", argv[9] = "true", argv[10] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 60, &r), 0);
        if (r.exit_code != 125 || !strstr(r.err, "write traces into a directory of root's"))
                fail_msg("exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        assert_int_equal(mode_of(at("rootonly/run.trace")), 0644);
}

/*
 * A session file or journal that is a FIFO (or a symlink) is damage, not something to wait
 * on: diff says so at once (an outside attack held root's diff and apply forever so).
 */
static void fifo_in_a_session(void **state)
{
        const char *argv[8];
        struct run_result r;

        make_s();
        assert_int_equal(unlink(at("state/sessions/s/session")), 0);
        assert_int_equal(mkfifo(at("state/sessions/s/session"), 0600), 0);
        argv[0] = runner_stockade(), argv[1] = "diff", argv[2] = "s", argv[3] = "--state-dir";
        argv[4] = STATE, argv[5] = NULL;
        assert_int_equal(runner_run((char *const *)argv, NULL, 10, &r), 0);
        if (r.exit_code != 125 || !strstr(r.err, "is damaged"))
                fail_msg("a FIFO for the session file: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
        /* a message naming a path someone else chose: its control bytes escaped */
        argv[4] = at("no\033[31mstore");
        assert_int_equal(runner_run((char *const *)argv, NULL, 10, &r), 0);
        if (r.exit_code != 125 || strchr(r.err, '\033') || !strstr(r.err, "no\\x1b[31mstore"))
                fail_msg("an escape in a message: exit %d\n%s", r.exit_code, r.err);
        runner_free(&r);
}

/*
 * As root, a new directory takes the owner and group of the directory it is made in: a
 * set-group-ID bit from the session would then hand root's group to every file made in it.
 * Withheld, unless the host gives it anyway (a set-group-ID parent).
 */
static void apply_root_no_setgid_dir(void **state)
{
        struct run_result r;

        if (geteuid() != 0)
                skip();
        wdir(at("host"));
        wdir(at("host/spool"));
        assert_int_equal(chmod(at("host/spool"), 01777), 0);
        wdir(at("host/team"));
        assert_int_equal(chmod(at("host/team"), 02775), 0);
        session("sg", false, 1700000000, "sh");
        wdir(at("state/sessions/sg/0/upper/spool"));
        assert_int_equal(chmod(at("state/sessions/sg/0/upper/spool"), 01777), 0);
        wdir(at("state/sessions/sg/0/upper/spool/d"));
        assert_int_equal(chmod(at("state/sessions/sg/0/upper/spool/d"), 03777), 0);
        wdir(at("state/sessions/sg/0/upper/team"));
        assert_int_equal(chmod(at("state/sessions/sg/0/upper/team"), 02775), 0);
        wdir(at("state/sessions/sg/0/upper/team/n"));
        assert_int_equal(chmod(at("state/sessions/sg/0/upper/team/n"), 02755), 0);
        r = stockade("apply", "sg", NULL);
        expect(&r, 0, NULL, NULL);
        assert_int_equal(mode_of(at("host/spool/d")), 01777);
        assert_int_equal(mode_of(at("host/team/n")), 02755); /* inherited, as natively */
}

/*
 * A directory apply must write in and cannot (read-only to the user, another user's: no
 * write bit to lend): named before anything is written, --force or not. As root, stockade
 * runs as 65534 and the directory is root's; unprivileged, the mount is `/` and the
 * directory /etc.
 */
static void apply_refuses_foreign_dir(void **state)
{
        char host[PATH_MAX], dir[PATH_MAX], want[PATH_MAX + 64];
        const char *rel = "sys"; /* dir, relative to host */
        struct run_result r;
        struct stat st;

        snprintf(host, sizeof(host), "%s", at("host"));
        snprintf(dir, sizeof(dir), "%s", at("host/sys"));
        wdir(host);
        wdir(dir);
        if (geteuid() != 0) {
                if (access("/etc", W_OK) == 0 || stat("/etc", &st) != 0)
                        skip();
                snprintf(host, sizeof(host), "/");
                snprintf(dir, sizeof(dir), "/etc");
                rel = "etc";
        }
        session_at("f", host, false, 1700000000, "sh");
        if (geteuid() == 0) /* beside: apply could write it, and must not */
                wfile(at("state/sessions/f/0/upper/new"), "n\n", 0644);
        wdir(at("state/sessions/f/0/upper/%s", rel));
        wfile(at("state/sessions/f/0/upper/%s/planted", rel), "p\n", 0644);
        if (geteuid() != 0) /* the same mode as /etc: no change of it to apply */
                assert_int_equal(chmod(at("state/sessions/f/0/upper/etc"), st.st_mode & 07777), 0);
        as_user();
        if (geteuid() == 0 && !user_run)
                skip();
        if (geteuid() == 0)
                assert_int_equal(chown(dir, 0, 0), 0);
        snprintf(want, sizeof(want), "apply: cannot write in %s: read-only to you, and not yours",
                 dir);
        for (int force = 0; force < 2; force++) {
                r = stockade("apply", "f", force ? "--force" : NULL, NULL);
                if (r.exit_code != 125 || !strstr(r.err, want) ||
                    !strstr(r.err, "nothing applied, 1 directory it cannot write in"))
                        fail_msg("exit %d\n%s", r.exit_code, r.err);
                runner_free(&r);
                assert_false(exists(at("host/new")) || exists(at("host/sys/planted")));
                assert_false(geteuid() != 0 && exists("/etc/planted"));
        }
        r = stockade("diff", "f", NULL);
        assert_non_null(strstr(r.out, "planted\n")); /* all still in the session */
        runner_free(&r);
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
        /* and the directory its changes are for: two runs of one command in two projects
         * looked alike */
        {
                char where[PATH_MAX + 32];

                snprintf(where, sizeof(where), " 5B  python3 task.py  in %s\n", at("host"));
                assert_non_null(strstr(nw, where));
        }
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

        user_run = false;
        snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", W, W);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(diff_text_and_json, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_through_git, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_leaves_out_git, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_names_binary, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_child_holds_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_patch_binary_through_git, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_all, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_conflict_then_force, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_readonly_dirs, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_readonly_after_crash, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_readonly_interrupted, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_readonly_killed, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_readonly_root_killed, setup, teardown),
                cmocka_unit_test_setup_teardown(discard_after_killed_apply, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_as_the_owner, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_root_no_setgid_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(apply_root_store_swapped, setup, teardown),
                cmocka_unit_test_setup_teardown(diff_as_the_owner, setup, teardown),
                cmocka_unit_test_setup_teardown(store_of_another_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(root_refuses_what_it_cannot_tell, setup, teardown),
                cmocka_unit_test_setup_teardown(run_refuses_a_shared_store, setup, teardown),
                cmocka_unit_test_setup_teardown(fifo_in_a_session, setup, teardown),
                cmocka_unit_test_setup_teardown(group_writable_path_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(continued_session_with_a_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(root_trace_in_a_users_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(root_default_store_in_a_users_home, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(apply_refuses_foreign_dir, setup, teardown),
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

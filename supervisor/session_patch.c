/*
 * `stockade diff --json` and `stockade diff --patch`.
 *
 * The patch is in git's format, for `git apply` in the host directory (`-p1`): a header per
 * file (`diff --git a/P b/P`, new/deleted file mode, old/new mode, rename from/to), then
 * the text hunks, which diff(1) writes (`diff -u -a --label`), reading the two files
 * through /dev/fd so that no path is looked up again. A file with a NUL in its first
 * 8000 bytes (git's test) is named as binary, not included. Directories have no entry of
 * their own (git has none); a new empty directory is not in the patch, nor a mode change
 * git cannot say (only the executable bit exists for it), nor a FIFO, socket or device.
 */
#include "supervisor/session_cli_int.h"
#include "supervisor/trace_json.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- JSON -------------------------------------------------------------------------------- */

static void json_mode(FILE *out, const char *key, mode_t mode)
{
        fprintf(out, ", \"%s\": \"%o\"", key, (unsigned)mode);
}

static void json_change(FILE *out, const struct cow_change *c, const char *mount)
{
        char op[2] = {c->op, '\0'};
        bool modes = c->mode != c->old_mode;
        bool links = c->type == 'l' || (c->op == COW_DEL && c->old_type == 'l');

        fputs("{\"op\": ", out);
        json_string(out, op);
        fputs(", \"path\": ", out);
        json_string(out, c->path);
        if (c->old_path) {
                fputs(", \"old_path\": ", out);
                json_string(out, c->old_path);
        }
        fprintf(out, ", \"type\": \"%s\"",
                cowdiff_type_name(c->op == COW_DEL ? c->old_type : c->type));
        if (c->op == COW_TYPE)
                fprintf(out, ", \"old_type\": \"%s\"", cowdiff_type_name(c->old_type));
        if (c->op == COW_MOD)
                fprintf(out, ", \"content\": %s, \"times\": %s", c->content ? "true" : "false",
                        c->times ? "true" : "false");
        /* the modes that mean something: not a symlink's, and for M and R only when changed */
        if (!links && (c->op == COW_DEL || c->op == COW_TYPE ||
                       ((c->op == COW_MOD || c->op == COW_REN) && modes)))
                json_mode(out, "mode_from", c->old_mode);
        if (!links && (c->op == COW_ADD || c->op == COW_TYPE ||
                       ((c->op == COW_MOD || c->op == COW_REN) && modes)))
                json_mode(out, "mode_to", c->mode);
        if (c->target) {
                fputs(", \"target\": ", out);
                json_string(out, c->target);
        }
        fputs(", \"mount\": ", out);
        json_string(out, mount);
        fputc('}', out);
}

void sess_print_json(FILE *out, const struct sess *s)
{
        bool first = true;

        fputc('[', out);
        for (size_t i = 0; i < s->n; i++)
                for (size_t k = 0; k < s->mounts[i].diff.n; k++) {
                        const struct cow_change *c = &s->mounts[i].diff.v[k];

                        if (c->op == COW_SAME)
                                continue;
                        fputs(first ? "\n  " : ",\n  ", out);
                        json_change(out, c, s->mounts[i].m->sandbox);
                        first = false;
                }
        fputs(first ? "]\n" : "\n]\n", out);
}

/* ---- the patch --------------------------------------------------------------------------- */

/* One side of a file's entry: where it is, what it is. */
struct side {
        int root; /* upper or host fd; -1: /dev/null */
        const char *path;
        char type;   /* 'f' or 'l' */
        mode_t mode; /* permission bits */
};

/* "a/" or "b/" + the mount's place + the path, C-quoted if it needs to be. */
static void patch_name(FILE *out, const char *ab, const char *place, const char *path)
{
        _cleanup_free_ char *full = NULL;

        if (asprintf(&full, "%s%s%s", ab, place, path) < 0)
                abort();
        cowdiff_quote(out, full);
}

static char *patch_label(const char *ab, const char *place, const char *path)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                abort();
        patch_name(f, ab, place, path);
        fclose(f);
        return buf;
}

static unsigned git_mode(const struct side *s)
{
        return s->type == 'l' ? 0120000 : s->mode & 0100 ? 0100755 : 0100644;
}

/* The content of a side: a regular file's fd in *fd, or a symlink's target in buf (*fd -1;
 * *len 0 for /dev/null). Returns 0 or -errno. */
static int side_open(const struct side *s, int *fd, char *buf, size_t *len)
{
        int lfd;
        ssize_t n;

        *fd = -1;
        *len = 0;
        if (s->root < 0)
                return 0;
        if (s->type == 'f') {
                *fd = cowdiff_open(s->root, s->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
                return *fd < 0 ? *fd : 0;
        }
        lfd = cowdiff_open(s->root, s->path, O_PATH | O_NOFOLLOW);
        if (lfd < 0)
                return lfd;
        n = readlinkat(lfd, "", buf, PATH_MAX);
        close(lfd);
        if (n < 0)
                return -errno;
        *len = (size_t)n;
        return 0;
}

static bool binary_fd(int fd)
{
        char buf[8000];
        ssize_t n = fd < 0 ? 0 : pread(fd, buf, sizeof(buf), 0);

        return n > 0 && memchr(buf, '\0', (size_t)n);
}

/* A symlink's target as hunk lines ("+target" and git's no-newline marker). */
static void link_lines(FILE *out, char sign, const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                const char *nl = memchr(s + i, '\n', n - i);
                size_t end = nl ? (size_t)(nl - s) : n;

                fputc(sign, out);
                fwrite(s + i, 1, end - i, out);
                fputc('\n', out);
                if (!nl)
                        fputs("\\ No newline at end of file\n", out);
                i = end + 1;
        }
}

static size_t count_lines(const char *s, size_t n)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += s[i] == '\n';
        return k + (n && s[n - 1] != '\n');
}

static void range(FILE *out, char sign, size_t lines)
{
        if (lines == 1)
                fprintf(out, " %c1", sign);
        else
                fprintf(out, " %c%zu,%zu", sign, lines ? (size_t)1 : (size_t)0, lines);
}

/* Hunks of two symlinks' targets (or one and nothing), written here: one line each. */
static void link_hunk(FILE *out, const char *la, const char *lb, const char *a, size_t na,
                      const char *b, size_t nb)
{
        fprintf(out, "--- %s\n+++ %s\n@@", la, lb);
        range(out, '-', count_lines(a, na));
        range(out, '+', count_lines(b, nb));
        fputs(" @@\n", out);
        link_lines(out, '-', a, na);
        link_lines(out, '+', b, nb);
}

/* diff -u -a of two fds (-1: /dev/null), its output straight to out's fd. */
static int run_diff(FILE *out, int fa, int fb, const char *la, const char *lb)
{
        char pa[32] = "/dev/null", pb[32] = "/dev/null";
        int status;
        pid_t pid;

        if (fa >= 0)
                snprintf(pa, sizeof(pa), "/dev/fd/%d", fa);
        if (fb >= 0)
                snprintf(pb, sizeof(pb), "/dev/fd/%d", fb);
        fflush(out);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (dup2(fileno(out), 1) < 0 || (fa >= 0 && fcntl(fa, F_SETFD, 0) < 0) ||
                    (fb >= 0 && fcntl(fb, F_SETFD, 0) < 0))
                        _exit(2);
                execlp("diff", "diff", "-u", "-a", "--label", la, "--label", lb, pa, pb,
                       (char *)NULL);
                execl("/usr/bin/diff", "diff", "-u", "-a", "--label", la, "--label", lb, pa, pb,
                      (char *)NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
                return -EIO; /* diff failed (127: not found) */
        return 0;
}

/* The hunks from side a to side b (either may be /dev/null: root -1). */
static int hunks(FILE *out, const struct side *a, const struct side *b, const char *la,
                 const char *lb)
{
        char ta[PATH_MAX], tb[PATH_MAX];
        size_t na, nb;
        _cleanup_close_ int fa = -1, fb = -1;
        int r = side_open(a, &fa, ta, &na);

        if (r < 0 || (r = side_open(b, &fb, tb, &nb)) < 0)
                return r;
        if (fa < 0 && fb < 0) { /* symlinks, or a symlink and nothing */
                if (na || nb)
                        link_hunk(out, la, lb, ta, na, tb, nb);
                return 0;
        }
        if (binary_fd(fa) || binary_fd(fb)) {
                fprintf(out, "Binary files %s and %s differ\n", la, lb);
                return 0;
        }
        return run_diff(out, fa, fb, la, lb);
}

/* One file's entry: creation (a->root < 0), deletion (b->root < 0), or change. */
static int entry(FILE *out, const char *place, const struct side *a, const struct side *b,
                 bool content)
{
        const char *ap = a->root >= 0 ? a->path : b->path, *bp = b->root >= 0 ? b->path : a->path;
        _cleanup_free_ char *la =
                a->root >= 0 ? patch_label("a/", place, ap) : xstrdup("/dev/null");
        _cleanup_free_ char *lb =
                b->root >= 0 ? patch_label("b/", place, bp) : xstrdup("/dev/null");

        if (a->root >= 0 && b->root >= 0 && !content && git_mode(a) == git_mode(b))
                return 0; /* a mode change git cannot express */
        fputs("diff --git ", out);
        patch_name(out, "a/", place, ap);
        fputc(' ', out);
        patch_name(out, "b/", place, bp);
        fputc('\n', out);
        if (a->root < 0)
                fprintf(out, "new file mode %o\n", git_mode(b));
        else if (b->root < 0)
                fprintf(out, "deleted file mode %o\n", git_mode(a));
        else if (git_mode(a) != git_mode(b))
                fprintf(out, "old mode %o\nnew mode %o\n", git_mode(a), git_mode(b));
        return content ? hunks(out, a, b, la, lb) : 0;
}

static int rename_entry(FILE *out, const char *place, const struct sess_mount *sm,
                        const struct cow_change *c)
{
        struct side a = {sm->host_fd, c->old_path, 'f', c->old_mode};
        struct side b = {sm->upper_fd, c->path, 'f', c->mode};

        fputs("diff --git ", out);
        patch_name(out, "a/", place, c->old_path);
        fputc(' ', out);
        patch_name(out, "b/", place, c->path);
        fputc('\n', out);
        if (git_mode(&a) != git_mode(&b))
                fprintf(out, "old mode %o\nnew mode %o\n", git_mode(&a), git_mode(&b));
        fputs("similarity index 100%\nrename from ", out);
        patch_name(out, "", place, c->old_path);
        fputs("\nrename to ", out);
        patch_name(out, "", place, c->path);
        fputc('\n', out);
        return 0;
}

static bool is_file(char type)
{
        return type == 'f' || type == 'l';
}

static int change_entry(FILE *out, const char *place, const struct sess_mount *sm,
                        const struct cow_change *c)
{
        struct side none = {-1, NULL, 0, 0};
        struct side old = {sm->host_fd, c->path, c->old_type, c->old_mode};
        struct side new = {sm->upper_fd, c->path, c->type, c->mode};
        int r = 0;

        switch (c->op) {
        case COW_ADD:
                return is_file(c->type) ? entry(out, place, &none, &new, true) : 0;
        case COW_DEL:
                return is_file(c->old_type) ? entry(out, place, &old, &none, true) : 0;
        case COW_MOD:
                return is_file(c->type) ? entry(out, place, &old, &new, c->content) : 0;
        case COW_TYPE:
                if (is_file(c->old_type))
                        r = entry(out, place, &old, &none, true);
                if (r >= 0 && is_file(c->type))
                        r = entry(out, place, &none, &new, true);
                return r;
        case COW_REN:
                return rename_entry(out, place, sm, c);
        case COW_SAME:
                break;
        }
        return 0;
}

int sess_print_patch(FILE *out, const struct sess *s, struct error *err)
{
        for (size_t i = 0; i < s->n; i++) {
                const struct sess_mount *sm = &s->mounts[i];
                /* a/ and b/ then the sandbox path without its '/', with several mounts */
                const char *place = sm->prefix[0] == '/' ? sm->prefix + 1 : sm->prefix;

                for (size_t k = 0; sm->loaded && k < sm->diff.n; k++) {
                        int r = change_entry(out, place, sm, &sm->diff.v[k]);

                        if (r < 0) {
                                fflush(out);
                                return make_error(err, -r, "diff --patch: session %s: %s%s",
                                                  s->name, sm->prefix, sm->diff.v[k].path);
                        }
                }
        }
        fflush(out);
        return 0;
}

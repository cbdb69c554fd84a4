/*
 * `stockade diff --json` and `stockade diff --patch`.
 *
 * The patch is in git's format, for `git apply` in the host directory (`-p1`): a header per
 * file (`diff --git a/P b/P`, new/deleted file mode, old/new mode, rename from/to), then
 * the text hunks, which diff(1) writes (`diff -u -a --label`), reading the two files
 * through /dev/fd so that no path is looked up again. A change of a file with a NUL in its
 * first 8000 bytes (git's test) is left out, and named on a line that git apply and
 * patch(1) skip (binary_note); stderr says how many. Directories have no entry of
 * their own (git has none); a new empty directory is not in the patch, nor a mode change
 * git cannot say (only the executable bit exists for it), nor a FIFO, socket or device, nor
 * anything inside a `.git` directory (a repository's own store: git apply refuses the whole
 * patch for one such path, and patch(1) would move a branch to objects it cannot write);
 * stderr says how many.
 */
#include "supervisor/session_cli_int.h"
#include "supervisor/trace_json.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* The patch being written, and the binary files left out of it. */
struct patch {
        FILE *out;
        const char *place;  /* after a/ and b/: "" or the mount's sandbox path without its '/' */
        const char *prefix; /* the mount's, as diff shows paths: "" or SANDBOX/ */
        size_t binaries;
        size_t in_git; /* changes inside a .git, left out */
        /* the first few .git places they are in (PATH/.git), with their counts */
        struct {
                char *where;
                size_t n;
        } git[4];
        size_t more_git; /* changes in .git places past those */
};

/* The length of `path` (relative) up to and with its first `.git` component, or 0: what git
 * apply refuses to touch (a repository's store, or a worktree's or submodule's `.git` file). */
static size_t git_place(const char *path)
{
        for (const char *c = path; (c = strstr(c, ".git")); c++)
                if ((c == path || c[-1] == '/') && (c[4] == '/' || c[4] == '\0'))
                        return (size_t)(c + 4 - path);
        return 0;
}

/* A change at `path`, inside a .git, left out: counted under its place. */
static void left_in_git(struct patch *p, const char *path)
{
        size_t len = git_place(path), plen = strlen(p->prefix), i;

        p->in_git++;
        for (i = 0; i < ARRAY_SIZE(p->git) && p->git[i].where; i++)
                if (strncmp(p->git[i].where, p->prefix, plen) == 0 &&
                    strlen(p->git[i].where) == plen + len &&
                    strncmp(p->git[i].where + plen, path, len) == 0)
                        break;
        if (i == ARRAY_SIZE(p->git)) {
                p->more_git++;
                return;
        }
        if (!p->git[i].where && asprintf(&p->git[i].where, "%s%.*s", p->prefix, (int)len, path) < 0)
                abort();
        p->git[i].n++;
}

/* One side of a file's entry: where it is, what it is, and (side_open) its content. */
struct side {
        int root; /* upper or host fd; -1: /dev/null */
        const char *path;
        char type;   /* 'f' or 'l' */
        mode_t mode; /* permission bits */
        int fd;      /* a regular file's, open; -1 */
        char target[PATH_MAX];
        size_t len; /* a symlink's target, target[0..len) (0 for /dev/null) */
};

/* "a/" or "b/" + the mount's place + the path, C-quoted if it needs to be. */
static void patch_name(FILE *out, const char *ab, const char *place, const char *path)
{
        _cleanup_free_ char *full = NULL;

        if (asprintf(&full, "%s%s%s", ab, place, path) < 0)
                abort();
        cowdiff_quote(out, full);
}

/* A side's name in the patch: "a/..." or "b/...", or /dev/null (malloc'd). */
static char *patch_label(const char *ab, const char *place, const struct side *s)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        if (s->root < 0)
                return xstrdup("/dev/null");
        f = open_memstream(&buf, &len);
        if (!f)
                abort();
        patch_name(f, ab, place, s->path);
        fclose(f);
        return buf;
}

static unsigned git_mode(const struct side *s)
{
        return s->type == 'l' ? 0120000 : s->mode & 0100 ? 0100755 : 0100644;
}

/* Read a side's content: a regular file's fd, or a symlink's target (nothing for /dev/null),
 * read once, so that what is judged binary is what diff(1) reads. Returns 0 or -errno. */
static int side_open(struct side *s)
{
        int lfd;
        ssize_t n;

        if (s->root < 0)
                return 0;
        if (s->type == 'f') {
                s->fd = cowdiff_open(s->root, s->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
                return s->fd < 0 ? s->fd : 0;
        }
        lfd = cowdiff_open(s->root, s->path, O_PATH | O_NOFOLLOW);
        if (lfd < 0)
                return lfd;
        n = readlinkat(lfd, "", s->target, sizeof(s->target));
        close(lfd);
        if (n < 0)
                return -errno;
        s->len = (size_t)n;
        return 0;
}

static void side_close(struct side *s)
{
        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
}

/* A regular file with a NUL in its first 8000 bytes: git's test for a binary file. */
static bool side_binary(const struct side *s)
{
        char buf[8000];
        ssize_t n = s->fd < 0 ? 0 : pread(s->fd, buf, sizeof(buf), 0);

        return n > 0 && memchr(buf, '\0', (size_t)n);
}

/*
 * A binary file's change, named and left out: git apply cannot take it without the blobs'
 * full index (and a "Binary files ... differ" line after a header is read as such a patch),
 * and patch(1) cannot take it at all. So there is no `diff --git` header for it, only this
 * line, which git apply and patch skip as text between patches: it does not end in " differ"
 * (git's test for a binary patch's body, even after a header with no hunk, such as a mode
 * change), nor start like a header or a hunk.
 */
static void binary_note(struct patch *p, const struct side *a, const struct side *b)
{
        _cleanup_free_ char *la = patch_label("a/", p->place, a);
        _cleanup_free_ char *lb = patch_label("b/", p->place, b);

        fprintf(p->out,
                "Binary files %s and %s differ (not in this patch; stockade apply writes it)\n", la,
                lb);
        p->binaries++;
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
static void link_hunk(FILE *out, const char *la, const char *lb, const struct side *a,
                      const struct side *b)
{
        fprintf(out, "--- %s\n+++ %s\n@@", la, lb);
        range(out, '-', count_lines(a->target, a->len));
        range(out, '+', count_lines(b->target, b->len));
        fputs(" @@\n", out);
        link_lines(out, '-', a->target, a->len);
        link_lines(out, '+', b->target, b->len);
}

/* Whether the process is stopped: by a signal (T) or by a tracer (t), from /proc. */
static bool child_stopped(pid_t pid)
{
        char path[64], buf[512], *close_paren;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if (read_text(path, buf, sizeof(buf)) < 0)
                return false;
        close_paren = strrchr(buf, ')'); /* the name may hold anything */
        return close_paren && close_paren[1] == ' ' &&
               (close_paren[2] == 'T' || close_paren[2] == 't');
}

/*
 * diff -u -a of two fds (-1: /dev/null), its output copied to out. The child gets nothing of
 * ours but those two files and a pipe: run for a session of another user's (sess_as_owner),
 * it is that user's process, which they may trace and take fds from, so root's stdin,
 * stdout, stderr and environment must not be in it (an outside attack rewrote root's
 * redirected patch file and read root's terminal through them).
 */
static int run_diff(FILE *out, int fa, int fb, const char *la, const char *lb)
{
        static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
        char pa[32] = "/dev/null", pb[32] = "/dev/null", buf[65536];
        int status, pipefd[2], pidfd, r = 0;
        ssize_t n;
        pid_t pid;

        if (fa >= 0)
                snprintf(pa, sizeof(pa), "/dev/fd/%d", fa);
        if (fb >= 0)
                snprintf(pb, sizeof(pb), "/dev/fd/%d", fb);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                close(pipefd[0]);
                close(pipefd[1]);
                return r;
        }
        if (pid == 0) {
                char *argv[] = {"diff",    "-u",       "-a", "--label", (char *)la,
                                "--label", (char *)lb, pa,   pb,        NULL};
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(null, 2) < 0 ||
                    syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC) < 0 ||
                    (fa >= 0 && fcntl(fa, F_SETFD, 0) < 0) ||
                    (fb >= 0 && fcntl(fb, F_SETFD, 0) < 0))
                        _exit(2);
                execve("/usr/bin/diff", argv, envp);
                _exit(127);
        }
        close(pipefd[1]);
        /* Until the pipe's end, or the child's exit and the pipe drained: a copy of the write
         * end taken from the child (pidfd_getfd) must not hold stockade forever. */
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        for (bool exited = false;;) {
                struct pollfd pf[2] = {{.fd = pipefd[0], .events = POLLIN},
                                       {.fd = pidfd, .events = POLLIN}};
                int k = exited || pidfd < 0 ? 1 : poll(pf, 2, 1000);

                if (k < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                /* Stopped or held by a tracer (its owner may do either): killed, not waited
                 * for. */
                if (k == 0) {
                        if (child_stopped(pid)) {
                                kill(pid, SIGKILL);
                                r = -EINTR;
                                break;
                        }
                        continue;
                }
                exited |= pidfd >= 0 && (pf[1].revents & POLLIN);
                if (exited)
                        fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
                n = read(pipefd[0], buf, sizeof(buf));
                if (n == 0 || (n < 0 && errno == EAGAIN && exited))
                        break;
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (fwrite(buf, 1, (size_t)n, out) != (size_t)n && !r)
                        r = -EIO;
        }
        if (pidfd >= 0)
                close(pidfd);
        close(pipefd[0]);
        /* Reaped when it can be: a tracer of its owner's may keep its exit to itself, and
         * the wait with it (5 s, then it is left: stockade is about to exit anyway). */
        for (int i = 0;; i++) {
                pid_t w = waitpid(pid, &status, WNOHANG);

                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return -errno;
                if (i == 50) {
                        kill(pid, SIGKILL);
                        return r < 0 ? r : -ETIMEDOUT;
                }
                usleep(100000);
        }
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
                return -EIO; /* diff failed (127: not found) */
        return 0;
}

/* The hunks from side a to side b, both opened (either may be /dev/null: root -1). */
static int hunks(FILE *out, const struct side *a, const struct side *b, const char *la,
                 const char *lb)
{
        if (a->fd < 0 && b->fd < 0) { /* symlinks, or a symlink and nothing */
                if (a->len || b->len)
                        link_hunk(out, la, lb, a, b);
                return 0;
        }
        return run_diff(out, a->fd, b->fd, la, lb);
}

/* One file's entry: creation (a->root < 0), deletion (b->root < 0), or change; the sides
 * opened when `content`. */
static int entry(struct patch *p, const struct side *a, const struct side *b, bool content)
{
        const char *ap = a->root >= 0 ? a->path : b->path, *bp = b->root >= 0 ? b->path : a->path;
        _cleanup_free_ char *la = patch_label("a/", p->place, a);
        _cleanup_free_ char *lb = patch_label("b/", p->place, b);

        if (a->root >= 0 && b->root >= 0 && !content && git_mode(a) == git_mode(b))
                return 0; /* a mode change git cannot express */
        fputs("diff --git ", p->out);
        patch_name(p->out, "a/", p->place, ap);
        fputc(' ', p->out);
        patch_name(p->out, "b/", p->place, bp);
        fputc('\n', p->out);
        if (a->root < 0)
                fprintf(p->out, "new file mode %o\n", git_mode(b));
        else if (b->root < 0)
                fprintf(p->out, "deleted file mode %o\n", git_mode(a));
        else if (git_mode(a) != git_mode(b))
                fprintf(p->out, "old mode %o\nnew mode %o\n", git_mode(a), git_mode(b));
        return content ? hunks(p->out, a, b, la, lb) : 0;
}

/* R: the same bytes under another name (binary or not: git needs no content for it). */
static int rename_entry(struct patch *p, const struct sess_mount *sm, const struct cow_change *c)
{
        struct side a = {.root = sm->host_fd,
                         .path = c->old_path,
                         .type = 'f',
                         .mode = c->old_mode,
                         .fd = -1};
        struct side b = {
                .root = sm->upper_fd, .path = c->path, .type = 'f', .mode = c->mode, .fd = -1};

        fputs("diff --git ", p->out);
        patch_name(p->out, "a/", p->place, c->old_path);
        fputc(' ', p->out);
        patch_name(p->out, "b/", p->place, c->path);
        fputc('\n', p->out);
        if (git_mode(&a) != git_mode(&b))
                fprintf(p->out, "old mode %o\nnew mode %o\n", git_mode(&a), git_mode(&b));
        fputs("similarity index 100%\nrename from ", p->out);
        patch_name(p->out, "", p->place, c->old_path);
        fputs("\nrename to ", p->out);
        patch_name(p->out, "", p->place, c->path);
        fputc('\n', p->out);
        return 0;
}

static bool is_file(char type)
{
        return type == 'f' || type == 'l';
}

/*
 * The entries of one change: the old side (the host's: M, D, T) and the new (the upper's: A,
 * M, T), each when it is a file or a symlink. When the content counts and either side is
 * binary, the change is named instead, as a whole: a T without its binary half would have
 * git delete a file and make nothing, or make a name the host still holds.
 */
static int change_entry(struct patch *p, const struct sess_mount *sm, const struct cow_change *c)
{
        struct side none = {.root = -1, .fd = -1};
        struct side old = {.root = sm->host_fd,
                           .path = c->path,
                           .type = c->old_type,
                           .mode = c->old_mode,
                           .fd = -1};
        struct side new = {
                .root = sm->upper_fd, .path = c->path, .type = c->type, .mode = c->mode, .fd = -1};
        bool content = c->op != COW_MOD || c->content;
        int r = 0;

        if (c->op == COW_REN && (git_place(c->path) || git_place(c->old_path))) {
                /* the side outside .git is still a change: a deletion or a creation */
                struct cow_change one = {.op = COW_DEL,
                                         .path = c->old_path,
                                         .old_type = c->old_type,
                                         .old_mode = c->old_mode};

                if (git_place(c->old_path))
                        one = (struct cow_change){.op = COW_ADD,
                                                  .path = c->path,
                                                  .type = c->type,
                                                  .mode = c->mode,
                                                  .target = c->target};
                left_in_git(p, git_place(c->path) ? c->path : c->old_path);
                return git_place(one.path) ? 0 : change_entry(p, sm, &one);
        }
        if (git_place(c->path)) {
                if (c->type != 'd' && c->old_type != 'd')
                        left_in_git(p, c->path);
                return 0;
        }
        if (c->op == COW_REN)
                return rename_entry(p, sm, c);
        if (c->op == COW_ADD || c->op == COW_SAME || !is_file(c->old_type))
                old.root = -1;
        if (c->op == COW_DEL || c->op == COW_SAME || !is_file(c->type))
                new.root = -1;
        if (old.root < 0 && new.root < 0)
                return 0; /* directories, FIFOs, sockets, devices: not in git's format */
        if (content && ((r = side_open(&old)) < 0 || (r = side_open(&new)) < 0))
                goto out;
        if (content && (side_binary(&old) || side_binary(&new)))
                binary_note(p, &old, &new);
        else if (c->op != COW_TYPE)
                r = entry(p, &old, &new, content);
        else { /* git's way: the old object's deletion, then the new one's creation */
                if (old.root >= 0)
                        r = entry(p, &old, &none, true);
                if (r >= 0 && new.root >= 0)
                        r = entry(p, &none, &new, true);
        }
out:
        side_close(&old);
        side_close(&new);
        return r;
}

int sess_print_patch(FILE *out, const struct sess *s, struct error *err)
{
        struct patch p = {.out = out, .place = ""};
        int r = 0;

        for (size_t i = 0; i < s->n; i++) {
                const struct sess_mount *sm = &s->mounts[i];

                /* a/ and b/ then the sandbox path without its '/', with several mounts */
                p.place = sm->prefix[0] == '/' ? sm->prefix + 1 : sm->prefix;
                p.prefix = sm->prefix;
                for (size_t k = 0; r == 0 && sm->loaded && k < sm->diff.n; k++)
                        if ((r = change_entry(&p, sm, &sm->diff.v[k])) < 0)
                                make_error(err, -r, "diff --patch: session %s: %s%s", s->name,
                                           sm->prefix, sm->diff.v[k].path);
        }
        fflush(out);
        if (p.binaries)
                fprintf(stderr,
                        "stockade: diff --patch: %zu binary file%s not in the patch, only named "
                        "(a `Binary files ... (not in this patch ...)` line, which git apply and "
                        "patch skip): `stockade apply %s PATH...` writes %s\n",
                        p.binaries, p.binaries == 1 ? " is" : "s are", s->name,
                        p.binaries == 1 ? "it" : "them");
        if (p.in_git && r == 0) {
                fprintf(stderr,
                        "stockade: diff --patch: %zu change%s inside .git %s not in the patch "
                        "(git apply refuses any path there):",
                        p.in_git, p.in_git == 1 ? "" : "s", p.in_git == 1 ? "is" : "are");
                for (size_t i = 0; i < ARRAY_SIZE(p.git) && p.git[i].where; i++) {
                        fprintf(stderr, "%s ", i ? "," : "");
                        cowdiff_quote(stderr, p.git[i].where);
                        fprintf(stderr, " (%zu)", p.git[i].n);
                }
                if (p.more_git)
                        fprintf(stderr, ", %zu in other places", p.more_git);
                fprintf(stderr,
                        "; `stockade diff %s` lists them, `stockade apply %s` writes them\n",
                        s->name, s->name);
        }
        for (size_t i = 0; i < ARRAY_SIZE(p.git); i++)
                free(p.git[i].where);
        return r < 0 ? -1 : 0;
}

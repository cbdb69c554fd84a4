/*
 * `stockade diff`, `stockade discard` and `stockade sessions`, and what every session
 * command shares: finding a session in the store and loading its cow mounts with their
 * diffs (session_cli_int.h). A damaged session is read as far as it goes; each thing wrong
 * is one line naming the session, and the exit status is 125.
 */
#include "supervisor/session_cli.h"
#include "supervisor/session_cli_int.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowapply.h"
#include "supervisor/vfs/treemove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char usage_diff[] =
        "Usage: stockade diff NAME [--json | --patch] [--state-dir DIR]\n"
        "\n"
        "Show what session NAME (a run with --cow) changed in its copy-on-write mounts, one\n"
        "change a line, sorted by path:\n"
        "  A path          added (A dir/: a new directory; what it holds is listed too;\n"
        "                  A path (mode 666): a mode other than 644/755; A link (symlink to T))\n"
        "  M path          content changed; M path (mode 644 -> 755): only the mode;\n"
        "                  M path (times): only the modification time\n"
        "  D path          deleted (D dir/: and everything it held, each listed)\n"
        "  T path (file -> symlink)   another type at the same path\n"
        "  R old -> new    a file renamed (same content, nothing else like it)\n"
        "Paths are relative to the mount; with several mounts, they are the sandbox's\n"
        "absolute paths. A name with a control byte (C0 or C1), a bidirectional mark, '\"',\n"
        "'\\' or bytes that are not UTF-8 is written in C quotes.\n"
        "\n"
        "  --json   a JSON array: {op, path, old_path?, type, mode_from?, mode_to?, target?,\n"
        "           mount}\n"
        "  --patch  a patch in git's format (`git apply` takes it in the host directory);\n"
        "           binary files are named, not included\n"
        "  --state-dir DIR   the session store (default $XDG_STATE_HOME/stockade)\n";

static const char usage_discard[] =
        "Usage: stockade discard NAME [--state-dir DIR]\n"
        "\n"
        "Remove session NAME and every change it holds; the host is not touched.\n";

static const char usage_sessions[] =
        "Usage: stockade sessions [--state-dir DIR]\n"
        "\n"
        "List the sessions, oldest first, one a line: name, last update, number of changes,\n"
        "bytes held, command, and the directory its changes are for (\"in DIR\"). A damaged\n"
        "session says what is wrong with it instead.\n"
        "Sessions that never began (stockade killed while it started: no metadata, nothing\n"
        "in them) and are at least ten seconds old are removed first.\n";

/* ---- arguments --------------------------------------------------------------------------- */

int sess_parse_args(int argc, char **argv, const char *const *flags, struct sess_args *a,
                    struct error *err)
{
        struct option longs[8] = {{"state-dir", required_argument, NULL, 'S'},
                                  {"help", no_argument, NULL, 'h'}};
        size_t nf = 0;

        memset(a, 0, sizeof(*a));
        for (; flags && flags[nf]; nf++)
                longs[2 + nf] = (struct option){flags[nf], no_argument, NULL, (int)(256 + nf)};
        optind = 0;
        opterr = 0;
        for (int c; (c = getopt_long(argc, argv, ":h", longs, NULL)) != -1;) {
                if (c == 'h')
                        return 1;
                if (c == 'S')
                        a->state = optarg;
                else if (c >= 256)
                        a->flag[c - 256] = true;
                else if (c == ':')
                        return make_error(err, 0, "%s: option `%s` needs a value", argv[0],
                                          argv[optind - 1]);
                else
                        return make_error(err, 0,
                                          "%s: unknown option `%s` (see stockade %s --help)",
                                          argv[0], argv[optind - 1], argv[0]);
        }
        for (int i = optind; i < argc; i++) {
                if (a->n_pos == ARRAY_SIZE(a->pos))
                        return make_error(err, 0, "%s: too many arguments", argv[0]);
                a->pos[a->n_pos++] = argv[i];
        }
        return 0;
}

void sess_quote_arg(FILE *out, const char *s)
{
        if (!*s || strpbrk(s, " '$`") || s[strcspn(s, "\"\\")]) {
                fputc('"', out);
                for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                        if (*p == '"' || *p == '\\' || *p == '$' || *p == '`')
                                fprintf(out, "\\%c", *p);
                        else if (*p < 0x20 || *p == 0x7f)
                                fprintf(out, "\\%03o", *p);
                        else
                                fputc(*p, out);
                fputc('"', out);
        } else {
                cowdiff_quote(out, s);
        }
}

/* ---- one session ------------------------------------------------------------------------- */

int sess_as_owner(const struct sess *s, const char *cmd, struct error *err)
{
        return owner_become(&s->owner, cmd, s->name, err);
}

int sess_lock(const struct sess *s, struct error *err)
{
        int lock = session_lock(s->at);

        if (lock == -EWOULDBLOCK)
                return make_error(err, 0, "session %s is in use by a running stockade", s->name);
        if (lock < 0)
                return make_error(err, -lock, "session %s: its lock", s->name);
        return lock;
}

/* openat(at, name) of a directory, as O_PATH and without following a symlink. */
static int open_dir_below(int at, const char *name)
{
        return openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int sess_find(struct sess *s, const char *state_opt, const char *name, struct error *err)
{
        int r;

        memset(s, 0, sizeof(*s));
        s->name = name;
        s->state_fd = s->sessions_fd = s->dir_fd = -1;
        for (size_t i = 0; i < SESSION_MOUNTS_MAX; i++)
                s->mounts[i].dir_fd = s->mounts[i].upper_fd = s->mounts[i].host_fd = -1;
        if (!session_name_ok(name))
                return make_error(err, 0, "session `%s`: not a session name", name);
        r = store_default(state_opt, s->state);
        if (r < 0)
                return make_error(err, -r,
                                  "session %s: no state directory (--state-dir, "
                                  "XDG_STATE_HOME or HOME)",
                                  name);
        r = session_store_loose(state_opt, s->state, s->dir);
        if (r < 0)
                return make_error(err, 0, "session %s: the session store's directory `%s` %s", name,
                                  s->dir, SESSION_LOOSE_HINT);
        r = session_path(s->state, name, s->dir);
        if (r < 0)
                return make_error(err, -r, "session %s", name);
        /* The store found once (as root: walked from /, session_owner.c), then each step
         * beneath it once: no symlink, and never looked up again. */
        {
                struct error e = {0};

                s->state_fd = store_open(s->state, &s->owner, NULL, name, &e);
                if (s->state_fd < 0 && e.errnum == ENOENT)
                        return make_error(err, 0, "session %s: no such session in %s/sessions",
                                          name, s->state);
                if (s->state_fd < 0)
                        return make_error(err, e.errnum, "%s", e.msg);
        }
        s->sessions_fd = open_dir_below(s->state_fd, "sessions");
        if (s->sessions_fd >= 0)
                s->dir_fd = open_dir_below(s->sessions_fd, name);
        if (s->dir_fd < 0) {
                int e = errno;

                sess_close(s);
                if (e == ENOENT)
                        return make_error(err, 0, "session %s: no such session in %s/sessions",
                                          name, s->state);
                if (e == ENOTDIR)
                        return make_error(err, 0, "session %s: %s is not a directory", name,
                                          s->dir);
                return make_error(err, e, "session %s: %s", name, s->dir);
        }
        {
                char shown[PATH_MAX + 16];

                snprintf(shown, sizeof(shown), "%s/sessions", s->state);
                if (owner_claim(&s->owner, s->sessions_fd, shown, NULL, name, err) < 0 ||
                    owner_claim(&s->owner, s->dir_fd, s->dir, NULL, name, err) < 0) {
                        sess_close(s);
                        return -1;
                }
        }
        snprintf(s->at, sizeof(s->at), "/proc/self/fd/%d", s->dir_fd);
        return 0;
}

static int cmp_mount(const void *a, const void *b)
{
        const struct sess_mount *x = a, *y = b;
        return strcmp(x->m->sandbox, y->m->sandbox);
}

static void mount_problem(struct sess_mount *sm, size_t n, const char *what, int e)
{
        if (snprintf(sm->problem, sizeof(sm->problem), "mount %zu (%s): %s%s%s", n, sm->m->sandbox,
                     what, e ? ": " : "", e ? strerror(e) : "") >= (int)sizeof(sm->problem))
                strcpy(sm->problem + sizeof(sm->problem) - 4, "..."); /* cut, still a line */
}

static void load_mount(struct sess *s, struct sess_mount *sm, size_t n)
{
        char path[PATH_MAX + 128];
        struct stat st;
        int r;

        snprintf(path, sizeof(path), "%zu", n);
        sm->dir_fd = open_dir_below(s->dir_fd, path);
        if (sm->dir_fd < 0)
                return mount_problem(
                        sm, n,
                        errno == ENOENT    ? "its directory is missing"
                        : errno == ENOTDIR ? "its directory is a symlink or a file, not a directory"
                                           : "its directory",
                        errno == ENOENT || errno == ENOTDIR ? 0 : errno);
        snprintf(sm->dir, sizeof(sm->dir), "/proc/self/fd/%d", sm->dir_fd);
        sm->upper_fd = openat(sm->dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sm->upper_fd < 0)
                return mount_problem(sm, n,
                                     errno == ENOENT ? "its upper directory is missing"
                                                     : "its upper directory",
                                     errno == ENOENT ? 0 : errno);
        /* The very directory the session was made for: no symlink on the way (the path
         * was canonical then), and the same identity. Else the sandbox, which may write the
         * directory's parent, could have renamed it and put a symlink or another directory
         * at its path, and apply would write there. */
        sm->host_fd = (int)syscall(SYS_openat2, AT_FDCWD, sm->m->host,
                                   &(struct open_how){.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                                      .resolve = RESOLVE_NO_SYMLINKS},
                                   sizeof(struct open_how));
        if (sm->host_fd < 0 && errno != ELOOP) {
                snprintf(path, sizeof(path), "host directory %s", sm->m->host);
                return mount_problem(sm, n, path, errno);
        }
        if (sm->host_fd < 0 || fstat(sm->host_fd, &st) < 0 ||
            (unsigned long long)st.st_dev != sm->m->dev ||
            (unsigned long long)st.st_ino != sm->m->ino) {
                snprintf(path, sizeof(path),
                         "host directory %s is not the one the session was made for (moved or "
                         "replaced since)",
                         sm->m->host);
                if (sm->host_fd >= 0)
                        close(sm->host_fd);
                sm->host_fd = -1;
                return mount_problem(sm, n, path, 0);
        }
        snprintf(path, sizeof(path), "%s/journal", sm->dir);
        r = journal_load(&sm->journal, path);
        if (r < 0)
                return mount_problem(sm, n, "its journal", -r);
        r = cowdiff_compute(sm->upper_fd, sm->host_fd, &sm->diff);
        if (r == -EOPNOTSUPP)
                return mount_problem(sm, n,
                                     "its upper holds overlayfs redirects or metacopy files, "
                                     "which a userxattr mount does not make",
                                     0);
        if (r < 0)
                return mount_problem(sm, n, "comparing the upper with the host", -r);
        if (sm->diff.too_deep) {
                fprintf(stderr, "stockade: session %s: mount %zu (", s->name, n);
                cowdiff_quote(stderr, sm->m->sandbox);
                fprintf(stderr,
                        "): %zu entr%s deeper than PATH_MAX (%d bytes) left out: not shown, not "
                        "applied (`stockade discard` removes them with the session)\n",
                        sm->diff.too_deep, sm->diff.too_deep == 1 ? "y" : "ies", PATH_MAX);
        }
        sm->loaded = true;
}

static bool sess_unborn(const struct sess *s)
{
        _cleanup_close_ int fd = openat(s->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 && session_unborn(fd);
}

void sess_load(struct sess *s)
{
        int r = session_meta_read(s->at, &s->meta);

        if (r == -ENOENT && (s->unborn = sess_unborn(s)))
                snprintf(s->problem, sizeof(s->problem),
                         "it never began (stockade was stopped while it started) and holds "
                         "nothing; `stockade discard %s` removes it, and a run with `--session "
                         "%s` starts it afresh",
                         s->name, s->name);
        else if (r == -ENOENT)
                snprintf(s->problem, sizeof(s->problem), "its `session` file is missing");
        else if (r < 0)
                snprintf(s->problem, sizeof(s->problem), "its `session` file: %s", strerror(-r));
        else if (s->meta.damaged)
                snprintf(s->problem, sizeof(s->problem),
                         "its `session` file is cut short or not a session file");
        if (r < 0)
                return;
        for (size_t i = 0; i < s->meta.n_mounts && i < SESSION_MOUNTS_MAX; i++) {
                struct sess_mount *sm = &s->mounts[s->n];

                if (!s->meta.mounts[i].sandbox[0])
                        continue; /* a line the damage took */
                sm->m = &s->meta.mounts[i];
                s->n++;
        }
        qsort(s->mounts, s->n, sizeof(s->mounts[0]), cmp_mount);
        for (size_t i = 0; i < s->n; i++) {
                struct sess_mount *sm = &s->mounts[i];
                const char *sb = sm->m->sandbox;

                if (s->n > 1 && snprintf(sm->prefix, sizeof(sm->prefix), "%s/",
                                         strcmp(sb, "/") == 0 ? "" : sb) >= (int)sizeof(sm->prefix))
                        sm->prefix[0] = '\0'; /* a sandbox path of PATH_MAX: shown relative */
                load_mount(s, sm, (size_t)(sm->m - s->meta.mounts));
        }
}

int sess_open(struct sess *s, const char *state_opt, const char *name, const char *cmd,
              struct error *err)
{
        if (sess_find(s, state_opt, name, err) < 0)
                return -1;
        if (sess_as_owner(s, cmd, err) < 0) {
                sess_close(s);
                return -1;
        }
        sess_load(s);
        return 0;
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

void sess_close(struct sess *s)
{
        for (size_t i = 0; i < SESSION_MOUNTS_MAX; i++) {
                struct sess_mount *sm = &s->mounts[i];

                close_fd(&sm->dir_fd);
                close_fd(&sm->upper_fd);
                close_fd(&sm->host_fd);
                journal_free(&sm->journal);
                cowdiff_free(&sm->diff);
        }
        session_meta_free(&s->meta);
        close_fd(&s->state_fd);
        close_fd(&s->sessions_fd);
        close_fd(&s->dir_fd);
}

int sess_report(const struct sess *s)
{
        int n = 0;

        /* quoted where a path in it holds control bytes (cowdiff_quote) */
        if (s->problem[0] && ++n) {
                fprintf(stderr, "stockade: session %s %s: ", s->name,
                        s->unborn ? "is empty" : "is damaged");
                cowdiff_quote(stderr, s->problem);
                fputc('\n', stderr);
        }
        for (size_t i = 0; i < s->n; i++)
                if (s->mounts[i].problem[0] && ++n) {
                        fprintf(stderr, "stockade: session %s is damaged: ", s->name);
                        cowdiff_quote(stderr, s->mounts[i].problem);
                        fputc('\n', stderr);
                }
        return n;
}

/* ---- stockade diff ----------------------------------------------------------------------- */

int session_cli_diff(int argc, char **argv)
{
        static const char *const flags[] = {"json", "patch", NULL};
        struct error err = {0};
        struct sess_args a;
        struct sess s;
        int r = sess_parse_args(argc, argv, flags, &a, &err), problems;

        if (r == 1) {
                fputs(usage_diff, stdout);
                return 0;
        }
        if (r == 0 && a.n_pos != 1)
                r = make_error(&err, 0,
                               "diff: give one session name (stockade sessions lists them)");
        if (r == 0 && a.flag[0] && a.flag[1])
                r = make_error(&err, 0, "diff: --json or --patch, not both");
        if (r == 0)
                r = sess_open(&s, a.state, a.pos[0], "diff", &err);
        if (r < 0) {
                error_print(&err);
                return EXIT_STOCKADE;
        }
        if (a.flag[0])
                sess_print_json(stdout, &s);
        else if (a.flag[1])
                r = sess_print_patch(stdout, &s, &err);
        else
                for (size_t i = 0; i < s.n; i++)
                        for (size_t k = 0; k < s.mounts[i].diff.n; k++)
                                cowdiff_print(stdout, &s.mounts[i].diff.v[k], s.mounts[i].prefix);
        fflush(stdout);
        if (r < 0)
                error_print(&err);
        problems = sess_report(&s);
        sess_close(&s);
        return r < 0 || problems ? EXIT_STOCKADE : 0;
}

/* ---- stockade discard -------------------------------------------------------------------- */

int sess_unlend(const struct sess *found, const char *cmd, struct error *err)
{
        struct sess *s;
        bool any = false;
        int r = 0;

        for (size_t i = 0; i < SESSION_MOUNTS_MAX && !any; i++) {
                char n[24];
                _cleanup_close_ int fd = -1;

                snprintf(n, sizeof(n), "%zu", i);
                fd = open_dir_below(found->dir_fd, n);
                any = fd >= 0 && faccessat(fd, "lent", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
        }
        if (!any)
                return 0;
        s = xcalloc(1, sizeof(*s)); /* loaded on a copy: the caller's is still as found */
        *s = *found;
        sess_load(s);
        for (size_t i = 0; i < s->n && r == 0; i++) {
                size_t n = (size_t)(s->mounts[i].m - s->meta.mounts);
                char lent[sizeof(s->mounts[i].dir) + 8];
                struct cow_apply ca = {.host_fd = s->mounts[i].host_fd, .lent_path = lent};
                _cleanup_free_ char *failed = NULL;

                if (ca.host_fd < 0 || s->mounts[i].dir_fd < 0)
                        continue;
                snprintf(lent, sizeof(lent), "%s/lent", s->mounts[i].dir);
                r = cowapply_unlend_left(&ca, &failed);
                /* The record itself is no file stockade writes (a FIFO, a device, a symlink):
                 * another program put it there. discard removes it with the session, which
                 * it refused to do (an outside review); apply will not guess. */
                if ((r == -EINVAL || r == -ELOOP) && !failed && strcmp(cmd, "discard") == 0) {
                        fprintf(stderr,
                                "stockade: discard: session %s: its %zu/lent is not a regular "
                                "file, so not a record stockade wrote: nothing given back\n",
                                s->name, n);
                        r = 0;
                } else if ((r == -EINVAL || r == -ELOOP) && !failed)
                        make_error(err, 0,
                                   "%s: session %s: its %zu/lent is not a regular file, so "
                                   "not a record stockade wrote (another program put it there): "
                                   "remove it, then try again",
                                   cmd, s->name, n);
                else if (r < 0)
                        make_error(err, -r,
                                   "%s: session %s: giving %s/%s its mode back (an earlier "
                                   "apply lent it its write bit): nothing done",
                                   cmd, s->name, s->mounts[i].m->host, failed ? failed : "");
        }
        s->state_fd = s->sessions_fd = s->dir_fd = -1; /* the caller's to close */
        sess_close(s);
        free(s);
        return r < 0 ? -1 : 0;
}

int session_cli_discard(int argc, char **argv)
{
        struct error err = {0};
        struct sess_args a;
        struct sess s;
        _cleanup_close_ int lock = -1;
        bool found;
        int r = sess_parse_args(argc, argv, NULL, &a, &err);

        if (r == 1) {
                fputs(usage_discard, stdout);
                return 0;
        }
        if (r == 0 && a.n_pos != 1)
                r = make_error(&err, 0, "discard: give one session name");
        if (r == 0)
                r = sess_find(&s, a.state, a.pos[0], &err);
        found = r == 0;
        if (r == 0)
                r = sess_as_owner(&s, "discard", &err);
        if (r == 0) {
                lock = sess_lock(&s, &err);
                r = lock < 0 ? -1 : 0;
        }
        if (r == 0)
                r = sess_unlend(&s, "discard", &err);
        if (r == 0) {
                r = vfs_remove_tree(s.sessions_fd, s.name, true);
                if (r < 0)
                        make_error(&err, -r, "discard: session %s", s.name);
        }
        if (found)
                sess_close(&s);
        if (r < 0) {
                error_print(&err);
                return EXIT_STOCKADE;
        }
        return 0;
}

/* ---- stockade sessions ------------------------------------------------------------------- */

struct listed {
        char name[SESSION_NAME_MAX + 1];
        time_t updated;
};

static int cmp_listed(const void *a, const void *b)
{
        const struct listed *x = a, *y = b;

        if (x->updated != y->updated)
                return x->updated < y->updated ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Bytes of everything but directories beneath `dirfd`. */
static uint64_t tree_bytes(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *dir = fd < 0 ? NULL : fdopendir(fd);
        uint64_t n = 0;

        if (!dir) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        for (struct dirent *de; (de = readdir(dir));) {
                struct stat st;
                int sub;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISDIR(st.st_mode)) {
                        n += (uint64_t)st.st_size;
                        continue;
                }
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                        n += tree_bytes(sub);
                        close(sub);
                }
        }
        closedir(dir);
        return n;
}

static void human_size(uint64_t n, char *buf, size_t len)
{
        static const char units[] = "KMGTPE";
        double v = (double)n;
        size_t u = 0;

        if (n < 1024) {
                snprintf(buf, len, "%" PRIu64 "B", n);
                return;
        }
        for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) - 1; u++)
                v /= 1024;
        snprintf(buf, len, "%.1f%c", v, units[u]);
}

/* The command as the session file has it (escaped arguments), for people. */
static void print_command(const char *escaped)
{
        _cleanup_free_ char *copy = xstrdup(escaped ? escaped : "");
        char *save = NULL;
        bool first = true;

        for (char *arg = strtok_r(copy, " ", &save); arg; arg = strtok_r(NULL, " ", &save)) {
                if (!first)
                        fputc(' ', stdout);
                first = false;
                if (journal_unescape(arg) < 0)
                        fputs("?", stdout);
                else
                        sess_quote_arg(stdout, arg);
        }
}

static void list_one(const char *state, const char *name)
{
        struct sess s;
        char date[32] = "-", size[16] = "-", changes[32] = "-";
        uint64_t bytes = 0;
        size_t n = 0;

        if (sess_find(&s, state, name, NULL) < 0)
                return;
        if (s.owner.uid) { /* root, in its store, and another user's session: theirs to read */
                printf("%-24s  %-16s  %11s  %7s  uid %u's session: list it as that user\n", s.name,
                       date, changes, size, (unsigned)s.owner.uid);
                sess_close(&s);
                return;
        }
        sess_load(&s);
        for (size_t i = 0; i < s.n; i++) {
                n += cowdiff_count(&s.mounts[i].diff);
                if (s.mounts[i].upper_fd >= 0)
                        bytes += tree_bytes(s.mounts[i].upper_fd);
        }
        if (s.meta.updated) {
                struct tm tm;
                strftime(date, sizeof(date), "%Y-%m-%d %H:%M", localtime_r(&s.meta.updated, &tm));
        }
        if (!s.problem[0]) {
                snprintf(changes, sizeof(changes), "%zu change%s", n, n == 1 ? "" : "s");
                human_size(bytes, size, sizeof(size));
        }
        printf("%-24s  %-16s  %11s  %7s  ", s.name, date, changes, size);
        /* Every text from the session quoted where it needs it: a name or path with control
         * bytes would drive the reader's terminal. */
        if (s.unborn)
                printf("never began: stockade was stopped while it started");
        else if (s.problem[0])
                printf("damaged: "), cowdiff_quote(stdout, s.problem);
        else
                print_command(s.meta.command);
        /* Where apply writes: two runs of one command in two projects look alike otherwise. */
        for (size_t i = 0; i < s.meta.n_mounts; i++) {
                fputs(i ? ", " : "  in ", stdout);
                cowdiff_quote(stdout, s.meta.mounts[i].host);
        }
        for (size_t i = 0; i < s.n; i++)
                if (s.mounts[i].problem[0]) {
                        fputs(" [damaged: ", stdout);
                        cowdiff_quote(stdout, s.mounts[i].problem);
                        fputc(']', stdout);
                }
        putchar('\n');
        sess_close(&s);
}

/* The session names in STATE/sessions with their update times, oldest first. */
/* Whether `name` in `dirfd` is a directory (not a symlink to one) of the caller's. */
static bool mine_at(int dirfd, const char *name)
{
        struct stat st;

        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
               st.st_uid == geteuid();
}

static size_t collect(const char *state, struct listed **out)
{
        char path[PATH_MAX + 16];
        DIR *dir;
        size_t n = 0, cap = 0;

        *out = NULL;
        snprintf(path, sizeof(path), "%s/sessions", state);
        dir = opendir(path);
        if (!dir)
                return 0;
        for (struct dirent *de; (de = readdir(dir));) {
                struct session_meta meta;
                char sdir[PATH_MAX];

                if (!session_name_ok(de->d_name) || session_path(state, de->d_name, sdir) < 0 ||
                    strlen(de->d_name) > SESSION_NAME_MAX)
                        continue;
                if (n == cap)
                        *out = xrealloc(*out, (cap = cap ? cap * 2 : 16) * sizeof(**out));
                memcpy((*out)[n].name, de->d_name, strlen(de->d_name) + 1);
                (*out)[n].updated = 0;
                /* only a session directory of the caller's is read (list_one names another
                 * user's without reading it) */
                if (mine_at(dirfd(dir), de->d_name) && session_meta_read(sdir, &meta) >= 0) {
                        (*out)[n].updated = meta.updated;
                        session_meta_free(&meta);
                }
                n++;
        }
        closedir(dir);
        if (n)
                qsort(*out, n, sizeof(**out), cmp_listed);
        return n;
}

int session_cli_sessions(int argc, char **argv)
{
        struct error err = {0};
        struct sess_args a;
        char state[PATH_MAX], bad[PATH_MAX];
        _cleanup_free_ struct listed *v = NULL;
        _cleanup_close_ int store = -1, sessions = -1;
        struct sess_owner owner = {0};
        size_t n;
        int r = sess_parse_args(argc, argv, NULL, &a, &err);

        if (r == 1) {
                fputs(usage_sessions, stdout);
                return 0;
        }
        if (r == 0 && a.n_pos)
                r = make_error(&err, 0, "sessions: `%s`: no argument is taken", a.pos[0]);
        if (r == 0 && (r = store_default(a.state, state)) < 0)
                r = make_error(&err, -r,
                               "sessions: no state directory (--state-dir, "
                               "XDG_STATE_HOME or HOME)");
        if (r == 0 && (r = session_store_loose(a.state, state, bad)) < 0)
                r = make_error(&err, 0, "sessions: the session store's directory `%s` %s", bad,
                               SESSION_LOOSE_HINT);
        if (r == 0) { /* as root: the store's owner's to list and sweep (session_owner.c) */
                store = store_open(state, &owner, "sessions", NULL, &err);
                if (store < 0 && err.errnum == ENOENT)
                        return 0; /* no store yet: no session */
                r = store < 0 ? -1 : 0;
        }
        if (r == 0 &&
            (sessions = openat(store, "sessions", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
                    0 &&
            errno != ENOENT)
                r = make_error(&err, errno, "sessions: %s/sessions", state);
        if (r == 0 && sessions >= 0)
                r = owner_claim(&owner, sessions, "sessions", "sessions", NULL, &err);
        if (r == 0)
                r = owner_become(&owner, "sessions", NULL, &err);
        if (r < 0) {
                error_print(&err);
                return EXIT_STOCKADE;
        }
        if (sessions < 0)
                return 0;
        /* beneath the store found, whatever its path names since */
        snprintf(state, sizeof(state), "/proc/self/fd/%d", store);
        session_sweep_unborn(state, SESSION_UNBORN_AGE);
        n = collect(state, &v);
        for (size_t i = 0; i < n; i++)
                list_one(state, v[i].name);
        return 0;
}

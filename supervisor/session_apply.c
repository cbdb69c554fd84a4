/*
 * `stockade apply NAME [PATH...]`: the session's changes written onto the host, all or
 * nothing. The session is locked (no run may add to it meanwhile), every change selected,
 * every host object it touches checked against the journal's baseline, and only when no
 * conflict is left (or --force) written (cowapply_write), then removed from the session
 * (cowapply_prune). An apply cut short is finished by the next one.
 */
#include "supervisor/session_cli.h"
#include "supervisor/session_cli_int.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowapply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_apply[] =
        "Usage: stockade apply NAME [PATH...] [--force] [--state-dir DIR]\n"
        "\n"
        "Write the changes of session NAME (see stockade diff NAME) onto the host, then remove\n"
        "them from the session. With PATHs, only the changes at or beneath them (relative to\n"
        "the mount, or the sandbox's absolute paths), and the new directories they need.\n"
        "\n"
        "All or nothing: a file the host changed since the run first changed it, a host file\n"
        "the journal has no baseline for, a new file whose name the host now uses with other\n"
        "content: each is named and nothing is written (exit 125). So is a host directory\n"
        "apply must write in and cannot (read-only to you and not yours), --force or not; one\n"
        "of yours that is read-only (the run made it writable, or wrote in it) is lent your\n"
        "write bit while apply works, then gets the session's mode.\n"
        "  --force   write anyway, over what the host has now\n"
        "  --state-dir DIR   the session store (default $XDG_STATE_HOME/stockade)\n"
        "\n"
        "An apply interrupted (a crash, a full disk) left each file old or new: run it again.\n";

/* One mount being applied. */
struct target {
        struct sess_mount *sm;
        struct cow_apply a;
        const char *paths[256]; /* relative to the mount */
        const char *args[256];  /* what the user wrote, for messages */
        size_t n_paths;
        char lent[PATH_MAX + 8]; /* SESSION/N/lent (cowapply_unlend_left) */
};

/* The mount an argument names, and the path beneath it (in rel, PATH_MAX). */
static int map_path(struct sess *s, const char *arg, size_t *mi, char *rel, struct error *err)
{
        char p[PATH_MAX];
        size_t n, best = 0;
        bool found = false;

        if (snprintf(p, sizeof(p), "%s", arg) >= (int)sizeof(p))
                return make_error(err, ENAMETOOLONG, "apply: %s", arg);
        for (n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
                p[n - 1] = '\0';
        if (p[0] != '/') {
                if (s->n != 1)
                        return make_error(err, 0,
                                          "apply: %s: the session has %zu cow mounts; give the "
                                          "path as the sandbox sees it (/...)",
                                          arg, s->n);
                *mi = 0;
                snprintf(rel, PATH_MAX, "%s", strcmp(p, ".") == 0 ? "" : p);
        } else {
                for (size_t i = 0; i < s->n; i++) {
                        const char *sb = s->mounts[i].m->sandbox;
                        size_t len = strcmp(sb, "/") == 0 ? 0 : strlen(sb);

                        if (strncmp(p, sb, len) == 0 && (p[len] == '/' || !p[len]) &&
                            (!found || len >= best)) {
                                found = true;
                                best = len;
                                *mi = i;
                        }
                }
                if (!found)
                        return make_error(err, 0, "apply: %s: not in a cow mount of session %s",
                                          arg, s->name);
                snprintf(rel, PATH_MAX, "%s", p + best + (p[best] == '/'));
        }
        while (strncmp(rel, "./", 2) == 0)
                memmove(rel, rel + 2, strlen(rel + 2) + 1);
        if (*rel && !cowdiff_path_ok(rel))
                return make_error(err, 0, "apply: %s: not a plain path (no `..`, `.` or `//`)",
                                  arg);
        return 0;
}

/* The targets: every mount with "" when no PATH is given. */
static int plan(struct sess *s, const struct sess_args *a, struct target *t, char (*rels)[PATH_MAX],
                struct error *err)
{
        for (size_t i = 0; i < s->n; i++) {
                t[i].sm = &s->mounts[i];
                snprintf(t[i].lent, sizeof(t[i].lent), "%s/lent", s->mounts[i].dir);
                t[i].a = (struct cow_apply){
                        .upper_fd = s->mounts[i].upper_fd,
                        .host_fd = s->mounts[i].host_fd,
                        .journal = &s->mounts[i].journal,
                        .diff = &s->mounts[i].diff,
                        .sel = xcalloc(s->mounts[i].diff.n + 1, 1),
                        .root_times = a->n_pos == 1,
                        .lent_path = t[i].lent,
                };
        }
        for (size_t k = 1; k < a->n_pos; k++) {
                size_t mi = 0;

                if (map_path(s, a->pos[k], &mi, rels[k], err) < 0)
                        return -1;
                t[mi].args[t[mi].n_paths] = a->pos[k];
                t[mi].paths[t[mi].n_paths++] = rels[k];
        }
        for (size_t i = 0; i < s->n; i++) {
                bool matched[256] = {false};

                if (a->n_pos == 1)
                        t[i].paths[t[i].n_paths++] = "";
                cowapply_select(&t[i].a, t[i].paths, t[i].n_paths, matched);
                for (size_t k = 0; a->n_pos > 1 && k < t[i].n_paths; k++)
                        if (!matched[k])
                                return make_error(err, 0,
                                                  "apply: %s: no change there in session %s",
                                                  t[i].args[k], s->name);
        }
        return 0;
}

static void print_path(FILE *out, const char *prefix, const char *path)
{
        _cleanup_free_ char *full = NULL;

        if (asprintf(&full, "%s%s", prefix, path) < 0)
                abort();
        cowdiff_quote(out, full);
}

/* Each conflict on a line of its own. Returns how many, or -1 with *err. */
static int check_all(struct sess *s, struct target *t, struct error *err)
{
        int n = 0;

        for (size_t i = 0; i < s->n; i++) {
                struct cow_conflicts cs;
                int r = cowapply_check(&t[i].a, &cs);

                if (r < 0)
                        return make_error(err, -r, "apply: session %s: checking %s", s->name,
                                          t[i].sm->m->host);
                for (size_t k = 0; k < cs.n; k++, n++) {
                        fprintf(stderr, "stockade: apply: conflict: ");
                        print_path(stderr, t[i].sm->prefix, cs.v[k].path);
                        fprintf(stderr, ": %s\n", cs.v[k].why);
                }
                cowapply_conflicts_free(&cs);
        }
        return n;
}

/* A host directory as the user knows it: the mount's host path, `path` (relative) beneath. */
static void print_host_dir(FILE *out, const char *host, const char *path)
{
        _cleanup_free_ char *full = NULL;
        bool slash = path[0] && host[strlen(host) - 1] != '/';

        if (asprintf(&full, "%s%s%s", host, slash ? "/" : "", path) < 0)
                abort();
        cowdiff_quote(out, full);
}

/* Each host directory apply cannot write in (cowapply_access), by its host path, on a line
 * of its own. Returns how many, or -1 with *err. Not skipped by --force: the write would
 * fail half-way, and a second apply the same. */
static int access_all(struct sess *s, struct target *t, struct error *err)
{
        int n = 0;

        for (size_t i = 0; i < s->n; i++) {
                struct cow_conflicts cs;
                int r = cowapply_access(&t[i].a, &cs);

                if (r < 0)
                        return make_error(err, -r, "apply: session %s: checking %s", s->name,
                                          t[i].sm->m->host);
                for (size_t k = 0; k < cs.n; k++, n++) {
                        fprintf(stderr, "stockade: apply: cannot write in ");
                        print_host_dir(stderr, t[i].sm->m->host, cs.v[k].path);
                        fprintf(stderr, ": %s\n", cs.v[k].why);
                }
                cowapply_conflicts_free(&cs);
        }
        return n;
}

static void warn_special(struct sess *s, struct target *t)
{
        for (size_t i = 0; i < s->n; i++)
                for (size_t k = 0; k < t[i].sm->diff.n; k++)
                        if (t[i].a.sel[k] == SEL_SPECIAL) {
                                fprintf(stderr, "stockade: apply: not applied: ");
                                print_path(stderr, t[i].sm->prefix, t[i].sm->diff.v[k].path);
                                fputs(": a FIFO, socket or device (it stays in the session)\n",
                                      stderr);
                        }
}

static size_t count_selected(const struct target *t)
{
        size_t n = 0;

        for (size_t k = 0; k < t->sm->diff.n; k++)
                n += t->a.sel[k] == SEL_YES && t->sm->diff.v[k].op != COW_SAME;
        return n;
}

/* Write, then prune, mount after mount. */
static int write_all(struct sess *s, struct target *t, struct error *err)
{
        size_t total = 0;

        for (size_t i = 0; i < s->n; i++) {
                char journal[PATH_MAX + 16];
                _cleanup_free_ char *failed = NULL;
                size_t n = count_selected(&t[i]);
                int r = cowapply_write(&t[i].a, &failed);

                if (r < 0)
                        return make_error(err, -r,
                                          "apply: session %s: writing %s%s in %s (partly "
                                          "applied: run `stockade apply %s` again to finish)",
                                          s->name, t[i].sm->prefix, failed ? failed : "",
                                          t[i].sm->m->host, s->name);
                snprintf(journal, sizeof(journal), "%s/journal", t[i].sm->dir);
                r = cowapply_prune(&t[i].a, journal, &failed);
                if (r < 0)
                        return make_error(err, -r,
                                          "apply: session %s: applied, but removing %s from the "
                                          "session failed",
                                          s->name, failed ? failed : "it");
                if (n)
                        printf("applied %zu change%s to %s\n", n, n == 1 ? "" : "s",
                               t[i].sm->m->host);
                total += n;
        }
        if (!total)
                printf("nothing to apply in session %s\n", s->name);
        return 0;
}

/* The refusal after the checks: conflicts, directories apply cannot write in, or both. */
static int refuse(struct sess *s, int conflicts, int dirs, struct error *err)
{
        if (!dirs)
                return make_error(err, 0,
                                  "apply: session %s: nothing applied, %d conflict%s (the host "
                                  "changed since the run; --force writes over it)",
                                  s->name, conflicts, conflicts == 1 ? "" : "s");
        return make_error(err, 0,
                          "apply: session %s: nothing applied, %d director%s it cannot write "
                          "in%s (%s; or apply the other paths: stockade apply %s PATH...)",
                          s->name, dirs, dirs == 1 ? "y" : "ies",
                          conflicts ? " and conflicts (above)" : "",
                          dirs == 1 ? "its owner may make it writable"
                                    : "their owners may make them writable",
                          s->name);
}

static int apply(struct sess *s, const struct sess_args *a, bool force, struct error *err)
{
        struct target *t = xcalloc(SESSION_MOUNTS_MAX, sizeof(*t));
        char(*rels)[PATH_MAX] = xcalloc(ARRAY_SIZE(a->pos), PATH_MAX);
        int r = plan(s, a, t, rels, err), conflicts = 0, dirs = 0;

        if (r >= 0) {
                warn_special(s, t);
                r = dirs = access_all(s, t, err);
        }
        if (r >= 0 && !force)
                r = conflicts = check_all(s, t, err);
        if (r >= 0 && (conflicts > 0 || dirs > 0))
                r = refuse(s, conflicts, dirs, err);
        if (r >= 0)
                r = write_all(s, t, err);
        for (size_t i = 0; i < SESSION_MOUNTS_MAX; i++)
                free(t[i].a.sel);
        free(t);
        free(rels);
        return r;
}

int session_cli_apply(int argc, char **argv)
{
        static const char *const flags[] = {"force", NULL};
        struct error err = {0};
        struct sess_args a;
        struct sess s = {0};
        _cleanup_close_ int lock = -1;
        bool opened = false;
        int r = sess_parse_args(argc, argv, flags, &a, &err);

        if (r == 1) {
                fputs(usage_apply, stdout);
                return 0;
        }
        if (r == 0 && a.n_pos < 1)
                r = make_error(&err, 0,
                               "apply: give a session name (stockade sessions lists them)");
        if (r == 0)
                r = sess_find(&s, a.state, a.pos[0], &err);
        opened = r == 0;
        if (r == 0)
                r = sess_as_owner(&s, "apply", &err);
        if (r == 0) {
                lock = sess_lock(&s, &err);
                r = lock < 0 ? -1 : 0;
        }
        if (r == 0)
                r = sess_unlend(&s, "apply", &err);
        if (r == 0) {
                sess_load(&s);
                if (sess_report(&s))
                        r = make_error(&err, 0,
                                       "apply: session %s is damaged: nothing applied "
                                       "(stockade discard %s removes it)",
                                       s.name, s.name);
        }
        if (r == 0)
                r = apply(&s, &a, a.flag[0], &err);
        if (opened)
                sess_close(&s);
        if (r < 0) {
                error_print(&err);
                return EXIT_STOCKADE;
        }
        return 0;
}

/*
 * The real paths of the hidden entries (walls_int.h): where a symlink on the way to a hidden
 * path leads, hidden too, also where that does not exist yet.
 */
#include "supervisor/pathcache.h"
#include "supervisor/walls_int.h"
#include "supervisor/grants.h"
#include "supervisor/places.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether a path that glob(3) produced has a "." or ".." component (GLOB_PERIOD lets '*'
 * match them): "/home/.." must not hide "/". */
bool walls_has_dot_component(const char *path)
{
        for (const char *c = path; (c = strchr(c, '/'));) {
                c++;
                if (c[0] == '.' &&
                    (c[1] == '\0' || c[1] == '/' || (c[1] == '.' && (c[2] == '\0' || c[2] == '/'))))
                        return true;
        }
        return false;
}

static bool would_be(const char *path, char real[PATH_MAX], int depth);

/* Where the dangling symlink `link` would lead: its target, resolved as would_be does (an
 * outside review hid ~/.netrc -> dotfiles/netrc, the target not there at the start, then
 * wrote the target and read it by both names). */
static bool link_would_be(const char *link, char real[PATH_MAX], int depth)
{
        char target[PATH_MAX], next[2 * PATH_MAX];
        struct stat st;
        ssize_t n;

        if (depth >= 40 || pc_lstat(link, &st) < 0 || !S_ISLNK(st.st_mode) ||
            (n = readlink(link, target, sizeof(target) - 1)) <= 0)
                return false;
        target[n] = '\0';
        if (target[0] == '/')
                snprintf(next, sizeof(next), "%s", target);
        else
                snprintf(next, sizeof(next), "%.*s/%s", (int)(strrchr(link, '/') - link), link,
                         target);
        return strlen(next) < PATH_MAX && would_be(next, real, depth + 1);
}

/* realpath(3) of `path`, or, when it does not exist, of its nearest existing ancestor with
 * the rest appended: where the path would be made; a dangling symlink on the way counts as
 * where it leads. false if none resolves. */
static bool would_be(const char *path, char real[PATH_MAX], int depth)
{
        char head[PATH_MAX], rest[PATH_MAX] = "";
        char *slash;

        if (!places_absent(path))
                return pc_realpath(path, real) != NULL || link_would_be(path, real, depth);
        snprintf(head, sizeof(head), "%s", path);
        while ((slash = strrchr(head, '/')) && slash != head) {
                char tail[PATH_MAX];

                snprintf(tail, sizeof(tail), "%s%s", slash, rest);
                snprintf(rest, sizeof(rest), "%s", tail);
                *slash = '\0';
                if (!places_absent(head)) {
                        if ((!pc_realpath(head, real) && !link_would_be(head, real, depth)) ||
                            strlen(real) + strlen(rest) >= PATH_MAX)
                                return false;
                        strcat(real, strcmp(real, "/") ? rest : rest + 1);
                        return true;
                }
        }
        return false;
}

static bool real_or_would_be(const char *path, char real[PATH_MAX])
{
        return would_be(path, real, 0);
}

/* A hidden entry's real path, if a symlink on the way leads elsewhere: hidden as well, for a
 * path that does not exist yet too (an outside review made `--hide LINK/secret`, LINK a
 * symlink to a writable directory, as DIR/secret and read it back by the hidden name). */
static void hide_real(struct vfs_view *v, const char *path, const char *origin)
{
        char real[PATH_MAX];
        struct vfs_mount m;

        if (!real_or_would_be(path, real) || strcmp(real, path) == 0 || vfs_view_hidden(v, real))
                return;
        if (vfs_mount_init_literal(&m, VFS_HIDDEN, real, NULL, origin) == 0)
                vfs_view_add(v, &m);
}

/* A pattern whose literal head (its components before the first that holds a wildcard)
 * goes through a symlink, dangling or not: the pattern again beneath where the head leads
 * (an outside review hid ~/dotcfg/gh/ANY.yml, ~/dotcfg -> dotfiles/cfg, then read a match made
 * during the run by both names). */
static void hide_real_head(struct vfs_view *v, const char *pattern, const char *origin)
{
        char head[PATH_MAX], real[PATH_MAX], full[2 * PATH_MAX];
        size_t n = strcspn(pattern, "*?[\\");
        struct vfs_mount m;
        char *slash;

        snprintf(head, sizeof(head), "%.*s", (int)n, pattern);
        slash = strrchr(head, '/');
        if (!slash || slash == head)
                return;
        *slash = '\0';
        if (!real_or_would_be(head, real) || strcmp(real, head) == 0 ||
            real[strcspn(real, "*?[\\")] != '\0' ||
            snprintf(full, sizeof(full), "%s%s", strcmp(real, "/") ? real : "",
                     pattern + (slash - head)) >= PATH_MAX)
                return;
        if (vfs_mount_init(&m, VFS_HIDDEN, full, NULL, origin) == 0)
                vfs_view_add(v, &m);
}

/* A pattern's directories that exist now, where one goes through a symlink (~/cfg/ANY/token,
 * ~/cfg/a -> ../real/a): the pattern's last component again beneath where each leads (an
 * outside review read a token the host wrote there during the run, by both names). */
static void hide_real_dirs(struct vfs_view *v, const char *pattern, const char *origin)
{
        const char *last = strrchr(pattern, '/');
        char dirs[PATH_MAX], real[PATH_MAX], full[2 * PATH_MAX];
        struct vfs_mount m;
        glob_t g;

        if (!last || last == pattern ||
            snprintf(dirs, sizeof(dirs), "%.*s", (int)(last - pattern), pattern) >=
                    (int)sizeof(dirs) ||
            dirs[strcspn(dirs, "*?[\\")] == '\0' || /* no wildcard there: hide_real_head's */
            glob(dirs, GLOB_NOSORT | GLOB_PERIOD | GLOB_ONLYDIR, NULL, &g) != 0)
                return;
        for (size_t j = 0; j < g.gl_pathc; j++) {
                if (walls_has_dot_component(g.gl_pathv[j]) || !pc_realpath(g.gl_pathv[j], real) ||
                    strcmp(real, g.gl_pathv[j]) == 0 || real[strcspn(real, "*?[\\")] != '\0' ||
                    snprintf(full, sizeof(full), "%s%s", strcmp(real, "/") ? real : "", last) >=
                            PATH_MAX)
                        continue;
                if (vfs_mount_init(&m, VFS_HIDDEN, full, NULL, origin) == 0)
                        vfs_view_add(v, &m);
        }
        globfree(&g);
}

/*
 * The view hides by path; Landlock by inode, so a symlink on the way to a hidden path (~/.aws
 * -> dotfiles/aws, a symlinked ~/.config) does not reopen it by its real path. Where the
 * view is the only wall (copy-on-write, no Landlock), the real paths are hidden too, as
 * they are at the start (a link made later is the program's own, and leads to shown ground).
 */
void walls_hide_real_paths(struct vfs_view *v)
{
        size_t n = v->n_mounts;

        for (size_t i = 0; i < n; i++) {
                char path[PATH_MAX], origin[256];
                glob_t g;

                /* nofollow: a symlink there is someone's, to have its target hidden */
                if (v->mounts[i].mode != VFS_HIDDEN || v->mounts[i].except || v->mounts[i].alias ||
                    v->mounts[i].nofollow)
                        continue;
                snprintf(path, sizeof(path), "%s", v->mounts[i].sandbox);
                snprintf(origin, sizeof(origin), "%s",
                         v->mounts[i].origin ? v->mounts[i].origin : "");
                if (!v->mounts[i].pattern) {
                        hide_real(v, path, origin);
                        continue;
                }
                hide_real_head(v, path, origin);
                hide_real_dirs(v, path, origin);
                if (glob(path, GLOB_NOSORT | GLOB_PERIOD, NULL, &g) != 0)
                        continue;
                for (size_t j = 0; j < g.gl_pathc; j++)
                        if (!walls_has_dot_component(g.gl_pathv[j]))
                                hide_real(v, g.gl_pathv[j], origin);
                globfree(&g);
        }
}

/* Where hidden entry `m` lies on the host, as an existing canonical directory (or the path
 * itself) `anc` and what follows it, `rest` ("" or "/..."; a pattern's wildcards stay there):
 * the nearest existing ancestor of its literal part, symlinks resolved. */
static bool split_existing(const struct vfs_mount *m, char anc[PATH_MAX], char rest[PATH_MAX])
{
        char head[PATH_MAX];
        size_t n = m->pattern ? strcspn(m->sandbox, "*?[\\") : strlen(m->sandbox);
        char *slash;

        snprintf(head, sizeof(head), "%.*s", (int)n, m->sandbox);
        if (m->pattern && (slash = strrchr(head, '/')))
                *slash = '\0'; /* the components before the first that holds a wildcard */
        while (head[0] && places_absent(head)) {
                slash = strrchr(head, '/');
                if (!slash)
                        return false;
                *slash = '\0';
        }
        if (!pc_realpath(head[0] ? head : "/", anc))
                return false;
        /* nofollow: the aliases of what the path names only while no symlink leads away */
        if (m->nofollow && strcmp(anc, head[0] ? head : "/") != 0)
                return false;
        snprintf(rest, PATH_MAX, "%s", m->sandbox + strlen(head));
        return true;
}

struct alias_ctx {
        struct vfs_view *v;
        const struct vfs_mount *m; /* a copy: vfs_view_add may move the entries */
        const char *anc, *rest;
};

static void hide_alias(const char *alias, void *arg)
{
        struct alias_ctx *a = arg;
        char path[2 * PATH_MAX], except[2 * PATH_MAX];
        struct vfs_mount m;

        if (snprintf(path, sizeof(path), "%s%s", strcmp(alias, "/") ? alias : "", a->rest) >=
                    PATH_MAX ||
            alias[strcspn(alias, "*?[\\")] != '\0' || /* a name a pattern would misread */
            (!a->m->pattern && vfs_view_hidden_above(a->v, path)))
                return;
        if ((a->m->pattern ? vfs_mount_init(&m, VFS_HIDDEN, path, NULL, a->m->origin)
                           : vfs_mount_init_literal(&m, VFS_HIDDEN, path, NULL, a->m->origin)) < 0)
                return;
        /* One the view alone hides (beneath /var/tmp: cow.c) is the view's alone there too. */
        m.view_only = a->m->view_only;
        m.nofollow = a->m->nofollow;
        /* An exception (your own home among the others') holds under the alias as well. */
        if (a->m->except && vfs_path_has_prefix(a->m->except, a->anc) &&
            snprintf(except, sizeof(except), "%s%s", strcmp(alias, "/") ? alias : "",
                     a->m->except + (strcmp(a->anc, "/") ? strlen(a->anc) : 0)) < PATH_MAX)
                m.except = xstrdup(except);
        vfs_view_add(a->v, &m);
}

/* What pattern `m` matches now, under every other name too: an alias's root may lie beneath
 * the pattern's head (a bind of one home of /home/ANY), where the head has none. */
static void hide_match_aliases(struct vfs_view *v, const struct grants_mnts *t,
                               const struct vfs_mount *m)
{
        struct vfs_mount lit = *m;
        char real[PATH_MAX], none[1] = "";
        struct alias_ctx a = {.v = v, .m = &lit, .anc = real, .rest = none};
        glob_t g;

        lit.pattern = false;
        lit.except = NULL;
        if (glob(m->sandbox, GLOB_NOSORT | GLOB_PERIOD, NULL, &g) != 0)
                return;
        for (size_t j = 0; j < g.gl_pathc; j++)
                if (!walls_has_dot_component(g.gl_pathv[j]) && vfs_mount_hides(m, g.gl_pathv[j]) &&
                    pc_realpath(g.gl_pathv[j], real))
                        grants_aliases(t, real, hide_alias, &a);
        globfree(&g);
}

void walls_hide_aliases(struct vfs_view *v)
{
        struct grants_mnts *t = grants_mnts_read();
        size_t n = v->n_mounts;

        for (size_t i = 0; i < n; i++) {
                char anc[PATH_MAX], rest[PATH_MAX], sandbox[PATH_MAX], except[PATH_MAX],
                        origin[256];
                struct vfs_mount copy;
                struct alias_ctx a = {.v = v, .m = &copy, .anc = anc, .rest = rest};

                if (v->mounts[i].mode != VFS_HIDDEN || v->mounts[i].alias ||
                    !split_existing(&v->mounts[i], anc, rest))
                        continue;
                copy = v->mounts[i];
                snprintf(sandbox, sizeof(sandbox), "%s", v->mounts[i].sandbox);
                snprintf(origin, sizeof(origin), "%s",
                         v->mounts[i].origin ? v->mounts[i].origin : "");
                snprintf(except, sizeof(except), "%s",
                         v->mounts[i].except ? v->mounts[i].except : "");
                copy.sandbox = sandbox;
                copy.origin = origin;
                copy.except = except[0] ? except : NULL;
                grants_aliases(t, anc, hide_alias, &a);
                if (copy.pattern)
                        hide_match_aliases(v, t, &copy);
        }
        grants_mnts_free(t);
}

/*
 * Hidden paths covered in the sandbox's mount namespace (shim/mntns.h, `mask`): an empty
 * read-only tmpfs of mode 000 over a directory, /dev/null read-only over a file. Then the
 * calls the kernel resolves itself — chdir, statfs, the xattr getters, inotify, an O_PATH
 * open and its fstat — find nothing of the hidden object either, and the emulation's fast
 * ways, which never cross a mount (RESOLVE_NO_XDEV), hand such a path to the view.
 *
 * Beneath a copy-on-write mount this is the only kernel wall (Landlock grants an overlay
 * whole), and name changes there resolve in the view (sup->cow_hides). Elsewhere it is a
 * third wall, wherever a mount namespace is made, for every hidden path but one that holds
 * a path the view shows (the working directory beneath another user's home, a --rw path
 * beneath a hidden one): covering it would cover those too.
 */
#include "supervisor/walls.h"
#include "supervisor/cow.h"
#include "shim/mntns.h"
#include "supervisor/options.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Whether a path the view shows lies at or beneath `path`: a mount that is not hidden, or
 * the working directory. */
static bool holds_shown(const struct supervisor *sup, const char *path)
{
        if (vfs_path_has_prefix(sup->cwd, path))
                return true;
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];

                if (m->mode != VFS_HIDDEN && vfs_path_has_prefix(m->sandbox, path))
                        return true;
        }
        return false;
}

/* Whether the sandbox path `path` lies strictly beneath a copy-on-write mount. */
static bool beneath_cow(const struct cow_state *c, const char *path)
{
        for (size_t i = 0; i < c->n; i++)
                if (vfs_path_has_prefix(path, c->m[i].sandbox) &&
                    strcmp(path, c->m[i].sandbox) != 0)
                        return true;
        return false;
}

/* ... or beneath a private directory (--tmp, the default /tmp), which Landlock grants whole
 * as well: only a remapped mount's hidden paths can lie there (remap.c), by an alias. */
static bool beneath_private(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];

                if (m->mode == VFS_TMP && m->host && strcmp(m->host, m->sandbox) != 0 &&
                    vfs_path_has_prefix(path, m->sandbox) && strcmp(path, m->sandbox) != 0)
                        return true;
        }
        return false;
}

/* What masks_add could not cover: how many for want of mounts, and under --fast the first
 * path that no mask can cover. */
struct uncovered {
        size_t left;
        char path[PATH_MAX];
};

/* One mask (shim/mntns.h) at the sandbox path `path`, whose host object is at `host`, where
 * it is due (above). Returns whether it was made beneath a copy-on-write mount. */
static bool mask_one(struct supervisor *sup, const char *path, const char *host,
                     struct uncovered *u)
{
        bool cow = beneath_cow(&sup->cow, path) || beneath_private(&sup->view, path);
        struct mnt_bind *b;
        struct stat st;

        if (lstat(host, &st) < 0 || S_ISLNK(st.st_mode))
                return false;
        if (!cow && holds_shown(sup, path)) {
                if (!u->path[0])
                        snprintf(u->path, sizeof(u->path), "%s", path);
                return false;
        }
        for (size_t i = 0; i < sup->n_binds; i++)
                if (sup->binds[i].mask && strcmp(sup->binds[i].target, path) == 0)
                        return false; /* two entries, one path */
        if (sup->n_binds == MNT_BINDS_MAX) {
                u->left++;
                return false;
        }
        b = walls_new_bind(sup);
        snprintf(b->target, sizeof(b->target), "%s", path);
        b->mask = true;
        /* beneath cow it is the only kernel wall, and under --fast the kernel answers stat
         * there: fail closed */
        b->optional = !cow && !sup->cfg->fast;
        return cow;
}

/*
 * Whether hidden entry m hides, or as a pattern may hide, a path strictly beneath cow mount
 * `root`. A pattern matches paths of as many components as it has (mount.h), each by
 * fnmatch: it may reach beneath the mount only if it is longer and its first components
 * match the mount's (the pattern for other users' homes never reaches ~/project).
 */
static bool hides_beneath(const struct vfs_mount *m, const char *root)
{
        const char *p = m->sandbox, *r = root;
        char pc[NAME_MAX + 1], rc[NAME_MAX + 1];

        if (!m->pattern)
                return vfs_path_has_prefix(m->sandbox, root) && strcmp(m->sandbox, root) != 0;
        while (vfs_path_next_component(&r, rc, sizeof(rc)))
                if (!vfs_path_next_component(&p, pc, sizeof(pc)) || fnmatch(pc, rc, 0) != 0)
                        return false;
        return vfs_path_next_component(&p, pc, sizeof(pc));
}

static bool may_hide_beneath_cow(const struct cow_state *c, const struct vfs_mount *m)
{
        for (size_t i = 0; i < c->n; i++)
                if (hides_beneath(m, c->m[i].sandbox))
                        return true;
        return false;
}

/*
 * The masks (above), after every other bind: a pattern is expanded as it matches now (its
 * "." and ".." left out: a pattern for the entries of a directory must not cover that
 * directory and its parent, an outside review's workspace); a match that
 * holds the entry's exception (other users' homes: yours) is left to the emulation, as is a
 * symlink (the view hides its target, which gets its own mask).
 */
static bool dot_or_dotdot(const char *path)
{
        const char *last = strrchr(path, '/');

        last = last ? last + 1 : path;
        return strcmp(last, ".") == 0 || strcmp(last, "..") == 0;
}

/* The sandbox path of `host`, a match of entry m's pattern: itself, or for an alias
 * (mount.h), beneath the remapped mount that the alias lies in. */
static bool sandbox_name(const struct supervisor *sup, const struct vfs_mount *m, const char *host,
                         char path[PATH_MAX])
{
        const struct vfs_mount *r = m->alias ? vfs_view_mount_of(&sup->view, m->sandbox) : NULL;

        if (!m->alias)
                return snprintf(path, PATH_MAX, "%s", host) < PATH_MAX;
        if (!r || !vfs_mount_remapped(r) || !vfs_path_has_prefix(host, r->host))
                return false;
        return snprintf(path, PATH_MAX, "%s%s", r->sandbox, host + strlen(r->host)) < PATH_MAX;
}

int masks_add(struct supervisor *sup, struct error *err)
{
        struct uncovered u = {0};
        size_t masks = 0;

        if (!sup->layers.mntns)
                return 0;
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];
                glob_t g;

                if (m->mode == VFS_HIDDEN &&
                    (may_hide_beneath_cow(&sup->cow, m) ||
                     (m->alias && beneath_private(&sup->view, m->sandbox))))
                        sup->cow_hides = true;
                /* view_only: no secret there, and a mount costs every start (~0.5 ms) */
                if (m->mode != VFS_HIDDEN || m->view_only)
                        continue;
                if (!m->pattern) {
                        if (!m->except || !vfs_path_has_prefix(m->except, m->sandbox))
                                masks += mask_one(sup, m->sandbox, m->alias ? m->host : m->sandbox,
                                                  &u);
                        continue;
                }
                if (glob(m->alias ? m->host : m->sandbox, GLOB_PERIOD | GLOB_NOSORT, NULL, &g) != 0)
                        continue;
                for (size_t k = 0; k < g.gl_pathc; k++) {
                        char path[PATH_MAX];

                        if (!sandbox_name(sup, m, g.gl_pathv[k], path) ||
                            dot_or_dotdot(g.gl_pathv[k]) ||
                            (m->except && vfs_path_has_prefix(m->except, path)))
                                continue;
                        masks += mask_one(sup, path, g.gl_pathv[k], &u);
                }
                globfree(&g);
        }
        if (sup->cfg->verbose) {
                size_t all = 0;

                for (size_t i = 0; i < sup->n_binds; i++)
                        all += sup->binds[i].mask;
                fprintf(stderr,
                        "stockade: hidden paths covered in the mount namespace: %zu (chdir, "
                        "O_PATH, xattrs and inotify find nothing there)\n",
                        all);
        }
        if (sup->cow_hides && sup->cfg->verbose)
                fprintf(stderr,
                        "stockade: copy-on-write: hidden paths beneath it (%zu covered by "
                        "mounts); opens and name changes there resolve in the view\n",
                        masks);
        /* --fast: the kernel answers stat and lists directories; only a mask keeps a hidden
         * path's names and metadata from it. */
        if (sup->cfg->fast && u.path[0])
                return make_error(err, 0,
                                  "--fast: the hidden path `%s` holds a path the sandbox sees, "
                                  "so no mount can cover it, and the kernel would list its "
                                  "names; run without --fast",
                                  u.path);
        if (sup->cfg->fast && u.left)
                return make_error(err, 0,
                                  "--fast: %zu hidden paths cannot be covered (more than %d "
                                  "mounts), and the kernel would list their names; run without "
                                  "--fast",
                                  u.left, MNT_BINDS_MAX);
        if (u.left && !sup->cfg->quiet)
                fprintf(stderr,
                        "stockade: note: %zu hidden paths are not covered in the mount "
                        "namespace (more than %d mounts): the emulation and Landlock hide "
                        "them%s\n",
                        u.left, MNT_BINDS_MAX,
                        sup->cow_hides ? " (beneath the copy-on-write directory, the "
                                         "emulation alone)"
                                       : "");
        return 0;
}

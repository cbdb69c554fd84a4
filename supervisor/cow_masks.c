/*
 * The hidden paths beneath a copy-on-write mount (cow.h): Landlock grants an overlay whole,
 * so they are covered in the sandbox's mount namespace instead (shim/mntns.h, `mask`), and
 * name changes there resolve in the view (sup->cow_hides).
 */
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

/* One mask (shim/mntns.h) at the sandbox path `path` if it lies beneath a cow mount. */
static void mask_one(struct supervisor *sup, const char *path, size_t *left)
{
        const struct cow_state *c = &sup->cow;
        struct mnt_bind *b;
        struct stat st;

        /* A cow mount's host path is its sandbox path (HOST:SANDBOX is refused). */
        for (size_t i = 0; i < c->n; i++) {
                if (!vfs_path_has_prefix(path, c->m[i].sandbox) ||
                    strcmp(path, c->m[i].sandbox) == 0 || lstat(path, &st) < 0)
                        continue;
                if (sup->n_binds == MNT_BINDS_MAX) {
                        ++*left;
                        return;
                }
                sup->binds = xrealloc(sup->binds, (sup->n_binds + 1) * sizeof(*sup->binds));
                b = &sup->binds[sup->n_binds++];
                memset(b, 0, sizeof(*b));
                snprintf(b->target, sizeof(b->target), "%s", path);
                b->mask = true;
                return;
        }
}

/* The next component of *p (advanced past it) into out; false at the end. */
static bool next_component(const char **p, char *out, size_t size)
{
        size_t n;

        while (**p == '/')
                ++*p;
        n = strcspn(*p, "/");
        if (!n || n >= size)
                return false;
        memcpy(out, *p, n);
        out[n] = '\0';
        *p += n;
        return true;
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
        while (next_component(&r, rc, sizeof(rc)))
                if (!next_component(&p, pc, sizeof(pc)) || fnmatch(pc, rc, 0) != 0)
                        return false;
        return next_component(&p, pc, sizeof(pc));
}

static bool may_hide_beneath_cow(const struct cow_state *c, const struct vfs_mount *m)
{
        for (size_t i = 0; i < c->n; i++)
                if (hides_beneath(m, c->m[i].sandbox))
                        return true;
        return false;
}

/*
 * Landlock grants an overlay whole (the walk from a file in it never meets the host paths it
 * hides): the hidden paths beneath a cow mount are covered in the sandbox's namespace
 * instead, so that a call the kernel resolves itself (chdir, getxattr, an O_PATH open) finds
 * nothing there either. A pattern is expanded as it matches now; an entry with an exception
 * is left to the emulation (covering it would hide the exception too).
 */
void cow_add_masks(struct supervisor *sup)
{
        size_t left = 0, masks = sup->n_binds;

        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];
                glob_t g;

                if (m->mode == VFS_HIDDEN && may_hide_beneath_cow(&sup->cow, m))
                        sup->cow_hides = true;
                if (m->mode != VFS_HIDDEN || m->except)
                        continue;
                if (!m->pattern) {
                        mask_one(sup, m->sandbox, &left);
                        continue;
                }
                if (glob(m->sandbox, GLOB_PERIOD | GLOB_NOSORT, NULL, &g) != 0)
                        continue;
                for (size_t k = 0; k < g.gl_pathc; k++)
                        mask_one(sup, g.gl_pathv[k], &left);
                globfree(&g);
        }
        masks = sup->n_binds - masks;
        if (sup->cow_hides && sup->cfg->verbose)
                fprintf(stderr,
                        "stockade: copy-on-write: hidden paths beneath it (%zu covered by "
                        "mounts); opens and name changes there resolve in the view\n",
                        masks);
        if (left && !sup->cfg->quiet)
                fprintf(stderr,
                        "stockade: note: %zu hidden paths beneath the copy-on-write directory "
                        "are hidden by the emulation only (more than %d mounts)\n",
                        left, MNT_BINDS_MAX);
}

/*
 * Remapped mounts: `--ro HOST:SANDBOX`, `--rw HOST:SANDBOX`, `--cow HOST:SANDBOX`, a host
 * directory shown at another sandbox path. Inside the sandbox's mount namespace HOST is
 * bound at SANDBOX (read-only, recursively, for --ro: shim/mntns.c), so that the calls the
 * kernel resolves itself (chdir, exec, getcwd, an O_PATH open) and those the supervisor
 * emulates, which resolve from the namespace's root (spawn.c), see the same tree.
 *
 * What is checked before anything runs (remap_checks), and how hidden paths follow a remap
 * (remap_alias_hidden): the view hides by sandbox path, Landlock and the places by host
 * inode, so a hidden host object beneath HOST gets a second name beneath SANDBOX (an
 * `alias` entry, for the view and the masks), and a path hidden beneath SANDBOX is hidden
 * at HOST too. HOST itself is hidden at its own path (hide_source) unless a path the view
 * shows lies in it; then it stays visible there through `/`, as with a bind mount.
 */
#include "supervisor/remap.h"
#include "supervisor/error.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The mount that `path` lies in other than `self`: the longest prefix among the others. */
static const struct vfs_mount *mount_above(const struct vfs_view *v, const char *path,
                                           const struct vfs_mount *self)
{
        const struct vfs_mount *best = NULL;

        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];

                if (m == self || m->mode == VFS_HIDDEN || !vfs_path_has_prefix(path, m->sandbox))
                        continue;
                if (!best || strlen(m->sandbox) > strlen(best->sandbox))
                        best = m;
        }
        return best;
}

static bool overlap(const char *a, const char *b)
{
        return vfs_path_has_prefix(a, b) || vfs_path_has_prefix(b, a);
}

static bool private_tmp(const struct vfs_mount *m)
{
        return m->mode == VFS_TMP && (!m->host || strcmp(m->host, m->sandbox) != 0);
}

/* What a remap's target is on the host: a directory for a directory, a regular file for a
 * file (HOST is one or the other: walls.c), reached without a symlink. */
static int target_exists(const struct vfs_mount *r, const struct vfs_mount *above,
                         struct error *err)
{
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        struct stat st, src = {0};
        char host[PATH_MAX];
        int fd, e = 0;

        if (above && vfs_mount_remapped(above))
                snprintf(host, sizeof(host), "%s%s", above->host,
                         r->sandbox + strlen(above->sandbox));
        else
                snprintf(host, sizeof(host), "%s", r->sandbox);
        if (stat(r->host, &src) < 0)
                return make_error(err, errno, "run: %s: host path `%s`", r->origin, r->host);
        fd = (int)syscall(SYS_openat2, AT_FDCWD, host, &how, sizeof(how));
        if (fd < 0 || fstat(fd, &st) < 0)
                e = errno;
        else if (S_ISDIR(src.st_mode) ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
                e = S_ISDIR(src.st_mode) ? ENOTDIR : EISDIR;
        if (fd >= 0)
                close(fd);
        if (!e)
                return 0;
        return make_error(err, e,
                          "run: %s: `%s` must be an existing %s, reached without a symlink "
                          "(the host %s is mounted over it)",
                          r->origin, r->sandbox, S_ISDIR(src.st_mode) ? "directory" : "file",
                          S_ISDIR(src.st_mode) ? "tree" : "file");
}

static int check_one(const struct vfs_view *v, const struct vfs_mount *r, struct error *err)
{
        const struct vfs_mount *above;

        if (strcmp(r->sandbox, "/") == 0 || vfs_path_has_prefix(r->sandbox, "/proc") ||
            vfs_path_has_prefix(r->sandbox, "/dev"))
                return make_error(err, 0, "run: %s: `%s` cannot be mounted over", r->origin,
                                  r->sandbox);
        if (strpbrk(r->sandbox, "*?[\\") || strpbrk(r->host, "*?[\\"))
                return make_error(err, 0,
                                  "run: %s: a remapped path holding * ? [ or \\ is not "
                                  "supported",
                                  r->origin);
        /* The kernel's own trees: what the view makes of them (/proc of the sandbox's
         * processes, /dev of a few devices) would not hold beneath another name. */
        if (strcmp(r->host, "/") == 0 || vfs_path_has_prefix(r->host, "/proc") ||
            vfs_path_has_prefix(r->host, "/dev") || vfs_path_has_prefix(r->host, "/sys"))
                return make_error(err, 0,
                                  "run: %s: host path `%s` cannot be shown at another path (/, "
                                  "/proc, /dev and /sys keep their own)",
                                  r->origin, r->host);
        above = mount_above(v, r->sandbox, r);
        /* In a cow mount, a --ro or --rw one is bound over the overlay's directory (the
         * session holds nothing of it); in a private directory, over a directory made there
         * for it (remap_in_private), which no host path shows. A cow one in either, and a
         * file in a private directory, are not yet. */
        if (above && ((above->mode == VFS_COW || private_tmp(above)) && r->mode == VFS_COW))
                return make_error(err, 0,
                                  "run: %s: `%s` lies in the %s `%s` (%s); a copy-on-write "
                                  "remapped mount there is not yet supported",
                                  r->origin, r->sandbox,
                                  above->mode == VFS_COW ? "copy-on-write" : "private",
                                  above->sandbox, above->origin);
        if (above && private_tmp(above)) {
                struct stat st;

                if (stat(r->host, &st) == 0 && !S_ISDIR(st.st_mode))
                        return make_error(err, 0,
                                          "run: %s: a file shown in the private `%s` is not yet "
                                          "supported",
                                          r->origin, above->sandbox);
        } else if (target_exists(r, above, err) < 0) {
                return -1;
        }
        for (size_t j = 0; j < v->n_mounts; j++) {
                const struct vfs_mount *b = &v->mounts[j];
                bool def = b->origin && strcmp(b->origin, "default view") == 0;

                if (b == r || b->mode == VFS_HIDDEN || vfs_mount_remapped(b) ||
                    !vfs_path_has_prefix(b->sandbox, r->sandbox) ||
                    strcmp(b->sandbox, r->sandbox) == 0)
                        continue;
                return make_error(err, 0,
                                  "run: %s: `%s` (%s) lies beneath `%s`, which it mounts over; "
                                  "%s",
                                  r->origin, b->sandbox, b->origin, r->sandbox,
                                  def ? "run from another directory, or give --workdir"
                                      : "give it as HOST:SANDBOX");
        }
        /* One host tree read-only at one path and writable at another: which would it be? */
        for (size_t j = 0; r->mode == VFS_RO && j < v->n_mounts; j++) {
                const struct vfs_mount *c = &v->mounts[j];

                if (c != r && c->host && (c->mode == VFS_RW || c->mode == VFS_COW) &&
                    strcmp(c->host, r->host) == 0)
                        return make_error(err, 0,
                                          "run: %s: host path `%s` is given writable too (%s)",
                                          r->origin, r->host, c->origin);
        }
        /* A copy-on-write mount's lower must not change under its overlay. */
        for (size_t j = 0; j < v->n_mounts; j++) {
                const struct vfs_mount *c = &v->mounts[j];

                if (c == r || !c->host || !overlap(r->host, c->host))
                        continue;
                if ((c->mode == VFS_COW && r->mode != VFS_RO) ||
                    (r->mode == VFS_COW && c->mode == VFS_RW))
                        return make_error(err, 0,
                                          "run: %s: host path `%s` overlaps `%s` (%s), which is "
                                          "%s: the copy-on-write lower would change beneath "
                                          "it",
                                          r->origin, r->host, c->host, c->origin,
                                          c->mode == VFS_COW ? "copy-on-write" : "writable");
        }
        return 0;
}

bool remap_in_private(const struct vfs_view *v, const struct vfs_mount *r)
{
        const struct vfs_mount *above = mount_above(v, r->sandbox, r);

        return above && private_tmp(above);
}

int remap_checks(const struct vfs_view *v, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (vfs_mount_remapped(&v->mounts[i]) && check_one(v, &v->mounts[i], err) < 0)
                        return -1;
        return 0;
}

int remap_check_sources(const struct vfs_view *v, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *r = &v->mounts[i], *h;

                if (vfs_mount_remapped(r) && (h = vfs_view_hidden_above(v, r->host)))
                        return make_error(err, 0,
                                          "run: %s: host path `%s` lies in a hidden path (%s)",
                                          r->origin, r->host, h->origin ? h->origin : "hidden");
        }
        return 0;
}

int remap_check_targets(const struct vfs_view *v, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *r = &v->mounts[i], *h;

                if (vfs_mount_remapped(r) && (h = vfs_view_hidden_above(v, r->sandbox)))
                        return make_error(err, 0, "run: %s: `%s` lies in a hidden path (%s)",
                                          r->origin, r->sandbox, h->origin ? h->origin : "hidden");
        }
        return 0;
}

/*
 * Whether `name` (an entry's path, a pattern per component if `pattern`) names something
 * strictly beneath the directory `root`: root's components each match, and the name has
 * more. *rest is then what follows (from its '/').
 */
static bool beneath(const char *name, bool pattern, const char *root, const char **rest)
{
        const char *p = name, *r = root;
        char pc[NAME_MAX + 1], rc[NAME_MAX + 1];

        if (!pattern) {
                if (!vfs_path_has_prefix(name, root) || strcmp(name, root) == 0)
                        return false;
                *rest = name + (strcmp(root, "/") == 0 ? 0 : strlen(root));
                return true;
        }
        while (vfs_path_next_component(&r, rc, sizeof(rc)))
                if (!vfs_path_next_component(&p, pc, sizeof(pc)) || fnmatch(pc, rc, 0) != 0)
                        return false;
        *rest = p;
        return vfs_path_next_component(&p, pc, sizeof(pc));
}

/* Hidden entry `e` again at `to` + what follows `from` in it; with `alias`, an entry for
 * the view and the masks only, naming the host path `from` + that (mount.h). */
static void add_translated(struct vfs_view *v, size_t e, const char *from, const char *to,
                           bool alias)
{
        const struct vfs_mount *m = &v->mounts[e];
        char path[PATH_MAX], host[PATH_MAX], except[PATH_MAX] = "";
        const char *rest, *erest;
        struct vfs_mount t;

        if (!beneath(m->sandbox, m->pattern, from, &rest) ||
            snprintf(path, sizeof(path), "%s%s", strcmp(to, "/") ? to : "", rest) >=
                    (int)sizeof(path) ||
            snprintf(host, sizeof(host), "%s%s", strcmp(from, "/") ? from : "", rest) >=
                    (int)sizeof(host))
                return;
        if (m->except && beneath(m->except, false, from, &erest))
                snprintf(except, sizeof(except), "%s%s", strcmp(to, "/") ? to : "", erest);
        if (vfs_mount_init(&t, VFS_HIDDEN, path, alias ? host : NULL, m->origin) < 0)
                return;
        t.pattern = m->pattern;
        t.alias = alias;
        t.view_only = m->view_only;
        t.nofollow = m->nofollow;
        if (except[0])
                t.except = xstrdup(except);
        vfs_view_add(v, &t);
}

/*
 * HOST at its own path, where nothing the view shows lies in it: hidden (an alias entry: the
 * view and a mask, not Landlock, which must still grant its inodes for the bind), so that the
 * program does not find the host path behind SANDBOX (DESIGN.md). Where the working directory
 * or another mount lies in HOST (`--ro ~:/home/me`), its path is shown anyway.
 */
static void hide_source(struct vfs_view *v, const struct vfs_mount *r, const char *cwd)
{
        char host[PATH_MAX];
        struct vfs_mount t;

        if (vfs_path_has_prefix(cwd, r->host) || vfs_view_hidden(v, r->host))
                return;
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];

                if (m->mode != VFS_HIDDEN && m->mode != VFS_DEV && m->mode != VFS_PROC &&
                    (vfs_path_has_prefix(m->sandbox, r->host) ||
                     (m->host && vfs_path_has_prefix(m->host, r->host) && !vfs_mount_remapped(m))))
                        return;
        }
        snprintf(host, sizeof(host), "%s", r->host);
        if (vfs_mount_init_literal(&t, VFS_HIDDEN, host, host, r->origin) < 0)
                return;
        t.alias = true;
        vfs_view_add(v, &t);
}

void remap_hide_at_sources(struct vfs_view *v)
{
        size_t n = v->n_mounts;

        for (size_t i = 0; i < n; i++) {
                const struct vfs_mount *r = &v->mounts[i];

                if (!vfs_mount_remapped(r))
                        continue;
                for (size_t e = 0; e < n; e++)
                        if (v->mounts[e].mode == VFS_HIDDEN && !v->mounts[e].alias)
                                add_translated(v, e, v->mounts[i].sandbox, v->mounts[i].host,
                                               false);
        }
}

void remap_alias_hidden(struct vfs_view *v, const char *cwd)
{
        size_t n = v->n_mounts;

        for (size_t i = 0; i < n; i++) {
                if (!vfs_mount_remapped(&v->mounts[i]))
                        continue;
                for (size_t e = 0; e < n; e++)
                        if (v->mounts[e].mode == VFS_HIDDEN && !v->mounts[e].alias)
                                add_translated(v, e, v->mounts[i].host, v->mounts[i].sandbox, true);
        }
        for (size_t i = 0; i < n; i++)
                if (vfs_mount_remapped(&v->mounts[i]))
                        hide_source(v, &v->mounts[i], cwd);
}

/*
 * The view from the options (walls_int.h): the default view, then each mount flag in order,
 * checked against what this run can enforce.
 */
#include "supervisor/walls_int.h"
#include "supervisor/error.h"
#include "supervisor/layers.h"
#include "supervisor/options.h"
#include "supervisor/pathcache.h"
#include "supervisor/util.h"
#include "supervisor/vfs/default.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static enum vfs_mode flag_mode(const char *flag)
{
        if (strcmp(flag, "ro") == 0)
                return VFS_RO;
        if (strcmp(flag, "rw") == 0)
                return VFS_RW;
        if (strcmp(flag, "tmp") == 0)
                return VFS_TMP;
        if (strcmp(flag, "cow") == 0)
                return VFS_COW;
        return VFS_HIDDEN;
}

/* What this run can enforce of one mount flag: a private directory, copy-on-write and a
 * different sandbox path need a mount namespace (shim/mntns.h); a private directory and a
 * remapped one need a directory to mount over (remap.c checks the latter once the view is
 * whole). */
static int check_enforceable(const struct vfs_mount *m, bool private_dirs, struct error *err)
{
        struct stat st;

        if (m->mode == VFS_TMP && !private_dirs)
                return make_error(err, 0,
                                  "run: %s: a private directory needs a mount namespace, which "
                                  "this host does not give (no user namespaces for this user)%s",
                                  m->origin, layers_userns_hint(APPARMOR_USERNS_SYSCTL));
        if (m->mode == VFS_TMP) {
                if (pc_stat(m->sandbox, &st) < 0 || !S_ISDIR(st.st_mode))
                        return make_error(err, pc_stat(m->sandbox, &st) < 0 ? errno : ENOTDIR,
                                          "run: %s: `%s` must be an existing directory (the "
                                          "private one is mounted over it)",
                                          m->origin, m->sandbox);
                return 0;
        }
        if (m->mode == VFS_HIDDEN)
                return 0;
        if (vfs_mount_remapped(m) && !private_dirs)
                return make_error(err, 0,
                                  "run: %s: a different sandbox path needs a mount namespace, "
                                  "which this host does not give (no user namespaces for this "
                                  "user)",
                                  m->origin);
        if (pc_stat(m->host, &st) < 0)
                return make_error(err, errno, "run: %s: host path `%s`", m->origin, m->host);
        if (vfs_mount_remapped(m) && !S_ISDIR(st.st_mode) &&
            (!S_ISREG(st.st_mode) || m->mode == VFS_COW))
                return make_error(err, ENOTDIR, "run: %s: host path `%s` must be a directory%s",
                                  m->origin, m->host,
                                  m->mode == VFS_COW ? "" : " or a regular file");
        return 0;
}

/*
 * A private directory shows nothing of the host's beneath it. The host path the view shows
 * there (the current directory in /tmp, a --rw or --ro path there) would have to be bound
 * back inside, and Landlock, which judges a file by the directories its path walks through,
 * would then walk from it through the private directory, whose rules allow everything: the
 * carve-outs around hidden and read-only paths beneath would not hold. So the default /tmp
 * stays the host's in that case (as where no mount namespace can be made), and an explicit
 * --tmp over such a path is refused.
 */
static int no_host_paths_beneath(struct vfs_view *v, bool verbose, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                struct vfs_mount *m = &v->mounts[i];

                if (m->mode != VFS_TMP || m->host)
                        continue;
                for (size_t j = 0; j < v->n_mounts; j++) {
                        const struct vfs_mount *b = &v->mounts[j];

                        /* (a remapped mount is bound over a directory made inside) */
                        if ((b->mode != VFS_RO && b->mode != VFS_RW && b->mode != VFS_COW) ||
                            vfs_mount_remapped(b) || !vfs_path_has_prefix(b->sandbox, m->sandbox) ||
                            strcmp(b->sandbox, m->sandbox) == 0)
                                continue;
                        if (strcmp(m->origin, "default view") != 0)
                                return make_error(err, 0,
                                                  "run: %s: `%s` (%s) lies beneath it; a private "
                                                  "directory cannot show host paths",
                                                  m->origin, b->sandbox, b->origin);
                        m->host = xstrdup(m->sandbox); /* /tmp: the host's, shared */
                        if (verbose)
                                fprintf(stderr,
                                        "stockade: note: %s is the host's for this run: `%s` "
                                        "(%s) lies in it\n",
                                        m->sandbox, b->sandbox, b->origin);
                        break;
                }
        }
        return 0;
}

/*
 * A --ro path beneath a cow mount would be judged by the lower's inodes, which the overlay's
 * are not: refused until the carve-outs follow the overlay. Where no mount namespace can be
 * made, -v says that the supervisor merges the working directory's layers itself.
 */
static int cow_checks(const struct vfs_view *v, const char *cwd, bool private_dirs, bool verbose,
                      struct error *err)
{
        const struct vfs_mount *w = vfs_view_find(v, cwd);

        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *c = &v->mounts[i];

                if (c->mode != VFS_COW)
                        continue;
                for (size_t j = 0; j < v->n_mounts; j++) {
                        const struct vfs_mount *b = &v->mounts[j];

                        if (b->mode == VFS_RO && !vfs_mount_remapped(b) &&
                            strcmp(b->sandbox, c->sandbox) != 0 &&
                            vfs_path_has_prefix(b->sandbox, c->sandbox))
                                return make_error(err, 0,
                                                  "run: %s: `%s` lies beneath the copy-on-write "
                                                  "`%s` (%s); a read-only path there is not yet "
                                                  "supported",
                                                  b->origin, b->sandbox, c->sandbox, c->origin);
                }
        }
        if (!private_dirs && verbose && w && w->mode == VFS_COW && strcmp(w->sandbox, cwd) == 0)
                fprintf(stderr,
                        "stockade: note: no mount namespace on this host: the copy-on-write "
                        "workspace is merged by stockade itself (README, \"Without a mount "
                        "namespace\")%s\n",
                        layers_userns_hint(APPARMOR_USERNS_SYSCTL));
        return 0;
}

/*
 * A --ro, --rw or --cow path spelt through a symlink (`--rw ~/proj` where ~/proj leads to
 * /data/proj) is the directory it leads to, as a bind mount would take it: the mount is made
 * at the real path, which every spelling reaches through the host's symlinks. Otherwise the
 * view held two mounts of one directory, and with the default view's current directory at
 * the real path, a `--rw` given through the symlink was silently copy-on-write (the
 * namespace's overlay lies under both). A path that does not resolve is left for
 * vfs_view_open to name.
 */
static void canonical_mount(struct vfs_mount *m)
{
        char real[PATH_MAX];

        if ((m->mode != VFS_RO && m->mode != VFS_RW && m->mode != VFS_COW) || !m->host ||
            !pc_realpath(m->host, real) || strcmp(real, m->host) == 0)
                return;
        if (vfs_mount_remapped(m)) {
                /* HOST:SANDBOX: the source is what the host path leads to, the target stays
                 * where the user put it (remap.c refuses a symlink on its way). */
                free(m->host);
                m->host = xstrdup(real);
                return;
        }
        free(m->host);
        free(m->sandbox);
        m->host = xstrdup(real);
        m->sandbox = xstrdup(real);
}

/*
 * The host's network devices beneath /sys/devices: each interface of /sys/class/net that is
 * not virtual leads to DEVICE/net/IFACE, whose files tell its name, MAC address, driver and
 * statistics. The `net` directory is hidden by the view (ENOENT), whatever path reaches it
 * (/sys/class/net/IFACE, /sys/bus/.../net). Not by Landlock nor a mask (view_only): no secret
 * lies there; the walk around it split five sysfs directories into ~60 rules (~0.6-1 ms of
 * CPU at every start), and the mask cost ~0.5 ms of wall time. What the kernel resolves
 * itself (chdir, an O_PATH open and its fstat) still reaches it: metadata, never a file's
 * content, which an open reads.
 * Virtual ones (/sys/devices/virtual/net) are the namespace's own sysfs where the sandbox
 * has a network namespace (shim/netns.c). Without one they are the host's, and /sys/class/net
 * named every interface (a VPN's tun0, docker0 and its veths), where the netlink view shows
 * lo alone: every name there but lo is hidden too, by a pattern judged at each look-up (a
 * listing leaves them out, an open or stat finds nothing), so that interfaces made during the
 * run are covered, and nothing is listed at the start for it. view_only as well, and never
 * globbed into the places (add_hidden). In every run: with a namespace whose sysfs could not
 * be mounted (a container's masked /sys) the host's names would show there too.
 */
static void hide_net_devices(struct vfs_view *view)
{
        static const char *const dirs[] = {"/sys/class/net", "/sys/devices/virtual/net"};
        DIR *d = opendir("/sys/class/net");

        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                char pattern[64], lo[64];
                struct vfs_mount m;

                snprintf(pattern, sizeof(pattern), "%s/*", dirs[i]);
                snprintf(lo, sizeof(lo), "%s/lo", dirs[i]);
                if (vfs_mount_init(&m, VFS_HIDDEN, pattern, NULL, "default view") == 0) {
                        m.except = xstrdup(lo);
                        m.view_only = true;
                        vfs_view_add(view, &m);
                }
        }

        for (struct dirent *e; d && (e = readdir(d));) {
                char link[PATH_MAX], real[PATH_MAX], *slash;
                struct vfs_mount m;

                if (e->d_name[0] == '.' ||
                    snprintf(link, sizeof(link), "/sys/class/net/%s", e->d_name) >=
                            (int)sizeof(link) ||
                    !pc_realpath(link, real) || !vfs_path_has_prefix(real, "/sys/devices") ||
                    vfs_path_has_prefix(real, "/sys/devices/virtual"))
                        continue;
                slash = strrchr(real, '/');
                *slash = '\0'; /* DEVICE/net */
                if (strcmp(slash - 4, "/net") == 0 && !vfs_view_hidden(view, real) &&
                    vfs_mount_init_literal(&m, VFS_HIDDEN, real, NULL, "default view") == 0) {
                        m.view_only = true;
                        vfs_view_add(view, &m);
                }
        }
        if (d)
                closedir(d);
}

/*
 * A --hide or a plain --ro spelt with '..' is taken where the kernel takes it (mount.c,
 * vfs_path_physical_dotdot); where a symlink before the '..' makes that another path than
 * the words' lexical reading (`--hide ./a/../secret`, ./a a symlink elsewhere), the lexical
 * one is protected as well: an outside review saw a repository's own symlink move what the
 * user's flag hid away from the file the user meant. A flag that grants (--rw, --cow) takes
 * the kernel's reading alone.
 */
static void add_lexical_twin(struct vfs_view *view, const struct mount_opt *flag,
                             const struct vfs_mount *m, const char *cwd, const char *home)
{
        struct error ignored = {0};
        struct vfs_mount lex;

        if ((m->mode != VFS_HIDDEN && (m->mode != VFS_RO || vfs_mount_remapped(m))) ||
            !strstr(flag->spec, ".."))
                return;
        if (vfs_mount_parse_lexical(&lex, flag->spec, m->mode, cwd, home, &ignored) < 0)
                return;
        if (strcmp(lex.sandbox, m->sandbox) == 0 || vfs_mount_remapped(&lex)) {
                vfs_mount_free(&lex);
                return;
        }
        free(lex.origin);
        lex.origin = xstrdup(m->origin);
        canonical_mount(&lex);
        vfs_view_add(view, &lex);
}

/* The default view plus the flags, in order (a later flag for the same path wins). */
int walls_build_view(struct vfs_view *view, const struct config *cfg, const char *cwd,
                     const char *home, bool private_dirs, struct error *err)
{
        /* /tmp is the sandbox's own where a mount namespace can be made (shim/mntns.h);
         * else the host's (-v says which). */
        struct vfs_default d = {.home = home,
                                .cwd = cwd,
                                .uid = getuid(),
                                .is_root = geteuid() == 0,
                                .tmp = private_dirs ? NULL : "/tmp",
                                /* an overlay in the namespace, else merged by the
                                 * supervisor (cow.c, emulate) */
                                .cwd_cow = true};
        int r = vfs_default_view(view, &d);

        if (r < 0)
                return make_error(err, -r, "the default view (HOME=%s)", home);
        hide_net_devices(view);
        /* The trace file is not the sandbox's to see: stat, listings and opens find nothing
         * there (its mode and place already keep it from being opened or written). */
        if (cfg->trace_path && strncmp(cfg->trace_path, "unix:", 5) != 0) {
                char abs[2 * PATH_MAX + 2], canon[PATH_MAX];
                struct vfs_mount m;

                snprintf(abs, sizeof(abs), "%s%s%s", cfg->trace_path[0] == '/' ? "" : cwd,
                         cfg->trace_path[0] == '/' ? "" : "/", cfg->trace_path);
                if (vfs_path_normalize(canon, sizeof(canon), abs) >= 0 &&
                    vfs_mount_init_literal(&m, VFS_HIDDEN, canon, NULL, "--trace") == 0)
                        vfs_view_add(view, &m);
        }
        for (size_t i = 0; i < cfg->n_mounts; i++) {
                struct vfs_mount m;

                if (vfs_mount_parse(&m, cfg->mounts[i].spec, flag_mode(cfg->mounts[i].flag), cwd,
                                    home, err) < 0)
                        return -1;
                if (cfg->mounts[i].origin) {
                        free(m.origin);
                        m.origin = xstrdup(cfg->mounts[i].origin);
                }
                canonical_mount(&m);
                if (check_enforceable(&m, private_dirs, err) < 0) {
                        vfs_mount_free(&m);
                        return -1;
                }
                add_lexical_twin(view, &cfg->mounts[i], &m, cwd, home);
                vfs_view_add(view, &m);
        }
        if (no_host_paths_beneath(view, cfg->verbose > 0, err) < 0)
                return -1;
        /* Without a mount namespace no overlay can be mounted: the supervisor merges (cow.c). */
        for (size_t i = 0; i < view->n_mounts; i++)
                if (view->mounts[i].mode == VFS_COW && !private_dirs) {
                        view->mounts[i].emulated = true;
                        view->mounts[i].upper_fd = -1;
                }
        return cow_checks(view, cwd, private_dirs, cfg->verbose > 0, err);
}

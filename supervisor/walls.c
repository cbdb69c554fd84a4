#include "syscalls/fs_common.h"
#include "supervisor/pathcache.h"
#include "supervisor/walls.h"
#include "supervisor/walls_int.h"
#include "supervisor/vfs/path.h"
#include "supervisor/env.h"
#include "supervisor/error.h"
#include "supervisor/fastreads.h"
#include "supervisor/grants.h"
#include "supervisor/places.h"
#include "supervisor/remap.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/scratch.h"
#include "syscalls/table.h"
#include "shim/landlock.h"
#include "supervisor/vfs/view.h"

#include <errno.h>
#include <glob.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *walls_user_home(void)
{
        static char spelt[PATH_MAX];
        const char *home = getenv("HOME");
        struct passwd *pw;

        /* HOME=/x/lnk/.. is where the kernel takes it, not /x (an outside review read
         * ~/.ssh of the real home so): the same reading as the flags' paths. */
        if (home && home[0] == '/') {
                if (strlen(home) >= sizeof(spelt))
                        return home; /* refused later, naming it */
                snprintf(spelt, sizeof(spelt), "%s", home);
                vfs_path_physical_dotdot(spelt, sizeof(spelt));
                return spelt;
        }
        pw = getpwuid(getuid());
        return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* Whether `path` lies strictly beneath a writable tree. */
static bool in_tree(const struct places *p, const char *path)
{
        for (size_t i = 0; i < p->n; i++) {
                size_t n = strlen(p->v[i].path);
                if (p->v[i].kind == PLACE_TREE && strncmp(path, p->v[i].path, n) == 0 &&
                    (n == 1 || path[n] == '/') && path[n] != '\0')
                        return true;
        }
        return false;
}

/* A hidden pattern (`--hide 'keys/[*].key'`): each existing match inside a writable tree is a
 * carve-out too, or chmod and friends would still reach it (outside review R5). */
static int carve_matches(struct places *p, const struct vfs_mount *m, struct error *err)
{
        glob_t g;
        int r = 0;

        if (glob(m->sandbox, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) != 0)
                return 0;
        for (size_t i = 0; i < g.gl_pathc && r == 0; i++) {
                char real[PATH_MAX];

                if (vfs_mount_hides(m, g.gl_pathv[i]) && pc_realpath(g.gl_pathv[i], real) &&
                    in_tree(p, real))
                        r = places_add(p, real, PLACE_RO, err);
        }
        globfree(&g);
        return r;
}

/*
 * The writable places follow the view: a read-only or hidden current directory is not
 * writable; every --rw path is; every --ro or hidden path inside a writable place is a
 * carve-out (patterns aside: they only hide, and reads are split around them anyway).
 */
/* One mount's part in the places: a writable tree (`carves` false), or a carve-out. */
static int apply_mount(struct places *p, const struct vfs_mount *m, bool carves, struct error *err)
{
        /* A copy-on-write mount the supervisor merges (cow.c, `emulated`) is read-only to
         * the sandbox: every change goes through the supervisor, into the session. */
        bool writable = m->mode == VFS_RW || (m->mode == VFS_COW && !m->emulated);
        char real[PATH_MAX];
        struct stat st;

        if ((!writable && m->mode != VFS_RO && m->mode != VFS_HIDDEN && m->mode != VFS_COW) ||
            m->alias || writable == carves)
                return 0;
        if (vfs_mount_remapped(m)) {
                /* Its host tree, by inode (a --ro one is a read-only mount inside); and a
                 * --ro source is not writable at its own path either, where a writable place
                 * holds it (nor a --cow one: spawn.c, once the tree has become the
                 * overlay's). */
                if (!pc_realpath(m->host, real))
                        return make_error(err, errno, "run: %s: `%s`", m->origin, m->host);
                if (writable)
                        return places_add(p, real, PLACE_TREE, err);
                return in_tree(p, real) ? places_add(p, real, PLACE_RO, err) : 0;
        }
        if (m->pattern)
                return carve_matches(p, m, err);
        if (m->mode == VFS_HIDDEN && pc_stat(m->sandbox, &st) < 0)
                return 0;
        if (!pc_realpath(m->sandbox, real))
                return make_error(err, errno, "run: %s: `%s`", m->origin, m->sandbox);
        if (writable)
                return places_add(p, real, PLACE_TREE, err);
        return in_tree(p, real) ? places_add(p, real, PLACE_RO, err) : 0;
}

static int apply_to_places(struct places *p, const struct vfs_view *v, struct error *err)
{
        for (size_t i = p->n; i-- > 0;) {
                const struct vfs_mount *m = vfs_view_find(v, p->v[i].path);
                /* ... and a host directory a remapped mount covers is not one either */
                if (p->v[i].kind == PLACE_TREE && m &&
                    ((m->mode != VFS_RW && m->mode != VFS_TMP &&
                      (m->mode != VFS_COW || m->emulated)) ||
                     vfs_mount_remapped(m)) &&
                    strcmp(m->sandbox, p->v[i].path) == 0)
                        places_remove(p, p->v[i].path);
        }
        /* The writable trees first, then what is carved out of them, whatever the order of
         * the flags (`--ro P/x --rw P` carves x out as `--rw P --ro P/x` does: the view's
         * longest prefix makes x read-only either way). */
        for (int carves = 0; carves < 2; carves++)
                for (size_t i = 0; i < v->n_mounts; i++)
                        if (apply_mount(p, &v->mounts[i], carves, err) < 0)
                                return -1;
        return 0;
}

/*
 * The hidden places (places.h), for what Landlock cannot judge (connecting to a unix socket):
 * every hidden entry of the view that exists now, by inode, symlinks resolved. A pattern
 * becomes what it matches now (glob(3); '*' covers dot files as in vfs_mount_hides, and the
 * entry's exception stays visible). Something created later in a hidden place is covered by
 * its ancestor; a hidden path that appears only later is not (nor is it for Landlock).
 */
static int add_hidden(struct places *p, const struct vfs_view *v, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];
                glob_t g;
                int r = 0;

                if (m->mode != VFS_HIDDEN || m->alias)
                        continue; /* an alias's object has an entry of its own */
                if (m->pattern && m->view_only)
                        continue; /* the view's alone, judged at each look-up: no sockets */
                if (!m->pattern) {
                        if (places_add_hidden(p, m->sandbox, m->nofollow, err) < 0)
                                return -1;
                        continue;
                }
                if (glob(m->sandbox, GLOB_NOSORT | GLOB_PERIOD, NULL, &g) != 0)
                        continue; /* no match (or unreadable: nothing the program reaches) */
                for (size_t j = 0; j < g.gl_pathc && r == 0; j++)
                        if (!walls_has_dot_component(g.gl_pathv[j]) &&
                            vfs_mount_hides(m, g.gl_pathv[j]))
                                r = places_add_hidden(p, g.gl_pathv[j], false, err);
                globfree(&g);
                if (r < 0)
                        return -1;
        }
        return 0;
}

/* Without a mount namespace, a copy-on-write mount strictly beneath `place`, or NULL: the kernel
 * sees it read-only, and the place's write rule is split around it. */
static const char *cow_beneath(const struct supervisor *sup, const char *place)
{
        for (size_t i = 0; !sup->layers.mntns && i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];

                if (m->mode == VFS_COW && strcmp(m->sandbox, place) != 0 &&
                    vfs_path_has_prefix(m->sandbox, place))
                        return m->sandbox;
        }
        return NULL;
}

static void say_splits(const struct supervisor *sup, const struct vfs_view *view)
{
        for (size_t i = 0; !sup->cfg->quiet && i < sup->places.n; i++) {
                const char *place = sup->places.v[i].path, *cow;

                if (sup->places.v[i].kind != PLACE_TREE)
                        continue;
                if (grants_hidden_beneath(view, place))
                        fprintf(stderr,
                                "stockade: note: %s holds hidden paths; the sandbox can write "
                                "beneath it except there, but cannot create entries directly "
                                "in it or in the directories on the way to them\n",
                                place);
                if ((cow = cow_beneath(sup, place)))
                        fprintf(stderr,
                                "stockade: note: %s holds the copy-on-write workspace %s, which "
                                "the kernel sees read-only without a mount namespace: the sandbox "
                                "can write beneath %s elsewhere, but cannot create entries "
                                "directly in it or in the directories on the way to %s\n",
                                place, cow, place, cow);
        }
        if (sup->cfg->verbose)
                fprintf(stderr,
                        "stockade: Landlock: %zu rules (reads everywhere but the hidden paths; "
                        "writes in the writable places, but the read-only ones)\n",
                        sup->grants.n);
}

/* The devices of the mounts at or beneath /proc and /dev, from our mountinfo. */
static void special_devices(struct supervisor *sup)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];

        sup->n_special_devs = 0;
        while (f && fgets(line, sizeof(line), f)) {
                unsigned maj, min;
                char point[PATH_MAX];

                if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, point) != 3)
                        continue;
                if ((strcmp(point, "/proc") == 0 || strncmp(point, "/proc/", 6) == 0 ||
                     strcmp(point, "/dev") == 0 || strncmp(point, "/dev/", 5) == 0) &&
                    sup->n_special_devs < ARRAY_SIZE(sup->special_devs))
                        sup->special_devs[sup->n_special_devs++] = makedev(maj, min);
        }
        if (f)
                fclose(f);
}

/*
 * The binds live in anonymous memory of their own, grown by mremap and never reused: a new
 * one is all zeros as it is, and only what is written of it is ever touched. A bind is 16
 * KiB (four PATH_MAX paths, most of them empty); zeroing each, or copying them as realloc
 * does, faulted in four pages a bind, ~130 a run and ~16 µs a fault on some VMs.
 */
struct mnt_bind *walls_new_bind(struct supervisor *sup)
{
        if (sup->n_binds == sup->cap_binds) {
                size_t cap = sup->cap_binds ? 2 * sup->cap_binds : MNT_BINDS_MAX;
                size_t old = sup->cap_binds * sizeof(*sup->binds), size = cap * sizeof(*sup->binds);
                void *p = sup->binds ? mremap(sup->binds, old, size, MREMAP_MAYMOVE)
                                     : mmap(NULL, size, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED)
                        abort(); /* as xrealloc */
                sup->binds = p;
                sup->cap_binds = cap;
        }
        return &sup->binds[sup->n_binds++];
}

void walls_binds_free(struct supervisor *sup)
{
        if (sup->binds)
                munmap(sup->binds, sup->cap_binds * sizeof(*sup->binds));
        sup->binds = NULL;
        sup->cap_binds = 0; /* n_binds stays: how many the namespace was made with */
}

/* A bind of `source` (its open fd `fd`, which the maker checks it against, or -1) at `target`. */
static void add_bind(struct supervisor *sup, const char *source, int fd, const char *target,
                     bool make_target)
{
        struct mnt_bind *b = walls_new_bind(sup);

        mnt_bind_pin(b, fd);
        snprintf(b->source, sizeof(b->source), "%s", source);
        snprintf(b->target, sizeof(b->target), "%s", target);
        b->make_target = make_target;
}

/* The terminals the sandbox holds from the start may be opened by name: its own pty, or
 * (--tty never) a pty on fds 0-2, which it has already. */
static void own_terminals(struct supervisor *sup)
{
        struct stat st;

        if (sup->tty.pipes)
                return; /* --tty never: no terminal inside at all */
        if (sup->tty.active) {
                /* Root running the command as another user: the pty is that user's, as login
                 * makes it, or the command could not open its own terminal by name. */
                if (sup->cfg->set_user && geteuid() == 0)
                        (void)!fchown(sup->tty.slave, sup->cfg->uid, (gid_t)-1);
                if (fstat(sup->tty.slave, &st) == 0 && major(st.st_rdev) >= 136 &&
                    major(st.st_rdev) <= 143)
                        fs_open_allow_pts(sup, (major(st.st_rdev) - 136) * 256 + minor(st.st_rdev));
                return;
        }
        for (int fd = 0; fd <= 2; fd++)
                if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) >= 136 &&
                    major(st.st_rdev) <= 143)
                        fs_open_allow_pts(sup, (major(st.st_rdev) - 136) * 256 + minor(st.st_rdev));
}

static bool is_dir(const char *path)
{
        struct stat st;

        return pc_lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The view's private directories (the default /tmp, --tmp): each is a directory made in the
 * tmp scratch, writable by the command (mode 1777, as /tmp is), mounted over its sandbox path
 * in the sandbox's mount namespace; what the view shows beneath it as a host path of its own
 * (the current directory in /tmp, a --rw path there) is bound back. The host's /tmp is then
 * not a writable place any more.
 */
static int setup_private_dirs(struct supervisor *sup, const struct vfs_view *v, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];
                char real[PATH_MAX];

                if (m->mode != VFS_TMP || !m->host || strcmp(m->host, m->sandbox) == 0)
                        continue;
                if (chmod(m->host, 01777) < 0 ||
                    places_add(&sup->places, m->host, PLACE_TREE, err) < 0)
                        return err->msg[0] ? -1
                                           : make_error(err, errno, "run: %s: `%s`", m->origin,
                                                        m->host);
                if (pc_realpath(m->sandbox, real))
                        places_remove(&sup->places, real);
                add_bind(sup, m->host, m->host_fd, m->sandbox, false);
        }
        /* The private /dev/shm (scratch.c) too: the emulation maps /dev/shm there, and the
         * calls the kernel resolves itself (chdir, chmod by name, an O_PATH open) must find
         * the same directory, not the host's shared memory. */
        if (sup->layers.mntns && sup->shm_dir && is_dir("/dev/shm"))
                add_bind(sup, sup->shm_dir, -1, "/dev/shm", false);
        return 0;
}

/* Whether the sandbox path lies strictly beneath a cow mount. */
static bool in_cow(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_COW && strcmp(v->mounts[i].sandbox, path) != 0 &&
                    vfs_path_has_prefix(path, v->mounts[i].sandbox))
                        return true;
        return false;
}

/* The remapped mounts' binds (remap.c), parents first: a nested one is made inside; those in
 * a cow mount (`cow`) after its overlay. */
static void setup_remaps(struct supervisor *sup, const struct vfs_view *v, bool cow)
{
        size_t first = sup->n_binds;

        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];

                if (!vfs_mount_remapped(m) || m->mode == VFS_COW || in_cow(v, m->sandbox) != cow)
                        continue; /* a cow one is an overlay (cow.c) */
                add_bind(sup, m->host, m->host_fd, m->sandbox, remap_in_private(v, m));
                sup->binds[sup->n_binds - 1].remap = true;
                sup->binds[sup->n_binds - 1].rdonly = m->mode == VFS_RO;
        }
        for (size_t i = first + 1; i < sup->n_binds; i++)
                for (size_t j = i; j > first && vfs_path_depth(sup->binds[j - 1].target) >
                                                        vfs_path_depth(sup->binds[j].target);
                     j--) {
                        struct mnt_bind t = sup->binds[j];

                        sup->binds[j] = sup->binds[j - 1];
                        sup->binds[j - 1] = t;
                }
}

/* Whether the command may write the canonical sandbox path `path` (a place to make). */
static bool view_writable(const char *path, void *ctx)
{
        const struct supervisor *sup = ctx;
        const struct vfs_mount *m = vfs_view_find(&sup->view, path);

        return m && (m->mode == VFS_RW || m->mode == VFS_COW || m->mode == VFS_TMP);
}

/* Whether the command may write `path` and nothing else shares it: a private or --rw tree, not
 * a copy-on-write one (whose changes are the session's). */
static bool view_own(const struct supervisor *sup, const char *path)
{
        const struct vfs_mount *m = vfs_view_find(&sup->view, path);

        if (m && (m->mode == VFS_RW || m->mode == VFS_TMP))
                return true;
        if (!m || m->mode != VFS_RO || strcmp(m->sandbox, "/") != 0)
                return false;
        /* beneath /var/tmp, say: a place the view leaves to Landlock (places.h) */
        for (size_t i = 0; i < sup->places.n; i++)
                if (sup->places.v[i].kind == PLACE_TREE &&
                    vfs_path_has_prefix(path, sup->places.v[i].path))
                        return true;
        return false;
}

char **walls_env(struct supervisor *sup, char *const *envp)
{
        const struct vfs_mount *tmp = vfs_view_mount_at(&sup->view, "/tmp");
        const char *base = "/tmp";
        char **env = NULL, **with;

        if (sup->cfg->clear_env)
                return NULL;
        /* /tmp shared with the host: a cache there is one other users could fill; the run's
         * own directory for them (scratch.c), where the view lets the command write it (a
         * TMPDIR elsewhere in a read-only tree does not). */
        if (!sup->layers.mntns || !tmp || tmp->mode != VFS_TMP ||
            (tmp->host && strcmp(tmp->host, "/tmp") == 0))
                base = sup->cache_dir && view_own(sup, sup->cache_dir) ? sup->cache_dir : NULL;
        if (base)
                env = env_with_caches(envp, base, view_writable, sup,
                                      sup->cfg->verbose ? stderr : NULL);
        /* Without a mount namespace, a copy-on-write workspace beneath /tmp: nothing new can
         * be made directly in /tmp then (say_splits), where mktemp, gcc and go make their
         * temporary files. */
        if (cow_beneath(sup, "/tmp") && !env_get(envp, "TMPDIR") && sup->tmpdir_own &&
            view_own(sup, sup->tmpdir_own)) {
                with = env_with(env ? env : envp, "TMPDIR", sup->tmpdir_own);
                env_free(env);
                env = with;
                if (sup->cfg->verbose)
                        fprintf(stderr,
                                "stockade: environment: TMPDIR=%s (the workspace lies in /tmp, "
                                "where nothing new can be made without a mount namespace; a "
                                "directory of this run's, removed at its end)\n",
                                sup->tmpdir_own);
        }
        return env;
}

int walls_setup(struct supervisor *sup, struct error *err)
{
        struct vfs_view *view = &sup->view;
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        const char *home = walls_user_home();

        struct stat st;
        int r;

        if (!cwd)
                return make_error(err, errno, "getcwd");
        sup->proc_dev = pc_stat("/proc", &st) == 0 ? st.st_dev : 0;
        sup->dev_dev = pc_stat("/dev", &st) == 0 ? st.st_dev : 0;
        sup->devpts_dev = pc_stat("/dev/pts", &st) == 0 ? st.st_dev : 0;
        special_devices(sup);
        own_terminals(sup);
        if (places_compute(&sup->places,
                           !sup->tty.active ? -1
                           : sup->tty.pipes ? PLACES_NO_TERMINAL
                                            : sup->tty.slave,
                           err) < 0 ||
            scratch_setup(sup, err) < 0)
                return -1;
        /* The hidden entries' analysis looks at the same paths again and again: through the
         * memo (pathcache.h), which nothing here makes stale (cow_hide_state makes the
         * session store, a path the memo never saw existing; nothing is removed). */
        pathcache_begin();
        r = walls_build_view(view, sup->cfg, cwd, home, sup->layers.mntns, err) < 0 ||
                            cow_hide_state(sup, view, err) < 0 || remap_checks(view, err) < 0 ||
                            (remap_hide_at_sources(view), false) ||
                            (walls_hide_real_paths(view), false) ||
                            (walls_hide_aliases(view), false) ||
                            remap_check_sources(view, err) < 0 ||
                            (remap_alias_hidden(view, cwd), false) ||
                            remap_check_targets(view, err) < 0 ||
                            apply_to_places(&sup->places, view, err) < 0 ||
                            add_hidden(&sup->places, view, err) < 0
                    ? -1
                    : 0;
        pathcache_end();
        if (r < 0 || vfs_view_open(view, sup->tmp_scratch, err) < 0 ||
            setup_private_dirs(sup, view, err) < 0 || (setup_remaps(sup, view, false), false) ||
            cow_setup(sup, err) < 0 || (setup_remaps(sup, view, true), false) ||
            fs_exec_prepare(sup, err) < 0)
                return -1;
        sup->cwd = xstrdup(cwd);
        for (size_t i = 0; i < view->n_mounts && !sup->remapped; i++)
                sup->remapped = vfs_mount_remapped(&view->mounts[i]);
        for (size_t i = 0; i < sup->n_binds && !sup->private_binds; i++)
                sup->private_binds =
                        !sup->binds[i].mask && !sup->binds[i].overlay && !sup->binds[i].remap;
        if (masks_add(sup, err) < 0)
                return -1;
        for (size_t i = 0; i < sup->places.n; i++) {
                int h = sup->places.v[i].kind == PLACE_TREE
                                ? grants_hidden_named_beneath(view, sup->places.v[i].path)
                                : 0;

                sup->hidden_in_writable |= h != 0;
                sup->view_only_in_writable |= h == 2;
        }
        return 0;
}

/* The cow mount of the view's mount `i`. */
static size_t emulated_index(const struct supervisor *sup, size_t i)
{
        size_t k = 0;

        while (k + 1 < sup->cow.n && sup->cow.view_index[k] != i)
                k++;
        return k;
}

int walls_grants(struct supervisor *sup, struct error *err)
{
        int abi = sup->layers.landlock_abi, r;

        if (!abi) {
                if (sup->cfg->n_mounts || sup->cfg->verbose)
                        fprintf(stderr, "stockade: warning: no Landlock: hidden paths (~/.ssh, "
                                        "--hide) can be read, --ro paths written\n");
                return 0;
        }
        pathcache_begin(); /* the grants only look (pathcache.h) */
        r = grants_compute(&sup->grants, &sup->view, &sup->places, abi, sup->fast_reads, err);
        pathcache_end();
        if (r < 0)
                return -1;
        /* The upper directories of the copy-on-write mounts it merges: the supervisor's to
         * write, never the sandbox's (cow.c, emulate); the sandbox's to execute. */
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];
                struct stat st;

                if (!m->emulated || m->upper_fd < 0 || fstat(m->upper_fd, &st) < 0)
                        continue;
                grants_add(&sup->grants, sup->cow.m[emulated_index(sup, i)].upper, &st,
                           landlock_write_access(abi) | LANDLOCK_ACCESS_FS_READ_FILE |
                                   LANDLOCK_ACCESS_FS_READ_DIR,
                           GRANT_SUPERVISOR);
                /* The kernel runs a program made in the run from there (fs_cow_traced), which
                 * takes reading too (an exec opens the file for reading). Nothing of it is
                 * more than the merge shows: opens are the supervisor's (no --fast here). */
                grants_add(&sup->grants, sup->cow.m[emulated_index(sup, i)].upper, &st,
                           grants_read_access(), GRANT_BOTH);
        }
        fastreads_grants(sup);
        say_splits(sup, &sup->view);
        return 0;
}

#include "supervisor/pathcache.h"
#include "supervisor/grants.h"
#include "shim/landlock.h"
#include "supervisor/error.h"
#include "supervisor/places.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

uint64_t grants_read_access(void)
{
        return LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;
}

void grants_add(struct grants *g, const char *path, const struct stat *st, uint64_t access,
                enum grant_for who)
{
        if (g->n == g->cap) {
                g->cap = g->cap ? 2 * g->cap : 64;
                g->v = xrealloc(g->v, g->cap * sizeof(*g->v));
        }
        g->v[g->n++] = (struct grant){.path = xstrdup(path),
                                      .dev = st->st_dev,
                                      .ino = st->st_ino,
                                      .access = access,
                                      .who = who};
}

static void add(struct grants *g, const char *path, const struct stat *st, uint64_t access)
{
        grants_add(g, path, st, access, GRANT_BOTH);
}

void grants_free(struct grants *g)
{
        for (size_t i = 0; i < g->n; i++)
                free(g->v[i].path);
        free(g->v);
        *g = (struct grants){0};
}

/* Whether the hidden entry `m` exists on the host: a path that is not there needs no wall
 * (splitting its ancestors would only cost the writable places their own top level). A
 * pattern exists if it matches anything. */
static bool entry_exists(const struct vfs_mount *m)
{
        const char *host = m->alias ? m->host : m->sandbox; /* an alias names a host path */
        struct stat st;
        glob_t g;
        bool any;

        if (!m->pattern)
                return pc_lstat(host, &st) == 0;
        if (glob(host, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) != 0)
                return false;
        any = g.gl_pathc > 0;
        globfree(&g);
        return any;
}

/* Whether the hidden entry `m` (a path, or a pattern per component) names something strictly
 * beneath `path`: each of path's components matches the entry's, and the entry has more. */
static bool entry_beneath(const struct vfs_mount *m, const char *path)
{
        const char *e = m->sandbox, *p = path;
        char ec[NAME_MAX + 1], pc[NAME_MAX + 1];

        while (vfs_path_next_component(&p, pc, sizeof(pc))) {
                if (!vfs_path_next_component(&e, ec, sizeof(ec)))
                        return false;
                if (m->pattern ? fnmatch(ec, pc, 0) != 0 : strcmp(ec, pc) != 0)
                        return false;
        }
        return vfs_path_next_component(&e, ec, sizeof(ec));
}

int grants_hidden_named_beneath(const struct vfs_view *v, const char *path)
{
        int r = 0;

        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_HIDDEN && entry_beneath(&v->mounts[i], path))
                        r = v->mounts[i].view_only ? 2 : r ? r : 1;
        return r;
}

/* With `absent_too`, an entry counts whether it exists or not (a pattern that matches nothing
 * yet, a path not made yet): --fast's kernel reads, where Landlock alone refuses their reads. */
static int hidden_beneath(const struct vfs_view *v, const char *path, bool carved_only,
                          bool absent_too)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_HIDDEN &&
                    !(carved_only && (v->mounts[i].view_only || v->mounts[i].alias)) &&
                    entry_beneath(&v->mounts[i], path) &&
                    (absent_too || entry_exists(&v->mounts[i])))
                        return 1;
        return 0;
}

int grants_hidden_beneath(const struct vfs_view *v, const char *path)
{
        return hidden_beneath(v, path, false, false);
}

/* Inodes, by st_dev/st_ino: Landlock attaches a rule to an inode, so a rule on any alias of a
 * directory (a bind mount, a second path) covers everything beneath the original too. */
struct inodes {
        struct {
                dev_t dev;
                ino_t ino;
        } * v;
        size_t n, cap;
};

static void inodes_add(struct inodes *s, const struct stat *st)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
                        return;
        if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 32;
                s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
        }
        s->v[s->n].dev = st->st_dev;
        s->v[s->n++].ino = st->st_ino;
}

static bool inodes_has(const struct inodes *s, const struct stat *st)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
                        return true;
        return false;
}

/*
 * The inodes a walk must never grant whole: `self`, each path that is carved out, and `above`,
 * each directory on the way down to one (those are split). Computed from the real paths
 * (symlinks resolved), so that a carve-out reached through a symlinked ancestor or met again
 * under a bind-mounted alias is still split around.
 */
struct mnt;

struct carve {
        struct inodes self, above;
        const struct mnt *mounts; /* this namespace's, to find bind-mounted aliases */
        size_t n_mounts;
        char **seen; /* directories already in `above`, with every one above them */
        size_t n_seen;
};

static bool carve_seen(struct carve *c, const char *dir)
{
        for (size_t i = 0; i < c->n_seen; i++)
                if (strcmp(c->seen[i], dir) == 0)
                        return true;
        c->seen = xrealloc(c->seen, (c->n_seen + 1) * sizeof(*c->seen));
        c->seen[c->n_seen++] = xstrdup(dir);
        return false;
}

/* `real` (canonical) and every directory above it. The walk up stops at a directory met
 * before: the hidden paths share most of theirs ($HOME, ~/.config), a stat each. Without
 * `self`, `real` is split like the directories above it rather than left out: the nearest
 * existing ancestor of a hidden path that is not there (yet). */
static void carve_real(struct carve *c, char *real, bool self)
{
        struct stat st;
        char *slash;

        if (pc_lstat(real, &st) < 0)
                return;
        inodes_add(self ? &c->self : &c->above, &st);
        for (slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
                *slash = '\0';
                if (carve_seen(c, slash == real ? "/" : real))
                        break;
                if (pc_stat(slash == real ? "/" : real, &st) == 0)
                        inodes_add(&c->above, &st);
                if (slash == real)
                        break;
        }
}

static void carve_path_once(struct carve *c, const char *path, bool self)
{
        char real[PATH_MAX];

        if (!places_absent(path) && pc_realpath(path, real))
                carve_real(c, real, self);
}

static void carve_aliases(struct carve *c, const char *real, const struct mnt *m, size_t n,
                          bool self);

/* `path` (symlinks resolved) and its aliases through bind mounts; `self` as carve_real. */
static void carve_path_as(struct carve *c, const char *path, bool self)
{
        char real[PATH_MAX], copy[PATH_MAX];

        if (places_absent(path) || !pc_realpath(path, real))
                return;
        memcpy(copy, real, sizeof(copy));
        carve_real(c, copy, self);
        carve_aliases(c, real, c->mounts, c->n_mounts, self);
}

static void carve_path(struct carve *c, const char *path)
{
        carve_path_as(c, path, true);
}

/* A hidden path that is not there: its nearest existing ancestor (of the part before any
 * pattern character) is split, with its aliases, so that whatever is made there later has no
 * rule (--fast's kernel reads: grants.h). */
static void carve_absent(struct carve *c, const char *path)
{
        char up[PATH_MAX];
        size_t n = strcspn(path, "*?[\\");
        char *slash;
        struct stat st;

        snprintf(up, sizeof(up), "%.*s", (int)n, path);
        for (;;) {
                slash = strrchr(up, '/');
                if (!slash)
                        return;
                slash[slash == up] = '\0'; /* "/a" -> "/" */
                if (pc_lstat(up, &st) == 0 || strcmp(up, "/") == 0)
                        break;
        }
        carve_path_as(c, up, false);
}

/* A mountinfo field, with its octal escapes (\040 for a space) undone, in place. */
static char *unescape(char *f)
{
        char *r = f, *w = f;

        while (*r) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] && r[3]) {
                        *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else {
                        *w++ = *r++;
                }
        }
        *w = '\0';
        return f;
}

struct mnt {
        dev_t dev;
        char *root, *point; /* malloc'd */
};

/* The mounts of this mount namespace (/proc/self/mountinfo); *n of them, malloc'ed. */
static struct mnt *read_mounts(size_t *n)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        struct mnt *v = NULL;
        char line[3 * PATH_MAX];
        size_t cap = 0;

        *n = 0;
        while (f && fgets(line, sizeof(line), f)) {
                unsigned maj, min;
                char root[PATH_MAX], point[PATH_MAX];

                if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, point) != 4)
                        continue;
                if (*n == cap) {
                        cap = cap ? 2 * cap : 64;
                        v = xrealloc(v, cap * sizeof(*v));
                }
                v[*n].dev = makedev(maj, min);
                v[*n].root = xstrdup(unescape(root));
                v[*n].point = xstrdup(unescape(point));
                (*n)++;
        }
        if (f)
                fclose(f);
        return v;
}

static void free_mounts(struct mnt *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].root);
                free(v[i].point);
        }
        free(v);
}

/* `path` lies at or beneath `top` (both canonical); returns what follows top, or NULL. */
static const char *beneath(const char *path, const char *top)
{
        size_t n = strcmp(top, "/") == 0 ? 0 : strlen(top);

        if (strncmp(path, top, n) != 0 || (path[n] != '/' && path[n] != '\0'))
                return NULL;
        return path + n;
}

/*
 * The other names of `real` through bind mounts: the same file system mounted elsewhere with
 * a root at or above `real`'s place in it, each passed to fn.
 */
static void each_alias(const char *real, const struct mnt *m, size_t n,
                       void (*fn)(const char *alias, void *ctx), void *ctx)
{
        const struct mnt *home = NULL;
        char fs_path[2 * PATH_MAX], alias[3 * PATH_MAX];
        struct stat st;
        const char *rest;

        if (pc_lstat(real, &st) < 0)
                return;
        for (size_t i = 0; i < n; i++) /* the mount `real` is on: the longest mount point */
                if (m[i].dev == st.st_dev && beneath(real, m[i].point) &&
                    (!home || strlen(m[i].point) > strlen(home->point)))
                        home = &m[i];
        if (!home)
                return;
        snprintf(fs_path, sizeof(fs_path), "%s%s", strcmp(home->root, "/") ? home->root : "",
                 beneath(real, home->point));
        for (size_t i = 0; i < n; i++) {
                if (&m[i] == home || m[i].dev != st.st_dev || !(rest = beneath(fs_path, m[i].root)))
                        continue;
                snprintf(alias, sizeof(alias), "%s%s", strcmp(m[i].point, "/") ? m[i].point : "",
                         *rest ? rest : "");
                fn(alias[0] ? alias : "/", ctx);
        }
}

struct carve_alias {
        struct carve *c;
        bool self;
};

static void carve_one_alias(const char *alias, void *ctx)
{
        struct carve_alias *a = ctx;

        carve_path_once(a->c, alias, a->self);
}

/* Each alias is carved out too, or the walk would grant the alias's parent whole and the
 * secret would be readable through the alias. */
static void carve_aliases(struct carve *c, const char *real, const struct mnt *m, size_t n,
                          bool self)
{
        struct carve_alias a = {.c = c, .self = self};

        each_alias(real, m, n, carve_one_alias, &a);
}

struct grants_mnts {
        struct mnt *v;
        size_t n;
};

struct grants_mnts *grants_mnts_read(void)
{
        struct grants_mnts *t = xcalloc(1, sizeof(*t));

        t->v = read_mounts(&t->n);
        return t;
}

void grants_mnts_free(struct grants_mnts *t)
{
        if (t)
                free_mounts(t->v, t->n);
        free(t);
}

void grants_aliases(const struct grants_mnts *t, const char *real,
                    void (*fn)(const char *alias, void *ctx), void *ctx)
{
        each_alias(real, t->v, t->n, fn, ctx);
}

/* Every existing path entry `m` designates: itself, or each match of a pattern that the entry
 * really hides (its exception kept). */
static void carve_entry(struct carve *c, const struct vfs_mount *m)
{
        glob_t g;

        if (!m->pattern) {
                carve_path(c, m->sandbox);
                return;
        }
        if (glob(m->sandbox, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) != 0)
                return;
        for (size_t i = 0; i < g.gl_pathc; i++)
                if (vfs_mount_hides(m, g.gl_pathv[i]))
                        carve_path(c, g.gl_pathv[i]);
        globfree(&g);
}

static void carve_free(struct carve *c)
{
        free(c->self.v);
        free(c->above.v);
        for (size_t i = 0; i < c->n_seen; i++)
                free(c->seen[i]);
        free(c->seen);
}

static void inodes_copy(struct inodes *to, const struct inodes *from)
{
        *to = *from;
        to->v = from->cap ? xrealloc(NULL, from->cap * sizeof(*from->v)) : NULL;
        if (from->n)
                memcpy(to->v, from->v, from->n * sizeof(*from->v));
}

struct walk {
        struct grants *g;
        const struct vfs_view *hidden;
        uint64_t access;
        bool write;            /* read-only mounts are carved out too */
        const struct carve *c; /* by inode: hidden (and, for writes, read-only) */
        /* The reads of --fast's kernel reads (grants.h): / is split, and /dev is the
         * supervisor's whole but only its devices the sandbox's. */
        const struct places *devices;
        dev_t dev_fs, pts_fs; /* then: the file systems of /dev and /dev/pts */
};

/* A read-only mount (--ro) at `path` exactly, or strictly beneath it. */
static bool ro_at(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_RO && strcmp(v->mounts[i].sandbox, path) == 0)
                        return true;
        return false;
}

static bool ro_beneath(const struct vfs_view *v, const char *path)
{
        size_t n = strlen(path);

        for (size_t i = 0; i < v->n_mounts; i++) {
                const char *m = v->mounts[i].sandbox;
                if (v->mounts[i].mode == VFS_RO && strncmp(m, path, n) == 0 &&
                    (n == 1 ? m[1] != '\0' : m[n] == '/' && m[n + 1] != '\0'))
                        return true;
        }
        return false;
}

/* What the walk leaves out, and where it must split: by the view's paths, and by inode. */
static bool excluded(const struct walk *w, const char *path, const struct stat *st)
{
        const struct vfs_mount *h = vfs_view_hidden(w->hidden, path);

        /* an alias names another path's object, or HOST itself, which the bind needs */
        return (h && !h->view_only && !h->alias) || (w->write && ro_at(w->hidden, path)) ||
               inodes_has(&w->c->self, st);
}

static bool split_needed(const struct walk *w, const char *path, const struct stat *st)
{
        if (w->devices && strcmp(path, "/") == 0)
                return true;
        return hidden_beneath(w->hidden, path, true, w->devices != NULL) ||
               (w->write && ro_beneath(w->hidden, path)) || inodes_has(&w->c->above, st);
}

static void split(struct walk *w, const char *dir);

/*
 * /dev under --fast's kernel reads: the supervisor reads it whole (it opens the sandbox's
 * ptys for it, judged by the view); the sandbox only the device files it may write (places.c:
 * null, zero, full, random, urandom, tty, its terminal), not ptmx (a new pty is the view's
 * to hand out and hold: fs_open.c), not the directory /dev/pts (the host's other terminals).
 * The private /dev/shm has a rule of its own (its place, in grants_compute).
 */
static void dev_reads(struct walk *w, const char *path, const struct stat *st)
{
        const struct places *p = w->devices;
        struct stat ds;

        grants_add(w->g, path, st, w->access, GRANT_SUPERVISOR);
        for (size_t i = 0; i < p->n; i++)
                if (p->v[i].kind == PLACE_DEVICE && !p->v[i].dir &&
                    strcmp(p->v[i].path, "/dev/ptmx") != 0 && pc_lstat(p->v[i].path, &ds) == 0 &&
                    S_ISCHR(ds.st_mode))
                        grants_add(w->g, p->v[i].path, &ds, LANDLOCK_ACCESS_FS_READ_FILE,
                                   GRANT_SANDBOX);
}

/* One child of a directory that is being split. */
static void child(struct walk *w, int dirfd, const char *dir, const char *name)
{
        char path[PATH_MAX];
        struct stat st;

        if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name) >=
            (int)sizeof(path))
                return; /* too long to open: not granted */
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || excluded(w, path, &st))
                return;
        /* A symlink grants nothing: what it points to is judged by its own path. */
        if (S_ISLNK(st.st_mode))
                return;
        /* /dev by its file system, not its name: a bind of /dev, or devtmpfs mounted again,
         * in a split directory is the same inode, and a rule on it covers /dev itself (an
         * outside review read a host terminal through one in ~). */
        if (w->devices && (st.st_dev == w->dev_fs || st.st_dev == w->pts_fs)) {
                if (strcmp(path, "/dev") == 0)
                        dev_reads(w, path, &st);
                else
                        grants_add(w->g, path, &st, w->access, GRANT_SUPERVISOR);
                return;
        }
        if (S_ISDIR(st.st_mode) && split_needed(w, path, &st))
                split(w, path);
        else
                add(w->g, path, &st, w->access);
}

/* Grant every child of `dir` except what is hidden, recursing towards hidden paths. The
 * directory itself gets no rule: a rule on it would cover the hidden path too. */
static void split(struct walk *w, const char *dir)
{
        struct dirent *e;
        DIR *d = opendir(dir);

        if (!d)
                return; /* cannot list it: grant nothing beneath (fail closed) */
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        child(w, dirfd(d), dir, e->d_name);
        closedir(d);
}

/* Grant `root` with `access`, split around what is hidden (and, for writes, read-only)
 * beneath it. The root itself is the user's path (a place): symlinks in it were resolved. */
static void grant_tree(struct grants *g, const struct vfs_view *hidden, const char *root,
                       uint64_t access, bool write, const struct carve *c,
                       const struct places *devices)
{
        struct walk w = {.g = g,
                         .hidden = hidden,
                         .access = access,
                         .write = write,
                         .c = c,
                         .devices = devices};
        struct stat st;

        if (devices) {
                w.dev_fs = pc_stat("/dev", &st) == 0 ? st.st_dev : (dev_t)-1;
                w.pts_fs = pc_stat("/dev/pts", &st) == 0 ? st.st_dev : (dev_t)-1;
        }

        if (pc_lstat(root, &st) < 0 || excluded(&w, root, &st))
                return;
        if (S_ISDIR(st.st_mode) && split_needed(&w, root, &st))
                split(&w, root);
        else
                add(g, root, &st, access);
}

/* Whether the host path `path` is a copy-on-write mount's or lies beneath one. */
static bool beneath_cow(const struct vfs_view *v, const char *path)
{
        /* (one the supervisor merges is no overlay: a place beneath it, a --rw cache in a
         * workspace that is the home directory, keeps its own grant) */
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_COW && !v->mounts[i].emulated &&
                    (vfs_path_has_prefix(path, v->mounts[i].sandbox) ||
                     (v->mounts[i].host && vfs_path_has_prefix(path, v->mounts[i].host))))
                        return true;
        return false;
}

/* Whether the hidden entry `m` may name `dir` or something beneath it: each of dir's
 * components matches the entry's (fnmatch for a pattern), whatever the entry has after. */
static bool entry_within(const struct vfs_mount *m, const char *dir)
{
        const char *e = m->sandbox, *p = dir;
        char ec[NAME_MAX + 1], pc[NAME_MAX + 1];

        while (vfs_path_next_component(&p, pc, sizeof(pc)))
                if (!vfs_path_next_component(&e, ec, sizeof(ec)) ||
                    (m->pattern ? fnmatch(ec, pc, 0) != 0 : strcmp(ec, pc) != 0))
                        return false;
        return true;
}

const char *grants_reads_unsafe(const struct vfs_view *hidden, const struct places *places,
                                const char **why)
{
        for (size_t i = 0; i < hidden->n_mounts; i++) {
                const struct vfs_mount *t = &hidden->mounts[i];
                /* Where Landlock grants a tree whole (a copy-on-write mount) or a bind
                 * continues (a remap), only the mask keeps a hidden path, and the host
                 * renaming a file over the mask's mount point detaches it; a pattern's match
                 * made there during the run has no mask at all. Not in a private directory:
                 * what it holds is the sandbox's own, and the host path a hidden entry names
                 * there (a trace in /tmp) is out of the sandbox's sight. */
                bool whole = t->mode == VFS_COW || vfs_mount_remapped(t);
                bool writable = whole || t->mode == VFS_RW;

                if (t->mode == VFS_HIDDEN)
                        continue;
                if (vfs_mount_remapped(t) && grants_hidden_named_beneath(hidden, t->host)) {
                        *why = "lies beneath a remapped mount's host path, whose bind the "
                               "mask over it may leave";
                        return t->host;
                }
                for (size_t k = 0; writable && k < hidden->n_mounts; k++) {
                        const struct vfs_mount *m = &hidden->mounts[k];

                        if (m->mode != VFS_HIDDEN || m->view_only || !entry_within(m, t->sandbox))
                                continue;
                        if (whole) {
                                *why = "lies where Landlock grants the sandbox a whole tree";
                                return m->sandbox;
                        }
                        if (!m->alias && (m->pattern || !entry_exists(m))) {
                                *why = "is not there, or is a pattern, in a place the sandbox "
                                       "writes";
                                return m->sandbox;
                        }
                }
        }
        /* The writable places by their host paths too (cwd, /tmp's scratch, /var/tmp). */
        for (size_t k = 0; k < places->n; k++) {
                if (places->v[k].kind != PLACE_TREE || !places->v[k].dir)
                        continue;
                for (size_t i = 0; i < hidden->n_mounts; i++) {
                        const struct vfs_mount *m = &hidden->mounts[i];

                        if (m->mode == VFS_HIDDEN && !m->view_only && !m->alias &&
                            entry_within(m, places->v[k].path) &&
                            (m->pattern || !entry_exists(m))) {
                                *why = "is not there, or is a pattern, in a place the sandbox "
                                       "writes";
                                return m->sandbox;
                        }
                }
        }
        return NULL;
}

/*
 * A remapped mount (remap.c) is, inside, a bind at SANDBOX: the kernel's walk from a file in
 * it climbs HOST's directories to HOST, then goes on at SANDBOX's parent (a mount point is
 * passed over), whose rules would cover the whole bind. Where a hidden path lies beneath
 * HOST (for writes: beneath a --rw one; a --ro one is a read-only mount), the directories
 * above SANDBOX are split like those above a hidden path, as the namespace shows them.
 */
static void remap_splits(struct carve *c, const struct vfs_view *v, bool write)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];
                char real[PATH_MAX], up[PATH_MAX], host[PATH_MAX];
                struct stat st;
                char *slash;

                if (!vfs_mount_remapped(m) || m->mode == VFS_COW || (write && m->mode != VFS_RW) ||
                    !pc_realpath(m->host, real) || !hidden_beneath(v, real, true, false))
                        continue;
                snprintf(up, sizeof(up), "%s", m->sandbox);
                while ((slash = strrchr(up, '/'))) {
                        slash[slash == up] = '\0'; /* "/a" -> "/" */
                        if (vfs_view_host_path(v, up, host, sizeof(host)) &&
                            pc_stat(host, &st) == 0)
                                inodes_add(&c->above, &st);
                        if (strcmp(up, "/") == 0)
                                break;
                }
        }
}

int grants_compute(struct grants *g, const struct vfs_view *hidden, const struct places *places,
                   int abi, bool kernel_reads, struct error *err)
{
        struct stat st;

        if (pc_lstat("/", &st) < 0)
                return make_error(err, errno, "stat /");
        size_t n_mounts;
        struct mnt *mounts = read_mounts(&n_mounts);
        struct carve reads = {.mounts = mounts, .n_mounts = n_mounts},
                     writes = {.mounts = mounts, .n_mounts = n_mounts};

        /* The hidden paths are carved out of both (found once: a realpath and a stat of
         * each, and of each directory above), the read-only ones out of the writes only. */
        for (size_t i = 0; i < hidden->n_mounts; i++)
                if (hidden->mounts[i].mode == VFS_HIDDEN && !hidden->mounts[i].view_only &&
                    !hidden->mounts[i].alias)
                        carve_entry(&reads, &hidden->mounts[i]);
        remap_splits(&reads, hidden, false);
        inodes_copy(&writes.self, &reads.self);
        inodes_copy(&writes.above, &reads.above);
        remap_splits(&writes, hidden, true);
        /* Kernel reads: what a hidden path not there at the start may become is refused by
         * Landlock too (the view judges no open for reading then); the reads only, since
         * writes stay the view's. None lies in a writable place (grants_reads_unsafe). */
        for (size_t i = 0; kernel_reads && i < hidden->n_mounts; i++) {
                const struct vfs_mount *m = &hidden->mounts[i];

                if (m->mode == VFS_HIDDEN && !m->view_only && !m->alias &&
                    (m->pattern || !entry_exists(m)))
                        carve_absent(&reads, m->sandbox);
        }
        for (size_t i = 0; i < hidden->n_mounts; i++) {
                const struct vfs_mount *m = &hidden->mounts[i];

                /* A copy-on-write mount the supervisor merges (cow.c, emulate) is read-only
                 * to the kernel too, where it lies in a writable place (/tmp, a --rw tree):
                 * every change goes into the session through the supervisor (an outside
                 * attack rewrote the workspace by reopening a read-only fd through
                 * /proc/self/fd/N, with Landlock granting the writable place whole). */
                if ((m->mode == VFS_RO || (m->mode == VFS_COW && m->emulated)) &&
                    strcmp(m->sandbox, "/") != 0)
                        carve_entry(&writes, m);
                if (vfs_mount_remapped(m) && m->mode != VFS_RW)
                        carve_path(&writes, m->host); /* its own path too (walls.c) */
        }
        /* Listing is allowed everywhere; reading and executing everywhere but hidden paths. */
        add(g, "/", &st, LANDLOCK_ACCESS_FS_READ_DIR);
        grant_tree(g, hidden, "/", grants_read_access(), false, &reads,
                   kernel_reads ? places : NULL);
        /* A private directory (shim/mntns.h) is, inside, a mount root over its sandbox path:
         * the kernel's walk from a file in it never meets the host directories above it,
         * whose rules the grants above may have split. It gets its own. */
        for (size_t i = 0; i < hidden->n_mounts; i++) {
                const struct vfs_mount *m = &hidden->mounts[i];
                struct stat ms;

                char real[PATH_MAX];

                if (m->mode == VFS_TMP && m->host && strcmp(m->host, m->sandbox) != 0 &&
                    pc_lstat(m->host, &ms) == 0)
                        add(g, m->host, &ms, grants_read_access() | LANDLOCK_ACCESS_FS_READ_DIR);
                /* So is a remapped mount's host tree (remap.c): read as at its own path. */
                if (vfs_mount_remapped(m) && m->mode != VFS_COW && pc_realpath(m->host, real))
                        grant_tree(g, hidden, real, grants_read_access(), false, &reads, NULL);
        }
        for (size_t i = 0; i < places->n; i++) {
                const struct place *pl = &places->v[i];
                uint64_t w = landlock_write_access(abi);

                if (pl->kind == PLACE_RO)
                        continue; /* a carve-out: the walks above leave it out */
                /* The private /dev/shm's host directory, beneath /dev, which kernel reads
                 * do not grant the sandbox whole (dev_reads). */
                if (kernel_reads && pl->kind == PLACE_TREE && pl->dir &&
                    vfs_path_has_prefix(pl->path, "/dev"))
                        grant_tree(g, hidden, pl->path,
                                   grants_read_access() | LANDLOCK_ACCESS_FS_READ_DIR, false,
                                   &reads, NULL);
                if (beneath_cow(hidden, pl->path))
                        continue; /* written through the overlay, whose root has its own rule
                                     (spawn.c); the host tree keeps only reads, so an fd of a
                                     host file there (a redirected stdin) is not writable */
                if (pl->kind == PLACE_TREE && pl->dir)
                        grant_tree(g, hidden, pl->path, w, true, &writes, NULL);
                else if (!vfs_view_hidden(hidden, pl->path) && pc_lstat(pl->path, &st) == 0)
                        /* A device file: its content only. */
                        add(g, pl->path, &st,
                            LANDLOCK_ACCESS_FS_WRITE_FILE |
                                    (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0));
        }
        carve_free(&reads);
        carve_free(&writes);
        free_mounts(mounts, n_mounts);
        return 0;
}

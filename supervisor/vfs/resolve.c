/*
 * Path resolution in the view.
 *
 * The walk keeps a stack of levels, one per component of the canonical sandbox path of where
 * it stands, each with the O_PATH fd of that directory on the host (or none, for a directory
 * the view makes up above a mount point). A step looks one name up in the top directory with
 * openat2(O_PATH|O_NOFOLLOW, RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): a single name, never a
 * host path string, so a concurrent rename or symlink swap on the host can change what the
 * name designates but never make the walk leave the directory it holds. '..' pops the stack:
 * it is taken on the sandbox path, and the directory it returns to is the fd the walk came
 * through, not the host parent of anything. A symlink is read through its own O_PATH fd (the
 * object just looked up, not the name again) and its target is pushed in front of the rest
 * of the path: an absolute target restarts at the sandbox root, so no target reaches past
 * the view. Every step checks the hidden entries and the mount points on the sandbox path,
 * so hidden paths stay hidden however they are reached.
 *
 * On a copy-on-write mount the supervisor merges itself (no overlayfs: mount.h, `emulated`), a
 * level holds the object of the layer that wins, and, for a merged directory, the lower's
 * directory beside it. A step asks the upper first: a whiteout there is ENOENT, a directory
 * marked opaque hides the lower beneath it; only a name the upper lacks is asked of the
 * lower. The upper is the supervisor's alone to write, so what it says is what the merge is.
 */
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/cowup.h"
#include "supervisor/vfs/path.h"
#include "supervisor/util.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define VFS_MAXSYMLINKS 40 /* the kernel's MAXSYMLINKS */
#define VFS_FLAGS       (VFS_FOLLOW | VFS_EMPTY_PATH | VFS_CREATE)

/* STEP_SPECIAL: the path goes on in a /dev or /proc view. WALK_RESTART: a walk that began at
 * a merged mount's root (begin_at_mount) went above it: walk again from the sandbox root. */
enum { STEP_SPECIAL = 1, WALK_RESTART = 2 };

struct level {
        int fd;     /* O_PATH of this level's object; -1 for a synthetic directory */
        bool owned; /* false for a mount's root, which the view owns */
        bool mount_point;
        mode_t type;
        size_t len; /* strlen(walk.path) at this level */
        const struct vfs_mount *mount;
        /* On an emulated copy-on-write mount: `fd` is the upper's object, and `lower` the
         * lower's directory at this path when both have one and the upper's is not opaque
         * (else -1); `lower_owned` as `owned`. Not upper: `fd` is the lower's. */
        bool upper, lower_owned;
        int lower;
};

struct walk {
        const struct vfs_view *v;
        unsigned flags;
        struct level *levels; /* levels[0] is the sandbox root */
        size_t depth, cap;
        int links;
        char *buf;     /* owns the pending path once a symlink has been expanded */
        const char *p; /* what is left to walk */
        const struct vfs_mount *special;
        bool at_mount;       /* levels[0] is a merged mount's root, not the sandbox root */
        bool no_shortcut;    /* the walk from the root, all of it (after a WALK_RESTART) */
        char path[PATH_MAX]; /* canonical sandbox path of the top level */
};

static struct level *top(struct walk *w)
{
        return &w->levels[w->depth - 1];
}

static void push(struct walk *w, struct level l)
{
        if (w->depth == w->cap) {
                w->cap = w->cap ? 2 * w->cap : 16;
                w->levels = xrealloc(w->levels, w->cap * sizeof(*w->levels));
        }
        l.len = strlen(w->path);
        w->levels[w->depth++] = l;
}

static void level_close(struct level *l)
{
        if (l->owned && l->fd >= 0)
                close(l->fd);
        if (l->lower_owned && l->lower >= 0)
                close(l->lower);
}

static void pop(struct walk *w)
{
        struct level *l = top(w);

        level_close(l);
        w->depth--;
        w->path[top(w)->len] = '\0';
}

static void walk_free(struct walk *w)
{
        while (w->depth > 0) {
                level_close(top(w));
                w->depth--;
        }
        free(w->levels);
        free(w->buf);
}

/* Look `name` up in dirfd: exactly one component, not followed if it is a symlink. */
static int open_component(int dirfd, const char *name)
{
        struct open_how how = {
                .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        int fd = sys_openat2(dirfd, name, &how);

        if (fd < 0 && errno == ENOSYS) /* before 5.6: a single name needs no more */
                fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Push `l` for the object `fd` (its type from fstat); `l.lower` is the walk's to close with
 * it when `l.lower_owned`, also on error. */
static int push_level(struct walk *w, int fd, struct level l)
{
        struct stat st;
        int r;

        l.fd = fd;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                level_close(&l);
                return r;
        }
        l.type = st.st_mode & S_IFMT;
        push(w, l);
        return 0;
}

static int push_host(struct walk *w, int fd, bool owned, const struct vfs_mount *m,
                     bool mount_point)
{
        return push_level(
                w, fd,
                (struct level){
                        .owned = owned, .mount_point = mount_point, .mount = m, .lower = -1});
}

static void push_synthetic(struct walk *w)
{
        push(w, (struct level){.fd = -1, .type = S_IFDIR, .mount = top(w)->mount, .lower = -1});
}

/*
 * One name in a level of an emulated copy-on-write mount: the upper's object if it has one
 * (a whiteout: -ENOENT), with the lower's directory beside a directory that is not opaque;
 * else the lower's object, if the level has a lower directory. Pushed, or -errno.
 */
static int step_cow(struct walk *w, const char *name)
{
        struct level *t = top(w);
        int lower = t->upper ? t->lower : t->fd, fd = -ENOENT;
        struct level l = {.owned = true, .mount = t->mount, .lower = -1};
        struct stat st;

        if (cowup_is_tmp(name))
                return -ENOENT; /* a copy-up in progress: no name of the merge */
        if (t->upper) {
                fd = open_component(t->fd, name);
                if (fd >= 0) {
                        if (fstat(fd, &st) < 0 || cowup_is_whiteout(&st)) {
                                int r = cowup_is_whiteout(&st) ? -ENOENT : -errno;
                                close(fd);
                                return r;
                        }
                        l.upper = true;
                        if (S_ISDIR(st.st_mode) && lower >= 0 && !cowup_is_opaque_stat(fd, &st)) {
                                int lo = open_component(lower, name);
                                struct stat ls;

                                if (lo >= 0 && fstat(lo, &ls) == 0 && S_ISDIR(ls.st_mode))
                                        l.lower = lo, l.lower_owned = true;
                                else if (lo >= 0)
                                        close(lo);
                        }
                        return push_level(w, fd, l);
                }
                if (fd != -ENOENT)
                        return fd;
        }
        if (lower < 0)
                return -ENOENT;
        fd = open_component(lower, name);
        return fd < 0 ? fd : push_level(w, fd, l);
}

/* Enter mount m at its mount point (already on w->path). */
static int enter_mount(struct walk *w, const struct vfs_mount *m)
{
        if (m->mode == VFS_DEV || m->mode == VFS_PROC) {
                w->special = m;
                return STEP_SPECIAL;
        }
        if (m->host_fd < 0)
                return -EBADF; /* vfs_view_open was not called */
        if (m->emulated)
                return push_level(w, m->upper_fd,
                                  (struct level){.mount_point = true,
                                                 .mount = m,
                                                 .upper = true,
                                                 .lower = m->host_fd});
        return push_host(w, m->host_fd, false, m, true);
}

/* Append "/name" to w->path; returns the length before, or -ENAMETOOLONG. */
static int path_append(struct walk *w, const char *name)
{
        size_t len = strlen(w->path), n = strlen(name), sep = len > 1;

        if (len + sep + n >= sizeof(w->path))
                return -ENAMETOOLONG;
        if (sep)
                w->path[len] = '/';
        memcpy(w->path + len + sep, name, n + 1);
        return (int)len;
}

/*
 * Push the level for `name` (already on w->path) in the top directory. Hidden wins, then a
 * mount point, then the host. A strict ancestor of a mount point is a directory whatever the
 * host holds there (nothing, a file, a symlink): the table, not the host, says where mounts
 * appear, so no change on the host can move or remove one.
 */
static int step_at(struct walk *w, const char *name, bool creating)
{
        const struct vfs_mount *m;
        struct stat st;
        bool above;
        int fd;

        if (vfs_view_hidden(w->v, w->path))
                return creating ? -EACCES : -ENOENT;
        m = vfs_view_mount_at(w->v, w->path);
        if (m)
                return enter_mount(w, m);
        above = vfs_view_above_mount(w->v, w->path);
        if (top(w)->fd < 0) {
                if (!above)
                        return -ENOENT;
                push_synthetic(w);
                return 0;
        }
        if (top(w)->mount && top(w)->mount->emulated && !above)
                return step_cow(w, name);
        fd = open_component(top(w)->fd, name);
        if (fd >= 0 && above && (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))) {
                close(fd);
                fd = -ENOENT;
        }
        if (fd == -ENOENT && above) {
                push_synthetic(w);
                return 0;
        }
        return fd < 0 ? fd : push_host(w, fd, true, top(w)->mount, false);
}

static int step(struct walk *w, const char *name, bool creating)
{
        int old = path_append(w, name);
        int r;

        if (old < 0)
                return old;
        r = step_at(w, name, creating);
        if (r < 0)
                w->path[old] = '\0';
        return r;
}

/* Replace the symlink on top by its target followed by `rest`, what came after the link. */
static int follow(struct walk *w, const char *rest)
{
        char target[PATH_MAX];
        ssize_t n;

        if (++w->links > VFS_MAXSYMLINKS)
                return -ELOOP;
        /* Through the link's own fd: the object whose type we checked, not the name again. */
        n = readlinkat(top(w)->fd, "", target, sizeof(target));
        if (n < 0)
                return -errno;
        if ((size_t)n >= sizeof(target))
                return -ENAMETOOLONG;
        if (n == 0)
                return -ENOENT;
        if (target[0] == '/' && w->at_mount)
                return WALK_RESTART; /* the levels below the mount's root were never made */
        pop(w);
        if (target[0] == '/')
                while (w->depth > 1)
                        pop(w);
        size_t rlen = strlen(rest);
        char *buf = xcalloc(1, (size_t)n + rlen + 1);
        memcpy(buf, target, (size_t)n);
        memcpy(buf + n, rest, rlen + 1); /* rest may point into w->buf: copy, then free */
        free(w->buf);
        w->buf = buf;
        w->p = buf;
        return 0;
}

struct component {
        const char *s;
        size_t n;
        bool last;  /* nothing but slashes follows */
        bool slash; /* last, and slashes follow */
};

/* The next component at w->p; w->p moves right after it (onto its slashes, if any). */
static bool next_component(struct walk *w, struct component *c)
{
        const char *p = w->p + strspn(w->p, "/");
        const char *after;

        if (!*p) {
                w->p = p;
                return false;
        }
        c->s = p;
        c->n = strcspn(p, "/");
        after = p + c->n;
        c->last = after[strspn(after, "/")] == '\0';
        c->slash = c->last && *after == '/';
        w->p = after;
        return true;
}

/* The top level's fd for the result: taken if the walk owns it, else duplicated. */
static int take_fd(struct level *l)
{
        int fd;

        if (l->owned) {
                l->owned = false;
                return steal_fd(l->fd);
        }
        fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
}

/* The parent's fds for a VFS_CREATE result: its object, and on an emulated copy-on-write
 * mount the lower's directory beneath it (the object itself when it is the lower's). */
static int take_parent(struct level *parent, struct vfs_result *out)
{
        int lower = parent->upper ? parent->lower : parent->fd;

        out->parent_mount = parent->mount;
        out->parent_upper = parent->upper;
        if (parent->mount && parent->mount->emulated && lower >= 0 && parent->fd >= 0) {
                out->parent_lower_fd = fcntl(lower, F_DUPFD_CLOEXEC, 0);
                if (out->parent_lower_fd < 0)
                        return -errno;
        }
        if (parent->fd >= 0) {
                out->parent_fd = take_fd(parent);
                if (out->parent_fd < 0)
                        return out->parent_fd;
        }
        return 0;
}

static int finish(struct walk *w, struct vfs_result *out)
{
        struct level *l = top(w);

        out->kind = l->fd >= 0 ? VFS_HOST : VFS_SYNTHETIC;
        out->type = l->type;
        out->mount = l->mount;
        out->mount_point = l->mount_point;
        out->upper = l->upper;
        strcpy(out->path, w->path);
        if (l->fd >= 0) {
                out->fd = take_fd(l);
                if (out->fd < 0)
                        return out->fd;
        }
        return 0;
}

/* VFS_CREATE, the last name exists: the object, and its parent (the level below). */
static int finish_existing(struct walk *w, const char *name, struct vfs_result *out)
{
        struct level *parent = &w->levels[w->depth - 2];
        int r = finish(w, out);

        if (r < 0)
                return r;
        snprintf(out->name, sizeof(out->name), "%s", name);
        return take_parent(parent, out);
}

/* VFS_CREATE, the last name is absent: its parent is on top, its would-be path is given. */
static int finish_absent(struct walk *w, const char *name, struct vfs_result *out)
{
        struct level *parent = top(w);
        int r = path_append(w, name);

        if (r < 0)
                return r;
        out->kind = VFS_ABSENT;
        out->mount = parent->mount;
        strcpy(out->path, w->path);
        snprintf(out->name, sizeof(out->name), "%s", name);
        return take_parent(parent, out);
}

/* On a dev or proc mount: what is left of the path goes to that view, unresolved. */
static int finish_special(struct walk *w, struct vfs_result *out)
{
        const char *rest = w->p + strspn(w->p, "/");

        if (strlen(rest) >= sizeof(out->rest))
                return -ENAMETOOLONG;
        out->kind = VFS_SPECIAL;
        out->mount = w->special;
        out->mount_point = !*rest;
        strcpy(out->path, w->path);
        strcpy(out->rest, rest);
        return 0;
}

static int walk_run(struct walk *w, struct vfs_result *out)
{
        struct component c;
        char name[NAME_MAX + 1];

        while (next_component(w, &c)) {
                if (!S_ISDIR(top(w)->type))
                        return -ENOTDIR;
                if (c.n == 1 && c.s[0] == '.')
                        continue;
                if (c.n == 2 && c.s[0] == '.' && c.s[1] == '.') {
                        if (w->depth == 1 && w->at_mount)
                                return WALK_RESTART;
                        if (w->depth > 1) /* "/.." is "/" */
                                pop(w);
                        continue;
                }
                if (c.n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, c.s, c.n);
                name[c.n] = '\0';
                bool creating = c.last && (w->flags & VFS_CREATE);
                int r = step(w, name, creating);
                if (r == STEP_SPECIAL)
                        return finish_special(w, out);
                if (creating)
                        out->trailing_slash = c.slash;
                if (r == -ENOENT && creating)
                        return finish_absent(w, name, out);
                if (r < 0)
                        return r;
                /* A trailing '/' follows a link as the kernel does, except when creating
                 * (mkdir "link/" is EEXIST, open O_CREAT "link/" EISDIR: the caller's call). */
                if (S_ISLNK(top(w)->type) &&
                    (!c.last || (w->flags & VFS_FOLLOW) || (c.slash && !creating))) {
                        r = follow(w, w->p);
                        if (r != 0)
                                return r;
                        continue;
                }
                if (creating)
                        return finish_existing(w, name, out);
                if (c.slash && !S_ISDIR(top(w)->type))
                        return -ENOTDIR;
                if (c.last)
                        out->trailing_slash = c.slash;
        }
        return finish(w, out);
}

static int enter_root(struct walk *w)
{
        const struct vfs_mount *m = vfs_view_mount_at(w->v, "/");

        strcpy(w->path, "/");
        if (m)
                return enter_mount(w, m);
        /* No mount at "/": the root is made up, with the mount points' ancestors in it. */
        push(w, (struct level){.fd = -1, .type = S_IFDIR, .lower = -1});
        return 0;
}

/*
 * Whether the walk would pass the components strictly between the mount point of `seg` (NULL:
 * the made-up root) and the next mount point on the way without a word: p[0..len) of them,
 * relative to seg's root. It opens each of them in the one before as the caller (step_at,
 * above a mount point), so one openat2 of them all, symlinks refused, asks the kernel the
 * same (the search rights of each directory on the way); anything but a directory found
 * says no here, and the whole walk then tells what it makes of it (a made-up directory, an
 * error).
 */
static bool segment_plain(const struct vfs_mount *seg, const char *p, size_t len)
{
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        char rel[PATH_MAX];
        int fd;

        if (!seg)
                return true; /* made-up directories all the way: nothing on the host asked */
        if (seg->mode == VFS_DEV || seg->mode == VFS_PROC || seg->emulated || seg->host_fd < 0)
                return false;
        if (len == 0)
                return true;
        memcpy(rel, p, len);
        rel[len] = '\0';
        fd = sys_openat2(seg->host_fd, rel, &how);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/*
 * Whether the walk from the sandbox root down to `p`, the mount point of a merged mount,
 * would reach that mount's root as a plain directory: no prefix hidden, every mount on the
 * way an ordinary one, every directory between them found (segment_plain).
 */
static bool ancestors_plain(const struct vfs_view *v, const char *p)
{
        const struct vfs_mount *seg = vfs_view_mount_at(v, "/"), *m;
        size_t n = strlen(p), from = 1, last = 1;
        char q[PATH_MAX];

        for (size_t i = 1; i <= n; i++) {
                if (p[i] != '/' && p[i] != '\0')
                        continue;
                memcpy(q, p, i);
                q[i] = '\0';
                if (vfs_view_hidden(v, q))
                        return false;
                if (i == n)
                        break;
                m = vfs_view_mount_at(v, q);
                if (m) {
                        /* the components between the last mount point and this one's name */
                        if (!segment_plain(seg, p + from, last > from ? last - 1 - from : 0))
                                return false;
                        seg = m;
                        from = i + 1;
                }
                last = i + 1; /* where the next component starts */
        }
        return segment_plain(seg, p + from, last > from ? last - 1 - from : 0);
}

/*
 * The shortcut of a path beneath a merged mount: the walk begins at the mount's root instead
 * of walking (and opening, and closing) every directory above it from the sandbox root, when
 * the path names the mount point literally, something follows it, and the walk down to it
 * would have been plain (ancestors_plain). The levels below are not made: a ".." above the
 * mount's root or an absolute symlink makes the walk start again from the root
 * (WALK_RESTART). 1 begun, 0 not (nothing done), or -errno.
 */
static int begin_at_mount(struct walk *w)
{
        const struct vfs_mount *best = NULL, *m;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < w->v->n_mounts; i++) {
                const struct vfs_mount *vm = &w->v->mounts[i];
                size_t k = vm->sandbox ? strlen(vm->sandbox) : 0;

                if (!vm->emulated || k <= 1 || k <= n || strncmp(w->p, vm->sandbox, k) != 0 ||
                    w->p[k] != '/')
                        continue;
                best = vm;
                n = k;
        }
        if (!best || w->p[n + strspn(w->p + n, "/")] == '\0')
                return 0;
        m = vfs_view_mount_at(w->v, best->sandbox);
        if (m != best || best->host_fd < 0 || best->upper_fd < 0 ||
            !ancestors_plain(w->v, best->sandbox))
                return 0;
        memcpy(w->path, best->sandbox, n + 1);
        w->at_mount = true;
        w->p += n;
        r = enter_mount(w, best);
        return r < 0 ? r : 1;
}

static int resolve(struct walk *w, const char *start, const char *path, struct vfs_result *out)
{
        size_t len = strnlen(path, PATH_MAX);
        int r;

        if (w->flags & ~VFS_FLAGS)
                return -EINVAL;
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        if (len == 0 && !(w->flags & VFS_EMPTY_PATH))
                return -ENOENT;
        if (len == 0) /* the object `start` names, as it is: fstatat(fd, "", AT_EMPTY_PATH) */
                w->flags &= ~(VFS_FOLLOW | VFS_CREATE);
        w->p = path;
        if (path[0] != '/') {
                if (!start || start[0] != '/')
                        return -EINVAL;
                /* The walk goes through `start` again rather than trusting a cached fd, so
                 * the sandbox path it reports is always the one it walked. */
                w->buf = xcalloc(1, strlen(start) + len + 2);
                strcpy(w->buf, start);
                if (len)
                        strcat(strcat(w->buf, "/"), path);
                w->p = w->buf;
        }
        r = w->no_shortcut ? 0 : begin_at_mount(w);
        if (r == 0)
                r = enter_root(w);
        else if (r == 1)
                r = 0;
        if (r == STEP_SPECIAL)
                return finish_special(w, out);
        return r < 0 ? r : walk_run(w, out);
}

int vfs_resolve(const struct vfs_view *v, const char *start, const char *path, unsigned flags,
                struct vfs_result *out)
{
        struct walk w = {.v = v, .flags = flags};
        int r;

        *out = (struct vfs_result){.fd = -1, .parent_fd = -1, .parent_lower_fd = -1};
        r = resolve(&w, start, path, out);
        walk_free(&w);
        if (r == WALK_RESTART) { /* nothing in *out yet: the walk had not finished */
                w = (struct walk){.v = v, .flags = flags, .no_shortcut = true};
                r = resolve(&w, start, path, out);
                walk_free(&w);
        }
        if (r < 0)
                vfs_result_release(out);
        return r < 0 ? r : 0;
}

void vfs_result_release(struct vfs_result *r)
{
        if (r->fd >= 0)
                close(r->fd);
        if (r->parent_fd >= 0)
                close(r->parent_fd);
        if (r->parent_lower_fd >= 0)
                close(r->parent_lower_fd);
        r->fd = -1;
        r->parent_fd = -1;
        r->parent_lower_fd = -1;
}

/*
 * The changes of a cow mount (cowdiff.h): a walk of the upper and the lower directory side by
 * side, each level's names merged in byte order, each entry looked at with fstatat
 * (AT_SYMLINK_NOFOLLOW) and opened, when it must be, with openat(O_NOFOLLOW) from its
 * directory's fd. A path string is only ever built for the output, never resolved here
 * (the rename pairing reopens by path, beneath the root, with no symlink on the way).
 */
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/journal.h"
#include "supervisor/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define XATTR_OPAQUE   "user.overlay.opaque"
#define XATTR_REDIRECT "user.overlay.redirect"
#define XATTR_METACOPY "user.overlay.metacopy"

struct walk {
        struct cow_diff *d;
        char path[PATH_MAX]; /* the entry's path relative to the root */
        size_t len;
        bool first_only; /* cowdiff_any: stop at the first change */
};

struct names {
        char **v;
        size_t n, cap;
};

static char type_of(mode_t m)
{
        return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : 'o';
}

static bool is_whiteout(const struct stat *st)
{
        return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

const char *cowdiff_type_name(char type)
{
        switch (type) {
        case 'f':
                return "file";
        case 'd':
                return "dir";
        case 'l':
                return "symlink";
        default:
                return "other";
        }
}

bool cowdiff_path_ok(const char *path)
{
        const char *p = path;

        if (!*p || *p == '/')
                return false;
        while (*p) {
                size_t n = strcspn(p, "/");

                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += n;
                if (*p == '/' && !*++p)
                        return false; /* a trailing slash */
        }
        return true;
}

int cowdiff_open(int root_fd, const char *path, int flags)
{
        struct open_how how = {
                .flags = (uint64_t)(flags | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        if (*path && !cowdiff_path_ok(path))
                return -EINVAL;
        fd = sys_openat2(root_fd, *path ? path : ".", &how);
        return fd < 0 ? -errno : fd;
}

/* ---- the walk's helpers ---------------------------------------------------------------- */

static bool done(const struct walk *w)
{
        return w->first_only && w->d->found;
}

static int path_push(struct walk *w, const char *name, size_t *saved)
{
        size_t n = strlen(name), sep = w->len ? 1 : 0;

        if (w->len + sep + n >= sizeof(w->path))
                return -ENAMETOOLONG;
        *saved = w->len;
        if (sep)
                w->path[w->len++] = '/';
        memcpy(w->path + w->len, name, n + 1);
        w->len += n;
        return 0;
}

static void path_pop(struct walk *w, size_t saved)
{
        w->len = saved;
        w->path[saved] = '\0';
}

static struct cow_change *add(struct cow_diff *d, char op, const char *path)
{
        struct cow_change *c;

        d->found |= op != COW_SAME;
        if (d->n == d->cap) {
                d->cap = d->cap ? d->cap * 2 : 32;
                d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
        }
        c = &d->v[d->n++];
        memset(c, 0, sizeof(*c));
        c->op = op;
        c->path = xstrdup(path);
        return c;
}

static void names_free(struct names *ns)
{
        for (size_t i = 0; i < ns->n; i++)
                free(ns->v[i]);
        free(ns->v);
        memset(ns, 0, sizeof(*ns));
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

struct dirent *cowdiff_readdir(DIR *dir, int *err)
{
        struct dirent *de;

        *err = 0;
        do {
                errno = 0;
                de = readdir(dir);
        } while (de && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0));
        if (!de && errno)
                *err = -errno;
        return de;
}

/* The names in the directory `dirfd` (-1: none), sorted, without "." and "..". */
static int list_dir(int dirfd, struct names *ns)
{
        DIR *dir;
        int fd, e;

        memset(ns, 0, sizeof(*ns));
        if (dirfd < 0)
                return 0;
        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                e = -errno;
                close(fd);
                return e;
        }
        for (struct dirent *de; (de = cowdiff_readdir(dir, &e));) {
                if (ns->n == ns->cap) {
                        ns->cap = ns->cap ? ns->cap * 2 : 16;
                        ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
                }
                ns->v[ns->n++] = xstrdup(de->d_name);
        }
        closedir(dir);
        if (e < 0) {
                names_free(ns);
                return e;
        }
        qsort(ns->v, ns->n, sizeof(*ns->v), cmp_name);
        return 0;
}

/* fstatat without following: 1 when there, 0 when not (a name that vanished), or -errno. */
static int stat_at(int dirfd, const char *name, struct stat *st)
{
        if (dirfd < 0)
                return 0;
        if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0)
                return 1;
        return errno == ENOENT ? 0 : -errno;
}

static int open_dir_at(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* A regular file of the directory, read-only, never a FIFO's wait nor a symlink's target. */
static int open_file_at(int dirfd, const char *name)
{
        struct stat st;
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -ESTALE; /* replaced since the fstatat */
        }
        return fd;
}

/* Whether the upper directory is opaque (1), not (0), or one we cannot read (-errno). */
static int upper_dir_opaque(int fd)
{
        char v[8];
        ssize_t n;

        if (fgetxattr(fd, XATTR_REDIRECT, NULL, 0) >= 0)
                return -EOPNOTSUPP; /* redirect_dir: not made with userxattr */
        n = fgetxattr(fd, XATTR_OPAQUE, v, sizeof(v));
        if (n < 0)
                return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
        return n == 1 && v[0] == 'y';
}

/* The data segment of a file at or after an offset: bytes [data, hole) are data, those
 * before `data` a hole. */
struct seg {
        off_t data, hole;
};

/* `fd`'s segment at or after `off` (SEEK_DATA, SEEK_HOLE), within `size`: none is
 * [size, size); where the file system cannot tell, all is data. */
static void seg_from(int fd, off_t off, off_t size, struct seg *s)
{
        s->data = lseek(fd, off, SEEK_DATA);
        if (s->data < 0)
                s->data = errno == ENXIO ? size : off;
        if (s->data > size)
                s->data = size;
        s->hole = s->data < size ? lseek(fd, s->data, SEEK_HOLE) : size;
        if (s->hole <= s->data || s->hole > size)
                s->hole = size;
}

/* Whether two regular files have the same bytes: 1, 0, or -errno. What is a hole in both is
 * zeros in both, and not read: a sparse file of terabytes takes the time of its data. */
static int same_bytes(int a, int b)
{
        static char ba[65536], bb[65536];
        struct stat sa, sb;
        struct seg ga = {0, 0}, gb = {0, 0};

        if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
                return -errno;
        if (sa.st_size != sb.st_size)
                return 0;
        for (off_t off = 0;;) {
                ssize_t na, nb;

                if (off >= ga.hole)
                        seg_from(a, off, sa.st_size, &ga);
                if (off >= gb.hole)
                        seg_from(b, off, sa.st_size, &gb);
                if (ga.data > off && gb.data > off) { /* a hole in both up to the nearer data */
                        off = ga.data < gb.data ? ga.data : gb.data;
                        if (off >= sa.st_size)
                                return 1;
                }
                na = pread(a, ba, sizeof(ba), off);

                if (na < 0)
                        return -errno;
                nb = na ? pread(b, bb, (size_t)na, off) : 0;
                if (nb < 0)
                        return -errno;
                if (na == 0)
                        return 1;
                if (nb != na || memcmp(ba, bb, (size_t)na) != 0)
                        return 0;
                off += na;
        }
}

static int same_file_at(int ufd, int lfd, const char *name)
{
        _cleanup_close_ int u = open_file_at(ufd, name);
        _cleanup_close_ int l = -1;

        if (u < 0)
                return u;
        if (fgetxattr(u, XATTR_METACOPY, NULL, 0) >= 0)
                return -EOPNOTSUPP; /* metacopy: the data would be the lower's */
        l = open_file_at(lfd, name);
        if (l < 0)
                return l;
        return same_bytes(u, l);
}

static int same_link_at(int ufd, int lfd, const char *name)
{
        char a[PATH_MAX], b[PATH_MAX];
        ssize_t na = readlinkat(ufd, name, a, sizeof(a)), nb;

        if (na < 0)
                return -errno;
        nb = readlinkat(lfd, name, b, sizeof(b));
        if (nb < 0)
                return -errno;
        return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* ---- the walk ---------------------------------------------------------------------------- */

static int walk_dir(struct walk *w, int ufd, int lfd, bool opaque);
static int add_tree(struct walk *w, int ufd, const char *name, const struct stat *su);
static int del_tree(struct walk *w, int lfd, const char *name, const struct stat *sl,
                    bool whiteout);

/* The entries of the directory `dirfd` (upper: all new; lower: all gone), each pushed. */
static int each_child(struct walk *w, int dirfd, bool upper)
{
        struct names ns;
        int r = list_dir(dirfd, &ns);

        for (size_t i = 0; r >= 0 && i < ns.n && !done(w); i++) {
                struct stat st;
                size_t saved;

                r = stat_at(dirfd, ns.v[i], &st);
                if (r <= 0)
                        continue;
                r = path_push(w, ns.v[i], &saved);
                if (r == -ENAMETOOLONG) {
                        w->d->too_deep++, r = 0; /* left out, the rest reviewed */
                        continue;
                }
                if (r < 0)
                        break;
                if (upper && is_whiteout(&st))
                        add(w->d, COW_SAME, w->path)->whiteout = true; /* hides nothing */
                else if (upper)
                        r = add_tree(w, dirfd, ns.v[i], &st);
                else
                        r = del_tree(w, dirfd, ns.v[i], &st, false);
                path_pop(w, saved);
        }
        names_free(&ns);
        return r < 0 ? r : 0;
}

static int children_of(struct walk *w, int parent, const char *name, bool upper)
{
        _cleanup_close_ int fd = open_dir_at(parent, name);
        int r;

        if (fd < 0)
                return fd;
        if (upper && (r = upper_dir_opaque(fd)) < 0)
                return r;
        return each_child(w, fd, upper);
}

/* The target of the upper's symlink `name` in `dirfd`, for the review (c->target). */
static int read_target(int dirfd, const char *name, struct cow_change *c)
{
        char buf[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);

        if (n < 0)
                return -errno;
        buf[n] = '\0';
        c->target = xstrdup(buf);
        return 0;
}

/* An upper object with nothing beneath it in the lower: A, and for a directory, its tree. */
static int add_tree(struct walk *w, int ufd, const char *name, const struct stat *su)
{
        struct cow_change *c = add(w->d, COW_ADD, w->path);

        c->type = type_of(su->st_mode);
        c->mode = su->st_mode & 07777;
        c->size = (uint64_t)su->st_size;
        if (c->type == 'l')
                return read_target(ufd, name, c);
        return c->type == 'd' ? children_of(w, ufd, name, true) : 0;
}

/* A lower object the merge no longer shows: D, and for a directory, everything beneath. */
static int del_tree(struct walk *w, int lfd, const char *name, const struct stat *sl, bool whiteout)
{
        struct cow_change *c = add(w->d, COW_DEL, w->path);

        c->old_type = type_of(sl->st_mode);
        c->old_mode = sl->st_mode & 07777;
        c->size = (uint64_t)sl->st_size;
        c->whiteout = whiteout;
        return c->old_type == 'd' ? children_of(w, lfd, name, false) : 0;
}

static int compare_dirs(struct walk *w, int ufd, int lfd, const char *name, bool opaque)
{
        _cleanup_close_ int u = open_dir_at(ufd, name);
        _cleanup_close_ int l = -1;
        int o;

        if (u < 0)
                return u;
        o = upper_dir_opaque(u);
        if (o < 0)
                return o;
        l = open_dir_at(lfd, name);
        if (l < 0)
                return l;
        return walk_dir(w, u, l, opaque || o);
}

/* The same name on both sides, the upper's not a whiteout. */
static int compare(struct walk *w, int ufd, int lfd, const char *name, const struct stat *su,
                   const struct stat *sl, bool opaque)
{
        char tu = type_of(su->st_mode), tl = type_of(sl->st_mode);
        mode_t mu = su->st_mode & 07777, ml = sl->st_mode & 07777;
        struct cow_change *c;
        bool times;
        int same;

        if (tu != tl) {
                c = add(w->d, COW_TYPE, w->path);
                c->type = tu;
                c->old_type = tl;
                c->mode = mu;
                c->old_mode = ml;
                c->size = (uint64_t)su->st_size;
                if (tu == 'l' && (same = read_target(ufd, name, c)) < 0)
                        return same;
                if (tl == 'd')
                        return children_of(w, lfd, name, false);
                return tu == 'd' ? children_of(w, ufd, name, true) : 0;
        }
        if (tu == 'd') {
                if (mu != ml) {
                        c = add(w->d, COW_MOD, w->path);
                        c->type = c->old_type = 'd';
                        c->mode = mu;
                        c->old_mode = ml;
                }
                return compare_dirs(w, ufd, lfd, name, opaque);
        }
        if (tu == 'f')
                same = same_file_at(ufd, lfd, name);
        else if (tu == 'l')
                same = same_link_at(ufd, lfd, name);
        else
                same = (su->st_mode & S_IFMT) == (sl->st_mode & S_IFMT) &&
                       su->st_rdev == sl->st_rdev;
        if (same < 0)
                return same;
        if (tu == 'l')
                mu = ml; /* a symlink's mode means nothing */
        /* A file whose time alone changed (touch, a rewrite of the same bytes) is a change:
         * make, for one, decides by it. A directory's times follow its entries. */
        times = tu == 'f' && same && mu == ml &&
                (su->st_mtim.tv_sec != sl->st_mtim.tv_sec ||
                 su->st_mtim.tv_nsec != sl->st_mtim.tv_nsec);
        c = add(w->d, same && mu == ml && !times ? COW_SAME : COW_MOD, w->path);
        c->type = c->old_type = tu;
        c->mode = mu;
        c->old_mode = ml;
        c->content = !same;
        c->times = times;
        if (tu == 'l' && !same)
                return read_target(ufd, name, c);
        c->size = (uint64_t)su->st_size;
        return 0;
}

/* One name of a merged directory, present on at least one side. */
static int walk_entry(struct walk *w, int ufd, int lfd, const char *name, bool in_u, bool in_l,
                      bool opaque)
{
        struct stat su, sl;
        size_t saved;
        int r;

        if (in_u && (r = stat_at(ufd, name, &su)) <= 0) {
                if (r < 0)
                        return r;
                in_u = false;
        }
        if (!in_u && !opaque)
                return 0; /* the lower's, shown as it is */
        if (in_l && (r = stat_at(lfd, name, &sl)) <= 0) {
                if (r < 0)
                        return r;
                in_l = false;
        }
        if (!in_u && (!in_l || !opaque))
                return 0; /* the lower's, shown as it is */
        r = path_push(w, name, &saved);
        if (r == -ENAMETOOLONG)
                w->d->too_deep++;
        if (r < 0)
                return r == -ENAMETOOLONG ? 0 : r;
        if (!in_u)
                r = del_tree(w, lfd, name, &sl, false); /* hidden by an opaque directory */
        else if (is_whiteout(&su) && in_l)
                r = del_tree(w, lfd, name, &sl, true);
        else if (is_whiteout(&su))
                add(w->d, COW_SAME, w->path)->whiteout = true; /* a whiteout over nothing */
        else if (!in_l)
                r = add_tree(w, ufd, name, &su);
        else
                r = compare(w, ufd, lfd, name, &su, &sl, opaque);
        path_pop(w, saved);
        return r;
}

/* A merged directory: the upper `ufd` over the lower `lfd` (-1: none). */
static int walk_dir(struct walk *w, int ufd, int lfd, bool opaque)
{
        struct names u, l;
        size_t i = 0, j = 0;
        int r;

        r = list_dir(ufd, &u);
        if (r < 0)
                return r;
        r = list_dir(lfd, &l);
        while (r >= 0 && (i < u.n || j < l.n) && !done(w)) {
                int c = i == u.n ? 1 : j == l.n ? -1 : strcmp(u.v[i], l.v[j]);
                const char *name = c <= 0 ? u.v[i] : l.v[j];

                r = walk_entry(w, ufd, lfd, name, c <= 0, c >= 0, opaque);
                i += c <= 0;
                j += c >= 0;
        }
        names_free(&u);
        names_free(&l);
        return r;
}

/* ---- renames ----------------------------------------------------------------------------- */

static int cmp_change(const void *a, const void *b)
{
        const struct cow_change *x = a, *y = b;
        return strcmp(x->path, y->path);
}

struct cand {
        size_t i;   /* index in the diff */
        bool added; /* an A (else a D) */
        uint64_t size, hash;
};

static int cmp_cand(const void *a, const void *b)
{
        const struct cand *x = a, *y = b;

        if (x->size != y->size)
                return x->size < y->size ? -1 : 1;
        if (x->hash != y->hash)
                return x->hash < y->hash ? -1 : 1;
        return (int)x->added - (int)y->added;
}

static int hash_path(int root, const char *path, uint64_t *h)
{
        _cleanup_close_ int fd = cowdiff_open(root, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        struct stat st;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -ESTALE;
        return journal_hash_fd_v(fd, JOURNAL_HASH_CURRENT, h);
}

/* Candidates: non-empty regular files added or deleted whose size has a partner. */
static size_t rename_candidates(const struct cow_diff *d, struct cand *cs)
{
        size_t n = 0;

        for (size_t i = 0; i < d->n; i++) {
                const struct cow_change *c = &d->v[i];

                if (c->size && ((c->op == COW_ADD && c->type == 'f') ||
                                (c->op == COW_DEL && c->old_type == 'f')))
                        cs[n++] = (struct cand){i, c->op == COW_ADD, c->size, 0};
        }
        qsort(cs, n, sizeof(*cs), cmp_cand);
        return n;
}

/* Hash the candidates whose size both sides have; the others get no partner. */
static int hash_candidates(const struct cow_diff *d, struct cand *cs, size_t n, int upper_fd,
                           int lower_fd)
{
        for (size_t a = 0, b; a < n; a = b) {
                bool adds = false, dels = false;

                for (b = a; b < n && cs[b].size == cs[a].size; b++)
                        *(cs[b].added ? &adds : &dels) = true;
                for (size_t k = a; adds && dels && k < b; k++) {
                        int r = hash_path(cs[k].added ? upper_fd : lower_fd, d->v[cs[k].i].path,
                                          &cs[k].hash);
                        if (r < 0)
                                return r;
                }
        }
        qsort(cs, n, sizeof(*cs), cmp_cand);
        return 0;
}

static int same_path_bytes(int upper_fd, const char *new_path, int lower_fd, const char *old_path)
{
        _cleanup_close_ int u =
                cowdiff_open(upper_fd, new_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        _cleanup_close_ int l =
                cowdiff_open(lower_fd, old_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);

        if (u < 0 || l < 0)
                return u < 0 ? u : l;
        return same_bytes(u, l);
}

/*
 * A D and an A of regular files with the same size and hash become one R, when they are the
 * only two of that (size, hash) and their bytes agree: nothing less proves a rename.
 */
static int pair_renames(struct cow_diff *d, int upper_fd, int lower_fd)
{
        _cleanup_free_ struct cand *cs = xcalloc(d->n, sizeof(*cs));
        size_t n = rename_candidates(d, cs), kept = 0;
        int r = hash_candidates(d, cs, n, upper_fd, lower_fd);

        for (size_t a = 0, b; r >= 0 && a < n; a = b) {
                for (b = a; b < n && cs[b].size == cs[a].size && cs[b].hash == cs[a].hash; b++)
                        ;
                if (b - a != 2 || cs[a].added || !cs[a + 1].added)
                        continue;
                struct cow_change *del = &d->v[cs[a].i], *nw = &d->v[cs[a + 1].i];
                r = same_path_bytes(upper_fd, nw->path, lower_fd, del->path);
                if (r <= 0)
                        continue;
                del->op = COW_REN;
                del->old_path = del->path;
                del->path = steal_ptr(nw->path);
                del->type = 'f';
                del->mode = nw->mode;
                nw->op = 0; /* dropped below */
        }
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n; i++)
                if (d->v[i].op)
                        d->v[kept++] = d->v[i];
                else
                        free(d->v[i].path);
        d->n = kept;
        return 0;
}

/* ---- the API ----------------------------------------------------------------------------- */

int cowdiff_compute(int upper_fd, int lower_fd, struct cow_diff *d)
{
        struct walk *w = xcalloc(1, sizeof(*w));
        int r;

        memset(d, 0, sizeof(*d));
        w->d = d;
        r = upper_dir_opaque(upper_fd);
        if (r >= 0)
                r = walk_dir(w, upper_fd, lower_fd, r == 1);
        free(w);
        if (r >= 0 && lower_fd >= 0)
                r = pair_renames(d, upper_fd, lower_fd);
        if (r < 0) {
                cowdiff_free(d);
                return r;
        }
        if (d->n)
                qsort(d->v, d->n, sizeof(*d->v), cmp_change);
        return 0;
}

int cowdiff_any(int upper_fd, int lower_fd)
{
        struct cow_diff d = {0};
        struct walk *w = xcalloc(1, sizeof(*w));
        int r;

        w->d = &d;
        w->first_only = true;
        r = upper_dir_opaque(upper_fd);
        if (r >= 0)
                r = walk_dir(w, upper_fd, lower_fd, r == 1);
        free(w);
        if (r >= 0)
                r = d.found;
        cowdiff_free(&d);
        return r;
}

size_t cowdiff_count(const struct cow_diff *d)
{
        size_t n = 0;

        for (size_t i = 0; i < d->n; i++)
                n += d->v[i].op != COW_SAME;
        return n;
}

void cowdiff_free(struct cow_diff *d)
{
        for (size_t i = 0; i < d->n; i++) {
                free(d->v[i].path);
                free(d->v[i].target);
                free(d->v[i].old_path);
        }
        free(d->v);
        memset(d, 0, sizeof(*d));
}

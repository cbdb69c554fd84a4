/*
 * Copy-up for an emulated copy-on-write mount (cowup.h): both trees walked side by side one
 * component at a time, each new object made under a temporary name in its upper parent,
 * finished there, then renamed into place.
 */
#include "supervisor/vfs/cowup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/treemove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define XATTR_OPAQUE "user.overlay.opaque"

/* The sweep goes no deeper than this: it recurses on the caller's stack. */
#define DEPTH_MAX 128

/* "/proc/self/fd/N": the object of an fd (O_PATH too) for the calls that take a path only. */
static const char *fd_path(int fd, char buf[static 32])
{
        snprintf(buf, 32, "/proc/self/fd/%d", fd);
        return buf;
}

/* Our file-system uid on this thread (a handler may act with the program's: creds.h). The
 * raw syscall: glibc's wrapper would signal every thread, even for -1, which changes nothing. */
static uid_t fs_uid(void)
{
        return (uid_t)syscall(SYS_setfsuid, -1);
}

bool cowup_is_tmp(const char *name)
{
        return strncmp(name, COWUP_TMP_PREFIX, strlen(COWUP_TMP_PREFIX)) == 0;
}

static void tmp_name(char buf[static 64])
{
        static unsigned counter;

        snprintf(buf, 64, COWUP_TMP_PREFIX "%d.%u", (int)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
}

/* ---- changes of an upper directory ----------------------------------------------------- */

enum op_kind {
        OP_MKDIR,      /* name, mode 0700 until finished */
        OP_CREATE,     /* name, a new regular file open for writing (the result) */
        OP_MKNOD,      /* name, mode (type and bits), dev */
        OP_SYMLINK,    /* name, to (the target) */
        OP_RENAME,     /* name to `to`, never over anything */
        OP_REMOVE,     /* name, flags (AT_REMOVEDIR) */
        OP_LIST,       /* the directory itself, open for reading (the result) */
        OP_GET_OPAQUE, /* the directory itself: 1 opaque, 0 not */
        OP_SET_OPAQUE, /* the directory itself */
};

/* The owner's permission bits that each kind needs on the directory. */
static const mode_t op_bits[] = {
        [OP_MKDIR] = 0300,   [OP_CREATE] = 0300,     [OP_MKNOD] = 0300,
        [OP_SYMLINK] = 0300, [OP_RENAME] = 0300,     [OP_REMOVE] = 0300,
        [OP_LIST] = 0500,    [OP_GET_OPAQUE] = 0400, [OP_SET_OPAQUE] = 0200,
};

struct op {
        enum op_kind kind;
        const char *name, *to;
        mode_t mode;
        dev_t dev;
        int flags;
};

static int op_once(int dir, const struct op *o)
{
        char p[32], v[2];
        ssize_t n;
        int fd;

        switch (o->kind) {
        case OP_MKDIR:
                return mkdirat(dir, o->name, 0700) < 0 ? -errno : 0;
        case OP_CREATE:
                fd = openat(dir, o->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0600);
                return fd < 0 ? -errno : fd;
        case OP_MKNOD:
                return mknodat(dir, o->name, o->mode, o->dev) < 0 ? -errno : 0;
        case OP_SYMLINK:
                return symlinkat(o->to, dir, o->name) < 0 ? -errno : 0;
        case OP_RENAME:
                return renameat2(dir, o->name, dir, o->to, RENAME_NOREPLACE) < 0 ? -errno : 0;
        case OP_REMOVE:
                return unlinkat(dir, o->name, o->flags) < 0 ? -errno : 0;
        case OP_LIST:
                fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        case OP_GET_OPAQUE:
                n = getxattr(fd_path(dir, p), XATTR_OPAQUE, v, sizeof(v));
                if (n < 0)
                        return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
                return n == 1 && v[0] == 'y';
        case OP_SET_OPAQUE:
                return setxattr(fd_path(dir, p), XATTR_OPAQUE, "y", 1, 0) < 0 ? -errno : 0;
        }
        return -EINVAL;
}

/*
 * One change of (or look into) the upper directory `dir`. As a user, the upper's directories
 * are ours with the lower's modes, and a mode may deny us what a copy-up needs (a 0555
 * directory whose files the program may write). overlayfs copies up with the mounter's
 * credentials, which may; so where we are refused, the directory is given the bits the kind
 * needs for this one change and its mode put back. The lock keeps two threads from
 * interleaving that: the mode read under it is always the true one, never another thread's
 * opened-up one. A chmod of the directory by the caller in that window would be undone: the
 * caller performs the program's changes of a directory after its copy-up, not during one.
 */
static int as_owner(int dir, const struct op *o)
{
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        const mode_t bits = op_bits[o->kind];
        struct stat st;
        char p[32];
        int r = op_once(dir, o);

        if (r != -EACCES)
                return r;
        pthread_mutex_lock(&lock);
        if (fstat(dir, &st) < 0 || st.st_uid != fs_uid())
                ; /* not ours: EACCES is the answer */
        else if ((st.st_mode & bits) == bits)
                r = op_once(dir, o); /* another thread had it opened up when we were refused */
        else if (chmod(fd_path(dir, p), (st.st_mode | bits) & 07777) == 0) {
                r = op_once(dir, o);
                (void)chmod(p, st.st_mode & 07777);
        }
        pthread_mutex_unlock(&lock);
        return r;
}

/* ---- whiteouts and opaque directories -------------------------------------------------- */

bool cowup_is_whiteout(const struct stat *st)
{
        return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

int cowup_whiteout(int dirfd, const char *name)
{
        /* Not through as_owner: a whiteout is the program's own change (unlink, rename), and
         * the upper directory's mode is the merged one's, so the kernel's refusal is right. */
        return mknodat(dirfd, name, S_IFCHR, makedev(0, 0)) < 0 ? -errno : 0;
}

#define OPAQUE_KNOWN  512 /* slots; a collision only costs a getxattr */
#define OPAQUE_SETTLE 2   /* seconds a ctime must lie back to be remembered */

struct opaque_known {
        dev_t dev;
        ino_t ino;
        struct timespec ctime;
        unsigned gen;
        bool used, opaque;
};

static struct opaque_known opaque_known[OPAQUE_KNOWN];
static unsigned opaque_gen = 1; /* bumped by every mark we set: 0 is no answer's */
static pthread_mutex_t opaque_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every remembered opaque answer forgotten (cowup_is_opaque_stat): a mark is being set. */
static void opaque_forget(void)
{
        pthread_mutex_lock(&opaque_lock);
        opaque_gen = opaque_gen + 1 ? opaque_gen + 1 : 1;
        pthread_mutex_unlock(&opaque_lock);
}

int cowup_set_opaque(int fd)
{
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        /* before and after: an answer read meanwhile is not kept */
        opaque_forget();
        r = as_owner(fd, &(struct op){.kind = OP_SET_OPAQUE});
        opaque_forget();
        return r;
}

/* 1 opaque, 0 not, or -errno: an opaque directory unread would show the lower's names. */
static int opaque(int fd)
{
        return as_owner(fd, &(struct op){.kind = OP_GET_OPAQUE});
}

bool cowup_is_opaque(int fd)
{
        return opaque(fd) == 1;
}

static size_t opaque_slot(const struct stat *st)
{
        uint64_t h = ((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)st->st_ino;

        return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 32) % OPAQUE_KNOWN;
}

static bool opaque_key(const struct opaque_known *k, const struct stat *st, unsigned gen)
{
        return k->used && k->gen == gen && k->dev == st->st_dev && k->ino == st->st_ino &&
               k->ctime.tv_sec == st->st_ctim.tv_sec && k->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* Whether `st`'s ctime is old enough that a later change cannot leave it as it is. */
static bool settled(const struct stat *st)
{
        struct timespec now;

        return clock_gettime(CLOCK_REALTIME, &now) == 0 &&
               st->st_ctim.tv_sec + OPAQUE_SETTLE < now.tv_sec;
}

bool cowup_is_opaque_stat(int fd, const struct stat *st)
{
        struct opaque_known *k = &opaque_known[opaque_slot(st)];
        unsigned gen;
        bool hit, o = false;
        int r;

        pthread_mutex_lock(&opaque_lock);
        gen = opaque_gen;
        hit = opaque_key(k, st, gen);
        if (hit)
                o = k->opaque;
        pthread_mutex_unlock(&opaque_lock);
        if (hit)
                return o;
        r = opaque(fd); /* no lock held across it */
        o = r == 1;
        if (r < 0 || !settled(st))
                return o; /* an error (a caller who may not read it) is no answer to keep */
        pthread_mutex_lock(&opaque_lock);
        if (gen == opaque_gen) /* no mark set meanwhile */
                *k = (struct opaque_known){.dev = st->st_dev,
                                           .ino = st->st_ino,
                                           .ctime = st->st_ctim,
                                           .gen = gen,
                                           .used = true,
                                           .opaque = o};
        pthread_mutex_unlock(&opaque_lock);
        return o;
}

/* ---- making an object ------------------------------------------------------------------ */

/* `name` in `dir`, O_PATH and not followed, with its stat. Returns the fd or -errno. */
static int open_entry(int dir, const char *name, struct stat *st)
{
        int fd = cowdiff_open(dir, name, O_PATH | O_NOFOLLOW), r;

        if (fd >= 0 && fstat(fd, st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/*
 * The lower's owner, as far as we may give it: all of it as root (the upper then holds files
 * of other users, as overlayfs's does); as a user, chown(2) lets an owner pick any group it is
 * a member of, and refuses the rest (EPERM, or EINVAL for an id outside our user namespace).
 */
static void own(int parent, const char *tmp, const struct stat *st)
{
        if (fchownat(parent, tmp, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                (void)fchownat(parent, tmp, (uid_t)-1, st->st_gid, AT_SYMLINK_NOFOLLOW);
}

/* Owner, mode, times of the finished temporary. The mode after the owner, as chown(2) clears
 * set-ID bits; the times last, as every change before moves them. Set-ID bits of a
 * non-directory only as root (cowup.h says why). Through an O_PATH fd of the name, never
 * following it, and only if it is still of the type made: the program cannot name our
 * temporaries (vfs/resolve.c, fs_cow.c), but were one swapped for a symlink, a chmod by name
 * would follow it as the supervisor, onto any file (an outside attack did so when the
 * names were visible). */
static int finish(int parent, const char *tmp, const struct stat *st)
{
        const struct timespec times[2] = {st->st_atim, st->st_mtim};
        const bool keep_id = S_ISDIR(st->st_mode) || fs_uid() == 0;
        _cleanup_close_ int fd = openat(parent, tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat now;
        char p[32];

        if (fd < 0)
                return -errno;
        if (fstat(fd, &now) < 0)
                return -errno;
        if ((now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
                return -ESTALE;
        own(parent, tmp, st);
        if (!S_ISLNK(st->st_mode) &&
            chmod(fd_path(fd, p), st->st_mode & (keep_id ? 07777 : 01777)) < 0)
                return -errno;
        return utimensat(parent, tmp, times, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* Rename the finished temporary `tmp` into place as `name`, or remove it when the making
 * failed (r) or the rename did. When the name is taken, a concurrent copy-up won: ours goes,
 * theirs is the answer. Returns an O_PATH fd of what `name` holds, or -errno. */
static int publish(int parent, const char *tmp, const char *name, bool dir, int r)
{
        bool lost = false;
        struct stat st;
        int fd;

        if (r == 0) {
                r = as_owner(parent, &(struct op){.kind = OP_RENAME, .name = tmp, .to = name});
                lost = r == -EEXIST;
        }
        if (r < 0)
                (void)as_owner(parent, &(struct op){.kind = OP_REMOVE,
                                                    .name = tmp,
                                                    .flags = dir ? AT_REMOVEDIR : 0});
        if (r < 0 && !lost)
                return r;
        fd = open_entry(parent, name, &st);
        if (fd >= 0 && cowup_is_whiteout(&st)) {
                close(fd); /* removed by the program since: the merged view has nothing */
                return -ENOENT;
        }
        return fd;
}

/* The upper directory's times, to put back once a copy-up has changed its entries: the
 * merged view's directory did not change (overlayfs does the same). Concurrent copy-ups into
 * one directory may put back each other's times: a directory's times follow its entries and
 * no review compares them. */
static void times_keep(int dir, struct timespec t[2])
{
        struct stat st;

        t[0].tv_nsec = t[1].tv_nsec = UTIME_OMIT;
        if (fstat(dir, &st) == 0) {
                t[0] = st.st_atim;
                t[1] = st.st_mtim;
        }
}

static void times_put_back(int dir, const struct timespec t[2])
{
        char p[32];

        (void)utimensat(AT_FDCWD, fd_path(dir, p), t, 0);
}

/* A copy of the lower's directory `from` (O_PATH), st its stat, as the temporary `tmp`. */
static int make_dir(int parent, const char *tmp, int from, const struct stat *st)
{
        _cleanup_close_ int src = -1, dst = -1;
        int r = as_owner(parent, &(struct op){.kind = OP_MKDIR, .name = tmp});

        if (r < 0)
                return r;
        dst = openat(parent, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dst < 0)
                return -errno;
        /* A lower directory we may not read has no xattrs to give us: best effort, as for
         * every copy of user.* xattrs (treemove.h). */
        src = openat(from, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (src >= 0)
                vfs_copy_user_xattrs(src, dst);
        return finish(parent, tmp, st);
}

/* The regular file `src` (open for reading): content, user.* xattrs, then durable before it
 * gets its name, as overlayfs syncs a copy-up: a name never holds half a file, even after a
 * power cut. */
static int make_file(int parent, const char *tmp, int src, const struct stat *st)
{
        _cleanup_close_ int dst = as_owner(parent, &(struct op){.kind = OP_CREATE, .name = tmp});
        int r;

        if (dst < 0)
                return dst;
        r = vfs_copy_bytes(src, dst);
        if (r == 0)
                vfs_copy_user_xattrs(src, dst);
        if (r == 0)
                r = finish(parent, tmp, st);
        if (r == 0 && fsync(dst) < 0)
                r = -errno;
        return r;
}

static int make_symlink(int parent, const char *tmp, int from, const struct stat *st)
{
        char target[PATH_MAX];
        ssize_t n = readlinkat(from, "", target, sizeof(target));
        int r;

        if (n < 0)
                return -errno;
        if ((size_t)n == sizeof(target))
                return -ENAMETOOLONG;
        target[n] = '\0';
        r = as_owner(parent, &(struct op){.kind = OP_SYMLINK, .name = tmp, .to = target});
        return r < 0 ? r : finish(parent, tmp, st);
}

/* The lower object `from` (O_PATH; `src`: open for reading, for a regular file) as the
 * temporary `tmp`. */
static int make(int parent, const char *tmp, int from, int src, const struct stat *st)
{
        int r;

        switch (st->st_mode & S_IFMT) {
        case S_IFDIR:
                return make_dir(parent, tmp, from, st);
        case S_IFREG:
                return make_file(parent, tmp, src, st);
        case S_IFLNK:
                return make_symlink(parent, tmp, from, st);
        default: /* a FIFO, a socket, a device node (checked by the caller) */
                r = as_owner(parent, &(struct op){.kind = OP_MKNOD,
                                                  .name = tmp,
                                                  .mode = (st->st_mode & S_IFMT) | 0600,
                                                  .dev = st->st_rdev});
                return r < 0 ? r : finish(parent, tmp, st);
        }
}

/* A copy of the lower object `from` (see make) as `name` in the upper directory `parent`.
 * Returns an O_PATH fd of the upper's object, or -errno. */
static int copy(int parent, const char *name, int from, int src, const struct stat *st)
{
        struct timespec kept[2];
        char tmp[64];
        int r, tries = 0, fd;

        times_keep(parent, kept);
        do { /* a temporary name a crash left under our pid: cowup_sweep had not run */
                tmp_name(tmp);
                r = make(parent, tmp, from, src, st);
        } while (r == -EEXIST && ++tries < 8);
        fd = publish(parent, tmp, name, S_ISDIR(st->st_mode), r);
        times_put_back(parent, kept);
        return fd;
}

/* ---- the walk --------------------------------------------------------------------------- */

/* Where a walk stands: the upper's directory (-1: the upper has none at that path) and the
 * lower's (-1: none, or hidden by an opaque upper directory or one over a lower file). */
struct pos {
        int u, l;
};

static void pos_close(struct pos *p)
{
        if (p->u >= 0)
                close(p->u);
        if (p->l >= 0)
                close(p->l);
        p->u = p->l = -1;
}

/* One component: look it up in both trees as overlayfs would, and with `make` give the upper
 * a directory the lower has. */
static int step(struct pos *p, const char *name, bool make)
{
        _cleanup_close_ int u = -1, l = -1;
        struct stat su, sl;
        int o = 0;

        if (p->u >= 0) {
                u = open_entry(p->u, name, &su);
                if (u < 0 && u != -ENOENT)
                        return u;
                if (u >= 0 && cowup_is_whiteout(&su))
                        return -ENOENT;
                if (u >= 0 && !S_ISDIR(su.st_mode))
                        return -ENOTDIR; /* a symlink too: never followed */
                if (u >= 0 && (o = opaque(u)) < 0)
                        return o;
        }
        if (p->l >= 0 && !o) {
                l = open_entry(p->l, name, &sl);
                if (l < 0 && l != -ENOENT)
                        return l;
                if (l >= 0 && !S_ISDIR(sl.st_mode)) {
                        if (u < 0)
                                return -ENOTDIR;
                        close(steal_fd(l)); /* an upper directory over a lower file hides it */
                }
        }
        if (u < 0 && l < 0)
                return -ENOENT;
        if (u < 0 && make) {
                u = copy(p->u, name, l, -1, &sl);
                if (u < 0)
                        return u;
                if (fstat(u, &su) < 0)
                        return -errno;
                if (!S_ISDIR(su.st_mode))
                        return -ENOTDIR; /* the program's, made meanwhile */
        }
        pos_close(p);
        p->u = steal_fd(u);
        p->l = steal_fd(l);
        return 0;
}

/* Walk both trees from their roots to the directory `rel`, making the upper's with `make`. */
static int walk(int upper, int lower, const char *rel, bool make, struct pos *p)
{
        char name[NAME_MAX + 1];
        const char *at = rel;
        int r, fd;

        *p = (struct pos){-1, -1};
        if (*rel && !cowdiff_path_ok(rel))
                return -EINVAL;
        r = fd = cowdiff_open(upper, "", O_PATH | O_DIRECTORY);
        if (fd >= 0) {
                p->u = fd;
                r = opaque(p->u); /* an opaque root: the lower is not looked at */
        }
        if (r == 0) {
                r = fd = cowdiff_open(lower, "", O_PATH | O_DIRECTORY);
                p->l = fd >= 0 ? fd : -1;
        }
        while (r >= 0 && vfs_path_next_component(&at, name, sizeof(name)))
                r = step(p, name, make);
        if (r >= 0 && *at)
                r = -ENAMETOOLONG; /* a component longer than a name may be */
        if (r < 0)
                pos_close(p);
        return r < 0 ? r : 0;
}

/* ---- the API ---------------------------------------------------------------------------- */

int cowup_layers(int upper, int lower, const char *rel, int *u, int *l)
{
        struct pos p;
        int r = walk(upper, lower, rel, false, &p);

        *u = *l = -1;
        if (r < 0)
                return r;
        *u = p.u;
        *l = p.l;
        return 0;
}

int cowup_dir(int upper, int lower, const char *rel)
{
        struct pos p;
        int r = walk(upper, lower, rel, false, &p);

        /* First only look: the upper has the directory already (most calls), or the merged
         * view has none and no parent is made on the way to saying so. */
        if (r == 0 && p.u < 0) {
                pos_close(&p);
                r = walk(upper, lower, rel, true, &p);
        }
        if (r < 0)
                return r;
        if (p.l >= 0)
                close(p.l);
        return p.u;
}

/* The lower's object for cowup_object, once the upper has been seen not to have it: its O_PATH
 * fd (and *src, a regular file's, open for reading), or -errno. */
static int lower_object(const struct pos *p, const char *name, struct stat *st, int *src)
{
        _cleanup_close_ int fd = -1;
        char path[32];

        if (p->l < 0)
                return -ENOENT; /* no lower directory, or an opaque upper one hides it */
        fd = open_entry(p->l, name, st);
        if (fd < 0)
                return fd;
        if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) &&
            (fs_uid() != 0 || cowup_is_whiteout(st)))
                return -EPERM;
        if (S_ISREG(st->st_mode)) {
                /* Reopened through /proc: the very inode looked at, not a name again. */
                *src = open(fd_path(fd, path), O_RDONLY | O_CLOEXEC);
                if (*src < 0)
                        return -errno; /* a file we may not read: no copy (overlayfs's too) */
        }
        return steal_fd(fd);
}

int cowup_object(int upper, int lower, const char *rel)
{
        _cleanup_close_ int from = -1, src = -1;
        char parent[PATH_MAX];
        const char *slash = strrchr(rel, '/'), *name = slash ? slash + 1 : rel;
        struct stat st;
        struct pos p;
        int r, fd;

        if (!cowdiff_path_ok(rel))
                return -EINVAL;
        if (strlen(rel) >= sizeof(parent))
                return -ENAMETOOLONG;
        snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 0, rel);
        /* First only look: an object the upper has (most calls) costs no copy, and one that
         * neither tree has leaves no directories behind. */
        r = walk(upper, lower, parent, false, &p);
        if (r < 0)
                return r;
        fd = p.u >= 0 ? open_entry(p.u, name, &st) : -ENOENT;
        if (fd >= 0 && cowup_is_whiteout(&st)) {
                close(fd);
                fd = -ENOENT; /* removed in the session */
        } else if (fd == -ENOENT) {
                fd = from = lower_object(&p, name, &st, &src);
        }
        pos_close(&p);
        if (from < 0)
                return fd; /* the upper's own object, or an error */
        if (S_ISDIR(st.st_mode))
                return cowup_dir(upper, lower, rel);
        r = walk(upper, lower, parent, true, &p);
        if (r < 0)
                return r;
        fd = copy(p.u, name, from, src, &st);
        pos_close(&p);
        return fd;
}

/* The upper's directory `dir` (open for reading) as a stream: NULL with *err (-errno). */
static DIR *upper_list(int dir, int *err)
{
        int fd = as_owner(dir, &(struct op){.kind = OP_LIST});
        DIR *d = fd < 0 ? NULL : fdopendir(fd);

        if (!d) {
                *err = fd < 0 ? fd : -ENOMEM;
                if (fd >= 0)
                        close(fd);
        }
        return d;
}

static int sweep(int dir, int depth)
{
        int r = 0, e = 0, n = 0;
        DIR *d = upper_list(dir, &r);

        if (!d)
                return r;
        for (struct dirent *de; (de = cowdiff_readdir(d, &e));) {
                _cleanup_close_ int sub = -1;
                struct stat st;

                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (cowup_is_tmp(de->d_name)) {
                        struct op o = {.kind = OP_REMOVE,
                                       .name = de->d_name,
                                       .flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0};

                        n += as_owner(dirfd(d), &o) == 0;
                } else if (S_ISDIR(st.st_mode) && depth < DEPTH_MAX) {
                        sub = cowdiff_open(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW);
                        r = sub >= 0 ? sweep(sub, depth + 1) : 0;
                        n += r > 0 ? r : 0; /* a directory we cannot list: passed over */
                }
        }
        closedir(d);
        return n;
}

int cowup_sweep(int upper)
{
        return sweep(upper, 0);
}

/* Whether the upper's directory holds whiteouts only (1), or something else (0), or -errno. */
static int only_whiteouts(int u)
{
        int r = 0, e = 0;
        DIR *d = upper_list(u, &r);

        if (!d)
                return r;
        r = 1;
        for (struct dirent *de; r == 1 && (de = cowdiff_readdir(d, &e));) {
                struct stat st;

                if (cowup_is_tmp(de->d_name))
                        continue; /* a copy-up in progress: not an entry of the merged view */
                if (de->d_type != DT_CHR && de->d_type != DT_UNKNOWN)
                        r = 0;
                else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = errno == ENOENT ? 1 : -errno;
                else
                        r = cowup_is_whiteout(&st);
        }
        closedir(d);
        return r == 1 && e ? e : r;
}

/* Whether every entry of the lower's directory `l` is whited out in the upper's `u` (-1: the
 * upper has none): 1, 0, or -errno. The lower is the host's: listed as it is, never opened up. */
static int all_whited_out(int l, int u)
{
        int r = 0, e = 0;
        DIR *d = vfs_dir_at(l, ".", &r);

        if (!d)
                return r;
        r = 1;
        for (struct dirent *de; r == 1 && (de = cowdiff_readdir(d, &e));) {
                struct stat st;

                if (u < 0 || fstatat(u, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = u < 0 || errno == ENOENT ? 0 : -errno;
                else
                        r = cowup_is_whiteout(&st);
        }
        closedir(d);
        return r == 1 && e ? e : r;
}

int cowup_merged_empty(int upper, int lower, const char *rel)
{
        struct pos p;
        int r = walk(upper, lower, rel, false, &p);

        if (r < 0)
                return r;
        r = p.u >= 0 ? only_whiteouts(p.u) : 1;
        if (r == 1 && p.l >= 0)
                r = all_whited_out(p.l, p.u);
        pos_close(&p);
        return r;
}

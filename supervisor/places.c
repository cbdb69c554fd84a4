#include "supervisor/pathcache.h"
#include "supervisor/places.h"
#include "supervisor/error.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The device files programs write. /dev/pts is a directory: every pty beneath it, those the
 * program opens later through /dev/ptmx included (openpty(3): even TIOCGPTPEER is judged by
 * Landlock on the slave's path, and a rule per existing pty would miss the new ones). The
 * price: the other terminals of the same uid are writable too (outside review F4), until the
 * virtual filesystem's /dev view shows the sandbox its own ptys only. */
static const char *const devices[] = {
        "/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
        "/dev/urandom", "/dev/tty",  "/dev/ptmx", "/dev/pts",
};

static bool is_hidden(const struct places *p, const struct stat *st);

/* Adds `path` unless it does not exist. Returns 0 or -1 with *err set. */
static int add(struct places *p, const char *path, enum place_kind kind, struct error *err)
{
        struct stat st;

        if (pc_stat(path, &st) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return make_error(err, errno, "stat `%s`, a place the sandbox may write", path);
        }
        for (size_t i = 0; i < p->n; i++)
                if (p->v[i].dev == st.st_dev && p->v[i].ino == st.st_ino)
                        return 0; /* the same object twice (cwd = /tmp, /dev/tty = fd 0) */
        if (p->n == PLACES_MAX)
                return make_error(err, 0, "too many writable places (`%s`)", path);
        p->v[p->n++] = (struct place){.path = xstrdup(path),
                                      .dev = st.st_dev,
                                      .ino = st.st_ino,
                                      .dir = S_ISDIR(st.st_mode),
                                      .kind = kind};
        return 0;
}

static bool under(const char *path, const char *top)
{
        size_t n = strlen(top);

        return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * The current directory becomes writable, whatever it is, except where that would give the
 * host away: "/" (every file of the host), and /proc, /sys, /dev (kernel knobs and disks:
 * /proc/sys/kernel/core_pattern, /dev/sda). There the run goes on with /tmp and /var/tmp
 * only, and says so. A home directory (or a parent of one) is allowed with a warning: the
 * command can then rewrite ~/.bashrc and friends.
 */
static int add_cwd(struct places *p, struct error *err)
{
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        const char *home = getenv("HOME");
        struct statfs sf;

        if (!cwd) {
                if (errno == ENOENT)
                        return 0; /* deleted: nothing to write there */
                return make_error(err, errno, "getcwd");
        }
        if (statfs(cwd, &sf) < 0)
                return make_error(err, errno, "statfs `%s`", cwd);
        if (strcmp(cwd, "/") == 0 || under(cwd, "/proc") || under(cwd, "/sys") ||
            under(cwd, "/dev") || sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC) {
                p->cwd_refused = true;
                error_warn("warning: the current directory `%s` is not made writable "
                           "(too broad, or kernel state); the command can write /tmp and /var/tmp "
                           "only\n",
                           cwd);
                return 0;
        }
        if (home && *home == '/' && strcmp(home, "/") != 0 && under(home, cwd))
                error_warn("warning: the current directory `%s` holds the home directory "
                           "`%s`: the command can rewrite its dotfiles (~/.bashrc, ~/.ssh)\n",
                           cwd, home);
        return add(p, cwd, PLACE_TREE, err);
}

/* The sandbox's terminal: its own pty when stockade relays one (the user's is then never
 * writable by path), else whatever terminal fds 0-2 are. */
static int add_terminals(struct places *p, int tty_slave, struct error *err)
{
        if (tty_slave == PLACES_NO_TERMINAL)
                return 0;
        if (tty_slave >= 0) {
                char name[PATH_MAX];

                if (ttyname_r(tty_slave, name, sizeof(name)) != 0)
                        return 0;
                return add(p, name, PLACE_DEVICE, err);
        }
        for (int fd = 0; fd <= 2; fd++) {
                char name[PATH_MAX];

                if (!isatty(fd) || ttyname_r(fd, name, sizeof(name)) != 0)
                        continue;
                if (add(p, name, PLACE_DEVICE, err) < 0)
                        return -1;
        }
        return 0;
}

int places_compute(struct places *p, int tty_slave, struct error *err)
{
        memset(p, 0, sizeof(*p));
        if (add_cwd(p, err) < 0 || add(p, "/tmp", PLACE_TREE, err) < 0 ||
            add(p, "/var/tmp", PLACE_TREE, err) < 0)
                return -1;
        for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
                if (add(p, devices[i], PLACE_DEVICE, err) < 0)
                        return -1;
        return add_terminals(p, tty_slave, err);
}

int places_add(struct places *p, const char *path, enum place_kind kind, struct error *err)
{
        struct stat st;

        if (pc_stat(path, &st) < 0)
                return make_error(err, errno, "`%s`", path);
        return add(p, path, kind, err);
}

void places_remove(struct places *p, const char *path)
{
        for (size_t i = 0; i < p->n; i++)
                if (strcmp(p->v[i].path, path) == 0) {
                        free(p->v[i].path);
                        p->v[i] = p->v[--p->n];
                        return;
                }
}

bool places_absent(const char *path)
{
        struct stat st;

        return pc_lstat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* The object at `path` reached with no symlink on the way, by one look-up (a path checked
 * first and then resolved again could be swapped between): 0, or -1 with errno. */
static int stat_nofollow(const char *path, struct stat *st)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = sys_openat2(AT_FDCWD, path, &how), r;

        if (fd < 0)
                return -1;
        r = fstat(fd, st);
        close(fd);
        return r;
}

int places_add_hidden(struct places *p, const char *path, bool nofollow, struct error *err)
{
        char real[PATH_MAX];
        struct stat st;

        if (places_absent(path))
                return 0;
        if (nofollow) {
                if (stat_nofollow(path, &st) < 0)
                        return 0; /* a symlink on the way (ELOOP), or gone: nothing of ours */
                snprintf(real, sizeof(real), "%s", path);
        } else if (!pc_realpath(path, real) || pc_stat(real, &st) < 0) {
                if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP)
                        return 0;
                return make_error(err, errno, "`%s`, a hidden path", path);
        }
        if (is_hidden(p, &st))
                return 0;
        p->hidden = xrealloc(p->hidden, (p->n_hidden + 1) * sizeof(*p->hidden));
        p->hidden[p->n_hidden++] = (struct place){.path = xstrdup(real),
                                                  .dev = st.st_dev,
                                                  .ino = st.st_ino,
                                                  .dir = S_ISDIR(st.st_mode),
                                                  .kind = PLACE_HIDDEN};
        return 0;
}

void places_free(struct places *p)
{
        for (size_t i = 0; i < p->n; i++)
                free(p->v[i].path);
        p->n = 0;
        for (size_t i = 0; i < p->n_hidden; i++)
                free(p->hidden[i].path);
        free(p->hidden);
        p->hidden = NULL;
        p->n_hidden = 0;
}

/* The kind of place `st` is: PLACE_TREE, PLACE_RO, or -1 for neither. */
static int kind_of(const struct places *p, const struct stat *st)
{
        for (size_t i = 0; i < p->n; i++)
                if ((p->v[i].kind == PLACE_TREE || p->v[i].kind == PLACE_RO) &&
                    p->v[i].dev == st->st_dev && p->v[i].ino == st->st_ino)
                        return (int)p->v[i].kind;
        return -1;
}

/* What a walk up the tree decides at one directory: 1 or 0 to stop with that answer, -1 to go
 * on to its parent. */
typedef int (*judge_fn)(const struct places *p, const struct stat *st);

/* The nearest place decides: a carve-out inside a tree is outside. */
static int judge_writable(const struct places *p, const struct stat *st)
{
        switch (kind_of(p, st)) {
        case PLACE_TREE:
                return 1;
        case PLACE_RO:
                return 0;
        }
        return -1;
}

static bool is_hidden(const struct places *p, const struct stat *st)
{
        for (size_t i = 0; i < p->n_hidden; i++)
                if (p->hidden[i].dev == st->st_dev && p->hidden[i].ino == st->st_ino)
                        return true;
        return false;
}

static int judge_hidden(const struct places *p, const struct stat *st)
{
        return is_hidden(p, st) ? 1 : -1;
}

/* Walk up from the directory `dir` (its own fd, consumed) to the root, asking `judge` at each
 * directory (the directory itself included: the caller asks about its child). 0 when the
 * root is passed with no answer. */
static int dir_walk(const struct places *p, int dir, judge_fn judge)
{
        _cleanup_close_ int cur = dir;

        for (int depth = 0; depth < 4096; depth++) {
                struct stat st, up;
                int parent, r;

                if (fstat(cur, &st) < 0)
                        return -errno;
                if ((r = judge(p, &st)) >= 0)
                        return r;
                parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (parent < 0)
                        return -errno;
                if (fstat(parent, &up) < 0) {
                        close(parent);
                        return -errno;
                }
                close(cur);
                cur = parent;
                if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
                        return 0; /* the root: its ".." is itself */
        }
        return -ELOOP;
}

enum parent_of { PARENT_FOUND, PARENT_NONE, PARENT_ANONYMOUS };

/*
 * A non-directory has no "..": take the parent from the path the kernel prints for the fd,
 * and check that the parent still holds this very inode under that name (a rename in
 * between makes us answer PARENT_NONE, which both callers treat as "refuse"). A deleted file
 * (" (deleted)", no link left) is judged by the directory it was last in; the suffix has no
 * '/', so dirname is unchanged. PARENT_ANONYMOUS: pipe:[N], socket:[N] and other anonymous
 * inodes, which have no host path. Returns the kind, or -errno.
 */
static int parent_of(const struct places *p, int fd, const struct stat *st, int *parent)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        char link[32], path[PATH_MAX + 16];
        struct stat named;
        ssize_t n;
        char *slash;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n < 0)
                return -errno;
        if ((size_t)n >= sizeof(path) - 1)
                return PARENT_NONE; /* too long to judge */
        path[n] = '\0';
        if (path[0] != '/')
                return PARENT_ANONYMOUS;
        slash = strrchr(path, '/');
        *slash = '\0';
        if (p->root_fd > 0)
                how.resolve |= RESOLVE_IN_ROOT;
        *parent = sys_openat2(p->root_fd > 0 ? p->root_fd : AT_FDCWD, slash == path ? "/" : path,
                              &how);
        if (*parent < 0)
                return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? PARENT_NONE : -errno;
        if (st->st_nlink > 0 && (fstatat(*parent, slash + 1, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
                                 named.st_dev != st->st_dev || named.st_ino != st->st_ino)) {
                close(*parent);
                return PARENT_NONE;
        }
        return PARENT_FOUND;
}

static int file_within(const struct places *p, int fd, const struct stat *st)
{
        int parent = -1, r = parent_of(p, fd, st, &parent);

        switch (r) {
        case PARENT_FOUND:
                return dir_walk(p, parent, judge_writable);
        case PARENT_ANONYMOUS:
                /* A pipe or socket has no host file. Other anonymous inodes: refuse. */
                return S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) ? 1 : 0;
        case PARENT_NONE:
                return 0;
        }
        return r;
}

void places_follow(struct places *p, const char *path, int fd)
{
        char real[PATH_MAX];
        struct stat st;

        if (!pc_realpath(path, real) || fstat(fd, &st) < 0)
                return;
        for (size_t i = 0; i < p->n; i++)
                if (p->v[i].kind == PLACE_TREE && strcmp(p->v[i].path, real) == 0) {
                        p->v[i].dev = st.st_dev;
                        p->v[i].ino = st.st_ino;
                }
}

int places_contain(const struct places *p, int fd)
{
        struct stat st;
        int parent;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (kind_of(p, &st) == PLACE_RO)
                return 0; /* a carve-out itself: its mode stays */
        if (!S_ISDIR(st.st_mode))
                return file_within(p, fd, &st);
        /* Strictly beneath: start from the parent, so that /tmp itself is not inside /tmp.
         * ".." needs search permission on the directory itself, which a directory of mode 000
         * (chmod 0 then chmod back, as rmtree and Python's tests do) does not give its owner:
         * then find the parent by the directory's path, checked to still hold this inode. */
        parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (parent < 0 && errno == EACCES) {
                int r = parent_of(p, fd, &st, &parent);
                if (r < 0)
                        return r;
                if (r != PARENT_FOUND)
                        return 0; /* renamed meanwhile, or no path: refuse */
        } else if (parent < 0) {
                return -errno;
        }
        {
                struct stat up;
                if (fstat(parent, &up) < 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
                        close(parent);
                        return 0; /* the root directory */
                }
        }
        return dir_walk(p, parent, judge_writable);
}

bool places_is_hidden_place(const struct places *p, const struct stat *st)
{
        return p->n_hidden && is_hidden(p, st);
}

int places_hidden(const struct places *p, int fd)
{
        struct stat st;
        int parent = -1, r;

        if (p->n_hidden == 0)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (is_hidden(p, &st))
                return 1;
        if (S_ISDIR(st.st_mode)) {
                /* its own fd: dir_walk closes what it is given */
                parent = fcntl(fd, F_DUPFD_CLOEXEC, 0);
                return parent < 0 ? -errno : dir_walk(p, parent, judge_hidden);
        }
        r = parent_of(p, fd, &st, &parent);
        switch (r) {
        case PARENT_FOUND:
                return dir_walk(p, parent, judge_hidden);
        case PARENT_ANONYMOUS:
                return 0; /* no host path: nothing of the host's beneath a hidden place */
        case PARENT_NONE:
                return 1; /* renamed or too long to judge: refuse */
        }
        return r;
}

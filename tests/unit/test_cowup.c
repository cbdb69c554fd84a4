/*
 * Copy-up for an emulated copy-on-write mount (supervisor/vfs/cowup.h), on plain directories
 * under $TMPDIR: a lower tree, an upper tree, and what the upper holds after each call: the
 * lower's objects as they were (content, holes, mode, times, user.* xattrs, symlink targets,
 * types), parents made like the lower's, overlayfs's whiteouts and opaque directories obeyed,
 * no symlink of either tree followed, nothing half made at a name, crash leftovers swept.
 * Passes as root and as a user (the set-ID bits, the owner and device nodes differ there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/vfs/cowup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static char T[PATH_MAX];           /* the test's temporary directory */
static char D[2 * PATH_MAX];       /* one case's: T/NAME, with lower/ and upper/ */
static bool xattrs = true;         /* whether the file system takes user.* xattrs */
static int upper = -1, lower = -1; /* O_PATH fds of D/upper and D/lower */

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static bool root(void)
{
        return geteuid() == 0;
}

/* D/rel, in one of a few rotating buffers (several may be alive in one expression). */
static const char *P(const char *rel)
{
        static char bufs[4][3 * PATH_MAX];
        static int i;
        char *b = bufs[i++ % 4];

        snprintf(b, sizeof(bufs[0]), "%s/%s", D, rel);
        return b;
}

/* A case's two trees, made by the shell script `script` run in D (may be NULL). */
static void trees(const char *name, const char *script)
{
        if (upper >= 0)
                close(upper);
        if (lower >= 0)
                close(lower);
        snprintf(D, sizeof(D), "%s/%s", T, name);
        sh("mkdir -p '%s/lower' '%s/upper'", D, D);
        if (script)
                sh("cd '%s' && %s", D, script);
        upper = open(P("upper"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        lower = open(P("lower"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(upper >= 0 && lower >= 0);
}

static struct stat lst(const char *rel)
{
        struct stat st;

        if (lstat(P(rel), &st) < 0)
                fail_msg("lstat %s: %s", rel, strerror(errno));
        return st;
}

static bool exists(const char *rel)
{
        struct stat st;

        return lstat(P(rel), &st) == 0;
}

static bool same_mtime(const struct stat *a, const struct stat *b)
{
        return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The fd is an O_PATH one of the object at D/rel. */
static void is_fd_of(int fd, const char *rel)
{
        struct stat a, b = lst(rel);

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &a), 0);
        assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
        assert_true(fcntl(fd, F_GETFL) & O_PATH);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
}

/* The user.tag xattr of D/rel ("" when it has none). */
static const char *tag(const char *rel)
{
        static char v[64];
        ssize_t n = lgetxattr(P(rel), "user.tag", v, sizeof(v) - 1);

        v[n < 0 ? 0 : n] = '\0';
        return v;
}

static void set_tag(const char *rel, const char *v)
{
        if (xattrs && setxattr(P(rel), "user.tag", v, strlen(v), 0) < 0)
                fail_msg("setxattr %s: %s", rel, strerror(errno));
}

/* A unix socket bound at D/rel (its inode stays when the socket is closed). */
static void make_socket(const char *rel)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(s >= 0);
        assert_true(strlen(P(rel)) < sizeof(sa.sun_path));
        strcpy(sa.sun_path, P(rel));
        assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        close(s);
}

/* No temporary of a copy-up anywhere in D/upper. */
static void no_tmp(void)
{
        sh("test -z \"$(find '%s' -name '.stockade-cowup.*')\"", P("upper"));
}

/* ---- whiteouts and opaque directories --------------------------------------------------- */

static void whiteout_opaque(void **state)
{
        struct stat st = {.st_mode = S_IFCHR | 0600, .st_rdev = makedev(1, 3)};
        int d;

        (void)state;
        trees("wo", "mkdir upper/d && touch upper/f");
        assert_false(cowup_is_whiteout(&st)); /* /dev/null is no whiteout */
        st.st_rdev = makedev(0, 0);
        assert_true(cowup_is_whiteout(&st));
        st.st_mode = S_IFBLK;
        assert_false(cowup_is_whiteout(&st));
        assert_int_equal(cowup_whiteout(upper, "gone"), 0);
        st = lst("upper/gone");
        assert_true(cowup_is_whiteout(&st));
        assert_int_equal(cowup_whiteout(upper, "gone"), -EEXIST);
        st = lst("upper/f");
        assert_false(cowup_is_whiteout(&st));

        d = open(P("upper/d"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_false(cowup_is_opaque(d));
        if (xattrs) {
                assert_int_equal(cowup_set_opaque(d), 0); /* an O_PATH fd */
                assert_true(cowup_is_opaque(d));
                assert_true(cowup_is_opaque(upper) == false);
        }
        close(d);
        d = open(P("upper/f"), O_PATH | O_CLOEXEC);
        assert_int_equal(cowup_set_opaque(d), -ENOTDIR);
        close(d);
}

/* The answer's memory (cowup_is_opaque_stat): kept only for a ctime a few seconds old, found
 * again by (device, inode, ctime), so that a mark set or removed by anyone (a new ctime) or by
 * cowup_set_opaque (which forgets all) is seen at once. */
static void opaque_remembered(void **state)
{
        struct stat old, now;
        int d, e;

        (void)state;
        if (!xattrs)
                skip();
        trees("or", "mkdir upper/d upper/e");
        d = open(P("upper/d"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        e = open(P("upper/e"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(d >= 0 && e >= 0);
        /* fresh: read each time, never kept (a change in the same tick would keep the ctime) */
        assert_int_equal(fstat(d, &old), 0);
        assert_false(cowup_is_opaque_stat(d, &old));
        assert_int_equal(setxattr(P("upper/d"), "user.overlay.opaque", "y", 1, 0), 0);
        assert_true(cowup_is_opaque_stat(d, &old)); /* the same ctime, but not kept */
        assert_int_equal(removexattr(P("upper/d"), "user.overlay.opaque"), 0);

        sleep(3); /* OPAQUE_SETTLE */
        assert_int_equal(fstat(d, &old), 0);
        assert_false(cowup_is_opaque_stat(d, &old)); /* read, and kept */
        /* marked from outside (as prune does): a new ctime, so read again */
        assert_int_equal(setxattr(P("upper/d"), "user.overlay.opaque", "y", 1, 0), 0);
        assert_int_equal(fstat(d, &now), 0);
        assert_true(cowup_is_opaque_stat(d, &now));
        assert_false(cowup_is_opaque_stat(d, &old)); /* the key is the ctime that was read */
        /* removed: the same */
        assert_int_equal(removexattr(P("upper/d"), "user.overlay.opaque"), 0);
        assert_int_equal(fstat(d, &now), 0);
        assert_false(cowup_is_opaque_stat(d, &now));

        /* our own mark forgets every answer, even one for the ctime before it */
        assert_int_equal(fstat(e, &old), 0);
        assert_false(cowup_is_opaque_stat(e, &old));
        assert_int_equal(cowup_set_opaque(e), 0);
        assert_true(cowup_is_opaque_stat(e, &old));
        close(d);
        close(e);
}

/* ---- directories ------------------------------------------------------------------------ */

static void dir_parents(void **state)
{
        struct stat a, b, r;
        int fd;

        (void)state;
        trees("dp", "mkdir -p lower/a/b/c && chmod 750 lower/a && chmod 711 lower/a/b && "
                    "chmod 1777 lower/a/b/c && "
                    "touch -d @1500000000.25 lower/a/b/c lower/a/b lower/a");
        set_tag("lower/a/b", "bee");
        if (root())
                sh("chown 1234:4321 '%s'", P("lower/a"));
        fd = cowup_dir(upper, lower, "a/b/c");
        is_fd_of(fd, "upper/a/b/c");
        for (const char *p = "a\0a/b\0a/b/c\0"; *p; p += strlen(p) + 1) {
                char l[64], u[64];

                snprintf(l, sizeof(l), "lower/%s", p);
                snprintf(u, sizeof(u), "upper/%s", p);
                a = lst(l);
                b = lst(u);
                assert_true(S_ISDIR(b.st_mode));
                assert_int_equal(a.st_mode & 07777, b.st_mode & 07777);
                assert_true(same_mtime(&a, &b));
                if (root())
                        assert_true(a.st_uid == b.st_uid && a.st_gid == b.st_gid);
        }
        if (xattrs)
                assert_string_equal(tag("upper/a/b"), "bee");
        no_tmp();

        /* The root itself; a directory the upper has is used as it is. */
        fd = cowup_dir(upper, lower, "");
        is_fd_of(fd, "upper");
        sh("chmod 700 '%s' && touch -d @1400000000 '%s'", P("upper/a"), P("upper/a"));
        r = lst("upper/a");
        fd = cowup_dir(upper, lower, "a/b");
        is_fd_of(fd, "upper/a/b");
        a = lst("upper/a");
        assert_int_equal(a.st_mode & 07777, 0700);
        assert_true(same_mtime(&a, &r));
}

/* Paths the merged view has no directory at, and paths that are not a relative path. */
static void dir_errors(void **state)
{
        int d;

        (void)state;
        trees("de", "mkdir -p lower/d/sub lower/w/sub lower/o/sub upper/o && "
                    "touch lower/file lower/x && mkdir upper/x upper/t && touch upper/t/f");
        assert_int_equal(cowup_whiteout(upper, "w"), 0);
        assert_int_equal(cowup_dir(upper, lower, "w"), -ENOENT);
        assert_int_equal(cowup_dir(upper, lower, "w/sub"), -ENOENT);
        assert_int_equal(cowup_dir(upper, lower, "nope"), -ENOENT);
        assert_int_equal(cowup_dir(upper, lower, "d/nope/deeper"), -ENOENT);
        assert_false(exists("upper/d")); /* nothing made on the way to an error */
        assert_int_equal(cowup_dir(upper, lower, "file"), -ENOTDIR);
        assert_int_equal(cowup_dir(upper, lower, "file/sub"), -ENOTDIR);
        assert_int_equal(cowup_dir(upper, lower, "t/f"), -ENOTDIR); /* the upper's file */
        /* An upper directory over a lower file hides it: x is the upper's, and empty. */
        d = cowup_dir(upper, lower, "x");
        is_fd_of(d, "upper/x");
        assert_int_equal(cowup_dir(upper, lower, "x/sub"), -ENOENT);
        if (xattrs) { /* an opaque upper directory hides the lower's below it */
                d = open(P("upper/o"), O_PATH | O_DIRECTORY | O_CLOEXEC);
                assert_int_equal(cowup_set_opaque(d), 0);
                close(d);
                assert_int_equal(cowup_dir(upper, lower, "o/sub"), -ENOENT);
                assert_false(exists("upper/o/sub"));
        }
        for (const char *p = "/d\0d/\0d//sub\0./d\0d/.\0d/../d\0..\0"; *p; p += strlen(p) + 1)
                assert_int_equal(cowup_dir(upper, lower, p), -EINVAL);
        assert_false(exists("upper/d"));
}

/* A symlink where a directory should be, planted in either tree: never followed. */
static void symlinks_never_followed(void **state)
{
        char script[4 * PATH_MAX];

        (void)state;
        snprintf(script, sizeof(script),
                 "mkdir -p sentinel lower/a/b lower/s lower/m/n upper/m && touch lower/a/b/f && "
                 "ln -s '%s/%s/sentinel' upper/a && ln -s '%s/%s/sentinel' upper/m/n && "
                 "ln -s '%s/%s/sentinel' lower/t && mkdir -p sentinel2 && touch sentinel2/f",
                 T, "sy", T, "sy", T, "sy");
        trees("sy", script);
        assert_int_equal(cowup_dir(upper, lower, "a"), -ENOTDIR);
        assert_int_equal(cowup_dir(upper, lower, "a/b"), -ENOTDIR);
        assert_int_equal(cowup_object(upper, lower, "a/b/f"), -ENOTDIR);
        assert_int_equal(cowup_dir(upper, lower, "m/n"), -ENOTDIR);
        assert_int_equal(cowup_object(upper, lower, "m/n/x"), -ENOTDIR);
        assert_int_equal(cowup_merged_empty(upper, lower, "a"), -ENOTDIR);
        /* the lower's: a symlink to a directory is no directory of the merged view */
        assert_int_equal(cowup_dir(upper, lower, "t"), -ENOTDIR);
        assert_int_equal(cowup_object(upper, lower, "t/f"), -ENOTDIR);
        assert_false(exists("upper/t"));
        sh("test -z \"$(ls -A '%s')\"", P("sentinel"));
}

/* ---- objects ---------------------------------------------------------------------------- */

static void copy_file(void **state)
{
        struct stat a, b, pu, ru;
        int fd;

        (void)state;
        trees("cf", "mkdir -p lower/p && head -c 300000 /dev/urandom >lower/p/f && "
                    "chmod 4751 lower/p/f && touch -d @1600000000.123456789 lower/p/f && "
                    "printf ro >lower/p/ro && chmod 444 lower/p/ro && "
                    "touch -d @1500000000 lower/p");
        set_tag("lower/p/f", "kept");
        if (root()) /* another user's file: root's copy keeps its owner, and so its set-ID */
                sh("cd '%s' && chown 1234:4321 p/f && chmod 4751 p/f && "
                   "touch -d @1600000000.123456789 p/f",
                   P("lower"));
        ru = lst("upper");
        fd = cowup_object(upper, lower, "p/f");
        is_fd_of(fd, "upper/p/f");
        sh("cmp '%s' '%s'", P("lower/p/f"), P("upper/p/f"));
        a = lst("lower/p/f");
        b = lst("upper/p/f");
        assert_true(S_ISREG(b.st_mode));
        /* set-ID bits only as root: a user's copy is not the lower owner's file */
        assert_int_equal(b.st_mode & 07777, root() ? 04751 : 0751);
        assert_true(same_mtime(&a, &b));
        if (root())
                assert_true(b.st_uid == 1234 && b.st_gid == 4321);
        if (xattrs)
                assert_string_equal(tag("upper/p/f"), "kept");
        /* the parents' times stay the lower's: the copy-up changed nothing one can see */
        a = lst("lower/p");
        pu = lst("upper/p");
        assert_true(same_mtime(&a, &pu));
        b = lst("upper");
        assert_true(same_mtime(&ru, &b));
        fd = cowup_object(upper, lower, "p/ro"); /* not writable: copied all the same */
        is_fd_of(fd, "upper/p/ro");
        assert_int_equal(lst("upper/p/ro").st_mode & 07777, 0444);
        pu = lst("upper/p");
        assert_true(same_mtime(&a, &pu));
        no_tmp();
}

static void copy_others(void **state)
{
        char target[64] = "";
        struct stat a, b;
        int dev, fd;

        (void)state;
        trees("co", "mkdir -p lower/q && ln -s '../some where' lower/q/ln && "
                    "mkfifo -m 620 lower/q/fifo && mkdir -m 705 lower/q/dir && "
                    "touch -h -d @1300000000.5 lower/q/ln lower/q/fifo lower/q/dir");
        make_socket("lower/q/sock");
        fd = cowup_object(upper, lower, "q/ln");
        is_fd_of(fd, "upper/q/ln");
        assert_true(S_ISLNK(lst("upper/q/ln").st_mode));
        assert_true(readlink(P("upper/q/ln"), target, sizeof(target) - 1) > 0);
        assert_string_equal(target, "../some where");
        a = lst("lower/q/ln");
        b = lst("upper/q/ln");
        assert_true(same_mtime(&a, &b));

        fd = cowup_object(upper, lower, "q/fifo");
        is_fd_of(fd, "upper/q/fifo");
        a = lst("lower/q/fifo");
        b = lst("upper/q/fifo");
        assert_true(S_ISFIFO(b.st_mode));
        assert_int_equal(b.st_mode & 07777, 0620);
        assert_true(same_mtime(&a, &b));

        fd = cowup_object(upper, lower, "q/sock");
        is_fd_of(fd, "upper/q/sock");
        assert_true(S_ISSOCK(lst("upper/q/sock").st_mode));

        fd = cowup_object(upper, lower, "q/dir");
        is_fd_of(fd, "upper/q/dir");
        a = lst("lower/q/dir");
        b = lst("upper/q/dir");
        assert_true(S_ISDIR(b.st_mode) && (b.st_mode & 07777) == 0705 && same_mtime(&a, &b));

        /* A device node: root's only. /dev is a lower that has one. */
        dev = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dev >= 0);
        fd = cowup_object(upper, dev, "null");
        if (root()) {
                is_fd_of(fd, "upper/null");
                b = lst("upper/null");
                assert_true(S_ISCHR(b.st_mode) && b.st_rdev == makedev(1, 3));
        } else {
                assert_int_equal(fd, -EPERM);
                assert_false(exists("upper/null"));
        }
        close(dev);
        no_tmp();
}

static void sparse_stays_sparse(void **state)
{
        struct stat b;
        int fd;

        (void)state;
        trees("sp", "printf head >lower/img && truncate -s 64M lower/img && "
                    "printf tail >>lower/img");
        fd = cowup_object(upper, lower, "img");
        is_fd_of(fd, "upper/img");
        sh("cmp '%s' '%s'", P("lower/img"), P("upper/img"));
        b = lst("upper/img");
        assert_int_equal(b.st_size, 64 * 1024 * 1024 + 4);
        assert_true(b.st_blocks * 512 < b.st_size / 16); /* the holes were not written */
}

/* What the upper has is the answer: no second copy, a whiteout is no object. */
static void present_not_recopied(void **state)
{
        struct stat a, b;
        int fd;

        (void)state;
        trees("pr", "mkdir lower/d && printf one >lower/d/f && printf x >lower/w");
        fd = cowup_object(upper, lower, "d/f");
        is_fd_of(fd, "upper/d/f");
        a = lst("upper/d/f");
        sh("printf two >'%s'", P("lower/d/f"));
        fd = cowup_object(upper, lower, "d/f");
        is_fd_of(fd, "upper/d/f");
        b = lst("upper/d/f");
        assert_true(a.st_ino == b.st_ino);
        sh("test \"$(cat '%s')\" = one", P("upper/d/f"));
        /* a symlink the upper has at the name is returned, not followed */
        sh("ln -s /etc/passwd '%s'", P("upper/d/l"));
        fd = cowup_object(upper, lower, "d/l");
        is_fd_of(fd, "upper/d/l");

        assert_int_equal(cowup_whiteout(upper, "w"), 0);
        assert_int_equal(cowup_object(upper, lower, "w"), -ENOENT);
        assert_int_equal(cowup_object(upper, lower, "nope/deeper"), -ENOENT);
        assert_int_equal(cowup_object(upper, lower, "d/nope"), -ENOENT);
        sh("mkdir '%s'", P("lower/e"));
        assert_int_equal(cowup_object(upper, lower, "e/nope"), -ENOENT);
        assert_false(exists("upper/e")); /* nothing made for an object no tree has */
        assert_int_equal(cowup_object(upper, lower, ""), -EINVAL);
        assert_int_equal(cowup_object(upper, lower, "d/../d/f"), -EINVAL);
}

/* A lower directory its owner may not write (0555) holding a file it may: the copy-up must
 * still make the file in the upper's copy, whose mode stays the lower's. */
static void read_only_parent(void **state)
{
        struct stat a, b;
        int fd;

        (void)state;
        trees("ro", "mkdir -p lower/ro/in && printf w >lower/ro/f && chmod 666 lower/ro/f && "
                    "chmod 555 lower/ro/in lower/ro");
        fd = cowup_object(upper, lower, "ro/f");
        is_fd_of(fd, "upper/ro/f");
        fd = cowup_dir(upper, lower, "ro/in");
        is_fd_of(fd, "upper/ro/in");
        a = lst("lower/ro");
        b = lst("upper/ro");
        assert_int_equal(b.st_mode & 07777, 0555);
        assert_true(same_mtime(&a, &b));
        assert_int_equal(lst("upper/ro/in").st_mode & 07777, 0555);
        no_tmp();
        sh("chmod -R u+w '%s' '%s'", P("lower"), P("upper"));
}

/* A copy that fails leaves nothing at the name and no temporary: here the file size limit
 * (EFBIG), as ENOSPC or EDQUOT would stop it. */
static void failed_copy_leaves_nothing(void **state)
{
        struct rlimit old, small = {.rlim_cur = 4096};
        int r;

        (void)state;
        trees("fa", "mkdir lower/d && head -c 100000 /dev/urandom >lower/d/big");
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        small.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
        r = cowup_object(upper, lower, "d/big");
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_DFL);
        assert_int_equal(r, -EFBIG);
        assert_false(exists("upper/d/big"));
        no_tmp();
}

struct racer {
        int fd;
        pthread_barrier_t *go;
};

static void *race(void *arg)
{
        struct racer *r = arg;

        pthread_barrier_wait(r->go);
        r->fd = cowup_object(upper, lower, "c/d/big");
        return NULL;
}

/* Threads copying one object up at once: one copy wins, every thread gets it. */
static void concurrent_copies(void **state)
{
        struct racer rs[8];
        pthread_t th[8];
        pthread_barrier_t go;
        struct stat w, s;

        (void)state;
        trees("cc", "mkdir -p lower/c/d && head -c 2000000 /dev/urandom >lower/c/d/big");
        pthread_barrier_init(&go, NULL, 8);
        for (int i = 0; i < 8; i++) {
                rs[i] = (struct racer){-1, &go};
                assert_int_equal(pthread_create(&th[i], NULL, race, &rs[i]), 0);
        }
        for (int i = 0; i < 8; i++)
                pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        w = lst("upper/c/d/big");
        for (int i = 0; i < 8; i++) {
                assert_true(rs[i].fd >= 0);
                assert_int_equal(fstat(rs[i].fd, &s), 0);
                assert_true(s.st_ino == w.st_ino);
                close(rs[i].fd);
        }
        sh("cmp '%s' '%s'", P("lower/c/d/big"), P("upper/c/d/big"));
        no_tmp();
}

/* ---- the sweep -------------------------------------------------------------------------- */

static void sweep_leftovers(void **state)
{
        char script[4 * PATH_MAX];

        (void)state;
        snprintf(script, sizeof(script),
                 "mkdir -p upper/a/b/c upper/ro outside && touch upper/.stockade-cowup.1.1 "
                 "upper/a/b/c/.stockade-cowup.2.2 upper/ro/.stockade-cowup.5.5 "
                 "outside/.stockade-cowup.3.3 upper/keep upper/.stockade-cowupx "
                 "upper/a/.stockade-move.1.1 && mkfifo upper/a/.stockade-cowup.4.4 && "
                 "mkdir upper/a/b/.stockade-cowup.6.6 && ln -s '%s/sw/outside' upper/a/link && "
                 "ln -s '%s/sw/outside' upper/.stockade-cowup.7.7 && chmod 555 upper/ro",
                 T, T);
        trees("sw", script);
        assert_int_equal(cowup_sweep(upper), 6);
        no_tmp();
        assert_true(exists("outside/.stockade-cowup.3.3")); /* through a symlink: not reached */
        assert_true(exists("upper/keep") && exists("upper/.stockade-cowupx") &&
                    exists("upper/a/.stockade-move.1.1") && exists("upper/a/link"));
        assert_int_equal(lst("upper/ro").st_mode & 07777, 0555);
        assert_int_equal(cowup_sweep(upper), 0);
        sh("chmod 755 '%s'", P("upper/ro"));
}

/* ---- merged emptiness ------------------------------------------------------------------- */

static void merged_empty(void **state)
{
        int d;

        (void)state;
        trees("me", "mkdir -p lower/all/x lower/some lower/op lower/empty lower/full lower/f2 "
                    "upper/all upper/some upper/op upper/new upper/tmp upper/withfile upper/f2 "
                    "lower/gone && touch lower/all/a lower/some/a lower/some/b lower/op/a "
                    "lower/full/a lower/file upper/withfile/a upper/tmp/.stockade-cowup.1.1");
        assert_int_equal(cowup_whiteout(upper, "gone"), 0);
        d = open(P("upper/all"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(cowup_whiteout(d, "a"), 0);
        assert_int_equal(cowup_whiteout(d, "x"), 0);
        close(d);
        d = open(P("upper/some"), O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(cowup_whiteout(d, "a"), 0);
        close(d);
        assert_int_equal(cowup_merged_empty(upper, lower, "all"), 1);
        assert_int_equal(cowup_merged_empty(upper, lower, "some"), 0);
        assert_int_equal(cowup_merged_empty(upper, lower, "empty"), 1); /* the lower's only */
        assert_int_equal(cowup_merged_empty(upper, lower, "full"), 0);
        assert_int_equal(cowup_merged_empty(upper, lower, "f2"), 1);  /* both, both empty */
        assert_int_equal(cowup_merged_empty(upper, lower, "new"), 1); /* the upper's only */
        assert_int_equal(cowup_merged_empty(upper, lower, "tmp"), 1); /* a copy-up in progress */
        assert_int_equal(cowup_merged_empty(upper, lower, "withfile"), 0);
        assert_int_equal(cowup_merged_empty(upper, lower, "gone"), -ENOENT);
        assert_int_equal(cowup_merged_empty(upper, lower, "nope"), -ENOENT);
        assert_int_equal(cowup_merged_empty(upper, lower, "file"), -ENOTDIR);
        assert_int_equal(cowup_merged_empty(upper, lower, ""), 0);
        assert_int_equal(cowup_merged_empty(upper, lower, "op"), 0);
        if (xattrs) {
                d = open(P("upper/op"), O_PATH | O_DIRECTORY | O_CLOEXEC);
                assert_int_equal(cowup_set_opaque(d), 0);
                close(d);
                assert_int_equal(cowup_merged_empty(upper, lower, "op"), 1);
        } else {
                printf("# opaque directories not checked: no user.* xattrs on %s\n", T);
        }
        if (root()) { /* a character device that is no whiteout is an entry */
                sh("mkdir '%s' && mknod '%s' c 1 3", P("upper/dev"), P("upper/dev/null"));
                assert_int_equal(cowup_merged_empty(upper, lower, "dev"), 0);
        }
        assert_false(exists("upper/empty") || exists("upper/full")); /* nothing made */
}

static int setup(void **state)
{
        const char *t = getenv("TMPDIR");
        char p[PATH_MAX + 8];

        (void)state;
        snprintf(T, sizeof(T), "%s/cowup-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(T))
                return -1;
        snprintf(p, sizeof(p), "%s/probe", T);
        if (mkdir(p, 0700) < 0)
                return -1;
        if (setxattr(p, "user.probe", "1", 1, 0) < 0) {
                xattrs = false; /* tmpfs before Linux 6.6, some network file systems */
                printf("# user.* xattrs not checked: %s refuses them (%s)\n", T, strerror(errno));
        }
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        if (upper >= 0)
                close(upper);
        if (lower >= 0)
                close(lower);
        sh("chmod -R u+rwx '%s'; rm -rf '%s'", T, T);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(whiteout_opaque),     cmocka_unit_test(dir_parents),
                cmocka_unit_test(dir_errors),          cmocka_unit_test(symlinks_never_followed),
                cmocka_unit_test(copy_file),           cmocka_unit_test(copy_others),
                cmocka_unit_test(sparse_stays_sparse), cmocka_unit_test(present_not_recopied),
                cmocka_unit_test(read_only_parent),    cmocka_unit_test(failed_copy_leaves_nothing),
                cmocka_unit_test(concurrent_copies),   cmocka_unit_test(sweep_leftovers),
                cmocka_unit_test(merged_empty),        cmocka_unit_test(opaque_remembered),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

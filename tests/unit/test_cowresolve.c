/*
 * The view's walk on a copy-on-write mount the supervisor merges (vfs/resolve.h, mount.h
 * `emulated`): an upper directory in overlayfs's format over a lower one, under $TMPDIR.
 * Which layer each name comes from, whiteouts and opaque directories hiding the lower,
 * symlinks and ".." across the layers, and what VFS_CREATE says of a name's parent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/error.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowup.h"
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static char T[PATH_MAX];

static void path_of(char *buf, const char *rel)
{
        assert_true(strlen(T) + 1 + strlen(rel) < PATH_MAX);
        strcat(strcat(strcpy(buf, T), "/"), rel);
}

static void mk_dir(const char *rel)
{
        char p[PATH_MAX];

        path_of(p, rel);
        assert_int_equal(mkdir(p, 0755), 0);
}

static void mk_file(const char *rel, const char *text)
{
        char p[PATH_MAX];
        FILE *f;

        path_of(p, rel);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void mk_link(const char *target, const char *rel)
{
        char p[PATH_MAX];

        path_of(p, rel);
        assert_int_equal(symlink(target, p), 0);
}

/* Whiteouts need kernel 5.8 unprivileged; the opaque mark a file system with user xattrs. */
static bool marks_ok = true;

static void mk_whiteout(const char *rel)
{
        char p[PATH_MAX];

        path_of(p, rel);
        if (mknod(p, S_IFCHR, makedev(0, 0)) < 0)
                marks_ok = false;
}

static void mk_opaque(const char *rel)
{
        char p[PATH_MAX];

        path_of(p, rel);
        int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || cowup_set_opaque(fd) < 0)
                marks_ok = false;
        if (fd >= 0)
                close(fd);
}

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char real[PATH_MAX];

        (void)state;
        snprintf(T, sizeof(T), "%s/cowresolve.XXXXXX", tmp);
        if (!mkdtemp(T) || !realpath(T, real))
                return -1;
        snprintf(T, sizeof(T), "%s", real);
        mk_dir("lower");
        mk_dir("upper");
        mk_file("lower/a", "la");
        mk_dir("lower/d");
        mk_file("lower/d/x", "lx");
        mk_file("lower/d/y", "ly");
        mk_file("lower/gone", "lg");
        mk_dir("lower/odir");
        mk_file("lower/odir/old", "lo");
        mk_dir("lower/ldir");
        mk_dir("lower/ldir/sub");
        mk_link("d/x", "lower/link");
        mk_file("upper/a", "ua");
        mk_dir("upper/d");
        mk_file("upper/d/z", "uz");
        mk_whiteout("upper/d/y");
        mk_whiteout("upper/gone");
        mk_dir("upper/odir");
        mk_opaque("upper/odir");
        mk_file("upper/odir/new", "un");
        mk_dir("upper/newdir");
        mk_file("upper/newdir/n", "nn");
        mk_link("odir/new", "upper/ulink");
        mk_link("../a", "upper/newdir/up");
        mk_dir("s");
        mk_link("/s/w/a", "upper/abs");
        mk_link("../../s", "upper/out");
        return 0;
}

static int teardown(void **state)
{
        char cmd[PATH_MAX + 16];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
        return system(cmd) == 0 ? 0 : -1;
}

static void make_view(struct vfs_view *v)
{
        char h[PATH_MAX];
        struct vfs_mount m;
        struct error err = {0};

        path_of(h, "lower");
        assert_int_equal(vfs_mount_init(&m, VFS_COW, "/w", h, "test"), 0);
        vfs_view_add(v, &m);
        assert_int_equal(vfs_view_open(v, NULL, &err), 0);
        path_of(h, "upper");
        v->mounts[0].upper_fd = open(h, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(v->mounts[0].upper_fd >= 0);
        v->mounts[0].emulated = true;
}

static void free_view(struct vfs_view *v)
{
        close(v->mounts[0].upper_fd);
        vfs_view_free(v);
}

static const char *host_of(int fd, char *buf)
{
        char proc[48];
        ssize_t n;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, buf, PATH_MAX - 1);
        buf[n < 0 ? 0 : n] = '\0';
        return strncmp(buf, T, strlen(T)) == 0 ? buf + strlen(T) + 1 : buf;
}

struct ccase {
        const char *path;
        unsigned flags;
        int err;
        const char *sandbox; /* the canonical sandbox path */
        const char *host;    /* beneath T: which layer's object */
        bool upper;
};

static void check_cases(const struct vfs_view *v, const struct ccase *cases, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const struct ccase *c = &cases[i];
                struct vfs_result res;
                char host[PATH_MAX];
                int r = vfs_resolve(v, "/", c->path, c->flags, &res);

                if (r != c->err)
                        fail_msg("%s: %s, want %s", c->path, strerror(-r), strerror(-c->err));
                if (r == 0) {
                        if (strcmp(res.path, c->sandbox) != 0)
                                fail_msg("%s: path %s, want %s", c->path, res.path, c->sandbox);
                        if (strcmp(host_of(res.fd, host), c->host) != 0)
                                fail_msg("%s: host %s, want %s", c->path, host, c->host);
                        if (res.upper != c->upper)
                                fail_msg("%s: upper %d, want %d", c->path, res.upper, c->upper);
                }
                vfs_result_release(&res);
        }
}

static void layers(void **state)
{
        static const struct ccase cases[] = {
                {"/w", 0, 0, "/w", "upper", true},
                {"/w/a", 0, 0, "/w/a", "upper/a", true},
                {"/w/d", 0, 0, "/w/d", "upper/d", true},
                {"/w/d/x", 0, 0, "/w/d/x", "lower/d/x", false},
                {"/w/d/z", 0, 0, "/w/d/z", "upper/d/z", true},
                {"/w/d/y", 0, -ENOENT, NULL, NULL, false},
                {"/w/gone", 0, -ENOENT, NULL, NULL, false},
                {"/w/gone/x", 0, -ENOENT, NULL, NULL, false},
                {"/w/odir/old", 0, -ENOENT, NULL, NULL, false},
                {"/w/odir/new", 0, 0, "/w/odir/new", "upper/odir/new", true},
                {"/w/ldir/sub", 0, 0, "/w/ldir/sub", "lower/ldir/sub", false},
                {"/w/newdir/n", 0, 0, "/w/newdir/n", "upper/newdir/n", true},
                /* symlinks of either layer, followed in the merge */
                {"/w/link", VFS_FOLLOW, 0, "/w/d/x", "lower/d/x", false},
                {"/w/link", 0, 0, "/w/link", "lower/link", false},
                {"/w/ulink", VFS_FOLLOW, 0, "/w/odir/new", "upper/odir/new", true},
                {"/w/newdir/up", VFS_FOLLOW, 0, "/w/a", "upper/a", true},
                /* ".." is the merge's, whichever layer the directory came from */
                {"/w/newdir/../d/x", 0, 0, "/w/d/x", "lower/d/x", false},
                {"/w/ldir/sub/../../a", 0, 0, "/w/a", "upper/a", true},
                {"/w/d/z/..", 0, -ENOTDIR, NULL, NULL, false},
        };
        struct vfs_view v = {0};

        (void)state;
        make_view(&v);
        check_cases(&v, cases, ARRAY_SIZE(cases));
        free_view(&v);
}

struct pcase {
        const char *path;
        enum vfs_kind kind;
        const char *parent; /* beneath T */
        bool parent_upper;
        const char *parent_lower; /* beneath T, or NULL for none */
};

/* VFS_CREATE: where a name would be made, and what the lower has beside it. */
static void parents(void **state)
{
        static const struct pcase cases[] = {
                {"/w/d/y", VFS_ABSENT, "upper/d", true, "lower/d"},
                {"/w/d/new", VFS_ABSENT, "upper/d", true, "lower/d"},
                {"/w/d/x", VFS_HOST, "upper/d", true, "lower/d"},
                {"/w/ldir/q", VFS_ABSENT, "lower/ldir", false, "lower/ldir"},
                {"/w/odir/old", VFS_ABSENT, "upper/odir", true, NULL},
                {"/w/newdir/m", VFS_ABSENT, "upper/newdir", true, NULL},
                {"/w/gone", VFS_ABSENT, "upper", true, "lower"},
        };
        struct vfs_view v = {0};

        (void)state;
        make_view(&v);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct pcase *c = &cases[i];
                struct vfs_result res;
                char host[PATH_MAX];

                assert_int_equal(vfs_resolve(&v, "/", c->path, VFS_CREATE, &res), 0);
                if (res.kind != c->kind)
                        fail_msg("%s: kind %d, want %d", c->path, res.kind, c->kind);
                if (strcmp(host_of(res.parent_fd, host), c->parent) != 0)
                        fail_msg("%s: parent %s, want %s", c->path, host, c->parent);
                if (res.parent_upper != c->parent_upper)
                        fail_msg("%s: parent_upper %d", c->path, res.parent_upper);
                if (!c->parent_lower && res.parent_lower_fd != -1)
                        fail_msg("%s: a lower parent where the upper hides it", c->path);
                if (c->parent_lower &&
                    (res.parent_lower_fd < 0 ||
                     strcmp(host_of(res.parent_lower_fd, host), c->parent_lower) != 0))
                        fail_msg("%s: lower parent %s, want %s", c->path,
                                 res.parent_lower_fd < 0 ? "none" : host, c->parent_lower);
                vfs_result_release(&res);
        }
        free_view(&v);
}

/* The lower and upper of setup as a merged mount at /s/w beneath a read-only root of T (which
 * has a directory s), with `hide` hidden as well when not NULL. */
static void make_deep_view(struct vfs_view *v, const char *hide)
{
        char h[PATH_MAX];
        struct vfs_mount m;
        struct error err = {0};
        size_t k;

        assert_int_equal(vfs_mount_init(&m, VFS_RO, "/", T, "test"), 0);
        vfs_view_add(v, &m);
        path_of(h, "lower");
        assert_int_equal(vfs_mount_init(&m, VFS_COW, "/s/w", h, "test"), 0);
        vfs_view_add(v, &m);
        if (hide) {
                assert_int_equal(vfs_mount_init(&m, VFS_HIDDEN, hide, NULL, "test"), 0);
                vfs_view_add(v, &m);
        }
        assert_int_equal(vfs_view_open(v, NULL, &err), 0);
        for (k = 0; k < v->n_mounts && strcmp(v->mounts[k].sandbox, "/s/w") != 0; k++)
                ;
        assert_true(k < v->n_mounts);
        path_of(h, "upper");
        v->mounts[k].upper_fd = open(h, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(v->mounts[k].upper_fd >= 0);
        v->mounts[k].emulated = true;
}

static void free_deep_view(struct vfs_view *v)
{
        for (size_t k = 0; k < v->n_mounts; k++)
                if (v->mounts[k].emulated)
                        close(v->mounts[k].upper_fd);
        vfs_view_free(v);
}

/*
 * A walk beneath a merged mount begins at the mount's root (resolve.c, begin_at_mount): the
 * answers are those of the walk from the sandbox root, also where the path (a "..", an
 * absolute symlink, a relative one leading out) leaves the mount, and where the way down to
 * the mount is hidden.
 */
static void at_mount(void **state)
{
        static const struct ccase cases[] = {
                {"/s/w/a", 0, 0, "/s/w/a", "upper/a", true},
                {"/s/w/d/x", 0, 0, "/s/w/d/x", "lower/d/x", false},
                {"/s/w//d/./y", 0, -ENOENT, NULL, NULL, false},
                {"/s/w", 0, 0, "/s/w", "upper", true},
                {"/s/w/..", 0, 0, "/s", "s", false},
                {"/s/w/../w/d/x", 0, 0, "/s/w/d/x", "lower/d/x", false},
                {"/s/w/d/../../../s/w/a", 0, 0, "/s/w/a", "upper/a", true},
                {"/s/w/abs", VFS_FOLLOW, 0, "/s/w/a", "upper/a", true},
                {"/s/w/abs", 0, 0, "/s/w/abs", "upper/abs", true},
                {"/s/w/out", VFS_FOLLOW, 0, "/s", "s", false},
                {"/s/w/out/w/newdir/n", 0, 0, "/s/w/newdir/n", "upper/newdir/n", true},
        };
        static const struct ccase hidden[] = {
                {"/s/w/a", 0, -ENOENT, NULL, NULL, false},
                {"/s/w/../w/a", 0, -ENOENT, NULL, NULL, false},
        };
        struct vfs_view v = {0};
        struct vfs_result res;

        (void)state;
        make_deep_view(&v, NULL);
        check_cases(&v, cases, ARRAY_SIZE(cases));
        /* relative to a start beneath the mount, and creating in it */
        assert_int_equal(vfs_resolve(&v, "/s/w/d", "../newdir/n", 0, &res), 0);
        assert_string_equal(res.path, "/s/w/newdir/n");
        vfs_result_release(&res);
        assert_int_equal(vfs_resolve(&v, "/s/w", "d/new", VFS_CREATE, &res), 0);
        assert_int_equal(res.kind, VFS_ABSENT);
        assert_true(res.parent_upper && res.parent_lower_fd >= 0);
        vfs_result_release(&res);
        free_deep_view(&v);

        v = (struct vfs_view){0};
        make_deep_view(&v, "/s");
        check_cases(&v, hidden, ARRAY_SIZE(hidden));
        free_deep_view(&v);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(layers),
                cmocka_unit_test(parents),
                cmocka_unit_test(at_mount),
        };

        int r;

        if (setup(NULL) < 0)
                return 1;
        if (!marks_ok) {
                printf("skipped: this file system refuses whiteouts (mknod 0:0) or user.* "
                       "xattrs under %s\n",
                       T);
                teardown(NULL);
                return 77;
        }
        r = cmocka_run_group_tests(tests, NULL, NULL);
        return teardown(NULL) < 0 ? 1 : r;
}

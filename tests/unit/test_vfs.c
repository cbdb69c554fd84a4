/*
 * The view (supervisor/vfs/): spec parsing, mount look-up, the default view, and resolution
 * against real trees built under a temporary directory T:
 *
 *   T/root            the "/" mount (ro)          T/rwhost/work  /mnt/rw (rw)
 *   T/srv/x           /data/inputs (ro, remapped) T/srv/y        /mnt/rw/ro (ro, nested)
 *   T/rwhost/etc      a decoy: the host parent of /mnt/rw's directory has an etc too
 *   T/native          a tree resolved natively and through an identity view, compared
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/error.h"
#include "supervisor/util.h"
#include "supervisor/vfs/default.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/special.h"
#include "supervisor/vfs/view.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The case tables leave the fields a case does not need to zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static char T[PATH_MAX]; /* the fixture's root, a canonical host path */

/* ---- fixture ------------------------------------------------------------------------- */

static void fx_path(char *buf, const char *rel)
{
        if (snprintf(buf, PATH_MAX, "%s/%s", T, rel) >= PATH_MAX)
                fail_msg("fixture path too long");
}

static void fx_dir(const char *rel)
{
        char p[PATH_MAX];
        fx_path(p, rel);
        assert_int_equal(mkdir(p, 0755), 0);
}

static void fx_file(const char *rel)
{
        char p[PATH_MAX];
        fx_path(p, rel);
        int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
}

/* A symlink at rel; a target starting with "T/" is made absolute under the fixture. */
static void fx_link(const char *target, const char *rel)
{
        char p[PATH_MAX], t[PATH_MAX];
        fx_path(p, rel);
        if (strncmp(target, "T/", 2) == 0)
                fx_path(t, target + 2);
        else
                snprintf(t, sizeof(t), "%s", target);
        assert_int_equal(symlink(t, p), 0);
}

static const char *const fx_dirs[] = {
        "root",
        "root/etc",
        "root/etc/ssh",
        "root/mnt",
        "root/mnt/etc",
        "root/mnt/rw",
        "root/mnt/hid",
        "root/home",
        "root/home/u",
        "root/home/u/.ssh",
        "root/home/u/proj",
        "root/home/v",
        "root/dir",
        "root/dir/sub",
        "rwhost",
        "rwhost/etc",
        "rwhost/work",
        "srv",
        "srv/x",
        "srv/y",
        "outside",
        "native",
        "native/a",
        "native/a/b",
};
static const char *const fx_files[] = {
        "root/etc/passwd",
        "root/etc/shadow",
        "root/etc/ssh/ssh_host_rsa_key",
        "root/etc/ssh/ssh_host_rsa_key.pub",
        "root/mnt/etc/marker",
        "root/home/u/.ssh/id_rsa",
        "root/home/u/proj/f",
        "root/home/v/secret",
        "root/dir/file",
        "rwhost/etc/decoy",
        "rwhost/work/f",
        "rwhost/work/secret",
        "srv/x/a.csv",
        "srv/y/y.txt",
        "native/file",
        "native/a/b/c",
};
static const struct {
        const char *target, *at;
} fx_links[] = {
        {"/etc", "root/link_abs"},
        {"dir/sub", "root/link_rel"},
        {"/../../..", "root/link_out"},
        {"T/outside", "root/link_host"},
        {"/etc/shadow", "root/link_hidden"},
        {"../etc/shadow", "root/dir/link_hidden_rel"},
        {"../v", "root/home/u/to_v"},
        {"loop_b", "root/loop_a"},
        {"loop_a", "root/loop_b"},
        {"nowhere", "root/dangling"},
        {"dir/file/", "root/file_slash"},
        {"dir", "root/data"},
        {"a.csv", "srv/x/rel"},
        {"/data/inputs/a.csv", "srv/x/abs"},
        {"T/srv/x/a.csv", "srv/x/hostabs"},
        {"..", "srv/x/up"},
        /* native: relative links, and absolute ones into the tree itself */
        {"a", "native/l_dir"},
        {"file", "native/l_file"},
        {"nothing", "native/l_dangling"},
        {"l_loop", "native/l_loop"},
        {"file/", "native/l_slashfile"},
        {"..", "native/a/l_up"},
        {".", "native/l_self"},
        {"T/native/a/b", "native/l_abs"},
        {"b/../l_up/file", "native/a/l_mix"},
        {"l_dir/b/", "native/l_dirslash"},
};

static void fx_chain(const char *dir, int n, const char *end)
{
        char at[PATH_MAX], to[64];
        for (int i = 0; i < n; i++) {
                snprintf(at, sizeof(at), "%s/chain_%d", dir, i);
                snprintf(to, sizeof(to), "chain_%d", i + 1);
                fx_link(i + 1 < n ? to : end, at);
        }
}

static int fx_setup(void **state)
{
        char tmpl[] = "/tmp/test_vfs-XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        assert_non_null(realpath(tmpl, T));
        for (size_t i = 0; i < ARRAY_SIZE(fx_dirs); i++)
                fx_dir(fx_dirs[i]);
        for (size_t i = 0; i < ARRAY_SIZE(fx_files); i++)
                fx_file(fx_files[i]);
        for (size_t i = 0; i < ARRAY_SIZE(fx_links); i++)
                fx_link(fx_links[i].target, fx_links[i].at);
        fx_chain("root", 41, "dir"); /* chain_0 takes 41 links, chain_1 takes 40 */
        fx_chain("native", 41, "a");
        return 0;
}

static int fx_teardown(void **state)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
        return system(cmd) == 0 ? 0 : -1;
}

/* Add a mount of the fixture (host relative to T) to v; host NULL for hidden/special. */
static void fx_mount(struct vfs_view *v, enum vfs_mode mode, const char *sandbox, const char *host,
                     const char *except)
{
        char h[PATH_MAX];
        struct vfs_mount m;
        if (host)
                fx_path(h, host);
        assert_int_equal(vfs_mount_init(&m, mode, sandbox, host ? h : NULL, "test"), 0);
        if (except)
                m.except = xstrdup(except);
        vfs_view_add(v, &m);
}

/* The view most resolution cases run against. */
static void fx_view(struct vfs_view *v)
{
        struct error err = {0};
        fx_mount(v, VFS_RO, "/", "root", NULL);
        fx_mount(v, VFS_RW, "/mnt/rw", "rwhost/work", NULL);
        fx_mount(v, VFS_RO, "/mnt/rw/ro", "srv/y", NULL);
        fx_mount(v, VFS_RO, "/data/inputs", "srv/x", NULL);
        fx_mount(v, VFS_RW, "/mnt/hid/inner", "srv/y", NULL);
        fx_mount(v, VFS_HIDDEN, "/mnt/hid", NULL, NULL);
        fx_mount(v, VFS_HIDDEN, "/mnt/rw/secret", NULL, NULL);
        fx_mount(v, VFS_HIDDEN, "/etc/shadow", NULL, NULL);
        fx_mount(v, VFS_HIDDEN, "/etc/ssh/*_key", NULL, NULL);
        fx_mount(v, VFS_HIDDEN, "/home/*", NULL, "/home/u");
        fx_mount(v, VFS_HIDDEN, "/home/u/.ssh", NULL, NULL);
        fx_mount(v, VFS_PROC, "/proc", NULL, NULL);
        if (vfs_view_open(v, NULL, &err) < 0)
                fail_msg("vfs_view_open: %s", err.msg);
}

/* The host path behind an fd, relative to T ("" for T itself, or the absolute path). */
static const char *fd_host(int fd, char *buf)
{
        char proc[64], full[PATH_MAX];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, full, sizeof(full) - 1);
        assert_true(n > 0);
        full[n] = '\0';
        size_t t = strlen(T);
        if (strncmp(full, T, t) == 0 && (full[t] == '/' || !full[t]))
                snprintf(buf, PATH_MAX, "%s", full[t] ? full + t + 1 : "");
        else
                snprintf(buf, PATH_MAX, "%s", full);
        return buf;
}

/* ---- resolution ---------------------------------------------------------------------- */

#define F VFS_FOLLOW

struct rcase {
        const char *start; /* NULL: "/" */
        const char *path;
        unsigned flags;
        int err;             /* 0 or the -errno expected */
        const char *sandbox; /* expected canonical sandbox path */
        const char *host;    /* VFS_HOST: expected host path, relative to T */
        enum vfs_kind kind;
        const char *rest; /* VFS_SPECIAL */
};

static const struct rcase resolve_cases[] = {
        /* the root, '//', '..' above it, trailing '/' */
        {NULL, "/", 0, 0, "/", "root"},
        {NULL, "//", 0, 0, "/", "root"},
        {NULL, "/..", 0, 0, "/", "root"},
        {NULL, "/../../etc", 0, 0, "/etc", "root/etc"},
        {NULL, "/etc/", 0, 0, "/etc", "root/etc"},
        {NULL, "/etc//passwd", 0, 0, "/etc/passwd", "root/etc/passwd"},
        {NULL, "/etc/./passwd", 0, 0, "/etc/passwd", "root/etc/passwd"},
        {NULL, "/etc/passwd/", 0, -ENOTDIR},
        {NULL, "/etc/passwd//", 0, -ENOTDIR},
        {NULL, "/etc/passwd/.", 0, -ENOTDIR},
        {NULL, "/etc/passwd/..", 0, -ENOTDIR},
        {NULL, "/nonexistent/..", 0, -ENOENT},
        {NULL, "/nonexistent", 0, -ENOENT},
        /* relative paths start at `start`; an empty path only with AT_EMPTY_PATH */
        {"/etc", "passwd", 0, 0, "/etc/passwd", "root/etc/passwd"},
        {"/etc", "../..", 0, 0, "/", "root"},
        {"/etc", "", 0, -ENOENT},
        {"/etc", "", VFS_EMPTY_PATH, 0, "/etc", "root/etc"},
        {"/etc/passwd", "", VFS_EMPTY_PATH, 0, "/etc/passwd", "root/etc/passwd"},
        {"/link_abs", "", VFS_EMPTY_PATH | F, 0, "/link_abs", "root/link_abs"},
        {"/etc/passwd", "x", 0, -ENOTDIR},
        {"/home/v", "x", 0, -ENOENT}, /* a hidden start */
        {"/gone", ".", 0, -ENOENT},   /* a start that no longer exists */
        /* '..' across a mount boundary: the sandbox parent, never the host parent */
        {NULL, "/mnt/rw", 0, 0, "/mnt/rw", "rwhost/work"},
        {NULL, "/mnt/rw/f", 0, 0, "/mnt/rw/f", "rwhost/work/f"},
        {NULL, "/mnt/rw/../etc", 0, 0, "/mnt/etc", "root/mnt/etc"},
        {NULL, "/mnt/rw/../../etc/passwd", 0, 0, "/etc/passwd", "root/etc/passwd"},
        {"/mnt/rw", "../etc/marker", 0, 0, "/mnt/etc/marker", "root/mnt/etc/marker"},
        {"/mnt/rw/ro", "../../rw/f", 0, 0, "/mnt/rw/f", "rwhost/work/f"},
        /* longest prefix wins; hidden wins over everything */
        {NULL, "/mnt/rw/ro/y.txt", 0, 0, "/mnt/rw/ro/y.txt", "srv/y/y.txt"},
        {NULL, "/mnt/rw/secret", 0, -ENOENT},
        {NULL, "/mnt/hid", 0, -ENOENT},
        {NULL, "/mnt/hid/inner", 0, -ENOENT},
        {NULL, "/mnt/hid/inner/y.txt", 0, -ENOENT},
        /* symlinks: absolute targets restart at the sandbox root */
        {NULL, "/link_abs", 0, 0, "/link_abs", "root/link_abs"},
        {NULL, "/link_abs", F, 0, "/etc", "root/etc"},
        {NULL, "/link_abs/", 0, 0, "/etc", "root/etc"}, /* a trailing '/' follows */
        {NULL, "/link_abs/passwd", 0, 0, "/etc/passwd", "root/etc/passwd"},
        {NULL, "/link_abs/../dir", 0, 0, "/dir", "root/dir"},
        {NULL, "/link_rel", F, 0, "/dir/sub", "root/dir/sub"},
        {NULL, "/link_rel/..", 0, 0, "/dir", "root/dir"}, /* the target's parent */
        {NULL, "/link_out", F, 0, "/", "root"},
        {NULL, "/link_host", F, -ENOENT}, /* a host path is not a sandbox path */
        {NULL, "/link_host", 0, 0, "/link_host", "root/link_host"},
        {NULL, "/dangling", F, -ENOENT},
        {NULL, "/dangling", 0, 0, "/dangling", "root/dangling"},
        {NULL, "/file_slash", F, -ENOTDIR},
        {NULL, "/loop_a", F, -ELOOP},
        {NULL, "/loop_a/x", 0, -ELOOP},
        {NULL, "/loop_a", 0, 0, "/loop_a", "root/loop_a"},
        {NULL, "/chain_1", F, 0, "/dir", "root/dir"}, /* 40 links */
        {NULL, "/chain_0", F, -ELOOP},                /* 41 */
        {NULL, "/chain_0", 0, 0, "/chain_0", "root/chain_0"},
        /* hidden, however reached */
        {NULL, "/etc/shadow", 0, -ENOENT},
        {NULL, "/etc/../etc/shadow", 0, -ENOENT},
        {NULL, "/link_hidden", F, -ENOENT},
        {NULL, "/link_abs/shadow", 0, -ENOENT},
        {NULL, "/dir/link_hidden_rel", F, -ENOENT},
        {"/dir", "link_hidden_rel", 0, 0, "/dir/link_hidden_rel", "root/dir/link_hidden_rel"},
        {NULL, "/etc/ssh/ssh_host_rsa_key", 0, -ENOENT},
        {NULL, "/etc/ssh/ssh_host_rsa_key.pub", 0, 0, "/etc/ssh/ssh_host_rsa_key.pub",
         "root/etc/ssh/ssh_host_rsa_key.pub"},
        {NULL, "/home/v/secret", 0, -ENOENT},
        {NULL, "/home/u/to_v", F, -ENOENT},
        {NULL, "/home/u/proj/f", 0, 0, "/home/u/proj/f", "root/home/u/proj/f"},
        {NULL, "/home/u/.ssh/id_rsa", 0, -ENOENT},
        {NULL, "/home/u/proj/../.ssh", 0, -ENOENT},
        {NULL, "/home/u/.ssh/..", 0, -ENOENT},
        {"/home/u/proj", "../.ssh/id_rsa", 0, -ENOENT},
        /* a remapped mount below a symlink on the host: /data is made up, paths are the
           sandbox's */
        {NULL, "/data", 0, 0, "/data", NULL, VFS_SYNTHETIC},
        {NULL, "/data/", F, 0, "/data", NULL, VFS_SYNTHETIC},
        {NULL, "/data/file", 0, -ENOENT},
        {NULL, "/data/inputs/a.csv", 0, 0, "/data/inputs/a.csv", "srv/x/a.csv"},
        {NULL, "/data/inputs/../inputs/a.csv", 0, 0, "/data/inputs/a.csv", "srv/x/a.csv"},
        {NULL, "/data/inputs/../../etc", 0, 0, "/etc", "root/etc"},
        {NULL, "/data/inputs/rel", F, 0, "/data/inputs/a.csv", "srv/x/a.csv"},
        {NULL, "/data/inputs/abs", F, 0, "/data/inputs/a.csv", "srv/x/a.csv"},
        {NULL, "/data/inputs/hostabs", F, -ENOENT},
        {NULL, "/data/inputs/up", F, 0, "/data", NULL, VFS_SYNTHETIC},
        {NULL, "/data/inputs/up/inputs/a.csv", 0, 0, "/data/inputs/a.csv", "srv/x/a.csv"},
        /* special mounts are reported, not entered */
        {NULL, "/proc", 0, 0, "/proc", NULL, VFS_SPECIAL, ""},
        {NULL, "/proc/self/fd/3", 0, 0, "/proc", NULL, VFS_SPECIAL, "self/fd/3"},
        {NULL, "/proc//self/", 0, 0, "/proc", NULL, VFS_SPECIAL, "self/"},
        {"/proc", "self", 0, 0, "/proc", NULL, VFS_SPECIAL, "self"},
        {NULL, "/etc/../proc/../etc", 0, 0, "/proc", NULL, VFS_SPECIAL, "../etc"},
        /* flags the resolver does not know, a relative start */
        {NULL, "/", 1u << 30, -EINVAL},
        {"etc", "x", 0, -EINVAL},
};

static void check_result(const struct rcase *c, const struct vfs_result *res)
{
        char host[PATH_MAX];
        if (res->kind != c->kind)
                fail_msg("%s: kind %d, want %d", c->path, res->kind, c->kind);
        if (strcmp(res->path, c->sandbox) != 0)
                fail_msg("%s: sandbox path %s, want %s", c->path, res->path, c->sandbox);
        /* A sandbox path never shows where the host keeps things. */
        if (strstr(res->path, T))
                fail_msg("%s: host path %s leaked", c->path, res->path);
        if (c->kind == VFS_HOST) {
                if (res->fd < 0)
                        fail_msg("%s: no fd", c->path);
                if (strcmp(fd_host(res->fd, host), c->host) != 0)
                        fail_msg("%s: host %s, want %s", c->path, host, c->host);
                int fl = fcntl(res->fd, F_GETFL);
                if (!(fl & O_PATH) || !(fcntl(res->fd, F_GETFD) & FD_CLOEXEC))
                        fail_msg("%s: fd is not O_PATH|O_CLOEXEC", c->path);
        } else if (res->fd != -1) {
                fail_msg("%s: fd %d for a non-host result", c->path, res->fd);
        }
        if (c->kind == VFS_SPECIAL && strcmp(res->rest, c->rest) != 0)
                fail_msg("%s: rest `%s`, want `%s`", c->path, res->rest, c->rest);
}

static void run_cases(const struct vfs_view *v, const struct rcase *cases, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const struct rcase *c = &cases[i];
                struct vfs_result res;
                int r = vfs_resolve(v, c->start ? c->start : "/", c->path, c->flags, &res);
                if (r != c->err)
                        fail_msg("%s (start %s, flags %#x): %s, want %s", c->path,
                                 c->start ? c->start : "/", c->flags, strerror(-r),
                                 strerror(-c->err));
                if (r == 0)
                        check_result(c, &res);
                else if (res.fd != -1 || res.parent_fd != -1)
                        fail_msg("%s: fds left open on error", c->path);
                vfs_result_release(&res);
        }
}

static void resolve_table(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        fx_view(&v);
        run_cases(&v, resolve_cases, ARRAY_SIZE(resolve_cases));
}

/* A view without "/": outside the mounts nothing exists, the mount points' ancestors do. */
static void resolve_no_root(void **state)
{
        static const struct rcase cases[] = {
                {NULL, "/", 0, 0, "/", NULL, VFS_SYNTHETIC},
                {NULL, "/etc", 0, -ENOENT},
                {NULL, "/mnt", 0, 0, "/mnt", NULL, VFS_SYNTHETIC},
                {NULL, "/mnt/rw/f", 0, 0, "/mnt/rw/f", "rwhost/work/f"},
                {NULL, "/mnt/rw/../../data/inputs/a.csv", 0, 0, "/data/inputs/a.csv",
                 "srv/x/a.csv"},
                {NULL, "/data/inputs/up/../..", 0, 0, "/", NULL, VFS_SYNTHETIC},
                {"/mnt", "rw/", 0, 0, "/mnt/rw", "rwhost/work"},
                {"/mnt", "x", 0, -ENOENT},
        };
        _cleanup_vfs_view_ struct vfs_view v = {0};
        struct error err = {0};
        fx_mount(&v, VFS_RW, "/mnt/rw", "rwhost/work", NULL);
        fx_mount(&v, VFS_RO, "/data/inputs", "srv/x", NULL);
        assert_int_equal(vfs_view_open(&v, NULL, &err), 0);
        run_cases(&v, cases, ARRAY_SIZE(cases));
}

/* ENAMETOOLONG: a component over NAME_MAX, a path of PATH_MAX bytes or more. */
static void resolve_limits(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        _cleanup_free_ char *path = xcalloc(1, PATH_MAX + 2);
        struct vfs_result res;
        fx_view(&v);

        path[0] = '/';
        memset(path + 1, 'a', NAME_MAX);
        assert_int_equal(vfs_resolve(&v, "/", path, 0, &res), -ENOENT);
        memset(path + 1, 'a', NAME_MAX + 1);
        assert_int_equal(vfs_resolve(&v, "/", path, 0, &res), -ENAMETOOLONG);
        assert_int_equal(vfs_resolve(&v, "/", path + 1, 0, &res), -ENAMETOOLONG);
        assert_int_equal(vfs_resolve(&v, "/", path, VFS_CREATE, &res), -ENAMETOOLONG);

        memset(path, '/', PATH_MAX - 1); /* 4095 bytes: still a path, the root */
        path[PATH_MAX - 1] = '\0';
        assert_int_equal(vfs_resolve(&v, "/", path, 0, &res), 0);
        assert_string_equal(res.path, "/");
        vfs_result_release(&res);
        path[PATH_MAX - 1] = '/'; /* 4096 bytes */
        path[PATH_MAX] = '\0';
        assert_int_equal(vfs_resolve(&v, "/", path, 0, &res), -ENAMETOOLONG);
}

/* ---- the create flavour ---------------------------------------------------------------- */

struct ccase {
        const char *path;
        unsigned flags; /* VFS_CREATE is added */
        int err;
        enum vfs_kind kind;  /* of the last component */
        const char *sandbox; /* its sandbox path (absent: the would-be one) */
        const char *name;    /* "" when the last component is not a name */
        const char *parent;  /* the parent's host path relative to T; NULL: no parent fd */
        bool slash;
};

static const struct ccase create_cases[] = {
        {"/dir/new", 0, 0, VFS_ABSENT, "/dir/new", "new", "root/dir"},
        {"/dir/new/", 0, 0, VFS_ABSENT, "/dir/new", "new", "root/dir", true},
        {"/dir/file", 0, 0, VFS_HOST, "/dir/file", "file", "root/dir"},
        {"/link_rel/../new", 0, 0, VFS_ABSENT, "/dir/new", "new", "root/dir"},
        {"/mnt/rw/new", 0, 0, VFS_ABSENT, "/mnt/rw/new", "new", "rwhost/work"},
        /* a missing parent is ENOENT, a file as parent ENOTDIR, as the kernel says */
        {"/nodir/new", 0, -ENOENT},
        {"/dir/file/new", 0, -ENOTDIR},
        {"/dangling/new", 0, -ENOENT},
        /* a hidden name is neither visible nor creatable on the host */
        {"/etc/shadow", 0, -EACCES},
        {"/home/v/new", 0, -ENOENT},
        /* a final symlink: itself without VFS_FOLLOW (mkdir, O_EXCL), its target with */
        {"/dangling", 0, 0, VFS_HOST, "/dangling", "dangling", "root"},
        {"/dangling", F, 0, VFS_ABSENT, "/nowhere", "nowhere", "root"},
        {"/link_abs", F, 0, VFS_HOST, "/etc", "etc", "root"},
        {"/link_hidden", F, -EACCES},
        {"/loop_a", F, -ELOOP},
        /* mount points and made-up directories exist; a made-up parent has no host fd */
        {"/mnt/rw", 0, 0, VFS_HOST, "/mnt/rw", "rw", "root/mnt"},
        {"/data", 0, 0, VFS_SYNTHETIC, "/data", "data", "root"},
        {"/data/new", 0, 0, VFS_ABSENT, "/data/new", "new", NULL},
        /* no name: ".", "..", "/" (mkdir says EEXIST, rename EBUSY: the caller's call) */
        {"/dir/.", 0, 0, VFS_HOST, "/dir", "", NULL},
        {"/dir/sub/..", 0, 0, VFS_HOST, "/dir", "", NULL},
        {"/", 0, 0, VFS_HOST, "/", "", NULL},
        {"/proc/new", 0, 0, VFS_SPECIAL, "/proc", "", NULL},
};

static void resolve_create(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        char host[PATH_MAX];
        fx_view(&v);

        for (size_t i = 0; i < ARRAY_SIZE(create_cases); i++) {
                const struct ccase *c = &create_cases[i];
                _cleanup_vfs_result_ struct vfs_result res;
                int r = vfs_resolve(&v, "/", c->path, c->flags | VFS_CREATE, &res);
                if (r != c->err)
                        fail_msg("%s: %s, want %s", c->path, strerror(-r), strerror(-c->err));
                if (r < 0)
                        continue;
                if (res.kind != c->kind || strcmp(res.path, c->sandbox) != 0 ||
                    strcmp(res.name, c->name) != 0 || res.trailing_slash != c->slash)
                        fail_msg("%s: kind %d path %s name `%s` slash %d", c->path, res.kind,
                                 res.path, res.name, res.trailing_slash);
                if ((res.kind == VFS_HOST) != (res.fd >= 0))
                        fail_msg("%s: object fd %d", c->path, res.fd);
                if (!c->parent && res.parent_fd >= 0)
                        fail_msg("%s: unexpected parent fd", c->path);
                if (c->parent &&
                    (res.parent_fd < 0 || strcmp(fd_host(res.parent_fd, host), c->parent) != 0))
                        fail_msg("%s: parent %s, want %s", c->path,
                                 res.parent_fd < 0 ? "none" : host, c->parent);
        }
}

/* The parent's mount is reported; a mount point's parent is on the outer mount. */
static void resolve_create_mounts(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        _cleanup_vfs_result_ struct vfs_result res;
        fx_view(&v);

        assert_int_equal(vfs_resolve(&v, "/", "/mnt/rw", VFS_CREATE, &res), 0);
        assert_true(res.mount_point);
        assert_string_equal(res.mount->sandbox, "/mnt/rw");
        assert_string_equal(res.parent_mount->sandbox, "/");
        vfs_result_release(&res);
        assert_int_equal(vfs_resolve(&v, "/", "/mnt/rw/x", VFS_CREATE, &res), 0);
        assert_int_equal(res.mount->mode, VFS_RW);
        assert_false(res.mount_point);
}

/* ---- the kernel as oracle -------------------------------------------------------------- */

/*
 * Where the view is the identity (one rw mount of T/native at its own host path), resolving
 * through it and opening natively must agree: same errno, same object, and the sandbox path
 * is the host path.
 */
static const char *const native_paths[] = {
        "",
        "/",
        ".",
        "a",
        "a/",
        "a/b",
        "a/b/",
        "a/b/c",
        "a/b/c/",
        "a/b/../..",
        "a//b///c",
        "a/./b/.",
        "file",
        "file/",
        "file/.",
        "file/..",
        "missing",
        "missing/",
        "missing/..",
        "a/missing/../b",
        "l_dir",
        "l_dir/",
        "l_dir/..",
        "l_dir/b/c",
        "l_file",
        "l_file/",
        "l_dangling",
        "l_dangling/",
        "l_loop",
        "l_loop/",
        "l_loop/x",
        "l_slashfile",
        "l_slashfile/",
        "a/l_up",
        "a/l_up/",
        "a/l_up/file",
        "a/l_up/a/l_up/a",
        "l_self",
        "l_self/l_self/file",
        "l_abs",
        "l_abs/c",
        "l_abs/..",
        "a/l_mix",
        "a/l_mix/",
        "l_dirslash",
        "l_dirslash/c",
        "chain_1",
        "chain_1/b",
        "chain_0",
        "chain_0/b",
        "chain_39/..",
        "l_dir/b/c/..",
};

static int native_open(const char *path, bool follow, char *host)
{
        int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
        if (fd < 0)
                return -errno;
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, host, PATH_MAX - 1);
        close(fd);
        assert_true(n > 0);
        host[n] = '\0';
        return 0;
}

static void native_agrees(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        char root[PATH_MAX], path[2 * PATH_MAX], want[PATH_MAX], got[PATH_MAX];
        struct error err = {0};
        fx_path(root, "native");
        fx_mount(&v, VFS_RW, root, "native", NULL);
        assert_int_equal(vfs_view_open(&v, NULL, &err), 0);

        for (size_t i = 0; i < ARRAY_SIZE(native_paths); i++) {
                for (int follow = 0; follow < 2; follow++) {
                        snprintf(path, sizeof(path), "%s/%s", root, native_paths[i]);
                        int want_r = native_open(path, follow, want);
                        _cleanup_vfs_result_ struct vfs_result res;
                        int r = vfs_resolve(&v, "/", path, follow ? VFS_FOLLOW : 0, &res);
                        if (r != want_r)
                                fail_msg("%s (follow %d): view %s, kernel %s", native_paths[i],
                                         follow, strerror(-r), strerror(-want_r));
                        if (r < 0)
                                continue;
                        char proc[64];
                        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", res.fd);
                        ssize_t n = readlink(proc, got, sizeof(got) - 1);
                        assert_true(n > 0);
                        got[n] = '\0';
                        if (strcmp(got, want) != 0 || strcmp(res.path, want) != 0)
                                fail_msg("%s (follow %d): view %s (sandbox %s), kernel %s",
                                         native_paths[i], follow, got, res.path, want);
                }
        }
}

/* The same, relative to a start directory, as openat(dirfd, ...) sees it. */
static void native_agrees_relative(void **state)
{
        static const char *const rel[] = {"b",       "b/c",   "..",    "../file",
                                          "l_up",    "l_up/", "l_mix", "b/../../l_dir/b",
                                          "missing", ""};
        _cleanup_vfs_view_ struct vfs_view v = {0};
        char root[PATH_MAX], start[PATH_MAX], want[PATH_MAX], got[PATH_MAX];
        struct error err = {0};
        fx_path(root, "native");
        fx_path(start, "native/a");
        fx_mount(&v, VFS_RW, root, "native", NULL);
        assert_int_equal(vfs_view_open(&v, NULL, &err), 0);
        _cleanup_close_ int dirfd = open(start, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dirfd >= 0);

        for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
                int want_r = 0;
                _cleanup_close_ int fd = openat(dirfd, rel[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        want_r = -errno;
                else
                        fd_host(fd, want);
                _cleanup_vfs_result_ struct vfs_result res;
                int r = vfs_resolve(&v, start, rel[i], 0, &res);
                if (r != want_r)
                        fail_msg("%s: view %s, kernel %s", rel[i], strerror(-r), strerror(-want_r));
                if (r == 0 && strcmp(fd_host(res.fd, got), want) != 0)
                        fail_msg("%s: view %s, kernel %s", rel[i], got, want);
        }
}

/* ---- spec parsing ---------------------------------------------------------------------- */

static void parse_specs(void **state)
{
        static const struct {
                const char *spec;
                enum vfs_mode mode;
                const char *host, *sandbox; /* expected; host NULL for none */
                bool pattern;
        } ok[] = {
                {"/srv/x:/data/inputs", VFS_RO, "/srv/x", "/data/inputs"},
                {"/srv/x", VFS_RO, "/srv/x", "/srv/x"},
                {"rel/dir", VFS_RW, "/work/rel/dir", "/work/rel/dir"},
                {"./rel/../other/", VFS_RW, "/work/other", "/work/other"},
                {"~/proj:/p", VFS_RW, "/home/u/proj", "/p"},
                {"~", VFS_RO, "/home/u", "/home/u"},
                {"x:~/y", VFS_COW, "/work/x", "/home/u/y"},
                {"//a/./b/../c/", VFS_RO, "/a/c", "/a/c"},
                {"/a/../../..", VFS_RO, "/", "/"},
                {"..", VFS_RO, "/", "/"},
                {"/tmp/s", VFS_TMP, NULL, "/tmp/s"},
                {"/tmp/a:b", VFS_TMP, NULL, "/tmp/a:b"}, /* one path: ':' is part of it */
                {"~/.ssh", VFS_HIDDEN, NULL, "/home/u/.ssh"},
                {"/etc/ssh/*_key", VFS_HIDDEN, NULL, "/etc/ssh/*_key", true},
                {"secrets/", VFS_HIDDEN, NULL, "/work/secrets"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
                struct vfs_mount m;
                struct error err = {0};
                if (vfs_mount_parse(&m, ok[i].spec, ok[i].mode, "/work", "/home/u", &err) < 0)
                        fail_msg("%s: %s", ok[i].spec, err.msg);
                assert_string_equal(m.sandbox, ok[i].sandbox);
                if (ok[i].host)
                        assert_string_equal(m.host, ok[i].host);
                else
                        assert_null(m.host);
                assert_int_equal(m.mode, ok[i].mode);
                assert_int_equal(m.pattern, ok[i].pattern);
                vfs_mount_free(&m);
        }
}

static void parse_errors(void **state)
{
        static char long_path[PATH_MAX + 8];
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[0] = '/';
        static const struct {
                const char *spec;
                enum vfs_mode mode;
                const char *cwd, *home;
                const char *msg;
        } bad[] = {
                {"", VFS_RO, "/w", "/h", "--ro ``: empty path"},
                {":/x", VFS_RO, "/w", "/h", "--ro `:/x`: empty host path"},
                {"/x:", VFS_RW, "/w", "/h", "--rw `/x:`: empty sandbox path after ':'"},
                {"~bob/x", VFS_RO, "/w", "/h",
                 "--ro `~bob/x`: only ~ and ~/ are expanded, "
                 "not ~user"},
                {"~/x", VFS_RO, "/w", NULL, "--ro `~/x`: ~ needs HOME, which is not set"},
                {"/x:~/y", VFS_RO, "/w", "h", "--ro `/x:~/y`: HOME `h` is not absolute"},
                {"x", VFS_RW, NULL, "/h",
                 "--rw `x`: a relative path needs an absolute working "
                 "directory"},
                {"/", VFS_HIDDEN, "/w", "/h", "--hide `/`: hiding / would leave nothing to run"},
                {"..", VFS_HIDDEN, "/", "/h", "--hide `..`: hiding / would leave nothing to run"},
                {"", VFS_TMP, "/w", "/h", "--tmp ``: empty path"},
                {"/x", VFS_DEV, "/w", "/h", "a dev mount has no flag"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct vfs_mount m;
                struct error err = {0};
                assert_int_equal(vfs_mount_parse(&m, bad[i].spec, bad[i].mode, bad[i].cwd,
                                                 bad[i].home, &err),
                                 -1);
                assert_string_equal(err.msg, bad[i].msg);
                assert_null(m.sandbox);
        }
        struct vfs_mount m;
        struct error err = {0};
        assert_int_equal(vfs_mount_parse(&m, long_path, VFS_RO, "/w", "/h", &err), -1);
        assert_non_null(strstr(err.msg, "path longer than PATH_MAX"));
        assert_non_null(strstr(err.msg, "--ro `/aaa"));
}

/* Before anything runs: a missing host path names its flag; cow is refused for now; tmp
 * directories are made. */
static void open_errors(void **state)
{
        char scratch[PATH_MAX], tmpdir[PATH_MAX], missing[PATH_MAX + 16];
        struct error err = {0};
        struct vfs_mount m;
        fx_path(scratch, "");
        {
                _cleanup_vfs_view_ struct vfs_view v = {0};
                snprintf(missing, sizeof(missing), "%s/absent:/data", T);
                assert_int_equal(vfs_mount_parse(&m, missing, VFS_RO, "/", "/", &err), 0);
                vfs_view_add(&v, &m);
                assert_int_equal(vfs_view_open(&v, scratch, &err), -1);
                char want[3 * PATH_MAX];
                snprintf(want, sizeof(want),
                         "--ro %s/absent:/data: host path `%s/absent` does "
                         "not exist",
                         T, T);
                assert_string_equal(err.msg, want);
        }
        {
                _cleanup_vfs_view_ struct vfs_view v = {0};
                err = (struct error){0};
                /* cow: the lower is opened as an ro or rw host path is (the run mounts the
                 * overlay over it, supervisor/cow.c) */
                assert_int_equal(vfs_mount_parse(&m, "/", VFS_COW, "/", "/", &err), 0);
                vfs_view_add(&v, &m);
                assert_int_equal(vfs_view_open(&v, scratch, &err), 0);
                assert_true(v.mounts[0].host_fd >= 0);
        }
        {
                _cleanup_vfs_view_ struct vfs_view v = {0};
                err = (struct error){0};
                assert_int_equal(vfs_mount_parse(&m, "/scratch", VFS_TMP, "/", "/", &err), 0);
                vfs_view_add(&v, &m);
                fx_path(tmpdir, "named-tmp");
                fx_mount(&v, VFS_TMP, "/named", "named-tmp", NULL);
                assert_int_equal(vfs_view_open(&v, scratch, &err), 0);
                struct stat st;
                assert_int_equal(stat(tmpdir, &st), 0);
                assert_true(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
                assert_true(v.mounts[0].host && strncmp(v.mounts[0].host, T, strlen(T)) == 0);
                _cleanup_vfs_result_ struct vfs_result res;
                assert_int_equal(vfs_resolve(&v, "/", "/scratch", 0, &res), 0);
                assert_string_equal(res.path, "/scratch");
                assert_int_equal(res.mount->mode, VFS_TMP);
        }
}

/* ---- mount look-up --------------------------------------------------------------------- */

static void find_mounts(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        fx_mount(&v, VFS_RO, "/", "root", NULL);
        fx_mount(&v, VFS_RW, "/a", "rwhost", NULL);
        fx_mount(&v, VFS_RO, "/a/b", "srv", NULL);
        fx_mount(&v, VFS_RW, "/a/b/c/d", "srv", NULL);
        fx_mount(&v, VFS_HIDDEN, "/a/b/c", NULL, NULL);
        fx_mount(&v, VFS_HIDDEN, "/x/*/k", NULL, NULL);
        fx_mount(&v, VFS_HIDDEN, "/h/*", NULL, "/h/me/deep");
        fx_mount(&v, VFS_RW, "/a/b", "srv/x", NULL); /* replaces the earlier /a/b */
        static const struct {
                const char *path, *mount; /* mount: its sandbox path, or "hidden" */
        } cases[] = {
                {"/", "/"},
                {"/z", "/"},
                {"/a", "/a"},
                {"/ab", "/"},
                {"/a/x", "/a"},
                {"/a/b/q", "/a/b"},
                {"/a/b/c", "hidden"},
                {"/a/b/c/d", "hidden"},
                {"/a/b/c/d/e", "hidden"},
                {"/x/y/k", "hidden"},
                {"/x/.y/k/z", "hidden"},
                {"/x/y/kk", "/"},
                {"/x/k", "/"},
                {"/h/other", "hidden"},
                {"/h/me", "/"},
                {"/h/me/deep/x", "/"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct vfs_mount *m = vfs_view_find(&v, cases[i].path);
                assert_non_null(m);
                const char *got = m->mode == VFS_HIDDEN ? "hidden" : m->sandbox;
                if (strcmp(got, cases[i].mount) != 0)
                        fail_msg("%s: on %s, want %s", cases[i].path, got, cases[i].mount);
        }
        assert_int_equal(vfs_view_find(&v, "/a/b")->mode, VFS_RW);
        assert_int_equal(v.n_mounts, 7);

        _cleanup_vfs_view_ struct vfs_view bare = {0};
        fx_mount(&bare, VFS_RO, "/data/inputs", "srv/x", NULL);
        assert_null(vfs_view_find(&bare, "/etc"));
        assert_null(vfs_view_find(&bare, "/data"));
        assert_true(vfs_view_above_mount(&bare, "/data"));
        assert_false(vfs_view_above_mount(&bare, "/data/inputs"));
}

/* ---- the default view ------------------------------------------------------------------ */

static void default_view(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        struct vfs_default d = {.home = "/home/u/",
                                .cwd = "/home/u/proj",
                                .uid = 1000,
                                .tmp = "/var/tmp/stockade-1"};
        assert_int_equal(vfs_default_view(&v, &d), 0);
        static const struct {
                const char *path;
                const char *want; /* mode name, and for ro/rw/tmp the host root */
                const char *host;
        } cases[] = {
                {"/usr/bin/python3", "ro", "/"},
                {"/home/u", "ro", "/"},
                {"/home/u/proj/x", "rw", "/home/u/proj"},
                {"/tmp/a", "tmp", "/var/tmp/stockade-1"},
                {"/dev/null", "dev"},
                {"/proc/self/fd", "proc"},
                {"/home/u/.ssh/id_ed25519", "hidden"},
                {"/home/u/.config/gcloud", "hidden"},
                {"/home/u/.config/gh/hosts.yml", "hidden"},
                {"/home/u/.config/other", "ro", "/"},
                {"/home/u/.netrc", "hidden"},
                {"/home/u/.claude/.credentials.json", "hidden"},
                {"/home/u/.claude/settings.json", "ro", "/"},
                {"/home/u/.codex/auth.json", "hidden"},
                {"/home/u/.config/git/credentials", "hidden"},
                {"/home/u/.config/git/config", "ro", "/"},
                {"/home/u/.cache/huggingface/token", "hidden"},
                {"/home/u/.cache/pip/x", "ro", "/"},
                {"/home/u/.mozilla/firefox", "hidden"},
                {"/home/u/snap/firefox/common", "hidden"},
                {"/home/v", "hidden"},
                {"/home/.hidden-user", "hidden"},
                {"/root", "hidden"},
                {"/etc/shadow", "hidden"},
                {"/etc/gshadow", "hidden"},
                {"/etc/passwd", "ro", "/"},
                {"/etc/ssh/ssh_host_ed25519_key", "hidden"},
                {"/etc/ssh/ssh_host_ed25519_key.pub", "ro", "/"},
                {"/etc/ssh/sshd_config", "ro", "/"},
                {"/run/user/1000/bus", "hidden"},
                {"/run/user/1001", "ro", "/"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct vfs_mount *m = vfs_view_find(&v, cases[i].path);
                assert_non_null(m);
                const char *mode = vfs_mount_mode_name(m->mode);
                if (strcmp(mode, cases[i].want) != 0 ||
                    (cases[i].host && strcmp(m->host, cases[i].host) != 0))
                        fail_msg("%s: %s %s, want %s %s", cases[i].path, mode,
                                 m->host ? m->host : "-", cases[i].want,
                                 cases[i].host ? cases[i].host : "-");
        }
        for (size_t i = 0; vfs_default_hidden_home[i]; i++) {
                char p[PATH_MAX];
                snprintf(p, sizeof(p), "/home/u/%s", vfs_default_hidden_home[i]);
                assert_int_equal(vfs_view_find(&v, p)->mode, VFS_HIDDEN);
        }
}

static void default_view_variants(void **state)
{
        { /* root keeps /root; its home is there */
                _cleanup_vfs_view_ struct vfs_view v = {0};
                struct vfs_default d = {
                        .home = "/root", .cwd = "/root/w", .is_root = true, .tmp = "/t"};
                assert_int_equal(vfs_default_view(&v, &d), 0);
                assert_int_equal(vfs_view_find(&v, "/root/x")->mode, VFS_RO);
                assert_int_equal(vfs_view_find(&v, "/root/.ssh")->mode, VFS_HIDDEN);
                assert_int_equal(vfs_view_find(&v, "/home/anyone")->mode, VFS_HIDDEN);
                assert_int_equal(vfs_view_find(&v, "/run/user/0")->mode, VFS_HIDDEN);
        }
        { /* started from "/": the root stays read-only */
                _cleanup_vfs_view_ struct vfs_view v = {0};
                struct vfs_default d = {.home = "/home/u", .cwd = "/", .tmp = "/t"};
                assert_int_equal(vfs_default_view(&v, &d), 0);
                assert_int_equal(vfs_view_find(&v, "/x")->mode, VFS_RO);
        }
        { /* started from /tmp: the working directory wins over the private /tmp */
                _cleanup_vfs_view_ struct vfs_view v = {0};
                struct vfs_default d = {.home = "/home/u", .cwd = "/tmp", .tmp = "/t"};
                assert_int_equal(vfs_default_view(&v, &d), 0);
                assert_int_equal(vfs_view_find(&v, "/tmp/x")->mode, VFS_RW);
        }
        {
                _cleanup_vfs_view_ struct vfs_view v = {0};
                struct vfs_default d = {.home = "home", .cwd = "/", .tmp = "/t"};
                assert_int_equal(vfs_default_view(&v, &d), -EINVAL);
        }
}

/* The default view on this very host: the system reads, /etc/shadow does not exist. */
static void default_view_host(void **state)
{
        _cleanup_vfs_view_ struct vfs_view v = {0};
        char tmp[PATH_MAX], cwd[PATH_MAX], home[PATH_MAX];
        struct error err = {0};
        fx_path(tmp, "host-tmp");
        fx_path(cwd, "root/home/u/proj");
        fx_path(home, "root/home/u");
        struct vfs_default d = {
                .home = home, .cwd = cwd, .uid = getuid(), .is_root = getuid() == 0, .tmp = tmp};
        assert_int_equal(vfs_default_view(&v, &d), 0);
        if (vfs_view_open(&v, NULL, &err) < 0)
                fail_msg("%s", err.msg);

        _cleanup_vfs_result_ struct vfs_result res;
        assert_int_equal(vfs_resolve(&v, "/", "/etc/passwd", VFS_FOLLOW, &res), 0);
        assert_int_equal(res.mount->mode, VFS_RO);
        vfs_result_release(&res);
        assert_int_equal(vfs_resolve(&v, "/", "/etc/shadow", VFS_FOLLOW, &res), -ENOENT);
        assert_int_equal(vfs_resolve(&v, cwd, "f", 0, &res), 0);
        assert_int_equal(res.mount->mode, VFS_RW);
        vfs_result_release(&res);
        assert_int_equal(vfs_resolve(&v, cwd, "../.ssh/id_rsa", 0, &res), -ENOENT);
        assert_int_equal(vfs_resolve(&v, "/", "/tmp", 0, &res), 0);
        char host[PATH_MAX];
        assert_string_equal(fd_host(res.fd, host), "host-tmp");
        assert_string_equal(res.path, "/tmp");
}

/* ---- the /proc and /dev views (special.c) -------------------------------------------- */

static bool sp_in_tree(void *arg, pid_t pid)
{
        (void)arg;
        return pid == 100 || pid == 101; /* the caller's process and one thread of it */
}

static bool sp_pts(void *arg, unsigned n)
{
        (void)arg;
        return n == 7;
}

static void special_views(void **state)
{
        static const struct {
                bool dev;
                const char *rest;
                int err;
                const char *host;
                bool process;
                enum vfs_special_kind kind;
        } cases[] = {
                {false, "", 0, "/proc", false, VFS_SP_PROC},
                {false, "self", 0, "/proc/100", true, VFS_SP_PROC},
                {false, "self/status", 0, "/proc/100/status", true, VFS_SP_PROC},
                {false, "thread-self/comm", 0, "/proc/100/task/101/comm", true, VFS_SP_PROC},
                {false, "101/task/101", 0, "/proc/101/task/101", true, VFS_SP_PROC},
                {false, "1/cmdline", -ENOENT},
                {false, "0", -ENOENT},
                {false, "0100/cmdline", 0, "/proc/0100/cmdline", false, VFS_SP_PROC},
                {false, "self/../1/environ", -ENOENT},
                {false, "100/../../1", -ENOENT},
                {false, "../../1/cmdline", -ENOENT},
                {false, ".//./self/./fd/3", 0, "/proc/100/fd/3", true, VFS_SP_PROC},
                {false, "cpuinfo", 0, "/proc/cpuinfo", false, VFS_SP_PROC},
                {false, "sys/kernel/hostname", 0, "/proc/sys/kernel/hostname", false, VFS_SP_PROC},
                {false, "selfish", 0, "/proc/selfish", false, VFS_SP_PROC},
                {true, "", 0, "/dev", false, VFS_SP_DEV},
                {true, "null", 0, "/dev/null", false, VFS_SP_DEV},
                {true, "./urandom", 0, "/dev/urandom", false, VFS_SP_DEV},
                {true, "tty", 0, "/dev/tty", false, VFS_SP_TTY},
                {true, "pts/7", 0, "/dev/pts/7", false, VFS_SP_DEV},
                {true, "pts/0", -ENOENT},
                {true, "pts/../pts/0", -ENOENT},
                {true, "pts/07", -ENOENT},
                {true, "sda", -ENOENT},
                {true, "mem", -ENOENT},
                {true, "../etc/passwd", -ENOENT},
                {true, "shm/x/y", 0, "/dev/shm/x/y", false, VFS_SP_DEV},
                {true, "stdout", 0, "/proc/100/fd/1", true, VFS_SP_PROC},
                {true, "fd/63", 0, "/proc/100/fd/63", true, VFS_SP_PROC},
                {true, "fd/../../1/cmdline", -ENOENT},
        };
        struct vfs_special_ctx ctx = {
                .tgid = 100, .tid = 101, .in_tree = sp_in_tree, .pts_allowed = sp_pts};
        struct vfs_special_ctx private_shm = ctx;
        struct vfs_special shm_sp;

        private_shm.shm = "/dev/shm/stockade-x/shm";
        assert_int_equal(vfs_dev_map("shm/sem.a", &private_shm, &shm_sp), 0);
        assert_string_equal(shm_sp.host, "/dev/shm/stockade-x/shm/sem.a");
        assert_int_equal(shm_sp.kind, VFS_SP_SHM);
        assert_int_equal(vfs_dev_map("shm/../shm", &private_shm, &shm_sp), 0);
        assert_string_equal(shm_sp.host, "/dev/shm/stockade-x/shm");
        assert_int_equal(vfs_dev_map("shmx", &private_shm, &shm_sp), -ENOENT);

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct vfs_special sp;
                int r = cases[i].dev ? vfs_dev_map(cases[i].rest, &ctx, &sp)
                                     : vfs_proc_map(cases[i].rest, &ctx, &sp);

                if (r != cases[i].err)
                        fail_msg("%s \"%s\": %d, want %d", cases[i].dev ? "dev" : "proc",
                                 cases[i].rest, r, cases[i].err);
                if (r < 0)
                        continue;
                if (strcmp(sp.host, cases[i].host) != 0 || sp.process != cases[i].process ||
                    sp.kind != cases[i].kind)
                        fail_msg("\"%s\": %s (process %d, kind %d), want %s", cases[i].rest,
                                 sp.host, sp.process, sp.kind, cases[i].host);
        }
}

/* The hidden-entry index answers as a walk of the table would: the first entry, in table
 * order, that hides the path, each pattern matched by fnmatch alone (no literal head). Random
 * tables of exact paths (repeated ones among them, some with exceptions), patterns of every
 * depth and visible mounts, asked about random paths. A pattern that hides a path may hide
 * a child of its parent (vfs_mount_pattern_in, which spares other listings the filter). */
static const struct vfs_mount *linear_hidden(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_mounts; i++) {
                struct vfs_mount m = v->mounts[i];

                m.literal = 0;
                if (vfs_mount_hides(&m, path)) {
                        char parent[64];
                        const char *slash = strrchr(path, '/');

                        snprintf(parent, sizeof(parent), "%.*s",
                                 slash == path ? 1 : (int)(slash - path), path);
                        if (m.pattern && !vfs_mount_pattern_in(&m, parent))
                                fail_msg("%s hides %s, not in %s", m.sandbox, path, parent);
                        return &v->mounts[i];
                }
        }
        return NULL;
}

static void hidden_index_agrees(void **state)
{
        static const char *const parts[] = {"a", "b", "c", "*", "?", "[ab]", ".x", "a*"};
        unsigned seed = 12345;

        (void)state;
        for (int round = 0; round < 200; round++) {
                struct vfs_view v = {0};

                for (int e = 0; e < 40; e++) {
                        char path[64] = "";
                        int depth = 1 + (int)(rand_r(&seed) % 4);
                        bool pattern = rand_r(&seed) % 4 == 0, visible = rand_r(&seed) % 5 == 0;
                        struct vfs_mount m;

                        for (int d = 0; d < depth; d++)
                                snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s",
                                         parts[rand_r(&seed) % (pattern ? 8 : 3)]);
                        assert_int_equal(vfs_mount_init(&m, visible ? VFS_RO : VFS_HIDDEN, path,
                                                        visible ? "/" : NULL, "test"),
                                         0);
                        if (!visible && rand_r(&seed) % 6 == 0)
                                m.except = xstrdup("/a/b");
                        vfs_view_add(&v, &m);
                }
                for (int q = 0; q < 200; q++) {
                        char path[64] = "";
                        int depth = (int)(rand_r(&seed) % 5);

                        for (int d = 0; d < depth; d++)
                                snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s",
                                         parts[rand_r(&seed) % 3]);
                        if (!depth)
                                strcpy(path, "/");
                        if (vfs_view_hidden(&v, path) != linear_hidden(&v, path))
                                fail_msg("round %d: %s: the index and the table disagree", round,
                                         path);
                }
                vfs_view_free(&v);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(parse_specs),
                cmocka_unit_test(parse_errors),
                cmocka_unit_test(open_errors),
                cmocka_unit_test(find_mounts),
                cmocka_unit_test(resolve_table),
                cmocka_unit_test(resolve_no_root),
                cmocka_unit_test(resolve_limits),
                cmocka_unit_test(resolve_create),
                cmocka_unit_test(resolve_create_mounts),
                cmocka_unit_test(native_agrees),
                cmocka_unit_test(native_agrees_relative),
                cmocka_unit_test(default_view),
                cmocka_unit_test(default_view_variants),
                cmocka_unit_test(default_view_host),
                cmocka_unit_test(special_views),
                cmocka_unit_test(hidden_index_agrees),
        };
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}

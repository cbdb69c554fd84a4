/*
 * Mount entries and the parser of the mount flags' values. Paths in a spec are normalised
 * lexically here, once, because they are the user's words about the view; the paths the
 * program gives are never treated this way (see resolve.c). One exception looks at the file
 * system: a '..' is taken where the kernel would take it (vfs_path_physical_dotdot).
 */
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/error.h"
#include "supervisor/util.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {
        [VFS_RO] = "ro",   [VFS_RW] = "rw",   [VFS_TMP] = "tmp",   [VFS_HIDDEN] = "hidden",
        [VFS_COW] = "cow", [VFS_DEV] = "dev", [VFS_PROC] = "proc",
};

static const char *const mode_flags[] = {
        [VFS_RO] = "--ro",   [VFS_RW] = "--rw", [VFS_TMP] = "--tmp", [VFS_HIDDEN] = "--hide",
        [VFS_COW] = "--cow", [VFS_DEV] = NULL,  [VFS_PROC] = NULL,
};

const char *vfs_mount_mode_name(enum vfs_mode mode)
{
        return (unsigned)mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "?";
}

/* Where a path of a spec starts: "~" and "~/x" at home, a relative path at cwd. */
static int spec_base(const char **base, const char *path, const char *cwd, const char *home,
                     const char *what, struct error *err)
{
        *base = NULL;
        if (path[0] == '/')
                return 0;
        if (path[0] == '~' && path[1] != '\0' && path[1] != '/')
                return make_error(err, 0, "%s: only ~ and ~/ are expanded, not ~user", what);
        if (path[0] == '~') {
                if (!home || !home[0])
                        return make_error(err, 0, "%s: ~ needs HOME, which is not set", what);
                if (home[0] != '/')
                        return make_error(err, 0, "%s: HOME `%s` is not absolute", what, home);
                *base = home;
                return 0;
        }
        if (!cwd || cwd[0] != '/')
                return make_error(err, 0,
                                  "%s: a relative path needs an absolute working "
                                  "directory",
                                  what);
        *base = cwd;
        return 0;
}

/*
 * A '..' in a path the user wrote means what the kernel makes of it: the parent of where the
 * part before it leads, not that part's lexical parent (an outside review hid
 * `~/lnk/../secret.txt`, ~/lnk a symlink elsewhere: the view hid ~/secret.txt and the kernel
 * opened the other one; `--ro ./lnk/../data` kept the wrong directory read-only). So the
 * part up to the last '..' is resolved by realpath(3) where it exists; where it does not,
 * nothing can be reached by that spelling now, and the lexical reading stands (what it names
 * is judged through its real path later, walls_real.c). `path` is absolute.
 */
void vfs_path_physical_dotdot(char *path, size_t size)
{
        char real[PATH_MAX], head[2 * PATH_MAX], *end = NULL;

        for (char *c = path; (c = strstr(c, "/..")); c += 3)
                if (c[3] == '\0' || c[3] == '/')
                        end = c + 3;
        if (!end || (size_t)(end - path) >= sizeof(head))
                return;
        memcpy(head, path, (size_t)(end - path));
        head[end - path] = '\0';
        if (realpath(head, real) && strlen(real) + strlen(end) < size) {
                memmove(path + strlen(real), end, strlen(end) + 1);
                memcpy(path, real, strlen(real));
        }
}

/* Expand and normalise one path of a spec into out[PATH_MAX]. `which` is "host" or "sandbox". */
static int spec_path(char *out, const char *path, const char *cwd, const char *home, bool physical,
                     const char *what, const char *which, struct error *err)
{
        char joined[2 * PATH_MAX];
        const char *base;

        if (!path[0])
                return make_error(err, 0, "%s: empty %s path", what, which);
        if (spec_base(&base, path, cwd, home, what, err) < 0)
                return -1;
        int n = snprintf(joined, sizeof(joined), "%s/%s", base ? base : "",
                         path[0] == '~' ? path + 1 : path);
        if (physical && n >= 0 && (size_t)n < sizeof(joined))
                vfs_path_physical_dotdot(joined, sizeof(joined));
        if (n < 0 || (size_t)n >= sizeof(joined) || vfs_path_normalize(out, PATH_MAX, joined) < 0)
                return make_error(err, 0, "%s: %s path longer than PATH_MAX", what, which);
        return 0;
}

/* Split HOST[:SANDBOX] (first ':') into the two buffers; SANDBOX defaults to HOST. */
static int spec_split(char *host, char *sandbox, const char *spec, const char *what,
                      struct error *err)
{
        const char *colon = strchr(spec, ':');
        size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

        if (n >= PATH_MAX || (colon && strlen(colon + 1) >= PATH_MAX))
                return make_error(err, 0, "%s: path longer than PATH_MAX", what);
        memcpy(host, spec, n);
        host[n] = '\0';
        if (colon && !colon[1])
                return make_error(err, 0, "%s: empty sandbox path after ':'", what);
        strcpy(sandbox, colon ? colon + 1 : host);
        return 0;
}

static bool is_pattern(const char *s)
{
        return strpbrk(s, "*?[\\") != NULL;
}

static int parse(struct vfs_mount *m, const char *spec, enum vfs_mode mode, const char *cwd,
                 const char *home, bool physical, struct error *err)
{
        const char *flag = (unsigned)mode < ARRAY_SIZE(mode_flags) ? mode_flags[mode] : NULL;
        char what[PATH_MAX + 32], host[PATH_MAX], sandbox[PATH_MAX];
        char host_abs[PATH_MAX], sandbox_abs[PATH_MAX];
        bool with_host = mode == VFS_RO || mode == VFS_RW || mode == VFS_COW;

        *m = (struct vfs_mount){.host_fd = -1};
        if (!flag)
                return make_error(err, 0, "a %s mount has no flag", vfs_mount_mode_name(mode));
        /* Quote at most 200 bytes of the spec, so the reason after it always fits. */
        snprintf(what, sizeof(what), "%s `%.200s%s`", flag, spec, strlen(spec) > 200 ? "..." : "");
        if (!spec[0])
                return make_error(err, 0, "%s: empty path", what);
        if (with_host) {
                if (spec_split(host, sandbox, spec, what, err) < 0 ||
                    spec_path(host_abs, host, cwd, home, physical, what, "host", err) < 0)
                        return -1;
        } else if (strlen(spec) >= PATH_MAX) {
                return make_error(err, 0, "%s: path longer than PATH_MAX", what);
        } else {
                strcpy(sandbox, spec);
        }
        if (spec_path(sandbox_abs, sandbox, cwd, home, physical, what, "sandbox", err) < 0)
                return -1;
        if (mode == VFS_HIDDEN && strcmp(sandbox_abs, "/") == 0)
                return make_error(err, 0, "%s: hiding / would leave nothing to run", what);
        m->sandbox = xstrdup(sandbox_abs);
        m->host = with_host ? xstrdup(host_abs) : NULL;
        m->mode = mode;
        m->pattern = mode == VFS_HIDDEN && is_pattern(sandbox_abs);
        snprintf(what, sizeof(what), "%s %s", flag, spec);
        m->origin = xstrdup(what);
        return 0;
}

int vfs_mount_init(struct vfs_mount *m, enum vfs_mode mode, const char *sandbox, const char *host,
                   const char *origin)
{
        char buf[PATH_MAX];
        int r;

        *m = (struct vfs_mount){.host_fd = -1, .mode = mode};
        r = vfs_path_normalize(buf, sizeof(buf), sandbox);
        if (r < 0)
                return r;
        m->sandbox = xstrdup(buf);
        m->pattern = mode == VFS_HIDDEN && is_pattern(buf);
        if (host) {
                r = vfs_path_normalize(buf, sizeof(buf), host);
                if (r < 0) {
                        vfs_mount_free(m);
                        return r;
                }
                m->host = xstrdup(buf);
        }
        m->origin = xstrdup(origin);
        return 0;
}

int vfs_mount_init_literal(struct vfs_mount *m, enum vfs_mode mode, const char *sandbox,
                           const char *host, const char *origin)
{
        int r = vfs_mount_init(m, mode, sandbox, host, origin);

        if (r == 0)
                m->pattern = false;
        return r;
}

/* Copy the next component of *p into buf[PATH_MAX] and advance; false at the end. */
static bool next_component(const char **p, char *buf)
{
        while (**p == '/')
                (*p)++;
        size_t n = strcspn(*p, "/");
        if (n == 0)
                return false;
        n = n < PATH_MAX ? n : PATH_MAX - 1;
        memcpy(buf, *p, n);
        buf[n] = '\0';
        *p += strcspn(*p, "/");
        return true;
}

static bool pattern_matches(const char *pattern, const char *path)
{
        char pc[PATH_MAX], c[PATH_MAX];
        const char *p = pattern, *q = path;

        for (;;) {
                bool more_p = next_component(&p, pc), more_q = next_component(&q, c);
                if (!more_p || !more_q)
                        return more_p == more_q;
                if (fnmatch(pc, c, 0) != 0)
                        return false;
        }
}

bool vfs_mount_hides(const struct vfs_mount *m, const char *path)
{
        if (m->mode != VFS_HIDDEN)
                return false;
        if (m->pattern && strncmp(m->sandbox, path, m->literal) != 0)
                return false; /* /sys/class/net/ * against /usr/...: no fnmatch */
        if (!(m->pattern ? pattern_matches(m->sandbox, path) : strcmp(m->sandbox, path) == 0))
                return false;
        /* The exception and its ancestors stay: a pattern over all homes keeps the own. */
        return !(m->except && vfs_path_has_prefix(m->except, path));
}

bool vfs_mount_pattern_in(const struct vfs_mount *m, const char *dir)
{
        const char *slash = strrchr(m->sandbox, '/');
        char parent[PATH_MAX];

        if (!slash || slash == m->sandbox)
                return strcmp(dir, "/") == 0;
        snprintf(parent, sizeof(parent), "%.*s", (int)(slash - m->sandbox), m->sandbox);
        return pattern_matches(parent, dir);
}

void vfs_mount_free(struct vfs_mount *m)
{
        free(m->sandbox);
        free(m->host);
        free(m->except);
        free(m->origin);
        if (m->host_fd >= 0)
                close(m->host_fd);
        if (m->emulated && m->upper_fd >= 0) /* upper_fd is 0 where a mount is not merged */
                close(m->upper_fd);
        *m = (struct vfs_mount){.host_fd = -1};
}

int vfs_mount_parse(struct vfs_mount *m, const char *spec, enum vfs_mode mode, const char *cwd,
                    const char *home, struct error *err)
{
        return parse(m, spec, mode, cwd, home, true, err);
}

int vfs_mount_parse_lexical(struct vfs_mount *m, const char *spec, enum vfs_mode mode,
                            const char *cwd, const char *home, struct error *err)
{
        return parse(m, spec, mode, cwd, home, false, err);
}

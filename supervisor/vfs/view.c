/*
 * The mount table. The handlers ask it several times for each component of every path they
 * judge, and the default view holds about a hundred hidden entries (default.c), so the
 * hidden entries are indexed (a binary search for the exact ones, the few patterns by
 * depth) and the look-ups for mounts pass over them (view.h).
 */
#include "supervisor/vfs/view.h"
#include "supervisor/vfs/path.h"
#include "supervisor/error.h"
#include "supervisor/util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_visible_mount(const struct vfs_mount *m)
{
        return m->mode != VFS_HIDDEN;
}

/* The number of components, as a pattern is matched (mount.c): runs between slashes. */
static size_t components(const char *p)
{
        size_t n = 0;

        for (;;) {
                while (*p == '/')
                        p++;
                if (!*p)
                        return n;
                n++;
                p += strcspn(p, "/");
        }
}

/* Index mount k, the last added (view.h): visible mounts and patterns in table order, exact
 * hidden entries sorted by path and, for equal paths, by index (k is the largest, so it goes
 * after its equals). A sorted insertion: a view is made of a few hundred adds, each of which
 * used to sort the whole index again (~2 ms of every start). */
static void index_one(struct vfs_view *v, size_t k)
{
        const char *path = v->mounts[k].sandbox;
        size_t lo = 0, hi = v->n_exact;

        v->exact = xrealloc(v->exact, v->n_mounts * sizeof(*v->exact));
        v->patterns = xrealloc(v->patterns, v->n_mounts * sizeof(*v->patterns));
        v->visible = xrealloc(v->visible, v->n_mounts * sizeof(*v->visible));
        if (is_visible_mount(&v->mounts[k])) {
                v->visible[v->n_visible++] = k;
                return;
        }
        if (v->mounts[k].pattern) {
                v->patterns[v->n_patterns++] = k;
                return;
        }
        while (lo < hi) { /* the first entry whose path sorts after `path` */
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(v->mounts[v->exact[mid]].sandbox, path) <= 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        memmove(v->exact + lo + 1, v->exact + lo, (v->n_exact - lo) * sizeof(*v->exact));
        v->exact[lo] = k;
        v->n_exact++;
}

/* The literal head of a pattern (mount.h): up to the '/' before its first wildcard. */
static size_t literal_head(const char *pattern)
{
        size_t n = strcspn(pattern, "*?[\\");

        while (n > 0 && pattern[n - 1] != '/')
                n--;
        return n;
}

void vfs_view_add(struct vfs_view *v, struct vfs_mount *m)
{
        m->len = strlen(m->sandbox);
        m->depth = components(m->sandbox);
        m->literal = m->pattern ? literal_head(m->sandbox) : 0;
        for (size_t i = 0; i < v->n_mounts && is_visible_mount(m); i++) {
                struct vfs_mount *old = &v->mounts[i];
                if (is_visible_mount(old) && strcmp(old->sandbox, m->sandbox) == 0) {
                        /* In place: still a visible mount at index i, as indexed. */
                        vfs_mount_free(old);
                        *old = *m;
                        *m = (struct vfs_mount){.host_fd = -1};
                        return;
                }
        }
        v->mounts = xrealloc(v->mounts, (v->n_mounts + 1) * sizeof(*v->mounts));
        v->mounts[v->n_mounts++] = *m;
        *m = (struct vfs_mount){.host_fd = -1};
        index_one(v, v->n_mounts - 1);
}

/*
 * Asked for every component of every path the handlers judge, over a table that holds a
 * hundred hidden entries (default.c): the exact entries are found by a binary search of
 * the index, and a pattern of another depth (matched component by component) is passed
 * over. The answer is the one a walk of the table would give: the first entry in table
 * order that hides the path (equal paths are sorted by index).
 */
const struct vfs_mount *vfs_view_hidden(const struct vfs_view *v, const char *path)
{
        size_t lo = 0, hi = v->n_exact, best = SIZE_MAX, depth = components(path);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(v->mounts[v->exact[mid]].sandbox, path) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < v->n_exact && strcmp(v->mounts[v->exact[lo]].sandbox, path) == 0; lo++)
                if (vfs_mount_hides(&v->mounts[v->exact[lo]], path)) {
                        best = v->exact[lo];
                        break;
                }
        for (size_t i = 0; i < v->n_patterns && v->patterns[i] < best; i++) {
                const struct vfs_mount *m = &v->mounts[v->patterns[i]];

                if (m->depth == depth && vfs_mount_hides(m, path)) {
                        best = v->patterns[i];
                        break;
                }
        }
        return best == SIZE_MAX ? NULL : &v->mounts[best];
}

const struct vfs_mount *vfs_view_mount_at(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_visible; i++)
                if (strcmp(v->mounts[v->visible[i]].sandbox, path) == 0)
                        return &v->mounts[v->visible[i]];
        return NULL;
}

bool vfs_view_above_mount(const struct vfs_view *v, const char *path)
{
        for (size_t i = 0; i < v->n_visible; i++) {
                const struct vfs_mount *m = &v->mounts[v->visible[i]];
                if (strcmp(m->sandbox, path) != 0 && vfs_path_has_prefix(m->sandbox, path))
                        return true;
        }
        return false;
}

const struct vfs_mount *vfs_view_mount_of(const struct vfs_view *v, const char *path)
{
        const struct vfs_mount *best = NULL;

        for (size_t i = 0; i < v->n_visible; i++) {
                const struct vfs_mount *m = &v->mounts[v->visible[i]];
                if ((!best || m->len > best->len) && vfs_path_has_prefix(path, m->sandbox))
                        best = m;
        }
        return best;
}

bool vfs_mount_remapped(const struct vfs_mount *m)
{
        return (m->mode == VFS_RO || m->mode == VFS_RW || m->mode == VFS_COW) && m->host &&
               strcmp(m->host, m->sandbox) != 0;
}

bool vfs_view_host_path(const struct vfs_view *v, const char *path, char *out, size_t size)
{
        const struct vfs_mount *m = vfs_view_mount_of(v, path);
        const char *rest = path;
        int n;

        if (m && vfs_mount_remapped(m)) {
                rest = path + (strcmp(m->sandbox, "/") == 0 ? 0 : strlen(m->sandbox));
                n = snprintf(out, size, "%s%s", strcmp(m->host, "/") || !*rest ? m->host : "",
                             rest);
        } else {
                n = snprintf(out, size, "%s", path);
        }
        return n >= 0 && (size_t)n < size;
}

const struct vfs_mount *vfs_view_hidden_above(const struct vfs_view *v, const char *path)
{
        char prefix[PATH_MAX];
        size_t len = strlen(path);

        if (len >= sizeof(prefix))
                return NULL;
        /* "/", "/a", "/a/b", ... */
        for (size_t i = 1; i <= len; i++) {
                if (i < len && path[i] != '/')
                        continue;
                memcpy(prefix, path, i);
                prefix[i] = '\0';
                const struct vfs_mount *h = vfs_view_hidden(v, prefix);
                if (h)
                        return h;
        }
        return NULL;
}

const struct vfs_mount *vfs_view_find(const struct vfs_view *v, const char *path)
{
        const struct vfs_mount *h;

        if (strlen(path) >= PATH_MAX)
                return NULL;
        /* Hidden wins, before any prefix match. */
        h = vfs_view_hidden_above(v, path);
        return h ? h : vfs_view_mount_of(v, path);
}

/* A tmp mount's host directory: the one named, or a fresh one under `scratch`. */
static int open_tmp_dir(struct vfs_mount *m, const char *scratch, struct error *err)
{
        char dir[PATH_MAX];

        if (m->host) {
                if (mkdir(m->host, 0700) < 0 && errno != EEXIST)
                        return make_error(err, errno, "%s: cannot create `%s`", m->origin, m->host);
                return 0;
        }
        if (!scratch)
                return make_error(err, 0, "%s: no scratch directory for a tmp mount", m->origin);
        if (snprintf(dir, sizeof(dir), "%s/tmp-XXXXXX", scratch) >= (int)sizeof(dir))
                return make_error(err, 0, "%s: scratch path too long", m->origin);
        if (!mkdtemp(dir))
                return make_error(err, errno, "%s: cannot create a directory in `%s`", m->origin,
                                  scratch);
        if (vfs_path_normalize(dir, sizeof(dir), dir) < 0) /* scratch may end in '/' */
                return make_error(err, 0, "%s: scratch path too long", m->origin);
        m->host = xstrdup(dir);
        return 0;
}

static int open_mount(struct vfs_mount *m, const char *scratch, struct error *err)
{
        switch (m->mode) {
        case VFS_HIDDEN:
        case VFS_DEV:
        case VFS_PROC:
                return 0;
        case VFS_TMP:
                if (open_tmp_dir(m, scratch, err) < 0)
                        return -1;
                break;
        case VFS_RO:
        case VFS_RW:
        case VFS_COW: /* the lower; the run reopens it in its namespace, as the overlay */
                break;
        }
        /* The user's own path, so symlinks in it are followed, once: from here on the mount
         * is this inode, wherever the host moves it (like a bind mount). */
        m->host_fd = open(m->host, O_PATH | O_CLOEXEC);
        if (m->host_fd < 0 && errno == ENOENT)
                return make_error(err, 0, "%s: host path `%s` does not exist", m->origin, m->host);
        if (m->host_fd < 0)
                return make_error(err, errno, "%s: cannot open host path `%s`", m->origin, m->host);
        return 0;
}

int vfs_view_open(struct vfs_view *v, const char *scratch, struct error *err)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].host_fd < 0 && open_mount(&v->mounts[i], scratch, err) < 0)
                        return -1;
        return 0;
}

void vfs_view_free(struct vfs_view *v)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                vfs_mount_free(&v->mounts[i]);
        free(v->mounts);
        free(v->exact);
        free(v->patterns);
        free(v->visible);
        *v = (struct vfs_view){0};
}

/*
 * What the host had, noted for apply (cow.h): the first time a run is about to change a path
 * beneath a copy-on-write mount, the lower's size, mtime and content hash go to the mount's
 * journal, once per path (the set of noted paths, loaded from the journal when a session is
 * continued).
 */
#include "supervisor/cow.h"
#include "supervisor/cow_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

/* ---- the set of noted paths -------------------------------------------------------------- */

static size_t str_hash(const char *s)
{
        size_t h = 1469598103934665603ULL;

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

static bool noted_has(const struct cow_mount *m, const char *rel)
{
        if (!m->cap_noted)
                return false;
        for (size_t i = str_hash(rel) & (m->cap_noted - 1);; i = (i + 1) & (m->cap_noted - 1)) {
                if (!m->noted[i])
                        return false;
                if (strcmp(m->noted[i], rel) == 0)
                        return true;
        }
}

void cow_noted_put(struct cow_mount *m, const char *rel)
{
        if ((m->n_noted + 1) * 2 > m->cap_noted) {
                size_t cap = m->cap_noted ? m->cap_noted * 2 : 256;
                char **v = xcalloc(cap, sizeof(*v));

                for (size_t i = 0; i < m->cap_noted; i++) {
                        size_t j;

                        if (!m->noted[i])
                                continue;
                        for (j = str_hash(m->noted[i]) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
                                ;
                        v[j] = m->noted[i];
                }
                free(m->noted);
                m->noted = v;
                m->cap_noted = cap;
        }
        for (size_t i = str_hash(rel) & (m->cap_noted - 1);; i = (i + 1) & (m->cap_noted - 1))
                if (!m->noted[i]) {
                        m->noted[i] = xstrdup(rel);
                        m->n_noted++;
                        return;
                }
}

void cow_noted_free(struct cow_mount *m)
{
        for (size_t k = 0; k < m->cap_noted; k++)
                free(m->noted[k]);
        free(m->noted);
        m->noted = NULL;
        m->n_noted = m->cap_noted = 0;
}

/* ---- during the run ---------------------------------------------------------------------- */

/* The cow mount `path` (a sandbox path) lies in, with the relative rest; NULL if none or
 * the mount's root itself. */
static struct cow_mount *find(struct cow_state *c, const char *path, const char **rel)
{
        const struct vfs_mount *vm = c->view ? vfs_view_mount_of(c->view, path) : NULL;

        if (vm && vfs_mount_remapped(vm) && vm->mode != VFS_COW)
                return NULL; /* a --ro/--rw HOST:SANDBOX bound in a cow mount */
        for (size_t i = 0; i < c->n; i++) {
                size_t n = strlen(c->m[i].sandbox);

                if (n == 1 && path[0] == '/' && path[1]) { /* a cow mount at / */
                        *rel = path + 1;
                        return &c->m[i];
                }
                if (strncmp(path, c->m[i].sandbox, n) == 0 && path[n] == '/' && path[n + 1]) {
                        *rel = path + n + 1;
                        return &c->m[i];
                }
        }
        return NULL;
}

bool cow_covers(struct supervisor *sup, const char *path)
{
        const char *rel;

        return find(&sup->cow, path, &rel) != NULL;
}

static void note(struct cow_state *c, const char *path)
{
        const char *rel;
        struct cow_mount *m = find(c, path, &rel);
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        struct journal_rec rec;
        int fd;

        if (!m)
                return;
        pthread_mutex_lock(&c->lock);
        if (noted_has(m, rel))
                goto out;
        fd = sys_openat2(m->lower_fd, rel, &how);
        if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        cow_noted_put(m, rel); /* not in the lower: nothing to keep */
                goto out;
        }
        if (journal_describe(fd, rel, &rec) == 0) {
                if (journal_append(m->journal_fd, &rec) == 0)
                        cow_noted_put(m, rel);
                journal_rec_free(&rec);
        }
        close(fd);
out:
        pthread_mutex_unlock(&c->lock);
}

void cow_note_path(struct supervisor *sup, const char *path)
{
        if (sup->cow.n)
                note(&sup->cow, path);
}

static bool fd_path(int fd, char *out, size_t size)
{
        char proc[48];
        ssize_t n;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, out, size - 1);
        if (n <= 0 || (size_t)n >= size - 1 || out[0] != '/')
                return false;
        out[n] = '\0';
        /* an unlinked object has no path to note */
        return !(n > 10 && strcmp(out + n - 10, " (deleted)") == 0);
}

void cow_note_fd(struct supervisor *sup, int fd)
{
        char path[PATH_MAX];

        if (sup->cow.n && fd_path(fd, path, sizeof(path)))
                note(&sup->cow, path);
}

void cow_note_at(struct supervisor *sup, int dirfd, const char *name)
{
        char path[PATH_MAX], last[PATH_MAX];
        size_t n, len;

        if (!sup->cow.n || !fd_path(dirfd, path, sizeof(path)))
                return;
        snprintf(last, sizeof(last), "%s", name);
        for (n = strlen(last); n > 1 && last[n - 1] == '/'; n--)
                last[n - 1] = '\0';
        if (!last[0] || strchr(last, '/') || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
                return;
        len = strlen(path);
        if (len + 1 + strlen(last) >= sizeof(path))
                return;
        snprintf(path + len, sizeof(path) - len, "%s%s", strcmp(path, "/") ? "/" : "", last);
        note(&sup->cow, path);
}

/* note() for `path` and every object the lower has beneath it (fd: that lower directory). */
static void note_lower_tree(struct cow_state *c, char *path, size_t len, int fd, int depth)
{
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        note(c, path);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        for (struct dirent *de; depth < 256 && (de = readdir(d));) {
                size_t n = strlen(de->d_name);
                int child;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    len + 1 + n >= PATH_MAX)
                        continue;
                snprintf(path + len, PATH_MAX - len, "/%s", de->d_name);
                child = de->d_type == DT_DIR
                                ? openat(dirfd(d), de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                : -1;
                note_lower_tree(c, path, len + 1 + n, child, depth + 1);
                path[len] = '\0';
        }
        closedir(d);
}

void cow_note_tree_at(struct supervisor *sup, int dirfd, const char *name)
{
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        char path[PATH_MAX], last[NAME_MAX + 2];
        const char *rel;
        struct cow_mount *m;
        size_t n;
        int fd;

        /* "dir/" as the program wrote it (pip does): the name without its slashes */
        n = strcspn(name, "/");
        if (!sup->cow.n || !n || n > NAME_MAX || name[n + strspn(name + n, "/")] ||
            !fd_path(dirfd, path, sizeof(path)) || strlen(path) + 2 + n >= sizeof(path))
                return;
        memcpy(last, name, n);
        last[n] = '\0';
        snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s",
                 strcmp(path, "/") ? "/" : "", last);
        m = find(&sup->cow, path, &rel);
        if (!m)
                return;
        fd = sys_openat2(m->lower_fd, rel, &how);
        note_lower_tree(&sup->cow, path, strlen(path), fd, 0);
}

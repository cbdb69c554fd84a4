/*
 * /proc/PID/mountinfo with remapped mounts (--ro HOST:SANDBOX, supervisor/remap.c) or private
 * directories (the default /tmp, --tmp, /dev/shm: a directory of the scratch bound there,
 * shim/mntns.c), whose lines name the scratch's host path as their root the same way: the line
 * of the bind at SANDBOX names, in its fourth field, the directory of its file system that it
 * shows: HOST's place there, a host path the program must not learn (DESIGN.md). The program
 * gets a sealed memfd in which that field is the mount point instead, as if SANDBOX were
 * bound from itself; and where HOST is hidden at its own path, the masks at or beneath it,
 * which name it as their mount point, are left out of it, of /proc/PID/mounts and of
 * mountstats. Whatever way the file was opened (a path, /proc/self/..., a reopen through
 * /proc/self/fd/N): judged by the file an open found, as the /proc/net view is
 * (fs_procnet.c).
 */
#include "syscalls/fs_common.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/view.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Which of /proc/PID[/task/TID]/{mountinfo,mounts,mountstats} the host path is: the number
 * of the field that holds the mount point (5, 2, 5), or 0 for none. */
static int mount_table(const char *path)
{
        const char *p = fs_proc_task_rest(path);

        if (!p)
                return 0;
        if (strcmp(p, "/mountinfo") == 0 || strcmp(p, "/mountstats") == 0)
                return 5;
        return strcmp(p, "/mounts") == 0 ? 2 : 0;
}

/* A mountinfo field (octal escapes: \040 for a space) undone into out[PATH_MAX]. */
static bool unescape(const char *f, size_t len, char *out)
{
        size_t w = 0;

        for (size_t r = 0; r < len; w++) {
                if (w + 1 >= PATH_MAX)
                        return false;
                if (f[r] == '\\' && r + 3 < len && f[r + 1] >= '0' && f[r + 1] <= '7') {
                        out[w] = (char)(((f[r + 1] - '0') << 6) | ((f[r + 2] - '0') << 3) |
                                        (f[r + 3] - '0'));
                        r += 4;
                } else {
                        out[w] = f[r++];
                }
        }
        out[w] = '\0';
        return true;
}

enum line_fate { LINE_KEEP, LINE_ROOT_IS_POINT, LINE_DROP };

/* A remap's SANDBOX, a private directory, /dev/shm: its root becomes its mount point. At or
 * beneath a HOST hidden at its own path (remap.c, hide_source): the masks there, which would
 * name it, are left out. */
static enum line_fate fate(const struct supervisor *sup, const char *point)
{
        if (sup->private_binds && strcmp(point, "/dev/shm") == 0)
                return LINE_ROOT_IS_POINT;
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *m = &sup->view.mounts[i], *h;

                if (m->mode == VFS_TMP && sup->private_binds && strcmp(point, m->sandbox) == 0)
                        return LINE_ROOT_IS_POINT;

                if (!vfs_mount_remapped(m))
                        continue;
                if (strcmp(point, m->sandbox) == 0)
                        return LINE_ROOT_IS_POINT;
                if (vfs_path_has_prefix(point, m->host) &&
                    (h = vfs_view_hidden(&sup->view, m->host)) && h->alias)
                        return LINE_DROP;
        }
        return LINE_KEEP;
}

/* One line of a table whose mount point is field `pf`, into out: as fate() says (only
 * mountinfo has a root field). */
static size_t one_line(const struct supervisor *sup, int pf, const char *line, size_t len,
                       char *out)
{
        const char *f[6];
        char point[PATH_MAX];
        enum line_fate what = LINE_KEEP;
        size_t k = 0;

        /* Fields 1-5: id, parent, major:minor, root, mount point. */
        for (size_t i = 0; i < len && k < 6; i++)
                if (i == 0 || (line[i - 1] == ' ' && line[i] != ' '))
                        f[k++] = line + i;
        if (k > (size_t)pf && unescape(f[pf - 1], (size_t)(f[pf] - f[pf - 1]) - 1, point))
                what = fate(sup, point);
        if (what == LINE_DROP)
                return 0;
        if (what == LINE_KEEP || pf != 5 || k < 6) {
                memcpy(out, line, len);
                return len;
        }
        /* id parent dev ROOT POINT rest: ROOT becomes POINT */
        size_t head = (size_t)(f[3] - line), pl = (size_t)(f[5] - f[4]);
        size_t rest = len - (size_t)(f[4] - line);

        memcpy(out, line, head);
        memcpy(out + head, f[4], pl);
        memcpy(out + head + pl, f[4], rest);
        return head + pl + rest;
}

int fs_mountinfo_view(const struct supervisor *sup, int flags, int fd, const struct stat *st)
{
        char path[PATH_MAX], *in = NULL, *out;
        size_t used = 0;
        int table;
        ssize_t n;
        int r;

        if (!(sup->remapped || sup->private_binds) || !fs_proc_file(sup, fd, st, path))
                return fd;
        table = mount_table(path);
        if (!table)
                return fd;
        if ((flags & O_ACCMODE) != O_RDONLY) {
                close(fd);
                return -EACCES;
        }
        n = fs_slurp(fd, &in);
        close(fd);
        if (n < 0)
                return (int)n;
        /* A line grows by at most its own mount point: twice the input is room enough. */
        out = xrealloc(NULL, 2 * (size_t)n + 1);
        for (size_t at = 0; at < (size_t)n;) {
                const char *nl = memchr(in + at, '\n', (size_t)n - at);
                size_t len = nl ? (size_t)(nl - (in + at)) + 1 : (size_t)n - at;

                used += one_line(sup, table, in + at, len, out + used);
                at += len;
        }
        r = fs_sealed_memfd(strrchr(path, '/') + 1, out, used);
        free(in);
        free(out);
        return r;
}

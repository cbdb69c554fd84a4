/*
 * getdents64 and getdents, emulated so that a listing shows the view: /proc lists only the
 * sandbox's processes, /dev only its devices and terminals, /proc/sys/net/ipv4/conf and the
 * like only lo of the host's interfaces (without a network namespace), and a directory that
 * holds a hidden entry (~/.ssh in the home) does not list it. Everything else lists as it is.
 *
 * The supervisor takes the caller's fd (pidfd_getfd: the same open file description, so the
 * directory offset is shared with the program, as a dup would share it), reads entries with
 * getdents64 on it, drops what the view does not show, and writes the rest into the caller's
 * buffer. The d_off of each kept entry is the kernel's, so telldir, seekdir and rewinddir
 * work as natively. A batch whose every entry was dropped is not returned empty (that would
 * read as the end): the next batch is read. An entry that does not fit the caller's buffer
 * (the old getdents format is a byte longer for some names) is read again next time: the
 * offset is set back to the last entry returned.
 *
 * Which filter applies is decided from our copy of the fd, never from the fd number, which
 * another thread could point elsewhere meanwhile: so even a directory that needs no filter
 * is listed by the supervisor rather than answered CONTINUE.
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/notify.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdir.h"
#include "supervisor/vfs/special.h"
#include "supervisor/vfs/view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The most read at once: a larger buffer gets fewer entries a call, which is allowed. */
#define DIR_BUF_MAX   (64u * 1024)
#define PROC_ROOT_INO 1

enum dir_filter {
        DF_NONE,
        DF_PROC,   /* /proc, or /proc/PID/task: numbers of the sandbox's tasks only */
        DF_IFACES, /* without a network namespace, beneath /proc/net and /proc/sys/net: lo
                    * alone of the host's interfaces (vfs_proc_net_hidden) */
        DF_DEV,    /* beneath /dev: what the /dev view maps */
        DF_HIDDEN, /* a directory with a hidden entry directly beneath */
        DF_ALL,    /* a directory the view does not show at all: nothing is listed */
};

struct dir_call {
        struct supervisor *sup;
        struct vfs_special_ctx ctx;
        enum dir_filter filter;
        char path[PATH_MAX]; /* the directory's sandbox path */
        size_t dev_rest;     /* DF_DEV: where the part below /dev starts in `path` */
        /* A remapped mount's root (--ro HOST:SANDBOX): its ".." entry, which the file system
         * gives as HOST's parent, gets the inode of SANDBOX's parent instead (an outside
         * attack found HOST's parent by that number). 0: as it is. */
        uint64_t dotdot_ino;
};

static bool all_digits(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

static unsigned components(const char *path)
{
        unsigned n = 0;

        for (; *path; path++)
                if (*path == '/' && path[1] && path[1] != '/')
                        n++;
        return n;
}

/* Whether a hidden entry of the view may name a child of `dir`. */
static bool may_hide_children(const struct vfs_view *v, const char *dir)
{
        size_t len = strlen(dir);
        unsigned depth = components(dir) + 1;

        if (strcmp(dir, "/") == 0)
                len = 0, depth = 1;
        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];
                const char *slash;

                if (m->mode != VFS_HIDDEN)
                        continue;
                if (m->pattern) {
                        /* of that depth, and its directories match this one: /home/ * is no
                         * reason to filter a listing of /usr */
                        if ((m->len ? m->depth : components(m->sandbox)) == depth &&
                            vfs_mount_pattern_in(m, dir))
                                return true;
                        continue;
                }
                if (m->len && m->len <= len)
                        continue; /* too short to name a child of `dir` */
                slash = strrchr(m->sandbox, '/');
                if (slash && (size_t)(slash - m->sandbox) == len &&
                    strncmp(m->sandbox, dir, len) == 0)
                        return true;
        }
        return false;
}

static int choose_filter(struct dir_call *dc, int fd, pid_t tid)
{
        struct supervisor *sup = dc->sup;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return 0; /* getdents64 says ENOTDIR */
        r = fs_base_path(sup, fd, dc->path, sizeof(dc->path));
        if (r < 0)
                return r == -ENOENT ? 0 : r; /* a directory with no path left: nothing hidden */
        if (st.st_dev != sup->proc_dev && st.st_dev != sup->dev_dev &&
            st.st_dev != sup->devpts_dev && !fs_view_shows_path(sup, dc->path)) {
                dc->filter = DF_ALL; /* hidden itself, or beneath a hidden entry */
                return 0;
        }
        if (st.st_dev == sup->proc_dev) {
                const char *task = strrchr(dc->path, '/');
                size_t n = strlen(dc->path);

                /* A path the kernel calls deleted, and that is not found again (fs_common.c,
                 * proc_undeleted): gone, and nothing to judge it by. */
                if (n > 10 && strcmp(dc->path + n - 10, " (deleted)") == 0)
                        dc->filter = DF_ALL;
                else if (st.st_ino == PROC_ROOT_INO || (task && strcmp(task, "/task") == 0))
                        dc->filter = DF_PROC;
                else if (sup->netns.chan < 0 && vfs_proc_net_dir(dc->path))
                        dc->filter = DF_IFACES;
        } else if (st.st_dev == sup->dev_dev || st.st_dev == sup->devpts_dev) {
                if (strcmp(dc->path, "/dev") == 0 || strncmp(dc->path, "/dev/", 5) == 0) {
                        dc->filter = DF_DEV;
                        dc->dev_rest = 4;
                }
        }
        if (dc->filter == DF_NONE && may_hide_children(&sup->view, dc->path))
                dc->filter = DF_HIDDEN;
        if (sup->remapped) {
                const struct vfs_mount *m = vfs_view_mount_at(&sup->view, dc->path);
                struct stat up;

                if (m && vfs_mount_remapped(m) && fstatat(fd, "..", &up, AT_SYMLINK_NOFOLLOW) == 0)
                        dc->dotdot_ino = up.st_ino;
        }
        if (dc->filter == DF_PROC || dc->filter == DF_IFACES || dc->filter == DF_DEV)
                return fs_special_ctx(sup, tid, &dc->ctx);
        return 0;
}

static bool shown(struct dir_call *dc, const char *name)
{
        char child[PATH_MAX];
        struct vfs_special sp;

        if (dc->filter != DF_ALL && (strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
                return true;
        switch (dc->filter) {
        case DF_NONE:
                return true;
        case DF_ALL:
                return false;
        case DF_PROC:
                if (all_digits(name))
                        return dc->ctx.in_tree(dc->ctx.arg, (pid_t)atol(name));
                /* /proc's own files the view leaves out (keys, sysvipc: special.c) */
                return strcmp(dc->path, "/proc") != 0 || vfs_proc_map(name, &dc->ctx, &sp) == 0;
        case DF_IFACES:
                if (snprintf(child, sizeof(child), "%s/%s", dc->path, name) >= (int)sizeof(child))
                        return false;
                return !vfs_proc_net_hidden(child, &dc->ctx);
        case DF_DEV:
                if (snprintf(child, sizeof(child), "%s/%s", dc->path + dc->dev_rest, name) >=
                    (int)sizeof(child))
                        return false;
                return vfs_dev_map(child + 1, &dc->ctx, &sp) == 0;
        case DF_HIDDEN:
                if (snprintf(child, sizeof(child), "%s/%s", strcmp(dc->path, "/") ? dc->path : "",
                             name) >= (int)sizeof(child))
                        return false;
                return !vfs_view_hidden(&dc->sup->view, child);
        }
        return false;
}

static size_t old_reclen(size_t namelen)
{
        return (offsetof(struct dirent_old, d_name) + namelen + 2 + 7) & ~(size_t)7;
}

/*
 * Read entries into `out` (`size` bytes, the caller's count capped), in the caller's
 * format. Returns the bytes filled, 0 at the end, or -errno.
 */
static long list(struct dir_call *dc, int fd, bool old, int64_t start, char *in, char *out,
                 size_t size)
{
        int64_t last_off = start; /* after the last entry taken or dropped */
        size_t filled = 0;
        long n, r = 0;

        while (filled == 0) {
                n = syscall(SYS_getdents64, fd, in, size);
                if (n <= 0) {
                        r = n < 0 ? -errno : 0;
                        break;
                }
                for (long at = 0; at < n;) {
                        struct dirent64_k *d = (struct dirent64_k *)(in + at);
                        size_t namelen = strlen(d->d_name);
                        size_t len = old ? old_reclen(namelen) : d->d_reclen;

                        at += d->d_reclen;
                        if (!shown(dc, d->d_name)) {
                                last_off = d->d_off;
                                continue;
                        }
                        if (filled + len > size) {
                                /* Read again next time, from after the last entry taken. */
                                lseek(fd, last_off, SEEK_SET);
                                if (filled == 0)
                                        r = -EINVAL; /* no room for one entry */
                                goto out;
                        }
                        if (dc->dotdot_ino && strcmp(d->d_name, "..") == 0)
                                d->d_ino = dc->dotdot_ino;
                        if (old) {
                                struct dirent_old *o = (struct dirent_old *)(out + filled);

                                o->d_ino = d->d_ino;
                                o->d_off = (unsigned long)d->d_off;
                                o->d_reclen = (unsigned short)len;
                                memcpy(o->d_name, d->d_name, namelen + 1);
                                memset(o->d_name + namelen + 1, 0,
                                       len - offsetof(struct dirent_old, d_name) - namelen - 1);
                                out[filled + len - 1] = (char)d->d_type;
                        } else {
                                /* The kernel leaves the padding after the name's NUL unwritten:
                                 * ours would be the supervisor's heap, so it is cleared. */
                                size_t used = offsetof(struct dirent64_k, d_name) + namelen + 1;

                                memcpy(out + filled, d, used);
                                memset(out + filled + used, 0, len - used);
                        }
                        filled += len;
                        last_off = d->d_off;
                }
        }
out:
        return r < 0 ? r : (long)filled;
}

/*
 * A directory of a merged copy-on-write mount (fs_cow.h): the merge of its layers, from the
 * position the caller's file offset holds (vfs/cowdir.h: a hash of the last name handed
 * out, which our copy shares with the program's fd), moved on past what is handed out.
 * Returns the bytes filled, 0 at the end, 1 in *merged when the directory is not merged
 * (and nothing filled), or -errno.
 */
static long list_merged(struct dir_call *dc, int fd, bool old, off_t start, char *out, size_t size,
                        bool *merged)
{
        const struct vfs_mount *root;
        struct cowdir d = {0};
        uint64_t next = 0;
        struct stat up;
        int upper, lower;
        long r = fs_cow_layers(dc->sup, dc->path, &upper, &lower);

        *merged = r != 0;
        if (r <= 0)
                return r;
        r = cowdir_read(upper, lower, &d);
        if (upper >= 0)
                close(upper);
        if (lower >= 0)
                close(lower);
        if (r < 0)
                return r;
        /* The mount's root: ".." is what lies above it in the view, not the session store */
        root = vfs_view_mount_at(&dc->sup->view, dc->path);
        if (d.n > 1 && root && root->host_fd >= 0 &&
            fstatat(root->host_fd, "..", &up, AT_SYMLINK_NOFOLLOW) == 0)
                d.v[1].ino = up.st_ino;
        if (dc->filter == DF_HIDDEN) {
                size_t kept = 0;

                for (size_t i = 0; i < d.n; i++)
                        if (shown(dc, d.v[i].name))
                                d.v[kept++] = d.v[i];
                d.n = kept;
        }
        r = cowdir_fill(&d, (uint64_t)start, old, out, size, &next);
        cowdir_free(&d);
        if (r > 0)
                lseek(fd, (off_t)next, SEEK_SET);
        return r;
}

/* getdents64, getdents */
int fs_dir(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        bool old = call->row - syscall_table == SC_getdents;
        size_t size = (unsigned)a[2] < DIR_BUF_MAX ? (unsigned)a[2] : DIR_BUF_MAX;
        struct dir_call dc = {.sup = sup};
        off_t start;
        char *in, *out;
        long r;
        int fd;

        fd = fs_caller_fd(tid, (int)a[0]);
        if (fd >= 0 && tmem_id_valid(sup->listener, call->req->id) < 0) {
                close(fd);
                fd = -ESRCH;
        }
        if (fd < 0) {
                call_fail(call, -fd);
                return 0;
        }
        start = lseek(fd, 0, SEEK_CUR);
        r = choose_filter(&dc, fd, tid);
        /* Nothing to clear: list() writes each byte of `out` it returns, padding included,
         * and reads of `in` only what getdents64 wrote. */
        in = xrealloc(NULL, size ? size : 1);
        out = xrealloc(NULL, size ? size : 1);
        if (r == 0 && fs_cow_any(sup) && dc.filter != DF_ALL) {
                bool merged;

                r = list_merged(&dc, fd, old, start, out, size, &merged);
                if (r > 0 && tmem_write(tid, a[1], out, (size_t)r) < 0) {
                        lseek(fd, start, SEEK_SET);
                        r = -EFAULT;
                }
                if (merged)
                        goto done;
        }
        if (r == 0)
                r = list(&dc, fd, old, start, in, out, size);
        if (r > 0 && tmem_write(tid, a[1], out, (size_t)r) < 0) {
                lseek(fd, start, SEEK_SET); /* nothing was listed: as the kernel leaves it */
                r = -EFAULT;
        }
done:
        free(in);
        free(out);
        close(fd);
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
        return 0;
}

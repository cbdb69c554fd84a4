#include "supervisor/vfs/session.h"
#include "supervisor/vfs/journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/util.h"
#include "supervisor/vfs/treemove.h"

int session_state_dir(const char *dir, char *out)
{
        const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        int n;

        if (dir && *dir)
                n = snprintf(out, PATH_MAX, "%s", dir);
        else if (xdg && xdg[0] == '/')
                n = snprintf(out, PATH_MAX, "%s/stockade", xdg);
        else if (home && home[0] == '/')
                n = snprintf(out, PATH_MAX, "%s/.local/state/stockade", home);
        else
                return -ENOENT;
        return n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int session_store_loose(const char *dir, const char *state, char *bad)
{
        const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        char p[PATH_MAX];
        struct stat st;
        char *slash;

        if (dir && *dir)
                return 0;
        snprintf(p, sizeof(p), "%s", state);
        for (;;) {
                if (!(xdg && xdg[0] == '/') && home && strcmp(p, home) == 0)
                        break; /* HOME itself is the user's to set */
                if (stat(p, &st) == 0 &&
                    ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & S_IWOTH))) {
                        snprintf(bad, PATH_MAX, "%s", p);
                        return -EPERM;
                }
                if (xdg && xdg[0] == '/' && strcmp(p, xdg) == 0)
                        break;
                slash = strrchr(p, '/');
                if (!slash || slash == p)
                        break;
                *slash = '\0';
        }
        return 0;
}

bool session_name_ok(const char *name)
{
        size_t n = strlen(name);

        if (n == 0 || n > SESSION_NAME_MAX || name[0] == '.' || name[0] == '-')
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
                        return false;
        return true;
}

void session_make_name(char out[SESSION_NAME_MAX + 1])
{
        time_t now = time(NULL);
        struct tm tm;
        unsigned short rnd = 0;

        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                rnd = (unsigned short)(getpid() ^ now);
        localtime_r(&now, &tm);
        snprintf(out, SESSION_NAME_MAX + 1, "%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd);
}

int session_path(const char *state, const char *name, char *out)
{
        return snprintf(out, PATH_MAX, "%s/sessions/%s", state, name) >= PATH_MAX ? -ENAMETOOLONG
                                                                                  : 0;
}

int session_lock(const char *dir)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        r = session_lock_at(fd);
        close(fd);
        return r;
}

int session_lock_at(int dirfd)
{
        int fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;

                close(fd);
                return e;
        }
        return fd;
}

/* "KEY VALUE..." lines; returns 0, or -EINVAL for a line this version does not know. */
static int meta_line(struct session_meta *m, char *line)
{
        char *val = strchr(line, ' ');

        if (!val)
                return -EINVAL;
        *val++ = '\0';
        if (strcmp(line, "created") == 0 || strcmp(line, "updated") == 0) {
                char *end;
                long long t = strtoll(val, &end, 10);

                if (*end || end == val)
                        return -EINVAL;
                *(line[0] == 'c' ? &m->created : &m->updated) = (time_t)t;
                return 0;
        }
        if (strcmp(line, "command") == 0) {
                free(m->command);
                m->command = strdup(val);
                return m->command ? 0 : -ENOMEM;
        }
        if (strcmp(line, "mount") == 0) {
                char sandbox[PATH_MAX], host[PATH_MAX];
                unsigned long long dev, ino;
                unsigned idx;

                if (sscanf(val, "%u %4095s %4095s %llu:%llu", &idx, sandbox, host, &dev, &ino) !=
                            5 ||
                    idx != m->n_mounts || idx >= SESSION_MOUNTS_MAX ||
                    journal_unescape(sandbox) < 0 || journal_unescape(host) < 0 ||
                    sandbox[0] != '/' || host[0] != '/')
                        return -EINVAL;
                snprintf(m->mounts[idx].sandbox, PATH_MAX, "%s", sandbox);
                snprintf(m->mounts[idx].host, PATH_MAX, "%s", host);
                m->mounts[idx].dev = dev;
                m->mounts[idx].ino = ino;
                m->n_mounts++;
                return 0;
        }
        return -EINVAL;
}

int session_open_regular(const char *path)
{
        return session_open_regular_at(AT_FDCWD, path);
}

/* `name` in `dirfd` opened with `flags` (and `mode` if it makes it), never through a symlink,
 * never waiting, and kept only if a regular file: the fd, or -errno (EINVAL: a FIFO, a device
 * or a directory there). */
static int open_regular(int dirfd, const char *name, int flags, mode_t mode)
{
        int fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode);
        struct stat st;
        int e;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                e = errno;
        else if (!S_ISREG(st.st_mode))
                e = EINVAL;
        else
                return fd;
        close(fd);
        return -e;
}

int session_open_regular_at(int dirfd, const char *name)
{
        return open_regular(dirfd, name, O_RDONLY, 0);
}

int session_append_regular_at(int dirfd, const char *name)
{
        int fd = open_regular(dirfd, name, O_WRONLY | O_APPEND | O_CREAT, 0600), e;

        /* blocking again for the writes (a regular file's never wait anyway) */
        if (fd < 0 || fcntl(fd, F_SETFL, O_APPEND) == 0)
                return fd;
        e = errno;
        close(fd);
        return -e;
}

int session_create_new_at(int dirfd, const char *name)
{
        int fd;

        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        return fd < 0 ? -errno : fd;
}

FILE *session_fopen_regular(const char *path)
{
        int fd = session_open_regular(path);
        FILE *f;

        if (fd < 0) {
                errno = -fd;
                return NULL;
        }
        f = fdopen(fd, "r");
        if (!f)
                close(fd);
        return f;
}

int session_meta_read(const char *dir, struct session_meta *m)
{
        int fd, r;

        session_meta_init(m);
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = session_meta_read_at(fd, m);
        close(fd);
        return r;
}

int session_meta_read_at(int dirfd, struct session_meta *m)
{
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        bool first = true, end = false;
        int fd;
        FILE *f;

        session_meta_init(m);
        fd = session_open_regular_at(dirfd, "session");
        if (fd < 0)
                return fd;
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        while ((n = getline(&line, &cap, f)) > 0) {
                if (line[n - 1] != '\n') {
                        m->damaged = true; /* cut short */
                        break;
                }
                line[n - 1] = '\0';
                if (end) {
                        m->damaged = true; /* something after the end */
                        break;
                }
                if (strcmp(line, "end") == 0 && !first) {
                        end = true;
                        continue;
                }
                if (first) {
                        first = false;
                        if (strcmp(line, "stockade-session 1") != 0) {
                                m->damaged = true;
                                break;
                        }
                        continue;
                }
                if (meta_line(m, line) < 0)
                        m->damaged = true;
        }
        if (!end)
                m->damaged = true; /* empty, or cut at a line's end */
        fclose(f);
        return 0;
}

int session_meta_write(const char *dir, const struct session_meta *m)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        r = session_meta_write_at(fd, m);
        close(fd);
        return r;
}

/* The metadata's lines into f. 0 or -ENOMEM. */
static int meta_print(FILE *f, const struct session_meta *m)
{
        fprintf(f, "stockade-session 1\ncreated %lld\nupdated %lld\n", (long long)m->created,
                (long long)m->updated);
        if (m->command)
                fprintf(f, "command %s\n", m->command);
        for (size_t i = 0; i < m->n_mounts; i++) {
                _cleanup_free_ char *s = journal_escape(m->mounts[i].sandbox);
                _cleanup_free_ char *h = journal_escape(m->mounts[i].host);

                if (!s || !h)
                        return -ENOMEM;
                fprintf(f, "mount %zu %s %s %llu:%llu\n", i, s, h, m->mounts[i].dev,
                        m->mounts[i].ino);
        }
        fputs("end\n", f);
        return 0;
}

/* Beside, synced, then renamed over `session`, all within dirfd: a reader sees the old file
 * or the new one whole, and no path is resolved again on the way. */
int session_meta_write_at(int dirfd, const struct session_meta *m)
{
        static const char tmp[] = ".session.new";
        int fd, r;
        FILE *f;

        fd = session_create_new_at(dirfd, tmp);
        if (fd < 0)
                return fd;
        f = fdopen(fd, "w");
        if (!f) {
                close(fd);
                unlinkat(dirfd, tmp, 0);
                return -ENOMEM;
        }
        r = meta_print(f, m);
        if ((fflush(f) != 0 || fsync(fileno(f)) < 0) && !r)
                r = -errno;
        if (fclose(f) != 0 && !r)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, "session") < 0)
                r = -errno;
        if (r < 0)
                unlinkat(dirfd, tmp, 0);
        return r;
}

void session_meta_init(struct session_meta *m)
{
        /* Not the mounts: 256 KiB, which each reader fills up to n_mounts (zeroing them all
         * cost a run ~130 page faults on its stack, ~2 ms on a VM where a fault is 16 µs). */
        m->created = m->updated = 0;
        m->command = NULL;
        m->n_mounts = 0;
        m->damaged = false;
}

void session_meta_free(struct session_meta *m)
{
        free(m->command);
        m->command = NULL;
}

/* ---- sessions that never began ------------------------------------------------------------ */

static bool dot_or_dotdot(const char *n)
{
        return strcmp(n, ".") == 0 || strcmp(n, "..") == 0;
}

/* Whether directory `name` in `parent` holds directories only (cow_own_dirs' copies of the
 * lower's), at most `depth` levels deep. */
static bool only_dirs(int parent, const char *name, int depth)
{
        int err;
        DIR *d = depth > 0 ? vfs_dir_at(parent, name, &err) : NULL;
        bool ok = d != NULL;

        for (struct dirent *e; ok && (e = readdir(d));)
                ok = dot_or_dotdot(e->d_name) || only_dirs(dirfd(d), e->d_name, depth - 1);
        if (d)
                closedir(d);
        return ok;
}

/* Whether mount directory `name` (in the session's directory `parent`) holds what a start
 * makes: an upper of directories only, an empty journal, overlayfs's work directory. */
static bool mount_dir_unborn(int parent, const char *name)
{
        int err;
        DIR *d = vfs_dir_at(parent, name, &err);
        bool ok = d != NULL;

        for (struct dirent *e; ok && (e = readdir(d));) {
                const char *n = e->d_name;
                struct stat st;

                if (strcmp(n, "journal") == 0)
                        ok = fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                             S_ISREG(st.st_mode) && st.st_size == 0;
                else if (strcmp(n, "upper") == 0)
                        ok = only_dirs(dirfd(d), n, 80);
                else
                        ok = dot_or_dotdot(n) || strcmp(n, "work") == 0;
        }
        if (d)
                closedir(d);
        return ok;
}

bool session_unborn(int dirfd)
{
        struct stat st;
        int err;
        DIR *d = fstatat(dirfd, "session", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT
                         ? vfs_dir_at(dirfd, ".", &err)
                         : NULL;
        bool ok = d != NULL;

        for (struct dirent *e; ok && (e = readdir(d));) {
                const char *n = e->d_name;

                ok = dot_or_dotdot(n) || strcmp(n, "lock") == 0 || strcmp(n, ".session.new") == 0 ||
                     (strspn(n, "0123456789") == strlen(n) && mount_dir_unborn(dirfd, n));
        }
        if (d)
                closedir(d);
        return ok;
}

int session_clear_unborn(int dirfd)
{
        int r = 0;
        DIR *d = vfs_dir_at(dirfd, ".", &r);

        for (struct dirent *e; d && r == 0 && (e = readdir(d));)
                if (!dot_or_dotdot(e->d_name) && strcmp(e->d_name, "lock") != 0)
                        r = vfs_remove_tree(dirfd, e->d_name, true);
        if (d)
                closedir(d);
        return r;
}

void session_sweep_unborn(const char *state, time_t min_age)
{
        char path[PATH_MAX];
        int sfd, err;
        DIR *d;

        if (snprintf(path, sizeof(path), "%s/sessions", state) >= (int)sizeof(path) ||
            !(d = vfs_dir_at(AT_FDCWD, path, &err)))
                return;
        sfd = dirfd(d);
        for (struct dirent *e; (e = readdir(d));) {
                char meta[SESSION_NAME_MAX + 16];
                struct stat st;
                int fd, lock;

                /* What a janitor renamed away to remove (cow_janitor.c) and did not finish
                 * (killed meanwhile): no session's name; young, it may be at work still. */
                if (strncmp(e->d_name, ".gone-", 6) == 0) {
                        if (fstatat(sfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
                            time(NULL) - st.st_mtime >= min_age)
                                vfs_remove_tree(sfd, e->d_name, true);
                        continue;
                }
                /* One look for the usual case, a session with its metadata. */
                if (!session_name_ok(e->d_name) ||
                    (snprintf(meta, sizeof(meta), "%s/session", e->d_name) < (int)sizeof(meta) &&
                     fstatat(sfd, meta, &st, AT_SYMLINK_NOFOLLOW) == 0))
                        continue;
                fd = openat(sfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                /* Young: a run may be between its mkdir and its lock. Another user's (root
                 * listing its store): not root's to sweep. */
                if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
                    time(NULL) - st.st_mtime < min_age || !session_unborn(fd)) {
                        if (fd >= 0)
                                close(fd);
                        continue;
                }
                lock = openat(fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0 && session_unborn(fd))
                        vfs_remove_tree(sfd, e->d_name, true);
                if (lock >= 0)
                        close(lock);
                close(fd);
        }
        closedir(d);
}

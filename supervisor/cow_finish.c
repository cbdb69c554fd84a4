/*
 * The end of a copy-on-write run (cow.h): whether the session holds a change, the overlays'
 * last references handed to the janitor (cow_janitor.c), and the session kept, brought up to
 * date or removed. Its start is cow.c's.
 */
#include "supervisor/cow.h"
#include "supervisor/cow_int.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/treemove.h"

/* Mount i's upper directory, opened beneath the session's directory by its fd (c->dir_fd),
 * no symlink followed: -1 with errno. */
static int open_upper(const struct cow_state *c, size_t i)
{
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        char rel[32];

        if (!c->m[i].upper[0] || c->dir_fd < 0) {
                errno = ENOENT; /* its state never made (setup failed before) */
                return -1;
        }
        snprintf(rel, sizeof(rel), "%zu/upper", i);
        return sys_openat2(c->dir_fd, rel, &how);
}

/* Whether mount i's upper holds anything, or cannot be read (then it may: kept). */
static bool upper_holds(const struct cow_state *c, size_t i)
{
        int fd = open_upper(c, i);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        struct dirent *e;
        bool any = fd < 0 ? errno != ENOENT : !d;

        if (fd >= 0 && !d)
                close(fd);
        while (d && !any && (e = readdir(d)))
                any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        if (d)
                closedir(d);
        return any;
}

bool cow_mount_changed(const struct cow_state *c, size_t i)
{
        _cleanup_close_ int u = -1, l = -1;
        int lower_fd = c->m[i].lower_fd;

        if (!upper_holds(c, i))
                return false;
        u = open_upper(c, i);
        if (lower_fd >= 0)
                l = openat(lower_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return u < 0 || l < 0 || cowdiff_any(u, l) != 0;
}

/* Remove what a new session made and did not use: its directories, an upper of copies equal
 * to the lower (cow_mount_changed), and the files we made. By fd from the session's
 * directory (c->dir_fd); the directory itself last, as `name` in c->sessions_fd if that is
 * still it. */
void cow_remove_unused(struct cow_state *c, const char *name)
{
        int dir = c->dir_fd;
        struct stat a, b;
        char idx[24];

        if (dir < 0)
                return;
        for (size_t i = 0; i < c->n; i++) {
                _cleanup_close_ int d = -1, w = -1, ww = -1;

                snprintf(idx, sizeof(idx), "%zu", i);
                d = openat(dir, idx, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (d < 0)
                        continue;
                cow_clear_volatile(d, "work");
                w = openat(d, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                ww = w < 0 ? -1 : openat(w, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (ww >= 0) { /* overlayfs makes it mode 000 */
                        cow_fd_chmod(ww, 0700);
                        unlinkat(w, "work", AT_REMOVEDIR);
                }
                unlinkat(d, "work", AT_REMOVEDIR);
                vfs_remove_tree(d, "upper", true);
                unlinkat(d, "journal", 0);
                unlinkat(dir, idx, AT_REMOVEDIR);
        }
        unlinkat(dir, "session", 0);
        unlinkat(dir, "lock", 0);
        /* Only an empty directory goes by this name: checked to be ours all the same. */
        if (c->sessions_fd >= 0 && fstat(dir, &a) == 0 &&
            fstatat(c->sessions_fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
                unlinkat(c->sessions_fd, name, AT_REMOVEDIR);
}

/* The view's fds of the overlays (spawn.c: the cow mounts' roots, reopened in the sandbox's
 * mount namespace) into fds[]; their number. Merged mounts have none. */
static size_t overlays(const struct supervisor *sup, int fds[SESSION_MOUNTS_MAX])
{
        size_t n = 0;

        for (size_t i = 0; sup->view.mounts && i < sup->view.n_mounts && n < SESSION_MOUNTS_MAX;
             i++) {
                const struct vfs_mount *m = &sup->view.mounts[i];

                if (m->mode == VFS_COW && !m->emulated && m->host_fd >= 0 && sup->n_cow_roots)
                        fds[n++] = m->host_fd;
        }
        return n;
}

/* Our references to the overlays (overlays()), closed: once the janitor has its own, the
 * overlays' end is its to wait for, not the run's. */
static void overlays_close(struct supervisor *sup)
{
        for (size_t i = 0; sup->view.mounts && i < sup->view.n_mounts; i++) {
                struct vfs_mount *m = &sup->view.mounts[i];

                if (m->mode == VFS_COW && !m->emulated && m->host_fd >= 0 && sup->n_cow_roots) {
                        close(m->host_fd);
                        m->host_fd = -1;
                }
        }
        sup->n_cow_roots = 0; /* the same fds */
}

/* The signals that ask stockade to stop (signals.c passes them on to the sandbox while it
 * runs). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void cow_finish(struct supervisor *sup)
{
        struct cow_state *c = &sup->cow;
        bool changed = false, copies = false, told = false;
        int over[SESSION_MOUNTS_MAX];
        size_t n_over = overlays(sup, over);

        if (!c->n || !c->dir[0])
                return;
        if (c->janitor_fd >= 0) {
                /* Blocked since the start (loop.c): a stop asked for now ends our waits for
                 * the janitor, which then finishes alone, holding the session. */
                sigset_t stop;

                sigemptyset(&stop);
                for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
                        sigaddset(&stop, stop_signals[i]);
                c->stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
        }
        if (c->janitor_fd < 0)
                overlays_close(sup); /* gone before the session is looked at */
        for (size_t i = 0; i < c->n; i++)
                copies |= upper_holds(c, i);
        /* Copies may all equal the host's (a file opened for writing and not written; one
         * made for an inotify watch): a session of those changed nothing. The janitor, outside
         * our Landlock domain (which reads no file of the session), compares them and goes
         * on as that says; without one (setup failed before the domain) we compare. */
        if (copies && c->janitor_fd >= 0) {
                int r = cow_janitor_tell(c, 'c', over, n_over);

                overlays_close(sup); /* before the answer: the janitor's close is the last */
                changed = r < 0 || cow_janitor_verdict(c) != 0;
                told = true;
        } else {
                for (size_t i = 0; copies && i < c->n && !changed; i++)
                        changed = cow_mount_changed(c, i);
        }
        if (!changed && !c->named && !c->existed) {
                if (c->janitor_fd >= 0 && !told)
                        cow_janitor_tell(c, 'r', over, n_over);
                else if (c->janitor_fd < 0)
                        cow_remove_unused(c, c->name); /* setup failed before the domain */
        } else {
                if (c->janitor_fd >= 0 && !told)
                        cow_janitor_tell(c, 'u', over, n_over);
                if (c->stopped_by)
                        fprintf(stderr,
                                "stockade: SIG%s: not waiting for the end of session %s: its "
                                "janitor (stockade-sess) compares it with your files and keeps "
                                "or removes it, holding it until done (`stockade sessions`)\n",
                                sigabbrev_np(c->stopped_by) ?: "?", c->name);
                else if (changed && !sup->cfg->quiet)
                        fprintf(stderr,
                                "stockade: the changes are in session %s: review them with "
                                "`stockade diff %s`, then `stockade apply %s` or `stockade "
                                "discard %s`\n",
                                c->name, c->name, c->name, c->name);
        }
        /* Ours, after the janitor got its own (else the last: the run waits for them). */
        overlays_close(sup);
        for (size_t i = 0; i < c->n; i++) {
                struct cow_mount *m = &c->m[i];

                if (m->lower_fd >= 0)
                        close(m->lower_fd);
                if (sup->view.mounts && c->view_index[i] < sup->view.n_mounts) {
                        struct vfs_mount *vm = &sup->view.mounts[c->view_index[i]];

                        if (vm->emulated && vm->upper_fd >= 0)
                                close(vm->upper_fd);
                        vm->upper_fd = -1;
                }
                if (m->journal_fd >= 0)
                        close(m->journal_fd);
                if (m->upper_fd >= 0)
                        close(m->upper_fd);
                m->lower_fd = m->journal_fd = m->upper_fd = -1;
                cow_noted_free(m);
        }
        if (c->janitor_fd >= 0) {
                bool before = c->stopped_by;

                cow_janitor_done(c);
                if (c->stopped_by && !before)
                        fprintf(stderr,
                                "stockade: SIG%s: not waiting for the end of session %s: its "
                                "janitor (stockade-sess) finishes it, holding it until done\n",
                                sigabbrev_np(c->stopped_by) ?: "?", c->name);
                close(c->janitor_fd);
        }
        c->janitor_fd = -1;
        if (c->stop_fd >= 0)
                close(c->stop_fd);
        c->stop_fd = -1;
        if (c->dir_fd >= 0)
                close(c->dir_fd);
        if (c->sessions_fd >= 0)
                close(c->sessions_fd);
        c->dir_fd = c->sessions_fd = -1;
        if (c->lock_fd >= 0)
                close(c->lock_fd); /* last: the session is consistent */
        c->lock_fd = -1;
        c->dir[0] = '\0';
}

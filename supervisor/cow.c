#include "supervisor/walls.h"
#include "supervisor/layers.h"
#include "supervisor/pathcache.h"
#include "supervisor/cow.h"
#include "supervisor/cow_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim/mntns.h"
#include "supervisor/error.h"
#include "supervisor/options.h"
#include "supervisor/sup.h"
#include "supervisor/session_owner.h"
#include "supervisor/util.h"
#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"
#include "supervisor/vfs/cowup.h"
#include "supervisor/vfs/view.h"

/* ---- before the run ---------------------------------------------------------------------- */

/* DIR/NAME into out (PATH_MAX); false when too long. */
bool cow_join(char *out, const char *dir, const char *name)
{
        return snprintf(out, PATH_MAX, "%s/%s", dir, name) < PATH_MAX;
}

static bool has_cow(const struct vfs_view *v)
{
        for (size_t i = 0; i < v->n_mounts; i++)
                if (v->mounts[i].mode == VFS_COW)
                        return true;
        return false;
}

/* mkdir -p, each new directory 0700. */
static int make_dirs(const char *path)
{
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + 1;; s++)
                if (*s == '/' || *s == '\0') {
                        char c = *s;

                        *s = '\0';
                        if (mkdir(p, 0700) < 0 && errno != EEXIST)
                                return -errno;
                        *s = c;
                        if (!c)
                                return 0;
                }
}

/* Whose a store is, judged: as root, only root's own is taken. */
static int store_refused(const struct cow_state *c, const struct sess_owner *o, struct error *err)
{
        if (!o->uid)
                return 0;
        return make_error(err, 0,
                          "run: the session store `%s` is another user's (%s belongs to uid %u): "
                          "as root, keep sessions in a store of root's (--state-dir DIR)",
                          c->state, o->where, (unsigned)o->uid);
}

/*
 * Whether a program of this view may write `path`: 0 no; 1 through a writable mount of the
 * view other than the shared /var/tmp (a workspace that is the home directory); 2 only
 * through /var/tmp, or another place that Landlock grants whole (places.h: a home there, as
 * on CI).
 */
static int store_writable(const struct supervisor *sup, const struct vfs_view *v, const char *path)
{
        int r = 0;

        for (size_t i = 0; i < v->n_mounts; i++) {
                const struct vfs_mount *m = &v->mounts[i];

                if ((m->mode != VFS_RW && m->mode != VFS_COW) ||
                    !(vfs_path_has_prefix(path, m->sandbox) ||
                      (m->host && vfs_path_has_prefix(path, m->host))))
                        continue; /* a remapped one (remap.c) is writable at its host's */
                if (strcmp(m->sandbox, "/var/tmp") != 0)
                        return 1;
                r = 2;
        }
        for (size_t i = 0; i < sup->places.n && !r; i++)
                if (sup->places.v[i].kind == PLACE_TREE &&
                    vfs_path_has_prefix(path, sup->places.v[i].path))
                        r = 2;
        return r;
}

int cow_hide_state(struct supervisor *sup, struct vfs_view *view, struct error *err)
{
        struct cow_state *c = &sup->cow;
        char canon[PATH_MAX], def[PATH_MAX];
        struct sess_owner o;
        struct vfs_mount m;
        int r;

        /* The default session store, hidden in a run without copy-on-write too when it lies
         * in a place the run may write (a workspace that is the home directory): a program
         * that could write there could forge what `stockade apply` writes. Beneath /var/tmp
         * (a home there: CI) by the view alone, whose emulation performs every write: carved
         * out of Landlock's grants, /var/tmp would be granted by its entries, and no program
         * could make a file directly in it, which a temporary-file user does (README). A run
         * with copy-on-write and no --state-dir hides it below, walls and all: the second wall
         * for its own session is worth that (it says so: "cannot create entries directly"). */
        if ((sup->cfg->state_dir || !has_cow(view)) && session_state_dir(NULL, def) == 0) {
                const char *store = realpath(def, canon) ? canon : def;
                int w = store_writable(sup, view, store);

                if (w &&
                    vfs_mount_init_literal(&m, VFS_HIDDEN, store, NULL, "the session store") == 0) {
                        m.view_only = w == 2;
                        vfs_view_add(view, &m);
                }
        }
        /* The stores you named with --state-dir in earlier runs, hidden like the default one
         * (cow_stores.c): whoever writes a session's file decides where apply writes. */
        {
                char own[PATH_MAX];

                cow_stores_hide(sup, view,
                                sup->cfg->state_dir && realpath(sup->cfg->state_dir, own) ? own
                                                                                          : NULL,
                                store_writable);
        }
        /* Reached through a symlink (a HOME that is one): its literal path too, by the view,
         * so that the directories on the way keep their place (fs_path.c, moves_hidden: an
         * outside review renamed such a HOME away and put its own in its place). */
        if (session_state_dir(NULL, def) == 0 && realpath(def, canon) && strcmp(canon, def) != 0 &&
            store_writable(sup, view, def) &&
            vfs_mount_init_literal(&m, VFS_HIDDEN, def, NULL, "the session store") == 0) {
                m.view_only = true; /* the real path carries the walls */
                vfs_view_add(view, &m);
        }
        if (!has_cow(view))
                return 0;
        r = store_default(sup->cfg->state_dir, c->state);
        if (r < 0)
                return make_error(err, -r,
                                  "run: copy-on-write: no place for sessions (give --state-dir, "
                                  "or set XDG_STATE_HOME or HOME)");
        r = session_store_loose(sup->cfg->state_dir, c->state, canon);
        if (r < 0)
                return make_error(err, 0, "run: the session store's directory `%s` %s", canon,
                                  SESSION_LOOSE_HINT);
        /* Nobody else may have a hand in it (session_owner.c): they could change the session
         * under the run (or, as root, lead root's writes where they chose). Judged as far as
         * it exists and made beneath what was judged, one name at a time, then judged whole. */
        if (store_judge(c->state, &o, "run", err) < 0 || store_refused(c, &o, err) < 0)
                return -1;
        {
                struct error e = {0};

                r = store_make(c->state, &o, "run", &e);
                pathcache_forget(); /* walls.c's memo may have seen it missing */
                if (r < 0 && e.errnum)
                        return make_error(err, e.errnum,
                                          "run: copy-on-write needs a place for its session, and "
                                          "the state directory `%s` cannot be made (give "
                                          "--state-dir DIR, or --rw or --ro for the "
                                          "copy-on-write path)",
                                          c->state);
                if (r < 0)
                        return make_error(err, 0, "%s", e.msg);
        }
        {
                _cleanup_close_ int fd = store_open(c->state, &o, "run", NULL, err);

                if (fd < 0 || store_refused(c, &o, err) < 0 ||
                    owner_private(fd, c->state, "run", err) < 0)
                        return -1;
        }
        /* The sandbox never sees a session, its own included. */
        if (!realpath(c->state, canon) ||
            vfs_mount_init_literal(&m, VFS_HIDDEN, canon, NULL, "--state-dir") < 0)
                return make_error(err, errno, "run: the state directory `%s`", c->state);
        snprintf(c->state, sizeof(c->state), "%s", canon);
        vfs_view_add(view, &m);
        /* hidden in the runs to come */
        if (sup->cfg->state_dir) {
                const char *why = NULL;

                if (cow_stores_remember(canon, &why) < 0 && !sup->cfg->quiet)
                        fprintf(stderr,
                                "stockade: warning: the state directory `%s` could not be "
                                "listed for later runs to hide (%s): a later run may write it, "
                                "and so decide what `stockade apply` writes\n",
                                canon, why);
        }
        return 0;
}

/*
 * The upper directory's root is the merged root's face (mode, owner, times): made with the
 * lower's, as overlayfs copies up a directory. A continued session's is left as the runs
 * made it.
 */
static int make_upper(int parent, int lower_fd)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (mkdirat(parent, "upper", 0700) < 0)
                return errno == EEXIST ? 0 : -errno;
        /* By fd from here, never following a symlink put in its place since the mkdir. */
        fd = openat(parent, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(lower_fd, &st) < 0)
                return -errno;
        if (geteuid() == 0 && fchown(fd, st.st_uid, st.st_gid) < 0)
                return -errno;
        /* Otherwise the group where the user may give it (a team's project: what is made in
         * it takes that group, as natively). */
        if (geteuid() != 0 && st.st_gid != getegid())
                (void)fchown(fd, (uid_t)-1, st.st_gid);
        if (futimens(fd, (struct timespec[]){st.st_atim, st.st_mtim}) < 0)
                return -errno;
        return fchmod(fd, st.st_mode & 07777) < 0 ? -errno : 0;
}

static char *command_line(char **argv)
{
        size_t len = 1;
        char *s;

        for (char **a = argv; a && *a; a++) {
                _cleanup_free_ char *e = journal_escape(*a);

                len += strlen(e ? e : "") + 1;
        }
        s = xcalloc(1, len);
        for (char **a = argv; a && *a; a++) {
                _cleanup_free_ char *e = journal_escape(*a);

                if (a != argv)
                        strcat(s, " ");
                strcat(s, e ? e : "");
        }
        return s;
}

/*
 * A continued session's own files: no symlink among them, and each mount's directory the
 * caller's. One that another user could write once (before its store was made private) may
 * hold their symlink to a tree of theirs (an outside attack ran its planted script so); the
 * upper's root may be the project owner's (make_upper), what lies beneath is the run's.
 */
static int insides_ok(const struct cow_state *c, int dfd, struct error *err)
{
        static const char *const top[] = {"session", "lock"};
        static const char *const each[] = {"", "/upper", "/work", "/journal", "/lent"};
        char name[64];
        struct stat st;

        for (size_t i = 0; i < ARRAY_SIZE(top) + SESSION_MOUNTS_MAX * ARRAY_SIZE(each); i++) {
                size_t m = i < ARRAY_SIZE(top) ? 0 : (i - ARRAY_SIZE(top)) / ARRAY_SIZE(each);
                const char *part = i < ARRAY_SIZE(top)
                                           ? top[i]
                                           : each[(i - ARRAY_SIZE(top)) % ARRAY_SIZE(each)];

                if (i < ARRAY_SIZE(top))
                        snprintf(name, sizeof(name), "%s", part);
                else
                        snprintf(name, sizeof(name), "%zu%s", m, part);
                if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISLNK(st.st_mode) ||
                    (i >= ARRAY_SIZE(top) && !*part && st.st_uid != geteuid()))
                        return make_error(err, 0,
                                          "run: session `%s`: %s/%s is %s: not a session this "
                                          "run made (stockade discard %s, then start afresh)",
                                          c->name, c->dir, name,
                                          S_ISLNK(st.st_mode) ? "a symlink" : "another user's",
                                          c->name);
        }
        return 0;
}

/* A path beneath the session store (whose path is a real one: cow_setup), opened without
 * following any symlink on the way: a store another run's program could write (a --state-dir
 * in /var/tmp) must not lead our looks and removals elsewhere. */
static int open_in_store(const char *path, int flags)
{
        struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};

        return sys_openat2(AT_FDCWD, path, &how);
}

/* mkdir of the session c->name in `sessions`, by an fd of it (open_in_store, once: kept as
 * c->sessions_fd for the run's end): a `sessions` swapped for a symlink (a store other runs'
 * programs may write) makes nothing elsewhere (an outside review found an empty directory of
 * the invoker's made through one). 0 or -1 with errno. */
static int make_session_dir(struct cow_state *c, const char *sessions)
{
        if (c->sessions_fd < 0 && make_dirs(sessions) == 0)
                c->sessions_fd = open_in_store(sessions, O_PATH | O_DIRECTORY);
        return c->sessions_fd < 0 ? -1 : mkdirat(c->sessions_fd, c->name, 0700);
}

/* The session's directory: made (a new name), or continued (--session of an existing one). */
static int open_session(struct cow_state *c, const struct config *cfg, struct error *err)
{
        char sessions[PATH_MAX];

        if (!cow_join(sessions, c->state, "sessions"))
                return make_error(err, ENAMETOOLONG, "run: the state directory `%s`", c->state);
        for (int tries = 0;; tries++) {
                if (cfg->session)
                        snprintf(c->name, sizeof(c->name), "%s", cfg->session);
                else
                        session_make_name(c->name);
                if (session_path(c->state, c->name, c->dir) < 0)
                        return make_error(err, ENAMETOOLONG, "run: session `%s`", c->name);
                if (make_session_dir(c, sessions) == 0)
                        break;
                if (errno != EEXIST)
                        return make_error(err, errno, "run: session `%s`: cannot create `%s`",
                                          c->name, c->dir);
                if (cfg->session) {
                        c->existed = true;
                        break;
                }
                if (tries > 20)
                        return make_error(err, EEXIST, "run: cannot make a session name");
        }
        c->named = cfg->session != NULL;
        /* The caller's and theirs alone, before anything in them is used: a `sessions` or a
         * session (a named one, continued) that another user put in a store they may write
         * would run their files (an outside attack ran a planted build script as root). The
         * session's directory is kept open (c->dir_fd): what follows, to the janitor's end,
         * reaches it by this fd. */
        c->dir_fd = openat(c->sessions_fd, c->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dir_fd < 0)
                return make_error(err, errno, "run: session `%s`: `%s`", c->name, c->dir);
        if (owner_private(c->sessions_fd, sessions, "run", err) < 0 ||
            owner_private(c->dir_fd, c->dir, "run", err) < 0 ||
            (c->existed && insides_ok(c, c->dir_fd, err) < 0))
                return -1;
        c->lock_fd = session_lock_at(c->dir_fd);
        if (c->lock_fd == -EWOULDBLOCK)
                return make_error(err, 0, "run: session `%s` is in use by a running stockade",
                                  c->name);
        if (c->lock_fd < 0)
                return make_error(err, -c->lock_fd, "run: session `%s`: lock", c->name);
        return 0;
}

/* A named session that an earlier stockade, killed while it started, left without its
 * metadata (session_unborn) is started afresh: nothing of a run is in it. We hold its lock. */
static int start_unborn(struct cow_state *c, struct error *err)
{
        int r;

        if (!session_unborn(c->dir_fd))
                return 0;
        r = session_clear_unborn(c->dir_fd);
        if (r < 0)
                return make_error(err, -r, "run: session `%s`: clearing what a stopped start left",
                                  c->name);
        c->existed = false;
        return 0;
}

/* A continued session must be over the same mounts. */
static int check_same_mounts(const struct cow_state *c, const struct session_meta *old,
                             struct error *err)
{
        if (old->damaged || old->n_mounts != c->n)
                return make_error(err, 0,
                                  "run: session `%s` %s (it has %zu copy-on-write mount%s, this "
                                  "run %zu)",
                                  c->name, old->damaged ? "is damaged" : "does not match this run",
                                  old->n_mounts, old->n_mounts == 1 ? "" : "s", c->n);
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(old->mounts[i].sandbox, c->m[i].sandbox) != 0 ||
                    strcmp(old->mounts[i].host, c->m[i].host) != 0)
                        return make_error(err, 0,
                                          "run: session `%s` was made for --cow %s:%s; this run "
                                          "has --cow %s:%s",
                                          c->name, old->mounts[i].host, old->mounts[i].sandbox,
                                          c->m[i].host, c->m[i].sandbox);
        return 0;
}

/* The identity of mount i's host directory into meta; a continued session's must match. */
static int same_host(const struct cow_state *c, size_t i, const struct session_meta *old,
                     struct session_meta *meta, struct error *err)
{
        struct stat st;

        if (fstat(c->m[i].lower_fd, &st) < 0)
                return make_error(err, errno, "run: --cow: `%s`", c->m[i].host);
        meta->mounts[i].dev = (unsigned long long)st.st_dev;
        meta->mounts[i].ino = (unsigned long long)st.st_ino;
        if (i < old->n_mounts && (old->mounts[i].dev != meta->mounts[i].dev ||
                                  old->mounts[i].ino != meta->mounts[i].ino))
                return make_error(err, 0,
                                  "run: session `%s` was made for another directory at `%s` (it "
                                  "was moved or replaced since)",
                                  c->name, c->m[i].host);
        return 0;
}

/*
 * The overlay is mounted `volatile` (shim/mntns.c), and overlayfs then leaves
 * WORK/work/incompat/volatile/dirty, refusing to mount that work directory again: it cannot
 * tell a crash of the machine, which may have lost writes it never synced, from a clean end.
 * A session's run ended one way or the other before the next one takes its lock; the
 * marker goes (a crash of the machine during a run may cost that run's last writes,
 * README). overlayfs makes these directories mode 000.
 */
/* chmod of an O_PATH fd (through /proc: fchmod refuses O_PATH). */
void cow_fd_chmod(int fd, mode_t mode)
{
        char proc[48];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        (void)!chmod(proc, mode);
}

/* overlayfs's volatile marker beneath the work directory `work` in `parent`, removed. */
void cow_clear_volatile(int parent, const char *work)
{
        static const char *const steps[] = {"work", "incompat", "volatile"};
        int fds[4] = {openat(parent, work, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), -1, -1,
                      -1};
        size_t k;

        /* By fd, never following a symlink: a session store another run's program could
         * write (a --state-dir in /var/tmp) must not turn these chmods onto another path. */
        for (k = 0; k < ARRAY_SIZE(steps) && fds[k] >= 0; k++) {
                fds[k + 1] =
                        openat(fds[k], steps[k], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fds[k + 1] >= 0)
                        cow_fd_chmod(fds[k + 1], 0700);
        }
        if (fds[3] >= 0)
                unlinkat(fds[3], "dirty", 0);
        if (fds[2] >= 0)
                unlinkat(fds[2], "volatile", AT_REMOVEDIR);
        if (fds[1] >= 0) {
                unlinkat(fds[1], "incompat", AT_REMOVEDIR);
                cow_fd_chmod(fds[1], 0);
        }
        for (k = 0; k < ARRAY_SIZE(fds); k++)
                if (fds[k] >= 0)
                        close(fds[k]);
}

/* A directory `name` in `parent` (made if missing), opened without following a symlink: an
 * O_PATH fd and its identity, or -1 with errno. */
static int state_dir(int parent, const char *name, struct stat *st)
{
        int fd;

        if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
                return -1;
        fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, st) < 0) {
                int e = errno;

                close(fd);
                errno = e;
                return -1;
        }
        return fd;
}

/* Mount i's state in the session: `i/`, its upper, work directory and journal, all beneath
 * the session's directory's fd, none through a symlink (a store another run's program may
 * write: an outside review swapped `sessions/NAME` for a symlink between our lock and these
 * mkdirs, and root's stockade made them in a directory of the attacker's choosing). The paths
 * are kept for what takes paths (the namespace maker's overlay, messages), with the identity
 * each must have. */
static int open_mount_state(struct cow_state *c, size_t i, struct error *err)
{
        struct cow_mount *m = &c->m[i];
        char dir[PATH_MAX], jpath[PATH_MAX], idx[24];
        _cleanup_close_ int at = -1, work = -1;
        struct stat st;
        struct journal j;
        int r;

        snprintf(idx, sizeof(idx), "%zu", i);
        if (!cow_join(dir, c->dir, idx) || !cow_join(m->upper, dir, "upper") ||
            !cow_join(m->work, dir, "work"))
                return make_error(err, ENAMETOOLONG, "run: session `%s`", c->name);
        m->lower_fd = open(m->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (m->lower_fd < 0)
                return make_error(err, errno, "run: --cow: `%s`", m->host);
        at = state_dir(c->dir_fd, idx, &st);
        if (at < 0 || (r = make_upper(at, m->lower_fd)) < 0)
                return make_error(err, at < 0 ? errno : -r, "run: session `%s`: `%s`", c->name,
                                  dir);
        m->upper_fd = state_dir(at, "upper", &st);
        if (m->upper_fd < 0)
                return make_error(err, errno, "run: session `%s`: `%s`", c->name, m->upper);
        m->upper_dev = st.st_dev;
        m->upper_ino = st.st_ino;
        work = state_dir(at, "work", &st);
        if (work < 0)
                return make_error(err, errno, "run: session `%s`: `%s`", c->name, m->work);
        m->work_dev = st.st_dev;
        m->work_ino = st.st_ino;
        cow_clear_volatile(at, "work");
        m->journal_fd = session_append_regular_at(at, "journal");
        if (m->journal_fd < 0)
                return make_error(err, -m->journal_fd, "run: session `%s`: `%s/journal`", c->name,
                                  dir);
        /* Read by the fd too (its last component never followed). */
        snprintf(jpath, sizeof(jpath), "/proc/self/fd/%d/journal", at);
        r = journal_load(&j, jpath);
        if (r < 0)
                return make_error(err, -r, "run: session `%s`: `%s/journal`", c->name, dir);
        for (size_t k = 0; k < j.n; k++)
                cow_noted_put(m, j.v[k].path);
        journal_free(&j);
        return 0;
}

/*
 * Where no mount namespace holds an overlay, the supervisor merges the layers itself
 * (vfs/resolve.h, syscalls/fs_cow.c): the view's mount gets the upper directory, which only
 * the supervisor's Landlock domain may change (walls_grants); the lower is read-only to both
 * domains (walls.c). What a crash left of a copy-up in progress is swept first.
 */
static int emulate(struct supervisor *sup, size_t i, struct error *err)
{
        struct cow_state *c = &sup->cow;
        struct vfs_mount *vm = &sup->view.mounts[c->view_index[i]];
        int fd = fcntl(c->m[i].upper_fd, F_DUPFD_CLOEXEC, 0);

        if (fd < 0)
                return make_error(err, errno, "run: session `%s`: `%s`", c->name, c->m[i].upper);
        (void)cowup_sweep(fd);
        vm->upper_fd = fd;
        vm->emulated = true;
        sup->cow_merged = true;
        return 0;
}

int cow_setup(struct supervisor *sup, struct error *err)
{
        struct cow_state *c = &sup->cow;
        struct session_meta meta, old;
        int r;

        session_meta_init(&meta);
        session_meta_init(&old);
        pthread_mutex_init(&c->lock, NULL);
        c->view = &sup->view;
        c->lock_fd = c->janitor_fd = c->sessions_fd = c->dir_fd = c->stop_fd = -1;
        c->meta_r = 1; /* not read yet */
        for (size_t i = 0; i < sup->view.n_mounts; i++) {
                const struct vfs_mount *vm = &sup->view.mounts[i];

                if (vm->mode != VFS_COW)
                        continue;
                if (c->n == SESSION_MOUNTS_MAX)
                        return make_error(err, 0, "run: at most %d copy-on-write mounts",
                                          SESSION_MOUNTS_MAX);
                c->view_index[c->n] = i;
                snprintf(c->m[c->n].sandbox, PATH_MAX, "%s", vm->sandbox);
                snprintf(c->m[c->n].host, PATH_MAX, "%s", vm->host);
                c->m[c->n].lower_fd = c->m[c->n].journal_fd = c->m[c->n].upper_fd = -1;
                c->n++;
        }
        if (!c->n)
                return 0;
        if (open_session(c, sup->cfg, err) < 0)
                return -1;
        if (c->existed && start_unborn(c, err) < 0)
                goto fail;
        if (c->existed) {
                r = session_meta_read_at(c->dir_fd, &old);
                if (r < 0) {
                        make_error(err, -r, "run: session `%s`: its metadata", c->name);
                        goto fail;
                }
                r = check_same_mounts(c, &old, err);
                meta.created = old.created;
                if (r < 0) {
                        session_meta_free(&old);
                        goto fail;
                }
        } else {
                meta.created = time(NULL);
        }
        meta.updated = time(NULL);
        meta.command = command_line(sup->cfg->argv);
        for (size_t i = 0; i < c->n; i++) {
                meta.mounts[i].dev = meta.mounts[i].ino = 0;
                snprintf(meta.mounts[i].sandbox, PATH_MAX, "%s", c->m[i].sandbox);
                snprintf(meta.mounts[i].host, PATH_MAX, "%s", c->m[i].host);
                if (open_mount_state(c, i, err) < 0 || same_host(c, i, &old, &meta, err) < 0 ||
                    (!sup->layers.mntns && emulate(sup, i, err) < 0)) {
                        session_meta_free(&old);
                        goto fail;
                }
                if (sup->layers.mntns)
                        cow_own_dirs(sup, c->m[i].lower_fd, c->m[i].upper_fd);
        }
        session_meta_free(&old);
        meta.n_mounts = c->n;
        /* The janitor writes the metadata, while we go on (cow_janitor_ready). */
        r = cow_start_janitor(c, &meta, err);
        session_meta_free(&meta);
        if (r < 0)
                goto fail;
        for (size_t i = 0; i < c->n && sup->layers.mntns; i++) {
                struct mnt_bind *b = walls_new_bind(sup);

                snprintf(b->source, sizeof(b->source), "%s", c->m[i].host);
                mnt_bind_pin(b, c->m[i].lower_fd);
                snprintf(b->target, sizeof(b->target), "%s", c->m[i].sandbox);
                snprintf(b->upper, sizeof(b->upper), "%s", c->m[i].upper);
                snprintf(b->work, sizeof(b->work), "%s", c->m[i].work);
                b->upper_dev = c->m[i].upper_dev;
                b->upper_ino = c->m[i].upper_ino;
                b->work_dev = c->m[i].work_dev;
                b->work_ino = c->m[i].work_ino;
                b->overlay = true;
        }
        return 0;
fail:
        session_meta_free(&meta);
        cow_finish(sup);
        return -1;
}

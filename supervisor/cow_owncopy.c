/*
 * A copy-on-write file that the sandbox's user namespace cannot own (cow.h, cow_own_copy).
 *
 * Without root, the sandbox's user namespace maps one uid and one gid: the user's own. A
 * file of the workspace owned by anyone else, or in any other group (a team's group, a
 * set-group-ID project directory, a file root left behind), has no owner there, and
 * overlayfs refuses to copy it up (EOVERFLOW: it cannot give the copy that owner). The
 * program could change it natively (it may write it), so before a change the supervisor
 * makes the copy itself, as the program, through the overlay: the content, the mode (less
 * set-ID bits), the user.* extended attributes and the times go to a new file beside it,
 * which then replaces it by rename. The copy belongs to the user and the user's group: that
 * is all the sandbox can see of the change of owner, and apply gives the host file back its
 * group where the applying user may (vfs/cowapply.c).
 */
#include "supervisor/cow.h"
#include "supervisor/creds.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/treemove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/*
 * The copies made for files another user owned, as the overlay shows them (st_dev, st_ino):
 * the copy is ours, but what only the owner may do (chmod, chown, explicit times) the program
 * could not do to the original, so it may not do it to the copy either (cow_own_denies).
 * Kept for the run; a few per run, so a list.
 */
static pthread_mutex_t copied_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
        dev_t dev;
        ino_t ino;
} * copied;
static size_t n_copied;

static void remember(int fd)
{
        struct stat st;
        void *grown;

        if (fstat(fd, &st) < 0)
                return;
        pthread_mutex_lock(&copied_lock);
        grown = realloc(copied, (n_copied + 1) * sizeof(*copied));
        if (grown) {
                copied = grown;
                copied[n_copied].dev = st.st_dev;
                copied[n_copied].ino = st.st_ino;
                n_copied++;
        }
        pthread_mutex_unlock(&copied_lock);
}

bool cow_own_denies(int fd)
{
        struct stat st;
        bool found = false;

        if (fstat(fd, &st) < 0)
                return false;
        pthread_mutex_lock(&copied_lock);
        for (size_t i = 0; i < n_copied && !found; i++)
                found = copied[i].dev == st.st_dev && copied[i].ino == st.st_ino;
        pthread_mutex_unlock(&copied_lock);
        return found;
}

/* Replace `name` in `parent` by a copy owned by us; as the program (creds_enter). */
static int replace(int parent, const char *name, const struct stat *st)
{
        static unsigned counter;
        const struct timespec times[2] = {st->st_atim, st->st_mtim};
        char tmp[64];
        int from, to, r;

        from = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (from < 0)
                return -errno; /* not readable: overlayfs could not copy it either */
        snprintf(tmp, sizeof(tmp), ".stockade-own.%d.%u", (int)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        to = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (to < 0) {
                r = -errno; /* a directory on the way that cannot be copied up either */
                close(from);
                return r;
        }
        r = vfs_copy_bytes(from, to);
        if (r == 0) {
                vfs_copy_user_xattrs(from, to);
                if (fchmod(to, st->st_mode & 01777) < 0 || futimens(to, times) < 0)
                        r = -errno;
        }
        if (r == 0 && renameat(parent, tmp, parent, name) < 0)
                r = -errno;
        if (r == 0 && st->st_uid != geteuid())
                remember(to);
        if (r < 0)
                unlinkat(parent, tmp, 0);
        close(from);
        close(to);
        return r;
}

/* May the program make the change natively? Write permission as the kernel judges it on
 * the overlay's file (mode, groups, ACLs: the supervisor has the program's ids and groups),
 * or ownership (chmod, utimes with times). */
static bool may(int fd, const struct stat *st, enum cow_own_need need)
{
        char proc[48];

        if (need == COW_OWN_OWNER)
                return st->st_uid == geteuid();
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return faccessat(AT_FDCWD, proc, W_OK, AT_EACCESS) == 0;
}

int cow_own_copy(struct supervisor *sup, int fd, enum cow_own_need need)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        char path[PATH_MAX], proc[48];
        struct creds_saved saved;
        struct stat st, seen;
        char *slash;
        ssize_t n;
        int parent, r;

        if (!sup->cow.n || sup->layers.ipc != IPC_NS_USERNS || fstat(fd, &st) < 0 ||
            !S_ISREG(st.st_mode) || (st.st_uid == geteuid() && st.st_gid == getegid()) ||
            !may(fd, &st, need))
                return 0;
        /* Where it is in the sandbox (the kernel prints the namespace's path): a cow mount's. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, path, sizeof(path) - 1);
        if (n <= 0 || path[0] != '/')
                return 0;
        path[n] = '\0';
        if (!cow_covers(sup, path))
                return 0;
        slash = strrchr(path, '/');
        *slash = '\0';
        parent = sys_openat2(sup->places.root_fd, path[0] ? path : "/", &how);
        if (parent < 0)
                return -errno;
        /* The very file, still at that name (else the program's call goes its own way). */
        if (fstatat(parent, slash + 1, &seen, AT_SYMLINK_NOFOLLOW) < 0 ||
            seen.st_dev != st.st_dev || seen.st_ino != st.st_ino) {
                close(parent);
                return 0;
        }
        r = creds_enter(sup->cfg, &saved);
        if (r == 0) {
                r = replace(parent, slash + 1, &st);
                creds_leave(&saved);
        }
        close(parent);
        return r < 0 ? r : 1;
}

/* ---- directories ------------------------------------------------------------------------- */

/*
 * overlayfs copies a directory up before anything is made, removed or renamed in it, and
 * refuses one of an owner or group the namespace lacks (EOVERFLOW) as it does a file; nor
 * can a directory be replaced by a rename as a file is (EXDEV). But before the overlay is
 * mounted an upper directory may simply be made, and the overlay merges it with the lower
 * one. So when the workspace's root is the user's in another group (a team's set-group-ID
 * project: every directory of it is), each directory of it that is so too is made in the
 * upper beforehand (with the directories on the way), with the lower's mode, group and
 * times: nothing the sandbox sees changes. Not a directory of another owner (a
 * world-writable one of root's): made by the user it would be the user's, who could then do
 * what only its owner may; such a directory, and what lies beneath it, stays EOVERFLOW.
 * Bounded by OWN_DIRS_MAX directories and OWN_DEPTH_MAX levels: past those, as before.
 */
enum { OWN_DIRS_MAX = 20000, OWN_DEPTH_MAX = 64 };

struct dirwalk {
        int lower, upper;
        dev_t state_dev; /* the state directory, which the walk never enters (the session's */
        ino_t state_ino; /* upper may lie in the workspace, and beneath that directory) */
        char **made;     /* relative paths made, parents first */
        struct timespec (*times)[2];
        size_t n, cap, seen;
};

/* The user's, in a group the namespace does not map. */
static bool team_dir(const struct stat *st)
{
        return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && st->st_gid != getegid();
}

/* `rel`'s directory in the upper, as the lower's: 0, or -1 when it cannot be made. */
static int make_dir(struct dirwalk *w, const char *rel)
{
        struct stat st;

        if (fstatat(w->lower, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
                return -1;
        if (mkdirat(w->upper, rel, 0700) < 0)
                return errno == EEXIST ? 0 : -1;
        if (st.st_gid != getegid())
                (void)fchownat(w->upper, rel, (uid_t)-1, st.st_gid, AT_SYMLINK_NOFOLLOW);
        if (fchmodat(w->upper, rel, st.st_mode & 07777, 0) < 0)
                return -1;
        if (w->n == w->cap) {
                w->cap = w->cap ? 2 * w->cap : 64;
                w->made = xrealloc(w->made, w->cap * sizeof(*w->made));
                w->times = xrealloc(w->times, w->cap * sizeof(*w->times));
        }
        w->made[w->n] = xstrdup(rel);
        w->times[w->n][0] = st.st_atim;
        w->times[w->n][1] = st.st_mtim;
        w->n++;
        return 0;
}

/* `rel` and the directories on its way. */
static int make_chain(struct dirwalk *w, char *rel)
{
        for (char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (make_dir(w, rel) < 0) {
                        *s = '/';
                        return -1;
                }
                *s = '/';
        }
        return make_dir(w, rel);
}

static void walk_dirs(struct dirwalk *w, char *rel, size_t len, int depth)
{
        int fd = openat(w->lower, len ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d)) && w->seen < OWN_DIRS_MAX;) {
                size_t n = strlen(de->d_name);
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) || len + n + 2 > PATH_MAX ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) ||
                    (st.st_dev == w->state_dev && st.st_ino == w->state_ino))
                        continue;
                w->seen++;
                snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", de->d_name);
                if (team_dir(&st))
                        (void)make_chain(w, rel);
                if (depth < OWN_DEPTH_MAX)
                        walk_dirs(w, rel, len + n + (len ? 1 : 0), depth + 1);
                rel[len] = '\0';
        }
        closedir(d);
}

void cow_own_dirs(struct supervisor *sup, int lower_fd, int upper_fd)
{
        struct dirwalk w = {.lower = lower_fd};
        char rel[PATH_MAX] = "";
        struct stat st, state;

        if (sup->layers.ipc != IPC_NS_USERNS || fstat(lower_fd, &st) < 0 || !team_dir(&st))
                return;
        if (stat(sup->cow.state, &state) == 0) {
                w.state_dev = state.st_dev;
                w.state_ino = state.st_ino;
        }
        w.upper = openat(upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w.upper < 0)
                return;
        w.lower = openat(lower_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w.lower >= 0)
                walk_dirs(&w, rel, 0, 0);
        /* Times last, children before their parents, whose times each mkdir changed; the
         * root's too (make_upper gave it the lower's). */
        for (size_t i = w.n; i-- > 0;) {
                (void)utimensat(w.upper, w.made[i], w.times[i], AT_SYMLINK_NOFOLLOW);
                free(w.made[i]);
        }
        if (w.n)
                (void)futimens(w.upper, (struct timespec[]){st.st_atim, st.st_mtim});
        free(w.made);
        free(w.times);
        if (w.lower >= 0)
                close(w.lower);
        close(w.upper);
}

#include "supervisor/scratch.h"
#include "supervisor/signals.h"
#include "supervisor/error.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/walls.h"
#include "supervisor/vfs/mount.h"
#include "supervisor/vfs/path.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int start_cleaner(struct supervisor *sup, const char *bases[2], bool tmp_optional,
                         struct error *err);

/* Whether the real path `dir` lies in the current directory or beneath a --cow or --ro path,
 * whose tree the sandbox sees copy-on-write or read-only. */
static bool in_shared_tree(const struct supervisor *sup, const char *dir)
{
        const char *home = walls_user_home();
        char cwd[PATH_MAX], top[PATH_MAX];
        bool in = getcwd(cwd, sizeof(cwd)) && realpath(cwd, top) && vfs_path_has_prefix(dir, top);

        for (size_t i = 0; !in && i < sup->cfg->n_mounts; i++) {
                const char *flag = sup->cfg->mounts[i].flag;
                struct vfs_mount m;
                struct error e;

                if ((strcmp(flag, "cow") != 0 && strcmp(flag, "ro") != 0) ||
                    vfs_mount_parse(&m, sup->cfg->mounts[i].spec, flag[0] == 'c' ? VFS_COW : VFS_RO,
                                    cwd, home, &e) < 0)
                        continue; /* a malformed one is refused with the view */
                in = m.host && realpath(m.host, top) && vfs_path_has_prefix(dir, top);
                vfs_mount_free(&m);
        }
        return in;
}

/* The base of the private /tmp and --tmp directories: the host's /tmp, or $TMPDIR, where big
 * temporary files belong, not in memory. Not a $TMPDIR in the workspace (TMPDIR=$PWD/.tmp in
 * a CI job) or another tree the sandbox cannot write: the private /tmp would be made inside
 * it, unwritable through the overlay and listed in the workspace. */
static const char *tmp_base(const struct supervisor *sup)
{
        const char *tmp = getenv("TMPDIR");
        char real[PATH_MAX];

        if (!tmp || tmp[0] != '/')
                return "/tmp";
        if (realpath(tmp, real) && in_shared_tree(sup, real)) {
                if (sup->cfg->verbose)
                        fprintf(stderr,
                                "stockade: TMPDIR (%s) lies in a tree the sandbox sees "
                                "copy-on-write or read-only: the private /tmp is kept in /tmp\n",
                                tmp);
                return "/tmp";
        }
        return tmp;
}

static const char *scratch_base(const struct supervisor *sup)
{
        struct stat st;

        if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
            access("/dev/shm", W_OK | X_OK) == 0)
                return "/dev/shm"; /* tmpfs: shared memory that is memory */
        return tmp_base(sup);
}

/*
 * Without a mount namespace /tmp is the host's, and a tool cache there (walls_env) one that
 * other users could fill: the caches go in a directory of this run's instead, made 0700
 * beneath the base of the private directories by the cleaner, which removes it at the end. Not
 * where the sandbox sees a shared tree (a workspace that is /tmp): it would show there.
 */
static const char *cache_base(const struct supervisor *sup, char real[PATH_MAX])
{
        /* Its real path: the view knows the directory by that (walls_env). */
        if (sup->cfg->clear_env || !realpath(tmp_base(sup), real) || in_shared_tree(sup, real))
                return NULL;
        return real;
}

/* The directory `name` in the cleaner's directory `dir`, the command's: for root running it
 * as another user, given to that user, with `dir` made searchable (0711, not listable). */
static char *make_own_dir(const struct supervisor *sup, const char *dir, const char *name,
                          struct error *err)
{
        char path[PATH_MAX + 16];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (mkdir(path, 0700) < 0) {
                make_error(err, errno, "create `%s`", path);
                return NULL;
        }
        if (sup->cfg->set_user && geteuid() == 0 &&
            (chown(path, sup->cfg->uid, sup->cfg->gid) < 0 || chmod(dir, 0711) < 0)) {
                make_error(err, errno, "give `%s` to the command's user", path);
                return NULL;
        }
        return xstrdup(path);
}

int scratch_setup(struct supervisor *sup, struct error *err)
{
        /* The same cleaner removes the private /tmp and --tmp directories (the tool caches'
         * directory without a mount namespace). */
        char real[PATH_MAX];
        const char *bases[2] = {scratch_base(sup),
                                sup->layers.mntns ? tmp_base(sup) : cache_base(sup, real)};

        /* The caches' directory is a convenience: without it the run goes on, without them. */
        if (start_cleaner(sup, bases, !sup->layers.mntns, err) < 0)
                return -1;
        /* Root running the command as another user: the user's, like its /dev/shm files. */
        sup->shm_dir = make_own_dir(sup, sup->scratch, "shm", err);
        if (!sup->shm_dir)
                return -1;
        if (sup->tmp_scratch) {
                sup->cache_dir = make_own_dir(sup, sup->tmp_scratch, "cache", err);
                if (!sup->cache_dir)
                        return -1;
        }
        if (sup->tmp_scratch && !sup->layers.mntns) {
                sup->tmpdir_own = make_own_dir(sup, sup->tmp_scratch, "tmp", err);
                if (!sup->tmpdir_own)
                        return -1;
        }
        return places_add(&sup->places, sup->shm_dir, PLACE_TREE, err);
}

enum {
        CLEAN_DEPTH_MAX = 64, /* deeper: the shell's way (two fds a level while we walk) */
        CLEAN_PASSES = 3,     /* readdir passes over one directory before giving up */
};

/* chmod u+rwx of the directory `fd` (O_PATH: through /proc, fchmod refuses it), as `chmod -R
 * u+rwx` did, so that we may list it and remove what is in it. Directories only: a file is
 * removed whatever its mode, and a hard link to a host file keeps the mode it has. */
static void clean_make_ours(int fd)
{
        char proc[48];
        struct stat st;

        if (fstat(fd, &st) < 0 || (st.st_mode & 0700) == 0700)
                return;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        (void)!chmod(proc, (st.st_mode & 07777) | 0700);
}

/* Empty the directory `dir` (an O_PATH fd), `depth` levels below the top. */
static int clean_dir(int dir, int depth)
{
        int fd, r = -1;
        DIR *d;

        if (depth > CLEAN_DEPTH_MAX)
                return -1;
        clean_make_ours(dir);
        fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -1;
        }
        /* Until a pass finds nothing: an entry removed while the stream is read must not
         * hide another. */
        for (int pass = 0; pass < CLEAN_PASSES && r < 0; pass++) {
                bool any = false, failed = false;
                struct dirent *e;

                rewinddir(d);
                while ((e = readdir(d))) {
                        int sub;

                        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                                continue;
                        any = true;
                        if (unlinkat(fd, e->d_name, 0) == 0 || errno == ENOENT)
                                continue;
                        if (errno != EISDIR) {
                                failed = true;
                                continue;
                        }
                        /* Never through a symlink, never back up by "..": a directory moved
                         * away meanwhile is emptied where it went, and nothing above it. */
                        sub = openat(fd, e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0 || clean_dir(sub, depth + 1) < 0 ||
                            unlinkat(fd, e->d_name, AT_REMOVEDIR) < 0)
                                failed = true;
                        if (sub >= 0)
                                close(sub);
                }
                if (!any)
                        r = 0;
                else if (failed)
                        break;
        }
        closedir(d);
        return r;
}

int scratch_clean_tree(int dir)
{
        return clean_dir(dir, 0);
}

/* The shell's way, for what clean_dir does not finish (scratch_clean_tree). chmod -R only
 * where we are not root, who needs no mode to walk and remove, and whose chmod -R follows a
 * symlink swapped in between its stat and its chmod: the command's user, who can reach
 * /dev/shm/stockade-X/shm from the host when root runs the command as them, made a tree too
 * deep for clean_dir and had root's chmod -R make a file of its choosing world-writable (an
 * outside review). */
static const char cleaner_script[] =
        "read x\n"
        "clean() {\n"
        "  [ -n \"$3\" ] || return 0\n"
        "  (cd -P /proc/self/fd/$1 && { [ \"$(id -u)\" = 0 ] || chmod -R u+rwx .; } &&\n"
        "   find . -mindepth 1 -delete)\n"
        "  [ \"$(stat -c %d:%i -- \"$2\" 2>/dev/null)\" = \"$3\" ] && rmdir -- \"$2\"\n"
        "}\n"
        "clean 3 \"$1\" \"$2\"; clean 4 \"$3\" \"$4\"";

/*
 * Until the pipe ends, the cleaner is also the stop watcher (signals.c): once told what to
 * spare (scratch_watch: the pid namespace's init and stockade's helpers), it looks every 100 ms
 * whether stockade is stopped and stops the tree with it. A fork less than a watcher of its
 * own (~1 ms a run on the 2-core VM).
 */
static void wait_for_the_end(pid_t supervisor)
{
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        bool watching = false, stopped = false;
        struct watch_orders o = {.spare = {-1, -1, -1, -1}}, msg;

        for (;;) {
                int n = poll(&pfd, 1, watching ? 100 : -1);
                ssize_t r;

                if (n < 0 && errno != EINTR)
                        return;
                if (n == 0) {
                        signals_watch_tick(supervisor, &o, &stopped);
                        continue;
                }
                if (n < 0)
                        continue;
                r = read(0, &msg, sizeof(msg));
                if (r == 0 || (r < 0 && errno != EINTR))
                        return;
                if (r == sizeof(msg)) {
                        o = msg;
                        watching = true;
                }
        }
}

/* The cleaner's life once the pipe ends: each directory emptied by its fd (3, 4), then
 * removed if its path still leads to it; whatever is left goes to the shell's way. */
static _Noreturn void cleaner(const char *dirs[2], char id[2][64], pid_t supervisor)
{
        bool left = false;

        wait_for_the_end(supervisor);
        for (int i = 0; i < 2; i++) {
                struct stat st;
                char now[64];

                if (!dirs[i])
                        continue;
                if (scratch_clean_tree(3 + i) < 0) {
                        left = true;
                        continue;
                }
                snprintf(now, sizeof(now), "%s", "");
                if (stat(dirs[i], &st) == 0)
                        snprintf(now, sizeof(now), "%lu:%lu", (unsigned long)st.st_dev,
                                 (unsigned long)st.st_ino);
                if (strcmp(now, id[i]) == 0 && rmdir(dirs[i]) < 0 && errno != ENOENT)
                        left = true;
        }
        if (left)
                execl("/bin/sh", "sh", "-c", cleaner_script, "stockade-cleaner", dirs[0], id[0],
                      dirs[1] ? dirs[1] : "", id[1], (char *)NULL);
        _exit(left ? 127 : 0);
}

/* What the cleaner made, sent back to stockade in one piece. */
struct made {
        int err, which; /* errno of the mkdtemp that failed, and which one (0, 1) */
        char dirs[2][PATH_MAX];
};

/*
 * The cleaner's start, in the child: it makes the directories itself (`bases[1]` NULL: the
 * first only; with `tmp_optional` a second it cannot make is left out), so that nothing exists before a process is there to remove it (a stockade
 * killed between its mkdtemp and the fork once left the pair for good), sends their paths
 * back on `back`, then waits on `ctl` for the end. Never returns.
 */
static _Noreturn void cleaner_start(int ctl, int back, const char *bases[2], bool tmp_optional,
                                    pid_t supervisor)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC), fds[2] = {-1, -1};
        const char *dirs[2] = {NULL, NULL};
        char id[2][64] = {"", ""};
        struct made made;

        memset(&made, 0, sizeof(made));
        signal(SIGPIPE, SIG_IGN); /* stockade gone: its answer is not read, the end is */
        setsid();
        prctl(PR_SET_NAME, "stockade-clean");
        if (null < 0 || dup2(ctl, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                _exit(1);
        /* The directories by fd (3, 4), and their identity: a sandbox that can write where
         * one lies ($TMPDIR in the workspace, same uid) could put a symlink in its place, and
         * chmod -R and rm -rf by path would follow it (an outside review had root's chmod -R
         * change a host tree so). The content is removed from inside the very directory; the
         * directory itself only if its path still leads to it. */
        for (int i = 0; i < 2 && bases[i] && !made.err; i++) {
                struct stat st;

                if (snprintf(made.dirs[i], PATH_MAX, "%s/%s-XXXXXX", bases[i],
                             i ? "stockade-tmp" : "stockade") >= PATH_MAX) {
                        made.err = ENAMETOOLONG, made.which = i;
                        break;
                }
                /* 0700, also as root running the command as another user: inside, the
                 * private directory is a mount root, reached without this parent; outside,
                 * another host user must not walk in (an outside review did, root run). */
                if (!mkdtemp(made.dirs[i])) {
                        if (i == 1 && tmp_optional) {
                                made.dirs[i][0] = '\0';
                                break;
                        }
                        made.err = errno, made.which = i;
                        break;
                }
                dirs[i] = made.dirs[i];
                fds[i] = open(dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fds[i] < 0 || fstat(fds[i], &st) < 0)
                        _exit(1);
                snprintf(id[i], sizeof(id[i]), "%lu:%lu", (unsigned long)st.st_dev,
                         (unsigned long)st.st_ino);
        }
        (void)!write(back, &made, sizeof(made));
        close(back);
        for (int i = 0; i < 2; i++)
                if (fds[i] >= 0 && dup2(fds[i], 3 + i) < 0)
                        _exit(1);
        /* Nothing else of ours: a pipe's write end held here (a caller's stdout) would keep
         * its reader waiting for us. */
        if (syscall(SYS_close_range, dirs[1] ? 5 : 4, ~0U, 0) < 0)
                _exit(1);
        cleaner(dirs, id, supervisor);
}

/*
 * The cleaner: a process of its own, started before the supervisor enters its Landlock
 * domain (which may not remove the scratch directory from its parent). It waits for the end
 * of the pipe — closed when the tree is torn down, or when stockade dies, however — then
 * empties the scratch and removes it. It is our child, in a session of its own (^C and a
 * hang-up of the terminal are not its business); the teardown reaps it like the tree, so that
 * the scratch is gone when stockade exits, also as PID 1 of a pid namespace, where anything
 * left would be killed with us.
 *
 * A fork of ours that does not exec: the end of every run waits for it, and sh running chmod,
 * find, stat and rmdir for each directory cost about 10 ms of it (2-core VM). So its command
 * line is stockade's (its name, stockade-clean); it holds nothing of ours but the pipe and
 * the directories, and no thread exists yet (no lock can be held in this copy), no signal
 * handler either. What its own walk cannot remove (scratch_clean_tree) is left to sh, as
 * before: `chmod -R u+rwx` and `find -delete` inside each directory.
 */
static int start_cleaner(struct supervisor *sup, const char *bases[2], bool tmp_optional,
                         struct error *err)
{
        pid_t supervisor = getpid();
        struct made made;
        int p[2], q[2];
        size_t got = 0;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return make_error(err, errno, "pipe for the scratch cleaner");
        if (pipe2(q, O_CLOEXEC) < 0) {
                close(p[0]);
                close(p[1]);
                return make_error(err, errno, "pipe for the scratch cleaner");
        }
        pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                close(q[0]);
                close(q[1]);
                return make_error(err, errno, "fork the scratch cleaner");
        }
        if (pid == 0) {
                close(p[1]);
                close(q[0]);
                cleaner_start(p[0], q[1], bases, tmp_optional, supervisor);
        }
        close(p[0]);
        close(q[1]);
        sup->cleaner_fd = p[1];
        sup->cleaner = pid;
        /* What it made, or why it could not: a cleaner that died first made nothing left. */
        while (got < sizeof(made)) {
                ssize_t n = read(q[0], (char *)&made + got, sizeof(made) - got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t)n;
        }
        close(q[0]);
        if (got < sizeof(made))
                return make_error(err, 0, "the scratch cleaner died before it made the scratch");
        if (made.err)
                return make_error(err, made.err,
                                  made.which ? "create a directory for the "
                                               "private /tmp in `%s`"
                                             : "create a scratch directory in `%s`",
                                  bases[made.which]);
        sup->scratch = xstrdup(made.dirs[0]);
        if (bases[1] && made.dirs[1][0])
                sup->tmp_scratch = xstrdup(made.dirs[1]);
        return 0;
}

int scratch_watch(struct supervisor *sup, const struct watch_orders *o)
{
        if (sup->cleaner_fd < 0 || sup->cleaner <= 0)
                return -1;
        _Static_assert(sizeof(*o) <= PIPE_BUF, "the watcher's orders in one write");
        /* One write: the pipe takes it whole (PIPE_BUF). */
        return write(sup->cleaner_fd, o, sizeof(*o)) == (ssize_t)sizeof(*o) ? 0 : -1;
}

void scratch_release(struct supervisor *sup)
{
        if (sup->cleaner_fd >= 0)
                close(sup->cleaner_fd); /* the cleaner reads EOF and removes the scratch */
        sup->cleaner_fd = -1;
}

void scratch_remove(struct supervisor *sup)
{
        scratch_release(sup);
        /* Wait for it unless the teardown reaped it already (ECHILD then). */
        if (sup->cleaner > 0)
                while (waitpid(sup->cleaner, NULL, 0) < 0 && errno == EINTR)
                        ;
        sup->cleaner = 0;
        free(sup->scratch);
        if (sup->shm_root >= 0)
                close(sup->shm_root);
        sup->shm_root = -1;
        free(sup->shm_dir);
        free(sup->resolv);
        sup->resolv = NULL;
        free(sup->tmp_scratch);
        free(sup->cache_dir);
        free(sup->tmpdir_own);
        sup->scratch = sup->shm_dir = sup->tmp_scratch = sup->cache_dir = sup->tmpdir_own = NULL;
}

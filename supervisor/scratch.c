#include "supervisor/scratch.h"
#include "supervisor/signals.h"
#include "supervisor/error.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <poll.h>
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

static int start_cleaner(struct supervisor *sup, struct error *err);

static const char *scratch_base(void)
{
        const char *tmp = getenv("TMPDIR");
        struct stat st;

        if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
            access("/dev/shm", W_OK | X_OK) == 0)
                return "/dev/shm"; /* tmpfs: shared memory that is memory */
        return tmp && tmp[0] == '/' ? tmp : "/tmp";
}

int scratch_setup(struct supervisor *sup, struct error *err)
{
        char dir[PATH_MAX], shm[PATH_MAX + 8];
        const char *base = scratch_base();

        if (snprintf(dir, sizeof(dir), "%s/stockade-XXXXXX", base) >= (int)sizeof(dir))
                return make_error(err, 0, "scratch directory: `%s` is too long", base);
        if (!mkdtemp(dir))
                return make_error(err, errno, "create a scratch directory in `%s`", base);
        sup->scratch = xstrdup(dir);
        /* The private /tmp and --tmp directories go on the host's /tmp (or $TMPDIR), where
         * big temporary files belong, not in memory; the same cleaner removes them. */
        if (sup->layers.mntns) {
                const char *tmp = getenv("TMPDIR");
                char tdir[PATH_MAX];

                snprintf(tdir, sizeof(tdir), "%s/stockade-tmp-XXXXXX",
                         tmp && tmp[0] == '/' ? tmp : "/tmp");
                if (!mkdtemp(tdir)) {
                        make_error(err, errno, "create a directory for the private /tmp in `%s`",
                                   tmp && tmp[0] == '/' ? tmp : "/tmp");
                        rmdir(dir);
                        return -1;
                }
                /* 0700, also as root running the command as another user: inside, the private
                 * directory is a mount root, reached without this parent; outside, another
                 * host user must not walk in (an outside review did, root run). */
                sup->tmp_scratch = xstrdup(tdir);
        }
        if (start_cleaner(sup, err) < 0) {
                rmdir(dir);
                if (sup->tmp_scratch)
                        rmdir(sup->tmp_scratch);
                return -1;
        }
        snprintf(shm, sizeof(shm), "%s/shm", dir);
        if (mkdir(shm, 0700) < 0)
                return make_error(err, errno, "create `%s`", shm);
        /* Root running the command as another user: the user's, like its /dev/shm files. */
        if (sup->cfg->set_user && geteuid() == 0 &&
            (chown(shm, sup->cfg->uid, sup->cfg->gid) < 0 || chmod(dir, 0711) < 0))
                return make_error(err, errno, "give `%s` to the command's user", shm);
        sup->shm_dir = xstrdup(shm);
        return places_add(&sup->places, shm, PLACE_TREE, err);
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

/* The shell's way, for what clean_dir does not finish (scratch_clean_tree). */
static const char cleaner_script[] =
        "read x\n"
        "clean() {\n"
        "  [ -n \"$3\" ] || return 0\n"
        "  (cd -P /proc/self/fd/$1 && chmod -R u+rwx . && find . -mindepth 1 -delete)\n"
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
        int32_t msg[WATCH_SPARE];
        pid_t spare[WATCH_SPARE] = {-1, -1, -1, -1};

        for (;;) {
                int n = poll(&pfd, 1, watching ? 100 : -1);
                ssize_t r;

                if (n < 0 && errno != EINTR)
                        return;
                if (n == 0) {
                        signals_watch_tick(supervisor, spare, &stopped);
                        continue;
                }
                if (n < 0)
                        continue;
                r = read(0, msg, sizeof(msg));
                if (r == 0 || (r < 0 && errno != EINTR))
                        return;
                if (r == sizeof(msg)) {
                        for (int i = 0; i < WATCH_SPARE; i++)
                                spare[i] = msg[i];
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
static int start_cleaner(struct supervisor *sup, struct error *err)
{
        pid_t supervisor = getpid();
        int p[2];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return make_error(err, errno, "pipe for the scratch cleaner");
        pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                return make_error(err, errno, "fork the scratch cleaner");
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                char id[2][64] = {"", ""};
                const char *dirs[2] = {sup->scratch, sup->tmp_scratch};

                setsid();
                prctl(PR_SET_NAME, "stockade-clean");
                if (null < 0 || dup2(p[0], 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(1);
                /* The directories by fd (3, 4), and their identity: a sandbox that can write
                 * where one lies ($TMPDIR in the workspace, same uid) could put a symlink in
                 * its place, and chmod -R and rm -rf by path would follow it (an outside
                 * review had root's chmod -R change a host tree so). The content is removed
                 * from inside the very directory; the directory itself only if its path
                 * still leads to it. */
                for (int i = 0; i < 2; i++) {
                        struct stat st;
                        int fd;

                        if (!dirs[i])
                                continue;
                        fd = open(dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW);
                        if (fd < 0 || fstat(fd, &st) < 0 || dup2(fd, 3 + i) < 0)
                                _exit(1);
                        snprintf(id[i], sizeof(id[i]), "%lu:%lu", (unsigned long)st.st_dev,
                                 (unsigned long)st.st_ino);
                }
                /* Nothing else of ours: a pipe's write end held here (a caller's stdout)
                 * would keep its reader waiting for us. */
                if (syscall(SYS_close_range, dirs[1] ? 5 : 4, ~0U, 0) < 0)
                        _exit(1);
                cleaner(dirs, id, supervisor);
        }
        close(p[0]);
        sup->cleaner_fd = p[1];
        sup->cleaner = pid;
        return 0;
}

int scratch_watch(struct supervisor *sup, const pid_t spare[])
{
        int32_t msg[WATCH_SPARE];

        if (sup->cleaner_fd < 0 || sup->cleaner <= 0)
                return -1;
        for (int i = 0; i < WATCH_SPARE; i++)
                msg[i] = spare[i];
        /* One write of 16 bytes: the pipe takes it whole (PIPE_BUF). */
        return write(sup->cleaner_fd, msg, sizeof(msg)) == (ssize_t)sizeof(msg) ? 0 : -1;
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
        sup->scratch = sup->shm_dir = sup->tmp_scratch = NULL;
}

/*
 * swapper SESSIONS VICTIM SECONDS: what another run's program can do to a session store it
 * may write (test_cow_store.sh). Whenever a session directory in SESSIONS has its `lock`
 * held (a run has opened the directory and locked it: a new session's or one continued), the
 * directory is moved to `.mv-NAME` and a symlink to VICTIM put at NAME: whatever the run then
 * does by path beneath SESSIONS/NAME lands in VICTIM. Prints "swapped NAME" each time; runs
 * SECONDS, polling as fast as it can (the window is the run's start).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { NAME_LEN = 128 };

/* Whether NAME in `dir` is a directory (not a symlink) whose lock someone holds. */
static bool held(int dir, const char *name)
{
        char lock[NAME_LEN + 8];
        struct stat st;
        bool busy;
        int fd;

        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                return false;
        snprintf(lock, sizeof(lock), "%s/lock", name);
        fd = openat(dir, lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return false;
        busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
        close(fd); /* gives back a lock we took */
        return busy;
}

int main(int argc, char **argv)
{
        char moved[NAME_LEN + 8];
        time_t end;
        int dir;

        if (argc != 4) {
                fprintf(stderr, "usage: swapper SESSIONS VICTIM SECONDS\n");
                return 2;
        }
        end = time(NULL) + atoi(argv[3]);
        dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) {
                perror(argv[1]);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (time(NULL) < end) {
                int fd = dup(dir);
                struct dirent *e;
                DIR *d;

                if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || !(d = fdopendir(fd)))
                        return 1;
                while ((e = readdir(d))) {
                        if (e->d_name[0] == '.' || strlen(e->d_name) >= NAME_LEN ||
                            !held(dir, e->d_name))
                                continue;
                        snprintf(moved, sizeof(moved), ".mv-%s", e->d_name);
                        if (renameat(dir, e->d_name, dir, moved) == 0 &&
                            symlinkat(argv[2], dir, e->d_name) == 0) {
                                printf("swapped %s\n", e->d_name);
                                fflush(stdout);
                        }
                }
                closedir(d);
        }
        return 0;
}

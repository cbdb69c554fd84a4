/*
 * Target fds: the calling thread's fds and working directory, taken into the supervisor so
 * that a handler acts on the very objects the program named. The copies are the caller's
 * only while its notification still waits for an answer: take them, THEN check ID_VALID
 * (tmem_id_valid), since a tid can be reused once the caller is gone.
 */
#ifndef STOCKADE_TFD_H
#define STOCKADE_TFD_H

#include <sys/types.h>

/* A copy of fd `fd` of thread `tid` (pidfd_getfd; O_CLOEXEC). The pidfd names the calling
 * thread (PIDFD_THREAD): a thread may have an fd table of its own (clone without
 * CLONE_FILES). Each supervisor thread keeps the pidfd of the last tid it took from (tfd.c).
 * Returns the fd, or -errno: -ESRCH when the thread is gone, -EBADF when it has no such fd. */
int tfd_take(pid_t tid, int fd);

/* Close the pidfd tfd_take keeps for this thread (the last tid it took from); a thread that
 * ends calls it. */
void tfd_forget(void);

/* The working directory of thread `tid`, opened O_PATH|O_DIRECTORY (/proc/TID/cwd: per
 * thread too, since CLONE_FS can be left out). Returns the fd or -errno (-ESRCH: gone). */
int tfd_cwd(pid_t tid);

#endif

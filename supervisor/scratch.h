/*
 * The run's private scratch on the host: the directory behind the sandbox's /dev/shm, so
 * that its POSIX shared memory and named semaphores (shm_open, sem_open: files in /dev/shm)
 * are its own, not the host's (DESIGN.md: kernel state shared with the host is made
 * private). Removed at the end of the run, by a process of its own.
 */
#ifndef STOCKADE_SCRATCH_H
#define STOCKADE_SCRATCH_H

#include <sys/types.h>

struct supervisor;
struct error;
struct watch_orders;

/* Create <base>/stockade-XXXXXX/shm (base: /dev/shm, else $TMPDIR or /tmp), owned by the
 * program's uid, and make the run's directory a writable place. Before the walls are
 * computed. Returns 0 or -1 with *err set. */
int scratch_setup(struct supervisor *sup, struct error *err);
/* The run is over: a cleaner process started by scratch_setup removes the run's directory
 * and everything in it (it would also if stockade were killed). */
void scratch_remove(struct supervisor *sup);
/* Remove everything inside the directory `dir` (an fd, O_PATH will do), by fd, never
 * following a symlink nor going up by "..": directories are made u+rwx first (the sandbox
 * may have made one it cannot list or write), files are removed whatever their mode.
 * Returns 0 when `dir` is empty, -1 when something stays (too deep, or not ours to remove);
 * the cleaner then leaves the rest to `chmod -R` and `find -delete`. */
int scratch_clean_tree(int dir);
/* The same without freeing the paths: the tree is being torn down, the cleaner may start. */
void scratch_release(struct supervisor *sup);
/* Make the cleaner the stop watcher too (signals.c), told `o`: the processes its stop spares
 * (-1 or 0: none) and where --timeout ends. 0, or -1 where there is no cleaner to tell (the
 * caller forks a watcher). */
int scratch_watch(struct supervisor *sup, const struct watch_orders *o);

#endif

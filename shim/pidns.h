/*
 * A pid namespace of the sandbox's own, with a procfs of its own at /proc (--fast only;
 * docs/plans/pid-namespace.md). The sandbox then sees, lists and names only its own
 * processes, and the kernel confines every call that names a process to them.
 *
 * Three tasks take part:
 *   the namespaces child (shim/mntns.c), after the mount namespace and in its user
 *   namespace, unshares the pid namespace and makes I, pid 1 of it, with CLONE_PARENT: I
 *   is the supervisor's child. I mounts procfs on /proc (only a task inside may), drops
 *   everything (capabilities, fds, its command line) and only reaps orphans;
 *   the shim S joins the namespace with setns, which places only its children there, and
 *   makes C with CLONE_PARENT: C is pid 2 on inside, and the supervisor's child, which it
 *   traces and whose exit status is the run's. S tells the supervisor C's number and exits.
 * The command is never pid 1, which would drop every signal it has no handler for (^C,
 * --timeout's SIGTERM).
 */
#ifndef STOCKADE_PIDNS_H
#define STOCKADE_PIDNS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * In the namespaces child, in the mount namespace it made (and its user namespace): unshare
 * the pid namespace and start I, which mounts procfs on /proc. `supervisor` is a pidfd of
 * our parent, whose exit I watches until its PDEATHSIG is armed. Returns I's pid (ours, and
 * the supervisor's: I is its child) once the mount is made, or -errno with *step (every
 * step starts with "pid namespace").
 */
pid_t pidns_make(int supervisor, const char **step);

/*
 * In the shim S (above), with the capabilities still held: join the namespace `fd` (closed)
 * and make C. Returns 0 in C; S sends C's pid on `sock` and exits 0. -errno with *step when
 * S could not make C. C is not a session leader: the shim makes it one (the session of S,
 * which exits, could keep no terminal).
 */
int pidns_split(int fd, int sock, const char **step);

#endif

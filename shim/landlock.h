/* Landlock as a second wall: a domain of the sandbox's own. */
#ifndef STOCKADE_LANDLOCK_H
#define STOCKADE_LANDLOCK_H

/* Landlock scope bits (ABI 6), absent from older kernel headers. */
#define STOCKADE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define STOCKADE_LANDLOCK_SCOPE_SIGNAL               (1ull << 1)

#include <stdint.h>

struct places;

/* The Landlock ABI this kernel offers; 0 when absent. */
int landlock_abi_version(void);
/* Every write-type filesystem right the ABI knows: WRITE_FILE, REMOVE_*, MAKE_*, REFER (2),
 * TRUNCATE (3). Not IOCTL_DEV, not read or execute. */
uint64_t landlock_write_access(int abi);
/*
 * Put the calling process (and everything it starts) into a new Landlock domain. Whatever
 * the ABI, a task in a domain cannot ptrace — nor open /proc/PID/mem, environ, fd/ of — a
 * task outside it. With ABI 6, signals and abstract unix sockets are scoped to the domain
 * too. Files: nothing can be written, created, removed, renamed or truncated anywhere but
 * beneath the PLACE_TREE places (every write right) and in the PLACE_DEVICE files (content
 * only), whatever the uid; fds[i] is an O_PATH fd of places->v[i] (-1: skip it). Reads stay
 * open. Needs NO_NEW_PRIVS. Returns 0 or -errno.
 */
int landlock_enter_domain(int abi, const struct places *places, const int *fds);

#endif

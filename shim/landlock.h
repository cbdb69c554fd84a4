/* Landlock as a second wall: a domain of the sandbox's own. */
#ifndef STOCKADE_LANDLOCK_H
#define STOCKADE_LANDLOCK_H

/* Landlock scope bits (ABI 6), absent from older kernel headers. */
#define STOCKADE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define STOCKADE_LANDLOCK_SCOPE_SIGNAL               (1ull << 1)

/* The Landlock ABI this kernel offers; 0 when absent. */
int landlock_abi_version(void);
/*
 * Put the calling process (and everything it starts) into a new Landlock domain. Whatever
 * the ABI, a task in a domain cannot ptrace — nor open /proc/PID/mem, environ, fd/ of — a
 * task outside it. With ABI 6, signals and abstract unix sockets are scoped to the domain
 * too. No file access is restricted yet (that is the virtual filesystem's job). Needs
 * NO_NEW_PRIVS. Returns 0 or -errno.
 */
int landlock_enter_domain(int abi);

#endif

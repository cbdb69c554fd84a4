/* Landlock as a second wall: a domain of the sandbox's own. */
#ifndef STOCKADE_LANDLOCK_H
#define STOCKADE_LANDLOCK_H

/* Landlock scope bits (ABI 6), absent from older kernel headers. */
#define STOCKADE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define STOCKADE_LANDLOCK_SCOPE_SIGNAL               (1ull << 1)

#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>

/* ABI 2 and 3 rights, absent from older kernel headers (Debian 12's among them). */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ull << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ull << 14)
#endif

/* ABI 4 network rights, absent from older kernel headers. */
#define STOCKADE_LANDLOCK_ACCESS_NET_BIND_TCP    (1ull << 0)
#define STOCKADE_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ull << 1)

struct grants;

/* The Landlock ABI this kernel offers; 0 when absent. */
int landlock_abi_version(void);
/* Every write-type filesystem right the ABI knows: WRITE_FILE, REMOVE_*, MAKE_*, REFER (2),
 * TRUNCATE (3). Not IOCTL_DEV, not read or execute. */
uint64_t landlock_write_access(int abi);

/* A rule granting `access` beneath the directory `dirfd`. Returns 0 or -errno. */
int landlock_add_fd_rule(int ruleset, int dirfd, uint64_t access);
/*
 * A Landlock ruleset for a domain of the sandbox's own. Whatever the ABI, a task in the
 * domain cannot ptrace — nor open /proc/PID/mem, environ, fd/ of — a task outside it; with
 * ABI 6, signals and abstract unix sockets are scoped to the domain too. Files: reading,
 * executing, listing and every write-type right are handled, so only what a rule grants is
 * allowed, whatever the uid. With ABI 4, TCP bind and connect are handled with no rule: the
 * kernel refuses every one the program makes itself, since the supervisor makes all of them
 * (outside this domain) after judging them (syscalls/net_*.c). `scoped` false leaves the
 * network, signals and abstract sockets out: the supervisor's own domain (spawn.c), which
 * performs the allowed connections. Returns the ruleset fd or -errno.
 */
int landlock_ruleset_create(int abi, bool scoped);
/* Add a rule for each grant (supervisor/grants.h), opened O_PATH now; a path that cannot be
 * opened, or is no longer the file the supervisor saw, is left out. `ruleset` is the
 * supervisor's, `also` the sandbox's (or -1): each grant goes to the one its `who` names, or
 * to both, each path opened once for both. Returns 0 or -errno. */
int landlock_add_grants(int ruleset, int also, const struct grants *g);
/* Enter the domain (needs NO_NEW_PRIVS). Returns 0 or -errno. */
int landlock_restrict(int ruleset);

#endif

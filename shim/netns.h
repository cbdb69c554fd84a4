/*
 * The sandbox's own network namespace (issue 8 item 5), where a user namespace (or root)
 * allows one: the program has only its own loopback. Its servers are its own (the host
 * cannot reach them, and it cannot squat a port or an abstract unix name a host program
 * expects); every connection the policy allows out is a socket the supervisor makes in the
 * host's namespace and puts in the program's place (syscalls/net_connect.c).
 *
 * Made by the throwaway child of ns_start (shim/mntns.h), inside the IPC namespace's user
 * namespace when stockade is not root; the shim joins it with setns, and the supervisor
 * keeps a socket maker in it (supervisor/sockmaker.h).
 */
#ifndef STOCKADE_NETNS_H
#define STOCKADE_NETNS_H

/* Move the calling process into a new network namespace and bring its loopback up. Needs
 * CAP_SYS_ADMIN and CAP_NET_ADMIN over the namespace (root, or the owner of a new user
 * namespace). Returns 0, or -errno with *step naming what failed. */
int netns_enter(const char **step);

/* In the mount namespace of the sandbox, after unshare(CLONE_NEWNET): /sys/class/net and
 * /sys/devices/virtual/net become those of a sysfs mounted in the new network namespace, so
 * that they list lo alone (a sysfs shows the network devices of the namespace it was mounted
 * in). Best effort: where the kernel refuses the mount, the host's stay (said in the README).
 * Physical interfaces still show beneath /sys/devices and /sys/bus. */
void netns_sysfs(void);

/* In the shim: join the namespace `fd` (closed). Returns 0 or -errno with *step. */
int netns_join(int fd, const char **step);

#endif

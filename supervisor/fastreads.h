/*
 * --fast's kernel reads: an open for reading (O_RDONLY; nothing created, truncated or
 * O_TMPFILE'd) is left to the kernel, which judges it with the walls alone. README "Fast
 * mode" says what the program then sees that the view would not show.
 *
 * The walls, where the view used to judge every such open (syscalls/fs_open.c):
 *   - hidden paths: a mask over each that exists (cow_masks.c, required under --fast), and
 *     Landlock's reads split around every hidden path, also one not there at the start
 *     (grants.h, `kernel_reads`): whatever is made there during the run has no rule;
 *   - /proc: the pid namespace's own procfs (shim/pidns.h); every other mount of procfs on
 *     the host (a chroot's /proc, which shows the host's processes) masked;
 *   - /dev: Landlock grants the sandbox only the devices of places.c, its terminal and the
 *     private /dev/shm; every other mount is nodev, so that no device node elsewhere opens;
 *   - /etc/resolv.conf: the view's (dns.h), bound over the host's when the supervisor answers
 *     DNS;
 *   - /proc/net and /proc/sys/net: the sandbox's own network namespace's (or the host's with
 *     --net host, as asked).
 * Where one of these cannot be had (no network namespace of its own under a network policy,
 * DNS answered but no /etc/resolv.conf on the host to cover), the opens stay the view's, as
 * -v says; --fast is not refused.
 */
#ifndef STOCKADE_FASTREADS_H
#define STOCKADE_FASTREADS_H

struct supervisor;
struct error;

/* After walls_setup and the network probe, before the namespaces are made: decide, and add
 * the mounts (sup->binds) the walls need. Sets sup->fast_reads and fopts.kernel_reads.
 * Returns 0 or -1 with *err set. */
int fastreads_setup(struct supervisor *sup, struct error *err);
/* The grants the mounts above need (the bound resolv.conf), after grants_compute. */
void fastreads_grants(struct supervisor *sup);

#endif

/*
 * Target memory: copies out of the memory of the task that made a call. Memory the
 * supervisor reads can change at any time (another thread, CLONE_VM, a shared mapping,
 * /proc/PID/mem of a sibling), so a handler copies each argument ONCE, checks that the
 * notification is still alive (tmem_id_valid), and decides and acts on its copy only.
 */
#ifndef STOCKADE_TMEM_H
#define STOCKADE_TMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copy `len` bytes at `addr` of task `tid`. process_vm_readv, or pread on /proc/TID/mem
 * where that is refused. Returns 0 or -errno (EFAULT for an address that is not mapped or
 * only partly). */
int tmem_read(pid_t tid, uint64_t addr, void *buf, size_t len);
/* Copy the NUL-terminated string at `addr` into buf (size bytes, NUL included). Returns its
 * length, -EFAULT, or -ENAMETOOLONG when no NUL comes within size bytes. */
ssize_t tmem_read_string(pid_t tid, uint64_t addr, char *buf, size_t size);
/* Write `len` bytes at `addr` of task `tid`, as the kernel writes a result into the caller's
 * memory (sendmmsg's msg_len): process_vm_writev, which honours the page protections, or
 * /proc/TID/mem where that is refused. Returns 0 or -errno (EFAULT). Only for results of a
 * call the supervisor performed for `tid`, into the memory that call named. */
int tmem_write(pid_t tid, uint64_t addr, const void *buf, size_t len);
/* SECCOMP_IOCTL_NOTIF_ID_VALID: 0 while notification `id` still waits for its answer (so
 * its pid still names the same task), -ENOENT once it is gone. */
int tmem_id_valid(int listener, uint64_t id);

#endif

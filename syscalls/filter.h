/* The seccomp BPF program, compiled from the syscall table and the register-argument
 * rules. filter_decide() is the same decision computed directly; the unit tests check the
 * compiled program against it with the simulator (bpf_sim.h). */
#ifndef STOCKADE_FILTER_H
#define STOCKADE_FILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

struct filter_opts {
        bool audit;          /* policy denials become notifications that are reported and allowed */
        bool count_procs;    /* fork/vfork/clone are notified so that --max-procs can refuse them */
        bool signals_scoped; /* Landlock (ABI 6) keeps signals in the sandbox: no SIGIO checks */
        bool ipc_denied;     /* no private IPC namespace: SysV IPC calls fail with EPERM */
        /* The supervisor answers DNS (supervisor/dns.c): recvfrom with a source address is
         * notified, so that the answer's source reads as the nameserver's (net_dns.c). */
        bool dns;
        /* The network policy is on (not --net host): multicast group joins are refused. */
        bool net_policy;
        /* Twins can exist (a network namespace of the sandbox's own, a policy that lets
         * something out: syscalls/net.h): the socket filter options are notified, and
         * getsockname is performed by the supervisor (syscalls/net_twin.c). */
        bool twins;
        /* --fast: the calls that only look at names and metadata (the stat family, access,
         * readlink, listings) stay in the kernel, which resolves them in the sandbox's mount
         * namespace, where hidden paths are masked (README "Fast mode"). */
        bool kernel_looks;
        /* --fast, where the walls can judge reads alone (supervisor/walls.c, fast_reads):
         * opens for reading (O_RDONLY, nothing created or truncated) stay in the kernel. */
        bool kernel_reads;
        /* --fast: the sandbox has a pid namespace of its own (shim/pidns.h): the calls that
         * name a process by number (kill, prlimit, sched_*, pidfd_open...) or by pidfd
         * (pidfd_send_signal), and F_SETOWN, stay in the kernel, which confines them to the
         * namespace. Their handlers would read the namespace's numbers as the host's. */
        bool pidns;
        /* A copy-on-write mount is merged by the supervisor (syscalls/fs_cow.h): the xattr
         * getters by path, which the kernel would answer from the lower alone, are notified. */
        bool cow_merged;
        /* ... for the tracer: chdir, exec, O_PATH opens, statfs, inotify_add_watch stop for
         * it (fs_cow_traced); a run that then cannot ptrace is refused (spawn.c, seize). */
        bool cow_traced;
        /* --trace-level all: what the kernel would decide (allow, errno) is notified, and the
         * supervisor decides it the same way from the registers (notify.c). Kill stays in the
         * kernel. Except the shim's hand-off write, which carries `handoff_key` as its 4th
         * argument: it comes before anyone serves the listener. */
        bool trace_all;
        uint64_t handoff_key;
};

/* Compile the filter into *prog (prog->filter is malloc'ed). Returns 0 or -errno. */
int filter_build(const struct filter_opts *o, struct sock_fprog *prog);
/* The SECCOMP_RET_* value the filter returns for *d. */
uint32_t filter_decide(const struct filter_opts *o, const struct seccomp_data *d);
/* Human-readable name of a SECCOMP_RET_* value ("allow", "notify", "errno EPERM", ...). */
const char *filter_action_name(uint32_t action, char *buf, unsigned len);

#endif

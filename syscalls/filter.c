/*
 * The seccomp filter, derived from the table.
 *
 * Layout of the program:
 *   1. arch != AUDIT_ARCH_X86_64 -> KILL_PROCESS. This refuses `int 0x80` (arch I386) and
 *      every other ABI.
 *   2. nr >= X32_SYSCALL_BIT -> KILL_PROCESS: x32 numbers share the x86_64 arch value.
 *   3. a balanced binary search over runs of numbers with the same action; each leaf returns
 *      the action, or jumps to the block of register-argument rules of one syscall.
 *   Numbers the table does not know fall into ENOSYS runs.
 *
 * filter_decide() computes the same function directly from the same data; the unit tests
 * run the compiled program in bpf_sim and compare.
 */
#include "syscalls/filter_int.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/netlink.h>
#include <linux/random.h>
#include <linux/sockios.h>
#ifndef SIOCGIWNAME
#define SIOCGIWNAME 0x8B01 /* linux/wireless.h */
#endif
#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <termios.h>

#define INT_MASK 0xffffffffull /* int arguments: the kernel ignores the upper half */
/* An ioctl number's type byte (_IOC_TYPE), whatever its direction and size */
#define IOC_TYPE_MASK ((uint64_t)_IOC_TYPEMASK << _IOC_TYPESHIFT)
/* fs/ext4/ext4.h's own number for FS_IOC_SETVERSION, not in the uapi headers */
#define EXT4_IOC_SETVERSION   _IOW('f', 4, long)
#define EXT4_IOC32_SETVERSION _IOW('f', 4, int)
/* The open flags that make an open more than a directory's for reading: with these clear
 * and O_DIRECTORY set, the kernel opens a directory read-only or fails. */
#define OPENDIR_MASK ((uint64_t)(O_DIRECTORY | O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE | O_PATH))
/* The open flags that make an open more than one for reading (--fast's kernel reads): with
 * all of these clear the open is O_RDONLY, creates nothing, truncates nothing, and is not
 * O_PATH (left to the kernel anyway) nor O_TMPFILE. What may be set: how the fd behaves. */
#define READ_OPEN_MASK                                                                             \
        (INT_MASK & ~(uint64_t)(O_NONBLOCK | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW | O_LARGEFILE |  \
                                O_NOCTTY | O_NOATIME))
/* New namespaces, and CLONE_UNTRACED: a child the kernel would not attach to our tracer
 * would escape the tree (teardown, --max-procs, EXITKILL). */
#define CLONE_DENIED_FLAGS                                                                         \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET | CLONE_UNTRACED)

/* First match wins; every syscall's list ends with C_ALWAYS. Rows leave `also` and `also2` out
 * (no more conditions) rather than spell {0} on every line: hence the pragma. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct arg_rule filter_arg_rules[] = {
        /* Pushing keystrokes into a terminal, or TIOCLINUX selection tricks. */
        {SC_ioctl, 1, C_EQ, INT_MASK, TIOCSTI, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, TIOCLINUX, V_ERRNO, EPERM, false, W_ALWAYS},
        /* A userfaultfd from /dev/userfaultfd, where the syscall is denied. */
        {SC_ioctl, 1, C_EQ, INT_MASK, USERFAULTFD_IOC_NEW, V_ERRNO, EPERM, false, W_ALWAYS},
        /* SIGIO owners given through memory: only Landlock's signal scope can judge them. */
        {SC_ioctl, 1, C_EQ, INT_MASK, FIOSETOWN, V_ERRNO, EPERM, false, W_UNSCOPED},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCSPGRP, V_ERRNO, EPERM, false, W_UNSCOPED},
        /* Turning SIGIO on: see fcntl below. */
        {SC_ioctl, 1, C_EQ, INT_MASK, FIOASYNC, V_NOTIFY, 0, false, W_ALWAYS},
        /* Device ioctls that tell a host interface's driver, bus address and permanent
         * MAC (ethtool, MII, wireless) on any socket: the view has lo alone (a third
         * outside review read eth0's through a twin, net.h). */
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCETHTOOL, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGMIIPHY, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGMIIREG, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIWNAME, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        /* ... and every wireless-extension ioctl (0x8BNN: where the kernel has them, ENODEV
         * against EOPNOTSUPP tells a host interface name from a missing one) */
        {SC_ioctl, 1, C_EQ, 0xffffff00ull, 0x8B00, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        /* The interface ioctls: the view of NETLINK_ROUTE (lo alone), not the host's
         * interfaces, addresses and MACs (net_ifreq.c). */
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFCONF, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFNAME, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFINDEX, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFFLAGS, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFADDR, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFDSTADDR, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFBRDADDR, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFNETMASK, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFMTU, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFHWADDR, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFMETRIC, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFTXQLEN, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGIFMAP, V_NOTIFY, 0, false, W_ALWAYS},
        /* Every other socket-device ioctl (0x89NN: routes, ARP, bridges, bonding, VLANs,
         * hardware time stamps, device- and protocol-private ones) fails alike: through a
         * twin, or any socket without a namespace, they read the host's tables (an outside
         * attack read the gateway's MAC by SIOCGARP, and told the host's interface names by
         * SIOCGIFSLAVE's and SIOCGHWTSTAMP's errnos). The socket's own stay the kernel's: its
         * owner (where the rules above leave it), time stamp, out-of-band mark, unsent
         * bytes. */
        {SC_ioctl, 1, C_EQ, INT_MASK, FIOSETOWN, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCSPGRP, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FIOGETOWN, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGPGRP, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCATMARK, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGSTAMP_OLD, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGSTAMPNS_OLD, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCOUTQNSD, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGSTAMP_NEW, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, SIOCGSTAMPNS_NEW, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, IOC_TYPE_MASK, 0x8900, V_ERRNO, EOPNOTSUPP, false, W_ALWAYS},
        /* Inode flags and project attributes (chattr): neither Landlock nor the metadata
         * handlers see them, and uid 0 may set NODUMP, SYNC, NOATIME... on any root-owned
         * host file it can open (outside review F2). file_setattr is EPERM in the table. */
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_SETFLAGS, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC32_SETFLAGS, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_FSSETXATTR, V_ERRNO, EPERM, false, W_ALWAYS},
        /* ... and the inode's generation, which its owner may set on a file opened for
         * reading: a change (ctime) to a --ro or copy-on-write file (outside review). */
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_SETVERSION, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC32_SETVERSION, V_ERRNO, EPERM, false, W_ALWAYS},
        /* ext4's own number for it, _IOW('f', 4, long), and its 32-bit form (a second
         * outside attack): ext4 serves both */
        {SC_ioctl, 1, C_EQ, INT_MASK, EXT4_IOC_SETVERSION, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, EXT4_IOC32_SETVERSION, V_ERRNO, EPERM, false, W_ALWAYS},
        /* ... and the other changes an owner may make through a read-only fd, where the file
         * system has the feature: an encryption policy on an empty directory, fs-verity
         * (which makes the file read-only for good) */
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_SET_ENCRYPTION_POLICY, V_ERRNO, EPERM, false,
         W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_ENABLE_VERITY, V_ERRNO, EPERM, false, W_ALWAYS},
        /* What else reaches the kernel is a list, not whatever no rule above names: a file
         * system's own ioctls (btrfs makes a subvolume in a directory its owner opened for
         * reading, ext4 migrates a file's blocks, a FUSE server gets any number), a virtual
         * console's keyboard modes, a namespace's or a pidfd's. What programs issue: the
         * terminal's and the generic fd's ('T', numbers below 0x80: termios, window size,
         * job control, ptys, FIONREAD, FIONBIO, FIOCLEX...), cloning a file's blocks into a
         * file opened for writing (cp --reflink), and reading a file's flags, version,
         * extents and block size, or the entropy count. The others fail as an fd that does
         * not know them would (ENOTTY): programs take their fallback. docs/policy.md. */
        {SC_ioctl, 1, C_EQ, IOC_TYPE_MASK | 0x80, 'T' << 8, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FICLONE, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FICLONERANGE, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_GETFLAGS, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC32_GETFLAGS, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_GETVERSION, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC32_GETVERSION, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_FSGETXATTR, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FS_IOC_FIEMAP, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, FIGETBSZ, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 1, C_EQ, INT_MASK, RNDGETENTCNT, V_KERNEL, 0, false, W_ALWAYS},
        {SC_ioctl, 0, C_ALWAYS, 0, 0, V_ERRNO, ENOTTY, false, W_ALWAYS},

        /* Turning on SIGIO (O_ASYNC, FIOASYNC) or choosing its signal (F_SETSIG, SIGKILL
         * included) on a description whose owner a HOST process set: the signal goes to that
         * owner, and Landlock's signal scope judges the owner's setter, not us (review R4).
         * Whatever the ABI, the handler reads the owner and allows only none or the
         * sandbox's own. F_SETFL without O_ASYNC (O_NONBLOCK: common) stays in the kernel. */
        {SC_fcntl, 1, C_EQ, INT_MASK, F_SETSIG, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_fcntl, 1, C_EQ, INT_MASK, F_SETFL, V_NOTIFY, 0, false, W_ALWAYS,
         .also = {2, C_ANY, O_ASYNC, 0}},
        /* F_SETOWN: SIGIO (or the F_SETSIG signal) goes to that pid or group; the handler
         * checks it is the sandbox's. With the scope, Landlock remembers that the sandbox set
         * this owner and refuses the signal to an outsider. F_SETOWN_EX keeps it in memory. */
        /* In a pid namespace of its own the sandbox can name no owner outside it. */
        {SC_fcntl, 1, C_EQ, INT_MASK, F_SETOWN, V_KERNEL, 0, false, W_PIDNS},
        {SC_fcntl, 1, C_EQ, INT_MASK, F_SETOWN, V_NOTIFY, 0, false, W_UNSCOPED},
        {SC_fcntl, 1, C_EQ, INT_MASK, F_SETOWN_EX, V_ERRNO, EPERM, false, W_UNSCOPED},
        {SC_fcntl, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* No set-user-ID or set-group-ID file is made by creating it with the bits (chmod is
         * emulated, fs_meta.c): such a file in the workspace or /tmp would run as its owner
         * for every host user who executes it. The mode is ignored without O_CREAT, and libc
         * passes 0 then. */
        {SC_open, 2, C_ANY, S_ISUID | S_ISGID, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        /* O_PATH opens stay in the kernel, decided on the flags register: SECCOMP_ADDFD
         * cannot install an O_PATH file (fget refuses them), and such an fd gives no access
         * to what it names: every use of it by path is emulated (fs_open.c). */
        /* ... but where a copy-on-write mount is merged, the kernel's walk would find the
         * lower alone: the tracer points the path at the merge's object (fs_cow_traced). */
        {SC_open, 1, C_ANY, O_PATH, 0, V_TRACE, 0, false, W_COW},
        {SC_open, 1, C_ANY, O_PATH, 0, V_KERNEL, 0, false, W_ALWAYS},
        /* --fast: a directory opened to be read (opendir) can only be listed, and listings
         * are the kernel's then; an O_TMPFILE, which has O_DIRECTORY's bit, is not one. */
        {SC_open, 1, C_EQ, OPENDIR_MASK, O_DIRECTORY, V_KERNEL, 0, false, W_LOOKS},
        /* --fast with kernel reads: an open for reading, judged by the walls alone (README
         * "Fast mode": the masks, Landlock's reads split around /dev and every hidden path,
         * nodev, the namespaces). */
        {SC_open, 1, C_EQ, READ_OPEN_MASK, 0, V_KERNEL, 0, false, W_READS},
        {SC_open, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_openat, 3, C_ANY, S_ISUID | S_ISGID, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_openat, 2, C_ANY, O_PATH, 0, V_TRACE, 0, false, W_COW},
        {SC_openat, 2, C_ANY, O_PATH, 0, V_KERNEL, 0, false, W_ALWAYS},
        {SC_openat, 2, C_EQ, OPENDIR_MASK, O_DIRECTORY, V_KERNEL, 0, false, W_LOOKS},
        {SC_openat, 2, C_EQ, READ_OPEN_MASK, 0, V_KERNEL, 0, false, W_READS},
        {SC_openat, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_creat, 1, C_ANY, S_ISUID | S_ISGID, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_creat, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_mknod, 1, C_ANY, S_ISUID | S_ISGID, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_mknod, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_mknodat, 2, C_ANY, S_ISUID | S_ISGID, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_mknodat, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},

        /* glibc's fstat is newfstatat(fd, "", AT_EMPTY_PATH): notified, every fstat cost a
         * round trip (12 us against 0.3 here). With AT_EMPTY_PATH set the call stays in the
         * kernel, decided on the flags register, as O_PATH opens are: an empty path is the
         * fd itself, and a non-empty one can tell no more than an O_PATH open and fstat of
         * it already do (a hidden path's metadata, never its content). Without the flag the
         * view answers (fs_look.c). */
        {SC_newfstatat, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_LOOKS},
        {SC_newfstatat, 3, C_ANY, AT_EMPTY_PATH, 0, V_KERNEL, 0, false, W_ALWAYS},
        {SC_newfstatat, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        {SC_statx, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_LOOKS},
        {SC_statx, 2, C_ANY, AT_EMPTY_PATH, 0, V_KERNEL, 0, false, W_ALWAYS},
        {SC_statx, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},

        /* sendto without a destination (a connected socket) stays in the kernel: its peer was
         * judged at connect. With one, the network policy judges it (net_send.c). */
        {SC_sendto, 4, C_EQ, ~0ull, 0, V_KERNEL, 0, false, W_ALWAYS},
        {SC_sendto, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},
        /* recvfrom asking for the source (src_addr not NULL): when the supervisor answers
         * DNS, a reply on a socket it redirected to its server must read as coming from the
         * nameserver's address and port 53, which resolvers check (syscalls/net_dns.c).
         * Without a source, or without the DNS, it stays in the kernel. */
        {SC_recvfrom, 4, C_EQ, ~0ull, 0, V_KERNEL, 0, false, W_ALWAYS},
        {SC_recvfrom, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_DNS},
        {SC_recvfrom, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* Source routing: an IPv4 LSRR/SSRR option (IP_OPTIONS) or an IPv6 routing header
         * (IPV6_RTHDR, also inside the RFC 2292 sticky options) sends each packet to the
         * route's first address, not to the destination the policy judged. Unprivileged
         * on Linux, needed by nothing a sandbox runs. (As control messages: net_send.c.) */
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IP, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IP_OPTIONS}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPV6_RTHDR}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPV6_2292RTHDR}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPV6_2292PKTOPTIONS}},
        /* Binding a socket to an interface by index or name, then reading the name back,
         * enumerates the host's interfaces through a twin (net.h); the sandbox has lo. */
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, SO_BINDTODEVICE}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_ERRNO, EPERM, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, SO_BINDTOIFINDEX}},
        /* Joining a multicast group: on a socket of the host's namespace (a UDP twin, net.h)
         * it joins on the host's interfaces, and the sandbox then receives what the LAN sends
         * to the group (mDNS, SSDP), whoever sent it. The policy judges destinations; what
         * arrives unasked is refused at the join. Under --net host it is the host's network. */
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IP, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, IP_ADD_MEMBERSHIP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IP, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, IP_ADD_SOURCE_MEMBERSHIP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IP, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, MCAST_JOIN_GROUP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IP, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, MCAST_JOIN_SOURCE_GROUP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, IPV6_ADD_MEMBERSHIP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, IPV6_JOIN_ANYCAST}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, MCAST_JOIN_GROUP}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, IPPROTO_IPV6, V_ERRNO, EPERM, false, W_NETPOL,
         .also = {2, C_EQ, INT_MASK, MCAST_JOIN_SOURCE_GROUP}},
        /* A datagram twin's socket filter lets in only the peers it sent to, and records
         * them (supervisor/net/twin.h): the filter options go to the supervisor, which
         * refuses them on a socket of the host's and performs them on the sandbox's own. */
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_ATTACH_FILTER}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_DETACH_FILTER}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_LOCK_FILTER}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_ATTACH_BPF}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_ATTACH_REUSEPORT_CBPF}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_ATTACH_REUSEPORT_EBPF}},
        {SC_setsockopt, 1, C_EQ, INT_MASK, SOL_SOCKET, V_NOTIFY, 0, false, W_TWINS,
         .also = {2, C_EQ, INT_MASK, SO_DETACH_REUSEPORT_BPF}},
        {SC_setsockopt, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* pidfd_send_signal: Landlock's signal scope lets the kernel judge it; so does a pid
         * namespace of the sandbox's own (the kernel refuses a pidfd of a process outside
         * the caller's namespace); without either the supervisor takes the fd and judges
         * what it designates. */
        {SC_pidfd_send_signal, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_SCOPED},
        {SC_pidfd_send_signal, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_PIDNS},
        {SC_pidfd_send_signal, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_ALWAYS},

        /* Unix, IPv4 and IPv6 only; no raw or packet sockets, no netlink but the view: */
        {SC_socket, 0, C_EQ, INT_MASK, AF_UNIX, V_KERNEL, 0, false, W_ALWAYS},
        /* NETLINK_ROUTE, raw or datagram (the same to netlink), with or without SOCK_CLOEXEC
         * and SOCK_NONBLOCK: the supervisor answers it, with interfaces that are a view of lo
         * alone (net_netlink.c). Every other netlink protocol or type is refused below, as
         * before: raw with EPERM, the others with EAFNOSUPPORT. */
        {SC_socket, 0, C_EQ, INT_MASK, AF_NETLINK, V_NOTIFY, 0, false, W_ALWAYS,
         .also = {1, C_EQ, INT_MASK & ~(uint64_t)(SOCK_CLOEXEC | SOCK_NONBLOCK), SOCK_RAW},
         .also2 = {2, C_EQ, INT_MASK, NETLINK_ROUTE}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_NETLINK, V_NOTIFY, 0, false, W_ALWAYS,
         .also = {1, C_EQ, INT_MASK & ~(uint64_t)(SOCK_CLOEXEC | SOCK_NONBLOCK), SOCK_DGRAM},
         .also2 = {2, C_EQ, INT_MASK, NETLINK_ROUTE}},
        {SC_socket, 1, C_EQ, 0xf, SOCK_RAW, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_socket, 1, C_EQ, 0xf, SOCK_PACKET, V_ERRNO, EPERM, false, W_ALWAYS},
        /* IPv4 and IPv6: stream and datagram sockets of the protocols the network policy
         * judges (TCP, UDP, ICMP ping sockets). Not SCTP (nor a SOCK_SEQPACKET that
         * protocol 0 would make SCTP when its module is loaded): it connects through
         * setsockopt(SCTP_SOCKOPT_CONNECTX) and sends to addresses in control messages,
         * neither of which the supervisor sees. Not MPTCP: the kernel's path manager opens
         * subflows to addresses the peer advertises (ADD_ADDR), connects nobody judges
         * (programs fall back to TCP). Nor DCCP, UDP-Lite... */
        {SC_socket, 1, C_ANY, 0xc, 0, V_ERRNO, ESOCKTNOSUPPORT, false, W_ALWAYS}, /* type 4-15 */
        {SC_socket, 1, C_EQ, 0xf, 0, V_ERRNO, ESOCKTNOSUPPORT, false, W_ALWAYS},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, 0}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_TCP}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_UDP}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_ICMP}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET, V_ERRNO, EPROTONOSUPPORT, false, W_ALWAYS},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET6, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, 0}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET6, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_TCP}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET6, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_UDP}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET6, V_KERNEL, 0, false, W_ALWAYS,
         .also = {2, C_EQ, INT_MASK, IPPROTO_ICMPV6}},
        {SC_socket, 0, C_EQ, INT_MASK, AF_INET6, V_ERRNO, EPROTONOSUPPORT, false, W_ALWAYS},
        {SC_socket, 0, C_ALWAYS, 0, 0, V_ERRNO, EAFNOSUPPORT, false, W_ALWAYS},
        {SC_socketpair, 0, C_EQ, INT_MASK, AF_UNIX, V_KERNEL, 0, false, W_ALWAYS},
        {SC_socketpair, 0, C_ALWAYS, 0, 0, V_ERRNO, EAFNOSUPPORT, false, W_ALWAYS},

        /* No new namespaces. clone3 keeps its flags in memory, so it is ENOSYS in the table
         * and libc falls back to clone, whose flags are a register. */
        {SC_clone, 0, C_ANY, CLONE_DENIED_FLAGS, 0, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_clone, 0, C_ALWAYS, 0, 0, V_NOTIFY, 0, false, W_COUNTING},
        {SC_clone, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* A process that makes itself non-dumpable would lock the supervisor out of its
         * memory and /proc; the call "succeeds" without effect. */
        {SC_prctl, 0, C_EQ, INT_MASK, PR_SET_DUMPABLE, V_ERRNO, 0, true, W_ALWAYS},
        {SC_prctl, 0, C_EQ, INT_MASK, PR_SET_MM, V_ERRNO, EPERM, false, W_ALWAYS},
        {SC_prctl, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* A listener installed by the program would take notifications away from ours
         * (the newest filter's USER_NOTIF wins). Other filters only restrict further. */
        {SC_seccomp, 1, C_ANY, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, V_ERRNO, EPERM, true, W_ALWAYS},
        {SC_seccomp, 0, C_ALWAYS, 0, 0, V_KERNEL, 0, false, W_ALWAYS},

        /* The personalities libc and setarch use; not READ_IMPLIES_EXEC and friends. */
        {SC_personality, 0, C_EQ, INT_MASK, PER_LINUX, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_EQ, INT_MASK, PER_LINUX32, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_EQ, INT_MASK, UNAME26, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_EQ, INT_MASK, PER_LINUX32 | UNAME26, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_EQ, INT_MASK, ADDR_NO_RANDOMIZE, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_EQ, INT_MASK, 0xffffffff, V_KERNEL, 0, false, W_ALWAYS},
        {SC_personality, 0, C_ALWAYS, 0, 0, V_ERRNO, EPERM, false, W_ALWAYS},
};
#pragma GCC diagnostic pop
const size_t filter_n_arg_rules = ARRAY_SIZE(filter_arg_rules);

static uint32_t kernel_action(const struct filter_opts *o, enum verdict v, int err, bool integ,
                              bool counted);

/* --trace-level all: what the kernel would have decided goes to the supervisor, which
 * decides it the same way (notify.c); a kill stays a kill. */
static uint32_t verdict_action(const struct filter_opts *o, enum verdict v, int err, bool integ,
                               bool counted)
{
        uint32_t action = kernel_action(o, v, err, integ, counted);

        if (o->trace_all && ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW ||
                             (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO))
                return SECCOMP_RET_USER_NOTIF;
        return action;
}

uint32_t filter_unknown_action(const struct filter_opts *o)
{
        return o->trace_all ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | ENOSYS;
}

static uint32_t kernel_action(const struct filter_opts *o, enum verdict v, int err, bool integ,
                              bool counted)
{
        switch (v) {
        case V_KERNEL:
                return SECCOMP_RET_ALLOW;
        case V_NOTIFY:
                return counted && !o->count_procs ? SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF;
        case V_ERRNO:
                if (o->audit && !integ)
                        return SECCOMP_RET_USER_NOTIF;
                return SECCOMP_RET_ERRNO | ((uint32_t)err & SECCOMP_RET_DATA);
        case V_KILL:
                return o->audit ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS;
        case V_TRACE:
                return SECCOMP_RET_TRACE;
        case V_ARGS:
                break;
        }
        abort(); /* V_ARGS is never an action; a row with it is decided by filter_arg_rules */
}

/* fork/vfork are notified only to count processes (clone's rule says so itself). */
static bool counted_row(const struct syscall_row *row)
{
        return row->handler == proc_clone;
}

/*
 * SysV IPC objects (shm, sem, msg) belong to the IPC namespace, not to a process: in the
 * host's namespace the sandbox could find a host process's segment with SHM_STAT and write
 * into it. Where the shim could not give the sandbox a namespace of its own, these fail with
 * EPERM, like every other policy denial (mq_* too), rather than ENOSYS: the kernel has
 * them, the policy refuses them. shmdt stays allowed: it only undoes an attach, and none can
 * succeed. (Notifying them and allowing only ids the tree created would keep some programs
 * working without a namespace; nobody has needed it yet.)
 */
static bool sysv_ipc_row(const struct syscall_row *row)
{
        switch (row - syscall_table) { /* not the enum: -Wswitch-enum would want every row */
        case SC_shmget:
        case SC_shmat:
        case SC_shmctl:
        case SC_semget:
        case SC_semop:
        case SC_semtimedop:
        case SC_semctl:
        case SC_msgget:
        case SC_msgsnd:
        case SC_msgrcv:
        case SC_msgctl:
                return true;
        default:
                return false;
        }
}

/* The calls that only look (fs_look.c, fs_dir.c), which --fast leaves to the kernel
 * (newfstatat and statx have rules of their own). */
static bool look_row(const struct syscall_row *row)
{
        switch (row - syscall_table) {
        case SC_stat:
        case SC_lstat:
        case SC_access:
        case SC_faccessat:
        case SC_faccessat2:
        case SC_readlink:
        case SC_readlinkat:
        case SC_getdents:
        case SC_getdents64:
                return true;
        default:
                return false;
        }
}

/* The calls that name a process by number (proc.c, proc_target), which a pid namespace of
 * the sandbox's own confines: the kernel looks the number up in the caller's namespace, and
 * every user-wide one (kill -1, PRIO_USER, IOPRIO_WHO_USER) skips the tasks the caller cannot
 * see. The init of the namespace is the one process there that is not the sandbox's; what
 * these calls can do to it is said in shim/pidns.h. */
static bool pidns_row(const struct syscall_row *row)
{
        return row->handler == proc_target;
}

/* The calls the kernel resolves a path for, which stop for the tracer where a cow mount is
 * merged (fs_cow_traced): it points them at the merge's object. */
static bool cow_traced_row(const struct syscall_row *row)
{
        switch (row - syscall_table) {
        case SC_chdir:
        case SC_execve:
        case SC_execveat:
        case SC_statfs:
        case SC_inotify_add_watch:
                return true;
        default:
                return false;
        }
}

/* The *at forms of the xattr reads and file_getattr (kernel 6.13 and 6.17), which the kernel
 * would answer from the lower tree alone, or from a hidden file, where a cow mount is merged.
 * No libc wraps them yet and their callers fall back on ENOSYS to getxattr and listxattr, which
 * the view answers (fs_cow_xattr_get). */
static bool cow_enosys_row(const struct syscall_row *row)
{
        switch (row - syscall_table) {
        case SC_getxattrat:
        case SC_listxattrat:
        case SC_file_getattr:
                return true;
        default:
                return false;
        }
}

/* The action of a row whose verdict does not depend on arguments. */
uint32_t filter_row_action(const struct filter_opts *o, const struct syscall_row *row)
{
        if (o->ipc_denied && sysv_ipc_row(row))
                return verdict_action(o, V_ERRNO, EPERM, false, false);
        if (o->kernel_looks && look_row(row))
                return verdict_action(o, V_KERNEL, 0, false, false);
        if (o->pidns && pidns_row(row))
                return verdict_action(o, V_KERNEL, 0, false, false);
        if (o->cow_merged && (row->handler == fs_cow_xattr_get || row->handler == fs_cow_getcwd))
                return verdict_action(o, V_NOTIFY, 0, false, false);
        if (o->cow_merged && cow_enosys_row(row))
                return verdict_action(o, V_ERRNO, ENOSYS, false, false);
        /* ... and chdir and exec stop for the tracer, which points them at the merge's
         * object (fs_cow_traced): the kernel must perform them itself */
        if (o->cow_traced && cow_traced_row(row))
                return SECCOMP_RET_TRACE;
        /* A silent fallback stays ENOSYS in audit mode: run natively, clone3 would hide its
         * flags from the audit (they are in memory) and its child from --max-procs (only
         * clone is counted); refused, libc takes clone, which the audit sees whole. */
        return verdict_action(o, row->verdict, row->err, row->flags & SF_FALLBACK,
                              counted_row(row));
}

uint32_t filter_rule_action(const struct filter_opts *o, const struct arg_rule *r)
{
        return verdict_action(o, r->verdict, r->err, r->integrity, false);
}

bool filter_rule_applies(const struct filter_opts *o, const struct arg_rule *r)
{
        switch (r->when) {
        case W_ALWAYS:
                return true;
        case W_COUNTING:
                return o->count_procs;
        case W_UNSCOPED:
                return !o->signals_scoped;
        case W_SCOPED:
                return o->signals_scoped;
        case W_DNS:
                return o->dns;
        case W_NETPOL:
                return o->net_policy;
        case W_TWINS:
                return o->twins;
        case W_LOOKS:
                return o->kernel_looks;
        case W_PIDNS:
                return o->pidns;
        case W_READS:
                return o->kernel_reads;
        case W_COW:
                return o->cow_traced;
        }
        return true;
}

/* The rule's first condition, in the shape of its second. */
struct arg_cond filter_first_cond(const struct arg_rule *r)
{
        return (struct arg_cond){.arg = r->arg, .op = r->op, .mask = r->mask, .value = r->value};
}

static bool cond_holds(const struct arg_cond *c, const struct seccomp_data *d)
{
        uint64_t v = d->args[c->arg] & c->mask;

        switch (c->op) {
        case C_ALWAYS:
                return true;
        case C_EQ:
                return v == c->value;
        case C_ANY:
                return v != 0;
        }
        return false;
}

static bool cond_match(const struct arg_rule *r, const struct seccomp_data *d)
{
        struct arg_cond c = filter_first_cond(r);

        return cond_holds(&c, d) && cond_holds(&r->also, d) && cond_holds(&r->also2, d);
}

uint32_t filter_decide(const struct filter_opts *o, const struct seccomp_data *d)
{
        const struct syscall_row *row;

        if (d->arch != AUDIT_ARCH_X86_64 || (d->nr & X32_SYSCALL_BIT))
                return SECCOMP_RET_KILL_PROCESS;
        if (o->trace_all && d->nr == SYSCALL_NR_WRITE && d->args[3] == o->handoff_key)
                return SECCOMP_RET_ALLOW;
        row = syscall_lookup(d->arch, d->nr);
        if (!row)
                return filter_unknown_action(o);
        if (row->verdict != V_ARGS)
                return filter_row_action(o, row);
        for (size_t i = 0; i < filter_n_arg_rules; i++)
                if (syscall_table[filter_arg_rules[i].sc].nr == row->nr &&
                    filter_rule_applies(o, &filter_arg_rules[i]) &&
                    cond_match(&filter_arg_rules[i], d))
                        return filter_rule_action(o, &filter_arg_rules[i]);
        return SECCOMP_RET_ERRNO | ENOSYS; /* unreachable: every list ends with C_ALWAYS */
}

const char *filter_action_name(uint32_t action, char *buf, unsigned len)
{
        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_ALLOW:
                return "allow";
        case SECCOMP_RET_USER_NOTIF:
                return "notify";
        case SECCOMP_RET_KILL_PROCESS:
                return "kill";
        case SECCOMP_RET_ERRNO:
                snprintf(buf, len, "errno %s",
                         strerrorname_np((int)(action & SECCOMP_RET_DATA)) ?: "0");
                return buf;
        default:
                snprintf(buf, len, "0x%08x", action);
                return buf;
        }
}

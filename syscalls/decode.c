/*
 * Register arguments as text (decode.h): one signature per call worth decoding, one table
 * of names per kind of value. Unknown values print as numbers and unknown bits of a flag
 * word in hex after the known names, so nothing is hidden.
 */
#include "syscalls/decode.h"
#include "syscalls/table.h"
#include "supervisor/util.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/fs.h>
#include <linux/if_ether.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <termios.h>

#define INT_MASK 0xffffffffull

/* ---- signatures ------------------------------------------------------------------------ */

struct sig {
        enum syscall_id sc;
        uint8_t kind[6]; /* enum decode_kind; D_NUM (0) past the listed ones */
        uint8_t key;     /* bit i: argument i tells kinds of call apart */
};

/* The calls the filter or the handlers deny, and their neighbours. */
static const struct sig sigs[] = {
        {SC_socket, {D_FAMILY, D_SOCKTYPE, D_SOCKPROTO}, 07},
        {SC_socketpair, {D_FAMILY, D_SOCKTYPE, D_SOCKPROTO, D_PTR}, 07},
        {SC_unshare, {D_NSFLAGS}, 01},
        {SC_setns, {D_FD, D_NSFLAGS}, 02},
        {SC_clone, {D_CLONE, D_PTR, D_PTR, D_PTR, D_NUM}, 01},
        {SC_ioctl, {D_FD, D_IOCTL, D_PTR}, 02},
        {SC_prctl, {D_PRCTL}, 01},
        {SC_personality, {D_PERSONALITY}, 01},
        {SC_kill, {D_NUM, D_SIGNAL}, 02},
        {SC_tkill, {D_NUM, D_SIGNAL}, 02},
        {SC_tgkill, {D_NUM, D_NUM, D_SIGNAL}, 04},
        {SC_rt_sigqueueinfo, {D_NUM, D_SIGNAL, D_PTR}, 02},
        {SC_rt_tgsigqueueinfo, {D_NUM, D_NUM, D_SIGNAL, D_PTR}, 04},
        {SC_pidfd_send_signal, {D_FD, D_SIGNAL, D_PTR}, 02},
        {SC_ptrace, {D_PTRACE, D_NUM, D_PTR, D_PTR}, 01},
        {SC_bpf, {D_BPF, D_PTR}, 01},
        {SC_keyctl, {D_KEYCTL}, 01},
        {SC_add_key, {D_PTR, D_PTR, D_PTR, D_NUM, D_NUM}, 0},
        {SC_request_key, {D_PTR, D_PTR, D_PTR, D_NUM}, 0},
        {SC_seccomp, {D_SECCOMP_OP, D_SECCOMP_FLAGS, D_PTR}, 03},
        {SC_fcntl, {D_FD, D_FCNTL}, 02},
        {SC_mount, {D_PTR, D_PTR, D_PTR, D_NUM, D_PTR}, 0},
        {SC_umount2, {D_PTR, D_NUM}, 0},
        {SC_pivot_root, {D_PTR, D_PTR}, 0},
        {SC_chroot, {D_PTR}, 0},
        {SC_open, {D_PATH, D_OFLAGS, D_MODE}, 0},
        {SC_openat, {D_FD, D_PATH, D_OFLAGS, D_MODE}, 0},
        {SC_creat, {D_PATH, D_MODE}, 0},
        {SC_mknod, {D_PATH, D_MODE, D_NUM}, 0},
        {SC_mknodat, {D_FD, D_PATH, D_MODE, D_NUM}, 0},
        {SC_chmod, {D_PATH, D_MODE}, 0},
        {SC_fchmod, {D_FD, D_MODE}, 0},
        {SC_fchmodat, {D_FD, D_PATH, D_MODE}, 0},
        {SC_process_vm_readv, {D_NUM, D_PTR, D_NUM, D_PTR, D_NUM, D_NUM}, 0},
        {SC_process_vm_writev, {D_NUM, D_PTR, D_NUM, D_PTR, D_NUM, D_NUM}, 0},
        {SC_open_by_handle_at, {D_FD, D_PTR, D_OFLAGS}, 0},
        {SC_perf_event_open, {D_PTR, D_NUM, D_NUM, D_FD, D_NUM}, 0},
        {SC_io_uring_setup, {D_NUM, D_PTR}, 0},
        /* The trace's: the calls the supervisor handles most, and what the kernel runs
         * at --trace-level all. The paths or sockaddr that the trace copies are the first
         * two D_PATH or D_SOCKADDR (trace_mem_arg). */
        {SC_stat, {D_PATH, D_PTR}, 0},
        {SC_lstat, {D_PATH, D_PTR}, 0},
        {SC_newfstatat, {D_FD, D_PATH, D_PTR, D_ATFLAGS}, 0},
        {SC_statx, {D_FD, D_PATH, D_ATFLAGS, D_NUM, D_PTR}, 0},
        {SC_access, {D_PATH, D_AMODE}, 0},
        {SC_faccessat, {D_FD, D_PATH, D_AMODE}, 0},
        {SC_faccessat2, {D_FD, D_PATH, D_AMODE, D_ATFLAGS}, 0},
        {SC_readlink, {D_PATH, D_PTR, D_NUM}, 0},
        {SC_readlinkat, {D_FD, D_PATH, D_PTR, D_NUM}, 0},
        {SC_mkdir, {D_PATH, D_MODE}, 0},
        {SC_mkdirat, {D_FD, D_PATH, D_MODE}, 0},
        {SC_rmdir, {D_PATH}, 0},
        {SC_unlink, {D_PATH}, 0},
        {SC_unlinkat, {D_FD, D_PATH, D_ATFLAGS}, 0},
        {SC_chdir, {D_PATH}, 0},
        {SC_chown, {D_PATH, D_NUM, D_NUM}, 0},
        {SC_lchown, {D_PATH, D_NUM, D_NUM}, 0},
        {SC_fchownat, {D_FD, D_PATH, D_NUM, D_NUM, D_ATFLAGS}, 0},
        {SC_truncate, {D_PATH, D_NUM}, 0},
        {SC_rename, {D_PATH, D_PATH}, 0},
        {SC_renameat, {D_FD, D_PATH, D_FD, D_PATH}, 0},
        {SC_renameat2, {D_FD, D_PATH, D_FD, D_PATH, D_NUM}, 0},
        {SC_link, {D_PATH, D_PATH}, 0},
        {SC_linkat, {D_FD, D_PATH, D_FD, D_PATH, D_ATFLAGS}, 0},
        {SC_symlink, {D_PATH, D_PATH}, 0},
        {SC_symlinkat, {D_PATH, D_FD, D_PATH}, 0},
        {SC_utime, {D_PATH, D_PTR}, 0},
        {SC_utimes, {D_PATH, D_PTR}, 0},
        {SC_futimesat, {D_FD, D_PATH, D_PTR}, 0},
        {SC_utimensat, {D_FD, D_PATH, D_PTR, D_ATFLAGS}, 0},
        {SC_setxattr, {D_PATH, D_PTR, D_PTR, D_NUM, D_NUM}, 0},
        {SC_lsetxattr, {D_PATH, D_PTR, D_PTR, D_NUM, D_NUM}, 0},
        {SC_removexattr, {D_PATH, D_PTR}, 0},
        {SC_lremovexattr, {D_PATH, D_PTR}, 0},
        {SC_execve, {D_PATH, D_PTR, D_PTR}, 0},
        {SC_execveat, {D_FD, D_PATH, D_PTR, D_PTR, D_ATFLAGS}, 0},
        {SC_connect, {D_FD, D_SOCKADDR, D_NUM}, 0},
        {SC_bind, {D_FD, D_SOCKADDR, D_NUM}, 0},
        {SC_sendto, {D_FD, D_PTR, D_NUM, D_NUM, D_SOCKADDR, D_NUM}, 0},
        {SC_mmap, {D_PTR, D_NUM, D_PROT, D_MMAP, D_FD, D_NUM}, 0},
        {SC_mprotect, {D_PTR, D_NUM, D_PROT}, 0},
        {SC_read, {D_FD, D_PTR, D_NUM}, 0},
        {SC_write, {D_FD, D_PTR, D_NUM}, 0},
        {SC_close, {D_FD}, 0},
        {SC_fstat, {D_FD, D_PTR}, 0},
        {SC_lseek, {D_FD, D_NUM, D_NUM}, 0},
        {SC_pread64, {D_FD, D_PTR, D_NUM, D_NUM}, 0},
        {SC_getdents64, {D_FD, D_PTR, D_NUM}, 0},
};

/* An index by number, built once: the trace's writer asks for every argument of every
 * event (a million a second), notifier threads for denials; pthread_once makes the first
 * use safe from any of them. */
static int16_t sig_index[SYSCALL_NR_LIMIT];
static pthread_once_t sig_once = PTHREAD_ONCE_INIT;

static void sig_index_build(void)
{
        memset(sig_index, -1, sizeof(sig_index));
        for (size_t i = ARRAY_SIZE(sigs); i-- > 0;) /* the first row of a call wins */
                if (syscall_table[sigs[i].sc].nr >= 0 &&
                    syscall_table[sigs[i].sc].nr < SYSCALL_NR_LIMIT)
                        sig_index[syscall_table[sigs[i].sc].nr] = (int16_t)i;
}

static const struct sig *sig_of(int nr)
{
        pthread_once(&sig_once, sig_index_build);
        if (nr < 0 || nr >= SYSCALL_NR_LIMIT || sig_index[nr] < 0)
                return NULL;
        return &sigs[sig_index[nr]];
}

enum decode_kind decode_arg_kind(int nr, unsigned i)
{
        const struct sig *s = sig_of(nr);

        return s && i < 6 ? (enum decode_kind)s->kind[i] : D_NUM;
}

uint64_t decode_key_mask(int nr, unsigned i)
{
        const struct sig *s = sig_of(nr);

        if (!s || i >= 6 || !(s->key & (1u << i)))
                return 0;
        if (s->kind[i] == D_SOCKTYPE)
                return 0xf; /* SOCK_CLOEXEC does not make another kind of socket */
        if (s->kind[i] == D_CLONE)
                return INT_MASK & ~0xffull; /* nor does the exit signal another clone */
        if (s->kind[i] == D_NUM || s->kind[i] == D_PTR)
                return ~0ull;
        return INT_MASK; /* int arguments: the kernel ignores the upper half */
}

/* ---- names ----------------------------------------------------------------------------- */

struct name {
        uint64_t v;
        const char *name;
};

#define N(x)                                                                                       \
        {                                                                                          \
                (uint64_t)(x), #x                                                                  \
        }
static const struct name families[] = {
        N(AF_UNSPEC),    N(AF_UNIX),       N(AF_INET),    N(AF_AX25),    N(AF_IPX),
        N(AF_APPLETALK), N(AF_NETROM),     N(AF_BRIDGE),  N(AF_ATMPVC),  N(AF_X25),
        N(AF_INET6),     N(AF_ROSE),       N(AF_DECnet),  N(AF_NETBEUI), N(AF_SECURITY),
        N(AF_KEY),       N(AF_NETLINK),    N(AF_PACKET),  N(AF_ASH),     N(AF_ECONET),
        N(AF_ATMSVC),    N(AF_RDS),        N(AF_SNA),     N(AF_IRDA),    N(AF_PPPOX),
        N(AF_WANPIPE),   N(AF_LLC),        N(AF_IB),      N(AF_MPLS),    N(AF_CAN),
        N(AF_TIPC),      N(AF_BLUETOOTH),  N(AF_IUCV),    N(AF_RXRPC),   N(AF_ISDN),
        N(AF_PHONET),    N(AF_IEEE802154), N(AF_CAIF),    N(AF_ALG),     N(AF_NFC),
        N(AF_VSOCK),     N(AF_KCM),        N(AF_QIPCRTR), N(AF_SMC),     N(AF_XDP),
        N(AF_MCTP),
};
static const struct name socktypes[] = {
        N(SOCK_STREAM),    N(SOCK_DGRAM), N(SOCK_RAW),    N(SOCK_RDM),
        N(SOCK_SEQPACKET), N(SOCK_DCCP),  N(SOCK_PACKET),
};
static const struct name netlinks[] = {
        N(NETLINK_ROUTE),      N(NETLINK_USERSOCK),      N(NETLINK_FIREWALL),
        N(NETLINK_SOCK_DIAG),  N(NETLINK_NFLOG),         N(NETLINK_XFRM),
        N(NETLINK_SELINUX),    N(NETLINK_ISCSI),         N(NETLINK_AUDIT),
        N(NETLINK_FIB_LOOKUP), N(NETLINK_CONNECTOR),     N(NETLINK_NETFILTER),
        N(NETLINK_IP6_FW),     N(NETLINK_DNRTMSG),       N(NETLINK_KOBJECT_UEVENT),
        N(NETLINK_GENERIC),    N(NETLINK_SCSITRANSPORT), N(NETLINK_ECRYPTFS),
        N(NETLINK_RDMA),       N(NETLINK_CRYPTO),        N(NETLINK_SMC),
};
static const struct name ipprotos[] = {
        N(IPPROTO_IP),   N(IPPROTO_ICMP),    N(IPPROTO_IGMP),  N(IPPROTO_TCP),
        N(IPPROTO_UDP),  N(IPPROTO_IPV6),    N(IPPROTO_GRE),   N(IPPROTO_ICMPV6),
        N(IPPROTO_SCTP), N(IPPROTO_UDPLITE), N(IPPROTO_MPTCP), N(IPPROTO_RAW),
};
static const struct name ethprotos[] = {
        N(ETH_P_ALL), N(ETH_P_IP), N(ETH_P_ARP), N(ETH_P_IPV6), N(ETH_P_8021Q),
};
static const struct name ioctls[] = {
        N(TIOCSTI),
        N(TIOCLINUX),
        N(TCGETS),
        N(TCSETS),
        N(TCSETSW),
        N(TCSETSF),
        N(TIOCGWINSZ),
        N(TIOCSWINSZ),
        N(TIOCSCTTY),
        N(TIOCNOTTY),
        N(TIOCGPGRP),
        N(TIOCSPGRP),
        N(TIOCEXCL),
        N(TIOCNXCL),
        N(TIOCGPTN),
        N(TIOCSPTLCK),
        N(TIOCGPTPEER),
        N(FIONREAD),
        N(FIONBIO),
        N(FIOCLEX),
        N(FIONCLEX),
        N(FIOASYNC),
        N(FIOSETOWN),
        N(FIOGETOWN),
        N(SIOCSPGRP),
        N(SIOCGPGRP),
        N(FS_IOC_GETFLAGS),
        N(FS_IOC_SETFLAGS),
        N(FS_IOC32_GETFLAGS),
        N(FS_IOC32_SETFLAGS),
        N(FS_IOC_FSGETXATTR),
        N(FS_IOC_FSSETXATTR),
        N(USERFAULTFD_IOC_NEW),
};
static const struct name prctls[] = {
        N(PR_SET_PDEATHSIG),
        N(PR_GET_PDEATHSIG),
        N(PR_GET_DUMPABLE),
        N(PR_SET_DUMPABLE),
        N(PR_GET_KEEPCAPS),
        N(PR_SET_KEEPCAPS),
        N(PR_SET_NAME),
        N(PR_GET_NAME),
        N(PR_GET_SECCOMP),
        N(PR_SET_SECCOMP),
        N(PR_CAPBSET_READ),
        N(PR_CAPBSET_DROP),
        N(PR_GET_SECUREBITS),
        N(PR_SET_SECUREBITS),
        N(PR_SET_TIMERSLACK),
        N(PR_SET_MM),
        N(PR_SET_CHILD_SUBREAPER),
        N(PR_GET_CHILD_SUBREAPER),
        N(PR_SET_NO_NEW_PRIVS),
        N(PR_GET_NO_NEW_PRIVS),
        N(PR_SET_PTRACER),
        N(PR_SET_THP_DISABLE),
        N(PR_CAP_AMBIENT),
        N(PR_SET_VMA),
        N(PR_SET_SPECULATION_CTRL),
        N(PR_SET_IO_FLUSHER),
        N(PR_SET_SYSCALL_USER_DISPATCH),
        N(PR_SCHED_CORE),
};
static const struct name ptraces[] = {
        N(PTRACE_TRACEME),     N(PTRACE_PEEKTEXT),   N(PTRACE_PEEKDATA),   N(PTRACE_PEEKUSER),
        N(PTRACE_POKETEXT),    N(PTRACE_POKEDATA),   N(PTRACE_POKEUSER),   N(PTRACE_CONT),
        N(PTRACE_KILL),        N(PTRACE_SINGLESTEP), N(PTRACE_GETREGS),    N(PTRACE_SETREGS),
        N(PTRACE_ATTACH),      N(PTRACE_DETACH),     N(PTRACE_SYSCALL),    N(PTRACE_SETOPTIONS),
        N(PTRACE_GETEVENTMSG), N(PTRACE_GETSIGINFO), N(PTRACE_SETSIGINFO), N(PTRACE_GETREGSET),
        N(PTRACE_SETREGSET),   N(PTRACE_SEIZE),      N(PTRACE_INTERRUPT),  N(PTRACE_LISTEN),
        N(PTRACE_PEEKSIGINFO),
};
static const struct name bpfs[] = {
        N(BPF_MAP_CREATE),      N(BPF_MAP_LOOKUP_ELEM),  N(BPF_MAP_UPDATE_ELEM),
        N(BPF_MAP_DELETE_ELEM), N(BPF_MAP_GET_NEXT_KEY), N(BPF_PROG_LOAD),
        N(BPF_OBJ_PIN),         N(BPF_OBJ_GET),          N(BPF_PROG_ATTACH),
        N(BPF_PROG_DETACH),     N(BPF_PROG_TEST_RUN),    N(BPF_BTF_LOAD),
        N(BPF_LINK_CREATE),
};
static const struct name keyctls[] = {
        N(KEYCTL_GET_KEYRING_ID),
        N(KEYCTL_JOIN_SESSION_KEYRING),
        N(KEYCTL_UPDATE),
        N(KEYCTL_REVOKE),
        N(KEYCTL_CHOWN),
        N(KEYCTL_SETPERM),
        N(KEYCTL_DESCRIBE),
        N(KEYCTL_CLEAR),
        N(KEYCTL_LINK),
        N(KEYCTL_UNLINK),
        N(KEYCTL_SEARCH),
        N(KEYCTL_READ),
        N(KEYCTL_INSTANTIATE),
        N(KEYCTL_NEGATE),
        N(KEYCTL_SET_REQKEY_KEYRING),
        N(KEYCTL_SET_TIMEOUT),
        N(KEYCTL_ASSUME_AUTHORITY),
        N(KEYCTL_GET_SECURITY),
        N(KEYCTL_SESSION_TO_PARENT),
        N(KEYCTL_INVALIDATE),
        N(KEYCTL_GET_PERSISTENT),
};
static const struct name seccomp_ops[] = {
        N(SECCOMP_SET_MODE_STRICT),
        N(SECCOMP_SET_MODE_FILTER),
        N(SECCOMP_GET_ACTION_AVAIL),
        N(SECCOMP_GET_NOTIF_SIZES),
};
static const struct name fcntls[] = {
        N(F_DUPFD),         N(F_GETFD),      N(F_SETFD),      N(F_GETFL),     N(F_SETFL),
        N(F_GETLK),         N(F_SETLK),      N(F_SETLKW),     N(F_SETOWN),    N(F_GETOWN),
        N(F_SETSIG),        N(F_GETSIG),     N(F_SETOWN_EX),  N(F_GETOWN_EX), N(F_OFD_GETLK),
        N(F_OFD_SETLK),     N(F_OFD_SETLKW), N(F_SETLEASE),   N(F_GETLEASE),  N(F_NOTIFY),
        N(F_DUPFD_CLOEXEC), N(F_SETPIPE_SZ), N(F_GETPIPE_SZ), N(F_ADD_SEALS), N(F_GET_SEALS),
};
#undef N

/* Flag words: multi-bit entries first, so that they win over their parts. */
#define F(x)                                                                                       \
        {                                                                                          \
                (uint64_t)(x), #x                                                                  \
        }
static const struct name clonef[] = {
        F(CLONE_VM),
        F(CLONE_FS),
        F(CLONE_FILES),
        F(CLONE_SIGHAND),
        F(CLONE_PIDFD),
        F(CLONE_PTRACE),
        F(CLONE_VFORK),
        F(CLONE_PARENT),
        F(CLONE_THREAD),
        F(CLONE_NEWNS),
        F(CLONE_SYSVSEM),
        F(CLONE_SETTLS),
        F(CLONE_PARENT_SETTID),
        F(CLONE_CHILD_CLEARTID),
        F(CLONE_UNTRACED),
        F(CLONE_CHILD_SETTID),
        F(CLONE_NEWCGROUP),
        F(CLONE_NEWUTS),
        F(CLONE_NEWIPC),
        F(CLONE_NEWUSER),
        F(CLONE_NEWPID),
        F(CLONE_NEWNET),
        F(CLONE_IO),
};
static const struct name sockflags[] = {F(SOCK_NONBLOCK), F(SOCK_CLOEXEC)};
static const struct name personaf[] = {
        F(UNAME26),          F(ADDR_NO_RANDOMIZE),  F(FDPIC_FUNCPTRS),
        F(MMAP_PAGE_ZERO),   F(ADDR_COMPAT_LAYOUT), F(READ_IMPLIES_EXEC),
        F(ADDR_LIMIT_32BIT), F(SHORT_INODE),        F(WHOLE_SECONDS),
        F(STICKY_TIMEOUTS),  F(ADDR_LIMIT_3GB),
};
static const struct name seccompf[] = {
        F(SECCOMP_FILTER_FLAG_TSYNC),       F(SECCOMP_FILTER_FLAG_LOG),
        F(SECCOMP_FILTER_FLAG_SPEC_ALLOW),  F(SECCOMP_FILTER_FLAG_NEW_LISTENER),
        F(SECCOMP_FILTER_FLAG_TSYNC_ESRCH), F(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV),
};
static const struct name atflags[] = {
        F(AT_SYMLINK_NOFOLLOW), F(AT_REMOVEDIR),  F(AT_SYMLINK_FOLLOW),
        F(AT_NO_AUTOMOUNT),     F(AT_EMPTY_PATH), F(AT_EACCESS),
};
static const struct name amodes[] = {F(R_OK), F(W_OK), F(X_OK)};
static const struct name prots[] = {F(PROT_READ), F(PROT_WRITE), F(PROT_EXEC)};
static const struct name mmapf[] = {
        F(MAP_SHARED),    F(MAP_PRIVATE),         F(MAP_FIXED),     F(MAP_ANONYMOUS),
        F(MAP_GROWSDOWN), F(MAP_DENYWRITE),       F(MAP_NORESERVE), F(MAP_POPULATE),
        F(MAP_STACK),     F(MAP_FIXED_NOREPLACE),
};
static const struct name oflags[] = {
        F(O_CREAT),
        F(O_EXCL),
        F(O_NOCTTY),
        F(O_TRUNC),
        F(O_APPEND),
        F(O_NONBLOCK),
        F(O_DSYNC),
        F(O_DIRECT),
        F(O_LARGEFILE),
        F(O_NOFOLLOW),
        F(O_NOATIME),
        F(O_CLOEXEC),
        {04000000, "__O_SYNC"},
        F(O_PATH),
        {020000000 | O_DIRECTORY, "O_TMPFILE"},
        F(O_DIRECTORY),
        F(O_ASYNC),
};
#undef F

/* ---- formatting ------------------------------------------------------------------------ */

/* What snprintf wrote, bounded by what fits. */
static size_t put(char *out, size_t size, int n)
{
        if (n < 0)
                return 0;
        return (size_t)n < size ? (size_t)n : size - 1;
}

static size_t num(char *out, size_t size, uint64_t v)
{
        int64_t s = (int64_t)v;

        if (s > -4096 && s < (1 << 20))
                return put(out, size, snprintf(out, size, "%lld", (long long)s));
        return put(out, size, snprintf(out, size, "%#llx", (unsigned long long)v));
}

static const char *lookup(uint64_t v, const struct name *t, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (t[i].v == v)
                        return t[i].name;
        return NULL;
}

static size_t named(char *out, size_t size, uint64_t v, const struct name *t, size_t n)
{
        const char *s = lookup(v, t, n);

        return s ? put(out, size, snprintf(out, size, "%s", s)) : num(out, size, v);
}

/* Names of the set bits of v joined by `|`, then what is left in hex; `zero` when v is 0.
 * `len` is what `out` already holds (a prefix to extend with `|`). */
static size_t flags(char *out, size_t size, size_t len, uint64_t v, const struct name *t, size_t n,
                    const char *zero)
{
        if (!v)
                return len ? len : put(out, size, snprintf(out, size, "%s", zero));
        for (size_t i = 0; i < n && len + 1 < size; i++)
                if (t[i].v && (v & t[i].v) == t[i].v) {
                        len += put(
                                out + len, size - len,
                                snprintf(out + len, size - len, "%s%s", len ? "|" : "", t[i].name));
                        v &= ~t[i].v;
                }
        if (v && len + 1 < size)
                len += put(out + len, size - len,
                           snprintf(out + len, size - len, "%s%#llx", len ? "|" : "",
                                    (unsigned long long)v));
        return len;
}

static size_t signame(char *out, size_t size, uint64_t v)
{
        int s = (int)(uint32_t)v;

        if (s > 0 && s < NSIG && sigabbrev_np(s))
                return put(out, size, snprintf(out, size, "SIG%s", sigabbrev_np(s)));
        if (s >= SIGRTMIN && s <= SIGRTMAX)
                return put(out, size, snprintf(out, size, "SIGRT_%d", s - SIGRTMIN));
        return num(out, size, v);
}

static size_t sockproto(char *out, size_t size, uint64_t v, const uint64_t *args)
{
        uint32_t p = (uint32_t)v;

        switch ((uint32_t)args[0]) {
        case AF_NETLINK:
                return named(out, size, p, netlinks, ARRAY_SIZE(netlinks));
        case AF_INET:
        case AF_INET6:
                return named(out, size, p, ipprotos, ARRAY_SIZE(ipprotos));
        case AF_PACKET: {
                /* The protocol is in network byte order: htons(ETH_P_ALL). */
                const char *s = p <= 0xffff ? lookup((uint16_t)(p << 8 | p >> 8), ethprotos,
                                                     ARRAY_SIZE(ethprotos))
                                            : NULL;
                if (s)
                        return put(out, size, snprintf(out, size, "htons(%s)", s));
                return num(out, size, v);
        }
        default:
                return num(out, size, v);
        }
}

static size_t clone_flags(char *out, size_t size, uint64_t v)
{
        size_t len = flags(out, size, 0, v & ~0xffull, clonef, ARRAY_SIZE(clonef), "");

        if (v & 0xff) {
                if (len && len + 1 < size)
                        out[len++] = '|';
                len += signame(out + len, size - len, v & 0xff);
        }
        if (!len)
                len = put(out, size, snprintf(out, size, "0"));
        return len;
}

static size_t persona(char *out, size_t size, uint64_t v)
{
        uint32_t p = (uint32_t)v;
        size_t len;

        if (p == 0xffffffff) /* the query */
                return put(out, size, snprintf(out, size, "0xffffffff"));
        if ((p & PER_MASK) == PER_LINUX)
                len = put(out, size, snprintf(out, size, "PER_LINUX"));
        else if ((p & PER_MASK) == PER_LINUX32)
                len = put(out, size, snprintf(out, size, "PER_LINUX32"));
        else
                len = put(out, size, snprintf(out, size, "%#x", p & PER_MASK));
        return flags(out, size, len, p & ~(uint32_t)PER_MASK, personaf, ARRAY_SIZE(personaf), "");
}

static size_t oflags_of(char *out, size_t size, uint64_t v)
{
        static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "3"};
        size_t len = put(out, size, snprintf(out, size, "%s", acc[v & O_ACCMODE]));

        return flags(out, size, len, (uint32_t)v & ~(uint64_t)O_ACCMODE, oflags, ARRAY_SIZE(oflags),
                     "");
}

size_t decode_value(char *out, size_t size, enum decode_kind k, uint64_t v, const uint64_t *args)
{
        uint32_t iv = (uint32_t)v;

        if (!size)
                return 0;
        out[0] = 0;
        switch (k) {
        case D_NUM:
                return num(out, size, v);
        case D_PTR:
                return v ? put(out, size, snprintf(out, size, "%#llx", (unsigned long long)v))
                         : put(out, size, snprintf(out, size, "NULL"));
        case D_FD:
                if ((int32_t)iv == AT_FDCWD)
                        return put(out, size, snprintf(out, size, "AT_FDCWD"));
                return put(out, size, snprintf(out, size, "%d", (int32_t)iv));
        case D_FAMILY:
                return named(out, size, iv, families, ARRAY_SIZE(families));
        case D_SOCKTYPE:
                return flags(out, size,
                             named(out, size, iv & 0xf, socktypes, ARRAY_SIZE(socktypes)),
                             iv & ~0xfu, sockflags, ARRAY_SIZE(sockflags), "");
        case D_SOCKPROTO:
                return sockproto(out, size, v, args);
        case D_CLONE:
                return clone_flags(out, size, v);
        case D_NSFLAGS:
                return flags(out, size, 0, v, clonef, ARRAY_SIZE(clonef), "0");
        case D_IOCTL: /* an unknown number in hex: its type and number bytes show there */
                return lookup(iv, ioctls, ARRAY_SIZE(ioctls))
                               ? named(out, size, iv, ioctls, ARRAY_SIZE(ioctls))
                               : put(out, size, snprintf(out, size, "%#x", (unsigned)iv));
        case D_PRCTL:
                return named(out, size, iv, prctls, ARRAY_SIZE(prctls));
        case D_PERSONALITY:
                return persona(out, size, v);
        case D_SIGNAL:
                return signame(out, size, v);
        case D_PTRACE:
                return named(out, size, v, ptraces, ARRAY_SIZE(ptraces));
        case D_BPF:
                return named(out, size, iv, bpfs, ARRAY_SIZE(bpfs));
        case D_KEYCTL:
                return named(out, size, iv, keyctls, ARRAY_SIZE(keyctls));
        case D_SECCOMP_OP:
                return named(out, size, iv, seccomp_ops, ARRAY_SIZE(seccomp_ops));
        case D_SECCOMP_FLAGS:
                return flags(out, size, 0, iv, seccompf, ARRAY_SIZE(seccompf), "0");
        case D_FCNTL:
                return named(out, size, iv, fcntls, ARRAY_SIZE(fcntls));
        case D_MODE:
                return put(out, size,
                           snprintf(out, size, "0%llo", (unsigned long long)(v & 07777)));
        case D_OFLAGS:
                return oflags_of(out, size, v);
        case D_ATFLAGS:
                return flags(out, size, 0, iv, atflags, ARRAY_SIZE(atflags), "0");
        case D_AMODE:
                return flags(out, size, 0, iv, amodes, ARRAY_SIZE(amodes), "F_OK");
        case D_PROT:
                return flags(out, size, 0, v, prots, ARRAY_SIZE(prots), "PROT_NONE");
        case D_MMAP:
                return flags(out, size, 0, v, mmapf, ARRAY_SIZE(mmapf), "0");
        case D_PATH:
        case D_SOCKADDR:
                return decode_value(out, size, D_PTR, v, args); /* registers only here */
        }
        return num(out, size, v);
}

size_t decode_call(char *out, size_t size, int nr, const uint64_t *args, bool key_only)
{
        const struct syscall_row *row = syscall_lookup(AUDIT_ARCH_X86_64, nr);
        unsigned nargs = row ? row->nargs : 6;
        bool elided = false; /* the previous argument was collapsed into "..." */
        size_t len;

        if (!size)
                return 0;
        if (row)
                len = put(out, size, snprintf(out, size, "%s(", row->name));
        else
                len = put(out, size, snprintf(out, size, "syscall_%d(", nr));
        for (unsigned i = 0; i < nargs && len + 1 < size; i++) {
                const char *sep = i ? ", " : "";

                if (key_only && !decode_key_mask(nr, i)) {
                        if (!elided)
                                len += put(out + len, size - len,
                                           snprintf(out + len, size - len, "%s...", sep));
                        elided = true;
                        continue;
                }
                elided = false;
                len += put(out + len, size - len, snprintf(out + len, size - len, "%s", sep));
                len += decode_value(out + len, size - len, decode_arg_kind(nr, i), args[i], args);
        }
        len += put(out + len, size - len, snprintf(out + len, size - len, ")"));
        return len;
}

/* The syscall table: one row per x86_64 syscall in syscalls.def, and everything derived
 * from it (identities, lookup by number, handler dispatch, the BPF filter). */
#ifndef STOCKADE_TABLE_H
#define STOCKADE_TABLE_H

#include <stdint.h>

/* How a syscall is decided when the filter is built. */
enum verdict {
        V_KERNEL, /* allowed in the kernel: no round trip */
        V_NOTIFY, /* sent to the supervisor's handler */
        V_ERRNO,  /* denied in the kernel with the row's errno */
        V_KILL,   /* the process is killed */
        V_ARGS,   /* decided in the kernel by register arguments (filter.c) */
        V_TRACE,  /* stopped for the tracer (an argument rule's only: fs_cow_traced) */
};

/* What a syscall touches; used by the trace decoders and later policy layers. */
enum {
        SF_PATH = 1u << 0,    /* takes a path in memory */
        SF_FD = 1u << 1,      /* operates on an fd the program holds */
        SF_RETFD = 1u << 2,   /* returns a new fd */
        SF_NET = 1u << 3,     /* socket family */
        SF_PROC = 1u << 4,    /* names another process */
        SF_MEM = 1u << 5,     /* address-space management */
        SF_SIG = 1u << 6,     /* signals */
        SF_TIME = 1u << 7,    /* clocks and timers */
        SF_ID = 1u << 8,      /* credentials */
        SF_ADMIN = 1u << 9,   /* host administration */
        SF_BYPASS = 1u << 10, /* a known sandbox bypass route */
        /* Its ERRNO is a fallback that libc takes silently (clone3 -> clone): kept in the
         * kernel in audit mode too, since it is not a denial anyone would see. */
        SF_FALLBACK = 1u << 11
};

struct supervisor;
struct call;

/* A handler decides one notification: it fills call->resp through call_continue(),
 * call_return() or call_fail() (supervisor/notify.h) and returns 0. */
typedef int (*syscall_handler)(struct supervisor *sup, struct call *call);

/* Identities: SC_read, SC_write, ... SC__COUNT. */
enum syscall_id {
#define SYSCALL_ROW(name, nr, nargs, verdict, err, flags, handler) SC_##name,
#include "syscalls/syscalls.def"
#undef SYSCALL_ROW
        SC__COUNT
};

struct syscall_row {
        const char *name;
        int nr;
        uint8_t nargs;
        enum verdict verdict;
        int err;
        unsigned flags;
        syscall_handler handler;
};

/* The handlers named in syscalls.def. */
int fs_open(struct supervisor *sup, struct call *call);
int fs_path(struct supervisor *sup, struct call *call);
/* bind(2) of unix socket `sock` (our copy) to the pathname `path` (our copy), emulated like
 * mknod in fs_path: the directory found in the view, the bind performed there as the
 * program. Returns 0 or -errno. (syscalls/net_bind.c) */
int fs_unix_bind(struct supervisor *sup, struct call *call, int sock, const char *path);
int fs_dir(struct supervisor *sup, struct call *call);
int fs_look(struct supervisor *sup, struct call *call);
/* /dev/pts/N becomes the sandbox's to open by name (its own terminal, one it made). */
void fs_open_allow_pts(struct supervisor *sup, unsigned n);
int fs_meta_chmod(struct supervisor *sup, struct call *call);
int fs_meta_chown(struct supervisor *sup, struct call *call);
int fs_meta_utimes(struct supervisor *sup, struct call *call);
int fs_meta_setxattr(struct supervisor *sup, struct call *call);
int fs_cow_xattr_get(struct supervisor *sup, struct call *call);
int fs_cow_getcwd(struct supervisor *sup, struct call *call);
int fs_meta_removexattr(struct supervisor *sup, struct call *call);
int fs_meta_truncate(struct supervisor *sup, struct call *call);
int net_connect(struct supervisor *sup, struct call *call);
int net_bind(struct supervisor *sup, struct call *call);
int net_listen(struct supervisor *sup, struct call *call);
int net_sendto(struct supervisor *sup, struct call *call);
int net_sendmsg(struct supervisor *sup, struct call *call);
int net_sendmmsg(struct supervisor *sup, struct call *call);
/* The netlink view (net_netlink.c): socket(AF_NETLINK, ..., NETLINK_ROUTE). */
int net_socket(struct supervisor *sup, struct call *call);
/* What a twin shows and lets in (net_twin.c): getsockname, the socket filter options. */
int net_getsockname(struct supervisor *sup, struct call *call);
int net_setsockopt(struct supervisor *sup, struct call *call);
/* recvfrom asking for the source, when the supervisor answers DNS (net_dns.c). */
int net_recvfrom(struct supervisor *sup, struct call *call);
int proc_target(struct supervisor *sup, struct call *call);
int proc_pidfd_signal(struct supervisor *sup, struct call *call);
int proc_sigio(struct supervisor *sup, struct call *call);
int proc_setsid(struct supervisor *sup, struct call *call);
int proc_clone(struct supervisor *sup, struct call *call);
int fs_exec(struct supervisor *sup, struct call *call);

/* Highest syscall number the table knows, plus one. */
#define SYSCALL_NR_LIMIT 512

extern const struct syscall_row syscall_table[SC__COUNT];

/* The row for (arch, nr), or NULL when the table does not know it (the caller answers
 * ENOSYS). Only AUDIT_ARCH_X86_64 has rows; x32 numbers have none. */
const struct syscall_row *syscall_lookup(uint32_t arch, int nr);
/* The row called `name`, or NULL. */
const struct syscall_row *syscall_by_name(const char *name);

#endif

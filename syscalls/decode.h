/*
 * A call's register arguments as text, strace-style: `socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC,
 * NETLINK_ROUTE)`, `unshare(CLONE_NEWUSER)`, `ioctl(0, TIOCSTI, 0x7ffc...)`. Registers only:
 * nothing here reads the program's memory, so it is safe on the notification path (the audit
 * report) and pure enough for a table-driven unit test. Calls without a signature print
 * their arguments as numbers.
 *
 * Each signature also says which arguments tell one kind of call from another (the family
 * and type of a socket, the request of an ioctl, not the fd or a pointer): the audit report
 * groups would-be denials by them.
 *
 * The one table of signatures: the trace (supervisor/trace_decode.c) formats its events'
 * arguments with it too, and adds only what needs memory (D_PATH, D_SOCKADDR).
 */
#ifndef STOCKADE_DECODE_H
#define STOCKADE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How one register argument is shown. */
enum decode_kind {
        D_NUM,         /* decimal when small, else hex */
        D_PTR,         /* NULL or 0x... */
        D_FD,          /* AT_FDCWD or a number */
        D_FAMILY,      /* AF_* */
        D_SOCKTYPE,    /* SOCK_* with SOCK_NONBLOCK|SOCK_CLOEXEC */
        D_SOCKPROTO,   /* by the family in argument 0: NETLINK_*, IPPROTO_*, htons(ETH_P_*) */
        D_CLONE,       /* CLONE_* flags and the exit signal */
        D_NSFLAGS,     /* CLONE_* flags of unshare and setns (0 for setns: any) */
        D_IOCTL,       /* the request: TIOCSTI, FS_IOC_SETFLAGS, ... */
        D_PRCTL,       /* PR_* */
        D_PERSONALITY, /* PER_* | flags */
        D_SIGNAL,      /* SIG* */
        D_PTRACE,      /* PTRACE_* */
        D_BPF,         /* BPF_* command */
        D_KEYCTL,      /* KEYCTL_* */
        D_SECCOMP_OP,  /* SECCOMP_SET_MODE_*, SECCOMP_GET_* */
        D_SECCOMP_FLAGS,
        D_FCNTL,   /* F_* */
        D_MODE,    /* 0644 */
        D_OFLAGS,  /* O_RDONLY|O_CREAT... */
        D_ATFLAGS, /* AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH... */
        D_AMODE,   /* access(): F_OK, R_OK|W_OK... */
        D_PROT,    /* PROT_READ|PROT_EXEC */
        D_MMAP,    /* MAP_PRIVATE|MAP_ANONYMOUS... */
        /* Memory: shown here as D_PTR (registers only); the trace shows its copy of it
         * (supervisor/trace_decode.c). */
        D_PATH,     /* a string */
        D_SOCKADDR, /* a sockaddr; its length is the next argument */
};

/* How argument `i` of x86_64 syscall `nr` is shown. */
enum decode_kind decode_arg_kind(int nr, unsigned i);
/* The bits of argument `i` of `nr` that tell kinds of call apart (0: none; the fd of an
 * ioctl, a pointer, a pid). */
uint64_t decode_key_mask(int nr, unsigned i);
/* One value shown as `k`; `args` are the call's six arguments (D_SOCKPROTO needs the
 * family). Returns the length written; `out` is always NUL-terminated. */
size_t decode_value(char *out, size_t size, enum decode_kind k, uint64_t v, const uint64_t *args);
/* `name(a, b, c)` for syscall `nr` with its arguments decoded. With `key_only`, only the
 * arguments that tell kinds apart, the others collapsed into `...`: `ptrace(PTRACE_TRACEME,
 * ...)`, `mount(...)`. Returns the length written; `out` is always NUL-terminated. */
size_t decode_call(char *out, size_t size, int nr, const uint64_t *args, bool key_only);

#endif

/*
 * Arguments of a system call as text, for the trace: paths quoted, fds, flags symbolic,
 * sockaddrs as addresses. Runs on the trace's writer thread, never on the notification path.
 */
#ifndef STOCKADE_TRACE_DECODE_H
#define STOCKADE_TRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum arg_kind {
        A_HEX, /* the default: decimal when small, else hex */
        A_INT,
        A_FD,       /* AT_FDCWD */
        A_PATH,     /* a string in memory */
        A_SOCKADDR, /* a sockaddr in memory; its length is the next argument */
        A_PTR,      /* an address: NULL or 0x... */
        A_OFLAGS,
        A_MODE,
        A_ATFLAGS,
        A_AMODE, /* access(): F_OK, R_OK|W_OK... */
        A_SIGNAL,
        A_CLONE,
        A_PROT,
        A_MMAP,
        A_FAMILY,
        A_SOCKTYPE,
        A_FCNTL,
};

/* How syscall `nr` (x86_64) takes argument `i`. */
enum arg_kind trace_arg_kind(int nr, unsigned i);
/* The argument the supervisor copies from memory for the trace (a path or a sockaddr), or
 * -1. */
int trace_mem_arg(int nr);
/* Format argument `i` of `nr`, raw value `v`; `mem`/`mem_len` is the copy of the memory it
 * points to when the supervisor made one (mem_len < 0: none, -errno of the failed copy).
 * Returns the length written into out (always NUL-terminated). */
size_t trace_format_arg(char *out, size_t size, int nr, unsigned i, uint64_t v,
                        const uint64_t *args, const char *mem, int mem_len, int mem_truncated);

#endif

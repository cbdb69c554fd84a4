/*
 * Arguments of a system call as text, for the trace: paths quoted, fds, flags symbolic,
 * sockaddrs as addresses. Formatting runs on the trace's writer thread, never on the
 * notification path. The signatures are syscalls/decode.c's.
 */
#ifndef STOCKADE_TRACE_DECODE_H
#define STOCKADE_TRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first argument at or after `from` that the supervisor copies from memory for the trace
 * (a path or a sockaddr), or -1. */
int trace_mem_arg(int nr, int from);
/* Is argument `i` of `nr` a sockaddr (its length the next argument), rather than a path? */
bool trace_mem_is_sockaddr(int nr, unsigned i);
/* Format argument `i` of `nr`, raw value `v`; `mem`/`mem_len` is the copy of the memory it
 * points to when the supervisor made one (mem_len < 0: none, -errno of the failed copy).
 * Returns the length written into out (always NUL-terminated). */
size_t trace_format_arg(char *out, size_t size, int nr, unsigned i, uint64_t v,
                        const uint64_t *args, const char *mem, int mem_len, int mem_truncated);

#endif

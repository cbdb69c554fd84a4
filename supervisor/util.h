/* Small helpers shared by every module: cleanup attributes and ownership hand-off. */
#ifndef STOCKADE_UTIL_H
#define STOCKADE_UTIL_H

#include <errno.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void cleanup_freep(void *p)
{
        free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/*
 * openat2(2). A lookup scoped by RESOLVE_IN_ROOT or RESOLVE_BENEATH fails with EAGAIN when a
 * rename or a mount anywhere on the system raced one of its ".." steps (the kernel cannot
 * then vouch that ".." stayed beneath the root): a build renaming files into its cache is
 * enough, and `go build` saw "open /usr/lib/go-1.19/src/...: resource temporarily
 * unavailable" through the symlink src -> ../../share/go-1.19/src. Retried, as the man page
 * advises, a bounded number of times; not with RESOLVE_CACHED, whose EAGAIN is an answer.
 * Returns the fd, or -1 with errno.
 */
static inline int sys_openat2(int dirfd, const char *path, const struct open_how *how)
{
        int fd, tries = 0;

        do
                fd = (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
        while (fd < 0 && errno == EAGAIN && !(how->resolve & RESOLVE_CACHED) && ++tries < 100);
        return fd;
}

#define _cleanup_free_  __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))

/* Take ownership of a pointer or fd out of a cleanup scope. */
#define steal_ptr(p)                                                                               \
        ({                                                                                         \
                __typeof__(p) _tmp = (p);                                                          \
                (p) = NULL;                                                                        \
                _tmp;                                                                              \
        })
#define steal_fd(fd)                                                                               \
        ({                                                                                         \
                int _tmp = (fd);                                                                   \
                (fd) = -1;                                                                         \
                _tmp;                                                                              \
        })

/* Allocation never fails quietly: out of memory aborts (STYLE.md). */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
/* The length of the UTF-8 sequence at p (1-4) and its code point in *cp, or 0 when the bytes
 * there are not one (a stray continuation, a cut sequence, an overlong form, a surrogate,
 * past U+10FFFF). */
size_t utf8_char(const unsigned char *p, uint32_t *cp);
/* What a terminal or a JavaScript parser might act on: C0 and C1 controls, DEL, the line and
 * paragraph separators, the bidirectional marks, overrides and isolates. */
bool utf8_unsafe(uint32_t cp);
/* The start of a small file (a /proc one), NUL-terminated: what was read (> 0), or -errno
 * (-ENODATA when empty). */
ssize_t read_text(const char *path, char *buf, size_t len);

#endif

/* Small helpers shared by every module: cleanup attributes and ownership hand-off. */
#ifndef STOCKADE_UTIL_H
#define STOCKADE_UTIL_H

#include <errno.h>
#include <stdlib.h>
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

#endif

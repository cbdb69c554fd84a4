#include "supervisor/error.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                abort();
        return p;
}

void *xrealloc(void *p, size_t size)
{
        p = realloc(p, size ? size : 1);
        if (!p)
                abort();
        return p;
}

char *xstrdup(const char *s)
{
        char *d = strdup(s);
        if (!d)
                abort();
        return d;
}

int make_error(struct error *err, int errnum, const char *fmt, ...)
{
        va_list ap;

        if (!err || err->msg[0])
                return -1;
        err->errnum = errnum;
        if (!err->exit_code)
                err->exit_code = EXIT_STOCKADE;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        return -1;
}

/* The length of the UTF-8 sequence at p (1-4) and its code point in *cp, or 0 when the
 * bytes there are not one: a stray continuation, a cut sequence, an overlong form, a
 * surrogate or past U+10FFFF. */
size_t utf8_char(const unsigned char *p, uint32_t *cp)
{
        static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 0;

        if (*p < 0x80) {
                *cp = *p;
                return 1;
        }
        if (!n || *p >= 0xf8)
                return 0;
        *cp = *p & (0x7f >> n);
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0; /* NUL included: the string ends inside the sequence */
                *cp = *cp << 6 | (p[i] & 0x3f);
        }
        if (*cp < least[n] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
                return 0;
        return n;
}

ssize_t read_text(const char *path, char *buf, size_t len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, len - 1);
        if (n < 0)
                n = -errno;
        close(fd);
        if (n == 0)
                n = -ENODATA;
        buf[n > 0 ? n : 0] = '\0';
        return n;
}

bool utf8_unsafe(uint32_t cp)
{
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
               cp == 0x200f || cp == 0x061c;
}

/* msg with its control bytes (C0, DEL, C1) and the bytes that are not UTF-8 as \xNN: a message may
 * carry a path or a name someone else chose, which must not drive the reader's terminal. */
static void put_clean(FILE *out, const char *msg)
{
        for (const unsigned char *p = (const unsigned char *)msg; *p;) {
                uint32_t cp;
                size_t n = utf8_char(p, &cp);

                if (n == 0 || utf8_unsafe(cp))
                        for (size_t i = 0; i < (n ? n : 1); i++)
                                fprintf(out, "\\x%02x", *p++);
                else
                        fwrite(p, 1, n, out), p += n;
        }
}
void error_print(const struct error *err)
{
        if (err->printed)
                return;
        fputs("stockade: ", stderr);
        put_clean(stderr, err->msg);
        if (err->errnum)
                fprintf(stderr, ": %s", strerror(err->errnum));
        fputc('\n', stderr);
}

bool stockade_quiet;

void error_warn(const char *fmt, ...)
{
        va_list ap;

        if (stockade_quiet)
                return;
        fputs("stockade: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
}

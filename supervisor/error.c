#include "supervisor/error.h"
#include "supervisor/util.h"

#include <stdio.h>
#include <string.h>

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

/* msg with its control bytes (C0, DEL, and C1 written as UTF-8) as \xNN: a message may
 * carry a path or a name someone else chose, which must not drive the reader's terminal. */
static void put_clean(FILE *out, const char *msg)
{
        for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        fprintf(out, "\\x%02x", *p);
                else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
                        fprintf(out, "\\xc2\\x%02x", *++p);
                else
                        fputc(*p, out);
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

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

void error_print(const struct error *err)
{
        if (err->printed)
                return;
        if (err->errnum)
                fprintf(stderr, "stockade: %s: %s\n", err->msg, strerror(err->errnum));
        else
                fprintf(stderr, "stockade: %s\n", err->msg);
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

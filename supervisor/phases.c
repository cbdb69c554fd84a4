/* Start-up and teardown phases (phases.h). */
#include "supervisor/phases.h"

#include <stdio.h>
#include <time.h>

static struct timespec loaded;

__attribute__((constructor)) static void note_loaded(void)
{
        clock_gettime(CLOCK_MONOTONIC, &loaded);
}

double phases_now(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)(t.tv_sec - loaded.tv_sec) * 1e3 +
               (double)(t.tv_nsec - loaded.tv_nsec) / 1e6;
}

void phases_mark(struct phases *p, const char *name)
{
        double now = phases_now();
        int n;

        if (p->len >= sizeof(p->text))
                return;
        n = snprintf(p->text + p->len, sizeof(p->text) - p->len, "%s%s %.2f", p->len ? ", " : "",
                     name, now - p->last);
        p->len = n < 0 ? sizeof(p->text) : p->len + (size_t)n;
        p->last = now;
}

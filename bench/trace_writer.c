/*
 * bench/trace_writer [EVENTS] [DIR]: the trace writer's throughput. One thread pushes
 * EVENTS synthetic openat events (a path each, as a handler would record them) through the
 * notification path's ring while the writer thread decodes, packs, compresses and writes
 * them to DIR/bench.trace; prints events/s (the time until the last byte is written and the
 * file closed) and bytes per event on disk. The producer waits when its ring is full, so
 * the rate is the writer's. Unlike the other bench programs this links the project's
 * library: it measures supervisor/trace.c itself.
 */
#include "supervisor/sup.h"
#include "supervisor/trace.h"
#include "supervisor/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
        const char *dir = argc > 2 ? argv[2] : "/dev/shm";
        char path[4096], *cmd[] = {"bench", NULL}, *envp[] = {"PATH=/usr/bin", NULL};
        struct config cfg = {.argv = cmd, .trace_path = path, .trace_drop = false};
        struct supervisor sup = {.cfg = &cfg, .epfd = -1, .root = getpid()};
        struct error err = {0};
        struct stat st;
        double t0, t1, cpu;

        snprintf(path, sizeof(path), "%s/stockade-bench-%d.trace", dir, (int)getpid());
        if (trace_open(&sup, &err) < 0) {
                error_print(&err);
                return 1;
        }
        trace_start(&sup, envp);
        t0 = now();
        trace_bench_push(&sup, n);
        while (trace_writer_cpu_ns(&sup) == 0)
                usleep(1000);
        trace_finish(&sup, 0);
        t1 = now();
        /* The writer's own CPU time: what it can sustain on one core, whatever else the
         * machine runs (the wall-clock rate below includes waiting for the CPU). */
        cpu = (double)trace_writer_cpu_ns(&sup) / 1e9;
        if (stat(path, &st) < 0) {
                perror(path);
                return 1;
        }
        printf("trace_writer events=%llu events_per_s=%.0f writer_cpu_events_per_s=%.0f "
               "bytes_per_event=%.2f\n",
               (unsigned long long)n, (double)n / (t1 - t0), (double)n / cpu,
               (double)st.st_size / (double)n);
        unlink(path);
        trace_free(&sup);
        return 0;
}

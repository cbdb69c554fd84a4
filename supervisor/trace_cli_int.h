/* Shared by the readers of `stockade trace`: trace_cli.c (show), trace_stats.c (stats,
 * export). */
#ifndef STOCKADE_TRACE_CLI_INT_H
#define STOCKADE_TRACE_CLI_INT_H

#include "proto/trace_file.h"

typedef Stockade__Trace__Record Record;

enum only { ONLY_ALL, ONLY_DENIED, ONLY_NET, ONLY_EXEC, ONLY_FILES };

struct reader {
        const char *path;
        int fd;
        struct trace_in in;
        bool follow;
        enum only only;
        long pid;
        /* for filtering backtraces by the event they belong to */
        uint64_t shown_bt[64];
        size_t n_shown_bt;
};

/* Call fn for every record, then say what is wrong with the trace if anything. Returns the
 * exit code: 0, or 1 for a damaged trace. */
int trace_each_record(struct reader *r, void (*fn)(struct reader *r, const Record *rec, void *arg),
                      void *arg);
/* "allowed", "denied", ... */
const char *trace_verdict_name(Stockade__Trace__Verdict v);
int trace_stats(struct reader *r);
int trace_export(struct reader *r, const char *format);

/* A call the sandbox was refused: DENIED (or would be, in audit mode), or performed by the
 * supervisor and failed with EACCES, EPERM or EROFS (the view's or Landlock's refusal, or the
 * file's own permissions, as natively). What `--only denied` and the stats' list show. */
bool trace_event_refused(const Stockade__Trace__Event *e);

/* A string of a trace, safe to print on a terminal (trace_cli.c): control bytes as \xHH. */
const char *trace_printable(const char *s);

#endif

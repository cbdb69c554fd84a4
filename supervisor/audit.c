/*
 * Audit mode's report (audit.h). The notification path stays short: the key is a few
 * masked registers, the table a linear scan under a lock of its own, and the text of a kind
 * is made once, when it is first seen. Only the first call of a kind, and only with -v,
 * reads /proc (the caller's name and executable), outside the lock.
 */
#include "supervisor/audit.h"
#include "supervisor/notify.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"
#include "syscalls/decode.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void audit_init(struct audit_log *log)
{
        pthread_mutex_init(&log->lock, NULL);
        log->n = 0;
        log->unlisted = 0;
}

/* What enforce mode would have done, for a sentence: "fail with EPERM". */
static const char *outcome(uint32_t action, char *buf, size_t size)
{
        int err = (int)(action & SECCOMP_RET_DATA);

        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_ERRNO:
                if (!err)
                        return "return 0 without effect";
                snprintf(buf, size, "fail with %s", strerrorname_np(err) ?: "an unknown errno");
                return buf;
        case SECCOMP_RET_KILL_PROCESS:
        case SECCOMP_RET_KILL_THREAD:
                return "kill the process";
        default:
                return filter_action_name(action, buf, (unsigned)size);
        }
}

/* The same, in a word, for the summary. */
static const char *outcome_word(uint32_t action, char *buf, size_t size)
{
        int err = (int)(action & SECCOMP_RET_DATA);

        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_ERRNO:
                return err ? strerrorname_np(err) ?: "errno" : "0 (no effect)";
        case SECCOMP_RET_KILL_PROCESS:
        case SECCOMP_RET_KILL_THREAD:
                return "killed";
        default:
                return filter_action_name(action, buf, (unsigned)size);
        }
}

/* The program chooses its name (PR_SET_NAME) and its executable's path: whatever is not
 * printable is escaped, so that neither can put control sequences on the user's terminal. */
static void printable(char *s)
{
        char out[PATH_MAX];
        size_t len = 0;

        for (const unsigned char *p = (const unsigned char *)s; *p && len + 5 < sizeof(out); p++) {
                if (*p >= 0x20 && *p < 0x7f && *p != '\\')
                        out[len++] = (char)*p;
                else
                        len += (size_t)snprintf(out + len, sizeof(out) - len, "\\x%02x", *p);
        }
        out[len] = 0;
        memcpy(s, out, len + 1); /* callers' buffers are PATH_MAX */
}

/* The caller's name and executable, or "?" when /proc no longer has them. */
static void who(pid_t pid, char *comm, char *exe)
{
        char path[64];
        ssize_t n;
        int fd;

        strcpy(comm, "?");
        strcpy(exe, "?");
        snprintf(path, sizeof(path), "/proc/%d/comm", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, comm, 64);
                close(fd);
                if (n > 0) {
                        comm[n] = 0;
                        comm[strcspn(comm, "\n")] = 0;
                }
        }
        snprintf(path, sizeof(path), "/proc/%d/exe", pid);
        n = readlink(path, exe, PATH_MAX - 1);
        if (n > 0)
                exe[n] = 0;
        printable(comm);
        printable(exe);
}

static void print_call(struct supervisor *sup, const struct call *call, uint32_t action, bool first)
{
        const struct seccomp_data *d = &call->req->data;
        char what[512], buf[48];
        pid_t pid = (pid_t)call->req->pid;
        uint64_t args[6];

        for (unsigned i = 0; i < 6; i++)
                args[i] = d->args[i];
        decode_call(what, sizeof(what), d->nr, args, false);
        if (first) {
                char comm[PATH_MAX], exe[PATH_MAX];

                who(pid, comm, exe);
                /* The caller waits for our answer, so its pid is still its own; if it was
                 * killed meanwhile, what /proc said may be another process's. */
                if (tmem_id_valid(sup->listener, call->req->id) < 0) {
                        strcpy(comm, "?");
                        strcpy(exe, "?");
                }
                fprintf(stderr, "stockade: audit: %s[%d] (%s): %s would %s\n", comm, pid, exe, what,
                        outcome(action, buf, sizeof(buf)));
        } else {
                fprintf(stderr, "stockade: audit: pid %d: %s would %s\n", pid, what,
                        outcome(action, buf, sizeof(buf)));
        }
}

static struct audit_kind *find(struct audit_log *log, int nr, uint32_t action, const uint64_t *key)
{
        for (size_t i = 0; i < log->n; i++) {
                struct audit_kind *k = &log->kinds[i];

                if (k->nr == nr && k->action == action && memcmp(k->key, key, sizeof(k->key)) == 0)
                        return k;
        }
        return NULL;
}

void audit_note(struct supervisor *sup, const struct call *call, uint32_t action)
{
        struct audit_log *log = &sup->audit;
        const struct seccomp_data *d = &call->req->data;
        uint64_t args[6], key[6];
        struct audit_kind *k;
        bool first = false;

        for (unsigned i = 0; i < 6; i++) {
                args[i] = d->args[i];
                key[i] = args[i] & decode_key_mask(d->nr, i);
        }
        pthread_mutex_lock(&log->lock);
        k = find(log, d->nr, action, key);
        if (!k && log->n < AUDIT_KINDS) {
                k = &log->kinds[log->n++];
                k->nr = d->nr;
                k->action = action;
                memcpy(k->key, key, sizeof(k->key));
                k->count = 0;
                decode_call(k->what, sizeof(k->what), d->nr, args, true);
                first = true;
        }
        if (k)
                k->count++;
        else
                log->unlisted++;
        pthread_mutex_unlock(&log->lock);
        if (sup->cfg->verbose >= 2 || (first && sup->cfg->verbose))
                print_call(sup, call, action, first);
}

static int by_what(const void *a, const void *b)
{
        const struct audit_kind *x = *(const struct audit_kind *const *)a;
        const struct audit_kind *y = *(const struct audit_kind *const *)b;
        int c = strcmp(x->what, y->what);

        return c ? c : (x->action > y->action) - (x->action < y->action);
}

void audit_report(const struct supervisor *sup, FILE *to)
{
        const struct audit_log *log = &sup->audit;
        const struct audit_kind *sorted[AUDIT_KINDS];
        unsigned long long total = log->unlisted;
        char buf[48];

        for (size_t i = 0; i < log->n; i++) {
                sorted[i] = &log->kinds[i];
                total += log->kinds[i].count;
        }
        if (!total) {
                fprintf(to, "stockade: audit: no call would have been denied\n");
                return;
        }
        /* By call, then by what tells its kinds apart: the kinds of one call stay together. */
        qsort(sorted, log->n, sizeof(sorted[0]), by_what);
        fprintf(to, "stockade: audit: %llu call%s would have been denied, %zu kind%s:\n", total,
                total == 1 ? "" : "s", log->n, log->n == 1 ? "" : "s");
        for (size_t i = 0; i < log->n; i++)
                fprintf(to, "stockade: audit: %8llu x %s: %s\n", sorted[i]->count, sorted[i]->what,
                        outcome_word(sorted[i]->action, buf, sizeof(buf)));
        if (log->unlisted)
                fprintf(to,
                        "stockade: audit: %8llu x calls of more kinds (only %d are told apart)\n",
                        log->unlisted, AUDIT_KINDS);
}

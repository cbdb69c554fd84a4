/*
 * The trace recorder: per-producer rings, the writer thread, the notification path's half.
 * See trace.h for the shape, docs/trace-format.md for the file.
 */
#include "supervisor/trace_int.h"
#include "supervisor/error.h"
#include "supervisor/notify.h"
#include "supervisor/places.h"
#include "supervisor/tmem.h"
#include "supervisor/trace_decode.h"
#include "supervisor/session_owner.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define ZSTD_LEVEL 3
#define FLUSH_MS   100

uint64_t trace_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- opening ----------------------------------------------------------------------------- */

/* Is the directory `dirfd` one of the writable places, or beneath one? The sandbox could
 * then write, replace or remove the trace (Landlock allows it there). */
static bool in_places(const struct places *p, int dirfd)
{
        struct stat st;

        if (fstat(dirfd, &st) < 0)
                return true; /* cannot judge: refuse */
        for (size_t i = 0; i < p->n; i++)
                if (p->v[i].kind == PLACE_TREE && p->v[i].dev == st.st_dev &&
                    p->v[i].ino == st.st_ino)
                        return true;
        return places_contain(p, dirfd) != 0;
}

static int open_socket(struct trace *t, const char *path, struct error *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};

        if (strlen(path) >= sizeof(sa.sun_path))
                return make_error(err, 0, "--trace unix:%s: the socket path is too long", path);
        strcpy(sa.sun_path, path);
        t->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (t->fd < 0 || connect(t->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return make_error(err, errno,
                                  "--trace unix:%s: cannot connect (is a reader listening?)", path);
        t->socket = true;
        return 0;
}

/*
 * The file is created mode 0200 and stays so while the sandbox runs: the sandboxed program
 * (our uid when we are not root, and without capabilities either way) cannot open it for
 * reading, Landlock keeps it from writing, renaming or removing it outside the writable
 * places (refused above), and chmod is emulated and refused there too. The end of the run
 * gives the owner read access back (trace_finish).
 */
/* Whether the home directory lies where the sandbox writes (a CI's HOME in /var/tmp): then
 * ~/traces is no place to suggest. */
static bool home_in_places(const struct places *places)
{
        const char *home = getenv("HOME");
        _cleanup_close_ int fd =
                home && home[0] == '/' ? open(home, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;

        return fd >= 0 && in_places(places, fd);
}

static int open_file(struct trace *t, const char *path, const struct places *places,
                     struct error *err)
{
        _cleanup_free_ char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        _cleanup_close_ int dfd = -1;
        const char *name = path;
        struct stat st;

        if (slash) {
                slash[slash == dir] = 0; /* "/x" -> "/" */
                name = strrchr(path, '/') + 1;
        }
        if (!*name)
                return make_error(err, 0, "--trace `%s`: names a directory, not a file", path);
        /* Its directory walked as a session store is (session_owner.c): root writes no
         * trace where another user could lead it with a symlink of theirs (an outside attack
         * had root truncate a root-only file so), nobody where others may swap the way. */
        {
                char who[PATH_MAX + 32];
                struct sess_owner o;

                snprintf(who, sizeof(who), "--trace `%s`", path);
                dfd = store_open(slash ? dir : ".", &o, who, "", err);
                if (dfd < 0)
                        return -1;
                if (o.uid)
                        return make_error(err, 0,
                                          "--trace `%s`: %s belongs to uid %u: as root, write "
                                          "traces into a directory of root's",
                                          path, o.where, (unsigned)o.uid);
        }
        if (in_places(places, dfd))
                return make_error(err, 0,
                                  "--trace `%s`: the sandbox can write there (the current "
                                  "directory, /tmp and /var/tmp are its); put the trace "
                                  "in a directory outside those, e.g. %s",
                                  path,
                                  home_in_places(places)
                                          ? "one of yours elsewhere (your home lies in one "
                                            "of them), or stream it: --trace unix:PATH"
                                          : "--trace ~/traces/run.trace");
        t->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0200);
        if (t->fd < 0)
                return make_error(err, errno, "--trace `%s`: cannot be written", path);
        if (fstat(t->fd, &st) < 0 || !S_ISREG(st.st_mode))
                return make_error(err, 0, "--trace `%s`: not a regular file", path);
        if (fchmod(t->fd, 0200) < 0)
                return make_error(err, errno, "--trace `%s`: chmod", path);
        /* Held while it is recorded: a reader tells a trace whose recorder was killed (free,
         * still 0200) from one being recorded (trace_cli.c). */
        if (flock(t->fd, LOCK_EX | LOCK_NB) < 0)
                return make_error(err, errno == EWOULDBLOCK ? 0 : errno,
                                  "--trace `%s`: another stockade is recording it", path);
        t->path = xstrdup(path);
        return 0;
}

int trace_open(struct supervisor *sup, struct error *err)
{
        const char *path = sup->cfg->trace_path;
        struct trace *t;
        int r;

        if (!path)
                return 0;
        t = xcalloc(1, sizeof(*t));
        t->fd = -1;
        sup->trace = t;
        t->mono0 = trace_now();
        if (strncmp(path, "unix:", 5) == 0)
                r = open_socket(t, path + 5, err);
        else
                r = open_file(t, path, &sup->places, err);
        if (r < 0)
                return r;
        if (!sup->layers.landlock_abi && !t->socket)
                fprintf(stderr,
                        "stockade: warning: without Landlock the sandbox can write the "
                        "trace `%s` (it cannot read it)\n",
                        path);
        for (size_t i = 0; i < TRACE_PRODUCERS; i++)
                t->rings[i].buf = xcalloc(1, TRACE_RING_SIZE);
        t->counts = xcalloc(SYSCALL_NR_LIMIT, sizeof(*t->counts));
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->kick, NULL);
        pthread_mutex_init(&t->bt_mu, NULL);
        pthread_cond_init(&t->bt_done, NULL);
        t->bt_src.fd = -1;
        t->bt_done_src.fd = -1;
        t->bt_late_src.fd = -1;
        r = trace_out_open(&t->out, t->fd, t->socket, ZSTD_LEVEL);
        t->fd = -1; /* the writer owns it */
        if (r < 0)
                return make_error(err, -r, "--trace `%s`: write", path);
        return 0;
}

/* ---- rings ------------------------------------------------------------------------------ */

static void kick_writer(struct trace *t)
{
        pthread_mutex_lock(&t->mu);
        t->kicked = true;
        pthread_cond_signal(&t->kick);
        pthread_mutex_unlock(&t->mu);
}

/* Room for n bytes (8-aligned) at the producer's head, or NULL (dropped). Waits while the
 * ring is full, unless --trace-drop (or the writer is gone). */
static uint8_t *reserve(struct supervisor *sup, struct trace_ring *r, size_t n)
{
        struct trace *t = sup->trace;
        uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

        for (unsigned spins = 0;; spins++) {
                uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
                size_t pos = head & (TRACE_RING_SIZE - 1), room = TRACE_RING_SIZE - pos;
                size_t need = n + (room < n ? room : 0);

                if (TRACE_RING_SIZE - (head - tail) >= need) {
                        if (room < n) {
                                struct raw_head pad = {.len = (uint32_t)room, .type = RAW_PAD};
                                memcpy(r->buf + pos, &pad, sizeof(pad));
                                head += room;
                                atomic_store_explicit(&r->head, head, memory_order_release);
                        }
                        return r->buf + (head & (TRACE_RING_SIZE - 1));
                }
                if (sup->cfg->trace_drop || t->out_dead || atomic_load(&t->writer_stop)) {
                        atomic_fetch_add(&r->dropped, 1);
                        return NULL;
                }
                /* Full: the sandbox waits for the writer rather than lose the event. */
                if (spins == 0)
                        kick_writer(t);
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
        }
}

static void commit(struct trace *t, struct trace_ring *r, size_t n)
{
        uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed) + n;
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

        atomic_store_explicit(&r->head, head, memory_order_release);
        if (head - tail > TRACE_RING_SIZE / 2 && t->writer_started)
                kick_writer(t);
}

static size_t align8(size_t n)
{
        return (n + 7) & ~(size_t)7;
}

void trace_push_bytes(struct trace *t, unsigned producer, const uint8_t *p, size_t n, pid_t tid,
                      pid_t tgid)
{
        /* Only the main thread pushes bytes; `sup` is only needed for the options. */
        struct trace_ring *r = &t->rings[producer];
        size_t len = align8(sizeof(struct raw_bytes) + n);
        struct raw_bytes *b;
        uint64_t head, tail;

        if (len > TRACE_RING_SIZE / 4) {
                atomic_fetch_add(&r->dropped, 1);
                return;
        }
        /* The main thread never waits for the writer: it is the tracer, and the tree would
         * stop with it. A full ring drops (and counts) instead. */
        head = atomic_load_explicit(&r->head, memory_order_relaxed);
        tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        size_t pos = head & (TRACE_RING_SIZE - 1), room = TRACE_RING_SIZE - pos;
        if (TRACE_RING_SIZE - (head - tail) < len + (room < len ? room : 0)) {
                atomic_fetch_add(&r->dropped, 1);
                kick_writer(t);
                return;
        }
        if (room < len) {
                struct raw_head pad = {.len = (uint32_t)room, .type = RAW_PAD};
                memcpy(r->buf + pos, &pad, sizeof(pad));
                head += room;
                atomic_store_explicit(&r->head, head, memory_order_release);
        }
        b = (struct raw_bytes *)(r->buf + (head & (TRACE_RING_SIZE - 1)));
        b->h = (struct raw_head){.len = (uint32_t)len, .type = RAW_BYTES};
        b->t = trace_now();
        b->tid = (uint32_t)tid;
        b->tgid = (uint32_t)tgid;
        b->len = (uint32_t)n;
        memcpy(b->data, p, n);
        commit(t, r, len);
}

void trace_push_record(struct trace *t, unsigned producer, const Stockade__Trace__Record *rec,
                       pid_t tid, pid_t tgid)
{
        size_t n = stockade__trace__record__get_packed_size(rec);
        _cleanup_free_ uint8_t *p = xcalloc(1, n ? n : 1);

        stockade__trace__record__pack(rec, p);
        trace_push_bytes(t, producer, p, n, tid, tgid);
}

/* ---- tid -> tgid ------------------------------------------------------------------------- */

void trace_learn_tgid(struct trace *t, pid_t tid, pid_t tgid)
{
        if (tid > 0 && tgid > 0)
                atomic_store(&t->tgid[tid & 0xffff], (uint64_t)tid << 32 | (uint32_t)tgid);
}

pid_t trace_tgid(struct trace *t, pid_t tid)
{
        uint64_t v = atomic_load(&t->tgid[tid & 0xffff]);
        char path[64], buf[512];
        pid_t tgid = 0;
        ssize_t n;
        int fd;

        if ((pid_t)(v >> 32) == tid && tid)
                return (pid_t)(uint32_t)v; /* 0: known to be unknown (gone) */
        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n > 0) {
                char *p;
                buf[n] = 0;
                p = strstr(buf, "\nTgid:");
                if (p)
                        tgid = (pid_t)strtol(p + 6, NULL, 10);
        }
        /* Remembered even when unknown: a task that is gone must not cost an open per event. */
        if (tid > 0)
                atomic_store(&t->tgid[tid & 0xffff], (uint64_t)tid << 32 | (uint32_t)tgid);
        return tgid;
}

/* ---- the notification path -------------------------------------------------------------- */

void trace_call_begin(struct trace_call *tc)
{
        tc->t0 = trace_now();
        tc->rule = tc->limit = NULL;
        tc->denied = tc->would_deny = false;
        tc->bt_id = 0;
        for (size_t i = 0; i < ARRAY_SIZE(tc->mem); i++)
                tc->mem[i] = (struct trace_mem){.arg = -1};
}

/* The slot for argument `arg`: the one holding it already, else a free one, else the last. */
static struct trace_mem *mem_slot(struct trace_call *tc, int arg)
{
        for (size_t i = 0; i < ARRAY_SIZE(tc->mem); i++)
                if (tc->mem[i].arg == arg || tc->mem[i].arg < 0)
                        return &tc->mem[i];
        return &tc->mem[ARRAY_SIZE(tc->mem) - 1];
}

void trace_call_path(struct call *call, unsigned arg, const char *path)
{
        struct trace_mem *m;
        size_t n;

        if (!call->tc)
                return;
        m = mem_slot(call->tc, (int)arg);
        n = strnlen(path, TRACE_MEM_MAX);
        memcpy(m->bytes, path, n);
        m->arg = (int)arg;
        m->len = (int)n;
        m->truncated = n == TRACE_MEM_MAX;
}

void trace_call_mem(struct call *call, unsigned arg, const void *mem, size_t len)
{
        struct trace_mem *m;

        if (!call->tc)
                return;
        m = mem_slot(call->tc, (int)arg);
        if (len > TRACE_MEM_MAX)
                len = TRACE_MEM_MAX;
        memcpy(m->bytes, mem, len);
        m->arg = (int)arg;
        m->len = (int)len;
        m->truncated = false;
}

void trace_call_rule(struct call *call, const char *rule)
{
        if (call->tc)
                call->tc->rule = rule;
}

void trace_call_limit(struct call *call, const char *limit, uint64_t value)
{
        if (call->tc) {
                call->tc->limit = limit;
                call->tc->limit_value = value;
        }
}

/*
 * The memory argument of a call the kernel ran (CONTINUE), copied AFTER the answer, for the
 * trace only: the decision did not read it, so the copy may differ from what the kernel
 * used if another thread rewrote it meanwhile (docs/trace-format.md says so).
 */
static void copy_mem(struct call *call)
{
        struct trace_call *tc = call->tc;
        int from = 0;

        if (tc->mem[0].arg >= 0)
                return;
        for (size_t k = 0; k < ARRAY_SIZE(tc->mem); k++) {
                int arg = trace_mem_arg(call->req->data.nr, from);
                struct trace_mem *m = &tc->mem[k];
                uint64_t addr;
                ssize_t n;

                if (arg < 0)
                        return;
                from = arg + 1;
                addr = call->req->data.args[arg];
                if (!addr)
                        continue;
                m->arg = arg;
                if (trace_mem_is_sockaddr(call->req->data.nr, (unsigned)arg)) {
                        uint64_t len = call->req->data.args[arg + 1];
                        if (len > TRACE_MEM_MAX)
                                len = TRACE_MEM_MAX;
                        n = tmem_read((pid_t)call->req->pid, addr, m->bytes, (size_t)len);
                        m->len = n < 0 ? (int)n : (int)len;
                        continue;
                }
                n = tmem_read_string((pid_t)call->req->pid, addr, m->bytes, TRACE_MEM_MAX);
                if (n == -ENAMETOOLONG) {
                        m->truncated = true;
                        n = TRACE_MEM_MAX - 1;
                }
                m->len = (int)n;
        }
}

void trace_call_answering(struct supervisor *sup, struct call *call)
{
        /* An exec replaces the memory its path lives in: copy it before the answer (for the
         * trace only; the decision did not read it). */
        if (call->row &&
            (call->row == &syscall_table[SC_execve] || call->row == &syscall_table[SC_execveat]))
                copy_mem(call);
}

void trace_call_end(struct supervisor *sup, unsigned producer, struct call *call)
{
        struct trace *t = sup->trace;
        struct trace_call *tc = call->tc;
        const struct seccomp_notif_resp *resp = call->resp;
        struct raw_call *rc;
        size_t mem, len;

        if (resp->flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE)
                copy_mem(call);
        mem = (tc->mem[0].len > 0 ? (size_t)tc->mem[0].len : 0) +
              (tc->mem[1].len > 0 ? (size_t)tc->mem[1].len : 0);
        len = align8(sizeof(*rc) + mem);
        rc = (struct raw_call *)reserve(sup, &t->rings[producer], len);
        if (!rc)
                return;
        rc->h = (struct raw_head){.len = (uint32_t)len, .type = RAW_CALL};
        rc->tid = call->req->pid;
        rc->nr = call->req->data.nr;
        rc->t0 = tc->t0;
        rc->dur = trace_now() - tc->t0;
        memcpy(rc->args, call->req->data.args, sizeof(rc->args));
        rc->unknown = !call->row;
        rc->would_deny = tc->would_deny;
        rc->has_result = !(resp->flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE);
        rc->val = resp->val;
        rc->err = -resp->error;
        if (!rc->has_result)
                rc->verdict = STOCKADE__TRACE__VERDICT__ALLOWED;
        else if (tc->denied || !call->row)
                rc->verdict = STOCKADE__TRACE__VERDICT__DENIED;
        else
                rc->verdict = STOCKADE__TRACE__VERDICT__EMULATED;
        rc->rule = tc->rule;
        rc->limit = tc->limit;
        rc->limit_value = tc->limit_value;
        rc->bt_id = tc->bt_id;
        mem = 0;
        for (size_t i = 0; i < ARRAY_SIZE(tc->mem); i++) {
                rc->mem_arg[i] = (int16_t)tc->mem[i].arg;
                rc->mem_len[i] = (int16_t)tc->mem[i].len;
                rc->mem_truncated[i] = tc->mem[i].truncated;
                if (tc->mem[i].len > 0) {
                        memcpy(rc->mem + mem, tc->mem[i].bytes, (size_t)tc->mem[i].len);
                        mem += (size_t)tc->mem[i].len;
                }
        }
        commit(t, &t->rings[producer], len);
}

/* ---- the writer thread ------------------------------------------------------------------ */

static void count(struct trace *t, const struct raw_call *rc)
{
        if (rc->nr >= 0 && rc->nr < SYSCALL_NR_LIMIT && rc->verdict < 6) {
                t->counts[rc->nr][rc->verdict].n++;
                t->counts[rc->nr][rc->verdict].ns += rc->dur;
        }
}

static int encode_call(struct trace *t, const struct raw_call *rc)
{
        Stockade__Trace__Record rec = STOCKADE__TRACE__RECORD__INIT;
        Stockade__Trace__Event ev = STOCKADE__TRACE__EVENT__INIT;
        const struct syscall_row *row = syscall_lookup(AUDIT_ARCH_X86_64, rc->nr);
        char text[6][TRACE_MEM_MAX * 4 + 8], *args[6];
        unsigned nargs = row ? row->nargs : 6;
        char unknown[32];
        int r;

        for (unsigned i = 0; i < nargs; i++) {
                const char *mem = NULL;
                int mem_len = -1, truncated = 0;
                size_t at = 0;

                for (size_t k = 0; k < ARRAY_SIZE(rc->mem_arg); k++) {
                        if (rc->mem_arg[k] == (int)i) {
                                mem = rc->mem + at;
                                mem_len = rc->mem_len[k];
                                truncated = rc->mem_truncated[k];
                                break;
                        }
                        at += rc->mem_len[k] > 0 ? (size_t)rc->mem_len[k] : 0;
                }
                args[i] = text[i];
                trace_format_arg(text[i], sizeof(text[i]), rc->nr, i, rc->args[i], rc->args, mem,
                                 mem_len, truncated);
        }
        snprintf(unknown, sizeof(unknown), "syscall_%d", rc->nr);
        ev.time_ns = rc->t0 - t->mono0;
        ev.tid = rc->tid;
        ev.pid = (uint32_t)trace_tgid(t, (pid_t)rc->tid);
        ev.nr = (uint32_t)rc->nr;
        ev.syscall = row ? (char *)row->name : unknown;
        ev.n_args = nargs;
        ev.args = args;
        ev.verdict = rc->verdict;
        ev.has_result = rc->has_result;
        ev.result = rc->err ? 0 : rc->val;
        ev.error = rc->err;
        ev.duration_ns = rc->dur;
        ev.rule = (char *)(rc->rule      ? rc->rule
                           : rc->unknown ? "table: unknown syscall"
                                         : protobuf_c_empty_string);
        ev.backtrace_id = rc->bt_id;
        ev.would_deny = rc->would_deny;
        rec.kind_case = STOCKADE__TRACE__RECORD__KIND_EVENT;
        rec.event = &ev;
        r = trace_out_record(&t->out, &rec);
        t->events++;
        count(t, rc);
        if (r == 0 && rc->limit) {
                Stockade__Trace__Limit lim = STOCKADE__TRACE__LIMIT__INIT;
                lim.time_ns = ev.time_ns;
                lim.pid = ev.pid;
                lim.tid = ev.tid;
                lim.limit = (char *)rc->limit;
                lim.value = rc->limit_value;
                rec.kind_case = STOCKADE__TRACE__RECORD__KIND_LIMIT;
                rec.limit = &lim;
                r = trace_out_record(&t->out, &rec);
        }
        return r;
}

static void write_failed(struct trace *t, int r)
{
        if (r == -EPIPE || r == -ECONNRESET) {
                t->out_dead = true; /* nobody reads any more: drop, and count */
                fprintf(stderr, "stockade: warning: the trace reader went away; events from now "
                                "on are dropped\n");
                return;
        }
        if (!t->warned)
                fprintf(stderr,
                        "stockade: warning: cannot write the trace (%s); the sandbox "
                        "waits until it can%s\n",
                        strerror(-r), "");
        t->warned = true;
}

/* The next record of `ring` before `head` (padding skipped), or NULL. */
static const struct raw_head *peek(struct trace_ring *ring, uint64_t head)
{
        uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);

        while (tail != head) {
                const struct raw_head *h =
                        (const struct raw_head *)(ring->buf + (tail & (TRACE_RING_SIZE - 1)));
                if (h->type != RAW_PAD)
                        return h;
                tail += h->len;
                atomic_store_explicit(&ring->tail, tail, memory_order_release);
        }
        return NULL;
}

static uint64_t raw_time(const struct raw_head *h)
{
        return h->type == RAW_CALL ? ((const struct raw_call *)h)->t0
                                   : ((const struct raw_bytes *)h)->t;
}

static int encode(struct trace *t, struct trace_ring *ring, const struct raw_head *h)
{
        if (t->out_dead) {
                atomic_fetch_add(&ring->dropped, 1);
                return 0;
        }
        if (h->type == RAW_CALL)
                return encode_call(t, (const struct raw_call *)h);
        const struct raw_bytes *b = (const struct raw_bytes *)h;
        trace_learn_tgid(t, (pid_t)b->tid, (pid_t)b->tgid);
        return trace_out_append(&t->out, b->data, b->len);
}

/*
 * Everything the producers had pushed when the round started, merged by time (each ring is
 * in time order, its producer handles one call at a time), so that a fork comes before the
 * child's first call and `show` reads in order. Across rounds a record can still be older
 * than one written in the previous round, by at most the time a handler took. Returns 0, or
 * -errno of a failed write (what is left stays in the rings).
 */
static int drain_all(struct trace *t)
{
        uint64_t heads[TRACE_PRODUCERS];
        /* The rings with something to write this round: most of the producers' rings (one a
         * notifier thread, up to STOCKADE_NOTIFIERS_MAX) are idle, and each record's merge
         * looks at these alone. A ring once empty stays so for the round (its head is
         * fixed). */
        unsigned active[TRACE_PRODUCERS], n_active = 0;
        int r = 0;

        for (unsigned i = 0; i < TRACE_PRODUCERS; i++) {
                heads[i] = atomic_load_explicit(&t->rings[i].head, memory_order_acquire);
                if (peek(&t->rings[i], heads[i]))
                        active[n_active++] = i;
        }
        while (r == 0) {
                const struct raw_head *best = NULL, *h;
                unsigned from = 0;

                for (unsigned k = 0; k < n_active;) {
                        unsigned i = active[k];

                        h = peek(&t->rings[i], heads[i]);
                        if (!h) {
                                active[k] = active[--n_active];
                                continue;
                        }
                        if (!best || raw_time(h) < raw_time(best)) {
                                best = h;
                                from = i;
                        }
                        k++;
                }
                if (!best)
                        break;
                r = encode(t, &t->rings[from], best);
                atomic_fetch_add_explicit(&t->rings[from].tail, best->len, memory_order_release);
        }
        if (r == 0)
                r = trace_out_flush(&t->out);
        if (r < 0)
                write_failed(t, r);
        return r;
}

static void *writer_main(void *arg)
{
        struct trace *t = arg;
        sigset_t all;

        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        for (;;) {
                struct timespec ts, cpu;
                bool stop;
                int r;

                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += FLUSH_MS * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_mutex_lock(&t->mu);
                if (!t->kicked && !atomic_load(&t->writer_stop))
                        pthread_cond_timedwait(&t->kick, &t->mu, &ts);
                t->kicked = false;
                pthread_mutex_unlock(&t->mu);
                stop = atomic_load(&t->writer_stop);
                r = drain_all(t);
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
                atomic_store(&t->writer_cpu_ns,
                             (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec);
                if (r < 0 && !t->out_dead) {
                        struct timespec pause = {0, FLUSH_MS * 1000000L};
                        nanosleep(&pause, NULL); /* a full disk: try again */
                        if (stop)
                                break; /* trace_finish gives up after its own deadline */
                        continue;
                }
                if (stop)
                        break;
        }
        return NULL;
}

void trace_start(struct supervisor *sup, char *const *envp)
{
        struct trace *t = sup->trace;

        if (!t)
                return;
        trace_learn_tgid(t, sup->root, sup->root);
        trace_write_session(sup, envp);
        t->started = true;
        trace_bt_start(sup);
        if (pthread_create(&t->writer, NULL, writer_main, t) == 0)
                t->writer_started = true;
        else
                fprintf(stderr, "stockade: warning: no trace writer thread\n");
}

uint64_t trace_dropped(const struct trace *t);
uint64_t trace_dropped(const struct trace *t)
{
        uint64_t n = 0;

        for (size_t i = 0; i < TRACE_PRODUCERS; i++)
                n += atomic_load(&t->rings[i].dropped);
        return n;
}

void trace_finish(struct supervisor *sup, int code)
{
        struct trace *t = sup->trace;
        struct timespec ts;

        if (!t || !t->started)
                return;
        /* The tree is gone: no backtrace is pending. Before the writer's last round. */
        trace_bt_finish(t);
        if (t->writer_started) {
                atomic_store(&t->writer_stop, true);
                kick_writer(t);
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += 5;
                if (pthread_timedjoin_np(t->writer, NULL, &ts) != 0) {
                        fprintf(stderr, "stockade: warning: the trace could not be finished "
                                        "(the disk or the reader is stuck); it ends early\n");
                        return; /* the writer still owns the trace */
                }
                t->writer_started = false;
        }
        drain_all(t); /* events pushed after the writer's last round */
        trace_write_end(sup, code);
        if (t->path && fchmod(t->out.fd, 0600) < 0)
                fprintf(stderr, "stockade: warning: chmod the trace: %s\n", strerror(errno));
        if (trace_out_close(&t->out) < 0 && !t->out_dead)
                fprintf(stderr, "stockade: warning: the trace may be incomplete (write failed)\n");
}

void trace_free(struct supervisor *sup)
{
        struct trace *t = sup->trace;

        if (!t || t->writer_started)
                return;     /* a writer that could not be stopped keeps its memory */
        trace_bt_finish(t); /* a stuck unwinder keeps its own memory and fds, not ours */
        if (t->path && !t->started && t->out.fd >= 0)
                fchmod(t->out.fd, 0600); /* the run never started: nothing to hide */
        if (t->out.zc)
                trace_out_close(&t->out);
        cleanup_closep(&t->fd);
        cleanup_closep(&t->bt_src.fd);
        for (size_t i = 0; i < TRACE_PRODUCERS; i++)
                free(t->rings[i].buf);
        free(t->counts);
        free(t->path);
        free(t);
        sup->trace = NULL;
}

/* ---- bench ------------------------------------------------------------------------------- */

uint64_t trace_writer_cpu_ns(struct supervisor *sup)
{
        return sup->trace ? atomic_load(&sup->trace->writer_cpu_ns) : 0;
}

void trace_bench_push(struct supervisor *sup, uint64_t n)
{
        struct seccomp_notif req = {.pid = (uint32_t)getpid(),
                                    .data = {.nr = 257, .arch = AUDIT_ARCH_X86_64}};
        struct seccomp_notif_resp resp = {.flags = 0, .val = 3};
        struct trace_call tc;
        struct call call = {.req = &req, .resp = &resp, .tc = &tc};
        static const char *const paths[] = {
                "/usr/lib/python3.11/json/__init__.py", "/usr/lib/python3.11/json/decoder.py",
                "/usr/lib/python3.11/encodings/utf_8.py", "/etc/ld.so.cache"};

        call.row = syscall_lookup(AUDIT_ARCH_X86_64, 257);
        req.data.args[0] = (uint64_t)AT_FDCWD;
        req.data.args[2] = O_RDONLY | O_CLOEXEC;
        for (uint64_t i = 0; i < n; i++) {
                trace_call_begin(&tc);
                trace_call_path(&call, 1, paths[i & 3]);
                req.data.args[1] = 0x7ffd0000 + (i & 3) * 64;
                trace_call_end(sup, 0, &call);
        }
}

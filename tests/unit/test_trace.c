/* The trace file format and its readers, without a sandbox: round trips of every record
 * kind, cuts at every byte, corruption, unknown fields, damaged headers, and golden outputs
 * of `stockade trace show|stats|export` on a synthetic trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "proto/trace_file.h"
#include "supervisor/trace_json.h"
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef Stockade__Trace__Record Record;

/* ---- a synthetic trace with every kind of record ----------------------------------------- */

static char *argv0[] = {"python3", "-c", "import json", NULL};
static char *ev_args[] = {"AT_FDCWD", "\"/etc/passwd\"", "O_RDONLY|O_CLOEXEC", "00"};
static char *kill_args[] = {"1", "0"};
static char *exec_argv[] = {"python3", "-c", "import json"};
static char *answers[] = {"192.0.2.1"};

/* Fill *r with record number i (0..N_SAMPLE-1); the pointed-to messages are static. */
#define N_SAMPLE 11
static void sample(int i, Record *r)
{
        static Stockade__Trace__Session s = STOCKADE__TRACE__SESSION__INIT;
        static Stockade__Trace__Layers lay = STOCKADE__TRACE__LAYERS__INIT;
        static Stockade__Trace__Policy pol = STOCKADE__TRACE__POLICY__INIT;
        static Stockade__Trace__EnvVar env = STOCKADE__TRACE__ENV_VAR__INIT, *penv = &env;
        static Stockade__Trace__Event e1 = STOCKADE__TRACE__EVENT__INIT;
        static Stockade__Trace__Event e2 = STOCKADE__TRACE__EVENT__INIT;
        static Stockade__Trace__Process pf = STOCKADE__TRACE__PROCESS__INIT;
        static Stockade__Trace__Process px = STOCKADE__TRACE__PROCESS__INIT;
        static Stockade__Trace__Process pe = STOCKADE__TRACE__PROCESS__INIT;
        static Stockade__Trace__Dns dns = STOCKADE__TRACE__DNS__INIT;
        static Stockade__Trace__Connect con = STOCKADE__TRACE__CONNECT__INIT;
        static Stockade__Trace__Limit lim = STOCKADE__TRACE__LIMIT__INIT;
        static Stockade__Trace__Frame f[3] = {STOCKADE__TRACE__FRAME__INIT,
                                              STOCKADE__TRACE__FRAME__INIT,
                                              STOCKADE__TRACE__FRAME__INIT};
        static Stockade__Trace__Frame *pfr[3] = {&f[0], &f[1], &f[2]};
        static Stockade__Trace__Backtrace bt = STOCKADE__TRACE__BACKTRACE__INIT;
        static Stockade__Trace__SyscallCount cnt = STOCKADE__TRACE__SYSCALL_COUNT__INIT,
                                             *pcnt = &cnt;
        static Stockade__Trace__End end = STOCKADE__TRACE__END__INIT;

        s.version = "0.1.0";
        s.n_argv = 3;
        s.argv = argv0;
        s.cwd = "/home/u/work";
        env.name = "PATH";
        s.n_env = 1;
        s.env = &penv;
        pol.mode = "enforce";
        s.policy = &pol;
        s.kernel = "Linux 6.18";
        lay.seccomp_notify = lay.ptrace = lay.sync_wake_up = true;
        lay.landlock_abi = 7;
        lay.ipc = "namespace";
        s.layers = &lay;
        s.start_unix_ns = 1700000000000000000ull;
        s.level = "security";
        s.backtrace = "denied";

        e1.time_ns = 1500000;
        e1.pid = e1.tid = 100;
        e1.nr = 257;
        e1.syscall = "openat";
        e1.n_args = 4;
        e1.args = ev_args;
        e1.verdict = STOCKADE__TRACE__VERDICT__EMULATED;
        e1.has_result = true;
        e1.result = 3;
        e1.duration_ns = 2100;
        e1.rule = "vfs: ro mount /";

        e2.time_ns = 2500000;
        e2.pid = 100;
        e2.tid = 101;
        e2.nr = 62;
        e2.syscall = "kill";
        e2.n_args = 2;
        e2.args = kill_args;
        e2.verdict = STOCKADE__TRACE__VERDICT__DENIED;
        e2.has_result = true;
        e2.error = 3;
        e2.duration_ns = 3000;
        e2.rule = "process outside the sandbox";
        e2.backtrace_id = 1;

        pf.time_ns = 1000000;
        pf.kind = STOCKADE__TRACE__PROCESS__KIND__FORK;
        pf.pid = pf.tid = 99;
        pf.child = 100;
        pe.time_ns = 1200000;
        pe.kind = STOCKADE__TRACE__PROCESS__KIND__EXEC;
        pe.pid = pe.tid = 100;
        pe.path = "/usr/bin/python3.11";
        pe.n_argv = 3;
        pe.argv = exec_argv;
        px.time_ns = 9000000;
        px.kind = STOCKADE__TRACE__PROCESS__KIND__EXIT;
        px.pid = px.tid = 100;
        px.exited = true;
        px.exit_code = 0;

        dns.time_ns = 3000000;
        dns.pid = dns.tid = 100;
        dns.name = "example.org";
        dns.qtype = "A";
        dns.n_answers = 1;
        dns.answers = answers;
        dns.verdict = STOCKADE__TRACE__VERDICT__ALLOWED;
        con.time_ns = 3100000;
        con.pid = con.tid = 100;
        con.address = "192.0.2.1:443";
        con.protocol = "tcp";
        con.host = "example.org";
        con.verdict = STOCKADE__TRACE__VERDICT__DENIED;
        con.error = 101;
        lim.time_ns = 4000000;
        lim.pid = lim.tid = 100;
        lim.limit = "max-procs";
        lim.value = 64;

        bt.id = 1;
        bt.tid = 101;
        bt.n_frames = 3;
        bt.frames = pfr;
        f[0].ip = 0x7f0000001000;
        f[0].function = "kill";
        f[0].offset = 7;
        f[0].object = "/lib/x86_64-linux-gnu/libc.so.6";
        f[1].ip = 0x555500001170;
        f[1].function = "innermost";
        f[1].offset = 0x17;
        f[1].object = "/usr/bin/prog";
        f[2].ip = 0x555500001196;
        f[2].object = "/usr/bin/prog";

        cnt.nr = 257;
        cnt.syscall = "openat";
        cnt.verdict = STOCKADE__TRACE__VERDICT__EMULATED;
        cnt.count = 1;
        cnt.time_ns = 2100;
        end.time_ns = 9500000;
        end.exit_code = 0;
        end.exited = true;
        end.events = 2;
        end.n_counts = 1;
        end.counts = &pcnt;

        stockade__trace__record__init(r);
        switch (i) {
        case 0:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_SESSION;
                r->session = &s;
                break;
        case 1:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_PROCESS;
                r->process = &pf;
                break;
        case 2:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_PROCESS;
                r->process = &pe;
                break;
        case 3:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_EVENT;
                r->event = &e1;
                break;
        case 4:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_EVENT;
                r->event = &e2;
                break;
        case 5:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_BACKTRACE;
                r->backtrace = &bt;
                break;
        case 6:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_DNS;
                r->dns = &dns;
                break;
        case 7:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_CONNECT;
                r->connect = &con;
                break;
        case 8:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_LIMIT;
                r->limit = &lim;
                break;
        case 9:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_PROCESS;
                r->process = &px;
                break;
        default:
                r->kind_case = STOCKADE__TRACE__RECORD__KIND_END;
                r->end = &end;
                break;
        }
}

/* The packed bytes of record i (malloc'ed). */
static uint8_t *packed(int i, size_t *n)
{
        Record r;
        uint8_t *p;

        sample(i, &r);
        *n = stockade__trace__record__get_packed_size(&r);
        p = malloc(*n + 1);
        stockade__trace__record__pack(&r, p);
        return p;
}

/* Write the sample trace into a memfd, flushing after each record (and ending the zstd frame
 * every `frame` bytes of input). ends[i] = file size once record i was flushed. */
static int write_sample(size_t frame, uint64_t *ends)
{
        struct trace_out o;
        int fd = memfd_create("trace", 0), dup_fd;

        assert_true(fd >= 0);
        dup_fd = dup(fd);
        assert_int_equal(trace_out_open(&o, dup_fd, false, 3), 0);
        o.frame_max = frame;
        for (int i = 0; i < N_SAMPLE; i++) {
                Record r;
                sample(i, &r);
                assert_int_equal(trace_out_record(&o, &r), 0);
                assert_int_equal(trace_out_flush(&o), 0);
                if (ends)
                        ends[i] = o.bytes_out;
        }
        assert_int_equal(trace_out_close(&o), 0);
        return fd;
}

static size_t file_size(int fd)
{
        struct stat st;

        assert_int_equal(fstat(fd, &st), 0);
        return (size_t)st.st_size;
}

/* Read every record of fd from the start; checks each against the sample. */
static enum trace_status read_all(int fd, int *count, char *why, size_t why_size)
{
        struct trace_in in;
        enum trace_status st;
        Record *r;

        lseek(fd, 0, SEEK_SET);
        trace_in_init(&in, fd);
        *count = 0;
        while ((st = trace_in_next(&in, &r, false)) == TRACE_OK) {
                size_t n1, n2;
                uint8_t *want = packed(*count, &n1), got[8192];
                n2 = stockade__trace__record__get_packed_size(r);
                assert_true(*count < N_SAMPLE);
                assert_true(n2 < sizeof(got));
                stockade__trace__record__pack(r, got);
                assert_int_equal(n1, n2);
                assert_memory_equal(want, got, n1);
                free(want);
                stockade__trace__record__free_unpacked(r, NULL);
                (*count)++;
        }
        if (why)
                snprintf(why, why_size, "%s", in.why);
        trace_in_free(&in);
        return st;
}

static void round_trip_every_kind(void **state)
{
        int fd = write_sample(1 << 20, NULL), n;

        assert_int_equal(read_all(fd, &n, NULL, 0), TRACE_END);
        assert_int_equal(n, N_SAMPLE);
        close(fd);
}

/* A copy of the first `len` bytes of fd. */
static int cut(int fd, size_t len)
{
        int out = memfd_create("cut", 0);
        uint8_t *buf = malloc(len + 1);

        assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
        assert_int_equal(write(out, buf, len), (ssize_t)len);
        free(buf);
        return out;
}

static void cut_at_every_byte(void **state)
{
        uint64_t ends[N_SAMPLE];
        int fd = write_sample(600, ends);
        size_t size = file_size(fd);

        for (size_t len = 0; len <= size; len++) {
                int c = cut(fd, len), n, want = 0;
                char why[256];
                enum trace_status st = read_all(c, &n, why, sizeof(why));

                while (want < N_SAMPLE && ends[want] <= len)
                        want++;
                /* A record may even read before the frame's last bytes (its checksum). */
                if (n < want)
                        fail_msg("cut at %zu of %zu: %d records read, %d complete (%s)", len, size,
                                 n, want, why);
                if (len < TRACE_MAGIC_LEN)
                        assert_int_equal(st, TRACE_NOT_TRACE);
                else if (len < size)
                        assert_int_equal(st, TRACE_TRUNCATED);
                else
                        assert_int_equal(st, TRACE_END);
                close(c);
        }
        close(fd);
}

static void corrupted_frame(void **state)
{
        uint64_t ends[N_SAMPLE];
        /* A frame per record or so: corrupt the last frames, the first ones still read. */
        int fd = write_sample(1, ends), n;
        size_t size = file_size(fd);
        char why[256];

        /* The content of the frames of records 8, 9, 10 (a zstd frame header has bits
         * that change nothing when flipped; its data and checksum do not). */
        for (size_t at = ends[7] + 9; at < size - 4; at++) {
                bool content = false;
                for (int k = 8; k < N_SAMPLE; k++)
                        content |= at >= ends[k - 1] + 9 && at < ends[k] - 4;
                if (!content)
                        continue;
                uint8_t b;
                int c = cut(fd, size);
                assert_int_equal(pread(c, &b, 1, (off_t)at), 1);
                b ^= 0x5a;
                assert_int_equal(pwrite(c, &b, 1, (off_t)at), 1);
                enum trace_status st = read_all(c, &n, why, sizeof(why));
                (void)st;
                /* Every record before the damaged frame; a flip may also hit a length and be
                 * seen as a cut, but it never goes unnoticed past a frame's checksum. */
                assert_true(n >= 8);
                if (n == N_SAMPLE && st == TRACE_END)
                        fail_msg("a flipped byte at %zu of %zu went unnoticed", at, size);
                assert_true(st == TRACE_CORRUPT || st == TRACE_TRUNCATED);
                if (st == TRACE_CORRUPT)
                        assert_non_null(strstr(why, "corrupted"));
                close(c);
        }
        close(fd);
}

static void unknown_fields_and_kinds(void **state)
{
        struct trace_out o;
        struct trace_in in;
        Record *r;
        int fd = memfd_create("t", 0);
        size_t n;
        uint8_t *p = packed(3, &n), buf[1024];

        assert_int_equal(trace_out_open(&o, dup(fd), false, 3), 0);
        /* A Record of a kind from the future (field 20, a message), then the event with an
         * unknown field 99 appended (a varint) - protobuf merges concatenated fields. */
        uint8_t future[] = {0xa2, 0x01, 0x03, 0x08, 0x96, 0x01};
        assert_int_equal(trace_out_append(&o, future, sizeof(future)), 0);
        memcpy(buf, p, n);
        buf[n] = 0x98; /* field 99, varint: (99 << 3) | 0 = 792 = 0x98 0x06 */
        buf[n + 1] = 0x06;
        buf[n + 2] = 0x2a;
        assert_int_equal(trace_out_append(&o, buf, n + 3), 0);
        assert_int_equal(trace_out_close(&o), 0);

        lseek(fd, 0, SEEK_SET);
        trace_in_init(&in, fd);
        assert_int_equal(trace_in_next(&in, &r, false), TRACE_OK);
        assert_int_equal(r->kind_case, STOCKADE__TRACE__RECORD__KIND__NOT_SET);
        stockade__trace__record__free_unpacked(r, NULL);
        assert_int_equal(trace_in_next(&in, &r, false), TRACE_OK);
        assert_int_equal(r->kind_case, STOCKADE__TRACE__RECORD__KIND_EVENT);
        assert_string_equal(r->event->syscall, "openat");
        assert_int_equal(r->event->result, 3);
        stockade__trace__record__free_unpacked(r, NULL);
        /* No End record: a run cut short. */
        assert_int_equal(trace_in_next(&in, &r, false), TRACE_TRUNCATED);
        trace_in_free(&in);
        free(p);
        close(fd);
}

static enum trace_status read_bytes(const void *data, size_t len, char *why, size_t size)
{
        int fd = memfd_create("h", 0), n;
        enum trace_status st;

        assert_int_equal(write(fd, data, len), (ssize_t)len);
        st = read_all(fd, &n, why, size);
        close(fd);
        return st;
}

static void bad_headers(void **state)
{
        char why[256];
        uint8_t h[TRACE_HEADER_SIZE] = {0};

        assert_int_equal(read_bytes("hello world, not a trace", 24, why, sizeof(why)),
                         TRACE_NOT_TRACE);
        assert_non_null(strstr(why, "not a stockade trace"));
        memcpy(h, TRACE_MAGIC, TRACE_MAGIC_LEN);
        h[8] = TRACE_VERSION + 1;
        h[10] = TRACE_HEADER_SIZE;
        assert_int_equal(read_bytes(h, sizeof(h), why, sizeof(why)), TRACE_NEWER);
        assert_non_null(strstr(why, "newer"));
        h[8] = TRACE_VERSION;
        /* a header and then garbage where zstd should start */
        uint8_t g[TRACE_HEADER_SIZE + 8];
        memcpy(g, h, sizeof(h));
        memcpy(g + sizeof(h), "garbage!", 8);
        assert_int_equal(read_bytes(g, sizeof(g), why, sizeof(why)), TRACE_CORRUPT);
}

/* `trace show --follow` started with the run: the file may be empty, or hold part of its
 * header, when the follower opens it. That is "more to come", not "not a trace" (the follow
 * test of test_trace_run failed so when the machine was busy). Bytes that cannot begin a
 * header are refused at once. */
static void follow_before_the_header(void **state)
{
        int src = write_sample(1 << 20, NULL), grow = memfd_create("grow", 0), n = 0;
        size_t size = file_size(src);
        uint8_t *all = malloc(size);
        struct trace_in in;
        enum trace_status st;
        Record *r;

        (void)state;
        assert_true(grow >= 0);
        assert_int_equal(pread(src, all, size, 0), (ssize_t)size);
        trace_in_init(&in, grow);
        assert_int_equal(trace_in_next(&in, &r, true), TRACE_AGAIN); /* empty */
        /* pwrite: the reader's offset is the fd's own */
        assert_int_equal(pwrite(grow, all, 5, 0), 5);
        assert_int_equal(trace_in_next(&in, &r, true), TRACE_AGAIN); /* part of the magic */
        assert_int_equal(pwrite(grow, all + 5, size - 5, 5), (ssize_t)(size - 5));
        while ((st = trace_in_next(&in, &r, true)) == TRACE_OK) {
                stockade__trace__record__free_unpacked(r, NULL);
                n++;
        }
        assert_int_equal(st, TRACE_AGAIN);
        assert_int_equal(n, N_SAMPLE);
        trace_in_free(&in);
        close(grow);

        /* Not a trace's first bytes: refused, follow or not. */
        grow = memfd_create("grow", 0);
        assert_int_equal(pwrite(grow, "hello", 5, 0), 5);
        trace_in_init(&in, grow);
        assert_int_equal(trace_in_next(&in, &r, true), TRACE_NOT_TRACE);
        trace_in_free(&in);
        close(grow);
        close(src);
        free(all);
}

/* ---- golden outputs of the CLI ------------------------------------------------------------ */

static void golden(const char *name, const char *trace, const char *a1, const char *a2,
                   const char *a3)
{
        char *argv[] = {(char *)runner_stockade(),
                        "trace",
                        (char *)a1,
                        (char *)a2,
                        (char *)a3,
                        (char *)trace,
                        NULL};
        char path[512], *want;
        struct run_result r;
        FILE *f;
        long n;

        if (!a3) {
                argv[4] = (char *)trace;
                argv[5] = NULL;
                if (!a2) {
                        argv[3] = (char *)trace;
                        argv[4] = NULL;
                }
        }
        assert_int_equal(runner_run(argv, NULL, 30, &r), 0);
        if (r.exit_code != 0)
                fail_msg("stockade trace %s %s: exit %d: %s", a1, a2 ? a2 : "", r.exit_code, r.err);
        snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, name);
        if (getenv("STOCKADE_UPDATE_GOLDEN")) {
                f = fopen(path, "w");
                assert_non_null(f);
                fwrite(r.out, 1, r.out_len, f);
                fclose(f);
        }
        f = fopen(path, "r");
        if (!f)
                fail_msg("%s: %s (STOCKADE_UPDATE_GOLDEN=1 writes it)", path, strerror(errno));
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        want = calloc(1, (size_t)n + 1);
        assert_int_equal(fread(want, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        if (strcmp(want, r.out) != 0)
                fail_msg("%s differs:\n--- want\n%s--- got\n%s", name, want, r.out);
        free(want);
        runner_free(&r);
}

static void golden_outputs(void **state)
{
        char path[] = "/tmp/stockade-golden-XXXXXX";
        int fd = mkstemp(path), mfd = write_sample(1 << 20, NULL);
        size_t size = file_size(mfd);
        uint8_t *buf = malloc(size);

        assert_true(fd >= 0);
        assert_int_equal(pread(mfd, buf, size, 0), (ssize_t)size);
        assert_int_equal(write(fd, buf, size), (ssize_t)size);
        close(fd);
        close(mfd);
        free(buf);
        golden("show.txt", path, "show", NULL, NULL);
        golden("show-denied.txt", path, "show", "--only", "denied");
        golden("stats.txt", path, "stats", NULL, NULL);
        golden("export.jsonl", path, "export", "--format", "jsonl");
        golden("export-chrome.json", path, "export", "--format", "chrome");
        unlink(path);
}

/* The chrome export is JSON of the trace-event format: checked by python3's json module. */
static void chrome_export_is_valid_json(void **state)
{
        char cmd[1024], path[512];

        if (system("python3 -c '' 2>/dev/null") != 0) {
                print_message("skipped: no python3\n");
                skip();
        }
        snprintf(path, sizeof(path), "%s/export-chrome.json", GOLDEN_DIR);
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import json,sys\n"
                 "d = json.load(open(sys.argv[1]))\n"
                 "ev = d[\"traceEvents\"]\n"
                 "assert isinstance(ev, list) and ev\n"
                 "for e in ev:\n"
                 "    assert e[\"ph\"] in \"XiM\", e\n"
                 "    assert isinstance(e[\"pid\"], int) and isinstance(e[\"tid\"], int), e\n"
                 "    if e[\"ph\"] == \"X\": assert e[\"dur\"] >= 0 and e[\"ts\"] >= 0\n"
                 "assert any(e[\"ph\"] == \"X\" and e[\"name\"] == \"kill\" for e in ev)\n"
                 "' %s",
                 path);
        assert_int_equal(system(cmd), 0);
        /* And each jsonl line is a JSON object with a type. */
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import json,sys\n"
                 "n = 0\n"
                 "for line in open(sys.argv[1]):\n"
                 "    assert json.loads(line)[\"type\"]; n += 1\n"
                 "assert n == %d\n"
                 "' %s/export.jsonl",
                 N_SAMPLE, GOLDEN_DIR);
        assert_int_equal(system(cmd), 0);
}

static void damaged_trace_cli(void **state)
{
        char path[] = "/tmp/stockade-damaged-XXXXXX";
        uint64_t ends[N_SAMPLE];
        int fd = mkstemp(path), mfd = write_sample(1 << 20, ends);
        uint8_t *buf = malloc(ends[6]);
        char *argv[] = {(char *)runner_stockade(), "trace", "show", path, NULL};
        struct run_result r;

        assert_int_equal(pread(mfd, buf, ends[6] - 1, 0), (ssize_t)ends[6] - 1);
        assert_int_equal(write(fd, buf, ends[6] - 1), (ssize_t)ends[6] - 1);
        close(fd);
        assert_int_equal(runner_run(argv, NULL, 30, &r), 0);
        assert_int_equal(r.exit_code, 1);
        assert_non_null(strstr(r.out, "kill(1, 0)")); /* the events before the cut */
        assert_non_null(strstr(r.err, "truncated"));
        assert_null(strchr(strchr(r.err, '\n') + 1, '\n')); /* one line */
        runner_free(&r);

        fd = open(path, O_WRONLY | O_TRUNC);
        assert_int_equal(write(fd, "#!/bin/sh\necho not a trace\n", 27), 27);
        close(fd);
        assert_int_equal(runner_run(argv, NULL, 30, &r), 0);
        assert_int_equal(r.exit_code, 1);
        assert_non_null(strstr(r.err, "not a stockade trace"));
        runner_free(&r);
        unlink(path);
        free(buf);
        close(mfd);
}

/* Names in JSON: UTF-8 as it is, the bytes of anything else as lone surrogates (lossless),
 * what a terminal or a reader would act on escaped. */
static void json_strings(void **state)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                {"plain", "\"plain\""},
                {"q\"b\\n\nt\t", "\"q\\\"b\\\\n\\nt\\t\""},
                {"\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""},                         /* été */
                {"\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\""}, /* € 😀 */
                {"bad\xffname", "\"bad\\udcffname\""},
                {"\xc3", "\"\\udcc3\""},                                  /* cut at the end */
                {"\xc3(", "\"\\udcc3(\""},                                /* not a continuation */
                {"\xc0\xaf", "\"\\udcc0\\udcaf\""},                       /* overlong '/' */
                {"\xed\xa0\x80", "\"\\udced\\udca0\\udc80\""},            /* a surrogate */
                {"\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\""}, /* past U+10FFFF */
                {"\x1b[2J\x7f", "\"\\u001b[2J\\u007f\""},
                {"\xc2\x9b", "\"\\u009b\""}, /* C1 CSI */
                {"a\xe2\x80\xae"
                 "b",
                 "\"a\\u202eb\""}, /* right-to-left override */
                {"\xe2\x80\xa8", "\"\\u2028\""},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);

                assert_non_null(f);
                json_string(f, cases[i].in);
                fclose(f);
                if (strcmp(buf, cases[i].out) != 0)
                        fail_msg("case %zu: %s, expected %s", i, buf, cases[i].out);
                free(buf);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(round_trip_every_kind),
                cmocka_unit_test(cut_at_every_byte),
                cmocka_unit_test(corrupted_frame),
                cmocka_unit_test(unknown_fields_and_kinds),
                cmocka_unit_test(bad_headers),
                cmocka_unit_test(follow_before_the_header),
                cmocka_unit_test(golden_outputs),
                cmocka_unit_test(chrome_export_is_valid_json),
                cmocka_unit_test(json_strings),
                cmocka_unit_test(damaged_trace_cli),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

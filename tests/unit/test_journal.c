/* A cow mount's journal and a session's metadata: written, read back, and read back after
 * a cut at every byte (stockade killed in the middle of a write). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/vfs/journal.h"
#include "supervisor/vfs/session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void escape_round_trip(void **state)
{
        static const char *cases[] = {"plain", "a b",         "new\nline", "tab\there",
                                      "100%",  "caf\xc3\xa9", "\x7f",      "%41"};

        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                char *e = journal_escape(cases[i]);

                assert_non_null(e);
                assert_null(strpbrk(e, " \n\t"));
                assert_int_equal(journal_unescape(e), 0);
                assert_string_equal(e, cases[i]);
                free(e);
        }
        char bad1[] = "%0", bad2[] = "%zz", bad3[] = "%00";

        assert_int_equal(journal_unescape(bad1), -EINVAL);
        assert_int_equal(journal_unescape(bad2), -EINVAL);
        assert_int_equal(journal_unescape(bad3), -EINVAL);
}

static void hash_is_stream_independent(void **state)
{
        char buf[1000];
        struct journal_hasher a, b;
        uint64_t ha, hb;

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (char)(i * 7);
        journal_hash_init(&a);
        journal_hash_update(&a, buf, sizeof(buf));
        ha = journal_hash_final(&a);
        journal_hash_init(&b);
        for (size_t i = 0; i < sizeof(buf); i += 13)
                journal_hash_update(&b, buf + i, i + 13 > sizeof(buf) ? sizeof(buf) - i : 13);
        hb = journal_hash_final(&b);
        assert_true(ha == hb);
        buf[500] ^= 1;
        journal_hash_init(&b);
        journal_hash_update(&b, buf, sizeof(buf));
        assert_false(journal_hash_final(&b) == ha);
        /* a trailing zero byte is a different content */
        journal_hash_init(&b);
        journal_hash_update(&b, buf, 999);
        hb = journal_hash_final(&b);
        journal_hash_init(&a);
        journal_hash_update(&a, buf, 998);
        assert_false(journal_hash_final(&a) == hb);
}

static const char three[] =
        "B a%20b f 0644 5 1700000000.000000001 0123456789abcdef\n"
        "B sub/new%0Aline d 0755 0 1700000001.5 0000000000000000\n"
        "B a%20b f 0600 9 1700000002.0 fedcba9876543210\n"; /* later record of a b: ignored */

/* Version 2 of the hash: a file's value is that of its bytes in memory, whatever its size
 * (one chunk, a chunk and a byte, several chunks hashed by two threads); a changed byte
 * anywhere changes it; version 1 is still what it was (sessions of older stockades). */
static void hash2_file_matches_buffer(void **state)
{
        static const size_t mib = (size_t)1 << 20;
        const size_t sizes[] = {0,           1, 31, 32, 33, 16 * mib - 1, 16 * mib, 16 * mib + 1,
                                64 * mib + 5};
        char path[] = "/var/tmp/test_journal_hash2_XXXXXX";
        int fd = mkstemp(path);
        unsigned char *buf = malloc(64 * mib + 5);
        uint64_t h, h1;

        (void)state;
        assert_true(fd >= 0);
        assert_non_null(buf);
        for (size_t i = 0; i < 64 * mib + 5; i++)
                buf[i] = (unsigned char)(i * 2654435761u >> 13);
        for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
                assert_int_equal(ftruncate(fd, 0), 0);
                assert_int_equal(pwrite(fd, buf, sizes[k], 0), (ssize_t)sizes[k]);
                assert_int_equal(journal_hash_fd_v(fd, 2, &h), 0);
                if (h != journal_hash2_buf(buf, sizes[k]))
                        fail_msg("size %zu: the file's value is not its bytes'", sizes[k]);
                if (sizes[k]) {
                        buf[sizes[k] / 2] ^= 1;
                        assert_false(h == journal_hash2_buf(buf, sizes[k]));
                        buf[sizes[k] / 2] ^= 1;
                }
        }
        /* Version 1 of a known content, as older sessions recorded it. */
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, "stockade\n", 9, 0), 9);
        assert_int_equal(journal_hash_fd_v(fd, 1, &h1), 0);
        assert_int_equal(journal_hash_fd(fd, &h), 0);
        assert_true(h == h1);
        assert_int_equal(journal_hash_fd_v(fd, 2, &h), 0);
        assert_false(h == h1);
        close(fd);
        unlink(path);
        free(buf);
}

/* Version 2 of a sparse file: its holes count as the zeros they read as, without being read.
 * Sparse and dense files of the same bytes get the bytes' value (a chunk wholly a hole, a
 * short last chunk that is a hole, one with data); and a file of a terabyte, nearly all
 * hole, is hashed in the time of its data (reading it would outlast the test's timeout),
 * with a byte changed far into it changing the value. */
static void hash2_holes_as_zeros(void **state)
{
        static const size_t mib = (size_t)1 << 20;
        const size_t size = 50 * mib + 7;
        const off_t tib = (off_t)1 << 40;
        const size_t at[] = {5, 16 * mib + 100, 49 * mib, 50 * mib + 6};
        char path[] = "/var/tmp/test_journal_holes_XXXXXX";
        int fd = mkstemp(path);
        unsigned char *buf = calloc(1, size);
        uint64_t h, h2;

        (void)state;
        assert_true(fd >= 0);
        assert_non_null(buf);
        for (size_t last = 2; last <= 4; last++) { /* the last chunk: a hole, then data */
                memset(buf, 0, size);
                assert_int_equal(ftruncate(fd, 0), 0);
                assert_int_equal(ftruncate(fd, (off_t)size), 0);
                for (size_t k = 0; k < last; k++) {
                        buf[at[k]] = (unsigned char)(0x41 + k);
                        assert_int_equal(pwrite(fd, &buf[at[k]], 1, (off_t)at[k]), 1);
                }
                assert_int_equal(journal_hash_fd_v(fd, 2, &h), 0);
                if (h != journal_hash2_buf(buf, size))
                        fail_msg("%zu bytes of data: the sparse file's value is not its bytes'",
                                 last);
                assert_int_equal(pwrite(fd, buf, size, 0), (ssize_t)size); /* dense now */
                assert_int_equal(journal_hash_fd_v(fd, 2, &h2), 0);
                assert_true(h2 == h);
        }
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(ftruncate(fd, tib), 0);
        assert_int_equal(pwrite(fd, "x", 1, tib / 2), 1);
        assert_int_equal(journal_hash_fd_v(fd, 2, &h), 0);
        assert_int_equal(pwrite(fd, "y", 1, tib / 2), 1);
        assert_int_equal(journal_hash_fd_v(fd, 2, &h2), 0);
        assert_false(h == h2);
        assert_int_equal(pwrite(fd, "x", 1, tib / 2), 1);
        assert_int_equal(journal_hash_fd_v(fd, 2, &h2), 0);
        assert_true(h == h2);
        close(fd);
        unlink(path);
        free(buf);
}

/* A record of each version parses as that version, and formats back to the same line. */
static void hash_versions_in_records(void **state)
{
        static const char *const lines[] = {
                "B a f 0644 3 1.000000001 0123456789abcdef\n",
                "B b f 0644 3 1.000000001 2.fedcba9876543210\n",
        };
        struct journal j = {0};
        char all[256];

        (void)state;
        snprintf(all, sizeof(all), "%s%s", lines[0], lines[1]);
        assert_int_equal(journal_parse(&j, all, strlen(all)), 0);
        assert_int_equal(j.n, 2);
        for (size_t i = 0; i < 2; i++) {
                char *line = journal_format(&j.v[i]);

                assert_int_equal(j.v[i].hashv, i + 1);
                assert_string_equal(line, lines[i]);
                free(line);
        }
        journal_free(&j);
}

static void parse_first_wins_sorted(void **state)
{
        struct journal j;
        const struct journal_rec *r;

        assert_int_equal(journal_parse(&j, three, strlen(three)), 0);
        assert_int_equal(j.n, 2);
        r = journal_find(&j, "a b");
        assert_non_null(r);
        assert_int_equal(r->mode, 0644);
        assert_int_equal(r->size, 5);
        assert_true(r->hash == 0x0123456789abcdefULL);
        assert_int_equal(r->mtime_nsec, 1);
        r = journal_find(&j, "sub/new\nline");
        assert_non_null(r);
        assert_int_equal(r->type, 'd');
        assert_int_equal(r->mtime_nsec, 5);
        assert_null(journal_find(&j, "missing"));
        journal_free(&j);
}

/* Every prefix of the file parses to the records whose lines are whole in it. */
static void cut_at_every_byte(void **state)
{
        size_t len = strlen(three), first_nl = strchr(three, '\n') - three,
               second_nl = strchr(three + first_nl + 1, '\n') - three;

        for (size_t cut = 0; cut <= len; cut++) {
                struct journal j;
                size_t want = cut > second_nl ? 2 : cut > first_nl ? 1 : 0;

                assert_int_equal(journal_parse(&j, three, cut), 0);
                assert_int_equal(j.n, want);
                if (want)
                        assert_int_equal(journal_find(&j, "a b")->mode, 0644);
                journal_free(&j);
        }
}

static void malformed_lines_skipped(void **state)
{
        static const char bad[] = "X a f 0644 5 1.0 0123456789abcdef\n"
                                  "B a q 0644 5 1.0 0123456789abcdef\n"
                                  "B a f 0999 5 1.0 0123456789abcdef\n"
                                  "B a f 0644 5 1.0 0123\n"
                                  "B a f 0644 5 1 0123456789abcdef\n"
                                  "B %00 f 0644 5 1.0 0123456789abcdef\n"
                                  "B a f 0644 5 1.0 0123456789abcdef extra\n"
                                  "B ok l 0777 3 2.0 00000000000000ff\n";
        struct journal j;

        assert_int_equal(journal_parse(&j, bad, sizeof(bad) - 1), 0);
        assert_int_equal(j.n, 1);
        assert_string_equal(j.v[0].path, "ok");
        journal_free(&j);
}

static void describe_append_load(void **state)
{
        char dir[] = "/var/tmp/test_journal.XXXXXX", path[256], jpath[256];
        struct journal_rec rec;
        struct journal j;
        int fd, jfd;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/f", dir);
        snprintf(jpath, sizeof(jpath), "%s/journal", dir);
        fd = open(path, O_WRONLY | O_CREAT, 0640);
        assert_int_equal(write(fd, "hello", 5), 5);
        close(fd);
        fd = open(path, O_PATH);
        assert_int_equal(journal_describe(fd, "dir/f", &rec), 0);
        close(fd);
        assert_int_equal(rec.type, 'f');
        assert_int_equal(rec.mode, 0640);
        assert_int_equal(rec.size, 5);
        jfd = open(jpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        assert_int_equal(journal_append(jfd, &rec), 0);
        close(jfd);
        assert_int_equal(journal_load(&j, jpath), 0);
        assert_int_equal(j.n, 1);
        assert_true(j.v[0].hash == rec.hash);
        assert_int_equal(j.v[0].mtime_sec, rec.mtime_sec);
        assert_int_equal(j.v[0].mtime_nsec, rec.mtime_nsec);
        journal_free(&j);
        journal_rec_free(&rec);
        unlink(path);
        unlink(jpath);
        assert_int_equal(journal_load(&j, jpath), 0); /* missing: empty */
        assert_int_equal(j.n, 0);
        rmdir(dir);
}

static void session_meta_round_trip_and_cuts(void **state)
{
        char dir[] = "/var/tmp/test_session.XXXXXX", path[256], buf[4096];
        struct session_meta m = {.created = 100, .updated = 200, .n_mounts = 2}, r;
        ssize_t len;
        int fd;

        assert_non_null(mkdtemp(dir));
        m.command = strdup("make -j4 a%20b");
        snprintf(m.mounts[0].sandbox, PATH_MAX, "/work/my proj");
        snprintf(m.mounts[0].host, PATH_MAX, "/home/u/my proj");
        snprintf(m.mounts[1].sandbox, PATH_MAX, "/data");
        snprintf(m.mounts[1].host, PATH_MAX, "/srv/data");
        m.mounts[1].dev = 2049, m.mounts[1].ino = 1234567890123ULL;
        assert_int_equal(session_meta_write(dir, &m), 0);
        assert_int_equal(session_meta_read(dir, &r), 0);
        assert_false(r.damaged);
        assert_int_equal(r.created, 100);
        assert_int_equal(r.updated, 200);
        assert_string_equal(r.command, m.command);
        assert_int_equal(r.n_mounts, 2);
        assert_string_equal(r.mounts[0].sandbox, "/work/my proj");
        assert_string_equal(r.mounts[1].host, "/srv/data");
        assert_true(r.mounts[1].dev == 2049 && r.mounts[1].ino == 1234567890123ULL);
        session_meta_free(&r);

        snprintf(path, sizeof(path), "%s/session", dir);
        fd = open(path, O_RDONLY);
        len = read(fd, buf, sizeof(buf));
        close(fd);
        assert_true(len > 0);
        for (ssize_t cut = 0; cut < len; cut++) {
                fd = open(path, O_WRONLY | O_TRUNC);
                assert_int_equal(write(fd, buf, (size_t)cut), cut);
                close(fd);
                assert_int_equal(session_meta_read(dir, &r), 0);
                assert_true(r.damaged); /* every cut is seen */
                session_meta_free(&r);
        }
        session_meta_free(&m);
        unlink(path);
        rmdir(dir);
}

static void names_and_lock(void **state)
{
        char dir[] = "/var/tmp/test_lock.XXXXXX", name[SESSION_NAME_MAX + 1], lockp[256];
        int a, b;

        assert_true(session_name_ok("fix-bug_2.v1"));
        assert_false(session_name_ok(""));
        assert_false(session_name_ok(".hidden"));
        assert_false(session_name_ok("-x"));
        assert_false(session_name_ok("a/b"));
        assert_false(session_name_ok(".."));
        assert_false(session_name_ok("a b"));
        session_make_name(name);
        assert_true(session_name_ok(name));
        assert_non_null(mkdtemp(dir));
        a = session_lock(dir);
        assert_true(a >= 0);
        b = session_lock(dir);
        assert_int_equal(b, -EWOULDBLOCK);
        close(a);
        b = session_lock(dir);
        assert_true(b >= 0);
        close(b);
        snprintf(lockp, sizeof(lockp), "%s/lock", dir);
        unlink(lockp);
        rmdir(dir);
}

/* session_unborn: what a stopped start leaves, and each thing that makes it more than that. */
static int unborn_with(const char *top, const char *extra)
{
        char cmd[1024];
        int fd, r;

        snprintf(cmd, sizeof(cmd),
                 "rm -rf %s/s && mkdir -p %s/s/0/upper/a/b %s/s/0/work/work && : >%s/s/lock && "
                 ": >%s/s/0/journal && cd %s/s && %s",
                 top, top, top, top, top, top, extra);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s/s", top);
        fd = open(cmd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        r = session_unborn(fd);
        if (r) { /* and what clearing it leaves: the lock alone */
                assert_int_equal(session_clear_unborn(fd), 0);
                snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s/s)\" = lock", top);
                assert_int_equal(system(cmd), 0);
        }
        close(fd);
        return r;
}

static void unborn_sessions(void **state)
{
        char dir[] = "/var/tmp/test_unborn.XXXXXX", cmd[128];

        (void)state;
        assert_non_null(mkdtemp(dir));
        assert_true(unborn_with(dir, "true"));
        assert_true(unborn_with(dir, ": >.session.new && mkdir 1 && mkdir 1/upper"));
        assert_false(unborn_with(dir, ": >session"));
        assert_false(unborn_with(dir, "echo x >0/journal"));
        assert_false(unborn_with(dir, ": >0/upper/a/f"));
        assert_false(unborn_with(dir, "ln -s / 0/upper/a/l"));
        assert_false(unborn_with(dir, "mkfifo 0/upper/p"));
        assert_false(unborn_with(dir, ": >stray"));
        assert_false(unborn_with(dir, "mkdir 0/other"));
        assert_false(unborn_with(dir, "rm 0/journal && ln -s /etc/passwd 0/journal"));
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(escape_round_trip),
                cmocka_unit_test(hash_is_stream_independent),
                cmocka_unit_test(hash2_file_matches_buffer),
                cmocka_unit_test(hash2_holes_as_zeros),
                cmocka_unit_test(hash_versions_in_records),
                cmocka_unit_test(parse_first_wins_sorted),
                cmocka_unit_test(cut_at_every_byte),
                cmocka_unit_test(malformed_lines_skipped),
                cmocka_unit_test(describe_append_load),
                cmocka_unit_test(session_meta_round_trip_and_cuts),
                cmocka_unit_test(names_and_lock),
                cmocka_unit_test(unborn_sessions),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

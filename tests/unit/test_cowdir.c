/*
 * The listing of a merged directory (supervisor/vfs/cowdir.h), on plain directories under
 * $TMPDIR: an upper over a lower as overlayfs merges them (whiteouts, the upper's entry of a
 * name over the lower's), records laid out byte for byte as the kernel's, and positions that
 * survive a listing cut into pieces while the layers change, as `rm -rf` changes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/runner.h"

#include "supervisor/vfs/cowdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char T[PATH_MAX];

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

/* One record as read back from a buffer. */
struct rec {
        uint64_t ino;
        uint64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[NAME_MAX + 1];
};

struct listing {
        struct rec *v;
        size_t n;
};

static void listing_free(struct listing *l)
{
        free(l->v);
        *l = (struct listing){0};
}

/* T/rel opened as a directory (O_PATH with `path`). */
static int dir_fd(const char *rel, bool path)
{
        char p[2 * PATH_MAX];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", T, rel);
        fd = open(p, (path ? O_PATH : O_RDONLY) | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

static ino_t ino_of(const char *rel)
{
        char p[4 * PATH_MAX];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", T, rel);
        assert_int_equal(lstat(p, &st), 0);
        return st.st_ino;
}

/* A whiteout `name` in T/rel: false, with the reason printed, where mknod of 0:0 is refused
 * (an unprivileged user before Linux 5.8). */
static bool whiteout(const char *rel, const char *name)
{
        int fd = dir_fd(rel, false), r = mknodat(fd, name, S_IFCHR | 0, makedev(0, 0));

        if (r < 0 && errno != EPERM)
                fail_msg("mknodat %s/%s: %s", rel, name, strerror(errno));
        if (r < 0)
                printf("[  SKIP    ] whiteout %s: mknod of a 0:0 device refused (EPERM)\n", name);
        close(fd);
        return r == 0;
}

/*
 * Append the records of buf[0..n) to l, read by the kernel's offsets (include/linux/
 * dirent.h, fs/readdir.c), written out here rather than taken from cowdir.c: d_ino, d_off,
 * d_reclen, then d_type and the name for getdents64; d_ino, d_off (longs), d_reclen, the
 * name, its NUL and d_type as the last byte for getdents. With `ours`, the padding must be
 * cleared (the kernel's own records leave it unwritten).
 */
static void parse_records(const char *buf, size_t n, bool old, bool ours, struct listing *l)
{
        size_t lsz = sizeof(long), at = 0;

        while (at < n) {
                struct rec r = {0};
                const char *name;

                assert_true(n - at >= (old ? 2 * lsz + 2 : 19));
                if (old) {
                        unsigned long ino, off;

                        memcpy(&ino, buf + at, lsz);
                        memcpy(&off, buf + at + lsz, lsz);
                        r.ino = ino;
                        r.off = off;
                        memcpy(&r.reclen, buf + at + 2 * lsz, 2);
                        name = buf + at + 2 * lsz + 2;
                        r.type = (unsigned char)buf[at + r.reclen - 1];
                        assert_int_equal(r.reclen % lsz, 0);
                        assert_int_equal(r.reclen,
                                         (2 * lsz + 2 + strlen(name) + 2 + lsz - 1) & ~(lsz - 1));
                } else {
                        memcpy(&r.ino, buf + at, 8);
                        memcpy(&r.off, buf + at + 8, 8);
                        memcpy(&r.reclen, buf + at + 16, 2);
                        r.type = (unsigned char)buf[at + 18];
                        name = buf + at + 19;
                        assert_int_equal(r.reclen, (19 + strlen(name) + 1 + 7) & ~(size_t)7);
                }
                assert_true(r.reclen <= n - at);
                assert_true(strlen(name) <= NAME_MAX);
                strcpy(r.name, name);
                /* The padding is cleared: nothing of the supervisor's memory goes out. */
                for (size_t k = (size_t)(name - buf - at) + strlen(name);
                     ours && k < (size_t)r.reclen - (old ? 1 : 0); k++)
                        assert_int_equal(buf[at + k], 0);
                l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
                l->v[l->n++] = r;
                at += r.reclen;
        }
}

/* Records cowdir_fill wrote. */
static void parse(const char *buf, size_t n, bool old, struct listing *l)
{
        parse_records(buf, n, old, true, l);
}

/* The whole of d from `pos`, `size` bytes a call; each batch ends at its last d_off. */
static void fill_all(const struct cowdir *d, uint64_t pos, bool old, size_t size, struct listing *l)
{
        char *buf = malloc(size);
        uint64_t next;
        ssize_t n;

        for (;;) {
                memset(buf, 0xa5, size); /* what padding left unwritten would show */
                n = cowdir_fill(d, pos, old, buf, size, &next);
                if (n <= 0)
                        break;
                parse(buf, (size_t)n, old, l);
                assert_true(next == l->v[l->n - 1].off);
                assert_true(next > pos);
                pos = next;
        }
        assert_int_equal(n, 0);
        free(buf);
}

static const struct rec *find(const struct listing *l, const char *name)
{
        const struct rec *hit = NULL;

        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].name, name) == 0) {
                        assert_null(hit); /* never twice */
                        hit = &l->v[i];
                }
        return hit;
}

/* "." and ".." first, each other name once, in position order, d_off its name's hash. */
static void check_shape(const struct listing *l)
{
        assert_true(l->n >= 2);
        assert_string_equal(l->v[0].name, ".");
        assert_string_equal(l->v[1].name, "..");
        assert_true(l->v[0].off == 1 && l->v[1].off == 2);
        assert_true(l->v[0].type == DT_DIR && l->v[1].type == DT_DIR);
        for (size_t i = 2; i < l->n; i++) {
                assert_true(l->v[i].off == cowdir_hash(l->v[i].name));
                assert_true(l->v[i].off >= l->v[i - 1].off);
                (void)find(l, l->v[i].name);
        }
}

/* What a merged entry must be: its name, the layer it comes from, its type. */
struct want {
        const char *name;
        const char *layer; /* "u/dir" or "l/dir" */
        unsigned char type;
};

static void check_wants(const struct listing *l, const struct want *w, size_t n)
{
        char p[2 * PATH_MAX];

        assert_int_equal(l->n, n + 2);
        for (size_t i = 0; i < n; i++) {
                const struct rec *r = find(l, w[i].name);

                if (!r)
                        fail_msg("%s is not listed", w[i].name);
                snprintf(p, sizeof(p), "%s/%s", w[i].layer, w[i].name);
                assert_true(r->ino == ino_of(p));
                assert_int_equal(r->type, w[i].type);
        }
}

/* The layers of the merge tests: both, kinds of entries on each side. */
static bool make_layers(const char *name)
{
        bool wh;

        sh("cd '%s' && mkdir -p %s/u/dir/both_f %s/u/dir/sub_up %s/l/dir/low_dir && "
           "touch %s/u/dir/only_up %s/u/dir/both_same %s/l/dir/only_low %s/l/dir/both_f "
           "%s/l/dir/both_same %s/l/dir/wh && ln -s only_up %s/u/dir/link",
           T, name, name, name, name, name, name, name, name, name, name);
        {
                char rel[PATH_MAX];

                snprintf(rel, sizeof(rel), "%s/u/dir", name);
                wh = whiteout(rel, "wh");
                if (wh)
                        assert_true(whiteout(rel, "wh_alone"));
        }
        return wh;
}

/* Upper over lower: each name once, the upper's entry where both have one, whiteouts gone
 * and hiding the lower's; the offsets of the fds given stay where they were. */
static void merge_both(void **state)
{
        struct cowdir d;
        struct listing l = {0};
        char buf[64];
        bool wh;
        int up, low;
        off_t at;

        (void)state;
        wh = make_layers("m");
        up = dir_fd("m/u/dir", false);
        low = dir_fd("m/l/dir", true);
        /* The program has read a little of the upper fd already. */
        assert_true(syscall(SYS_getdents64, up, buf, 40) > 0);
        at = lseek(up, 0, SEEK_CUR);
        assert_int_equal(cowdir_read(up, low, &d), 0);
        assert_true(lseek(up, 0, SEEK_CUR) == at);
        fill_all(&d, 0, false, 4096, &l);
        check_shape(&l);
        assert_true(l.v[0].ino == ino_of("m/u/dir"));
        assert_true(l.v[1].ino == ino_of("m/u"));
        {
                const struct want w[] = {
                        {"only_up", "m/u/dir", DT_REG},   {"both_f", "m/u/dir", DT_DIR},
                        {"both_same", "m/u/dir", DT_REG}, {"link", "m/u/dir", DT_LNK},
                        {"sub_up", "m/u/dir", DT_DIR},    {"only_low", "m/l/dir", DT_REG},
                        {"low_dir", "m/l/dir", DT_DIR},   {"wh", "m/l/dir", DT_REG},
                };

                /* With whiteouts, "wh" is hidden and "wh_alone" hides nothing. */
                check_wants(&l, w, wh ? 7 : 8);
                assert_null(find(&l, "wh_alone"));
        }
        cowdir_free(&d);
        close(up);
        close(low);
        listing_free(&l);
}

/* One layer alone: the upper of an opaque directory (no lower), a directory the upper does
 * not have (no upper); neither is -EINVAL. */
static void merge_one(void **state)
{
        struct cowdir d;
        struct listing l = {0};
        int up, low;

        (void)state;
        (void)make_layers("o");
        up = dir_fd("o/u/dir", true);
        low = dir_fd("o/l/dir", false);
        assert_int_equal(cowdir_read(up, -1, &d), 0);
        fill_all(&d, 0, false, 4096, &l);
        check_shape(&l);
        {
                const struct want w[] = {
                        {"only_up", "o/u/dir", DT_REG},   {"both_f", "o/u/dir", DT_DIR},
                        {"both_same", "o/u/dir", DT_REG}, {"link", "o/u/dir", DT_LNK},
                        {"sub_up", "o/u/dir", DT_DIR},
                };

                check_wants(&l, w, 5);
        }
        assert_null(find(&l, "wh"));
        cowdir_free(&d);
        listing_free(&l);

        assert_int_equal(cowdir_read(-1, low, &d), 0);
        fill_all(&d, 0, false, 4096, &l);
        check_shape(&l);
        assert_true(l.v[0].ino == ino_of("o/l/dir"));
        assert_true(l.v[1].ino == ino_of("o/l"));
        {
                const struct want w[] = {
                        {"only_low", "o/l/dir", DT_REG},  {"low_dir", "o/l/dir", DT_DIR},
                        {"wh", "o/l/dir", DT_REG},        {"both_f", "o/l/dir", DT_REG},
                        {"both_same", "o/l/dir", DT_REG},
                };

                check_wants(&l, w, 5);
        }
        cowdir_free(&d);
        listing_free(&l);
        assert_int_equal(cowdir_read(-1, -1, &d), -EINVAL);
        close(up);
        close(low);
}

/* n empty files T/rel/PREFIXnnnn, from `from` on (made here: a shell loop forks per file). */
static void make_files(const char *rel, const char *prefix, int from, int n)
{
        int dir = dir_fd(rel, false);

        for (int i = from; i < from + n; i++) {
                char name[NAME_MAX + 1];
                int fd;

                snprintf(name, sizeof(name), "%s%04d", prefix, i);
                fd = openat(dir, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                close(fd);
        }
        close(dir);
}

/*
 * One record at a time (the smallest buffer that takes one): every entry once, in order;
 * and from the d_off of each, the rest. Smaller than the first record: -EINVAL, *next left
 * alone; at the end, 0.
 */
static void tiny_buffers(void **state)
{
        struct cowdir d;
        struct listing all = {0}, one = {0};
        char buf[512];
        int up, low;

        (void)state;
        sh("mkdir -p '%s/t/u' '%s/t/l' && cd '%s/t' && touch u/a u/long_name_of_an_upper_file "
           "l/b l/a l/%0255d",
           T, T, T, 7);
        make_files("t/l", "x", 0, 30);
        up = dir_fd("t/u", false);
        low = dir_fd("t/l", false);
        assert_int_equal(cowdir_read(up, low, &d), 0);
        for (int old = 0; old < 2; old++) {
                uint64_t pos = 0, next;

                fill_all(&d, 0, old, 4096, &all);
                check_shape(&all);
                assert_int_equal(all.n, 2 + 4 + 30); /* "a" is in both */
                for (size_t i = 0; i < all.n; i++) {
                        size_t size = 0;
                        ssize_t n;

                        next = 12345;
                        while ((n = cowdir_fill(&d, pos, old, buf, size, &next)) == -EINVAL) {
                                assert_true(next == 12345);
                                size++;
                        }
                        assert_true(n > 0 && (size_t)n == size);
                        parse(buf, (size_t)n, old, &one);
                        assert_int_equal(one.n, i + 1); /* exactly one record */
                        assert_string_equal(one.v[i].name, all.v[i].name);
                        assert_true(one.v[i].ino == all.v[i].ino && next == all.v[i].off);
                        pos = next;
                }
                next = 12345;
                assert_int_equal(cowdir_fill(&d, pos, old, buf, sizeof(buf), &next), 0);
                assert_true(next == 12345);
                /* From each d_off, exactly what follows it. */
                for (size_t i = 0; i < all.n; i++) {
                        struct listing rest = {0};

                        fill_all(&d, all.v[i].off, old, 4096, &rest);
                        assert_int_equal(rest.n, all.n - i - 1);
                        for (size_t k = 0; k < rest.n; k++)
                                assert_string_equal(rest.v[k].name, all.v[i + 1 + k].name);
                        listing_free(&rest);
                }
                listing_free(&all);
                listing_free(&one);
        }
        cowdir_free(&d);
        close(up);
        close(low);
}

/*
 * A listing cut into batches while the layers change, as `rm -rf` and a build change them:
 * after each batch one name already listed is removed, one not listed yet is removed and a
 * new one made; the merge is read again and the listing resumes from its position. No name
 * comes twice, every name that was there from the start and not removed before its turn
 * comes, a removed one never comes after its removal.
 */
static void resume_after_change(void **state)
{
        enum { N_LOW = 60, N_UP = 30 };
        struct listing seen = {0};
        char gone[N_LOW][16];
        size_t n_gone = 0, round = 0;
        uint64_t pos = 0;
        int victim = N_LOW - 1;

        (void)state;
        sh("mkdir -p '%s/r/u' '%s/r/l'", T, T);
        make_files("r/l", "f", 0, N_LOW);
        make_files("r/u", "f", N_LOW - N_UP / 2, N_UP); /* half of it over the lower's */
        for (;;) {
                struct cowdir d;
                char buf[160], p[16];
                uint64_t next;
                ssize_t n;
                size_t before = seen.n;
                int up = dir_fd("r/u", false), low = dir_fd("r/l", false);

                assert_int_equal(cowdir_read(up, low, &d), 0);
                n = cowdir_fill(&d, pos, round % 2, buf, sizeof(buf), &next);
                assert_true(n >= 0);
                cowdir_free(&d);
                close(up);
                close(low);
                if (n == 0)
                        break;
                parse(buf, (size_t)n, round % 2, &seen);
                for (size_t i = before; i < seen.n; i++) {
                        (void)find(&seen, seen.v[i].name); /* asserts it came once */
                        for (size_t g = 0; g < n_gone; g++)
                                assert_string_not_equal(seen.v[i].name, gone[g]);
                }
                pos = next;
                /* The first of the batch goes (from both layers), as rm would unlink it. */
                if (seen.v[before].name[0] != '.')
                        sh("cd '%s/r' && rm -f u/%s l/%s", T, seen.v[before].name,
                           seen.v[before].name);
                /* A name not listed yet goes too: it must not come later. */
                for (; victim >= 0; victim--) {
                        snprintf(p, sizeof(p), "f%04d", victim);
                        if (!find(&seen, p))
                                break;
                }
                if (victim >= 0) {
                        sh("cd '%s/r' && rm -f u/%s l/%s", T, p, p);
                        snprintf(gone[n_gone++], sizeof(gone[0]), "%s", p);
                        victim--;
                }
                sh("touch '%s/r/u/new%zu'", T, round++);
        }
        /* Every original name: listed once, or removed before its turn. */
        for (int i = 0; i < N_LOW + N_UP / 2; i++) {
                char name[16];
                bool removed = false;

                snprintf(name, sizeof(name), "f%04d", i);
                for (size_t g = 0; g < n_gone; g++)
                        removed |= strcmp(gone[g], name) == 0;
                if (removed)
                        assert_null(find(&seen, name));
                else if (!find(&seen, name))
                        fail_msg("%s was never listed", name);
        }
        assert_true(n_gone > 5 && round > 10);
        assert_non_null(find(&seen, "."));
        assert_non_null(find(&seen, ".."));
        listing_free(&seen);
}

/* Entries of one hash, made by hand: handed out together or not at all. */
static void collisions(void **state)
{
        char names[][3] = {".", "..", "a", "b", "c", "d", "e"};
        struct cowdir_entry v[] = {
                {100, 1, DT_DIR, names[0]},  {101, 2, DT_DIR, names[1]},
                {102, 10, DT_REG, names[2]}, {103, 20, DT_REG, names[3]},
                {104, 20, DT_DIR, names[4]}, {105, 20, DT_REG, names[5]},
                {106, 30, DT_LNK, names[6]},
        };
        struct cowdir d = {.v = v, .n = 7};
        struct listing l = {0};
        char buf[256];
        uint64_t next = 0;

        (void)state;
        /* Each record of a one-letter name is 24 bytes in either format (on 64 bits). */
        assert_int_equal(cowdir_fill(&d, 0, false, buf, 48, &next), 48);
        assert_true(next == 2);
        assert_int_equal(cowdir_fill(&d, 2, false, buf, 48, &next), 24); /* "a", not "b" */
        parse(buf, 24, false, &l);
        assert_string_equal(l.v[0].name, "a");
        assert_true(next == 10);
        assert_int_equal(cowdir_fill(&d, 10, false, buf, 48, &next), -EINVAL); /* 3 x 24 */
        assert_true(next == 10);
        assert_int_equal(cowdir_fill(&d, 10, false, buf, 72, &next), 72);
        parse(buf, 72, false, &l);
        assert_true(next == 20);
        for (int i = 1; i < 4; i++) {
                assert_string_equal(l.v[i].name, names[2 + i]);
                assert_true(l.v[i].off == 20 && l.v[i].ino == 102 + (uint64_t)i);
        }
        assert_int_equal(l.v[2].type, DT_DIR);
        assert_int_equal(cowdir_fill(&d, 20, true, buf, sizeof(buf), &next), 24);
        parse(buf, 24, true, &l);
        assert_string_equal(l.v[4].name, "e");
        assert_int_equal(l.v[4].type, DT_LNK);
        assert_true(next == 30);
        assert_int_equal(cowdir_fill(&d, 30, false, buf, sizeof(buf), &next), 0);
        /* A buffer at an odd address is no trouble (the sanitizer build would tell). */
        assert_int_equal(cowdir_fill(&d, 0, true, buf + 1, 48, &next), 48);
        assert_true(next == 2);
        /* From a position between two hashes, or past the last: what follows, or nothing. */
        assert_int_equal(cowdir_fill(&d, 15, false, buf, sizeof(buf), &next), 96);
        assert_int_equal(cowdir_fill(&d, UINT64_MAX, false, buf, sizeof(buf), &next), 0);
        listing_free(&l);
}

/* The kernel's own listing of the lower, beside ours of it alone: the same records but for
 * d_off and the order (inode, type, and d_reclen to the byte), in both formats. */
static void as_the_kernel(void **state)
{
        struct cowdir d;
        int low;

        (void)state;
        sh("mkdir -p '%s/k/sub' && cd '%s/k' && touch a bb ccccccc dddddddd eeeee %0100d "
           "%0255d && ln -s a sym && mkfifo fifo",
           T, T, 1, 2);
        low = dir_fd("k", false);
        assert_int_equal(cowdir_read(-1, low, &d), 0);
        for (int old = 0; old < 2; old++) {
                struct listing ours = {0}, theirs = {0};
                char buf[8192];
                long n, nr = SYS_getdents64;
                int fd = dir_fd("k", false);

                if (old) {
#ifdef SYS_getdents
                        nr = SYS_getdents;
#else
                        printf("[  SKIP    ] getdents: no such call on this architecture\n");
                        close(fd);
                        break;
#endif
                }
                while ((n = syscall(nr, fd, buf, sizeof(buf))) > 0)
                        parse_records(buf, (size_t)n, old, false, &theirs);
                assert_int_equal(n, 0);
                close(fd);
                fill_all(&d, 0, old, sizeof(buf), &ours);
                assert_int_equal(ours.n, theirs.n);
                for (size_t i = 0; i < theirs.n; i++) {
                        const struct rec *r = find(&ours, theirs.v[i].name);

                        assert_non_null(r);
                        assert_true(r->ino == theirs.v[i].ino);
                        assert_int_equal(r->type, theirs.v[i].type);
                        assert_int_equal(r->reclen, theirs.v[i].reclen);
                }
                listing_free(&ours);
                listing_free(&theirs);
        }
        cowdir_free(&d);
        close(low);
}

/* A large directory (over 500 names on each side) through a 4096-byte buffer: every name
 * once. */
static void large(void **state)
{
        struct cowdir d;
        bool wh;
        int up, low;

        (void)state;
        sh("mkdir -p '%s/g/u' '%s/g/l'", T, T);
        make_files("g/l", "name_of_a_lower_file_", 0, 700);
        make_files("g/u", "name_of_a_lower_file_", 400, 200); /* over the lower's */
        make_files("g/u", "upper_", 0, 600);
        wh = whiteout("g/u", "name_of_a_lower_file_0007");
        up = dir_fd("g/u", false);
        low = dir_fd("g/l", false);
        assert_int_equal(cowdir_read(up, low, &d), 0);
        for (int old = 0; old < 2; old++) {
                struct listing l = {0};

                fill_all(&d, 0, old, 4096, &l);
                check_shape(&l);
                assert_int_equal(l.n, 2 + 700 + 600 - (wh ? 1 : 0));
                for (int i = 0; i < 700; i += 7) {
                        char name[64], rel[PATH_MAX];
                        const struct rec *r;

                        snprintf(name, sizeof(name), "name_of_a_lower_file_%04d", i);
                        r = find(&l, name);
                        if (i == 7 && wh) {
                                assert_null(r);
                                continue;
                        }
                        assert_non_null(r);
                        snprintf(rel, sizeof(rel), "g/%s/%s", i >= 400 && i < 600 ? "u" : "l",
                                 name);
                        assert_true(r->ino == ino_of(rel));
                }
                listing_free(&l);
        }
        cowdir_free(&d);
        close(up);
        close(low);
}

/* The hash: FNV-1a's published value folded to 31 bits, never a reserved position. */
static void hash(void **state)
{
        (void)state;
        /* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the FNV test suite). */
        assert_int_equal(cowdir_hash("a"), 0x58c65417);
        /* A name found by search whose fold is 0: moved to 3. */
        assert_int_equal(cowdir_hash("n2f84864c"), 3);
        for (int i = 0; i < 100000; i++) {
                char name[16];
                uint32_t h;

                snprintf(name, sizeof(name), "%d", i);
                h = cowdir_hash(name);
                assert_true(h > COWDIR_POS_DOTDOT && h <= 0x7fffffffu);
        }
}

static int setup(void **state)
{
        const char *t = getenv("TMPDIR");

        (void)state;
        snprintf(T, sizeof(T), "%s/cowdir-XXXXXX", t && *t ? t : "/tmp");
        return mkdtemp(T) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        sh("rm -rf '%s'", T);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(merge_both),   cmocka_unit_test(merge_one),
                cmocka_unit_test(tiny_buffers), cmocka_unit_test(resume_after_change),
                cmocka_unit_test(collisions),   cmocka_unit_test(as_the_kernel),
                cmocka_unit_test(large),        cmocka_unit_test(hash),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

/* The identity a hard link keeps in a copy-on-write mount (supervisor/vfs/linkid.h): what is
 * remembered, what is found, and what is not taken for a link. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/vfs/linkid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct linkid_obj obj(dev_t dev, ino_t ino, int64_t born)
{
        return (struct linkid_obj){.dev = dev, .ino = ino, .btime_sec = born, .btime_nsec = 7};
}

static void empty_finds_nothing(void **state)
{
        struct linkid l;
        struct linkid_obj o = obj(1, 2, 3);
        dev_t dev = 1;
        ino_t ino = 2;

        (void)state;
        linkid_init(&l);
        assert_false(linkid_shown(&l, &o, &dev, &ino));
        assert_int_equal(dev, 1);
        assert_int_equal(ino, 2);
        linkid_fini(&l);
}

static void noted_link_shows_its_source(void **state)
{
        struct linkid l;
        struct linkid_obj made = obj(40, 900, 1000), other = obj(40, 901, 1000);
        dev_t dev = 0;
        ino_t ino = 0;

        (void)state;
        linkid_init(&l);
        assert_true(linkid_note(&l, &made, 40, 17));
        assert_true(linkid_shown(&l, &made, &dev, &ino));
        assert_int_equal(dev, 40);
        assert_int_equal(ino, 17);
        /* another object of the same device is not the link */
        dev = 40, ino = 901;
        assert_false(linkid_shown(&l, &other, &dev, &ino));
        assert_int_equal(ino, 901);
        /* noted again (a second link to it): the last identity counts, one entry */
        assert_true(linkid_note(&l, &made, 41, 18));
        assert_true(linkid_shown(&l, &made, &dev, &ino));
        assert_int_equal(dev, 41);
        assert_int_equal(ino, 18);
        assert_int_equal(atomic_load(&l.n), 1);
        linkid_fini(&l);
}

static void same_identity_not_noted(void **state)
{
        struct linkid l;
        struct linkid_obj made = obj(40, 900, 1000);

        (void)state;
        linkid_init(&l);
        assert_false(linkid_note(&l, &made, 40, 900)); /* natively: the same inode */
        assert_int_equal(atomic_load(&l.n), 0);
        linkid_fini(&l);
}

/* An inode number freed and given to a new file: another birth time, not the link. */
static void reused_inode_not_taken(void **state)
{
        struct linkid l;
        struct linkid_obj made = obj(40, 900, 1000), reborn = obj(40, 900, 2000);
        dev_t dev = 40;
        ino_t ino = 900;

        (void)state;
        linkid_init(&l);
        assert_true(linkid_note(&l, &made, 40, 17));
        assert_false(linkid_shown(&l, &reborn, &dev, &ino));
        assert_int_equal(ino, 900);
        reborn = made, reborn.btime_nsec = 8;
        assert_false(linkid_shown(&l, &reborn, &dev, &ino));
        reborn = made, reborn.dev = 41;
        assert_false(linkid_shown(&l, &reborn, &dev, &ino));
        linkid_fini(&l);
}

/* The table grows past its first size and keeps every entry; it stops at LINKID_MAX. */
static void grows_and_stops(void **state)
{
        struct linkid l;
        dev_t dev;
        ino_t ino;

        (void)state;
        linkid_init(&l);
        for (ino_t i = 1; i <= LINKID_MAX; i++) {
                struct linkid_obj o = obj(5, i, (int64_t)i);

                assert_true(linkid_note(&l, &o, 6, i + 1000000000));
        }
        for (ino_t i = 1; i <= LINKID_MAX; i += 997) {
                struct linkid_obj o = obj(5, i, (int64_t)i);

                assert_true(linkid_shown(&l, &o, &dev, &ino));
                assert_int_equal(dev, 6);
                assert_int_equal(ino, i + 1000000000);
        }
        struct linkid_obj late = obj(5, LINKID_MAX + 1, 1);

        assert_false(linkid_note(&l, &late, 6, 1));
        dev = 5, ino = LINKID_MAX + 1;
        assert_false(linkid_shown(&l, &late, &dev, &ino));
        assert_int_equal(atomic_load(&l.n), LINKID_MAX);
        linkid_fini(&l);
}

/* linkid_stat reads a real file: its device, inode and, where the file system keeps one, its
 * birth time (-ENODATA otherwise, and nothing is then remembered by the callers). */
static void stat_of_a_file(void **state)
{
        char dir[] = "/var/tmp/test_linkid.XXXXXX", path[64];
        struct linkid_obj o, again;
        struct stat st;
        int fd, r;

        (void)state;
        if (!mkdtemp(dir)) {
                snprintf(dir, sizeof(dir), "/tmp/test_linkid.XXXXXX");
                assert_non_null(mkdtemp(dir));
        }
        snprintf(path, sizeof(path), "%s/f", dir);
        fd = open(path, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        r = linkid_stat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &o);
        assert_true(r == 0 || r == -ENODATA);
        assert_int_equal(o.dev, st.st_dev);
        assert_int_equal(o.ino, st.st_ino);
        assert_int_equal(linkid_stat(fd, "", AT_EMPTY_PATH, &again), r);
        assert_int_equal(again.dev, o.dev);
        assert_int_equal(again.ino, o.ino);
        assert_int_equal(again.btime_sec, o.btime_sec);
        assert_int_equal(again.btime_nsec, o.btime_nsec);
        assert_int_equal(linkid_stat(AT_FDCWD, "/nonexistent/x", 0, &o), -ENOENT);
        close(fd);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(empty_finds_nothing),
                cmocka_unit_test(noted_link_shows_its_source),
                cmocka_unit_test(same_identity_not_noted),
                cmocka_unit_test(reused_inode_not_taken),
                cmocka_unit_test(grows_and_stops),
                cmocka_unit_test(stat_of_a_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

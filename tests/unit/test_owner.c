/*
 * owner_private (supervisor/session_owner.h): a directory that its group may write is the
 * caller's alone only when the group is the caller's private one. The user and group
 * databases are the test's own (the calls are wrapped at link time: tests/CMakeLists.txt),
 * so that each case sets up the users it needs; the directory is a real one, its mode set
 * per case, its owner and group taken as the caller's ids.
 *
 *   private_group_ok        0775 in a group named as the caller, no member listed, no other
 *                           user's primary group: taken
 *   listed_member_refused   the group lists another user: refused, "writable by its group"
 *   other_primary_refused   another user's primary group is that group, though unlisted
 *                           (the hole the listing alone missed): refused
 *   group_named_otherwise   a group not named as the caller: refused
 *   not_primary_refused     the caller's supplementary group, not its primary: refused
 *   world_refused           0777: refused, "writable by everyone"
 *   acl_user_refused        0775 in the private group, but an ACL names another user with
 *                           write (the group bits are then the ACL's mask): refused
 *   acl_read_only_ok        the same ACL without write for that user (mask r-x): taken
 *   plain_ok                0755: taken, whatever the group
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/session_owner.h"

#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static uid_t me_uid;
static gid_t me_gid;
static char dir[] = "/var/tmp/test_owner.XXXXXX";
static int dir_fd = -1;

/* The fake databases: the caller, a second user, and the caller's group. */
static struct passwd users[2];
static size_t n_users, next_user;
static struct group grp;
static char *members[3];

uid_t __real_geteuid(void);
uid_t __wrap_geteuid(void);
gid_t __wrap_getegid(void);
struct passwd *__wrap_getpwuid(uid_t uid);
struct group *__wrap_getgrgid(gid_t gid);
void __wrap_setpwent(void);
struct passwd *__wrap_getpwent(void);
void __wrap_endpwent(void);

uid_t __wrap_geteuid(void)
{
        return me_uid;
}

gid_t __wrap_getegid(void)
{
        return me_gid;
}

struct passwd *__wrap_getpwuid(uid_t uid)
{
        for (size_t i = 0; i < n_users; i++)
                if (users[i].pw_uid == uid)
                        return &users[i];
        return NULL;
}

struct group *__wrap_getgrgid(gid_t gid)
{
        return grp.gr_gid == gid ? &grp : NULL;
}

void __wrap_setpwent(void)
{
        next_user = 0;
}

struct passwd *__wrap_getpwent(void)
{
        return next_user < n_users ? &users[next_user++] : NULL;
}

void __wrap_endpwent(void)
{
}

/* The caller "me" (primary group "me", no member), alone in the databases. */
static int reset(void **state)
{
        struct stat st;

        (void)state;
        (void)removexattr(dir, "system.posix_acl_access");
        assert_int_equal(fstat(dir_fd, &st), 0);
        me_uid = st.st_uid;
        me_gid = st.st_gid;
        users[0] = (struct passwd){.pw_name = "me", .pw_uid = me_uid, .pw_gid = me_gid};
        users[1] = (struct passwd){.pw_name = "other", .pw_uid = me_uid + 1, .pw_gid = me_gid + 1};
        n_users = 1;
        members[0] = NULL;
        grp = (struct group){.gr_name = "me", .gr_gid = me_gid, .gr_mem = members};
        return 0;
}

static int setup(void **state)
{
        (void)state;
        if (!mkdtemp(dir))
                return -1;
        /* Run as root, the caller would be uid 0, whom no private group is ever granted
         * to: give the directory to an ordinary uid and be that one (the ids are wrapped). */
        if (__real_geteuid() == 0 && chown(dir, 4242, 4242) < 0)
                return -1;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        (void)state;
        if (dir_fd >= 0)
                close(dir_fd);
        rmdir(dir);
        return 0;
}

/* owner_private of the directory with `mode`: 0, or -1 with the message in `msg`. */
static int judge(mode_t mode, char *msg, size_t len)
{
        struct error err = {0};
        int r;

        assert_int_equal(fchmod(dir_fd, mode), 0);
        r = owner_private(dir_fd, "DIR", "run", &err);
        snprintf(msg, len, "%s", r < 0 ? err.msg : "");
        return r;
}

static void private_group_ok(void **state)
{
        char msg[1024];

        (void)state;
        if (judge(0775, msg, sizeof(msg)) != 0)
                fail_msg("a private group's directory refused: %s", msg);
}

static void listed_member_refused(void **state)
{
        char msg[1024];

        (void)state;
        n_users = 2;
        members[0] = "other";
        members[1] = NULL;
        assert_int_equal(judge(0775, msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "writable by its group"));
}

static void other_primary_refused(void **state)
{
        char msg[1024];

        (void)state;
        n_users = 2;
        users[1].pw_gid = me_gid;
        if (judge(0775, msg, sizeof(msg)) != -1)
                fail_msg("a group that is another user's primary one taken as private");
        assert_non_null(strstr(msg, "writable by its group"));
}

static void group_named_otherwise(void **state)
{
        char msg[1024];

        (void)state;
        grp.gr_name = "staff";
        assert_int_equal(judge(0775, msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "writable by its group"));
}

static void not_primary_refused(void **state)
{
        char msg[1024];

        (void)state;
        users[0].pw_gid = me_gid + 7;
        assert_int_equal(judge(0775, msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "writable by its group"));
}

static void world_refused(void **state)
{
        char msg[1024];

        (void)state;
        assert_int_equal(judge(0777, msg, sizeof(msg)), -1);
        assert_non_null(strstr(msg, "writable by everyone"));
}

/* An access ACL on the directory naming uid 4243 with `perm` (and the mask so), set after
 * the mode (a chmod would set the mask). 0, or -1 where the file system keeps no ACL. */
static int set_acl(unsigned perm)
{
        struct {
                uint16_t tag, perm;
                uint32_t id;
        } e[] = {{0x01, 7, (uint32_t)-1},
                 {0x02, (uint16_t)perm, 4243},
                 {0x04, 5, (uint32_t)-1},
                 {0x10, (uint16_t)perm, (uint32_t)-1},
                 {0x20, 5, (uint32_t)-1}};
        char buf[4 + sizeof(e)];
        uint32_t version = 2;

        memcpy(buf, &version, 4);
        memcpy(buf + 4, e, sizeof(e));
        return setxattr(dir, "system.posix_acl_access", buf, sizeof(buf), 0);
}

static void acl_user_refused(void **state)
{
        struct error err = {0};

        (void)state;
        assert_int_equal(fchmod(dir_fd, 0755), 0);
        if (set_acl(7) < 0) {
                fprintf(stderr, "no ACL on /var/tmp's file system: %s\n", strerror(errno));
                skip();
        }
        if (owner_private(dir_fd, "DIR", "run", &err) != -1)
                fail_msg("a directory an ACL lets another user write taken as private");
        assert_non_null(strstr(err.msg, "ACL"));
}

static void acl_read_only_ok(void **state)
{
        struct error err = {0};

        (void)state;
        assert_int_equal(fchmod(dir_fd, 0755), 0);
        if (set_acl(5) < 0) {
                fprintf(stderr, "no ACL on /var/tmp's file system: %s\n", strerror(errno));
                skip();
        }
        if (owner_private(dir_fd, "DIR", "run", &err) != 0)
                fail_msg("a directory an ACL lets another user only read refused: %s", err.msg);
}

static void plain_ok(void **state)
{
        char msg[1024];

        (void)state;
        n_users = 2;
        users[1].pw_gid = me_gid;
        members[0] = "other";
        members[1] = NULL;
        if (judge(0755, msg, sizeof(msg)) != 0)
                fail_msg("a 0755 directory of the caller's refused: %s", msg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(private_group_ok, reset),
                cmocka_unit_test_setup(listed_member_refused, reset),
                cmocka_unit_test_setup(other_primary_refused, reset),
                cmocka_unit_test_setup(group_named_otherwise, reset),
                cmocka_unit_test_setup(not_primary_refused, reset),
                cmocka_unit_test_setup(world_refused, reset),
                cmocka_unit_test_setup(acl_user_refused, reset),
                cmocka_unit_test_setup(acl_read_only_ok, reset),
                cmocka_unit_test_setup(plain_ok, reset),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * Hole 4: host files written through their mode bits. Every attack is performed for real by
 * tests/helpers/attack_fs.c under `stockade run`, and judged from OUTSIDE: the victim file's
 * content, mode, owner, times (ctime included: any metadata change moves it) and xattrs are
 * read by this process before and after.
 *
 * The victim lives in a directory under /run/lock (world-writable, sticky): not the current
 * directory, /tmp nor /var/tmp (the suite's unprivileged run builds under /tmp), nor /dev/shm
 * (the sandbox has a private one), and owned by the sandbox's uid
 * so that DAC alone would let the attack through. The workspace (the run's current
 * directory) is a fresh directory in the test's own directory, owned by the same uid.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { TIMEOUT_S = 60, PROBE_SETUP_FAILED = 123 };

static uid_t sbx_uid; /* who the command runs as by default */
static gid_t sbx_gid;
static char work[PATH_MAX + 32]; /* the run's current directory */
static char out_dir[64];         /* outside every writable place */
static char victim[128], inside[PATH_MAX + 64];
static char cwd_saved[PATH_MAX];

/* ---- the files and what can be seen of them from outside ------------------------------ */

struct look {
        struct stat st;
        char content[64];
        ssize_t xattr; /* size of user.stockade, or -errno */
        ssize_t keep;  /* size of user.keep */
};

static struct look look_at(const char *path)
{
        struct look l = {0};
        int fd;

        assert_int_equal(lstat(path, &l.st), 0);
        fd = open(path, O_RDONLY | O_NOATIME);
        if (fd < 0)
                fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_true(read(fd, l.content, sizeof(l.content) - 1) >= 0);
        close(fd);
        l.xattr = getxattr(path, "user.stockade", NULL, 0);
        if (l.xattr < 0)
                l.xattr = -errno;
        l.keep = getxattr(path, "user.keep", NULL, 0);
        if (l.keep < 0)
                l.keep = -errno;
        return l;
}

static void assert_unchanged(const char *what, const struct look *a, const struct look *b)
{
        if (a->st.st_mode != b->st.st_mode || a->st.st_uid != b->st.st_uid ||
            a->st.st_gid != b->st.st_gid || a->st.st_size != b->st.st_size ||
            a->st.st_mtim.tv_sec != b->st.st_mtim.tv_sec ||
            a->st.st_mtim.tv_nsec != b->st.st_mtim.tv_nsec ||
            a->st.st_ctim.tv_sec != b->st.st_ctim.tv_sec ||
            a->st.st_ctim.tv_nsec != b->st.st_ctim.tv_nsec || strcmp(a->content, b->content) ||
            a->xattr != b->xattr || a->keep != b->keep)
                fail_msg("%s: the file outside changed (mode %o -> %o, uid %u -> %u, size %lld -> "
                         "%lld, ctime %lld -> %lld, xattr %zd -> %zd)",
                         what, a->st.st_mode, b->st.st_mode, a->st.st_uid, b->st.st_uid,
                         (long long)a->st.st_size, (long long)b->st.st_size,
                         (long long)a->st.st_ctim.tv_sec, (long long)b->st.st_ctim.tv_sec, a->xattr,
                         b->xattr);
}

static void make_file(const char *path, uid_t uid, gid_t gid)
{
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "orig\n", 5), 5);
        close(fd);
        assert_int_equal(chown(path, uid, gid), 0);
        assert_int_equal(chmod(path, 0644), 0);
        /* tmpfs has user xattrs since 6.6; without them the xattr attacks prove less. */
        if (setxattr(path, "user.keep", "k", 1, 0) < 0)
                print_message("  (no user xattrs on %s: %s)\n", path, strerror(errno));
}

static int setup(void **state)
{
        struct stat st;

        sbx_uid = geteuid() == 0 ? 65534 : getuid();
        sbx_gid = geteuid() == 0 ? 65534 : getgid();
        if (stat("/run/lock", &st) < 0 || !S_ISDIR(st.st_mode) || access("/run/lock", W_OK) < 0) {
                print_message("skipped: no writable /run/lock for a directory outside the "
                              "writable places\n");
                exit(77);
        }
        assert_non_null(getcwd(cwd_saved, sizeof(cwd_saved)));
        snprintf(work, sizeof(work), "%s/fsw-work-XXXXXX", cwd_saved);
        assert_non_null(mkdtemp(work));
        strcpy(out_dir, "/run/lock/stockade-fsw-XXXXXX");
        assert_non_null(mkdtemp(out_dir));
        assert_int_equal(chown(work, sbx_uid, sbx_gid), 0);
        assert_int_equal(chmod(work, 0755), 0); /* --user root must search it */
        assert_int_equal(chown(out_dir, sbx_uid, sbx_gid), 0);
        assert_int_equal(chmod(out_dir, 0755), 0);
        snprintf(victim, sizeof(victim), "%s/victim", out_dir);
        snprintf(inside, sizeof(inside), "%s/file", work);
        return 0;
}

static int teardown(void **state)
{
        char cmd[PATH_MAX + 128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", work, out_dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Fresh victim and workspace file before each test. */
static int fresh(void **state)
{
        char path[PATH_MAX + 32];

        make_file(victim, sbx_uid, sbx_gid);
        make_file(inside, sbx_uid, sbx_gid);
        snprintf(path, sizeof(path), "%s/new", out_dir);
        unlink(path);
        return 0;
}

/* ---- running the attack ----------------------------------------------------------------- */

/* stockade run OPTS... -- attack_fs ARGS..., from the workspace. Returns the exit code. */
static int attack(const char *const *opts, const char *const *args, struct run_result *r)
{
        const char *v[24];
        size_t n = 0;

        for (; opts && *opts; opts++)
                v[n++] = *opts;
        v[n++] = "--";
        v[n++] = ATTACK_FS;
        for (; *args; args++)
                v[n++] = *args;
        v[n] = NULL;
        assert_int_equal(chdir(work), 0);
        assert_int_equal(runner_stockade_run(v, TIMEOUT_S, r), 0);
        assert_int_equal(chdir(cwd_saved), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired. stderr: %s", r->err);
        if (r->exit_code == PROBE_SETUP_FAILED)
                fail_msg("the attack could not be prepared: %s %s", r->out, r->err);
        return r->exit_code;
}

static void expect(const char *const *opts, const char *const *args, int code)
{
        struct run_result r;
        int got = attack(opts, args, &r);

        if (got != code)
                fail_msg("%s %s: exit %d, want %d (%s). stdout: %s stderr: %s", args[0], args[1],
                         got, code, code ? strerror(code) : "success", r.out, r.err);
        runner_free(&r);
}

/* ---- writes ------------------------------------------------------------------------------ */

static void write_outside_refused(void **state)
{
        char created[PATH_MAX + 32];
        struct look before = look_at(victim), after;

        expect(NULL, (const char *[]){"write", victim, NULL}, EACCES);
        expect(NULL, (const char *[]){"unlink", victim, NULL}, EACCES);
        snprintf(created, sizeof(created), "%s/new", out_dir);
        expect(NULL, (const char *[]){"create", created, NULL}, EACCES);
        after = look_at(victim);
        assert_unchanged("write", &before, &after);
        assert_int_equal(access(created, F_OK), -1);
}

static void writes_inside_work(void **state)
{
        char tmp[] = "/var/tmp/stockade-fsw-XXXXXX", path[PATH_MAX + 64];
        struct look l;

        expect(NULL, (const char *[]){"write", "file", NULL}, 0);
        l = look_at(inside);
        assert_string_equal(l.content, "orig\nx");
        expect(NULL, (const char *[]){"create", "made-here", NULL}, 0);
        snprintf(path, sizeof(path), "%s/made-here", work);
        assert_int_equal(access(path, F_OK), 0);
        assert_non_null(mkdtemp(tmp));
        assert_int_equal(chown(tmp, sbx_uid, sbx_gid), 0);
        snprintf(path, sizeof(path), "%s/new", tmp);
        expect(NULL, (const char *[]){"create", path, NULL}, 0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(tmp), 0);
        expect(NULL, (const char *[]){"write", "/dev/null", NULL}, 0);
}

/* As root with --user root: uid 0 owns /proc/sys/kernel/core_pattern. The attack writes the
 * file's own value back, so that nothing happens even where it would succeed. */
static void core_pattern_unchanged(void **state)
{
        const char *p = "/proc/sys/kernel/core_pattern";
        char before[256] = "", after[256] = "";
        FILE *f;

        if (geteuid() != 0) {
                print_message("  skipped: only uid 0 may write core_pattern by its mode\n");
                skip();
        }
        f = fopen(p, "r");
        assert_non_null(f);
        assert_non_null(fgets(before, sizeof(before), f));
        fclose(f);
        expect((const char *[]){"--user", "root", NULL}, (const char *[]){"rewrite", p, NULL},
               EACCES);
        f = fopen(p, "r");
        assert_non_null(f);
        assert_non_null(fgets(after, sizeof(after), f));
        fclose(f);
        assert_string_equal(before, after);
}

/* ---- metadata ---------------------------------------------------------------------------- */

static const char *const meta_ops[] = {"chmod",    "fchmod",    "fchmodat",   "procfd_chmod",
                                       "chown",    "fchown",    "utimensat",  "utimes",
                                       "setxattr", "fsetxattr", "removexattr"};

static void metadata_outside_refused(void **state)
{
        char link[PATH_MAX + 64];

        for (size_t i = 0; i < ARRAY_SIZE(meta_ops); i++) {
                struct look before = look_at(victim), after;

                print_message("  %s %s\n", meta_ops[i], victim);
                expect(NULL, (const char *[]){meta_ops[i], victim, "4755", NULL}, EPERM);
                after = look_at(victim);
                assert_unchanged(meta_ops[i], &before, &after);
        }
        /* A symlink in the workspace does not bring the victim inside. */
        snprintf(link, sizeof(link), "%s/link", work);
        unlink(link);
        assert_int_equal(symlink(victim, link), 0);
        {
                struct look before = look_at(victim), after;
                expect(NULL, (const char *[]){"chmod", "link", "4755", NULL}, EPERM);
                after = look_at(victim);
                assert_unchanged("chmod through a symlink", &before, &after);
        }
        unlink(link);
}

static void metadata_inside_works(void **state)
{
        struct look l;

        expect(NULL, (const char *[]){"chmod", "file", "640", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0640);
        expect(NULL, (const char *[]){"fchmod", "file", "604", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0604);
        expect(NULL, (const char *[]){"fchmodat", inside, "600", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0600);
        expect(NULL, (const char *[]){"procfd_chmod", "file", "644", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0644);
        expect(NULL, (const char *[]){"chown", "file", NULL}, 0);
        expect(NULL, (const char *[]){"fchown", "file", NULL}, 0);
        expect(NULL, (const char *[]){"utimensat", "file", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mtim.tv_sec, 1234567);
        l = look_at(inside);
        if (l.keep < 0) {
                print_message("  no user xattrs here: the xattr calls are not checked\n");
                return;
        }
        expect(NULL, (const char *[]){"setxattr", "file", NULL}, 0);
        assert_int_equal(look_at(inside).xattr, 1);
        expect(NULL, (const char *[]){"removexattr", "file", NULL}, 0);
        assert_int_equal(look_at(inside).keep, -ENODATA);
}

/* The rewrite race (DESIGN.md: memory the supervisor reads can change at any time). */
static void chmod_rewrite_race(void **state)
{
        struct look before = look_at(victim), after;
        struct run_result r;

        attack(NULL, (const char *[]){"race", inside, victim, "604", NULL}, &r);
        print_message("  %s", r.out);
        runner_free(&r);
        after = look_at(victim);
        assert_unchanged("race", &before, &after);
        /* The loop did run: the file inside got the mode. */
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0604);
}

/* The same, with the buffer rewritten by another process of the tree: through a shared
 * mapping, and through /proc/PID/mem (which Landlock's write rules refuse, so that variant
 * runs without Landlock: the supervisor's copy must hold on its own). */
static void race_by_other_process(const char *how, const char *const *opts)
{
        char op[32];
        struct look before = look_at(victim), after;
        struct run_result r;

        snprintf(op, sizeof(op), "race_%s", how);
        attack(opts, (const char *[]){op, inside, victim, "604", NULL}, &r);
        print_message("  %s", r.out);
        if (r.exit_code != 0)
                fail_msg("%s: exit %d. stdout: %s stderr: %s", op, r.exit_code, r.out, r.err);
        runner_free(&r);
        after = look_at(victim);
        assert_unchanged(op, &before, &after);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0604);
}

static void chmod_shared_mapping_race(void **state)
{
        race_by_other_process("shared", NULL);
}

static void chmod_procmem_race(void **state)
{
        setenv("STOCKADE_TEST_DISABLE", "landlock", 1);
        race_by_other_process("procmem", (const char *[]){"--allow-degraded", NULL});
        unsetenv("STOCKADE_TEST_DISABLE");
}

/*
 * Set-user-ID and set-group-ID files: a file the sandbox makes setuid in the workspace or
 * /tmp runs as its owner for every host user who executes it (as root with --user root: as
 * root). No such file can be made: not by creating it with the bits (open, creat, mknod: the
 * mode is a register, refused in the kernel), not by chmod in any form. A set-group-ID
 * directory (group inheritance) stays allowed.
 */
static void setid_bits_refused(void **state)
{
        static const char *const creators[] = {"create_mode", "open_mode", "creat_mode",
                                               "mknod_mode"};
        static const char *const modes[] = {"4755", "2755", "6700"};
        static const char *const chmods[] = {"chmod", "fchmod", "fchmodat", "procfd_chmod"};
        char path[PATH_MAX + 64], dir[PATH_MAX + 64];

        snprintf(path, sizeof(path), "%s/setid", work);
        for (size_t i = 0; i < ARRAY_SIZE(creators); i++)
                for (size_t j = 0; j < ARRAY_SIZE(modes); j++) {
                        expect(NULL, (const char *[]){creators[i], "setid", modes[j], NULL}, EPERM);
                        if (access(path, F_OK) == 0)
                                fail_msg("%s %s made %s", creators[i], modes[j], path);
                }
        for (size_t i = 0; i < ARRAY_SIZE(chmods); i++)
                for (size_t j = 0; j < ARRAY_SIZE(modes); j++) {
                        expect(NULL, (const char *[]){chmods[i], "file", modes[j], NULL}, EPERM);
                        if (look_at(inside).st.st_mode & (S_ISUID | S_ISGID))
                                fail_msg("%s %s set a set-ID bit on %s", chmods[i], modes[j],
                                         inside);
                }
        /* Controls: the same calls without the bits work, and a setgid directory is fine. */
        expect(NULL, (const char *[]){"create_mode", "setid", "0755", NULL}, 0);
        expect(NULL, (const char *[]){"chmod", "file", "0750", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0750);
        expect(NULL, (const char *[]){"mkdir_mode", "sgid-dir", "0755", NULL}, 0);
        expect(NULL, (const char *[]){"chmod", "sgid-dir", "2775", NULL}, 0);
        snprintf(dir, sizeof(dir), "%s/sgid-dir", work);
        {
                struct stat st;
                assert_int_equal(stat(dir, &st), 0);
                assert_int_equal(st.st_mode & 07777, 02775);
        }
        rmdir(dir);
        unlink(path);
}

/* A directory its owner made mode 000 can be given its mode back (rmtree and Python's tests
 * do this): the check that it lies in a writable place cannot use its "..", which needs
 * search permission on it. Natively: allowed. */
static void chmod_back_mode_000_directory(void **state)
{
        char dir[sizeof(work) + 8];
        struct stat st;

        snprintf(dir, sizeof(dir), "%s/d000", work);
        expect(NULL, (const char *[]){"mkdir_mode", "d000", "0755", NULL}, 0);
        expect(NULL, (const char *[]){"chmod", "d000", "0", NULL}, 0);
        expect(NULL, (const char *[]){"chmod", "d000", "0700", NULL}, 0);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        expect(NULL, (const char *[]){"chmod", "d000", "0", NULL}, 0);
        expect(NULL, (const char *[]){"fchmodat", dir, "0750", NULL}, 0);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0750);
        rmdir(dir);
}

/* Inode flags (chattr) through FS_IOC_SETFLAGS on a read-only fd: refused in the kernel,
 * outside the writable places and inside (outside review F2). */
static void inode_flags_refused(void **state)
{
        int fd, before = 0, after = 0;

        fd = open(victim, O_RDONLY);
        assert_true(fd >= 0);
        if (ioctl(fd, FS_IOC_GETFLAGS, &before) < 0) {
                close(fd);
                print_message("  skipped: no inode flags on %s\n", victim);
                skip();
        }
        expect(NULL, (const char *[]){"setflags", victim, NULL}, EPERM);
        expect(NULL, (const char *[]){"setflags", "file", NULL}, EPERM);
        assert_int_equal(ioctl(fd, FS_IOC_GETFLAGS, &after), 0);
        close(fd);
        assert_int_equal(before, after);
}

/* What an ioctl(PATH opened for reading, number) gives natively: 0 or errno. */
static int native_ioctl(const char *path, unsigned long nr)
{
        static char buf[4096];
        int fd = open(path, O_RDONLY | O_NONBLOCK), r;

        assert_true(fd >= 0);
        r = syscall(SYS_ioctl, fd, nr, buf) < 0 ? errno : 0;
        close(fd);
        return r;
}

/* Only a list of ioctls reaches the kernel (filter.c): a file system's own, a namespace's, a
 * console's fail with ENOTTY, whatever the fd; the listed ones give what they give natively.
 * Each refused one is one the kernel serves here (checked natively first): a namespace's
 * type, and the file system's label, which reads the host's (ext4 here). */
static void ioctls_outside_the_list_refused(void **state)
{
        static const struct {
                const char *path;
                unsigned long nr;
                bool listed;
        } cases[] = {
                {"/proc/self/ns/net", _IO(0xb7, 0x3), false}, /* NS_GET_NSTYPE */
                {NULL, FS_IOC_GETFSLABEL, false},
                {NULL, _IO('f', 18), false}, /* ext4's EXT4_IOC_PRECACHE_EXTENTS */
                {NULL, FS_IOC_GETFLAGS, true},
                {NULL, FIGETBSZ, true},
                {NULL, FIONREAD, true},
                {NULL, TCGETS, true},
        };
        int refused_served = 0;

        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                const char *path = cases[i].path ? cases[i].path : victim;
                int native = native_ioctl(path, cases[i].nr);
                char nr[32];

                snprintf(nr, sizeof(nr), "%#lx", cases[i].nr);
                if (cases[i].listed) {
                        expect(NULL, (const char *[]){"ioctl", path, nr, NULL}, native);
                        continue;
                }
                refused_served += native != ENOTTY;
                expect(NULL, (const char *[]){"ioctl", path, nr, NULL}, ENOTTY);
        }
        /* NS_GET_NSTYPE is served on every kernel since 4.11: the refusal is the filter's */
        assert_true(refused_served > 0);
}

/* openat2 keeps its flags and mode in memory, where the filter cannot see them: the
 * supervisor copies them once and judges the open like any other (fs_open.c). */
static void openat2_refused(void **state)
{
        struct look before = look_at(victim), after;
        char created[PATH_MAX + 32];

        expect(NULL, (const char *[]){"openat2", victim, NULL}, EACCES);
        after = look_at(victim);
        assert_unchanged("openat2", &before, &after);
        snprintf(created, sizeof(created), "%s/suid", out_dir);
        expect(NULL, (const char *[]){"openat2_suid", "suid-inside", NULL}, EPERM);
        expect(NULL, (const char *[]){"openat2_suid", created, NULL}, EPERM);
        assert_int_equal(access(created, F_OK), -1);
}

/* ---- as root: the program's rights, not the supervisor's -------------------------------- */

static void root_only(void)
{
        if (geteuid() != 0) {
                print_message("  skipped: needs root\n");
                skip();
        }
}

/* --user nobody: chmod of a workspace file owned by root fails as it would natively (the
 * supervisor, root, must not lend its rights). */
static void user_nobody_cannot_chmod_others_file(void **state)
{
        struct look before, after;

        root_only();
        make_file(inside, 0, 0);
        before = look_at(inside);
        expect((const char *[]){"--user", "nobody", NULL},
               (const char *[]){"chmod", "file", "666", NULL}, EPERM);
        expect((const char *[]){"--user", "nobody", NULL},
               (const char *[]){"utimensat", "file", NULL}, EPERM);
        after = look_at(inside);
        assert_unchanged("nobody on root's file", &before, &after);
}

/* --user root: uid 0 owns the root-owned file outside, but may not chmod it there. */
static void user_root_cannot_chmod_outside(void **state)
{
        struct look before, after;

        root_only();
        make_file(victim, 0, 0);
        before = look_at(victim);
        expect((const char *[]){"--user", "root", NULL},
               (const char *[]){"chmod", victim, "4755", NULL}, EPERM);
        expect((const char *[]){"--user", "root", NULL}, (const char *[]){"write", victim, NULL},
               EACCES);
        after = look_at(victim);
        assert_unchanged("--user root", &before, &after);
        /* Inside, uid 0 may chmod its own file (no capability needed). */
        make_file(inside, 0, 0);
        expect((const char *[]){"--user", "root", NULL},
               (const char *[]){"chmod", "file", "600", NULL}, 0);
        assert_int_equal(look_at(inside).st.st_mode & 07777, 0600);
}

static void default_uid_as_root(void **state)
{
        struct run_result r;

        root_only();
        assert_int_equal(
                runner_stockade_run((const char *[]){"--", "id", "-u", NULL}, TIMEOUT_S, &r), 0);
        assert_string_equal(r.out, "65534\n");
        runner_free(&r);
        assert_int_equal(runner_stockade_run(
                                 (const char *[]){"-v", "--user", "root", "--", "id", "-u", NULL},
                                 TIMEOUT_S, &r),
                         0);
        assert_string_equal(r.out, "0\n");
        assert_non_null(strstr(r.err, "runs as uid 0 gid 0"));
        assert_non_null(strstr(r.err, "running as root"));
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(write_outside_refused, fresh),
                cmocka_unit_test_setup(writes_inside_work, fresh),
                cmocka_unit_test_setup(core_pattern_unchanged, fresh),
                cmocka_unit_test_setup(metadata_outside_refused, fresh),
                cmocka_unit_test_setup(metadata_inside_works, fresh),
                cmocka_unit_test_setup(chmod_rewrite_race, fresh),
                cmocka_unit_test_setup(chmod_shared_mapping_race, fresh),
                cmocka_unit_test_setup(chmod_procmem_race, fresh),
                cmocka_unit_test_setup(setid_bits_refused, fresh),
                cmocka_unit_test_setup(openat2_refused, fresh),
                cmocka_unit_test_setup(inode_flags_refused, fresh),
                cmocka_unit_test_setup(ioctls_outside_the_list_refused, fresh),
                cmocka_unit_test_setup(chmod_back_mode_000_directory, fresh),
                cmocka_unit_test_setup(user_nobody_cannot_chmod_others_file, fresh),
                cmocka_unit_test_setup(user_root_cannot_chmod_outside, fresh),
                cmocka_unit_test_setup(default_uid_as_root, fresh),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}

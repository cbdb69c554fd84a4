/* The register decoders (syscalls/decode.c): a call's arguments as text, the kind-key masks
 * the audit report groups by, and output that stays bounded in a short buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "syscalls/decode.h"
#include "supervisor/trace_decode.h"
#include "supervisor/util.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>

struct call_case {
        int nr;
        uint64_t args[6];
        const char *full;     /* decode_call(key_only = false) */
        const char *key_only; /* decode_call(key_only = true) */
};

static const struct call_case calls[] = {
        {__NR_socket,
         {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0},
         "socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE)",
         "socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE)"},
        {__NR_socket,
         {AF_NETLINK, SOCK_DGRAM, 15},
         "socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)",
         NULL},
        {__NR_socket, {AF_INET, SOCK_RAW, 1}, "socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", NULL},
        {__NR_socket,
         {AF_PACKET, SOCK_RAW, 0x0300},
         "socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))",
         NULL},
        {__NR_socket,
         {AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, 0x1234},
         "socket(AF_PACKET, SOCK_DGRAM|SOCK_NONBLOCK, 4660)",
         NULL},
        {__NR_socket, {4242, 0x10000f, 7}, "socket(4242, 15|0x100000, 7)", NULL},
        {__NR_socketpair,
         {AF_BLUETOOTH, SOCK_STREAM, 0, 0x7ffc0000},
         "socketpair(AF_BLUETOOTH, SOCK_STREAM, 0, 0x7ffc0000)",
         "socketpair(AF_BLUETOOTH, SOCK_STREAM, 0, ...)"},
        {__NR_unshare, {CLONE_NEWUSER}, "unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWUSER)"},
        {__NR_unshare,
         {CLONE_NEWNS | CLONE_NEWPID | 0x1000000000ull},
         "unshare(CLONE_NEWNS|CLONE_NEWPID|0x1000000000)",
         NULL},
        {__NR_unshare, {0}, "unshare(0)", NULL},
        {__NR_setns, {3, 0}, "setns(3, 0)", "setns(..., 0)"},
        {__NR_clone,
         {CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0},
         "clone(CLONE_NEWUSER|SIGCHLD, NULL, NULL, NULL, 0)",
         "clone(CLONE_NEWUSER|SIGCHLD, ...)"},
        {__NR_clone, {0}, "clone(0, NULL, NULL, NULL, 0)", NULL},
        {__NR_ioctl,
         {0, TIOCSTI, 0x7ffd1234},
         "ioctl(0, TIOCSTI, 0x7ffd1234)",
         "ioctl(..., TIOCSTI, ...)"},
        {__NR_ioctl, {5, FS_IOC_SETFLAGS, 0}, "ioctl(5, FS_IOC_SETFLAGS, NULL)", NULL},
        {__NR_ioctl, {1, 0xdeadbeef, 0}, "ioctl(1, 0xdeadbeef, NULL)", NULL},
        {__NR_ioctl, {3, 0xb703, 0}, "ioctl(3, 0xb703, NULL)", NULL}, /* not 46851 */
        {__NR_prctl,
         {PR_SET_DUMPABLE, 0, 0, 0, 0},
         "prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)",
         "prctl(PR_SET_DUMPABLE, ...)"},
        {__NR_prctl, {PR_SET_MM, 1, 0x400000, 0, 0}, "prctl(PR_SET_MM, 1, 0x400000, 0, 0)", NULL},
        {__NR_personality,
         {READ_IMPLIES_EXEC},
         "personality(PER_LINUX|READ_IMPLIES_EXEC)",
         "personality(PER_LINUX|READ_IMPLIES_EXEC)"},
        {__NR_personality,
         {PER_LINUX32 | ADDR_NO_RANDOMIZE},
         "personality(PER_LINUX32|ADDR_NO_RANDOMIZE)",
         NULL},
        {__NR_personality, {0xffffffff}, "personality(0xffffffff)", NULL},
        {__NR_kill, {1, SIGKILL}, "kill(1, SIGKILL)", "kill(..., SIGKILL)"},
        {__NR_kill, {(uint64_t)-1, 0}, "kill(-1, 0)", NULL},
        {__NR_tgkill, {10, 11, SIGTERM}, "tgkill(10, 11, SIGTERM)", "tgkill(..., SIGTERM)"},
        {__NR_ptrace,
         {PTRACE_TRACEME, 0, 0, 0},
         "ptrace(PTRACE_TRACEME, 0, NULL, NULL)",
         "ptrace(PTRACE_TRACEME, ...)"},
        {__NR_ptrace, {PTRACE_SEIZE, 77, 0, 0}, "ptrace(PTRACE_SEIZE, 77, NULL, NULL)", NULL},
        {__NR_bpf, {5, 0x1000, 128}, "bpf(BPF_PROG_LOAD, 0x1000, 128)", "bpf(BPF_PROG_LOAD, ...)"},
        {__NR_keyctl,
         {0, (uint64_t)-3, 1, 0, 0},
         "keyctl(KEYCTL_GET_KEYRING_ID, -3, 1, 0, 0)",
         "keyctl(KEYCTL_GET_KEYRING_ID, ...)"},
        {__NR_seccomp,
         {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0x1000},
         "seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0x1000)",
         "seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, ...)"},
        {__NR_fcntl,
         {3, 15, 0x1000},
         "fcntl(3, F_SETOWN_EX, 4096)",
         "fcntl(..., F_SETOWN_EX, ...)"},
        {__NR_openat,
         {(uint64_t)-100, 0x1000, 0101, 04755},
         "openat(AT_FDCWD, 0x1000, O_WRONLY|O_CREAT, 04755)",
         "openat(...)"},
        /* No signature: numbers, and the kind is the call alone. */
        {__NR_mount,
         {0x1000, 0x2000, 0, 0, 0},
         "mount(0x1000, 0x2000, NULL, 0, NULL)",
         "mount(...)"},
        {__NR_getpid, {0}, "getpid()", "getpid()"},
        {__NR_swapon, {0x7fff00000000, 3}, "swapon(0x7fff00000000, 3)", "swapon(...)"},
        {400, {1, 2, 3, 4, 5, 6}, "syscall_400(1, 2, 3, 4, 5, 6)", "syscall_400(...)"},
};

static void calls_decode(void **state)
{
        char buf[256];

        for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
                const struct call_case *c = &calls[i];

                decode_call(buf, sizeof(buf), c->nr, c->args, false);
                if (strcmp(buf, c->full) != 0)
                        fail_msg("case %zu: got `%s`, want `%s`", i, buf, c->full);
                if (!c->key_only)
                        continue;
                decode_call(buf, sizeof(buf), c->nr, c->args, true);
                if (strcmp(buf, c->key_only) != 0)
                        fail_msg("case %zu (key only): got `%s`, want `%s`", i, buf, c->key_only);
        }
}

/* What groups would-be denials: the distinguishing arguments, masked. */
static void key_masks(void **state)
{
        static const struct {
                int nr;
                unsigned arg;
                uint64_t mask;
        } cases[] = {
                {__NR_socket, 0, 0xffffffff},
                {__NR_socket, 1, 0xf},
                {__NR_socket, 2, 0xffffffff},
                {__NR_ioctl, 0, 0},
                {__NR_ioctl, 1, 0xffffffff},
                {__NR_ioctl, 2, 0},
                {__NR_clone, 0, 0xffffff00},
                {__NR_clone, 1, 0},
                {__NR_kill, 0, 0},
                {__NR_kill, 1, 0xffffffff},
                {__NR_mount, 0, 0},
                {__NR_getpid, 0, 0},
                {__NR_unshare, 0, 0xffffffff},
                {__NR_unshare, 6, 0},
                {-1, 0, 0},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                if (decode_key_mask(cases[i].nr, cases[i].arg) != cases[i].mask)
                        fail_msg("case %zu: mask %#llx, want %#llx", i,
                                 (unsigned long long)decode_key_mask(cases[i].nr, cases[i].arg),
                                 (unsigned long long)cases[i].mask);
}

/* Every size, from 1 byte up, gives a NUL-terminated prefix of the full text and a length
 * that matches it: the audit table's fixed buffers rely on it. */
static void bounded(void **state)
{
        const uint64_t args[6] = {CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                          CLONE_NEWIPC | CLONE_NEWUTS | 0xf000000000ull,
                                  0,
                                  0,
                                  0,
                                  0,
                                  0};
        char full[512], buf[512];
        size_t n = decode_call(full, sizeof(full), __NR_unshare, args, false);

        assert_int_equal(n, strlen(full));
        for (size_t size = 1; size <= n + 1; size++) {
                memset(buf, 'x', sizeof(buf));
                size_t got = decode_call(buf, size, __NR_unshare, args, false);
                if (got != strlen(buf) || got >= size || strncmp(buf, full, got) != 0)
                        fail_msg("size %zu: got `%s` (%zu)", size, buf, got);
        }
        assert_int_equal(decode_call(buf, 0, __NR_unshare, args, false), 0);
}

static void values(void **state)
{
        static const struct {
                enum decode_kind k;
                uint64_t v;
                const char *want;
        } cases[] = {
                {D_SIGNAL, SIGTERM, "SIGTERM"},
                {D_SIGNAL, 0, "0"},
                {D_SIGNAL, 200, "200"},
                {D_FD, (uint32_t)-100, "AT_FDCWD"},
                {D_PTR, 0, "NULL"},
                {D_NUM, 1u << 20, "0x100000"},
                {D_NUM, (uint64_t)-1, "-1"},
                {D_MODE, 0100644, "0644"},
                {D_OFLAGS, 0, "O_RDONLY"},
                {D_NSFLAGS, 0, "0"},
                {D_SECCOMP_FLAGS, 0, "0"},
                {D_FAMILY, AF_UNIX, "AF_UNIX"},
        };
        const uint64_t args[6] = {0};
        char buf[64];

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                decode_value(buf, sizeof(buf), cases[i].k, cases[i].v, args);
                if (strcmp(buf, cases[i].want) != 0)
                        fail_msg("case %zu: got `%s`, want `%s`", i, buf, cases[i].want);
        }
}

/* The trace's arguments (supervisor/trace_decode.c): the same signatures and names, plus the
 * copy of a path or sockaddr when there is one, and the address when there is not. */
static void trace_args(void **state)
{
        static const char sin[16] = {AF_INET, 0, 0x1f, 0x90, 127, 0, 0, 1};
        static const struct {
                int nr;
                unsigned i;
                uint64_t v;
                const char *mem;
                int mem_len;
                const char *want;
        } cases[] = {
                {__NR_openat, 0, (uint32_t)-100, NULL, -1, "AT_FDCWD"},
                {__NR_openat, 1, 0x7ffd0000, "/etc/passwd", 11, "\"/etc/passwd\""},
                {__NR_openat, 1, 0x7ffd0000, NULL, -14, "0x7ffd0000"}, /* the copy failed */
                {__NR_openat, 1, 0, NULL, -1, "NULL"},
                {__NR_openat, 2, O_WRONLY | O_CREAT | O_CLOEXEC, NULL, -1,
                 "O_WRONLY|O_CREAT|O_CLOEXEC"},
                {__NR_connect, 1, 0x7ffd0000, sin, 16, "127.0.0.1:8080"},
                {__NR_newfstatat, 3, AT_EMPTY_PATH, NULL, -1, "AT_EMPTY_PATH"},
                {__NR_access, 1, 0, NULL, -1, "F_OK"},
                {__NR_mmap, 2, PROT_READ | PROT_EXEC, NULL, -1, "PROT_READ|PROT_EXEC"},
                {__NR_clone, 0, CLONE_VM | 65, NULL, -1, "CLONE_VM|65"}, /* no signal hidden */
                {__NR_kill, 1, SIGKILL, NULL, -1, "SIGKILL"},
                {__NR_fcntl, 1, F_DUPFD_CLOEXEC, NULL, -1, "F_DUPFD_CLOEXEC"},
                {__NR_ioctl, 1, TIOCSTI, NULL, -1, "TIOCSTI"},
        };
        const uint64_t args[6] = {0};
        char buf[128];

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                trace_format_arg(buf, sizeof(buf), cases[i].nr, cases[i].i, cases[i].v, args,
                                 cases[i].mem, cases[i].mem_len, 0);
                if (strcmp(buf, cases[i].want) != 0)
                        fail_msg("case %zu: got `%s`, want `%s`", i, buf, cases[i].want);
        }
        assert_int_equal(trace_mem_arg(__NR_openat, 0), 1);
        assert_int_equal(trace_mem_arg(__NR_openat, 2), -1);
        /* the calls with two paths: both copied (an outside tester found renames, links and
         * symlinks traced as addresses, the trace unable to say who made a file) */
        assert_int_equal(trace_mem_arg(__NR_symlink, 0), 0);
        assert_int_equal(trace_mem_arg(__NR_symlink, 1), 1);
        assert_int_equal(trace_mem_arg(__NR_rename, 1), 1);
        assert_int_equal(trace_mem_arg(__NR_renameat2, 0), 1);
        assert_int_equal(trace_mem_arg(__NR_renameat2, 2), 3);
        assert_int_equal(trace_mem_arg(__NR_linkat, 2), 3);
        assert_int_equal(trace_mem_arg(__NR_symlinkat, 1), 2);
        assert_int_equal(trace_mem_arg(__NR_utimensat, 0), 1);
        assert_int_equal(trace_mem_arg(__NR_mknodat, 0), 1);
        assert_int_equal(trace_mem_arg(__NR_sendto, 0), 4);
        assert_true(trace_mem_is_sockaddr(__NR_sendto, 4));
        assert_int_equal(trace_mem_arg(__NR_kill, 0), -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(calls_decode), cmocka_unit_test(key_masks),
                cmocka_unit_test(bounded),      cmocka_unit_test(values),
                cmocka_unit_test(trace_args),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The BPF decisions, three ways:
 *   1. the compiled program, run in the simulator, equals filter_decide() for every number,
 *      for other ABIs and for the argument rules' edge values, in every option combination;
 *   2. filter_decide() gives the expected verdict for a table of (call, args) cases;
 *   3. the program installed for real in a forked child makes the kernel refuse what it must.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "syscalls/bpf_sim.h"
#include "syscalls/filter.h"
#include "syscalls/table.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/sockios.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define ALLOW  SECCOMP_RET_ALLOW
#define NOTIF  SECCOMP_RET_USER_NOTIF
#define KILL   SECCOMP_RET_KILL_PROCESS
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

static const uint64_t arg_values[] = {
        0,
        1,
        2,
        3,
        10,
        16,
        17,
        0xf,
        0x5,
        0x8,
        0x40000,
        0x400000,
        0xffffffff,
        0x1ffffffff,
        0xffffffff00000000ull,
        TIOCSTI,
        0x100000000ull | TIOCSTI,
        TIOCLINUX,
        AF_NETLINK,
        AF_PACKET,
        SOCK_RAW,
        SOCK_STREAM | SOCK_CLOEXEC,
        CLONE_NEWUSER,
        CLONE_THREAD | CLONE_VM,
        PR_SET_DUMPABLE,
        PR_SET_MM,
        SECCOMP_FILTER_FLAG_NEW_LISTENER,
        ~0ull,
        F_SETOWN,
        F_SETOWN_EX,
        FIOSETOWN,
        SIOCSPGRP,
        USERFAULTFD_IOC_NEW,
        CLONE_UNTRACED,
        F_SETSIG,
        F_SETFL,
        FIOASYNC,
        O_ASYNC,
        O_ASYNC | O_NONBLOCK,
        O_NONBLOCK,
        0x100000000ull | O_ASYNC,
        /* ioctl numbers around the list's edges: a 'T' of each direction and size, the
         * first number past the terminal's, TUN's 'T', the socket type's sized form */
        TIOCGPTN,
        TIOCGWINSZ | 0x100000000ull,
        _IO('T', 0x7f),
        _IO('T', 0x80),
        _IOW('T', 202, int),
        FICLONE,
        FS_IOC_GETFLAGS,
        FS_IOC_SETFLAGS,
        _IOR(0x89, 0x06, long long[2]),
        _IOR(0x89, 0x08, long long[2]),
        _IO('f', 18),
};

/* args[2] is compared only by the second condition of a rule (F_SETFL's O_ASYNC,
 * setsockopt's option). */
static const uint64_t arg2_values[] = {
        0,
        O_NONBLOCK,
        O_ASYNC,
        O_ASYNC | O_NONBLOCK,
        0x100000000ull | O_ASYNC,
        0x100000000ull,
        ~0ull,
        SO_ATTACH_FILTER,
        0x100000000ull | SO_DETACH_FILTER,
};

static void compare(const struct filter_opts *o, const struct sock_fprog *prog,
                    struct seccomp_data *d)
{
        uint32_t want = filter_decide(o, d), got = bpf_sim_run(prog, d);

        if (want != got)
                fail_msg("arch %#x nr %d args %#llx %#llx %#llx: program %#x, decide %#x", d->arch,
                         d->nr, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
                         (unsigned long long)d->args[2], got, want);
}

static void program_matches_decide(void **state)
{
        for (int combo = 0; combo < 256; combo++) {
                struct filter_opts o = {.audit = combo & 1,
                                        .count_procs = combo & 2,
                                        .signals_scoped = combo & 4,
                                        .ipc_denied = combo & 8,
                                        .twins = combo & 16,
                                        .kernel_looks = combo & 32,
                                        .pidns = combo & 64,
                                        .kernel_reads = combo & 128};
                struct sock_fprog prog;

                assert_int_equal(filter_build(&o, &prog), 0);
                assert_true(prog.len > 0 && prog.len <= BPF_MAXINSNS);
                for (int nr = -2; nr < SYSCALL_NR_LIMIT + 16; nr++) {
                        struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
                        compare(&o, &prog, &d);
                        d.nr = nr | 0x40000000; /* x32 */
                        compare(&o, &prog, &d);
                        d.nr = nr;
                        d.arch = AUDIT_ARCH_I386; /* int 0x80 */
                        compare(&o, &prog, &d);
                }
                for (size_t i = 0; i < SC__COUNT; i++) {
                        if (syscall_table[i].verdict != V_ARGS)
                                continue;
                        for (size_t a = 0; a < sizeof(arg_values) / sizeof(*arg_values); a++)
                                for (size_t b = 0; b < sizeof(arg_values) / sizeof(*arg_values);
                                     b++)
                                        for (size_t c = 0;
                                             c < sizeof(arg2_values) / sizeof(*arg2_values); c++) {
                                                struct seccomp_data d = {.nr = syscall_table[i].nr,
                                                                         .arch = AUDIT_ARCH_X86_64,
                                                                         .args = {arg_values[a],
                                                                                  arg_values[b],
                                                                                  arg2_values[c]}};
                                                compare(&o, &prog, &d);
                                        }
                }
                free(prog.filter);
        }
}

struct decide_case {
        const char *name;
        uint64_t a0, a1;
        uint32_t enforce, audit;
};

static void decisions(void **state)
{
        static const struct decide_case cases[] = {
                {"read", 0, 0, ALLOW, ALLOW},
                {"futex", 0, 0, ALLOW, ALLOW},
                {"openat", 0, 0, NOTIF, NOTIF},
                {"connect", 0, 0, NOTIF, NOTIF},
                {"kill", 0, 0, NOTIF, NOTIF},
                {"execve", 0, 0, NOTIF, NOTIF},
                {"fork", 0, 0, ALLOW, ALLOW}, /* notified only when counting */
                {"mount", 0, 0, ERR(EPERM), NOTIF},
                {"unshare", 0, 0, ERR(EPERM), NOTIF},
                {"setns", 0, 0, ERR(EPERM), NOTIF},
                {"ptrace", 0, 0, ERR(EPERM), NOTIF},
                {"process_vm_writev", 0, 0, ERR(EPERM), NOTIF},
                {"process_vm_readv", 0, 0, ERR(EPERM), NOTIF},
                {"open_by_handle_at", 0, 0, ERR(EPERM), NOTIF},
                {"userfaultfd", 0, 0, ERR(EPERM), NOTIF},
                {"bpf", 0, 0, ERR(EPERM), NOTIF},
                {"perf_event_open", 0, 0, ERR(EPERM), NOTIF},
                {"keyctl", 0, 0, ERR(EPERM), NOTIF},
                {"add_key", 0, 0, ERR(EPERM), NOTIF},
                {"pivot_root", 0, 0, ERR(EPERM), NOTIF},
                {"chroot", 0, 0, ERR(EPERM), NOTIF},
                {"io_uring_setup", 0, 0, ERR(ENOSYS), NOTIF},
                {"io_uring_enter", 0, 0, ERR(ENOSYS), NOTIF},
                {"clone3", 0, 0, ERR(ENOSYS), ERR(ENOSYS)}, /* libc's fallback: not audited */
                {"ioctl", 0, TIOCSTI, ERR(EPERM), NOTIF},
                {"ioctl", 0, 0x100000000ull | TIOCSTI, ERR(EPERM), NOTIF},
                {"ioctl", 0, TIOCLINUX, ERR(EPERM), NOTIF},
                {"ioctl", 0, TCGETS, ALLOW, ALLOW},
                /* The ioctl list: the terminal's and the generic fd's, a few reads, clones */
                {"ioctl", 0, TIOCGPTN, ALLOW, ALLOW},
                {"ioctl", 0, FIONREAD, ALLOW, ALLOW},
                {"ioctl", 0, FIOCLEX, ALLOW, ALLOW},
                {"ioctl", 0, FICLONE, ALLOW, ALLOW},
                {"ioctl", 0, FS_IOC_GETFLAGS, ALLOW, ALLOW},
                {"ioctl", 0, SIOCGSTAMP_NEW, ALLOW, ALLOW},
                /* ... and nothing else: btrfs's subvolume, ext4's own, TUN's 'T', a virtual
                 * console's keyboard mode, a namespace's, a sized socket-device number */
                {"ioctl", 0, _IOW(0x94, 14, char[4096]), ERR(ENOTTY), NOTIF},
                {"ioctl", 0, _IO('f', 18), ERR(ENOTTY), NOTIF},
                {"ioctl", 0, _IOW('T', 202, int), ERR(ENOTTY), NOTIF},
                {"ioctl", 0, 0x4B45, ERR(ENOTTY), NOTIF},
                {"ioctl", 0, _IO(0xb7, 0x1), ERR(ENOTTY), NOTIF},
                {"ioctl", 0, 0x100000000ull | _IO('f', 18), ERR(ENOTTY), NOTIF},
                {"ioctl", 0, _IOR(0x89, 0x08, long long[2]), ERR(EOPNOTSUPP), NOTIF},
                {"socket", AF_UNIX, SOCK_STREAM, ALLOW, ALLOW},
                {"socket", AF_INET, SOCK_STREAM | SOCK_CLOEXEC, ALLOW, ALLOW},
                {"socket", AF_INET6, SOCK_DGRAM, ALLOW, ALLOW},
                {"socket", AF_INET, SOCK_RAW, ERR(EPERM), NOTIF},
                {"socket", AF_INET6, SOCK_RAW | SOCK_NONBLOCK, ERR(EPERM), NOTIF},
                {"socket", AF_INET, SOCK_PACKET, ERR(EPERM), NOTIF},
                /* Protocol 0: NETLINK_ROUTE, the view the supervisor answers (net_rules has
                 * the other protocols, still refused). */
                {"socket", AF_NETLINK, SOCK_DGRAM, NOTIF, NOTIF},
                {"socket", AF_NETLINK, SOCK_RAW, NOTIF, NOTIF},
                {"socket", AF_PACKET, SOCK_DGRAM, ERR(EAFNOSUPPORT), NOTIF},
                {"socket", 0x100000000ull | AF_NETLINK, SOCK_DGRAM, NOTIF, NOTIF},
                {"socket", 0x100000000ull | AF_PACKET, SOCK_DGRAM, ERR(EAFNOSUPPORT), NOTIF},
                {"socketpair", AF_UNIX, SOCK_STREAM, ALLOW, ALLOW},
                {"socketpair", AF_INET, SOCK_STREAM, ERR(EAFNOSUPPORT), NOTIF},
                {"clone", CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0, ALLOW, ALLOW},
                {"clone", CLONE_NEWUSER | SIGCHLD, 0, ERR(EPERM), NOTIF},
                {"clone", CLONE_NEWNET, 0, ERR(EPERM), NOTIF},
                {"clone", CLONE_NEWPID, 0, ERR(EPERM), NOTIF},
                {"clone", CLONE_UNTRACED | SIGCHLD, 0, ERR(EPERM), NOTIF},
                {"ioctl", 3, USERFAULTFD_IOC_NEW, ERR(EPERM), NOTIF},
                {"fcntl", 3, F_GETFL, ALLOW, ALLOW},
                {"fcntl", 3, F_SETOWN, NOTIF, NOTIF}, /* unscoped: the handler checks */
                {"fcntl", 3, F_SETOWN_EX, ERR(EPERM), NOTIF},
                {"ioctl", 3, FIOSETOWN, ERR(EPERM), NOTIF},
                {"setsid", 0, 0, NOTIF, NOTIF},
                {"prctl", PR_SET_NAME, 0, ALLOW, ALLOW},
                /* integrity: stays enforced in audit mode (a non-dumpable task locks the
                 * supervisor out of its memory) */
                {"prctl", PR_SET_DUMPABLE, 0, ERR(0), ERR(0)},
                {"prctl", PR_SET_MM, 0, ERR(EPERM), NOTIF},
                {"seccomp", SECCOMP_SET_MODE_FILTER, 0, ALLOW, ALLOW},
                /* integrity: stays denied in audit mode */
                {"seccomp", SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, ERR(EPERM),
                 ERR(EPERM)},
                {"personality", 0xffffffff, 0, ALLOW, ALLOW},
                {"personality", ADDR_NO_RANDOMIZE, 0, ALLOW, ALLOW},
                {"personality", READ_IMPLIES_EXEC, 0, ERR(EPERM), NOTIF},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct syscall_row *row = syscall_by_name(cases[i].name);
                struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64,
                                         .args = {cases[i].a0, cases[i].a1}};
                struct filter_opts enforce = {0}, audit = {.audit = true};

                assert_non_null(row);
                d.nr = row->nr;
                if (filter_decide(&enforce, &d) != cases[i].enforce)
                        fail_msg("case %zu %s: enforce %#x", i, cases[i].name,
                                 filter_decide(&enforce, &d));
                if (filter_decide(&audit, &d) != cases[i].audit)
                        fail_msg("case %zu %s: audit %#x", i, cases[i].name,
                                 filter_decide(&audit, &d));
        }
}

/* With Landlock's signal scope the kernel stops SIGIO to outsiders: no checks needed. */
static void scoped_signals(void **state)
{
        struct filter_opts o = {.signals_scoped = true};
        struct seccomp_data d = {
                .arch = AUDIT_ARCH_X86_64, .nr = __NR_fcntl, .args = {3, F_SETOWN, 1}};

        assert_int_equal(filter_decide(&o, &d), ALLOW);
        d.args[1] = F_SETOWN_EX;
        assert_int_equal(filter_decide(&o, &d), ALLOW);
        d.nr = __NR_ioctl;
        d.args[1] = FIOSETOWN;
        assert_int_equal(filter_decide(&o, &d), ALLOW);
        d.args[1] = TIOCSTI;
        assert_int_equal(filter_decide(&o, &d), ERR(EPERM));
}

/* SIGIO turned on, or its signal chosen, on a description a host process owns: the scope
 * judges who set the owner, not who chose the signal (review R4). Notified whatever the ABI;
 * F_SETFL without O_ASYNC stays in the kernel. */
static void sigio_rules(void **state)
{
        static const struct {
                int nr;
                uint64_t cmd, arg;
                uint32_t want;
        } cases[] = {
                {__NR_fcntl, F_SETSIG, SIGKILL, NOTIF},
                {__NR_fcntl, F_SETSIG, 0, NOTIF},
                {__NR_fcntl, F_SETFL, O_ASYNC, NOTIF},
                {__NR_fcntl, F_SETFL, O_ASYNC | O_NONBLOCK | O_APPEND, NOTIF},
                {__NR_fcntl, F_SETFL, 0xffffffff00000000ull | O_ASYNC, NOTIF},
                {__NR_fcntl, F_SETFL, O_NONBLOCK, ALLOW},
                {__NR_fcntl, F_SETFL, 0, ALLOW},
                {__NR_fcntl, F_SETFL, 0xffffffff00000000ull, ALLOW}, /* flags are an int */
                {__NR_fcntl, F_GETFL, O_ASYNC, ALLOW},
                {__NR_fcntl, F_GETSIG, 0, ALLOW},
                {__NR_fcntl, 0x100000000ull | F_SETSIG, SIGKILL, NOTIF},
                {__NR_ioctl, FIOASYNC, 0, NOTIF},
                {__NR_ioctl, 0x100000000ull | FIOASYNC, 0, NOTIF},
                {__NR_ioctl, FIONBIO, 0, ALLOW},
        };
        for (int scoped = 0; scoped < 2; scoped++)
                for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                        struct filter_opts o = {.signals_scoped = scoped};
                        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64,
                                                 .nr = cases[i].nr,
                                                 .args = {3, cases[i].cmd, cases[i].arg}};

                        if (filter_decide(&o, &d) != cases[i].want)
                                fail_msg("case %zu (scoped %d): %#x", i, scoped,
                                         filter_decide(&o, &d));
                }
}

/* --fast: the calls that look stay in the kernel whatever their flags; the opens, name
 * changes, exec and metadata setters are still the supervisor's. */
static void fast_looks(void **state)
{
        static const char *const looks[] = {"stat",       "lstat",     "newfstatat", "statx",
                                            "access",     "faccessat", "faccessat2", "readlink",
                                            "readlinkat", "getdents",  "getdents64"};
        static const char *const judged[] = {"open",   "openat",   "openat2",  "creat",
                                             "unlink", "rename",   "mkdir",    "execve",
                                             "chmod",  "fchmodat", "truncate", "linkat"};
        struct filter_opts fast = {.kernel_looks = true}, slow = {0},
                           traced = {.kernel_looks = true, .trace_all = true};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};

        (void)state;
        for (size_t i = 0; i < sizeof(looks) / sizeof(*looks); i++) {
                d.nr = syscall_by_name(looks[i])->nr;
                d.args[2] = d.args[3] = 0; /* no AT_EMPTY_PATH */
                if (filter_decide(&fast, &d) != ALLOW || filter_decide(&slow, &d) != NOTIF)
                        fail_msg("%s: fast %#x, default %#x", looks[i], filter_decide(&fast, &d),
                                 filter_decide(&slow, &d));
                /* --trace-level all still sees them, decided as the kernel would */
                assert_int_equal(filter_decide(&traced, &d), NOTIF);
        }
        /* opendir's open: the kernel's; any other open of a directory, or O_TMPFILE, not */
        d.nr = __NR_openat;
        d.args[2] = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK;
        assert_int_equal(filter_decide(&fast, &d), ALLOW);
        assert_int_equal(filter_decide(&slow, &d), NOTIF);
        d.nr = __NR_open;
        d.args[1] = O_RDONLY | O_DIRECTORY;
        d.args[2] = 0; /* open's mode */
        assert_int_equal(filter_decide(&fast, &d), ALLOW);
        d.args[1] = O_RDWR | O_DIRECTORY;
        assert_int_equal(filter_decide(&fast, &d), NOTIF);
        d.nr = __NR_openat;
        d.args[1] = 0;
        for (unsigned long long f = 0; f < 6; f++) {
                static const int more[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_TMPFILE, 0};
                d.args[2] = O_DIRECTORY | (unsigned)more[f];
                assert_int_equal(filter_decide(&fast, &d), more[f] ? NOTIF : ALLOW);
                d.args[2] = (unsigned)more[f] & ~O_DIRECTORY; /* no O_DIRECTORY: the view's */
                assert_int_equal(filter_decide(&fast, &d), NOTIF);
        }
        d.args[2] = 0;
        for (size_t i = 0; i < sizeof(judged) / sizeof(*judged); i++) {
                d.nr = syscall_by_name(judged[i])->nr;
                if (filter_decide(&fast, &d) != filter_decide(&slow, &d))
                        fail_msg("%s: fast %#x, default %#x", judged[i], filter_decide(&fast, &d),
                                 filter_decide(&slow, &d));
        }
}

/* --fast's kernel reads: an open for reading stays in the kernel, with any of the flags that
 * only shape the fd; anything that writes, creates, truncates or is O_TMPFILE is the view's,
 * and openat2 (whose flags are in memory) always. */
static void fast_reads(void **state)
{
        static const int benign[] = {0,        O_CLOEXEC, O_NONBLOCK,  O_NOFOLLOW,
                                     O_NOCTTY, O_NOATIME, O_LARGEFILE, O_DIRECTORY};
        static const int writes[] = {O_WRONLY, O_RDWR,  O_CREAT, O_TRUNC,  O_TMPFILE, O_APPEND,
                                     O_EXCL,   O_DSYNC, O_SYNC,  O_DIRECT, FASYNC};
        struct filter_opts reads = {.kernel_looks = true, .kernel_reads = true},
                           looks = {.kernel_looks = true};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};

        (void)state;
        for (size_t i = 0; i < sizeof(benign) / sizeof(*benign); i++) {
                d.nr = __NR_openat;
                d.args[2] = (unsigned)(benign[i] | O_CLOEXEC);
                assert_int_equal(filter_decide(&reads, &d), ALLOW);
                d.nr = __NR_open;
                d.args[1] = d.args[2];
                d.args[2] = 0;
                assert_int_equal(filter_decide(&reads, &d), ALLOW);
                d.args[1] = 0;
        }
        /* without kernel reads a plain open is the view's (the control) */
        d.nr = __NR_openat;
        d.args[2] = O_RDONLY;
        assert_int_equal(filter_decide(&looks, &d), NOTIF);
        for (size_t i = 0; i < sizeof(writes) / sizeof(*writes); i++) {
                d.nr = __NR_openat;
                d.args[2] = (unsigned)writes[i];
                if (filter_decide(&reads, &d) != NOTIF)
                        fail_msg("openat flags %#x: %#x", writes[i], filter_decide(&reads, &d));
                d.nr = __NR_open;
                d.args[1] = (unsigned)writes[i];
                d.args[2] = 0;
                if (filter_decide(&reads, &d) != NOTIF)
                        fail_msg("open flags %#x: %#x", writes[i], filter_decide(&reads, &d));
                d.args[1] = 0;
        }
        d.nr = __NR_openat2;
        d.args[2] = 0;
        assert_int_equal(filter_decide(&reads, &d), NOTIF);
        d.nr = __NR_creat;
        assert_int_equal(filter_decide(&reads, &d), NOTIF);
}

/* With a pid namespace of the sandbox's own (--fast), the calls that name a process stay in
 * the kernel, which confines them to the namespace: the handlers would read its numbers as
 * ours. Without one they are the supervisor's, as before. */
static void pidns_names_in_kernel(void **state)
{
        static const char *const named[] = {"kill",       "tgkill",           "tkill",
                                            "prlimit64",  "setpriority",      "getpriority",
                                            "pidfd_open", "sched_setaffinity"};
        struct filter_opts ns = {.pidns = true, .kernel_looks = true},
                           fast = {.kernel_looks = true};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64, .args = {1, 9}};

        (void)state;
        for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++) {
                d.nr = syscall_by_name(named[i])->nr;
                if (filter_decide(&ns, &d) != ALLOW || filter_decide(&fast, &d) != NOTIF)
                        fail_msg("%s: pidns %#x, without %#x", named[i], filter_decide(&ns, &d),
                                 filter_decide(&fast, &d));
        }
        d.nr = __NR_pidfd_send_signal; /* ABI < 6: no signal scope */
        assert_int_equal(filter_decide(&ns, &d), ALLOW);
        assert_int_equal(filter_decide(&fast, &d), NOTIF);
        d.nr = __NR_fcntl;
        d.args[1] = F_SETOWN;
        assert_int_equal(filter_decide(&ns, &d), ALLOW);
        assert_int_equal(filter_decide(&fast, &d), NOTIF);
        /* SIGIO armed on a description a host process may own: judged either way */
        d.args[1] = F_SETSIG;
        assert_int_equal(filter_decide(&ns, &d), NOTIF);
        /* and nothing else moves: clone's namespaces stay refused */
        d.nr = __NR_clone;
        d.args[0] = CLONE_NEWPID;
        assert_int_equal(filter_decide(&ns, &d), ERR(EPERM));
}

/* Where a cow mount is merged the xattr reads are the view's (notified), and their *at forms
 * and file_getattr, which the kernel would answer from the lower alone, are ENOSYS. */
static void merged_cow_rows(void **state)
{
        static const char *const enosys[] = {"getxattrat", "listxattrat", "file_getattr"};
        struct filter_opts merged = {.cow_merged = true, .kernel_looks = true},
                           plain = {.kernel_looks = true};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};

        (void)state;
        for (size_t i = 0; i < sizeof(enosys) / sizeof(*enosys); i++) {
                d.nr = syscall_by_name(enosys[i])->nr;
                if (filter_decide(&merged, &d) != ERR(ENOSYS) || filter_decide(&plain, &d) != ALLOW)
                        fail_msg("%s: merged %#x, without %#x", enosys[i],
                                 filter_decide(&merged, &d), filter_decide(&plain, &d));
        }
        d.nr = __NR_getxattr;
        assert_int_equal(filter_decide(&merged, &d), NOTIF);
        assert_int_equal(filter_decide(&plain, &d), ALLOW);
        d.nr = syscall_by_name("setxattrat")->nr; /* notified either way */
        assert_int_equal(filter_decide(&merged, &d), NOTIF);
        assert_int_equal(filter_decide(&plain, &d), NOTIF);
}

/* Without a private IPC namespace, SysV IPC is refused in the kernel (shmdt excepted);
 * with one, it runs in the kernel. POSIX message queues stay refused either way. */
static void sysv_ipc(void **state)
{
        static const char *const denied[] = {"shmget", "shmat",  "shmctl",     "semget",
                                             "semop",  "semctl", "semtimedop", "msgget",
                                             "msgsnd", "msgrcv", "msgctl"};
        struct filter_opts shared = {.ipc_denied = true},
                           audit = {.ipc_denied = true, .audit = true}, private = {0};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};

        for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++) {
                d.nr = syscall_by_name(denied[i])->nr;
                if (filter_decide(&shared, &d) != ERR(EPERM))
                        fail_msg("%s: %#x without a namespace", denied[i],
                                 filter_decide(&shared, &d));
                assert_int_equal(filter_decide(&audit, &d), NOTIF);
                assert_int_equal(filter_decide(&private, &d), ALLOW);
        }
        d.nr = __NR_shmdt;
        assert_int_equal(filter_decide(&shared, &d), ALLOW);
        d.nr = __NR_mq_open;
        assert_int_equal(filter_decide(&shared, &d), ERR(EPERM));
        assert_int_equal(filter_decide(&private, &d), ERR(EPERM));
        d.nr = __NR_mmap; /* the neighbours are untouched */
        assert_int_equal(filter_decide(&shared, &d), ALLOW);
}

/* Issue 8: sendto without a destination stays in the kernel; source routes are refused;
 * IPv4/IPv6 sockets only of the protocols the policy judges (no SCTP, no MPTCP). */
static void net_rules(void **state)
{
        static const struct {
                const char *name;
                uint64_t args[6];
                uint32_t want;
        } cases[] = {
                {"sendto", {3, 0x1000, 10, 0, 0, 0}, ALLOW},
                {"sendto", {3, 0x1000, 10, 0, 0x2000, 16}, NOTIF},
                {"sendto", {3, 0x1000, 10, 0, 0x100000000ull, 16}, NOTIF},
                {"sendmsg", {3, 0x1000, 0}, NOTIF},
                {"sendmmsg", {3, 0x1000, 2, 0}, NOTIF},
                {"bind", {3, 0x1000, 16}, NOTIF},
                {"setsockopt", {3, IPPROTO_IP, IP_OPTIONS, 0x1000, 8}, ERR(EPERM)},
                {"setsockopt", {3, IPPROTO_IPV6, IPV6_RTHDR, 0x1000, 8}, ERR(EPERM)},
                {"setsockopt", {3, IPPROTO_IPV6, IPV6_2292RTHDR, 0x1000, 8}, ERR(EPERM)},
                {"setsockopt", {3, IPPROTO_IPV6, IPV6_2292PKTOPTIONS, 0x1000, 8}, ERR(EPERM)},
                {"setsockopt", {3, IPPROTO_IP, IP_TTL, 0x1000, 4}, ALLOW},
                {"setsockopt", {3, SOL_SOCKET, IP_OPTIONS, 0x1000, 4}, ALLOW}, /* another level */
                {"setsockopt", {3, IPPROTO_IPV6, IPV6_V6ONLY, 0x1000, 4}, ALLOW},
                {"setsockopt", {3, SOL_SOCKET, SO_REUSEADDR, 0x1000, 4}, ALLOW},
                {"socket", {AF_INET, SOCK_STREAM, IPPROTO_SCTP}, ERR(EPROTONOSUPPORT)},
                {"socket", {AF_INET6, SOCK_STREAM, IPPROTO_SCTP}, ERR(EPROTONOSUPPORT)},
                {"socket", {AF_INET, SOCK_SEQPACKET, 0}, ERR(ESOCKTNOSUPPORT)},
                {"socket", {AF_INET6, SOCK_SEQPACKET | SOCK_CLOEXEC, 0}, ERR(ESOCKTNOSUPPORT)},
                {"socket", {AF_INET, 6 /* SOCK_DCCP */, 33}, ERR(ESOCKTNOSUPPORT)},
                {"socket", {AF_INET, SOCK_DGRAM, 136 /* UDP-Lite */}, ERR(EPROTONOSUPPORT)},
                {"socket", {AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0}, ALLOW},
                {"socket", {AF_INET, SOCK_STREAM, IPPROTO_TCP}, ALLOW},
                {"socket", {AF_INET, SOCK_STREAM, 262 /* MPTCP */}, ERR(EPROTONOSUPPORT)},
                {"socket", {AF_INET6, SOCK_STREAM, 262 /* MPTCP */}, ERR(EPROTONOSUPPORT)},
                {"socket", {AF_INET, SOCK_DGRAM, IPPROTO_ICMP}, ALLOW},
                {"socket", {AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6}, ALLOW},
                {"socket", {AF_INET6, SOCK_DGRAM, IPPROTO_UDP}, ALLOW},
                {"socket", {AF_UNIX, SOCK_SEQPACKET, 0}, ALLOW},
                /* Netlink: NETLINK_ROUTE raw or datagram, with CLOEXEC and NONBLOCK or not,
                 * goes to the supervisor (its view, net_netlink.c); nothing else does. */
                {"socket", {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE}, NOTIF},
                {"socket", {AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK, NETLINK_ROUTE}, NOTIF},
                {"socket",
                 {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0x100000000ull},
                 NOTIF},
                {"socket", {AF_NETLINK, SOCK_RAW | 0x100, NETLINK_ROUTE}, ERR(EPERM)},
                {"socket", {AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE}, ERR(EAFNOSUPPORT)},
                {"socket", {AF_NETLINK, SOCK_SEQPACKET, NETLINK_ROUTE}, ERR(ESOCKTNOSUPPORT)},
                {"socket", {AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG}, ERR(EPERM)},
                {"socket", {AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG}, ERR(EAFNOSUPPORT)},
                {"socket", {AF_NETLINK, SOCK_RAW, NETLINK_AUDIT}, ERR(EPERM)},
                {"socket", {AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT}, ERR(EAFNOSUPPORT)},
                {"socket", {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC}, ERR(EPERM)},
                {"socket", {AF_NETLINK, SOCK_DGRAM, NETLINK_NETFILTER}, ERR(EAFNOSUPPORT)},
        };
        struct filter_opts o = {0};
        struct sock_fprog prog;

        (void)state;
        assert_int_equal(filter_build(&o, &prog), 0);
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64,
                                         .nr = syscall_by_name(cases[i].name)->nr};

                memcpy(d.args, cases[i].args, sizeof(d.args));
                if (filter_decide(&o, &d) != cases[i].want ||
                    bpf_sim_run(&prog, &d) != cases[i].want)
                        fail_msg("case %zu %s: decide %#x, program %#x, want %#x", i, cases[i].name,
                                 filter_decide(&o, &d), bpf_sim_run(&prog, &d), cases[i].want);
        }
        free(prog.filter);
}

/* Where twins can exist, the socket filter options on SOL_SOCKET go to the supervisor
 * (net_twin.c: a twin's filter is its own); elsewhere, and any other option, the kernel's. */
static void twin_filter_options(void **state)
{
        static const int names[] = {SO_ATTACH_FILTER,
                                    SO_DETACH_FILTER,
                                    SO_LOCK_FILTER,
                                    SO_ATTACH_BPF,
                                    SO_ATTACH_REUSEPORT_CBPF,
                                    SO_ATTACH_REUSEPORT_EBPF,
                                    68 /* SO_DETACH_REUSEPORT_BPF */};
        struct filter_opts twins = {.twins = true}, none = {0};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64, .nr = __NR_setsockopt};
        struct sock_fprog prog;

        (void)state;
        assert_int_equal(filter_build(&twins, &prog), 0);
        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                d.args[1] = SOL_SOCKET;
                d.args[2] = (uint64_t)names[i];
                assert_int_equal(filter_decide(&twins, &d), NOTIF);
                assert_int_equal(bpf_sim_run(&prog, &d), NOTIF);
                assert_int_equal(filter_decide(&none, &d), ALLOW);
                d.args[2] |= 0x100000000ull; /* an int: the upper half is not looked at */
                assert_int_equal(bpf_sim_run(&prog, &d), NOTIF);
                d.args[1] = IPPROTO_IP;
                assert_int_equal(bpf_sim_run(&prog, &d), ALLOW);
        }
        d.args[1] = SOL_SOCKET;
        d.args[2] = SO_REUSEADDR;
        assert_int_equal(bpf_sim_run(&prog, &d), ALLOW);
        free(prog.filter);
}

static void counting_notifies_forks(void **state)
{
        struct filter_opts o = {.count_procs = true};
        struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64, .nr = __NR_fork};

        assert_int_equal(filter_decide(&o, &d), NOTIF);
        d.nr = __NR_clone;
        d.args[0] = SIGCHLD;
        assert_int_equal(filter_decide(&o, &d), NOTIF);
        d.args[0] = CLONE_NEWUSER;
        assert_int_equal(filter_decide(&o, &d), ERR(EPERM));
        d.nr = 1000;
        assert_int_equal(filter_decide(&o, &d), ERR(ENOSYS));
        d.nr = 39;
        d.arch = AUDIT_ARCH_I386;
        assert_int_equal(filter_decide(&o, &d), KILL);
}

/* Each check runs in the child with the filter installed; returns 0 when all hold, else the
 * line of the first that did not. */
#define EXPECT_ERRNO(call, e)                                                                      \
        do {                                                                                       \
                check++;                                                                           \
                errno = 0;                                                                         \
                if ((call) != -1 || errno != (e))                                                  \
                        return check;                                                              \
        } while (0)

static int kernel_checks(void)
{
        int check = 0;

        EXPECT_ERRNO(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL), EPERM);
        EXPECT_ERRNO(syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG), EAFNOSUPPORT);
        EXPECT_ERRNO(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EPERM);
        /* NETLINK_ROUTE is notified (the view): no listener here, so ENOSYS. */
        EXPECT_ERRNO(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), ENOSYS);
        EXPECT_ERRNO(syscall(SYS_ioctl, -1, TIOCSTI, "x"), EPERM); /* not EBADF: BPF decided */
        EXPECT_ERRNO(syscall(SYS_clone3, NULL, 0), ENOSYS);
        EXPECT_ERRNO(syscall(1000), ENOSYS);
        EXPECT_ERRNO(syscall(SYS_personality, READ_IMPLIES_EXEC), EPERM);
        EXPECT_ERRNO(syscall(SYS_unshare, CLONE_NEWUSER), EPERM);
        EXPECT_ERRNO(syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0), EPERM);
        /* Notified, but this filter has no listener: the kernel answers ENOSYS. */
        EXPECT_ERRNO(syscall(SYS_getpgid, 0), ENOSYS);
        /* The path calls that only look are answered in the view: notified. */
        EXPECT_ERRNO(syscall(SYS_faccessat, AT_FDCWD, "/nonexistent-stockade", F_OK, 0), ENOSYS);
        /* Calls that need no decision stay in the kernel: its answer, not ENOSYS. */
        EXPECT_ERRNO(syscall(SYS_fchdir, -1), EBADF);
        EXPECT_ERRNO(syscall(SYS_fcntl, 0, F_SETSIG, SIGKILL), ENOSYS);
        EXPECT_ERRNO(syscall(SYS_fcntl, 0, F_SETFL, O_ASYNC | O_NONBLOCK), ENOSYS);
        EXPECT_ERRNO(syscall(SYS_ioctl, 0, FIOASYNC, NULL), ENOSYS);
        /* F_SETFL without O_ASYNC runs in the kernel: a bad fd gets the kernel's EBADF. */
        EXPECT_ERRNO(syscall(SYS_fcntl, -1, F_SETFL, O_NONBLOCK), EBADF);
        return getppid() > 0 ? 0 : 200;
}

static int ipc_checks(void)
{
        int check = 100;

        EXPECT_ERRNO(syscall(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600), EPERM);
        EXPECT_ERRNO(syscall(SYS_shmctl, 0, SHM_STAT, NULL), EPERM); /* not EFAULT/EINVAL */
        EXPECT_ERRNO(syscall(SYS_semget, IPC_PRIVATE, 1, IPC_CREAT | 0600), EPERM);
        EXPECT_ERRNO(syscall(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600), EPERM);
        EXPECT_ERRNO(syscall(SYS_shmdt, (void *)8), EINVAL); /* the kernel's own answer */
        return kernel_checks();
}

static void run_filtered(const struct filter_opts *o, int (*checks)(void))
{
        struct sock_fprog prog;
        int status;
        pid_t pid;

        assert_int_equal(filter_build(o, &prog), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* Filters cannot be removed: only ever install them in a forked child. */
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        _exit(99);
                _exit(checks());
        }
        free(prog.filter);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status))
                fail_msg("kernel check #%d failed", WEXITSTATUS(status));
}

static void kernel_enforces(void **state)
{
        run_filtered(&(struct filter_opts){0}, kernel_checks);
        run_filtered(&(struct filter_opts){.ipc_denied = true}, ipc_checks);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(program_matches_decide),
                cmocka_unit_test(decisions),
                cmocka_unit_test(counting_notifies_forks),
                cmocka_unit_test(scoped_signals),
                cmocka_unit_test(sigio_rules),
                cmocka_unit_test(sysv_ipc),
                cmocka_unit_test(fast_looks),
                cmocka_unit_test(fast_reads),
                cmocka_unit_test(pidns_names_in_kernel),
                cmocka_unit_test(merged_cow_rows),
                cmocka_unit_test(net_rules),
                cmocka_unit_test(twin_filter_options),
                cmocka_unit_test(kernel_enforces),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

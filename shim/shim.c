/*
 * The shim. Order matters:
 *   PDEATHSIG first, so that the child never outlives a supervisor that died during setup;
 *   setsid, so that the program has no controlling terminal (no TIOCSTI into the user's shell,
 *   no job-control signals from it);
 *   rlimits, fds and signals before the capabilities go (raising a hard limit needs them);
 *   a private IPC namespace (ipcns.c): as root, while we still hold CAP_SYS_ADMIN; else
 *   with a user namespace, after --user (whose uid must be the one mapped), and then the
 *   bounding set and securebits once more, since unshare(CLONE_NEWUSER) resets both;
 *   capabilities, then NO_NEW_PRIVS (also required for an unprivileged seccomp filter);
 *   a Landlock domain: no ptrace-class access (/proc/PID/mem, ...), no reads of hidden paths,
 *   no writes outside the writable places (the ruleset is built by the supervisor from its
 *   grants, with our rights, before the fork, and entered after NO_NEW_PRIVS) and, with
 *   ABI 6, no signals to
 *   anything outside the sandbox;
 *   the filter last: from then on every syscall of this process is filtered, so nothing but
 *   kernel-allowed calls (sendmsg, read, close, write, execve after "go") may follow.
 * With a pid namespace (--fast, shim/pidns.h), this process S makes C, the supervisor's child
 * in the namespace, once the namespaces are joined and before the capabilities go (setns
 * needs them), and exits; C goes on. C, not S, is then the session leader whose controlling
 * terminal the sandbox's pty becomes: a session leader that exits takes its terminal away.
 * Nothing returns: errors _exit(). die() formats with vsnprintf and strerror, which is safe
 * after fork() only because the supervisor is single-threaded when it forks (the notifier
 * thread starts later).
 */
#include "shim/shim.h"
#include "shim/landlock.h"
#include "shim/mntns.h"
#include "shim/netns.h"
#include "shim/pidns.h"
#include "supervisor/error.h"
#include "supervisor/options.h"
#include "supervisor/spawn.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <grp.h>
#include <unistd.h>

_Noreturn __attribute__((format(printf, 3, 4))) static void die(int code, int errnum,
                                                                const char *fmt, ...)
{
        char buf[512];
        va_list ap;
        int n = snprintf(buf, sizeof(buf), "stockade: ");

        va_start(ap, fmt);
        n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        va_end(ap);
        if (errnum && n < (int)sizeof(buf))
                n += snprintf(buf + n, sizeof(buf) - (size_t)n, ": %s", strerror(errnum));
        if (n >= (int)sizeof(buf) - 1)
                n = (int)sizeof(buf) - 2;
        buf[n++] = '\n';
        (void)!write(STDERR_FILENO, buf, (size_t)n);
        _exit(code);
}

static void set_limit(int resource, const char *name, uint64_t value)
{
        struct rlimit rl = {.rlim_cur = value, .rlim_max = value};

        if (!value)
                return;
        /* CPU: the soft limit sends SIGXCPU, one second later the hard limit SIGKILL. */
        if (resource == RLIMIT_CPU)
                rl.rlim_max = value + 1;
        if (setrlimit(resource, &rl) < 0)
                die(EXIT_STOCKADE, errno, "set %s limit to %llu", name, (unsigned long long)value);
}

static void apply_limits(const struct limits *l)
{
        /* No core dumps, soft or hard: the kernel writes one itself, in the crashing
         * process's directory or where core_pattern says, past the view and its hidden
         * places (an outside review put a file into another run's session this way, which
         * apply then wrote into that project). The program cannot raise a hard limit. */
        const struct rlimit none = {0, 0};

        if (setrlimit(RLIMIT_CORE, &none) < 0)
                die(EXIT_STOCKADE, errno, "set core dump limit to 0");
        set_limit(RLIMIT_CPU, "cpu", l->cpu_s);
        set_limit(RLIMIT_AS, "memory", l->memory);
        set_limit(RLIMIT_FSIZE, "file size", l->max_file_size);
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

/* Everything but stdio, the socket and the fds passed on purpose (--pass-fd, made
 * inheritable): the program inherits no fd of the supervisor. */
static void close_fds(const struct shim_args *a)
{
        int keep[SHIM_MAX_PASS_FDS + 4 + 16];
        size_t n = 0;
        unsigned from = 3;

        keep[n++] = a->sock;
        if (a->ns_user >= 0) {
                keep[n++] = a->ns_user;
                keep[n++] = a->ns_ipc;
        }
        if (a->ns_mnt >= 0)
                keep[n++] = a->ns_mnt;
        if (a->ns_net >= 0)
                keep[n++] = a->ns_net;
        if (a->ns_pid >= 0) {
                keep[n++] = a->ns_pid;
                if (!a->tty_pipes && a->tty_slave >= 0)
                        keep[n++] = a->tty_slave; /* for C (shim/pidns.h) */
        }
        if (a->landlock_abi)
                keep[n++] = a->ruleset;
        for (size_t i = 0; i < a->n_pass_fds && n < ARRAY_SIZE(keep); i++) {
                keep[n++] = a->pass_fds[i];
                if (fcntl(a->pass_fds[i], F_SETFD, 0) < 0)
                        die(EXIT_STOCKADE, errno, "--pass-fd %d", a->pass_fds[i]);
        }
        qsort(keep, n, sizeof(keep[0]), cmp_int);
        for (size_t i = 0; i < n; i++) {
                if ((unsigned)keep[i] > from &&
                    syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0) < 0)
                        die(EXIT_STOCKADE, errno, "close_range");
                if ((unsigned)keep[i] + 1 > from)
                        from = (unsigned)keep[i] + 1;
        }
        if (syscall(SYS_close_range, from, ~0U, 0) < 0)
                die(EXIT_STOCKADE, errno, "close_range");
}

/* The sandbox's own pty becomes its controlling terminal, and replaces the user's terminal
 * on fds 0-2: from here on, the user's terminal is not open in the sandbox. With a pid
 * namespace the first is C's to do (split_pid_namespace). */
static void take_terminal(const struct shim_args *a)
{
        if (a->tty_slave < 0 && a->tty_out < 0)
                return;
        if (a->ns_pid < 0 && !a->tty_pipes && ioctl(a->tty_slave, TIOCSCTTY, 0) < 0)
                die(EXIT_STOCKADE, errno, "make the sandbox's pty its controlling terminal");
        for (int fd = 0; fd <= 2; fd++) {
                int src = a->tty_pipes && fd > 0 ? a->tty_out : a->tty_slave;

                if (a->tty_fds[fd] && src >= 0 && dup2(src, fd) < 0)
                        die(EXIT_STOCKADE, errno, "dup2 the sandbox's terminal to fd %d", fd);
        }
}

/* The supervisor blocks signals for its signalfd; the mask survives execve, so undo it. */
static void reset_signals(void)
{
        sigset_t none;

        sigemptyset(&none);
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        signal(sig, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
}

static bool have_cap(int cap)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {0};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Every capability: effective, permitted, inheritable, ambient and, where we may (root, or
 * any holder of CAP_SETPCAP), bounding. Securebits stop a root process from regaining
 * capabilities at execve, and keep them across --user's uid change until capset clears them.
 * An unprivileged user cannot shrink the bounding set, and does not need to: with
 * NO_NEW_PRIVS no execve can raise the permitted set.
 */
static void drop_bounding_set(void)
{
        if (!have_cap(CAP_SETPCAP))
                return;
        if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                             SECBIT_NO_SETUID_FIXUP_LOCKED |
                                             SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                             SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
                die(EXIT_STOCKADE, errno, "set securebits");
        for (int cap = 0; cap < 64; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL)
                                break; /* past the kernel's last capability */
                        die(EXIT_STOCKADE, errno, "drop capability %d from bounding set", cap);
                }
}

static void drop_capabilities(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {0};

        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                die(EXIT_STOCKADE, errno, "clear ambient capabilities");
        if (syscall(SYS_capset, &h, d) < 0)
                die(EXIT_STOCKADE, errno, "drop capabilities");
        /* Fail closed: check, do not assume. */
        if (syscall(SYS_capget, &h, d) < 0 || d[0].effective || d[0].permitted ||
            d[0].inheritable || d[1].effective || d[1].permitted || d[1].inheritable)
                die(EXIT_STOCKADE, 0, "capabilities are still held after dropping them");
}

/* --user: no supplementary groups, then gid, then uid (the other order would have lost the
 * right to change the gid). Runs between drop_bounding_set() and drop_capabilities(). */
static void become_user(uid_t uid, gid_t gid, pid_t supervisor)
{
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                die(EXIT_STOCKADE, errno, "switch to uid %u gid %u", (unsigned)uid, (unsigned)gid);
        if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
                die(EXIT_STOCKADE, 0, "uid %u gid %u did not stick", (unsigned)uid, (unsigned)gid);
        /* The kernel clears PDEATHSIG and dumpable when the euid changes (commit_creds): arm
         * them again, and check that the supervisor did not die in between. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
                _exit(EXIT_STOCKADE);
        if (prctl(PR_SET_DUMPABLE, 1) < 0)
                die(EXIT_STOCKADE, errno, "set dumpable");
}

static int install_filter(const struct sock_fprog *prog, unsigned *flags_out)
{
        unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
        long fd;

        /* WAIT_KILLABLE_RECV: once the supervisor has received a notification, a non-fatal
         * signal no longer interrupts the call (no spurious EINTR restarts). 5.19+. */
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                     flags | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, prog);
        if (fd >= 0) {
                *flags_out |= SHIM_WAIT_KILLABLE_RECV;
                return (int)fd;
        }
        if (errno != EINVAL)
                return -errno;
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
        return fd >= 0 ? (int)fd : -errno;
}

/*
 * The hand-off writes the listener's fd number, and the supervisor takes the fd itself with
 * pidfd_getfd(). sendmsg(SCM_RIGHTS) cannot be used: it carries a sockaddr, so the filter
 * now in force sends it to the supervisor, which is still waiting for the listener.
 */
static void send_listener(int sock, int listener, unsigned flags, uint64_t key)
{
        int msg[2] = {listener, (int)flags};

        /* `key` in an argument write() ignores: under --trace-level all the filter lets this
         * one write through, since nobody serves the listener before reading it. */
        if (syscall(SYS_write, sock, msg, sizeof(msg), key) != sizeof(msg))
                die(EXIT_STOCKADE, errno, "hand the listener to the supervisor");
}

/* The supervisor's probe showed that this works, and built a filter that allows SysV IPC
 * on that basis: fail closed if it does not. A PDEATHSIG set earlier survives (a new user
 * namespace owned by our euid is not a change of credentials for it). */
static void enter_ipc_namespace(const struct shim_args *a, unsigned *flags)
{
        const char *step = "";
        /* Unprivileged: join what the supervisor made before entering its Landlock domain,
         * in which the maps under /proc cannot be written. */
        int r = a->ipc == IPC_NS_USERNS ? ipcns_join(a->ns_user, a->ns_ipc, &step)
                                        : ipcns_enter(a->ipc, &step);

        if (r < 0)
                die(EXIT_STOCKADE, -r, "make the sandbox a private IPC namespace: %s", step);
        *flags |= SHIM_IPC_NAMESPACE;
}

/* The view's private directories (shim/mntns.h): fail closed, as for the IPC namespace. */
static void enter_mount_namespace(const struct shim_args *a)
{
        const char *step = "";
        int r;

        if (a->ns_mnt < 0)
                return;
        r = mntns_join(a->ns_mnt, a->cwd, &step);
        if (r < 0)
                die(EXIT_STOCKADE, -r, "enter the sandbox's mount namespace: %s", step);
}

/* The sandbox's own network namespace (shim/netns.h): fail closed, as for the others (the
 * supervisor decided on the policy's handling with it). */
static void enter_net_namespace(const struct shim_args *a)
{
        const char *step = "";
        int r;

        if (a->ns_net < 0)
                return;
        r = netns_join(a->ns_net, &step);
        if (r < 0)
                die(EXIT_STOCKADE, -r, "enter the sandbox's network namespace: %s", step);
}

/* --fast: the command runs as C in the sandbox's pid namespace (shim/pidns.h); S exits. C
 * dies with the supervisor too (its parent: CLONE_PARENT), and if the supervisor died before
 * PDEATHSIG was armed here, C never gets "go" and never runs the command. */
static void split_pid_namespace(const struct shim_args *a)
{
        const char *step = "";
        int r;

        if (a->ns_pid < 0)
                return;
        r = pidns_split(a->ns_pid, a->sock, &step);
        if (r < 0)
                die(EXIT_STOCKADE, -r, "enter the sandbox's pid namespace: %s", step);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(EXIT_STOCKADE);
        if (setsid() < 0)
                die(EXIT_STOCKADE, errno, "setsid");
        if (!a->tty_pipes && a->tty_slave >= 0) {
                if (ioctl(a->tty_slave, TIOCSCTTY, 0) < 0)
                        die(EXIT_STOCKADE, errno,
                            "make the sandbox's pty its controlling terminal");
                if (a->tty_slave > STDERR_FILENO)
                        close(a->tty_slave);
        }
}

/* The command is looked up here, as the user it will run as (--user), and before the
 * filter: the lookup's stat and access calls would otherwise be notified. */
static char *resolve(const struct shim_args *a)
{
        char *path = NULL;
        int r = spawn_resolve(a->argv[0], a->path_var, &path);

        if (r == -ENOENT)
                die(EXIT_NOTFOUND, 0, "`%s`: command not found", a->argv[0]);
        if (r < 0)
                die(EXIT_NOEXEC, -r, "`%s`: cannot run", a->argv[0]);
        return path;
}

_Noreturn void shim_run(const struct shim_args *a)
{
        unsigned flags = 0;
        char go = 0, *path;
        int listener;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->supervisor)
                _exit(EXIT_STOCKADE);
        /* The supervisor is not dumpable (so the sandbox cannot open its /proc/PID/mem);
         * we must be, for it to take the listener from us and seize us. execve resets it. */
        if (prctl(PR_SET_DUMPABLE, 1) < 0)
                die(EXIT_STOCKADE, errno, "set dumpable");
        if (setsid() < 0)
                die(EXIT_STOCKADE, errno, "setsid");
        take_terminal(a);
        apply_limits(a->limits);
        close_fds(a);
        reset_signals();
        if (a->ipc == IPC_NS)
                enter_ipc_namespace(a, &flags);
        if (a->ipc != IPC_NS_USERNS) {
                enter_net_namespace(a);   /* as root, before the capabilities go */
                enter_mount_namespace(a); /* as root, before the uid changes */
        }
        drop_bounding_set();
        if (a->set_user)
                become_user(a->uid, a->gid, a->supervisor);
        if (a->ipc == IPC_NS_USERNS) {
                enter_ipc_namespace(a, &flags);
                enter_net_namespace(a);   /* owned by that user namespace, */
                enter_mount_namespace(a); /* as this one */
                drop_bounding_set();      /* the new namespace's: full again, securebits reset */
        }
        split_pid_namespace(a);
        drop_capabilities();
        path = resolve(a); /* without capabilities: access() must judge as the command will */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                die(EXIT_STOCKADE, errno, "set no_new_privs");
        if (a->landlock_abi) {
                int r = landlock_restrict(a->ruleset);
                if (r < 0)
                        die(EXIT_STOCKADE, -r, "enter a Landlock domain (ABI %d)", a->landlock_abi);
                close(a->ruleset);
        }

        /* Open files last: the Landlock rules needed an fd per place. */
        set_limit(RLIMIT_NOFILE, "open files", a->limits->max_files);
        listener = install_filter(a->prog, &flags);
        if (listener == -EMFILE && a->limits->max_files)
                die(EXIT_STOCKADE, 0, "--max-files %llu is too low for the sandbox to start",
                    (unsigned long long)a->limits->max_files);
        if (listener < 0)
                die(EXIT_STOCKADE, -listener, "install the seccomp filter%s",
                    listener == -EPERM ? " (does a sandbox around this one, stockade "
                                         "included, forbid seccomp listeners?)"
                                       : "");
        send_listener(a->sock, listener, flags, a->handoff_key);

        /* The supervisor answers "g" once it holds the listener and has ptrace-seized us;
         * EOF means it gave up. Our copy of the listener must not reach the program: with
         * it, the program could answer its own notifications. */
        if (read(a->sock, &go, 1) != 1 || go != 'g')
                _exit(EXIT_STOCKADE);
        close(listener);
        close(a->sock);

        execve(path, a->argv, a->envp);
        die(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, errno, "cannot run `%s`", a->argv[0]);
}

#include "supervisor/layers.h"
#include "syscalls/fs_common.h"
#include "supervisor/sockmaker.h"
#include "shim/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static bool action_available(unsigned action)
{
        return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static int landlock_abi(char *why, size_t len)
{
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

        if (abi < 0) {
                snprintf(why, len, "%s",
                         errno == EOPNOTSUPP ? "disabled at boot (lsm= lacks landlock)"
                         : errno == ENOSYS   ? "kernel built without it"
                                             : strerror(errno));
                return 0;
        }
        return (int)abi;
}

/* Run fn in a throwaway child, since unshare() cannot be undone in this process. Returns
 * fn's result (0 or -errno), with the message it wrote (which step failed) in why. */
static int in_child(int (*fn)(const void *arg, char *why, size_t len), const void *arg, char *why,
                    size_t len)
{
        enum { SHARED = 4096 };
        char *shared =
                mmap(NULL, SHARED, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        int status, r = 0;
        pid_t pid;

        if (shared == MAP_FAILED) {
                r = -errno;
                snprintf(why, len, "mmap: %s", strerror(-r));
                return r;
        }
        pid = fork();
        if (pid == 0) {
                r = fn(arg, shared, SHARED);
                _exit(r == 0 ? 0 : -r > 0 && -r < 256 ? -r : 255);
        }
        if (pid < 0) {
                r = -errno;
                snprintf(why, len, "fork: %s", strerror(-r));
        } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
                r = -ECHILD;
                snprintf(why, len, "the probe died");
        } else if (WEXITSTATUS(status)) {
                r = -WEXITSTATUS(status);
                snprintf(why, len, "%s", shared);
        }
        munmap(shared, SHARED);
        return r;
}

static int try_userns(const void *arg, char *why, size_t len)
{
        int r = unshare(CLONE_NEWUSER) == 0 ? 0 : -errno;

        if (r < 0)
                snprintf(why, len, "unshare(CLONE_NEWUSER): %s", strerror(-r));
        return r;
}

static bool userns_allowed(char *why, size_t len)
{
        return in_child(try_userns, NULL, why, len) == 0;
}

/* The probe of the IPC namespace `how` (every step the shim will take: a mapping can be
 * refused after unshare() succeeded) and, with `net`, of a network namespace in it with its
 * loopback up (shim/netns.h): a host may allow the one and not the other. The probe is the
 * namespaces' maker forked early (shim/mntns.h, ns_early), kept in *keep for the spawn when it
 * succeeds. We wait here only for the IPC namespace's answer, since the filter and the view
 * depend on it; the network namespace (half a millisecond to make) is judged while we compute
 * the view, and its answer read by layers_probe_net. */
static struct ns_answer probe_start(enum ipc_isolation how, bool net, struct ns_maker *keep)
{
        struct ns_answer a;

        ns_early(keep, how, net, &a);
        return a;
}

void layers_probe_net(struct layers *l, struct ns_maker *keep)
{
        struct ns_answer a;

        if (!l->probe_net)
                return;
        l->probe_net = false;
        l->netns = ns_early_net(keep, &a) == 0;
        if (!l->netns)
                snprintf(l->why_netns, sizeof(l->why_netns), "%s", a.why);
}

static bool have_cap_sys_admin(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {0};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
}

/* Decided before the fork, because the filter depends on it: SysV IPC is allowed only in a
 * namespace of the sandbox's own. The shim then fails closed if it cannot do what worked
 * here (shim.c). The network namespace is tried by the same child (`net`: when wanted). */
static void probe_ipc(struct layers *l, bool net, struct ns_maker *keep)
{
        char *why = l->why_ipc;
        size_t len = sizeof(l->why_ipc);
        struct ns_answer a;

        l->ipc = IPC_SHARED;
        if (layers_test_disabled("ipcns")) {
                snprintf(why, len, "disabled for a test");
                return;
        }
        if (have_cap_sys_admin()) {
                a = probe_start(IPC_NS, net, keep);
                if (a.r == 0) {
                        l->ipc = IPC_NS;
                        l->probe_net = net;
                        return;
                }
                snprintf(why, len, "%s", a.why);
        }
        if (layers_test_disabled("userns")) {
                snprintf(l->why_userns, sizeof(l->why_userns), "disabled for a test");
                snprintf(why, len, "user namespaces disabled for a test");
                return;
        }
        a = probe_start(IPC_NS_USERNS, net, keep);
        if (a.r == 0) {
                l->ipc = IPC_NS_USERNS;
                l->user_namespaces = true;
                l->probe_net = net;
        } else {
                snprintf(why, len, "%s%s", a.why, layers_userns_hint(APPARMOR_USERNS_SYSCTL));
        }
}

const char *layers_userns_hint(const char *path)
{
        char v[8];

        if (fs_read_text(path, v, sizeof(v)) < 0 || v[0] != '1')
                return "";
        return "; AppArmor restricts user namespaces on this host "
               "(kernel.apparmor_restrict_unprivileged_userns=1): `sudo "
               "scripts/apparmor-userns.sh` gives stockade its own (README, \"Hosts without user "
               "namespaces\")";
}

/* STOCKADE_TEST_DISABLE=landlock,ptrace,landlock-scopes,userns,ipcns makes a layer look
 * absent, so that the tests can run the paths of hosts without it (ipcns: no private IPC
 * namespace at all; userns: none through a user namespace, so root still gets one). It can
 * only take protection away (SysV IPC is then denied, not opened), and a run refuses to
 * start while it is set unless --allow-degraded is given (loop.c). */
bool layers_test_disabled(const char *layer)
{
        const char *v = getenv("STOCKADE_TEST_DISABLE");
        size_t n = strlen(layer);

        for (const char *p = v; p && *p; p = strchrnul(p, ',') + !!*strchrnul(p, ','))
                if (strncmp(p, layer, n) == 0 && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

void layers_probe(struct layers *l, bool full, bool net, struct ns_maker *keep)
{
        l->probe_net = false;
        l->user_notif = action_available(SECCOMP_RET_USER_NOTIF);
        l->landlock_abi = landlock_abi(l->why_landlock, sizeof(l->why_landlock));
        if (layers_test_disabled("landlock-scopes") && l->landlock_abi > 5)
                l->landlock_abi = 5; /* what kernels before 6.12 offer */
        if (layers_test_disabled("landlock")) {
                l->landlock_abi = 0;
                snprintf(l->why_landlock, sizeof(l->why_landlock), "disabled for a test");
        }
        /* The network namespace in the same place (shim/netns.h), where it works and is
         * wanted (not with --net host): layers_probe_net says. */
        l->netns = false;
        if (!net)
                snprintf(l->why_netns, sizeof(l->why_netns), "--net host");
        else if (layers_test_disabled("netns"))
                snprintf(l->why_netns, sizeof(l->why_netns), "disabled for a test");
        else if (!sockmaker_supported())
                snprintf(l->why_netns, sizeof(l->why_netns),
                         "the kernel cannot tell a socket's namespace (SO_NETNS_COOKIE, 5.14)");
        probe_ipc(l, net && !layers_test_disabled("netns") && sockmaker_supported(), keep);
        if (l->ipc == IPC_SHARED && net)
                snprintf(l->why_netns, sizeof(l->why_netns),
                         "no user namespace: the policy is enforced on the program's sockets "
                         "in the host's namespace");
        /* The mount namespace is made where the IPC namespace is (shim/mntns.h); whether
         * mount works there is known only when it is tried, and the run then fails closed. */
        l->mntns = l->ipc != IPC_SHARED && !layers_test_disabled("mntns");
        if (full && !l->user_namespaces && !layers_test_disabled("userns"))
                l->user_namespaces = userns_allowed(l->why_userns, sizeof(l->why_userns));
}

static void line(FILE *out, const char *name, bool on, const char *why)
{
        fprintf(out, "stockade:   %-28s %s%s%s%s\n", name, on ? "yes" : "no",
                !on && why && *why ? " (" : "", !on && why ? why : "",
                !on && why && *why ? ")" : "");
}

void layers_print(const struct layers *l, FILE *out)
{
        char abi[96];

        fprintf(out, "stockade: layers on this host:\n");
        line(out, "seccomp user notification", l->user_notif, "kernel older than 5.0");
        line(out, "WAIT_KILLABLE_RECV", l->wait_killable_recv, "kernel older than 5.19");
        line(out, "SYNC_WAKE_UP", l->sync_wake_up, "kernel older than 6.6; slower round trip");
        line(out, "ptrace (tree, EXITKILL)", l->ptrace, l->why_ptrace);
        snprintf(abi, sizeof(abi), "ABI %d: %s", l->landlock_abi,
                 l->landlock_abi >= 6 ? "ptrace, signals, abstract sockets scoped"
                                      : "ptrace scoped (signals need ABI 6)");
        if (l->landlock_abi) {
                fprintf(out, "stockade:   %-28s %s\n", "Landlock", abi);
                line(out, "Landlock on the supervisor", l->landlock_self, "not entered");
        } else
                line(out, "Landlock", false, l->why_landlock);
        if (l->landlock_abi >= 4)
                fprintf(out, "stockade:   %-28s %s\n", "Landlock network (ABI 4)",
                        "yes: the kernel refuses TCP bind/connect made by the program itself");
        else
                line(out, "Landlock network (ABI 4)", false,
                     "the supervisor's emulation is the only network wall");
        if (l->netns)
                fprintf(out, "stockade:   %-28s %s\n", "network namespace",
                        "yes: the sandbox's own loopback; allowed connections are made in "
                        "the host's");
        else
                line(out, "network namespace", false, l->why_netns);
        /* NETLINK_ROUTE is answered by the supervisor (syscalls/net_netlink.c), with or
         * without the namespace: no host address shows. */
        fprintf(out, "stockade:   %-28s %s\n", "network interfaces",
                "a view: lo only (127.0.0.1/8, 127.0.0.2/8, fe80::1/64, ::1/128), no host address");
        if (l->user_namespaces)
                fprintf(out, "stockade:   %-28s %s\n", "user namespaces",
                        l->ipc == IPC_NS_USERNS ? "yes (for the IPC namespace)"
                                                : "yes (not needed)");
        else
                line(out, "user namespaces", false, l->why_userns);
        if (l->ipc == IPC_SHARED)
                fprintf(out, "stockade:   %-28s denied (no private IPC namespace: %s)\n",
                        "SysV IPC", l->why_ipc);
        else
                fprintf(out, "stockade:   %-28s %s\n", "SysV IPC", ipcns_name(l->ipc));
        line(out, "private directories (--tmp)", l->mntns,
             l->ipc == IPC_SHARED ? "no mount namespace can be made" : "disabled for a test");
        if (l->binder)
                fprintf(out, "stockade:   %-28s %s\n", "unix socket names",
                        l->mntns ? "as given (bound in the sandbox's mount namespace and "
                                   "Landlock domain)"
                                 : "as given (bound in the sandbox's Landlock domain)");
        else
                fprintf(out, "stockade:   %-28s %s\n", "unix socket names",
                        !l->landlock_abi ? "the last component of a path (no Landlock)"
                                         : "the last component of a path (no binder: a "
                                           "hidden path beneath copy-on-write, or it failed)");
}

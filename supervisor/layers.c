#include "supervisor/layers.h"

#include <errno.h>
#include <stdlib.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <string.h>
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

/* Try it in a throwaway child: unshare() cannot be undone in this process. */
static bool userns_allowed(char *why, size_t len)
{
        int status;
        pid_t pid = fork();

        if (pid < 0) {
                snprintf(why, len, "fork: %s", strerror(errno));
                return false;
        }
        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
                snprintf(why, len, "probe failed");
                return false;
        }
        if (WEXITSTATUS(status) == 0)
                return true;
        snprintf(why, len, "unshare(CLONE_NEWUSER): %s", strerror(WEXITSTATUS(status)));
        return false;
}

/* STOCKADE_TEST_DISABLE=landlock,ptrace,landlock-scopes makes a layer look absent, so that
 * the tests can run the paths of hosts without it. It can only take protection away, and a
 * run refuses to start while it is set unless --allow-degraded is given (loop.c). */
bool layers_test_disabled(const char *layer)
{
        const char *v = getenv("STOCKADE_TEST_DISABLE");
        size_t n = strlen(layer);

        for (const char *p = v; p && *p; p = strchrnul(p, ',') + !!*strchrnul(p, ','))
                if (strncmp(p, layer, n) == 0 && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

void layers_probe(struct layers *l, bool full)
{
        l->user_notif = action_available(SECCOMP_RET_USER_NOTIF);
        l->landlock_abi = landlock_abi(l->why_landlock, sizeof(l->why_landlock));
        if (layers_test_disabled("landlock-scopes") && l->landlock_abi > 5)
                l->landlock_abi = 5; /* what kernels before 6.12 offer */
        if (layers_test_disabled("landlock")) {
                l->landlock_abi = 0;
                snprintf(l->why_landlock, sizeof(l->why_landlock), "disabled for a test");
        }
        if (full)
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
        if (l->landlock_abi)
                fprintf(out, "stockade:   %-28s %s\n", "Landlock", abi);
        else
                line(out, "Landlock", false, l->why_landlock);
        if (l->user_namespaces)
                fprintf(out, "stockade:   %-28s %s\n", "user namespaces", "yes (not needed)");
        else
                line(out, "user namespaces", false, l->why_userns);
}

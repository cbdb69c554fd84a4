#include "supervisor/creds.h"
#include "supervisor/options.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The supervisor's own groups, read once: every thread starts with them. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static gid_t saved_groups[65536]; /* NGROUPS_MAX */
static int n_saved_groups = -1;

/* Our effective ids, read with the groups: a thread's own change (raw setresuid, identity
 * mode) is always undone before its next call, so each call need not ask again. */
static uid_t our_euid;
static gid_t our_egid;

static void read_groups(void)
{
        n_saved_groups =
                getgroups((int)(sizeof(saved_groups) / sizeof(saved_groups[0])), saved_groups);
        our_euid = geteuid();
        our_egid = getegid();
}

/* This thread's capability sets as they were before any switch: they never change, so
 * they are read once per thread (a capget less per call). */
static __thread struct __user_cap_data_struct thread_caps[2];
static __thread bool thread_caps_known;
/* This thread keeps the program's fs ids and no groups between calls (creds_thread_init):
 * a call then only drops and restores the effective capabilities. */
static __thread bool fs_kept;

static int cap_get(struct __user_cap_data_struct d[2])
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

        if (!thread_caps_known) {
                if (syscall(SYS_capget, &h, thread_caps) < 0)
                        return -errno;
                thread_caps_known = true;
        }
        d[0] = thread_caps[0];
        d[1] = thread_caps[1];
        return 0;
}

static int cap_set_effective(const uint32_t eff[2])
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2];
        int r = cap_get(d);

        if (r < 0)
                return r;
        d[0].effective = eff[0];
        d[1].effective = eff[1];
        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* The ids: fsuid/fsgid only, or (identity) the effective ids, which the fs ids follow. */
static int set_ids(const struct config *cfg, bool identity)
{
        if (identity) {
                if (syscall(SYS_setresgid, -1, cfg->gid, -1) < 0 ||
                    syscall(SYS_setresuid, -1, cfg->uid, -1) < 0)
                        return -errno;
        } else {
                syscall(SYS_setfsgid, cfg->gid);
                syscall(SYS_setfsuid, cfg->uid);
        }
        /* setfsuid/setfsgid report nothing: read back (-1 changes nothing). */
        if ((uid_t)syscall(SYS_setfsuid, -1) != cfg->uid ||
            (gid_t)syscall(SYS_setfsgid, -1) != cfg->gid)
                return -EPERM;
        return 0;
}

static int enter(const struct config *cfg, struct creds_saved *s, bool identity)
{
        static const uint32_t none[2] = {0, 0};
        struct __user_cap_data_struct d[2];
        bool switch_ids;
        int r;

        s->switched = false;
        s->identity = false;
        s->fs_only = false;
        s->cfg = cfg;
        pthread_once(&once, read_groups);
        switch_ids = cfg->set_user && our_euid == 0;
        if (n_saved_groups < 0)
                return -EPERM;
        r = cap_get(d);
        if (r < 0)
                return r;
        s->effective[0] = d[0].effective;
        s->effective[1] = d[1].effective;
        if (!switch_ids && !d[0].effective && !d[1].effective)
                return 0; /* the program runs with our very credentials */
        s->switched = true;
        if (switch_ids && fs_kept && !identity) {
                s->fs_only = true; /* the fs ids and groups are the program's already */
        } else if (switch_ids) {
                s->identity = identity;
                s->euid = our_euid;
                s->egid = our_egid;
                r = syscall(SYS_setgroups, 0, NULL) < 0 ? -errno : set_ids(cfg, identity);
                if (r < 0) {
                        creds_leave(s);
                        return r;
                }
        }
        r = cap_set_effective(none);
        if (r < 0) {
                creds_leave(s);
                return r;
        }
        return 0;
}

int creds_thread_init(const struct config *cfg)
{
        if (!cfg->set_user || geteuid() != 0)
                return 0;
        pthread_once(&once, read_groups);
        if (syscall(SYS_setgroups, 0, NULL) < 0)
                return -errno;
        if (set_ids(cfg, false) < 0) {
                syscall(SYS_setfsuid, geteuid());
                syscall(SYS_setfsgid, getegid());
                syscall(SYS_setgroups, n_saved_groups, saved_groups);
                return -EPERM;
        }
        fs_kept = true;
        return 0;
}

int creds_enter(const struct config *cfg, struct creds_saved *s)
{
        return enter(cfg, s, false);
}

int creds_enter_identity(const struct config *cfg, struct creds_saved *s)
{
        return enter(cfg, s, true);
}

void creds_leave(struct creds_saved *s)
{
        if (!s->switched)
                return;
        /* Capabilities first: changing the fs ids and groups back needs them. */
        if (cap_set_effective(s->effective) < 0)
                abort();
        if (s->fs_only) {
                s->switched = false;
                return;
        }
        if (s->identity) {
                /* Back to our effective ids (the saved ones are still ours, so this is allowed
                 * even without capabilities); a change of euid from nonzero to 0 copies the
                 * permitted capabilities into the effective set: restore that again. */
                if (syscall(SYS_setresuid, -1, s->euid, -1) < 0 ||
                    syscall(SYS_setresgid, -1, s->egid, -1) < 0 ||
                    cap_set_effective(s->effective) < 0)
                        abort();
        }
        if (fs_kept) {
                /* Back to what the thread keeps: the program's fs ids, no groups. */
                if (set_ids(s->cfg, false) < 0)
                        abort();
                s->switched = false;
                return;
        }
        syscall(SYS_setfsuid, geteuid());
        syscall(SYS_setfsgid, getegid());
        if ((uid_t)syscall(SYS_setfsuid, -1) != geteuid() ||
            (gid_t)syscall(SYS_setfsgid, -1) != getegid() ||
            syscall(SYS_setgroups, n_saved_groups, saved_groups) < 0)
                abort();
        s->switched = false;
}

int creds_become(uid_t uid, gid_t gid)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {{0}};

        if (geteuid() == 0 &&
            (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0 ||
             syscall(SYS_setresuid, uid, uid, uid) < 0))
                return -1;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -1;
        return (int)syscall(SYS_capset, &h, d);
}

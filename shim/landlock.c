#include "shim/landlock.h"
#include "supervisor/grants.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <errno.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The attribute as of ABI 6; older kernels get a prefix of it. */
struct ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net; /* ABI 4 */
        uint64_t scoped;             /* ABI 6 */
};

int landlock_abi_version(void)
{
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        return abi > 0 ? (int)abi : 0;
}

uint64_t landlock_write_access(int abi)
{
        uint64_t a = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

        if (abi >= 2)
                a |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                a |= LANDLOCK_ACCESS_FS_TRUNCATE;
        return a;
}

/* The rights a rule on a file (not a directory) may carry. */
#define FILE_ACCESS                                                                                \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
         LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

int landlock_ruleset_create(int abi, bool scoped)
{
        /* Every write-type right this ABI knows, and reading and executing files and listing
         * directories, are handled: whatever no rule allows is denied, whatever the uid.
         * IOCTL_DEV is not handled (terminals). */
        struct ruleset_attr attr = {
                .handled_access_fs = landlock_write_access(abi) | LANDLOCK_ACCESS_FS_READ_FILE |
                                     LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE};
        size_t size = sizeof(attr.handled_access_fs);
        int fd;

        if (abi >= 4 && scoped) {
                /* A second wall under the network policy: no rule is ever added, so a TCP
                 * bind or connect that reached the kernel in the program's own context (a
                 * bug in the emulation, a path it does not know) is refused. The calls the
                 * supervisor performs for the program are checked against the supervisor's own
                 * domain (scoped false: no network right handled), so allowed connections are
                 * unaffected. UDP is not covered by
                 * Landlock. */
                attr.handled_access_net = STOCKADE_LANDLOCK_ACCESS_NET_BIND_TCP |
                                          STOCKADE_LANDLOCK_ACCESS_NET_CONNECT_TCP;
                size += sizeof(attr.handled_access_net);
        }
        if (abi >= 6 && scoped) {
                attr.scoped = STOCKADE_LANDLOCK_SCOPE_SIGNAL |
                              STOCKADE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
                size += sizeof(attr.scoped);
        }
        fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        return fd < 0 ? -errno : fd;
}

/* One rule on `ruleset` (skipped when -1). */
static int add_rule(int ruleset, struct landlock_path_beneath_attr *rule)
{
        if (ruleset < 0 ||
            syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, rule, 0) == 0)
                return 0;
        return -errno;
}

int landlock_add_grants(int ruleset, int also, const struct grants *g)
{
        for (size_t i = 0; i < g->n; i++) {
                const struct grant *gr = &g->v[i];
                struct landlock_path_beneath_attr rule = {.allowed_access = gr->access};
                struct stat st;
                int fd = open(gr->path, O_PATH | O_NOFOLLOW | O_CLOEXEC), r = 0;

                if (fd < 0)
                        continue; /* gone, or not ours to reach: a grant left out is safe */
                /* Not the file the supervisor looked at: leave it out too. */
                if (fstat(fd, &st) == 0 && st.st_dev == gr->dev && st.st_ino == gr->ino) {
                        if (!S_ISDIR(st.st_mode))
                                rule.allowed_access &= FILE_ACCESS;
                        rule.parent_fd = fd;
                        if (rule.allowed_access && gr->who != GRANT_SANDBOX)
                                r = add_rule(ruleset, &rule);
                        if (rule.allowed_access && gr->who != GRANT_SUPERVISOR && r == 0)
                                r = add_rule(also, &rule);
                }
                close(fd);
                if (r < 0)
                        return r;
        }
        return 0;
}

int landlock_add_fd_rule(int ruleset, int dirfd, uint64_t access)
{
        struct landlock_path_beneath_attr rule = {.allowed_access = access, .parent_fd = dirfd};

        return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0
                       ? -errno
                       : 0;
}

int landlock_restrict(int ruleset)
{
        return syscall(SYS_landlock_restrict_self, ruleset, 0) < 0 ? -errno : 0;
}

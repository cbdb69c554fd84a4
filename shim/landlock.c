#include "shim/landlock.h"

#include <errno.h>
#include <linux/landlock.h>
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

int landlock_enter_domain(int abi)
{
        /* A ruleset must handle something. Block-device creation needs CAP_MKNOD, which the
         * sandbox never has, so handling it (with no rule allowing it) restricts nothing. */
        struct ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK};
        size_t size = sizeof(attr.handled_access_fs);
        int fd, r = 0;

        if (abi >= 4)
                size += sizeof(attr.handled_access_net);
        if (abi >= 6) {
                attr.scoped = STOCKADE_LANDLOCK_SCOPE_SIGNAL |
                              STOCKADE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
                size += sizeof(attr.scoped);
        }
        fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        if (fd < 0)
                return -errno;
        if (syscall(SYS_landlock_restrict_self, fd, 0) < 0)
                r = -errno;
        close(fd);
        return r;
}

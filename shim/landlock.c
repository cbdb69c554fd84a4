#include "shim/landlock.h"
#include "supervisor/places.h"

#include <errno.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ABI 2 and 3 rights, absent from older kernel headers. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ull << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ull << 14)
#endif

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

/* Writing the content of a file: what a device place (and a non-directory) may get. */
static uint64_t file_write_access(int abi)
{
        return LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
}

static int add_rules(int ruleset, int abi, const struct places *places, const int *fds)
{
        for (size_t i = 0; i < places->n; i++) {
                const struct place *pl = &places->v[i];
                struct landlock_path_beneath_attr rule = {.parent_fd = fds[i]};

                if (fds[i] < 0)
                        continue; /* vanished since the supervisor looked: nothing to allow */
                rule.allowed_access = pl->kind == PLACE_TREE && pl->dir ? landlock_write_access(abi)
                                                                         : file_write_access(abi);
                if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) <
                    0)
                        return -errno;
        }
        return 0;
}

int landlock_enter_domain(int abi, const struct places *places, const int *fds)
{
        /* Every write-type right this ABI knows is handled, so that whatever is not allowed
         * by a rule below is denied, whatever the uid. Reads, execution and IOCTL_DEV are
         * not handled: reads stay open until the virtual filesystem lands. */
        struct ruleset_attr attr = {.handled_access_fs = landlock_write_access(abi)};
        size_t size = sizeof(attr.handled_access_fs);
        int fd, r;

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
        r = add_rules(fd, abi, places, fds);
        if (r == 0 && syscall(SYS_landlock_restrict_self, fd, 0) < 0)
                r = -errno;
        close(fd);
        return r;
}

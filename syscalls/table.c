/* The table itself and O(1) lookup by number. */
#include "syscalls/table.h"

#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <string.h>

const struct syscall_row syscall_table[SC__COUNT] = {
#define SYSCALL_ROW(name_, nr_, nargs_, verdict_, err_, flags_, handler_)                          \
        [SC_##name_] = {.name = #name_,                                                            \
                        .nr = (nr_),                                                               \
                        .nargs = (nargs_),                                                         \
                        .verdict = V_##verdict_,                                                   \
                        .err = (err_),                                                             \
                        .flags = (flags_),                                                         \
                        .handler = (handler_)},
#include "syscalls/syscalls.def"
#undef SYSCALL_ROW
};

/* Number -> row index + 1 (0 = unknown). Built at compile time from the same rows. */
static const uint16_t by_nr[SYSCALL_NR_LIMIT] = {
#define SYSCALL_ROW(name_, nr_, nargs_, verdict_, err_, flags_, handler_) [nr_] = SC_##name_ + 1,
#include "syscalls/syscalls.def"
#undef SYSCALL_ROW
};

const struct syscall_row *syscall_lookup(uint32_t arch, int nr)
{
        if (arch != AUDIT_ARCH_X86_64 || nr < 0 || nr >= SYSCALL_NR_LIMIT || !by_nr[nr])
                return NULL;
        return &syscall_table[by_nr[nr] - 1];
}

const struct syscall_row *syscall_by_name(const char *name)
{
        for (size_t i = 0; i < SC__COUNT; i++)
                if (strcmp(syscall_table[i].name, name) == 0)
                        return &syscall_table[i];
        return NULL;
}

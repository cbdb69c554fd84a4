/* The table itself: every row resolves on x86_64 (libseccomp agrees with our number where it
 * knows the name), no number or name twice, every NOTIFY row has a handler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "syscalls/table.h"

#include <linux/audit.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static void rows_resolve(void **state)
{
        int known = 0;

        for (size_t i = 0; i < SC__COUNT; i++) {
                const struct syscall_row *row = &syscall_table[i];
                int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, row->name);

                /* libseccomp 2.5 predates the newest calls; where it knows one it must agree. */
                if (nr != __NR_SCMP_ERROR) {
                        if (nr != row->nr)
                                fail_msg("%s: table says %d, libseccomp says %d", row->name,
                                         row->nr, nr);
                        known++;
                }
                assert_true(row->nr >= 0 && row->nr < SYSCALL_NR_LIMIT);
                assert_ptr_equal(syscall_lookup(AUDIT_ARCH_X86_64, row->nr), row);
        }
        /* Guard against a libseccomp that knows nothing: most rows must be checked. */
        assert_true(known > 350);
}

static void no_duplicates(void **state)
{
        for (size_t i = 0; i < SC__COUNT; i++)
                for (size_t j = i + 1; j < SC__COUNT; j++) {
                        if (syscall_table[i].nr == syscall_table[j].nr)
                                fail_msg("number %d twice", syscall_table[i].nr);
                        if (strcmp(syscall_table[i].name, syscall_table[j].name) == 0)
                                fail_msg("name %s twice", syscall_table[i].name);
                }
}

static void handlers_exist(void **state)
{
        for (size_t i = 0; i < SC__COUNT; i++) {
                const struct syscall_row *row = &syscall_table[i];

                if (row->verdict == V_NOTIFY && !row->handler)
                        fail_msg("%s is NOTIFY without a handler", row->name);
                /* the xattr getters and getcwd are notified only where a cow mount is
                 * merged (filter.c) */
                if (row->verdict != V_NOTIFY && row->verdict != V_ARGS && row->handler &&
                    row->handler != fs_cow_xattr_get && row->handler != fs_cow_getcwd)
                        fail_msg("%s has a handler it can never reach", row->name);
                if (row->verdict == V_ERRNO && row->err <= 0)
                        fail_msg("%s is ERRNO without an errno", row->name);
                assert_true(row->nargs <= 6);
        }
}

/* Every number of the build host's kernel headers has a row (the table is complete). */
static void covers_headers(void **state)
{
        static const int header_nrs[] = {
#define X(n) n,
                X(__NR_read) X(__NR_openat2) X(__NR_pidfd_getfd) X(__NR_close_range)
                        X(__NR_faccessat2) X(__NR_process_madvise) X(__NR_epoll_pwait2)
                                X(__NR_mount_setattr) X(__NR_landlock_restrict_self)
                                        X(__NR_memfd_secret) X(__NR_process_mrelease)
                                                X(__NR_futex_waitv) X(__NR_set_mempolicy_home_node)
#undef X
        };
        for (size_t i = 0; i < sizeof(header_nrs) / sizeof(header_nrs[0]); i++)
                assert_non_null(syscall_lookup(AUDIT_ARCH_X86_64, header_nrs[i]));
        for (int nr = 0; nr <= __NR_set_mempolicy_home_node; nr++) {
                const char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
                if (name && !syscall_lookup(AUDIT_ARCH_X86_64, nr))
                        fail_msg("libseccomp knows %s (%d) but the table does not", name, nr);
                free((void *)name);
        }
        /* The 6.x additions that libseccomp 2.5 does not know. */
        static const struct {
                const char *name;
                int nr;
        } newer[] = {{"fchmodat2", 452},  {"map_shadow_stack", 453}, {"futex_wake", 454},
                     {"statmount", 457},  {"listmount", 458},        {"mseal", 462},
                     {"setxattrat", 463}, {"removexattrat", 466},    {"file_setattr", 469}};
        for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
                const struct syscall_row *row = syscall_by_name(newer[i].name);
                assert_non_null(row);
                assert_int_equal(row->nr, newer[i].nr);
        }
}

static void lookup_rejects_other_abis(void **state)
{
        assert_null(syscall_lookup(AUDIT_ARCH_I386, 20));
        assert_null(syscall_lookup(AUDIT_ARCH_X86_64, 0x40000000 | 39));
        assert_null(syscall_lookup(AUDIT_ARCH_X86_64, -1));
        assert_null(syscall_lookup(AUDIT_ARCH_X86_64, 400)); /* a gap */
        assert_non_null(syscall_lookup(AUDIT_ARCH_X86_64, 39));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(rows_resolve),
                cmocka_unit_test(no_duplicates),
                cmocka_unit_test(handlers_exist),
                cmocka_unit_test(covers_headers),
                cmocka_unit_test(lookup_rejects_other_abis),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

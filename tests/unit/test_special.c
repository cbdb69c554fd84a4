/* The /proc view's network interfaces without a sandbox (supervisor/vfs/special.h): where the
 * sandbox shares the host's network namespace, /proc/sys/net and /proc/net name lo alone. */
#include "supervisor/vfs/special.h"
#include "supervisor/util.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static bool in_tree(void *arg, pid_t pid)
{
        (void)arg;
        return pid == 100 || pid == 101;
}

/* The host's interfaces, as the supervisor would find them. */
static bool host_iface(void *arg, const char *name)
{
        (void)arg;
        return strcmp(name, "lo") == 0 || strcmp(name, "eth0") == 0 ||
               strcmp(name, "eth0.7") == 0 || strcmp(name, "bond0") == 0;
}

static void host_interfaces(void **state)
{
        static const struct {
                const char *rest;
                int err; /* with host_iface set; without it every path maps */
        } cases[] = {
                {"sys/net/ipv4/conf", 0},
                {"sys/net/ipv4/conf/all/forwarding", 0},
                {"sys/net/ipv4/conf/default", 0},
                {"sys/net/ipv4/conf/lo/rp_filter", 0},
                {"sys/net/ipv4/conf/eth0", -ENOENT},
                {"sys/net/ipv6/conf/eth0/disable_ipv6", -ENOENT},
                {"sys/net/ipv4/neigh/docker0/gc_stale_time", -ENOENT}, /* not asked: no "all" */
                {"sys/net/mpls/conf/x", -ENOENT},
                {"sys/net/ipv4/conf/eth0/../lo", 0},
                {"sys/net/ipv4/conf/lo/../eth0", -ENOENT},
                {"sys/net/ipv4/conf/a-name-longer-than-ifnamsiz", -ENOENT},
                {"sys/net/ipv4/tcp_rmem", 0},
                {"sys/net/conf/lo0", 0}, /* not beneath X/conf */
                {"net/dev_snmp6", 0},
                {"net/dev_snmp6/lo", 0},
                {"net/dev_snmp6/eth0", -ENOENT},
                {"self/net/vlan/eth0.7", -ENOENT},
                {"self/net/vlan/config", 0},
                {"thread-self/net/bonding/bond0", -ENOENT},
                {"101/task/101/net/dev_snmp6/eth0", -ENOENT},
                {"100/net/stat/arp_cache", 0},
                {"100/net/stat/eth0/x", -ENOENT},
                {"100/net/eth0", 0}, /* a file of /proc/net is no interface's */
                {"100/status", 0},
        };
        struct vfs_special_ctx host = {
                .tgid = 100, .tid = 101, .in_tree = in_tree, .host_iface = host_iface};
        struct vfs_special_ctx own = host;

        (void)state;
        own.host_iface = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct vfs_special sp;
                int r = vfs_proc_map(cases[i].rest, &host, &sp);

                if (r != cases[i].err)
                        fail_msg("\"%s\": %d, want %d", cases[i].rest, r, cases[i].err);
                if (vfs_proc_map(cases[i].rest, &own, &sp) != 0)
                        fail_msg("\"%s\" with a namespace of its own: not mapped", cases[i].rest);
        }
}

/* Which listings may hold such names: the directories right above them. */
static void listings(void **state)
{
        static const struct {
                const char *dir;
                bool names;
        } cases[] = {
                {"/proc/sys/net/ipv4/conf", true},
                {"/proc/sys/net/ipv6/neigh", true},
                {"/proc/sys/net/ipv4", false},
                {"/proc/sys/net/ipv4/conf/lo", false},
                {"/proc/100/net/dev_snmp6", true},
                {"/proc/100/task/101/net/vlan", true},
                {"/proc/100/net", false},
                {"/proc/100/net/stat/x", false},
                {"/proc/100/task/101", false},
                {"/proc", false},
                {"/proc/self/net/dev_snmp6", false}, /* the view names numbers, never self */
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                if (vfs_proc_net_dir(cases[i].dir) != cases[i].names)
                        fail_msg("%s: %d, want %d", cases[i].dir, !cases[i].names, cases[i].names);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(host_interfaces),
                cmocka_unit_test(listings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

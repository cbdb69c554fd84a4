/*
 * What the sandbox can learn of the host's network devices (issue 8; the third outside
 * review), judged by what it prints:
 *   - joining a multicast group is refused under the policy (a twin would join on the
 *     host's interfaces); under --net host it is allowed;
 *   - binding a socket to an interface (SO_BINDTOIFINDEX, SO_BINDTODEVICE) and the device
 *     ioctls (SIOCETHTOOL, MII, wireless) are refused on every socket, with or without a
 *     network namespace: through a twin of the host's namespace they named every host
 *     interface and read eth0's driver and permanent MAC (syscalls/filter.c);
 *   - with the namespace, /sys/class/net, /sys/devices/virtual/net and /proc/sys/net are the
 *     namespace's: lo alone (shim/netns.c netns_sysfs, the socket maker's opens); without
 *     one they are the host's, shown as lo alone all the same, as are /proc/net's files and
 *     subdirectories (the _no_netns variant);
 *   - the physical interfaces' directories beneath /sys/devices are hidden either way.
 */
#include "tests/helpers/runner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 60 };

static void run(const char *const opts[], const char *script, struct run_result *r)
{
        assert_int_equal(runner_stockade_sh("/tmp", opts, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

static void expect(struct run_result *r, const char *want)
{
        if (strcmp(r->out, want) != 0)
                fail_msg("exit %d\nwant:\n%sgot:\n%s\nstderr:\n%s", r->exit_code, want, r->out,
                         r->err);
}

/* The same lines natively show the calls are real. */
static void device_queries(void **state)
{
        static const char script[] =
                "python3 - <<'EOF'\n"
                "import errno, fcntl, socket, struct\n"
                "def t(name, f):\n"
                "    try:\n"
                "        f(); print(name + ':ok')\n"
                "    except OSError as e: print(name + ':' + errno.errorcode[e.errno])\n"
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "t('ifindex', lambda: s.setsockopt(socket.SOL_SOCKET, 62, struct.pack('i', 1)))\n"
                "t('device', lambda: s.setsockopt(socket.SOL_SOCKET, 25, b'lo'))\n"
                "t('ethtool', lambda: fcntl.ioctl(s, 0x8946, bytearray(40)))\n"
                "EOF\n";
        struct run_result r;

        (void)state;
        assert_int_equal(runner_run((char *const[]){"/bin/sh", "-c", (char *)script, NULL}, NULL,
                                    TIMEOUT_S, &r),
                         0);
        if (!strstr(r.out, "ifindex:ok\n"))
                print_message("  note: natively: %s", r.out);
        runner_free(&r);
        run(NULL, script, &r);
        expect(&r, "ifindex:EPERM\ndevice:EPERM\nethtool:ENOTSUP\n"); /* Python's name */
        runner_free(&r);
}

/* The socket-device ioctls beyond the interface view (ARP, bonding slaves, hardware time
 * stamps): on a UDP socket that became a twin of the host's namespace (or, without a
 * namespace, any socket) they read the host's neighbour table (an outside attack read the
 * gateway's MAC by SIOCGARP) and told its interface names by their errnos. Every name now
 * gets the same EOPNOTSUPP; natively the errnos differ by name. */
static void host_names(char *names, size_t size);

static void device_tables(void **state)
{
        char names[1024], script[4096], want[4096] = "";
        struct run_result r;

        (void)state;
        host_names(names, sizeof(names));
        snprintf(script, sizeof(script),
                 "python3 - lo nosuch0 %s<<'EOF'\n"
                 "import errno, fcntl, socket, struct, sys\n"
                 "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                 "s.sendto(b'x', ('127.0.0.1', 9))  # a twin where the namespace is\n"
                 "pa = struct.pack('HH4s8x', socket.AF_INET, 0, socket.inet_aton('127.0.0.1'))\n"
                 "for name in sys.argv[1:]:\n"
                 "    for what, req, arg in (\n"
                 "            ('arp', 0x8954, pa + bytes(36) + name.encode().ljust(16, b'\\0')),\n"
                 "            ('slave', 0x8989, name.encode().ljust(40, b'\\0')),\n"
                 "            ('hwtstamp', 0x89b1, name.encode().ljust(40, b'\\0'))):\n"
                 "        try:\n"
                 "            fcntl.ioctl(s, req, bytearray(arg)); print(what, 'ok')\n"
                 "        except OSError as e: print(what, errno.errorcode[e.errno])\n"
                 "EOF\n",
                 names);
        /* lo, nosuch0, then each host name: the same answer for all */
        for (const char *w = "x x "; *w; w += 2)
                strcat(want, "arp ENOTSUP\nslave ENOTSUP\nhwtstamp ENOTSUP\n");
        for (const char *c = names; *c; c++)
                if (*c == ' ')
                        strcat(want, "arp ENOTSUP\nslave ENOTSUP\nhwtstamp ENOTSUP\n");
        run((const char *[]){"--allow-net", "udp/127.0.0.1:9", NULL}, script, &r);
        expect(&r, want);
        runner_free(&r);
}

/* Joining a multicast group on a UDP socket that became a twin of the host's namespace
 * joined on the host's interfaces (the LAN's mDNS and SSDP then reached the sandbox):
 * refused under the policy, in both modes; under --net host the join is the host's. */
static void multicast_joins(void **state)
{
        static const char script[] =
                "python3 - <<'EOF'\n"
                "import errno, socket, struct\n"
                "def t(name, f):\n"
                "    try:\n"
                "        f(); print(name + ':ok')\n"
                "    except OSError as e: print(name + ':' + errno.errorcode[e.errno])\n"
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "mreq = socket.inet_aton('239.255.255.250') + socket.inet_aton('127.0.0.1')\n"
                "t('join4', lambda: s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, "
                "mreq))\n"
                "s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
                "m6 = socket.inet_pton(socket.AF_INET6, 'ff02::fb') + struct.pack('I', 1)\n"
                "t('join6', lambda: s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, "
                "m6))\n"
                "EOF\n";
        const char *host[] = {"--net", "host", NULL};
        struct run_result r;

        (void)state;
        run(NULL, script, &r);
        expect(&r, "join4:EPERM\njoin6:EPERM\n");
        runner_free(&r);
        run(host, script, &r);
        if (strstr(r.out, "join4:EPERM") || strstr(r.out, "join6:EPERM"))
                fail_msg("--net host refused a join:\n%s%s", r.out, r.err);
        runner_free(&r);
}

/* With the namespace only (skipped, said, without one). */
static void namespace_views(void **state)
{
        static const char script[] = "ls /sys/class/net | tr '\\n' ' '; echo; "
                                     "ls /sys/devices/virtual/net | tr '\\n' ' '; echo; "
                                     "ls /proc/sys/net/ipv4/conf | tr '\\n' ' '; echo";
        const char *v[] = {"-v", NULL};
        struct run_result r;

        (void)state;
        run(v, "true", &r);
        if (!strstr(r.err, "network namespace            yes")) {
                print_message("  skipped: no network namespace on this run\n");
                runner_free(&r);
                skip();
        }
        runner_free(&r);
        assert_int_equal(runner_run((char *const[]){"/bin/sh", "-c", (char *)script, NULL}, NULL,
                                    TIMEOUT_S, &r),
                         0);
        if (strncmp(r.out, "lo \n", 4) == 0)
                print_message("  note: this host has lo alone: the check proves little\n");
        runner_free(&r);
        run(NULL, script, &r);
        expect(&r, "lo \nlo \nall default lo \n");
        runner_free(&r);
}

/* The host's physical interfaces beneath /sys/devices (name, MAC, driver) are hidden, with or
 * without the namespace, by every path: /sys/class/net, the device's own, /sys/bus. Judged by
 * the MAC addresses the host shows natively. */
static void physical_devices_hidden(void **state)
{
        static const char native[] =
                "for i in /sys/class/net/*; do r=$(realpath $i); case $r in "
                "/sys/devices/virtual/*) ;; /sys/devices/*) cat $r/address;; esac; done";
        static const char script[] =
                "for i in /sys/class/net/*; do cat $i/address; done 2>/dev/null; "
                "cat /sys/bus/*/devices/*/net/*/address /sys/bus/*/devices/*/*/net/*/address "
                "2>/dev/null; find /sys/devices -path '*/net/*' -name address 2>/dev/null | "
                "grep -v '^/sys/devices/virtual/' | xargs -r cat; echo finished";
        struct run_result r;
        char macs[512];

        (void)state;
        assert_int_equal(runner_run((char *const[]){"/bin/sh", "-c", (char *)native, NULL}, NULL,
                                    TIMEOUT_S, &r),
                         0);
        snprintf(macs, sizeof(macs), "%s", r.out);
        runner_free(&r);
        if (!macs[0]) {
                print_message("  skipped: this host has no physical network interface\n");
                skip();
        }
        run(NULL, script, &r);
        for (char *save = NULL, *mac = strtok_r(macs, "\n", &save); mac;
             mac = strtok_r(NULL, "\n", &save))
                if (strcmp(mac, "00:00:00:00:00:00") != 0 && strstr(r.out, mac))
                        fail_msg("the host's MAC %s showed:\n%s%s", mac, r.out, r.err);
        if (!strstr(r.out, "finished"))
                fail_msg("the script did not finish:\n%s%s", r.out, r.err);
        runner_free(&r);
}

/* /proc/net shows no host connection, interface or address, with or without the namespace
 * (without it the files are the host's, filtered: syscalls/fs_procnet.c). Judged by a
 * listener the test holds on the host's loopback and by the host's interface names. */
static void proc_net_shows_no_host(void **state)
{
        static const char script[] =
                "cat /proc/net/tcp /proc/net/tcp6 /proc/self/net/tcp /proc/net/unix "
                "/proc/net/dev /proc/net/if_inet6 /proc/net/fib_trie /proc/net/route "
                "/proc/net/arp /proc/net/igmp /proc/net/dev_mcast 2>/dev/null; echo finished";
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char port[16], names[1024] = "";
        struct run_result r;

        (void)state;
        assert_true(l >= 0);
        assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(l, 1), 0);
        assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
        snprintf(port, sizeof(port), ":%04X ", ntohs(a.sin_port));
        assert_int_equal(runner_run((char *const[]){"/bin/sh", "-c", "ls /sys/class/net", NULL},
                                    NULL, TIMEOUT_S, &r),
                         0);
        snprintf(names, sizeof(names), "%s", r.out);
        runner_free(&r);
        run(NULL, script, &r);
        close(l);
        if (strstr(r.out, port))
                fail_msg("the host's listener (%s) shows in /proc/net:\n%s", port, r.out);
        for (char *save = NULL, *n = strtok_r(names, "\n", &save); n;
             n = strtok_r(NULL, "\n", &save)) {
                char field[64];

                snprintf(field, sizeof(field), " %s", n);
                if (strcmp(n, "lo") != 0 && strstr(r.out, field))
                        fail_msg("the host's interface %s shows in /proc/net:\n%s", n, r.out);
        }
        if (!strstr(r.out, " lo:") || !strstr(r.out, "finished"))
                fail_msg("/proc/net/dev lacks lo, or the script did not finish:\n%s%s", r.out,
                         r.err);
        runner_free(&r);
}

/* A directory of /proc/net that the program holds keeps working after its name is looked up
 * again: procfs then prints its path with " (deleted)" (fs_common.c, proc_undeleted), and
 * every open relative to it failed with ENOENT (grep -r /proc/net, which stats each directory
 * it enters, read none of stat/ nor dev_snmp6/). In both modes: natively it works. */
static void proc_net_relative(void **state)
{
        static const char script[] =
                "python3 - <<'EOF'\n"
                "import errno, os\n"
                "def t(name, f):\n"
                "    try:\n"
                "        f(); print(name + ':ok')\n"
                "    except OSError as e: print(name + ':' + errno.errorcode[e.errno])\n"
                "d = os.open('/proc/net/stat', os.O_RDONLY | os.O_DIRECTORY)\n"
                "os.stat('/proc/net/stat')\n"
                "t('open', lambda: os.close(os.open('rt_cache', os.O_RDONLY, dir_fd=d)))\n"
                "t('nofollow', lambda: os.close(os.open('rt_cache', os.O_RDONLY | os.O_NOFOLLOW, "
                "dir_fd=d)))\n"
                "t('stat', lambda: os.stat('rt_cache', dir_fd=d))\n"
                "os.fchdir(d)\n"
                "os.stat('/proc/net/stat')\n"
                "t('cwd', lambda: open('rt_cache').close())\n"
                "EOF\n"
                "grep -rl . /proc/net/stat | grep -c rt_cache";
        struct run_result r;

        (void)state;
        run(NULL, script, &r);
        expect(&r, "open:ok\nnofollow:ok\nstat:ok\ncwd:ok\n1\n");
        runner_free(&r);
}

/* The host's interface names, but lo, natively (ls /sys/class/net), space-separated. */
static void host_names(char *names, size_t size)
{
        struct run_result r;

        assert_int_equal(
                runner_run((char *const[]){"/bin/sh", "-c",
                                           "ls /sys/class/net | grep -vx lo | tr '\\n' ' '", NULL},
                           NULL, TIMEOUT_S, &r),
                0);
        snprintf(names, size, "%s", r.out);
        runner_free(&r);
        if (!names[0])
                print_message("  note: this host has lo alone: the check proves little\n");
}

/* Whether every word of `out` is one of the NULL-terminated `words`. */
static bool only_words(const char *out, const char *const words[])
{
        char copy[8192];

        snprintf(copy, sizeof(copy), "%s", out);
        for (char *save = NULL, *w = strtok_r(copy, " \n", &save); w;
             w = strtok_r(NULL, " \n", &save)) {
                size_t i = 0;

                while (words[i] && strcmp(words[i], w) != 0)
                        i++;
                if (!words[i])
                        return false;
        }
        return true;
}

/*
 * Run `listing`, then `by_name` for each host interface but lo (as $n), and judge what they
 * print: the listing may hold nothing but `words` and must hold `want`, and no line that
 * `by_name` prints may name $n (each line that does is shown).
 */
static void names_check(const char *listing, const char *by_name, const char *const words[],
                        const char *want)
{
        char names[1024], script[8192];
        struct run_result r;
        int n;

        host_names(names, sizeof(names));
        n = snprintf(script, sizeof(script),
                     "%s; for n in %s; do (%s) 2>/dev/null | grep -w $n | head -3; done; "
                     "echo finished",
                     listing, names, by_name);
        assert_true(n > 0 && (size_t)n < sizeof(script));
        run(NULL, script, &r);
        if (!only_words(r.out, words) || !strstr(r.out, want) || !strstr(r.out, "finished"))
                fail_msg("a host interface (of %s) shows:\n%s%s", names, r.out, r.err);
        runner_free(&r);
}

/* /proc/sys/net's conf and neigh directories and the subdirectories of /proc/net (dev_snmp6,
 * vlan, bonding) list the host's interfaces where the sandbox has no namespace: lo alone now,
 * as the netlink view shows, by a listing, an open or stat by name, and a listing through a
 * directory held across another look-up of its name (fs_dir.c). The same with a namespace. */
static void proc_interface_names(void **state)
{
        static const char *const words[] = {"all", "default", "lo", "finished", NULL};

        (void)state;
        names_check("for d in /proc/sys/net/ipv4/conf /proc/sys/net/ipv6/conf "
                    "/proc/sys/net/ipv4/neigh /proc/sys/net/ipv6/neigh /proc/net/dev_snmp6; do "
                    "[ -d $d ] && ls $d | tr '\\n' ' '; echo; done; "
                    "python3 -c \"import os; d = os.open('/proc/net/dev_snmp6', os.O_RDONLY); "
                    "os.stat('/proc/net/dev_snmp6'); print(' '.join(os.listdir(d)))\"",
                    "ls -R /proc/net/ /proc/sys/net; "
                    "stat -c %n /proc/sys/net/ipv4/conf/$n /proc/sys/net/ipv6/neigh/$n; "
                    "cat /proc/net/dev_snmp6/$n /proc/self/net/vlan/$n",
                    words, "all default lo");
}

/* /sys/class/net and /sys/devices/virtual/net named every host interface where the sandbox
 * has no namespace (a VPN's tun0, docker0 and its veths): lo alone now, by a listing, an
 * open or stat by name and a path relative to a directory there (walls.c, hide_net_devices).
 * The same with a namespace (its own sysfs). */
static void sys_interface_names(void **state)
{
        static const char *const words[] = {"lo", "finished", NULL};

        (void)state;
        names_check("ls /sys/class/net; ls /sys/devices/virtual/net",
                    "ls -la /sys/class/net /sys/devices/virtual/net; "
                    "stat -c %n /sys/class/net/$n /sys/devices/virtual/net/$n; "
                    "cat /sys/class/net/$n/mtu /sys/devices/virtual/net/$n/ifindex; "
                    "cd /sys/class/net && cat $n/mtu && echo $n",
                    words, "lo\nlo\n");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(device_queries),          cmocka_unit_test(device_tables),
                cmocka_unit_test(multicast_joins),         cmocka_unit_test(namespace_views),
                cmocka_unit_test(physical_devices_hidden), cmocka_unit_test(proc_net_shows_no_host),
                cmocka_unit_test(proc_net_relative),       cmocka_unit_test(proc_interface_names),
                cmocka_unit_test(sys_interface_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

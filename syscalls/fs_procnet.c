/*
 * /proc/net where the sandbox has no network namespace of its own (a host without user
 * namespaces): the files are the host's, and tell its connections (tcp, udp: every local and
 * remote address and port, with the owner's uid), its unix sockets' paths, its interfaces,
 * addresses, routes and neighbours. The netlink view shows the sandbox `lo` alone; these
 * files now show what that view shows, and no host address (issue 8, item 6):
 *
 *   the socket tables and route, arp, igmp, ptype ...   their header line, no entry
 *   dev                                                 its two header lines and lo's line
 *   if_inet6, igmp6                                     lo's ::1 and all-nodes groups
 *   snmp, snmp6, netstat, sockstat(6), protocols, ...   as they are (counters, no address)
 *   anything else (fib_trie lists every local address,  empty
 *   ipv6_route every route: the view has none)
 *   stat/NAME (per-CPU counters), dev_snmp6/lo          as they are
 *   anything else beneath a subdirectory (vlan/config,  empty
 *   netfilter/, rpc/ and nfsfs/ list addresses)
 *   DIR/NAME where NAME is a host interface but lo      absent (vfs_proc_net_hidden: an
 *                                                       open finds nothing, a listing
 *                                                       leaves it out)
 *
 * The program gets a sealed memfd with that text, whatever way it opened the file (a path,
 * /proc/self/net, a reopen of an O_PATH fd through /proc/self/fd/N): the filter is applied to
 * the file an open found, by what it is, not by the path asked for. With the namespace the
 * files are the namespace's (its own lo and sockets) and pass as they are.
 */
#include "syscalls/fs_common.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum procnet_kind { PN_EMPTY, PN_HEADER, PN_DEV, PN_LO_ONLY, PN_PASS };

static const struct {
        const char *name;
        enum procnet_kind kind;
} procnet_files[] = {
        {"tcp", PN_HEADER},        {"tcp6", PN_HEADER},      {"udp", PN_HEADER},
        {"udp6", PN_HEADER},       {"udplite", PN_HEADER},   {"udplite6", PN_HEADER},
        {"raw", PN_HEADER},        {"raw6", PN_HEADER},      {"icmp", PN_HEADER},
        {"icmp6", PN_HEADER},      {"unix", PN_HEADER},      {"packet", PN_HEADER},
        {"netlink", PN_HEADER},    {"route", PN_HEADER},     {"arp", PN_HEADER},
        {"igmp", PN_HEADER},       {"mcfilter", PN_HEADER},  {"mcfilter6", PN_HEADER},
        {"ptype", PN_HEADER},      {"rt_cache", PN_HEADER},  {"wireless", PN_HEADER},
        {"dev", PN_DEV},           {"if_inet6", PN_LO_ONLY}, {"igmp6", PN_LO_ONLY},
        {"snmp", PN_PASS},         {"snmp6", PN_PASS},       {"netstat", PN_PASS},
        {"sockstat", PN_PASS},     {"sockstat6", PN_PASS},   {"protocols", PN_PASS},
        {"softnet_stat", PN_PASS}, {"psched", PN_PASS},      {"rt6_stats", PN_PASS},
        {"fib_triestat", PN_PASS}, {"stat/*", PN_PASS},      {"dev_snmp6/lo", PN_PASS},
};

/* The NAME of a host path /proc/PID[/task/TID]/net/NAME (DIR/NAME beneath a subdirectory),
 * or NULL. */
static const char *procnet_name(const char *path)
{
        const char *p = fs_proc_task_rest(path);

        if (!p || strncmp(p, "/net/", 5) != 0 || !p[5])
                return NULL;
        return p + 5;
}

/* What every lo has, and nothing more: ::1, and the all-nodes groups it joins. The host may
 * put its own addresses on lo (anycast and service addresses, a /128 per node), and a host
 * process may join groups there: lines naming lo are not enough (an outside review read a
 * planted fd00::/128 and an ff15:: group so). */
static bool lo_own(const char *line, size_t len)
{
        static const char *const own[] = {
                "00000000000000000000000000000001", /* ::1 */
                "ff020000000000000000000000000001", /* ff02::1 */
                "ff010000000000000000000000000001", /* ff01::1 */
        };

        for (size_t i = 0; i < ARRAY_SIZE(own); i++)
                if (memmem(line, len, own[i], strlen(own[i])))
                        return true;
        return false;
}

/* Whether the line holds the whitespace-separated field "lo". */
static bool names_lo(const char *line, size_t len)
{
        for (size_t i = 0; i + 2 <= len; i++)
                if (line[i] == 'l' && line[i + 1] == 'o' &&
                    (i == 0 || isspace((unsigned char)line[i - 1])) &&
                    (i + 2 == len || isspace((unsigned char)line[i + 2]) || line[i + 2] == ':'))
                        return true;
        return false;
}

/* The lines of `in` that `kind` keeps, appended to `out` (out has room for all of in). */
static size_t filter(enum procnet_kind kind, const char *in, size_t n, char *out)
{
        size_t used = 0, line = 0;

        if (kind == PN_PASS) {
                memcpy(out, in, n);
                return n;
        }
        for (size_t at = 0; at < n; line++) {
                const char *nl = memchr(in + at, '\n', n - at);
                size_t len = nl ? (size_t)(nl - (in + at)) + 1 : n - at;
                bool keep = (kind == PN_HEADER && line == 0) ||
                            (kind == PN_DEV && (line < 2 || names_lo(in + at, len))) ||
                            (kind == PN_LO_ONLY && names_lo(in + at, len) && lo_own(in + at, len));

                if (keep) {
                        memcpy(out + used, in + at, len);
                        used += len;
                }
                at += len;
        }
        return used;
}

int fs_procnet_view(const struct supervisor *sup, int flags, int fd, const struct stat *st)
{
        enum procnet_kind kind = PN_EMPTY;
        char path[PATH_MAX], *in = NULL, *out;
        const char *name;
        ssize_t n;
        int r;

        /* With the namespace the files are the sandbox's own. */
        if (sup->netns.chan >= 0 || !fs_proc_file(sup, fd, st, path))
                return fd;
        name = procnet_name(path);
        if (!name)
                return fd;
        if ((flags & O_ACCMODE) != O_RDONLY) {
                close(fd);
                return -EACCES;
        }
        /* The view found no such name (vfs_proc_map); judged again on what was opened. */
        if (vfs_proc_net_hidden(path, &(struct vfs_special_ctx){.host_iface = fs_host_iface})) {
                close(fd);
                return -ENOENT;
        }
        for (size_t i = 0; i < ARRAY_SIZE(procnet_files); i++)
                if (fnmatch(procnet_files[i].name, name, FNM_PATHNAME) == 0)
                        kind = procnet_files[i].kind;
        n = kind == PN_EMPTY ? 0 : fs_slurp(fd, &in);
        close(fd);
        if (n < 0)
                return (int)n;
        out = xrealloc(NULL, (size_t)n + 1);
        r = fs_sealed_memfd(name, out, filter(kind, in ? in : "", (size_t)n, out));
        free(in);
        free(out);
        return r;
}

/*
 * The interface ioctls (SIOCGIFCONF, SIOCGIFNAME, SIOCGIFINDEX, SIOCGIFADDR, ...): answered
 * by the supervisor from the same view as NETLINK_ROUTE (supervisor/net/nlview.h): one
 * interface, lo, index 1, 127.0.0.1/8 (and 127.0.0.2/8 for SIOCGIFCONF). In the kernel they would list the host's interfaces
 * and addresses (an outside review read eth0's address and MAC with them).
 *
 * The fd must be a socket, as for the kernel (ENOTTY otherwise); it is taken and looked at,
 * never used. The struct ifreq or ifconf is copied once, answered from the copy, written
 * back; nothing is continued.
 */
#include "syscalls/net.h"
#include "supervisor/notify.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

bool net_ifreq_cmd(unsigned long cmd)
{
        switch (cmd) {
        case SIOCGIFCONF:
        case SIOCGIFNAME:
        case SIOCGIFINDEX:
        case SIOCGIFFLAGS:
        case SIOCGIFADDR:
        case SIOCGIFDSTADDR:
        case SIOCGIFBRDADDR:
        case SIOCGIFNETMASK:
        case SIOCGIFMTU:
        case SIOCGIFHWADDR:
        case SIOCGIFMETRIC:
        case SIOCGIFTXQLEN:
        case SIOCGIFMAP:
                return true;
        }
        return false;
}

static void inet(struct sockaddr *sa, uint32_t addr)
{
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(addr)};

        memcpy(sa, &sin, sizeof(sin));
}

/* One ifreq, answered for lo; -ENODEV for any other name. */
static int answer(unsigned long cmd, struct ifreq *ifr)
{
        if (cmd == SIOCGIFNAME) {
                if (ifr->ifr_ifindex != 1)
                        return -ENODEV;
                memset(ifr->ifr_name, 0, sizeof(ifr->ifr_name));
                memcpy(ifr->ifr_name, "lo", 2);
                return 0;
        }
        if (strncmp(ifr->ifr_name, "lo", sizeof(ifr->ifr_name)) != 0)
                return -ENODEV;
        memset(&ifr->ifr_ifru, 0, sizeof(ifr->ifr_ifru));
        switch (cmd) {
        case SIOCGIFINDEX:
                ifr->ifr_ifindex = 1;
                break;
        case SIOCGIFFLAGS:
                ifr->ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
                break;
        case SIOCGIFADDR:
        case SIOCGIFDSTADDR:
                inet(&ifr->ifr_addr, INADDR_LOOPBACK);
                break;
        case SIOCGIFBRDADDR:
                inet(&ifr->ifr_broadaddr, 0);
                break;
        case SIOCGIFNETMASK:
                inet(&ifr->ifr_netmask, 0xff000000u);
                break;
        case SIOCGIFMTU:
                ifr->ifr_mtu = 65536;
                break;
        case SIOCGIFHWADDR:
                ifr->ifr_hwaddr.sa_family = ARPHRD_LOOPBACK;
                break;
        case SIOCGIFTXQLEN:
                ifr->ifr_qlen = 1000;
                break;
        case SIOCGIFMETRIC: /* 0, and SIOCGIFMAP: all zero */
        case SIOCGIFMAP:
                break;
        }
        return 0;
}

/* SIOCGIFCONF on the copy `ifc`: the size wanted (a NULL buffer), or lo's IPv4 addresses as
 * far as they fit (whole entries only, as the kernel writes them): 127.0.0.1 and 127.0.0.2,
 * both labelled lo, as in the netlink view (supervisor/net/nlview.c). */
static int conf(pid_t tid, uint64_t arg, struct ifconf *ifc)
{
        static const uint32_t addrs[] = {INADDR_LOOPBACK, INADDR_LOOPBACK + 1};
        struct ifreq lo[2];
        size_t n = sizeof(addrs) / sizeof(*addrs);
        int r = 0;

        memset(lo, 0, sizeof(lo));
        for (size_t i = 0; i < n; i++) {
                memcpy(lo[i].ifr_name, "lo", 2);
                inet(&lo[i].ifr_addr, addrs[i]);
        }
        if (!ifc->ifc_buf) {
                ifc->ifc_len = (int)sizeof(lo);
        } else {
                if (ifc->ifc_len < (int)sizeof(lo))
                        n = ifc->ifc_len < 0 ? 0 : (size_t)ifc->ifc_len / sizeof(*lo);
                if (n > 0)
                        r = tmem_write(tid, (uint64_t)(uintptr_t)ifc->ifc_buf, lo, n * sizeof(*lo));
                ifc->ifc_len = (int)(n * sizeof(*lo));
        }
        return r < 0 ? r : tmem_write(tid, arg, ifc, sizeof(*ifc));
}

int net_ifreq(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        unsigned long cmd = (unsigned long)(unsigned)a[1];
        struct ifconf ifc;
        struct ifreq ifr;
        struct stat st;
        int fd = tfd_take(tid, (int)a[0]), r = 0;

        if (fd < 0) {
                call_fail(call, -fd);
                return 0;
        }
        if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                r = -ENOTTY; /* as for any file the ioctl does not fit */
        close(fd);
        if (r == 0)
                r = cmd == SIOCGIFCONF ? tmem_read(tid, a[2], &ifc, sizeof(ifc))
                                       : tmem_read(tid, a[2], &ifr, sizeof(ifr));
        /* The fd and the copy are the caller's, and its memory may be written, only if it
         * still waits for this answer (its tid not reused meanwhile). */
        if (r == 0 && tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r == 0 && cmd == SIOCGIFCONF)
                r = conf(tid, a[2], &ifc);
        else if (r == 0 && (r = answer(cmd, &ifr)) == 0)
                r = tmem_write(tid, a[2], &ifr, sizeof(ifr));
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
        return 0;
}

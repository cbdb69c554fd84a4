/*
 * A network namespace of the sandbox's own (netns.h). A new namespace has one interface,
 * lo, and it is down: connect to 127.0.0.1 would fail with ENETUNREACH and bind with
 * EADDRNOTAVAIL, so it is brought up here (SIOCSIFFLAGS, as `ip link set lo up` does).
 */
#include "shim/netns.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int netns_enter(const char **step)
{
        struct ifreq ifr;
        int fd, r = 0;

        *step = "unshare(CLONE_NEWNET)";
        if (unshare(CLONE_NEWNET) < 0)
                return -errno;
        *step = "bring the loopback up";
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        memset(&ifr, 0, sizeof(ifr));
        strcpy(ifr.ifr_name, "lo");
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                r = -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                r = -errno;
        close(fd);
        return r;
}

int netns_join(int fd, const char **step)
{
        int r = 0;

        *step = "setns(CLONE_NEWNET)";
        if (setns(fd, CLONE_NEWNET) < 0)
                r = -errno;
        close(fd);
        return r;
}

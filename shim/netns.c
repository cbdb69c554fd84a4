/*
 * A network namespace of the sandbox's own (netns.h). A new namespace has one interface,
 * lo, and it is down: connect to 127.0.0.1 would fail with ENETUNREACH and bind with
 * EADDRNOTAVAIL, so it is brought up here (SIOCSIFFLAGS, as `ip link set lo up` does).
 */
#include "shim/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/syscall.h>
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

void netns_sysfs(void)
{
        static const char *const dirs[] = {"class/net", "devices/virtual/net"};
        int fs = (int)syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC), mnt = -1;

        if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
                mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                           MOUNT_ATTR_NOEXEC);
        for (size_t i = 0; mnt >= 0 && i < sizeof(dirs) / sizeof(*dirs); i++) {
                int tree = (int)syscall(SYS_open_tree, mnt, dirs[i],
                                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                char at[64];

                snprintf(at, sizeof(at), "/sys/%s", dirs[i]);
                if (tree >= 0) {
                        syscall(SYS_move_mount, tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH);
                        close(tree);
                }
        }
        if (mnt >= 0)
                close(mnt);
        if (fs >= 0)
                close(fs);
}

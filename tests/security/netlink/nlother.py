"""Netlink sockets other than NETLINK_ROUTE are refused as before the view: SOCK_RAW with
EPERM, SOCK_DGRAM with EAFNOSUPPORT. Exits 1 with a line per socket that was not."""

import errno
import socket
import sys

NETLINK_SOCK_DIAG, NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT = 4, 9, 15
fails = 0
for proto in (NETLINK_SOCK_DIAG, NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT):
    for kind, want in ((socket.SOCK_RAW, errno.EPERM), (socket.SOCK_DGRAM, errno.EAFNOSUPPORT)):
        try:
            socket.socket(socket.AF_NETLINK, kind, proto).close()
            got = 0
        except OSError as e:
            got = e.errno
        if got != want:
            print(f"FAIL: netlink protocol {proto} type {kind}: errno {got}, want {want}")
            fails += 1
print("nlother failures", fails)
sys.exit(1 if fails else 0)

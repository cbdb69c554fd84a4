"""The host's own addresses, loopback aside, one a line: what the sandbox must never see.

Not the view's own link-local fe80::1 either: a host may give its lo that very address (one
did, nodad), which the sandbox then sees as its view's, not as the host's.

IPv4 from SIOCGIFCONF, IPv6 from /proc/net/if_inet6: neither needs netlink nor iproute2.
"""

import array
import fcntl
import ipaddress
import socket
import struct

SIOCGIFCONF = 0x8912
VIEW = {ipaddress.ip_address("fe80::1")}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
buf = array.array("B", bytes(40 * 64))
ifc = struct.pack("iL", len(buf), buf.buffer_info()[0])
n = struct.unpack("iL", fcntl.ioctl(s.fileno(), SIOCGIFCONF, ifc))[0]
raw = buf.tobytes()[:n]
for off in range(0, n, 40):  # struct ifreq: 16 bytes of name, then the sockaddr
    a = ipaddress.ip_address(raw[off + 20 : off + 24])
    if not a.is_loopback:
        print(a)
try:
    with open("/proc/net/if_inet6") as f:
        for line in f:
            a = ipaddress.ip_address(bytes.fromhex(line.split()[0]))
            if not a.is_loopback and a not in VIEW:
                print(a)
except FileNotFoundError:
    pass

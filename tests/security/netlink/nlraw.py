"""A raw NETLINK_ROUTE exchange, as Go's syscall.NetlinkRIB and iproute2 make it.

Usage: nlraw.py view|native. `view` (under stockade) also checks that the answers show lo
alone and that a state-changing request fails with EPERM; `native` checks only the
protocol (sequence numbers, port ids, errors), so that the test's expectations are those of
the real kernel. Every address received is printed (`addr ...`), for the leak check.
Exits 1 with a line per failed check.
"""

import ctypes
import errno
import socket
import struct
import sys

AF_NETLINK, NETLINK_ROUTE = 16, 0
NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_GETLINK, RTM_NEWADDR, RTM_GETADDR, RTM_GETROUTE = 16, 18, 20, 22, 26
F_REQUEST, F_MULTI, F_ACK, F_DUMP, F_CREATE, F_EXCL = 1, 2, 4, 0x300, 0x400, 0x200
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40
IFLA_ADDRESS, IFLA_IFNAME, IFLA_MTU = 1, 3, 4
IFA_ADDRESS, IFA_LOCAL = 1, 2

mode = sys.argv[1]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


def attrs(data):
    """The rtattrs of `data`: {type: payload} (the first of each type)."""
    out, off = {}, 0
    while off + 4 <= len(data):
        length, typ = struct.unpack_from("=HH", data, off)
        if length < 4 or off + length > len(data):
            break
        out.setdefault(typ & 0x3FFF, data[off + 4 : off + length])
        off += (length + 3) & ~3
    return out


def messages(buf):
    off = 0
    while off + 16 <= len(buf):
        length, typ, flags, seq, pid = struct.unpack_from("=IHHII", buf, off)
        if length < 16 or off + length > len(buf):
            check(False, f"a malformed reply: len {length} at {off} of {len(buf)}")
            return
        yield typ, flags, seq, pid, buf[off + 16 : off + length]
        off += (length + 3) & ~3


def request(typ, flags, seq, body):
    return struct.pack("=IHHII", 16 + len(body), typ, flags | F_REQUEST, seq, 0) + body


def exchange(s, port, seq, until=(NLMSG_DONE, NLMSG_ERROR)):
    """The messages answering request `seq`, read a page at a time until one of a type in
    `until` came (a dump: NLMSG_DONE; a request with an ACK: NLMSG_ERROR)."""
    got = []
    while not any(t in until for t, f, b in got):
        buf = s.recv(4096)  # a page, as Go and glibc read
        check(len(buf) >= 16, f"seq {seq}: a datagram of {len(buf)} bytes")
        if len(buf) < 16:
            return got
        for typ, flags, mseq, pid, body in messages(buf):
            check(mseq == seq, f"seq {seq}: a reply with seq {mseq}")
            check(pid == port, f"seq {seq}: a reply with pid {pid}, the port is {port}")
            if typ == NLMSG_DONE:
                check(len(body) >= 4, "NLMSG_DONE without its int (iproute2 wants it)")
            got.append((typ, flags, body))
    return got


def error_of(got):
    errs = [struct.unpack_from("=i", b)[0] for t, f, b in got if t == NLMSG_ERROR]
    return errs[-1] if errs else None


def show_addr(family, raw):
    return socket.inet_ntop(family, raw)


libc = ctypes.CDLL(None, use_errno=True)


def raw_sockname(s):
    buf = ctypes.create_string_buffer(b"\xff" * 64, 64)
    length = ctypes.c_uint32(64)
    r = libc.getsockname(s.fileno(), buf, ctypes.byref(length))
    check(r == 0, f"getsockname: errno {ctypes.get_errno()}")
    return length.value, struct.unpack_from("=HHII", buf.raw)


s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
length, (family, _, port0, _) = raw_sockname(s)
check(family == AF_NETLINK and length == 12 and port0 == 0, f"unbound: {length} {family} {port0}")
s.bind((0, 0))
length, (family, _, port, groups) = raw_sockname(s)
check(length == 12, f"getsockname's length {length}, want 12")
check(family == AF_NETLINK, f"getsockname's family {family}, want AF_NETLINK")
check(port != 0, "no port id after bind")
check(s.getsockname() == (port, 0), f"python's getsockname {s.getsockname()}")

# Go's NetlinkRIB: a 17-byte RTM_GETADDR dump (rtgenmsg), sendto the kernel's address, seq 1.
req = struct.pack("=IHHIIB", 17, RTM_GETADDR, F_DUMP | F_REQUEST, 1, 0, socket.AF_UNSPEC)
check(s.sendto(req, (0, 0)) == 17, "sendto's count")
# The source of a reply, as glibc and iproute2 read it: 12 bytes, nl_pid 0 (the kernel).
name = ctypes.create_string_buffer(b"\xff" * 32, 32)
namelen = ctypes.c_uint32(32)
page = ctypes.create_string_buffer(4096)
n = libc.recvfrom(s.fileno(), page, 4096, 0, name, ctypes.byref(namelen))
check(n >= 16, f"recvfrom: {n}, errno {ctypes.get_errno()}")
check(namelen.value == 12, f"the source's length {namelen.value}, want 12 (iproute2 exits else)")
check(struct.unpack_from("=I", name.raw, 4)[0] == 0, "the source's nl_pid is not 0 (glibc skips)")
buf, addrs = page.raw[:n], set()
while True:
    done = False
    for typ, flags, mseq, pid, body in messages(buf):
        check(mseq == 1 and pid == port, f"RTM_GETADDR: seq {mseq} pid {pid}, port {port}")
        if typ == NLMSG_DONE:
            done = True
            break
        check(typ == RTM_NEWADDR and flags & F_MULTI, f"RTM_GETADDR: type {typ} flags {flags}")
        fam, plen, _, scope, index = struct.unpack_from("=BBBBI", body)
        a = attrs(body[8:])
        addr = show_addr(fam, a[IFA_ADDRESS])
        print("addr", f"{addr}/{plen}", "index", index, flush=True)
        addrs.add((addr, plen, index))
    if done:
        break
    buf = s.recv(4096)
if mode == "view":
    # 127.0.0.2/8 and fe80::1/64: what glibc's AI_ADDRCONFIG counts (nlview.c).
    view_addrs = {("127.0.0.1", 8, 1), ("127.0.0.2", 8, 1), ("fe80::1", 64, 1), ("::1", 128, 1)}
    check(addrs == view_addrs, f"addresses {sorted(addrs)}")

# RTM_GETLINK dump with send(): no address (iproute2's way; the kernel path in stockade).
s.send(request(RTM_GETLINK, F_DUMP, 2, struct.pack("=BxHiII", 0, 0, 0, 0, 0)))
links = [b for t, f, b in exchange(s, port, 2) if t == RTM_NEWLINK]
for body in links:
    _, itype, index, flags, _ = struct.unpack_from("=BxHiII", body)
    a = attrs(body[16:])
    print("link", index, a.get(IFLA_IFNAME, b"?").rstrip(b"\0").decode(), flush=True)
    if mode == "view":
        check(index == 1 and itype == 772, f"link {index} type {itype}")
        check(flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING) == 0x49, f"lo's flags {flags:#x}")
        check(a.get(IFLA_IFNAME) == b"lo\0", f"lo's name {a.get(IFLA_IFNAME)}")
        check(a.get(IFLA_MTU) == struct.pack("=I", 65536), "lo's mtu")
        check(a.get(IFLA_ADDRESS) == bytes(6), "lo's address")
check(len(links) >= 1 and (mode != "view" or len(links) == 1), f"{len(links)} links")

# Dumps by family.
VIEW_BY_FAMILY = {socket.AF_INET: {"127.0.0.1", "127.0.0.2"}, socket.AF_INET6: {"fe80::1", "::1"}}
for seq, fam, want in ((3, socket.AF_INET, "127.0.0.1"), (4, socket.AF_INET6, "::1")):
    s.send(request(RTM_GETADDR, F_DUMP, seq, struct.pack("=BBBBI", fam, 0, 0, 0, 0)))
    got = [b for t, f, b in exchange(s, port, seq) if t == RTM_NEWADDR]
    fams = {b[0] for b in got}
    check(fams <= {fam}, f"RTM_GETADDR family {fam}: families {fams}")
    shown = {show_addr(b[0], attrs(b[8:])[IFA_ADDRESS]) for b in got}
    check(want in shown, f"RTM_GETADDR family {fam}: {shown}")
    if mode == "view":
        check(shown == VIEW_BY_FAMILY[fam], f"RTM_GETADDR family {fam}: {shown}")

# RTM_GETLINK by index and by name, with an ACK; an index that does not exist.
ifinfo = struct.pack("=BxHiII", 0, 0, 1, 0, 0)
s.sendto(request(RTM_GETLINK, F_ACK, 5, ifinfo), (0, 0))
got = exchange(s, port, 5, (NLMSG_ERROR,))
check([t for t, f, b in got] == [RTM_NEWLINK, NLMSG_ERROR], f"getlink 1: {got}")
check(error_of(got) == 0, "getlink 1: the ACK is not 0")
name_attr = struct.pack("=HH", 7, IFLA_IFNAME) + b"lo\0" + b"\0"
s.sendto(request(RTM_GETLINK, 0, 6, struct.pack("=BxHiII", 0, 0, 0, 0, 0) + name_attr), (0, 0))
got = exchange(s, port, 6, (RTM_NEWLINK, NLMSG_ERROR))
check(got and got[0][0] == RTM_NEWLINK, f"getlink lo: {got}")
check(got and struct.unpack_from("=i", got[0][2], 4)[0] == 1, "getlink lo: not index 1")
s.sendto(request(RTM_GETLINK, 0, 7, struct.pack("=BxHiII", 0, 0, 999, 0, 0)), (0, 0))
check(error_of(exchange(s, port, 7, (NLMSG_ERROR,))) == -errno.ENODEV, "getlink 999: not ENODEV")

# A route dump ends; a type past RTM_MAX is not supported.
s.send(request(RTM_GETROUTE, F_DUMP, 8, bytes(12)))
for t, f, b in exchange(s, port, 8):
    if t == 24:  # RTM_NEWROUTE: its addresses (RTA_DST, RTA_SRC, RTA_GATEWAY, RTA_PREFSRC)
        fam, a = b[0], attrs(b[12:])
        print("route", *(show_addr(fam, a[k]) for k in (1, 2, 5, 7) if k in a), flush=True)
s.send(request(0x3FF, F_ACK, 9, bytes(4)))
got = exchange(s, port, 9, (NLMSG_ERROR,))
check(error_of(got) == -errno.EOPNOTSUPP, "type 0x3ff: not EOPNOTSUPP")

# Malformed requests are dropped as the kernel drops them: the count comes back, no answer.
check(s.sendto(b"\x10\x00\x00", (0, 0)) == 3, "a truncated header: sendto's count")
check(s.send(struct.pack("=IHHII", 4096, RTM_GETLINK, F_REQUEST | F_DUMP, 10, 0)) == 16, "a lie")
s.send(request(RTM_GETLINK, F_DUMP, 11, bytes(16)))
check(any(t == RTM_NEWLINK for t, f, b in exchange(s, port, 11)), "after malformed requests")

# The answers are queued before sendto returns, as the kernel queues a dump's first part:
# a non-blocking program reads them at once.
s.setblocking(False)
s.sendto(request(RTM_GETLINK, F_DUMP, 13, bytes(16)), (0, 0))
try:
    first = s.recv(4096)
except BlockingIOError:
    first = b""
check(len(first) >= 16 and struct.unpack_from("=I", first, 8)[0] == 13, "non-blocking: no answer")
s.setblocking(True)
while first and NLMSG_DONE not in [t for t, *_ in messages(first)]:
    first = s.recv(4096)

if mode == "view":
    # A state-changing request: EPERM in its NLMSG_ERROR, never done.
    ifa = struct.pack("=BBBBI", socket.AF_INET, 24, 0, 0, 1)
    ifa += struct.pack("=HH4s", 8, IFA_LOCAL, socket.inet_aton("10.9.9.9"))
    s.sendto(request(RTM_NEWADDR, F_ACK | F_CREATE | F_EXCL, 12, ifa), (0, 0))
    check(error_of(exchange(s, port, 12, (NLMSG_ERROR,))) == -errno.EPERM, "RTM_NEWADDR: not EPERM")
    # A second socket gets another port id.
    t = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, NETLINK_ROUTE)
    t.bind((0, 0))
    check(t.getsockname()[0] not in (0, port), f"the second port {t.getsockname()}, first {port}")
    t.close()
s.close()
print("nlraw", mode, "failures", len(failures), flush=True)
sys.exit(1 if failures else 0)

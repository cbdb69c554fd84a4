# The interface ioctls, as older code and ifconfig use them: SIOCGIFCONF lists the
# interfaces with their IPv4 addresses, then SIOCGIFADDR, SIOCGIFHWADDR, SIOCGIFINDEX and
# SIOCGIFFLAGS of each name the host has (given on the command line) and of lo. Prints what
# it got, one line each; the test compares it with the host's addresses.
import array, fcntl, socket, struct, sys

SIOCGIFCONF, SIOCGIFADDR, SIOCGIFHWADDR = 0x8912, 0x8915, 0x8927
SIOCGIFINDEX, SIOCGIFFLAGS, SIOCGIFNAME = 0x8933, 0x8913, 0x8910
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
buf = array.array("B", b"\0" * 40 * 64)
n, _ = struct.unpack("iL", fcntl.ioctl(s.fileno(), SIOCGIFCONF,
                                       struct.pack("iL", len(buf), buf.buffer_info()[0])))
raw = buf.tobytes()
for i in range(0, n, 40):
    print("conf", raw[i:i + 16].split(b"\0")[0].decode(), socket.inet_ntoa(raw[i + 20:i + 24]))
for name in ["lo"] + sys.argv[1:]:
    req = struct.pack("16s24s", name.encode(), b"")
    for what, cmd in (("addr", SIOCGIFADDR), ("hw", SIOCGIFHWADDR), ("index", SIOCGIFINDEX),
                      ("flags", SIOCGIFFLAGS)):
        try:
            r = fcntl.ioctl(s.fileno(), cmd, req)
        except OSError as e:
            print(what, name, "error", e.errno)
            continue
        if what == "addr":
            print(what, name, socket.inet_ntoa(r[20:24]))
        elif what == "hw":
            print(what, name, r[18:24].hex(":"))
        else:
            print(what, name, struct.unpack("i", r[16:20])[0])
for index in range(1, 8):
    try:
        r = fcntl.ioctl(s.fileno(), SIOCGIFNAME, struct.pack("16si20s", b"", index, b""))
        print("name", index, r[:16].split(b"\0")[0].decode())
    except OSError as e:
        print("name", index, "error", e.errno)

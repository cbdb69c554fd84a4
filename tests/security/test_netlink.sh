#!/usr/bin/env bash
# Issue 8, item 6: the interfaces the sandbox sees are a view the supervisor answers over
# NETLINK_ROUTE: lo alone, 127.0.0.1/8, 127.0.0.2/8, fe80::1/64 and ::1/128, never an address
# of the host (the second and third let getaddrinfo's AI_ADDRCONFIG see both families). Usage:
#   test_netlink.sh STOCKADE
# Judged from outside: the host's own addresses are taken here, outside the sandbox, and no
# output of the sandbox may name one. getifaddrs(3) users (Node's os.networkInterfaces,
# Python's socket.if_nameindex, iproute2, hostname -I), Go's net.Interfaces and a raw
# exchange written the way Go's syscall.NetlinkRIB makes it must work; other netlink
# protocols stay refused, and a request that would change the host is refused in its
# NLMSG_ERROR (EPERM).
# Skips (77) without /usr/bin/python3; Node, Go, iproute2 and hostname are checked when present.
set -euo pipefail
stockade=$(realpath "$1")
here=$(dirname "$(realpath "$0")")/netlink
py=/usr/bin/python3 # Debian's interpreter, not a pyenv shim that nobody cannot read
[ -x "$py" ] || {
        echo "skipped: no $py"
        exit 77
}

top=$(mktemp -d "${TMPDIR:-/var/tmp}/stockade-netlink.XXXXXX")
trap 'rm -rf -- "$top"' EXIT
chmod 755 "$top"
cp "$here"/*.py "$top/"
chmod 644 "$top"/*.py
out=$top/out # everything the sandbox printed, for the leak check
: >"$out"
fails=0

fail() {
        echo "FAIL: $*" >&2
        fails=$((fails + 1))
}

sbx() { # sbx CMD...: run under stockade from $top, stdout returned and kept in $out
        local r=0
        (cd "$top" && "$stockade" run -q -- "$@") >"$top/last" 2>"$top/err" || r=$?
        cat "$top/last" "$top/err" >>"$out"
        cat "$top/last"
        return $r
}

# The host's addresses, and proof that this test would see them: the native exchange must
# show each (else the leak check below proves nothing).
"$py" "$top/hostaddrs.py" >"$top/host"
native=$("$py" "$top/nlraw.py" native) || fail "the exchange fails natively: $native"
while read -r a; do
        grep -qw -- "addr $a/[0-9]*" <<<"$native" || fail "native: host address $a not seen"
done <"$top/host"

# 1. Python's socket.if_nameindex (glibc's netlink dump).
got=$(sbx "$py" -c 'import socket; print(socket.if_nameindex())') ||
        fail "if_nameindex failed: $(cat "$top/err")"
[ "$got" = "[(1, 'lo')]" ] || fail "if_nameindex: $got"

# 2. The raw exchange, Go's way and iproute2's; a state-changing request gets EPERM.
got=$(sbx "$py" nlraw.py view) || fail "the raw exchange: $got $(cat "$top/err")"

# 3. Other netlink protocols: refused as before.
got=$(sbx "$py" nlother.py) || fail "other protocols: $got"

# 4. Node's os.networkInterfaces (libuv: getifaddrs).
if command -v node >/dev/null; then
        got=$(sbx node -e 'console.log(JSON.stringify(require("os").networkInterfaces()))') ||
                fail "os.networkInterfaces threw: $(cat "$top/err")"
        "$py" -c '
import json, sys
ifs = json.loads(sys.argv[1])
addrs = sorted((a["address"], a["cidr"], a["internal"], a["mac"]) for a in ifs.get("lo", []))
want = [("127.0.0.1", "127.0.0.1/8", True, "00:00:00:00:00:00"),
        ("127.0.0.2", "127.0.0.2/8", True, "00:00:00:00:00:00"),
        ("::1", "::1/128", True, "00:00:00:00:00:00"),
        ("fe80::1", "fe80::1/64", True, "00:00:00:00:00:00")]
sys.exit(0 if list(ifs) == ["lo"] and addrs == want else 1)' "$got" 2>/dev/null ||
                fail "os.networkInterfaces: $got"
else
        echo "note: no node, os.networkInterfaces not checked"
fi

# 5. Go's net.Interfaces (syscall.NetlinkRIB, no libc), when go is installed.
if command -v go >/dev/null; then
        mkdir "$top/go"
        cp "$here/ifaces.go" "$top/go/main.go"
        (cd "$top/go" && printf 'module ifaces\n' >go.mod &&
                HOME=$top GOCACHE=$top/gocache GOPATH=$top/gopath CGO_ENABLED=0 GOFLAGS=-mod=mod \
                        go build -o ifaces . >"$top/err" 2>&1) || fail "go build: $(cat "$top/err")"
        chmod -R a+rX "$top/go"
        got=$(sbx "$top/go/ifaces") || fail "net.Interfaces: $got $(cat "$top/err")"
        want=$'1 lo 65536 up|loopback  [127.0.0.1/8 127.0.0.2/8 fe80::1/64 ::1/128] <nil>\n'
        want+='InterfaceAddrs: [127.0.0.1/8 127.0.0.2/8 fe80::1/64 ::1/128] <nil>'
        [ "$got" = "$want" ] || fail "net.Interfaces: $got"
else
        echo "note: no go, net.Interfaces not checked"
fi

# 6. iproute2 and hostname -I.
if command -v ip >/dev/null; then
        got=$(sbx ip -o addr) || fail "ip -o addr: $(cat "$top/err")"
        want=$'1: lo inet 127.0.0.1/8\n1: lo inet 127.0.0.2/8\n1: lo inet6 fe80::1/64\n'
        want+='1: lo inet6 ::1/128'
        [ "$(awk '{print $1, $2, $3, $4}' <<<"$got")" = "$want" ] || fail "ip -o addr: $got"
        got=$(sbx ip -o link) || fail "ip -o link: $(cat "$top/err")"
        grep -q '^1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 ' <<<"$got" &&
                [ "$(wc -l <<<"$got")" = 1 ] ||
                fail "ip -o link: $got"
        sbx ip route >/dev/null || fail "ip route: $(cat "$top/err")"
        got=$(sbx ip addr add 10.9.9.9/24 dev lo 2>&1) && fail "ip addr add succeeded: $got"
        grep -q 'RTNETLINK answers: Operation not permitted' "$top/err" ||
                fail "ip addr add: $(cat "$top/err")"
else
        echo "note: no iproute2, ip not checked"
fi
if command -v hostname >/dev/null; then
        got=$(sbx hostname -I) || fail "hostname -I: $(cat "$top/err")"
        [ -z "${got// /}" ] || fail "hostname -I: '$got'"
fi

# 6a. The interface ioctls (SIOCGIFCONF, SIOCGIFADDR, SIOCGIFHWADDR, SIOCGIFINDEX,
# SIOCGIFFLAGS, SIOCGIFNAME) answer from the same view (an outside review read eth0's
# address and MAC with them). Natively they show the host's (else this proves nothing).
ifnames=$(ls /sys/class/net 2>/dev/null | grep -vx lo | tr '\n' ' ')
if [ -n "$ifnames" ]; then
        # shellcheck disable=SC2086 # one argument per interface name
        native=$("$py" "$top/ifioctl.py" $ifnames 2>&1) || fail "ifioctl natively: $native"
        grep '^conf' <<<"$native" | grep -qv ' lo ' ||
                echo "note: no IPv4 address on a host interface: SIOCGIFCONF proves less here"
        # shellcheck disable=SC2086
        got=$(sbx "$py" ifioctl.py $ifnames) || fail "ifioctl: $got $(cat "$top/err")"
        [ "$(grep '^conf' <<<"$got")" = $'conf lo 127.0.0.1\nconf lo 127.0.0.2' ] ||
                fail "SIOCGIFCONF: $got"
        grep -qx 'index lo 1' <<<"$got" && grep -qx 'name 1 lo' <<<"$got" ||
                fail "lo by the ioctls: $got"
        for n in $ifnames; do
                grep -qx "index $n error 19" <<<"$got" || fail "SIOCGIFINDEX of the host's $n: $got"
                mac=$(cat "/sys/class/net/$n/address" 2>/dev/null)
                [ -z "$mac" ] || [ "$mac" = 00:00:00:00:00:00 ] || ! grep -qi -- "$mac" <<<"$got" ||
                        fail "the host's MAC of $n seen: $got"
        done
fi

# 6c. getaddrinfo with a family and AI_ADDRCONFIG: glibc (check_pf.c) counts IPv4 only for an
# address other than 127.0.0.1 and IPv6 only for one other than ::1; with lo's own alone it
# answered EAI_NONAME even for localhost (an outside tester). The view's 127.0.0.2/8 and
# fe80::1/64 count, and work: a server on 127.0.0.2 is reached, and in the sandbox's network
# namespace (where they are really on its lo) fe80::1%lo can be bound.
got=$(cd "$top" && "$stockade" run -q --dns-static svc.test=127.0.0.1 -- sh -c '
getent ahostsv4 localhost >/dev/null && echo ahostsv4
getent ahostsv6 localhost >/dev/null && echo ahostsv6
'"$py"' -c "
import socket
C = socket.AI_ADDRCONFIG
for name, fam in ((\"localhost\", socket.AF_INET), (\"svc.test\", socket.AF_INET),
                  (\"::1\", socket.AF_INET6),
                  (\"::1\", socket.AF_UNSPEC), (\"localhost\", socket.AF_UNSPEC)):
    try:
        a = socket.getaddrinfo(name, 80, fam, socket.SOCK_STREAM, 0, C)
        print(name, int(fam), a[0][4][0])
    except socket.gaierror as e:
        print(name, int(fam), \"error\", e.errno)
s = socket.socket(); s.bind((\"127.0.0.2\", 0)); s.listen()
c = socket.create_connection(s.getsockname()); print(\"127.0.0.2 reached\")
try:
    socket.socket(socket.AF_INET6).bind((\"fe80::1\", 0, 0, 1)); print(\"fe80::1 bound\")
except OSError as e:
    print(\"fe80::1\", e.errno)
"' 2>"$top/err") || fail "getaddrinfo with AI_ADDRCONFIG: $got $(cat "$top/err")"
want=$'ahostsv4\nahostsv6\nlocalhost 2 127.0.0.1\nsvc.test 2 127.0.0.1\n'
want+=$'::1 10 ::1\n::1 0 ::1\nlocalhost 0 127.0.0.1\n127.0.0.2 reached'
layers=$("$stockade" run -v -- /bin/true 2>&1) || true
if grep -q '^stockade: *network namespace *yes' <<<"$layers"; then
        want+=$'\nfe80::1 bound' # on the namespace's lo
else
        want+=$'\nfe80::1 13' # not the host's: a bind there is judged, EACCES without a rule
fi
[ "$got" = "$want" ] || fail "getaddrinfo with AI_ADDRCONFIG:"$'\n'"$got"$'\nwant:\n'"$want"
cat "$top/err" >>"$out"
echo "$got" >>"$out"

# 6b. shutdown(SHUT_WR) of a view socket, then a quiet program: the supervisor's thread must
# not spin on the EOF (outside review; judged by stockade's CPU time in /proc).
(cd "$top" && exec "$stockade" run -q --timeout 20 -- "$py" -c '
import socket, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.shutdown(socket.SHUT_WR); time.sleep(3)') >/dev/null 2>&1 &
spid=$!
sleep 2.5
ticks=$(awk '{print $14 + $15}' "/proc/$spid/stat" 2>/dev/null) || ticks=""
wait $spid || true
if [ -z "$ticks" ]; then
        fail "stockade was gone before its CPU time was read (the SHUT_WR check proves nothing)"
elif [ "$ticks" -ge "$(getconf CLK_TCK)" ]; then
        fail "the supervisor used $ticks ticks in 2.5 s after SHUT_WR"
fi

# 7. No host address in anything the sandbox printed.
while read -r a; do
        ! grep -qiw -- "$a" "$out" ||
                fail "host address $a seen in the sandbox: $(grep -iw -- "$a" "$out")"
done <"$top/host"

[ "$fails" -eq 0 ] || {
        echo "$fails failures"
        exit 1
}
echo "ok"

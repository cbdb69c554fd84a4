// net.Interfaces and Interface.Addrs: Go's own netlink exchange (syscall.NetlinkRIB), built
// with CGO_ENABLED=0 so that no libc is involved. Run by test_netlink.sh when go is installed.
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	ifs, err := net.Interfaces()
	if err != nil {
		fmt.Println("Interfaces:", err)
		os.Exit(1)
	}
	for _, i := range ifs {
		addrs, err := i.Addrs()
		fmt.Println(i.Index, i.Name, i.MTU, i.Flags, i.HardwareAddr, addrs, err)
	}
	addrs, err := net.InterfaceAddrs()
	fmt.Println("InterfaceAddrs:", addrs, err)
}

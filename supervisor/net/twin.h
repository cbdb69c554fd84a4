/*
 * What a twin receives and what it shows (issue 8). With a network namespace of the
 * sandbox's own, an allowed connect or send is made on a twin: a socket of the host's
 * namespace that takes the program's fd number (syscalls/net.h). Pure code: no seccomp, no
 * sockets (tests/unit/test_twin.c attaches what it builds to loopback sockets).
 *
 * Ingress. A UDP (or ICMP ping) twin is bound to an ephemeral port of the host's, and the
 * kernel delivers there a datagram from anyone who can reach the host: a host process, the
 * LAN. A twin therefore carries, from birth, a classic BPF socket filter (SO_ATTACH_FILTER)
 * that lets in only datagrams from the peers it sent to or connected to: a NAT's
 * "address and port-dependent filtering" (RFC 4787), which is what a program behind one
 * sees. Every peer was judged by the policy when the program sent to it, so ingress never
 * exceeds what the policy allowed out. The filter reads the source address at SKF_NET_OFF
 * (the IP header, v4 or v6 by its version nibble: a dual-stack socket receives both) and the
 * source port at offset 0 (the UDP header, where the kernel runs a socket filter); a load
 * out of bounds returns 0, i.e. a drop. A ping socket's peers are addresses alone (its
 * "port" is its own ICMP identifier).
 *
 * The filter is the socket's only record of its peers: the supervisor reads it back
 * (SO_GET_FILTER), and twin_filter_parse recognises it only if rebuilding the peers it reads
 * gives the very same program. Nothing else can change it: the program's setsockopt of the
 * filter options on a socket of the host's namespace is refused (syscalls/net_twin.c). So it
 * is not locked (SO_LOCK_FILTER): a locked filter could not take the next peer either.
 *
 * At most TWIN_PEERS_MAX peers a socket, the newest first (the one a program talks to now
 * is found sooner); past that the oldest of the new peer's family is forgotten, as a NAT
 * forgets an idle mapping. The limit keeps two programs (the old one is still charged while
 * the new one is attached) under the smallest optmem_max of current kernels (20 KiB: 80
 * IPv6 peers fit, measured on 6.18).
 *
 * Egress shows the local address. A connected twin's local address (getsockname) is one
 * of the host's (its interface's IPv4, a global IPv6 with its MAC in it): it is shown as the
 * unspecified address of its family, port kept (twin_local_name).
 */
#ifndef STOCKADE_NET_TWIN_H
#define STOCKADE_NET_TWIN_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define TWIN_PEERS_MAX 64
/* The longest program twin_filter_build makes. */
#define TWIN_PROG_MAX (8 + 5 + 11 + TWIN_PEERS_MAX * 11)

/* A peer as the wire carries it: IPv4 as ::ffff:a.b.c.d; port in host order, 0: any. */
struct twin_peer {
        uint8_t a[16];
        uint16_t port;
};

/*
 * The peer a send or connect to `sa` (len bytes, AF_INET or AF_INET6) will hear from: the
 * address the packet goes to, as the kernel rewrites it (an IPv4-mapped address goes out as
 * IPv4; 0.0.0.0 and :: reach the loopback). `any_port`: a ping socket. Returns 0, or -EINVAL
 * / -EAFNOSUPPORT.
 */
int twin_peer_from(const void *sa, size_t len, bool any_port, struct twin_peer *out);

/* Add `p` to the n peers in v (room for TWIN_PEERS_MAX), in front. Returns 0 if it is there
 * already (nothing changed), 1 if added (the oldest of its family forgotten when full). */
int twin_peer_add(struct twin_peer *v, size_t *n, const struct twin_peer *p);

/* The filter letting in datagrams from the n peers of v (n <= TWIN_PEERS_MAX) into out
 * (room for TWIN_PROG_MAX). Returns its length. */
size_t twin_filter_build(const struct twin_peer *v, size_t n, struct sock_filter *out);

/* The peers of a filter twin_filter_build made (len instructions), into v (room for
 * TWIN_PEERS_MAX): the IPv4 ones, then the IPv6 ones, each newest first. Returns how many,
 * or -EINVAL if the program is not exactly one of ours. */
int twin_filter_parse(const struct sock_filter *prog, size_t len, struct twin_peer *v);

/* A local address of the host's (getsockname of a socket of the host's namespace, len
 * bytes) as the sandbox sees it: an AF_INET/AF_INET6 address that is not loopback becomes
 * 0.0.0.0, ::ffff:0.0.0.0 or :: (scope and flow label cleared), the port kept. Returns
 * whether it changed anything. */
bool twin_local_name(struct sockaddr_storage *ss, socklen_t len);

#endif

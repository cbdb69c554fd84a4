/*
 * The interfaces the sandbox sees (issue 8, item 6): NETLINK_ROUTE answered by the
 * supervisor as the kernel would answer it in a network namespace that holds only lo, up,
 * with 127.0.0.1/8, 127.0.0.2/8, fe80::1/64 and ::1/128 (nlview.c says why the second and the
 * third). No address, name, index or counter of the host's interfaces
 * is in any answer: getifaddrs(3), if_nameindex(3), `ip addr`, Go's net.Interfaces see a
 * host with a loopback device and nothing else. Pure code, unit-tested without a sandbox
 * (tests/unit/test_nlview.c); the sockets that carry the messages are supervisor/nlsock.c.
 *
 * The requests come from the sandboxed program: nothing in them is trusted beyond its
 * length. They are read as the kernel's netlink_rcv_skb and rtnetlink_rcv_msg read them, so
 * that a program sees the kernel's answers:
 *   - a message whose nlmsg_len is shorter than its header or longer than what is left ends
 *     the request (the rest is dropped, silently, as the kernel drops it);
 *   - one without NLM_F_REQUEST, or a control type (< NLMSG_MIN_TYPE): an ACK if asked;
 *   - a type past RTM_MAX: EOPNOTSUPP; a body shorter than a struct rtgenmsg: nothing;
 *   - NEW, DEL and SET requests (which would change the host): EPERM, the kernel's answer to
 *     a caller without CAP_NET_ADMIN in the host's network namespace;
 *   - dumps (NLM_F_ROOT or NLM_F_MATCH) of RTM_GETLINK (lo), RTM_GETADDR (AF_UNSPEC: both
 *     addresses, AF_INET, AF_INET6) and RTM_GETROUTE (no route), each ended by NLMSG_DONE;
 *   - RTM_GETLINK of one link, by index or by name (IFLA_IFNAME, IFLA_ALT_IFNAME): lo, or
 *     ENODEV; EINVAL when it names neither;
 *   - any other request: EOPNOTSUPP.
 * Errors come as NLMSG_ERROR with the request echoed (its header only for an ACK,
 * NLM_F_CAPPED), as NETLINK_CAP_ACK is off. Every answer carries the request's nlmsg_seq and
 * the requester's port id in nlmsg_pid.
 */
#ifndef STOCKADE_NET_NLVIEW_H
#define STOCKADE_NET_NLVIEW_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The largest request copied from the program (a send longer than this fails with
 * EMSGSIZE); a kernel netlink socket takes up to its send buffer, but nothing a program asks
 * of NETLINK_ROUTE for reading comes near. */
#define NLVIEW_REQ_MAX (64 * 1024)
/* Answers go out in datagrams of whole messages, at most this long (unless one message is
 * longer): Go and glibc read a page at a time, and nothing answered for lo comes near. */
#define NLVIEW_DATAGRAM_MAX 4096
/* The length of nlview_unix_name's address: that of a struct sockaddr_nl. */
#define NLVIEW_UNIX_NAME_LEN 12

/* Answers, appended message by message (each padded to NLMSG_ALIGNTO). */
struct nlview_buf {
        uint8_t *data;
        size_t len, cap;
};

void nlview_buf_free(struct nlview_buf *b);

/*
 * Answer the netlink messages in `req` (len bytes: the supervisor's copy of what the program
 * sent) as NETLINK_ROUTE would, for a requester with port id `port`; the answers are
 * appended to *out. Returns the number of messages read.
 */
size_t nlview_answer(const void *req, size_t len, uint32_t port, struct nlview_buf *out);

/* The length of the datagram that starts at `off` in `b` (answers of nlview_answer): whole
 * messages, `max` bytes at most unless the first one alone is longer. 0 at the end. */
size_t nlview_datagram(const struct nlview_buf *b, size_t off, size_t max);

/* bind(2)'s address: 0 with its nl_pid and nl_groups, or -EINVAL (short, not AF_NETLINK). */
int nlview_bind_addr(const void *addr, size_t len, uint32_t *pid, uint32_t *groups);

/*
 * A destination (sendto, sendmsg: `connect` false) or a peer (connect: true), as
 * netlink_sendmsg and netlink_connect judge it: 0 for the kernel (port 0, no group), 1 for
 * connect's AF_UNSPEC (no peer: the kernel again), -EINVAL for a short address or another
 * family, -EPERM for another port id or a multicast group (NETLINK_ROUTE lets only
 * CAP_NET_ADMIN send to those). len 0 (no address) is 0 for a send.
 */
int nlview_dest(const void *addr, size_t len, bool connect);

/* What getsockname(2) answers for a socket with port id `port` (0: not bound yet). */
struct sockaddr_nl nlview_sockname(uint32_t port, uint32_t groups);

/*
 * The abstract unix address the supervisor's end of a view socket is bound to
 * (NLVIEW_UNIX_NAME_LEN bytes), made from `rnd`. Its bytes read as a struct sockaddr_nl with
 * nl_pid 0, and with nl_groups 0 unless `any_groups`: recvmsg hands the program this address
 * as the source of every answer, and glibc (ifaddrs.c) and iproute2 drop an answer whose
 * source's nl_pid is not the kernel's, and iproute2 one whose length is not 12. A name can
 * be taken (abstract names are the host's), so callers try several values of `rnd`.
 */
socklen_t nlview_unix_name(uint64_t rnd, bool any_groups, struct sockaddr_un *sun);

#endif

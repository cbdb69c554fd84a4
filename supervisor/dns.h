/*
 * The DNS the supervisor answers (issue 8, item 3).
 *
 * The program's resolver is pointed at a nameserver address, DNS_NS_ADDR port 53, through
 * the view's /etc/resolv.conf (dns_view_open). Nobody listens there: an unprivileged
 * supervisor cannot bind port 53. Instead every way the program can reach that address is
 * already emulated, so the supervisor redirects it (syscalls/net_dns.c):
 *   - connect to DNS_NS_ADDR:53 (UDP or TCP): our copy of the program's socket is connected
 *     to the supervisor's own server socket (the same address, an ephemeral port);
 *   - sendto/sendmsg/sendmmsg to DNS_NS_ADDR:53: the datagram is sent to that server socket;
 *   - recvfrom asking for the source, on a socket so redirected: the source of the server's
 *     answers is rewritten to DNS_NS_ADDR:53, since glibc (res_send.c, send_dg) and c-ares
 *     drop an answer whose source is not the nameserver they asked.
 * Any other port of DNS_NS_ADDR is refused: the address is there for DNS only.
 *
 * The server is one thread with its own poll loop (UDP socket, TCP listener and
 * connections, an eventfd for finished look-ups). A query for a name the policy refuses
 * (netpol_dns_decide) gets NXDOMAIN without anything leaving the host; a static name its
 * --dns-static addresses; any other allowed name goes to the host's resolver (getaddrinfo)
 * on a detached worker thread, at most DNS_WORKERS at once, answered SERVFAIL if it has not
 * finished within DNS_DEADLINE_MS (the worker's late result is dropped). Every address
 * answered for a name is remembered (netpol_handout) except special ones that came from the
 * host: connects are judged by it (net_common.c).
 */
#ifndef STOCKADE_DNS_H
#define STOCKADE_DNS_H

#include "supervisor/error.h"
#include "supervisor/net/netpol.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/socket.h>

struct supervisor;
struct dns_server;

/* The nameserver the program's resolv.conf names: a loopback address no host service is
 * expected on (not systemd-resolved's 127.0.0.53); the server binds it too. */
#define DNS_NS_ADDR     "127.0.5.53"
#define DNS_PORT        53
#define DNS_DEADLINE_MS 4000
#define DNS_WORKERS     8
#define DNS_TCP_CONNS   16
#define DNS_QPS_MAX     500 /* queries a second; beyond, REFUSED (issue 8, item 7) */
#define DNS_TTL         30

/* Whether the run needs the supervisor's DNS: always under a policy (--net none); under
 * --net host only with --dns-static entries. */
bool dns_wanted(const struct netpol *p);

/* Open the server's sockets; sets sup->dns and sup->fopts.dns. Before the filter is built.
 * Returns 0 or -1 with err. */
int dns_start(struct supervisor *sup, struct error *err);
/* Start the server's thread: after the spawn, so that it runs inside the supervisor's
 * Landlock domain (spawn.c), like every thread that handles what the program sends. */
int dns_serve(struct supervisor *sup, struct error *err);
/* With a network namespace of the sandbox's own (sockmaker.h): the server's sockets are
 * made again in it, once the socket maker runs, before the spawn. */
int dns_open_inside(struct supervisor *sup, struct error *err);
/* Stop the thread and close the sockets (the end of the run). */
void dns_stop(struct supervisor *sup);
/* Free what handlers may still read (after every notifier stopped). */
void dns_free(struct supervisor *sup);

/* The server's addresses, for the redirect: UDP or TCP (`tcp`). */
const struct sockaddr_in *dns_server_addr(const struct dns_server *d, bool tcp);
/* Remember that socket inode `ino` was redirected to the UDP server; whether it was. */
void dns_client_add(struct dns_server *d, unsigned long ino);
bool dns_client_has(struct dns_server *d, unsigned long ino);

/* The names `a` was handed out for (none when the DNS is off). */
void dns_names(struct supervisor *sup, const struct netpol_addr *a, struct netpol_names *out);

/* The view's /etc/resolv.conf: the memfd's text below, and under --fast's kernel reads a
 * file bound over the host's (walls.c). */
extern const char dns_resolv_conf[];

/*
 * The open hook (syscalls/fs_open.c): `fd` is what the open of `path` with `flags` gave
 * (an fd, or -errno), `st` its fstat when it is an fd. A read-only open of the host's
 * /etc/resolv.conf (by inode, however it was reached; by path when the host has none) is
 * answered with a sealed memfd naming the supervisor's nameserver; `fd` is then closed.
 * Returns the fd to install, or -errno.
 */
int dns_view_open(struct supervisor *sup, const char *path, int flags, int fd,
                  const struct stat *st);

#endif

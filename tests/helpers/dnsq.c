/*
 * Test helper: the DNS side of a sandboxed program (tests/security/test_dns.c). Runs inside
 * the sandbox; prints what it got and exits with a code the test reads:
 *
 *   dnsq gai NAME PORT        getaddrinfo, connect to the first address, print its reply
 *   dnsq query NAME [tcp]     res_query (A) through resolv.conf only (no /etc/hosts), over
 *                             UDP or TCP (RES_USEVC); prints each address
 *   dnsq connect ADDR PORT    connect to a literal IPv4 address, print the reply
 *   dnsq nsport PORT          connect to the nameserver's address on another port
 *   dnsq hostile              malformed queries at the nameserver; then a good one
 *   dnsq block                a blocking recvfrom on a socket connected to the nameserver,
 *                             nothing sent: waits until killed
 *   dnsq unconnected NAME     an A query with sendto on an unconnected socket, as musl
 *                             does; the answer's source must be the nameserver's
 * Exit codes: 0 fine, 3 NXDOMAIN / name not found, 13 EACCES, 1 anything else.
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NS_ADDR "127.0.5.53"

static int talk(const struct sockaddr *sa, socklen_t len)
{
        char buf[256];
        int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ssize_t n;

        if (fd < 0 || connect(fd, sa, len) < 0) {
                int e = errno;

                printf("connect: %s\n", strerror(e));
                return e == EACCES ? 13 : 1;
        }
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return 1;
        buf[n] = '\0';
        printf("reply: %s\n", buf);
        close(fd);
        return 0;
}

static int gai(const char *name, const char *port)
{
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_INET}, *res;
        int r = getaddrinfo(name, port, &hints, &res);

        if (r != 0) {
                printf("getaddrinfo: %s\n", gai_strerror(r));
                return r == EAI_NONAME ? 3 : 1;
        }
        r = talk(res->ai_addr, res->ai_addrlen);
        freeaddrinfo(res);
        return r;
}

static int query(const char *name, int tcp)
{
        unsigned char ans[4096];
        ns_msg m;
        ns_rr rr;
        int n;

        res_init();
        if (tcp)
                _res.options |= RES_USEVC;
        _res.retry = 1;
        n = res_query(name, ns_c_in, ns_t_a, ans, sizeof(ans));
        if (n < 0) {
                printf("res_query: h_errno %d\n", h_errno);
                return h_errno == HOST_NOT_FOUND ? 3 : 1;
        }
        if (ns_initparse(ans, n, &m) < 0)
                return 1;
        for (int i = 0; i < ns_msg_count(m, ns_s_an); i++) {
                char a[INET_ADDRSTRLEN];

                if (ns_parserr(&m, ns_s_an, i, &rr) < 0 || ns_rr_type(rr) != ns_t_a ||
                    ns_rr_rdlen(rr) != 4)
                        continue;
                printf("address: %s\n", inet_ntop(AF_INET, ns_rr_rdata(rr), a, sizeof(a)));
        }
        return 0;
}

static int literal(const char *addr, const char *port)
{
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};

        if (inet_pton(AF_INET, addr, &in.sin_addr) != 1)
                return 1;
        return talk((struct sockaddr *)&in, sizeof(in));
}

/* Send `len` bytes to the nameserver on `fd` (connected); 1 if an answer came, with rcode. */
static int exchange(int fd, const unsigned char *q, size_t len, int *rcode)
{
        unsigned char buf[1024];
        struct pollfd p = {.fd = fd, .events = POLLIN};
        struct sockaddr_in from;
        socklen_t flen = sizeof(from);
        ssize_t n;

        if (send(fd, q, len, 0) < 0)
                return -1;
        if (poll(&p, 1, 500) <= 0)
                return 0;
        n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
        if (n < 12)
                return -1;
        /* The source must read as the nameserver, port 53 (what glibc checks). */
        if (from.sin_port != htons(53) || from.sin_addr.s_addr != inet_addr(NS_ADDR)) {
                printf("answer from the wrong source\n");
                return -1;
        }
        *rcode = buf[3] & 0xf;
        return 1;
}

static int hostile(void)
{
        static const unsigned char hdr[12] = {0x12, 0x34, 0x01, 0x00, 0x00, 0x01};
        struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)};
        unsigned char q[600];
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rcode = -1, r, bad = 0;
        size_t len;

        inet_pton(AF_INET, NS_ADDR, &ns.sin_addr);
        if (fd < 0 || connect(fd, (struct sockaddr *)&ns, sizeof(ns)) < 0)
                return 1;
        /* 1. a truncated header: dropped */
        r = exchange(fd, hdr, 5, &rcode);
        bad += r != 0;
        /* 2. a compression loop (the name points at itself): FORMERR */
        memcpy(q, hdr, 12);
        memcpy(q + 12, "\xc0\x0c\x00\x01\x00\x01", 6);
        r = exchange(fd, q, 18, &rcode);
        bad += r != 1 || rcode != 1;
        /* 3. a label longer than the packet: FORMERR */
        memcpy(q + 12, "\x3fxyz", 4);
        r = exchange(fd, q, 16, &rcode);
        bad += r != 1 || rcode != 1;
        /* 4. an oversize name (300 bytes of labels): FORMERR */
        len = 12;
        for (int i = 0; i < 5; i++) {
                q[len++] = 60;
                memset(q + len, 'a', 60);
                len += 60;
        }
        q[len++] = 0;
        memcpy(q + len, "\x00\x01\x00\x01", 4);
        r = exchange(fd, q, len + 4, &rcode);
        bad += r != 1 || rcode != 1;
        /* 5. a question without its type and class: FORMERR */
        memcpy(q + 12, "\x03svc\x04test\x00", 10);
        r = exchange(fd, q, 22, &rcode);
        bad += r != 1 || rcode != 1;
        /* 6. a response (QR set): dropped */
        memcpy(q + 22, "\x00\x01\x00\x01", 4);
        q[2] |= 0x80;
        r = exchange(fd, q, 26, &rcode);
        bad += r != 0;
        /* 7. the server still answers a good query */
        q[2] &= 0x7f;
        r = exchange(fd, q, 26, &rcode);
        bad += r != 1 || rcode != 0;
        printf("hostile: %d unexpected\n", bad);
        return bad ? 1 : 0;
}

static int block(void)
{
        struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)}, from;
        socklen_t flen = sizeof(from);
        char buf[512];
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        inet_pton(AF_INET, NS_ADDR, &ns.sin_addr);
        if (fd < 0 || connect(fd, (struct sockaddr *)&ns, sizeof(ns)) < 0)
                return 1;
        printf("waiting\n");
        recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
        return 1;
}

static int unconnected(const char *name)
{
        struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)}, from;
        unsigned char q[512], a[512];
        socklen_t flen = sizeof(from);
        struct pollfd p;
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), len;
        ssize_t n;

        inet_pton(AF_INET, NS_ADDR, &ns.sin_addr);
        len = res_mkquery(ns_o_query, name, ns_c_in, ns_t_a, NULL, 0, NULL, q, sizeof(q));
        if (fd < 0 || len < 0 ||
            sendto(fd, q, (size_t)len, 0, (struct sockaddr *)&ns, sizeof(ns)) < 0)
                return errno == EACCES ? 13 : 1;
        p = (struct pollfd){.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) <= 0)
                return 1;
        n = recvfrom(fd, a, sizeof(a), 0, (struct sockaddr *)&from, &flen);
        if (n < 12 || from.sin_port != htons(53) || from.sin_addr.s_addr != ns.sin_addr.s_addr) {
                printf("unconnected: wrong answer or source\n");
                return 1;
        }
        printf("unconnected: rcode %d, %d answers\n", a[3] & 0xf, a[6] << 8 | a[7]);
        return 0;
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IONBF, 0);
        if (argc >= 4 && strcmp(argv[1], "gai") == 0)
                return gai(argv[2], argv[3]);
        if (argc >= 3 && strcmp(argv[1], "query") == 0)
                return query(argv[2], argc >= 4 && strcmp(argv[3], "tcp") == 0);
        if (argc >= 4 && strcmp(argv[1], "connect") == 0)
                return literal(argv[2], argv[3]);
        if (argc >= 3 && strcmp(argv[1], "nsport") == 0)
                return literal(NS_ADDR, argv[2]);
        if (argc >= 3 && strcmp(argv[1], "unconnected") == 0)
                return unconnected(argv[2]);
        if (argc >= 2 && strcmp(argv[1], "block") == 0)
                return block();
        if (argc >= 2 && strcmp(argv[1], "hostile") == 0)
                return hostile();
        fprintf(stderr, "usage: dnsq gai|query|connect|nsport|hostile ...\n");
        return 2;
}

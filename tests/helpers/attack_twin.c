/*
 * Runs inside the sandbox (and natively, as the control) for tests/security/test_netns_twin.c:
 * what a twin lets in and what it shows. Outcomes on stdout, one per line.
 *
 *   recv HOW ADDR DIR PORT...   a UDP socket (AF_INET6 when ADDR is an IPv6 spelling) sends
 *                               "hello" to ADDR:PORT for each PORT ("sent:N"), then writes
 *                               its local port to DIR/ready and prints each datagram it gets
 *                               ("got:PAYLOAD") until "END" comes or 10 s pass ("end", or
 *                               "timeout"). HOW: `send` (unconnected sendto), `conn` (connect
 *                               to the first, send, disconnect with AF_UNSPEC, then sendto
 *                               each), `meddle` (as send, then try to take the filter off or
 *                               replace it: "meddle:detach=E attach=E lock=E reuseport=E
 *                               bpf=E", E an errno name or ok; and on a socket that never left
 *                               the sandbox: "inside:attach=E detach=E"), `zero` (as send, after
 *                               a send to and a connect to port 0 of ADDR)
 *   name ADDR PORT PROTO        connect a PROTO (udp, tcp) socket to ADDR:PORT and print what
 *                               getsockname shows and how: "local:ADDR port:yes", then with a
 *                               short buffer, none, a negative length, a bad pointer, a bad
 *                               fd, a file ("short:len=N family=F zero:len=N neg:E efault:E
 *                               ebadf:E enotsock:E"), then "race:leaked" or "race:none":
 *                               whether, for 0.3 s, getsockname of a number that another
 *                               thread keeps swapping between this socket and a unix one
 *                               (dup2) ever showed a local address that is neither loopback
 *                               nor unspecified
 *   listen ADDR PORT            a TCP listener that accepts and closes; returns once it
 *                               listens, printing the pid of the child that runs it (which
 *                               ends after 120 s anyway)
 *   retry PORT                  a TCP socket with SO_KEEPALIVE set connects to 127.0.0.1:PORT,
 *                               where nothing listens ("first:ENAME"), then, the same socket,
 *                               to a listener of its own on 127.0.0.1 ("second:ok" or
 *                               "second:ENAME"), and prints its SO_KEEPALIVE ("keepalive:N")
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e)
{
        static const struct {
                int e;
                const char *name;
        } names[] = {
                {0, "ok"},          {EPERM, "EPERM"},           {EINVAL, "EINVAL"},
                {EFAULT, "EFAULT"}, {EBADF, "EBADF"},           {ENOTSOCK, "ENOTSOCK"},
                {EACCES, "EACCES"}, {ENOMEM, "ENOMEM"},         {EAGAIN, "EAGAIN"},
                {ENOENT, "ENOENT"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ECONNREFUSED, "ECONNREFUSED"}};

        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
                if (names[i].e == e)
                        return names[i].name;
        return strerror(e);
}

/* ADDR:PORT into *ss; returns its length (the family from the spelling). */
static socklen_t addr_of(const char *addr, int port, struct sockaddr_storage *ss)
{
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

        memset(ss, 0, sizeof(*ss));
        if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                return sizeof(*in);
        }
        if (inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1) {
                fprintf(stderr, "attack_twin: bad address %s\n", addr);
                exit(2);
        }
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        return sizeof(*in6);
}

static int port_of(const struct sockaddr_storage *ss)
{
        return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
                                              : ((const struct sockaddr_in6 *)ss)->sin6_port);
}

static int setopt(int fd, int name, const void *v, socklen_t len)
{
        return setsockopt(fd, SOL_SOCKET, name, v, len) < 0 ? errno : 0;
}

/* Try to take the filter off a twin, or to put an open one on. */
static void meddle(int s)
{
        struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, 0xffffffff);
        struct sock_fprog open = {.len = 1, .filter = &all};
        int one = 1, fd = 0, detach, attach, lock, reuse, bpf, in;

        detach = setopt(s, SO_DETACH_FILTER, &one, sizeof(one));
        attach = setopt(s, SO_ATTACH_FILTER, &open, sizeof(open));
        lock = setopt(s, SO_LOCK_FILTER, &one, sizeof(one));
        reuse = setopt(s, SO_ATTACH_REUSEPORT_CBPF, &open, sizeof(open));
        bpf = setopt(s, SO_ATTACH_BPF, &fd, sizeof(fd));
        printf("meddle:detach=%s attach=%s", ename(detach), ename(attach));
        printf(" lock=%s reuseport=%s bpf=%s\n", ename(lock), ename(reuse), ename(bpf));
        /* The sandbox's own sockets keep their filters. */
        in = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        attach = setopt(in, SO_ATTACH_FILTER, &open, sizeof(open));
        detach = setopt(in, SO_DETACH_FILTER, &one, sizeof(one));
        printf("inside:attach=%s detach=%s\n", ename(attach), ename(detach));
        close(in);
}

static int send_hello(int s, const char *addr, int port)
{
        struct sockaddr_storage ss;
        socklen_t len = addr_of(addr, port, &ss);

        return sendto(s, "hello", 5, 0, (struct sockaddr *)&ss, len) == 5 ? 0 : errno;
}

static void ready(const char *dir, int port)
{
        char tmp[256], path[256];
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s/ready.tmp", dir);
        snprintf(path, sizeof(path), "%s/ready", dir);
        if (!(f = fopen(tmp, "w")) || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 ||
            rename(tmp, path) < 0) {
                perror("attack_twin: ready");
                exit(2);
        }
}

static int recv_mode(const char *how, const char *addr, const char *dir, char **ports, int n)
{
        struct sockaddr_storage ss;
        socklen_t len = addr_of(addr, 0, &ss);
        int s = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), sent = 0, e;
        time_t end = time(NULL) + 10;

        if (strcmp(how, "conn") == 0) {
                struct sockaddr unspec = {.sa_family = AF_UNSPEC};

                addr_of(addr, atoi(ports[0]), &ss);
                if (connect(s, (struct sockaddr *)&ss, len) < 0 || send(s, "hello", 5, 0) != 5 ||
                    connect(s, &unspec, sizeof(unspec)) < 0) {
                        printf("err:conn:%s\n", ename(errno));
                        return 1;
                }
        }
        if (strcmp(how, "zero") == 0) {
                /* port 0 first: a send (EINVAL) and a connect, then a disconnect */
                struct sockaddr unspec = {.sa_family = AF_UNSPEC};

                (void)send_hello(s, addr, 0);
                addr_of(addr, 0, &ss);
                (void)!connect(s, (struct sockaddr *)&ss, len);
                (void)!connect(s, &unspec, sizeof(unspec));
        }
        for (int i = 0; i < n; i++)
                if ((e = send_hello(s, addr, atoi(ports[i]))) != 0)
                        printf("err:sendto:%s\n", ename(e));
                else
                        sent++;
        printf("sent:%d\n", sent);
        if (strcmp(how, "meddle") == 0)
                meddle(s);
        fflush(stdout);
        len = sizeof(ss);
        if (getsockname(s, (struct sockaddr *)&ss, &len) < 0)
                return 1;
        ready(dir, port_of(&ss));
        while (time(NULL) < end) {
                struct pollfd p = {.fd = s, .events = POLLIN};
                char buf[64];
                ssize_t got;

                if (poll(&p, 1, 500) != 1)
                        continue;
                got = recv(s, buf, sizeof(buf) - 1, 0);
                if (got < 0)
                        continue;
                buf[got] = '\0';
                if (strcmp(buf, "END") == 0) {
                        printf("end\n");
                        return 0;
                }
                printf("got:%s\n", buf);
                fflush(stdout);
        }
        printf("timeout\n");
        return 0;
}

/* ---- getsockname ---------------------------------------------------------------------------- */

/* Neither loopback nor unspecified: an address of the host's. */
static bool hosts(const struct sockaddr_storage *ss)
{
        static const uint8_t any[16], loop6[16] = {[15] = 1};

        if (ss->ss_family == AF_INET) {
                uint32_t a = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);

                return a != 0 && a >> 24 != 127;
        }
        if (ss->ss_family == AF_INET6) {
                const uint8_t *a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

                if (IN6_IS_ADDR_V4MAPPED(a))
                        return memcmp(a + 12, any, 4) != 0 && a[12] != 127;
                return memcmp(a, any, 16) != 0 && memcmp(a, loop6, 16) != 0;
        }
        return false;
}

static atomic_bool race_stop;
static int race_fd = 100, race_a, race_b;

static void *swapper(void *arg)
{
        (void)arg;
        while (!atomic_load(&race_stop)) {
                dup2(race_a, race_fd);
                dup2(race_b, race_fd);
        }
        return NULL;
}

static int race(int s)
{
        struct timespec t0, t;
        pthread_t th;
        int u[2], leaks = 0;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, u) < 0)
                return -1;
        race_a = s;
        race_b = u[0];
        dup2(race_b, race_fd);
        pthread_create(&th, NULL, swapper, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                struct sockaddr_storage ss;
                socklen_t len = sizeof(ss);

                if (getsockname(race_fd, (struct sockaddr *)&ss, &len) == 0 && hosts(&ss))
                        leaks++;
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
        atomic_store(&race_stop, true);
        pthread_join(th, NULL);
        return leaks;
}

static int name_mode(const char *addr, int port, const char *proto)
{
        struct sockaddr_storage ss;
        socklen_t len = addr_of(addr, port, &ss), klen;
        int s = socket(ss.ss_family,
                       (strcmp(proto, "tcp") == 0 ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
        char text[64] = "?";
        int file = open("/dev/null", O_RDONLY | O_CLOEXEC), e[5];

        if (connect(s, (struct sockaddr *)&ss, len) < 0) {
                printf("err:connect:%s\n", ename(errno));
                return 1;
        }
        len = sizeof(ss);
        if (getsockname(s, (struct sockaddr *)&ss, &len) < 0) {
                printf("err:getsockname:%s\n", ename(errno));
                return 1;
        }
        klen = len;
        inet_ntop(ss.ss_family,
                  ss.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
                                          : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
                  text, sizeof(text));
        printf("local:%s port:%s\n", text, port_of(&ss) ? "yes" : "no");
        memset(&ss, 0, sizeof(ss));
        len = 4;
        getsockname(s, (struct sockaddr *)&ss, &len);
        printf("short:len=%u family=%d", len, ss.ss_family);
        len = 0;
        getsockname(s, (struct sockaddr *)&ss, &len);
        printf(" zero:len=%u", len);
        len = (socklen_t)-1;
        e[0] = getsockname(s, (struct sockaddr *)&ss, &len) < 0 ? errno : 0;
        len = klen;
        e[1] = getsockname(s, (struct sockaddr *)1, &len) < 0 ? errno : 0;
        e[2] = getsockname(999, (struct sockaddr *)&ss, &len) < 0 ? errno : 0;
        e[3] = getsockname(file, (struct sockaddr *)&ss, &len) < 0 ? errno : 0;
        printf(" neg:%s efault:%s ebadf:%s enotsock:%s\n", ename(e[0]), ename(e[1]), ename(e[2]),
               ename(e[3]));
        printf("race:%s\n", race(s) ? "leaked" : "none");
        return 0;
}

static int listen_mode(const char *addr, int port)
{
        struct sockaddr_storage ss;
        socklen_t len = addr_of(addr, port, &ss);
        int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
        pid_t pid;

        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(s, (struct sockaddr *)&ss, len) < 0 || listen(s, 64) < 0) {
                perror("attack_twin: listen");
                return 1;
        }
        pid = fork();
        if (pid != 0) {
                printf("%d\n", (int)pid); /* for the script's kill */
                return pid < 0;
        }
        /* On its own, holding nothing of the caller's: `$(attack_twin listen ...)` ends. */
        setsid();
        dup2(open("/dev/null", O_RDWR | O_CLOEXEC), 1);
        dup2(1, 2);
        alarm(120); /* a script that failed before its kill */
        for (;;) {
                int c = accept(s, NULL, NULL);

                if (c >= 0)
                        close(c);
        }
}

static int retry_mode(int port)
{
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        struct sockaddr_in own = {.sin_family = AF_INET};
        socklen_t len = sizeof(own);
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, v = 0;

        to.sin_addr.s_addr = own.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (l < 0 || s < 0 || bind(l, (struct sockaddr *)&own, sizeof(own)) < 0 ||
            listen(l, 4) < 0 || getsockname(l, (struct sockaddr *)&own, &len) < 0 ||
            setopt(s, SO_KEEPALIVE, &one, sizeof(one)) != 0) {
                perror("attack_twin: retry");
                return 1;
        }
        printf("first:%s\n",
               connect(s, (struct sockaddr *)&to, sizeof(to)) < 0 ? ename(errno) : "ok");
        printf("second:%s\n",
               connect(s, (struct sockaddr *)&own, sizeof(own)) < 0 ? ename(errno) : "ok");
        len = sizeof(v);
        getsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &v, &len);
        printf("keepalive:%d\n", v);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc >= 6 && strcmp(argv[1], "recv") == 0)
                return recv_mode(argv[2], argv[3], argv[4], argv + 5, argc - 5);
        if (argc == 5 && strcmp(argv[1], "name") == 0)
                return name_mode(argv[2], atoi(argv[3]), argv[4]);
        if (argc == 4 && strcmp(argv[1], "listen") == 0)
                return listen_mode(argv[2], atoi(argv[3]));
        if (argc == 3 && strcmp(argv[1], "retry") == 0)
                return retry_mode(atoi(argv[2]));
        fprintf(stderr,
                "usage: attack_twin recv send|conn|meddle|zero ADDR DIR PORT... | name ADDR "
                "PORT udp|tcp | listen ADDR PORT | retry PORT\n");
        return 2;
}

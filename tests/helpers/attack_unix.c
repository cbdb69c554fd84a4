/*
 * Connects to sockets from inside the sandbox (tests/security/test_unixsock.c), and prints
 * what it got, one line per attempt: "got:DATA" or "err:ERRNO-NAME".
 *
 *   attack_unix connect PATH            connect to a pathname socket, read what it sends
 *   attack_unix abstract NAME           the same with the abstract name "\0NAME"
 *   attack_unix race-link A B LINK N    a thread points the symlink LINK at A, then B, then A
 *                                       ... while the main thread connects to LINK N times
 *   attack_unix race-buf A B N          a thread rewrites the sockaddr's sun_path between A
 *                                       and B while the main thread connects with it N times
 *   attack_unix bind PATH               bind a stream socket to PATH: "bound:NAME" (what
 *                                       getsockname says) or "err:ERRNO-NAME"
 *   attack_unix bind-abstract NAME      the same with "\0NAME"; "bound" stays listening for
 *                                       2 s (a host client may try it meanwhile)
 *   attack_unix race-bind A B N         a thread rewrites the sockaddr between A and B while
 *                                       the main thread binds fresh sockets with it N times,
 *                                       removing A after each bind: "bound-a=X other=Y"
 *   attack_unix dgram SRV CLI           a datagram socket bound to SRV receives from one bound
 *                                       to CLI and replies to the source address it got:
 *                                       "from:NAME" (the source) and "reply:ok" or "err:ERRNO"
 *   attack_unix send-from CLI DST       bind a datagram socket to CLI, send "hi" to DST:
 *                                       "sent" or "err:ERRNO-NAME"
 *   attack_unix overreach DST          send "x" to DST with a control message whose length runs
 *                                       32 bytes past the buffer given: "err:EINVAL" as natively
 *                                       (it must not reach over what the supervisor adds)
 *   attack_unix race-dir DIR TARGET N   DIR a directory, DIR.alt a symlink to TARGET; a thread
 *                                       swaps the two (RENAME_EXCHANGE) while the main thread
 *                                       binds DIR/s.sock N times, removing what it made:
 *                                       "bound=B here=H there=T" (in the directory, at TARGET)
 *   attack_unix inet PORT               blocking TCP connect to 127.0.0.1:PORT, read
 *   attack_unix inet-nb PORT            the same, non-blocking: EINPROGRESS, poll, SO_ERROR
 *
 * The race modes print a summary "hello=H secret=S other=O" (what the connections read).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static atomic_bool stop;

/* Read what the peer sends (it closes after); "" if nothing. */
static void read_reply(int s, char *buf, size_t size)
{
        size_t n = 0;
        ssize_t r;

        while (n < size - 1 && (r = read(s, buf + n, size - 1 - n)) > 0)
                n += (size_t)r;
        buf[n] = '\0';
}

static int connect_un(const char *path, bool abstract, char *buf, size_t size)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        socklen_t len;
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (s < 0)
                return -errno;
        if (abstract) {
                strncpy(sa.sun_path + 1, path, sizeof(sa.sun_path) - 2);
                len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
        } else {
                strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
                len = sizeof(sa);
        }
        if (connect(s, (struct sockaddr *)&sa, len) < 0) {
                int e = errno;
                close(s);
                return -e;
        }
        read_reply(s, buf, size);
        close(s);
        return 0;
}

static void print_result(int r, const char *buf)
{
        if (r < 0)
                printf("err:%s\n", strerrorname_np(-r));
        else
                printf("got:%s\n", buf);
}

struct counts {
        int hello, secret, other;
};

static void count(struct counts *c, int r, const char *buf)
{
        if (r == 0 && strstr(buf, "SECRET"))
                c->secret++;
        else if (r == 0 && strstr(buf, "HELLO"))
                c->hello++;
        else
                c->other++;
}

/* ---- race-link: flip a symlink ------------------------------------------------------------ */

struct flip_link {
        const char *a, *b, *link;
};

static void *flip_link(void *arg)
{
        const struct flip_link *f = arg;
        char tmp[4096];

        snprintf(tmp, sizeof(tmp), "%s.tmp", f->link);
        for (unsigned i = 0; !atomic_load(&stop); i++) {
                unlink(tmp);
                if (symlink(i % 2 ? f->b : f->a, tmp) == 0)
                        rename(tmp, f->link);
        }
        return NULL;
}

static int race_link(const char *a, const char *b, const char *link, int n)
{
        struct flip_link f = {a, b, link};
        struct counts c = {0};
        pthread_t t;
        char buf[256];

        if (symlink(a, link) < 0)
                return 1;
        pthread_create(&t, NULL, flip_link, &f);
        for (int i = 0; i < n; i++) {
                int r = connect_un(link, false, buf, sizeof(buf));
                count(&c, r, buf);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        printf("hello=%d secret=%d other=%d\n", c.hello, c.secret, c.other);
        return 0;
}

/* ---- race-buf: rewrite the address while it is being connected -------------------------- */

static struct sockaddr_un shared = {.sun_family = AF_UNIX};
static char path_a[sizeof(shared.sun_path)], path_b[sizeof(shared.sun_path)];

static void *flip_buf(void *arg)
{
        (void)arg;
        for (unsigned i = 0; !atomic_load(&stop); i++)
                memcpy((char *)shared.sun_path, i % 2 ? path_b : path_a, sizeof(path_a));
        return NULL;
}

static int race_buf(const char *a, const char *b, int n)
{
        struct counts c = {0};
        pthread_t t;
        char buf[256];

        strncpy(path_a, a, sizeof(path_a) - 1);
        strncpy(path_b, b, sizeof(path_b) - 1);
        memcpy(shared.sun_path, path_a, sizeof(path_a));
        pthread_create(&t, NULL, flip_buf, NULL);
        for (int i = 0; i < n; i++) {
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

                if (connect(s, (struct sockaddr *)&shared, sizeof(shared)) < 0)
                        r = -errno;
                else
                        read_reply(s, buf, sizeof(buf));
                close(s);
                count(&c, r, buf);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        printf("hello=%d secret=%d other=%d\n", c.hello, c.secret, c.other);
        return 0;
}

/* ---- inet ---------------------------------------------------------------------------------- */

static int inet(int port, bool nonblocking)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
        char buf[256];

        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                struct pollfd p = {.fd = s, .events = POLLOUT};
                int err = 0;
                socklen_t len = sizeof(err);

                if (!nonblocking || errno != EINPROGRESS) {
                        print_result(-errno, NULL);
                        return 0;
                }
                printf("inprogress\n");
                if (poll(&p, 1, 10000) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                        err = ETIMEDOUT;
                if (err) {
                        print_result(-err, NULL);
                        return 0;
                }
                /* Back to blocking to read the reply simply. */
                {
                        struct pollfd in = {.fd = s, .events = POLLIN};
                        poll(&in, 1, 10000);
                }
        }
        read_reply(s, buf, sizeof(buf));
        print_result(0, buf);
        close(s);
        return 0;
}

/* ---- bind ---------------------------------------------------------------------------- */

static int bind_un(const char *path, bool abstract, bool linger)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX}, got;
        socklen_t len = sizeof(got);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        strncpy(sa.sun_path + abstract, path, sizeof(sa.sun_path) - 2);
        if (bind(s, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path))) <
                    0 ||
            getsockname(s, (struct sockaddr *)&got, &len) < 0) {
                printf("err:%s\n", strerrorname_np(errno));
                return 0;
        }
        printf("bound:%s\n", got.sun_path + abstract);
        if (linger && listen(s, 4) == 0)
                sleep(2);
        close(s);
        return 0;
}

static int race_bind(const char *a, const char *b, int n)
{
        int bound_a = 0, other = 0;
        pthread_t t;

        strncpy(path_a, a, sizeof(path_a) - 1);
        strncpy(path_b, b, sizeof(path_b) - 1);
        memcpy(shared.sun_path, path_a, sizeof(path_a));
        pthread_create(&t, NULL, flip_buf, NULL);
        for (int i = 0; i < n; i++) {
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                if (bind(s, (struct sockaddr *)&shared, sizeof(shared)) == 0) {
                        if (unlink(a) == 0)
                                bound_a++;
                        else
                                other++;
                }
                close(s);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        printf("bound-a=%d other=%d\n", bound_a, other);
        return 0;
}

/* ---- datagram names ------------------------------------------------------------------ */

static int dgram_socket(const char *path, struct sockaddr_un *sa)
{
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
        strncpy(sa->sun_path, path, sizeof(sa->sun_path) - 1);
        if (s < 0 || bind(s, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
                printf("err:%s\n", strerrorname_np(errno));
                exit(0);
        }
        return s;
}

static int dgram(const char *srv, const char *cli)
{
        struct sockaddr_un a, b, from = {0};
        socklen_t len = sizeof(from);
        struct timeval tv = {.tv_sec = 5};
        int s = dgram_socket(srv, &a), c = dgram_socket(cli, &b);
        char buf[16];

        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (sendto(c, "ping", 4, 0, (struct sockaddr *)&a, sizeof(a)) != 4 ||
            recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len) < 0) {
                printf("err:%s\n", strerrorname_np(errno));
                return 0;
        }
        printf("from:%s\n", len > sizeof(sa_family_t) ? from.sun_path : "");
        /* The reply goes to the address the kernel gave as the source, as a server does. */
        if (sendto(s, "ok", 2, 0, (struct sockaddr *)&from, len) != 2 ||
            recv(c, buf, sizeof(buf), 0) != 2)
                printf("err:%s\n", strerrorname_np(errno));
        else
                printf("reply:ok\n");
        unlink(srv);
        unlink(cli);
        return 0;
}

static int send_from(const char *cli, const char *dst)
{
        struct sockaddr_un a, d = {.sun_family = AF_UNIX};
        int c = dgram_socket(cli, &a);

        strncpy(d.sun_path, dst, sizeof(d.sun_path) - 1);
        if (sendto(c, "hi", 2, 0, (struct sockaddr *)&d, sizeof(d)) != 2)
                printf("err:%s\n", strerrorname_np(errno));
        else
                printf("sent\n");
        unlink(cli);
        return 0;
}

/* ---- race-dir: a directory swapped for a symlink ------------------------------------- */

static char race_dir[256], race_alt[300];

static void *swap_dir(void *arg)
{
        (void)arg;
        while (!atomic_load(&stop))
                renameat2(AT_FDCWD, race_dir, AT_FDCWD, race_alt, RENAME_EXCHANGE);
        return NULL;
}

static int race_dir_bind(const char *dir, const char *target, int n)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char there[4096];
        int bound = 0, here = 0, away = 0, fd;
        pthread_t t;

        snprintf(race_dir, sizeof(race_dir), "%s", dir);
        snprintf(race_alt, sizeof(race_alt), "%s.alt", dir);
        snprintf(there, sizeof(there), "%s/s.sock", target);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.sock", dir);
        if (mkdir(dir, 0755) < 0 || symlink(target, race_alt) < 0 ||
            (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                printf("err:%s\n", strerrorname_np(errno));
                return 0;
        }
        pthread_create(&t, NULL, swap_dir, NULL);
        for (int i = 0; i < n; i++) {
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                        bound++;
                        here += unlinkat(fd, "s.sock", 0) == 0;
                        away += unlink(there) == 0;
                }
                close(s);
        }
        atomic_store(&stop, true);
        pthread_join(t, NULL);
        printf("bound=%d here=%d there=%d\n", bound, here, away);
        return 0;
}

/* A datagram to `dst` whose one control message (not SOL_SOCKET's) claims 32 bytes more
 * than the buffer holds: the kernel refuses it. Behind it, a supervisor that appended its
 * own credentials would have had them skipped, and the message stamped with its ids. */
static int overreach(const char *dst)
{
        union {
                struct cmsghdr h;
                char buf[24];
        } u = {0};
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char d[] = "x";
        struct iovec iov = {.iov_base = d, .iov_len = 1};
        struct msghdr m = {.msg_name = &sa,
                           .msg_namelen = sizeof(sa),
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = u.buf,
                           .msg_controllen = sizeof(u.buf)};
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", dst);
        u.h.cmsg_len = sizeof(u.buf) + 32;
        u.h.cmsg_level = SOL_IP;
        u.h.cmsg_type = 1;
        if (s < 0 || sendmsg(s, &m, 0) < 0)
                print_result(-errno, NULL);
        else
                printf("sent\n");
        return 0;
}

int main(int argc, char **argv)
{
        char buf[256];

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 3 && strcmp(argv[1], "connect") == 0) {
                int r = connect_un(argv[2], false, buf, sizeof(buf));
                print_result(r, buf);
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "abstract") == 0) {
                int r = connect_un(argv[2], true, buf, sizeof(buf));
                print_result(r, buf);
                return 0;
        }
        if (argc == 6 && strcmp(argv[1], "race-link") == 0)
                return race_link(argv[2], argv[3], argv[4], atoi(argv[5]));
        if (argc == 5 && strcmp(argv[1], "race-buf") == 0)
                return race_buf(argv[2], argv[3], atoi(argv[4]));
        if (argc == 3 && strcmp(argv[1], "bind") == 0)
                return bind_un(argv[2], false, false);
        if (argc == 3 && strcmp(argv[1], "bind-abstract") == 0)
                return bind_un(argv[2], true, true);
        if (argc == 5 && strcmp(argv[1], "race-bind") == 0)
                return race_bind(argv[2], argv[3], atoi(argv[4]));
        if (argc == 4 && strcmp(argv[1], "dgram") == 0)
                return dgram(argv[2], argv[3]);
        if (argc == 4 && strcmp(argv[1], "send-from") == 0)
                return send_from(argv[2], argv[3]);
        if (argc == 5 && strcmp(argv[1], "race-dir") == 0)
                return race_dir_bind(argv[2], argv[3], atoi(argv[4]));
        if (argc == 3 && strcmp(argv[1], "overreach") == 0)
                return overreach(argv[2]);
        if (argc == 3 && strcmp(argv[1], "inet") == 0)
                return inet(atoi(argv[2]), false);
        if (argc == 3 && strcmp(argv[1], "inet-nb") == 0)
                return inet(atoi(argv[2]), true);
        fprintf(stderr, "usage: see the comment at the top of attack_unix.c\n");
        return 2;
}

/*
 * A unix socket's name is the path its bind gave (supervisor/binder.h): getsockname, the
 * source a datagram peer sees and replies to. And the bind that gives it stays within the
 * program's walls, whatever a racing thread swaps: judged from outside, on the host's tree.
 *
 *   <top>/ws     the workspace (copy-on-write where a mount namespace can be made)
 *   <top>/ws/lower   a directory of the host's tree behind the overlay: the swap's target
 *   <top>/ro     --ro          <top>/hid  --hide          <top>/recv.sock  a host receiver
 *   /tmp/unixbind-host-PID     a host directory behind the sandbox's private /tmp
 *
 * The mode comes from `stockade run -v` ("unix socket names"): "as given" with a binder,
 * "the last component" without one (no Landlock): then a name reads as its last component,
 * as it did before. Without Landlock --ro is the view's word only (the README says so): its
 * checks are left out there.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 120 };

static char top[64], work[96], lower[128], ro[96], hid[96], recv_path[96], home[96], host_tmp[64];
static bool as_given, cow, landlock;
static uid_t sbx_uid;

static void mkdir_ok(const char *path)
{
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
        const char *v[] = {"-v", NULL};
        struct run_result r;
        char cmd[512];

        (void)state;
        sbx_uid = geteuid() == 0 ? 65534 : geteuid();
        snprintf(top, sizeof(top), "/var/tmp/unixbind-XXXXXX");
        assert_non_null(mkdtemp(top));
        assert_int_equal(chmod(top, 0755), 0);
        snprintf(work, sizeof(work), "%s/ws", top);
        snprintf(lower, sizeof(lower), "%s/lower", work);
        snprintf(ro, sizeof(ro), "%s/ro", top);
        snprintf(hid, sizeof(hid), "%s/hid", top);
        snprintf(home, sizeof(home), "%s/home", top);
        snprintf(recv_path, sizeof(recv_path), "%s/recv.sock", top);
        snprintf(host_tmp, sizeof(host_tmp), "/tmp/unixbind-host-%d", (int)getpid());
        mkdir_ok(work);
        mkdir_ok(lower);
        mkdir_ok(ro);
        mkdir_ok(hid);
        mkdir_ok(home);
        mkdir(host_tmp, 0777);
        assert_int_equal(chmod(host_tmp, 0777), 0);
        /* The sandbox's uid could write every one of them: only its walls keep it out. */
        snprintf(cmd, sizeof(cmd), "chown -R %u '%s' '%s' '%s' '%s'", (unsigned)sbx_uid, work, ro,
                 hid, host_tmp);
        assert_int_equal(system(cmd), 0);
        setenv("HOME", home, 1); /* the sessions' store */
        assert_int_equal(runner_stockade_sh(work, v, "true", TIMEOUT_S, &r), 0);
        as_given = strstr(r.err, "unix socket names            as given") != NULL;
        cow = strstr(r.err, "private directories (--tmp)  yes") != NULL;
        landlock = strstr(r.err, "Landlock                     ABI") != NULL;
        if (!strstr(r.err, "unix socket names"))
                fail_msg("`stockade run -v` does not say how unix sockets are named: %s", r.err);
        runner_free(&r);
        return 0;
}

static int teardown(void **state)
{
        char cmd[256];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", top, host_tmp);
        return system(cmd) == 0 ? 0 : -1;
}

/* sh -c SCRIPT in the sandbox, from the workspace, with $A the helper, $W, $RO, $HID, $T. */
static void run_sandboxed(const char *const extra[], const char *script, struct run_result *r)
{
        const char *opts[16] = {"--ro", ro, "--hide", hid};
        char full[4096];
        size_t n = 4;
        int k = snprintf(full, sizeof(full),
                         "A='%s'; W='%s'; RO='%s'; HID='%s'; T='%s'; RECV='%s'; cd \"$W\" && %s",
                         ATTACK_UNIX, work, ro, hid, "/tmp/ub", recv_path, script);

        assert_true(k > 0 && (size_t)k < sizeof(full));
        for (; extra && *extra && n < 15; extra++)
                opts[n++] = *extra;
        opts[n] = NULL;
        assert_int_equal(runner_stockade_sh(work, opts, full, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

/* What getsockname says, for each kind of path: the path as given, relative or absolute, in
 * the workspace and in /tmp. A name without a directory part read so before. */
static void names_as_given(void **state)
{
        static const char *const script =
                "mkdir -p sub $T && $A bind sub/rel.sock; $A bind ./dot.sock; "
                "$A bind \"$W/sub/abs.sock\"; $A bind $T/t.sock; $A bind plain.sock; "
                "cd $T && $A bind ../ub/up.sock; cd \"$W\"; rm -rf $T sub dot.sock plain.sock";
        char want[1024];
        struct run_result r;

        (void)state;
        if (as_given)
                snprintf(want, sizeof(want),
                         "bound:sub/rel.sock\nbound:./dot.sock\nbound:%s/sub/abs.sock\n"
                         "bound:/tmp/ub/t.sock\nbound:plain.sock\nbound:../ub/up.sock\n",
                         work);
        else
                snprintf(want, sizeof(want),
                         "bound:rel.sock\nbound:dot.sock\nbound:abs.sock\n"
                         "bound:t.sock\nbound:plain.sock\nbound:up.sock\n");
        run_sandboxed(NULL, script, &r);
        if (strcmp(r.out, want) != 0)
                fail_msg("getsockname (%s): want\n%sgot\n%s%s", as_given ? "as given" : "last",
                         want, r.out, r.err);
        runner_free(&r);
}

/* A datagram server replies to the source address it received from: that address must name
 * the client's socket from the server's directory too. */
static void datagram_reply(void **state)
{
        struct run_result r;

        (void)state;
        run_sandboxed(NULL, "mkdir -p d1 d2 && $A dgram d1/srv.sock d2/cli.sock; rm -rf d1 d2", &r);
        if (as_given ? strcmp(r.out, "from:d2/cli.sock\nreply:ok\n") != 0
                     : strcmp(r.out, "from:cli.sock\nerr:ENOENT\n") != 0)
                fail_msg("datagram (%s): %s %s", as_given ? "as given" : "last", r.out, r.err);
        runner_free(&r);
}

/* A receiver on the host (outside the sandbox: --net host lets the datagram out) sees the
 * sandbox's socket by the path the program bound it with. */
static void *receive_one(void *arg)
{
        struct sockaddr_un from = {0};
        socklen_t len = sizeof(from);
        char buf[16], *name = arg;
        int s = *(int *)(name + 200);

        name[0] = '\0';
        if (recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len) > 0 &&
            len > sizeof(sa_family_t))
                snprintf(name, 200, "%s", from.sun_path);
        return NULL;
}

static void datagram_source_outside(void **state)
{
        const char *net[] = {"--net", "host", NULL};
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct timeval tv = {.tv_sec = 20};
        char got[200 + sizeof(int)], want[160];
        struct run_result r;
        pthread_t t;
        int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        (void)state;
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", recv_path);
        assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(chmod(recv_path, 0777), 0);
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        memcpy(got + 200, &s, sizeof(s));
        assert_int_equal(pthread_create(&t, NULL, receive_one, got), 0);
        run_sandboxed(net, "mkdir -p out && $A send-from out/c.sock \"$RECV\"; rm -rf out", &r);
        pthread_join(t, NULL);
        close(s);
        unlink(recv_path);
        snprintf(want, sizeof(want), "%s", as_given ? "out/c.sock" : "c.sock");
        if (strcmp(r.out, "sent\n") != 0 || strcmp(got, want) != 0)
                fail_msg("the host's receiver saw `%s`, want `%s`: %s %s", got, want, r.out, r.err);
        runner_free(&r);
}

/* Binds into hidden and read-only places: refused, with the errnos of before. */
static void refusals_unchanged(void **state)
{
        struct run_result r;
        struct stat st;
        char p[160];

        (void)state;
        run_sandboxed(NULL,
                      landlock ? "$A bind \"$RO/x.sock\"; $A bind ../ro/y.sock; "
                                 "$A bind \"$HID/x.sock\"; $A bind ../hid/y.sock"
                               : "$A bind \"$HID/x.sock\"; $A bind ../hid/y.sock",
                      &r);
        if (strcmp(r.out, landlock ? "err:EACCES\nerr:EACCES\nerr:ENOENT\nerr:ENOENT\n"
                                   : "err:ENOENT\nerr:ENOENT\n") != 0)
                fail_msg("unexpected answers: %s %s", r.out, r.err);
        for (const char *const *d = (const char *const[]){landlock ? ro : hid, hid, NULL}; *d; d++)
                for (const char *const *f = (const char *const[]){"x.sock", "y.sock", NULL}; *f;
                     f++) {
                        snprintf(p, sizeof(p), "%s/%s", *d, *f);
                        if (lstat(p, &st) == 0)
                                fail_msg("a socket was made at %s", p);
                }
        runner_free(&r);
}

/* Whether directory `dir` on the host holds anything. */
static bool has_entries(const char *dir)
{
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "[ -z \"$(ls -A '%s')\" ]", dir);
        return system(cmd) != 0;
}

/*
 * The swap (the attack that reverted 36f6db7): a thread exchanges a directory of the
 * workspace with a symlink to a host directory while the main thread binds into it. The
 * targets: the host's own tree behind the overlay (the same absolute path reads as the
 * overlay inside), a --ro directory, a host directory behind the private /tmp. None may get
 * a socket file, whatever the uid could write; checked on the host after the run. Only
 * meaningful if binds happened at all (retried like test_unixsock's races).
 */
static void swap_attack(void **state)
{
        struct {
                const char *target;
                bool check; /* the host directory is out of the program's reach here */
        } cases[] = {{lower, cow}, {ro, landlock}, {host_tmp, cow}};

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char script[512];
                struct run_result r = {0};
                bool bound = false;

                snprintf(script, sizeof(script),
                         "rm -rf run run.alt; $A race-dir run '%s' 400; rm -rf run run.alt",
                         cases[i].target);
                for (int attempt = 0; attempt < 4 && !bound; attempt++) {
                        runner_free(&r);
                        run_sandboxed(NULL, script, &r);
                        if (cases[i].check && has_entries(cases[i].target))
                                fail_msg("the swap made a file in %s: %s %s", cases[i].target,
                                         r.out, r.err);
                        bound = strstr(r.out, "bound=") && !strstr(r.out, "here=0 ");
                }
                if (!bound)
                        fail_msg("`%s`: never bound in the directory: %s %s", script, r.out, r.err);
                runner_free(&r);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(names_as_given),
                cmocka_unit_test(datagram_reply),
                cmocka_unit_test(datagram_source_outside),
                cmocka_unit_test(refusals_unchanged),
                cmocka_unit_test(swap_attack),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

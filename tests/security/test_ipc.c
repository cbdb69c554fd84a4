/*
 * SysV IPC (review, hole 3): the sandbox must not reach a host process's shared memory,
 * semaphores or message queues.
 *
 * This process is the host: before each sandbox starts it creates a 0600 IPC_PRIVATE
 * segment with known contents, a keyed one, a semaphore set with known values and a queue
 * holding one message. tests/helpers/attack_ipc.c then enumerates (SHM_STAT, ...), attaches,
 * overwrites, sets values, steals, injects and removes from inside `stockade run`, and the
 * objects are checked from here afterwards.
 *
 * The same tests run in both configurations (two ctest entries):
 *   - test_ipc: a private IPC namespace (root: CLONE_NEWIPC; others: with a user namespace).
 *     Exits 77 on a host that allows neither;
 *   - test_ipc_denied: STOCKADE_TEST_DISABLE=ipcns, the fallback of hosts without user
 *     namespaces: the filter refuses SysV IPC with EPERM.
 * A native run of the same attack on objects of their own shows that it does damage, so
 * that a clean result under stockade means something.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 30, SHM_SIZE = 8192, NSEMS = 3 };

static const char shm_text[] = "host secret: the sandbox must not touch this";
static const char msg_text[] = "host message";
static unsigned short sem_values[NSEMS] = {7, 11, 13};

static bool denied_config; /* STOCKADE_TEST_DISABLE=ipcns: the filter's fallback */

union semun {
        int val;
        struct semid_ds *buf;
        unsigned short *array;
};

struct msg {
        long type;
        char text[64];
};

/* The host's objects, made fresh for each test. */
struct host {
        int shm, shm_keyed, sem, msq;
        key_t key;
};

static void fill_segment(int id)
{
        char *p = shmat(id, NULL, 0);

        assert_true(p != (void *)-1);
        memcpy(p, shm_text, sizeof(shm_text));
        shmdt(p);
}

static int make_host(void **state)
{
        struct host *h = calloc(1, sizeof(*h));
        struct msg m = {.type = 1};

        h->shm = shmget(IPC_PRIVATE, SHM_SIZE, IPC_CREAT | 0600);
        assert_true(h->shm >= 0);
        fill_segment(h->shm);
        /* A key of our own; another test run may hold some. */
        h->shm_keyed = -1;
        for (int i = 0; i < 16 && h->shm_keyed < 0; i++) {
                h->key = (key_t)(0x53540000 | (getpid() & 0xfff) << 4 | i);
                h->shm_keyed = shmget(h->key, 4096, IPC_CREAT | IPC_EXCL | 0600);
        }
        assert_true(h->shm_keyed >= 0);
        fill_segment(h->shm_keyed);
        h->sem = semget(IPC_PRIVATE, NSEMS, IPC_CREAT | 0600);
        assert_true(h->sem >= 0);
        assert_int_equal(semctl(h->sem, 0, SETALL, (union semun){.array = sem_values}), 0);
        h->msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
        assert_true(h->msq >= 0);
        memcpy(m.text, msg_text, sizeof(msg_text));
        assert_int_equal(msgsnd(h->msq, &m, sizeof(msg_text), 0), 0);
        *state = h;
        return 0;
}

static int remove_host(void **state)
{
        struct host *h = *state;

        shmctl(h->shm, IPC_RMID, NULL);
        shmctl(h->shm_keyed, IPC_RMID, NULL);
        semctl(h->sem, 0, IPC_RMID);
        msgctl(h->msq, IPC_RMID, NULL);
        free(h);
        return 0;
}

/* ---- judging from outside ---------------------------------------------------------------- */

/* Say what is wrong in why[] and return it. */
__attribute__((format(printf, 3, 4))) static const char *damage(char *why, size_t len,
                                                                const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
        return why;
}

static const char *check_segment(int id, char *why, size_t len)
{
        struct shmid_ds ds;
        char *p;

        if (shmctl(id, IPC_STAT, &ds) < 0)
                return damage(why, len, "segment %d is gone (%s)", id, strerrorname_np(errno));
        if ((ds.shm_perm.mode & 0777) != 0600 || (ds.shm_perm.mode & SHM_DEST))
                return damage(why, len, "segment %d has mode %#o", id, ds.shm_perm.mode);
        if (ds.shm_nattch != 0 || ds.shm_lpid != getpid())
                return damage(why, len, "segment %d was attached by pid %d", id, (int)ds.shm_lpid);
        p = shmat(id, NULL, SHM_RDONLY);
        if (p == (void *)-1)
                return damage(why, len, "cannot attach segment %d", id);
        if (memcmp(p, shm_text, sizeof(shm_text)) != 0)
                damage(why, len, "segment %d now holds \"%.40s\"", id, p);
        shmdt(p);
        return why[0] ? why : NULL;
}

static const char *check_sem(int id, char *why, size_t len)
{
        unsigned short now[NSEMS] = {0};
        struct semid_ds ds;

        if (semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}) < 0)
                return damage(why, len, "semaphore set %d is gone", id);
        if ((ds.sem_perm.mode & 0777) != 0600 || ds.sem_otime != 0)
                return damage(why, len, "semaphore set %d: mode %#o, semop at %ld", id,
                              ds.sem_perm.mode, (long)ds.sem_otime);
        if (semctl(id, 0, GETALL, (union semun){.array = now}) < 0 ||
            memcmp(now, sem_values, sizeof(now)) != 0)
                return damage(why, len, "semaphore set %d holds %u %u %u", id, now[0], now[1],
                              now[2]);
        return NULL;
}

static const char *check_msq(int id, char *why, size_t len)
{
        struct msqid_ds ds;
        struct msg m = {0};

        if (msgctl(id, IPC_STAT, &ds) < 0)
                return damage(why, len, "queue %d is gone", id);
        if (ds.msg_qnum != 1 || ds.msg_lspid != getpid() || ds.msg_lrpid != 0)
                return damage(why, len, "queue %d: %lu messages, last sent by %d, received by %d",
                              id, (unsigned long)ds.msg_qnum, (int)ds.msg_lspid, (int)ds.msg_lrpid);
        if (msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT) < 0 || strcmp(m.text, msg_text) != 0)
                return damage(why, len, "queue %d: the message is now \"%s\"", id, m.text);
        return NULL;
}

/* NULL when every host object is as it was made (the check consumes the message). */
static const char *host_damage(const struct host *h, char *why, size_t len)
{
        const char *d;

        why[0] = '\0';
        if ((d = check_segment(h->shm, why, len)) || (d = check_segment(h->shm_keyed, why, len)) ||
            (d = check_sem(h->sem, why, len)) || (d = check_msq(h->msq, why, len)))
                return d;
        if (shmget(h->key, 0, 0) != h->shm_keyed)
                return damage(why, len, "key %#x no longer names segment %d", (unsigned)h->key,
                              h->shm_keyed);
        return NULL;
}

/* ---- running the attack -------------------------------------------------------------------- */

static void show(const char *what, const struct run_result *r)
{
        print_message("  %s: exit %d\n  stdout: %s  stderr: %s", what, r->exit_code,
                      r->out_len ? r->out : "(none)\n", r->err_len ? r->err : "(none)\n");
}

static void attack_args(const struct host *h, char buf[5][24])
{
        snprintf(buf[0], 24, "%d", (int)getpid());
        snprintf(buf[1], 24, "%d", h->shm);
        snprintf(buf[2], 24, "%#x", (unsigned)h->key);
        snprintf(buf[3], 24, "%d", h->sem);
        snprintf(buf[4], 24, "%d", h->msq);
}

static void run_attack(const struct host *h, bool sandboxed, struct run_result *r)
{
        char a[5][24];

        attack_args(h, a);
        if (sandboxed) {
                const char *v[] = {"-v", "--", ATTACK_IPC, "attack", a[0],
                                   a[1], a[2], a[3],       a[4],     NULL};
                assert_int_equal(runner_stockade_run(v, TIMEOUT_S, r), 0);
        } else {
                const char *v[] = {ATTACK_IPC, "attack", a[0], a[1], a[2], a[3], a[4], NULL};
                assert_int_equal(runner_run((char *const *)v, NULL, TIMEOUT_S, r), 0);
        }
}

static unsigned long our_ipcns(void)
{
        struct stat st;

        assert_int_equal(stat("/proc/self/ns/ipc", &st), 0);
        return (unsigned long)st.st_ino;
}

/* The sandbox's IPC namespace, from the "ipcns N" line the helper prints first. */
static unsigned long sandbox_ipcns(const struct run_result *r)
{
        const char *p = strstr(r->out, "ipcns ");

        if (!p) {
                show("sandboxed", r);
                fail_msg("the helper did not report its IPC namespace");
        }
        return strtoul(p + 6, NULL, 10);
}

static void expect_in(const char *haystack, const char *needle, const struct run_result *r)
{
        if (!strstr(haystack, needle)) {
                show("sandboxed", r);
                fail_msg("expected \"%s\"", needle);
        }
}

/* What -v says and where the sandbox ran, for the configuration under test. */
static void expect_config(const struct run_result *r)
{
        if (denied_config) {
                expect_in(r->err,
                          "SysV IPC                     denied (no private IPC namespace: "
                          "disabled for a test)",
                          r);
                /* The host's namespace: only the filter stands between it and the attack. */
                assert_int_equal(sandbox_ipcns(r), our_ipcns());
        } else {
                expect_in(r->err, "SysV IPC                     private IPC namespace", r);
                assert_int_not_equal(sandbox_ipcns(r), our_ipcns());
        }
}

/* The control: natively, the attack does damage (so its absence under stockade means
 * something, and host_damage() can see it). */
static void native_attack_does_damage(void **state)
{
        struct run_result r;
        char why[200];

        run_attack(*state, false, &r);
        if (!host_damage(*state, why, sizeof(why))) {
                show("native", &r);
                fail_msg("the native attack left the objects alone: the test proves nothing");
        }
        print_message("  control: natively, %s\n", why);
        runner_free(&r);
}

static void sandbox_cannot_touch_host_ipc(void **state)
{
        struct run_result r;
        const char *damage;
        char why[200];

        run_attack(*state, true, &r);
        damage = host_damage(*state, why, sizeof(why));
        if (damage) {
                show("sandboxed", &r);
                fail_msg("the sandbox reached the host's IPC objects: %s", damage);
        }
        if (r.exit_code != 0) {
                show("sandboxed", &r);
                fail_msg("the attack did not run to its end");
        }
        expect_config(&r);
        if (denied_config) /* refused by the filter, not by permissions or absence */
                expect_in(r.out, "shmget by key: EPERM", &r);
        else /* an empty namespace: the host's key is unknown there */
                expect_in(r.out, "shmget by key: ENOENT", &r);
        runner_free(&r);
}

/* The program's own SysV IPC works in its namespace, and fails with EPERM without one. */
static void own_ipc(void **state)
{
        const char *v[] = {"-v", "--", ATTACK_IPC, "own", NULL};
        struct run_result r;
        char ids[64];

        assert_int_equal(runner_stockade_run(v, TIMEOUT_S, &r), 0);
        expect_config(&r);
        /* The user namespace maps our own uid and gid; as root the command runs as nobody
         * unless --user says otherwise. */
        if (getuid() == 0)
                snprintf(ids, sizeof(ids), "ids 65534 65534\n");
        else
                snprintf(ids, sizeof(ids), "ids %u %u\n", (unsigned)getuid(), (unsigned)getgid());
        expect_in(r.out, ids, &r);
        if (denied_config) {
                expect_in(r.out, "shmget: EPERM", &r);
                if (r.exit_code != EPERM) {
                        show("sandboxed", &r);
                        fail_msg("expected exit %d (EPERM)", EPERM);
                }
        } else if (r.exit_code != 0) {
                show("sandboxed", &r);
                fail_msg("SysV IPC between the sandbox's own processes failed");
        }
        runner_free(&r);
}

/* STOCKADE_TEST_DISABLE=userns: root still gets a namespace; anyone else gets the denial. The
 * variable itself still needs --allow-degraded. */
static void without_user_namespaces(void **state)
{
        const char *v[] = {"-v", "--", ATTACK_IPC, "own", NULL};
        const char *plain[] = {"--", ATTACK_IPC, "own", NULL};
        const char *old = getenv("STOCKADE_TEST_ALLOW_DEGRADED");
        bool root = geteuid() == 0;
        struct run_result r;

        setenv("STOCKADE_TEST_DISABLE", "userns", 1);
        unsetenv("STOCKADE_TEST_ALLOW_DEGRADED");
        assert_int_equal(runner_stockade_run(plain, TIMEOUT_S, &r), 0);
        expect_in(r.err, "STOCKADE_TEST_DISABLE=userns is set", &r);
        assert_int_equal(r.exit_code, 125);
        runner_free(&r);

        setenv("STOCKADE_TEST_ALLOW_DEGRADED", "1", 1);
        assert_int_equal(runner_stockade_run(v, TIMEOUT_S, &r), 0);
        unsetenv("STOCKADE_TEST_DISABLE");
        if (old)
                setenv("STOCKADE_TEST_ALLOW_DEGRADED", old, 1);
        else
                unsetenv("STOCKADE_TEST_ALLOW_DEGRADED");
        if (root) {
                expect_in(r.err, "SysV IPC                     private IPC namespace\n", &r);
                assert_int_equal(r.exit_code, 0);
        } else {
                expect_in(r.err,
                          "denied (no private IPC namespace: user namespaces disabled for "
                          "a test)",
                          &r);
                expect_in(r.out, "shmget: EPERM", &r);
                assert_int_equal(r.exit_code, EPERM);
        }
        runner_free(&r);
}

/* On a host that gives no private IPC namespace, only test_ipc_denied can run. */
static bool host_has_ipcns(void)
{
        const char *v[] = {"-v", "--", ATTACK_IPC, NULL}; /* usage: exits 123 */
        struct run_result r;
        const char *line;
        bool ok;

        if (runner_stockade_run(v, TIMEOUT_S, &r) < 0)
                return true; /* let the tests fail loudly */
        line = strstr(r.err, "denied (no private IPC namespace:");
        ok = !line;
        if (!ok)
                printf("skip: this host gives stockade no private IPC namespace (%.*s); "
                       "test_ipc_denied covers the fallback\n",
                       (int)strcspn(line, "\n"), line);
        runner_free(&r);
        return ok;
}

int main(void)
{
        const char *disabled = getenv("STOCKADE_TEST_DISABLE");
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(native_attack_does_damage, make_host, remove_host),
                cmocka_unit_test_setup_teardown(sandbox_cannot_touch_host_ipc, make_host,
                                                remove_host),
                cmocka_unit_test(own_ipc),
        };
        /* It sets STOCKADE_TEST_DISABLE itself, so only where the variable is not in use. */
        const struct CMUnitTest hook[] = {cmocka_unit_test(without_user_namespaces)};

        denied_config = disabled && strstr(disabled, "ipcns");
        if (!denied_config && !host_has_ipcns())
                return 77;
        if (denied_config || (disabled && *disabled))
                return cmocka_run_group_tests(tests, NULL, NULL);
        return cmocka_run_group_tests(tests, NULL, NULL) | cmocka_run_group_tests(hook, NULL, NULL);
}

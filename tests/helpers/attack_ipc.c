/*
 * attack_ipc: SysV IPC from inside the sandbox (tests/security/test_ipc.c judges the effect
 * from outside).
 *
 *     attack_ipc attack VICTIM_PID SHMID SHMKEY SEMID MSQID
 *         Look for a host process's objects the way an attacker would: enumerate with
 *         SHM_STAT / SEM_STAT / MSG_STAT (and their _ANY forms), find by key, and try the ids
 *         as given (ids in a shared namespace are small, guessable numbers). Then attach and
 *         overwrite, change values and modes, steal and inject messages, IPC_RMID.
 *         Only objects of the test are harmed: ids given on the command line, and segments
 *         and queues the enumeration shows to come from VICTIM_PID. Other users of SysV IPC
 *         on the machine (run natively as root, this program could reach them all) are
 *         left alone.
 *     attack_ipc own
 *         Use SysV IPC between our own processes: a segment, a semaphore and a queue made
 *         here, a child that attaches and reads what we wrote and answers through all three.
 *
 * Both print one line per step ("shm 3: attached", "shmget: EPERM") and "ids UID GID" and
 * "ipcns INODE" first. `own` exits with the errno of the first call that failed (0: all
 * worked); `attack` exits 0 (the test judges the damage, not our opinion of it). Exit 123:
 * bad usage. Links nothing but libc, so that a native run is an honest control.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#define SEM_STAT_ANY 20
#define MSG_STAT_ANY 13
#endif

enum { EXIT_USAGE = 123, MAX_FOUND = 64, ENUM_LIMIT = 32768 };

union semun {
        int val;
        struct semid_ds *buf;
        unsigned short *array;
};

struct msg {
        long type;
        char text[64];
};

static const char *err_name(int e)
{
        return strerrorname_np(e) ?: "?";
}

static void say_errno(const char *what, int id)
{
        if (id >= 0)
                printf("%s %d: %s\n", what, id, err_name(errno));
        else
                printf("%s: %s\n", what, err_name(errno));
}

static void print_identity(void)
{
        struct stat st;

        printf("ids %u %u\n", (unsigned)getuid(), (unsigned)getgid());
        if (stat("/proc/self/ns/ipc", &st) == 0)
                printf("ipcns %lu\n", (unsigned long)st.st_ino);
}

static void add_id(int *ids, int *n, int id)
{
        for (int i = 0; i < *n; i++)
                if (ids[i] == id)
                        return;
        if (*n < MAX_FOUND)
                ids[(*n)++] = id;
}

/* ---- attack ---------------------------------------------------------------------------- */

/* SHM_STAT takes an index into the namespace's table and returns the id there. */
static void find_shm(pid_t victim, int *ids, int *n)
{
        struct shm_info info;
        int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);

        if (max < 0)
                say_errno("shmctl SHM_INFO", -1);
        for (int idx = 0; idx <= (max < 0 ? 255 : max); idx++)
                for (int cmd = SHM_STAT; cmd; cmd = cmd == SHM_STAT ? SHM_STAT_ANY : 0) {
                        struct shmid_ds ds;
                        int id = shmctl(idx, cmd, &ds);
                        if (id < 0)
                                continue;
                        printf("shm %d: found by %s (creator pid %d)\n", id,
                               cmd == SHM_STAT ? "SHM_STAT" : "SHM_STAT_ANY", (int)ds.shm_cpid);
                        if (ds.shm_cpid == victim)
                                add_id(ids, n, id);
                }
}

static void attack_shm(int id)
{
        struct shmid_ds ds;
        char *p = shmat(id, NULL, 0);

        if (p == (void *)-1) {
                say_errno("shmat", id);
        } else {
                memcpy(p, "OVERWRITTEN BY THE SANDBOX", 27);
                printf("shm %d: attached and overwritten\n", id);
                shmdt(p);
        }
        if (shmctl(id, IPC_STAT, &ds) < 0) {
                say_errno("shmctl IPC_STAT", id);
        } else {
                ds.shm_perm.mode = 0666;
                if (shmctl(id, IPC_SET, &ds) == 0)
                        printf("shm %d: mode set to 0666\n", id);
                else
                        say_errno("shmctl IPC_SET", id);
        }
        if (shmctl(id, IPC_RMID, NULL) == 0)
                printf("shm %d: removed\n", id);
        else
                say_errno("shmctl IPC_RMID", id);
}

static void find_sem(void)
{
        struct seminfo info;
        int max = semctl(0, 0, SEM_INFO, (union semun){.buf = (struct semid_ds *)&info});

        if (max < 0)
                say_errno("semctl SEM_INFO", -1);
        for (int idx = 0; idx <= (max < 0 ? 255 : max); idx++) {
                struct semid_ds ds;
                int id = semctl(idx, 0, SEM_STAT_ANY, (union semun){.buf = &ds});
                if (id >= 0) /* sem_perm says nothing of the creator: report only */
                        printf("sem %d: found by SEM_STAT_ANY (%lu semaphores)\n", id,
                               (unsigned long)ds.sem_nsems);
        }
}

static void attack_sem(int id)
{
        struct sembuf op = {.sem_num = 0, .sem_op = 5, .sem_flg = IPC_NOWAIT};

        if (semop(id, &op, 1) == 0)
                printf("sem %d: semop +5\n", id);
        else
                say_errno("semop", id);
        if (semctl(id, 1, SETVAL, (union semun){.val = 99}) == 0)
                printf("sem %d: SETVAL 99\n", id);
        else
                say_errno("semctl SETVAL", id);
        if (semctl(id, 0, IPC_RMID) == 0)
                printf("sem %d: removed\n", id);
        else
                say_errno("semctl IPC_RMID", id);
}

static void find_msg(pid_t victim, int *ids, int *n)
{
        struct msginfo info;
        int max = msgctl(0, MSG_INFO, (struct msqid_ds *)&info);

        if (max < 0)
                say_errno("msgctl MSG_INFO", -1);
        for (int idx = 0; idx <= (max < 0 ? 255 : max); idx++) {
                struct msqid_ds ds;
                int id = msgctl(idx, MSG_STAT_ANY, &ds);
                if (id < 0)
                        continue;
                printf("msg %d: found by MSG_STAT_ANY (last sender %d)\n", id, (int)ds.msg_lspid);
                if (ds.msg_lspid == victim)
                        add_id(ids, n, id);
        }
}

static void attack_msg(int id)
{
        struct msg m = {0};

        if (msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT | MSG_NOERROR) >= 0)
                printf("msg %d: stole \"%.*s\"\n", id, (int)sizeof(m.text), m.text);
        else
                say_errno("msgrcv", id);
        m = (struct msg){.type = 1, .text = "INJECTED BY THE SANDBOX"};
        if (msgsnd(id, &m, strlen(m.text) + 1, IPC_NOWAIT) == 0)
                printf("msg %d: injected a message\n", id);
        else
                say_errno("msgsnd", id);
        if (msgctl(id, IPC_RMID, NULL) == 0)
                printf("msg %d: removed\n", id);
        else
                say_errno("msgctl IPC_RMID", id);
}

static int attack(char **argv)
{
        pid_t victim = (pid_t)atoi(argv[0]);
        int shm[MAX_FOUND], sem[MAX_FOUND], msg[MAX_FOUND], nshm = 0, nsem = 0, nmsg = 0, id;
        key_t key = (key_t)strtol(argv[2], NULL, 0);

        find_shm(victim, shm, &nshm);
        id = shmget(key, 0, 0);
        if (id >= 0)
                printf("shm %d: found by key %#x\n", id, (unsigned)key);
        else
                say_errno("shmget by key", -1);
        if (id >= 0)
                add_id(shm, &nshm, id);
        add_id(shm, &nshm, atoi(argv[1]));
        find_sem();
        add_id(sem, &nsem, atoi(argv[3]));
        find_msg(victim, msg, &nmsg);
        add_id(msg, &nmsg, atoi(argv[4]));

        for (int i = 0; i < nshm; i++)
                attack_shm(shm[i]);
        for (int i = 0; i < nsem; i++)
                attack_sem(sem[i]);
        for (int i = 0; i < nmsg; i++)
                attack_msg(msg[i]);
        return 0;
}

/* ---- own: SysV IPC between our own processes ------------------------------------------- */

#define TRY(call, what)                                                                            \
        do {                                                                                       \
                if ((call) < 0) {                                                                  \
                        int e_ = errno;                                                            \
                        printf("%s: %s\n", what, err_name(e_));                                    \
                        return e_;                                                                 \
                }                                                                                  \
        } while (0)

/* The child: attach the parent's segment, check its words, answer in all three objects. */
static int own_child(int shm, int sem, int msq)
{
        struct sembuf up = {.sem_num = 0, .sem_op = 1};
        struct msg m = {.type = 2, .text = "hello parent"};
        char *p = shmat(shm, NULL, 0);

        TRY(p == (void *)-1 ? -1 : 0, "child shmat");
        if (strcmp(p, "hello child") != 0) {
                printf("child read \"%.20s\"\n", p);
                return EBADMSG;
        }
        strcpy(p + 64, "hello parent");
        shmdt(p);
        TRY(msgsnd(msq, &m, sizeof(m.text), 0), "child msgsnd");
        TRY(semop(sem, &up, 1), "child semop");
        return 0;
}

static int own(void)
{
        struct sembuf down = {.sem_num = 0, .sem_op = -1};
        struct msg m = {0};
        int shm, sem, msq, status, r = 0;
        char *p;
        pid_t pid;

        TRY(shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), "shmget");
        TRY(sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600), "semget");
        TRY(msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600), "msgget");
        p = shmat(shm, NULL, 0);
        TRY(p == (void *)-1 ? -1 : 0, "shmat");
        strcpy(p, "hello child");
        pid = fork();
        TRY(pid, "fork");
        if (pid == 0)
                _exit(own_child(shm, sem, msq));
        TRY(semop(sem, &down, 1), "semop (wait for the child)");
        TRY(msgrcv(msq, &m, sizeof(m.text), 2, 0), "msgrcv");
        TRY(waitpid(pid, &status, 0), "waitpid");
        if (!WIFEXITED(status) || WEXITSTATUS(status))
                r = WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
        else if (strcmp(p + 64, "hello parent") != 0 || strcmp(m.text, "hello parent") != 0)
                r = EBADMSG;
        printf("own: %s\n", r ? "the child's answer did not arrive" : "shm, sem and msg work");
        shmdt(p);
        shmctl(shm, IPC_RMID, NULL);
        semctl(sem, 0, IPC_RMID);
        msgctl(msq, IPC_RMID, NULL);
        return r;
}

int main(int argc, char **argv)
{
        int r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 7 && strcmp(argv[1], "attack") == 0) {
                print_identity();
                r = attack(argv + 2);
        } else if (argc == 2 && strcmp(argv[1], "own") == 0) {
                print_identity();
                r = own();
        } else {
                fprintf(stderr, "usage: attack_ipc attack VICTIM_PID SHMID SHMKEY SEMID MSQID\n"
                                "       attack_ipc own\n");
                return EXIT_USAGE;
        }
        return r > 120 ? 120 : r;
}

/*
 * The sandbox's /proc and /dev (supervisor/vfs/special.c, syscalls/fs_open.c), judged from
 * outside: a host process whose command line holds a secret, and a host terminal whose
 * master the test reads. Each attack first runs natively, as the same uid, to show that it
 * does reach the secret or the terminal there: the checks can fail.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 60 };

static char dir[PATH_MAX], secret[64];
static pid_t host_pid = -1;

/* A host process (the test's child, outside any sandbox) with the secret in its argv. */
static int setup(void **state)
{
        (void)state;
        snprintf(secret, sizeof(secret), "hostsecret%d%ld", (int)getpid(), (long)time(NULL));
        host_pid = fork();
        if (host_pid == 0) {
                /* A group of its own, to be killed whole; no fd of ctest's kept open. */
                int null = open("/dev/null", O_RDWR);

                setpgid(0, 0);
                dup2(null, 0), dup2(null, 1), dup2(null, 2);
                /* "; exit": sh must not exec sleep in its own place (the argv would go). */
                execl("/bin/sh", "sh", "-c", "sleep 120; exit 0", secret, (char *)NULL);
                _exit(127);
        }
        assert_non_null(getcwd(dir, sizeof(dir) - 32));
        strcat(dir, "/procdev-XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0777), 0); /* the sandbox runs as nobody under root */
        usleep(100000);                        /* the exec is done */
        return 0;
}

static int teardown(void **state)
{
        char cmd[PATH_MAX + 16];

        (void)state;
        if (host_pid > 0) {
                kill(-host_pid, SIGKILL);
                waitpid(host_pid, NULL, 0);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* `script` natively (sh -c, as the sandbox's uid) and under stockade; both outputs. */
static void both(const char *script, struct run_result *native, struct run_result *sandboxed)
{
        char *argv[] = {"/usr/bin/setpriv", "--reuid=65534",
                        "--regid=65534",    "--clear-groups",
                        "/bin/sh",          "-c",
                        (char *)script,     NULL};
        char *const *v = geteuid() == 0 ? argv : argv + 4;
        char saved[PATH_MAX];

        assert_non_null(getcwd(saved, sizeof(saved)));
        assert_int_equal(chdir(dir), 0);
        assert_int_equal(runner_run(v, NULL, TIMEOUT_S, native), 0);
        assert_int_equal(chdir(saved), 0);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, sandboxed), 0);
}

/* Every way to name /proc/PID of a process outside the tree finds nothing; the sandbox's own
 * processes are there. */
static void test_host_process_not_in_proc(void **state)
{
        char script[4096];
        struct run_result native, r;
        int p = (int)host_pid;

        (void)state;
        snprintf(script, sizeof(script),
                 "(cat /proc/%d/cmdline; echo; cat /proc/%d/status | head -1\n"
                 "cat /proc//%d/./cmdline; cat /proc/self/../%d/cmdline\n"
                 "cat /proc/%d/task/%d/cmdline\n"
                 "(cd /proc && cat %d/cmdline); (cd /proc/%d 2>/dev/null && cat cmdline)\n"
                 "ln -sf /proc/%d/cmdline link && cat link\n"
                 "ln -sf /proc/%d link2 && cat link2/cmdline\n"
                 "cat /proc/self/root/proc/%d/cmdline\n"
                 "exec 3</proc && cat /dev/fd/3/%d/cmdline) | tr '\\0' ' '\n"
                 "printf 'own: %%s %%s\\n' \"$(tr '\\0' ' ' < /proc/$$/cmdline)\" "
                 "\"$(head -1 /proc/self/status)\"\n",
                 p, p, p, p, p, p, p, p, p, p, p, p);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the host process's argv was not readable: %s %s", native.out,
                         native.err);
        if (strstr(r.out, secret) || strstr(r.err, secret))
                fail_msg("the sandbox read a host process's argv:\n%s\n%s", r.out, r.err);
        if (!strstr(r.out, "own: /bin/sh -c") || !strstr(r.out, "Name:"))
                fail_msg("the sandbox's own /proc is missing:\n%s\n%s", r.out, r.err);
        assert_non_null(strstr(r.err, "No such file or directory"));
        runner_free(&native);
        runner_free(&r);
}

/* A thread flips a path between the sandbox's own /proc/self/cmdline and the host process's
 * while others open it: the host process's argv never comes back. */
static void test_path_flip_race(void **state)
{
        char script[512];
        struct run_result native, r;

        (void)state;
        snprintf(script, sizeof(script), "exec %s flip /proc/self/cmdline /proc/%d/cmdline 2",
                 runner_probe(), (int)host_pid);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the flip did not read the argv: %s %s", native.out, native.err);
        if (strstr(r.out, secret))
                fail_msg("the race read a host process's argv: %s", r.out);
        if (!strstr(r.out, "flip: "))
                fail_msg("the attack did not run: %s %s", r.out, r.err);
        print_message("  %s", r.out);
        runner_free(&native);
        runner_free(&r);
}

/* A host terminal (another pty of the same user: a shell's, say) cannot be opened, so
 * nothing the sandbox writes reaches it; /dev/null and friends work; other devices are not
 * there. */
static void test_host_terminal_and_devices(void **state)
{
        char script[1024], buf[256];
        struct run_result native, r;
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
        const char *slave;
        ssize_t n;

        (void)state;
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = ptsname(master);
        assert_non_null(slave);
        assert_int_equal(chmod(slave, 0666), 0); /* natively anyone may write it */
        snprintf(script, sizeof(script),
                 "echo INJECTED > %s; echo INJECTED > /dev/pts/../pts/%s\n"
                 "(cd /dev/pts && echo INJECTED > %s)\n"
                 "python3 -c 'import os; p = os.open(\"%s\", os.O_PATH); "
                 "os.write(os.open(\"/proc/self/fd/%%d\" %% p, os.O_WRONLY), b\"INJECTED\")'\n"
                 "head -c 3 /dev/zero | wc -c; echo x > /dev/null && echo null-ok\n"
                 "head -c 4 /dev/urandom | wc -c; cat /dev/mem\n",
                 slave, slave + strlen("/dev/pts/"), slave + strlen("/dev/pts/"), slave);
        both(script, &native, &r);
        usleep(100000);
        n = read(master, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        if (!strstr(buf, "INJECTED"))
                fail_msg("natively the write did not reach the terminal: %s", native.err);
        /* Drain the native write, run the sandbox again, and look once more. */
        while (read(master, buf, sizeof(buf)) > 0)
                ;
        runner_free(&r);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, &r), 0);
        usleep(100000);
        n = read(master, buf, sizeof(buf) - 1);
        if (n > 0)
                fail_msg("the sandbox wrote to a host terminal: %.*s", (int)n, buf);
        if (!strstr(r.out, "null-ok") || !strstr(r.out, "3\n") || !strstr(r.out, "4\n"))
                fail_msg("the sandbox's devices do not work:\n%s\n%s", r.out, r.err);
        if (!strstr(r.err, "/dev/mem: No such"))
                fail_msg("host devices are visible:\n%s\n%s", r.out, r.err);
        close(master);
        runner_free(&native);
        runner_free(&r);
}

/* The runs' scratch directories in /dev/shm (not this test's own files there). */
/* The runs' private /dev/shm directories still on the host that hold `name`, a file the
 * sandbox made in its /dev/shm: only this test's runs made one of that name, so other runs
 * of the host coming and going meanwhile do not count. */
static int scratch_dirs_with(const char *name)
{
        char pattern[128];
        glob_t g;
        int n;

        snprintf(pattern, sizeof(pattern), "/dev/shm/stockade-*/shm/%s", name);
        if (glob(pattern, 0, NULL, &g) != 0)
                return 0;
        n = (int)g.gl_pathc;
        globfree(&g);
        return n;
}

/* POSIX shared memory is the sandbox's own: a host segment in /dev/shm is neither readable
 * nor removable, what the sandbox makes there never reaches the host's /dev/shm, and
 * shm_open/sem_open work (Python's multiprocessing locks). */
static void test_dev_shm_private(void **state)
{
        char host[64], made[64], script[1024], buf[128], mark[64], mark2[64], ptrace_script[96];
        struct run_result native, r;
        struct stat st;
        FILE *f;

        (void)state;
        snprintf(host, sizeof(host), "/dev/shm/stockade-host-%d", (int)getpid());
        snprintf(mark, sizeof(mark), "leakcheck-%d", (int)getpid());
        snprintf(mark2, sizeof(mark2), "leakcheck-noptrace-%d", (int)getpid());
        snprintf(ptrace_script, sizeof(ptrace_script), "echo x > /dev/shm/%s", mark2);
        snprintf(made, sizeof(made), "/dev/shm/stockade-made-%d", (int)getpid());
        if (stat("/dev/shm", &st) < 0) {
                print_message("  no /dev/shm on this host\n");
                skip();
        }
        f = fopen(host, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", secret);
        fclose(f);
        assert_int_equal(chmod(host, 0666), 0);
        snprintf(script, sizeof(script),
                 "cat %s; ls /dev/shm; rm -f %s; echo mine > %s && cat %s\n"
                 "python3 -c 'import os; p = os.open(\"%s\", os.O_PATH); "
                 "print(open(\"/proc/self/fd/%%d\" %% p).read())'\n"
                 "python3 -c 'import multiprocessing as m; m.Lock(); print(\"lock-ok\")'\n"
                 /* by name from inside: cd is the kernel's, the rest relative to it */
                 "cd /dev/shm && cat %s; chmod 600 %s && stat -c chmod-%%a %s; ls\n"
                 "python3 -c 'import os; os.open(\"%s\", os.O_PATH); print(\"opath-ok\")'\n"
                 "echo x > /dev/shm/%s\n",
                 host, host, made, made, host, host + 9, made + 9, made + 9, made + 9, mark);
        both(script, &native, &r);
        if (!strstr(native.out, secret))
                fail_msg("natively the host segment was not readable: %s", native.err);
        /* The native run removed it and made the others: put things back as they were. */
        unlink(made);
        snprintf(buf, sizeof(buf), "/dev/shm/%s", mark);
        unlink(buf);
        f = fopen(host, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", secret);
        fclose(f);
        runner_free(&r);
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, &r), 0);
        /* The run's scratch is gone with it, also without ptrace (another teardown). */
        setenv("STOCKADE_TEST_DISABLE", "ptrace", 1);
        {
                const char *degraded[] = {"--allow-degraded", NULL};
                struct run_result d;

                assert_int_equal(runner_stockade_sh(dir, degraded, ptrace_script, TIMEOUT_S, &d),
                                 0);
                runner_free(&d);
        }
        unsetenv("STOCKADE_TEST_DISABLE");
        if (scratch_dirs_with(mark) || scratch_dirs_with(mark2))
                fail_msg("a run left its scratch directory in /dev/shm (%d, %d)",
                         scratch_dirs_with(mark), scratch_dirs_with(mark2));
        if (strstr(r.out, secret) || strstr(r.out, "stockade-host-"))
                fail_msg("the sandbox saw the host's /dev/shm:\n%s", r.out);
        if (!strstr(r.out, "mine\n") || !strstr(r.out, "lock-ok") ||
            !strstr(r.out, "chmod-600\n") || !strstr(r.out, "opath-ok\n"))
                fail_msg("the sandbox's own /dev/shm does not work:\n%s\n%s", r.out, r.err);
        f = fopen(host, "r");
        if (!f)
                fail_msg("the sandbox removed a host segment");
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_non_null(strstr(buf, secret));
        if (stat(made, &st) == 0)
                fail_msg("what the sandbox made in /dev/shm reached the host's");
        unlink(host);
        runner_free(&native);
        runner_free(&r);
}

/* Without Landlock (--allow-degraded on a host without it) the view alone keeps hidden
 * paths away: the fast way, which leans on Landlock, is not taken. */
static void hidden_without_landlock(void **state)
{
        char home[PATH_MAX + 16], key[PATH_MAX + 32], cmd[PATH_MAX * 8], buf[128];
        const char *opts[] = {"--allow-degraded", NULL};
        const char *old_home = getenv("HOME");
        char *saved = old_home ? strdup(old_home) : NULL;
        struct run_result r;
        FILE *f;

        (void)state;
        snprintf(home, sizeof(home), "%s/home", dir);
        snprintf(key, sizeof(key), "%s/.ssh/id_rsa", home);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.ssh' && echo %s > '%s' && chmod -R a+rwX '%s'",
                 home, secret, key, home);
        assert_int_equal(system(cmd), 0);
        setenv("HOME", home, 1);
        setenv("STOCKADE_TEST_DISABLE", "landlock", 1);
        /* By its full path: run as root, the command's own HOME is nobody's. */
        snprintf(cmd, sizeof(cmd),
                 "cat '%s'; echo overwritten > '%s'; cd '%s/.ssh' && cat id_rsa; "
                 "python3 -c 'import os; p = os.open(\"%s\", os.O_PATH); "
                 "print(open(\"/proc/self/fd/%%d\" %% p).read())'; echo done",
                 key, key, home, key);
        assert_int_equal(runner_stockade_sh(dir, opts, cmd, TIMEOUT_S, &r), 0);
        unsetenv("STOCKADE_TEST_DISABLE");
        if (saved)
                setenv("HOME", saved, 1);
        free(saved);
        if (!strstr(r.out, "done"))
                fail_msg("the run did not happen: %s %s", r.out, r.err);
        if (strstr(r.out, secret))
                fail_msg("a hidden file was read without Landlock: %s", r.out);
        f = fopen(key, "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        if (!strstr(buf, secret))
                fail_msg("a hidden file was overwritten without Landlock: %s", buf);
        runner_free(&r);
}

/* As root with --user root (uid 0 without capabilities), a file inside another user's 0700
 * directory stays out of reach: the supervisor's walk has the program's rights only. */
static void other_users_directory(void **state)
{
        char priv[PATH_MAX + 16], cmd[PATH_MAX * 8];
        const char *opts[] = {"--user", "root", NULL};
        struct run_result r;

        (void)state;
        if (geteuid() != 0)
                skip();
        snprintf(priv, sizeof(priv), "%s/priv", dir);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s' && echo %s > '%s/data' && chmod 644 '%s/data' && "
                 "chown -R 65533:65533 '%s' && chmod 700 '%s'",
                 priv, secret, priv, priv, priv, priv);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "cat '%s/data'; cd '%s' && cat data; echo done", priv, priv);
        assert_int_equal(runner_stockade_sh(dir, opts, cmd, TIMEOUT_S, &r), 0);
        if (!strstr(r.out, "done"))
                fail_msg("the run did not happen: %s %s", r.out, r.err);
        if (strstr(r.out, secret))
                fail_msg("uid 0 without capabilities read through a 0700 directory: %s", r.out);
        runner_free(&r);
}

/* /proc/keys, /proc/key-users and /proc/sysvipc show what the opener's credentials and IPC
 * namespace see: opened by the supervisor they showed a root supervisor's keyring
 * descriptions and the host's SysV segments (third outside review). Not in the view. */
static void host_only_proc_files(void **state)
{
        const char *script = "for f in keys key-users sysvipc/shm sysvipc/msg sysvipc/sem; do "
                             "cat /proc/$f >/dev/null 2>&1 && echo read-$f; done; "
                             "ls /proc | grep -E '^(keys|key-users|sysvipc)$'; echo finished";
        struct run_result r;

        (void)state;
        assert_int_equal(runner_stockade_sh(dir, NULL, script, TIMEOUT_S, &r), 0);
        if (strcmp(r.out, "finished\n") != 0)
                fail_msg("exit %d:\n%s%s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* /proc/self and /proc/thread-self are symlinks to lstat, as natively, by any spelling
 * (they showed as the directories they lead to). */
static void self_links_are_links(void **state)
{
        const char *script = "stat -c '%F %a' /proc/self /proc/thread-self; cd /proc && "
                             "stat -c '%F' self thread-self; stat -L -c '%F' self";
        struct run_result native, r;

        (void)state;
        both(script, &native, &r);
        assert_string_equal(native.out, "symbolic link 777\nsymbolic link 777\nsymbolic link\n"
                                        "symbolic link\ndirectory\n");
        if (strcmp(r.out, native.out) != 0)
                fail_msg("native:\n%sunder stockade:\n%s%s", native.out, r.out, r.err);
        runner_free(&native);
        runner_free(&r);
}

/* A mount beneath /proc (binfmt_misc's place: its register file gave host root) cannot be
 * written through a working directory or dirfd on it. Root only, in a mount namespace of
 * the test's own, with a tmpfs standing in for binfmt_misc. */
static void mount_beneath_proc(void **state)
{
        char cmd[PATH_MAX * 12];
        FILE *f;
        struct run_result r;
        char *argv[] = {"/bin/sh", "-c", cmd, NULL};

        (void)state;
        if (geteuid() != 0)
                skip();
        /* Open each path O_PATH (no rule judges that), then reopen it through /proc/self/fd:
         * what the supervisor opens for the sandbox. PPID: stockade's own directory. */
        snprintf(cmd, sizeof(cmd), "%s/reopen.py", dir);
        f = fopen(cmd, "w");
        assert_non_null(f);
        fputs("import os, sys\n"
              "for path in sys.argv[1:]:\n"
              "    path = path.replace('PPID', str(os.getppid()))\n"
              "    try:\n"
              "        p = os.open(path, os.O_PATH)\n"
              "        print(open('/proc/self/fd/%d' % p, 'rb').read().replace(b'\\0', b' '))\n"
              "    except OSError as e:\n"
              "        print(path, e)\n",
              f);
        fclose(f);
        snprintf(cmd, sizeof(cmd),
                 "unshare -m --propagation private sh -c '"
                 "mount -t tmpfs none /proc/sys/fs/binfmt_misc || exit 77; "
                 "echo orig > /proc/sys/fs/binfmt_misc/f; chmod 666 /proc/sys/fs/binfmt_misc/f; "
                 "%s run --user root -- sh -c \"cd /proc/sys/fs/binfmt_misc && echo pwn >> f\"; "
                 "%s run -- sh -c \"cd /proc/sys/fs/binfmt_misc && echo pwn >> f\"; "
                 "echo content: $(cat /proc/sys/fs/binfmt_misc/f); "
                 "mkdir -p %s/proc2 && mount -t proc proc %s/proc2 && "
                 "%s run -- sh -c \"xargs -0 echo < %s/proc2/%d/cmdline\"; "
                 "MY_TOKEN=%s %s run --user root -- python3 %s/reopen.py "
                 "%s/proc2/%d/cmdline %s/proc2/PPID/environ'",
                 runner_stockade(), runner_stockade(), dir, dir, runner_stockade(), dir,
                 (int)host_pid, secret, runner_stockade(), dir, dir, (int)host_pid, dir);
        assert_int_equal(runner_run(argv, NULL, TIMEOUT_S, &r), 0);
        if (r.exit_code == 77)
                skip();
        if (!strstr(r.out, "content: orig") || strstr(r.out, "pwn"))
                fail_msg("a file beneath /proc was written: %s %s", r.out, r.err);
        /* Another procfs mount is not a way round the /proc view. */
        if (strstr(r.out, secret))
                fail_msg("a second procfs mount showed a host process: %s", r.out);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_host_process_not_in_proc),
                cmocka_unit_test(test_path_flip_race),
                cmocka_unit_test(test_host_terminal_and_devices),
                cmocka_unit_test(test_dev_shm_private),
                cmocka_unit_test(host_only_proc_files),
                cmocka_unit_test(self_links_are_links),
                cmocka_unit_test(hidden_without_landlock),
                cmocka_unit_test(other_users_directory),
                cmocka_unit_test(mount_beneath_proc),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

/* stockade on a real terminal (issue 10): the sandbox gets a pty of its own, job control
 * and the keys behave as natively, and the user's terminal is left as it was found. Each
 * test drives a pty from outside: either `bash -i` (job control) or stockade itself as the
 * terminal's session leader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/helpers/ptyrun.h"
#include "tests/helpers/runner.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define PROMPT "PROMPT$ "

static char workdir[64];

/* The stockade the lines run: the build's, or under `test_tty --fast` a wrapper that adds
 * --fast to each subcommand (every case again in --fast's pid namespace). */
static const char *stk;
static bool fast;
static char wrapper[PATH_MAX];

static void make_wrapper(void)
{
        FILE *f;

        stk = runner_stockade();
        if (!fast)
                return;
        snprintf(wrapper, sizeof(wrapper), "%s/stockade-fast", workdir);
        f = fopen(wrapper, "w");
        if (!f ||
            fprintf(f, "#!/bin/sh\ncmd=$1\nshift\nexec '%s' \"$cmd\" --fast \"$@\"\n",
                    runner_stockade()) < 0 ||
            fclose(f) != 0 || chmod(wrapper, 0755) < 0) {
                fprintf(stderr, "cannot write %s\n", wrapper);
                exit(1);
        }
        stk = wrapper;
}

static int setup(void **state)
{
        if (access("/bin/bash", X_OK) != 0) {
                fprintf(stderr, "skip: no /bin/bash for the job-control tests\n");
                exit(77);
        }
        strcpy(workdir, "/tmp/stockade-tty.XXXXXX");
        if (!mkdtemp(workdir) || chmod(workdir, 0777) < 0 || chdir(workdir) < 0)
                return -1;
        setenv("PS1", PROMPT, 1);
        setenv("TERM", "dumb", 1);
        make_wrapper();
        return 0;
}

static int teardown(void **state)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* An interactive bash on a fresh terminal, at its first prompt. */
static void shell_start(struct pty_session *s)
{
        char *argv[] = {"bash", "--norc", "--noprofile", "-i", NULL};

        assert_int_equal(pty_spawn(s, argv, -1, 24, 80), 0);
        if (pty_expect(s, PROMPT, 10) < 0)
                fail_msg("no prompt from bash: %s", s->seen);
}

/* Type a command line and wait for the next prompt; fail with the transcript if none. */
static void shell_run(struct pty_session *s, const char *line, int timeout_s)
{
        pty_send(s, line);
        pty_send(s, "\r");
        if (pty_expect(s, PROMPT, timeout_s) < 0)
                fail_msg("no prompt after `%s`: %s", line, s->seen + s->consumed);
}

static void expect(struct pty_session *s, const char *needle, int timeout_s)
{
        if (pty_expect(s, needle, timeout_s) < 0)
                fail_msg("`%s` never came: %s", needle, s->seen);
}

static char *read_file(const char *name)
{
        static char buf[4096];
        int fd = open(name, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

        if (fd >= 0)
                close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

/* The leak of the issue: a background sandbox reading the terminal got what the user typed
 * at the prompt. It must get nothing until `fg`, and then only what is typed then. */
static void background_reads_nothing(void **state)
{
        struct pty_session s;
        char line[512];

        shell_start(&s);
        snprintf(line, sizeof(line), "%s run --rw . -- sh -c 'cat > out.txt' &", stk);
        shell_run(&s, line, 10);
        pty_drain(&s, 700);
        shell_run(&s, "typed_secret_77", 10);
        assert_non_null(strstr(s.seen, "typed_secret_77: command not found"));
        shell_run(&s, "jobs", 10);
        assert_null(strstr(read_file("out.txt"), "typed_secret"));
        /* In the foreground it reads, as cat natively would. */
        pty_send(&s, "fg\r");
        pty_drain(&s, 700);
        pty_send(&s, "later\r");
        pty_drain(&s, 300);
        pty_send(&s, "\x04");
        expect(&s, PROMPT, 10);
        assert_string_equal(read_file("out.txt"), "later\n");
        pty_close(&s);
}

/* --tty never: no terminal inside at all. The fds that were the user's terminal are pipes
 * stockade relays: output arrives, typed input arrives in the foreground only, and a
 * background run steals nothing typed at the prompt (the leak of the issue, which handing the
 * terminal over would bring back: the sandbox is in a session of its own, where job control
 * does not guard it). */
static void tty_never_relays_pipes(void **state)
{
        struct pty_session s;
        char line[512];

        shell_start(&s);
        snprintf(line, sizeof(line),
                 "%s run -q --tty never -- sh -c 'test -t 0 || test -t 1 || test -t 2 || echo "
                 "no-term-$((6*7)); read x; echo got-$x'",
                 stk);
        pty_send(&s, line);
        pty_send(&s, "\r");
        expect(&s, "no-term-42", 10);
        pty_send(&s, "typed\r");
        expect(&s, "got-typed", 10);
        expect(&s, PROMPT, 10);
        snprintf(line, sizeof(line), "%s run -q --rw . --tty never -- sh -c 'cat > out.txt' &",
                 stk);
        shell_run(&s, line, 10);
        pty_drain(&s, 700);
        shell_run(&s, "typed_secret_78", 10);
        assert_non_null(strstr(s.seen, "typed_secret_78: command not found"));
        assert_null(strstr(read_file("out.txt"), "typed_secret"));
        pty_send(&s, "fg\r");
        pty_drain(&s, 700);
        pty_send(&s, "later\r");
        pty_drain(&s, 300);
        pty_send(&s, "\x04");
        expect(&s, PROMPT, 10);
        assert_string_equal(read_file("out.txt"), "later\n");
        pty_close(&s);
}

/* Whether `pid` has ended (gone, or a zombie nobody reaped: it was the killed shell's). */
static bool ended(pid_t pid)
{
        char path[64], *st;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        st = strrchr(read_file(path), ')');
        return !st || st[1] == '\0' || st[2] == 'Z' || st[2] == 'X';
}

/* A background run whose terminal hangs up without a SIGHUP reaching it (the shell was
 * killed, the job disowned; the emulator then closes the terminal) ends, as the job natively
 * would on the hangup, rather than waiting in the background forever. */
static void hangup_ends_background_run(void **state)
{
        struct pty_session s;
        char line[512];
        pid_t pid;
        int i;

        shell_start(&s);
        snprintf(line, sizeof(line),
                 "%s run --rw . -- sh -c 'cat > out.txt' & echo $! > bg.pid; disown", stk);
        shell_run(&s, line, 10);
        pty_drain(&s, 700);
        pid = (pid_t)atoi(read_file("bg.pid"));
        assert_true(pid > 0);
        assert_false(ended(pid));
        pty_close(&s); /* SIGKILL to the shell, then the terminal closes: a hangup */
        for (i = 0; i < 50 && !ended(pid); i++)
                usleep(100 * 1000);
        if (!ended(pid)) {
                kill(pid, SIGKILL);
                fail_msg("stockade (pid %d) still runs 5 s after its terminal hung up", (int)pid);
        }
}

/* ^C interrupts the whole foreground job, grandchildren included: nothing more is printed
 * and the status is 130, as natively. */
static void ctrl_c_interrupts_the_job(void **state)
{
        struct pty_session s;
        char line[512];

        shell_start(&s);
        snprintf(line, sizeof(line),
                 "%s run --rw . -- sh -c 'echo READY; sh -c \"sleep 5.4321; echo LE\"\"AK\"; "
                 "echo LE\"\"AK2'",
                 stk);
        pty_send(&s, line);
        pty_send(&s, "\r");
        expect(&s, "READY", 10);
        pty_drain(&s, 300);
        pty_send(&s, "\x03");
        expect(&s, PROMPT, 4); /* well before the sleep would end */
        shell_run(&s, "echo rc=$?", 5);
        assert_non_null(strstr(s.seen, "rc=130"));
        assert_false(runner_process_alive("sleep 5.4321"));
        assert_null(strstr(s.seen, "LEAK"));
        pty_close(&s);
}

/* ^Z stops the job and gives the prompt back; fg continues it with the terminal. */
static void ctrl_z_and_fg(void **state)
{
        struct pty_session s;
        char line[512];

        shell_start(&s);
        snprintf(line, sizeof(line), "%s run --rw . -- sh -c 'echo READY; read x; echo got:$x'",
                 stk);
        pty_send(&s, line);
        pty_send(&s, "\r");
        expect(&s, "READY", 10);
        pty_drain(&s, 300);
        pty_send(&s, "\x1a");
        expect(&s, "Stopped", 5);
        expect(&s, PROMPT, 5);
        pty_send(&s, "fg\r");
        pty_drain(&s, 700);
        pty_send(&s, "hello\r");
        expect(&s, "got:hello", 5);
        expect(&s, PROMPT, 5);
        pty_close(&s);
}

/* stockade as the terminal's own session leader (no shell): */
static void run_on_pty(struct pty_session *s, const char *script, int stdout_fd)
{
        char *argv[] = {(char *)stk, "run", "--", "sh", "-c", (char *)script, NULL};

        assert_int_equal(pty_spawn(s, argv, stdout_fd, 24, 80), 0);
}

static void window_size_follows(void **state)
{
        struct pty_session s;
        struct winsize ws = {.ws_row = 50, .ws_col = 132};

        run_on_pty(&s, "stty size; echo READY; read x; stty size", -1);
        expect(&s, "24 80", 10);
        expect(&s, "READY", 10);
        pty_drain(&s, 300);
        /* The kernel sends SIGWINCH to stockade, the foreground group of this terminal. */
        assert_int_equal(ioctl(s.master, TIOCSWINSZ, &ws), 0);
        pty_drain(&s, 500);
        pty_send(&s, "\r");
        expect(&s, "50 132", 5);
        assert_true(WIFEXITED(pty_wait(&s, 10)));
        pty_close(&s);
}

/* The program leaves its terminal raw and is killed: the user's terminal is as it was. */
static void settings_restored(void **state)
{
        struct pty_session s;
        struct termios before, after;
        int status;

        run_on_pty(&s, "stty raw -echo -isig; echo READY; kill -KILL $$", -1);
        assert_int_equal(tcgetattr(s.slave, &before), 0);
        expect(&s, "READY", 10);
        status = pty_wait(&s, 10);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 137);
        assert_int_equal(tcgetattr(s.slave, &after), 0);
        assert_int_equal(after.c_lflag, before.c_lflag);
        assert_int_equal(after.c_iflag, before.c_iflag);
        assert_int_equal(after.c_oflag, before.c_oflag);
        assert_true(after.c_lflag & ECHO);
        assert_true(after.c_lflag & ISIG);
        pty_close(&s);
}

/* TIOCSTI inside reaches the sandbox's own pty at most: nothing lands in the user's input,
 * and the user's terminal is not among the sandbox's fds. */
static void tiocsti_stays_inside(void **state)
{
        struct pty_session s;
        char outer[64], script[512];
        int queued = -1;

        run_on_pty(&s,
                   "python3 -c 'import fcntl, termios, os\n"
                   "print(\"TTY=\" + os.ttyname(0) + \"=\" + os.ttyname(1))\n"
                   "try:\n"
                   "    fcntl.ioctl(0, termios.TIOCSTI, b\"X\")\n"
                   "    print(\"STI ok\")\n"
                   "except OSError as e:\n"
                   "    print(\"STI errno\", e.errno)\n'",
                   -1);
        assert_int_equal(ttyname_r(s.slave, outer, sizeof(outer)), 0);
        snprintf(script, sizeof(script), "TTY=%s=", outer);
        expect(&s, "TTY=", 10);
        expect(&s, "STI", 10);
        assert_true(WIFEXITED(pty_wait(&s, 10)));
        assert_null(strstr(s.seen, script)); /* a terminal of its own */
        assert_int_equal(ioctl(s.slave, FIONREAD, &queued), 0);
        assert_int_equal(queued, 0);
        pty_close(&s);
}

/* stdin a terminal, stdout a pipe: the output keeps its bytes (no CRLF). */
static void pipe_output_is_exact(void **state)
{
        struct pty_session s;
        char buf[64] = {0};
        int p[2];
        ssize_t n;

        assert_int_equal(pipe(p), 0);
        run_on_pty(&s, "printf 'a\\nb\\n'; test -t 0 && echo tty-in >&2", p[1]);
        close(p[1]);
        assert_true(WIFEXITED(pty_wait(&s, 10)));
        n = read(p[0], buf, sizeof(buf) - 1);
        close(p[0]);
        assert_int_equal(n, 4);
        assert_string_equal(buf, "a\nb\n");
        assert_non_null(strstr(s.seen, "tty-in"));
        pty_close(&s);
}

/* --tty always with no terminal anywhere (stdin /dev/null, stdout and stderr pipes, as in
 * CI): fds 0-2 all become the sandbox's pty, which is its controlling terminal, and what the
 * command writes still arrives (through the pty: "\r\n"); --tty never keeps the pipes. */
static void tty_always_without_terminal(void **state)
{
        const char *script = "tty; test -t 0 && echo in-tty; test -t 1 && echo out-tty; "
                             "test -t 2 && echo err-tty; echo done";
        const char *always[] = {"--tty", "always", "--", "sh", "-c", script, NULL};
        const char *never[] = {"--tty", "never", "--", "sh", "-c", script, NULL};
        struct run_result r;

        (void)state;
        assert_int_equal(runner_stockade_run(always, 30, &r), 0);
        assert_int_equal(r.exit_code, 0);
        if (!strstr(r.out, "/dev/pts/") || !strstr(r.out, "in-tty\r\n") ||
            !strstr(r.out, "out-tty\r\n") || !strstr(r.out, "err-tty\r\n") ||
            !strstr(r.out, "done\r\n"))
                fail_msg("--tty always: %s / %s", r.out, r.err);
        runner_free(&r);
        assert_int_equal(runner_stockade_run(never, 30, &r), 0);
        if (!strstr(r.out, "not a tty") || strstr(r.out, "in-tty") || !strstr(r.out, "done\n"))
                fail_msg("--tty never: %s / %s", r.out, r.err);
        runner_free(&r);
}

/* A terminal stockade cannot reopen (another user's: after su or setpriv) is not handed to
 * the command instead (the third review read what the user typed that way): the run is
 * refused, and nothing runs. Root only (the terminal is given to another uid). */
static void foreign_terminal_refused(void **state)
{
        int master = posix_openpt(O_RDWR | O_NOCTTY);
        char script[1024];
        const char *slave;
        struct run_result r;

        (void)state;
        if (geteuid() != 0)
                skip();
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = ptsname(master);
        assert_non_null(slave);
        assert_int_equal(chown(slave, 65533, 0), 0);
        assert_int_equal(chmod(slave, 0620), 0);
        snprintf(script, sizeof(script),
                 "exec 0<>%s; exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
                 "%s run --rw . -- sh -c 'echo RAN; cat /proc/self/fdinfo/0 >/dev/null'",
                 slave, stk);
        {
                char *argv[] = {"/bin/sh", "-c", script, NULL};
                assert_int_equal(runner_run(argv, NULL, 30, &r), 0);
        }
        if (strstr(r.out, "RAN") || r.exit_code != 125 ||
            !strstr(r.err, "cannot reopen the terminal"))
                fail_msg("exit %d: %s / %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        close(master);
}

/* --pass-fd of a terminal is refused: the command would hold it itself. */
static void pass_fd_terminal_refused(void **state)
{
        int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
        char fd[16];
        struct run_result r;

        (void)state;
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = open(ptsname(master), O_RDWR | O_NOCTTY); /* inherited by stockade */
        assert_true(slave > 2);
        snprintf(fd, sizeof(fd), "%d", slave);
        {
                const char *args[] = {"--pass-fd", fd, "--", "sh", "-c", "echo RAN", NULL};
                assert_int_equal(runner_stockade_run(args, 30, &r), 0);
        }
        if (r.exit_code != 125 || strstr(r.out, "RAN") || !strstr(r.err, "is a terminal"))
                fail_msg("exit %d: %s / %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        close(slave);
        close(master);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(background_reads_nothing),
                cmocka_unit_test(hangup_ends_background_run),
                cmocka_unit_test(tty_never_relays_pipes),
                cmocka_unit_test(ctrl_c_interrupts_the_job),
                cmocka_unit_test(ctrl_z_and_fg),
                cmocka_unit_test(window_size_follows),
                cmocka_unit_test(settings_restored),
                cmocka_unit_test(tiocsti_stays_inside),
                cmocka_unit_test(pipe_output_is_exact),
                cmocka_unit_test(tty_always_without_terminal),
                cmocka_unit_test(foreign_terminal_refused),
                cmocka_unit_test(pass_fd_terminal_refused),
        };
        fast = argc > 1 && strcmp(argv[1], "--fast") == 0;
        return cmocka_run_group_tests(tests, setup, teardown);
}

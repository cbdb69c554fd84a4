/*
 * exec judged in the view (syscalls/fs_exec.c), and checked again when it happens, judged
 * from outside: what ran is told by the exit status the test's own helper collects.
 *   - a path flipped in memory between an allowed file and another, while children exec it:
 *     the other never runs (a binary, and a script with the same interpreter), where the
 *     native control runs it;
 *   - --allow-exec by file, directory and pattern; --no-exec-writable, memfd included;
 *   - what must keep working: scripts, the dynamic loader, a hidden file absent.
 */
#include "tests/helpers/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { TIMEOUT_S = 120 };

static char top[PATH_MAX], work[PATH_MAX + 16], lsdir[PATH_MAX];

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static int setup(void **state)
{
        const char *probe = runner_probe();
        uid_t uid = geteuid() == 0 ? 65534 : geteuid();
        char *slash;

        (void)state;
        snprintf(top, sizeof(top), "%s/exec-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(top))
                return -1;
        chmod(top, 0755);
        snprintf(work, sizeof(work), "%s/work", top);
        snprintf(lsdir, sizeof(lsdir), "%s", probe);
        slash = strrchr(lsdir, '/');
        snprintf(slash + 1, sizeof(lsdir) - (size_t)(slash + 1 - lsdir), "lsdir");
        /* yes and no: two binaries that exit differently (true and false, copied) */
        sh("mkdir -p '%s/secret' '%s/ro' && cd '%s' && cp /bin/true yes && cp /bin/false no && "
           "printf '#!/bin/sh\\nexit 7\\n' > a.sh && printf '#!/bin/sh\\nexit 8\\n' > b.sh && "
           "printf '#!/usr/bin/env python3\\nprint(\"py-script\")\\n' > p.py && "
           "printf '#!/usr/bin/python3\\nprint(\"q-script\")\\n' > q.py && chmod +x q.py && "
           "cp /bin/true secret/hid && cp /bin/true ro/tool && chmod +x a.sh b.sh p.py && "
           "chown -R %u '%s'",
           work, work, work, (unsigned)uid, work);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        sh("rm -rf '%s'", top);
        return 0;
}

static void run(const char *const *opts, const char *script, struct run_result *r)
{
        const char *v[24] = {"-q"};
        size_t n = 1;

        for (; opts && *opts && n < 23; opts++)
                v[n++] = *opts;
        v[n] = NULL;
        assert_int_equal(runner_stockade_sh(work, v, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

static unsigned long count(const char *out, const char *what)
{
        const char *p = strstr(out, what);
        unsigned long n = 0;

        if (p)
                sscanf(p + strlen(what), " %lu", &n);
        return n;
}

/* flipexec A B under --allow-exec A: B never runs. Native: it does. */
static void flipped(const char *a, const char *b, const char *b_runs)
{
        char script[2 * PATH_MAX], cmd[3 * PATH_MAX];
        struct run_result r;
        FILE *p;
        char nat[4096] = "";
        size_t len;

        snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' flipexec %s %s 200", work, lsdir, a, b);
        p = popen(cmd, "r");
        assert_non_null(p);
        len = fread(nat, 1, sizeof(nat) - 1, p);
        nat[len] = '\0';
        pclose(p);
        if (!count(nat, b_runs))
                fail_msg("natively %s never ran: the flip proves nothing: %s", b, nat);
        snprintf(script, sizeof(script), "'%s' flipexec %s %s 400", lsdir, a, b);
        run((const char *[]){"--allow-exec", a, "--allow-exec", lsdir, "--allow-exec", "/bin/sh",
                             NULL},
            script, &r);
        if (!count(r.out, "exit:99") && !count(r.out, "signal:9"))
                fail_msg("no flip was caught: %s %s", r.out, r.err);
        if (count(r.out, b_runs))
                fail_msg("%s ran %lu times: %s", b, count(r.out, b_runs), r.out);
        if (!count(r.out, strcmp(b_runs, "exit:8") == 0 ? "exit:7" : "exit:0"))
                fail_msg("%s never ran: %s %s", a, r.out, r.err);
        runner_free(&r);
}

static void flipped_binary_never_runs(void **state)
{
        (void)state;
        flipped("./yes", "./no", "exit:1");
}

/* Same interpreter for both: the script's name in the interpreter's argv is what counts. */
static void flipped_script_never_runs(void **state)
{
        (void)state;
        flipped("./a.sh", "./b.sh", "exit:8");
}

static void allow_list(void **state)
{
        struct run_result r;

        (void)state;
        run((const char *[]){"--allow-exec", "/bin/sh", "--allow-exec", "ro", "--allow-exec",
                             "/usr/bin/e*", NULL},
            "./ro/tool && echo tool-ran; echo x | /bin/echo echo-ran; ./yes || echo yes-refused; "
            "/bin/true || echo true-refused",
            &r);
        if (!strstr(r.out, "tool-ran") || !strstr(r.out, "echo-ran") ||
            !strstr(r.out, "yes-refused") || !strstr(r.out, "true-refused"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        /* An allowed script whose interpreter may not run by itself is refused: once sh
         * runs, it opens the script again by name, which a symlink could redirect (second
         * outside review, F3). With the interpreter allowed too, it runs. */
        run((const char *[]){"--allow-exec", "/bin/sh", "--allow-exec", "a.sh", "--allow-exec",
                             "q.py", NULL},
            "./a.sh; echo a=$?; ./q.py; echo q=$?", &r);
        if (!strstr(r.out, "a=7") || !strstr(r.out, "q=126") || strstr(r.out, "q-script"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

static void no_writable(void **state)
{
        struct run_result r;

        (void)state;
        run((const char *[]){"--no-exec-writable", NULL},
            "./yes && echo yes-ran; ./a.sh; echo a=$?; /bin/true && echo system-ran; "
            "/usr/bin/python3 -c 'import os; fd = os.memfd_create(\"m\"); "
            "os.write(fd, open(\"/bin/true\", \"rb\").read()); "
            "os.execv(\"/proc/self/fd/%d\" % fd, [\"m\"])' 2>/dev/null || echo memfd-refused",
            &r);
        if (strstr(r.out, "yes-ran") || !strstr(r.out, "a=126") || !strstr(r.out, "system-ran") ||
            !strstr(r.out, "memfd-refused"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* --no-exec-writable judges a script's interpreter too: a read-only script whose "#!" names a
 * program the sandbox can write (/tmp/..., or ./tool from a working directory it chose) ran
 * it (an outside review; only --allow-exec rules looked at interpreters). */
static void no_writable_interpreter(void **state)
{
        char ro[] = "/var/tmp/stockade-exec-ro.XXXXXX", script[1024], interp[64];
        struct run_result r;

        (void)state;
        assert_non_null(mkdtemp(ro));
        snprintf(interp, sizeof(interp), "/tmp/stockade-interp-%d", (int)getpid());
        sh("chmod 755 '%s' && printf '#!%s\\n' > '%s/abs.sh' && printf '#!./myinterp\\n' > "
           "'%s/rel.sh' && chmod 755 '%s/abs.sh' '%s/rel.sh'",
           ro, interp, ro, ro, ro, ro);
        snprintf(script, sizeof(script),
                 "cp /bin/true '%s' && cp /bin/true ./myinterp && chmod 755 '%s' ./myinterp; "
                 "'%s/abs.sh'; echo abs=$?; '%s/rel.sh'; echo rel=$?; rm -f '%s' ./myinterp",
                 interp, interp, ro, ro, interp);
        /* --ro: /var/tmp is a place the sandbox may write */
        run((const char *[]){"--no-exec-writable", "--ro", ro, NULL}, script, &r);
        if (!strstr(r.out, "abs=126") || !strstr(r.out, "rel=126"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
        sh("rm -rf '%s' '%s'", ro, interp);
}

/* What must keep working with no exec rule at all; and a hidden file is absent. */
static void everyday(void **state)
{
        char hide[PATH_MAX + 32];
        struct run_result r;

        (void)state;
        snprintf(hide, sizeof(hide), "%s/secret", work);
        run((const char *[]){"--hide", hide, NULL},
            "./a.sh; echo a=$?; ./p.py; /lib64/ld-linux-x86-64.so.2 /bin/echo via-loader; "
            "./yes && echo yes-ran; ./secret/hid; echo hid=$?; "
            "/usr/bin/python3 -c 'import subprocess; print(subprocess.run([\"./yes\"]).returncode "
            "== 0 and \"subprocess-ran\")'; "
            "/usr/bin/python3 -c 'import os; fd = os.open(\"a.sh\", os.O_RDONLY); "
            "os.set_inheritable(fd, True); os.execve(fd, [\"a.sh\"], os.environ)'; "
            "echo fexecve=$?",
            &r);
        if (!strstr(r.out, "a=7") || !strstr(r.out, "py-script") || !strstr(r.out, "via-loader") ||
            !strstr(r.out, "yes-ran") || !strstr(r.out, "hid=127") ||
            !strstr(r.out, "subprocess-ran") || !strstr(r.out, "fexecve=7"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(flipped_binary_never_runs),
                cmocka_unit_test(flipped_script_never_runs),
                cmocka_unit_test(allow_list),
                cmocka_unit_test(no_writable),
                cmocka_unit_test(no_writable_interpreter),
                cmocka_unit_test_setup_teardown(no_writable_interpreter, runner_merged_setup,
                                                runner_merged_teardown),
                cmocka_unit_test(everyday),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

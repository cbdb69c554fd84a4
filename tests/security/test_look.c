/*
 * The calls that look (syscalls/fs_look.c: stat, lstat, newfstatat, statx, access,
 * faccessat2, readlink) and listings (syscalls/fs_dir.c: getdents64, getdents) answered in
 * the view, judged from outside:
 *   - where the view is the identity, every answer is the native one (compared field by
 *     field, errno by errno, with a native run of the same script as the same uid);
 *   - a listing gives the native entries, d_off and d_type, whatever the buffer size, and
 *     telldir/seekdir/rewinddir work;
 *   - /proc lists and stats only the sandbox's processes, /dev only its devices;
 *   - a read-only place answers access(W_OK) with EROFS, as a read-only mount does.
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

enum { TIMEOUT_S = 60 };

static char top[PATH_MAX], work[PATH_MAX + 16], lsdir[PATH_MAX];
static uid_t sbx_uid;

/* The host side of a test: a command that must succeed (runner.h). */
#define sh(...) assert_int_equal(runner_shell(__VA_ARGS__), 0)

static int setup(void **state)
{
        const char *probe = runner_probe();
        char *slash;

        (void)state;
        sbx_uid = geteuid() == 0 ? 65534 : geteuid();
        snprintf(top, sizeof(top), "%s/look-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        /* Beside the build's helpers: lsdir is built next to the probe. */
        snprintf(lsdir, sizeof(lsdir), "%s", probe);
        slash = strrchr(lsdir, '/');
        snprintf(slash + 1, sizeof(lsdir) - (size_t)(slash + 1 - lsdir), "lsdir");
        if (!mkdtemp(top))
                return -1;
        chmod(top, 0755);
        snprintf(work, sizeof(work), "%s/work", top);
        sh("mkdir -p '%s/d/sub' '%s/big' && cd '%s' && echo data > f && ln -s f sl && "
           "ln -s nowhere dangling && ln -s d dl && mkfifo fifo && chmod 0600 f && "
           "echo x > d/g && chmod 0711 d",
           work, work, work);
        /* Names of every length up to 60, so that records of both formats straddle buffers. */
        sh("cd '%s/big' && for i in $(seq 1 250); do n=$(printf \"%%0$((i %% 60 + 1))d\" $i); "
           ": > \"f$n\"; done",
           work);
        sh("chown -R %u '%s'", (unsigned)sbx_uid, work);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        sh("rm -rf '%s'", top);
        return 0;
}

static void run_sandbox(const char *const *opts, const char *script, struct run_result *r)
{
        const char *v[16] = {"-q"};
        size_t n = 1;

        for (; opts && *opts && n < 15; opts++)
                v[n++] = *opts;
        v[n] = NULL;
        assert_int_equal(runner_stockade_sh(work, v, script, TIMEOUT_S, r), 0);
        if (r->exit_code == -1)
                fail_msg("watchdog fired: %s", r->err);
}

/* The same script natively, as the sandbox's uid. */
static void run_native(const char *script, struct run_result *r)
{
        assert_int_equal(runner_native_sh(work, sbx_uid, script, TIMEOUT_S, r), 0);
}

static void same_as_native(const char *script)
{
        struct run_result nat, sbx;

        run_native(script, &nat);
        run_sandbox(NULL, script, &sbx);
        if (nat.exit_code != 0 || !nat.out_len)
                fail_msg("the native run failed (exit %d): %s", nat.exit_code, nat.err);
        if (strcmp(nat.out, sbx.out) != 0)
                fail_msg("native:\n%s\nsandbox (exit %d):\n%s\n%s", nat.out, sbx.exit_code, sbx.out,
                         sbx.err);
        runner_free(&nat);
        runner_free(&sbx);
}

/* Every look call, every errno case we can make, by path and by dirfd, against native. */
static const char looks_py[] =
        "/usr/bin/python3 - <<'EOF'\n"
        "import os, errno\n"
        "def show(what, f):\n"
        "    try:\n"
        "        v = f()\n"
        "    except OSError as e:\n"
        "        v = errno.errorcode[e.errno]\n"
        "    print(what, v)\n"
        "def st(s):\n"
        "    return (oct(s.st_mode), s.st_size, s.st_ino, s.st_nlink, s.st_uid, s.st_mtime_ns)\n"
        "names = ['f', 'sl', 'dangling', 'dl', 'd', 'd/', 'd//g', './d/../f', 'd/sub/..', 'fifo',\n"
        "         'f/', 'f/x', 'missing', 'missing/x', '', 'sl/', 'dl/g', 'd/g/..']\n"
        "d = os.open('.', os.O_RDONLY)\n"
        "sub = os.open('d', os.O_RDONLY)\n"
        "for n in names:\n"
        "    show('stat ' + n, lambda: st(os.stat(n)))\n"
        "    show('lstat ' + n, lambda: st(os.lstat(n)))\n"
        "    show('statat ' + n, lambda: st(os.stat(n, dir_fd=d, follow_symlinks=False)))\n"
        "    show('readlink ' + n, lambda: os.readlink(n))\n"
        "    show('readlinkat ' + n, lambda: os.readlink(n, dir_fd=d))\n"
        "    for m in (os.F_OK, os.R_OK, os.W_OK, os.X_OK, os.R_OK | os.W_OK):\n"
        "        show('access %s %d' % (n, m), lambda: os.access(n, m))\n"
        "    show('access-eff ' + n, lambda: os.access(n, os.R_OK, effective_ids=True))\n"
        "    show('access-nofollow ' + n, lambda: os.access(n, os.W_OK, follow_symlinks=False))\n"
        "show('fstat', lambda: st(os.fstat(sub)))\n"
        "show('statfd', lambda: st(os.stat(sub)))\n"
        "show('sub g', lambda: st(os.stat('g', dir_fd=sub)))\n"
        "show('sub ..', lambda: st(os.stat('../f', dir_fd=sub)))\n"
        "show('bad fd', lambda: os.stat('f', dir_fd=999))\n"
        "show('long', lambda: os.stat('a' * 300))\n"
        "show('toolong', lambda: os.stat('a/' * 3000))\n"
        "show('readlink /proc/self/cwd', lambda: os.readlink('/proc/self/cwd'))\n"
        "show('cwd', lambda: os.getcwd())\n"
        "EOF\n";

static void looks_match_native(void **state)
{
        (void)state;
        same_as_native(looks_py);
}

/* statx by the C library's own callers (stat(1) uses statx; ls -l uses statx, lstat). */
static void tools_match_native(void **state)
{
        (void)state;
        same_as_native("stat -c '%n %a %s %i %h %F' f sl d dangling fifo 2>&1; "
                       "stat -L -c '%n %F' sl dl 2>&1; ls -la --time-style=+ . d | sort; "
                       "test -w f && echo f-w; test -x d && echo d-x; test -r d && echo d-r; "
                       "readlink -f dl/g; realpath --relative-to=d sl; find . -maxdepth 2 | "
                       "sort | head -20; du -s big | cut -f1");
}

static void listing_matches_native(void **state)
{
        static const char *const modes[] = {"64 32768",  "64 24",   "64 100", "64 10",
                                            "old 32768", "old 100", "old 30", "seek"};
        char script[2 * PATH_MAX];

        (void)state;
        if (access(lsdir, X_OK) < 0)
                fail_msg("no lsdir helper at %s", lsdir);
        for (size_t i = 0; i < sizeof(modes) / sizeof(*modes); i++) {
                snprintf(script, sizeof(script), "'%s' %s big; echo exit $?", lsdir, modes[i]);
                same_as_native(script);
        }
}

/* /proc lists, stats and reads only the sandbox's processes; ours (the test's) is outside. */
static void proc_shows_only_the_sandbox(void **state)
{
        char script[2048], me[64];
        struct run_result r;

        (void)state;
        snprintf(me, sizeof(me), "/proc/%d", (int)getpid());
        snprintf(script, sizeof(script),
                 "echo sh=$$; ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; "
                 "stat -c %%n %s 2>&1; test -e %s && echo exists-outside; "
                 "readlink %s/exe && echo readlink-outside; ls %s/ 2>&1 | head -3; "
                 "ls /proc/$$/task | grep -qx $$ && echo own-task; "
                 "test -e /proc/$$/status && echo own-status; readlink /proc/self/exe",
                 me, me, me, me);
        run_sandbox(NULL, script, &r);
        if (strstr(r.out, "exists-outside") || strstr(r.out, "readlink-outside"))
                fail_msg("a process outside the sandbox shows: %s", r.out);
        if (!strstr(r.out, "own-task") || !strstr(r.out, "own-status") ||
            !strstr(r.out, "/readlink"))
                fail_msg("the sandbox's own processes do not show: %s %s", r.out, r.err);
        {
                /* Every number listed is one of the sandbox's: never ours, never 1. */
                char *line = strstr(r.out, "\n"), mine[32];

                snprintf(mine, sizeof(mine), " %d ", (int)getpid());
                if (line &&
                    (strstr(line, mine) || strncmp(line + 1, "1 ", 2) == 0 || strstr(line, " 1 ")))
                        fail_msg("/proc lists a process outside: %s", r.out);
        }
        /* The control: natively the test's process is there to see. */
        if (access(me, F_OK) < 0)
                fail_msg("natively %s does not exist: the test proves nothing", me);
        runner_free(&r);
}

/* /dev lists and stats only the view's devices. */
static void dev_shows_only_the_view(void **state)
{
        static const char *const allowed[] = {"fd",     "full",    "null",   "ptmx",  "pts",
                                              "random", "shm",     "stderr", "stdin", "stdout",
                                              "tty",    "urandom", "zero",   NULL};
        struct run_result r;
        char *tok, *save = NULL;

        (void)state;
        run_sandbox(NULL,
                    "ls /dev | tr '\\n' ' '; echo; for d in console kmsg mem loop0 vda sda "
                    "tty0; do test -e /dev/$d && echo dev-visible-$d; done; "
                    "test -c /dev/null && echo null-ok; ls /dev/pts | grep -c . >/dev/null; "
                    "echo done",
                    &r);
        if (!strstr(r.out, "null-ok") || !strstr(r.out, "done"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        if (strstr(r.out, "dev-visible-"))
                fail_msg("a host device shows: %s", r.out);
        for (tok = strtok_r(r.out, " \n", &save); tok && strcmp(tok, "null-ok") != 0;
             tok = strtok_r(NULL, " \n", &save)) {
                bool ok = false;

                for (const char *const *a = allowed; *a && !ok; a++)
                        ok = strcmp(tok, *a) == 0;
                if (!ok)
                        fail_msg("/dev lists '%s', which is not in the view", tok);
        }
        /* The control: the host has devices the view leaves out. */
        if (access("/dev/console", F_OK) < 0 && access("/dev/kmsg", F_OK) < 0)
                fail_msg("no /dev/console nor /dev/kmsg here: the test proves nothing");
        runner_free(&r);
}

/* A --ro place inside the workspace: access(W_OK) says EROFS, as a read-only mount does,
 * although the mode bits allow the write (natively: writable). */
static void ro_place_is_erofs(void **state)
{
        char ro[PATH_MAX + 32];
        struct run_result r;

        (void)state;
        snprintf(ro, sizeof(ro), "%s/d", work);
        run_native("test -w d/g && echo native-writable", &r);
        if (!strstr(r.out, "native-writable"))
                fail_msg("natively d/g is not writable: the test proves nothing");
        runner_free(&r);
        run_sandbox((const char *[]){"--ro", ro, NULL},
                    "test -w d/g || echo not-writable; test -w f && echo f-writable; "
                    "/usr/bin/python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, "
                    "use_errno=True); r = libc.access(b\"d/g\", os.W_OK); "
                    "print(\"errno\", os.strerror(ctypes.get_errno()) if r else 0)'",
                    &r);
        if (!strstr(r.out, "not-writable") || !strstr(r.out, "f-writable") ||
            !strstr(r.out, "errno Read-only file system"))
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        runner_free(&r);
}

/* A thread flips the path between a visible file and a hidden one while another stats it:
 * no answer may be the hidden file's (the path is copied once; DESIGN.md). The control: the
 * same run without --hide sees the other file. */
static void stat_flip_race(void **state)
{
        char script[3 * PATH_MAX], secret[PATH_MAX + 32];
        struct run_result r;
        unsigned long stats = 0, others = 0;
        const char *line;

        (void)state;
        snprintf(secret, sizeof(secret), "%s/secret", work);
        sh("echo SECRET > '%s' && chown %u '%s'", secret, (unsigned)sbx_uid, secret);
        snprintf(script, sizeof(script), "'%s' flipstat f secret 2", lsdir);
        run_sandbox(NULL, script, &r);
        line = strstr(r.out, "flipstat: ");
        if (!line || sscanf(line, "flipstat: %lu stats, %lu", &stats, &others) != 2 || others == 0)
                fail_msg("the control saw no flip: %s %s", r.out, r.err);
        runner_free(&r);
        run_sandbox((const char *[]){"--hide", secret, NULL}, script, &r);
        line = strstr(r.out, "flipstat: ");
        if (!line || sscanf(line, "flipstat: %lu stats, %lu", &stats, &others) != 2 || stats == 0)
                fail_msg("exit %d: %s %s", r.exit_code, r.out, r.err);
        if (others)
                fail_msg("the hidden file was stat'ed %lu times of %lu", others, stats);
        runner_free(&r);
        sh("rm -f '%s'", secret);
}

/* openat2, emulated: its checks of open_how as the kernel's, its resolve rules kept, and the
 * view's answers (a hidden file, a process outside, a device off the list). */
static void openat2_in_the_view(void **state)
{
        char script[4096], secret[PATH_MAX + 32];
        struct run_result r;
        static const char *const expect[] = {
                "plain ok",     "beneath ok",     "beneath-escape EXDEV",
                "nosym ELOOP",  "small EINVAL",   "big0 ok",
                "big1 E2BIG",   "badflag EINVAL", "modenocreat EINVAL",
                "opath ENOSYS", "create ok",      "hidden ENOENT",
                "proc ENOENT",  "devnull ok",     "devconsole ENOENT",
                "suid EPERM",   "badaddr EFAULT",
        };

        (void)state;
        snprintf(secret, sizeof(secret), "%s/secret2", work);
        sh("echo SECRET > '%s' && chown %u '%s'", secret, (unsigned)sbx_uid, secret);
        snprintf(script, sizeof(script),
                 "/usr/bin/python3 - <<'EOF'\n"
                 "import ctypes, os, errno, struct\n"
                 "libc = ctypes.CDLL(None, use_errno=True)\n"
                 "libc.syscall.restype = ctypes.c_long\n"
                 "d = os.open('.', os.O_RDONLY)\n"
                 "def t(what, dfd, path, flags, mode=0, res=0, size=24, extra=b'', addr=None):\n"
                 "    how = ctypes.create_string_buffer(struct.pack('QQQ', flags, mode, res) + "
                 "extra, 64)\n"
                 "    p = ctypes.c_char_p(path.encode())\n"
                 "    a = ctypes.c_void_p(addr) if addr is not None else how\n"
                 "    fd = libc.syscall(437, dfd, p, a, ctypes.c_size_t(size))\n"
                 "    if fd < 0:\n"
                 "        print(what, errno.errorcode[ctypes.get_errno()])\n"
                 "    else:\n"
                 "        print(what, 'ok'); os.close(fd)\n"
                 "RB, NS = 0x08, 0x04\n"
                 "t('plain', -100, '/etc/passwd', os.O_RDONLY)\n"
                 "t('beneath', d, 'f', os.O_RDONLY, res=RB)\n"
                 "t('beneath-escape', d, '../f', os.O_RDONLY, res=RB)\n"
                 "t('nosym', d, 'sl', os.O_RDONLY, res=NS)\n"
                 "t('small', d, 'f', os.O_RDONLY, size=16)\n"
                 "t('big0', d, 'f', os.O_RDONLY, size=32, extra=bytes(8))\n"
                 "t('big1', d, 'f', os.O_RDONLY, size=32, extra=b'\\x01' + bytes(7))\n"
                 "t('badflag', d, 'f', os.O_RDONLY | (1 << 40))\n"
                 "t('modenocreat', d, 'f', os.O_RDONLY, mode=0o644)\n"
                 "t('opath', d, 'f', os.O_PATH)\n"
                 "t('create', d, 'd/o2new', os.O_CREAT | os.O_WRONLY, mode=0o644)\n"
                 "t('hidden', d, 'secret2', os.O_RDONLY)\n"
                 "t('proc', -100, '/proc/%d/status', os.O_RDONLY)\n"
                 "t('devnull', -100, '/dev/null', os.O_RDONLY)\n"
                 "t('devconsole', -100, '/dev/console', os.O_RDONLY)\n"
                 "t('suid', d, 'o2suid', os.O_CREAT | os.O_WRONLY, mode=0o4755)\n"
                 "t('badaddr', d, 'f', os.O_RDONLY, addr=8)\n"
                 "EOF\n",
                 (int)getpid());
        run_sandbox((const char *[]){"--hide", secret, NULL}, script, &r);
        for (size_t i = 0; i < sizeof(expect) / sizeof(*expect); i++) {
                char want[64];

                snprintf(want, sizeof(want), "%s\n", expect[i]);
                if (!strstr(r.out, want))
                        fail_msg("expected '%s': %s %s", expect[i], r.out, r.err);
        }
        runner_free(&r);
        sh("rm -f '%s' '%s/d/o2new' '%s/o2suid'", secret, work, work);
}

/* A pty master made by reopening an O_PATH fd of /dev/ptmx (outside review F5) is held and
 * counted like one opened by name: the cap (1,024) ends it with ENOSPC, so the sandbox cannot
 * use up the host's ptys. */
static void ptmx_reopen_held(void **state)
{
        struct run_result r;

        (void)state;
        run_sandbox(NULL,
                    "/usr/bin/python3 -c 'import os, errno\n"
                    "n = 0\n"
                    "try:\n"
                    "    for i in range(1100):\n"
                    "        p = os.open(\"/dev/ptmx\", os.O_PATH)\n"
                    "        os.open(\"/proc/self/fd/%d\" % p, os.O_RDWR | os.O_NOCTTY); "
                    "os.close(p); n += 1\n"
                    "    print(\"made\", n)\n"
                    "except OSError as e: print(\"stopped\", n, errno.errorcode[e.errno])'",
                    &r);
        if (!strstr(r.out, "stopped") || !strstr(r.out, "ENOSPC"))
                fail_msg("the masters were not held and capped: %s %s", r.out, r.err);
        runner_free(&r);
}

/* A hidden directory, listed by its own path or through an fd of it, and a hidden file looked
 * at through a magic link in the middle of a /proc path (second outside review, F1 and F2):
 * nothing of them shows. The control: without --hide every line prints a name or a size. */
static const char hidden_dir_py[] =
        "/usr/bin/python3 - <<'EOF'\n"
        "import os, errno\n"
        "def show(what, f):\n"
        "    try: print(what, f())\n"
        "    except OSError as e: print(what, errno.errorcode[e.errno])\n"
        "h = os.path.abspath('hid')\n"
        "show('listdir', lambda: os.listdir(h))\n"
        "def via_fd():\n"
        "    fd = os.open(h, os.O_PATH)\n"
        "    d = os.open('.', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)\n"
        "    return os.listdir(d)\n"
        "show('listdir-fd', via_fd)\n"
        "show('stat-root', lambda: os.stat('/proc/self/root' + h + '/k').st_size)\n"
        "def via_magic():\n"
        "    fd = os.open(h, os.O_PATH)\n"
        "    return os.stat('/proc/self/fd/%d/k' % fd).st_size\n"
        "show('stat-fd', via_magic)\n"
        "show('access-root', lambda: os.access('/proc/self/root' + h + '/k', os.R_OK) or 'no')\n"
        "show('readlink-root', lambda: os.readlink('/proc/self/root' + h + '/l'))\n"
        "show('through', lambda: os.stat('hid/../f').st_size)\n"
        "show('through-missing', lambda: os.stat('hid/../nothing-here').st_size)\n"
        "EOF\n";

static void hidden_dir_stays_hidden(void **state)
{
        char hid[PATH_MAX + 32];
        struct run_result r;

        (void)state;
        snprintf(hid, sizeof(hid), "%s/hid", work);
        sh("mkdir -p '%s' && echo SECRETDATA > '%s/k' && ln -sf /etc/passwd '%s/l' && "
           "chown -R %u '%s'",
           hid, hid, hid, (unsigned)sbx_uid, hid);
        run_sandbox(NULL, hidden_dir_py, &r);
        /* (A magic link mid-path is ELOOP for what is shown too, as for open.) */
        if (!strstr(r.out, "listdir ['k', 'l']") || !strstr(r.out, "listdir-fd ['k', 'l']") ||
            !strstr(r.out, "through 5\n"))
                fail_msg("the control does not see the directory: %s %s", r.out, r.err);
        runner_free(&r);
        run_sandbox((const char *[]){"--hide", hid, NULL}, hidden_dir_py, &r);
        if (strstr(r.out, "'k'") || strstr(r.out, " 11\n") || strstr(r.out, "True") ||
            strstr(r.out, "/etc/passwd") || !strstr(r.out, "listdir ENOENT") ||
            !strstr(r.out, "listdir-fd E") || !strstr(r.out, "through ENOENT") ||
            !strstr(r.out, "through-missing ENOENT"))
                fail_msg("the hidden directory shows: %s %s", r.out, r.err);
        runner_free(&r);
        sh("rm -rf '%s'", hid);
}

/* chmod, chown, utimes and the xattr setters find their target in the view too: a hidden
 * file in a writable place (the workspace) does not exist for them, and keeps its mode and
 * times, judged from outside. The control: without --hide they change it. */
static void metadata_of_hidden_unchanged(void **state)
{
        static const char script[] =
                "/usr/bin/python3 -c 'import os, errno\n"
                "for what, f in ((\"chmod\", lambda: os.chmod(\"meta.key\", 0o777)),\n"
                "                (\"utime\", lambda: os.utime(\"meta.key\", (0, 0)))):\n"
                "    try: f(); print(what, \"done\")\n"
                "    except OSError as e: print(what, errno.errorcode[e.errno])'";
        char key[PATH_MAX + 32];
        struct run_result r;
        struct stat st;

        (void)state;
        snprintf(key, sizeof(key), "%s/meta.key", work);
        sh("echo K > '%s' && chmod 600 '%s' && chown %u '%s'", key, key, (unsigned)sbx_uid, key);
        run_sandbox(NULL, script, &r);
        assert_int_equal(stat(key, &st), 0);
        if (!strstr(r.out, "chmod done") || (st.st_mode & 0777) != 0777)
                fail_msg("the control could not chmod: %s %s", r.out, r.err);
        runner_free(&r);
        sh("chmod 600 '%s' && touch '%s'", key, key);
        run_sandbox((const char *[]){"--hide", key, NULL}, script, &r);
        assert_int_equal(stat(key, &st), 0);
        if ((st.st_mode & 0777) != 0600 || st.st_mtime == 0 || !strstr(r.out, "chmod ENOENT") ||
            !strstr(r.out, "utime ENOENT"))
                fail_msg("a hidden file's metadata changed (mode %o, mtime %ld): %s %s",
                         (unsigned)(st.st_mode & 0777), (long)st.st_mtime, r.out, r.err);
        runner_free(&r);
        sh("rm -f '%s'", key);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(looks_match_native),
                cmocka_unit_test(tools_match_native),
                cmocka_unit_test(listing_matches_native),
                cmocka_unit_test(proc_shows_only_the_sandbox),
                cmocka_unit_test(dev_shows_only_the_view),
                cmocka_unit_test(ro_place_is_erofs),
                cmocka_unit_test(stat_flip_race),
                cmocka_unit_test(openat2_in_the_view),
                cmocka_unit_test(ptmx_reopen_held),
                cmocka_unit_test(hidden_dir_stays_hidden),
                cmocka_unit_test(metadata_of_hidden_unchanged),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}

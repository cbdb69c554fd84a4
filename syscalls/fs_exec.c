/*
 * execve and execveat, judged in the view. The kernel must perform an exec itself (nothing
 * else can replace a process's image), so this is the one path call answered CONTINUE after
 * its memory was read — and the answer is checked afterwards: the object judged here is
 * recorded for the calling thread, and at PTRACE_EVENT_EXEC (ptrace.c) the file the process
 * now runs must be that object, or the interpreter its "#!" line names, or the process is
 * killed before it runs a single instruction of the new image.
 *
 *   1. Copy the path ONCE, take the base, check ID_VALID (as every path call does).
 *   2. Find the object in the view as the program (fs_look_find): a hidden file, a process
 *      outside in /proc, a device off /dev's list do not exist (ENOENT). It must be a regular
 *      file the program may execute (EACCES otherwise, as the kernel says).
 *   3. The exec policy (--allow-exec, --no-exec-writable, the policy file's `exec:`): the
 *      file must be an allowed one or lie beneath an allowed directory; with no_writable it
 *      must not lie in a writable place, nor be a file without a name (a memfd: fileless
 *      execution). A refusal is EACCES.
 *   4. Record (dev, ino) of the object and of the interpreters its "#!" lines name (four
 *      levels, as the kernel follows), then CONTINUE.
 *
 * What this cannot stop, and docs/policy.md says so: a program that may run one interpreter
 * or the dynamic loader runs whatever those read (`python3 x.py`, `ld.so ./prog`), and a
 * loader can map a readable file by hand; the exec rules judge what execve names, not what
 * code ends up running.
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/error.h"
#include "supervisor/notify.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/trace_decode.h"
#include "supervisor/tracee.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"

#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

int fs_exec_prepare(struct supervisor *sup, struct error *err)
{
        const struct config *cfg = sup->cfg;

        sup->exec_rules =
                xcalloc(cfg->n_exec_allow ? cfg->n_exec_allow : 1, sizeof(*sup->exec_rules));
        for (size_t i = 0; i < cfg->n_exec_allow; i++) {
                struct exec_rule *r = &sup->exec_rules[i];
                char real[PATH_MAX];
                struct stat st;

                const char *spec = cfg->exec_allow[i], *glob = strpbrk(spec, "*?[");
                const struct vfs_mount *m =
                        spec[0] == '/' ? vfs_view_mount_of(&sup->view, spec) : NULL;

                /* Its rule is made from the host path: one in a remapped mount would name
                 * another file (remap.c). */
                if (m && vfs_mount_remapped(m))
                        return make_error(err, 0,
                                          "run: --allow-exec %s: a path in the remapped `%s` "
                                          "(%s) is not yet supported",
                                          spec, m->sandbox, m->origin);
                if (glob) {
                        /* A pattern: of real paths, so its directory part is made real too
                         * ("/bin/ls*" is "/usr/bin/ls*" where /bin is a symlink). */
                        const char *slash = glob;
                        char dir[PATH_MAX];

                        while (slash > spec && *slash != '/')
                                slash--;
                        if (spec[0] != '/')
                                return make_error(err, 0,
                                                  "run: --allow-exec %s: a pattern must be an "
                                                  "absolute path",
                                                  spec);
                        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - spec), spec);
                        if (!realpath(dir[0] ? dir : "/", real))
                                return make_error(err, errno, "run: --allow-exec %s", spec);
                        r->path = xcalloc(1, strlen(real) + strlen(slash) + 2);
                        sprintf(r->path, "%s%s", strcmp(real, "/") ? real : "", slash);
                        r->pattern = true;
                        sup->n_exec_rules++;
                        continue;
                }
                if (!realpath(spec, real) || stat(real, &st) < 0)
                        return make_error(err, errno, "run: --allow-exec %s", spec);
                r->path = xstrdup(real);
                r->dev = st.st_dev;
                r->ino = st.st_ino;
                r->dir = S_ISDIR(st.st_mode);
                sup->n_exec_rules++;
        }
        return 0;
}

void fs_exec_free(struct supervisor *sup)
{
        for (size_t i = 0; i < sup->n_exec_rules; i++)
                free(sup->exec_rules[i].path);
        free(sup->exec_rules);
        sup->exec_rules = NULL;
        sup->n_exec_rules = 0;
}

/* The sandbox path of the object `fd` names, or "" for one without a name (a memfd, a
 * deleted file). */
static void name_of(struct supervisor *sup, int fd, char *out, size_t size)
{
        char link[48];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, out, size - 1);
        if (n < 0 || out[0] != '/' || (n > 10 && strncmp(out + n - 10, " (deleted)", 10) == 0)) {
                out[0] = '\0';
                return;
        }
        out[n] = '\0';
        fs_sandbox_path(sup, out, size);
}

static int judge_policy(struct supervisor *sup, int fd, const struct stat *st)
{
        char path[PATH_MAX];
        bool allowed = sup->n_exec_rules == 0;

        name_of(sup, fd, path, sizeof(path));
        /* A merged copy-on-write mount is writable too, neither layer a place (the overlay
         * is one): an outside review ran a binary it had just copied into the workspace. */
        if (sup->cfg->exec_no_writable &&
            (!path[0] || fs_writable_place(sup, fd) || fs_cow_in_merged(sup, fd)))
                return -EACCES;
        for (size_t i = 0; i < sup->n_exec_rules && !allowed; i++) {
                const struct exec_rule *r = &sup->exec_rules[i];

                if (r->pattern)
                        allowed = path[0] && fnmatch(r->path, path, FNM_PATHNAME) == 0;
                else if (r->dir)
                        allowed = path[0] && vfs_path_has_prefix(path, r->path);
                else
                        allowed = r->dev == st->st_dev && r->ino == st->st_ino;
        }
        return allowed ? 0 : -EACCES;
}

static void interpreter_of(struct supervisor *sup, pid_t tid, int fd, char *out, size_t size,
                           bool *has_arg)
{
        char arg[256];

        fs_exec_shebang(sup, tid, fd, out, size, arg, sizeof(arg));
        *has_arg = arg[0] != '\0';
}

void fs_exec_shebang(struct supervisor *sup, pid_t tid, int fd, char *out, size_t size, char *arg,
                     size_t arg_size)
{
        char self[48], head[256], *p, *end;
        struct fs_as as;
        ssize_t n = -1;
        int rfd;

        out[0] = arg[0] = '\0';
        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        if (fs_as_enter(sup, tid, false, &as) < 0)
                return;
        rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        fs_as_leave(&as);
        if (rfd < 0)
                return; /* unreadable: an interpreter could not read it either */
        n = pread(rfd, head, sizeof(head) - 1, 0);
        close(rfd);
        if (n < 2 || head[0] != '#' || head[1] != '!')
                return;
        head[n] = '\0';
        for (p = head + 2; *p == ' ' || *p == '\t'; p++)
                ;
        for (end = p; *end && *end != ' ' && *end != '\t' && *end != '\n'; end++)
                ;
        /* The argument, as the kernel takes it: the rest of the line, blanks trimmed */
        {
                char *q = end + strspn(end, " \t"), *e = q + strcspn(q, "\n");

                while (e > q && (e[-1] == ' ' || e[-1] == '\t'))
                        e--;
                snprintf(arg, arg_size, "%.*s", (int)(e - q), q);
        }
        *end = '\0';
        /* A relative name too ("#!./tool"): the kernel takes it from the working directory
         * (fs_exec_find_interp). */
        snprintf(out, size, "%s", p);
}

int fs_exec_find_interp(struct supervisor *sup, pid_t tid, const char *interp)
{
        int base = interp[0] == '/' ? AT_FDCWD : tfd_cwd(tid), fd;

        if (interp[0] != '/' && base < 0)
                return base;
        fd = fs_look_find(sup, tid, base, interp, 0);
        if (base >= 0)
                close(base);
        return fd;
}

/* Record what may run in `tid` after this exec: the object, then its interpreters, each of
 * which the policy must allow too — an allowed script does not open a door to an interpreter
 * that may not run by itself (whose script could be swapped by name once it runs: a second
 * review did so through a symlink). Returns 0 or -EACCES. */
static int record(struct supervisor *sup, pid_t tid, int fd, const struct stat *st)
{
        struct exec_judged j = {.n = 1, .dev = {st->st_dev}, .ino = {st->st_ino}};
        char interp[PATH_MAX];
        struct stat ist;
        struct tracee *t;
        int cur = fd, r = 0;

        while (j.n < EXEC_JUDGED_MAX) {
                bool has_arg = false;
                int next;

                interpreter_of(sup, tid, cur, interp, sizeof(interp), &has_arg);
                if (!interp[0])
                        break;
                if (j.n == 1)
                        j.script_argi = has_arg ? 2 : 1;
                next = fs_exec_find_interp(sup, tid, interp);
                if (cur != fd)
                        close(cur);
                if (next < 0 || fstat(next, &ist) < 0) {
                        cur = next;
                        break;
                }
                /* --no-exec-writable too: a read-only script's "#!" may name a program the
                 * sandbox wrote (./tool from a working directory it chose, /tmp/tool) */
                if ((sup->n_exec_rules || sup->cfg->exec_no_writable) &&
                    judge_policy(sup, next, &ist) < 0) {
                        cur = next;
                        r = -EACCES;
                        break;
                }
                j.dev[j.n] = ist.st_dev;
                j.ino[j.n++] = ist.st_ino;
                cur = next;
        }
        if (cur >= 0 && cur != fd)
                close(cur);
        if (r < 0)
                return r;
        j.valid = true;
        pthread_mutex_lock(&sup->lock);
        t = tracee_find_live(&sup->tree, tid);
        if (t)
                t->exec = j;
        pthread_mutex_unlock(&sup->lock);
        return 0;
}

int fs_exec_judge(struct supervisor *sup, pid_t tid, int base, const char *path, unsigned flags,
                  int *object)
{
        struct fs_as as;
        struct stat st;
        int fd, r;

        fd = fs_look_find(sup, tid, base, path, flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
        if (fd < 0)
                return fd;
        r = fstat(fd, &st) < 0 ? -errno : 0;
        if (r == 0 && S_ISLNK(st.st_mode))
                r = -ELOOP; /* AT_SYMLINK_NOFOLLOW on a symlink */
        else if (r == 0 && !S_ISREG(st.st_mode))
                r = -EACCES;
        if (r == 0) {
                r = fs_as_enter(sup, tid, false, &as);
                if (r == 0) {
                        r = faccessat(fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0 ? -errno : 0;
                        fs_as_leave(&as);
                }
        }
        if (r == 0)
                r = judge_policy(sup, fd, &st);
        if (r == 0)
                r = record(sup, tid, fd, &st);
        if (r == 0 && object)
                *object = fd;
        else
                close(fd);
        return r;
}

/* execve, execveat */
int fs_exec(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        bool at = call->row - syscall_table == SC_execveat;
        int dirfd = at ? (int)a[0] : AT_FDCWD, base = -1;
        unsigned flags = at ? (unsigned)a[4] : 0;
        char path[PATH_MAX];
        ssize_t n;
        int r;

        if (flags & ~(unsigned)(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
                call_fail(call, EINVAL);
                return 0;
        }
        n = tmem_read_string(tid, at ? a[1] : a[0], path, sizeof(path));
        r = n < 0 ? (int)n : 0;
        if (r == 0 && n == 0 && !(flags & AT_EMPTY_PATH))
                r = -ENOENT;
        if (r == 0)
                r = fs_take_base(sup, call, dirfd, path, &base);
        if (r == 0) {
                trace_call_path(call, at ? 1 : 0, path);
                r = fs_exec_judge(sup, tid, base, path, flags, NULL);
        }
        if (base >= 0)
                close(base);
        if (r < 0)
                call_fail(call, -r);
        else
                call_continue(call); /* checked again at PTRACE_EVENT_EXEC */
        return 0;
}

/*
 * A script ran: its interpreter is what the process runs, and the script is the name the
 * kernel put in its argv — the name as the kernel read it, which the program may have
 * changed after we read ours. That name, from the process's cwd (it is stopped, and has a
 * single thread now), must lead to the script judged.
 */
uint64_t fs_exec_name_hash(const char *name)
{
        uint64_t h = 14695981039346656037ull;

        for (; *name; name++)
                h = (h ^ (unsigned char)*name) * 1099511628211ull;
        return h ? h : 1;
}

void fs_exec_script_named(struct supervisor *sup, pid_t tid, const char *name)
{
        struct tracee *t;

        pthread_mutex_lock(&sup->lock);
        t = tracee_find_live(&sup->tree, tid);
        if (t && t->exec.valid)
                t->exec.script_name = fs_exec_name_hash(name);
        pthread_mutex_unlock(&sup->lock);
}

static bool script_is_judged(const struct exec_judged *j, pid_t pid)
{
        char path[64], args[PATH_MAX + 512];
        const char *arg = args;
        struct stat st;
        ssize_t n;
        int fd, cwd;

        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, args, sizeof(args) - 1);
        close(fd);
        if (n <= 0)
                return false;
        args[n] = '\0';
        for (unsigned i = 0; i < j->script_argi; i++) {
                arg += strlen(arg) + 1;
                if (arg >= args + n)
                        return false;
        }
        /* The name the supervisor gave the interpreter itself (fs_cow.c, a script of a
         * merged copy-on-write mount), which the view, not the kernel, resolves. */
        if (j->script_name && fs_exec_name_hash(arg) == j->script_name)
                return true;
        /* fexecve and execveat(dirfd, name) of a script: the kernel names it /dev/fd/N[/name],
         * the process's fd, not ours. A close-on-exec fd is gone by now: the interpreter
         * cannot open the script either, so nothing of it can run. */
        if (strncmp(arg, "/dev/fd/", 8) == 0) {
                char fdpath[PATH_MAX + 64];

                snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%s", (int)pid, arg + 8);
                fd = open(fdpath, O_PATH | O_CLOEXEC);
                if (fd < 0)
                        return errno == ENOENT;
        } else {
                /* In the process's own root and cwd: its mount namespace, its private /tmp. */
                struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};

                snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid,
                         arg[0] == '/' ? "root" : "cwd");
                cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (cwd < 0)
                        return false;
                fd = arg[0] == '/' ? sys_openat2(cwd, arg, &how)
                                   : openat(cwd, arg, O_PATH | O_CLOEXEC);
                close(cwd);
                if (fd < 0)
                        return false;
        }
        n = fstat(fd, &st);
        close(fd);
        return n == 0 && st.st_dev == j->dev[0] && st.st_ino == j->ino[0];
}

bool fs_exec_verify(struct supervisor *sup, struct tracee *t, pid_t pid)
{
        const struct exec_judged *j = &t->exec;
        char exe[48];
        struct stat st;

        (void)sup;
        if (!j->valid)
                return false; /* every exec is judged first: one that was not is not ours */
        snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
        if (stat(exe, &st) < 0)
                return errno == ENOENT || errno == ESRCH; /* died meanwhile */
        if (j->dev[0] == st.st_dev && j->ino[0] == st.st_ino)
                return true;
        /* The first interpreter: the script named must be the one judged. Deeper ones (an
         * interpreter that is itself a script) are taken on the first's word. */
        if (j->n > 1 && j->dev[1] == st.st_dev && j->ino[1] == st.st_ino)
                return j->script_argi && script_is_judged(j, pid);
        for (unsigned i = 2; i < j->n; i++)
                if (j->dev[i] == st.st_dev && j->ino[i] == st.st_ino)
                        return true;
        return false;
}

/*
 * The calls the kernel answers or performs itself, where a copy-on-write mount is merged by the
 * supervisor (fs_cow.h): the xattr getters and getcwd, notified then (filter.c), and chdir,
 * execve, execveat, O_PATH opens, statfs and inotify_add_watch, stopped for the tracer then
 * (fs_cow_traced).
 */
#include "syscalls/fs_cow.h"
#include "syscalls/fs_common.h"
#include "supervisor/notify.h"
#include "supervisor/sup.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/trace.h"
#include "supervisor/util.h"
#include "syscalls/table.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/xattr.h>
#include <unistd.h>

/* overlayfs's own xattrs in an upper (`userxattr`): never the program's to see or set */
#define OVERLAY_XATTRS "user.overlay."

bool fs_cow_own_xattr(const char *name)
{
        return strncmp(name, OVERLAY_XATTRS, sizeof(OVERLAY_XATTRS) - 1) == 0;
}

/* A listxattr of the object `proc` names without overlayfs's own, into value[0..size) (the
 * length needed when size is 0). Returns the length or -errno. */
static long list_shown(const char *proc, char *value, size_t size)
{
        char *all = xcalloc(1, XATTR_LIST_MAX);
        long n = listxattr(proc, all, XATTR_LIST_MAX), len = 0;

        if (n < 0) {
                n = -errno;
                free(all);
                return n;
        }
        for (long at = 0; at < n; at += (long)strlen(all + at) + 1) {
                size_t k = strlen(all + at) + 1;

                if (fs_cow_own_xattr(all + at))
                        continue;
                if (size && (size_t)len + k > size) {
                        free(all);
                        return -ERANGE;
                }
                if (size)
                        memcpy(value + len, all + at, k);
                len += (long)k;
        }
        free(all);
        return len;
}

/*
 * getxattr, lgetxattr, listxattr, llistxattr and their fd forms, which the kernel serves
 * unless a mount is merged: the kernel would look in the lower alone (a file made in the run
 * would not exist for them: `ls -l` asks for its ACL), and an upper directory's fd would show
 * overlayfs's own attributes. The object is found in the view as stat finds it
 * (fs_look_find), or is our copy of the caller's fd, and asked as the program.
 */
int fs_cow_xattr_get(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        int nr = (int)(call->row - syscall_table);
        bool list = nr == SC_listxattr || nr == SC_llistxattr || nr == SC_flistxattr;
        bool by_fd = nr == SC_fgetxattr || nr == SC_flistxattr;
        bool nofollow = nr == SC_lgetxattr || nr == SC_llistxattr;
        uint64_t buf_addr = list ? a[1] : a[2];
        size_t size = (size_t)(list ? a[2] : a[3]);
        pid_t tid = (pid_t)call->req->pid;
        char path[PATH_MAX] = "", name[XATTR_NAME_MAX + 1] = "", proc[48];
        _cleanup_free_ char *value = NULL;
        const struct vfs_mount *m;
        int base = AT_FDCWD, fd = -1;
        struct fs_as as;
        ssize_t n = 1;
        long r = 0;

        if (!by_fd) {
                n = tmem_read_string(tid, a[0], path, sizeof(path));
                r = n < 0 ? n : n == 0 ? -ENOENT : 0;
        }
        if (r == 0 && !list) {
                n = tmem_read_string(tid, a[1], name, sizeof(name));
                r = n < 0 ? (n == -ENAMETOOLONG ? -ERANGE : n) : n == 0 ? -ERANGE : 0;
        }
        if (r == 0 && by_fd)
                r = fd = tfd_take(tid, (int)a[0]);
        else if (r == 0 && path[0] != '/')
                r = base = tfd_cwd(tid);
        if (r >= 0 && tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r >= 0 && !by_fd) {
                trace_call_path(call, 0, path);
                fd = fs_look_memo(sup, call->seq, tid, base, path, !nofollow);
                if (fd < 0)
                        fd = fs_look_find(sup, tid, base, path, nofollow ? AT_SYMLINK_NOFOLLOW : 0);
                r = fd;
        }
        if (size > XATTR_SIZE_MAX)
                size = XATTR_SIZE_MAX;
        if (r >= 0 && size)
                value = xcalloc(1, size);
        if (r >= 0 && !list && fs_cow_own_xattr(name) && fs_cow_where(sup, fd, &m, path) == 2)
                r = -ENODATA;
        if (r >= 0)
                r = fs_as_enter(sup, tid, false, &as);
        if (r >= 0) {
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                if (list) {
                        r = list_shown(proc, value, size);
                } else {
                        r = getxattr(proc, name, value, size);
                        r = r < 0 ? -errno : r;
                }
                fs_as_leave(&as);
        }
        if (r > 0 && size && tmem_write(tid, buf_addr, value, (size_t)r) < 0)
                r = -EFAULT;
        if (fd >= 0)
                close(fd);
        if (base >= 0)
                close(base);
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, r);
        return 0;
}

/* getcwd where a mount is merged: a working directory in an upper (a directory made in the
 * run, entered by its host path: fs_cow_chdir) reads as its sandbox path. */
int fs_cow_getcwd(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        pid_t tid = (pid_t)call->req->pid;
        char path[PATH_MAX];
        int cwd = tfd_cwd(tid);
        long r = cwd < 0 ? cwd : 0;
        size_t n;

        if (r == 0 && tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r == 0)
                r = fs_base_path(sup, cwd, path, sizeof(path));
        if (cwd >= 0)
                close(cwd);
        n = r == 0 ? strlen(path) + 1 : 0;
        if (r == 0 && n > (size_t)a[1])
                r = -ERANGE;
        if (r == 0 && tmem_write(tid, a[0], path, n) < 0)
                r = -EFAULT;
        if (r < 0)
                call_fail(call, (int)-r);
        else
                call_return(call, (int64_t)n);
        return 0;
}

/* ---- the calls the kernel must perform: chdir, execve, execveat --------------------------- */

/*
 * Where a mount is merged, chdir, execve and execveat stop the caller for its tracer
 * (SECCOMP_RET_TRACE: filter.c) rather than notify: the kernel must perform them (nothing
 * else can move a process's working directory or replace its image), and the kernel's own
 * walk would find the lower alone — a directory or a program made in the run would not
 * exist, an edited script would run as it was. At the stop the path is resolved in the view
 * (an exec judged as fs_exec judges it), and the path argument is pointed at the host path
 * of what was found: written below the caller's stack pointer and its red zone, where
 * nothing of the program lives during a system call. A thread of the program may rewrite
 * that string before the kernel reads it: that buys it nothing, since Landlock judges what
 * the kernel opens and fs_exec_verify kills a process that runs another file than the one
 * judged; a directory entered elsewhere is one the kernel let it enter anyway.
 */
static int put_path(pid_t pid, struct user_regs_struct *regs, unsigned long long *arg,
                    const char *host)
{
        size_t n = strlen(host) + 1;
        unsigned long long at = (regs->rsp - 128 - n) & ~15ull;

        if (tmem_write(pid, at, host, n) < 0)
                return -EFAULT;
        *arg = at;
        return 0;
}

static int object_path(int fd, char *out);

/* Whether the absolute `path` lies in an upper directory, by its host path. */
static bool under_upper(const struct supervisor *sup, const char *path)
{
        for (size_t k = 0; k < sup->cow.n; k++)
                if (fs_cow_path_under(path, sup->cow.m[k].upper))
                        return true;
        return false;
}

/* The host path of `fd`, which the kernel walks to it. */
static int object_path(int fd, char *out)
{
        char proc[48];
        ssize_t n;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, out, PATH_MAX - 1);
        if (n <= 0 || out[0] != '/')
                return -ENOENT;
        out[n] = '\0';
        return 0;
}

/*
 * A script whose "#!" names an interpreter in a merged mount (a venv's `bin/pip` names
 * `.venv/bin/python3`): the kernel would look for that interpreter in the lower alone. The
 * supervisor does what binfmt_script does instead: the interpreter is exec'd, with the
 * argument vector the kernel would give it — the "#!" name, its argument if any, the
 * script's name (`given`, as the program named it; else the sandbox path of `script`, the
 * host path judged), then the program's argv[1...] — built below the caller's stack pointer
 * with the strings. One level: an interpreter that is itself such a script is the kernel's
 * (ENOENT). Returns 1 when done, 0 when the script is left to the kernel (no interpreter of
 * a merged mount, nothing of the upper, `renamed` false), or -errno.
 */
static int script_in_merge(struct supervisor *sup, pid_t pid, struct user_regs_struct *regs,
                           int object, const char *script, const char *given, bool renamed, bool at)
{
        unsigned long long argv = at ? regs->rdx : regs->rsi, p, sp = regs->rsp - 128, *nv;
        char interp[PATH_MAX], iarg[256], ihost[PATH_MAX], sname[PATH_MAX];
        const char *strs[4];
        size_t n = 0, k = 0, cap = 64, len;
        int ifd, r;

        const struct vfs_mount *m;

        fs_exec_shebang(sup, pid, object, interp, sizeof(interp), iarg, sizeof(iarg));
        /* a script of the upper too: the kernel would give its host path to the
         * interpreter, which the view does not show; and one the kernel would be given by
         * another name than the program's (`renamed`: its host path) */
        if (!interp[0] || (!renamed && fs_cow_fast_ok(sup, interp) && !under_upper(sup, interp) &&
                           fs_cow_where(sup, object, &m, sname) != 2))
                return 0;
        ifd = fs_exec_find_interp(sup, pid, interp);
        if (ifd < 0)
                return ifd;
        r = object_path(ifd, ihost);
        close(ifd);
        if (r < 0)
                return r;
        /* the strings: the interpreter's host path (exec'd), the "#!" name, its argument,
         * the script's path */
        strs[k++] = ihost;
        strs[k++] = interp;
        if (iarg[0])
                strs[k++] = iarg;
        /* the script by the name the program gave, as binfmt_script names it (the
         * interpreter's $0, sys.argv[0]: `./run.sh`, a symlink's name), which the interpreter
         * opens through the view again; without one (execveat from a dirfd, where the kernel
         * would say /dev/fd/N/name, which the view does not walk beneath), its sandbox path */
        if (given) {
                snprintf(sname, sizeof(sname), "%s", given);
        } else {
                snprintf(sname, sizeof(sname), "%s", script);
                fs_cow_sandbox_path(sup, sname, sizeof(sname));
        }
        strs[k++] = sname;
        nv = xcalloc(cap, sizeof(*nv));
        for (size_t i = 0; i < k; i++) {
                len = strlen(strs[i]) + 1;
                sp -= len;
                if (tmem_write(pid, sp, strs[i], len) < 0) {
                        free(nv);
                        return -EFAULT;
                }
                nv[i] = sp;
        }
        /* then the program's argv[1...], their addresses kept as they are (argv[0] is
         * dropped, as binfmt_script drops it), and the NULL */
        for (n = 1; argv; n++) {
                if (tmem_read(pid, argv + 8 * n, &p, sizeof(p)) < 0) {
                        free(nv);
                        return -EFAULT;
                }
                if (k + n >= cap)
                        nv = xrealloc(nv, (cap *= 2) * sizeof(*nv));
                if (cap > (1u << 20)) {
                        free(nv);
                        return -E2BIG;
                }
                nv[k + n - 1] = p;
                if (!p)
                        break;
        }
        if (!argv)
                nv[k] = 0, n = 1;
        len = (k - 1 + n) * sizeof(*nv); /* the vector starts at nv[1] */
        sp = (sp - len) & ~15ull;
        r = tmem_write(pid, sp, nv + 1, len);
        p = nv[0];
        free(nv);
        if (r < 0)
                return -EFAULT;
        if (at) {
                regs->rdi = (unsigned long long)AT_FDCWD;
                regs->rsi = p;
                regs->rdx = sp;
                regs->r8 = 0;
        } else {
                regs->rdi = p;
                regs->rsi = sp;
        }
        fs_exec_script_named(sup, pid, sname);
        return 1;
}

/* Whether the kernel's walk of `name` from pid's working directory (symlinks followed, as exec
 * follows them; no magic link, which would be ours) finds the object `fd`. */
static bool kernel_finds(pid_t pid, const char *name, int fd)
{
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        int base = name[0] == '/' ? AT_FDCWD : tfd_cwd(pid), found;
        struct stat a, b;
        bool same;

        if (name[0] != '/' && base < 0)
                return false;
        found = sys_openat2(base, name, &how);
        if (base >= 0)
                close(base);
        if (found < 0)
                return false;
        same = fstat(found, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
        close(found);
        return same;
}

static int traced_exec(struct supervisor *sup, pid_t pid, struct user_regs_struct *regs, bool at)
{
        unsigned long long *arg = at ? &regs->rsi : &regs->rdi;
        unsigned flags = at ? (unsigned)regs->r8 : 0;
        int dirfd = at ? (int)regs->rdi : AT_FDCWD, base = AT_FDCWD, object = -1, r;
        char path[PATH_MAX], host[PATH_MAX], given[PATH_MAX];
        const struct vfs_mount *m;
        bool own, found;
        ssize_t n;

        if (flags & ~(unsigned)(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
                return -EINVAL;
        n = tmem_read_string(pid, *arg, path, sizeof(path));
        if (n < 0)
                return (int)n;
        if (n == 0 && !(flags & AT_EMPTY_PATH))
                return -ENOENT;
        if (path[0] != '/') {
                base = dirfd == AT_FDCWD ? tfd_cwd(pid) : tfd_take(pid, dirfd);
                if (base < 0)
                        return base;
        }
        r = fs_exec_judge(sup, pid, base, path, flags, &object);
        if (base >= 0)
                close(base);
        if (r < 0)
                return r;
        /* fexecve (an fd of the program's): the kernel runs that file, which was judged.
         * A path the kernel walks as the view did (nothing of a merged mount on the way)
         * stays as the program gave it: a script's interpreter gets that name. Else the
         * object's host path (a symlink of the upper, `.venv/bin/python`, leads out too). */
        if (n == 0 || (!fs_cow_where(sup, object, &m, host) && fs_cow_fast_ok(sup, path) &&
                       !under_upper(sup, path))) {
                close(object);
                return 0;
        }
        snprintf(given, sizeof(given), "%s", path);
        own = given[0] == '/' || dirfd == AT_FDCWD;
        /* The kernel's walk of the name given reaches the very object judged (a file of the
         * lower, nothing of the upper on the way): the name can stay the program's, which
         * binfmt_script gives a script's interpreter ($0); the exec event checks the inode
         * that runs (and a script's name) again. Else a script is started by us, with that
         * name for the interpreter. */
        found = own && kernel_finds(pid, given, object);
        r = object_path(object, path);
        if (r == 0)
                r = script_in_merge(sup, pid, regs, object, path, own ? given : NULL, own && !found,
                                    at);
        if (r == 0 && found) {
                close(object);
                return 0;
        }
        close(object);
        if (r == 1)
                return 0; /* the interpreter is exec'd instead, its path written */
        if (r == 0 && at)
                regs->rdi = (unsigned long long)AT_FDCWD;
        return r < 0 ? r : put_path(pid, regs, arg, path);
}

/* The lower's directory of the merged directory `res` found (the upper's, which the lower
 * has too), O_PATH; -1 when `res` is no such directory. */
static int merged_lower(const struct supervisor *sup, const struct vfs_result *res)
{
        int up, lo;

        if (!res->upper || !res->mount || !res->mount->emulated ||
            fs_cow_layers(sup, res->path, &up, &lo) <= 0)
                return -1;
        if (up >= 0)
                close(up);
        return lo;
}

static bool on_procfs(int fd)
{
        struct statfs sf;

        return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * A path the kernel resolves itself where a mount is merged (chdir; an O_PATH open, which
 * ADDFD cannot hand over; statfs and inotify_add_watch, which we then perform): resolved in
 * the view from the caller's cwd or `dirfd`. Every such path, not only those spelt beneath
 * a merged mount: a symlink elsewhere may lead into one. `follow`: a last symlink is
 * followed; `dir`: the object must be a directory; `lower_first`: a merged directory is
 * given by the lower's (chdir: the kernel's walk to an upper crosses the session store,
 * which the program's ids may not search, stockade run as root for a command as nobody;
 * only a directory made in the run needs the upper's); `watch`: a merged directory is given
 * by the upper's, made if need be (inotify: every change the run makes in it lands in the
 * upper's, and a watch on the lower's would see none of them), and so is a file the program
 * may write. Returns an O_PATH fd of the
 * object, with its host path in `host` (PATH_MAX), 0 for "" (the kernel's ENOENT), or -errno.
 */
static int traced_find(struct supervisor *sup, pid_t pid, unsigned long long arg, int dirfd,
                       bool follow, bool dir, bool lower_first, bool watch, char *host)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        char path[PATH_MAX], start[PATH_MAX] = "/";
        ssize_t n = tmem_read_string(pid, arg, path, sizeof(path));
        struct fs_as as;
        struct stat st;
        bool by_object;
        int r, obj = -1;

        if (n <= 0)
                return n < 0 ? (int)n : 0;
        if (path[0] != '/') {
                int base = dirfd == AT_FDCWD ? tfd_cwd(pid) : tfd_take(pid, dirfd);

                /* Failed closed: left to the kernel, a number that is an fd again when it
                 * walks (a sibling thread's open) would be walked from outside the view. */
                if (base < 0)
                        return base;
                r = fs_base_path(sup, base, start, sizeof(start));
                close(base);
                if (r < 0)
                        return r;
        }
        r = fs_as_enter(sup, pid, false, &as);
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, start, path, follow ? VFS_FOLLOW : 0, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r;
        if (res.kind == VFS_HOST) {
                if (dir && res.type != S_IFDIR)
                        return -ENOTDIR;
                if (lower_first)
                        obj = merged_lower(sup, &res);
                if (obj < 0 && watch && res.type == S_IFDIR && res.mount && res.mount->emulated &&
                    !res.upper) {
                        obj = fs_cow_dir_up(sup, res.mount, res.path);
                        if (obj < 0)
                                return obj;
                }
                /* A file the program may write, likewise: its changes in the run go to the
                 * upper's copy (node --watch and tsc --watch watch files; `tail -f` reads an
                 * fd of the lower's opened before: README). Copied as it is (the diff shows
                 * nothing for it); one that cannot be copied (not writable: no change of the
                 * run can reach it; a full disk) keeps the watch on the lower's. */
                if (obj < 0 && watch && res.type == S_IFREG && res.mount && res.mount->emulated &&
                    !res.upper) {
                        obj = fs_cow_up(sup, pid, res.mount, res.path, COW_OWN_WRITABLE);
                        if (obj < 0)
                                obj = -1;
                }
                if (obj < 0 && (obj = fcntl(res.fd, F_DUPFD_CLOEXEC, 3)) < 0)
                        obj = -errno;
        } else if (res.kind == VFS_SPECIAL && res.rest[0]) {
                /* The kernel would walk /proc and /dev names through a magic link
                 * (/proc/self/root/..., /proc/self/cwd/..., /proc/self/fd/N/...) into the
                 * host's tree, and /proc/PID of a process outside the sandbox: the view's walk
                 * refuses both (ELOOP, ENOENT) and finds the rest as the kernel will. */
                char full[PATH_MAX];

                if (path[0] != '/') {
                        if ((size_t)snprintf(full, sizeof(full), "%s/%s", start, path) >=
                            sizeof(full))
                                return -ENAMETOOLONG;
                        strcpy(path, full); /* the same size */
                }
                obj = fs_look_find(sup, pid, AT_FDCWD, path, follow ? 0 : AT_SYMLINK_NOFOLLOW);
                /* What a magic link leads out of /proc to (/proc/self/fd/N of an O_PATH fd,
                 * cwd, exe) passes as a reopen through it does: if the view shows it (as the
                 * object itself, not the upper's copy a reopen would take). */
                if (obj >= 0 && !on_procfs(obj)) {
                        int judged = fcntl(obj, F_DUPFD_CLOEXEC, 3);

                        r = judged < 0 ? -errno : fs_view_admits(sup, pid, &judged);
                        if (judged >= 0)
                                close(judged);
                        if (r < 0) {
                                close(obj);
                                return r;
                        }
                }
        } else if (res.kind == VFS_SYNTHETIC || res.kind == VFS_SPECIAL) {
                /* a mount point of /proc or /dev, or a directory above the mounts: the same
                 * object here as for the caller (no mount namespace where a mount is merged) */
                obj = open(res.path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
                if (obj < 0)
                        obj = -errno;
        } else {
                return -ENOENT;
        }
        if (obj < 0)
                return obj;
        /* A host object is given by its host path (the private /dev/shm's is not its name);
         * what procfs holds, and what has no path (a pipe, a deleted file), by the view's
         * spelling, which the kernel follows as the view did. */
        by_object = res.kind == VFS_HOST ||
                    (!on_procfs(obj) && object_path(obj, host) == 0 && !strstr(host, " (deleted)"));
        r = 0;
        if (dir && (fstat(obj, &st) < 0 || !S_ISDIR(st.st_mode)))
                r = -ENOTDIR;
        else if (by_object)
                r = object_path(obj, host);
        else if (strlen(res.path) + 1 + strlen(res.rest) >= PATH_MAX)
                r = -ENAMETOOLONG;
        else
                strcat(strcat(strcpy(host, res.path), res.rest[0] ? "/" : ""), res.rest);
        if (r < 0) {
                close(obj);
                return r;
        }
        return obj;
}

/* chdir (`cd`), or an O_PATH open: the path argument `arg` pointed at the host path of what
 * the view found (and a dirfd `dirfd_reg`, if any, made AT_FDCWD), which the kernel then
 * walks. Another thread may rewrite that path before the kernel reads it: what the call
 * must reach is noted in `check`, for its exit (ptrace.c). */
static int traced_path(struct supervisor *sup, pid_t pid, struct user_regs_struct *regs,
                       unsigned long long *arg, unsigned long long *dirfd_reg, bool follow,
                       bool dir, bool cd, struct exit_check *check)
{
        char host[PATH_MAX];
        struct stat st;
        int obj = traced_find(sup, pid, *arg, dirfd_reg ? (int)*dirfd_reg : AT_FDCWD, follow, dir,
                              cd, false, host);
        int r;

        if (obj <= 0)
                return obj;
        r = fstat(obj, &st) < 0 ? -errno : 0;
        close(obj);
        if (r == 0)
                r = put_path(pid, regs, arg, host);
        if (r < 0)
                return r;
        if (dirfd_reg)
                *dirfd_reg = (unsigned long long)AT_FDCWD;
        *check = (struct exit_check){.armed = true, .cwd = cd, .dev = st.st_dev, .ino = st.st_ino};
        return 0;
}

/* statfs, performed here on what the view found: a path handed to the kernel could be
 * rewritten in memory before it reads it. Returns 0 or -errno. */
static int traced_statfs(struct supervisor *sup, pid_t pid, const struct user_regs_struct *regs)
{
        char host[PATH_MAX];
        struct statfs sf;
        int obj = traced_find(sup, pid, regs->rdi, AT_FDCWD, true, false, false, false, host);
        int r;

        if (obj <= 0)
                return obj < 0 ? obj : -ENOENT;
        r = fstatfs(obj, &sf) < 0 ? -errno : 0;
        close(obj);
        if (r == 0 && tmem_write(pid, regs->rsi, &sf, sizeof(sf)) < 0)
                r = -EFAULT;
        return r;
}

/* inotify_add_watch, performed here on the caller's inotify instance as the program (the
 * kernel asks for read permission on the object), for the reason traced_statfs gives.
 * Returns the watch descriptor or -errno. */
static int traced_watch(struct supervisor *sup, pid_t pid, const struct user_regs_struct *regs)
{
        char host[PATH_MAX], proc[48];
        uint32_t mask = (uint32_t)regs->rdx;
        int ifd = tfd_take(pid, (int)regs->rdi), obj, r;
        struct fs_as as;

        /* the kernel's order: the fd, then the mask, then the path */
        if (ifd < 0)
                return ifd;
        if (!(mask & IN_ALL_EVENTS)) {
                close(ifd);
                return -EINVAL;
        }
        obj = traced_find(sup, pid, regs->rsi, AT_FDCWD, !(mask & IN_DONT_FOLLOW),
                          mask & IN_ONLYDIR, false, true, host);
        if (obj <= 0) {
                close(ifd);
                return obj < 0 ? obj : -ENOENT;
        }
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", obj);
        r = fs_as_enter(sup, pid, false, &as);
        if (r == 0) {
                /* the magic link leads to the object itself, a symlink included */
                r = inotify_add_watch(ifd, proc, mask & ~(uint32_t)IN_DONT_FOLLOW);
                if (r < 0)
                        r = -errno;
                fs_as_leave(&as);
        }
        close(ifd);
        close(obj);
        return r;
}

void fs_cow_traced(struct supervisor *sup, pid_t pid, struct exit_check *check)
{
        struct user_regs_struct regs;
        bool performed = false; /* here: r is the call's result */
        int r;

        *check = (struct exit_check){0};
        if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
                return;
        switch (regs.orig_rax) {
        case SYS_chdir:
                r = traced_path(sup, pid, &regs, &regs.rdi, NULL, true, true, true, check);
                break;
        case SYS_execve:
        case SYS_execveat:
                r = traced_exec(sup, pid, &regs, regs.orig_rax == SYS_execveat);
                break;
        case SYS_open: /* O_PATH: filter.c */
                r = traced_path(sup, pid, &regs, &regs.rdi, NULL, !(regs.rsi & O_NOFOLLOW),
                                regs.rsi & O_DIRECTORY, false, check);
                break;
        case SYS_openat:
                r = traced_path(sup, pid, &regs, &regs.rsi, &regs.rdi, !(regs.rdx & O_NOFOLLOW),
                                regs.rdx & O_DIRECTORY, false, check);
                break;
        case SYS_statfs:
                r = traced_statfs(sup, pid, &regs);
                performed = true;
                break;
        case SYS_inotify_add_watch:
                r = traced_watch(sup, pid, &regs);
                performed = true;
                break;
        default:
                return;
        }
        if (r < 0 || performed) { /* skipped: rax is the result */
                regs.orig_rax = (unsigned long long)-1;
                regs.rax = (unsigned long long)(long long)r;
                check->armed = false;
        }
        if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
                check->armed = false;
}

bool fs_cow_exit_ok(struct supervisor *sup, pid_t tid, const struct exit_check *c)
{
        struct __ptrace_syscall_info info;
        long n = ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info);
        struct stat st;
        int fd, r;

        /* Gone (killed, or a sibling's exit_group or exec took it): nothing left to judge. */
        if (n < 0)
                return errno == ESRCH;
        if (n == 0 || info.op != PTRACE_SYSCALL_INFO_EXIT)
                return false;
        if (info.exit.is_error)
                return true;
        fd = c->cwd ? tfd_cwd(tid) : tfd_take(tid, (int)info.exit.rval);
        if (fd < 0) /* gone, or the fd closed by a sibling already: nothing held */
                return fd == -ESRCH || fd == -EBADF || fd == -ENOENT;
        r = fstat(fd, &st) < 0 ? -errno : 0;
        if (r == 0 && st.st_dev == c->dev && st.st_ino == c->ino) {
                close(fd);
                return true;
        }
        /* Another object: a sibling's chdir meanwhile (threads share the cwd), or the path
         * rewritten. What the view shows passes; a hidden or outside object does not. */
        r = r == 0 && !on_procfs(fd) ? fs_view_admits(sup, tid, &fd) : -EACCES;
        close(fd);
        return r == 0;
}

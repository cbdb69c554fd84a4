/*
 * The calls that make, remove or rename a name — unlink, rmdir, mkdir, mknod, symlink, link,
 * rename and their *at forms — emulated in the view, like open (fs_open.c): the supervisor
 * copies each path ONCE, takes the bases (the caller's dirfds or cwd), checks ID_VALID, finds
 * the directory each name lives in, and performs the call there itself, as the program
 * (fsuid/fsgid, no capabilities, its umask), under the sandbox's Landlock rules, which it
 * entered before the fork. Nothing is answered CONTINUE.
 *
 * Finding the directory: the fast way opens the path's directory part O_PATH with
 * openat2(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS) from the base, so that the walk never
 * crosses into /proc (whose "self" is the supervisor) or /dev; the last component, trailing
 * slashes included, goes to the kernel as it was given, so its errors are the kernel's own.
 * A path that starts on /proc or /dev, or a crossing (EXDEV, ELOOP), resolves in the view
 * (vfs_resolve): hidden parents are ENOENT, and beneath /dev only the sandbox's private
 * /dev/shm exists to change (its POSIX shared memory: shm_unlink, sem_open's link). Nothing
 * else beneath /proc or /dev can be made or removed (EACCES, as for the program itself).
 */
#include "syscalls/fs_common.h"
#include "syscalls/fs_cow.h"
#include "supervisor/binder.h"
#include "supervisor/grants.h"
#include "supervisor/places.h"
#include "supervisor/notify.h"
#include "supervisor/tfd.h"
#include "supervisor/tmem.h"
#include "supervisor/util.h"
#include "supervisor/vfs/resolve.h"
#include "supervisor/vfs/treemove.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

enum path_op { OP_UNLINK, OP_RMDIR, OP_MKDIR, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_RENAME, OP_BIND };

/* One path argument that names a place: its copy, its base, and where it lives. */
struct place_arg {
        int dirfd;
        uint64_t addr;
        unsigned arg; /* which argument, for the trace */
        int base;     /* our copy of the dirfd or cwd; AT_FDCWD for an absolute path */
        int parent;   /* O_PATH of the directory the name lives in */
        char path[PATH_MAX];
        char last[NAME_MAX + 2]; /* the last component, with a trailing '/' if it had one */
        struct fs_cow_name cow;  /* on a copy-on-write mount the supervisor merges */
};

struct path_call {
        enum path_op op;
        pid_t tid;
        mode_t mode;
        unsigned flags;       /* renameat2's, or linkat's AT_SYMLINK_FOLLOW */
        uint64_t target_addr; /* symlink: the link's content */
        char target[PATH_MAX];
        struct place_arg p[2]; /* link and rename: from, to */
        int n;
        int link_source; /* linkat AT_SYMLINK_FOLLOW: O_PATH of the followed source, or -1 */
        int sock;        /* OP_BIND: our copy of the socket; its path is copied already */
};

static bool creates(enum path_op op)
{
        return op == OP_MKDIR || op == OP_MKNOD || op == OP_SYMLINK || op == OP_BIND;
}

/*
 * bind(2) of a unix socket to `last` in directory `dir`. The kernel creates the socket's
 * inode there, judged by Landlock (MAKE_SOCK) as the program's own bind would be, and keeps
 * the name it was given as the socket's address (getsockname, a peer's accept): `last`,
 * bound from `dir` as this thread's working directory (a notifier thread has its own,
 * notify.h), so that a relative name reads as natively. Without a working directory of our
 * own, through /proc/self/fd/DIR/last, which shows as such.
 */
static int bind_at(int sock, int dir, const char *last)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int r, here;

        if (!notify_own_fs) {
                if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dir,
                                     last) >= sizeof(a.sun_path))
                        return -ENAMETOOLONG;
                return bind(sock, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : 0;
        }
        if (strlen(last) >= sizeof(a.sun_path))
                return -ENAMETOOLONG;
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", last);
        here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (here < 0 || fchdir(dir) < 0) {
                r = -errno;
                if (here >= 0)
                        close(here);
                return r;
        }
        r = bind(sock, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : 0;
        if (fchdir(here) < 0)
                r = r ? r : -errno;
        close(here);
        return r;
}

/*
 * bind(2) of a unix socket to the place found: with the path as the program gave it by the
 * binder (supervisor/binder.h), which stands where the program stands, so that the socket's
 * name reads as natively; else (no binder, a path without a directory part, or one whose
 * directory part the kernel would walk elsewhere than the view did) by bind_at.
 *
 * Between the view's check and the binder's walk a thread may swap a directory: the bind then
 * lands where the program's own walls allow, and the kernel's answer there must not tell
 * what the view hides. An EADDRINUSE for a name the directory we judged does not have came
 * from elsewhere: in a hidden directory the kernel finds an existing name before Landlock
 * refuses to make a missing one (EACCES), so both answer EACCES.
 */
static int bind_place(struct supervisor *sup, const struct path_call *pc)
{
        const struct place_arg *a = &pc->p[0];
        char name[NAME_MAX + 2];
        struct stat st;
        size_t n;
        int r = -ENOTSUP;

        if (strchr(a->path, '/') && fstat(a->parent, &st) == 0)
                r = binder_bind(&sup->binder, pc->sock, a->path[0] == '/' ? -1 : a->base, a->path,
                                fs_caller_umask(pc->tid), &st);
        if (r == -ENOTSUP || r == -EXDEV)
                return bind_at(pc->sock, a->parent, a->last);
        n = strlen(a->last);
        snprintf(name, sizeof(name), "%.*s", (int)(n && a->last[n - 1] == '/' ? n - 1 : n),
                 a->last);
        if (r == -EADDRINUSE && fstatat(a->parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -EACCES;
        return r;
}

/* Split `path` into its directory part (in dir, "." when there is none) and its last
 * component with one trailing '/' if it had any ("a/b//" -> "a", "b/"). */
static int split(const char *path, char *dir, size_t size, char *last)
{
        size_t len = strlen(path), end = len, start;
        bool slash;

        while (end > 1 && path[end - 1] == '/')
                end--;
        slash = end < len;
        start = end;
        while (start > 0 && path[start - 1] != '/')
                start--;
        if (end - start > NAME_MAX)
                return -ENAMETOOLONG;
        if (start == 0) {
                snprintf(dir, size, ".");
        } else {
                if (start >= size)
                        return -ENAMETOOLONG;
                memcpy(dir, path, start);
                dir[start] = '\0';
        }
        if (end == start) /* "/" (or only slashes): the root itself */
                snprintf(last, NAME_MAX + 2, ".");
        else
                snprintf(last, NAME_MAX + 2, "%.*s%s", (int)(end - start), path + start,
                         slash ? "/" : "");
        return 0;
}

/* The fast way: the directory part opened without crossing a mount or a magic link. */
static int parent_fast(struct supervisor *sup, const struct path_call *pc, struct place_arg *pa)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS};
        char dir[PATH_MAX];
        struct fs_as as;
        int r = split(pa->path, dir, sizeof(dir), pa->last), fd;

        if (r < 0)
                return r;
        r = fs_as_enter(sup, pc->tid, false, &as);
        if (r < 0)
                return r;
        {
                uint64_t resolve = how.resolve;
                int base = pa->base == AT_FDCWD ? fs_abs_base(sup, &resolve) : pa->base;

                how.resolve = resolve;
                fd = sys_openat2(base, dir, &how);
        }
        r = fd < 0 ? -errno : fd;
        fs_as_leave(&as);
        /* A directory the run made, reached through a symlink into a merged mount */
        if ((r == -ENOENT || r == -ENOTDIR) && pa->base == AT_FDCWD) {
                uint64_t resolve = how.resolve;
                int base = fs_abs_base(sup, &resolve);

                if (fs_cow_missed(sup, base, pa->path, resolve))
                        r = -EXDEV;
        }
        return r;
}

/* Beneath the sandbox's private /dev/shm: the directory of `host` (a path in shm_dir). */
static int parent_shm(struct supervisor *sup, const struct path_call *pc, struct place_arg *pa,
                      const char *host)
{
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
        size_t n = strlen(sup->shm_dir);
        const char *rel = host + n + (host[n] == '/');
        char dir[PATH_MAX];
        struct fs_as as;
        int root, fd, r;

        if (!*rel)
                return -EBUSY; /* /dev/shm itself */
        r = split(rel, dir, sizeof(dir), pa->last);
        if (r < 0)
                return r;
        root = fs_shm_root(sup);
        if (root < 0)
                return root;
        r = fs_as_enter(sup, pc->tid, false, &as);
        if (r == 0) {
                fd = sys_openat2(root, dir, &how);
                r = fd < 0 ? (errno == EXDEV ? -EACCES : -errno) : fd;
                fs_as_leave(&as);
        }
        close(root);
        return r;
}

/* The slow way: the name resolved in the view. */
static int parent_slow(struct supervisor *sup, const struct path_call *pc, struct place_arg *pa)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        struct vfs_special_ctx ctx;
        struct vfs_special sp;
        char start[PATH_MAX];
        struct fs_as as;
        int r = fs_base_path(sup, pa->base, start, sizeof(start)), fd;

        if (r == 0)
                r = fs_as_enter(sup, pc->tid, false, &as);
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, start, pa->path, VFS_CREATE, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r;
        if (res.kind == VFS_SPECIAL) {
                if (res.mount->mode != VFS_DEV)
                        return -EACCES; /* nothing beneath /proc is made or removed */
                r = fs_special_ctx(sup, pc->tid, &ctx);
                if (r == 0)
                        r = vfs_dev_map(res.rest, &ctx, &sp);
                if (r < 0)
                        return r;
                return sp.kind == VFS_SP_SHM ? parent_shm(sup, pc, pa, sp.host) : -EACCES;
        }
        /* "/", ".", a directory the view makes up: nothing to name. Made anew, it exists
         * (tar x of "." into a directory: mkdir(".") is EEXIST, which tar passes over);
         * rmdir(".") is EINVAL; the rest, EBUSY. */
        if (res.parent_fd < 0 || !res.name[0]) {
                if (res.kind == VFS_ABSENT)
                        return -ENOENT;
                if (creates(pc->op) || (pc->op == OP_LINK && pa == &pc->p[1]))
                        return -EEXIST;
                return pc->op == OP_RMDIR ? -EINVAL : -EBUSY;
        }
        /* Moving a directory with a hidden path beneath would give that path a new name the
         * view does not hide (without Landlock, which hides by inode, nothing else would). */
        if (pc->op == OP_RENAME && pa == &pc->p[0] && res.kind == VFS_HOST &&
            grants_hidden_beneath(&sup->view, res.path))
                return -EACCES;
        snprintf(pa->last, sizeof(pa->last), "%s%s", res.name, res.trailing_slash ? "/" : "");
        fs_cow_name_take(&res, &pa->cow);
        fd = res.parent_fd;
        res.parent_fd = -1;
        return fd;
}

/* Whether `last` (a trailing '/' allowed) in directory `dir` is itself a hidden place. */
static bool names_hidden(const struct supervisor *sup, int dir, const char *last)
{
        char name[NAME_MAX + 2];
        size_t n = strlen(last);
        struct stat st;

        snprintf(name, sizeof(name), "%.*s", (int)(n && last[n - 1] == '/' ? n - 1 : n), last);
        return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               places_is_hidden_place(&sup->places, &st);
}

/*
 * The sandbox path of `last` in `dir`, into path[PATH_MAX]. 0; 1 when it is longer than
 * PATH_MAX (a tree deeper than that: the view, whose entries are paths the user wrote,
 * names nothing there, and the slow way could not resolve it either; it is judged by the
 * inodes of what exists, as before); -1 when it cannot be told.
 */
static int name_path(const struct supervisor *sup, int dir, const char *last, char *path)
{
        int r = fs_base_path(sup, dir, path, PATH_MAX);
        size_t n;

        if (r == -ENAMETOOLONG)
                return 1;
        if (r < 0)
                return -1;
        n = strlen(path);
        if (snprintf(path + n, PATH_MAX - n, "%s%.*s", n > 1 ? "/" : "", (int)strcspn(last, "/"),
                     last) >= (int)(PATH_MAX - n))
                return 1;
        return 0;
}

/* The view hides the name itself: an entry that did not exist at the start (a --hide path
 * made later) has no inode in places, only its path. Unsure: the slow way decides. Asked
 * only where a hidden entry lies beneath a writable place (sup->hidden_in_writable):
 * elsewhere Landlock refuses to make the name, which is no oracle for a missing one. */
bool fs_view_hides_name(const struct supervisor *sup, int dir, const char *last)
{
        const struct vfs_mount *m;
        char path[PATH_MAX];
        int r = name_path(sup, dir, last, path);

        if (r != 0)
                return r < 0;
        m = vfs_view_find(&sup->view, path);
        return m && m->mode == VFS_HIDDEN;
}

bool fs_view_over_hidden(const struct supervisor *sup, int dir, const char *last)
{
        char path[PATH_MAX];
        int r;

        if (!sup->hidden_in_writable)
                return false;
        r = name_path(sup, dir, last, path);
        return r != 0 ? r < 0 : grants_hidden_named_beneath(&sup->view, path) != 0;
}

/*
 * A name beneath which the view hides a path, given another object or taken away. Refused:
 * - a rename's or a link's destination (both names of an exchange), a new symlink, file,
 *   FIFO or socket (fs_view_over_hidden for open's): a directory renamed there would
 *   bring a hidden path not made yet into being with the program's content (an outside
 *   review planted ~/.cache/huggingface/token, a hard link of a file it could read, and read
 *   the token the host wrote there later); a symlink made there would lead it where the
 *   program chose (the session store not made yet: the next run's sessions in a directory
 *   of the program's, a second review), and so would a hard link of a symlink made
 *   elsewhere (a third); a file, FIFO or socket there would keep the store from being made;
 * - a rename's source with a hidden path beneath that exists, and an unlink (of a symlink
 *   on the way to one): it would get a name the view does not hide, and a new directory
 *   could take the old name, which the host then trusts (the default session store in
 *   /var/tmp, hidden by the view alone: that review moved ~/.local/state away and forged a
 *   session that `stockade apply` wrote). An rmdir needs an empty directory: nothing there.
 * Landlock refuses most of these where it carves the path out, not where the view alone
 * hides it. Unsure of the path: refused.
 */
static bool moves_hidden(const struct supervisor *sup, const struct path_call *pc,
                         const struct place_arg *pa, int dir)
{
        bool to = (creates(pc->op) && pc->op != OP_MKDIR) ||
                  ((pc->op == OP_RENAME || pc->op == OP_LINK) && pa == &pc->p[1]) ||
                  (pc->op == OP_RENAME && (pc->flags & RENAME_EXCHANGE));
        char path[PATH_MAX];
        int r;

        if (!sup->hidden_in_writable || (!to && pc->op != OP_RENAME && pc->op != OP_UNLINK))
                return false;
        r = name_path(sup, dir, pa->last, path);
        if (r != 0)
                return r < 0;
        return pc->op == OP_RENAME && !to ? grants_hidden_beneath(&sup->view, path) != 0
                                          : grants_hidden_named_beneath(&sup->view, path) != 0;
}

/*
 * Whether `last` in `dir` (an fd in the sandbox's namespace) is a mount point there: a
 * remapped mount's target, a copy-on-write mount, a private directory, a mask. The sandbox
 * gets EBUSY for removing or renaming one, as natively; but we are in another mount
 * namespace, where the kernel lets the name go (and detaches the sandbox's mount): an
 * outside-the-namespace rename of a `--rw HOST:SANDBOX` target moved the host's directory.
 * By statx's STATX_ATTR_MOUNT_ROOT (5.8), the view's mount points before it.
 */
static int names_mount_point(const struct supervisor *sup, int dir, const char *last)
{
        char name[NAME_MAX + 2], path[PATH_MAX];
        size_t n = strlen(last);
        struct statx stx;

        snprintf(name, sizeof(name), "%.*s", (int)(n && last[n - 1] == '/' ? n - 1 : n), last);
        /* Nothing there: nothing mounted. Any other failure (EACCES: the same uid as the
         * program when stockade is not root, and the program could chmod the directory back
         * before the call; an outside attack raced a rename through so) is the answer. */
        if (statx(dir, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
                return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
        return name_path(sup, dir, last, path) != 0 || vfs_view_mount_at(&sup->view, path);
}

static int find_parent(struct supervisor *sup, const struct path_call *pc, struct place_arg *pa)
{
        int r = -EXDEV;

        /* Without Landlock the kernel is no wall for hidden paths: always the view; nor is
         * it beneath a cow mount, whose overlay it grants whole (sup.h). */
        if (sup->layers.landlock_abi && !sup->cow_hides &&
            !fs_starts_special(sup, pa->path, pa->base) && fs_cow_fast_ok(sup, pa->path))
                r = parent_fast(sup, pc, pa);
        /* A symlink led into a merged copy-on-write mount: the merge says what is there. */
        if (r >= 0 && fs_cow_found(sup, r)) {
                close(r);
                r = -EXDEV;
        }
        /* A hidden directory, reached the fast way (O_PATH opens it: Landlock does not
         * judge that): the kernel would tell an existing name from a missing one (EEXIST,
         * EADDRINUSE) before Landlock refused the change. The view answers instead. */
        if (r >= 0 && (places_hidden(&sup->places, r) != 0 || names_hidden(sup, r, pa->last) ||
                       (sup->hidden_in_writable && fs_view_hides_name(sup, r, pa->last)))) {
                close(r);
                r = -EXDEV;
        }
        if (r == -EXDEV || r == -ELOOP || r == -EACCES)
                r = parent_slow(sup, pc, pa);
        /* A mount point of the namespace, removed, renamed or linked, whichever way its
         * directory was found: the native answers (creating one is EEXIST from the kernel).
         * An outside attack renamed the copy-on-write workspace by `mv ../ws ../x`, which
         * the slow way had found. */
        if (r >= 0 && sup->layers.mntns &&
            (pc->op == OP_UNLINK || pc->op == OP_RMDIR || pc->op == OP_RENAME ||
             (pc->op == OP_LINK && pa == &pc->p[0]))) {
                int m = names_mount_point(sup, r, pa->last);

                if (m != 0) {
                        close(r);
                        return m < 0 ? m : pc->op == OP_LINK ? -EXDEV : -EBUSY;
                }
        }
        if (r >= 0 && moves_hidden(sup, pc, pa, r)) {
                close(r);
                r = -EACCES;
        }
        if (r >= 0)
                pa->parent = r;
        return r < 0 ? r : 0;
}

/* linkat(AT_SYMLINK_FOLLOW): the source followed in the view, never by the kernel in our
 * context (a symlink to /proc/PID/fd/N would link whatever the program holds, a hidden file
 * included). The result must be a file of the view. */
static int follow_source(struct supervisor *sup, struct path_call *pc)
{
        _cleanup_vfs_result_ struct vfs_result res = VFS_RESULT_INIT;
        char start[PATH_MAX];
        struct fs_as as;
        int r = fs_base_path(sup, pc->p[0].base, start, sizeof(start));

        if (r == 0)
                r = fs_as_enter(sup, pc->tid, false, &as);
        if (r < 0)
                return r;
        r = vfs_resolve(&sup->view, start, pc->p[0].path, VFS_FOLLOW, &res);
        fs_as_leave(&as);
        if (r < 0)
                return r;
        if (res.kind != VFS_HOST)
                return -EPERM; /* nothing of /proc or /dev is linked */
        pc->link_source = res.fd;
        res.fd = -1;
        return 0;
}

/*
 * A rename that overlayfs refused with EXDEV and the supervisor does by copying: a directory
 * (a file never gets EXDEV there), within one copy-on-write mount, no RENAME_EXCHANGE or
 * RENAME_WHITEOUT.
 */
static bool cow_dir_move(const struct supervisor *sup, const struct path_call *pc)
{
        struct stat src, dst, root;

        if ((pc->flags & ~(unsigned)RENAME_NOREPLACE) ||
            fstatat(pc->p[0].parent, pc->p[0].last, &src, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(src.st_mode) || fstat(pc->p[1].parent, &dst) < 0 || dst.st_dev != src.st_dev)
                return false;
        for (size_t i = 0; i < sup->n_cow_roots; i++)
                if (fstat(sup->cow_roots[i], &root) == 0 && root.st_dev == src.st_dev)
                        return true;
        return false;
}

static int perform_plain(struct supervisor *sup, const struct path_call *pc);

/* The call on a copy-on-write mount the supervisor merges (fs_cow.h). A name made is made in
 * the upper, by the program's own call there, once the upper is ready for it. */
static int perform_cow(struct supervisor *sup, struct path_call *pc)
{
        struct place_arg *a = &pc->p[0], *b = &pc->p[1];
        char name[NAME_MAX + 1];
        bool whiteout;
        int r;

        switch (pc->op) {
        case OP_UNLINK:
        case OP_RMDIR:
                return fs_cow_remove(sup, pc->tid, &a->cow, &a->parent, a->last,
                                     pc->op == OP_RMDIR);
        case OP_RENAME:
                return fs_cow_rename(sup, pc->tid, &a->cow, &a->parent, a->last, &b->cow,
                                     &b->parent, b->last, pc->flags);
        case OP_LINK:
                if (pc->link_source >= 0)
                        return -EXDEV; /* linkat(AT_SYMLINK_FOLLOW): not merged yet */
                return fs_cow_link(sup, pc->tid, &a->cow, a->parent, a->last, &b->cow, &b->parent,
                                   b->last);
        case OP_MKDIR:
        case OP_MKNOD:
        case OP_SYMLINK:
        case OP_BIND:
                break;
        }
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(a->last, "/"), a->last);
        r = fs_cow_make_ready(sup, pc->tid, &a->cow, &a->parent, name, &whiteout);
        if (r == -EEXIST && pc->op == OP_BIND)
                r = -EADDRINUSE;
        if (r == 0)
                r = perform_plain(sup, pc);
        if (r == 0 && pc->op == OP_MKDIR)
                fs_cow_made_dir(a->parent, name, whiteout);
        return r;
}

static int perform(struct supervisor *sup, struct path_call *pc)
{
        if (pc->p[0].cow.mount || (pc->n > 1 && pc->p[1].cow.mount))
                return perform_cow(sup, pc);
        return perform_plain(sup, pc);
}

/* The call itself, as the program, on the directories found. Returns 0 or -errno. */
static int perform_plain(struct supervisor *sup, const struct path_call *pc)
{
        const struct place_arg *a = &pc->p[0], *b = &pc->p[1];
        struct fs_link_was was = {0};
        bool moved = false;
        struct fs_as as;
        long r;

        /* What the lower has at a name about to be removed or replaced, for apply (cow.h),
         * taken before: a host change meanwhile is then a conflict, not the baseline. */
        if (pc->op == OP_UNLINK || pc->op == OP_RMDIR || pc->op == OP_RENAME)
                cow_note_at(sup, a->parent, a->last);
        if (pc->op == OP_RENAME)
                cow_note_at(sup, b->parent, b->last);
        if (pc->op == OP_LINK && pc->link_source >= 0)
                fs_link_before(sup, pc->link_source, "", AT_EMPTY_PATH, &was);
        else if (pc->op == OP_LINK)
                fs_link_before(sup, a->parent, a->last, AT_SYMLINK_NOFOLLOW, &was);
        r = fs_as_enter(sup, pc->tid, creates(pc->op), &as);
        if (r < 0)
                return (int)r;
        switch (pc->op) {
        case OP_UNLINK:
                r = unlinkat(a->parent, a->last, 0);
                break;
        case OP_RMDIR:
                r = unlinkat(a->parent, a->last, AT_REMOVEDIR);
                break;
        case OP_MKDIR:
                r = mkdirat(a->parent, a->last, fs_as_mode(pc->tid, pc->mode));
                break;
        case OP_MKNOD:
                r = mknodat(a->parent, a->last,
                            (pc->mode & S_IFMT) | fs_as_mode(pc->tid, pc->mode & 07777), 0);
                break;
        case OP_SYMLINK:
                r = symlinkat(pc->target, a->parent, a->last);
                break;
        case OP_LINK:
                if (pc->link_source >= 0) { /* AT_SYMLINK_FOLLOW: what the view resolved */
                        char self[48];

                        snprintf(self, sizeof(self), "/proc/self/fd/%d", pc->link_source);
                        r = linkat(AT_FDCWD, self, b->parent, b->last, AT_SYMLINK_FOLLOW);
                } else {
                        r = linkat(a->parent, a->last, b->parent, b->last, 0);
                }
                break;
        case OP_BIND:
                r = bind_place(sup, pc);
                if (r < 0)
                        errno = (int)-r, r = -1;
                break;
        case OP_RENAME:
                r = syscall(SYS_renameat2, a->parent, a->last, b->parent, b->last, pc->flags);
                if (r < 0 && errno == EXDEV && cow_dir_move(sup, pc)) {
                        /* A directory the host tree has, in a copy-on-write mount: moved by
                         * copying, as the program (treemove.h). */
                        r = treemove(a->parent, a->last, b->parent, b->last,
                                     pc->flags & RENAME_NOREPLACE);
                        moved = r == 0;
                        if (r < 0)
                                errno = (int)-r, r = -1;
                }
                break;
        }
        r = r < 0 ? -errno : 0;
        fs_as_leave(&as);
        /* What a copy-on-write mount's lower has at a name removed or replaced, for apply
         * (cow.h); a name made anew needs nothing. */
        if (moved)
                cow_note_tree_at(sup, a->parent, a->last);
        else if (r == 0 && (pc->op == OP_UNLINK || pc->op == OP_RMDIR || pc->op == OP_RENAME))
                cow_note_at(sup, a->parent, a->last);
        if (r == 0 && pc->op == OP_RENAME)
                cow_note_at(sup, b->parent, b->last);
        if (r == 0 && pc->op == OP_LINK)
                fs_link_after(sup, &was, b->parent, b->last);
        return (int)r;
}

/* Copy every path, take every base, check ID_VALID, then find and perform. */
static int run(struct supervisor *sup, struct call *call, struct path_call *pc)
{
        int r = 0;

        if (pc->op == OP_SYMLINK) {
                ssize_t n =
                        tmem_read_string(pc->tid, pc->target_addr, pc->target, sizeof(pc->target));
                r = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
        }
        for (int i = 0; i < pc->n && r == 0; i++) {
                struct place_arg *pa = &pc->p[i];
                ssize_t n = pc->op == OP_BIND ? (ssize_t)strlen(pa->path)
                                              : tmem_read_string(pc->tid, pa->addr, pa->path,
                                                                 sizeof(pa->path));

                r = n < 0 ? (int)n : n == 0 ? -ENOENT : 0;
                if (r == 0 && pa->path[0] == '/')
                        pa->base = AT_FDCWD;
                else if (r == 0)
                        r = pa->base = pa->dirfd == AT_FDCWD ? tfd_cwd(pc->tid)
                                                             : tfd_take(pc->tid, pa->dirfd);
                r = r < 0 ? r : 0;
        }
        if (r == 0 && tmem_id_valid(sup->listener, call->req->id) < 0)
                r = -ESRCH;
        if (r == 0 && pc->op == OP_SYMLINK)
                trace_call_path(call, 0, pc->target); /* symlink(at)'s first: the target */
        for (int i = 0; i < pc->n && r == 0; i++)
                trace_call_path(call, pc->p[i].arg, pc->p[i].path);
        for (int i = 0; i < pc->n && r == 0; i++)
                r = find_parent(sup, pc, &pc->p[i]);
        if (r == 0 && pc->op == OP_LINK && (pc->flags & AT_SYMLINK_FOLLOW))
                r = follow_source(sup, pc);
        if (r == 0)
                r = perform(sup, pc);
        if (pc->link_source >= 0)
                close(pc->link_source);
        for (int i = 0; i < pc->n; i++) {
                if (pc->p[i].base >= 0)
                        close(pc->p[i].base);
                if (pc->p[i].parent >= 0)
                        close(pc->p[i].parent);
                fs_cow_name_release(&pc->p[i].cow);
        }
        return r;
}

static void place(struct path_call *pc, int dirfd, uint64_t addr, unsigned arg)
{
        pc->p[pc->n++] = (struct place_arg){.dirfd = dirfd,
                                            .addr = addr,
                                            .arg = arg,
                                            .base = -1,
                                            .parent = -1,
                                            .cow.lower = -1};
}

int fs_unix_bind(struct supervisor *sup, struct call *call, int sock, const char *path)
{
        struct path_call pc = {
                .op = OP_BIND, .tid = (pid_t)call->req->pid, .link_source = -1, .sock = sock};

        place(&pc, AT_FDCWD, 0, 1);
        snprintf(pc.p[0].path, sizeof(pc.p[0].path), "%s", path);
        return run(sup, call, &pc);
}

/* unlink, unlinkat, rmdir, mkdir, mkdirat, mknod, mknodat, symlink, symlinkat, link, linkat,
 * rename, renameat, renameat2 */
int fs_path(struct supervisor *sup, struct call *call)
{
        const __u64 *a = call->req->data.args;
        struct path_call pc = {.tid = (pid_t)call->req->pid, .link_source = -1};
        int r = 0;

        switch ((int)(call->row - syscall_table)) {
        case SC_unlink:
                pc.op = OP_UNLINK, place(&pc, AT_FDCWD, a[0], 0);
                break;
        case SC_unlinkat:
                if (a[2] & ~(uint64_t)AT_REMOVEDIR)
                        r = -EINVAL;
                pc.op = a[2] & AT_REMOVEDIR ? OP_RMDIR : OP_UNLINK;
                place(&pc, (int)a[0], a[1], 1);
                break;
        case SC_rmdir:
                pc.op = OP_RMDIR, place(&pc, AT_FDCWD, a[0], 0);
                break;
        case SC_mkdir:
                pc.op = OP_MKDIR, pc.mode = (mode_t)a[1] & 07777, place(&pc, AT_FDCWD, a[0], 0);
                break;
        case SC_mkdirat:
                pc.op = OP_MKDIR, pc.mode = (mode_t)a[2] & 07777, place(&pc, (int)a[0], a[1], 1);
                break;
        case SC_mknod:
        case SC_mknodat: {
                bool at = (int)(call->row - syscall_table) == SC_mknodat;
                mode_t mode = (mode_t)a[at ? 2 : 1];

                pc.op = OP_MKNOD, pc.mode = mode;
                /* No device nodes (the program has no capability for them anyway). */
                if ((mode & S_IFMT) != S_IFIFO && (mode & S_IFMT) != S_IFSOCK &&
                    (mode & S_IFMT) != S_IFREG && (mode & S_IFMT) != 0)
                        r = -EPERM;
                if ((mode & S_IFMT) == 0)
                        pc.mode |= S_IFREG;
                place(&pc, at ? (int)a[0] : AT_FDCWD, a[at ? 1 : 0], at ? 1 : 0);
                break;
        }
        case SC_symlink:
                pc.op = OP_SYMLINK, pc.target_addr = a[0], place(&pc, AT_FDCWD, a[1], 1);
                break;
        case SC_symlinkat:
                pc.op = OP_SYMLINK, pc.target_addr = a[0], place(&pc, (int)a[1], a[2], 2);
                break;
        case SC_link:
                pc.op = OP_LINK, place(&pc, AT_FDCWD, a[0], 0), place(&pc, AT_FDCWD, a[1], 1);
                break;
        case SC_linkat:
                /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH, which the program never has. */
                if (a[4] & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
                        r = -EINVAL;
                else if (a[4] & AT_EMPTY_PATH)
                        r = -ENOENT;
                pc.op = OP_LINK, pc.flags = (unsigned)(a[4] & AT_SYMLINK_FOLLOW);
                place(&pc, (int)a[0], a[1], 1), place(&pc, (int)a[2], a[3], 3);
                break;
        case SC_rename:
                pc.op = OP_RENAME, place(&pc, AT_FDCWD, a[0], 0), place(&pc, AT_FDCWD, a[1], 1);
                break;
        case SC_renameat2:
                pc.flags = (unsigned)a[4];
                /* fall through */
        case SC_renameat:
                pc.op = OP_RENAME, place(&pc, (int)a[0], a[1], 1), place(&pc, (int)a[2], a[3], 3);
                break;
        default:
                r = -ENOSYS;
        }
        if (r == 0)
                r = run(sup, call, &pc);
        if (r < 0)
                call_fail(call, -r);
        else
                call_return(call, 0);
        return 0;
}

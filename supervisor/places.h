/*
 * The writable places: where a run may change host files until the virtual filesystem
 * polices every path. Computed once by the supervisor before the fork; the shim turns the
 * list into Landlock rules and the metadata handlers (syscalls/fs_meta.c) check their
 * targets against it. Read-only after the spawn, so handlers read it without a lock.
 */
#ifndef STOCKADE_PLACES_H
#define STOCKADE_PLACES_H

#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <sys/types.h>

enum place_kind {
        /* Everything beneath the directory may be written, created, removed, renamed and have
         * its metadata changed (chmod, chown, utimes, xattrs): cwd, /tmp, /var/tmp. */
        PLACE_TREE,
        /* Only the content of the device files may be written (open for writing, truncate);
         * never their metadata: /dev/null, /dev/tty, /dev/pts, the terminal ... */
        PLACE_DEVICE,
        /* A read-only carve-out inside a PLACE_TREE (--ro): nothing beneath it, nor the
         * directory itself, is writable or has its metadata changed. */
        PLACE_RO,
        /* A hidden object (the default view's credential stores, /run/user/UID, --hide) that
         * existed at the start, symlinks resolved. Only in `hidden`, never in `v`: what the
         * sandbox may not reach by a path the kernel does not judge for Landlock (connecting
         * to a unix socket: Landlock ABI <= 7 has no right for it). */
        PLACE_HIDDEN,
};

struct place {
        char *path;
        dev_t dev;
        ino_t ino;
        bool dir;
        enum place_kind kind;
};

#define PLACES_MAX 64

struct places {
        struct place v[PLACES_MAX];
        size_t n;
        bool cwd_refused;     /* the current directory was too broad (or /proc, /sys, /dev) */
        struct place *hidden; /* PLACE_HIDDEN places (allocated; any number) */
        size_t n_hidden;
        /* The sandbox's root (its mount namespace's, shim/mntns.h) once the run has one: the
         * path the kernel prints for an fd is in that namespace, and is looked up there.
         * 0 (none, AT_FDCWD) before; set after the namespaces are made. */
        int root_fd;
};

struct error;

/*
 * Fill *p: the current directory (unless it is /, or under /proc, /sys or /dev, which are
 * never writable), /tmp, /var/tmp, the device files programs write, and the sandbox's
 * terminal: `tty_slave`'s when stockade relays a pty of its own (>= 0), else that of fds 0-2. Places that do not exist are left out; any other failure to stat one is an error
 * (fail closed). Prints a warning on stderr when the current directory is not made writable
 * or contains the home directory. Returns 0 or -1 with *err set.
 */
int places_compute(struct places *p, int tty_slave, struct error *err);
/* For places_compute: the sandbox holds no terminal at all (--tty never relays pipes). */
#define PLACES_NO_TERMINAL (-2)
void places_free(struct places *p);
/* Add `path` (symlinks followed) as a place of `kind`, unless it is one already. Returns 0
 * or -1 with *err set; a path that does not exist is an error naming it. */
int places_add(struct places *p, const char *path, enum place_kind kind, struct error *err);
/* The place that is `path` is now the directory `fd` designates (a copy-on-write mount's
 * overlay, which the sandbox writes through): it is judged by that inode. */
void places_follow(struct places *p, const char *path, int fd);
/* Forget the place that is `path` (it became read-only or hidden), if any. */
void places_remove(struct places *p, const char *path);

/* Add the object at `path` (symlinks followed: the target is what gets hidden; with
 * `nofollow`, a path with a symlink on it hides nothing) as a hidden place, unless it is one
 * already. A path that does not exist, or that we cannot reach (EACCES, ELOOP: the program,
 * with our rights at most, cannot reach it either), is left out. Returns 0 or -1 with *err
 * set. */
int places_add_hidden(struct places *p, const char *path, bool nofollow, struct error *err);
/* True when `path` surely does not exist (lstat: ENOENT or ENOTDIR), so that realpath(3) of
 * it would fail the same way: one call instead of a readlink per existing component (most
 * of the default hidden paths are absent, and realpath'd by walls.c and grants.c). */
bool places_absent(const char *path);

/*
 * Whether the object `fd` designates (an O_PATH fd of it, typically) is a hidden place or
 * lies beneath one, judged by st_dev/st_ino like places_contain: the object, then its parent
 * (named by /proc/self/fd/N and checked to still hold it), then every ".." up to the root.
 * Returns 1 (hidden), 0 (not hidden) or -errno; a caller refuses on anything but 0.
 */
int places_hidden(const struct places *p, int fd);
/* Whether the object of `st` is itself a hidden place (not what lies beneath one). */
bool places_is_hidden_place(const struct places *p, const struct stat *st);

/*
 * Whether the object `fd` designates (any kind of fd, O_PATH included) lies strictly beneath
 * a PLACE_TREE place, with no PLACE_RO carve-out on the way (the object itself included), judged by st_dev/st_ino of its ancestors as the kernel walks them
 * (".." of a directory; for anything else the parent named by /proc/self/fd/N, checked to
 * still hold it). The places themselves are not beneath themselves: /tmp's own mode stays.
 * Returns 1 (inside), 0 (outside) or -errno.
 */
int places_contain(const struct places *p, int fd);

#endif

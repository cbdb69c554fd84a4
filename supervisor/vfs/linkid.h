/*
 * The identity a hard link keeps in a copy-on-write mount.
 *
 * Natively a new name made by link(2) is the same inode as its source: stat of either gives
 * the st_dev and st_ino the source had. In a copy-on-write mount the source, a file of the
 * host tree, is copied up first and the new name is a link to the copy, whose inode is
 * another one (overlayfs shows the source's number for the source, never for a second name;
 * the merged mount shows the copy's for both). `git clone` of a repository in the workspace
 * links every object and then compares the two stats ("hardlink different from source").
 *
 * So the supervisor remembers, for the run, each object a link made whose identity differs
 * from the one its source showed before the call, and the emulated stat family shows the
 * source's identity for it. An object is known by its device, inode number and birth time:
 * an inode number freed and given to a new file is not taken for the link (no birth time
 * from the file system: nothing is remembered, and the link shows its own identity, as
 * before). fstat of an fd, which the kernel answers, still shows the copy's.
 *
 * A source the host tree holds under more than one name is not remembered: copied up, it
 * parts from its other names (a copy-on-write limit), so the link would show the identity
 * of a name whose content is no longer its own, and `cp -a` would copy one for the other.
 */
#ifndef STOCKADE_VFS_LINKID_H
#define STOCKADE_VFS_LINKID_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the kernel shows of an object, with its birth time (and its link count, which is
 * not part of what makes it the same object). */
struct linkid_obj {
        dev_t dev;
        ino_t ino;
        int64_t btime_sec;
        uint32_t btime_nsec;
        uint32_t nlink;
};

struct linkid_entry {
        struct linkid_obj raw; /* the object the link made (ino 0: a free slot) */
        dev_t dev;             /* ... and the identity it shows */
        ino_t ino;
};

struct linkid {
        pthread_mutex_t lock;
        atomic_size_t n; /* entries: 0 costs the stat family nothing */
        size_t cap;      /* slots, a power of two (0: none yet) */
        struct linkid_entry *v;
};

/* At most this many objects are remembered in a run; later links show their own identity. */
#define LINKID_MAX (1u << 18)

void linkid_init(struct linkid *l);
void linkid_fini(struct linkid *l);

/*
 * Fills *o from statx of (dirfd, name, flags) — flags as statx takes them (AT_EMPTY_PATH,
 * AT_SYMLINK_NOFOLLOW). Returns 0, -errno, or -ENODATA when the file system gives no birth
 * time.
 */
int linkid_stat(int dirfd, const char *name, int flags, struct linkid_obj *o);

/*
 * A link made `made`, whose source showed (dev, ino) before the call. Remembered when they
 * differ and `made` has a birth time. Returns true when it was remembered.
 */
bool linkid_note(struct linkid *l, const struct linkid_obj *made, dev_t dev, ino_t ino);

/* The identity to show for `raw`: *dev and *ino replaced when a link made it. */
bool linkid_shown(struct linkid *l, const struct linkid_obj *raw, dev_t *dev, ino_t *ino);

#endif

/*
 * The listing of a merged directory of a copy-on-write mount emulated without overlayfs
 * (docs/plans/cow-without-mntns.md): the session's upper directory over the host's lower
 * one, read as overlayfs reads them, and handed out in getdents64's or getdents's records.
 *
 * The upper is overlayfs's with `userxattr`: a whiteout is a character device 0:0 and hides
 * the lower's entry of its name; an upper entry hides the lower's entry of the same name. An
 * opaque upper (`user.overlay.opaque` = "y") is the caller's to judge: it passes no lower.
 *
 * Positions. A program's listing may stop anywhere and resume later (the next getdents call,
 * telldir and seekdir, a second reader of a dup'ed fd), while the layers change between the
 * calls: the program itself removes what it has listed (`rm -rf` reads a batch, unlinks it,
 * reads on). An index into the merge would then skip or repeat entries, so an entry's
 * position is a hash of its name, as ext4 positions entries of an htree directory: the
 * merge is sorted by hash, a listing resumes after the last hash it handed out, and an
 * entry removed or added elsewhere moves no other. An entry added during a listing may be
 * listed or not (POSIX leaves that open); one never comes twice. The hash has 31 bits so
 * that the position can be stored as the file offset of any directory (lseek of ext4's
 * htree directory for a 32-bit caller takes no more than 0x7fffffff) and read back by a
 * 32-bit program (glibc's readdir without _FILE_OFFSET_BITS=64 fails with EOVERFLOW on a
 * d_off past 2^31 - 1); 0 is the start, 1 is "." and 2 is "..", which no name hashes to.
 *
 * Pure file code on directory fds, no sandbox: the supervisor's getdents emulation
 * (syscalls/fs_dir.c) reads the merge and fills the program's buffer from its position.
 */
#ifndef STOCKADE_VFS_COWDIR_H
#define STOCKADE_VFS_COWDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's records (include/linux/dirent.h and fs/readdir.c), for syscalls/fs_dir.c too:
 * getdents64's, and getdents's old one, whose d_type is the record's last byte, after the
 * name's NUL. */
struct dirent64_k {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

struct dirent_old {
        unsigned long d_ino;
        unsigned long d_off;
        unsigned short d_reclen;
        char d_name[];
};

/* The positions of ".", ".." and the start of a listing: no name hashes to them. */
#define COWDIR_POS_START  0u
#define COWDIR_POS_DOT    1u
#define COWDIR_POS_DOTDOT 2u

struct cowdir_entry {
        uint64_t ino;
        uint32_t hash;      /* the entry's position (cowdir_hash; 1 and 2 for "." and "..") */
        unsigned char type; /* DT_*: the layer's, DT_UNKNOWN when its file system gives none */
        char *name;
};

struct cowdir {
        struct cowdir_entry *v; /* sorted by (hash, name): "." and ".." first */
        size_t n;
        char *names; /* the storage every name points into */
};

/*
 * The merged listing of one directory: `upper` (an fd of the upper directory, in any open
 * mode, O_PATH too; -1 when the upper has none) over `lower` (an fd of the lower directory;
 * -1 when there is none or when the upper's is opaque). Both are read through directory
 * streams of their own (openat ".", a new open file description), so the offsets of the
 * given fds never move: one of them may be a copy of the program's listing fd.
 *
 * An entry of the upper that is a whiteout (told by fstatat, not followed, when d_type is
 * DT_CHR or DT_UNKNOWN) is left out and hides the lower's of its name; any other upper
 * entry is listed with its own inode and type in place of the lower's of its name.
 *
 * "." and ".." come first. Their inodes are those of the upper when there is one, else of
 * the lower: "." the directory's st_ino (fstat), ".." what that layer's own listing gives
 * for "..", or the same as "." when it gives none. At the root of the mount the upper's ".."
 * is a directory of the session store rather than what the program sees above the mount:
 * the caller replaces v[1].ino there (as fs_dir.c's dotdot_ino does for a remapped root).
 *
 * Returns 0 or -errno (*out then empty); both layers absent is -EINVAL.
 */
int cowdir_read(int upper, int lower, struct cowdir *out);

/* Free what cowdir_read filled (the entries and their names); d is left empty. */
void cowdir_free(struct cowdir *d);

/*
 * The position of `name` (not "." nor ".."): FNV-1a of 64 bits folded to 31, and 0, 1 and 2
 * moved to 3, 4 and 5. The same for a name on every run and host: a position the program
 * kept across calls stays valid.
 */
uint32_t cowdir_hash(const char *name);

/*
 * Fill buf[0..size) with the records of the entries past `pos` (the listing's position: 0
 * at the start, else the d_off of the last record handed out), as getdents64 lays them out
 * (linux_dirent64), or getdents with `old` (linux_dirent, d_type the record's last byte).
 * Each record's d_off is its entry's hash: resuming from it (the next call, or seekdir to
 * a telldir taken after it) lists what follows. Entries sharing one hash are handed out
 * together or not at all, since a position between them cannot be told (a telldir taken
 * between two of them resumes after the last).
 *
 * Returns the bytes written, 0 at the end of the directory, and sets *next to the position
 * after the last record written (left alone when 0 is returned). -EINVAL when not even the
 * first record (or the first run of one hash) fits, as the kernel answers a buffer too
 * small for one entry. For the old format, an inode number wider than an unsigned long
 * (only on a 32-bit build) ends the batch before it, -EOVERFLOW when it is the first, as
 * the kernel's filldir does.
 */
ssize_t cowdir_fill(const struct cowdir *d, uint64_t pos, bool old, char *buf, size_t size,
                    uint64_t *next);

#endif

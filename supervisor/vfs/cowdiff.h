/*
 * What a cow mount changed: its overlayfs upper directory compared with its lower tree (the
 * host directory), both walked by fd from their roots, never following a symlink. Pure file
 * code: no sandbox, no session (session.h says where the upper lives).
 *
 * The upper is overlayfs's with `userxattr`: a whiteout is a character device 0/0, a
 * directory with `user.overlay.opaque` = "y" hides what the lower directory holds (and so do
 * its subdirectories: overlayfs looks no further down once a directory is opaque). Mounted
 * with `userxattr`, overlayfs makes neither redirects nor metacopy files; an upper that has
 * one is refused (-EOPNOTSUPP) rather than misread.
 *
 * The lower is the host as it is now, not as it was when the run copied it up: the journal
 * (journal.h) keeps that, and `stockade apply` compares the two (cowapply.h).
 */
#ifndef STOCKADE_VFS_COWDIFF_H
#define STOCKADE_VFS_COWDIFF_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum cow_op {
        COW_SAME = '=', /* in the upper, but equal to the lower: not a change (listed for
                           apply, which removes such entries from the session) */
        COW_ADD = 'A',  /* in the upper, absent from the lower */
        COW_MOD = 'M',  /* same type, other content or mode */
        COW_DEL = 'D',  /* in the lower, hidden by a whiteout, an opaque directory or a type
                           change above it */
        COW_TYPE = 'T', /* file, directory, symlink: another type at the same path */
        COW_REN = 'R',  /* a deleted regular file whose content reappears, alone, elsewhere */
};

/* One change. Types are the journal's: 'f', 'd', 'l', 'o', or 0 where nothing is. */
struct cow_change {
        char op;
        char *path;     /* relative to the mount root, no leading '/' (R: the new name) */
        char *old_path; /* R: the old name; NULL otherwise */
        char type;      /* what the upper has at path (0 for D) */
        char old_type;  /* what the lower has at path (R: at old_path; 0 for A) */
        mode_t mode;    /* permission bits of the upper's object */
        mode_t old_mode;
        bool content;  /* M: the content differs (false: the mode or the times only) */
        bool times;    /* M of a file: only its modification time differs (`touch`) */
        char *target;  /* A, M, T to a symlink: the upper's target (what apply makes) */
        bool whiteout; /* D, R, =: the upper holds a whiteout at the (old) path */
        uint64_t size; /* regular files: the upper's size (D: the lower's) */
};

struct cow_diff {
        struct cow_change *v; /* sorted by path (R: its new path) */
        size_t n, cap;
        /* Objects (a subtree counting as one) whose path would pass PATH_MAX: left out, so
         * that one such tree does not keep the rest from review and apply. */
        size_t too_deep;
        bool found; /* a change other than COW_SAME was listed */
};

/*
 * Compare the upper directory `upper_fd` with the lower `lower_fd` (-1: no lower at all,
 * everything is new; both opened O_RDONLY | O_DIRECTORY, not O_PATH: xattrs are read) and fill *d with every change, and the entries equal to the lower
 * (COW_SAME), sorted by path. Returns 0 or -errno (-EOPNOTSUPP for an upper this code does
 * not understand); what lies past PATH_MAX is counted in d->too_deep, not listed.
 */
int cowdiff_compute(int upper_fd, int lower_fd, struct cow_diff *d);

/*
 * Whether the upper `upper_fd` changes anything of the lower `lower_fd` (as for
 * cowdiff_compute): the walk stops at the first change. An upper of COW_SAME entries only (a
 * file opened for writing and not written, a copy made for an inotify watch) changes
 * nothing. Returns 1, 0, or -errno.
 */
int cowdiff_any(int upper_fd, int lower_fd);

/* The number of changes in d (COW_SAME entries are not changes). */
size_t cowdiff_count(const struct cow_diff *d);

void cowdiff_free(struct cow_diff *d);

/*
 * Open `path` (relative, no "..", no empty component) beneath the directory `root_fd` with
 * openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (O_CLOEXEC added): a symlink anywhere on
 * the way fails with ELOOP, the last component too unless flags has O_PATH | O_NOFOLLOW
 * (then the fd is the link's). "" is root_fd itself, reopened. Returns the fd or -errno
 * (-EINVAL for a bad path).
 */
int cowdiff_open(int root_fd, const char *path, int flags);

/* The next entry of dir but "." and "..", errno kept apart: NULL at the end (*err 0) or on
 * an error (*err -errno). */
struct dirent *cowdiff_readdir(DIR *dir, int *err);

/* Whether `path` is a valid relative path: components not empty, not "." nor "..". */
bool cowdiff_path_ok(const char *path);

/* The name of a type for people and JSON: "file", "dir", "symlink", "other". */
const char *cowdiff_type_name(char type);

/*
 * Write s to out as one line's worth: as is when every byte is printable and neither '"'
 * nor '\\', else double-quoted with C escapes (\n, \t, \", \\, \ooo), as git quotes paths.
 */
void cowdiff_quote(FILE *out, const char *s);

/*
 * One change as a line of `stockade diff`, paths prefixed with `prefix` ("" or the mount's
 * sandbox path followed by '/'):
 *   A path | A dir/ | M path | M path (mode 644 -> 755) | M path (content; mode 644 -> 755)
 *   M path (times) | A path (mode 666) (a mode other than 644, or 755 for an executable
 *   or a directory) | A link (symlink to TARGET) | T path (file -> symlink to TARGET)
 *   D path | D dir/ | T path (file -> symlink) | R old -> new [(mode 644 -> 755)]
 * COW_SAME writes nothing.
 */
void cowdiff_print(FILE *out, const struct cow_change *c, const char *prefix);

#endif

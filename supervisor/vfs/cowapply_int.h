/* What cowapply.c (the check and the writes) and cowaccess.c (the host directories' rights)
 * share. Not an interface: cowapply.h is. */
#ifndef STOCKADE_VFS_COWAPPLY_INT_H
#define STOCKADE_VFS_COWAPPLY_INT_H

#include "supervisor/vfs/cowapply.h"

#include <stdbool.h>
#include <sys/stat.h>

/*
 * What apply does to a directory's mode while it works: lends the owner's write and search
 * bits to a host directory it must make or remove names in, and makes a new directory
 * without the group's and others' write bits; the mode the session has comes last.
 */
#define LEND_BITS     (S_IWUSR | S_IXUSR)
#define WITHHELD_BITS (S_IWGRP | S_IWOTH)

/* One more conflict: `path`, and why (a static string). */
void cowapply_conflict(struct cow_conflicts *out, const char *path, const char *why);

/* Whether the host file `st` is written beside and renamed over even for a change of its mode
 * or times alone (cowapply.c says why). */
bool cowapply_replaced_whole(const struct stat *st);

/* The host directories whose owner's write bit apply lent, and their own modes. */
struct cowapply_lent {
        char *path;
        mode_t mode;
        dev_t dev;
        ino_t ino;
};

struct cowapply_lents {
        struct cowapply_lent *v;
        size_t n;
};

/* Before any write: every directory apply must write in and cannot, lent its write bit (in
 * *l). Returns 0 or -errno, *failed naming the directory. */
int cowapply_lend_all(const struct cow_apply *a, struct cowapply_lents *l, char **failed);
/* The lent directories' own modes back, deepest first; one gone or replaced is skipped.
 * Returns the first error (*failed names it when failed is not NULL). */
int cowapply_restore_lent(const struct cow_apply *a, const struct cowapply_lents *l, char **failed);
void cowapply_lents_free(struct cowapply_lents *l);

#endif

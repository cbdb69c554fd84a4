/*
 * A memo of what start-up asks of the file system again and again. The view's hidden entries,
 * their real paths, their aliases, the places and the Landlock grants each look at the same
 * few hundred paths (~2,200 stat, readlink and access calls for ~330 paths in a default run,
 * most of them realpath(3)'s readlink of every component of ~/.config/..., and the absent
 * credential paths eight times each).
 *
 * Only between pathcache_begin() and pathcache_end(), on the main thread before any other
 * thread of ours exists, and only around work that makes and removes nothing (walls.c: the
 * hidden entries' analysis, then the grants; not the copy-on-write session's set-up). What
 * start-up makes inside a window it must tell with pathcache_forget() (cow_hide_state's
 * session store), or the memo would keep it missing. The host may change a path meanwhile, as
 * it may between any two looks of start-up: the answers are one snapshot instead of several.
 * Outside a window each call is the libc call it stands for.
 */
#ifndef STOCKADE_PATHCACHE_H
#define STOCKADE_PATHCACHE_H

#include <stdbool.h>
#include <sys/stat.h>

void pathcache_begin(void);
void pathcache_end(void);
/* Forget what the memo holds (start-up made something): the next looks ask the kernel. */
void pathcache_forget(void);

/* lstat(2), stat(2) and realpath(3) (`real` PATH_MAX bytes), through the memo. */
int pc_lstat(const char *path, struct stat *st);
int pc_stat(const char *path, struct stat *st);
char *pc_realpath(const char *path, char *real);

#endif

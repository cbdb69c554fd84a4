/* Lexical operations on sandbox paths: no file system is consulted. */
#ifndef STOCKADE_VFS_PATH_H
#define STOCKADE_VFS_PATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write the canonical form of the absolute path `in` into out[size]: one '/' between
 * components, no '.', no trailing '/', '..' removes the previous component ('/..' is '/').
 * Purely lexical, so only for paths the user wrote (mount specs), never for a path the
 * program gives: there a '..' after a symlink means the parent of the link's target.
 * `out` may be `in`. Returns the length, -EINVAL if `in` is not absolute, -ENAMETOOLONG if
 * out is too small.
 */
int vfs_path_normalize(char *out, size_t size, const char *in);

/*
 * True if `prefix` (canonical) is `path` (canonical) or one of its ancestors, component-wise:
 * "/a" is a prefix of "/a/b" but not of "/ab". "/" is a prefix of every path.
 */
bool vfs_path_has_prefix(const char *path, const char *prefix);

/* Number of components of a canonical path: "/" has 0, "/a/b" has 2. */
size_t vfs_path_depth(const char *path);

/* The next component of *p (slashes skipped, *p advanced past it) into out[size]; false at
 * the end, or for a component that does not fit. */
bool vfs_path_next_component(const char **p, char *out, size_t size);

#endif

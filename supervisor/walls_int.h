/* What supervisor/walls.c and walls_real.c share. Not for other users: walls.h is the
 * interface. */
#ifndef STOCKADE_WALLS_INT_H
#define STOCKADE_WALLS_INT_H

#include <stdbool.h>

struct vfs_view;

/* Whether a path that glob(3) produced has a "." or ".." component (GLOB_PERIOD lets '*'
 * match them): "/home/.." must not hide "/". */
bool walls_has_dot_component(const char *path);

/*
 * The view hides by path; Landlock by inode, so a symlink on the way to a hidden path (~/.aws
 * -> dotfiles/aws, a symlinked ~/.config, a dangling ~/.netrc -> dotfiles/netrc) does not
 * reopen it by its real path: each hidden entry's real path (or where it would be made) is
 * hidden as well, and a pattern's again beneath where its literal head leads.
 */
void walls_hide_real_paths(struct vfs_view *v);

/*
 * A hidden path that exists at the start and that a bind mount on the host also shows beneath
 * a copy-on-write mount's host directory (the workspace entered through a bind of HOME made by
 * root): hidden there too, under the sandbox path, so that the view refuses it and a mask
 * covers it (Landlock grants the overlay whole; an outside review read ~/.aws/credentials so,
 * with and without --fast).
 */
void walls_hide_cow_aliases(struct vfs_view *v);

#endif

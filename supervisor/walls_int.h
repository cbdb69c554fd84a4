/* What supervisor/walls.c and walls_real.c share. Not for other users: walls.h is the
 * interface. */
#ifndef STOCKADE_WALLS_INT_H
#define STOCKADE_WALLS_INT_H

#include <stdbool.h>

struct config;
struct error;
struct vfs_view;

/* The default view plus the flags, in order (a later flag for the same path wins);
 * `private_dirs`: whether a mount namespace can be made (shim/mntns.h). */
int walls_build_view(struct vfs_view *view, const struct config *cfg, const char *cwd,
                     const char *home, bool private_dirs, struct error *err);

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
 * Each hidden path (or pattern) under every other name a bind mount on the host gives it (a
 * bind of HOME made by root, a chroot's bind of /): hidden there too, by path, whether it
 * exists yet or not, so that the view refuses it, the masks cover it, a remap or the
 * copy-on-write workspace entered through the alias carries it (an outside review read
 * ~/.ssh/id_rsa through `--ro ALIAS:SANDBOX`, and files made during the run through ALIAS).
 * Landlock carves the existing ones by inode already (grants.c).
 */
void walls_hide_aliases(struct vfs_view *v);

#endif

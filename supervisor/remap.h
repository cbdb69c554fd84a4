/*
 * Remapped mounts (`--ro|--rw|--cow HOST:SANDBOX`): what is checked before the run, and how
 * hidden paths follow them (remap.c). The binds themselves are made in the sandbox's mount
 * namespace (walls.c, shim/mntns.c).
 */
#ifndef STOCKADE_REMAP_H
#define STOCKADE_REMAP_H

#include <stdbool.h>

struct vfs_mount;
struct vfs_view;
struct error;

/* Refuse what a remapped mount of the view cannot be: SANDBOX `/`, beneath /proc or /dev,
 * in a copy-on-write or private directory, not an existing directory reached without a
 * symlink, above another mount that is not remapped (the current directory included); HOST
 * `/` or beneath /proc, /dev or /sys, or a writable HOST over a copy-on-write lower. Returns 0,
 * or -1 with a one-line message naming the flag in *err. The hidden paths come after: */
int remap_checks(const struct vfs_view *v, struct error *err);

/* Whether remap r's SANDBOX lies in a private directory (--tmp, the default /tmp): made
 * there in the mount namespace before the bind (walls.c). */
bool remap_in_private(const struct vfs_view *v, const struct vfs_mount *r);

/* Each hidden entry beneath a remap's SANDBOX again beneath its HOST (then the real paths of
 * the hidden entries are added: walls.c). */
void remap_hide_at_sources(struct vfs_view *v);
/* Refuse a HOST in a hidden path (its real path too, once those are in; before the aliases,
 * one of which hides HOST itself at its own path). */
int remap_check_sources(const struct vfs_view *v, struct error *err);
/* Each hidden entry beneath HOST again beneath SANDBOX, as an alias (mount.h); and HOST itself
 * hidden at its own path where no path the view shows (`cwd` included) lies in it. */
void remap_alias_hidden(struct vfs_view *v, const char *cwd);
/* Refuse a SANDBOX in a hidden path, aliases counted (another remap's hidden paths). */
int remap_check_targets(const struct vfs_view *v, struct error *err);

#endif

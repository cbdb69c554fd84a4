/* The view a run gets when the user says nothing: the system read-only, the working
 * directory writable, a private /tmp, credentials and other users' files hidden. */
#ifndef STOCKADE_VFS_DEFAULT_H
#define STOCKADE_VFS_DEFAULT_H

#include "supervisor/vfs/view.h"

#include <stdbool.h>
#include <sys/types.h>

struct vfs_default {
        const char *home; /* the user's home directory, absolute */
        const char *cwd;  /* the working directory, absolute: mounted rw, or cow */
        bool cwd_cow;     /* the working directory copy-on-write (where it can be) */
        uid_t uid;        /* names the user's runtime directory /run/user/UID, hidden */
        bool is_root;     /* running as root: /root is the user's own and stays */
        const char *tmp;  /* the host directory behind the sandbox's /tmp; NULL: a private one,
                             made when the view is opened (vfs_view_open's scratch) */
};

/*
 * Add the default mounts to *v, a pure function of *d (nothing on the host is looked at):
 *   /      ro    the host's /
 *   /tmp   tmp   d->tmp
 *   /dev   dev, /proc proc   (their own views, later)
 *   CWD    rw    (last, so it wins at /tmp; not at /, which stays read-only)
 *   hidden: the credential, browser and mail paths of vfs_default_hidden_home under HOME,
 *   /etc/shadow and friends, the ssh host keys (a pattern), /run/user/UID, every home under
 *   /home but HOME (a pattern with an exception), /root unless root.
 * Returns 0, or -EINVAL if a path of *d is missing or relative.
 */
int vfs_default_view(struct vfs_view *v, const struct vfs_default *d);

/* The paths under HOME that the default view hides (NULL-terminated), for docs and tests. */
extern const char *const vfs_default_hidden_home[];

#endif

/*
 * The run's view: the default view (host `/` read-only, the current directory copy-on-write
 * or writable, a private /tmp, the credential stores hidden) plus the mount flags --ro, --rw,
 * --cow, --tmp and --hide, turned into the writable places (places.h), the mount namespace's
 * binds (shim/mntns.h; remapped mounts: remap.h) and the Landlock grants (grants.h). What
 * this host cannot enforce (a private directory without a mount namespace) is refused.
 */
#ifndef STOCKADE_WALLS_H
#define STOCKADE_WALLS_H

struct supervisor;
struct error;

/* Fill sup->places, and the mount namespace's binds, from the default view and sup->cfg's
 * mount flags. Bad flags, missing host paths and what this run cannot enforce are errors,
 * before anything runs. Returns 0 or -1 with *err set. */
int walls_setup(struct supervisor *sup, struct error *err);
/* Then the Landlock grants of the view (sup->grants; nothing without Landlock, which is said
 * with -v or mount flags). Returns 0 or -1 with *err set. */
int walls_grants(struct supervisor *sup, struct error *err);

/* The invoking user's home ($HOME if absolute, else the passwd entry's), whose credential
 * stores the default view hides and which `~` in a mount path means. */
const char *walls_user_home(void);

/* A new bind for the sandbox's mount namespace (shim/mntns.h), zeroed, at the end of
 * sup->binds (walls.c: anonymous memory, grown by mremap, never copied or zeroed by hand). */
struct mnt_bind *walls_new_bind(struct supervisor *sup);
/* The binds unmapped (the namespace made, or given up). */
void walls_binds_free(struct supervisor *sup);

/* The environment the command gets: `envp` with the package managers' caches moved into the
 * private /tmp where their default places are not writable in the view (env_with_caches).
 * Nothing is added without a private /tmp or with --clear-env. Returns a new array for
 * env_free, or NULL to keep envp. */
char **walls_env(struct supervisor *sup, char *const *envp);

#endif

/* Starting the command: fork, the shim, the listener hand-off, the ptrace seize, "go". */
#ifndef STOCKADE_SPAWN_H
#define STOCKADE_SPAWN_H

#include "supervisor/error.h"

struct supervisor;
struct spawn_plan;

/* Start making the sandbox's namespaces (shim/mntns.h, ns_start) as soon as the view's
 * mounts are known (walls_setup): a child of ours makes them while we compute the rest;
 * spawn_command takes them. Nothing when the run needs none. Returns 0 or -1 with *err set. */
int spawn_start_namespaces(struct supervisor *sup, struct error *err);

/* Build the Landlock rulesets of the supervisor and of the sandbox from sup->grants (once
 * they are computed; spawn_command enters them). Nothing without Landlock. Returns 0 or -1
 * with *err set. */
int spawn_build_rulesets(struct supervisor *sup, struct error *err);

/* Start plan's command as sup->root with the listener watched by sup->epfd. Returns 0 or -1
 * with *err set (and no child left behind). */
int spawn_command(struct supervisor *sup, const struct spawn_plan *plan, struct error *err);

/* Find `name` as execvp would, in the sandbox's PATH (or /usr/local/bin:/usr/bin:/bin when
 * it has none). *out is malloc'ed. Returns 0, -ENOENT (not found) or another -errno (found
 * but not executable: -EACCES for a directory or a file without x). */
int spawn_resolve(const char *name, const char *path_var, char **out);

#endif

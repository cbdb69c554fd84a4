#include "supervisor/spawn.h"
#include "supervisor/walls.h"
#include "supervisor/signals.h"
#include "shim/ipcns.h"
#include "supervisor/dns.h"
#include "shim/landlock.h"
#include "shim/shim.h"
#include "supervisor/loop.h"
#include "supervisor/notify.h"
#include "supervisor/ptrace.h"
#include "supervisor/grants.h"
#include "supervisor/scratch.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int check_exec(const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (access(path, X_OK) < 0)
                return -errno;
        return 0;
}

int spawn_resolve(const char *name, const char *path_var, char **out)
{
        int best = -ENOENT;

        if (!*name)
                return -ENOENT;
        if (strchr(name, '/')) {
                int r = check_exec(name);
                if (r == 0)
                        *out = xstrdup(name);
                return r;
        }
        if (!path_var)
                path_var = "/usr/local/bin:/usr/bin:/bin";
        for (const char *p = path_var;; p++) {
                const char *end = strchrnul(p, ':');
                _cleanup_free_ char *cand = NULL;
                int r;

                /* An empty PATH element means the current directory. */
                if (asprintf(&cand, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", name) < 0)
                        abort();
                r = check_exec(cand);
                if (r == 0) {
                        *out = steal_ptr(cand);
                        return 0;
                }
                /* EACCES from a directory we cannot search (/root/bin in PATH, run as nobody)
                 * is "not there", as for the shells; EACCES of a file found stays. */
                if (r != -ENOENT && r != -ENOTDIR && (r != -EACCES || access(cand, F_OK) == 0))
                        best = r; /* found, not executable: remember, keep looking */
                if (!*end)
                        return best;
                p = end;
        }
}

/* Read the listener's fd number from the shim and take the fd out of the child. */
static int take_listener(int sock, pid_t pid, unsigned *flags)
{
        int msg[2], pidfd, fd;
        ssize_t n;

        while ((n = read(sock, msg, sizeof(msg))) < 0 && errno == EINTR)
                ;
        if (n != sizeof(msg))
                return n < 0 ? -errno : -ECHILD;
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return -errno;
        /* The new fd has FD_CLOEXEC set. */
        fd = (int)syscall(SYS_pidfd_getfd, pidfd, msg[0], 0);
        if (fd < 0)
                fd = -errno;
        close(pidfd);
        *flags = (unsigned)msg[1];
        return fd;
}

/* The child failed before exec; it printed why. Pass its exit code on. Unless we stopped it
 * (our reason is in *err already): its exit, on the EOF we gave it, says nothing, and it
 * may come before our kill or not (a refusal's line was lost half the time). */
static int child_failed(struct supervisor *sup, pid_t pid, struct error *err)
{
        int status = 0;

        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFEXITED(status) && WEXITSTATUS(status) && !err->msg[0]) {
                err->exit_code = WEXITSTATUS(status);
                err->printed = true;
        }
        return make_error(err, 0, "the sandbox could not be set up");
}

static int seize(struct supervisor *sup, pid_t pid, struct error *err)
{
        int r = layers_test_disabled("ptrace") ? -EPERM : ptrace_seize_root(sup, pid);

        if (r == 0) {
                sup->layers.ptrace = true;
                return 0;
        }
        snprintf(sup->layers.why_ptrace, sizeof(sup->layers.why_ptrace), "PTRACE_SEIZE: %s%s",
                 strerror(-r), r == -EPERM ? " (Yama ptrace_scope, or a container profile)" : "");
        if (!sup->cfg->allow_degraded)
                return make_error(err, -r,
                                  "cannot ptrace the sandbox (PTRACE_SEIZE), which keeps the "
                                  "process tree; --allow-degraded runs without it");
        /* Without ptrace no exec can be checked after the fact (fs_exec.c): a rule about
         * what may run would be a promise the run cannot keep. */
        if (sup->n_exec_rules || sup->cfg->exec_no_writable)
                return make_error(err, -r,
                                  "run: --allow-exec and --no-exec-writable need ptrace, to "
                                  "check what an exec runs (PTRACE_SEIZE failed)");
        /* The filter stops chdir and exec for a tracer that is not there: ENOSYS for all. */
        if (sup->fopts.cow_traced)
                return make_error(err, -r,
                                  "run: the copy-on-write workspace without a mount namespace "
                                  "needs ptrace (PTRACE_SEIZE failed); --rw . or --ro . run "
                                  "without it");
        /* Degraded: the tree is the sandbox's session, found in /proc (procscan.c). */
        error_warn("warning: no ptrace (%s): the tree is tracked through /proc\n",
                   sup->layers.why_ptrace);
        pthread_mutex_lock(&sup->lock);
        tracee_add(&sup->tree, pid, fcntl(sup->root_pidfd, F_DUPFD_CLOEXEC, 0));
        pthread_mutex_unlock(&sup->lock);
        return 0;
}

/*
 * The supervisor enters the sandbox's Landlock rules itself, just before it forks (so that
 * every thread it starts from here on is inside too): a call that the supervisor performs
 * for the program — an open, a connect, an unwinder reading a mapped file — is then judged by
 * the kernel under the program's rules, and a bug in the emulation is not an escape. Not
 * scoped (the supervisor signals the tree and its own process group). The sandbox forks from
 * here and nests its own, scoped domain inside, so the supervisor may still ptrace it, take
 * its fds and read its memory; the sandbox cannot touch the supervisor (an outer domain).
 * Not one right more than the sandbox's: nothing beneath /proc is writable for the
 * supervisor's threads either (the uid and gid maps of an unprivileged IPC namespace are
 * written before: ipcns_prepare), and the scratch directory is removed by a cleaner started
 * before (scratch.c).
 *
 * The sandbox's own ruleset (scoped) is built with ours, from the same rules, and handed to
 * the shim (sup->shim_ruleset), which enters it: each grant's path is opened once for both,
 * not again in the child while we wait for it. Both are built early (spawn_build_rulesets,
 * while the namespaces are being made), entered here: building grants nothing to anyone. It was built there with the same rights (the
 * shim's before --user takes effect: ours, so a path the program's uid cannot search still
 * gets its rule, and DAC keeps judging it) in the same mount namespace (the host's). A grant
 * that cannot be applied is left out, which only takes rights away.
 */
int spawn_build_rulesets(struct supervisor *sup, struct error *err)
{
        int abi = sup->layers.landlock_abi, fd, shim, r;

        if (!abi || sup->own_ruleset >= 0)
                return 0;
        fd = landlock_ruleset_create(abi, false);
        if (fd < 0)
                return make_error(err, -fd, "create the supervisor's Landlock ruleset");
        shim = landlock_ruleset_create(abi, true);
        if (shim < 0) {
                close(fd);
                return make_error(err, -shim, "create the sandbox's Landlock ruleset (ABI %d)",
                                  abi);
        }
        r = landlock_add_grants(fd, shim, &sup->grants);
        if (r < 0) {
                close(fd);
                close(shim);
                return make_error(err, -r, "add the Landlock rules");
        }
        sup->own_ruleset = fd;
        sup->shim_ruleset = shim;
        return 0;
}

/* Both rulesets complete: the copy-on-write roots and the pid namespace's /proc, known only
 * now (prepare_namespaces). The walk from a file of that procfs meets its root, then the
 * directory /proc of the root file system beneath it, never the host's procfs, whose rule
 * the grants made: it gets one of its own, to read (nothing of /proc is writable, as
 * before), for the supervisor (which opens the sandbox's /proc files) and the sandbox. */
static int finish_rulesets(struct supervisor *sup, struct error *err)
{
        uint64_t proc_access = grants_read_access() | LANDLOCK_ACCESS_FS_READ_DIR;
        int r = 0;

        if (!sup->layers.landlock_abi)
                return 0;
        if (spawn_build_rulesets(sup, err) < 0)
                return -1;
        for (size_t i = 0; r == 0 && i < sup->n_cow_roots; i++) {
                r = landlock_add_fd_rule(sup->own_ruleset, sup->cow_roots[i], sup->cow_access);
                if (r == 0)
                        r = landlock_add_fd_rule(sup->shim_ruleset, sup->cow_roots[i],
                                                 sup->cow_access);
        }
        if (r == 0 && sup->pid_ns.proc >= 0)
                r = landlock_add_fd_rule(sup->own_ruleset, sup->pid_ns.proc, proc_access);
        if (r == 0 && sup->pid_ns.proc >= 0)
                r = landlock_add_fd_rule(sup->shim_ruleset, sup->pid_ns.proc, proc_access);
        return r < 0 ? make_error(err, -r, "add the Landlock rules") : 0;
}

static int enter_own_domain(struct supervisor *sup, struct error *err)
{
        int r = 0;

        if (!sup->layers.landlock_abi)
                return 0;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = -errno;
        if (r == 0)
                r = landlock_restrict(sup->own_ruleset);
        cleanup_closep(&sup->own_ruleset);
        sup->own_ruleset = -1;
        if (r < 0)
                return make_error(err, -r, "enter the supervisor's Landlock domain");
        sup->layers.landlock_self = true;
        return 0;
}

/*
 * The binder (binder.h), forked now like the socket maker: no thread yet, no Landlock domain
 * of ours, the namespaces still open, the overlays' roots known. Only with Landlock: without
 * it the view is the only wall for hidden and read-only places, and a directory swapped
 * between its check and the kernel's walk would pass it. Nor with a hidden path beneath a
 * copy-on-write mount (sup->cow_hides): Landlock grants the overlay whole, and such a path is
 * covered by a mask only where one could be made (cow_masks.c). Not having one costs names,
 * not safety (binds then name the last component): a warning where it failed.
 */
static void start_binder(struct supervisor *sup)
{
        struct binder_walls w = {.user_fd = sup->ns_fds[0],
                                 .mnt_fd = sup->ns_fds[2],
                                 .ruleset = sup->shim_ruleset,
                                 .uid = sup->cfg->set_user ? sup->cfg->uid : geteuid(),
                                 .gid = sup->cfg->set_user ? sup->cfg->gid : getegid()};
        const char *step = "";
        int r;

        if (!sup->layers.landlock_abi || sup->cow_hides || layers_test_disabled("binder"))
                return;
        r = binder_start(&sup->binder, &w, &step);
        if (r < 0)
                error_warn("stockade: warning: no binder (%s: %s): a unix socket bound to a "
                           "path with a directory part is named by its last component\n",
                           step, strerror(-r));
        sup->layers.binder = r == 0;
}

/* Fork the shim with the filter and a socketpair to us. Returns its pid (sv[0] is ours) or
 * -1 with *err set. */
static pid_t fork_shim(struct supervisor *sup, const struct spawn_plan *plan, int *sock,
                       struct error *err)
{
        struct sock_fprog prog = {0};
        int sv[2] = {-1, -1}, r;
        pid_t self = getpid(), pid;

        sup->fopts.cow_merged = sup->cow_merged;
        /* (seize() fails the run if ptrace then turns out to be missing) */
        sup->fopts.cow_traced = sup->cow_merged;
        r = filter_build(&sup->fopts, &prog);
        if (r < 0)
                return make_error(err, -r, "build the seccomp filter");
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                free(prog.filter);
                return make_error(err, errno, "socketpair");
        }
        pid = fork();
        if (pid == 0) {
                struct shim_args a = {.sock = sv[1],
                                      .supervisor = self,
                                      .limits = &plan->cfg->limits,
                                      .prog = &prog,
                                      .path_var = plan->path_var,
                                      .argv = plan->cfg->argv,
                                      .envp = plan->envp,
                                      .landlock_abi = sup->layers.landlock_abi,
                                      .ruleset = sup->shim_ruleset,
                                      .ipc = sup->layers.ipc,
                                      .ns_user = sup->ns_fds[0],
                                      .ns_ipc = sup->ns_fds[1],
                                      .ns_mnt = sup->ns_fds[2],
                                      .ns_net = sup->ns_fds[3],
                                      .ns_pid = sup->pid_ns.ns,
                                      .cwd = sup->cwd,
                                      .set_user = plan->cfg->set_user,
                                      .uid = plan->cfg->uid,
                                      .gid = plan->cfg->gid,
                                      .handoff_key = sup->fopts.handoff_key,
                                      .tty_slave = sup->tty.active ? sup->tty.slave : -1,
                                      .tty_out = sup->tty.active ? sup->tty.slave_out : -1,
                                      .tty_pipes = sup->tty.pipes,
                                      .tty_fds = sup->tty.slave_fd,
                                      .pass_fds = plan->cfg->pass_fds,
                                      .n_pass_fds = plan->cfg->n_pass_fds};
                close(sv[0]);
                /* The supervisor raised its own limit to hold a pidfd per task. */
                if (sup->nofile.rlim_max)
                        setrlimit(RLIMIT_NOFILE, &sup->nofile);
                shim_run(&a);
        }
        r = errno;
        free(prog.filter);
        close(sv[1]);
        if (pid < 0) {
                close(sv[0]);
                return make_error(err, r, "fork");
        }
        *sock = sv[0];
        return pid;
}

static bool namespaces_needed(const struct supervisor *sup)
{
        return sup->layers.ipc == IPC_NS_USERNS || sup->n_binds || sup->layers.netns || sup->pidns;
}

int spawn_start_namespaces(struct supervisor *sup, struct error *err)
{
        const char *step = "";
        int r;

        if (!namespaces_needed(sup)) {
                ns_abandon(&sup->ns_maker); /* the probe's, not needed (layers.h) */
                return 0;
        }
        if (sup->ns_maker.building)
                return 0;
        r = ns_start(&sup->ns_maker, sup->layers.ipc == IPC_NS_USERNS, sup->layers.netns,
                     sup->pidns, sup->binds, sup->n_binds, &step);
        return r < 0 ? make_error(err, -r, "the sandbox's namespaces: %s", step) : 0;
}

/*
 * I, the pid namespace's init (shim/pidns.h): our child, not reaped (only the main thread
 * reaps, in the loop), so its number is surely it; held by a pidfd from now on, the only way
 * it is ever signalled. From here on the sandbox's /proc is that namespace's procfs, which
 * the view's checks know by its device (fs_common.c).
 */
static int hold_init(struct supervisor *sup, const char **step)
{
        struct stat st;

        *step = "pid namespace: hold its init";
        sup->init_pidfd = (int)syscall(SYS_pidfd_open, sup->pid_ns.init, 0);
        if (sup->init_pidfd < 0 || fstat(sup->pid_ns.proc, &st) < 0)
                return -errno;
        sup->proc_dev = st.st_dev;
        return 0;
}

/* Whether `fd` (a namespace's) is our own network namespace, or cannot be told apart. */
static bool is_our_netns(int fd)
{
        struct stat ours, theirs;

        return fd < 0 || fstat(fd, &theirs) < 0 || stat("/proc/self/ns/net", &ours) < 0 ||
               (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino);
}

/*
 * The namespaces the shim joins (shim/mntns.h): made before the Landlock domain. The view's
 * private directories then resolve through their targets as the sandbox sees them (bind-backs
 * inside included), so that what the supervisor opens there is what the sandbox would.
 */
static int prepare_namespaces(struct supervisor *sup, const char **step)
{
        int targets[MNT_BINDS_MAX], root;
        size_t k = 0;
        int r;

        if (sup->n_binds > MNT_BINDS_MAX)
                return -E2BIG;
        if (!sup->ns_maker.building &&
            (r = ns_start(&sup->ns_maker, sup->layers.ipc == IPC_NS_USERNS, sup->layers.netns,
                          sup->pidns, sup->binds, sup->n_binds, step)) < 0)
                return r;
        r = ns_finish(&sup->ns_maker, sup->layers.ipc == IPC_NS_USERNS, sup->layers.netns,
                      sup->pidns, sup->binds, sup->n_binds, sup->ns_fds, targets, &root,
                      &sup->pid_ns, step);
        phases_mark(&sup->phases, "namespaces made");
        if (r == 0 && sup->pidns)
                r = hold_init(sup, step);
        if (r < 0)
                return r;
        /* The sandbox's network namespace must be a new one: joined by the shim and the
         * socket maker (which adds lo's view addresses there), the host's would have had its
         * lo changed and its loopback taken for the sandbox's own. Fail closed. */
        if (sup->layers.netns && is_our_netns(sup->ns_fds[3])) {
                *step = "the sandbox's network namespace is the host's";
                return -EEXIST;
        }
        /* The socket maker joins the network namespace now, while we have no thread and no
         * Landlock domain (sockmaker.h). */
        if (sup->layers.netns) {
                r = sockmaker_start(&sup->netns, sup->ns_fds[0], sup->ns_fds[3], sup->ns_fds[2],
                                    sup->cfg->set_user ? sup->cfg->uid : geteuid(),
                                    sup->cfg->set_user ? sup->cfg->gid : getegid(), step);
                if (r < 0)
                        return r;
                /* Twins (syscalls/net.h) are made for what the policy lets out, and in audit
                 * mode for what it would refuse: their filters and names are then watched. */
                sup->fopts.twins = netpol_lets_out(&sup->cfg->net) || sup->fopts.audit;
        }
        phases_mark(&sup->phases, "socket maker");
        sup->host_sockets = sup->fopts.twins || (!sup->layers.netns && sup->fopts.net_policy &&
                                                 netpol_lets_out(&sup->cfg->net));
        if (root >= 0)
                sup->places.root_fd = root; /* kept for the run */
        sup->cow_access = grants_read_access() | LANDLOCK_ACCESS_FS_READ_DIR |
                          landlock_write_access(sup->layers.landlock_abi);
        /* Every mount of the view resolves from inside: two fds of one directory on
         * different mounts (ours and the sandbox's copy) would make a rename between them
         * EXDEV. */
        for (size_t i = 0; root >= 0 && i < sup->view.n_mounts; i++) {
                struct vfs_mount *m = &sup->view.mounts[i];
                struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
                int fd;

                if (m->host_fd < 0 || (m->mode != VFS_RO && m->mode != VFS_RW &&
                                       m->mode != VFS_TMP && m->mode != VFS_COW))
                        continue;
                fd = sys_openat2(root, m->sandbox, &how);
                if (fd < 0) {
                        *step = m->sandbox;
                        r = -errno;
                        break;
                }
                close(m->host_fd);
                m->host_fd = fd;
                if (m->mode == VFS_COW) {
                        /* The overlay is what the sandbox writes through: judged, and
                         * granted to Landlock, by its own inode (the walk from a file in it
                         * never meets the host directory it hides). */
                        places_follow(&sup->places, m->host, fd);
                        /* A remapped one's lower stays visible at its own path, where it
                         * must not change beneath the overlay (remap.c): a carve-out there
                         * for the calls Landlock does not judge (chmod and friends). */
                        if (vfs_mount_remapped(m) &&
                            places_add(&sup->places, m->host, PLACE_RO, &(struct error){0}) < 0)
                                r = -EIO;
                        if (sup->n_cow_roots < ARRAY_SIZE(sup->cow_roots))
                                sup->cow_roots[sup->n_cow_roots++] = fd;
                }
        }
        /* The private /dev/shm as the sandbox sees it (walls.c binds it there): what the
         * emulation opens beneath it must be where the kernel's own walks land. */
        for (k = 0; r == 0 && k < sup->n_binds; k++)
                if (!sup->binds[k].mask && !sup->binds[k].overlay &&
                    strcmp(sup->binds[k].target, "/dev/shm") == 0 && targets[k] >= 0) {
                        sup->shm_root = targets[k];
                        targets[k] = -1;
                }
        for (k = 0; k < sup->n_binds; k++)
                if (targets[k] >= 0)
                        close(targets[k]);
        walls_binds_free(sup); /* made: the namespace keeps them */
        return r;
}

/*
 * --fast: the shim S made C, the command, in the pid namespace (shim/pidns.h), sent its
 * number first and exits. C is our child (CLONE_PARENT), which only we reap: the number is C
 * until then; the pidfd and waitid prove it all the same. Returns C's pid, or -1 with *err
 * (S's own message printed, its exit code passed on).
 */
static pid_t adopt_command(struct supervisor *sup, pid_t shim, int sock, struct error *err)
{
        siginfo_t si = {0};
        int status = 0;
        pid_t c = -1;
        ssize_t n;

        while ((n = read(sock, &c, sizeof(c))) < 0 && errno == EINTR)
                ;
        if (n != sizeof(c) || c <= 0)
                return child_failed(sup, shim, err);
        while (waitpid(shim, &status, 0) < 0 && errno == EINTR)
                ;
        sup->root_pidfd = (int)syscall(SYS_pidfd_open, c, 0);
        if (sup->root_pidfd < 0 || waitid((idtype_t)P_PIDFD, (id_t)sup->root_pidfd, &si,
                                          WEXITED | WNOHANG | WNOWAIT) < 0) {
                make_error(err, errno, "the command in the sandbox's pid namespace");
                cleanup_closep(&sup->root_pidfd);
                sup->root_pidfd = -1;
                return child_failed(sup, c, err);
        }
        return c;
}

int spawn_command(struct supervisor *sup, const struct spawn_plan *plan, struct error *err)
{
        unsigned flags = 0;
        int sock = -1, r;
        pid_t pid;

        if (namespaces_needed(sup)) {
                const char *step = "";

                r = prepare_namespaces(sup, &step);
                if (r < 0 && sup->pidns && strncmp(step, "pid namespace", 13) == 0)
                        return make_error(err, 0,
                                          "--fast needs a pid namespace of the sandbox's own, "
                                          "with its own /proc, and this host refuses it (%s: "
                                          "%s); run without --fast",
                                          step, strerror(-r));
                if (r < 0)
                        return make_error(err, -r, "the sandbox's namespaces: %s", step);
                if (dns_open_inside(sup, err) < 0)
                        return -1;
        }
        if (finish_rulesets(sup, err) < 0)
                return -1;
        start_binder(sup);
        if (enter_own_domain(sup, err) < 0)
                return -1;
        phases_mark(&sup->phases, "binder, own Landlock");
        pid = fork_shim(sup, plan, &sock, err);
        phases_mark(&sup->phases, "fork");
        cleanup_closep(&sup->shim_ruleset); /* the shim's now */
        sup->shim_ruleset = -1;
        for (int i = 0; i < 4; i++)
                if (sup->ns_fds[i] >= 0) {
                        close(sup->ns_fds[i]);
                        sup->ns_fds[i] = -1;
                }
        cleanup_closep(&sup->pid_ns.ns);
        sup->pid_ns.ns = -1;
        if (pid > 0 && sup->pidns)
                pid = adopt_command(sup, pid, sock, err);
        if (pid < 0) {
                if (sock >= 0)
                        close(sock);
                return -1;
        }
        sup->root = pid;
        /* Our child, not yet reaped: the number is surely it. */
        if (!sup->pidns)
                sup->root_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (sup->root_pidfd < 0) {
                make_error(err, errno, "pidfd_open of the sandbox");
                close(sock);
                return child_failed(sup, pid, err);
        }
        /* While the shim sets itself up: a fork of ours is cheapest now (no thread yet), and
         * off the way of the command's first exec, which waits for our loop. */
        signals_start_watcher(sup);
        phases_mark(&sup->phases, "watcher");
        sup->listener = take_listener(sock, pid, &flags);
        phases_mark(&sup->phases, "filter");
        if (sup->listener < 0) {
                close(sock);
                if (sup->listener != -ECHILD)
                        make_error(err, -sup->listener,
                                   "take the seccomp listener from the child (pidfd_getfd)");
                sup->listener = -1;
                return child_failed(sup, pid, err);
        }
        sup->layers.wait_killable_recv = flags & SHIM_WAIT_KILLABLE_RECV;
        if (!(flags & SHIM_IPC_NAMESPACE) != (sup->layers.ipc == IPC_SHARED)) {
                /* The filter allows SysV IPC only for a sandbox with a namespace of its own. */
                close(sock);
                make_error(err, 0, "the sandbox's IPC namespace is not what the filter assumes");
                return child_failed(sup, pid, err);
        }
        sup->layers.sync_wake_up = notify_set_sync_wake_up(sup->listener);
        r = notify_start(sup);
        phases_mark(&sup->phases, "notifiers");
        if (r < 0)
                make_error(err, -r, "start the notifier thread");
        if (r < 0 || seize(sup, pid, err) < 0) {
                close(sock); /* EOF: the shim exits without running anything */
                return child_failed(sup, pid, err);
        }
        /* "go". The shim may have died meanwhile: no SIGPIPE. */
        if (send(sock, "g", 1, MSG_NOSIGNAL) != 1) {
                close(sock);
                return child_failed(sup, pid, err);
        }
        close(sock);
        return 0;
}

/* The supervisor: the state the event loop and every handler share. */
#ifndef STOCKADE_SUP_H
#define STOCKADE_SUP_H

#include "supervisor/audit.h"
#include "supervisor/layers.h"
#include "supervisor/options.h"
#include "supervisor/grants.h"
#include "supervisor/inherited.h"
#include "supervisor/nlsock.h"
#include "supervisor/binder.h"
#include "supervisor/sockmaker.h"
#include "supervisor/cow.h"
#include "supervisor/phases.h"
#include "supervisor/places.h"
#include "shim/mntns.h"
#include "supervisor/tracee.h"
#include "supervisor/tty.h"
#include "supervisor/vfs/linkid.h"
#include "supervisor/vfs/view.h"
#include "syscalls/filter.h"

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct supervisor;
struct trace;
struct trace_call;
struct dns_server;

/* An fd the loop watches; data.ptr of its epoll_event points here. */
struct event_source {
        int fd;
        const char *name;
        /* Returns 0 to go on, or -errno for an error that ends the run. */
        int (*on_ready)(struct supervisor *sup, struct event_source *src, uint32_t events);
};

/* Updated by every notifier thread and the main thread: atomic. */
struct counters {
        atomic_ullong notifications;
        atomic_ullong handled;    /* notifications whose handler has returned (fs_look's memo) */
        atomic_ullong would_deny; /* audit mode */
        atomic_ullong forks_refused;
        atomic_ullong tasks_seen;
        atomic_ullong connections; /* counted for --max-connections (syscalls/net_common.c) */
};

/* Notifier threads: STOCKADE_NOTIFIERS at the start, one more whenever every one of them is
 * busy with a call, up to STOCKADE_NOTIFIERS_MAX. Handlers of different tasks run in
 * parallel, and one that blocks (a last close, a slow filesystem, the open of a FIFO, a
 * connect to a busy server) stalls only its own caller: the next notification finds a free
 * thread. The cap is what a program can block at once before its other calls wait: a
 * threaded server and its 100 test clients, each in a connect, stay well below it. */
#ifndef STOCKADE_NOTIFIERS
#define STOCKADE_NOTIFIERS 2
#endif
#define STOCKADE_NOTIFIERS_MAX 256

/* One notifier thread and its receive/response buffers (sized by SECCOMP_GET_NOTIF_SIZES). */
struct notifier {
        struct supervisor *sup;
        pthread_t thread;
        bool started;
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        struct trace_call *tc; /* this thread's event in the making (--trace) */
};

struct supervisor {
        const struct config *cfg;
        struct filter_opts fopts;
        struct layers layers;
        struct phases phases; /* -vv: where start-up and teardown took their time */
        /* Where the run may write (Landlock rules, metadata handlers). Computed before the
         * fork, read-only afterwards: handlers read it without the lock. */
        struct places places;
        /* --allow-exec, resolved before the fork (syscalls/fs_exec.c); read-only after. */
        struct exec_rule {
                char *path; /* canonical host path */
                dev_t dev;
                ino_t ino;
                bool dir;     /* anything beneath it */
                bool pattern; /* `path` is an fnmatch(3) pattern of real paths */
        } * exec_rules;
        size_t n_exec_rules;
        struct grants grants; /* the Landlock rules the shim applies (empty without Landlock) */
        /* What the program sees of the file system (walls.c), its host roots open; read-only
         * after the spawn, like `places`. The emulated path calls resolve in it. */
        struct vfs_view view;
        struct cow_state cow; /* the copy-on-write mounts and their session (cow.h) */
        int cow_roots[16];    /* their overlays' roots (the view's fds): Landlock rules */
        size_t n_cow_roots;
        bool cow_merged; /* a cow mount is merged by us, not by overlayfs (cow.c) */
        /* The links made in a cow mount and the identity each shows (vfs/linkid.h). */
        struct linkid links;
        /* A hidden path lies (or a pattern may match) beneath a cow mount: Landlock, which
         * grants the overlay whole, is no wall there, so the calls that make, remove or
         * rename a name resolve in the view (fs_path.c), never the fast way. */
        bool cow_hides;
        /* A remapped mount (--ro HOST:SANDBOX) is in the view: the mount tables and the
         * listings of its root are rewritten (fs_mountinfo.c, fs_dir.c). */
        bool remapped;
        /* A private directory or /dev/shm is bound from the scratch in the mount namespace:
         * the mount tables name the scratch's host path as the bind's root (fs_mountinfo.c). */
        bool private_binds;
        /* The program's sockets can be the host's under a policy that lets something out
         * (twins, or no namespace): getsockname hides a host address (net_twin.c). */
        bool host_sockets;
        /* A hidden entry lies beneath a place the sandbox may write (a --hide path in the
         * workspace, ~/.pgpass with --rw ~): one that does not exist has no inode for
         * Landlock to refuse, so an open that creates a new file resolves in the view
         * (fs_open.c), never the fast way, which would make the file before judging it, and
         * the fast ways of the name changes ask the view about the name (fs_path.c). Where
         * none does, those cost nothing: Landlock refuses every such name. */
        bool hidden_in_writable;
        /* One of them is hidden by the view alone (view_only: the default session store in
         * /var/tmp), where Landlock grants the whole tree: no open that changes anything
         * takes the fast way, which would truncate such a file before the view's judgement. */
        bool view_only_in_writable;
        uint64_t cow_access;
        dev_t proc_dev, dev_dev; /* st_dev of /proc and /dev: paths there resolve in the view */
        dev_t devpts_dev;        /* st_dev of /dev/pts: the sandbox's ptys are there */
        /* st_dev of every mount at or beneath /proc and /dev (devpts, binfmt_misc, mqueue,
         * ...): a base on one of them resolves in the view too (fs_common.c). */
        dev_t special_devs[64];
        size_t n_special_devs;
        char *scratch;          /* the run's directory on the host (scratch.h) */
        char *tmp_scratch;      /* where the private /tmp and --tmp directories are made (on the
                              host's /tmp or $TMPDIR, not in memory); without a mount
                              namespace the tool caches' (cache_dir), or NULL */
        char *cache_dir;        /* the tool caches' directory of this run's, in tmp_scratch
                                   (walls_env: where /tmp is the host's), or NULL */
        char *tmpdir_own;       /* without a mount namespace: a TMPDIR of this run's, in
                                   tmp_scratch (walls_env: where /tmp takes no new entry), or
                                   NULL */
        int ns_fds[4];          /* user and IPC namespaces (IPC_NS_USERNS), the mount namespace
                           (private directories), the network namespace: until the fork */
        struct mnt_bind *binds; /* the mount namespace's binds (shim/mntns.h) */
        char *cwd;              /* where the command starts (the shim goes there again in
                                   the mount namespace) */
        size_t n_binds, cap_binds;
        /* The child making those namespaces, from spawn_start_namespaces to spawn_command
         * (pid -1: none). */
        struct ns_maker ns_maker;
        /* --fast: the sandbox's pid namespace (shim/pidns.h), made with the others. `ns` until
         * the fork; `init` (I, our child) is held by `init_pidfd` and killed at the end, `proc`
         * kept for the Landlock rules. */
        bool pidns;
        struct ns_pid pid_ns;
        int init_pidfd;
        /* --fast's kernel reads (supervisor/fastreads.h): opens for reading are the kernel's;
         * `resolv` is the view's resolv.conf bound over the host's (NULL: none). */
        bool fast_reads;
        char *resolv;
        /* The Landlock rulesets of the supervisor and of the sandbox, from the grants to the
         * supervisor's domain and to the fork (spawn.c). */
        int own_ruleset, shim_ruleset;
        char *shm_dir;  /* ... and in it, the sandbox's /dev/shm */
        int shm_root;   /* that directory as the sandbox sees it, bound over /dev/shm in its
                           mount namespace (O_PATH), or -1: then shm_dir is opened */
        int cleaner_fd; /* closing it has the cleaner remove the scratch */
        pid_t cleaner;  /* ... which is our child */
        /* The terminals beneath /dev/pts the sandbox may open by name: its own and those it
         * made through /dev/ptmx (fs_open.c). Under pts_lock, never held across a call. */
        pthread_mutex_t pts_lock;
        unsigned *pts;
        size_t n_pts, cap_pts;
        int held_ptys[1024]; /* copies of the masters it made: the numbers stay its own */
        /* The unix sockets the sandbox bound (sockfs inodes): its servers (net_unix_owner.c).
         * Under unix_lock, never held across a call. */
        pthread_mutex_t unix_lock;
        ino_t *unix_own;
        size_t n_unix_own, cap_unix_own;
        size_t n_held;

        int epfd;
        struct event_source sigchld;    /* signalfd: ptrace stops and exits */
        struct event_source timer;      /* timerfd: --timeout */
        struct event_source kill_timer; /* timerfd: --kill-after, armed by SIGTERM */
        struct event_source tty_src[5]; /* the relay: user in, out, master, fg timer, the
                                           sandbox's output (pipes) */
        struct tty_relay tty;           /* the sandbox's own terminal (tty.h) */

        /* The seccomp listener is served by threads of their own, blocked in NOTIF_RECV:
         * that is the only way SYNC_WAKE_UP helps (through epoll the wake-up crosses CPUs;
         * measured 28 us instead of 2 us a round trip). `lock` guards the tree, which the
         * main thread (ptrace events, reaping) and the handlers share. It is recursive
         * because tearing the tree down can start inside a locked event handler. Rule:
         * nothing that can block runs under it (no close of an fd taken from the program,
         * no open, no file operation): the main thread, the timeout and the teardown need
         * it. Handlers take it only around their look-ups in the tree. */
        int listener;
        struct notifier notifiers[STOCKADE_NOTIFIERS_MAX];
        atomic_uint n_notifiers; /* started (never decreases while the run lasts) */
        atomic_uint busy;        /* notifier threads inside a call */
        pthread_mutex_t grow;    /* serialises starting a thread; never held across a call */
        atomic_bool stopping;
        atomic_int notifier_error; /* -errno that ended a notifier early, else 0 */
        pthread_mutex_t lock;
        size_t req_size, resp_size;

        struct tracee_tree tree;
        pid_t root;       /* the command's pid */
        int root_pidfd;   /* ... and its identity, held from the fork */
        bool root_exited; /* reaped (under `lock`) */
        bool init_died;   /* --fast: the pid namespace's init was dead before the root */
        int root_status;  /* wait status of the root */
        bool timed_out;
        bool killing;       /* the tree is being torn down */
        bool kill_armed;    /* --kill-after is counting */
        double last_sigint; /* CLOCK_MONOTONIC seconds of the last SIGINT, 0: none */
        int suspend_sig;    /* the root stopped with this signal: stop stockade too */
        bool tree_stopped;  /* stockade stopped the tree (SIGTSTP) */
        pid_t watcher;      /* signals.c: stops the tree when SIGSTOP stops us; -1: none */
        /* Children we inherited through exec: not the sandbox's (inherited.h). Read and
         * changed under `lock` (a reap forgets one) or by the main thread, which reaps. */
        struct inherited inherited;
        struct counters n;
        struct audit_log audit; /* --mode audit: the would-be denials by kind (audit.h) */
        struct trace *trace;    /* --trace: the recorder (supervisor/trace.h), or NULL */
        struct rlimit nofile;   /* RLIMIT_NOFILE as we found it: the command's */
        /* The loopback ports the sandbox bound (syscalls/net_bind.c). */
        struct netpol_own net_own;
        /* The DNS the supervisor answers (supervisor/dns.h), or NULL (--net host without
         * --dns-static: the host's resolv.conf). */
        struct dns_server *dns;
        /* The sandbox's NETLINK_ROUTE sockets, answered with a view of lo (nlsock.h). */
        struct nlsocks nl;
        /* Makes sockets in the sandbox's network namespace (sockmaker.h); chan -1 without. */
        struct sockmaker netns;
        /* Binds unix sockets to a path where the program stands (binder.h); chan -1
         * without. */
        struct binder binder;
        /* --publish's listeners and relays (publish.h), or NULL. */
        struct publisher *publish;
};

/* Kill every task of the tree (SIGKILL, through each task's pidfd); the loop then reaps
 * them. Takes `lock`, which is never held across anything that blocks. */
void sup_kill_tree(struct supervisor *sup);
/* --timeout is over: the run is timed out (exit 124) and the tree killed, once (loop.c). */
void sup_time_out(struct supervisor *sup);

#endif

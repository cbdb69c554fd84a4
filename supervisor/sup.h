/* The supervisor: the state the event loop and every handler share. */
#ifndef STOCKADE_SUP_H
#define STOCKADE_SUP_H

#include "supervisor/layers.h"
#include "supervisor/options.h"
#include "supervisor/places.h"
#include "supervisor/tracee.h"
#include "syscalls/filter.h"

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;

/* An fd the loop watches; data.ptr of its epoll_event points here. */
struct event_source {
        int fd;
        const char *name;
        /* Returns 0 to go on, or -errno for an error that ends the run. */
        int (*on_ready)(struct supervisor *sup, struct event_source *src, uint32_t events);
};

struct counters {
        uint64_t notifications;
        uint64_t would_deny; /* audit mode */
        uint64_t forks_refused;
        uint64_t tasks_seen;
};

struct supervisor {
        const struct config *cfg;
        struct filter_opts fopts;
        struct layers layers;
        /* Where the run may write (Landlock rules, metadata handlers). Computed before the
         * fork, read-only afterwards: handlers read it without the lock. */
        struct places places;

        int epfd;
        struct event_source sigchld; /* signalfd: ptrace stops and exits */
        struct event_source timer;   /* timerfd: --timeout */

        /* The seccomp listener has a thread of its own, blocked in NOTIF_RECV: that is the
         * only way SYNC_WAKE_UP helps (through epoll the wake-up crosses CPUs; measured
         * 28 us instead of 2 us a round trip). `lock` guards the tree and the counters,
         * which the main thread (ptrace events) and the notifier share. It is recursive
         * because tearing the tree down can start inside a locked event handler. */
        int listener;
        pthread_t notifier;
        bool notifier_started;
        atomic_bool stopping;
        int notifier_error; /* -errno that ended the notifier early, else 0 */
        pthread_mutex_t lock;

        /* Buffers for SECCOMP_IOCTL_NOTIF_RECV/SEND, sized by SECCOMP_GET_NOTIF_SIZES. */
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        size_t req_size, resp_size;

        struct tracee_tree tree;
        pid_t root; /* the command's pid */
        bool root_exited;
        int root_status; /* wait status of the root */
        bool timed_out;
        bool killing; /* the tree is being torn down */
        struct counters n;
};

/* Kill every task of the tree (SIGKILL); the loop then reaps them. */
void sup_kill_tree(struct supervisor *sup);

#endif

#include "supervisor/vfs/special.h"
#include "supervisor/vfs/path.h"
#include "supervisor/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "/" + rest, canonical: '.', '..' and '//' taken lexically, never above the root. */
static int canonical(const char *rest, char *out, size_t size)
{
        char in[PATH_MAX + 1];

        if (snprintf(in, sizeof(in), "/%s", rest) >= (int)sizeof(in))
                return -ENAMETOOLONG;
        return vfs_path_normalize(out, size, in) < 0 ? -ENAMETOOLONG : 0;
}

/* A decimal number without sign or leading zero, or -1. */
static long number(const char *s, size_t len)
{
        long v = 0;

        if (len == 0 || len > 9 || (s[0] == '0' && len > 1))
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

/*
 * Files of /proc whose content depends on who opens them, and which the supervisor would open
 * with its own credentials and in its own namespaces (a third outside review): the keys
 * visible to its user (a root supervisor showed root's keyring descriptions) and the SysV IPC
 * objects of the host's IPC namespace, against the sandbox's own. Not there, as in a
 * container without them.
 */
static bool host_only(const char *path)
{
        static const char *const names[] = {"/keys", "/key-users", "/sysvipc"};

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                size_t n = strlen(names[i]);

                if (strncmp(path, names[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
                        return true;
        }
        return false;
}

static bool listed(const char *name, const char *const *list)
{
        for (; *list; list++)
                if (strcmp(name, *list) == 0)
                        return true;
        return false;
}

/* ---- network interfaces: lo alone where the sandbox shares the host's namespace ---- */

enum iface_kind { IFACE_NONE, IFACE_SYSCTL, IFACE_PROCNET };

struct comps {
        const char *c[8];
        size_t len[8], n; /* n counts them all, even past the eight kept */
};

static void split(const char *path, struct comps *out)
{
        out->n = 0;
        for (const char *p = path; *p;) {
                size_t len;

                while (*p == '/')
                        p++;
                len = strcspn(p, "/");
                if (!len)
                        break;
                if (out->n < ARRAY_SIZE(out->c)) {
                        out->c[out->n] = p;
                        out->len[out->n] = len;
                }
                out->n++;
                p += len;
        }
}

static bool comp_is(const struct comps *s, size_t i, const char *word)
{
        return i < s->n && i < ARRAY_SIZE(s->c) && s->len[i] == strlen(word) &&
               memcmp(s->c[i], word, s->len[i]) == 0;
}

static bool comp_number(const struct comps *s, size_t i)
{
        return i < s->n && i < ARRAY_SIZE(s->c) && number(s->c[i], s->len[i]) >= 0;
}

/* Which component of a /proc path names a network interface (*at), and where:
 * /proc/sys/net/X/{conf,neigh}/NAME, /proc/PID[/task/TID]/net/DIR/NAME. */
static enum iface_kind iface_at(const struct comps *s, size_t *at)
{
        size_t i = 2;

        if (!comp_is(s, 0, "proc"))
                return IFACE_NONE;
        if (comp_is(s, 1, "sys") && comp_is(s, 2, "net") &&
            (comp_is(s, 4, "conf") || comp_is(s, 4, "neigh"))) {
                *at = 5;
                return IFACE_SYSCTL;
        }
        if (!comp_number(s, 1))
                return IFACE_NONE;
        if (comp_is(s, 2, "task") && comp_number(s, 3))
                i = 4;
        if (!comp_is(s, i, "net") || s->n <= i + 1)
                return IFACE_NONE;
        *at = i + 2;
        return IFACE_PROCNET;
}

bool vfs_proc_net_hidden(const char *host, const struct vfs_special_ctx *ctx)
{
        static const char *const sysctl_shown[] = {"all", "default", "lo", NULL};
        char name[16]; /* IFNAMSIZ: a longer name is no interface's */
        struct comps s;
        enum iface_kind kind;
        size_t at;

        if (!ctx->host_iface || !strstr(host, "/net/"))
                return false;
        split(host, &s);
        kind = iface_at(&s, &at);
        if (kind == IFACE_NONE || s.n <= at)
                return false;
        if (s.len[at] >= sizeof(name))
                return kind == IFACE_SYSCTL;
        memcpy(name, s.c[at], s.len[at]);
        name[s.len[at]] = '\0';
        if (kind == IFACE_SYSCTL)
                return !listed(name, sysctl_shown);
        return strcmp(name, "lo") != 0 && ctx->host_iface(ctx->arg, name);
}

bool vfs_proc_net_dir(const char *host)
{
        struct comps s;
        size_t at;

        split(host, &s);
        if (s.n < ARRAY_SIZE(s.c)) {
                s.c[s.n] = ""; /* a name in it, which no test of iface_at matches */
                s.len[s.n] = 0;
        }
        s.n++;
        return iface_at(&s, &at) != IFACE_NONE && at == s.n - 1;
}

int vfs_proc_map(const char *rest, const struct vfs_special_ctx *ctx, struct vfs_special *out)
{
        char path[PATH_MAX];
        const char *first, *tail;
        size_t len;
        long pid;
        int r = canonical(rest, path, sizeof(path)), n;

        if (r < 0)
                return r;
        out->kind = VFS_SP_PROC;
        out->process = false;
        first = path + 1; /* "" for /proc itself */
        tail = strchr(first, '/');
        len = tail ? (size_t)(tail - first) : strlen(first);
        if (!tail)
                tail = "";
        if (len == 4 && strncmp(first, "self", 4) == 0) {
                n = snprintf(out->host, sizeof(out->host), "/proc/%d%s", (int)ctx->tgid, tail);
        } else if (len == 3 && strncmp(first, "net", 3) == 0) {
                /* /proc/net is the link "self/net": the caller's network namespace's (its
                 * own, shim/netns.h), not the supervisor's; shown as its target, as
                 * /proc/self is. */
                n = snprintf(out->host, sizeof(out->host), "/proc/%d/net%s", (int)ctx->tgid, tail);
        } else if (len == 6 && strncmp(first, "mounts", 6) == 0) {
                /* The link "self/mounts" too: followed from the supervisor, procfs's "self"
                 * would be ours, and the program would read our mount table, the host's (an
                 * outside review did), not its namespace's. */
                n = snprintf(out->host, sizeof(out->host), "/proc/%d/mounts%s", (int)ctx->tgid,
                             tail);
        } else if (len == 11 && strncmp(first, "thread-self", 11) == 0) {
                n = snprintf(out->host, sizeof(out->host), "/proc/%d/task/%d%s", (int)ctx->tgid,
                             (int)ctx->tid, tail);
        } else if ((pid = number(first, len)) >= 0) {
                if (pid == 0 || !ctx->in_tree(ctx->arg, (pid_t)pid))
                        return -ENOENT;
                n = snprintf(out->host, sizeof(out->host), "/proc%s", path);
        } else if (host_only(path)) {
                return -ENOENT;
        } else {
                n = snprintf(out->host, sizeof(out->host), "/proc%s",
                             strcmp(path, "/") ? path : "");
                if (n < 0 || (size_t)n >= sizeof(out->host))
                        return -ENAMETOOLONG;
                return vfs_proc_net_hidden(out->host, ctx) ? -ENOENT : 0;
        }
        if (n < 0 || (size_t)n >= sizeof(out->host))
                return -ENAMETOOLONG;
        out->process = true;
        return vfs_proc_net_hidden(out->host, ctx) ? -ENOENT : 0;
}

int vfs_dev_map(const char *rest, const struct vfs_special_ctx *ctx, struct vfs_special *out)
{
        static const char *const devices[] = {"/",         "/null",    "/zero", "/full",
                                              "/random",   "/urandom", "/ptmx", "/pts",
                                              "/pts/ptmx", "/shm",     NULL};
        static const char *const std[] = {"/stdin", "/stdout", "/stderr"};
        char path[PATH_MAX];
        int r = canonical(rest, path, sizeof(path)), n;
        long pts;

        if (r < 0)
                return r;
        out->kind = VFS_SP_DEV;
        out->process = false;
        for (size_t i = 0; i < ARRAY_SIZE(std); i++)
                if (strcmp(path, std[i]) == 0) {
                        snprintf(path, sizeof(path), "/fd/%zu", i);
                        break;
                }
        if (strcmp(path, "/fd") == 0 || strncmp(path, "/fd/", 4) == 0) {
                char sub[PATH_MAX];

                if (snprintf(sub, sizeof(sub), "self%s", path) >= (int)sizeof(sub))
                        return -ENAMETOOLONG;
                return vfs_proc_map(sub, ctx, out);
        }
        if (ctx->shm && (strcmp(path, "/shm") == 0 || strncmp(path, "/shm/", 5) == 0)) {
                out->kind = VFS_SP_SHM;
                n = snprintf(out->host, sizeof(out->host), "%s%s", ctx->shm, path + 4);
                return n < 0 || (size_t)n >= sizeof(out->host) ? -ENAMETOOLONG : 0;
        }
        if (strcmp(path, "/tty") == 0) {
                out->kind = VFS_SP_TTY;
                snprintf(out->host, sizeof(out->host), "/dev/tty");
                return 0;
        }
        if (strncmp(path, "/pts/", 5) == 0 && (pts = number(path + 5, strlen(path + 5))) >= 0) {
                if (!ctx->pts_allowed(ctx->arg, (unsigned)pts))
                        return -ENOENT;
        } else if (!listed(path, devices) && strncmp(path, "/shm/", 5) != 0) {
                return -ENOENT;
        }
        n = snprintf(out->host, sizeof(out->host), "/dev%s", strcmp(path, "/") ? path : "");
        return n < 0 || (size_t)n >= sizeof(out->host) ? -ENAMETOOLONG : 0;
}

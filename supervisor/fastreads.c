#include "supervisor/walls.h"
#include "supervisor/fastreads.h"
#include "supervisor/dns.h"
#include "supervisor/error.h"
#include "supervisor/grants.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"
#include "supervisor/vfs/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A mountinfo field with its octal escapes (\040) undone, into out[PATH_MAX]. */
static void unescape_to(const char *f, char *out)
{
        size_t w = 0;

        while (*f && w < PATH_MAX - 1) {
                if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] >= '0' && f[2] <= '7' &&
                    f[3] >= '0' && f[3] <= '7') {
                        out[w++] = (char)(((f[1] - '0') << 6) | ((f[2] - '0') << 3) | (f[3] - '0'));
                        f += 4;
                } else {
                        out[w++] = *f++;
                }
        }
        out[w] = '\0';
}

/* Every procfs mounted elsewhere than /proc (a chroot's, a container's): it shows the host's
 * processes, their command lines and status, which the sandbox's own /proc does not. Each is
 * masked (required, as every mask under --fast). */
static int mask_other_procfs(struct supervisor *sup, struct error *err)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[3 * PATH_MAX], point[PATH_MAX], fstype[64];
        int r = 0;

        if (!f)
                return make_error(err, errno, "--fast: read /proc/self/mountinfo");
        while (r == 0 && fgets(line, sizeof(line), f)) {
                char raw[PATH_MAX];
                const char *dash = strstr(line, " - ");

                if (!dash || sscanf(line, "%*u %*u %*u:%*u %*4095s %4095s", raw) != 1 ||
                    sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "proc") != 0)
                        continue;
                unescape_to(raw, point);
                if (vfs_path_has_prefix(point, "/proc"))
                        continue; /* the sandbox's procfs is mounted over all of that */
                if (sup->n_binds >= MNT_BINDS_MAX) {
                        r = make_error(err, 0,
                                       "--fast: the procfs at `%s` cannot be covered (more "
                                       "than %d mounts); run without --fast",
                                       point, MNT_BINDS_MAX);
                        break;
                }
                struct mnt_bind *b = walls_new_bind(sup);

                snprintf(b->target, sizeof(b->target), "%s", point);
                b->mask = true;
                if (sup->cfg->verbose)
                        fprintf(stderr, "stockade: --fast: the procfs at `%s` is covered\n", point);
        }
        fclose(f);
        return r;
}

/* The view's resolv.conf, written in the scratch and bound over the host's. */
static int bind_resolv(struct supervisor *sup, struct error *err)
{
        char path[PATH_MAX];
        size_t n = strlen(dns_resolv_conf);
        int fd;

        if (snprintf(path, sizeof(path), "%s/resolv.conf", sup->scratch) >= (int)sizeof(path))
                return make_error(err, ENAMETOOLONG, "--fast: the view's resolv.conf");
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0 || write(fd, dns_resolv_conf, n) != (ssize_t)n) {
                int e = errno;

                if (fd >= 0)
                        close(fd);
                return make_error(err, e, "--fast: write `%s`", path);
        }
        close(fd);
        struct mnt_bind *b = walls_new_bind(sup);

        snprintf(b->source, sizeof(b->source), "%s", path);
        snprintf(b->target, sizeof(b->target), "/etc/resolv.conf");
        b->file = true;
        sup->resolv = xstrdup(path);
        return 0;
}

/* Why the opens for reading stay the view's on this run, or NULL. */
static const char *why_not(const struct supervisor *sup, char *buf, size_t size)
{
        const char *what = NULL, *unsafe = grants_reads_unsafe(&sup->view, &sup->places, &what);
        struct stat st;

        if (unsafe) {
                snprintf(buf, size, "the hidden path `%s` %s: only the view keeps it hidden",
                         unsafe, what);
                return buf;
        }
        struct stat root;

        /* The walls tell /dev by its file system (grants.c) and clear nodev on its mount. */
        if (stat("/", &root) < 0 || stat("/dev", &st) < 0 || st.st_dev == root.st_dev)
                return "the host's /dev is not a file system of its own";
        if (!sup->layers.netns && sup->cfg->net.mode != NETPOL_MODE_HOST)
                return "no network namespace of the sandbox's own, and /proc/net would be the "
                       "host's";
        if (dns_wanted(&sup->cfg->net) &&
            (stat("/etc/resolv.conf", &st) < 0 || !S_ISREG(st.st_mode)))
                return "the host has no /etc/resolv.conf to cover with the view's";
        return NULL;
}

int fastreads_setup(struct supervisor *sup, struct error *err)
{
        char buf[PATH_MAX + 160];
        const char *why;

        if (!sup->cfg->fast)
                return 0;
        why = why_not(sup, buf, sizeof(buf));
        if (why) {
                if (sup->cfg->verbose)
                        fprintf(stderr,
                                "stockade: --fast: opens for reading stay the view's (%s)\n", why);
                return 0;
        }
        if (mask_other_procfs(sup, err) < 0 ||
            (dns_wanted(&sup->cfg->net) && bind_resolv(sup, err) < 0))
                return -1;
        walls_new_bind(sup)->nodev = true; /* last: after every other mount */
        sup->fast_reads = true;
        sup->fopts.kernel_reads = true;
        if (sup->cfg->verbose)
                fprintf(stderr, "stockade: --fast: opens for reading are the kernel's too, "
                                "judged by the masks, Landlock and nodev (not traced)\n");
        return 0;
}

void fastreads_grants(struct supervisor *sup)
{
        struct stat st;

        /* Landlock's walk from a file bound over another starts at the bound file. */
        if (sup->resolv && lstat(sup->resolv, &st) == 0)
                grants_add(&sup->grants, sup->resolv, &st, LANDLOCK_ACCESS_FS_READ_FILE,
                           GRANT_BOTH);
}

/*
 * Whose a session store is, when a session command or stockade run is about to use it
 * (session_owner.h).
 *
 * A user can lead root's `stockade apply --state-dir ~user/...` (or a HOME that sudo kept)
 * anywhere their own directories and symlinks point: into a root-owned tree that only looks
 * like a store through an overlay in their own mount namespace (/proc/PID/root/...), or to a
 * directory swapped between two looks. So, as root, the store's path is walked from / one
 * component at a time, each opened beneath the one before without following anything; a
 * symlink is read and its target walked the same way, as text (a magic link such as
 * /proc/PID/root leads back into stockade's own tree, never into another namespace's). Each
 * directory and symlink on the way, the store, its `sessions` and the session's directory
 * counts: one owned by another user makes the session that user's, and stockade becomes
 * that user before it reads anything in it. Two users on the way: refused.
 *
 * Not as root, the same walk refuses a store that a user other than root and the caller has
 * a hand in: they could change the session under the caller, whose apply would then write
 * what they chose with the caller's rights. For every caller, a directory on the way that
 * others may write (not sticky) is refused. stockade run judges its store the same way before
 * it makes anything there (as root: only a store of root's), and --trace its directory.
 */
#include "supervisor/session_owner.h"
#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/vfs/session.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define WALK_LINKS_MAX 40 /* as the kernel's */

/* "apply: session NAME" or "sessions: the session store" */
static void subject(char *buf, size_t len, const char *cmd, const char *name)
{
        if (name && !*name) /* the caller's own words */
                snprintf(buf, len, "%s", cmd);
        else if (name)
                snprintf(buf, len, "%s%ssession %s", cmd ? cmd : "", cmd ? ": " : "", name);
        else
                snprintf(buf, len, "%s%sthe session store", cmd ? cmd : "", cmd ? ": " : "");
}

/* Whether no passwd entry but uid's has `gid` as its primary group (such a user is in the
 * group without being listed in it). */
static bool sole_primary(gid_t gid, uid_t uid)
{
        struct passwd *pw;
        bool sole = true;

        setpwent();
        while (sole && (pw = getpwent()))
                sole = pw->pw_gid != gid || pw->pw_uid == uid;
        endpwent();
        return sole;
}

/* Whether the group `gid` is the caller's own alone: not root, their primary group, named
 * as they are, with no other member listed and no other user's primary group (a user
 * private group, which umask 002 makes group-writable directories in). */
static bool private_group(gid_t gid)
{
        uid_t uid = geteuid();
        struct passwd *pw;
        struct group *gr;
        char name[256];

        if (uid == 0 || gid != getegid() || !(pw = getpwuid(uid)) || pw->pw_gid != gid ||
            snprintf(name, sizeof(name), "%s", pw->pw_name) >= (int)sizeof(name) ||
            !(gr = getgrgid(gid)))
                return false;
        if (strcmp(gr->gr_name, name) != 0 ||
            (gr->gr_mem[0] && (gr->gr_mem[1] || strcmp(gr->gr_mem[0], name) != 0)))
                return false;
        return sole_primary(gid, uid);
}

/* Whether `fd` (any kind, O_PATH too) has an access ACL beyond its mode bits: named users or
 * groups, whose widest rights its group bits then show (the ACL's mask). What cannot be told
 * counts as one. */
static bool acl_extended(int fd)
{
        char proc[64];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (getxattr(proc, "system.posix_acl_access", NULL, 0) >= 0)
                return true; /* the kernel keeps none for a mode's three entries */
        return errno != ENODATA && errno != EOPNOTSUPP;
}

/* Writable by anyone but its owner: everyone, a group other than root's and the caller's
 * private one, or a user or group an ACL names (its mask: the group bits). */
static bool others_may_write(const struct stat *st, int fd)
{
        if (st->st_mode & S_IWOTH)
                return true;
        if (!(st->st_mode & S_IWGRP))
                return false;
        return (st->st_gid != 0 && !private_group(st->st_gid)) || acl_extended(fd);
}

/* Who others_may_write found, for the message. */
static const char *writers(const struct stat *st)
{
        if (st->st_mode & S_IWOTH)
                return "everyone";
        if (st->st_gid != 0 && !private_group(st->st_gid))
                return "its group";
        return "the users or groups its ACL names";
}

int owner_claim(struct sess_owner *o, int fd, const char *shown, const char *cmd, const char *name,
                struct error *err)
{
        char who[320];
        struct stat st;

        subject(who, sizeof(who), cmd, name);
        if (fstat(fd, &st) < 0)
                return make_error(err, errno, "%s: %s", who, shown);
        /* A directory of root's or the caller's that others may change (without the sticky
         * bit): whoever that is could swap what lies beneath while the caller works there
         * (an outside attack swapped a store through a group-writable ~/.local/state). */
        if ((st.st_uid == 0 || st.st_uid == geteuid()) && S_ISDIR(st.st_mode) &&
            !(st.st_mode & S_ISVTX) && others_may_write(&st, fd))
                return make_error(err, 0,
                                  "%s: %s is writable by %s (mode %04o): whoever may write it "
                                  "could change the session under you (nothing done)",
                                  who, shown, writers(&st), (unsigned)(st.st_mode & 07777));
        if (st.st_uid == 0 || st.st_uid == geteuid())
                return 0;
        if (geteuid() != 0) /* not root: nobody else may have a hand in it */
                return make_error(err, 0,
                                  "%s: %s belongs to uid %u, who could change the session under "
                                  "you: keep sessions in directories of yours or root's (nothing "
                                  "done)",
                                  who, shown, (unsigned)st.st_uid);
        if (o->uid && st.st_uid != o->uid)
                return make_error(err, 0,
                                  "%s: %s belongs to uid %u, %s to uid %u: whose is it? (nothing "
                                  "done)",
                                  who, shown, (unsigned)st.st_uid, o->where, (unsigned)o->uid);
        if (!o->uid) {
                o->uid = st.st_uid;
                snprintf(o->where, sizeof(o->where), "%s", shown);
        }
        return 0;
}

enum walk_missing {
        WALK_NEED, /* a missing name is an error */
        WALK_STOP, /* -2 where a name is missing (what exists judged) */
        WALK_MAKE, /* made (0700), beneath the directory judged, and judged in turn */
};

/* `path` walked from / as the comment at the top says: its fd, or -1 with *err set (or -2,
 * WALK_STOP). */
static int walk(const char *path, enum walk_missing missing, struct sess_owner *o, const char *cmd,
                const char *name, struct error *err)
{
        char todo[PATH_MAX * 2], shown[PATH_MAX * 2], who[320];
        size_t links = 0, done = 0;
        int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        subject(who, sizeof(who), cmd, name);
        if (cur < 0)
                return make_error(err, errno, "%s: /", who);
        if (path[0] != '/') {
                char cwd[PATH_MAX];

                if (!getcwd(cwd, sizeof(cwd)) || cwd[0] != '/') {
                        close(cur);
                        return make_error(err, errno ? errno : ENOENT, "%s: %s", who, path);
                }
                if (snprintf(todo, sizeof(todo), "%s/%s", cwd, path) >= (int)sizeof(todo)) {
                        close(cur);
                        return make_error(err, ENAMETOOLONG, "%s: %s", who, path);
                }
        } else {
                snprintf(todo, sizeof(todo), "%s", path);
        }
        shown[0] = '\0';
        for (char *p = todo;;) {
                char comp[NAME_MAX + 1], target[PATH_MAX], rest[PATH_MAX * 2];
                size_t len;
                ssize_t n;
                struct stat st;
                int fd;

                while (*p == '/')
                        p++;
                if (!*p)
                        return cur;
                len = strcspn(p, "/");
                if (len > NAME_MAX) {
                        close(cur);
                        return make_error(err, ENAMETOOLONG, "%s: %s", who, path);
                }
                memcpy(comp, p, len);
                comp[len] = '\0';
                p += len;
                if (strcmp(comp, ".") == 0)
                        continue;
                done = strlen(shown);
                snprintf(shown + done, sizeof(shown) - done, "/%s", comp);
                fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT && missing == WALK_STOP) {
                        close(cur);
                        return -2;
                }
                /* made right here, never through a name someone put on the way since */
                if (fd < 0 && errno == ENOENT && missing == WALK_MAKE &&
                    (mkdirat(cur, comp, 0700) == 0 || errno == EEXIST))
                        fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        int e = errno;

                        if (fd >= 0)
                                close(fd);
                        close(cur);
                        return make_error(err, e, "%s: %s", who, shown);
                }
                if (owner_claim(o, fd, shown, cmd, name, err) < 0) {
                        close(fd);
                        close(cur);
                        return -1;
                }
                /* nothing is made beneath, or through, another user's */
                if (missing == WALK_MAKE && o->uid) {
                        close(fd);
                        close(cur);
                        return make_error(err, 0, "%s: %s belongs to uid %u (nothing made)", who,
                                          shown, (unsigned)o->uid);
                }
                if (S_ISDIR(st.st_mode)) {
                        close(cur);
                        cur = fd;
                        continue;
                }
                if (!S_ISLNK(st.st_mode)) {
                        close(fd);
                        close(cur);
                        return make_error(err, ENOTDIR, "%s: %s", who, shown);
                }
                n = readlinkat(fd, "", target, sizeof(target) - 1);
                close(fd);
                if (n <= 0 || ++links > WALK_LINKS_MAX) {
                        close(cur);
                        return make_error(err, n <= 0 ? errno : ELOOP, "%s: %s", who, shown);
                }
                target[n] = '\0';
                if (snprintf(rest, sizeof(rest), "%s/%s", target, p) >= (int)sizeof(rest)) {
                        close(cur);
                        return make_error(err, ENAMETOOLONG, "%s: %s", who, path);
                }
                memcpy(todo, rest, strlen(rest) + 1);
                p = todo;
                if (target[0] == '/') { /* from the root again */
                        close(cur);
                        cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (cur < 0)
                                return make_error(err, errno, "%s: /", who);
                        shown[0] = '\0';
                } else { /* from the directory holding the link */
                        char *slash = strrchr(shown, '/');

                        *slash = '\0';
                }
        }
}

int owner_private(int fd, const char *shown, const char *cmd, struct error *err)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return make_error(err, errno, "%s: %s", cmd, shown);
        if (st.st_uid != geteuid())
                return make_error(err, 0,
                                  "%s: %s belongs to uid %u, not to you: keep sessions in a store "
                                  "of your own (--state-dir DIR)",
                                  cmd, shown, (unsigned)st.st_uid);
        if (others_may_write(&st, fd))
                return make_error(
                        err, 0,
                        "%s: %s is writable by %s (mode %04o): others could put a session "
                        "of theirs there: keep sessions in a store of your own "
                        "(--state-dir DIR)",
                        cmd, shown, writers(&st), (unsigned)(st.st_mode & 07777));
        return 0;
}

int store_open(const char *state, struct sess_owner *o, const char *cmd, const char *name,
               struct error *err)
{
        memset(o, 0, sizeof(*o));
        return walk(state, WALK_NEED, o, cmd, name, err);
}

/* The walk for its judgement alone: 0, or -1 with *err set. */
static int walk_only(const char *state, enum walk_missing missing, struct sess_owner *o,
                     const char *cmd, struct error *err)
{
        int fd;

        memset(o, 0, sizeof(*o));
        fd = walk(state, missing, o, cmd, NULL, err);
        if (fd >= 0)
                close(fd);
        return fd == -1 ? -1 : 0;
}

int store_judge(const char *state, struct sess_owner *o, const char *cmd, struct error *err)
{
        return walk_only(state, WALK_STOP, o, cmd, err);
}

int store_make(const char *state, struct sess_owner *o, const char *cmd, struct error *err)
{
        return walk_only(state, WALK_MAKE, o, cmd, err);
}

int owner_become(const struct sess_owner *o, const char *cmd, const char *name, struct error *err)
{
        char who[320], user[256];
        struct passwd *pw;
        gid_t gid;

        if (geteuid() != 0 || !o->uid)
                return 0;
        subject(who, sizeof(who), cmd, name);
        pw = getpwuid(o->uid);
        /* Without an entry its groups are unknown; the directory's group may be anyone's
         * (root's, with a home made by `chown 4242`), so none is guessed. */
        if (!pw)
                return make_error(err, 0,
                                  "%s: %s belongs to uid %u, which has no user entry (getpwuid): "
                                  "stockade cannot tell its groups to work as it (nothing done)",
                                  who, o->where, (unsigned)o->uid);
        gid = pw->pw_gid;
        snprintf(user, sizeof(user), "%s", pw->pw_name);
        if (initgroups(user, gid) < 0 || setresgid(gid, gid, gid) < 0 ||
            setresuid(o->uid, o->uid, o->uid) < 0)
                return make_error(err, errno,
                                  "%s: %s belongs to uid %u, and stockade cannot become that "
                                  "user (nothing done)",
                                  who, o->where, (unsigned)o->uid);
        fprintf(stderr, "stockade: %s belongs to uid %u (", who, (unsigned)o->uid);
        cowdiff_quote(stderr, user);
        fputs("), as ", stderr);
        cowdiff_quote(stderr, o->where);
        fputs(" does: working as that user\n", stderr);
        return 0;
}

/* store_default's choice; *o.where names the other user's directory when root's own home's
 * store was taken instead (o->uid then not 0). */
static int pick_default(const char *dir_opt, char *out, struct sess_owner *o)
{
        struct error e = {0};
        struct passwd *pw;
        int r = session_state_dir(dir_opt, out);

        o->uid = 0;
        if (r < 0 || (dir_opt && *dir_opt) || geteuid() != 0)
                return r;
        /* refused as it is (a directory others may write): said by whoever uses it */
        if (store_judge(out, o, NULL, &e) < 0 || !o->uid) {
                o->uid = 0;
                return 0;
        }
        /* root with a HOME (or XDG_STATE_HOME) of another user's: a CI container run as root
         * with the runner's home, or sudo -E. Not a store root may use: root's own. */
        pw = getpwuid(0);
        if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/' ||
            snprintf(out, PATH_MAX, "%s/.local/state/stockade", pw->pw_dir) >= PATH_MAX)
                return -ENOENT;
        return 0;
}

int store_default_quiet(char *out)
{
        struct sess_owner o;

        return pick_default(NULL, out, &o);
}

int store_default(const char *dir_opt, char *out)
{
        struct sess_owner o;
        int r = pick_default(dir_opt, out, &o);

        if (r < 0 || !o.uid)
                return r;
        for (char *c = o.where; *c; c++) /* a name the user chose: no byte of it a control */
                if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                        *c = '?';
        error_warn("note: the default session store lies in another user's directory (%s); "
                   "root keeps its sessions in %s (--state-dir to choose)\n",
                   o.where, out);
        return 0;
}

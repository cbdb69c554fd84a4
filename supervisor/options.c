#include "supervisor/options.h"

#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_count(const char *s, uint64_t *out)
{
        char *end;
        unsigned long long v;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end)
                return -EINVAL;
        *out = v;
        return 0;
}

int parse_size(const char *s, uint64_t *out)
{
        static const struct {
                char suffix;
                unsigned shift;
        } units[] = {{'k', 10}, {'m', 20}, {'g', 30}, {'t', 40}};
        char *end;
        unsigned long long v;
        unsigned shift = 0;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end) {
                size_t i;
                for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                        if (tolower((unsigned char)*end) == units[i].suffix)
                                break;
                if (i == sizeof(units) / sizeof(units[0]))
                        return -EINVAL;
                shift = units[i].shift;
                end++;
                if (*end == 'i' || *end == 'I') /* KiB, MiB, ... */
                        end++;
                if (*end == 'b' || *end == 'B')
                        end++;
                if (*end)
                        return -EINVAL;
        }
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *out = (uint64_t)v << shift;
        return 0;
}

int parse_duration_ms(const char *s, uint64_t *out)
{
        static const struct {
                const char *suffix;
                double ms;
        } units[] = {{"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60000}, {"h", 3600000}};
        char *end;
        double v;

        if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno == ERANGE || !isfinite(v))
                return -ERANGE;
        if (end == s)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcasecmp(end, units[i].suffix) == 0) {
                        double ms = v * units[i].ms;
                        if (ms > 1e15)
                                return -ERANGE;
                        *out = (uint64_t)llround(ms);
                        if (*out == 0 && v > 0)
                                *out = 1; /* 0 means "no limit": never round a limit to it */
                        return 0;
                }
        }
        return -EINVAL;
}

static int parse_id(const char *s, uint32_t *out)
{
        uint64_t v;

        if (parse_count(s, &v) < 0 || v >= UINT32_MAX)
                return -EINVAL;
        *out = (uint32_t)v;
        return 0;
}

int parse_user(const char *s, uid_t *uid, gid_t *gid)
{
        char user[256];
        const char *colon = strchr(s, ':');
        size_t n = colon ? (size_t)(colon - s) : strlen(s);
        struct passwd *pw = NULL;
        uint32_t id;

        if (!n || n >= sizeof(user) || (colon && !colon[1]))
                return -EINVAL;
        memcpy(user, s, n);
        user[n] = '\0';
        if (parse_id(user, &id) == 0) {
                *uid = id;
                pw = getpwuid(id);
                *gid = pw ? pw->pw_gid : id;
        } else if (isdigit((unsigned char)user[0])) {
                return -EINVAL;
        } else {
                pw = getpwnam(user);
                if (!pw)
                        return -ENOENT;
                *uid = pw->pw_uid;
                *gid = pw->pw_gid;
        }
        if (colon) {
                struct group *gr;

                if (parse_id(colon + 1, &id) == 0) {
                        *gid = id;
                } else {
                        gr = getgrnam(colon + 1);
                        if (!gr)
                                return -ENOENT;
                        *gid = gr->gr_gid;
                }
        }
        return 0;
}

bool valid_env_name(const char *name, size_t len)
{
        if (!len || isdigit((unsigned char)name[0]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)name[i]) && name[i] != '_')
                        return false;
        return true;
}

/* Lexical path arithmetic shared by the mount table and the spec parser. */
#include "supervisor/vfs/path.h"

#include <errno.h>
#include <string.h>

/* Drop the last component of out[0..len) (canonical, len >= 1); returns the new length. */
static size_t drop_last(const char *out, size_t len)
{
        while (len > 1 && out[len - 1] != '/')
                len--;
        return len > 1 ? len - 1 : 1;
}

int vfs_path_normalize(char *out, size_t size, const char *in)
{
        size_t len = 1;

        if (in[0] != '/')
                return -EINVAL;
        if (size < 2)
                return -ENAMETOOLONG;
        out[0] = '/';
        for (const char *p = in; *p;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p += n;
                        continue;
                }
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        len = drop_last(out, len);
                        p += n;
                        continue;
                }
                size_t sep = len > 1;
                if (len + sep + n >= size)
                        return -ENAMETOOLONG;
                if (sep)
                        out[len++] = '/';
                memmove(out + len, p, n); /* out may be in: it never runs ahead of p */
                len += n;
                p += n;
        }
        out[len] = '\0';
        return (int)len;
}

bool vfs_path_has_prefix(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);

        if (n == 1)
                return path[0] == '/';
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool vfs_path_next_component(const char **p, char *out, size_t size)
{
        size_t n;

        while (**p == '/')
                ++*p;
        n = strcspn(*p, "/");
        if (!n || n >= size)
                return false;
        memcpy(out, *p, n);
        out[n] = '\0';
        *p += n;
        return true;
}

size_t vfs_path_depth(const char *path)
{
        size_t depth = 0;

        for (const char *p = path; *p; p++)
                if (*p == '/' && p[1])
                        depth++;
        return depth;
}

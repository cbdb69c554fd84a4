/*
 * Arguments as the trace shows them. Registers are decoded by syscalls/decode.c, the one
 * table of signatures and names (the audit report uses it too); this file adds what only the
 * trace has: the copy of a path or a sockaddr the supervisor took from memory.
 */
#include "supervisor/trace_decode.h"
#include "syscalls/decode.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

int trace_mem_arg(int nr, int from)
{
        for (unsigned i = from < 0 ? 0 : (unsigned)from; i < 6; i++) {
                enum decode_kind k = decode_arg_kind(nr, i);

                if (k == D_PATH || k == D_SOCKADDR)
                        return (int)i;
        }
        return -1;
}

bool trace_mem_is_sockaddr(int nr, unsigned i)
{
        return decode_arg_kind(nr, i) == D_SOCKADDR;
}

/* A string as C would write it, quoted, non-printables escaped. */
static size_t quote(char *out, size_t size, const char *s, size_t n, int truncated)
{
        size_t len = 0;

        out[len++] = '"';
        for (size_t i = 0; i < n && len + 6 < size; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '"' || c == '\\') {
                        out[len++] = '\\';
                        out[len++] = (char)c;
                } else if (c >= 0x20 && c < 0x7f) {
                        out[len++] = (char)c;
                } else {
                        len += (size_t)snprintf(out + len, size - len, "\\x%02x", c);
                }
        }
        out[len++] = '"';
        if (truncated && len + 4 < size) {
                memcpy(out + len, "...", 3);
                len += 3;
        }
        out[len] = 0;
        return len;
}

static size_t sockaddr(char *out, size_t size, const char *mem, size_t n)
{
        sa_family_t fam;
        char a[INET6_ADDRSTRLEN];

        if (n < sizeof(fam))
                return (size_t)snprintf(out, size, "{?}");
        memcpy(&fam, mem, sizeof(fam));
        if (fam == AF_INET && n >= sizeof(struct sockaddr_in)) {
                struct sockaddr_in sin;
                memcpy(&sin, mem, sizeof(sin));
                inet_ntop(AF_INET, &sin.sin_addr, a, sizeof(a));
                return (size_t)snprintf(out, size, "%s:%u", a, ntohs(sin.sin_port));
        }
        if (fam == AF_INET6 && n >= sizeof(struct sockaddr_in6)) {
                struct sockaddr_in6 sin6;
                memcpy(&sin6, mem, sizeof(sin6));
                inet_ntop(AF_INET6, &sin6.sin6_addr, a, sizeof(a));
                return (size_t)snprintf(out, size, "[%s]:%u", a, ntohs(sin6.sin6_port));
        }
        if (fam == AF_UNIX) {
                const char *p = mem + offsetof(struct sockaddr_un, sun_path);
                size_t l = n - offsetof(struct sockaddr_un, sun_path);
                if (l && p[0] == 0) /* abstract */
                        return (size_t)snprintf(out, size, "unix:@%.*s", (int)strnlen(p + 1, l - 1),
                                                p + 1);
                return (size_t)snprintf(out, size, "unix:%.*s", (int)strnlen(p, l), p);
        }
        return (size_t)snprintf(out, size, "{family %u}", fam);
}

size_t trace_format_arg(char *out, size_t size, int nr, unsigned i, uint64_t v,
                        const uint64_t *args, const char *mem, int mem_len, int mem_truncated)
{
        enum decode_kind k = decode_arg_kind(nr, i);

        if (v && mem && k == D_PATH && mem_len >= 0)
                return quote(out, size, mem, (size_t)mem_len, mem_truncated);
        if (v && mem && k == D_SOCKADDR && mem_len > 0)
                return sockaddr(out, size, mem, (size_t)mem_len);
        return decode_value(out, size, k, v, args); /* a memory argument not copied: its address */
}

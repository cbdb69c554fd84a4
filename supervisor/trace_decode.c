/*
 * Argument decoders, strace-style but small: a kind per argument for the calls the
 * supervisor sees most, hex (or decimal when small) for everything else. Unknown bits of a
 * flag word are printed in hex after the known names, so nothing is hidden.
 */
#include "supervisor/trace_decode.h"
#include "syscalls/table.h"
#include "supervisor/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct sig {
        int nr;
        uint8_t k[6];
};

/* Only the calls with an argument worth decoding; the rest print as numbers. */
static const struct sig sigs[] = {
        {SC_open, {A_PATH, A_OFLAGS, A_MODE}},
        {SC_openat, {A_FD, A_PATH, A_OFLAGS, A_MODE}},
        {SC_creat, {A_PATH, A_MODE}},
        {SC_stat, {A_PATH, A_PTR}},
        {SC_lstat, {A_PATH, A_PTR}},
        {SC_newfstatat, {A_FD, A_PATH, A_PTR, A_ATFLAGS}},
        {SC_statx, {A_FD, A_PATH, A_ATFLAGS, A_HEX, A_PTR}},
        {SC_access, {A_PATH, A_AMODE}},
        {SC_faccessat, {A_FD, A_PATH, A_AMODE}},
        {SC_faccessat2, {A_FD, A_PATH, A_AMODE, A_ATFLAGS}},
        {SC_readlink, {A_PATH, A_PTR, A_INT}},
        {SC_readlinkat, {A_FD, A_PATH, A_PTR, A_INT}},
        {SC_mkdir, {A_PATH, A_MODE}},
        {SC_mkdirat, {A_FD, A_PATH, A_MODE}},
        {SC_rmdir, {A_PATH}},
        {SC_unlink, {A_PATH}},
        {SC_unlinkat, {A_FD, A_PATH, A_ATFLAGS}},
        {SC_chdir, {A_PATH}},
        {SC_chmod, {A_PATH, A_MODE}},
        {SC_fchmod, {A_FD, A_MODE}},
        {SC_fchmodat, {A_FD, A_PATH, A_MODE}},
        {SC_chown, {A_PATH, A_INT, A_INT}},
        {SC_lchown, {A_PATH, A_INT, A_INT}},
        {SC_fchownat, {A_FD, A_PATH, A_INT, A_INT, A_ATFLAGS}},
        {SC_truncate, {A_PATH, A_INT}},
        {SC_rename, {A_PATH, A_PTR}},
        {SC_link, {A_PATH, A_PTR}},
        {SC_symlink, {A_PTR, A_PATH}},
        {SC_execve, {A_PATH, A_PTR, A_PTR}},
        {SC_execveat, {A_FD, A_PATH, A_PTR, A_PTR, A_ATFLAGS}},
        {SC_connect, {A_FD, A_SOCKADDR, A_INT}},
        {SC_bind, {A_FD, A_SOCKADDR, A_INT}},
        {SC_sendto, {A_FD, A_PTR, A_INT, A_HEX, A_SOCKADDR, A_INT}},
        {SC_socket, {A_FAMILY, A_SOCKTYPE, A_INT}},
        {SC_kill, {A_INT, A_SIGNAL}},
        {SC_tkill, {A_INT, A_SIGNAL}},
        {SC_tgkill, {A_INT, A_INT, A_SIGNAL}},
        {SC_clone, {A_CLONE, A_PTR, A_PTR, A_PTR, A_HEX}},
        {SC_mmap, {A_PTR, A_INT, A_PROT, A_MMAP, A_FD, A_HEX}},
        {SC_mprotect, {A_PTR, A_INT, A_PROT}},
        {SC_read, {A_FD, A_PTR, A_INT}},
        {SC_write, {A_FD, A_PTR, A_INT}},
        {SC_close, {A_FD}},
        {SC_fstat, {A_FD, A_PTR}},
        {SC_fcntl, {A_FD, A_FCNTL, A_HEX}},
        {SC_lseek, {A_FD, A_INT, A_INT}},
        {SC_pread64, {A_FD, A_PTR, A_INT, A_INT}},
        {SC_getdents64, {A_FD, A_PTR, A_INT}},
};

static const struct sig *sig_of(int nr)
{
        /* A static index, built on first use (the writer thread is the only caller). */
        static int8_t idx[SYSCALL_NR_LIMIT];
        static int built;

        if (!built) {
                memset(idx, -1, sizeof(idx));
                for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
                        idx[syscall_table[sigs[i].nr].nr] = (int8_t)i;
                built = 1;
        }
        if (nr < 0 || nr >= SYSCALL_NR_LIMIT || idx[nr] < 0)
                return NULL;
        return &sigs[idx[nr]];
}

enum arg_kind trace_arg_kind(int nr, unsigned i)
{
        const struct sig *s = sig_of(nr);

        return s && i < 6 ? (enum arg_kind)s->k[i] : A_HEX;
}

int trace_mem_arg(int nr)
{
        const struct sig *s = sig_of(nr);

        if (s)
                for (int i = 0; i < 6; i++)
                        if (s->k[i] == A_PATH || s->k[i] == A_SOCKADDR)
                                return i;
        return -1;
}

struct flag {
        uint64_t bit;
        const char *name;
};

/* Names of the set bits of v, then what is left in hex; `zero` when v is 0. */
static size_t flags(char *out, size_t size, uint64_t v, const struct flag *f, size_t n,
                    const char *zero)
{
        size_t len = 0;

        out[0] = 0;
        if (!v && zero)
                return (size_t)snprintf(out, size, "%s", zero);
        for (size_t i = 0; i < n && len < size; i++)
                if (f[i].bit && (v & f[i].bit) == f[i].bit) {
                        len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "|" : "",
                                                f[i].name);
                        v &= ~f[i].bit;
                }
        if (v && len < size)
                len += (size_t)snprintf(out + len, size - len, "%s%#llx", len ? "|" : "",
                                        (unsigned long long)v);
        return len < size ? len : size - 1;
}

#define F(x)                                                                                       \
        {                                                                                          \
                x, #x                                                                              \
        }
static const struct flag oflags[] = {
        F(O_CREAT),
        F(O_EXCL),
        F(O_NOCTTY),
        F(O_TRUNC),
        F(O_APPEND),
        F(O_NONBLOCK),
        F(O_DSYNC),
        F(O_DIRECT),
        F(O_LARGEFILE),
        F(O_NOFOLLOW),
        F(O_NOATIME),
        F(O_CLOEXEC),
        {04000000, "__O_SYNC"},
        F(O_PATH),
        {020000000 | O_DIRECTORY, "O_TMPFILE"},
        F(O_DIRECTORY),
        F(O_ASYNC),
};
static const struct flag atflags[] = {
        F(AT_SYMLINK_NOFOLLOW), F(AT_REMOVEDIR),  F(AT_SYMLINK_FOLLOW),
        F(AT_NO_AUTOMOUNT),     F(AT_EMPTY_PATH), F(AT_EACCESS),
};
static const struct flag amode[] = {F(R_OK), F(W_OK), F(X_OK)};
static const struct flag prot[] = {F(PROT_READ), F(PROT_WRITE), F(PROT_EXEC)};
static const struct flag mmapf[] = {
        F(MAP_SHARED),    F(MAP_PRIVATE),         F(MAP_FIXED),     F(MAP_ANONYMOUS),
        F(MAP_GROWSDOWN), F(MAP_DENYWRITE),       F(MAP_NORESERVE), F(MAP_POPULATE),
        F(MAP_STACK),     F(MAP_FIXED_NOREPLACE),
};
static const struct flag clonef[] = {
        F(CLONE_VM),
        F(CLONE_FS),
        F(CLONE_FILES),
        F(CLONE_SIGHAND),
        F(CLONE_PIDFD),
        F(CLONE_PTRACE),
        F(CLONE_VFORK),
        F(CLONE_PARENT),
        F(CLONE_THREAD),
        F(CLONE_NEWNS),
        F(CLONE_SYSVSEM),
        F(CLONE_SETTLS),
        F(CLONE_PARENT_SETTID),
        F(CLONE_CHILD_CLEARTID),
        F(CLONE_UNTRACED),
        F(CLONE_CHILD_SETTID),
        F(CLONE_NEWCGROUP),
        F(CLONE_NEWUTS),
        F(CLONE_NEWIPC),
        F(CLONE_NEWUSER),
        F(CLONE_NEWPID),
        F(CLONE_NEWNET),
        F(CLONE_IO),
};
static const struct flag socktype[] = {F(SOCK_NONBLOCK), F(SOCK_CLOEXEC)};
#undef F

static const char *const families[] = {
        [AF_UNIX] = "AF_UNIX",       [AF_INET] = "AF_INET",     [AF_INET6] = "AF_INET6",
        [AF_NETLINK] = "AF_NETLINK", [AF_PACKET] = "AF_PACKET",
};
static const char *const socktypes[] = {
        [SOCK_STREAM] = "SOCK_STREAM",       [SOCK_DGRAM] = "SOCK_DGRAM",   [SOCK_RAW] = "SOCK_RAW",
        [SOCK_SEQPACKET] = "SOCK_SEQPACKET", [SOCK_PACKET] = "SOCK_PACKET",
};
static const char *const fcntls[] = {
        [F_DUPFD] = "F_DUPFD",   [F_GETFD] = "F_GETFD",   [F_SETFD] = "F_SETFD",
        [F_GETFL] = "F_GETFL",   [F_SETFL] = "F_SETFL",   [F_GETLK] = "F_GETLK",
        [F_SETLK] = "F_SETLK",   [F_SETLKW] = "F_SETLKW", [F_SETOWN] = "F_SETOWN",
        [F_GETOWN] = "F_GETOWN",
};

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

static size_t num(char *out, size_t size, uint64_t v)
{
        int64_t s = (int64_t)v;

        if (s > -4096 && s < (1 << 20))
                return (size_t)snprintf(out, size, "%lld", (long long)s);
        return (size_t)snprintf(out, size, "%#llx", (unsigned long long)v);
}

static size_t named(char *out, size_t size, uint64_t v, const char *const *names, size_t n)
{
        if (v < n && names[v])
                return (size_t)snprintf(out, size, "%s", names[v]);
        return num(out, size, v);
}

size_t trace_format_arg(char *out, size_t size, int nr, unsigned i, uint64_t v,
                        const uint64_t *args, const char *mem, int mem_len, int mem_truncated)
{
        enum arg_kind k = trace_arg_kind(nr, i);
        int32_t iv = (int32_t)v;

        switch (k) {
        case A_PATH:
                if (!v)
                        return (size_t)snprintf(out, size, "NULL");
                if (mem && mem_len >= 0)
                        return quote(out, size, mem, (size_t)mem_len, mem_truncated);
                return (size_t)snprintf(out, size, "%#llx", (unsigned long long)v);
        case A_SOCKADDR:
                if (!v)
                        return (size_t)snprintf(out, size, "NULL");
                if (mem && mem_len > 0)
                        return sockaddr(out, size, mem, (size_t)mem_len);
                return (size_t)snprintf(out, size, "%#llx", (unsigned long long)v);
        case A_FD:
                if (iv == AT_FDCWD)
                        return (size_t)snprintf(out, size, "AT_FDCWD");
                return (size_t)snprintf(out, size, "%d", iv);
        case A_INT:
                return num(out, size, v);
        case A_PTR:
                return v ? (size_t)snprintf(out, size, "%#llx", (unsigned long long)v)
                         : (size_t)snprintf(out, size, "NULL");
        case A_OFLAGS: {
                static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "3"};
                size_t n = (size_t)snprintf(out, size, "%s", acc[v & O_ACCMODE]);
                if (v & ~(uint64_t)O_ACCMODE && n + 1 < size) {
                        out[n++] = '|';
                        n += flags(out + n, size - n, v & ~(uint64_t)O_ACCMODE, oflags,
                                   ARRAY_SIZE(oflags), NULL);
                }
                return n;
        }
        case A_MODE:
                return (size_t)snprintf(out, size, "0%llo", (unsigned long long)(v & 07777));
        case A_ATFLAGS:
                return flags(out, size, (uint32_t)v, atflags, ARRAY_SIZE(atflags), "0");
        case A_AMODE:
                return flags(out, size, (uint32_t)v, amode, ARRAY_SIZE(amode), "F_OK");
        case A_SIGNAL:
                if (iv > 0 && iv < NSIG && sigabbrev_np(iv))
                        return (size_t)snprintf(out, size, "SIG%s", sigabbrev_np(iv));
                return num(out, size, v);
        case A_CLONE: {
                char rest[512];
                uint64_t sig = v & 0xff;
                flags(rest, sizeof(rest), v & ~0xffull, clonef, ARRAY_SIZE(clonef), NULL);
                if (sig && sig < NSIG && sigabbrev_np((int)sig))
                        return (size_t)snprintf(out, size, "%s%sSIG%s", rest, rest[0] ? "|" : "",
                                                sigabbrev_np((int)sig));
                return (size_t)snprintf(out, size, "%s", rest[0] ? rest : "0");
        }
        case A_PROT:
                return flags(out, size, v, prot, ARRAY_SIZE(prot), "PROT_NONE");
        case A_MMAP:
                return flags(out, size, v, mmapf, ARRAY_SIZE(mmapf), "0");
        case A_FAMILY:
                return named(out, size, (uint32_t)v, families, ARRAY_SIZE(families));
        case A_SOCKTYPE: {
                char rest[128];
                size_t n = named(out, size, v & 0xf, socktypes, ARRAY_SIZE(socktypes));
                if (!(v & ~0xfull))
                        return n;
                flags(rest, sizeof(rest), v & ~0xfull, socktype, ARRAY_SIZE(socktype), NULL);
                return n + (size_t)snprintf(out + n, size - n, "|%s", rest);
        }
        case A_FCNTL:
                return named(out, size, (uint32_t)v, fcntls, ARRAY_SIZE(fcntls));
        case A_HEX:
                break;
        }
        (void)args;
        return num(out, size, v);
}

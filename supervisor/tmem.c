#include "supervisor/tmem.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

static int read_proc_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
        _cleanup_close_ int fd = -1;
        char path[48];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = pread(fd, buf, len, (off_t)addr);
        if (n < 0)
                return errno == EIO ? -EFAULT : -errno;
        return (size_t)n == len ? 0 : -EFAULT;
}

int tmem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
        struct iovec local = {.iov_base = buf, .iov_len = len};
        struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
        ssize_t n;

        if (len == 0)
                return 0;
        if (addr + len < addr)
                return -EFAULT;
        n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        if (n == (ssize_t)len)
                return 0;
        if (n >= 0 || errno == EFAULT)
                return -EFAULT; /* a partial read stops at the first unmapped page */
        if (errno == EPERM || errno == ENOSYS)
                return read_proc_mem(tid, addr, buf, len);
        return -errno;
}

/* Page by page: a string may end just before an unmapped page, which a read of the whole
 * buffer would run into. */
ssize_t tmem_read_string(pid_t tid, uint64_t addr, char *buf, size_t size)
{
        const uint64_t page = 4096;
        size_t got = 0;

        while (got < size) {
                uint64_t at = addr + got;
                /* Most paths are short: a first copy of 256 bytes, then whole pages. */
                size_t chunk = (size_t)(page - at % page);

                if (got == 0 && chunk > 256)
                        chunk = 256;
                char *nul;
                int r;

                if (chunk > size - got)
                        chunk = size - got;
                r = tmem_read(tid, at, buf + got, chunk);
                if (r < 0)
                        return r;
                nul = memchr(buf + got, '\0', chunk);
                if (nul)
                        return nul - buf;
                got += chunk;
        }
        return -ENAMETOOLONG;
}

int tmem_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
        struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
        struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
        _cleanup_close_ int fd = -1;
        char path[48];
        ssize_t n;

        if (len == 0)
                return 0;
        n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
        if (n == (ssize_t)len)
                return 0;
        if (n >= 0 || errno == EFAULT || (errno != EPERM && errno != ENOSYS))
                return n >= 0 ? -EFAULT : -errno;
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = pwrite(fd, buf, len, (off_t)addr);
        return n == (ssize_t)len ? 0 : -EFAULT;
}

int tmem_id_valid(int listener, uint64_t id)
{
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
                return 0;
        return errno == ENOENT ? -ENOENT : -errno;
}

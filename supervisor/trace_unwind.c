/*
 * The unwinding of one backtrace job (trace_bt.c hands it over): libunwind's remote unwinder
 * with accessors of our own, run on the unwinder thread while the task sits in its ptrace
 * stop. Everything it reads belongs to a hostile program, and it never asks libunwind-ptrace
 * for anything, because _UPT_find_proc_info and _UPT_get_proc_name open the files the task
 * mapped by the path /proc/PID/maps shows — a path the program chooses: it can remove the
 * mapped file and put a FIFO there (the open blocks for good) or a symlink to a file it may
 * not read (the supervisor would open and parse it with its own rights; outside review R3).
 *
 * - Registers: a snapshot the main thread (the tracer, the only thread ptrace answers) took
 *   at the stop. Memory: pread on /proc/TID/mem, opened here through the /proc/TID the main
 *   thread opened at the stop. No ptrace call here.
 * - Unwind tables: from the task's memory, as libunwind-ptrace reads them anyway — the ELF
 *   header and program headers at the start of the mapping, then .eh_frame_hdr
 *   (PT_GNU_EH_FRAME), searched remotely by libunwind's dwarf_search_unwind_table. No file.
 * - Function names: the symbol table is not mapped, so the file is needed. It is opened
 *   only if it is provably the mapped one: the path from maps, by openat2 O_PATH with
 *   RESOLVE_NO_SYMLINKS (no symlink of the program's is followed, and O_PATH opens no FIFO
 *   nor device), then fstat: a regular file with the device and inode maps gives for the
 *   mapping, and only then reopened for reading through /proc/thread-self/fd, O_NONBLOCK,
 *   with the program's rights (this thread took them for good, creds.c). A path that no
 *   longer leads to that inode gives frames without names. /proc/PID/map_files would name
 *   the mapped file directly, but opening it needs CAP_CHECKPOINT_RESTORE, which an
 *   unprivileged supervisor lacks: one way that works for both is better than two.
 * - Caps: BT_FRAMES frames, BT_MEM_BYTES read from the task, BT_FILE_BYTES read from
 *   files, 256 KiB of maps, 64 program headers, 512 section headers. And trace_bt.c gives the
 *   whole job a deadline: whatever still blocks (a file on a hung NFS server) costs this
 *   thread, never the main thread nor a notifier.
 */
#include "supervisor/trace_int.h"
#include "supervisor/creds.h"
#include "supervisor/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define BT_MEM_BYTES  (64u << 10)
#define BT_FILE_BYTES (16u << 20)
#define MAPS_MAX      (256u << 10)
#define PHDRS_MAX     64
#define SHDRS_MAX     512
#define IMAGES_MAX    16
#define SYMS_CHUNK    256

/* libunwind's own search of a remote .eh_frame_hdr table: exported by libunwind-x86_64 (it
 * is what libunwind-ptrace calls) but declared in no public header. */
int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                       unw_proc_info_t *pi, int need_unwind_info, void *arg);

struct mapping {
        uint64_t lo, hi, off, ino;
        dev_t dev;
        const char *path; /* into unwind.maps; "" for anonymous memory */
};

/* A mapped ELF object, learnt from the task's memory, once per backtrace. */
struct image {
        const struct mapping *m; /* the mapping at offset 0 */
        uint64_t bias;           /* run-time address - link-time address */
        uint64_t eh_hdr;         /* .eh_frame_hdr in the task, or 0 */
        int fd;                  /* the file, for names: -1 not opened yet, -2 refused */
        bool ok;                 /* learnt: bias and eh_hdr are right */
};

struct unwind {
        struct bt_job *job;
        int mem_fd, maps_fd; /* /proc/TID/mem and maps */
        char *maps;
        struct mapping *map;
        size_t n_map;
        struct image images[IMAGES_MAX];
        size_t n_images;
        size_t mem_bytes, file_bytes;
        bool mem_hit;
};

static int mem_read(struct unwind *u, uint64_t addr, void *buf, size_t len)
{
        if (u->mem_bytes + len > BT_MEM_BYTES) {
                u->mem_hit = true;
                return -1;
        }
        u->mem_bytes += len;
        if (addr > 0x7fffffffffffull || len > 0x7fffffffffffull - addr)
                return -1; /* not a user address */
        return pread(u->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static int file_read(struct unwind *u, int fd, uint64_t off, void *buf, size_t len)
{
        if (u->file_bytes + len > BT_FILE_BYTES || off > INT64_MAX - len)
                return -1;
        u->file_bytes += len;
        return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* ---- the task's mappings --------------------------------------------------------------- */

static void read_maps(struct unwind *u)
{
        size_t len = 0, cap = 0, n = 0;
        ssize_t r;

        u->maps = xcalloc(1, MAPS_MAX + 1);
        while (len < MAPS_MAX && (r = read(u->maps_fd, u->maps + len, MAPS_MAX - len)) > 0)
                len += (size_t)r;
        for (char *l = u->maps; l && *l;) {
                char *nl = strchr(l, '\n');
                unsigned long long lo, hi, off, ino;
                unsigned maj, min;
                int name = 0;

                if (nl)
                        *nl = '\0';
                if (sscanf(l, "%llx-%llx %*s %llx %x:%x %llu %n", &lo, &hi, &off, &maj, &min, &ino,
                           &name) >= 6) {
                        if (n == cap) {
                                cap = cap ? cap * 2 : 256;
                                u->map = realloc(u->map, cap * sizeof(*u->map));
                                if (!u->map)
                                        abort();
                        }
                        u->map[n++] = (struct mapping){.lo = lo,
                                                       .hi = hi,
                                                       .off = off,
                                                       .ino = ino,
                                                       .dev = makedev(maj, min),
                                                       .path = name > 0 ? l + name : ""};
                }
                l = nl ? nl + 1 : NULL;
        }
        u->n_map = n;
}

static const struct mapping *mapping_of(const struct unwind *u, uint64_t ip)
{
        for (size_t i = 0; i < u->n_map; i++)
                if (ip >= u->map[i].lo && ip < u->map[i].hi)
                        return &u->map[i];
        return NULL;
}

static bool same_object(const struct mapping *a, const struct mapping *b)
{
        return a->ino == b->ino && a->dev == b->dev && strcmp(a->path, b->path) == 0;
}

/* ---- ELF objects, from the task's memory ------------------------------------------------ */

/* Find the load bias and .eh_frame_hdr of the object mapped at `m` (offset 0). */
static bool image_learn(struct unwind *u, struct image *img)
{
        Elf64_Ehdr eh;
        Elf64_Phdr ph[PHDRS_MAX];
        bool biased = false;

        if (mem_read(u, img->m->lo, &eh, sizeof(eh)) < 0 ||
            memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > PHDRS_MAX ||
            eh.e_phoff > img->m->hi - img->m->lo ||
            mem_read(u, img->m->lo + eh.e_phoff, ph, eh.e_phnum * sizeof(ph[0])) < 0)
                return false;
        /* The segment that maps file offset 0 starts at the mapping we are looking at. */
        for (unsigned i = 0; i < eh.e_phnum; i++)
                if (ph[i].p_type == PT_LOAD && ph[i].p_offset < 4096 && !biased) {
                        img->bias = img->m->lo - (ph[i].p_vaddr & ~4095ull);
                        biased = true;
                }
        for (unsigned i = 0; i < eh.e_phnum && biased; i++)
                if (ph[i].p_type == PT_GNU_EH_FRAME)
                        img->eh_hdr = img->bias + ph[i].p_vaddr;
        return biased;
}

/* The object mapped at ip: its mapping at offset 0 (the file's, or the vDSO's). */
static struct image *image_of(struct unwind *u, uint64_t ip)
{
        const struct mapping *m = mapping_of(u, ip), *base = NULL;
        struct image *img;

        if (!m || (m->ino == 0 && strcmp(m->path, "[vdso]") != 0))
                return NULL;
        for (size_t i = (size_t)(m - u->map) + 1; i-- > 0 && !base;)
                if (same_object(&u->map[i], m) && u->map[i].off == 0)
                        base = &u->map[i];
        if (!base)
                return NULL;
        for (size_t i = 0; i < u->n_images; i++)
                if (u->images[i].m == base)
                        return u->images[i].ok ? &u->images[i] : NULL;
        if (u->n_images == IMAGES_MAX)
                return NULL;
        img = &u->images[u->n_images++];
        *img = (struct image){.m = base, .fd = -1};
        img->ok = image_learn(u, img); /* remembered either way */
        return img->ok ? img : NULL;
}

/* The size of a DWARF pointer encoding the .eh_frame_hdr uses, 0 for the others. */
static size_t enc_size(uint8_t enc)
{
        switch (enc & 0x0f) {
        case 0x00: /* absptr */
        case 0x04: /* udata8 */
        case 0x0c: /* sdata8 */
                return 8;
        case 0x03: /* udata4 */
        case 0x0b: /* sdata4 */
                return 4;
        default:
                return 0;
        }
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need,
                          void *arg)
{
        struct unwind *u = arg;
        struct image *img = image_of(u, ip);
        const struct mapping *m = mapping_of(u, ip);
        uint8_t hdr[4];
        uint64_t count = 0;
        size_t psize, csize;
        unw_dyn_info_t di;

        if (!img || !img->eh_hdr || mem_read(u, img->eh_hdr, hdr, sizeof(hdr)) < 0)
                return -UNW_ENOINFO;
        /* version 1; the binary-search table as libunwind reads it: datarel sdata4 */
        psize = enc_size(hdr[1]);
        csize = enc_size(hdr[2]);
        if (hdr[0] != 1 || hdr[3] != 0x3b || !psize || !csize || (hdr[2] & 0x70) != 0 ||
            mem_read(u, img->eh_hdr + 4 + psize, &count, csize) < 0 || !count || count > 1u << 22)
                return -UNW_ENOINFO;
        memset(&di, 0, sizeof(di));
        di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
        di.start_ip = m->lo;
        di.end_ip = m->hi;
        di.u.rti.segbase = img->eh_hdr;
        di.u.rti.table_len = count * 8 / sizeof(unw_word_t); /* two 32-bit values an entry */
        di.u.rti.table_data = img->eh_hdr + 4 + psize + csize;
        return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
        /* Only for dynamic unwind info (get_dyn_info_list_addr): we give none. */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
        return -UNW_ENOINFO; /* JIT-registered unwind info lives in the program: not trusted */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
        if (write)
                return -UNW_EINVAL; /* never write into the task */
        return mem_read(arg, addr, val, sizeof(*val)) < 0 ? -UNW_EINVAL : 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
        const struct user_regs_struct *r = &((struct unwind *)arg)->job->regs;
        const unsigned long long v[] = {
                [UNW_X86_64_RAX] = r->rax, [UNW_X86_64_RDX] = r->rdx, [UNW_X86_64_RCX] = r->rcx,
                [UNW_X86_64_RBX] = r->rbx, [UNW_X86_64_RSI] = r->rsi, [UNW_X86_64_RDI] = r->rdi,
                [UNW_X86_64_RBP] = r->rbp, [UNW_X86_64_RSP] = r->rsp, [UNW_X86_64_R8] = r->r8,
                [UNW_X86_64_R9] = r->r9,   [UNW_X86_64_R10] = r->r10, [UNW_X86_64_R11] = r->r11,
                [UNW_X86_64_R12] = r->r12, [UNW_X86_64_R13] = r->r13, [UNW_X86_64_R14] = r->r14,
                [UNW_X86_64_R15] = r->r15, [UNW_X86_64_RIP] = r->rip,
        };

        if (write || reg < 0 || (size_t)reg >= ARRAY_SIZE(v))
                return -UNW_EBADREG;
        *val = v[reg];
        return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                        void *arg)
{
        return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
        return -UNW_EINVAL;
}

/* ---- function names, from the mapped file ---------------------------------------------- */

/* The file mapped at `m`, if the path maps shows still leads to it; -1 otherwise. */
static int open_mapped(const struct mapping *m)
{
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        char self[64];
        struct stat st;
        int path_fd, fd = -1;

        if (m->path[0] != '/' || m->ino == 0)
                return -1; /* anonymous, [vdso], or a path we cannot resolve from here */
        path_fd = (int)syscall(SYS_openat2, AT_FDCWD, m->path, &how, sizeof(how));
        if (path_fd < 0)
                return -1;
        /* O_PATH opened nothing yet: no FIFO waits, no device runs its open. */
        if (fstat(path_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m->ino &&
            st.st_dev == m->dev) {
                snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", path_fd);
                fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        }
        close(path_fd);
        return fd;
}

static bool is_function(const Elf64_Sym *s)
{
        unsigned type = ELF64_ST_TYPE(s->st_info);

        return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF;
}

/* The function of `fd`'s symbol table (else its dynamic one) that holds link-time address
 * `addr`: its name into buf, the offset into *off. Everything read is bounds-checked and
 * counted: the file is the program's. */
static int lookup(struct unwind *u, int fd, uint64_t addr, char *buf, size_t len, uint64_t *off)
{
        Elf64_Ehdr eh;
        Elf64_Shdr sh[SHDRS_MAX], *sym = NULL, *str;
        Elf64_Sym chunk[SYMS_CHUNK], best = {0};
        uint64_t n;

        if (file_read(u, fd, 0, &eh, sizeof(eh)) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
            eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
            eh.e_shnum == 0 || eh.e_shnum > SHDRS_MAX ||
            file_read(u, fd, eh.e_shoff, sh, eh.e_shnum * sizeof(sh[0])) < 0)
                return -UNW_ENOINFO;
        for (unsigned i = 0; i < eh.e_shnum; i++)
                if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !sym))
                        sym = &sh[i];
        if (!sym || sym->sh_link >= eh.e_shnum || sh[sym->sh_link].sh_type != SHT_STRTAB ||
            sym->sh_entsize != sizeof(Elf64_Sym))
                return -UNW_ENOINFO;
        str = &sh[sym->sh_link];
        n = sym->sh_size / sizeof(Elf64_Sym);
        for (uint64_t i = 0; i < n; i += SYMS_CHUNK) {
                size_t k = n - i < SYMS_CHUNK ? (size_t)(n - i) : SYMS_CHUNK;

                if (file_read(u, fd, sym->sh_offset + i * sizeof(Elf64_Sym), chunk,
                              k * sizeof(chunk[0])) < 0)
                        break; /* capped: the best so far */
                for (size_t j = 0; j < k; j++)
                        if (is_function(&chunk[j]) && chunk[j].st_value <= addr &&
                            chunk[j].st_value >= best.st_value &&
                            (!chunk[j].st_size || addr - chunk[j].st_value < chunk[j].st_size))
                                best = chunk[j];
        }
        if (!best.st_value || best.st_name >= str->sh_size || len < 2)
                return -UNW_ENOINFO;
        len = (size_t)(str->sh_size - best.st_name < len - 1 ? str->sh_size - best.st_name
                                                             : len - 1);
        memset(buf, 0, len + 1);
        if (file_read(u, fd, str->sh_offset + best.st_name, buf, len) < 0 || !buf[0])
                return -UNW_ENOINFO;
        *off = addr - best.st_value;
        return 0;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf, size_t len, unw_word_t *off,
                         void *arg)
{
        struct unwind *u = arg;
        struct image *img = image_of(u, ip);
        uint64_t o = 0;

        if (!img)
                return -UNW_ENOINFO;
        if (img->fd == -1)
                img->fd = u->job->files ? open_mapped(img->m) : -1;
        if (img->fd < 0) {
                img->fd = -2; /* not twice */
                return -UNW_ENOINFO;
        }
        if (lookup(u, img->fd, ip - img->bias, buf, len, &o) < 0)
                return -UNW_ENOINFO;
        *off = o;
        return 0;
}

static unw_accessors_t accessors = {
        .find_proc_info = find_proc_info,
        .put_unwind_info = put_unwind_info,
        .get_dyn_info_list_addr = get_dyn_info_list_addr,
        .access_mem = access_mem,
        .access_reg = access_reg,
        .access_fpreg = access_fpreg,
        .resume = resume,
        .get_proc_name = get_proc_name,
};

/* ---- the walk -------------------------------------------------------------------------- */

static void walk(struct unwind *u, unw_cursor_t *cur)
{
        struct bt_job *job = u->job;
        int r = 0;

        do {
                struct bt_frame *f = &job->frames[job->n_frames];
                const struct mapping *m;
                unw_word_t ip = 0, off = 0;

                if (unw_get_reg(cur, UNW_REG_IP, &ip) < 0 || !ip)
                        break;
                memset(f, 0, sizeof(*f));
                f->ip = ip;
                if (unw_get_proc_name(cur, f->function, sizeof(f->function), &off) == 0)
                        f->offset = off;
                else
                        f->function[0] = '\0';
                m = mapping_of(u, ip);
                snprintf(f->object, sizeof(f->object), "%s", m ? m->path : "");
                if (++job->n_frames == BT_FRAMES) {
                        job->truncated = true;
                        return;
                }
        } while ((r = unw_step(cur)) > 0);
        if (u->mem_hit) {
                job->truncated = true;
                snprintf(job->error, sizeof(job->error), "stopped: too much memory read");
        } else if (r < 0) {
                snprintf(job->error, sizeof(job->error), "stopped: %s", unw_strerror(r));
        }
}

void trace_unwind(struct bt_job *job)
{
        struct unwind u = {.job = job};
        unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
        unw_cursor_t cur;

        job->n_frames = 0;
        job->truncated = false;
        job->error[0] = '\0';
        /* With the program's rights (a task of the same uid, dumpable: exec kills the others,
         * ptrace.c), and through the directory of that very task: no pid reuse here. */
        u.mem_fd = openat(job->proc_fd, "mem", O_RDONLY | O_CLOEXEC);
        u.maps_fd = openat(job->proc_fd, "maps", O_RDONLY | O_CLOEXEC);
        read_maps(&u);
        if (u.mem_fd < 0 || u.maps_fd < 0)
                snprintf(job->error, sizeof(job->error), "cannot read the task");
        else if (!as || unw_init_remote(&cur, as, &u) < 0)
                snprintf(job->error, sizeof(job->error), "cannot start unwinding");
        else
                walk(&u, &cur);
        for (size_t i = 0; i < u.n_images; i++)
                if (u.images[i].fd >= 0)
                        close(u.images[i].fd);
        if (as)
                unw_destroy_addr_space(as);
        if (u.mem_fd >= 0)
                close(u.mem_fd);
        if (u.maps_fd >= 0)
                close(u.maps_fd);
        free(u.map);
        free(u.maps);
}

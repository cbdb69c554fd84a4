/*
 * A cow mount's journal: what each lower object was when the run first changed it, so that
 * `stockade apply` can refuse to overwrite a host file that changed since.
 *
 * One record a line, appended with a single write(2), O_APPEND:
 *
 *   B PATH TYPE MODE SIZE MTIME HASH\n
 *
 *   PATH   relative to the mount's root, no leading '/', escaped
 *   TYPE   f (regular file), d (directory), l (symlink), o (other)
 *   MODE   the permission bits, octal (07777)
 *   SIZE   bytes, decimal (a symlink: the target's length)
 *   MTIME  SECONDS.NANOSECONDS
 *   HASH   "2." and 16 hex digits: version 2 of the content hash (journal_hash_fd_v; a
 *          symlink: of its target; a directory or other: 0); 16 hex digits alone: version
 *          1, which sessions of older stockades hold, and which apply then computes too
 *
 * Escaping (PATH here, every value in the session file): the bytes 0x00-0x20, 0x7f and '%'
 * are written %XX (two upper-case hex digits); every other byte is itself.
 *
 * The first record of a path wins: later ones (a run that continues a session) are ignored.
 * A line cut short (no '\n': stockade killed in the middle of a write) or malformed is
 * skipped; the records before it hold.
 */
#ifndef STOCKADE_VFS_JOURNAL_H
#define STOCKADE_VFS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct journal_rec {
        char *path; /* unescaped, relative */
        char type;  /* 'f', 'd', 'l', 'o' */
        mode_t mode;
        uint64_t size;
        int64_t mtime_sec;
        long mtime_nsec;
        uint64_t hash;
        unsigned char hashv; /* which version of the hash (1 or 2) */
};

#define JOURNAL_HASH_CURRENT 2

struct journal {
        struct journal_rec *v; /* sorted by path after journal_load */
        size_t n, cap;
};

/* A 64-bit hash of a byte stream, word at a time. Same input, same value, on every run. */
struct journal_hasher {
        uint64_t h;
        uint64_t len;
        unsigned char tail[8];
        size_t ntail;
};
void journal_hash_init(struct journal_hasher *hs);
void journal_hash_update(struct journal_hasher *hs, const void *buf, size_t n);
uint64_t journal_hash_final(struct journal_hasher *hs);

/* The hash of an open file's content from offset 0 (pread): version 1 (journal_hasher, one
 * chain) or 2 (chunks in four lanes, two threads for a large file; journal.c). Returns 0
 * or -errno. journal_hash_fd is version 1. */
int journal_hash_fd(int fd, uint64_t *out);
int journal_hash_fd_v(int fd, int version, uint64_t *out);
/* Version 2 of bytes in memory (the value a file of that content gets). */
uint64_t journal_hash2_buf(const void *buf, size_t n);

/* Escape `in` into a malloc'd string (see above). */
char *journal_escape(const char *in);
/* Unescape in place; -EINVAL on a malformed %XX or an escaped NUL. */
int journal_unescape(char *s);

/*
 * The record of the object `fd` (an O_PATH or readable fd of it) as it is now: fstat, then
 * the hash of a regular file (reopened read-only through /proc/self/fd) or a symlink's
 * target. `path` is copied. Returns 0 or -errno.
 */
int journal_describe(int fd, const char *path, struct journal_rec *rec);
/* The same with the hash of `version` (apply: as the baseline it is compared with). */
int journal_describe_v(int fd, const char *path, int version, struct journal_rec *rec);

/* The record as one line (malloc'd, '\n'-terminated). */
char *journal_format(const struct journal_rec *rec);

/* Append one record to the journal fd (O_APPEND): one write. Returns 0 or -errno. */
int journal_append(int fd, const struct journal_rec *rec);

/* Parse a journal file's bytes; a cut or malformed line is skipped. The first record of a
 * path wins. Sorted by path. Returns 0 or -ENOMEM. */
int journal_parse(struct journal *j, const char *buf, size_t len);

/* journal_parse of the file at `path`; a missing file is an empty journal. */
int journal_load(struct journal *j, const char *path);

/* The record of `path`, or NULL. */
const struct journal_rec *journal_find(const struct journal *j, const char *path);

void journal_rec_free(struct journal_rec *rec);
void journal_free(struct journal *j);

#endif

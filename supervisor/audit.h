/*
 * Audit mode's report: every would-be denial is counted by kind (the call, what enforce mode
 * would have answered, and the arguments that tell kinds apart: syscalls/decode.h). At exit
 * the kinds are printed with their counts, even without -v; with -v the first call of each
 * kind is printed when it happens, with the process's name and executable; -vv prints every
 * call.
 */
#ifndef STOCKADE_AUDIT_H
#define STOCKADE_AUDIT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

struct supervisor;
struct call;

/* Kinds kept; calls of further kinds are only counted. A program that makes more than a
 * few dozen kinds of forbidden call is told so by the count. */
#define AUDIT_KINDS 64

struct audit_kind {
        int nr;
        uint32_t action; /* SECCOMP_RET_* enforce mode would have returned */
        uint64_t key[6]; /* the arguments, masked by decode_key_mask() */
        unsigned long long count;
        char what[160]; /* `socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)`, `mount(...)` */
};

/* Filled by the notifier threads, which hold no other lock meanwhile; read at exit once
 * they are joined. */
struct audit_log {
        /* Its own lock, never sup->lock: held only to find or add a kind, never across
         * output or a /proc read. */
        pthread_mutex_t lock;
        struct audit_kind kinds[AUDIT_KINDS];
        size_t n;
        unsigned long long unlisted; /* calls of kinds beyond the table */
};

void audit_init(struct audit_log *log);
/* Count one would-be denial of `call` (enforce mode's answer: `action`) and, with -v, print
 * it if it is the first of its kind (-vv: every time). Runs on a notifier thread. */
void audit_note(struct supervisor *sup, const struct call *call, uint32_t action);
/* The summary at exit: how many calls would have been denied, by kind. */
void audit_report(const struct supervisor *sup, FILE *to);

#endif

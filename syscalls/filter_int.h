/*
 * What filter.c (the rules and filter_decide) and filter_emit.c (the BPF program built from
 * them) share. Not for other users: filter.h is the interface.
 */
#ifndef STOCKADE_FILTER_INT_H
#define STOCKADE_FILTER_INT_H

#include "syscalls/filter.h"
#include "syscalls/table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X32_SYSCALL_BIT  0x40000000u
#define SYSCALL_NR_WRITE 1

enum cond_op {
        C_ALWAYS, /* the syscall's default */
        C_EQ,     /* (arg & mask) == value */
        C_ANY,    /* (arg & mask) != 0 */
};

/* When a rule is in the program at all. */
enum rule_when {
        W_ALWAYS,
        W_COUNTING, /* only under --max-procs (fork accounting) */
        W_UNSCOPED, /* only where Landlock cannot scope signals (ABI < 6) */
        W_SCOPED,   /* only where it can */
        W_DNS,      /* only when the supervisor answers DNS */
        W_NETPOL,   /* only under the network policy (not --net host) */
        W_TWINS,    /* only where twins of the host's namespace can exist (syscalls/net.h) */
        W_LOOKS,    /* only under --fast: the kernel answers the calls that look */
        W_PIDNS,    /* only with a pid namespace of the sandbox's own (--fast) */
        W_READS,    /* only under --fast with kernel reads: opens for reading */
        W_COW,      /* only where a copy-on-write mount is merged (fs_cow.h) */
};

/* One comparison of one argument. */
struct arg_cond {
        uint8_t arg;
        enum cond_op op;
        uint64_t mask, value;
};

struct arg_rule {
        enum syscall_id sc;
        uint8_t arg;
        enum cond_op op;
        uint64_t mask, value;
        enum verdict verdict; /* V_KERNEL, V_ERRNO or V_NOTIFY (to the row's handler) */
        int err;
        bool integrity; /* enforced in audit mode too: it keeps the supervisor in control */
        enum rule_when when;
        /* A second condition, on another argument, that must hold too (fcntl's F_SETFL
         * with O_ASYNC), and a third (socket's protocol, after its family and type). Left
         * out of an initializer each is {0, C_ALWAYS}: no condition. */
        struct arg_cond also, also2;
};

/* The rules, in order: first match wins; every syscall's list ends with C_ALWAYS. */
extern const struct arg_rule filter_arg_rules[];
extern const size_t filter_n_arg_rules;

/* The action of a row whose verdict does not depend on arguments, of a rule, and of a number
 * the table does not know. */
uint32_t filter_row_action(const struct filter_opts *o, const struct syscall_row *row);
uint32_t filter_rule_action(const struct filter_opts *o, const struct arg_rule *r);
uint32_t filter_unknown_action(const struct filter_opts *o);
/* Whether rule r is in the program at all under o. */
bool filter_rule_applies(const struct filter_opts *o, const struct arg_rule *r);
/* The rule's first condition, in the shape of its second. */
struct arg_cond filter_first_cond(const struct arg_rule *r);

#endif

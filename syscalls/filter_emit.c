/*
 * The BPF program, compiled from the table and the register-argument rules (filter.c): a
 * balanced binary search over runs of numbers with the same action, each leaf returning it
 * or jumping to the block of one syscall's rules (the head of filter.c says the layout).
 */
#include "syscalls/filter_int.h"
#include "supervisor/util.h"

#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Instructions are built with symbolic jump targets (labels) and resolved at the end:
 * conditional jumps must land within 255 instructions, which only the short argument
 * blocks use; the search tree uses BPF_JA, whose offset is 32 bits. */
struct insn {
        struct sock_filter f;
        int jt_label, jf_label, ja_label; /* -1: none (offset already in f) */
};

struct emitter {
        struct insn *v;
        size_t n, cap;
        size_t *labels; /* label -> instruction index */
        size_t nlabels, label_cap;
        int err;
};

static size_t emit(struct emitter *e, uint16_t code, uint32_t k, int jt, int jf)
{
        if (e->n == e->cap) {
                e->cap = e->cap ? 2 * e->cap : 256;
                e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
        }
        e->v[e->n] = (struct insn){
                .f = BPF_STMT(code, k), .jt_label = jt, .jf_label = jf, .ja_label = -1};
        return e->n++;
}

static int new_label(struct emitter *e)
{
        if (e->nlabels == e->label_cap) {
                e->label_cap = e->label_cap ? 2 * e->label_cap : 64;
                e->labels = xrealloc(e->labels, e->label_cap * sizeof(*e->labels));
        }
        e->labels[e->nlabels] = SIZE_MAX;
        return (int)e->nlabels++;
}

static void place(struct emitter *e, int label)
{
        e->labels[label] = e->n;
}

static void emit_ret(struct emitter *e, uint32_t action)
{
        emit(e, BPF_RET | BPF_K, action, -1, -1);
}

static void emit_ja(struct emitter *e, int label)
{
        size_t i = emit(e, BPF_JMP | BPF_JA, 0, -1, -1);
        e->v[i].ja_label = label;
}

static void emit_ld(struct emitter *e, uint32_t off)
{
        emit(e, BPF_LD | BPF_W | BPF_ABS, off, -1, -1);
}

/* Conditional jump; a label of -1 means "the next instruction". */
static void emit_jmp(struct emitter *e, uint16_t op, uint32_t k, int jt, int jf)
{
        emit(e, BPF_JMP | op | BPF_K, k, jt, jf);
}

#define OFF_NR     offsetof(struct seccomp_data, nr)
#define OFF_ARCH   offsetof(struct seccomp_data, arch)
#define OFF_ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i))

/* One condition: jump to `fail` when it does not hold, fall through when it does. */
static void emit_cond(struct emitter *e, const struct arg_cond *c, int fail)
{
        int hold = new_label(e);
        uint32_t lo_mask = (uint32_t)c->mask, hi_mask = (uint32_t)(c->mask >> 32);

        switch (c->op) {
        case C_ALWAYS:
                break;
        case C_EQ:
                if (lo_mask) {
                        emit_ld(e, OFF_ARG(c->arg));
                        if (lo_mask != 0xffffffffu)
                                emit(e, BPF_ALU | BPF_AND | BPF_K, lo_mask, -1, -1);
                        emit_jmp(e, BPF_JEQ, (uint32_t)c->value, -1, fail);
                }
                if (hi_mask) {
                        emit_ld(e, OFF_ARG(c->arg) + 4);
                        if (hi_mask != 0xffffffffu)
                                emit(e, BPF_ALU | BPF_AND | BPF_K, hi_mask, -1, -1);
                        emit_jmp(e, BPF_JEQ, (uint32_t)(c->value >> 32), -1, fail);
                }
                break;
        case C_ANY:
                if (lo_mask) {
                        emit_ld(e, OFF_ARG(c->arg));
                        emit_jmp(e, BPF_JSET, lo_mask, hold, hi_mask ? -1 : fail);
                }
                if (hi_mask) {
                        emit_ld(e, OFF_ARG(c->arg) + 4);
                        emit_jmp(e, BPF_JSET, hi_mask, hold, fail);
                }
                break;
        }
        place(e, hold);
}

/* One rule: jump to `next` when a condition fails, fall through to RET when both hold. */
static void emit_rule(struct emitter *e, const struct filter_opts *o, const struct arg_rule *r)
{
        int next = new_label(e);
        struct arg_cond c = filter_first_cond(r);

        emit_cond(e, &c, next);
        emit_cond(e, &r->also, next);
        emit_cond(e, &r->also2, next);
        emit_ret(e, filter_rule_action(o, r));
        place(e, next);
}

/* A run of numbers [lo, hi] that share one leaf. */
struct run {
        uint32_t lo, hi;
        uint32_t action; /* when args_sc < 0 */
        int args_sc;     /* >= 0: jump to this syscall's argument block */
};

static void emit_tree(struct emitter *e, const struct run *runs, size_t a, size_t b,
                      const int *args_label)
{
        if (a == b) {
                if (runs[a].args_sc >= 0)
                        emit_ja(e, args_label[runs[a].args_sc]);
                else
                        emit_ret(e, runs[a].action);
                return;
        }
        size_t mid = (a + b + 1) / 2;
        int right = new_label(e);

        /* nr >= pivot: take the JA to the right half; else skip it into the left half. */
        emit(e, BPF_JMP | BPF_JGE | BPF_K, runs[mid].lo, -1, -1);
        e->v[e->n - 1].f.jt = 0;
        e->v[e->n - 1].f.jf = 1;
        emit_ja(e, right);
        emit_tree(e, runs, a, mid - 1, args_label);
        place(e, right);
        emit_tree(e, runs, mid, b, args_label);
}

static size_t build_runs(const struct filter_opts *o, struct run *runs)
{
        size_t n = 0;

        for (uint32_t nr = 0; nr < SYSCALL_NR_LIMIT; nr++) {
                const struct syscall_row *row = syscall_lookup(AUDIT_ARCH_X86_64, (int)nr);
                struct run r = {.lo = nr, .hi = nr, .args_sc = -1};

                if (!row)
                        r.action = filter_unknown_action(o);
                else if (row->verdict == V_ARGS)
                        r.args_sc = (int)(row - syscall_table);
                else
                        r.action = filter_row_action(o, row);
                if (n && r.args_sc < 0 && runs[n - 1].args_sc < 0 && runs[n - 1].action == r.action)
                        runs[n - 1].hi = nr;
                else
                        runs[n++] = r;
        }
        return n;
}

/* Resolve labels into offsets; a conditional jump out of reach is a bug in this file. */
static int resolve(struct emitter *e, struct sock_fprog *prog)
{
        struct sock_filter *out;

        if (e->n > BPF_MAXINSNS)
                return -E2BIG;
        out = xcalloc(e->n, sizeof(*out));
        for (size_t i = 0; i < e->n; i++) {
                struct insn *in = &e->v[i];
                out[i] = in->f;
                if (in->ja_label >= 0)
                        out[i].k = (uint32_t)(e->labels[in->ja_label] - i - 1);
                if (in->jt_label >= 0 || in->jf_label >= 0) {
                        size_t jt = in->jt_label >= 0 ? e->labels[in->jt_label] - i - 1 : 0;
                        size_t jf = in->jf_label >= 0 ? e->labels[in->jf_label] - i - 1 : 0;
                        if (jt > 255 || jf > 255) {
                                free(out);
                                return -ERANGE;
                        }
                        out[i].jt = (uint8_t)jt;
                        out[i].jf = (uint8_t)jf;
                }
        }
        prog->filter = out;
        prog->len = (unsigned short)e->n;
        return 0;
}

/* --trace-level all: the shim's hand-off write(sock, msg, len, key) is allowed before anyone
 * serves the listener (filter.h). A program that guessed the key would only keep one write
 * out of the trace: the call is allowed in the kernel anyway. A = nr on entry and exit. */
static void emit_handoff(struct emitter *e, uint64_t key)
{
        int skip = new_label(e);

        emit_jmp(e, BPF_JEQ, SYSCALL_NR_WRITE, -1, skip);
        emit_ld(e, OFF_ARG(3));
        emit_jmp(e, BPF_JEQ, (uint32_t)key, -1, skip);
        emit_ld(e, OFF_ARG(3) + 4);
        emit_jmp(e, BPF_JEQ, (uint32_t)(key >> 32), -1, skip);
        emit_ret(e, SECCOMP_RET_ALLOW);
        place(e, skip);
        emit_ld(e, OFF_NR);
}

int filter_build(const struct filter_opts *o, struct sock_fprog *prog)
{
        struct emitter e = {0};
        struct run runs[SYSCALL_NR_LIMIT];
        int args_label[SC__COUNT];
        size_t nruns = build_runs(o, runs);
        int ret;

        emit_ld(&e, OFF_ARCH);
        emit_jmp(&e, BPF_JEQ, AUDIT_ARCH_X86_64, -1, -1);
        e.v[e.n - 1].f.jt = 1;
        emit_ret(&e, SECCOMP_RET_KILL_PROCESS);
        emit_ld(&e, OFF_NR);
        emit_jmp(&e, BPF_JSET, X32_SYSCALL_BIT, -1, -1);
        e.v[e.n - 1].f.jf = 1;
        emit_ret(&e, SECCOMP_RET_KILL_PROCESS);
        if (o->trace_all)
                emit_handoff(&e, o->handoff_key);

        for (size_t i = 0; i < SC__COUNT; i++)
                args_label[i] = syscall_table[i].verdict == V_ARGS ? new_label(&e) : -1;
        emit_tree(&e, runs, 0, nruns - 1, args_label);

        for (size_t i = 0; i < SC__COUNT; i++) {
                if (args_label[i] < 0)
                        continue;
                place(&e, args_label[i]);
                for (size_t r = 0; r < filter_n_arg_rules; r++)
                        if (filter_arg_rules[r].sc == (enum syscall_id)i &&
                            filter_rule_applies(o, &filter_arg_rules[r]))
                                emit_rule(&e, o, &filter_arg_rules[r]);
                emit_ret(&e, SECCOMP_RET_ERRNO | ENOSYS); /* a row without a default rule */
        }
        ret = resolve(&e, prog);
        free(e.v);
        free(e.labels);
        return ret;
}

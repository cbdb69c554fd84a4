#include "syscalls/bpf_sim.h"

#include <stddef.h>
#include <string.h>

static int load_word(const struct seccomp_data *d, uint32_t off, uint32_t *out)
{
        if (off % 4 || off + 4 > sizeof(*d))
                return -1;
        memcpy(out, (const char *)d + off, 4);
        return 0;
}

uint32_t bpf_sim_run(const struct sock_fprog *prog, const struct seccomp_data *d)
{
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

        for (size_t pc = 0; pc < prog->len; pc++) {
                const struct sock_filter *f = &prog->filter[pc];
                uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? x : k;

                switch (BPF_CLASS(f->code)) {
                case BPF_LD:
                        if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
                                if (load_word(d, k, &a) < 0)
                                        return UINT32_MAX;
                        } else if (f->code == (BPF_LD | BPF_IMM)) {
                                a = k;
                        } else if (f->code == (BPF_LD | BPF_MEM) && k < BPF_MEMWORDS) {
                                a = mem[k];
                        } else {
                                return UINT32_MAX;
                        }
                        break;
                case BPF_ST:
                        if (k >= BPF_MEMWORDS)
                                return UINT32_MAX;
                        mem[k] = a;
                        break;
                case BPF_ALU:
                        switch (BPF_OP(f->code)) {
                        case BPF_AND:
                                a &= src;
                                break;
                        case BPF_OR:
                                a |= src;
                                break;
                        case BPF_ADD:
                                a += src;
                                break;
                        case BPF_SUB:
                                a -= src;
                                break;
                        case BPF_RSH:
                                a = src < 32 ? a >> src : 0;
                                break;
                        case BPF_LSH:
                                a = src < 32 ? a << src : 0;
                                break;
                        default:
                                return UINT32_MAX;
                        }
                        break;
                case BPF_JMP: {
                        size_t jt = f->jt, jf = f->jf;
                        int taken;

                        switch (BPF_OP(f->code)) {
                        case BPF_JA:
                                pc += k;
                                if (pc >= prog->len)
                                        return UINT32_MAX;
                                continue;
                        case BPF_JEQ:
                                taken = a == src;
                                break;
                        case BPF_JGT:
                                taken = a > src;
                                break;
                        case BPF_JGE:
                                taken = a >= src;
                                break;
                        case BPF_JSET:
                                taken = (a & src) != 0;
                                break;
                        default:
                                return UINT32_MAX;
                        }
                        pc += taken ? jt : jf;
                        if (pc + 1 >= prog->len)
                                return UINT32_MAX;
                        break;
                }
                case BPF_RET:
                        return BPF_RVAL(f->code) == BPF_A ? a : k;
                case BPF_MISC:
                        if (BPF_MISCOP(f->code) == BPF_TAX)
                                x = a;
                        else
                                a = x;
                        break;
                default:
                        return UINT32_MAX;
                }
        }
        return UINT32_MAX;
}

/* A classic-BPF interpreter for seccomp programs: lets tests run the compiled filter on any
 * seccomp_data (other arches, x32 numbers, odd arguments) without installing it. */
#ifndef STOCKADE_BPF_SIM_H
#define STOCKADE_BPF_SIM_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/* Run prog on d. Returns the program's return value, or UINT32_MAX if the program is
 * malformed (bad opcode, jump or load out of range, falls off the end). */
uint32_t bpf_sim_run(const struct sock_fprog *prog, const struct seccomp_data *d);

#endif

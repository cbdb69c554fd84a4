/* bigbss: an executable whose .bss cannot be mapped under a small RLIMIT_AS, so that an exec
 * of it fails past the point of no return (attack_tree execghosts). Never meant to run. */
char bigbss_area[512 << 20]; /* external and read through volatile: not optimised away */

int main(void)
{
        return ((volatile char *)bigbss_area)[4096];
}

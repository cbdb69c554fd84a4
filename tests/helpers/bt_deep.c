/* A denied call three named functions deep: kill(1, 0) names a process outside the
 * sandbox (ESRCH). Built -O0 so that nothing is inlined or tail-called; the test reads the
 * backtrace of the denied call in the trace. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>

int bt_innermost(void);
int bt_middle(void);
int bt_outer(void);

__attribute__((noinline)) int bt_innermost(void)
{
        int r = kill(1, 0);

        return r < 0 ? errno : 0;
}

__attribute__((noinline)) int bt_middle(void)
{
        int r = bt_innermost();

        __asm__ volatile("" ::: "memory"); /* no tail call */
        return r;
}

__attribute__((noinline)) int bt_outer(void)
{
        int r = bt_middle();

        __asm__ volatile("" ::: "memory");
        return r;
}

int main(void)
{
        printf("%d\n", bt_outer());
        return 0;
}

/*
 * Calls that carry a sockaddr in memory (bind, sendto, sendmsg, sendmmsg;
 * connect is emulated: net_connect.c). As with
 * fs_passthrough.c, they run in the kernel untouched until the network policy lands; no
 * memory is read, so answering CONTINUE decides nothing that could be raced.
 */
#include "supervisor/notify.h"

int net_passthrough(struct supervisor *sup, struct call *call)
{
        call_continue(call);
        return 0;
}

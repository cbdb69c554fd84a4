/* The network hook of the policy file, until the network policy provides the real one. */
#include "supervisor/policy/net.h"

#include <stdio.h>

int policy_net_rule(struct config *cfg, const char *spec, bool deny, char *err, size_t errlen)
{
        snprintf(err, errlen, "not yet supported (network rules come with the network policy)");
        return -1;
}

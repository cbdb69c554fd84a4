/* The network hook of the policy file: each rule string goes to the network policy. */
#include "supervisor/policy/net.h"
#include "supervisor/net/netpol.h"

int policy_net_rule(struct config *cfg, const char *spec, bool deny, char *err, size_t errlen)
{
        return netpol_add_rule(&cfg->net, spec, deny, err, errlen) < 0 ? -1 : 0;
}

int policy_dns_static(struct config *cfg, const char *name, const char *ip, char *err,
                      size_t errlen)
{
        return netpol_add_static_parts(&cfg->net, name, ip, err, errlen) < 0 ? -1 : 0;
}

/*
 * The one place where the policy file hands a network rule to the network policy: each
 * string of `network.allow` and `network.deny` (the syntax of `--allow-net SPEC`). The
 * network policy provides the implementation; until it does, net.c refuses every rule.
 */
#ifndef STOCKADE_POLICY_NET_H
#define STOCKADE_POLICY_NET_H

#include "supervisor/options.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Add one rule, given as text, to cfg: an allow rule, or a deny rule when `deny`. Returns 0,
 * or -1 with a message of at most errlen bytes in err saying what is wrong with the rule (the
 * caller adds the file, line and column).
 */
int policy_net_rule(struct config *cfg, const char *spec, bool deny, char *err, size_t errlen);
/* `network.dns.static`: NAME answered with IP by the supervisor's DNS. The same returns. */
int policy_dns_static(struct config *cfg, const char *name, const char *ip, char *err,
                      size_t errlen);

#endif

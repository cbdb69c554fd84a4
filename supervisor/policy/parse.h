/*
 * Inside the policy reader: the parse context, the error helpers that put the file, line and
 * column in front of a message, and the walk of a mapping against a table of keys. The
 * schema itself (which keys, what they mean) is keys.c.
 */
#ifndef STOCKADE_POLICY_PARSE_H
#define STOCKADE_POLICY_PARSE_H

#include "supervisor/error.h"
#include "supervisor/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

struct pctx {
        const char *file;
        yaml_document_t *doc;
        struct config *cfg;
        struct error *err;
        struct error not_yet; /* the first key refused as "not yet", reported after the walk */
        const char *home;     /* what ~ means, for checking paths now rather than at run time */
        yaml_node_t *key;     /* the key whose value is being read (set by policy_walk) */
        void *entry;          /* what the keys of a list item fill in (keys.c) */
};

struct pkey;

/* What a key does with its value; `what` is its full name for messages ("limits.cpu"). */
typedef int (*pkey_fn)(struct pctx *c, const struct pkey *k, yaml_node_t *val, const char *what);

struct pkey {
        const char *name;
        pkey_fn fn;
        const char *flag; /* the `stockade run` flag it stands for (NULL: none) */
        const void *sub;  /* for a section: its table (struct ptable) */
};

struct ptable {
        const struct pkey *keys;
        size_t n;
};

/* "FILE:LINE:COL: " + the message, at node n (1-based). Returns -1. */
int policy_error(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* "FILE:LINE:COL: what: not yet supported" at node n (NULL: the current key), kept aside as
 * the run's refusal if it is the first one. Returns 0: the walk goes on, so that a real
 * mistake later in the file is reported first. */
int policy_not_yet(struct pctx *c, const yaml_node_t *n, const char *what);

yaml_node_t *policy_node(struct pctx *c, yaml_node_item_t i);
/* The text of a scalar that is not null, or -1 with an error naming `what`. */
int policy_scalar(struct pctx *c, yaml_node_t *n, const char *what, const char **out);
/* true or false, or -1 with an error. */
int policy_bool(struct pctx *c, yaml_node_t *n, const char *what, bool *out);
/* Require a sequence (a list); -1 with an error otherwise. */
int policy_sequence(struct pctx *c, yaml_node_t *n, const char *what);
/* For each item i (a yaml_node_item_t *) of sequence n. */
#define policy_each(n, i)                                                                          \
        for (yaml_node_item_t *i = (n)->data.sequence.items.start;                                 \
             i < (n)->data.sequence.items.top; i++)
/* A copy of s that the config owns (freed with it). */
const char *policy_own(struct pctx *c, const char *s);

/*
 * Walk mapping `n` against table t: every key must be a plain string, known (the nearest
 * known key is suggested) and given once; each value goes to its key's fn, in file order.
 * `what` names the mapping in messages ("" for the top level).
 */
int policy_walk(struct pctx *c, yaml_node_t *n, const struct ptable *t, const char *what);

/* The top-level table (keys.c). */
extern const struct ptable policy_top;

#endif

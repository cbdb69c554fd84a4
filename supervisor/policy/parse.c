/*
 * Reading a policy file: the bytes, libyaml's document, and the generic walk that checks
 * every mapping against its table of keys. Every message names the file, the 1-based line and
 * column libyaml gives (its marks count from 0) and the key.
 */
#include "supervisor/policy/parse.h"
#include "supervisor/policy/policy.h"
#include "supervisor/util.h"
#include "supervisor/walls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A policy is a page of text; a bigger file is a mistake (a binary, a log), not a policy. */
#define POLICY_MAX_BYTES (1 << 20)

static int vlocated(struct error *err, const char *file, yaml_mark_t m, const char *fmt, va_list ap)
{
        char msg[sizeof(err->msg)];

        vsnprintf(msg, sizeof(msg), fmt, ap);
        return make_error(err, 0, "%s:%zu:%zu: %s", file, m.line + 1, m.column + 1, msg);
}

int policy_error(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vlocated(c->err, c->file, n->start_mark, fmt, ap);
        va_end(ap);
        return -1;
}

int policy_not_yet(struct pctx *c, const yaml_node_t *n, const char *what)
{
        if (!n)
                n = c->key;
        make_error(&c->not_yet, 0, "%s:%zu:%zu: %s: not yet supported", c->file,
                   n->start_mark.line + 1, n->start_mark.column + 1, what);
        return 0;
}

yaml_node_t *policy_node(struct pctx *c, yaml_node_item_t i)
{
        return yaml_document_get_node(c->doc, i);
}

static const char *node_kind(const yaml_node_t *n)
{
        switch (n->type) {
        case YAML_SCALAR_NODE:
                return "a value";
        case YAML_SEQUENCE_NODE:
                return "a list";
        case YAML_MAPPING_NODE:
                return "a mapping";
        case YAML_NO_NODE:
                break;
        }
        return "nothing";
}

/* YAML's null: an empty plain scalar, ~ or null (a quoted "" is an empty string). */
static bool is_null(const yaml_node_t *n)
{
        const char *v = (const char *)n->data.scalar.value;

        return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
                strcmp(v, "NULL") == 0);
}

int policy_scalar(struct pctx *c, yaml_node_t *n, const char *what, const char **out)
{
        if (n->type != YAML_SCALAR_NODE)
                return policy_error(c, n, "%s: expected a value, not %s", what, node_kind(n));
        if (is_null(n))
                return policy_error(c, n, "%s: no value given", what);
        if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
                return policy_error(c, n, "%s: the value holds a NUL byte", what);
        *out = (const char *)n->data.scalar.value;
        return 0;
}

int policy_bool(struct pctx *c, yaml_node_t *n, const char *what, bool *out)
{
        const char *v;

        if (policy_scalar(c, n, what, &v) < 0)
                return -1;
        if (strcmp(v, "true") == 0)
                *out = true;
        else if (strcmp(v, "false") == 0)
                *out = false;
        else
                return policy_error(c, n, "%s: `%s` is not true or false", what, v);
        return 0;
}

int policy_sequence(struct pctx *c, yaml_node_t *n, const char *what)
{
        if (n->type != YAML_SEQUENCE_NODE)
                return policy_error(c, n, "%s: expected a list, not %s", what, node_kind(n));
        return 0;
}

const char *policy_own(struct pctx *c, const char *s)
{
        struct config *cfg = c->cfg;

        cfg->owned = xrealloc(cfg->owned, (cfg->n_owned + 1) * sizeof(*cfg->owned));
        cfg->owned[cfg->n_owned] = xstrdup(s);
        return cfg->owned[cfg->n_owned++];
}

/* Edit distance, for "did you mean": keys are short, so the quadratic table is fine. */
static size_t distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), d[32][32];

        if (la >= 32 || lb >= 32)
                return 99;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

static int unknown_key(struct pctx *c, yaml_node_t *kn, const struct ptable *t, const char *what,
                       const char *name)
{
        const char *near = NULL;
        size_t best = 3; /* suggest only a key at most 2 edits away */

        for (size_t i = 0; i < t->n; i++) {
                size_t d = distance(name, t->keys[i].name);
                if (d < best) {
                        best = d;
                        near = t->keys[i].name;
                }
        }
        if (near)
                return policy_error(c, kn, "%s%sunknown key `%s` (did you mean `%s`?)", what,
                                    *what ? ": " : "", name, near);
        return policy_error(c, kn, "%s%sunknown key `%s`", what, *what ? ": " : "", name);
}

int policy_walk(struct pctx *c, yaml_node_t *n, const struct ptable *t, const char *what)
{
        yaml_node_pair_t *p0;

        if (n->type != YAML_MAPPING_NODE)
                return policy_error(c, n, "%s: expected a mapping (key: value), not %s",
                                    *what ? what : "the policy", node_kind(n));
        p0 = n->data.mapping.pairs.start;
        for (yaml_node_pair_t *p = p0; p < n->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = policy_node(c, p->key), *vn = policy_node(c, p->value);
                const struct pkey *k = NULL;
                const char *name;
                char full[128];

                if (kn->type != YAML_SCALAR_NODE || is_null(kn))
                        return policy_error(c, kn, "%s%sa key must be a name, not %s", what,
                                            *what ? ": " : "", node_kind(kn));
                name = (const char *)kn->data.scalar.value;
                for (yaml_node_pair_t *q = p0; q < p; q++)
                        if (strcmp((const char *)policy_node(c, q->key)->data.scalar.value, name) ==
                            0)
                                return policy_error(c, kn,
                                                    "%s%s`%s` given twice (first at line %zu)",
                                                    what, *what ? ": " : "", name,
                                                    policy_node(c, q->key)->start_mark.line + 1);
                for (size_t i = 0; i < t->n && !k; i++)
                        if (strcmp(t->keys[i].name, name) == 0)
                                k = &t->keys[i];
                if (!k)
                        return unknown_key(c, kn, t, what, name);
                snprintf(full, sizeof(full), "%s%s%s", what, *what ? "." : "", name);
                c->key = kn;
                if (k->fn(c, k, vn, full) < 0)
                        return -1;
        }
        return 0;
}

/* The whole file, NUL-terminated, in *buf (malloc'ed). A directory or an oversized file is
 * refused by name; a pipe (`--policy <(...)`) is fine. */
static int read_file(const char *path, char **buf, size_t *len, struct error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *b = NULL;
        size_t n = 0, cap = 4096;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return make_error(err, errno, "%s: cannot read the policy file", path);
        if (S_ISDIR(st.st_mode))
                return make_error(err, 0, "%s: is a directory, not a policy file", path);
        b = xcalloc(1, cap + 1);
        for (;;) {
                ssize_t r = read(fd, b + n, cap - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return make_error(err, errno, "%s: cannot read the policy file", path);
                if (r == 0)
                        break;
                n += (size_t)r;
                if (n > POLICY_MAX_BYTES)
                        return make_error(err, 0, "%s: larger than %d bytes: not a policy file",
                                          path, POLICY_MAX_BYTES);
                if (n == cap) {
                        cap *= 2;
                        b = xrealloc(b, cap + 1);
                }
        }
        b[n] = '\0';
        *len = n;
        *buf = steal_ptr(b);
        return 0;
}

static int syntax_error(yaml_parser_t *p, const char *file, const char *buf, struct error *err)
{
        yaml_mark_t m = p->problem_mark;

        if (p->error == YAML_READER_ERROR) { /* bad bytes: libyaml gives their offset only */
                m.line = m.column = 0;
                for (size_t i = 0; i < p->problem_offset && buf[i]; i++) {
                        m.column = buf[i] == '\n' ? 0 : m.column + 1;
                        m.line += buf[i] == '\n';
                }
        }
        if (p->context)
                return make_error(err, 0, "%s:%zu:%zu: YAML syntax: %s (%s at line %zu)", file,
                                  m.line + 1, m.column + 1, p->problem, p->context,
                                  p->context_mark.line + 1);
        return make_error(err, 0, "%s:%zu:%zu: YAML syntax: %s", file, m.line + 1, m.column + 1,
                          p->problem ? p->problem : "cannot be parsed");
}

static int located(struct error *err, const char *file, yaml_mark_t m, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vlocated(err, file, m, fmt, ap);
        va_end(ap);
        return -1;
}

/* The anchor of an event that can carry one, or NULL. */
static const yaml_char_t *event_anchor(const yaml_event_t *e)
{
        if (e->type == YAML_SCALAR_EVENT)
                return e->data.scalar.anchor;
        if (e->type == YAML_SEQUENCE_START_EVENT)
                return e->data.sequence_start.anchor;
        if (e->type == YAML_MAPPING_START_EVENT)
                return e->data.mapping_start.anchor;
        return NULL;
}

/*
 * A first pass over the events, for what the document API hides: anchors and aliases (a
 * policy is read by people reviewing it, so each value is written where it applies), more
 * than one document, and an empty file.
 */
static int scan_events(const char *file, const char *buf, size_t len, struct error *err)
{
        yaml_parser_t p;
        int docs = 0, r = 0;

        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
        for (bool done = false; !done && r == 0;) {
                yaml_event_t e;

                if (!yaml_parser_parse(&p, &e)) {
                        r = syntax_error(&p, file, buf, err);
                        break;
                }
                if (e.type == YAML_ALIAS_EVENT)
                        r = located(err, file, e.start_mark,
                                    "alias `*%s`: anchors and aliases are not supported; write "
                                    "the value out",
                                    e.data.alias.anchor);
                else if (event_anchor(&e))
                        r = located(err, file, e.start_mark,
                                    "anchor `&%s`: anchors and aliases are not supported; write "
                                    "the value out",
                                    event_anchor(&e));
                else if (e.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
                        r = located(err, file, e.start_mark,
                                    "a second YAML document: a policy file holds one");
                done = e.type == YAML_STREAM_END_EVENT;
                yaml_event_delete(&e);
        }
        yaml_parser_delete(&p);
        if (r == 0 && docs == 0)
                return make_error(err, 0, "%s: empty policy file (it needs at least `version: 1`)",
                                  file);
        return r;
}

/* `version: 1`, checked before anything else so that a newer file is refused as such. */
static int check_version(struct pctx *c, yaml_node_t *root)
{
        if (root->type != YAML_MAPPING_NODE)
                return policy_error(c, root, "expected a mapping (key: value) at the top, not %s",
                                    node_kind(root));
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = policy_node(c, p->key), *v = policy_node(c, p->value);
                const char *s;

                if (k->type != YAML_SCALAR_NODE ||
                    strcmp((const char *)k->data.scalar.value, "version") != 0)
                        continue;
                if (policy_scalar(c, v, "version", &s) < 0)
                        return -1;
                if (strcmp(s, "1") != 0)
                        return policy_error(c, v,
                                            "version: `%s` is not a version this stockade reads "
                                            "(only 1)",
                                            s);
                return 0;
        }
        return policy_error(c, root, "no `version: 1` (the first line of a policy file)");
}

static int load_document(struct pctx *c, const char *buf, size_t len)
{
        yaml_parser_t p;
        yaml_document_t doc;
        yaml_node_t *root;
        int r;

        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
        if (!yaml_parser_load(&p, &doc)) {
                r = syntax_error(&p, c->file, buf, c->err);
                yaml_parser_delete(&p);
                return r;
        }
        yaml_parser_delete(&p);
        c->doc = &doc;
        root = yaml_document_get_root_node(&doc);
        if (!root)
                r = make_error(c->err, 0, "%s: empty policy file (it needs at least `version: 1`)",
                               c->file);
        else
                r = check_version(c, root) < 0 ? -1 : policy_walk(c, root, &policy_top, "");
        yaml_document_delete(&doc);
        c->doc = NULL;
        if (r == 0 && c->not_yet.msg[0]) {
                make_error(c->err, 0, "%s", c->not_yet.msg);
                return -1;
        }
        return r;
}

int policy_load(struct config *cfg, const char *path, struct error *err)
{
        struct pctx c = {.file = path, .cfg = cfg, .err = err, .home = walls_user_home()};
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (!*path)
                return make_error(err, 0, "run: --policy: empty file name");
        if (read_file(path, &buf, &len, err) < 0 || scan_events(path, buf, len, err) < 0)
                return -1;
        return load_document(&c, buf, len);
}

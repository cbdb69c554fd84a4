/*
 * `stockade diff`'s lines (cowdiff.h): one change a line, and every name or target quoted so
 * that what reaches a terminal is what the session holds, shown as it is or escaped, never
 * obeyed (controls, bidirectional reordering) and never able to break a line.
 */
#include "supervisor/vfs/cowdiff.h"
#include "supervisor/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The bytes of one character at p: n > 0 written as they are, -n escaped. Escaped: '"', '\\',
 * a control (C0, DEL, and C1, U+0080-U+009F, which a terminal may obey as raw CSI), a
 * bidirectional mark, embedding or isolate (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069:
 * they reorder what the terminal shows, so a line could read as another), and a byte that
 * is not valid UTF-8.
 */
static int char_len(const unsigned char *p)
{
        unsigned cp;
        int n;

        if (*p < 0x80)
                return *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\' ? -1 : 1;
        if (*p >= 0xc2 && *p <= 0xdf)
                n = 2, cp = *p & 0x1f;
        else if (*p >= 0xe0 && *p <= 0xef)
                n = 3, cp = *p & 0x0f;
        else if (*p >= 0xf0 && *p <= 0xf4)
                n = 4, cp = *p & 0x07;
        else
                return -1;
        for (int i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80) /* the terminating NUL stops it too */
                        return -1;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return -1; /* overlong, beyond Unicode, a surrogate */
        if (cp <= 0x9f || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
            (cp >= 0x2066 && cp <= 0x2069))
                return -n;
        return n;
}

void cowdiff_quote(FILE *out, const char *s)
{
        static const char esc[] = "\a\b\t\n\v\f\r\"\\", letter[] = "abtnvfr\"\\";
        const unsigned char *p;
        int n;

        for (p = (const unsigned char *)s; *p; p += n)
                if ((n = char_len(p)) < 0)
                        break;
        if (!*p) {
                fputs(s, out);
                return;
        }
        fputc('"', out);
        for (p = (const unsigned char *)s; *p;) {
                n = char_len(p);
                if (n > 0) {
                        fwrite(p, 1, (size_t)n, out);
                        p += n;
                        continue;
                }
                for (; n < 0; n++, p++) {
                        const char *e = strchr(esc, *p);

                        if (e)
                                fprintf(out, "\\%c", letter[e - esc]);
                        else
                                fprintf(out, "\\%03o", *p);
                }
        }
        fputc('"', out);
}

static void print_path(FILE *out, const char *prefix, const char *path, bool dir)
{
        _cleanup_free_ char *full = NULL;

        if (asprintf(&full, "%s%s%s", prefix, path, dir ? "/" : "") < 0)
                abort();
        cowdiff_quote(out, full);
}

/* What the reviewer must see of a new object's mode: all but 644 for a file, 755 for a
 * directory or an executable (set-ID, sticky and world-writable bits included). */
static bool unusual_mode(const struct cow_change *c)
{
        if (c->type == 'l')
                return false;
        return c->type == 'd' ? c->mode != 0755 : c->mode != 0644 && c->mode != 0755;
}

static void print_mode(FILE *out, const struct cow_change *c, const char *lead)
{
        if (unusual_mode(c))
                fprintf(out, "%smode %o", lead, (unsigned)c->mode);
}

static void print_target(FILE *out, const struct cow_change *c, const char *lead)
{
        if (!c->target)
                return;
        fputs(lead, out);
        cowdiff_quote(out, c->target);
}

void cowdiff_print(FILE *out, const struct cow_change *c, const char *prefix)
{
        if (c->op == COW_SAME)
                return;
        fprintf(out, "%c ", c->op);
        if (c->op == COW_REN) {
                print_path(out, prefix, c->old_path, false);
                fputs(" -> ", out);
        }
        print_path(out, prefix, c->path, (c->op == COW_DEL ? c->old_type : c->type) == 'd');
        if (c->op == COW_TYPE) {
                fprintf(out, " (%s -> %s", cowdiff_type_name(c->old_type),
                        cowdiff_type_name(c->type));
                print_target(out, c, " to ");
                print_mode(out, c, "; ");
                fputc(')', out);
        } else if ((c->op == COW_MOD || c->op == COW_REN) && c->mode != c->old_mode) {
                fprintf(out, " (%smode %o -> %o)", c->content ? "content; " : "",
                        (unsigned)c->old_mode, (unsigned)c->mode);
        } else if (c->op == COW_MOD && c->times) {
                fputs(" (times)", out);
        } else if (c->target) {
                print_target(out, c, " (symlink to ");
                fputc(')', out);
        } else if (c->op == COW_ADD && c->type == 'o') {
                fputs(" (a FIFO, socket or device: apply leaves it in the session)", out);
        } else if (c->op == COW_ADD && unusual_mode(c)) {
                print_mode(out, c, " (");
                fputc(')', out);
        }
        fputc('\n', out);
}

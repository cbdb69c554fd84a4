/*
 * `stockade diff`'s lines (supervisor/vfs/cowprint.c), from changes made by hand: what a
 * reviewer must see (a new object's unusual mode, a symlink's target) and names that must
 * reach a terminal escaped (controls it would obey, bidirectional marks that reorder the
 * line, bytes that are not UTF-8) while ordinary UTF-8 is shown as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/util.h"
#include "supervisor/vfs/cowdiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *line_of(const struct cow_change *c)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        cowdiff_print(f, c, "");
        fclose(f);
        return buf;
}

static char *quoted(const char *s)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        cowdiff_quote(f, s);
        fclose(f);
        return buf;
}

static void quoting(void **state)
{
        static const struct {
                const char *name, *want;
        } cases[] = {
                {"plain.txt", "plain.txt"},
                {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},
                {"emoji\xf0\x9f\x98\x80", "emoji\xf0\x9f\x98\x80"},
                {"a\nb", "\"a\\nb\""},
                {"q\"\\", "\"q\\\"\\\\\""},
                /* C1 CSI, as UTF-8 (U+009B) and as a raw byte */
                {"c1\xc2\x9b"
                 "2K",
                 "\"c1\\302\\2332K\""},
                {"raw\x9b"
                 "2K",
                 "\"raw\\2332K\""},
                /* right-to-left override, first-strong isolate */
                {"x\xe2\x80\xaetxt.sh", "\"x\\342\\200\\256txt.sh\""},
                {"y\xe2\x81\xa8z", "\"y\\342\\201\\250z\""},
                /* not UTF-8: a lone byte, an overlong '/', a surrogate, a cut sequence */
                {"bad\xff", "\"bad\\377\""},
                {"over\xc0\xaf", "\"over\\300\\257\""},
                {"sur\xed\xa0\x80", "\"sur\\355\\240\\200\""},
                {"cut\xe6\x97", "\"cut\\346\\227\""},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *q = quoted(cases[i].name);

                if (strcmp(q, cases[i].want) != 0)
                        fail_msg("case %zu: got %s, want %s", i, q, cases[i].want);
                free(q);
        }
}

static void what_a_reviewer_sees(void **state)
{
        static const struct {
                struct cow_change c;
                const char *want;
        } cases[] = {
                {{.op = COW_ADD, .path = "f", .type = 'f', .mode = 0644}, "A f\n"},
                {{.op = COW_ADD, .path = "x", .type = 'f', .mode = 0755}, "A x\n"},
                {{.op = COW_ADD, .path = "w", .type = 'f', .mode = 0666}, "A w (mode 666)\n"},
                {{.op = COW_ADD, .path = "s", .type = 'f', .mode = 04755}, "A s (mode 4755)\n"},
                {{.op = COW_ADD, .path = "pub", .type = 'd', .mode = 01777},
                 "A pub/ (mode 1777)\n"},
                {{.op = COW_ADD, .path = "d", .type = 'd', .mode = 0755}, "A d/\n"},
                /* said up front: apply skips it (an outside tester read "A fifo1", then saw
                 * apply leave it out) */
                {{.op = COW_ADD, .path = "p", .type = 'o', .mode = 0644},
                 "A p (a FIFO, socket or device: apply leaves it in the session)\n"},
                {{.op = COW_ADD, .path = "l", .type = 'l', .mode = 0777, .target = "/etc/passwd"},
                 "A l (symlink to /etc/passwd)\n"},
                {{.op = COW_ADD, .path = "n", .type = 'l', .mode = 0777, .target = "a\nb"},
                 "A n (symlink to \"a\\nb\")\n"},
                {{.op = COW_MOD,
                  .path = "l",
                  .type = 'l',
                  .old_type = 'l',
                  .content = true,
                  .target = "new"},
                 "M l (symlink to new)\n"},
                {{.op = COW_TYPE, .path = "t", .type = 'l', .old_type = 'f', .target = "x"},
                 "T t (file -> symlink to x)\n"},
                {{.op = COW_TYPE, .path = "t", .type = 'd', .old_type = 'f', .mode = 0700},
                 "T t/ (file -> dir; mode 700)\n"},
                {{.op = COW_MOD,
                  .path = "m",
                  .type = 'f',
                  .old_type = 'f',
                  .mode = 0644,
                  .old_mode = 0644,
                  .times = true},
                 "M m (times)\n"},
                {{.op = COW_MOD,
                  .path = "m",
                  .type = 'f',
                  .old_type = 'f',
                  .mode = 0600,
                  .old_mode = 0644},
                 "M m (mode 644 -> 600)\n"},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *l = line_of(&cases[i].c);

                if (strcmp(l, cases[i].want) != 0)
                        fail_msg("case %zu: got %s want %s", i, l, cases[i].want);
                free(l);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(quoting),
                cmocka_unit_test(what_a_reviewer_sees),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Remapped mounts (`--ro|--rw|--cow HOST:SANDBOX`, docs/plans/remapped-mounts.md): what phase 1
 * refuses is refused before anything runs: exit 125, one line naming the flag and the path at
 * fault (not the blanket "not yet supported" of before), and the command's marker file never
 * made. Each refusal has a control that differs in the one point and runs, and a source that
 * would make the refused run work if its check were missing (a missing check is caught, not
 * covered by another failure). Where no mount namespace can be made, every remap is refused;
 * the test checks that on such a host and exits 77, and elsewhere simulates it with
 * STOCKADE_TEST_DISABLE (mntns; userns when not root).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/security/remap_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What every remap got before phase 1: a refusal for this reason says nothing of the checks. */
#define BLANKET_REFUSAL "a different sandbox path is not yet supported"

/* ---- the refused spellings ------------------------------------------------------------------- */

/* Each refused spelling, with a control that differs in the one point and runs. Keys: @R the
 * case's directory, @S a source, @H the fake HOME, @T the session stores' directory. */
static const struct refusal {
        const char *what;
        const char *refused[8], *control[8];
        const char *names; /* what the message must name (with the flag, on one line) */
        const char *from;  /* where the run starts (default: the workspace) */
} refusals[] = {
        {"target missing", {"--ro", "@S:@R/missing"}, {"--ro", "@S:@R/tdir"}, "@R/missing", NULL},
        {"target missing (--rw)",
         {"--rw", "@S:@R/missing"},
         {"--rw", "@S:@R/tdir"},
         "@R/missing",
         NULL},
        {"target missing (--cow)",
         {"--state-dir", "@T/ref", "--cow", "@S:@R/missing"},
         {"--state-dir", "@T/ref", "--cow", "@S:@R/tdir"},
         "@R/missing",
         NULL},
        {"target a regular file",
         {"--ro", "@S:@R/tfile"},
         {"--ro", "@S:@R/tdir"},
         "@R/tfile",
         NULL},
        {"target a symlink to a directory",
         {"--ro", "@S:@R/tlink"},
         {"--ro", "@S:@R/tdir"},
         "@R/tlink",
         NULL},
        {"target beneath a symlink",
         {"--ro", "@S:@R/dlink/inner"},
         {"--ro", "@S:@R/real/inner"},
         "@R/dlink/inner",
         NULL},
        {"target a hidden path",
         {"--hide", "@R/hid", "--ro", "@S:@R/hid"},
         {"--hide", "@R/hid", "--ro", "@S:@R/tdir"},
         "@R/hid",
         NULL},
        {"target beneath a hidden path",
         {"--hide", "@R/hid", "--ro", "@S:@R/hid/inner"},
         {"--hide", "@R/hid", "--ro", "@S:@R/tdir"},
         "@R/hid/inner",
         NULL},
        {"target beneath a default hidden path (~/.ssh)",
         {"--ro", "@S:@H/.ssh/inner"},
         {"--ro", "@S:@H/proj"},
         "@H/.ssh/inner",
         NULL},
        {"a --cow target beneath --tmp",
         {"--state-dir", "@T/ref", "--tmp", "@R/tmpd", "--cow", "@S:@R/tmpd/inner"},
         {"--state-dir", "@T/ref", "--tmp", "@R/tmpd", "--cow", "@S:@R/tdir"},
         "@R/tmpd/inner",
         NULL},
        {"a file source beneath --tmp",
         {"--tmp", "@R/tmpd", "--ro", "@R/srcfile:@R/tmpd/f"},
         {"--tmp", "@R/tmpd", "--ro", "@S:@R/tmpd/d"},
         "@R/srcfile",
         NULL},
        {"a --cow target beneath --cow",
         {"--state-dir", "@T/ref", "--cow", "@R/cowd", "--cow", "@S:@R/cowd/inner"},
         {"--state-dir", "@T/ref", "--cow", "@R/cowd", "--cow", "@S:@R/tdir"},
         "@R/cowd/inner",
         NULL},
        {"target a strict ancestor of the working directory",
         {"--ro", "@S:@R/anc"},
         {"--ro", "@S:@R/anc/sib"},
         "@R/anc",
         "@R/anc/cwd"},
        {"an identity --rw beneath the target",
         {"--ro", "@S:@R/tdir", "--rw", "@R/tdir/inner"},
         {"--ro", "@S:@R/tdir", "--rw", "@R/other"},
         "@R/tdir",
         NULL},
        {"an identity --ro beneath the target",
         {"--rw", "@S:@R/tdir", "--ro", "@R/tdir/inner"},
         {"--rw", "@S:@R/tdir", "--ro", "@R/other"},
         "@R/tdir",
         NULL},
        {"source hidden by default (~/.ssh)",
         {"--ro", "@H/.ssh:@R/tdir"},
         {"--ro", "@H/proj:@R/tdir"},
         "@H/.ssh",
         NULL},
        {"source beneath --hide",
         {"--hide", "@R/priv", "--ro", "@R/priv/in:@R/tdir"},
         {"--hide", "@R/priv", "--ro", "@R/pub:@R/tdir"},
         "@R/priv/in",
         NULL},
        {"source missing",
         {"--ro", "@R/nosuch:@R/tdir"},
         {"--ro", "@S:@R/tdir"},
         "@R/nosuch",
         NULL},
        {"a file source at a directory target",
         {"--ro", "@R/srcfile:@R/tdir"},
         {"--ro", "@S:@R/tdir"},
         "@R/srcfile",
         NULL},
        /* an exec rule is made from a host path: one in a target would name another file */
        {"--allow-exec of a path in a target",
         {"--ro", "@S:@R/tdir", "--allow-exec", "/usr/bin", "--allow-exec", "@R/tdir/inner"},
         {"--ro", "@S:@R/tdir", "--allow-exec", "/usr/bin", "--allow-exec", "@R/other"},
         "@R/tdir/inner",
         NULL},
        /* found by an outside attack: the kernel's own trees shown elsewhere escaped the
         * /proc and /dev views; a target in a hidden path beneath another remap's source went
         * uncovered; one tree read-only and writable kept the writable's metadata rights */
        {"source /proc", {"--ro", "/proc:@R/tdir"}, {"--ro", "@S:@R/tdir"}, "`/proc`", NULL},
        {"source /dev", {"--rw", "/dev:@R/tdir"}, {"--rw", "@S:@R/tdir"}, "`/dev`", NULL},
        {"source /sys/class",
         {"--ro", "/sys/class:@R/tdir"},
         {"--ro", "@S:@R/tdir"},
         "`/sys/class`",
         NULL},
        {"source /", {"--ro", "/:@R/tdir"}, {"--ro", "@S:@R/tdir"}, "`/`", NULL},
        {"target in a hidden path of another remap's source",
         {"--ro", "@H:@R/tdir", "--ro", "@S:@R/tdir/.ssh/inner"},
         {"--ro", "@H:@R/tdir", "--ro", "@S:@R/tdir/proj"},
         "@R/tdir/.ssh/inner",
         NULL},
        {"one source read-only and writable",
         {"--ro", "@S:@R/tdir", "--rw", "@S:@R/other"},
         {"--ro", "@S:@R/tdir", "--rw", "@R/pub:@R/other"},
         "is given writable too",
         NULL},
        /* plan §2.4: a lower must not change under a mounted overlay */
        {"--rw source overlapping a --cow mount's host tree",
         {"--state-dir", "@T/ref", "--cow", "@R/cowd", "--rw", "@R/cowd/inner:@R/tdir"},
         {"--state-dir", "@T/ref", "--cow", "@R/cowd", "--rw", "@R/other:@R/tdir"},
         "@R/cowd/inner",
         NULL},
};

/* The line of stderr that names `names` and a mount flag; NULL if none. */
static const char *refusal_line(const char *err, const char *names, char *line, size_t len)
{
        for (const char *p = err; p && *p;) {
                const char *end = strchrnul(p, '\n');
                size_t n = (size_t)(end - p) < len - 1 ? (size_t)(end - p) : len - 1;

                memcpy(line, p, n);
                line[n] = '\0';
                if (strstr(line, names) &&
                    (strstr(line, "--ro") || strstr(line, "--rw") || strstr(line, "--cow")))
                        return line;
                p = *end ? end + 1 : NULL;
        }
        return NULL;
}

static void make_refusal_tree(const char *r, const char *s)
{
        sh("mkdir -p '%s/inner' '%s/tdir/inner' '%s/real/inner' '%s/hid/inner' '%s/tmpd/inner' "
           "'%s/cowd/inner' '%s/anc/cwd' '%s/anc/sib' '%s/other' '%s/priv/in' '%s/pub' "
           "&& printf S > '%s/f' && printf F > '%s/tfile' && printf F > "
           "'%s/srcfile' && ln -s tdir '%s/tlink' && ln -s real '%s/dlink'",
           s, r, r, r, r, r, r, r, r, r, r, s, r, r, r, r);
        chown_tree(r);
}

/* Run `opts` (+ --rw MARKS) from `from`; 1 if the command ran (its marker is there). */
static bool ran(const char *from, const char *const *opts, struct run_result *r)
{
        char marker[sizeof(marks) + 8], script[sizeof(marker) + 64];
        const char *v[16];
        size_t n = 0;

        snprintf(marker, sizeof(marker), "%s/ran", marks);
        unlink(marker);
        v[n++] = "--rw", v[n++] = marks;
        for (; *opts; opts++)
                v[n++] = *opts;
        v[n] = NULL;
        snprintf(script, sizeof(script), "echo ran > '%s'; echo RAN", marker);
        run_from(from, v, script, r);
        return access(marker, F_OK) == 0 || strstr(r->out, "RAN");
}

static void refused_before_running(void **state)
{
        char rdir[PATH_MAX + 16], s[PATH_MAX + 48], kr[PATH_MAX + 24], ks[PATH_MAX + 56];
        char kh[PATH_MAX + 24], kt[PATH_MAX + 24];
        const char *keys[] = {kr, ks, kh, kt, NULL};

        (void)state;
        need_ns();
        snprintf(rdir, sizeof(rdir), "%s/ref", top);
        snprintf(s, sizeof(s), "%s/" SRC_MARK "-src", rdir);
        snprintf(kr, sizeof(kr), "R%s", rdir);
        snprintf(ks, sizeof(ks), "S%s", s);
        snprintf(kh, sizeof(kh), "H%s", home);
        snprintf(kt, sizeof(kt), "T%s", states);
        make_refusal_tree(rdir, s);
        for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
                const struct refusal *c = &refusals[i];
                char bad[8][2 * PATH_MAX], good[8][2 * PATH_MAX], names[2 * PATH_MAX];
                char from[2 * PATH_MAX], line[4096];
                const char *vb[9], *vg[9];
                struct run_result r;
                size_t n;

                for (n = 0; c->refused[n]; n++)
                        expand(bad[n], sizeof(bad[n]), c->refused[n], keys), vb[n] = bad[n];
                vb[n] = NULL;
                for (n = 0; c->control[n]; n++)
                        expand(good[n], sizeof(good[n]), c->control[n], keys), vg[n] = good[n];
                vg[n] = NULL;
                expand(names, sizeof(names), c->names, keys);
                if (c->from)
                        expand(from, sizeof(from), c->from, keys);
                else
                        snprintf(from, sizeof(from), "%s", ws);

                /* The control runs: the refusal below is for the one point that differs. */
                if (!ran(from, vg, &r) || r.exit_code != 0) {
                        note("%s: the control did not run (exit %d): %s", c->what, r.exit_code,
                             r.err);
                        runner_free(&r);
                        continue;
                }
                runner_free(&r);

                if (ran(from, vb, &r) || r.exit_code != 125)
                        note("%s: not refused (exit %d, ran: %s): %s", c->what, r.exit_code,
                             strstr(r.out, "RAN") ? "yes" : "no", r.err);
                else if (!refusal_line(r.err, names, line, sizeof(line)))
                        note("%s: no line names the flag and %s: %s", c->what, names, r.err);
                else if (strstr(line, BLANKET_REFUSAL))
                        note("%s: refused as before, not for its reason: %s", c->what, line);
                runner_free(&r);
        }
        check_report();
}

/* Without a mount namespace every remap is refused, in one line that names the flag and says
 * why; the identity flags still run. On this host when it has none; else made so with
 * STOCKADE_TEST_DISABLE (mntns; and userns, which only takes a non-root user's away). */
static void refused_without_namespace(void **state)
{
        static const char *const flags[] = {"--ro", "--rw", "--cow"};
        char rdir[PATH_MAX + 16], s[PATH_MAX + 48], t[PATH_MAX + 32], spec[3 * PATH_MAX];
        char state_dir[PATH_MAX + 32], line[4096];
        const char *how[] = {"mntns", "userns"};
        size_t nhow = geteuid() == 0 ? 1 : 2;

        (void)state;
        snprintf(rdir, sizeof(rdir), "%s/nons", top);
        snprintf(s, sizeof(s), "%s/" SRC_MARK "-src", rdir);
        snprintf(t, sizeof(t), "%s/tdir", rdir);
        snprintf(state_dir, sizeof(state_dir), "%s/nons", states);
        make_refusal_tree(rdir, s);
        if (!have_ns)
                nhow = 1;
        if (geteuid() == 0 && have_ns)
                print_message("  (STOCKADE_TEST_DISABLE=userns: not as root, who needs none)\n");
        for (size_t h = 0; h < nhow; h++) {
                struct run_result r;

                if (have_ns)
                        disable(how[h]);
                /* The control: the identity flag runs there. */
                if (!ran(ws, (const char *[]){"--ro", t, NULL}, &r) || r.exit_code != 0)
                        note("%s: the control did not run (exit %d): %s",
                             have_ns ? how[h] : "this host", r.exit_code, r.err);
                runner_free(&r);
                for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
                        snprintf(spec, sizeof(spec), "%s:%s", s, t);
                        if (ran(ws,
                                (const char *[]){"--state-dir", state_dir, flags[i], spec, NULL},
                                &r) ||
                            r.exit_code != 125)
                                note("%s %s: not refused (exit %d): %s",
                                     have_ns ? how[h] : "this host", flags[i], r.exit_code, r.err);
                        else if (!refusal_line(r.err, flags[i], line, sizeof(line)) ||
                                 !strstr(line, t) || !strstr(line, "namespace"))
                                note("%s %s: no line names the flag, %s and the "
                                     "namespace: %s",
                                     have_ns ? how[h] : "this host", flags[i], t, r.err);
                        runner_free(&r);
                }
                restore_env();
        }
        check_report();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(refused_before_running, reset_env),
                cmocka_unit_test_setup(refused_without_namespace, reset_env),
        };
        int failed = cmocka_run_group_tests(tests, remap_setup, remap_teardown);

        if (failed == 0 && !have_ns) {
                printf("skipped: no mount namespace can be made here (only the refusal without "
                       "one was checked)\n");
                return 77;
        }
        return failed;
}

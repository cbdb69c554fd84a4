/* The diff cases of tests/unit/test_cow.c: a lower and an upper tree, and the diff they
 * make. Included there only (a table, kept apart for the file's length). */
#ifndef STOCKADE_TEST_COW_CASES_H
#define STOCKADE_TEST_COW_CASES_H

struct diff_case {
        const char *name;
        struct op lower[10];
        struct op upper[10];
        const char *expect;
};

static const struct diff_case diff_cases[] = {
        {"copied up, unchanged: not a change", {{'f', "a", "x"}}, {{'f', "a", "x"}}, ""},
        {"content", {{'f', "a", "x"}}, {{'f', "a", "y"}}, "M a\n"},
        {"mode only", {{'f', "a", "x"}}, {{'f', "a", "x", 0755}}, "M a (mode 644 -> 755)\n"},
        {"content and mode",
         {{'f', "a", "x"}},
         {{'f', "a", "y", 0600}},
         "M a (content; mode 644 -> 600)\n"},
        {"new directory and its file", {{0}}, {{'d', "n"}, {'f', "n/f", "1"}}, "A n/\nA n/f\n"},
        {"whiteout; a whiteout over nothing ignored",
         {{'f', "a", "x"}},
         {{'w', "a"}, {'w', "ghost"}},
         "D a\n"},
        {"deleted directory: every entry beneath",
         {{'d', "dd"}, {'f', "dd/x", "1"}, {'d', "dd/s"}, {'f', "dd/s/y", "2"}},
         {{'w', "dd"}},
         "D dd/\nD dd/s/\nD dd/s/y\nD dd/x\n"},
        {"a plain upper directory merges",
         {{'d', "m"}, {'f', "m/one", "1"}, {'f', "m/two", "2"}},
         {{'d', "m"}, {'f', "m/three", "3"}},
         "A m/three\n"},
        {"an opaque one hides the lower's entries",
         {{'d', "m"}, {'f', "m/one", "1"}, {'f', "m/two", "2"}},
         {{'o', "m"}, {'f', "m/two", "2"}, {'f', "m/three", "3"}},
         "D m/one\nA m/three\n"},
        {"opacity reaches subdirectories",
         {{'d', "m"}, {'d', "m/s"}, {'f', "m/s/x", "1"}},
         {{'o', "m"}, {'d', "m/s"}},
         "D m/s/x\n"},
        {"file -> symlink", {{'f', "t", "x"}}, {{'l', "t", "x"}}, "T t (file -> symlink to x)\n"},
        {"dir -> file",
         {{'d', "t"}, {'f', "t/x", "1"}},
         {{'f', "t", "y"}},
         "T t (dir -> file)\nD t/x\n"},
        {"file -> dir",
         {{'f', "t", "x"}},
         {{'o', "t"}, {'f', "t/y", "1"}},
         "T t/ (file -> dir)\nA t/y\n"},
        {"rename: one D and one A with the same bytes",
         {{'f', "old", "moved content"}},
         {{'w', "old"}, {'f', "new", "moved content"}},
         "R old -> new\n"},
        {"rename with a mode change",
         {{'f', "old", "moved content"}},
         {{'w', "old"}, {'f', "new", "moved content", 0755}},
         "R old -> new (mode 644 -> 755)\n"},
        {"no rename when two could be the source",
         {{'f', "o1", "same"}, {'f', "o2", "same"}},
         {{'w', "o1"}, {'w', "o2"}, {'f', "new", "same"}},
         "A new\nD o1\nD o2\n"},
        {"no rename of an empty file",
         {{'f', "old", ""}},
         {{'w', "old"}, {'f', "new", ""}},
         "A new\nD old\n"},
        {"symlink target", {{'l', "s", "a"}}, {{'l', "s", "b"}}, "M s (symlink to b)\n"},
        {"names that would break a line",
         {{0}},
         {{'f', "a\nb", "x"}, {'f', "t\tb", "x"}, {'f', "q\"", "x"}},
         "A \"a\\nb\"\nA \"q\\\"\"\nA \"t\\tb\"\n"},
        {"an upper symlink over a lower directory is not walked",
         {{'d', "d"}, {'f', "d/x", "1"}},
         {{'l', "d", "../../outside"}},
         "T d (dir -> symlink to ../../outside)\nD d/x\n"},
        {"a lower symlink under an upper directory is not walked",
         {{'l', "d", "T/outside"}},
         {{'o', "d"}, {'f', "d/x", "1"}},
         "T d/ (symlink -> dir)\nA d/x\n"},
};

#endif

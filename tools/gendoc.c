/* Build-time generator: the man page and the shell completions, from the option table that
 * `stockade help run` prints, so that they cannot drift apart.
 *   gendoc man | bash | zsh   > file */
#include "supervisor/cli.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
        if (argc == 2 && strcmp(argv[1], "man") == 0) {
                cli_print_man(stdout);
                return 0;
        }
        if (argc == 2 && cli_print_completion(stdout, argv[1]) == 0)
                return 0;
        fputs("usage: gendoc man|bash|zsh\n", stderr);
        return 2;
}

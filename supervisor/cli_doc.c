/* The man page and the bash and zsh completions of stockade, generated from the option table
 * of `stockade run` (cli.c), so that they never disagree with `stockade help run`. */
#include "supervisor/cli.h"
#include "supervisor/cli_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* troff: a leading dot or quote would be a request; backslashes and dashes escaped. */
static void man_text(FILE *out, const char *s)
{
        if (*s == '.' || *s == '\'')
                fputs("\\&", out);
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\e", out);
                else if (*s == '-')
                        fputs("\\-", out);
                else
                        fputc(*s, out);
        }
}

void cli_print_man(FILE *out)
{
        fprintf(out, ".TH STOCKADE 1 \"\" \"stockade %s\" \"User Commands\"\n", STOCKADE_VERSION);
        fputs(".SH NAME\nstockade \\- run untrusted code under a user-space syscall supervisor\n"
              ".SH SYNOPSIS\n.B stockade run\n[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] \\fICMD\\fR "
              "[\\fIARGS\\fR...]\n.br\n.B stockade policy show\n[\\fIOPTIONS\\fR]\n.br\n"
              ".B stockade diff\n\\fINAME\\fR [\\fB\\-\\-json\\fR | \\fB\\-\\-patch\\fR]\n.br\n"
              ".B stockade apply\n\\fINAME\\fR [\\fIPATH\\fR...] [\\fB\\-\\-force\\fR]\n.br\n"
              ".B stockade discard\n\\fINAME\\fR\n.br\n.B stockade sessions\n.br\n"
              ".B stockade help\n[\\fICOMMAND\\fR]\n.br\n"
              ".B stockade version\n.SH DESCRIPTION\n"
              "stockade runs CMD in a sandbox: a trusted supervisor catches its system calls with "
              "seccomp user notification and ptrace and decides them against a policy. It needs "
              "no root and no user namespaces.\n"
              "A policy file (\\fB\\-\\-policy\\fR \\fIFILE\\fR, YAML) gives every option a key; "
              "options given with it override it. \\fBstockade policy show\\fR prints the "
              "effective policy as such a file.\n"
              "What a run changes in a copy-on-write mount is kept in a session: "
              "\\fBstockade diff\\fR shows it, \\fBstockade apply\\fR writes it onto the host "
              "(refusing files the host changed since, unless \\fB\\-\\-force\\fR), "
              "\\fBstockade discard\\fR throws it away, \\fBstockade sessions\\fR lists them "
              "(see docs/sessions.md).\n.SH OPTIONS\n",
              out);
        for (size_t i = 0; i < cli_n_run_opts; i++) {
                const struct opt_def *o = &cli_run_opts[i];

                fputs(".TP\n", out);
                if (o->key < 256)
                        fprintf(out, "\\fB\\-%c\\fR, ", o->key);
                fputs("\\fB\\-\\-", out);
                man_text(out, o->name);
                fputs("\\fR", out);
                if (o->metavar) {
                        fputs(" \\fI", out);
                        man_text(out, o->metavar);
                        fputs("\\fR", out);
                }
                fputc('\n', out);
                man_text(out, o->help);
                fputc('\n', out);
        }
        fputs(".SH EXIT STATUS\nThe command's status, 128+N if signal N killed it, 124 when "
              "\\-\\-timeout fired, 125 for stockade's own errors, 126 when CMD is not "
              "executable, 127 when it is not found.\n"
              ".SH EXAMPLES\n.nf\nstockade run \\-\\- python3 task.py\n"
              "stockade run \\-\\-timeout 10m \\-\\-memory 2G \\-\\- make test\n"
              "stockade run \\-\\-mode audit \\-v \\-\\- ./agent\\-task.sh\n.fi\n",
              out);
}

/* Values an option's argument can take, for completion ("" when free). */
static const char *completion_words(const struct opt_def *o)
{
        switch (o->key) {
        case OPT_TTY:
                return "auto always never";
        case OPT_MODE:
                return "enforce audit";
        case OPT_NET:
                return "none host";
        default:
                return "";
        }
}

static void print_bash_completion(FILE *out)
{
        fputs("# bash completion for stockade (generated from its option table)\n"
              "_stockade() {\n"
              "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i\n"
              "    for ((i = 2; i < COMP_CWORD; i++)); do\n"
              "        if [[ ${COMP_WORDS[i]} == -- ]]; then\n"
              "            COMPREPLY=($(compgen -c -- \"$cur\")); return\n"
              "        fi\n"
              "    done\n"
              "    if ((COMP_CWORD == 1)); then\n"
              "        COMPREPLY=($(compgen -W 'run policy help version diff apply discard "
              "sessions' -- \"$cur\")); return\n"
              "    fi\n"
              "    case ${COMP_WORDS[1]} in\n"
              "    help) COMPREPLY=($(compgen -W 'run policy help version diff apply discard "
              "sessions' -- \"$cur\")) ;;\n"
              "    diff|apply|discard|sessions)\n"
              "        COMPREPLY=($(compgen -W '--json --patch --force --state-dir --help' -- "
              "\"$cur\")) ;;\n"
              "    policy) if ((COMP_CWORD == 2)); then\n"
              "            COMPREPLY=($(compgen -W 'show' -- \"$cur\")); return\n"
              "        fi ;&\n"
              "    run)\n"
              "        case $prev in\n",
              out);
        for (size_t i = 0; i < cli_n_run_opts; i++)
                if (*completion_words(&cli_run_opts[i]))
                        fprintf(out,
                                "        --%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); "
                                "return ;;\n",
                                cli_run_opts[i].name, completion_words(&cli_run_opts[i]));
        fputs("        --workdir) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
              "        --policy) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
              "        --user) COMPREPLY=($(compgen -u -- \"$cur\")); return ;;\n"
              "        esac\n"
              "        COMPREPLY=($(compgen -W '",
              out);
        for (size_t i = 0; i < cli_n_run_opts; i++)
                fprintf(out, "%s--%s", i ? " " : "", cli_run_opts[i].name);
        fputs(" -v -q -h --' -- \"$cur\")) ;;\n"
              "    esac\n"
              "}\n"
              "complete -F _stockade stockade\n",
              out);
}

/* zsh's _arguments takes "[help]:message:action": no brackets or colons in the help. */
static void zsh_text(FILE *out, const char *s)
{
        for (; *s; s++)
                fputc(*s == '['    ? '('
                      : *s == ']'  ? ')'
                      : *s == ':'  ? ';'
                      : *s == '\'' ? '"'
                                   : *s,
                      out);
}

static void print_zsh_completion(FILE *out)
{
        fputs("#compdef stockade\n# zsh completion for stockade (generated from its option "
              "table)\n_stockade() {\n"
              "    local -a cmds\n"
              "    cmds=('run:run a command in the sandbox' 'help:show help' "
              "'policy:print the effective policy' 'version:print the version' "
              "'diff:what a session changed' 'apply:write a session onto the host' "
              "'discard:throw a session away' 'sessions:list the sessions')\n"
              "    if (( CURRENT == 2 )); then _describe command cmds; return; fi\n"
              "    case $words[2] in\n"
              "    help) _describe command cmds ;;\n"
              "    policy)\n"
              "        if (( CURRENT == 3 )); then compadd show; return; fi\n"
              "        shift words; (( CURRENT-- )) ;&\n"
              "    run)\n"
              "        shift words; (( CURRENT-- ))\n"
              "        _arguments -S \\\n",
              out);
        for (size_t i = 0; i < cli_n_run_opts; i++) {
                const struct opt_def *o = &cli_run_opts[i];
                const char *words = completion_words(o);

                fprintf(out, "            '%s--%s[", o->key == 'v' ? "*" : "", o->name);
                zsh_text(out, o->help);
                fputc(']', out);
                if (o->metavar) {
                        fputs(":", out);
                        zsh_text(out, o->metavar);
                        if (*words)
                                fprintf(out, ":(%s)", words);
                        else if (o->key == OPT_WORKDIR)
                                fputs(":_directories", out);
                        else if (o->key == OPT_POLICY)
                                fputs(":_files", out);
                        else if (o->key == OPT_USER)
                                fputs(":_users", out);
                        else
                                fputs(": ", out);
                }
                fputs("' \\\n", out);
        }
        fputs("            '*-v' '-q' '-h' \\\n"
              "            '(-)1:command:_command_names -e' '*::arguments:_normal' ;;\n"
              "    esac\n"
              "}\n"
              "_stockade \"$@\"\n",
              out);
}

int cli_print_completion(FILE *out, const char *shell)
{
        if (strcmp(shell, "bash") == 0)
                print_bash_completion(out);
        else if (strcmp(shell, "zsh") == 0)
                print_zsh_completion(out);
        else
                return -EINVAL;
        return 0;
}

/* `stockade diff|apply|discard|sessions`: the review of copy-on-write sessions (docs/sessions.md). */
#ifndef STOCKADE_SESSION_CLI_H
#define STOCKADE_SESSION_CLI_H

/* Each takes argv[0] = its command name and returns the exit code (125 for stockade's own
 * errors: a missing, locked or damaged session, conflicts). */
int session_cli_diff(int argc, char **argv);
int session_cli_apply(int argc, char **argv);
int session_cli_discard(int argc, char **argv);
int session_cli_sessions(int argc, char **argv);

#endif

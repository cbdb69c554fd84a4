/* Test helper: drive a program on a real pseudo-terminal, expect-style. */
#ifndef STOCKADE_TEST_PTYRUN_H
#define STOCKADE_TEST_PTYRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pty_session {
        int master, slave; /* the test's terminal: the program's controlling terminal */
        pid_t pid;
        char *seen;           /* everything read from the master so far (NUL-terminated) */
        size_t len, consumed; /* pty_expect() searches from `consumed` on */
};

/* Start argv as a session leader with the pty's slave as its controlling terminal and fds
 * 0-2, or only fds 0 and 2 when stdout_fd >= 0 (then fd 1 is stdout_fd). rows x cols is
 * the initial window size. Returns 0 or -errno. */
int pty_spawn(struct pty_session *s, char *const argv[], int stdout_fd, int rows, int cols);
/* Read until `needle` appears after what earlier calls consumed; 0, or -1 after
 * timeout_s seconds or at the end of the output. */
int pty_expect(struct pty_session *s, const char *needle, int timeout_s);
/* Type `keys`. */
void pty_send(struct pty_session *s, const char *keys);
/* Read whatever arrives for `ms` milliseconds. */
void pty_drain(struct pty_session *s, int ms);
/* Wait for the program (reading its output meanwhile); its wait status, or -1 after
 * timeout_s seconds (it is then killed). */
int pty_wait(struct pty_session *s, int timeout_s);
void pty_close(struct pty_session *s);
/* Is `pid` stopped (state T in /proc/PID/stat)? */
bool pty_stopped(pid_t pid);

#endif

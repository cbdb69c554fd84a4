/*
 * The sandbox's private pseudo-terminal and the relay between it and the user's terminal.
 *
 * The user's terminal is never open inside the sandbox: the fds among 0-2 that were
 * terminals become the slave of a pty of the sandbox's own, which is also its controlling
 * terminal (TIOCSCTTY in the shim), and the main thread copies bytes between the master and
 * the user's terminal. ^C, ^Z, ^\, EOF, raw mode and the window size are the sandbox's line
 * discipline's business; TIOCSTI, TIOCLINUX, TIOCSWINSZ, TIOCEXCL, O_NONBLOCK and termios
 * changes act on the sandbox's pty only.
 *
 * --tty never: no terminal at all inside. The fds among 0-2 that were terminals become pipes
 * instead (stdin's, and one for stdout and stderr), relayed the same way: the user's terminal
 * is read only in the foreground and stays in its own (cooked) mode, so ^C and ^Z are the
 * user's terminal's, which signal stockade, which passes them on.
 */
#ifndef STOCKADE_TTY_H
#define STOCKADE_TTY_H

#include "supervisor/error.h"
#include "supervisor/options.h"

#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

struct supervisor;
struct event_source;

/* One direction of the relay: bytes read from one fd, waiting to be written to the other. */
struct tty_pipe {
        char buf[16384];
        size_t off, len;
        bool eof; /* the source ended: read no more */
};

struct tty_relay {
        bool active;
        bool pipes;           /* --tty never: pipes, not a pty */
        int master;           /* the sandbox's pty, O_NONBLOCK; pipes: stdin's write end */
        int m_out;            /* where the sandbox's output is read: the master, or the read
                                 end of its output pipe */
        int slave;            /* held open by us too: the master never hangs up while we relay;
                                 pipes: stdin's read end (ours too: no SIGPIPE) */
        int slave_out;        /* pipes: the output pipe's write end, for fds 1 and 2 */
        int host_in;          /* our own open of the user's terminal (or of stdin): O_NONBLOCK */
        int host_out;         /* where the pty's output goes (a dup of host_in for a terminal) */
        int term;             /* the user's terminal, for termios and the window size; -1: none */
        bool slave_fd[3];     /* which of fds 0-2 the sandbox gets as the slave */
        bool raw;             /* the user's terminal is in raw mode now (ours to restore) */
        struct termios saved; /* the user's settings before we made them raw */
        int fg_timer;         /* timerfd: in the background, are we in the foreground again? */
        bool fg_polling;
        struct tty_pipe in;     /* user -> sandbox */
        struct tty_pipe out;    /* sandbox -> user */
        unsigned registered[5]; /* epoll interest now set, by source (tty.c SRC_*) */
};

/* Decide from cfg->tty and fds 0-2 whether the sandbox gets a pty, and open it (before the
 * fork: the shim needs the slave). Returns 0 (r->active says whether there is one) or -1
 * with *err set. */
int tty_open(struct tty_relay *r, enum tty_mode mode, bool quiet, struct error *err);
/* Start relaying: the user's terminal goes raw if we are in its foreground. */
int tty_start(struct supervisor *sup);
/* The foreground: SIGCONT, or the start. Re-enter raw mode and copy the window size. */
void tty_resume(struct supervisor *sup);
/* The user's terminal as we found it, before stockade stops itself or exits. */
void tty_restore(struct tty_relay *r);
/* SIGWINCH: the user's window size to the sandbox's pty (whose kernel side then sends
 * SIGWINCH to the sandbox's foreground process group). */
void tty_sync_winsize(struct tty_relay *r);
/* The sandbox's foreground process group on its pty, or -1. */
pid_t tty_foreground(const struct tty_relay *r);
/* After the tree is gone: copy what the pty still holds, restore the terminal, close. */
void tty_close(struct supervisor *sup);

#endif

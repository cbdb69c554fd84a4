/*
 * --publish [HOST_PORT:]PORT (issue 8): a server the sandbox runs in its own network
 * namespace (shim/netns.h) is reachable from the host's loopback. The supervisor listens on
 * the host's 127.0.0.1:HOST_PORT; each connection it accepts is relayed, byte for byte and
 * with its half-closes, to a socket the socket maker made inside (supervisor/sockmaker.h)
 * and connected to the sandbox's 127.0.0.1:PORT. A connection the sandbox does not accept
 * (nothing listens there yet) is closed at once.
 *
 * Only the host's loopback: a published port is for the user's browser or tests on this
 * machine, not for the network. Without a network namespace nothing is done: the loopback is
 * shared, so what the sandbox serves there is reachable anyway (-v says so).
 *
 * The listening sockets are opened before the spawn (a port in use is an error before
 * anything runs); one thread accepts, and one thread relays each connection, at most
 * PUBLISH_CONNS at once (more wait in the backlog).
 */
#ifndef STOCKADE_PUBLISH_H
#define STOCKADE_PUBLISH_H

struct supervisor;
struct error;

/* Open the listening sockets of cfg->net.publish. Returns 0, or -1 with err set. */
int publish_open(struct supervisor *sup, struct error *err);
/* Start accepting (after the spawn: the socket maker runs). Returns 0, or -1 with err. */
int publish_start(struct supervisor *sup, struct error *err);
/* Stop accepting and relaying; close everything. */
void publish_stop(struct supervisor *sup);

#endif

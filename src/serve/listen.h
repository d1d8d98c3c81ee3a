/* Listening sockets for knee serve: "ADDR:PORT" parsing, bind, and the bound address as
 * text. Loopback by default; binding all interfaces needs an explicit 0.0.0.0 or [::]. */
#ifndef KNEE_SERVE_LISTEN_H
#define KNEE_SERVE_LISTEN_H

#include <stddef.h>

/* Split "127.0.0.1:8080", "[::1]:0", "localhost:9000" or ":8080" (loopback) into host and
 * port. Returns 0 or KNEE_EINVAL. host gets at most hostlen-1 bytes. */
int listen_split(const char *spec, char *host, size_t hostlen, int *port);

/* Open a non-blocking, close-on-exec listening TCP socket on spec with SO_REUSEADDR.
 * Returns the descriptor (>= 0), KNEE_EINVAL for an address that does not parse or
 * resolve, or -errno. On success bound[] gets "127.0.0.1:PORT" or "[::1]:PORT" (the real
 * port) and *port the port. */
int listen_open(const char *spec, int backlog, char *bound, size_t boundlen, int *port);

#endif

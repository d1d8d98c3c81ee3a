/* Source addresses for outgoing connections (knee run --local-address): a list of local IPv4 or
 * IPv6 addresses, each checked once by a test bind before the run, and a non-blocking connect
 * from one of them. */
#ifndef KNEE_NET_BIND_H
#define KNEE_NET_BIND_H

#include <stddef.h>

#include "net/net.h"

/* At most this many addresses in one --local-address list. */
#define NET_LOCAL_MAX 64

/* Parse "A[,B...]" (numeric IPv4 or IPv6 addresses, an IPv6 one with or without brackets, port
 * 0) into out[0..*n). Returns 0, or KNEE_EINVAL with a reason naming the bad item in err (an
 * empty item, a name rather than an address, more than max). Pure: no socket. */
int net_local_parse(const char *list, struct net_addr *out, size_t max, size_t *n, char *err, size_t errlen);

/* Test-bind a to port 0 on a fresh TCP socket (closed again): 0 when this host may send from
 * it, else -errno (EADDRNOTAVAIL: the address is not local). Blocking-free, any thread. */
int net_local_check(const struct net_addr *a);

/* net_connect_start from a source address: the same socket, with IP_BIND_ADDRESS_NO_PORT (the
 * kernel picks the port at connect time, per destination, so each source address has its own
 * ephemeral ports for every destination) and bind(local) before connect. local NULL: exactly
 * net_connect_start. Returns 0 with *fd_out set, or -errno (the socket is closed). */
int net_connect_start_from(const struct net_addr *a, const struct net_addr *local, int *fd_out);

#endif

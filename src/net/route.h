/* Where a target's connections go when not to its URL's host and port: --unix-socket PATH (every
 * connection to one Unix-domain stream socket) and --connect-to HOST:PORT:ADDR:PORT rules (curl's
 * form). Only the socket address changes: the URL still gives the Host header, the path, SNI and
 * the name the server's certificate must carry. Resolved once per target before the run, as
 * net_resolve is. */
#ifndef KNEE_NET_ROUTE_H
#define KNEE_NET_ROUTE_H

#include "net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest Unix socket path (sockaddr_un's sun_path less its NUL: 107 on Linux). */
#define NET_UNIX_PATH_MAX 107
/* The longest host or address in a --connect-to rule (a DNS name is at most 253). */
#define NET_CONNECT_TO_HOST_MAX 255

/* One --connect-to rule. An empty host or port matches any; an empty addr or addr_port keeps the
 * URL's host or port (as curl). Hosts are kept without an IPv6 literal's brackets. */
struct net_connect_to {
    char host[NET_CONNECT_TO_HOST_MAX + 1];
    char port[6];
    char addr[NET_CONNECT_TO_HOST_MAX + 1];
    char addr_port[6];
};

/* Parse "HOST:PORT:ADDR:PORT" (an IPv6 literal in brackets: "[::1]:443:[::1]:8443"). Returns 0 or
 * KNEE_EINVAL with one line in err naming the flag and the part ("--connect-to 'a:x:b:1': the
 * port 'x' is not a number from 1 to 65535"). */
int net_connect_to_parse(const char *spec, struct net_connect_to *out, char *err, size_t errlen);

/* The first rule of rules[0..n) that matches host (case-insensitive; without brackets) and port
 * ("443"), or NULL. */
const struct net_connect_to *net_connect_to_match(const struct net_connect_to *rules, size_t n, const char *host,
                                                  const char *port);

/* A Unix socket path as a struct net_addr (family AF_UNIX; text "unix:PATH", shortened with "..."
 * when PATH does not fit). Returns 0, or KNEE_EINVAL with a reason naming --unix-socket in err
 * (an empty path, or longer than NET_UNIX_PATH_MAX). Whether it exists is the connect's business
 * (a server may come up later). */
int net_addr_unix(const char *path, struct net_addr *out, char *err, size_t errlen);

/* The routing of a run: --unix-socket and --connect-to. Zeroed: every target to its own host. */
struct net_route {
    const char *unix_path; /* --unix-socket PATH (borrowed); NULL: none */
    struct net_connect_to *rules;
    size_t nrules;
};

/* Parse the --connect-to specs into r (unix_path borrowed; the rules owned: net_route_release).
 * Returns 0 or KNEE_EINVAL with the first bad spec's reason in err (r then holds nothing). */
int net_route_init(struct net_route *r, const char *unix_path, const char *const *specs, size_t nspecs, char *err,
                   size_t errlen);
void net_route_release(struct net_route *r);

/* The address a connection to host:port goes to under r (NULL: no routing): the Unix socket,
 * else the first matching --connect-to rule's address (resolved), else host:port resolved. As
 * net_resolve: *elapsed_ns the resolution time (0 for a Unix socket); 0, or KNEE_ENOTFOUND /
 * KNEE_EINVAL with a reason in err. Blocking; thread-safe. */
int net_route_resolve(const struct net_route *r, const char *host, const char *port, struct net_addr *out,
                      uint64_t *elapsed_ns, char *err, size_t errlen);

#endif

/* Sockets for the load engine: name resolution (once, at start, timed), non-blocking TCP
 * connects with TCP_NODELAY, and the file-descriptor limit. IPv4 and IPv6 alike. */
#ifndef KNEE_NET_NET_H
#define KNEE_NET_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* One resolved address. text is "127.0.0.1:8080" or "[::1]:8080". */
struct net_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    int family;    /* AF_INET or AF_INET6; AF_UNIX for --unix-socket (net/route.h) */
    char text[64]; /* AF_UNIX: "unix:PATH" */
};

/* Resolve host:port (numeric or by name, getaddrinfo with AI_ADDRCONFIG off for numeric
 * literals) and keep the first TCP address. *elapsed_ns receives the resolution time
 * (monotonic). Returns 0 or KNEE_ENOTFOUND with the resolver's reason in err. Blocking;
 * call before the run starts. Thread-safe. */
int net_resolve(const char *host, const char *port, struct net_addr *out, uint64_t *elapsed_ns, char *err,
                size_t errlen);

/* Start a non-blocking connect: socket(SOCK_NONBLOCK|SOCK_CLOEXEC), TCP_NODELAY, connect().
 * Returns 0 with *fd_out set (the connect may still be in progress: wait for EPOLLOUT, then
 * net_connect_finish), or -errno (the socket is closed). */
int net_connect_start(const struct net_addr *a, int *fd_out);

/* After EPOLLOUT/EPOLLERR on a connecting socket: 0 when connected, else -errno (SO_ERROR). */
int net_connect_finish(int fd);

/* Raise RLIMIT_NOFILE's soft limit towards `want` (at most the hard limit). *have receives the
 * soft limit in effect afterwards. Returns 0 or -errno. */
int net_raise_nofile(uint64_t want, uint64_t *have);

#endif

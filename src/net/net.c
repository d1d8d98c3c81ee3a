/* Resolution, non-blocking connect and socket options. Resolution happens once per target
 * before the run (a resolver in the hot path would put DNS latency into every request). */
#include "net/net.h"

#include "core/clock.h"
#include "core/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void addr_text(struct net_addr *a)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (a->family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&a->ss;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        port = ntohs(s4->sin_port);
        snprintf(a->text, sizeof a->text, "%s:%u", host, port);
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        port = ntohs(s6->sin6_port);
        snprintf(a->text, sizeof a->text, "[%s]:%u", host, port);
    }
}

int net_resolve(const char *host, const char *port, struct net_addr *out, uint64_t *elapsed_ns, char *err,
                size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = AI_NUMERICSERV;
    memset(out, 0, sizeof *out);
    uint64_t t0 = clock_now_ns();
    int r = getaddrinfo(host, port, &hints, &res);
    if (elapsed_ns)
        *elapsed_ns = clock_now_ns() - t0;
    if (r != 0) {
        if (err && errlen)
            snprintf(err, errlen, "cannot resolve '%s': %s", host, r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
        return KNEE_ENOTFOUND;
    }
    int rc = KNEE_ENOTFOUND;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof out->ss)
            continue;
        memcpy(&out->ss, ai->ai_addr, ai->ai_addrlen);
        out->len = ai->ai_addrlen;
        out->family = ai->ai_family;
        addr_text(out);
        rc = 0;
        break;
    }
    freeaddrinfo(res);
    if (rc && err && errlen)
        snprintf(err, errlen, "cannot resolve '%s': no IPv4 or IPv6 address", host);
    return rc;
}

int net_connect_start(const struct net_addr *a, int *fd_out)
{
    bool local = a->family == AF_UNIX; /* --unix-socket (net/route.h) */
    int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, local ? 0 : IPPROTO_TCP);
    if (fd < 0)
        return -errno;
    /* Requests go out in one write; Nagle would only hold back a partial write's tail
     * behind the server's delayed ACK (the 40 ms trap that knee lab nagle shows). */
    int one = 1;
    if (!local && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0 && errno != EINPROGRESS) {
        /* a Unix socket's path that does not exist (yet) is nobody listening, as a closed port;
         * its EAGAIN is a full backlog, not a connect in progress */
        int e = local && errno == ENOENT ? -ECONNREFUSED : -errno;
        close(fd);
        return e;
    }
    *fd_out = fd;
    return 0;
}

int net_connect_finish(int fd)
{
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return -errno;
    return soerr ? -soerr : 0;
}

int net_raise_nofile(uint64_t want, uint64_t *have)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rlim_t target = want;
        if (rl.rlim_max != RLIM_INFINITY && target > rl.rlim_max)
            target = rl.rlim_max;
        rl.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -errno;
    }
    if (have)
        *have = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
    return 0;
}

/* Source addresses: parsing a --local-address list, the test bind before a run, and a connect
 * from a chosen address. The port is always the kernel's: binding with port 0 and
 * IP_BIND_ADDRESS_NO_PORT defers the choice to connect(), where the whole 4-tuple is known, so
 * N source addresses give N times the ephemeral ports towards one destination. */
#include "net/bind.h"

#include "core/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24 /* Linux 4.2 */
#endif

/* One item (len bytes at s, brackets allowed around IPv6) into *a. false: not an address. */
static bool parse_one(const char *s, size_t len, struct net_addr *a)
{
    char buf[INET6_ADDRSTRLEN + 2];
    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        s++;
        len -= 2;
    }
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(a, 0, sizeof *a);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&a->ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->ss;
    if (inet_pton(AF_INET, buf, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        a->family = AF_INET;
        a->len = sizeof *s4;
        snprintf(a->text, sizeof a->text, "%s", buf);
        return true;
    }
    if (inet_pton(AF_INET6, buf, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        a->family = AF_INET6;
        a->len = sizeof *s6;
        snprintf(a->text, sizeof a->text, "%s", buf);
        return true;
    }
    return false;
}

int net_local_parse(const char *list, struct net_addr *out, size_t max, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "--local-address: an empty address in '%s'", list);
        if (*n == max)
            return knee_fail(err, errlen, KNEE_EINVAL, "--local-address: at most %zu addresses", max);
        if (!parse_one(p, len, &out[*n]))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--local-address: '%.*s' is not an IPv4 or IPv6 address (names are not resolved)",
                             (int)len, p);
        (*n)++;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int net_local_check(const struct net_addr *a)
{
    int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return -errno;
    int r = bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ? -errno : 0;
    close(fd);
    return r;
}

int net_connect_start_from(const struct net_addr *a, const struct net_addr *local, int *fd_out)
{
    if (!local)
        return net_connect_start(a, fd_out);
    int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return -errno;
    int one = 1; /* TCP_NODELAY: as net_connect_start */
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one) < 0 ||
        bind(fd, (const struct sockaddr *)&local->ss, local->len) < 0 ||
        (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0 && errno != EINPROGRESS)) {
        int e = -errno;
        close(fd);
        return e;
    }
    *fd_out = fd;
    return 0;
}

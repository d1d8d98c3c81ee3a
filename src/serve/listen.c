/* Listening sockets. getaddrinfo with AI_PASSIVE accepts numeric addresses and names from
 * /etc/hosts alike; the first address returned is used. */
#include "serve/listen.h"

#include "core/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int listen_split(const char *spec, char *host, size_t hostlen, int *port)
{
    const char *colon;
    const char *h = spec;
    size_t hl;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':')
            return KNEE_EINVAL;
        h = spec + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon || memchr(spec, ':', (size_t)(colon - spec)))
            return KNEE_EINVAL; /* no port, or a bare IPv6 address without brackets */
        hl = (size_t)(colon - spec);
    }
    if (hl == 0) {
        h = "127.0.0.1";
        hl = strlen(h);
    }
    if (hl + 1 > hostlen)
        return KNEE_EINVAL;
    const char *p = colon + 1;
    if (!*p || strlen(p) > 5)
        return KNEE_EINVAL;
    long v = 0;
    for (const char *q = p; *q; q++) {
        if (*q < '0' || *q > '9')
            return KNEE_EINVAL;
        v = v * 10 + (*q - '0');
    }
    if (v > 65535)
        return KNEE_EINVAL;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)v;
    return 0;
}

static void format_bound(const struct sockaddr_storage *ss, char *out, size_t outlen, int *port)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
        *port = ntohs(a->sin6_port);
        snprintf(out, outlen, "[%s]:%d", ip, *port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
        *port = ntohs(a->sin_port);
        snprintf(out, outlen, "%s:%d", ip, *port);
    }
}

int listen_open(const char *spec, int backlog, char *bound, size_t boundlen, int *port)
{
    char host[256], service[8];
    int want_port;
    if (listen_split(spec, host, sizeof host, &want_port))
        return KNEE_EINVAL;
    snprintf(service, sizeof service, "%d", want_port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *ai = NULL;
    if (getaddrinfo(host, service, &hints, &ai) != 0 || !ai)
        return KNEE_EINVAL;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = -errno;
        freeaddrinfo(ai);
        return e;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
        int e = -errno;
        close(fd);
        freeaddrinfo(ai);
        return e;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    format_bound(&ss, bound, boundlen, port);
    return fd;
}

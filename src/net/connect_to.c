/* --connect-to rules (curl's HOST:PORT:ADDR:PORT) and the route of a run: which address a
 * target's connections go to when --unix-socket or a rule says otherwise than its URL. */
#include "net/route.h"

#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One host part at *p (up to the next ':' outside brackets) into dst without the brackets;
 * *p moves past it. 0, or KNEE_EINVAL with the reason. */
static int host_part(const char *spec, const char **p, const char *what, char *dst, char *err, size_t errlen)
{
    const char *s = *p, *end;
    size_t len;
    if (*s == '[') {
        end = strchr(s, ']');
        if (!end)
            return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': the %s has '[' without ']'", spec, what);
        s++;
        len = (size_t)(end - s);
        end++;
        if (*end != ':' && *end != '\0')
            return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': ':' expected after the %s's ']'", spec,
                             what);
    } else {
        end = s + strcspn(s, ":");
        len = (size_t)(end - s);
        if (memchr(s, ']', len) || memchr(s, '/', len) || memchr(s, ' ', len))
            return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': the %s '%.*s' is not a host", spec, what,
                             (int)len, s);
    }
    if (len > NET_CONNECT_TO_HOST_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': the %s is longer than %d characters", spec, what,
                         NET_CONNECT_TO_HOST_MAX);
    memcpy(dst, s, len);
    dst[len] = '\0';
    *p = end;
    return 0;
}

/* One port part at *p (up to ':' or the end; empty allowed) into dst. */
static int port_part(const char *spec, const char **p, const char *what, char *dst, char *err, size_t errlen)
{
    const char *s = *p;
    size_t len = strcspn(s, ":");
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || i >= 5) {
            v = 0;
            break;
        }
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (len && (v < 1 || v > 65535))
        return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': the %s '%.*s' is not a number from 1 to 65535",
                         spec, what, (int)len, s);
    snprintf(dst, 6, "%lu", v);
    if (!len)
        dst[0] = '\0';
    *p = s + len;
    return 0;
}

static int colon(const char *spec, const char **p, const char *after, char *err, size_t errlen)
{
    if (**p != ':')
        return knee_fail(err, errlen, KNEE_EINVAL, "--connect-to '%s': ':' expected after the %s (HOST:PORT:ADDR:PORT)",
                         spec, after);
    (*p)++;
    return 0;
}

int net_connect_to_parse(const char *spec, struct net_connect_to *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = spec;
    int r;
    if ((r = host_part(spec, &p, "host", out->host, err, errlen)) || (r = colon(spec, &p, "host", err, errlen)) ||
        (r = port_part(spec, &p, "port", out->port, err, errlen)) || (r = colon(spec, &p, "port", err, errlen)) ||
        (r = host_part(spec, &p, "address", out->addr, err, errlen)) || (r = colon(spec, &p, "address", err, errlen)) ||
        (r = port_part(spec, &p, "address's port", out->addr_port, err, errlen)))
        return r;
    if (*p)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--connect-to '%s': more than four parts (HOST:PORT:ADDR:PORT; an IPv6 address in [])", spec);
    return 0;
}

const struct net_connect_to *net_connect_to_match(const struct net_connect_to *rules, size_t n, const char *host,
                                                  const char *port)
{
    for (size_t i = 0; i < n; i++) {
        const struct net_connect_to *c = &rules[i];
        if ((!c->host[0] || strcasecmp(c->host, host) == 0) && (!c->port[0] || strcmp(c->port, port) == 0))
            return c;
    }
    return NULL;
}

int net_route_init(struct net_route *r, const char *unix_path, const char *const *specs, size_t nspecs, char *err,
                   size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->unix_path = unix_path;
    if (!nspecs)
        return 0;
    r->rules = xcalloc(nspecs, sizeof *r->rules);
    for (size_t i = 0; i < nspecs; i++) {
        int rc = net_connect_to_parse(specs[i], &r->rules[i], err, errlen);
        if (rc) {
            net_route_release(r);
            return rc;
        }
    }
    r->nrules = nspecs;
    return 0;
}

void net_route_release(struct net_route *r)
{
    free(r->rules);
    memset(r, 0, sizeof *r);
}

int net_route_resolve(const struct net_route *r, const char *host, const char *port, struct net_addr *out,
                      uint64_t *elapsed_ns, char *err, size_t errlen)
{
    if (r && r->unix_path) {
        if (elapsed_ns)
            *elapsed_ns = 0;
        return net_addr_unix(r->unix_path, out, err, errlen);
    }
    const struct net_connect_to *c = r ? net_connect_to_match(r->rules, r->nrules, host, port) : NULL;
    if (!c)
        return net_resolve(host, port, out, elapsed_ns, err, errlen);
    const char *h = c->addr[0] ? c->addr : host, *p = c->addr_port[0] ? c->addr_port : port;
    char why[300];
    int rc = net_resolve(h, p, out, elapsed_ns, why, sizeof why);
    if (rc)
        return knee_fail(err, errlen, rc, "--connect-to %s:%s -> %s:%s: %s", host, port, h, p, why);
    return 0;
}

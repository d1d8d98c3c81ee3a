/* An HTTP proxy as knee run --proxy names it (http://[user:pass@]host:port): its URL parsed once,
 * the Proxy-Authorization line its credentials make (Basic, RFC 9110 §11.7.2 and RFC 7617), the
 * CONNECT request of a tunnel (RFC 9110 §9.3.6), the proxy's answer to it read byte by byte, and
 * an origin-form request rewritten to the absolute form a proxy needs (RFC 9112 §3.2.2). Pure
 * functions: no socket, any thread. The credentials never leave this structure except inside
 * the bytes sent to the proxy: `shown` is what outputs print. */
#ifndef KNEE_NET_PROXY_H
#define KNEE_NET_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_proxy {
    char host[256]; /* as written; an IPv6 literal without brackets */
    char port_str[8];
    uint16_t port;
    char shown[272]; /* "host:port" ("[::1]:port"): what outputs say, never the credentials */
    char *auth;      /* "Proxy-Authorization: Basic …\r\n" (heap), or NULL without credentials */
    size_t auth_len;
};

/* Parse an --proxy URL: "http://" (any case), optional "user[:password]@" (percent-escapes
 * decoded), a host (a name, IPv4, or [IPv6]), ":port" (required, 1..65535), an optional "/".
 * Returns 0, or KNEE_EINVAL / KNEE_EUNSUPPORTED (https://, socks...) with a reason in err that
 * never repeats the credentials. *p is empty (safe to release) on error. */
int net_proxy_parse(const char *url, struct net_proxy *p, char *err, size_t errlen);
void net_proxy_release(struct net_proxy *p);

/* s with the credentials of a URL replaced ("http://u:p@h:1" → "http://<redacted>@h:1"), into
 * out (always NUL-terminated); s unchanged when it has none. */
void net_proxy_redact(const char *s, char *out, size_t outlen);

/* The CONNECT request for authority ("host:port") through p: request line, Host, p's
 * Proxy-Authorization line, blank line. Heap (the caller frees); *len its length. */
char *net_proxy_connect_request(const struct net_proxy *p, const char *authority, size_t *len);

/* The proxy's answer to a CONNECT, read as it arrives: the status line's code and the end of
 * the head (the blank line). Zero it before the first byte. */
struct net_proxy_head {
    uint32_t seen;   /* bytes taken so far */
    uint16_t status; /* once the status line was read */
    uint8_t match;   /* how much of "\r\n\r\n" ends what was taken */
    uint8_t nline;   /* bytes kept of the status line */
    char line[13];   /* "HTTP/1.x NNN" */
};
#define NET_PROXY_HEAD_MAX 16384 /* a longer head is refused */
/* Take up to n bytes of buf; *used: how many (the rest is not the head's). Returns 1 when the head
 * is complete (h->status set), 0 when more is needed, -1 when it is not an HTTP/1.x status line
 * or too long. */
int net_proxy_head_feed(struct net_proxy_head *h, const char *buf, size_t n, size_t *used);

/* The origin-form request req (len bytes: "METHOD /path HTTP/1.1\r\n…") in absolute form for a
 * proxy: origin ("http://host:port", no '/') inserted before the target, then extra (olen bytes:
 * a Proxy-Authorization line, or nothing) after the request line. out holds at least len + olen
 * + extra_len bytes. Returns the bytes written, or 0 when req has no request line (left as it
 * is). */
size_t net_proxy_absolute(const char *req, size_t len, const char *origin, size_t olen, const char *extra,
                          size_t extra_len, char *out);

#endif

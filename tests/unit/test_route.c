/* Unit tests for how connections are made (issue 31): --proxy's URL, credentials and redaction
 * (src/net/proxy.c, record_redact_arg), the CONNECT request and the proxy's answer read in
 * pieces, the absolute form of a request; --local-address's list, its test bind and a connect
 * from a chosen source (src/net/bind.c); --connect-rate's pacing rule (src/load/route.c);
 * run_validate's messages for the three flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "load/worker.h"
#include "net/bind.h"
#include "net/net.h"
#include "net/proxy.h"
#include "record/record.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_proxy_parse(void **state)
{
    (void)state;
    struct net_proxy p;
    char err[256];
    assert_int_equal(net_proxy_parse("http://127.0.0.1:3128", &p, err, sizeof err), 0);
    assert_string_equal(p.host, "127.0.0.1");
    assert_int_equal(p.port, 3128);
    assert_string_equal(p.port_str, "3128");
    assert_string_equal(p.shown, "127.0.0.1:3128");
    assert_null(p.auth);
    net_proxy_release(&p);

    /* RFC 7617's example: Aladdin:open sesame; percent-escapes decoded first */
    assert_int_equal(net_proxy_parse("HTTP://Aladdin:open%20sesame@proxy.example:8080/", &p, err, sizeof err), 0);
    assert_string_equal(p.host, "proxy.example");
    assert_string_equal(p.shown, "proxy.example:8080");
    assert_string_equal(p.auth, "Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n");
    assert_int_equal(p.auth_len, strlen(p.auth));
    net_proxy_release(&p);

    assert_int_equal(net_proxy_parse("http://u@[::1]:1", &p, err, sizeof err), 0);
    assert_string_equal(p.host, "::1");
    assert_string_equal(p.shown, "[::1]:1");
    assert_string_equal(p.auth, "Proxy-Authorization: Basic dQ==\r\n");
    net_proxy_release(&p);
}

static void test_proxy_refused(void **state)
{
    (void)state;
    struct net_proxy p;
    char err[256];
    static const struct {
        const char *url, *says;
        int code;
    } bad[] = {
        {"https://u:S3CRET@h:1", "only http:// proxies", KNEE_EUNSUPPORTED},
        {"socks5://h:1", "only http:// proxies", KNEE_EUNSUPPORTED},
        {"h:1", "give a URL", KNEE_EINVAL},
        {"http://u:S3CRET@h", "give the proxy's port", KNEE_EINVAL},
        {"http://u:S3CRET@h:", "give the proxy's port", KNEE_EINVAL},
        {"http://h:0", "1 to 65535", KNEE_EINVAL},
        {"http://h:65536", "1 to 65535", KNEE_EINVAL},
        {"http://h:8x", "not a number", KNEE_EINVAL},
        {"http://u:S3CRET@h:1/path", "no path", KNEE_EINVAL},
        {"http://:1", "no host", KNEE_EINVAL},
        {"http://[::1:1", "without its ']'", KNEE_EINVAL},
        {"http://u:S3%zzCRET@h:1", "malformed or too long credentials", KNEE_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int r = net_proxy_parse(bad[i].url, &p, err, sizeof err);
        if (r != bad[i].code || !strstr(err, bad[i].says) || strstr(err, "S3CRET"))
            fail_msg("%s: %d %s", bad[i].url, r, err);
        assert_null(p.auth);
        net_proxy_release(&p);
    }
}

static void test_proxy_redact(void **state)
{
    (void)state;
    char out[128];
    net_proxy_redact("http://u:pw@h:1", out, sizeof out);
    assert_string_equal(out, "http://<redacted>@h:1");
    net_proxy_redact("http://h:1/a@b", out, sizeof out); /* an '@' in the path is no userinfo */
    assert_string_equal(out, "http://h:1/a@b");
    net_proxy_redact("no url", out, sizeof out);
    assert_string_equal(out, "no url");
    /* the recorded command line: --proxy URL, --proxy=URL, -xURL */
    char *a = record_redact_arg("--proxy", "http://user:S3CRET@127.0.0.1:3128");
    assert_string_equal(a, "http://<redacted>@127.0.0.1:3128");
    free(a);
    a = record_redact_arg(NULL, "--proxy=http://user:S3CRET@h:1");
    assert_string_equal(a, "--proxy=http://<redacted>@h:1");
    free(a);
    a = record_redact_arg("--proxy", "http://h:1");
    assert_string_equal(a, "http://h:1");
    free(a);
}

static void test_connect_request(void **state)
{
    (void)state;
    struct net_proxy p;
    assert_int_equal(net_proxy_parse("http://a:b@h:1", &p, NULL, 0), 0);
    size_t len;
    char *req = net_proxy_connect_request(&p, "example.com:443", &len);
    const char *want = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n"
                       "Proxy-Authorization: Basic YTpi\r\n\r\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(req, want, len);
    free(req);
    net_proxy_release(&p);
    assert_int_equal(net_proxy_parse("http://h:1", &p, NULL, 0), 0);
    req = net_proxy_connect_request(&p, "[::1]:8443", &len);
    assert_string_equal(req, "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n");
    free(req);
    net_proxy_release(&p);
}

/* Feed s to a fresh parser k bytes at a time: its last answer, the bytes taken in all. */
static int feed(const char *s, size_t k, struct net_proxy_head *h, size_t *taken)
{
    memset(h, 0, sizeof *h);
    size_t n = strlen(s), off = 0;
    int r = 0;
    *taken = 0;
    while (off < n && r == 0) {
        size_t used;
        size_t step = n - off < k ? n - off : k;
        r = net_proxy_head_feed(h, s + off, step, &used);
        off += used;
        *taken += used;
    }
    return r;
}

static void test_head(void **state)
{
    (void)state;
    struct net_proxy_head h;
    size_t taken;
    const char *ok = "HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy/1.11.1\r\n\r\n";
    for (size_t k = 1; k <= strlen(ok); k++) {
        assert_int_equal(feed(ok, k, &h, &taken), 1);
        assert_int_equal(h.status, 200);
        assert_int_equal(taken, strlen(ok));
    }
    /* the head ends at its blank line: what follows is not taken */
    assert_int_equal(feed("HTTP/1.1 200 OK\r\n\r\nXYZ", 64, &h, &taken), 1);
    assert_int_equal(taken, strlen("HTTP/1.1 200 OK\r\n\r\n"));
    /* a refusal: its status is known before its head ends */
    assert_int_equal(feed("HTTP/1.1 407 Proxy Authentication Required\r\n", 5, &h, &taken), 0);
    assert_int_equal(h.status, 407);
    assert_int_equal(feed("HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\n\r\n<html>", 7, &h, &taken), 1);
    assert_int_equal(h.status, 403);
    /* a lone "\r\r\n\r\n" still ends it */
    assert_int_equal(feed("HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n", 3, &h, &taken), 1);
    /* not HTTP/1.x: refused at once */
    assert_int_equal(feed("SSH-2.0-OpenSSH_9.2\r\n\r\n", 4, &h, &taken), -1);
    assert_int_equal(feed("HTTP/1.1 2x0 OK\r\n\r\n", 4, &h, &taken), -1);
    assert_int_equal(feed("HTTP/1.1 700 OK\r\n\r\n", 4, &h, &taken), -1);
    /* a head that never ends is refused past its cap */
    char *big = malloc(NET_PROXY_HEAD_MAX + 64);
    strcpy(big, "HTTP/1.1 200 OK\r\n");
    memset(big + strlen(big), 'a', NET_PROXY_HEAD_MAX);
    big[NET_PROXY_HEAD_MAX + 17] = '\0';
    assert_int_equal(feed(big, 4096, &h, &taken), -1);
    free(big);
}

static void test_absolute(void **state)
{
    (void)state;
    const char *req = "GET /a?b=1 HTTP/1.1\r\nHost: h:8080\r\n\r\n";
    const char *auth = "Proxy-Authorization: Basic YTpi\r\n";
    char out[256];
    size_t n = net_proxy_absolute(req, strlen(req), "http://h:8080", 13, auth, strlen(auth), out);
    const char *want = "GET http://h:8080/a?b=1 HTTP/1.1\r\nProxy-Authorization: Basic YTpi\r\nHost: h:8080\r\n\r\n";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
    /* a body goes along untouched; no credentials: nothing added */
    const char *post = "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
    n = net_proxy_absolute(post, strlen(post), "http://[::1]:1", 14, "", 0, out);
    want = "POST http://[::1]:1/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
    /* not an origin-form request line: left alone */
    assert_int_equal(net_proxy_absolute("garbage", 7, "http://h", 8, "", 0, out), 0);
    assert_int_equal(net_proxy_absolute("GET http://x/ HTTP/1.1\r\n", 24, "http://h", 8, "", 0, out), 0);
}

static void test_local_parse(void **state)
{
    (void)state;
    struct net_addr a[4];
    size_t n;
    char err[256];
    assert_int_equal(net_local_parse("127.0.0.2,::1,[::1]", a, 4, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(a[0].family, AF_INET);
    assert_string_equal(a[0].text, "127.0.0.2");
    assert_int_equal(a[1].family, AF_INET6);
    assert_int_equal(a[2].family, AF_INET6);
    assert_int_equal(net_local_parse("127.0.0.2,,127.0.0.3", a, 4, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "an empty address"));
    assert_int_equal(net_local_parse("localhost", a, 4, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "'localhost' is not an IPv4 or IPv6 address"));
    assert_int_equal(net_local_parse("1.1.1.1,1.1.1.2", a, 1, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "at most 1"));
}

static void test_local_bind(void **state)
{
    (void)state;
    struct net_addr a[2];
    size_t n;
    assert_int_equal(net_local_parse("127.0.0.2,192.0.2.1", a, 2, &n, NULL, 0), 0);
    assert_int_equal(net_local_check(&a[0]), 0);
    assert_int_equal(net_local_check(&a[1]), -EADDRNOTAVAIL); /* TEST-NET-1: not this host's */

    /* a connect from 127.0.0.2 to a listener on 127.0.0.1: the server sees 127.0.0.2 */
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(ls, 4), 0);
    socklen_t sl = sizeof sa;
    getsockname(ls, (struct sockaddr *)&sa, &sl);
    struct net_addr dst = {.len = sizeof sa, .family = AF_INET};
    memcpy(&dst.ss, &sa, sizeof sa);
    int fd = -1;
    assert_int_equal(net_connect_start_from(&dst, &a[0], &fd), 0);
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    assert_int_equal(poll(&pf, 1, 5000), 1);
    assert_int_equal(net_connect_finish(fd), 0);
    int cs = accept(ls, NULL, NULL);
    struct sockaddr_in peer;
    sl = sizeof peer;
    getpeername(cs, (struct sockaddr *)&peer, &sl);
    char text[32];
    inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
    assert_string_equal(text, "127.0.0.2");
    close(cs);
    close(fd);
    /* without a source: exactly net_connect_start */
    assert_int_equal(net_connect_start_from(&dst, NULL, &fd), 0);
    close(fd);
    close(ls);
}

static void test_pace(void **state)
{
    (void)state;
    uint64_t next = 0, gap = 100;
    assert_true(route_pace(&next, gap, 1000)); /* the first: at once */
    assert_int_equal(next, 1100);
    assert_false(route_pace(&next, gap, 1099));
    assert_int_equal(next, 1100);
    assert_true(route_pace(&next, gap, 1130)); /* a little late: the schedule holds */
    assert_int_equal(next, 1200);
    assert_true(route_pace(&next, gap, 1200));
    assert_int_equal(next, 1300);
    assert_true(route_pace(&next, gap, 5000)); /* after a pause: from now, no burst */
    assert_int_equal(next, 5100);
    /* over any stretch, at most one start per gap (plus the first) */
    next = 0;
    int n = 0;
    for (uint64_t t = 0; t < 100000; t += 7)
        n += route_pace(&next, gap, t);
    assert_true(n <= 1001 && n >= 990);
}

static void test_validate(void **state)
{
    (void)state;
    struct plan_target tg = {.name = "t", .url = "http://127.0.0.1:1/"};
    struct run_config cfg = {0};
    cfg.plan.targets = &tg;
    cfg.plan.ntargets = 1;
    cfg.plan.requests = 1;
    cfg.plan.connections = 1;
    cfg.timeout_ns = 1000000000;
    char err[256];
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
    cfg.proxy = "http://u:S3CRET@h";
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--proxy"));
    assert_null(strstr(err, "S3CRET"));
    cfg.proxy = "http://h:1";
    cfg.h2c = true;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--h2c and --proxy"));
    cfg.h2c = false;
    cfg.local_addresses = "127.0.0.2,x";
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--local-address"));
    cfg.local_addresses = "127.0.0.2";
    cfg.connect_rate = -1;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--connect-rate"));
    cfg.connect_rate = 10;
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proxy_parse),  cmocka_unit_test(test_proxy_refused),
        cmocka_unit_test(test_proxy_redact), cmocka_unit_test(test_connect_request),
        cmocka_unit_test(test_head),         cmocka_unit_test(test_absolute),
        cmocka_unit_test(test_local_parse),  cmocka_unit_test(test_local_bind),
        cmocka_unit_test(test_pace),         cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

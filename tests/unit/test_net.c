/* Unit tests for src/net: URL parsing (what is accepted, what is refused and why), name
 * resolution of literals and localhost, and non-blocking connects over IPv4 and IPv6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "net/net.h"
#include "net/url.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_url_basic(void **state)
{
    (void)state;
    struct url u;
    char err[256];
    assert_int_equal(url_parse("http://127.0.0.1:8080/a/b?x=1#frag", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_string_equal(u.port_str, "8080");
    assert_int_equal(u.port, 8080);
    assert_string_equal(u.authority, "127.0.0.1:8080");
    assert_string_equal(u.target, "/a/b?x=1");
    assert_false(u.ipv6_literal);
    url_release(&u);

    assert_int_equal(url_parse("HTTP://Example.com", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "Example.com");
    assert_int_equal(u.port, 80);
    assert_string_equal(u.authority, "Example.com");
    assert_string_equal(u.target, "/");
    url_release(&u);

    assert_int_equal(url_parse("http://h?q=1", &u, err, sizeof err), 0);
    assert_string_equal(u.target, "/?q=1");
    url_release(&u);

    assert_int_equal(url_parse("http://[::1]:9000/p", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "::1");
    assert_true(u.ipv6_literal);
    assert_string_equal(u.authority, "[::1]:9000");
    assert_int_equal(u.port, 9000);
    url_release(&u);
}

static void test_url_refused(void **state)
{
    (void)state;
    struct url u;
    char err[256];
    assert_int_equal(url_parse("https://example.com/", &u, err, sizeof err), 0);
    assert_true(u.tls);
    assert_int_equal(u.port, 443);
    assert_string_equal(u.port_str, "443");
    assert_string_equal(u.authority, "example.com");
    url_release(&u);
    assert_int_equal(url_parse("HTTPS://[::1]:8443/x?y", &u, err, sizeof err), 0);
    assert_true(u.tls);
    assert_true(u.ipv6_literal);
    assert_int_equal(u.port, 8443);
    assert_string_equal(u.target, "/x?y");
    url_release(&u);
    assert_int_equal(url_parse("http://example.com/", &u, err, sizeof err), 0);
    assert_false(u.tls);
    assert_int_equal(u.port, 80);
    url_release(&u);
    assert_int_equal(url_parse("httpss://example.com/", &u, err, sizeof err), KNEE_EUNSUPPORTED);
    url_release(&u);
    assert_int_equal(url_parse("ftp://x/", &u, err, sizeof err), KNEE_EUNSUPPORTED);
    url_release(&u);
    const char *bad[] = {
        "",
        "example.com/",
        "http://",
        "http:///path",
        "http://h:0/",
        "http://h:65536/",
        "http://h:/",
        "http://h:8x/",
        "http://[::1/",
        "http://[zz]/",
        "http://a b/",
        "http://u:p@h/",
        "http://h/a b",
        "http://h/\x01",
        "http://[::1]x/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int r = url_parse(bad[i], &u, err, sizeof err);
        if (r == 0)
            fail_msg("accepted a bad URL: '%s'", bad[i]);
        assert_true(err[0] != '\0');
        url_release(&u);
    }
    /* no scheme: http:// in front is suggested when that makes a URL, else the form expected */
    assert_int_equal(url_parse("127.0.0.1:8080/", &u, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "not a URL (no scheme): did you mean http://127.0.0.1:8080/?");
    url_release(&u);
    assert_int_equal(url_parse("localhost/x?y=1", &u, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "not a URL (no scheme): did you mean http://localhost/x?y=1?");
    url_release(&u);
    assert_int_equal(url_parse("[::1]:80", &u, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "not a URL (no scheme): did you mean http://[::1]:80?");
    url_release(&u);
    const char *no_guess[] = {"/x", ":80/", "a b/", "h:99999/", "-h/"};
    for (size_t i = 0; i < sizeof no_guess / sizeof *no_guess; i++) {
        assert_int_equal(url_parse(no_guess[i], &u, err, sizeof err), KNEE_EFORMAT);
        assert_string_equal(err, "not a URL (expected http://host[:port]/path)");
        url_release(&u);
    }
    char longurl[URL_MAX_LEN + 32] = "http://h/";
    memset(longurl + 9, 'a', URL_MAX_LEN);
    longurl[URL_MAX_LEN + 9] = '\0';
    assert_int_equal(url_parse(longurl, &u, err, sizeof err), KNEE_ETOOBIG);
    url_release(&u);
}

static void test_resolve_literals(void **state)
{
    (void)state;
    struct net_addr a;
    uint64_t ns = 0;
    char err[256];
    assert_int_equal(net_resolve("127.0.0.1", "8080", &a, &ns, err, sizeof err), 0);
    assert_int_equal(a.family, AF_INET);
    assert_string_equal(a.text, "127.0.0.1:8080");
    assert_int_equal(net_resolve("localhost", "80", &a, &ns, err, sizeof err), 0);
    assert_true(a.family == AF_INET || a.family == AF_INET6);
    if (net_resolve("::1", "81", &a, &ns, err, sizeof err) == 0) {
        assert_int_equal(a.family, AF_INET6);
        assert_string_equal(a.text, "[::1]:81");
    }
}

/* A listening socket on the loopback of `family`, port chosen by the kernel. */
static int listener(int family, struct net_addr *a)
{
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    memset(a, 0, sizeof *a);
    if (family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&a->ss;
        s->sin_family = AF_INET;
        s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->len = sizeof *s;
    } else {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&a->ss;
        s->sin6_family = AF_INET6;
        s->sin6_addr = in6addr_loopback;
        a->len = sizeof *s;
    }
    a->family = family;
    if (bind(fd, (struct sockaddr *)&a->ss, a->len) < 0 || listen(fd, 8) < 0) {
        close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&a->ss, &a->len);
    return fd;
}

static void connect_to(int family)
{
    struct net_addr a;
    int lfd = listener(family, &a);
    if (lfd < 0)
        fail_msg("cannot listen on the %s loopback: %s", family == AF_INET ? "IPv4" : "IPv6", strerror(errno));
    int fd = -1;
    assert_int_equal(net_connect_start(&a, &fd), 0);
    assert_true(fd >= 0);
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    assert_int_equal(poll(&p, 1, 5000), 1);
    assert_int_equal(net_connect_finish(fd), 0);
    int one = 0;
    socklen_t len = sizeof one;
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, &len), 0);
    assert_int_equal(one, 1);
    close(fd);
    /* now refused: nobody listens on that port any more */
    close(lfd);
    int r = net_connect_start(&a, &fd);
    if (r == 0) {
        struct pollfd q = {.fd = fd, .events = POLLOUT};
        assert_int_equal(poll(&q, 1, 5000), 1);
        assert_int_equal(net_connect_finish(fd), -ECONNREFUSED);
        close(fd);
    } else {
        assert_int_equal(r, -ECONNREFUSED);
    }
}

static void test_connect_ipv4(void **state)
{
    (void)state;
    connect_to(AF_INET);
}

static void test_connect_ipv6(void **state)
{
    (void)state;
    /* A machine without an IPv6 loopback (IPv6 disabled, a container without ::1) cannot run
     * this test: say so and skip, rather than pass having tested nothing. */
    struct net_addr a;
    int lfd = listener(AF_INET6, &a);
    if (lfd < 0) {
        print_message("skipped: no IPv6 loopback on this machine (listening on [::1]: %s)\n", strerror(errno));
        skip();
    }
    close(lfd);
    connect_to(AF_INET6);
}

static void test_nofile(void **state)
{
    (void)state;
    uint64_t have = 0;
    assert_int_equal(net_raise_nofile(256, &have), 0);
    assert_true(have >= 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_basic),        cmocka_unit_test(test_url_refused),
        cmocka_unit_test(test_resolve_literals), cmocka_unit_test(test_connect_ipv4),
        cmocka_unit_test(test_connect_ipv6),     cmocka_unit_test(test_nofile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

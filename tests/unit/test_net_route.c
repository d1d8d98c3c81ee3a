/* Unit tests for src/net/route.h: --connect-to rules (parsed, refused with the part named,
 * matched), --unix-socket addresses (length limits, the text), the route a target's address
 * takes, and a non-blocking connect to a Unix socket (a missing path is refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "net/net.h"
#include "net/route.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void test_connect_to_parse(void **state)
{
    (void)state;
    struct net_connect_to c;
    char err[300];
    assert_int_equal(net_connect_to_parse("example.test:443:127.0.0.1:8443", &c, err, sizeof err), 0);
    assert_string_equal(c.host, "example.test");
    assert_string_equal(c.port, "443");
    assert_string_equal(c.addr, "127.0.0.1");
    assert_string_equal(c.addr_port, "8443");
    /* empty parts: any host, any port, the URL's address or port kept */
    assert_int_equal(net_connect_to_parse("::10.0.0.1:", &c, err, sizeof err), 0);
    assert_string_equal(c.host, "");
    assert_string_equal(c.port, "");
    assert_string_equal(c.addr, "10.0.0.1");
    assert_string_equal(c.addr_port, "");
    assert_int_equal(net_connect_to_parse(":::", &c, err, sizeof err), 0);
    /* IPv6 literals in brackets, kept without them */
    assert_int_equal(net_connect_to_parse("[::1]:443:[fe80::2]:80", &c, err, sizeof err), 0);
    assert_string_equal(c.host, "::1");
    assert_string_equal(c.addr, "fe80::2");
    assert_string_equal(c.addr_port, "80");
}

/* spec is refused, and the message holds want */
static void refused(const char *spec, const char *want)
{
    struct net_connect_to c;
    char err[1024] = "";
    assert_int_equal(net_connect_to_parse(spec, &c, err, sizeof err), KNEE_EINVAL);
    if (!strstr(err, want))
        fail_msg("'%s': '%s' does not say '%s'", spec, err, want);
    assert_non_null(strstr(err, "--connect-to"));
}

static void test_connect_to_refused(void **state)
{
    (void)state;
    refused("", "':' expected after the host");
    refused("a", "':' expected after the host");
    refused("a:443", "':' expected after the port");
    refused("a:443:b", "':' expected after the address");
    refused("a:443:b:1:2", "more than four parts");
    refused("a:0:b:1", "the port '0' is not a number from 1 to 65535");
    refused("a:65536:b:1", "the port '65536'");
    refused("a:x:b:1", "the port 'x'");
    refused("a:1:b:-1", "the address's port '-1'");
    refused("a:1:b:123456", "the address's port '123456'");
    refused("[::1:443:b:1", "the host has '[' without ']'");
    refused("[::1]x:443:b:1", "':' expected after the host's ']'");
    refused("a:1:[::2:1", "the address has '[' without ']'");
    refused("a/b:1:c:2", "the host 'a/b' is not a host");
    char longhost[400];
    memset(longhost, 'h', 300);
    snprintf(longhost + 300, sizeof longhost - 300, ":1:b:2");
    refused(longhost, "longer than 255 characters");
}

static void test_connect_to_match(void **state)
{
    (void)state;
    struct net_connect_to r[3];
    char err[200];
    assert_int_equal(net_connect_to_parse("api.test:443:127.0.0.1:1", &r[0], err, sizeof err), 0);
    assert_int_equal(net_connect_to_parse(":80:127.0.0.1:2", &r[1], err, sizeof err), 0);
    assert_int_equal(net_connect_to_parse("::127.0.0.1:3", &r[2], err, sizeof err), 0);
    assert_ptr_equal(net_connect_to_match(r, 3, "API.Test", "443"), &r[0]); /* names: any case */
    assert_ptr_equal(net_connect_to_match(r, 3, "api.test", "80"), &r[1]);  /* the first match wins */
    assert_ptr_equal(net_connect_to_match(r, 3, "other", "8080"), &r[2]);
    assert_null(net_connect_to_match(r, 2, "other", "8080"));
    assert_null(net_connect_to_match(r, 0, "api.test", "443"));
}

static void test_unix_addr(void **state)
{
    (void)state;
    struct net_addr a;
    char err[300];
    assert_int_equal(net_addr_unix("/run/app.sock", &a, err, sizeof err), 0);
    assert_int_equal(a.family, AF_UNIX);
    assert_string_equal(a.text, "unix:/run/app.sock");
    const struct sockaddr_un *un = (const struct sockaddr_un *)&a.ss;
    assert_string_equal(un->sun_path, "/run/app.sock");
    assert_int_equal(a.len, offsetof(struct sockaddr_un, sun_path) + strlen("/run/app.sock") + 1);
    char path[NET_UNIX_PATH_MAX + 2];
    memset(path, 'p', sizeof path);
    path[0] = '/';
    path[NET_UNIX_PATH_MAX] = '\0'; /* the longest */
    assert_int_equal(net_addr_unix(path, &a, err, sizeof err), 0);
    assert_int_equal(strlen(a.text), sizeof a.text - 1); /* shortened: "unix:..." and the path's end */
    assert_memory_equal(a.text, "unix:...", 8);
    path[NET_UNIX_PATH_MAX] = 'p';
    path[NET_UNIX_PATH_MAX + 1] = '\0'; /* one too long */
    assert_int_equal(net_addr_unix(path, &a, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--unix-socket"));
    assert_non_null(strstr(err, "at most 107"));
    assert_int_equal(net_addr_unix("", &a, err, sizeof err), KNEE_EINVAL);
}

static void test_route_resolve(void **state)
{
    (void)state;
    struct net_route r;
    struct net_addr a;
    uint64_t ns = 1;
    char err[300];
    /* no routing: the URL's own host */
    assert_int_equal(net_route_resolve(NULL, "127.0.0.1", "81", &a, &ns, err, sizeof err), 0);
    assert_string_equal(a.text, "127.0.0.1:81");
    const char *specs[] = {"api.test:443:127.0.0.2:8443", ":8080:127.0.0.3:"};
    assert_int_equal(net_route_init(&r, NULL, specs, 2, err, sizeof err), 0);
    assert_int_equal(r.nrules, 2);
    assert_int_equal(net_route_resolve(&r, "api.test", "443", &a, &ns, err, sizeof err), 0);
    assert_string_equal(a.text, "127.0.0.2:8443");
    assert_int_equal(net_route_resolve(&r, "anything.test", "8080", &a, &ns, err, sizeof err), 0);
    assert_string_equal(a.text, "127.0.0.3:8080"); /* the URL's port kept */
    assert_int_equal(net_route_resolve(&r, "127.0.0.4", "9", &a, &ns, err, sizeof err), 0);
    assert_string_equal(a.text, "127.0.0.4:9"); /* no rule matched */
    net_route_release(&r);
    assert_null(r.rules);
    /* a bad spec: nothing kept */
    const char *bad[] = {"a:1:b:2", "a:1"};
    assert_int_equal(net_route_init(&r, NULL, bad, 2, err, sizeof err), KNEE_EINVAL);
    assert_null(r.rules);
    assert_non_null(strstr(err, "'a:1'"));
    /* the Unix socket wins over any host */
    assert_int_equal(net_route_init(&r, "/tmp/x.sock", NULL, 0, err, sizeof err), 0);
    assert_int_equal(net_route_resolve(&r, "api.test", "443", &a, &ns, err, sizeof err), 0);
    assert_int_equal(a.family, AF_UNIX);
    assert_int_equal(ns, 0);
    assert_string_equal(a.text, "unix:/tmp/x.sock");
    net_route_release(&r);
}

static void test_unix_connect(void **state)
{
    (void)state;
    char dir[] = "/tmp/knee-route-XXXXXX", path[128], err[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.sock", dir);
    struct net_addr a;
    assert_int_equal(net_addr_unix(path, &a, err, sizeof err), 0);
    /* nobody there yet: refused, as a closed port */
    int fd = -1;
    assert_int_equal(net_connect_start(&a, &fd), -ECONNREFUSED);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (const struct sockaddr *)&a.ss, a.len), 0);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(net_connect_start(&a, &fd), 0);
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    assert_int_equal(poll(&p, 1, 2000), 1);
    assert_int_equal(net_connect_finish(fd), 0);
    int afd = accept(lfd, NULL, NULL);
    assert_true(afd >= 0);
    assert_int_equal(write(fd, "hi", 2), 2);
    char buf[4];
    assert_int_equal(read(afd, buf, sizeof buf), 2);
    close(afd);
    close(fd);
    close(lfd);
    /* a socket file nobody listens on any more: refused too */
    assert_int_equal(net_connect_start(&a, &fd), -ECONNREFUSED);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_to_parse), cmocka_unit_test(test_connect_to_refused),
        cmocka_unit_test(test_connect_to_match), cmocka_unit_test(test_unix_addr),
        cmocka_unit_test(test_route_resolve),    cmocka_unit_test(test_unix_connect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
